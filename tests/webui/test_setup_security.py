"""What the set-up (``tablesight setup``) promises those who may only watch, where it
writes, and starting a game, over HTTP against real servers:

- served on a LAN address (token mode), no answer to a request without the token, of the
  set-up or of the game it started (every GET route of both apps, the pages, the JSON,
  the static files, the first messages of the streams), holds either's token; the game's
  table view links to the set-up page without its token; with the token, the set-up's
  state holds the game's address with the game's token;
- without the token, the sources' stream URLs are shown without their credentials;
- the files are written only in the folder given at start, and files already there are
  replaced only when asked, the old kept beside, byte for byte;
- six starts at once: one game runs, the others are refused with a 409 while it starts.

The camera is an MJPEG stream over HTTP (a phone's camera app) sending a rendered table
(1280 x 720; the rig's lens, anchors as glued) for as long as it is asked.
"""

from __future__ import annotations

import contextlib
import http.client
import http.server
import json
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlsplit

import cv2
import pytest

import tablesight.webui
from tablesight.rig.accuracy import scene_camera
from tablesight.rig.mjpeg import steady_camera
from tablesight.rig.setuptable import ANCHORS, CORNERS_IN, MODEL, wait_for
from tablesight.rig.synth import PlacedMarker, render_table
from tablesight.setup.session import TableSetup
from tablesight.webui.app import create_app
from tablesight.webui.setup import create_setup_app, setup_server

#: The camera's credentials, in its stream's URL.
USER, PASSWORD = "watcher", "s3cret-pass"
#: What ``tablesight setup`` prints when its page is up, on a LAN address (token mode).
SETUP_LINE = re.compile(r"set-up page: (http://127\.0\.0\.2:(\d+)/)\?token=([A-Za-z0-9_-]+)")
#: Where the tests serve "on the LAN": an address of this machine that is not the loopback
#: address the servers trust (so they make up a token), answered only here.
LAN = "127.0.0.2"


@dataclass
class Answer:
    status: int
    headers: str
    body: bytes

    @property
    def text(self) -> str:
        return self.headers + "\n" + self.body.decode("utf-8", "replace")

    def json(self) -> dict:
        return json.loads(self.body)


def ask(
    url: str,
    method: str = "GET",
    body: object = None,
    token: str | None = None,
    most: int = 1 << 18,
) -> Answer:
    """One request, its answer whatever its status; a stream (server-sent events, MJPEG)
    read up to ``most`` bytes, three messages, or until it sends nothing for a while."""
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=90)
    headers = {"X-TableSight-Token": token} if token else {}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request(method, path, body=data, headers=headers)
        sock = connection.sock
        response = connection.getresponse()
        said = "\n".join(f"{k}: {v}" for k, v in response.getheaders())
        kind = response.getheader("Content-Type", "")
        if not kind.startswith(("text/event-stream", "multipart/")):
            return Answer(response.status, said, response.read())
        sock.settimeout(3.0)  # a stream: read for as long as it sends
        got = b""
        with contextlib.suppress(TimeoutError, socket.timeout):
            while len(got) < most and got.count(b"\n\n") < 3:
                chunk = response.read1(65536)
                if not chunk:
                    break
                got += chunk
        return Answer(response.status, said, got)
    finally:
        connection.close()


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> SimpleNamespace:
    folder = tmp_path_factory.mktemp("setup-security")
    lens = scene_camera(1280, 720)
    markers = [PlacedMarker(i, 40.0, x, y, 0.0, h, cv2.aruco.DICT_4X4_50) for i, x, y, h in ANCHORS]
    markers.append(PlacedMarker(10, 25.0, 10.0, 8.0, 0.0, 0.0, cv2.aruco.DICT_4X4_50))
    picture = render_table(lens, (44.0, 30.0), markers)
    camera_toml = folder / "camera.toml"
    camera_toml.write_text(lens.calibrated().to_toml())
    return SimpleNamespace(
        jpeg=cv2.imencode(".jpg", picture)[1].tobytes(),
        camera_toml=camera_toml,
        corners_px=lens.project(CORNERS_IN).tolist(),
    )


