"""The match file: written, read back, killed mid-game, refused, exported, versioned."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import queue
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from tablesight.calibration.camera import CameraModel
from tablesight.calibration.roster import RosterModel, TerrainPiece
from tablesight.calibration.setup import Setup
from tablesight.calibration.table import Anchor, TableKeys, TableSpec
from tablesight.match import writer as writer_module
from tablesight.match.export import export
from tablesight.match.reader import Match
from tablesight.match.replay import avi_pictures
from tablesight.match.writer import MatchWriter
from tablesight.rig.poolbench import packets
from tablesight.rig.webcam import pictures as read_pictures
from tablesight.rules.errors import InputError
from tablesight.rules.geometry import Pose
from tablesight.rules.ruleset import load_ruleset
from tablesight.rules.scenario import RoundBase
from tablesight.rules.session import Event
from tablesight.vision.sources import Frame

REPO = Path(__file__).resolve().parents[2]

TABLE = TableSpec(
    table=TableKeys(width_in=44, depth_in=30, dictionary="4x4_50"),
    anchors=[
        Anchor(id=0, x_in=1.5, y_in=1.5, size_mm=40),
        Anchor(id=1, x_in=42.5, y_in=28.5, size_mm=40, heading=90),
    ],
)
ROSTER = [
    RosterModel(
        id="ganger",
        side="red",
        base=RoundBase(shape="round", diameter_mm=25.4),
        movement=6,
        marker=10,
        marker_size_mm=25,
    ),
    RosterModel(
        id="brute",
        side="blue",
        unit="brutes",
        base=RoundBase(shape="round", diameter_mm=32),
        movement=5,
        marker=11,
        marker_size_mm=20,
        marker_offset_mm=(2.0, -1.5),
    ),
]
TERRAIN = [
    TerrainPiece(
        id="wall",
        marker=20,
        marker_size_mm=30,
        polygon=[(0, 0), (1, 0), (1, 10), (0, 10)],
        height=3,
        keywords=["impassable"],
    )
]
CAMERA = CameraModel(
    (1920, 1080),
    np.array([[1400.0, 0.0, 960.0], [0.0, 1400.0, 540.0], [0.0, 0.0, 1.0]]),
    np.array([0.1, -0.2, 0.001, 0.002, 0.05]),
    0.21,
)
SETUP = Setup("necromunda", load_ruleset("necromunda"), TABLE, ROSTER, TERRAIN, CAMERA)

#: A picture of noise (big enough JPEGs that a killed writer has flushed some to disk)
#: with a block whose grey level tells which frame it is.
NOISE = np.random.default_rng(7).integers(0, 256, (240, 320, 3), dtype=np.uint8)


def picture(k: int) -> np.ndarray:
    image = NOISE.copy()
    image[:80, :80] = k % 250
    return image


def block_level(image: np.ndarray) -> float:
    return float(image[20:60, 20:60].mean())


def ganger_at(k: int) -> tuple[float, float, float, float, str]:
    return (10.0 + 0.01 * k, 5.0, 90.0, 0.004, "moving" if 100 <= k < 200 else "settled")


def brute_at(k: int) -> tuple[float, float, float, float, str]:
    return (30.0, 20.0, 180.0, 0.006, "hidden" if k >= 250 else "settled")


def write_match(path: Path, video: bool = True) -> None:
    """300 frames at 30 fps from source frame 1000 on; frames 100-109 without a picture;
    three events, a snapshot a second, a declaration and a decision."""
    session = SETUP.session()
    with MatchWriter(path, SETUP, fps=30.0, video=video, app_version="9.9.9") as w:
        for k in range(300):
            t = k / 30
            w.frame(
                Frame(picture(k), t, 1000 + k),
                {"ganger": ganger_at(k), "brute": brute_at(k)},
                write_image=not 100 <= k < 110,
            )
            events: list[Event] = []
            if k == 0:
                session.seen("ganger", Pose(10.0, 5.0, 90.0), 0.004)
                session.seen("brute", Pose(30.0, 20.0, 180.0), 0.006)
                events = session.start_phase(t, 1000 + k, side="red")
            if k == 200:
                events = session.moved(t, 1000 + k, "ganger", Pose(12.0, 5.0, 90.0), 0.004)
            if k == 210:
                w.declaration(t, 1000 + k, "ganger", "charge", "brute", 4)
            if k == 240:
                flag = Event(
                    t, 1000 + k, "violation", "too far", "movement", "ganger", None, 7.0, 6.0
                )
                events = [dataclasses.replace(flag, id=len(session.events))]
                session.events.extend(events)
                w.decision(t + 0.5, 2, "dismiss")
            for e in events:
                w.event(e)
            if w.snapshot_due(t):
                w.snapshot(t, 1000 + k, session.snapshot())


@pytest.fixture(scope="module")
def match_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("match") / "match.db"
    write_match(path)
    return path


#: The brute's roster entry as the match file keeps it.
BRUTE = {
    "id": "brute",
    "side": "blue",
    "unit": "brutes",
    "base": {"shape": "round", "diameter_mm": 32.0},
    "movement": 5.0,
    "keywords": [],
    "status": [],
    "marker": 11,
    "marker_size_mm": 20.0,
    "marker_height_mm": 4.0,
    "marker_offset_mm": [2.0, -1.5],
}

EVENTS = [
    {
        "t": 0.0,
        "frame": 1000,
        "kind": "phase_started",
        "message": "turn 1: movement, red moving",
        "rule": None,
        "model": None,
        "other": None,
        "measured": None,
        "limit": None,
        "uncertainty": None,
        "id": 0,
        "revision": 0,
    },
    {
        "t": 6.6667,
        "frame": 1200,
        "kind": "model_moved",
        "message": "ganger moved 2.00 in from where the phase began",
        "rule": None,
        "model": "ganger",
        "other": None,
        "measured": 2.0,
        "limit": None,
        "uncertainty": None,
        "id": 1,
        "revision": 0,
    },
    {
        "t": 8.0,
        "frame": 1240,
        "kind": "violation",
        "message": "too far",
        "rule": "movement",
        "model": "ganger",
        "other": None,
        "measured": 7.0,
        "limit": 6.0,
        "uncertainty": None,
        "id": 2,
        "revision": 0,
    },
]


def test_a_match_reads_back_as_written(match_path: Path) -> None:
    with Match(match_path) as match:
        meta = match.meta
        assert match.integrity() == "ok"
        assert (meta["format"], meta["schema"], meta["app_version"]) == (
            "tablesight-match",
            3,
            "9.9.9",
        )
        assert (meta["game"], meta["fps"], meta["video"], meta["frames"]) == (
            "necromunda",
            30.0,
            "match.avi",
            300,
        )
        assert meta["video_frames"] == 290
        # (fields the schemas may gain later are left out of these comparisons)
        assert {k: meta["table"][k] for k in ("table", "anchors")} == {
            "table": {"width_in": 44.0, "depth_in": 30.0, "dictionary": "4x4_50"},
            "anchors": [
                {"id": 0, "x_in": 1.5, "y_in": 1.5, "size_mm": 40.0, "heading": 0.0},
                {"id": 1, "x_in": 42.5, "y_in": 28.5, "size_mm": 40.0, "heading": 90.0},
            ],
        }
        assert {k: meta["roster"][1][k] for k in BRUTE} == BRUTE
        assert meta["terrain"][0]["polygon"] == [[0, 0], [1, 0], [1, 10], [0, 10]]
        assert meta["camera"] == {
            "image_size": [1920, 1080],
            "camera_matrix": [[1400.0, 0.0, 960.0], [0.0, 1400.0, 540.0], [0.0, 0.0, 1.0]],
            "dist_coeffs": [0.1, -0.2, 0.001, 0.002, 0.05],
            "rms_px": 0.21,
        }
        assert meta["ruleset"]["zone"]["range_in"] == 1.0

        frames = match.frames()
        assert len(frames) == 300
        assert (frames[0].t, frames[0].index, frames[0].video_frame) == (0.0, 1000, 0)
        assert [f.video_frame for f in frames[99:111]] == [99, *[None] * 10, 100]
        assert frames[299].t == pytest.approx(9.9667, abs=1e-4)
        assert (frames[299].index, frames[299].video_frame) == (1299, 289)
        assert match.duration_s == pytest.approx(9.9667, abs=1e-4)

        assert match.events() == EVENTS
        assert match.events(revision=0) == EVENTS
        assert match.declarations() == [
            {
                "t": 7.0,
                "frame": 1210,
                "model": "ganger",
                "action": "charge",
                "target": "brute",
                "roll": 4,
            }
        ]
        assert match.decisions() == [
            {"t": 8.5, "event_id": 2, "decision": "dismiss", "by": "table", "note": None}
        ]

        tracks = match.tracks()
        assert sorted(tracks) == ["brute", "ganger"]
        assert len(tracks["ganger"]) == 300
        assert tracks["ganger"][150] == pytest.approx((5.0, 11.5, 5.0, 90.0, 0.004, "moving", 0.0))
        assert tracks["ganger"][150].state == "moving"
        assert tracks["brute"][299].state == "hidden"
        window = match.tracks("brute", start=8.0, end=9.0)
        assert list(window) == ["brute"]
        assert [p.t for p in window["brute"]] == pytest.approx([8.0 + k / 30 for k in range(31)])


def test_a_moment_is_rebuilt_from_the_snapshot_and_the_frame(match_path: Path) -> None:
    with Match(match_path) as match:
        moment = match.state_at(7.01)  # between frames 210 (7.0 s) and 211
        assert moment.frame is not None
        assert (moment.frame.t, moment.frame.index, moment.frame.video_frame) == (7.0, 1210, 200)
        assert moment.poses["ganger"] == pytest.approx((12.1, 5.0, 90.0, 0.004, "settled", 0.0))
        assert moment.poses["brute"] == pytest.approx((30.0, 20.0, 180.0, 0.006, "settled", 0.0))
        assert (moment.snapshot_t, moment.snapshot_frame) == (7.0, 1210)
        assert moment.state is not None
        assert moment.state["poses"]["ganger"] == [12.0, 5.0, 90.0, 0.0]
        assert moment.state["events"] == 2
        assert [e.id for e in moment.events] == [0, 1]

        session = SETUP.session()
        session.restore(moment.state, moment.events)
        assert (session.turn, session.side, session.in_phase) == (1, "red", True)
        assert session.poses["ganger"] == Pose(12.0, 5.0, 90.0)
        assert [e.kind for e in session.events] == ["phase_started", "model_moved"]

        before = match.state_at(-1.0)
        assert (before.frame, before.poses, before.state, before.events) == (None, {}, None, [])
        late = match.state_at(100.0)
        assert late.frame is not None and late.frame.index == 1299
        assert late.snapshot_t == 9.0
        assert [e.id for e in late.events] == [0, 1, 2]


def test_the_video_frames_line_up_with_the_frames_table(match_path: Path) -> None:
    capture = cv2.VideoCapture(str(match_path.with_suffix(".avi")))
    levels = []
    while True:
        ok, image = capture.read()
        if not ok:
            break
        levels.append(block_level(image))
    capture.release()
    assert len(levels) == 290
    # video frame 99 is frame 99; frames 100-109 have no picture; video frame 100 is frame 110
    for video_frame, k in ((0, 0), (99, 99), (100, 110), (200, 210), (289, 299)):
        assert levels[video_frame] == pytest.approx(k % 250, abs=4)


def test_pictures_are_scaled_to_the_video_size(tmp_path: Path) -> None:
    path = tmp_path / "small.db"
    with MatchWriter(path, SETUP, video_size=(160, 120)) as writer:
        for k in (40, 41, 42):
            writer.frame(Frame(picture(k), k / 30, k), {})
    capture = cv2.VideoCapture(str(path.with_suffix(".avi")))
    images = [capture.read()[1] for _ in range(3)]
    assert capture.read()[0] is False
    capture.release()
    assert [image.shape for image in images] == [(120, 160, 3)] * 3
    assert [float(image[5:35, 5:35].mean()) for image in images] == pytest.approx(
        [40, 41, 42], abs=4
    )


# -- a camera's JPEG goes into the video as it came --------------------------------------------


def scene(k: int, size: tuple[int, int] = (320, 240)) -> np.ndarray:
    """A smooth picture (gradients and a disc whose colour tells which frame it is), as a
    camera's picture is: JPEG keeps it within a level or two."""
    w, h = size
    x = np.linspace(0, 255, w)[None, :]
    y = np.linspace(0, 255, h)[:, None]
    image = np.empty((h, w, 3), np.uint8)
    image[..., 0] = x
    image[..., 1] = y
    image[..., 2] = (x + y) / 2
    cv2.circle(image, (w // 2, h // 2), h // 5, (40, 200, (k * 37) % 256), -1)
    return image


def camera_frame(k: int, size: tuple[int, int] = (320, 240)) -> Frame:
    """Frame ``k`` as a camera's comes: its JPEG (quality 75, not the writer's 90), decoded
    to grey only; every other one's JPEG in a row of one, as ``CAP_PROP_FORMAT = -1``
    hands it over."""
    ok, jpeg = cv2.imencode(".jpg", scene(k, size), [cv2.IMWRITE_JPEG_QUALITY, 75])
    assert ok
    gray = cv2.imdecode(jpeg, cv2.IMREAD_GRAYSCALE)
    return Frame(None, k / 30, k, jpeg=jpeg.reshape(1, -1) if k % 2 else jpeg, gray=gray)


def video_packets(path: Path) -> list[bytes]:
    """Every picture of the video as stored, read by FFmpeg without decoding."""
    return [p.tobytes() for p in packets(path)]


def mean_difference(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(np.int16) - b.astype(np.int16)).mean())


def test_a_cameras_jpeg_is_written_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "camera.db"
    frames = [camera_frame(k) for k in range(40)]
    sent = [frame.jpeg.tobytes() for frame in frames if frame.jpeg is not None]
    with MatchWriter(path, SETUP) as writer:
        for frame in frames:
            writer.frame(frame, {"ganger": ganger_at(frame.index)})
    video = path.with_suffix(".avi")
    assert len(sent) == 40
    assert video_packets(video) == sent
    # ... and so does the replay, which reads the file's chunks itself
    data = video.read_bytes()
    assert [data[at : at + n] for at, n in avi_pictures(video) or []] == sent
    with Match(path) as match:
        assert match.meta["video_frames"] == 40
        assert [f.video_frame for f in match.frames()] == list(range(40))
    # an ordinary capture decodes it: the pictures are the camera's
    pictures = read_pictures(video)
    assert len(pictures) == 40
    assert max(mean_difference(p, scene(k)) for k, p in enumerate(pictures)) < 3.0


def test_pictures_without_a_jpeg_are_encoded_and_mix_with_a_cameras(tmp_path: Path) -> None:
    path = tmp_path / "mixed.db"
    grey = cv2.cvtColor(scene(5), cv2.COLOR_BGR2GRAY)
    frames = [
        Frame(scene(0), 0.0, 0),  # rendered: no JPEG
        camera_frame(1),
        camera_frame(2),
        Frame(scene(3), 0.1, 3),
        Frame(None, 0.13, 4, gray=grey),  # grey only, no JPEG
        camera_frame(5, (640, 480)),  # twice the video's size: scaled down
        camera_frame(6),
    ]
    with MatchWriter(path, SETUP) as writer:
        for frame in frames:
            writer.frame(frame, {})
    video = path.with_suffix(".avi")
    packets = video_packets(video)
    assert len(packets) == 7
    for k in (1, 2, 6):  # the camera's JPEG of the video's size, as it came
        jpeg = frames[k].jpeg
        assert jpeg is not None and packets[k] == jpeg.tobytes()
    big = frames[5].jpeg
    assert big is not None and packets[5] != big.tobytes()
    pictures = read_pictures(video)
    assert [p.shape for p in pictures] == [(240, 320, 3)] * 7
    expected = [scene(0), scene(1), scene(2), scene(3), cv2.merge([grey] * 3)]
    expected += [cv2.resize(scene(5, (640, 480)), (320, 240), interpolation=cv2.INTER_AREA)]
    expected += [scene(6)]
    differences = [mean_difference(p, e) for p, e in zip(pictures, expected, strict=True)]
    assert max(differences) < 3.0
    # each in its place: the disc's red tells which frame it is (37 levels apart)
    reds = [float(pictures[k][110:130, 150:170, 2].mean()) for k in (0, 1, 2, 3, 5, 6)]
    assert reds == pytest.approx([0, 37, 74, 111, 185, 222], abs=4)
    with Match(path) as match:
        assert [f.video_frame for f in match.frames()] == list(range(7))


def test_recording_a_cameras_frame_never_decodes_it_in_colour(tmp_path: Path) -> None:
    path = tmp_path / "grey.db"
    frames = [camera_frame(k) for k in range(3)] + [camera_frame(3, (640, 480))]
    with MatchWriter(path, SETUP) as writer:
        for frame in frames:
            writer.frame(frame, {})
    assert writer.video_frames == 4
    assert [frame._image is None for frame in frames] == [True] * 4  # grey and JPEG only


def test_an_opencv_that_cannot_write_jpeg_as_it_came_encodes_every_picture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer_module, "_RAW_VIDEO", None)  # as OpenCV 4.8 is
    path = tmp_path / "old.db"
    frames = [camera_frame(0), Frame(scene(1), 1 / 30, 1), camera_frame(2, (640, 480))]
    with MatchWriter(path, SETUP) as writer:
        for frame in frames:
            writer.frame(frame, {})
    pictures = read_pictures(path.with_suffix(".avi"))
    expected = [scene(0), scene(1)]
    expected += [cv2.resize(scene(2, (640, 480)), (320, 240), interpolation=cv2.INTER_AREA)]
    assert len(pictures) == 3
    assert max(mean_difference(p, e) for p, e in zip(pictures, expected, strict=True)) < 3.0
    assert frames[0]._image is None and frames[2]._image is None


