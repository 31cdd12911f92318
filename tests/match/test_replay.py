"""The replay: a match file scrubbed to moments before and after an illegal move, its
picture and overlay mapping, re-judging as a new revision, its API and its command.

The footage (``match_files`` in tests/conftest.py): 30 frames at 30 fps, the ganger at
(10, 10) for frames 0-14 and at (17, 10) for frames 15-29 - a 7 in move of its 6 in -
with the brute at (30, 20) all along, both on 1 in round bases. The tracker calls a model
settled once it has stood still for 0.3 s, so the referee sees both models at frame 9
(0.3 s) and the move at frame 24 (0.5 + 0.3 = 0.8 s).
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from tablesight.calibration.camera import CameraModel
from tablesight.calibration.setup import Setup
from tablesight.match.game import Game
from tablesight.match.reader import Match
from tablesight.match.replay import PHASE_REFUSED, Replay
from tablesight.match.writer import MatchWriter
from tablesight.rules.errors import InputError
from tablesight.rules.ruleset import load_ruleset
from tablesight.rules.view import measure
from tablesight.vision.sources import FileSource
from tablesight.webui.app import create_app

#: The tests here referee a rendered clip into a match file first.
pytestmark = pytest.mark.slow

#: The move settles at frame 24; the models are first seen at frame 9.
MOVED_T, SEEN_T = 24 / 30, 9 / 30
#: Edge to edge, 1 in round bases: the brute at (30, 20), the ganger before and after.
GAP_BEFORE = math.hypot(30 - 10, 20 - 10) - 1.0  # 21.36
GAP_AFTER = math.hypot(30 - 17, 20 - 10) - 1.0  # 15.40
IN = 0.02  # how close the camera puts a centre (inches)


@pytest.fixture(scope="module")
def analyzed(match_files, tablesight, tmp_path_factory):
    """The clip refereed by ``tablesight analyze -o``: a match file without video."""
    video, args = match_files
    db = tmp_path_factory.mktemp("analyzed") / "match.db"
    result = tablesight("analyze", str(video), *args, "-o", str(db))
    assert result.returncode == 0, result.stderr
    return db


@pytest.fixture(scope="module")
def recorded(footage, match_files, two_model_table, two_model_roster, tmp_path_factory):
    """The clip refereed by a game with a recorder, as ``run --record`` does: a match
    file with its video beside it."""
    camera, _ = footage
    video, _ = match_files
    lens = CameraModel((1920, 1080), camera.camera_matrix, camera.dist_coeffs)
    setup = Setup(
        "necromunda", load_ruleset("necromunda"), two_model_table, two_model_roster, [], lens
    )
    db = tmp_path_factory.mktemp("recorded") / "match.db"
    writer = MatchWriter(db, setup, source=str(video))
    Game(setup, FileSource(str(video)), recorder=writer).run()
    writer.close()
    return db


@pytest.fixture
def copy(tmp_path):
    """A copy of a match file (and its video) to write revisions into."""

    def copier(db: Path) -> Path:
        for name in (db.name, db.with_suffix(".avi").name):
            if (db.parent / name).exists():
                shutil.copy(db.parent / name, tmp_path / name)
        return tmp_path / db.name

    return copier


def models(replay: Replay) -> dict[str, dict]:
    return {m["id"]: m for m in replay.state()["models"]}


def at(model: dict, x: float, y: float) -> None:
    assert (model["x"], model["y"]) == (pytest.approx(x, abs=IN), pytest.approx(y, abs=IN))


@pytest.mark.slow
def test_the_moments_before_and_after_the_illegal_move(analyzed):
    with Replay(analyzed) as replay:
        assert (replay.start_t, replay.end_t) == (0.0, pytest.approx(29 / 30))
        assert replay.times == pytest.approx([k / 30 for k in range(30)])
        assert replay.video is None and replay.mapping() is None and replay.jpeg() is None
        assert replay.picture(0.5) is None
        assert [e.kind for e in replay.events] == ["phase_started", "model_moved", "violation"]

        # the phase started at the first frame; nobody is settled yet
        replay.seek(0.2)
        state = replay.state()
        assert state["session"]["in_phase"] and state["models"] == [] and state["flags"] == []
        assert [e.kind for e in replay.events_since(0)] == ["phase_started"]

        # both seen where they stand (the journal between two snapshots), no flag
        replay.seek(SEEN_T)
        seen = models(replay)
        at(seen["ganger"], 10, 10)
        at(seen["brute"], 30, 20)
        assert seen["ganger"]["track"] == "settled" and not seen["ganger"]["moved"]
        assert replay.state()["flags"] == []
        replay.seek(SEEN_T - 0.001)  # a moment is shown by its nearest frame
        assert replay.state()["models"] != []
        replay.seek(SEEN_T - 1 / 30)  # the frame before
        assert replay.state()["models"] == []

        # picked up and moving: the referee keeps it where it stood
        position = replay.seek(0.6)
        assert position["frame"] == {"t": 0.6, "index": 18, "video_frame": None}
        assert (position["prev_t"], position["next_t"]) == (
            pytest.approx(17 / 30),
            pytest.approx(19 / 30),
        )
        moving = models(replay)["ganger"]
        at(moving, 10, 10)
        assert moving["track"] == "moving"
        with replay.lock:
            gap = measure(replay.session, "ganger", "brute")["distance_in"]
        assert gap == pytest.approx(GAP_BEFORE, abs=0.05)

        # settled 7 in on: the violation, with its numbers
        replay.seek(MOVED_T)
        ganger = models(replay)["ganger"]
        at(ganger, 17, 10)
        assert ganger["start"] == [pytest.approx(10, abs=IN), pytest.approx(10, abs=IN)]
        assert ganger["move"]["allowance_in"] == 6.0
        assert ganger["move"]["shortest_in"] == pytest.approx(7.0, abs=IN)
        [flag] = replay.state()["flags"]
        assert (flag["kind"], flag["rule"], flag["model"], flag["limit"]) == (
            "violation",
            "movement",
            "ganger",
            6.0,
        )
        assert flag["measured"] == pytest.approx(7.0, abs=IN)
        kinds = [e.kind for e in replay.events_since(0)]
        assert kinds == ["phase_started", "model_moved", "violation"]
        with replay.lock:
            gap = measure(replay.session, "ganger", "brute")["distance_in"]
        assert gap == pytest.approx(GAP_AFTER, abs=0.05)

        # the frame before it: not yet
        replay.seek(MOVED_T - 1 / 30)
        assert replay.state()["flags"] == []
        assert replay.state()["live"]["frame"] == 23


def test_times_outside_the_footage_and_phase_controls_are_refused(analyzed):
    with Replay(analyzed) as replay:
        # more than half a frame (1/60 s) outside the footage
        for bad in (-0.02, 0.985, 1.0, math.nan, math.inf, "soon", True, None, [0.5]):
            with pytest.raises(InputError, match=r"^t: expected seconds from 0\.000 to 0\.967"):
                replay.seek(bad)  # type: ignore[arg-type]
        assert replay.parse_t("0.25") == 0.25 and replay.parse_t(0) == 0.0
        # a time rounded past an end by less than half a frame is that end
        assert replay.parse_t(-0.001) == 0.0 and replay.parse_t("0.97") == replay.end_t
        for control in (
            replay.start_phase,
            replay.end_phase,
            replay.next_turn,
            lambda: replay.set_side("red"),
            replay.next_side,
        ):
            with pytest.raises(InputError) as refused:
                control()
            assert str(refused.value) == PHASE_REFUSED


def test_a_charge_declared_before_the_move_is_a_new_revision(analyzed, copy):
    db = copy(analyzed)
    with Match(db) as match:
        live = match.events(0)
    with Replay(db) as replay:
        replay.seek(0.4)  # frame 12: both seen, not moved yet
        version, generation = replay.version, replay.generation
        assert replay.declare("ganger", "charge", "brute", 1) == []  # nothing moved yet
        assert replay.revision == 1 and replay.generation == generation + 1
        assert replay.version > version
        # a charge allows M + D3: 6 + 1 = 7 in, so the 7 in move is no violation and is
        # its full distance (a failed charge must move it all); the charge ends short of
        # the brute (edges 15.40 in apart, where 1 in is needed)
        kinds = [(e.kind, e.rule) for e in replay.events]
        assert kinds == [("phase_started", None), ("model_moved", None), ("advisory", "charge")]
        advisory = replay.events[2]
        assert (advisory.t, advisory.frame) == (pytest.approx(MOVED_T), 24)
        assert advisory.measured == pytest.approx(GAP_AFTER, abs=0.05) and advisory.limit == 1.0

        # the moment shown is rebuilt from the new journal: declared, not yet moved
        assert models(replay)["ganger"]["declared"] == {
            "action": "charge",
            "target": "brute",
            "roll": 1,
        }
        replay.seek(0.35)  # before the declaration
        assert models(replay)["ganger"]["declared"] is None
        replay.seek(MOVED_T)
        ganger = models(replay)["ganger"]
        assert ganger["move"]["allowance_in"] == 7.0
        assert [(f["kind"], f["rule"]) for f in replay.state()["flags"]] == [("advisory", "charge")]
        info = replay.info()
        assert info["revision"] == 1 and [e["kind"] for e in info["events"]] == [
            "phase_started",
            "model_moved",
            "advisory",
        ]
        assert [e["flag"] for e in info["events"]] == [False, False, True]
        assert info["events"][2]["side"] == "red"
    with Match(db) as match:
        assert match.events(0) == live  # the live record stands
        [(r0, n0, k0), (r1, n1, k1)] = [
            (r["revision"], r["note"], r["events"]) for r in match.revisions()
        ]
        assert (r0, n0, k0) == (0, "live", 3)
        assert (r1, k1) == (1, 3)
        assert n1 == (
            "ganger declared charge on brute, roll 1 at 0.40 s (frame 12); "
            "judged again from revision 0"
        )
        assert [e["kind"] for e in match.events(1)] == ["phase_started", "model_moved", "advisory"]


def test_a_charge_declared_after_the_move_resolves_the_violation(analyzed, copy):
    db = copy(analyzed)
    with Replay(db) as replay:
        replay.seek(0.9)  # frame 27, after the move
        with pytest.raises(InputError, match=r"^roll: expected 1 to 3 for charge, got 4$"):
            replay.declare("ganger", "charge", "brute", 4)
        with pytest.raises(InputError, match=r"^model: unknown model 'nobody'"):
            replay.declare("nobody", "charge")
        with pytest.raises(InputError, match=r"^target: "):
            replay.declare("ganger", "charge", "ganger", 2)
        assert replay.revision == 0
        caused = replay.declare("ganger", "charge", "brute", 1)
        # judged again at once: the charge's finding first, then the violation gone
        assert [(e.kind, e.rule, e.id) for e in caused] == [
            ("advisory", "charge", 3),
            ("resolved", "movement", 4),
        ]
        assert all((e.t, e.frame) == (0.9, 27) for e in caused)
        assert [e.kind for e in replay.events] == [
            "phase_started",
            "model_moved",
            "violation",
            "advisory",
            "resolved",
        ]
        assert [f["kind"] for f in replay.state()["flags"]] == ["advisory"]
        replay.seek(0.85)  # the violation stood until the charge was declared
        assert [f["kind"] for f in replay.state()["flags"]] == ["violation"]

        # a decision on the advisory is saved too, on top of revision 1
        replay.seek(replay.end_t)
        replay.decide(3, "dismiss")
        assert replay.revision == 2
        assert replay.state()["flags"][0]["decision"] == "dismiss"
        with pytest.raises(InputError, match=r"^flag: no violation, advisory or close call"):
            replay.decide(4, "accept")  # a resolution is no flag
        with Match(db) as match:
            notes = [r["note"] for r in match.revisions()]
            assert notes[2] == (
                "flag 3 dismissed at 0.97 s (frame 29); judged again from revision 1"
            )
            assert match.events(2) == [{**e, "revision": 2} for e in match.events(1)]
            assert len(match.events(0)) == 3


@pytest.mark.slow
def test_the_picture_and_the_overlay_mapping_of_a_recorded_match(recorded, footage):
    camera, pics = footage
    with Replay(recorded) as replay:
        assert replay.video is not None and len(replay.times) == 30

        def like(data: bytes) -> str:
            image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
            assert image.shape == (1080, 1920, 3)
            diff = {k: float(np.abs(image.astype(int) - pics[k]).mean()) for k in pics}
            return min(diff, key=diff.get)  # type: ignore[arg-type]

        assert like(replay.picture(0.4)) == "start"  # type: ignore[arg-type]
        assert like(replay.picture(0.6)) == "moved"  # type: ignore[arg-type]
        replay.seek(0.6)
        index, data = replay.jpeg()  # type: ignore[misc]
        assert index == 18 and like(data) == "moved"

        # the table-to-picture mapping, solved again from this picture's anchors, sends
        # table points where the camera that rendered it does
        cam = replay.state()["camera"]
        assert cam["image_size"] == [1920, 1080]
        points = np.array([[17.0, 10.0, 0.0], [30.0, 20.0, 0.0], [0.0, 0.0, 0.0], [44, 30, 0]])
        rvec, _ = cv2.Rodrigues(np.array(cam["rotation"]))
        ours, _ = cv2.projectPoints(
            points,
            rvec,
            np.array(cam["translation"]),
            np.array(cam["camera_matrix"]),
            np.array(cam["dist_coeffs"]),
        )
        assert np.abs(ours.reshape(-1, 2) - camera.project(points)).max() < 1.0
        replay.seek(MOVED_T)
        [flag] = replay.state()["flags"]
        assert flag["kind"] == "violation" and flag["measured"] == pytest.approx(7.0, abs=IN)


def test_the_api_of_a_replay(analyzed, recorded, copy):
    with Replay(copy(analyzed)) as replay:
        client = create_app(replay, replay=replay).test_client()
        assert client.get("/").headers["Location"].endswith("/replay")
        page = client.get("/replay")
        assert page.status_code == 200 and b"replay.js" in page.data
        info = client.get("/api/replay").get_json()
        assert (info["start_t"], info["end_t"], info["frames"]) == (0.0, pytest.approx(29 / 30), 30)
        assert info["video"] is False and info["revision"] == 0
        assert [e["t"] for e in info["events"]] == [0.0, MOVED_T, MOVED_T]
        assert [r["note"] for r in info["revisions"]] == ["live"]

        moved = client.post("/api/replay/seek", json={"t": MOVED_T}).get_json()
        assert moved["position"]["frame"]["index"] == 24
        assert [f["kind"] for f in moved["state"]["flags"]] == ["violation"]
        assert client.get("/api/state").get_json()["live"]["frame"] == 24
        near = client.get("/api/measure?a=ganger&b=brute").get_json()
        assert near["distance_in"] == pytest.approx(GAP_AFTER, abs=0.05)

        for body in ({"t": 5}, {"t": -1}, {"t": "0.5"}, {"t": True}, {}, {"t": 0.5, "x": 1}):
            refused = client.post("/api/replay/seek", json=body)
            assert refused.status_code == 400, body
            error = refused.get_json()["error"]
            assert error["status"] == 400 and error["field"] in ("t", "x"), body
        out = client.post("/api/replay/seek", json={"t": 5}).get_json()["error"]
        assert out["message"] == "t: expected seconds from 0.000 to 0.967, got 5.0"
        for query in ("t=abc", "t=2", ""):
            bad = client.get(f"/replay/frame.jpg?{query}")
            assert bad.status_code == 400 and bad.get_json()["error"]["field"] == "t"
        none = client.get("/replay/frame.jpg?t=0.5")
        assert none.status_code == 404 and none.get_json()["error"]["field"] == "t"

        phase = client.post("/api/phase", json={"action": "start"})
        assert phase.status_code == 400
        assert phase.get_json()["error"] == {
            "status": 400,
            "field": "phase",
            "message": PHASE_REFUSED,
        }
        declared = client.post(
            "/api/declare",
            json={"model": "ganger", "action": "charge", "target": "brute", "roll": 1},
        )
        assert declared.status_code == 200
        assert [e["kind"] for e in declared.get_json()["events"]] == ["advisory", "resolved"]
        info = client.get("/api/replay").get_json()
        assert info["revision"] == 1 and len(info["revisions"]) == 2
    with Replay(recorded) as replay:
        client = create_app(replay, replay=replay).test_client()
        picture = client.get("/replay/frame.jpg?t=0.4")
        assert picture.status_code == 200 and picture.mimetype == "image/jpeg"
        assert picture.data[:2] == b"\xff\xd8"
        assert client.get("/api/replay").get_json()["video"] is True


@pytest.mark.slow
def test_the_replay_command_refuses_what_is_not_a_match(tmp_path, setup_without_frames, tablesight):
    missing = tablesight("replay", str(tmp_path / "none.db"), "--no-browser")
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.splitlines() == [f"tablesight: {tmp_path / 'none.db'}: no such file"]
    notes = tmp_path / "notes.txt"
    notes.write_text("not a match\n")
    other = tablesight("replay", str(notes), "--no-browser")
    assert other.returncode == 2
    assert other.stderr.splitlines() == [f"tablesight: {notes}: not a match file"]
    empty = tablesight("replay", str(setup_without_frames), "--no-browser")
    assert empty.returncode == 2
    assert empty.stderr.splitlines() == [
        f"tablesight: {setup_without_frames}: no frames recorded; nothing to replay"
    ]


@pytest.fixture
def setup_without_frames(tmp_path, footage, two_model_table, two_model_roster):
    camera, _ = footage
    lens = CameraModel((1920, 1080), camera.camera_matrix, camera.dist_coeffs)
    setup = Setup(
        "necromunda", load_ruleset("necromunda"), two_model_table, two_model_roster, [], lens
    )
    db = tmp_path / "empty.db"
    MatchWriter(db, setup, video=False).close()
    return db


@pytest.mark.slow
def test_a_shared_time_opens_the_frame_it_was_written_from(analyzed):
    """The page shares a moment as ``?time=`` with its seconds to two decimals; each
    frame's time so written (k / 30 s: 0.0333... written 0.03) opens that very frame,
    though some round down below it (0.1 s: 3 / 30 = 0.1, 0.13: 4 / 30 = 0.1333)."""
    with Replay(analyzed) as replay:
        for k in range(30):
            written = round(k / 30, 2)
            assert replay.seek(written)["frame"]["index"] == k, (k, written)


@pytest.mark.slow
def test_the_replay_opens_where_the_table_is_first_seen(footage, setup, tmp_path):
    """A recording that starts before the table is in view (a hand over the camera, five
    frames of nothing): the replay opens at the first frame in which a model is located,
    not on an empty table."""
    import numpy as np

    from tablesight.match.reader import Match
    from tablesight.vision.sources import Frame

    _, pics = footage
    db = tmp_path / "match.db"
    writer = MatchWriter(db, setup)
    (tmp_path / "x.png").write_bytes(b"")
    game = Game(setup, FileSource(str(tmp_path)), recorder=writer, check_s=1 / 30)
    dark = np.zeros_like(pics["start"])
    for k, picture in enumerate([dark] * 5 + [pics["start"]] * 10):
        game.process(Frame(picture, k / 30, k))
    writer.close()
    with Match(db) as match:  # where a model is first located, from the poses recorded
        tracks = match.tracks()
        first = min(points[0].t for points in tracks.values())
    assert first == pytest.approx(5 / 30)
    with Replay(db) as replay:
        assert replay.start_t == 0.0
        assert replay.t == pytest.approx(5 / 30) and replay.frame.index == 5
        # the models as located in that frame (the session places them once settled)
        assert {m[0] for m in replay.state()["poses"]["models"]} == {"ganger", "brute"}
