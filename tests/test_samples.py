"""The samples a user starts from: every game's files load, agree with each other and with
the footage they describe, and the referee says about each sample what was worked out by
hand beforehand.

``samples/<game>/expected-events.json`` holds, for each clip, the events ``tablesight
analyze`` must give, with each number worked out by hand from the storyboard (the
arithmetic is in each event's ``why``); ``samples/scenarios/expected.json`` holds each
``check`` scenario's verdict. Analysing the five clips takes most of this file's time: they
are analysed once, all at the same time, by the command line as a user would run it.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import cv2
import numpy as np
import pytest

from tablesight.calibration.camera import CameraModel
from tablesight.calibration.script import Script
from tablesight.calibration.setup import Setup
from tablesight.calibration.table import MM_PER_IN
from tablesight.rig.footage import Bump, Move
from tablesight.rig.storyboard_file import load_storyboard
from tablesight.rig.synth import PlacedMarker
from tablesight.rules.referee import referee_for
from tablesight.rules.scenario import Scenario

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
SCENARIOS = SAMPLES / "scenarios"
GAMES = ["necromunda", "trench-crusade", "cosmic-combat", "cosmic-combat-revised", "battlestations"]
#: How far a measured number may be from the one worked out by hand, inches.
TOLERANCE_IN = 0.05
#: The smallest marker the detector finds reliably, as the README measures it: the mean
#: side of its black square in the picture.
MIN_MARKER_PX = 18.0


def files(game: str) -> dict[str, Path]:
    folder = SAMPLES / game
    names = ["table", "roster", "terrain", "camera", "session", "storyboard"]
    return {name: folder / f"{name}.toml" for name in names}


def tablesight_command() -> list[str]:
    exe = shutil.which("tablesight") or str(Path(sys.executable).with_name("tablesight"))
    return [exe] if Path(exe).exists() else [sys.executable, "-m", "tablesight"]


# -- the files ---------------------------------------------------------------------------------


def test_every_game_has_a_sample() -> None:
    folders = sorted(p.name for p in SAMPLES.iterdir() if (p / "storyboard.toml").is_file())
    assert folders == sorted(GAMES)
    for game in GAMES:
        made = [SAMPLES / game / n for n in ("match.mp4", "markers.pdf", "expected-events.json")]
        for path in [*files(game).values(), *made]:
            assert path.is_file(), path
    assert (SAMPLES / "charuco-board.pdf").is_file() and (SAMPLES / "board.toml").is_file()


@pytest.mark.parametrize("game", GAMES)
def test_the_sample_loads_as_the_demo_loads_it(game: str) -> None:
    f = files(game)
    setup = Setup.load(game, f["table"], f["roster"], f["terrain"], f["camera"])
    assert setup.ruleset.name == game
    assert setup.camera is not None
    script = Script.from_toml(f["session"])
    assert script.step[0].phase == "movement" and script.step[0].t == 0.0
    assert script.step[-1].phase == "end"
    models = {m.id for m in setup.roster}
    for step in script.step:
        assert step.side is None or step.side in setup.sides
        if step.declare is not None:
            assert step.declare.model in models
            assert step.declare.action in setup.ruleset.actions
            assert step.declare.target is None or step.declare.target in models
    # the game's session can be started from them (a square grid where the game has one)
    session = setup.session()
    assert (session.grid is not None) == (game == "battlestations")


@pytest.mark.parametrize("game", GAMES)
def test_the_files_describe_what_the_storyboard_films(game: str) -> None:
    f = files(game)
    story = load_storyboard(f["storyboard"])
    setup = Setup.load(game, f["table"], f["roster"], f["terrain"], f["camera"])
    assert setup.table.table == story.table.table
    assert setup.table.anchors == story.table.anchors
    assert setup.roster == list(story.roster)
    assert setup.terrain == list(story.terrain)
    # camera.toml is the storyboard camera's calibration: square pixels, the principal
    # point in the middle of the picture, fx from the lens's horizontal field of view
    raw = tomllib.loads(f["storyboard"].read_text())["camera"]
    width, height = raw["size"]
    fx = (width / 2) / math.tan(math.radians(raw["hfov_deg"]) / 2)
    lens = CameraModel.from_toml(f["camera"])
    assert lens.image_size == (width, height)
    assert lens.camera_matrix == pytest.approx(
        np.array([[fx, 0, (width - 1) / 2], [0, fx, (height - 1) / 2], [0, 0, 1]]), abs=1e-9
    )
    assert lens.dist_coeffs.tolist() == raw["dist"]


@pytest.mark.parametrize("game", GAMES)
def test_every_marker_stays_big_enough_for_the_camera(game: str) -> None:
    story = load_storyboard(files(game)["storyboard"])
    rests: list[tuple[float, float, float, float, float]] = []  # size, x, y, z, heading
    for a in story.table.anchors:
        rests.append((a.size_mm, a.x_in, a.y_in, 0.0, a.heading))
    for piece in story.terrain:
        at = story.start[piece.id]
        z = piece.marker_height_mm / MM_PER_IN
        rests.append((piece.marker_size_mm, at.x, at.y, z, at.heading))
    for m in story.roster:
        poses = [story.start[m.id]] + [
            story.pose_at(m.id, a.end) for a in story.actions if isinstance(a, Move)
        ]
        for p in poses:
            rests.append((m.marker_size_mm, p.x, p.y, m.marker_height_mm / MM_PER_IN, p.heading))
    bumps = [a.at for a in story.actions if isinstance(a, Bump)]
    assert len(bumps) == 1  # one small knock of the tripod
    for camera in (story.camera_at(0.0), story.camera_at(bumps[0])):
        for size, x, y, z, heading in rests:
            corners = camera.project(PlacedMarker(0, size, x, y, z, heading).corners_in())
            sides = np.linalg.norm(corners - np.roll(corners, -1, axis=0), axis=1)
            assert sides.mean() >= MIN_MARKER_PX, (game, size, x, y)
            assert (corners >= 0).all() and (corners < camera.size).all()


@pytest.mark.parametrize("game", GAMES)
def test_the_clip_is_a_short_webcam_video(game: str) -> None:
    path = SAMPLES / game / "match.mp4"
    capture = cv2.VideoCapture(str(path))
    try:
        size = (
            int(capture.get(cv2.CAP_PROP_FRAME_WIDTH)),
            int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT)),
        )
        fps = capture.get(cv2.CAP_PROP_FPS)
        frames = capture.get(cv2.CAP_PROP_FRAME_COUNT)
    finally:
        capture.release()
    assert size in ((1280, 720), (1920, 1080))
    assert b"stsd" in path.read_bytes()[-65536:]  # an MP4 file, its index at the end,
    assert b"mp4v" in path.read_bytes()[-65536:]  # of MPEG-4 video ("mp4v" sample entries)
    assert 30.0 <= frames / fps <= 45.0
    assert 1e6 <= path.stat().st_size <= 8e6


@pytest.mark.parametrize("game", GAMES)
def test_the_markers_pdf_prints_every_marker_at_its_size(game: str, tmp_path: Path) -> None:
    """Read back from the sheet at 300 dpi: every marker of the three files, each at its
    size to 0.15 mm (a pixel is 0.085 mm), every model and piece named under its own, and
    every model's marker fits its base with its one-cell white border."""
    if not (shutil.which("pdftoppm") and shutil.which("pdftotext")):
        pytest.skip("pdftoppm/pdftotext absent: apt-get install poppler-utils to run it")
    f = files(game)
    table = tomllib.loads(f["table"].read_text())
    roster = tomllib.loads(f["roster"].read_text())["models"]
    terrain = tomllib.loads(f["terrain"].read_text())["terrain"]
    want = {a["id"]: a["size_mm"] for a in table["anchors"]}
    want |= {m["marker"]: m["marker_size_mm"] for m in roster + terrain}
    for m in roster:  # a 4x4 marker's border is a sixth of it: the square is 8/6 its side
        base = m["base"]
        side = m["marker_size_mm"] * 8 / 6
        if base["shape"] == "round":
            assert side * math.sqrt(2) <= base["diameter_mm"], m["id"]
        elif base["shape"] == "oval":  # the square's corner inside the ellipse
            a, b = base["width_mm"] / 2, base["length_mm"] / 2
            assert (side / 2 / a) ** 2 + (side / 2 / b) ** 2 <= 1, m["id"]
        else:
            assert side <= min(base["width_mm"], base["length_mm"]), m["id"]
    pdf = SAMPLES / game / "markers.pdf"
    subprocess.run(["pdftoppm", "-r", "300", "-gray", "-png", str(pdf), str(tmp_path / "p")])
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    detector = cv2.aruco.ArucoDetector(dictionary, cv2.aruco.DetectorParameters())
    seen: dict[int, float] = {}
    for page in sorted(tmp_path.glob("p*.png")):
        corners, ids, _ = detector.detectMarkers(cv2.imread(str(page), cv2.IMREAD_GRAYSCALE))
        for c, marker in zip(corners, ids.ravel(), strict=True):
            sides = np.linalg.norm(c[0] - np.roll(c[0], -1, axis=0), axis=1)
            seen[int(marker)] = float(sides.mean()) / 300 * 25.4
    assert sorted(seen) == sorted(want)
    for marker, size in want.items():
        assert seen[marker] == pytest.approx(size, abs=0.15), marker
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True).stdout
    for entry in roster + terrain:
        assert f"{entry['id']}\nid {entry['marker']}," in text, entry["id"]