def test_a_video_that_cannot_be_opened_is_noted_and_poses_go_on(tmp_path: Path) -> None:
    path = tmp_path / "novideo.db"
    with MatchWriter(path, SETUP) as writer:
        path.with_suffix(".avi").mkdir()  # where the video would go, before its first picture
        for k in range(3):
            writer.frame(camera_frame(k), {"ganger": ganger_at(k)})
    assert writer.video_frames == 0
    with Match(path) as match:
        assert match.meta["video"] is None
        assert match.meta["video_error"] == (
            f"OpenCV cannot write MJPG video to {path.with_suffix('.avi')}"
        )
        assert [(f.index, f.video_frame) for f in match.frames()] == [
            (0, None),
            (1, None),
            (2, None),
        ]
        assert [len(chunk) for chunk in match.pose_chunks()] == [3]


def test_the_setup_is_rebuilt_from_the_file(match_path: Path) -> None:
    with Match(match_path) as match:
        setup = match.setup()
    assert (setup.game, setup.table, setup.roster, setup.terrain) == (
        "necromunda",
        TABLE,
        ROSTER,
        TERRAIN,
    )
    assert setup.ruleset == load_ruleset("necromunda")
    assert setup.camera is not None
    assert setup.camera.image_size == (1920, 1080)
    assert setup.camera.camera_matrix.tolist() == [
        [1400.0, 0.0, 960.0],
        [0.0, 1400.0, 540.0],
        [0.0, 0.0, 1.0],
    ]
    assert setup.camera.dist_coeffs.tolist() == [0.1, -0.2, 0.001, 0.002, 0.05]
    assert setup.camera.rms_px == 0.21


