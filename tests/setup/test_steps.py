"""Setting up a table without writing TOML, on rendered pictures and real detection.

The truth is the rig's geometry (where markers and boards were placed, what its camera
projects them to) or ``calibrate`` run on its own; never what the set-up itself said.
"""

from __future__ import annotations

import doctest
import json
import math
import os
import random
import tomllib
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from tablesight.calibration.camera import BoardSpec, CalibrationError, calibrate
from tablesight.calibration.table import MM_PER_IN, Anchor
from tablesight.rig.accuracy import marked_model, scene_camera
from tablesight.rig.charuco import board_corners_in, board_on_table, random_charuco_views
from tablesight.rig.synth import PinholeCamera, PlacedMarker, render_table
from tablesight.rules.errors import InputError
from tablesight.setup.files import write_files
from tablesight.setup.steps import (
    ANCHOR_MM,
    CLICK_IN_PER_PX,
    MARKER_MM,
    CalibrationCapture,
    ClickedTable,
    SetupError,
    Tape,
    assign,
    footprint_in_marker_frame,
    game_preset,
    propose_anchors,
    seen_markers,
    table_spec,
)
from tablesight.vision.aruco import MarkerDetector
from tablesight.vision.locate import locate
from tablesight.vision.tablepose import TablePose

TABLE_IN = (44.0, 30.0)
W, D = TABLE_IN
#: The anchors as glued: (id, x, y, heading); anchor 1 a quarter turn, anchor 3 a little
#: crooked.
ANCHORS = [(0, 1.5, 1.5, 0.0), (1, 42.4, 1.6, 90.0), (2, 42.5, 28.5, 0.0), (3, 1.7, 28.3, 3.0)]
#: The table's corners, in the order they are clicked.
CORNERS_IN = np.array([[0.0, 0.0, 0.0], [W, 0.0, 0.0], [W, D, 0.0], [0.0, D, 0.0]])
BOARD = BoardSpec(squares_x=7, squares_y=5, square_mm=30, marker_mm=22, dictionary="6x6_250")


def placed_anchors(dictionary: int = cv2.aruco.DICT_4X4_50) -> list[PlacedMarker]:
    return [PlacedMarker(i, ANCHOR_MM, x, y, 0.0, h, dictionary) for i, x, y, h in ANCHORS]


