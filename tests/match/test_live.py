"""A game being refereed: controls, a lost model, a lost camera."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tablesight.calibration.setup import Setup
from tablesight.match.game import Game
from tablesight.rules.errors import InputError
from tablesight.rules.ruleset import load_ruleset
from tablesight.vision.sources import FileSource, Frame, LiveSource


def test_controls(setup, tmp_path):
    (tmp_path / "x.png").write_bytes(b"")
    game = Game(setup, FileSource(str(tmp_path)), auto_phase=False)
    assert setup.sides == ["red", "blue"]
    assert [e.kind for e in game.start_phase(side="blue")] == ["phase_started"]
    assert (game.session.turn, game.session.side) == (1, "blue")
    events = game.next_turn()
    assert [e.kind for e in events] == ["phase_ended", "phase_started"]
    assert events[1].message == "turn 2: movement, blue moving"
    assert game.next_side() == "red"
    with pytest.raises(InputError, match="side: unknown side 'green'"):
        game.set_side("green")
    heard = []
    game.listen(heard.append)
    game.end_phase()
    assert [e.kind for e in heard] == ["phase_ended"]
    assert game.end_phase() == []  # no phase: nothing to end


def test_a_model_unseen_for_long_is_lost_once(setup, footage):
    _, pics = footage
    game = Game(setup, FileSource(str(_folder_of_one(pics["start"]))))
    kinds = []
    game.listen(lambda e: kinds.append((e.kind, e.model)))
    for k in range(10):
        game.process(Frame(pics["start"], k / 30, k))
    # the ganger is gone for 12 s, seen every 2 s: hidden at once, lost after 10 s, once
    for k, t in enumerate(range(1, 13, 2)):
        game.process(Frame(pics["hand"], 10 / 30 + t, 10 + k))
    assert kinds == [
        ("phase_started", None),
        ("model_hidden", "ganger"),
        ("model_lost", "ganger"),
    ]
    lost = game.session.events[-1]
    assert lost.measured == pytest.approx(11 + 1 / 30, abs=0.04)
    assert "kept where it was last seen at (10.0" in lost.message


def _folder_of_one(image):
    import tempfile
    from pathlib import Path

    import cv2

    folder = Path(tempfile.mkdtemp())
    cv2.imwrite(str(folder / "0.png"), image)
    return folder


@pytest.mark.slow
def test_a_dead_stream_is_a_lost_camera_and_retried(setup):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    source = LiveSource(f"http://127.0.0.1:{port}/video", retry_s=(0.05, 0.1))
    game = Game(setup, source)
    heard = []
    game.listen(heard.append)
    game.start()
    import time

    deadline = time.monotonic() + 10
    while not heard and time.monotonic() < deadline:
        time.sleep(0.05)
    status = game.status
    game.stop()
    assert [(e.kind, e.message) for e in heard] == [("camera_lost", "camera lost, retrying")]
    assert status == "camera lost, retrying"
    assert game.status == "ended"


def test_a_square_grid_game_is_judged_in_squares():
    from tablesight.calibration.roster import RosterModel
    from tablesight.calibration.table import Anchor, TableKeys, TableSpec
    from tablesight.rules.geometry import Pose
    from tablesight.rules.scenario import GridIn, RoundBase

    table = TableSpec(
        table=TableKeys(width_in=30, depth_in=20, dictionary="4x4_50"),
        anchors=[Anchor(id=0, x_in=1, y_in=1, size_mm=40)],
        grid=GridIn(square_in=1.25, origin=(2.0, 1.0)),
    )
    crew = RosterModel(
        id="pilot",
        side="crew",
        base=RoundBase(shape="round", diameter_mm=25),
        movement=4,
        marker=5,
        marker_size_mm=20,
    )
    setup = Setup("battlestations", load_ruleset("battlestations"), table, [crew], [], None)
    session = setup.session()
    assert session.grid is not None and session.grid.square_in == 1.25
    session.seen("pilot", Pose(2.6, 1.6))  # the middle of square (0, 0)
    session.start_phase(0, 0)
    # 6 squares along the row (7.5 in), of a move of 4 squares
    events = session.moved(1, 30, "pilot", Pose(2.6 + 7.5, 1.6))
    [flag] = [e for e in events if e.kind == "violation"]
    assert (flag.rule, flag.measured, flag.limit) == ("movement", 6, 4)


SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "necromunda"


def test_terrain_seen_by_the_camera_reaches_the_referee(necromunda_sample):
    import cv2

    setup = necromunda_sample
    capture = cv2.VideoCapture(str(SAMPLE / "match.mp4"))
    ok, image = capture.read()
    capture.release()
    assert ok
    game = Game(setup, FileSource(str(SAMPLE / "match.mp4")))
    game.process(Frame(image, 0.0, 0))
    pieces = {t.id: t for t in game.session.terrain}
    assert set(pieces) == {"bulkhead", "promethium-tanks", "rubble"}
    # the bulkhead: a 5 x 1 in wall whose marker lies at (16.5, 16.5), heading 0
    wall = pieces["bulkhead"]
    assert wall.polygon.area == pytest.approx(5.0, abs=0.05)
    assert (wall.polygon.centroid.x, wall.polygon.centroid.y) == (
        pytest.approx(16.5, abs=0.03),
        pytest.approx(16.5, abs=0.03),
    )
    assert wall.height_in == 3 and wall.keywords == {"impassable"}
    # seen again in the next frame, a piece that has not moved is not placed again
    before = game.session.terrain
    game.process(Frame(image, 1 / 10, 1))
    assert game.session.terrain is before


def test_a_camera_carried_round_is_said_and_the_status_comes_back(setup, tmp_path):
    """Most of the picture changing at every frame for half a second: the status says the
    camera is moving; the picture still again, it is what it was."""
    import cv2
    import numpy as np

    from tablesight.match.game import MOVING

    # a table with a grain of its own (blobs of about 16 px), as a camera sees a mat
    blobs = np.random.default_rng(5).normal(120, 40, (68, 152)).astype(np.float32)
    mat = np.clip(cv2.resize(blobs, (2432, 1080), interpolation=cv2.INTER_CUBIC), 0, 255)
    (tmp_path / "x.png").write_bytes(b"")
    game = Game(setup, FileSource(str(tmp_path)))
    game.status = "live"
    statuses = []
    for k in range(30):  # 1 s at 30 fps: still for 0.2 s, carried 16 px a frame, then still
        shift = 16 * min(max(k - 5, 0), 20)
        picture = np.ascontiguousarray(mat[:, shift : shift + 1920]).astype(np.uint8)
        game.process(Frame(cv2.cvtColor(picture, cv2.COLOR_GRAY2BGR), k / 30, k))
        statuses.append(game.status)
    # carried from frame 6 (0.2 s) to frame 25: said once it has gone on for 0.5 s, at
    # frame 21 (0.7 s); still from frame 26: the next frame is looked at, and finds it still
    assert statuses == ["live"] * 21 + [MOVING] * 5 + ["live"] * 4


@pytest.mark.slow
def test_each_loss_of_the_camera_and_each_return_is_told_once(setup, footage):
    """A network camera that drops its connection after each 15 pictures (half a second)
    and answers again after 3 s (longer than the 2 s that make a loss): the status is live
    while it delivers, each loss is told (the second too) and each return, and stopping
    the game is no loss."""
    import time

    import cv2

    from tablesight.match.game import CAMERA_LOST, LIVE
    from tablesight.rig.mjpeg import dropping_camera

    _, pics = footage
    ok, jpeg = cv2.imencode(".jpg", pics["start"], [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    server = dropping_camera(jpeg.tobytes(), connections=3)  # a third drop-out for good
    source = LiveSource(f"http://127.0.0.1:{server.server_address[1]}/v", retry_s=(0.05, 0.1))
    game = Game(setup, source)
    heard = []
    game.listen(heard.append)
    statuses = set()
    game.start()
    try:
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            statuses.add(game.status)
            kinds = [e.kind for e in heard if e.kind.startswith("camera_")]
            if kinds.count("camera_lost") == 3:
                break
            time.sleep(0.02)
    finally:
        game.stop()
        server.shutdown()
        server.server_close()
    kinds = [e.kind for e in heard if e.kind.startswith("camera_")]
    # three connections: lost after each, back at the second and the third; stopping
    # after the third loss adds nothing
    assert kinds == ["camera_lost", "camera_back", "camera_lost", "camera_back", "camera_lost"]
    assert {LIVE, CAMERA_LOST} <= statuses
    assert game.status == "ended"


def test_a_frame_cut_short_in_a_recorded_game_is_skipped(setup, footage, tmp_path):
    """A camera's JPEG cut short mid-stream reaches the game undecoded: it is skipped (not
    observed, not recorded), and the game and its record go on."""
    import cv2

    from tablesight.match.reader import Match
    from tablesight.match.writer import MatchWriter

    _, pics = footage
    ok, jpeg = cv2.imencode(".jpg", pics["start"], [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    packet = jpeg.reshape(-1)
    (tmp_path / "x.png").write_bytes(b"")
    db = tmp_path / "match.db"
    writer = MatchWriter(db, setup)
    game = Game(setup, FileSource(str(tmp_path)), recorder=writer, check_s=1 / 30)
    for k in range(6):
        cut = k in (0, 3)  # the very first frame, and one later
        game.process(Frame(None, k / 30, k, jpeg=packet[:200] if cut else packet))
    writer.close()
    with Match(db) as match:
        assert [f.index for f in match.frames()] == [1, 2, 4, 5]
