"""The table pose: anchors to a camera pose, pixels to inches and back, parallax."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from tablesight.calibration.camera import CameraModel
from tablesight.calibration.table import Anchor, TableSpec, marker_corners
from tablesight.rules.errors import InputError
from tablesight.vision.aruco import MarkerDetections
from tablesight.vision.tablepose import PoseError, TablePose


@pytest.fixture
def table(tmp_path: Path, hand_lens) -> TableSpec:
    path = tmp_path / "table.toml"
    path.write_text(hand_lens.table_toml)
    return TableSpec.from_toml(path)


def seen(
    lens: SimpleNamespace,
    table: TableSpec,
    r: np.ndarray,
    t: np.ndarray,
    extra: dict[int, np.ndarray],
    dist: np.ndarray | None = None,
) -> MarkerDetections:
    """What ``lens`` (``hand_lens``) sees of the anchors and ``extra`` from ``r, t``; its
    own distortion unless ``dist`` is given."""
    corners = {**table.anchor_corners_in(), **extra}
    ids = sorted(corners)
    dist = lens.dist if dist is None else dist
    px = np.stack([lens.project(corners[i], r, t, dist) for i in ids])
    return MarkerDetections(np.asarray(ids), px)


def test_marker_corners_in_printed_order():
    # heading 90: the top edge faces +y; seen from above, top-left is at (-s/2, +s/2)
    c = marker_corners(10.0, 5.0, 0.0, 2.0, 90.0)
    assert np.allclose(c[:, :2], [[9, 6], [11, 6], [11, 4], [9, 4]])


def test_pose_from_four_anchors_maps_raised_markers_exactly(table, hand_lens):
    r, t = hand_lens.look_at(np.array([22.0, -18.0, 32.0]), np.array([22.0, 15.0, 0.0]))
    raised = marker_corners(30.0, 20.0, 1.5, 20 / 25.4, 33.0)
    det = seen(hand_lens, table, r, t, {7: raised})
    pose = TablePose.solve(det, table, CameraModel((1920, 1080), hand_lens.K, hand_lens.dist))
    assert pose.anchors_used == (0, 1, 2, 3) and pose.reprojection_px < 1e-3
    got = pose.pixels_to_table(det.by_id()[7], 1.5)
    assert np.allclose(got, raised[:, :2], atol=1e-6)
    assert np.allclose(pose.table_to_pixels(raised), det.by_id()[7], atol=1e-6)


def test_one_anchor_is_enough_with_intrinsics(table, hand_lens):
    r, t = hand_lens.look_down((22.0, 15.0, 30.0))
    det = seen(hand_lens, table, r, t, {7: marker_corners(20.0, 12.0, 0.0, 0.8, 0.0)})
    only_one = det.select(np.isin(det.ids, [2, 7]))
    pose = TablePose.solve(only_one, table, CameraModel((1920, 1080), hand_lens.K, hand_lens.dist))
    assert pose.anchors_used == (2,)
    centre = pose.pixels_to_table(only_one.by_id()[7]).mean(axis=0)
    assert np.allclose(centre, [20.0, 12.0], atol=0.01)


def test_homography_needs_four_anchors_and_ignores_height(table, hand_lens):
    # A lens without distortion: this is about parallax alone.
    r, t = hand_lens.look_down((22.0, 15.0, 40.0))
    none = np.zeros(5)
    with pytest.raises(PoseError, match="3 of 4 anchors visible \\(0, 1, 2\\); 4 needed"):
        TablePose.solve(
            seen(hand_lens, table, r, t, {}).select(np.array([True, True, True, False])), table
        )
    # The example: a marker 1 in up and 20 in off-axis under a camera 40 in high
    # lands like a table point at 20 * 40 / (40 - 1) = 20.513 in: 0.513 in off.
    raised = marker_corners(42.0, 15.0, 1.0, 0.5, 0.0)
    det = seen(hand_lens, table, r, t, {7: raised}, none)
    flat = TablePose.solve(det, table)
    assert not flat.height_corrected
    x_flat = flat.pixels_to_table(det.by_id()[7]).mean(axis=0)[0]
    assert x_flat - 22.0 == pytest.approx(20.0 * 40.0 / 39.0, abs=0.01)
    exact = TablePose.solve(det, table, CameraModel((1920, 1080), hand_lens.K, none))
    assert exact.pixels_to_table(det.by_id()[7], 1.0).mean(axis=0)[0] == pytest.approx(42.0)


def test_pose_refuses_a_camera_below_the_table(table, hand_lens):
    # A camera 30 in under the table looking up (as if the anchors were seen through it).
    r = np.eye(3)
    t = -r @ np.array([22.0, 15.0, -30.0])
    det = seen(hand_lens, table, r, t, {})
    with pytest.raises(PoseError, match="from below"):
        TablePose.solve(det, table, CameraModel((1920, 1080), hand_lens.K, hand_lens.dist))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('dictionary = "4x4_50"', 'dictionary = "4x4_49"'), "table.dictionary: unknown ArUco"),
        (("id = 3", "id = 2"), "anchors[3].id: anchor ids must differ, got 2 twice"),
        (("width_in = 44", "width = 44"), "table.width_in: required key is missing"),
        (("size_mm = 40\nheading = 90", "size_mm = -4"), "anchors[1].size_mm: Input should be"),
        (
            ("[table]", "[table]\nlength_in = 3"),
            "table.length_in: unknown key; allowed keys: depth",
        ),
    ],
)
def test_bad_table_file(tmp_path, change, message, hand_lens):
    path = tmp_path / "table.toml"
    path.write_text(hand_lens.table_toml.replace(*change))
    with pytest.raises(InputError) as err:
        TableSpec.from_toml(path)
    assert str(err.value).startswith(f"{path}: {message}")


def test_more_anchors_fit_better(table, hand_lens):
    # The same camera sees 4 or 8 anchors with 0.3 px of corner noise; the table point
    # (22, 15) is mapped from a fixed pixel. Over 40 noisy draws, 8 anchors err less.
    extra = [
        Anchor(id=4 + i, x_in=x, y_in=y, size_mm=40)
        for i, (x, y) in enumerate([(22, 1), (43, 15), (22, 29), (1, 15)])
    ]
    eight = TableSpec(table=table.table, anchors=[*table.anchors, *extra])
    r, t = hand_lens.look_at(np.array([22.0, -18.0, 32.0]), np.array([22.0, 15.0, 0.0]))
    cam = CameraModel((1920, 1080), hand_lens.K, hand_lens.dist)
    probe = hand_lens.project(np.array([[30.0, 20.0, 0.0]]), r, t, hand_lens.dist)
    rng = np.random.default_rng(0)
    errors: dict[int, list[float]] = {4: [], 8: []}
    for _ in range(40):
        det = seen(hand_lens, eight, r, t, {})
        noisy = MarkerDetections(det.ids, det.corners_px + rng.normal(0, 0.3, det.corners_px.shape))
        for spec in (table, eight):
            pose = TablePose.solve(noisy, spec, cam)
            got = pose.pixels_to_table(probe)[0]
            errors[len(spec.anchors)].append(float(np.hypot(got[0] - 30.0, got[1] - 20.0)))
    assert np.mean(errors[8]) < 0.8 * np.mean(errors[4])
