"""The files a user names, as the command line and the set-up take them: a device
(``/dev/zero``), a named pipe nothing writes to, a folder, a file over its kind's size
cap, a name the system cannot take (5,000 characters, or a part over 255), a bad
``--host``, ``--broker`` or ``--broker-ca``, and a crafted match file are each one line
and exit status 2 (HTTP 400 in the set-up), never a traceback, a hang or a machine's
memory filled.

The command line runs in a process of its own, with a deadline (a pipe that blocked it
would hang it) and an address-space cap (a device read whole would fill the machine)."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tablesight.rules.errors import TEXT_LIMIT, InputError

REPO = Path(__file__).resolve().parent.parent
NECROMUNDA = REPO / "samples" / "necromunda"
SCENARIO = REPO / "samples" / "scenarios" / "battlestations-run.json"

#: The command line's deadline: far over what a refusal takes; only a hang reaches it.
DEADLINE_S = 120
#: The most address space a command may take: a device read whole fails inside it.
ADDRESS_SPACE = 6 * 1024**3


def capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


@pytest.fixture(scope="module")
def cli(tablesight_command: list[str]) -> Callable[..., subprocess.CompletedProcess[str]]:
    def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*tablesight_command, *map(str, args)],
            capture_output=True,
            text=True,
            timeout=DEADLINE_S,
            stdin=subprocess.DEVNULL,
            preexec_fn=capped,
            cwd=REPO,
        )

    return run


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused command said, checked: exit status 2, no traceback."""
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr + done.stdout, done.stderr[-2000:]
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr[-2000:]
    assert lines[0].startswith("tablesight: ")
    return lines[0]


def sample(name: str) -> Path:
    return NECROMUNDA / f"{name}.toml"


def with_file(option: str, bad: Path) -> list[str | Path]:
    """The necromunda sample's options with ``option``'s file ``bad``."""
    files = {n: sample(n) for n in ("table", "roster", "terrain", "camera")}
    out: list[str | Path] = ["--game", "necromunda"]
    for name, path in files.items():
        out += [f"--{name}", bad if option == f"--{name}" else path]
    if option == "--script":
        out += ["--script", bad]
    if option == "--ruleset":
        out = ["--ruleset", bad, *out[2:]]
    return out


#: Each command with a file it takes replaced by the bad one, and what kind of file it is.
def commands(bad: Path) -> dict[str, tuple[list[str | Path], str]]:
    video = NECROMUNDA / "match.mp4"
    return {
        "check": (["check", bad], "a scenario (a JSON file)"),
        "check --ruleset": (["check", SCENARIO, "--ruleset", bad], "a TOML file"),
        "run --table": (
            ["run", "--source", video, *with_file("--table", bad), "--port", "0"],
            "a TOML file",
        ),
        "run --camera": (
            ["run", "--source", video, *with_file("--camera", bad), "--port", "0"],
            "a TOML file",
        ),
        "analyze --roster": (["analyze", video, *with_file("--roster", bad)], "a TOML file"),
        "analyze --terrain": (["analyze", video, *with_file("--terrain", bad)], "a TOML file"),
        "analyze --script": (["analyze", video, *with_file("--script", bad)], "a TOML file"),
        "analyze --ruleset": (["analyze", video, *with_file("--ruleset", bad)], "a TOML file"),
        "detect": (["detect", bad, "--dictionary", "4x4_50"], "an image"),
        "replay": (["replay", bad, "--no-browser", "--port", "0"], "a match file"),
        "export": (["export", bad, "-o", bad.parent / "out.json"], "a match file"),
    }


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    """A named pipe nothing ever writes to: opening it to read would wait for ever."""
    path = tmp_path / "pipe.toml"
    os.mkfifo(path)
    return path


@pytest.fixture
def over_cap(tmp_path: Path) -> Path:
    """A file one byte over the 16 MiB cap (sparse: it takes no room)."""
    path = tmp_path / "huge.toml"
    with path.open("wb") as f:
        f.truncate(TEXT_LIMIT + 1)
    return path


# -- 3. devices, pipes, folders and files over the cap ------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("what", ["a device", "a named pipe"])
@pytest.mark.parametrize("command", list(commands(Path("x"))))
def test_a_device_or_a_pipe_is_refused_in_one_line_never_waited_on(
    command: str, what: str, cli: Callable[..., Any], fifo: Path
) -> None:
    bad = Path("/dev/zero") if what == "a device" else fifo
    args, kind = commands(bad)[command]
    line = one_line(cli(*args))
    assert line == f"tablesight: {bad}: is {what}, not a regular file; expected {kind}"