def test_a_revision_keeps_the_live_record(tmp_path: Path) -> None:
    path = tmp_path / "match.db"
    shutil.copy(path_of_small_match(tmp_path / "src"), path)
    with Match(path) as match:
        rejudged = [Event(8.0, 1240, "advisory", "within tolerance", "movement", "ganger", id=0)]
        assert match.save_revision(rejudged, "re-judged with tolerance 1.1") == 1
        assert match.save_revision([], "nothing to say") == 2
        assert match.events(revision=0) == EVENTS
        assert match.events(revision=1) == [
            {
                "t": 8.0,
                "frame": 1240,
                "kind": "advisory",
                "message": "within tolerance",
                "rule": "movement",
                "model": "ganger",
                "other": None,
                "measured": None,
                "limit": None,
                "uncertainty": None,
                "id": 0,
                "revision": 1,
            }
        ]
        assert [e["revision"] for e in match.events()] == [0, 0, 0, 1]
        assert [(r["revision"], r["note"], r["events"]) for r in match.revisions()] == [
            (0, "live", 3),
            (1, "re-judged with tolerance 1.1", 1),
            (2, "nothing to say", 0),
        ]


def path_of_small_match(folder: Path) -> Path:
    folder.mkdir()
    path = folder / "match.db"
    write_match(path, video=False)
    return path