def angle_off(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


@pytest.fixture(scope="module")
def scene() -> SimpleNamespace:
    """A 44 x 30 in table at 1920 x 1080 from the accuracy rig's camera: the four anchors
    and 12 models on 40 mm bases with 20 mm markers (the printed sheet's default, which
    fits a 40 mm base), every fourth on a 1 in flying stand, every other off-centre."""
    camera = scene_camera()
    rng = random.Random(11)
    models = []
    for i in range(12):
        x, y = 8.0 + 9.0 * (i % 4), 7.0 + 8.0 * (i // 4)
        side = "red" if i % 2 else "blue"
        entry = marked_model(10 + i, x, y, MARKER_MM, i, rng, side, cv2.aruco.DICT_4X4_50, 40.0)
        models.append(entry)
    frame = render_table(camera, TABLE_IN, placed_anchors() + [m for _, m in models])
    found = MarkerDetector("4x4_50", camera.size).detect(frame)
    return SimpleNamespace(
        camera=camera,
        frame=frame,
        found=found,
        models=models,
        corners_px=camera.project(CORNERS_IN),
    )


# -- calibration ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def board_views() -> tuple[PinholeCamera, list[tuple[np.ndarray, PinholeCamera]]]:
    """Ten 960 x 540 pictures of the board from varied places, by one lens."""
    lens = PinholeCamera.looking_at((0, 0, 20), (0, 0, 0), 960, 540, 65.0)
    return lens, random_charuco_views(BOARD.board(), 10, 960, 540, 7, lens=lens)


def test_capture_keeps_views_and_says_why_not(board_views) -> None:
    _, views = board_views
    capture = CalibrationCapture(BOARD)
    offers = [capture.offer(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)) for image, _ in views]
    assert [o.kept for o in offers] == [True] * 10 and capture.views == 10
    assert [o.name for o in offers[:2]] == ["view 1", "view 2"]
    again = capture.offer(views[0][0])
    assert (again.kept, again.why, again.reason) == (
        False,
        "duplicate",
        "a duplicate of an earlier view",
    )
    blurry = capture.offer(cv2.GaussianBlur(views[1][0], (0, 0), 2.5))
    assert (blurry.kept, blurry.why) == (False, "blurry")
    assert blurry.sharpness is not None and blurry.sharpness < 200
    assert blurry.reason == f"blurry (sharpness {blurry.sharpness:.0f} < 200)"
    empty = capture.offer(np.full((540, 960), 120, np.uint8))
    assert (empty.why, empty.reason) == ("not_found", "board not found (0 corners)")
    assert empty.hint.startswith("show the whole board")
    other = capture.offer(np.full((480, 640), 120, np.uint8))
    assert (other.why, other.reason) == ("size", "size 640x480, the others 960x540")
    assert capture.views == 10
    json.dumps(again.to_dict())


def test_a_views_sharpness_is_the_variance_of_its_laplacian_over_the_board() -> None:
    # Known by construction, not by the formula: noise of standard deviation s, drawn
    # afresh for each pixel, adds 20 s^2 to the variance of the 4-neighbour Laplacian
    # (n + s + e + w - 4 c: 1 + 1 + 1 + 1 + 16 times s^2) wherever it lies on the board,
    # and nothing where it lies off the board. The board is drawn front on, 60 px a
    # square, grey 60 to 190 on grey 125, so that the noise is never clipped.
    square, s = 60, 12.0
    board = BOARD.board().generateImage((7 * square, 5 * square))
    x0, y0 = 270, 120
    picture = np.full((540, 960), 125.0)
    on_board = np.zeros_like(picture, dtype=bool)
    on_board[y0 : y0 + 5 * square, x0 : x0 + 7 * square] = True
    picture[on_board] = (60 + board / 255.0 * 130).ravel()
    noise = np.random.default_rng(7).normal(0.0, s, picture.shape)

    def sharpness(noisy: np.ndarray) -> float:
        offer = CalibrationCapture(BOARD).offer(np.rint(picture + noise * noisy).astype(np.uint8))
        assert offer.kept and len(offer.corners_px) == 6 * 4  # every inner corner found
        assert offer.sharpness is not None
        return offer.sharpness

    clean = sharpness(np.zeros_like(on_board))
    assert clean > 200  # a sharp board is kept (the blurry limit: BLUR_MIN)
    assert sharpness(~on_board) == clean  # off the board: not measured
    # rounding to whole grey levels adds 20 / 12 more (uniform noise of variance 1/12)
    assert sharpness(on_board) - clean == pytest.approx(20 * s**2 + 20 / 12, rel=0.03)


def test_capture_calibrates_as_calibrate_camera_does(board_views) -> None:
    lens, views = board_views
    capture = CalibrationCapture(BOARD)
    for image, _ in views:
        capture.offer(image)
    capture.offer(views[3][0])  # a duplicate: refused, and no part of the calibration
    mine = capture.calibrate()
    theirs = calibrate(((f"v{i}", image) for i, (image, _) in enumerate(views)), BOARD)
    assert mine.camera.rms_px is not None and theirs.camera.rms_px is not None
    assert abs(mine.camera.rms_px - theirs.camera.rms_px) <= 0.02 * theirs.camera.rms_px
    assert abs(mine.camera.fx - theirs.camera.fx) <= 0.02 * theirs.camera.fx
    assert abs(mine.camera.fx - lens.fx) <= 0.02 * lens.fx  # and the lens's own
    assert mine.coverage == theirs.coverage
    assert mine.rejected == {"view 11": "a duplicate of an earlier view"}


def test_coverage_is_where_the_boards_corners_fell(board_views) -> None:
    # each corner found is matched to the board's true corner it is (within 1 px), and the
    # grid worked out from the true pixels
    _, views = board_views
    board = BOARD.board()
    capture = CalibrationCapture(BOARD)
    hit = np.zeros((5, 5), dtype=bool)
    for image, cam in views[:4]:
        offer = capture.offer(image)
        truth = cam.project(board_corners_in(board, board_on_table(board, 0, 0)))
        gap = np.linalg.norm(offer.corners_px[:, None] - truth[None], axis=2)
        assert np.all(gap.min(axis=1) < 1.0)
        px = truth[gap.argmin(axis=1)]
        cells = np.floor(px / [192.0, 108.0]).astype(int)  # 960 / 5, 540 / 5
        hit[cells[:, 1], cells[:, 0]] = True
    coverage = capture.coverage()
    assert coverage.grid == hit.tolist()
    assert coverage.share == hit.mean() and 0 < coverage.share < 1


def test_three_views_are_needed() -> None:
    capture = CalibrationCapture(BOARD)
    capture.offer(np.full((540, 960), 120, np.uint8))
    with pytest.raises(CalibrationError, match="need at least 3 usable board views, got 0"):
        capture.calibrate()


# -- anchors --------------------------------------------------------------------------------


def test_anchors_from_the_corners_clicked(scene) -> None:
    proposal = propose_anchors(
        TABLE_IN, "4x4_50", scene.found, scene.corners_px, scene.camera.calibrated()
    )
    assert [a.id for a in proposal.anchors] == [0, 1, 2, 3]  # the marker nearest each corner
    for anchor, (_, x, y, heading) in zip(proposal.anchors, ANCHORS, strict=True):
        assert math.dist((anchor.x_in, anchor.y_in), (x, y)) <= 0.05
        assert angle_off(anchor.heading, heading) <= 2.0
        assert anchor.size_mm == ANCHOR_MM
    assert proposal.healthy and proposal.problem == "" and proposal.warnings == ()
    assert proposal.pose is not None and proposal.pose.anchors_used == (0, 1, 2, 3)
    assert proposal.pose.turned == ()  # the quarter turn is in the heading, not a mistake
    health = proposal.to_dict()
    assert json.loads(json.dumps(health))["health"]["healthy"] is True


@pytest.mark.parametrize(
    "off_px",
    [[(1, 0), (0, 1), (-1, 0), (0, -1)], [(1, 1), (-1, 1), (-1, -1), (1, -1)]],
)
def test_clicks_a_pixel_off(scene, off_px: list[tuple[int, int]]) -> None:
    corners = scene.corners_px + np.array(off_px, dtype=float)
    proposal = propose_anchors(TABLE_IN, "4x4_50", scene.found, corners, scene.camera.calibrated())
    for anchor, (_, x, y, heading) in zip(proposal.anchors, ANCHORS, strict=True):
        assert math.dist((anchor.x_in, anchor.y_in), (x, y)) <= CLICK_IN_PER_PX
        assert angle_off(anchor.heading, heading) <= 2.0


def test_clicks_that_make_the_anchors_disagree_are_said(scene) -> None:
    # each near corner clicked 3 px outwards, each far one 3 px inwards
    corners = scene.corners_px + np.array([(-3, 0), (3, 0), (-3, 0), (3, 0)], dtype=float)
    proposal = propose_anchors(TABLE_IN, "4x4_50", scene.found, corners, scene.camera.calibrated())
    assert proposal.problem.startswith("the anchors disagree")
    assert proposal.warnings == (
        "the anchors placed from the clicked corners disagree: a click a pixel off moves them "
        "by up to 0.1 in; click the corners again, zoomed in, or measure anchors 0, 1, 2, 3 "
        "with a tape",
    )


def test_anchors_without_a_camera_on_a_straight_lens() -> None:
    camera = PinholeCamera.looking_at((22, -14, 30), (22, 14, 0), dist=(0, 0, 0, 0, 0))
    frame = render_table(camera, TABLE_IN, placed_anchors())
    found = MarkerDetector("4x4_50", camera.size).detect(frame)
    proposal = propose_anchors(TABLE_IN, "4x4_50", found, camera.project(CORNERS_IN))
    for anchor, (_, x, y, heading) in zip(proposal.anchors, ANCHORS, strict=True):
        assert math.dist((anchor.x_in, anchor.y_in), (x, y)) <= 0.05
        assert angle_off(anchor.heading, heading) <= 2.0
    assert proposal.healthy and proposal.pose is not None and proposal.pose.camera is None


def test_anchors_from_a_tape(scene) -> None:
    # the tape reads each centre from its two nearest edges; anchor 2's far edge, say
    tape = {0: Tape(1.5, 1.5), 1: Tape(1.6, 1.6), 2: Tape(1.5, 1.5), 3: Tape(1.7, 1.7)}
    proposal = propose_anchors(
        TABLE_IN, "4x4_50", scene.found, scene.corners_px, scene.camera.calibrated(), tape=tape
    )
    places = [(a.x_in, a.y_in) for a in proposal.anchors]
    assert places == [(1.5, 1.5), (42.4, 1.6), (42.5, 28.5), (1.7, 28.3)]
    assert angle_off(proposal.anchors[1].heading, 90.0) <= 2.0
    assert proposal.healthy and proposal.warnings == ()


def test_a_tape_that_disagrees_with_the_picture_is_said(scene) -> None:
    proposal = propose_anchors(
        TABLE_IN,
        "4x4_50",
        scene.found,
        scene.corners_px,
        scene.camera.calibrated(),
        tape={2: Tape(3.5, 1.5)},  # read from the wrong mark: 2 in more than it is
    )
    assert (proposal.anchors[2].x_in, proposal.anchors[2].y_in) == (40.5, 28.5)
    assert proposal.warnings == (
        "anchor 2: the tape puts its centre 3.5 in from the right edge, the picture 1.50 in: "
        "check the tape and the clicked corners",
    )
    # the pose, from the other three, leaves it out and says how far off it is
    assert proposal.pose is not None and [i for i, _ in proposal.pose.left_out] == [2]
    assert abs(proposal.pose.left_out[0][1] - 2.0) <= 0.05


def test_named_anchors_and_a_corner_without_one(scene) -> None:
    camera = scene.camera.calibrated()
    named = propose_anchors(
        TABLE_IN, "4x4_50", scene.found, scene.corners_px, camera, anchor_ids=[3, 0, 1]
    )
    assert [a.id for a in named.anchors] == [3, 0, 1] and named.healthy
    without = seen(scene, drop={2})
    proposal = propose_anchors(TABLE_IN, "4x4_50", without, scene.corners_px, camera)
    assert [a.id for a in proposal.anchors] == [0, 1, 3]
    assert proposal.warnings == (
        "no marker within 4 in of the far-right corner (44, 30): fix an anchor there, or "
        "name the anchors",
    )
    with pytest.raises(SetupError) as err:
        propose_anchors(TABLE_IN, "4x4_50", without, scene.corners_px, camera, anchor_ids=[2])
    assert err.value.field == "anchor_ids[0]"
    assert err.value.message.startswith("marker 2 is not in the picture (the markers seen: 0, 1,")


def seen(scene: SimpleNamespace, drop: set[int]):
    keep = np.array([i not in drop for i in scene.found.ids.tolist()])
    return scene.found.select(keep)


@pytest.mark.parametrize(
    ("order", "message"),
    [
        ([0, 3, 2, 1], "the corners go round the wrong way: after the near-left corner click"),
        ([0, 2, 1, 3], "the corners cross: click them in order round the table"),
        ([0, 1, 2], "expected the table's 4 corners as [x, y] pixels, near-left (0, 0),"),
    ],
)
def test_corners_clicked_wrong(scene, order: list[int], message: str) -> None:
    with pytest.raises(SetupError) as err:
        propose_anchors(TABLE_IN, "4x4_50", scene.found, scene.corners_px[order])
    assert err.value.field == "corners_px" and err.value.message.startswith(message)


def test_corners_in_a_line_are_refused() -> None:
    with pytest.raises(SetupError, match="corners_px: three of the corners lie in a line"):
        ClickedTable.from_corners([[0, 0], [100, 0], [200, 0], [0, 100]], TABLE_IN)


def test_clicked_table_maps_both_ways(scene) -> None:
    clicked = ClickedTable.from_corners(scene.corners_px, TABLE_IN, scene.camera.calibrated())
    points = np.array([[10.0, 5.0], [33.0, 27.0], [22.0, 15.0]])
    px = scene.camera.project(np.column_stack([points, np.zeros(3)]))
    assert np.allclose(clicked.pixels_to_table(px), points, atol=1e-3)
    assert np.allclose(clicked.table_to_pixels(points), px, atol=1e-2)


@pytest.mark.parametrize(("size", "field"), [((0.0, 30.0), "width_in"), ((44.0, -2.0), "depth_in")])
def test_a_table_of_no_size_is_refused(scene, size: tuple[float, float], field: str) -> None:
    with pytest.raises(SetupError) as err:
        propose_anchors(size, "4x4_50", scene.found, scene.corners_px)
    assert err.value.field == field
    assert err.value.message == f"expected a side of 1 to 240 in, got {size[field == 'depth_in']}"
    with pytest.raises(SetupError, match=f"^{field}: expected a side of 1 to 240 in"):
        table_spec(size, "4x4_50", [Anchor(id=0, x_in=1, y_in=1, size_mm=40)])


def test_table_spec_refusals() -> None:
    anchor = Anchor(id=0, x_in=1, y_in=1, size_mm=40)
    with pytest.raises(SetupError, match=r"^dictionary: unknown ArUco dictionary '5x5'"):
        table_spec(TABLE_IN, "5x5", [anchor])
    with pytest.raises(SetupError, match=r"^anchors\[1\].id: 0 is also anchors\[0\].id$"):
        table_spec(TABLE_IN, "4x4_50", [anchor, anchor])
    far = Anchor(id=60, x_in=1, y_in=1, size_mm=40)
    with pytest.raises(SetupError, match=r"^anchors\[0\].id: expected a marker of 4x4_50 \(0"):
        table_spec(TABLE_IN, "4x4_50", [far])


# -- the markers on models and terrain ------------------------------------------------------


def test_seen_markers_are_the_others_on_the_table(scene) -> None:
    proposal = propose_anchors(
        TABLE_IN, "4x4_50", scene.found, scene.corners_px, scene.camera.calibrated()
    )
    listed = seen_markers(scene.found, [a.id for a in proposal.anchors], proposal.pose)
    assert [m.id for m in listed] == list(range(10, 22))
    for marker, (entry, placed) in zip(listed, scene.models, strict=True):
        truth_px = scene.camera.project(np.array([[placed.x_in, placed.y_in, placed.z_in]]))[0]
        assert math.dist(marker.centre_px, truth_px) < 0.5
        if entry.marker_height_mm == 4.0:  # at the height asked for
            assert marker.centre_in is not None and marker.heading is not None
            assert math.dist(marker.centre_in, (placed.x_in, placed.y_in)) <= 0.02
            assert angle_off(marker.heading, placed.heading_deg) <= 2.0
    before = seen_markers(scene.found, [0, 1, 2, 3])
    assert before[0].centre_in is None and json.dumps(before[0].to_dict())


def test_a_footprint_drawn_on_the_table_in_its_markers_frame() -> None:
    # a 2 x 1 in wall along +y whose marker faces +y (heading 90) at (10, 5): in the
    # marker's frame it runs along +x
    wall = [(9.5, 4.0), (10.5, 4.0), (10.5, 6.0), (9.5, 6.0)]
    assert footprint_in_marker_frame(wall, (10.0, 5.0), 90.0) == [
        (-1.0, 0.5),
        (-1.0, -0.5),
        (1.0, -0.5),
        (1.0, 0.5),
    ]
    assert footprint_in_marker_frame([(11.0, 5.0)], (10.0, 5.0), 0.0) == [(1.0, 0.0)]


def test_docstring_examples() -> None:
    from tablesight.setup import steps

    result = doctest.testmod(steps)
    assert result.attempted > 0 and result.failed == 0


def model_form(entry) -> dict[str, object]:
    """What a user fills in for a model: no marker size (the sheet's), its height only
    when it is not on a base top."""
    form = entry.model_dump(exclude={"marker_size_mm", "marker_height_mm", "unit", "status"})
    if entry.marker_height_mm != 4.0:
        form["marker_height_mm"] = entry.marker_height_mm
    return form


def test_assign_makes_the_roster_and_terrain(scene) -> None:
    proposal = propose_anchors(
        TABLE_IN, "4x4_50", scene.found, scene.corners_px, scene.camera.calibrated()
    )
    wall = {"id": "wall", "marker": 40, "polygon": [[-2, -0.5], [2, -0.5], [2, 0.5], [-2, 0.5]]}
    done = assign(
        "necromunda",
        proposal.table,
        [model_form(entry) for entry, _ in scene.models],
        [{**wall, "height": 3, "keywords": ["impassable"]}],
    )
    assert done.roster == [entry for entry, _ in scene.models]
    assert [m.marker_size_mm for m in done.roster] == [MARKER_MM] * 12
    piece = done.terrain[0]
    assert (piece.id, piece.marker, piece.marker_size_mm, piece.height) == ("wall", 40, 20.0, 3.0)
    assert piece.marker_height_mm == 0.0


MODEL = {
    "id": "krotos",
    "side": "goliath",
    "base": {"shape": "round", "diameter_mm": 32},
    "movement": 4,
    "marker": 10,
    "marker_size_mm": 16,
}


@pytest.mark.parametrize(
    ("game", "models", "field", "message"),
    [
        (
            "necromunda",
            [MODEL, {**MODEL, "id": "gorth"}],
            "models[1].marker",
            "marker 10 is also models[0].marker: one marker, one model or piece",
        ),
        (
            "necromunda",
            [{**MODEL, "marker": 50}],
            "models[0].marker",
            "expected a marker of 4x4_50 (0 to 49), got 50",
        ),
        (
            "necromunda",
            [{**MODEL, "marker": 2}],
            "models[0].marker",
            "marker 2 is an anchor (the anchors: 0, 1, 2, 3)",
        ),
        (
            "necromunda",
            [MODEL, {**MODEL, "marker": 11}],
            "models[1].id",
            "'krotos' is also models[0].id",
        ),
        (
            "necromunda",
            [{**MODEL, "base": {"shape": "square", "diameter_mm": 32}}],
            "models[0].base",
            "Input tag 'square' found using 'shape' does not match any of the expected tags: "
            "'round', 'oval', 'rect', got {'shape': 'square', 'diameter_mm': 32}",
        ),
        (
            "necromunda",
            [{**MODEL, "movement": "4"}],
            "models[0].movement",
            "Input should be a valid number, got '4'",
        ),
        ("necromunda", ["krotos"], "models[0]", "expected a table of fields, got 'krotos'"),
        (
            "necrumunda",
            [MODEL],
            "game",
            "unknown game 'necrumunda'; known games: battlestations, cosmic-combat, "
            "cosmic-combat-revised, necromunda, trench-crusade",
        ),
    ],
)
def test_assign_refusals(game: str, models: list, field: str, message: str) -> None:
    table = table_spec(
        TABLE_IN, "4x4_50", [Anchor(id=i, x_in=x, y_in=y, size_mm=40) for i, x, y, _ in ANCHORS]
    )
    with pytest.raises(SetupError) as err:
        assign(game, table, models)
    assert (err.value.field, err.value.message) == (field, message)
    # the web API's error shape takes the field from the text before the first colon
    assert isinstance(err.value, InputError) and str(err.value).split(":", 1)[0] == field


def test_a_piece_and_a_model_on_one_marker() -> None:
    table = table_spec(TABLE_IN, "4x4_50", [Anchor(id=0, x_in=1, y_in=1, size_mm=40)])
    piece = {"id": "tank", "marker": 10, "polygon": [[-1, -1], [1, -1], [0, 1]]}
    with pytest.raises(SetupError) as err:
        assign("necromunda", table, [MODEL], [piece])
    assert err.value.field == "terrain[0].marker"
    assert err.value.message.startswith("marker 10 is also models[0].marker")


def test_game_presets_are_the_keywords_the_rules_name() -> None:
    necromunda = game_preset("necromunda")
    assert necromunda.movement_unit == "in"
    assert set(necromunda.keywords) == {"wheeled", "walker", "tracked", "skimmer", "vehicle"}
    assert set(necromunda.statuses) == {"prone", "seriously_injured"}
    assert "impassable" in necromunda.terrain_keywords
    assert set(game_preset("cosmic-combat-revised").keywords) == {"shield", "cloak"}
    assert game_preset("cosmic-combat").keywords == ("fighter",)
    assert game_preset("trench-crusade").keywords == ()
    grid = game_preset("battlestations")
    assert grid.movement_unit == "squares" and "jetpack" in grid.keywords
    assert "canosian" in grid.keywords and "wall" in grid.terrain_keywords
    with pytest.raises(SetupError, match=r"^game: unknown game 'chess'"):
        game_preset("chess")


# -- the files ------------------------------------------------------------------------------


def test_the_files_load_as_written(scene, tmp_path: Path) -> None:
    camera = scene.camera.calibrated()
    proposal = propose_anchors(TABLE_IN, "4x4_50", scene.found, scene.corners_px, camera)
    wall = {"id": "wall", "marker": 40, "polygon": [[-2, -0.5], [2, -0.5], [2, 0.5], [-2, 0.5]]}
    done = assign(
        "necromunda",
        proposal.table,
        [model_form(entry) for entry, _ in scene.models],
        [{**wall, "height": 2.5, "keywords": ["impassable"]}],
    )
    files = write_files(
        tmp_path / "my-table", "necromunda", proposal.table, done.roster, done.terrain, camera
    )
    names = sorted(p.name for p in (tmp_path / "my-table").iterdir())
    assert names == ["camera.toml", "roster.toml", "table.toml", "terrain.toml"]
    setup = files.load()
    assert setup.table == proposal.table
    assert setup.roster == done.roster and setup.terrain == done.terrain
    assert setup.camera is not None
    assert np.allclose(setup.camera.camera_matrix, camera.camera_matrix, atol=1e-6)
    assert np.allclose(setup.camera.dist_coeffs, camera.dist_coeffs, atol=1e-8)
    assert files.options()[:2] == ["--game", "necromunda"]
    table_text = files.table.read_text()
    assert table_text.startswith(
        "# Set up for Necromunda. Referee it from this folder (--source: your camera):\n"
        "#   tablesight run --source 0 --game necromunda --table table.toml --roster roster.toml\n"
        "#   --terrain terrain.toml --camera camera.toml\n"
        "# The table: its size"
    )
    assert '\n[table]\nwidth_in = 44\ndepth_in = 30\ndictionary = "4x4_50"\n' in table_text
    roster_text = files.roster.read_text()
    assert 'base = { shape = "round", diameter_mm = 40 }' in roster_text
    assert tomllib.loads(roster_text)["models"][0]["movement"] == 6


def test_without_terrain_or_camera_only_table_and_roster(tmp_path: Path) -> None:
    table = table_spec(TABLE_IN, "4x4_50", [Anchor(id=0, x_in=1.25, y_in=1, size_mm=40)])
    roster = assign("trench-crusade", table, [MODEL]).roster
    files = write_files(tmp_path, "trench-crusade", table, roster)
    assert (files.terrain, files.camera) == (None, None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["roster.toml", "table.toml"]
    assert files.load().roster == roster


def test_an_unwritable_folder_is_refused(tmp_path: Path) -> None:
    table = table_spec(TABLE_IN, "4x4_50", [Anchor(id=0, x_in=1, y_in=1, size_mm=40)])
    (tmp_path / "notes.txt").write_text("a file, not a folder")
    folder = tmp_path / "notes.txt" / "table"
    with pytest.raises(SetupError) as err:
        write_files(folder, "necromunda", table, [])
    assert err.value.field == "folder"
    assert err.value.message == f"cannot write to {folder}: Not a directory"


def test_files_that_would_not_load_are_refused_and_nothing_written(tmp_path: Path) -> None:
    # a roster made without assign: its marker is an anchor's
    table = table_spec(TABLE_IN, "4x4_50", [Anchor(id=0, x_in=1, y_in=1, size_mm=40)])
    entry = assign("necromunda", table, [MODEL]).roster[0].model_copy(update={"marker": 0})
    with pytest.raises(SetupError) as err:
        write_files(tmp_path, "necromunda", table, [entry])
    assert err.value.field == "roster.toml"
    assert err.value.message == (
        "models[0].marker: marker 0 is used twice (an anchor or a model already carries it)"
    )
    assert list(tmp_path.iterdir()) == []


def small_set(movement: int = 5) -> tuple[object, list[object]]:
    """A table of one anchor and a roster of one model moving ``movement`` in."""
    table = table_spec(TABLE_IN, "4x4_50", [Anchor(id=0, x_in=1.25, y_in=1, size_mm=40)])
    return table, assign("trench-crusade", table, [{**MODEL, "movement": movement}]).roster


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (links as where they point), by its path there."""
    return {
        str(p.relative_to(folder)): (
            b"-> " + os.readlink(p).encode() if p.is_symlink() else p.read_bytes()
        )
        for p in sorted(folder.rglob("*"))
        if p.is_symlink() or p.is_file()
    }


@pytest.mark.parametrize(
    "where",
    ["..", "../elsewhere", "sub/../../elsewhere", "OUT", "/", "~", "link", "link/deeper"],
)
def test_files_are_written_only_in_the_folder_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """``..``, a path outside (absolute), ``/``, ``~`` and a link inside that points out
    are refused on ``folder``, and nothing is written anywhere."""
    root, outside = tmp_path / "tables", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    monkeypatch.setenv("HOME", str(outside))
    given = str(outside) if where == "OUT" else where
    before = tree(tmp_path)
    table, roster = small_set()
    with pytest.raises(SetupError) as err:
        write_files(Path(given), "trench-crusade", table, roster, inside=root)
    assert err.value.field == "folder"
    assert err.value.message.startswith(f"the set-up writes only in {root} and the folders")
    assert tree(tmp_path) == before


def test_folders_under_it_and_links_that_stay_in_are_written(tmp_path: Path) -> None:
    root = tmp_path / "tables"
    (root / "real").mkdir(parents=True)
    (root / "alias").symlink_to(root / "real", target_is_directory=True)
    table, roster = small_set()
    for given, lands in (
        ("new/tree", root / "new" / "tree"),  # relative: to the folder given at start
        (str(root / "abs"), root / "abs"),
        ("alias", root / "real"),
        ("real/../back", root / "back"),
        (".", root),
    ):
        files = write_files(Path(given), "trench-crusade", table, roster, inside=root)
        assert (files.table, files.roster) == (lands / "table.toml", lands / "roster.toml")
        assert sorted(p.name for p in lands.iterdir() if p.is_file()) == [
            "roster.toml",
            "table.toml",
        ]


def test_files_there_are_replaced_only_when_asked_and_kept(tmp_path: Path) -> None:
    table, roster = small_set(5)
    write_files(tmp_path, "trench-crusade", table, roster, inside=tmp_path)
    mine = (tmp_path / "roster.toml").read_bytes() + b"# my own note\n"
    (tmp_path / "roster.toml").write_bytes(mine)
    first_table = (tmp_path / "table.toml").read_bytes()
    before = tree(tmp_path)
    _, faster = small_set(7)
    with pytest.raises(SetupError) as err:
        write_files(tmp_path, "trench-crusade", table, faster, inside=tmp_path)
    assert err.value.field == "replace"
    # the table as it would be written is there already: only the roster is asked about
    assert err.value.message.startswith(f"roster.toml in {tmp_path}: replace it?")
    assert tree(tmp_path) == before  # nothing changed, nothing added

    write_files(tmp_path, "trench-crusade", table, faster, inside=tmp_path, replace=True)
    assert (tmp_path / "roster.toml.1").read_bytes() == mine
    assert (tmp_path / "table.toml").read_bytes() == first_table
    assert tomllib.loads((tmp_path / "roster.toml").read_text())["models"][0]["movement"] == 7
    second = (tmp_path / "roster.toml").read_bytes()

    # the same again (the game started again on it): nothing to ask, nothing to keep
    again = tree(tmp_path)
    write_files(tmp_path, "trench-crusade", table, faster, inside=tmp_path)
    assert tree(tmp_path) == again

    _, slower = small_set(3)
    write_files(tmp_path, "trench-crusade", table, slower, inside=tmp_path, replace=True)
    assert (tmp_path / "roster.toml.1").read_bytes() == mine  # the first kept stays
    assert (tmp_path / "roster.toml.2").read_bytes() == second
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "roster.toml",
        "roster.toml.1",
        "roster.toml.2",
        "table.toml",
    ]


def test_a_link_holding_the_same_text_is_still_asked_about(tmp_path: Path) -> None:
    """A link where a file goes is replaced by the file only when asked, though what it
    points to holds what would be written; the link is kept as it was."""
    table, roster = small_set()
    elsewhere = tmp_path / "elsewhere"
    write_files(elsewhere, "trench-crusade", table, roster)
    folder = tmp_path / "tables"
    folder.mkdir()
    (folder / "roster.toml").symlink_to(elsewhere / "roster.toml")
    with pytest.raises(SetupError) as err:
        write_files(folder, "trench-crusade", table, roster, inside=folder)
    assert err.value.message.startswith(f"roster.toml in {folder}: replace it?")
    write_files(folder, "trench-crusade", table, roster, inside=folder, replace=True)
    assert (folder / "roster.toml.1").is_symlink() and not (folder / "roster.toml").is_symlink()


# -- end to end -----------------------------------------------------------------------------


def test_set_up_from_a_picture_then_referee_it(scene, tmp_path: Path) -> None:
    """Corners clicked, anchors proposed, the 12 models assigned, the files written and
    loaded, and the picture run through detection as ``tablesight detect`` does: every
    model where it was placed."""
    camera = scene.camera.calibrated()
    proposal = propose_anchors(TABLE_IN, "4x4_50", scene.found, scene.corners_px, camera)
    listed = seen_markers(scene.found, [a.id for a in proposal.anchors], proposal.pose)
    forms = {entry.marker: model_form(entry) for entry, _ in scene.models}
    done = assign("necromunda", proposal.table, [forms[m.id] for m in listed])
    setup = write_files(tmp_path, "necromunda", proposal.table, done.roster, camera=camera).load()

    found = MarkerDetector(setup.table.table.dictionary, scene.camera.size).detect(scene.frame)
    pose = TablePose.solve(found, setup.table, setup.camera)
    assert pose.healthy
    where = {m.id: m for m in locate(found, setup.table, pose, setup.roster).models}
    errors = [
        math.dist(where[entry.id].pose.xy, (base_centre(entry, placed)))
        for entry, placed in scene.models
    ]
    assert len(errors) == 12
    assert float(np.median(errors)) <= 0.02
    assert max(errors) <= 0.05


def base_centre(entry, placed: PlacedMarker) -> tuple[float, float]:
    """The base's centre: the marker's less its offset turned by the heading."""
    a = math.radians(placed.heading_deg)
    fx, fy = (v / MM_PER_IN for v in entry.marker_offset_mm)
    return (
        placed.x_in - fx * math.cos(a) + fy * math.sin(a),
        placed.y_in - fx * math.sin(a) - fy * math.cos(a),
    )


@pytest.mark.slow
def test_set_up_with_the_camera_calibrated_by_capture(scene, tmp_path: Path) -> None:
    """The same with camera.toml from 14 board pictures by the scene's own lens."""
    capture = CalibrationCapture(BOARD)
    for image, _ in random_charuco_views(BOARD.board(), 14, 1920, 1080, 1, lens=scene.camera):
        capture.offer(image)
    camera = capture.calibrate().camera
    proposal = propose_anchors(TABLE_IN, "4x4_50", scene.found, scene.corners_px, camera)
    assert proposal.healthy
    forms = [model_form(entry) for entry, _ in scene.models]
    done = assign("necromunda", proposal.table, forms)
    setup = write_files(tmp_path, "necromunda", proposal.table, done.roster, camera=camera).load()
    pose = TablePose.solve(scene.found, setup.table, setup.camera)
    where = {m.id: m for m in locate(scene.found, setup.table, pose, setup.roster).models}
    errors = [math.dist(where[e.id].pose.xy, base_centre(e, p)) for e, p in scene.models]
    assert len(errors) == 12 and float(np.median(errors)) <= 0.02