@pytest.mark.slow
@pytest.mark.parametrize("command", list(commands(Path("x"))))
def test_a_folder_is_refused_in_one_line(
    command: str, cli: Callable[..., Any], tmp_path: Path
) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    args, kind = commands(folder)[command]
    line = one_line(cli(*args))
    if command in ("check", "detect"):  # the argument is a file: the command line says so
        argument = "SCENARIO" if command == "check" else "IMAGE"
        assert line == f"tablesight: {argument}: {folder}: is a folder, expected a file"
    else:
        assert line == f"tablesight: {folder}: is a folder, expected {kind}"


@pytest.mark.slow
@pytest.mark.parametrize(
    "command", [c for c in commands(Path("x")) if c not in ("detect", "replay", "export")]
)
def test_a_file_over_the_cap_is_refused_before_it_is_read(
    command: str, cli: Callable[..., Any], over_cap: Path
) -> None:
    args, kind = commands(over_cap)[command]
    line = one_line(cli(*args))
    assert line == (
        f"tablesight: {over_cap}: {kind} may hold at most 16 MiB; this holds 16,777,217 bytes"
    )


@pytest.mark.parametrize(
    "name",
    ["folder", "/dev/null", "pipe", "over the cap", "part", "total", "nul"],
)
def test_the_set_up_answers_400_in_one_line_for_a_camera_file(
    name: str, tmp_path: Path, fifo: Path, over_cap: Path
) -> None:
    from tablesight.setup.session import TableSetup
    from tablesight.webui.setup import create_setup_app

    (tmp_path / "folder").mkdir()
    path, says = {
        "folder": (str(tmp_path / "folder"), "is a folder, expected a TOML file"),
        "/dev/null": ("/dev/null", "is a device, not a regular file; expected a TOML file"),
        "pipe": (str(fifo), "is a named pipe, not a regular file; expected a TOML file"),
        "over the cap": (
            str(over_cap),
            "a TOML file may hold at most 16 MiB; this holds 16,777,217 bytes",
        ),
        "part": (LONG_PART, TOO_LONG_PART),
        "total": (LONG_TOTAL, TOO_LONG_TOTAL),
        "nul": ("camera\0.toml", "not a file name (it holds a NUL character)"),
    }[name]
    setup = TableSetup(folder=tmp_path)
    answers: list[Any] = []
    try:
        client = create_setup_app(setup, None, None, None).test_client()
        # on a thread: a pipe that blocked the request would hang only the thread
        asked = threading.Thread(
            target=lambda: answers.append(client.post("/api/setup/camera", json={"path": path})),
            daemon=True,
        )
        asked.start()
        asked.join(DEADLINE_S)
    finally:
        setup.close()
    assert answers, "the set-up never answered"
    answer = answers[0]
    assert answer.status_code == 400
    assert answer.get_json()["error"]["message"] == f"path: {SHOWN.get(path, path)}: {says}"


# -- 8. names the system cannot take, a bad --host, --broker or --broker-ca ---------------

#: 5,024 characters in parts of 200: too long in all.
LONG_TOTAL = "/".join(["d" * 200] * 25)
TOO_LONG_TOTAL = "file name too long: 5024 characters, the system takes at most 4095"
#: A part of 300 characters.
LONG_PART = "p" * 300
TOO_LONG_PART = "file name too long: a part of it has 300 characters, the system takes at most 255"
#: How a message shows each: by its start and end, and its length.
SHOWN = {
    LONG_TOTAL: f"{'d' * 60}...{'d' * 30} (5024 characters)",
    LONG_PART: f"{'p' * 60}...{'p' * 30} (300 characters)",
}