def test_a_match_is_readable_while_it_is_written(tmp_path: Path) -> None:
    path = tmp_path / "live.db"
    with MatchWriter(path, SETUP, video=False) as writer:
        for k in range(10):
            writer.frame(Frame(NOISE, k / 30, k), {"ganger": ganger_at(k)})
        match = Match(path)
        deadline = time.monotonic() + 30.0
        while len(match.frames()) < 10 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [f.index for f in match.frames()] == list(range(10))
        assert "closed" not in match.meta
        match.close()
    with Match(path) as match:
        assert match.meta["frames"] == 10


def test_what_the_writer_refuses_to_take(tmp_path: Path) -> None:
    with MatchWriter(tmp_path / "m.db", SETUP, video=False) as writer:
        writer.event(Event(0.0, 0, "phase_started", "turn 1", id=0))
        with pytest.raises(ValueError, match="event 0 is already in the record"):
            writer.event(Event(0.5, 15, "phase_ended", "turn 1 ended", id=0))
        with pytest.raises(ValueError, match="not numbered by a session"):
            writer.event(Event(0.5, 15, "phase_ended", "turn 1 ended"))
        with pytest.raises(ValueError, match="state must be one of"):
            writer.frame(Frame(NOISE, 0.0, 0), {"ganger": (1.0, 2.0, 3.0, 0.01, "lost")})
        with pytest.raises(ValueError, match="decision: expected one of accept, dismiss"):
            writer.decision(1.0, 0, "overrule")
    with Match(tmp_path / "m.db") as match:
        assert [e["id"] for e in match.events()] == [0]
        assert match.frames() == []