@pytest.fixture
def camera(table) -> Iterator[SimpleNamespace]:
    """An MJPEG stream on 127.0.0.1 sending the table ten times a second: its address
    (``bare``) and the same with credentials (``spec``), which it does not check."""
    with steady_camera(table.jpeg, fps=10) as url:
        port = urlsplit(url).port
        yield SimpleNamespace(bare=url, spec=f"http://{USER}:{PASSWORD}@127.0.0.1:{port}/video")


def steps(table: SimpleNamespace) -> list[tuple[str, dict[str, object]]]:
    """The set-up's steps as the page posts them: the camera, the table, the game and one
    model."""
    corners = table.corners_px
    return [
        ("camera", {"path": str(table.camera_toml)}),
        ("table", {"width_in": 44, "depth_in": 30, "dictionary": "4x4_50", "corners_px": corners}),
        ("game", {"game": "necromunda"}),
        ("models", {"models": [MODEL]}),
    ]


def set_up(base: str, table: SimpleNamespace, token: str | None = None) -> None:
    """Through the set-up's API, once the camera's first picture is in: the camera, the
    table, the game and one model."""
    wait_for(lambda: ask(base + "api/setup/state", token=token).json()["frame"] is not None)
    for route, body in steps(table):
        answer = ask(f"{base}api/setup/{route}", "POST", body, token)
        assert answer.status == 200, (route, answer.body[:300])


def status(base: str, token: str | None = None) -> str:
    """The status of the game the set-up started."""
    run = ask(base + "api/setup/state", token=token).json()["run"]
    return "none" if run is None else str(run["status"])


def get_routes(app) -> list[str]:
    """Every GET route of ``app``, the static files each, a model's route for krotos."""
    static = Path(tablesight.webui.__file__).parent / "static"
    paths = []
    for rule in app.url_map.iter_rules():
        if "GET" not in (rule.methods or ()):
            continue
        if rule.endpoint == "static":
            paths += [f"/static/{p.name}" for p in sorted(static.iterdir())]
        elif rule.arguments:
            paths.append(rule.rule.replace("<model_id>", MODEL["id"]))
        else:
            paths.append(rule.rule)
    assert not [p for p in paths if "<" in p], paths
    return paths