def long_name_commands(name: str) -> dict[str, tuple[list[str | Path], str]]:
    """Each command with ``name`` in one of its paths, and the option that names it."""
    video = NECROMUNDA / "match.mp4"
    run = ["run", "--source", video, "--port", "0"]
    doctor = ["doctor", video, "--table", sample("table"), "--camera", sample("camera")]
    files = with_file("", Path())
    return {
        "check": (["check", name], "SCENARIO"),
        "check --ruleset": (["check", SCENARIO, "--ruleset", name], "--ruleset"),
        "run --table": (["run", "--source", video, *with_file("--table", Path(name))], "--table"),
        "run --source": (["run", "--source", name, *files], "--source"),
        "run --record": ([*run, *files, "--record", name], "--record"),
        "analyze VIDEO": (["analyze", name, *files], "VIDEO"),
        "analyze --camera": (["analyze", video, *with_file("--camera", Path(name))], "--camera"),
        "analyze -o": (["analyze", video, *files, "-o", name], "--output"),
        "detect IMAGE": (["detect", name, "--dictionary", "4x4_50"], "IMAGE"),
        "detect --table": (["detect", NECROMUNDA / "none.png", "--table", name], "--table"),
        "doctor --roster": (
            [*doctor, "--roster", name],
            "--roster",
        ),
        "export MATCH": (["export", name], "MATCH"),
        "export -o": (["export", NECROMUNDA / "none.db", "-o", name], "--output"),
        "replay MATCH": (["replay", name, "--no-browser"], "MATCH"),
        "markers -o": (["markers", "-o", name], "--output"),
        "calibrate camera --board": (
            ["calibrate", "camera", video, "--board", name, "-o", "c.toml"],
            "--board",
        ),
        "setup --ruleset": (["setup", "--ruleset", name, "--port", "0"], "--ruleset"),
        "setup --source": (["setup", "--source", name, "--port", "0"], "--source"),
        "setup --folder": (["setup", "--folder", name, "--port", "0"], "--folder"),
        "doctor SOURCE": (["doctor", name, *doctor[2:], "--roster", sample("roster")], "SOURCE"),
        "hub --broker-ca": (
            ["hub", "--broker", "mqtts://127.0.0.1:8883", "--broker-ca", name],
            "--broker-ca",
        ),
    }


def test_a_name_too_long_in_bytes_says_its_bytes() -> None:
    """The system counts a name's bytes: 200 letters é are 400, too long for one part."""
    from tablesight.rules.errors import read_toml

    with pytest.raises(InputError) as caught:
        read_toml(Path("é" * 200))
    assert str(caught.value).endswith(
        ": file name too long: a part of it has 400 bytes (200 characters), the system takes "
        "at most 255"
    )


@pytest.mark.slow
@pytest.mark.parametrize("command", list(long_name_commands("x")))
@pytest.mark.parametrize(
    ("name", "says"),
    [(LONG_TOTAL, TOO_LONG_TOTAL), (LONG_PART, TOO_LONG_PART)],
    ids=["5000 characters", "a part of 300"],
)
def test_a_name_too_long_is_one_line_naming_the_option(
    command: str, name: str, says: str, cli: Callable[..., Any]
) -> None:
    args, option = long_name_commands(name)[command]
    line = one_line(cli(*args))
    assert line == f"tablesight: {option}: {SHOWN[name]}: {says}"


HOST_SAYS = (
    "expected an address of this computer to listen on (127.0.0.1; 0.0.0.0 or :: for the "
    "LAN too; ::1), got "
)