# -- a killed program -----------------------------------------------------------------------

CHILD = """
import sys, time
import numpy as np
from pathlib import Path
from tablesight.calibration.table import Anchor, TableKeys, TableSpec
from tablesight.rules.ruleset import load_ruleset
from tablesight.rules.session import Event
from tablesight.calibration.setup import Setup
from tablesight.match.writer import MatchWriter
from tablesight.vision.sources import Frame

table = TableSpec(
    table=TableKeys(width_in=44, depth_in=30, dictionary="4x4_50"),
    anchors=[Anchor(id=0, x_in=1.5, y_in=1.5, size_mm=40)],
)
setup = Setup("necromunda", load_ruleset("necromunda"), table, [], [], None)
noise = np.random.default_rng(7).integers(0, 256, (240, 320, 3), dtype=np.uint8)
writer = MatchWriter(Path(sys.argv[1]), setup)
print("ready", flush=True)
for k in range(100_000):
    image = noise.copy()
    image[:80, :80] = k % 250
    pose = (10.0 + k / 1000, 5.0, 90.0, 0.004, "moving")
    writer.frame(Frame(image, k / 100, k), {"ganger": pose})
    writer.event(Event(k / 100, k, "model_moved", f"event {k}", model="ganger", id=k))
    print(k, flush=True)
    time.sleep(0.01)
"""


