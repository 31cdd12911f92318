"""A table set-up driven as the set-up page drives it, from a rendered MJPG clip played
as a camera would deliver it: twelve ChArUco board views, 0.4 s each, then the table,
whose last picture is held.

The truth is the rig's (its lens, the table's corners as its camera projects them, the
anchors as glued) or ``calibrate`` run on its own on the same pictures; never what the
set-up said.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import time
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from tablesight.calibration.camera import calibrate
from tablesight.calibration.setup import Setup
from tablesight.rig.accuracy import scene_camera
from tablesight.rig.charuco import random_charuco_views
from tablesight.rig.setuptable import ANCHORS, CORNERS_IN, MODEL, TABLE_IN, WALL, wait_for
from tablesight.rig.synth import PlacedMarker, render_table
from tablesight.rig.webcam import pictures, write_frames
from tablesight.rules.errors import shown
from tablesight.setup.session import BOARD, HELD, TableSetup, hide_credentials
from tablesight.setup.steps import GameFile, SetupError, game_preset

#: Two models' markers on the table, and a terrain piece's.
OTHERS = [(10, 10.0, 8.0), (11, 30.0, 10.0), (40, 22.0, 14.0)]
SIZE = (1280, 720)
FPS = 10.0
VIEWS, PER_VIEW, TABLE_FRAMES = 12, 4, 20


def table_picture(camera, anchors=ANCHORS) -> np.ndarray:
    markers = [PlacedMarker(i, 40.0, x, y, 0.0, h, cv2.aruco.DICT_4X4_50) for i, x, y, h in anchors]
    markers += [PlacedMarker(i, 25.0, x, y, 0.0, 30.0, cv2.aruco.DICT_4X4_50) for i, x, y in OTHERS]
    return render_table(camera, TABLE_IN, markers)


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> SimpleNamespace:
    """Short clips of the table alone (``still``) and with anchor 1 covered, 3 pictures
    each, the lens that took them and its camera.toml."""
    folder = tmp_path_factory.mktemp("setup-table")
    lens = scene_camera(*SIZE)
    table = table_picture(lens)
    still = folder / "table.avi"
    write_frames([table] * 3, still, FPS, SIZE, "mjpg")
    covered = folder / "covered.avi"
    write_frames(
        [table_picture(lens, [a for a in ANCHORS if a[0] != 1])] * 3, covered, FPS, SIZE, "mjpg"
    )
    camera_toml = folder / "camera.toml"
    camera_toml.write_text(lens.calibrated().to_toml())
    return SimpleNamespace(
        folder=folder,
        table=table,
        still=still,
        covered=covered,
        lens=lens,
        camera_toml=camera_toml,
        corners_px=lens.project(CORNERS_IN).tolist(),
    )


@pytest.fixture(scope="module")
def board_clip(clip) -> SimpleNamespace:
    """The set-up's whole clip: 12 board views of 4 pictures each, then 20 of the table,
    at 10 a second, by the same lens."""
    views = random_charuco_views(BOARD.board(), VIEWS, *SIZE, 4, lens=clip.lens)
    path = clip.folder / "setup.avi"
    frames = [image for image, _ in views for _ in range(PER_VIEW)] + [clip.table] * TABLE_FRAMES
    write_frames(frames, path, FPS, SIZE, "mjpg")
    return SimpleNamespace(path=path, frames=len(frames), lens=clip.lens)


@pytest.fixture(scope="module")
def played(board_clip) -> SimpleNamespace:
    """The clip played through with calibration on from the start: which picture was the
    newest when, and the set-up once the worker has offered the held last picture."""
    setup = TableSetup(folder=board_clip.path.parent, run_port=0)
    setup.set_calibration(True)
    began = time.monotonic()
    setup.use_source(str(board_clip.path))
    shown: list[tuple[float, int]] = []
    while setup.state()["source"]["status"] != HELD:
        seen = setup.newest()
        if seen is not None:
            shown.append((time.monotonic() - began, seen.frame.index))
        assert time.monotonic() - began < 60
        time.sleep(0.05)
    held_s = time.monotonic() - began
    last = f"frame {board_clip.frames - 1}"
    wait_for(lambda: (setup.state()["calibration"]["last"] or {}).get("name") == last, 60)
    yield SimpleNamespace(setup=setup, shown=shown, held_s=held_s, state=setup.state())
    setup.close()


# -- the source -------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_file_plays_at_its_own_rate_and_holds_its_last_picture(board_clip, played) -> None:
    # 68 pictures at 10 a second: 6.8 s, each shown when it was due (within 3 pictures: a
    # picture is detected on as it is taken)
    assert board_clip.frames / FPS - 0.2 <= played.held_s <= board_clip.frames / FPS + 1.5
    late = [(t, i) for t, i in played.shown if abs(i - t * FPS) > 3]
    assert late == [] and len(played.shown) > 60
    seen = played.setup.newest()
    assert seen is not None and seen.frame.index == board_clip.frames - 1
    count = seen.count
    time.sleep(0.3)
    assert played.setup.newest().count == count  # held: no new pictures
    source = played.state["source"]
    assert source == {
        "spec": str(board_clip.path),
        "status": HELD,
        "width": 1280,
        "height": 720,
        "fps": 10.0,
    }
    assert played.setup.jpeg()[0] == count


# -- 1. the camera ----------------------------------------------------------------------------


@pytest.mark.slow
def test_the_views_kept_calibrate_as_calibrate_camera_does(board_clip, played) -> None:
    calibration = played.state["calibration"]
    kept = [int(name.split()[1]) for name in calibration["kept"]]
    assert calibration["views"] == len(kept)
    # at most one view kept per board pose (the others are duplicates), most of them kept
    assert len({i // PER_VIEW for i in kept}) == len(kept) >= 9
    assert all(i < VIEWS * PER_VIEW for i in kept)
    # calibrate, on its own, on the same pictures as read back from the file
    images = pictures(board_clip.path)
    theirs = calibrate(((f"frame {i}", images[i]) for i in kept), BOARD)
    assert theirs.used == calibration["kept"]
    camera = played.setup.camera
    assert camera is not None and camera.rms_px is not None and theirs.camera.rms_px is not None
    assert calibration["rms_px"] == camera.rms_px
    assert abs(camera.rms_px - theirs.camera.rms_px) <= 0.02 * theirs.camera.rms_px
    assert abs(camera.fx - theirs.camera.fx) <= 0.02 * theirs.camera.fx
    assert abs(camera.fy - theirs.camera.fy) <= 0.02 * theirs.camera.fy
    assert abs(camera.fx - board_clip.lens.fx) <= 0.02 * board_clip.lens.fx  # and the lens's own
    assert calibration["calibrated"] and calibration["camera_file"] is None
    assert calibration["coverage"]["share"] == pytest.approx(theirs.coverage)
    assert calibration["last"]["why"] == "not_found"  # the table: no board


@pytest.mark.slow
def test_views_are_offered_at_most_four_times_a_second(board_clip, played) -> None:
    # offered at most every 0.25 s: the pictures kept are at least 2 apart (0.2 s)
    kept = [int(name.split()[1]) for name in played.state["calibration"]["kept"]]
    assert len(kept) >= 9  # of the clip's 12 board views
    assert all(b - a >= 2 for a, b in itertools.pairwise(kept))


# -- 2. the table -----------------------------------------------------------------------------


@pytest.mark.slow
def test_anchors_with_the_camera_calibrated_from_the_clip(clip, board_clip, played) -> None:
    # the same anchors (to a rounding) as propose_anchors gives with calibrate's camera on
    # the same views; how near the truth they are is the calibration's: at 1280 x 720, 8
    # views covering 48-60% of the frame put the anchors near its edge 0.1-0.3 in off, 14
    # covering 68% 0.03 in, as the true lens does
    from tablesight.setup.steps import propose_anchors

    proposal = played.setup.set_table(44, 30, "4x4_50", clip.corners_px)
    assert [a.id for a in proposal.anchors] == [0, 1, 2, 3]
    images = pictures(board_clip.path)
    kept = [int(name.split()[1]) for name in played.state["calibration"]["kept"]]
    theirs = calibrate(((f"frame {i}", images[i]) for i in kept), BOARD).camera
    seen = played.setup.newest()
    again = propose_anchors(TABLE_IN, "4x4_50", seen.markers, clip.corners_px, theirs)
    for mine, other in zip(proposal.anchors, again.anchors, strict=True):
        assert math.dist((mine.x_in, mine.y_in), (other.x_in, other.y_in)) <= 0.03
    # the 12 views here (56% of the frame) put them 0.04 in off at most
    for anchor, (_, x, y, _) in zip(proposal.anchors, ANCHORS, strict=True):
        assert math.dist((anchor.x_in, anchor.y_in), (x, y)) <= 0.1
    table = played.setup.state()["table"]
    assert table["health"]["healthy"] and table["health"]["anchors_used"] == [0, 1, 2, 3]
    assert (table["width_in"], table["depth_in"], table["dictionary"]) == (44, 30, "4x4_50")


@pytest.fixture
def fresh(clip, tmp_path: Path) -> TableSetup:
    """A set-up on the table alone (held), with the true lens's camera.toml loaded,
    writing in ``tmp_path``."""
    setup = TableSetup(folder=tmp_path, run_port=0)
    setup.load_camera(str(clip.camera_toml))
    setup.use_source(str(clip.still))
    wait_for(lambda: setup.state()["source"]["status"] == HELD)
    yield setup
    setup.close()


def test_anchors_from_the_true_corners(clip, fresh) -> None:
    proposal = fresh.set_table(44, 30, "4x4_50", clip.corners_px)
    assert [a.id for a in proposal.anchors] == [0, 1, 2, 3]
    for anchor, (_, x, y, heading) in zip(proposal.anchors, ANCHORS, strict=True):
        assert math.dist((anchor.x_in, anchor.y_in), (x, y)) <= 0.05
        assert abs((anchor.heading - heading + 180) % 360 - 180) <= 2.0
        assert anchor.size_mm == 40.0
    assert proposal.healthy and proposal.warnings == ()
    markers = {m["id"]: m for m in fresh.state()["markers"]}
    assert sorted(markers) == [10, 11, 40]
    for i, x, y in OTHERS:  # flat on the table; seen_markers asks at a base's 4 mm up
        assert math.dist(markers[i]["centre_in"], (x, y)) <= 0.15
        assert (markers[i]["assigned"], markers[i]["kind"]) == (None, None)


def test_the_pose_is_solved_again_on_each_new_picture(clip, fresh) -> None:
    proposal = fresh.set_table(44, 30, "4x4_50", clip.corners_px)
    assert proposal.healthy and fresh.state()["table"]["health"]["anchors_used"] == [0, 1, 2, 3]
    before = fresh.newest().count
    fresh.use_source(str(clip.covered))  # a hand over anchor 1
    wait_for(lambda: fresh.newest().count > before and fresh.state()["source"]["status"] == HELD)
    table = fresh.state()["table"]
    assert table["health"]["anchors_used"] == [0, 2, 3]
    assert table["proposal"]["health"]["anchors_used"] == [0, 1, 2, 3]  # as proposed


def test_a_camera_that_cannot_be_opened_leaves_the_source_before_it_playing(clip, fresh):
    before = fresh.newest().count
    with pytest.raises(SetupError) as refused:
        fresh.use_source("9")  # no such camera on this machine
    assert refused.value.field == "spec"
    # the table clip plays again from its start, and is held on its last picture
    wait_for(lambda: fresh.newest().count > before and fresh.state()["source"]["status"] == HELD)
    assert fresh.state()["source"]["spec"] == str(clip.still)


def test_a_loaded_camera(clip, fresh) -> None:
    calibration = fresh.state()["calibration"]
    assert calibration["camera_file"] == str(clip.camera_toml) and calibration["calibrated"]
    assert calibration["fx"] == pytest.approx(clip.lens.fx, abs=0.01)
    assert calibration["views"] == 0


# -- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "field", "message"),
    [
        (lambda s, c: s.set_table(0, 30, "4x4_50", c), "width_in", "expected a side of 1 to 240"),
        (lambda s, c: s.set_table(44, 30, "9x9_50", c), "dictionary", "9x9_50"),
        (lambda s, c: s.set_table(44, 30, "4x4_50", c[:3]), "corners_px", "expected the table"),
        (
            lambda s, c: s.set_table(44, 30, "4x4_50", c, anchor_size_mm=-4),
            "anchor_size_mm",
            "expected a size over 0",
        ),
        (lambda s, c: s.set_table(44, 30, "4x4_50", c, tape={"x": [1, 1]}), "tape['x']", ""),
        (lambda s, c: s.set_table(44, 30, "4x4_50", c, tape={"5": [1, 1]}), "tape[5]", ""),
        (lambda s, c: s.set_calibration("yes"), "on", "expected true or false"),
        (lambda s, c: s.load_camera("/no/such/camera.toml"), "path", "/no/such/camera.toml"),
        (lambda s, c: s.use_source("/no/such/clip.avi"), "spec", "/no/such/clip.avi"),
        (lambda s, c: s.set_game("chess"), "game", "unknown game 'chess'"),
        (lambda s, c: s.set_models([MODEL]), "game", "choose a game first"),
    ],
)
def test_refusals_name_the_field(clip, fresh, step, field: str, message: str) -> None:
    with pytest.raises(SetupError) as err:
        step(fresh, clip.corners_px)
    assert err.value.field == field
    assert message in err.value.message


@pytest.mark.parametrize(
    ("models", "field", "message"),
    [
        (
            [MODEL, {**MODEL, "id": "gorth"}],
            "models[1].marker",
            "marker 10 is also models[0].marker",
        ),
        ([{**MODEL, "marker": 50}], "models[0].marker", "expected a marker of 4x4_50 (0 to 49)"),
        ([{**MODEL, "marker": 3}], "models[0].marker", "marker 3 is an anchor"),
        ("krotos", "models", "expected a list of entries"),
    ],
)
def test_models_refused_name_the_entry(clip, fresh, models, field: str, message: str) -> None:
    fresh.set_table(44, 30, "4x4_50", clip.corners_px)
    fresh.set_game("necromunda")
    with pytest.raises(SetupError) as err:
        fresh.set_models(models)
    assert (err.value.field, err.value.message[: len(message)]) == (field, message)


def test_an_unwritable_folder_is_refused(clip, fresh, tmp_path: Path) -> None:
    fresh.set_table(44, 30, "4x4_50", clip.corners_px)
    fresh.set_game("necromunda")
    fresh.set_models([MODEL])
    (tmp_path / "notes.txt").write_text("a file, not a folder")
    with pytest.raises(SetupError) as err:
        fresh.write(str(tmp_path / "notes.txt" / "table"))
    assert err.value.field == "folder"
    assert err.value.message.endswith("Not a directory")
    assert fresh.state()["written"] is None


# -- 3 and 4. the models and the files --------------------------------------------------------


def test_the_files_written_load(clip, fresh, tmp_path: Path) -> None:
    proposal = fresh.set_table(44, 30, "4x4_50", clip.corners_px)
    assert fresh.set_game("necromunda").movement_unit == "in"
    second = {**MODEL, "id": "gorth", "marker": 11, "side": "escher"}
    done = fresh.set_models([MODEL, second], [WALL])
    assert [m.marker_size_mm for m in done.roster] == [16.0, 16.0]
    state = fresh.state()
    assigned = {m["id"]: (m["assigned"], m["kind"]) for m in state["markers"]}
    assert assigned == {10: ("krotos", "model"), 11: ("gorth", "model"), 40: ("wall", "terrain")}
    files, run = fresh.write(str(tmp_path / "my-table"))
    assert run is None
    loaded = Setup.load("necromunda", files.table, files.roster, files.terrain, files.camera)
    assert loaded.table == proposal.table
    assert loaded.roster == done.roster and loaded.terrain == done.terrain
    assert loaded.camera is not None
    assert np.allclose(loaded.camera.camera_matrix, clip.lens.camera_matrix, atol=1e-5)
    written = fresh.state()["written"]
    assert written["folder"] == str(tmp_path / "my-table")
    assert written["files"] == {
        "table": str(tmp_path / "my-table" / "table.toml"),
        "roster": str(tmp_path / "my-table" / "roster.toml"),
        "terrain": str(tmp_path / "my-table" / "terrain.toml"),
        "camera": str(tmp_path / "my-table" / "camera.toml"),
    }


def test_the_markers_to_print(clip, fresh) -> None:
    with pytest.raises(SetupError) as err:
        fresh.markers_pdf()
    assert err.value.field == "models"
    fresh.set_table(44, 30, "4x4_50", clip.corners_px)
    fresh.set_game("necromunda")
    # the sheet's 20 mm with its quiet zone (20 + 2 x 20 / 6 = 26.7 mm square, 37.7 mm
    # across) is over a 32 mm base; refused with every such model at once, with the
    # largest each base takes, before anything is printed
    big = {k: v for k, v in MODEL.items() if k != "marker_size_mm"}
    oval = {
        **big,
        "id": "bike",
        "marker": 11,
        "base": {"shape": "oval", "length_mm": 60, "width_mm": 35},
        "marker_size_mm": 23,
    }
    fits = {**MODEL, "id": "gorth", "marker": 12}
    with pytest.raises(SetupError) as err:
        fresh.set_models([fits, big, oval])
    assert err.value.field == "models[1, 2].marker_size_mm"
    assert err.value.message == (
        "markers that with their quiet zone do not fit their bases: krotos 20 mm on a 32 mm "
        "round base (at most 16.9 mm), bike 23 mm on a 60 x 35 mm oval base (at most 22.6 mm)"
    )
    assert fresh.state()["models"] == []
    fresh.set_models([MODEL], [WALL])
    assert fresh.markers_pdf().startswith(b"%PDF")
    assert fresh.board_pdf().startswith(b"%PDF")


@pytest.mark.slow
def test_started_the_game_runs_on_the_files(clip, board_clip, tmp_path: Path) -> None:
    """``tablesight run`` started on the files written, on the clip, once the set-up let
    go of it: it says where its table view is, and serves the game there."""
    import json
    import sys
    import urllib.request

    command = [sys.executable, "-m", "tablesight"]
    setup = TableSetup(folder=tmp_path, command=command, run_port=0)
    try:
        setup.load_camera(str(clip.camera_toml))
        setup.use_source(str(board_clip.path))  # the game plays it again: 6.8 s
        wait_for(lambda: setup.state()["source"]["status"] == HELD)
        setup.set_table(44, 30, "4x4_50", clip.corners_px)
        setup.set_game("necromunda")
        setup.set_models([MODEL])
        _, run = setup.write(str(tmp_path / "game"), start=True)
        assert run is not None and run.url is not None, list(run.lines if run else [])
        assert setup.state()["source"]["status"] == "released"
        assert run.command[-4:] == ["--host", "127.0.0.1", "--port", "0"]
        with urllib.request.urlopen(run.url.split("?")[0] + "api/state", timeout=10) as answer:
            assert answer.status == 200
            assert json.loads(answer.read())["game"]["name"] == "necromunda"
        assert setup.state()["run"]["status"] in ("running", "ended (exit status 0)")
    finally:
        setup.close()
    assert run.process.poll() is not None


@pytest.mark.slow
def test_a_stream_is_read_live_and_its_loss_said(clip) -> None:
    """An MJPEG stream over HTTP (a phone's camera app), sending the table at 10 pictures
    a second: read live, its rate measured; when it stops, "camera lost, retrying"."""
    import http.server
    import socketserver
    import threading

    jpeg = cv2.imencode(".jpg", clip.table)[1].tobytes()
    stop = threading.Event()

    class Camera(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "multipart/x-mixed-replace; boundary=frame")
            self.end_headers()
            head = b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n"
            with contextlib.suppress(OSError):
                while not stop.is_set():
                    self.wfile.write(head % len(jpeg) + jpeg + b"\r\n")
                    time.sleep(0.1)

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Camera)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    spec = f"http://127.0.0.1:{server.server_address[1]}/video"
    setup = TableSetup(folder=clip.folder, run_port=0)
    try:
        setup.load_camera(str(clip.camera_toml))
        setup.use_source(spec)
        wait_for(lambda: setup.newest() is not None and setup.newest().count >= 15)
        source = setup.state()["source"]
        assert (source["spec"], source["status"], source["width"]) == (spec, "live", 1280)
        assert 8.0 <= source["fps"] <= 12.0
        proposal = setup.set_table(44, 30, "4x4_50", clip.corners_px)
        assert proposal.healthy
        stop.set()
        server.shutdown()
        wait_for(lambda: setup.state()["source"]["status"] == "camera lost, retrying")
        assert setup.state()["table"]["health"]["healthy"]  # the last picture's
    finally:
        setup.close()
        server.server_close()


def test_a_game_from_a_file_is_offered_and_started_with_it(
    clip, tmp_path: Path, hasty_necromunda: Path
) -> None:
    """``setup --ruleset``: the file's game is offered beside the packaged ones, its
    keywords come from the file, and the files written name it for ``run``."""
    setup = TableSetup(folder=tmp_path, run_port=0, game_file=GameFile.load(hasty_necromunda))
    try:
        setup.load_camera(str(clip.camera_toml))
        setup.use_source(str(clip.still))
        wait_for(lambda: setup.state()["source"]["status"] == HELD)
        assert setup.state()["games"][-1] == "hasty-necromunda"
        setup.set_table(44, 30, "4x4_50", clip.corners_px)
        preset = setup.set_game("hasty-necromunda")
        assert (preset.game, preset.title) == ("hasty-necromunda", "Hasty Necromunda")
        # the same rules as Necromunda's but the Move: the same keywords to offer
        assert preset.keywords == game_preset("necromunda").keywords
        setup.set_models([MODEL])
        files, _ = setup.write(str(tmp_path / "game"))
    finally:
        setup.close()
    assert files.options()[:2] == ["--ruleset", str(hasty_necromunda.resolve())]
    loaded = files.load()
    assert loaded.ruleset.name == "hasty-necromunda"
    assert loaded.ruleset.actions["move"].factor == 0.5
    header = (tmp_path / "game" / "table.toml").read_text().splitlines()[0]
    assert (
        header
        == "# Set up for Hasty Necromunda. Referee it from this folder (--source: your camera):"
    )


def test_setup_refuses_a_bad_game_file_in_one_line(tmp_path: Path, tablesight) -> None:
    missing = tmp_path / "none.toml"
    result = tablesight("setup", "--ruleset", str(missing), "--port", "0")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"tablesight: {missing}: no such file"]


def test_a_streams_credentials_are_hidden_wherever_a_text_holds_them() -> None:
    """Whole, or where a message cut a long URL short in the middle of its password; a
    URL without credentials, a file and the rest are left as they are."""
    long = "rtsp://admin:" + "p" * 70 + "@10.0.0.9:554/" + "stream" * 20
    short = "http://me:it's secret@phone:8080/video"
    state = {
        "source": {"spec": short, "status": f"failed: {short}: the stream cannot be opened"},
        "sources": [{"spec": "0"}, {"spec": "http://cam/video"}, {"spec": "clip.mp4"}],
        "run": {"status": f"ended (exit status 2): tablesight: --source: {shown(long)}: gone"},
        "frame": 3,
    }
    hidden = hide_credentials(state, ["0", "clip.mp4", "http://cam/video", short, long])
    text = repr(hidden)
    assert "secret" not in text and "me:" not in text and "admin" not in text
    assert "ppp" not in text, text
    assert hidden["source"] == {
        "spec": "http://***@phone:8080/video",
        "status": "failed: http://***@phone:8080/video: the stream cannot be opened",
    }
    assert hidden["sources"] == state["sources"] and hidden["frame"] == 3
