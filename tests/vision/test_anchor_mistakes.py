"""Anchors described wrong in table.toml are found and named, never silently trusted.

A rendered 1920 x 1080 photo of a 44 x 30 in table with four 40 mm anchors and twenty
25 mm markers at random places; ground truth is where the renderer put each marker. Each
test describes the anchors with one mistake (the picture stays the same), solves the pose
and maps the markers: either the positions are as good as with a correct table.toml and
the anchor is named, or the pose is refused naming it.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from tablesight.calibration.camera import CameraModel
from tablesight.calibration.table import Anchor, TableKeys, TableSpec
from tablesight.rig.synth import PinholeCamera, PlacedMarker, Shot, render_table
from tablesight.vision.aruco import MarkerDetections, MarkerDetector
from tablesight.vision.locate import marker_poses
from tablesight.vision.sources import Frame
from tablesight.vision.tablepose import TablePose

AT = [(1.5, 1.5), (42.5, 1.5), (42.5, 28.5), (1.5, 28.5)]
CAMERA = PinholeCamera.looking_at((22, -14, 30), (22, 14, 0))
RNG = np.random.default_rng(5)
#: 25 mm markers on a 5 x 4 grid over the table, each nudged and turned at random.
MODELS = [
    PlacedMarker(10 + k, 25.0, x + dx, y + dy, 0.0, float(h))
    for k, ((x, y), (dx, dy), h) in enumerate(
        zip(
            [(x, y) for y in (6.0, 12.0, 18.0, 24.0) for x in (7.0, 14.5, 22.0, 29.5, 37.0)],
            RNG.uniform(-1.5, 1.5, (20, 2)).tolist(),
            RNG.uniform(0, 360, 20),
            strict=True,
        )
    )
]
#: The accuracy goal for a model's centre (median, inches).
GOAL_IN = 0.02


def table(anchors: list[tuple[float, float, float]]) -> TableSpec:
    """table.toml with these anchors (x, y, heading), ids 0, 1, ..."""
    return TableSpec(
        table=TableKeys(width_in=44, depth_in=30, dictionary="4x4_50"),
        anchors=[
            Anchor(id=i, x_in=x, y_in=y, size_mm=40, heading=h)
            for i, (x, y, h) in enumerate(anchors)
        ],
    )


def photo(anchor_headings: list[float], camera: PinholeCamera = CAMERA) -> MarkerDetections:
    """The anchors at their true places, stuck down at these headings, and the models."""
    anchors = [
        PlacedMarker(i, 40.0, x, y, 0.0, h)
        for i, ((x, y), h) in enumerate(zip(AT, anchor_headings, strict=True))
    ]
    image = render_table(camera, (44, 30), anchors + MODELS, shot=Shot(seed=3))
    return MarkerDetector("4x4_50").detect(image)


@pytest.fixture(scope="module")
def glued() -> dict[str, MarkerDetections]:
    """Photos: every anchor at heading 0, at 90, and anchor 3 upside down."""
    return {
        "0": photo([0.0] * 4),
        "90": photo([90.0] * 4),
        "3 at 180": photo([0.0, 0.0, 0.0, 180.0]),
    }


LENS = CameraModel((1920, 1080), CAMERA.camera_matrix, CAMERA.dist_coeffs)
CORRECT = [(x, y, 0.0) for x, y in AT]


def median_error_in(found: MarkerDetections, pose: TablePose) -> float:
    """The models' markers' median distance from where the renderer put them."""
    at = {m.id: m for m in marker_poses(found, pose, {})}
    errors = [math.dist(at[m.id].pose.xy, (m.x_in, m.y_in)) for m in MODELS if m.id in at]
    assert len(errors) == len(MODELS)
    return float(np.median(errors))


def test_a_correct_table_has_no_warnings(glued):
    pose = TablePose.solve(glued["0"], table(CORRECT), LENS)
    assert pose.healthy and pose.warnings == () and pose.left_out == () and pose.turned == ()
    assert pose.anchors_used == (0, 1, 2, 3)
    assert median_error_in(glued["0"], pose) < GOAL_IN
    assert pose.reprojection_px < 2.0 and pose.reprojection_in < 0.1


def test_anchors_stated_at_0_but_glued_at_90_are_turned_back(glued):
    pose = TablePose.solve(glued["90"], table(CORRECT), LENS)
    assert pose.healthy and pose.anchors_used == (0, 1, 2, 3)
    assert pose.turned == ((0, 90), (1, 90), (2, 90), (3, 90))
    assert pose.warnings[0] == (
        "anchor 0 is turned 90 deg counterclockwise from table.toml's heading 0 "
        "(it lies at heading 90)"
    )
    assert median_error_in(glued["90"], pose) < GOAL_IN
    assert pose.reprojection_px < 2.0


def test_one_anchor_upside_down_is_turned_back(glued):
    pose = TablePose.solve(glued["3 at 180"], table(CORRECT), LENS)
    assert pose.healthy and pose.turned == ((3, 180),)
    assert pose.warnings == (
        "anchor 3 is turned 180 deg from table.toml's heading 0 (it lies at heading 180)",
    )
    assert median_error_in(glued["3 at 180"], pose) < GOAL_IN


@pytest.mark.parametrize("wrong", [0, 3])
def test_an_anchor_stated_1_in_off_is_left_out_and_named(glued, wrong):
    stated = list(CORRECT)
    x, y, h = stated[wrong]
    stated[wrong] = (x + 1.0, y, h)
    pose = TablePose.solve(glued["0"], table(stated), LENS)
    assert pose.healthy
    assert [a for a, _ in pose.left_out] == [wrong]
    assert pose.left_out[0][1] == pytest.approx(1.0, abs=0.15)
    assert pose.warnings == (
        f"anchor {wrong} is {pose.left_out[0][1]:.1f} in from where table.toml puts it; left out",
    )
    assert wrong not in pose.anchors_used
    assert median_error_in(glued["0"], pose) < GOAL_IN


def test_an_anchor_stated_off_among_three_is_refused_naming_it(glued):
    # three anchors seen: which one is wrong is not sure enough to leave it out
    seen = glued["0"].ids != 3
    three = MarkerDetections(glued["0"].ids[seen], glued["0"].corners_px[seen])
    stated = [*CORRECT[:2], (41.5, 28.5, 0.0)]
    pose = TablePose.solve(three, table(stated), LENS)
    assert not pose.healthy
    assert pose.problem.startswith("anchor 2 is ")
    assert "in from where table.toml puts it" in pose.problem


def test_two_anchors_stated_off_together_are_refused(glued):
    stated = [(2.5, 1.5, 0.0), *CORRECT[1:3], (2.5, 28.5, 0.0)]
    pose = TablePose.solve(glued["0"], table(stated), LENS)
    assert not pose.healthy
    assert pose.problem.startswith("the anchors disagree")


def test_without_intrinsics_the_turns_are_found_too():
    flat = replace(CAMERA, dist=(0.0, 0.0, 0.0, 0.0, 0.0))
    found = photo([90.0, 90.0, 90.0, 270.0], flat)
    pose = TablePose.solve(found, table(CORRECT), None)
    assert pose.healthy and pose.homography is not None
    assert pose.turned == ((0, 90), (1, 90), (2, 90), (3, 270))
    assert median_error_in(found, pose) < GOAL_IN


def test_an_unhealthy_pose_holds_the_referee(footage, two_model_table, two_model_referee):
    """A move made while the pose is not trusted is not judged from it: the session says
    once that it holds judging and why, and judges the move once the pose is sound."""
    _, pics = footage
    session, observer = two_model_referee.session, two_model_referee.observer
    # anchors 0 and 3 both stated 1 in to the right of where they are: two against two
    anchors = list(two_model_table.anchors)
    for k in (0, 3):
        anchors[k] = anchors[k].model_copy(update={"x_in": anchors[k].x_in + 1.0})
    misdescribed = two_model_table.model_copy(update={"anchors": anchors})
    events, held = [], []
    # 45 frames (1.5 s) described wrong: held once the doubt has lasted POSE_HOLD_S (1 s)
    for k, name in enumerate(["start"] * 15 + ["moved"] * 45 + ["moved"] * 15):
        observer.table = misdescribed if 15 <= k < 60 else two_model_table
        if k == 14:
            events += session.start_phase(k / 30, k)
        observation = observer.observe(Frame(pics[name], k / 30, k))
        if 15 <= k < 60:
            held.append(observation)
        events += session.observe(observation)
    # every held frame: the table seen, its pose not trusted, nobody moved
    assert all(o.table_seen and o.health is not None and not o.health.healthy for o in held)
    assert all(not any(m.news for m in o.models) for o in held)
    assert held[0].pose_problem.startswith("the anchors disagree")
    got = [(e.kind, e.model) for e in events]
    assert got == [
        ("phase_started", None),
        ("judging_held", None),
        ("judging_resumed", None),
        ("model_moved", "ganger"),
        ("violation", "ganger"),
    ]
    assert events[1].message == (
        f"moves are not judged while the table pose is not trusted: {held[0].pose_problem}"
    )
    # said once the doubt lasted 1 s (frame 15 + 30), resumed at the first sound frame
    assert (events[1].frame, events[2].frame) == (45, 60)
    # judged from the sound pose: the ganger moved 7 in (the renderer's truth), over its 6
    assert events[3].measured == pytest.approx(7.0, abs=0.02)