@pytest.mark.slow
def test_a_killed_writer_loses_at_most_the_last_second(tmp_path: Path) -> None:
    path = tmp_path / "killed.db"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[tuple[str, float]] = queue.Queue()

    def read() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            lines.put((line.strip(), time.monotonic()))
        lines.put(("", time.monotonic()))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    handed: dict[int, float] = {}
    try:
        while len(handed) < 300:
            line, at = lines.get(timeout=60)
            assert line, f"the writer ended early: {child.stderr.read() if child.stderr else ''}"
            if line != "ready":
                handed[int(line)] = at
    finally:
        child.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        child.wait(timeout=30)
        reader.join(timeout=30)  # the pipe ends with the child
        for pipe in (child.stdout, child.stderr):
            if pipe is not None:
                pipe.close()
    assert child.returncode == -signal.SIGKILL
    well_before = sorted(i for i, at in handed.items() if killed_at - at > 1.0)
    assert len(well_before) > 0

    with Match(path) as match:
        assert match.integrity() == "ok"
        assert "closed" not in match.meta  # it never was closed
        ids = [e["id"] for e in match.events()]
        assert ids == list(range(len(ids)))  # what is there is a whole prefix
        assert set(well_before) <= set(ids)
        frames = match.frames()
        assert len(frames) >= len(well_before)
        assert (frames[0].t, frames[0].index, frames[0].video_frame) == (0.0, 0, 0)
        assert frames[120].video_frame == 120
        moment = match.state_at(1.2)
        assert moment.frame is not None and moment.frame.index == 120
        assert moment.poses["ganger"] == pytest.approx((10.12, 5.0, 90.0, 0.004, "moving", 0.0))

    # The AVI has no index, but every frame flushed before the kill reads in order (it may
    # hold a few frames more than the database: pictures are written before the commit).
    capture = cv2.VideoCapture(str(path.with_suffix(".avi")))
    levels = []
    while True:
        ok, image = capture.read()
        if not ok:
            break
        levels.append(block_level(image))
    capture.release()
    assert len(levels) >= 1
    for k, level in enumerate(levels):
        assert level == pytest.approx(k % 250, abs=4)


# -- refusals -----------------------------------------------------------------------------------


def test_a_file_that_is_not_a_match_is_never_overwritten(tmp_path: Path) -> None:
    notes = tmp_path / "notes.db"
    notes.write_text("my notes\n")
    with pytest.raises(InputError) as caught:
        MatchWriter(notes, SETUP)
    assert str(caught.value) == f"{notes}: not a match file; refusing to overwrite it"
    assert notes.read_text() == "my notes\n"

    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE scores (player TEXT, points INTEGER)")
    conn.close()
    with pytest.raises(InputError) as caught:
        MatchWriter(other, SETUP)
    assert str(caught.value) == (
        f"{other}: an SQLite database but not a match file; refusing to overwrite it"
    )
    with pytest.raises(InputError) as caught:
        Match(other)
    assert str(caught.value) == f"{other}: an SQLite database but not a match file"