BAD_HOSTS = [
    ("run", "no such host!"),
    ("run", "999.1.1.1"),
    ("run", "::zz"),
    ("run", "h" * 300),
    ("run", ""),
    ("setup", "::zz"),
    ("hub", "no such host!"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("command", "host"), BAD_HOSTS)
def test_a_bad_host_is_one_line(command: str, host: str, cli: Callable[..., Any]) -> None:
    from tablesight.rules.values import cut

    args = {
        "run": ["run", "--source", NECROMUNDA / "match.mp4", *with_file("", Path())],
        "setup": ["setup"],
        "hub": ["hub", "--broker", "mqtt://127.0.0.1:1"],
    }[command]
    line = one_line(cli(*args, "--host", host, "--port", "0"))
    assert line == f"tablesight: --host: {HOST_SAYS}{cut(host)}"


@pytest.mark.slow
@pytest.mark.parametrize("broker", ["mqtt://[::1", "mqtt://[zz::1]:1883", "mqtts://[1:2:3]"])
@pytest.mark.parametrize("command", ["run", "hub"])
def test_a_bad_ipv6_broker_is_one_line(command: str, broker: str, cli: Callable[..., Any]) -> None:
    args = ["run", "--source", NECROMUNDA / "match.mp4", *with_file("", Path())]
    line = one_line(cli(*(args if command == "run" else ["hub"]), "--broker", broker))
    assert line == (
        f"tablesight: --broker: expected mqtt://HOST:PORT or mqtts://HOST:PORT, got {broker!r}"
    )


@pytest.mark.slow
@pytest.mark.parametrize("content", [b"not a certificate\n", b"\x00\xff" * 50, b""])
@pytest.mark.parametrize("command", ["run", "hub"])
def test_a_certificate_authority_not_pem_is_one_line(
    command: str, content: bytes, cli: Callable[..., Any], tmp_path: Path
) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_bytes(content)
    args = ["run", "--source", NECROMUNDA / "match.mp4", *with_file("", Path()), "--port", "0"]
    broker = ["--broker", "mqtts://127.0.0.1:8883", "--broker-ca", ca]
    line = one_line(cli(*(args if command == "run" else ["hub", "--port", "0"]), *broker))
    assert line == (
        f"tablesight: --broker-ca: {ca}: not a certificate authority's PEM file "
        "(expected -----BEGIN CERTIFICATE----- blocks)"
    )


@pytest.mark.slow
@pytest.mark.parametrize("bad", ["/dev/zero", "pipe", "folder"])
def test_a_certificate_authority_not_a_file_is_one_line(
    bad: str, cli: Callable[..., Any], tmp_path: Path, fifo: Path
) -> None:
    path = {"/dev/zero": Path("/dev/zero"), "pipe": fifo, "folder": tmp_path}[bad]
    line = one_line(
        cli("hub", "--broker", "mqtts://127.0.0.1:8883", "--broker-ca", path, "--port", "0")
    )
    assert line.startswith(f"tablesight: --broker-ca: {path}: ")
    assert "regular file" in line or "is a folder" in line


# -- 9. a crafted match: its roster repeats an id, its video's name is too long -----------


@pytest.fixture(scope="module")
def necromunda_match(tmp_path_factory: pytest.TempPathFactory, cli: Callable[..., Any]) -> Path:
    """The necromunda sample refereed by ``tablesight analyze -o``: a real match file."""
    path = tmp_path_factory.mktemp("match") / "necromunda.db"
    done = cli(
        "analyze",
        NECROMUNDA / "match.mp4",
        *with_file("", Path()),
        "--script",
        sample("session"),
        "-o",
        path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return path


def crafted(match: Path, folder: Path, key: str, change: Callable[[Any], Any]) -> Path:
    """A copy of ``match`` with its ``meta`` ``key`` changed."""
    copy = folder / "crafted.db"
    shutil.copyfile(match, copy)
    with contextlib.closing(sqlite3.connect(copy)) as conn:
        (value,) = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = ?", (json.dumps(change(json.loads(value))), key)
        )
        conn.commit()
    return copy


def refused_alike(match: Path, cli: Callable[..., Any], tmp_path: Path) -> str:
    """The one line ``export`` and ``replay`` refuse ``match`` with: the same."""
    exported = one_line(cli("export", match, "-o", tmp_path / "out.json"))
    replayed = one_line(cli("replay", match, "--no-browser", "--port", "0"))
    assert exported == replayed
    assert not (tmp_path / "out.json").exists()
    return exported


@pytest.mark.slow
def test_a_match_whose_roster_repeats_an_id_is_refused_whole(
    necromunda_match: Path, cli: Callable[..., Any], tmp_path: Path
) -> None:
    def repeat(roster: list[dict[str, Any]]) -> list[dict[str, Any]]:
        assert [m["id"] for m in roster][:2] == ["krotos", "brakk"]
        roster[1]["id"] = "krotos"
        return roster

    match = crafted(necromunda_match, tmp_path, "roster", repeat)
    line = refused_alike(match, cli, tmp_path)
    assert line == f"tablesight: {match}: meta roster[1].id: 'krotos' is also meta roster[0].id"


@pytest.mark.slow
def test_a_match_whose_models_share_a_marker_is_refused_whole(
    necromunda_match: Path, cli: Callable[..., Any], tmp_path: Path
) -> None:
    def share(roster: list[dict[str, Any]]) -> list[dict[str, Any]]:
        roster[1]["marker"] = roster[0]["marker"]
        return roster

    match = crafted(necromunda_match, tmp_path, "roster", share)
    line = refused_alike(match, cli, tmp_path)
    marker = json.loads(sqlite_meta(match, "roster"))[0]["marker"]
    assert line == (
        f"tablesight: {match}: meta roster[1].marker: {marker} is also meta roster[0].marker"
    )


def sqlite_meta(match: Path, key: str) -> str:
    with contextlib.closing(sqlite3.connect(match)) as conn:
        (value,) = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return str(value)


@pytest.mark.slow
def test_export_never_replaces_a_pipe_even_forced(necromunda_match: Path, fifo: Path) -> None:
    from tablesight.match.export import export

    with pytest.raises(InputError) as caught:
        export(necromunda_match, "json", fifo, force=True)
    assert str(caught.value) == f"{fifo}: is a named pipe; -o names the file to write"
    assert fifo.is_fifo()


@pytest.mark.slow
def test_the_real_match_exports_as_it_is(
    necromunda_match: Path, cli: Callable[..., Any], tmp_path: Path
) -> None:
    done = cli("export", necromunda_match, "-o", tmp_path / "out.json")
    assert done.returncode == 0, done.stderr
    exported = json.loads((tmp_path / "out.json").read_text())
    ids = [m["id"] for m in exported["meta"]["roster"]]
    assert len(ids) == len(set(ids)) == 12


def test_the_same_check_opens_every_match() -> None:
    """replay and export read a match through one reader, whose check refuses it whole."""
    from tablesight.match.reader import check_meta

    with pytest.raises(InputError) as caught:
        check_meta(Path("m.db"), {"roster": [{"id": "a"}, {"id": "b"}, {"id": "a"}]})
    assert str(caught.value) == "m.db: meta roster[2].id: 'a' is also meta roster[0].id"
    with pytest.raises(InputError) as caught:
        check_meta(Path("m.db"), {"terrain": [{"id": "wall"}, {}, {"id": "wall"}]})
    assert str(caught.value) == "m.db: meta terrain[2].id: 'wall' is also meta terrain[0].id"
    check_meta(Path("m.db"), {"roster": [{"id": "a"}, {"id": "b"}], "terrain": [{"id": "a"}]})
    # a piece with no id, or one that is no name (a list: never a key), is not counted
    check_meta(Path("m.db"), {"terrain": [{}, {}, {"id": [1]}, {"id": [1]}, "wall"]})
    # one marker on two models, two pieces, or a model and a piece
    with pytest.raises(InputError) as caught:
        check_meta(Path("m.db"), {"roster": [{"id": "a", "marker": 10}, {"id": "b", "marker": 10}]})
    assert str(caught.value) == "m.db: meta roster[1].marker: 10 is also meta roster[0].marker"
    with pytest.raises(InputError) as caught:
        check_meta(Path("m.db"), {"terrain": [{"id": "w", "marker": 4}, {"id": "v", "marker": 4}]})
    assert str(caught.value) == "m.db: meta terrain[1].marker: 4 is also meta terrain[0].marker"
    with pytest.raises(InputError) as caught:
        check_meta(
            Path("m.db"),
            {"roster": [{"id": "a", "marker": 9}], "terrain": [{"id": "w", "marker": 9}]},
        )
    assert str(caught.value) == "m.db: meta terrain[0].marker: 9 is also meta roster[0].marker"
    # true is no marker id (nor the 1 it equals)
    check_meta(Path("m.db"), {"roster": [{"id": "a", "marker": 1}, {"id": "b", "marker": True}]})


@pytest.mark.slow
def test_a_match_whose_video_name_is_too_long_is_one_line(
    necromunda_match: Path, cli: Callable[..., Any], tmp_path: Path
) -> None:
    name = "v" * 5000 + ".avi"
    match = crafted(necromunda_match, tmp_path, "video", lambda _: name)
    line = refused_alike(match, cli, tmp_path)
    assert line.startswith(
        f"tablesight: {match}: meta video: expected a file name of at most 255 bytes, "
        f"got one of 5004: "
    )


# -- 3. a file to write that is a pipe (or a device) --------------------------------------


def writers(target: Path) -> dict[str, list[str | Path]]:
    video = NECROMUNDA / "match.mp4"
    return {
        "markers -o": ["markers", "-o", target],
        "calibrate camera -o": [
            "calibrate",
            "camera",
            video,
            "--board",
            REPO / "samples" / "board.toml",
            "-o",
            target,
        ],
        "analyze -o": ["analyze", video, *with_file("", Path()), "-o", target],
        "run --record": [
            "run",
            "--source",
            video,
            *with_file("", Path()),
            "--record",
            target,
            "--port",
            "0",
        ],
        "export -o --force": ["export", NECROMUNDA / "none.db", "-o", target, "--force"],
    }


@pytest.mark.slow
@pytest.mark.parametrize("command", list(writers(Path("x"))))
def test_a_pipe_is_never_written_into_or_replaced(
    command: str, cli: Callable[..., Any], fifo: Path
) -> None:
    line = one_line(cli(*writers(fifo)[command]))
    option = "--record" if command == "run --record" else "--output"
    assert line == f"tablesight: {option}: {fifo}: is a named pipe, not a regular file to write"
    assert fifo.is_fifo()  # still the pipe it was


# -- every loader, in-process ------------------------------------------------------------


def loaders() -> dict[str, tuple[Callable[[Path], object], str]]:
    from tablesight.calibration.camera import BoardSpec, CameraModel, read_views
    from tablesight.calibration.roster import load_roster, load_terrain
    from tablesight.calibration.script import Script
    from tablesight.calibration.setup import Setup
    from tablesight.calibration.table import TableSpec
    from tablesight.match.reader import Match
    from tablesight.rules.ruleset import load_ruleset_file
    from tablesight.rules.scenario import Scenario

    def script(path: Path) -> object:
        setup = Setup.load(
            "necromunda", sample("table"), sample("roster"), sample("terrain"), sample("camera")
        )
        return Script.from_toml(path, setup)

    toml = "a TOML file"
    return {
        "table": (TableSpec.from_toml, toml),
        "roster": (load_roster, toml),
        "terrain": (load_terrain, toml),
        "camera": (CameraModel.from_toml, toml),
        "board": (BoardSpec.from_toml, toml),
        "script": (script, toml),
        "ruleset": (load_ruleset_file, toml),
        "scenario": (Scenario.from_file, "a scenario (a JSON file)"),
        "match": (Match, "a match file"),
        "views": (lambda path: next(read_views([path])), "an image or video of the board"),
    }


def refusal(load: Callable[[Path], object], path: Path) -> str:
    """The line ``load`` refuses ``path`` with (on a thread: a pipe that blocked it would
    hang only the thread)."""
    said: list[str] = []

    def run() -> None:
        try:
            load(path)
        except InputError as exc:
            said.append(str(exc))
        else:
            said.append("(taken)")

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(DEADLINE_S)
    assert said, f"{path} was never refused"
    return said[0]


@pytest.mark.parametrize("loader", list(loaders()))
def test_every_loader_opens_only_a_regular_file(
    loader: str, tmp_path: Path, fifo: Path, over_cap: Path
) -> None:
    load, kind = loaders()[loader]
    folder = tmp_path / "folder"
    folder.mkdir()
    assert refusal(load, Path("/dev/null")) == (
        f"/dev/null: is a device, not a regular file; expected {kind}"
    )
    assert refusal(load, fifo) == f"{fifo}: is a named pipe, not a regular file; expected {kind}"
    assert refusal(load, folder) == f"{folder}: is a folder, expected {kind}"
    assert refusal(load, Path(LONG_PART)) == f"{SHOWN[LONG_PART]}: {TOO_LONG_PART}"
    assert refusal(load, Path(LONG_TOTAL)) == f"{SHOWN[LONG_TOTAL]}: {TOO_LONG_TOTAL}"
    if loader not in ("match", "views"):  # a match or a video may be any size
        assert refusal(load, over_cap) == (
            f"{over_cap}: {kind} may hold at most 16 MiB; this holds 16,777,217 bytes"
        )


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs Linux's /proc")
def test_a_file_holding_more_than_its_size_says_is_cut_off_at_the_cap() -> None:
    """The size is checked before reading and again as the file is read: one that holds more
    than it said (a file written to meanwhile; here a /proc file, whose size is 0) is
    refused once past the cap, not read on."""
    from tablesight.rules.errors import read_bytes

    status = Path("/proc/self/status")
    assert status.stat().st_size == 0
    assert len(read_bytes(status, "a text file", 64 * 1024)) > 200
    with pytest.raises(InputError) as caught:
        read_bytes(status, "a text file", 200)
    assert str(caught.value) == (
        f"{status}: a text file may hold at most 200 bytes; this grew past that while read"
    )