def processes_with(text: str) -> list[int]:
    """The processes alive (not zombies) whose command line holds ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            status = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in line and status != "Z":
            found.append(int(entry.name))
    return found


# -- 1. no token to anyone who may only watch --------------------------------------------


@pytest.mark.slow
def test_no_answer_without_the_token_holds_a_token(
    table, camera, tablesight_command, tmp_path: Path
) -> None:
    """``tablesight setup --host <LAN address>``, a game started through its API (a real
    ``tablesight run``): every GET route of both apps answered without a token holds
    neither token nor the camera's password; with the token, what is needed is there."""
    process = subprocess.Popen(
        [*tablesight_command, "setup", "--host", LAN, "--port", "0", "--folder", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = SETUP_LINE.search(line)
        assert found, line
        threading.Thread(target=process.stderr.read, daemon=True).start()  # kept drained
        base, setup_port, setup_token = found.group(1), int(found.group(2)), found.group(3)
        setup_page = f"http://{LAN}:{setup_port}/setup"

        answer = ask(base + "api/setup/source", "POST", {"spec": camera.spec}, setup_token)
        assert answer.status == 200, answer.body[:300]
        assert ask(base + "api/setup/source", "POST", {"spec": camera.spec}).status == 403
        set_up(base, table, setup_token)
        answer = ask(
            base + "api/setup/write",
            "POST",
            {"folder": str(tmp_path / "game"), "start": True},
            setup_token,
        )
        assert answer.status == 200, answer.body[:300]
        run = answer.json()["run"]
        wait_for(lambda: status(base, setup_token) != "starting", 120)
        assert status(base, setup_token) == "running", run
        game_url = urlsplit(run["url"])
        assert (game_url.hostname, game_url.path) == (LAN, "/")
        game_base = f"http://{LAN}:{game_url.port}/"
        game_token = dict(q.split("=", 1) for q in game_url.query.split("&"))["token"]
        # the game's token is the one its controls need
        end = {"end": True}
        assert ask(game_base + "api/phase", "POST", end).status == 403
        assert ask(game_base + "api/phase", "POST", end, game_token).status != 403
        # the game was told the set-up page's address alone
        (pid,) = processes_with(str(tmp_path / "game" / "table.toml"))
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        assert argv[argv.index("--setup-url") + 1] == setup_page
        assert "--host" in argv and argv[argv.index("--host") + 1] == LAN

        # with the set-up's token: the game's address with its token, the camera's URL
        whole = ask(base + "api/setup/state", token=setup_token).json()
        assert whole["run"]["url"] == f"{game_base}?token={game_token}"
        assert whole["source"]["spec"] == camera.spec
        # without: the game's address alone, the camera's without its credentials
        shown = ask(base + "api/setup/state").json()
        assert shown["run"]["url"] == game_base
        assert shown["run"]["game"] == "necromunda" and shown["run"]["pid"] == pid
        masked = f"http://***@127.0.0.1:{urlsplit(camera.bare).port}/video"
        assert shown["source"]["spec"] == masked
        assert [s["spec"] for s in shown["sources"] if "://" in s["spec"]] == [masked]
        assert masked in shown["run"]["command"]
        # the table view, with the game's token or not, links to the set-up page alone
        for token in (None, game_token):
            view = ask(game_base + ("" if token is None else f"?token={token}")).body.decode()
            assert f'id="setup-link" href="{setup_page}"' in view

        # every GET route of both apps, without a token
        scratch = TableSetup(folder=tmp_path)
        try:
            setup_paths = get_routes(create_setup_app(scratch))
        finally:
            scratch.close()
        game_paths = get_routes(create_app(None))  # type: ignore[arg-type]
        game_paths += ["/api/events?since=0", f"/api/measure?a={MODEL['id']}&x=20&y=15"]
        assert {"/api/setup/state", "/setup", "/setup/video.mjpg"} <= set(setup_paths)
        assert {"/", "/api/state", "/api/stream", "/video.mjpg"} <= set(game_paths)
        answers = {f"setup {p}": ask(base.rstrip("/") + p) for p in setup_paths}
        answers |= {f"game {p}": ask(game_base.rstrip("/") + p) for p in game_paths}
        statuses = {where: a.status for where, a in answers.items()}
        print(f"\n{len(answers)} answers without a token: {statuses}")
        assert not [w for w, s in statuses.items() if s >= 500], statuses
        stream = answers["game /api/stream"].body
        assert stream.count(b"\n\n") >= 1 and b"data:" in stream  # its first messages read
        for where, answer in answers.items():
            for secret in (setup_token, game_token):
                assert secret not in answer.text, (where, answer.text[:300])
            if where.startswith("setup"):
                assert PASSWORD not in answer.text, where
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
        if process.stderr is not None:
            process.stderr.close()
    assert processes_with(str(tmp_path / "game" / "table.toml")) == []  # the game stopped too


@pytest.mark.parametrize("password", [PASSWORD, "it's-mine", 'say "cheese"'])
def test_viewers_read_the_sources_without_their_credentials(
    camera, tmp_path: Path, password: str
) -> None:
    """Whatever the password holds (a quote or a space ends a URL in a text), viewers
    read the stream's URL with ``***`` for its user and password, and neither anywhere."""
    camera.spec = camera.spec.replace(PASSWORD, password)
    setup = TableSetup(folder=tmp_path)
    try:
        client = create_setup_app(setup, token="the-token").test_client()
        answer = client.post(
            "/api/setup/source", json={"spec": camera.spec}, headers={"X-TableSight-Token": "x"}
        )
        assert answer.status_code == 403
        answer = client.post(
            "/api/setup/source",
            json={"spec": camera.spec},
            headers={"X-TableSight-Token": "the-token"},
        )
        assert answer.status_code == 200
        assert answer.get_json()["source"]["spec"] == camera.spec  # to its controller
        port = urlsplit(camera.bare).port
        for headers in ({}, {"X-TableSight-Token": "wrong"}):
            shown = client.get("/api/setup/state", headers=headers)
            assert password not in shown.get_data(as_text=True)
            assert USER not in shown.get_data(as_text=True)
            state = shown.get_json()
            assert state["source"]["spec"] == f"http://***@127.0.0.1:{port}/video"
            assert f"http://***@127.0.0.1:{port}/video" in [s["spec"] for s in state["sources"]]
        for asked in (
            client.get("/api/setup/state", headers={"X-TableSight-Token": "the-token"}),
            client.get("/api/setup/state?token=the-token"),
        ):
            assert camera.spec in [s["spec"] for s in asked.get_json()["sources"]]
    finally:
        setup.close()


# -- 2. where the files go ------------------------------------------------------------------


@pytest.fixture
def ready(table, camera, tmp_path: Path) -> Iterator[tuple[object, Path]]:
    """A set-up writing in ``tmp_path/tables``, its camera, table, game and model chosen;
    Flask's test client for it."""
    root = tmp_path / "tables"
    root.mkdir()
    setup = TableSetup(folder=root)
    client = create_setup_app(setup).test_client()
    try:
        assert client.post("/api/setup/source", json={"spec": camera.spec}).status_code == 200
        wait_for(lambda: setup.newest() is not None)
        for route, body in steps(table):
            answer = client.post(f"/api/setup/{route}", json=body)
            assert answer.status_code == 200, answer.get_json()
        yield client, root
    finally:
        setup.close()


def files_under(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@pytest.mark.parametrize("where", ["..", "../../elsewhere", "OUT", "/", "escape", "escape/sub"])
def test_a_folder_outside_is_a_400_naming_folder(ready, tmp_path: Path, where: str) -> None:
    client, root = ready
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "escape").symlink_to(outside, target_is_directory=True)
    before = files_under(tmp_path)
    answer = client.post(
        "/api/setup/write", json={"folder": str(outside) if where == "OUT" else where}
    )
    assert answer.status_code == 400
    error = answer.get_json()["error"]
    assert (error["status"], error["field"]) == (400, "folder")
    assert error["message"].startswith(f"folder: the set-up writes only in {root} and")
    assert files_under(tmp_path) == before
    assert list(outside.iterdir()) == []


def test_files_there_are_replaced_only_when_confirmed(ready) -> None:
    client, root = ready
    answer = client.post("/api/setup/write", json={"folder": "my table"})
    assert answer.status_code == 200
    folder = root / "my table"
    assert answer.get_json()["written"]["folder"] == str(folder)
    names = ["camera.toml", "roster.toml", "table.toml"]
    assert sorted(p.name for p in folder.iterdir()) == names
    mine = b"# my own roster, by hand\n" + (folder / "roster.toml").read_bytes()
    (folder / "roster.toml").write_bytes(mine)
    before = files_under(folder)

    answer = client.post("/api/setup/write", json={"folder": "my table"})
    assert answer.status_code == 409
    error = answer.get_json()["error"]
    assert (error["status"], error["field"]) == (409, "replace")
    # only the file that writing would change is asked about
    assert error["message"].startswith(f"replace: roster.toml in {folder}: replace it?")
    assert files_under(folder) == before
    answer = client.post("/api/setup/write", json={"folder": "my table", "replace": "yes"})
    assert answer.get_json()["error"]["field"] == "replace"
    assert files_under(folder) == before

    answer = client.post("/api/setup/write", json={"folder": "my table", "replace": True})
    assert answer.status_code == 200
    after = files_under(folder)
    assert sorted(after) == sorted([*names, "roster.toml.1"])
    assert after["roster.toml.1"] == mine  # the old kept, byte for byte
    assert after["roster.toml"] != mine and not after["roster.toml"].startswith(b"# my own")
    assert {n: after[n] for n in ("camera.toml", "table.toml")} == {
        n: before[n] for n in ("camera.toml", "table.toml")
    }


# -- 7. six starts at once ------------------------------------------------------------------


@pytest.mark.slow
def test_six_starts_at_once_start_one_game(table, camera, tmp_path: Path) -> None:
    """Six POSTs of write-and-start at once against the served set-up, while the first
    game is held from starting (its command waits for a gate): the five others are
    refused with a 409 on ``start``; once the gate opens one game runs, the one the state
    names, and the set-up still answers."""
    gate = tmp_path / "gate"
    wrapper = tmp_path / "held.py"
    wrapper.write_text(
        "import os, sys, time\n"
        "while not os.path.exists(sys.argv[1]):\n"
        "    time.sleep(0.05)\n"
        "os.execv(sys.executable, [sys.executable, '-m', 'tablesight', *sys.argv[2:]])\n"
    )
    root = tmp_path / "tables"
    setup = TableSetup(folder=root, command=[sys.executable, str(wrapper), str(gate)], run_port=0)
    server = setup_server(setup, "127.0.0.1", 0).start()
    base = f"http://127.0.0.1:{server.port}/"
    try:
        assert ask(base + "api/setup/source", "POST", {"spec": camera.spec}).status == 200
        set_up(base, table)
        barrier = threading.Barrier(6)
        answers: list[Answer] = []
        answered = threading.Condition()

        def start() -> None:
            barrier.wait()
            body = {"folder": "game", "start": True, "replace": True}
            got = ask(base + "api/setup/write", "POST", body)
            with answered:
                answers.append(got)
                answered.notify_all()

        threads = [threading.Thread(target=start) for _ in range(6)]
        for thread in threads:
            thread.start()
        with answered:  # five answered while the first start is held
            assert answered.wait_for(lambda: len(answers) >= 5, timeout=120), len(answers)
            refused = list(answers)
        gate.touch()
        for thread in threads:
            thread.join(timeout=120)
        assert [a.status for a in refused] == [409] * 5
        for answer in refused:
            error = answer.json()["error"]
            assert (error["status"], error["field"]) == (409, "start")
        started = [a for a in answers if a not in refused]
        assert [a.status for a in started] == [200]
        run = started[0].json()["run"]
        wait_for(lambda: status(base) != "starting", 120)
        assert (run["game"], status(base)) == ("necromunda", "running")
        running = processes_with(str(root / "game" / "table.toml"))
        assert running == [run["pid"]]
        state = ask(base + "api/setup/state").json()
        assert (state["run"]["pid"], state["run"]["status"]) == (run["pid"], "running")
        game = ask(run["url"].split("?")[0] + "api/state")
        assert game.status == 200 and game.json()["game"]["name"] == "necromunda"
    finally:
        gate.touch()
        setup.close()
        server.close()
    assert processes_with(str(root / "game" / "table.toml")) == []


def test_the_table_view_links_to_the_set_up_without_its_token() -> None:
    """Given the set-up's address with a token (``run --setup-url``), the table view
    links to the address alone, with the game's token or without."""
    app = create_app(None, token="game-token", setup_url="http://10.0.0.5:5000/setup?token=s3t")  # type: ignore[arg-type]
    client = app.test_client()
    for query in ("", "?token=game-token"):
        page = client.get("/" + query).get_data(as_text=True)
        assert 'id="setup-link" href="http://10.0.0.5:5000/setup"' in page
        assert "s3t" not in page