def test_someone_elses_video_beside_it_is_never_overwritten(tmp_path: Path) -> None:
    footage = tmp_path / "game.avi"
    footage.write_bytes(b"RIFF....AVI ")
    with pytest.raises(InputError) as caught:
        MatchWriter(tmp_path / "game.db", SETUP)
    assert str(caught.value) == (
        f"{footage}: exists and is not this match's video; refusing to overwrite it"
    )
    assert footage.read_bytes() == b"RIFF....AVI "
    MatchWriter(tmp_path / "game.db", SETUP, video=False).close()  # no video: no clash


def test_an_existing_match_is_replaced_or_refused(tmp_path: Path) -> None:
    path = tmp_path / "match.db"
    with MatchWriter(path, SETUP) as writer:
        writer.frame(Frame(NOISE, 0.0, 0), {})
    with pytest.raises(InputError, match=r"match.db: already holds a match \(recorded "):
        MatchWriter(path, SETUP, replace=False)
    MatchWriter(path, SETUP, video=False).close()
    with Match(path) as match:
        assert (match.frames(), match.meta["video"]) == ([], None)
    assert not path.with_suffix(".avi").exists()  # the old match's video went with it


def test_a_folder_that_is_not_there(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "match.db"
    with pytest.raises(InputError) as caught:
        MatchWriter(path, SETUP)
    assert str(caught.value) == f"{path}: cannot write here: no such folder {path.parent}"


def test_a_disk_without_room(tmp_path: Path) -> None:
    path = tmp_path / "match.db"
    with pytest.raises(InputError, match=r"match.db: cannot write here: \d+ MB free, "):
        MatchWriter(path, SETUP, min_free_bytes=10**18)
    assert not path.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only folder")
def test_a_folder_without_write_permission(tmp_path: Path) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(InputError) as caught:
            MatchWriter(folder / "match.db", SETUP)
    finally:
        folder.chmod(0o755)
    assert str(caught.value) == f"{folder / 'match.db'}: cannot write here: permission denied"


def test_a_read_only_file_system(tmp_path: Path) -> None:
    """In a mount namespace of its own, the folder is mounted read-only (needs unshare):
    no match can be written there, and a finished one can still be read."""
    folder = tmp_path / "ro"
    shutil.copy(path_of_small_match(folder), folder / "done.db")
    code = (
        "import sys; from pathlib import Path\n"
        "from tests.match.test_record import SETUP\n"
        "from tablesight.match.reader import Match\n"
        "from tablesight.match.writer import MatchWriter\n"
        "from tablesight.rules.errors import InputError\n"
        "try:\n"
        "    MatchWriter(Path(sys.argv[1]), SETUP)\n"
        "except InputError as exc:\n"
        "    print(exc)\n"
        "match = Match(Path(sys.argv[1]).with_name('done.db'))\n"
        "print(len(match.frames()), match.state_at(5.0).poses['ganger'].x_in)\n"
    )
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1) to mount a read-only file system with")
    script = 'mount --bind -o ro "$1" "$1" || exit 77; shift; exec "$@"'
    result = subprocess.run(
        [
            *(unshare, "--mount", "--map-root-user", "sh", "-c", script, "sh", str(folder)),
            *(sys.executable, "-c", code, str(folder / "match.db")),
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    if result.returncode == 77 or result.stderr.startswith("unshare:"):
        pytest.skip(f"cannot make a read-only mount here: {result.stderr.strip()[-200:]}")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        f"{folder / 'match.db'}: cannot write here: read-only file system\n300 11.5\n"
    )


# -- versions -------------------------------------------------------------------------------------


def test_a_new_file_gets_the_current_version_and_wal(tmp_path: Path) -> None:
    path = tmp_path / "match.db"
    MatchWriter(path, SETUP, video=False).close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone() == (3,)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    conn.close()


def test_a_file_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "match.db"
    MatchWriter(path, SETUP, video=False).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 7")
    conn.close()
    line = (
        f"{path}: match file format version 7 is newer than this TableSight reads (3); "
        "update TableSight"
    )
    with pytest.raises(InputError) as caught:
        Match(path)
    assert str(caught.value) == line
    with pytest.raises(InputError) as caught:
        MatchWriter(path, SETUP)
    assert str(caught.value) == line


def test_missing_and_empty_files_are_not_matches(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        Match(tmp_path / "none.db")
    assert str(caught.value) == f"{tmp_path / 'none.db'}: no such file"
    (tmp_path / "empty.db").write_bytes(b"")
    with pytest.raises(InputError) as caught:
        Match(tmp_path / "empty.db")
    assert str(caught.value) == f"{tmp_path / 'empty.db'}: not a match file (an empty database)"
    MatchWriter(tmp_path / "empty.db", SETUP, video=False).close()  # an empty file is taken


# -- exports ----------------------------------------------------------------------------------


def test_json_export(match_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "match.json"
    assert export(match_path, "json", out) == [out]
    doc = json.loads(out.read_text())
    assert list(doc) == [
        "format",
        "version",
        "meta",
        "revisions",
        "events",
        "declarations",
        "decisions",
        "published",
        "tracks",
    ]
    assert (doc["format"], doc["version"]) == ("tablesight-match", 1)
    assert doc["meta"]["game"] == "necromunda"
    assert doc["meta"]["camera"]["image_size"] == [1920, 1080]
    assert doc["events"] == EVENTS
    assert doc["decisions"] == [
        {"t": 8.5, "event_id": 2, "decision": "dismiss", "by": "table", "note": None}
    ]
    assert doc["published"] == []  # not published to a broker
    assert list(doc["tracks"]) == ["ganger", "brute"]  # the roster's order
    assert len(doc["tracks"]["ganger"]) == 300
    assert doc["tracks"]["ganger"][0] == [0.0, 10.0, 5.0, 90.0, 0.004, "settled"]
    assert doc["tracks"]["ganger"][150] == [5.0, 11.5, 5.0, 90.0, 0.004, "moving"]
    assert doc["tracks"]["ganger"][299] == [9.9667, 12.99, 5.0, 90.0, 0.004, "settled"]
    assert doc["tracks"]["brute"][299] == [9.9667, 30.0, 20.0, 180.0, 0.006, "hidden"]


def test_json_export_of_a_long_match_is_whole(tmp_path: Path) -> None:
    path = tmp_path / "long.db"
    with MatchWriter(path, SETUP, video=False) as writer:
        for k in range(4500):  # more frames than one chunk of the export
            writer.frame(Frame(NOISE, k / 30, k), {"ganger": ganger_at(k), "brute": brute_at(k)})
    export(path, "json", None)
    doc = json.loads(path.with_suffix(".json").read_text())
    assert [len(doc["tracks"][m]) for m in ("ganger", "brute")] == [4500, 4500]
    assert doc["tracks"]["ganger"][4499] == [149.9667, 54.99, 5.0, 90.0, 0.004, "settled"]


def test_csv_export(match_path: Path, tmp_path: Path) -> None:
    written = export(match_path, "csv", tmp_path / "game.csv")
    assert written == [tmp_path / "game-events.csv", tmp_path / "game-tracks.csv"]
    with written[0].open(newline="") as f:
        events = list(csv.reader(f))
    assert events[0] == [
        "revision",
        "id",
        "t",
        "frame",
        "kind",
        "message",
        "rule",
        "model",
        "other",
        "measured",
        "limit",
        "uncertainty",
    ]
    assert events[1:] == [
        ["0", "0", "0.0", "1000", "phase_started", "turn 1: movement, red moving"] + [""] * 6,
        [
            *("0", "1", "6.6667", "1200", "model_moved"),
            *("ganger moved 2.00 in from where the phase began", "", "ganger", "", "2.0", "", ""),
        ],
        [
            *("0", "2", "8.0", "1240", "violation", "too far", "movement", "ganger", "", "7.0"),
            *("6.0", ""),
        ],
    ]
    with written[1].open(newline="") as f:
        tracks = list(csv.reader(f))
    assert tracks[0] == [
        "t",
        "frame",
        "video_frame",
        "model",
        "x_in",
        "y_in",
        "heading_deg",
        "sigma_in",
        "state",
    ]
    assert len(tracks) == 1 + 600
    # rows in frame order, models by id within a frame
    assert tracks[1] == ["0.0", "1000", "0", "brute", "30.0", "20.0", "180.0", "0.006", "settled"]
    assert tracks[2] == ["0.0", "1000", "0", "ganger", "10.0", "5.0", "90.0", "0.004", "settled"]
    moving = ["3.5", "1105", "", "ganger", "11.05", "5.0", "90.0", "0.004", "moving"]
    assert tracks[2 * 105 + 2] == moving  # a frame without a picture
    last = ["9.9667", "1299", "289", "ganger", "12.99", "5.0", "90.0", "0.004", "settled"]
    assert tracks[600] == last


def test_csv_export_beside_the_match_by_default(tmp_path: Path) -> None:
    path = path_of_small_match(tmp_path / "m")
    assert export(path, "csv", None) == [
        path.with_name("match-events.csv"),
        path.with_name("match-tracks.csv"),
    ]
