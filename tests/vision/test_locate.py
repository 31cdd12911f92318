"""Markers to models and terrain: heights, headings, offsets, footprints (by hand)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tablesight.calibration.camera import CameraModel
from tablesight.calibration.roster import load_roster, load_terrain
from tablesight.calibration.table import TableSpec, marker_corners
from tablesight.rules.errors import InputError
from tablesight.vision.aruco import MarkerDetections
from tablesight.vision.locate import locate
from tablesight.vision.tablepose import TablePose

ROSTER = """
[[models]]
id = "ganger"
side = "goliath"
base = { shape = "round", diameter_mm = 32 }
movement = 5
marker = 10
marker_size_mm = 20
marker_height_mm = 4
marker_offset_mm = [10, 5]

[[models]]
id = "absent"
side = "escher"
base = { shape = "oval", length_mm = 60, width_mm = 35 }
movement = 7
marker = 11
marker_size_mm = 20
"""
TERRAIN = """
[[terrain]]
id = "bunker"
marker = 20
marker_size_mm = 30
polygon = [[-1, -1], [2, -1], [2, 1], [-1, 1]]
height = 3
keywords = ["impassable"]
"""


@pytest.fixture
def files(tmp_path: Path, hand_lens) -> tuple[TableSpec, Path, Path]:
    (tmp_path / "table.toml").write_text(hand_lens.table_toml)
    (tmp_path / "roster.toml").write_text(ROSTER)
    (tmp_path / "terrain.toml").write_text(TERRAIN)
    return (
        TableSpec.from_toml(tmp_path / "table.toml"),
        tmp_path / "roster.toml",
        tmp_path / "terrain.toml",
    )


def test_models_and_terrain_where_their_markers_say(files, hand_lens):
    table, roster_path, terrain_path = files
    roster = load_roster(roster_path, {0, 1, 2, 3})
    terrain = load_terrain(terrain_path, {0, 1, 2, 3, 10, 11})
    r, t = hand_lens.look_at(np.array([22.0, -16.0, 30.0]), np.array([22.0, 15.0, 0.0]))
    h = 4 / 25.4
    # the ganger's marker: centre (10, 20) at 4 mm up, facing +y (heading 90)
    corners = {
        **table.anchor_corners_in(),
        10: marker_corners(10.0, 20.0, h, 20 / 25.4, 90.0),
        20: marker_corners(30.0, 8.0, 0.0, 30 / 25.4, 180.0),
        33: marker_corners(25.0, 25.0, 0.0, 20 / 25.4, 0.0),  # not in any file
    }
    ids = sorted(corners)
    det = MarkerDetections(
        np.asarray(ids),
        np.stack([hand_lens.project(corners[i], r, t, hand_lens.dist) for i in ids]),
    )
    pose = TablePose.solve(det, table, CameraModel((1920, 1080), hand_lens.K, hand_lens.dist))
    found = locate(det, table, pose, roster, terrain)
    ganger = found.models[0]
    # offset [10 mm forward, 5 mm left] turned by 90 degrees is (-5, +10) mm:
    # base = marker - (-5, 10) mm = (10 + 0.19685, 20 - 0.39370)
    assert (ganger.id, ganger.pose.heading) == ("ganger", pytest.approx(90.0, abs=1e-6))
    assert ganger.pose.xy == (
        pytest.approx(10.19685, abs=1e-5),
        pytest.approx(19.60630, abs=1e-5),
    )
    # bunker polygon (-1..2, -1..1) in the marker's frame, turned 180 degrees, at (30, 8):
    # (u, v) -> (30 - u, 8 - v)
    bunker = found.terrain[0]
    assert np.allclose(bunker.polygon, [(31, 9), (28, 9), (28, 7), (31, 7)], atol=1e-4)
    assert found.unknown_markers == [33]
    assert found.missing == ["absent"]
    marker = {m.id: m for m in found.markers}[10]
    assert (marker.pose.z, marker.pose.x, marker.pose.y) == (
        pytest.approx(h),
        pytest.approx(10.0),
        pytest.approx(20.0),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (ROSTER.replace("marker = 11", "marker = 10"), "models[1].marker: marker 10 is used twice"),
        (ROSTER.replace("marker = 11", "marker = 2"), "models[1].marker: marker 2 is used twice"),
        (ROSTER.replace('shape = "oval"', 'shape = "hex"'), "models[1].base: Input tag 'hex'"),
        (
            ROSTER.replace("marker_size_mm = 20\n", "marker_size_mm = 0\n", 1),
            "models[0].marker_size_mm",
        ),
    ],
)
def test_bad_roster(tmp_path, text, message):
    path = tmp_path / "roster.toml"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        load_roster(path, {0, 1, 2, 3})
    assert str(err.value).startswith(f"{path}: {message}")


def test_heading_convention():
    # A marker whose top edge faces 30 degrees CCW from +x reads heading 30.
    c = marker_corners(0.0, 0.0, 0.0, 1.0, 30.0)
    top = (c[0] + c[1]) / 2
    assert math.degrees(math.atan2(top[1], top[0])) == pytest.approx(30.0)