@pytest.mark.parametrize("game", GAMES)
def test_the_roster_prints_its_own_markers(game: str, tmp_path: Path) -> None:
    """``markers --roster`` as the README gives it: every model's marker fits its base."""
    f = files(game)
    out = tmp_path / "roster.pdf"
    args = ["markers", "-o", str(out), "--roster", str(f["roster"]), "--table", str(f["table"])]
    done = subprocess.run(
        [*tablesight_command(), *args, "--terrain", str(f["terrain"])],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_bytes().startswith(b"%PDF")


def test_the_charuco_board_is_the_one_board_toml_describes() -> None:
    board = tomllib.loads((SAMPLES / "board.toml").read_text())
    pdf = (SAMPLES / "charuco-board.pdf").read_bytes()
    title = re.search(rb"/Title \(([^)]*)\)", pdf)
    assert title is not None
    assert title.group(1).decode() == (
        f"TableSight ChArUco board {board['squares_x']}x{board['squares_y']}, "
        f"{board['square_mm']:g}/{board['marker_mm']:g} mm, {board['dictionary']}"
    )


# -- check scenarios ---------------------------------------------------------------------------


def test_every_scenario_has_its_expected_verdict() -> None:
    expected = json.loads((SCENARIOS / "expected.json").read_text())
    scenarios = sorted(p.name for p in SCENARIOS.glob("*.json") if p.name != "expected.json")
    assert sorted(expected) == scenarios
    for game in GAMES:
        assert any(name.startswith(f"{game}-") for name in scenarios), game


@pytest.mark.parametrize(
    "name", sorted(json.loads((SCENARIOS / "expected.json").read_text())), ids=str
)
def test_scenario_verdict(name: str) -> None:
    expected = json.loads((SCENARIOS / "expected.json").read_text())[name]
    scenario = Scenario.from_file(SCENARIOS / name)
    verdict = referee_for(scenario.scene, scenario.ruleset).judge().to_dict()
    assert verdict["legal"] == expected["legal"]
    assert [v["rule"] for v in verdict["violations"]] == expected["violations"]
    assert [a["rule"] for a in verdict["advisories"]] == expected["advisories"]


# -- the clips, refereed -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def analyzed() -> dict[str, list[dict[str, object]]]:
    """Every clip through ``tablesight analyze --json``, all five at once."""
    running = {}
    for game in GAMES:
        f = files(game)
        args = [
            *tablesight_command(),
            "analyze",
            str(SAMPLES / game / "match.mp4"),
            "--game",
            game,
            "--table",
            str(f["table"]),
            "--roster",
            str(f["roster"]),
            "--terrain",
            str(f["terrain"]),
            "--camera",
            str(f["camera"]),
            "--script",
            str(f["session"]),
            "--json",
        ]
        running[game] = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO
        )
    events = {}
    for game, process in running.items():
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, err
        events[game] = json.loads(out)["events"]
    return events


@pytest.mark.slow
@pytest.mark.parametrize("game", GAMES)
def test_the_referee_says_what_was_worked_out_by_hand(
    analyzed: dict[str, list[dict[str, object]]], game: str
) -> None:
    expected = json.loads((SAMPLES / game / "expected-events.json").read_text())
    assert expected["game"] == game
    got = analyzed[game]
    key = ("kind", "rule", "model", "other")
    assert [tuple(e[k] for k in key) for e in got] == [
        tuple(e[k] for k in key) for e in expected["events"]
    ]
    for mine, theirs in zip(expected["events"], got, strict=True):
        if mine["measured"] is None:
            assert theirs["measured"] is None, mine
        else:
            assert theirs["measured"] == pytest.approx(mine["measured"], abs=TOLERANCE_IN), mine


@pytest.mark.slow
def test_each_clip_shows_legal_and_illegal_moves(
    analyzed: dict[str, list[dict[str, object]]],
) -> None:
    for game in GAMES:
        kinds = [e["kind"] for e in analyzed[game]]
        assert kinds.count("model_moved") >= 6, game
        assert kinds.count("violation") >= 3, game
        assert kinds.count("camera_bumped") == 1, game
        assert kinds.count("phase_started") >= 2, game
