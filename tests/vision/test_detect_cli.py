"""``tablesight detect --table``, end to end on a rendered photo with known truth."""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from tablesight.rig.synth import PinholeCamera, PlacedMarker, Shot, render_table

TABLE = """
[table]
width_in = 44
depth_in = 30
dictionary = "4x4_50"
{anchors}
"""
ANCHORS = [(0, 1.5, 1.5), (1, 42.5, 1.5), (2, 42.5, 28.5), (3, 1.5, 28.5)]
ROSTER = """
[[models]]
id = "ganger"
side = "goliath"
base = { shape = "round", diameter_mm = 32 }
movement = 5
marker = 10
marker_size_mm = 25
marker_height_mm = 25.4
marker_offset_mm = [6, -4]
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("detect")
    cam = PinholeCamera.looking_at((22.0, -14.0, 30.0), (22.0, 14.0, 0.0))
    anchors = [PlacedMarker(i, 40.0, x, y, 0.0, 0.0) for i, x, y in ANCHORS]
    # ganger: base centre (30, 18), heading 120; marker on a 1 in stand, offset [6, -4] mm
    a = math.radians(120.0)
    f, left = 6 / 25.4, -4 / 25.4
    mx, my = 30 + f * math.cos(a) - left * math.sin(a), 18 + f * math.sin(a) + left * math.cos(a)
    ganger = PlacedMarker(10, 25.0, mx, my, 1.0, 120.0)
    cv2.imwrite(
        str(d / "photo.png"), render_table(cam, (44, 30), [*anchors, ganger], shot=Shot(seed=4))
    )
    entries = "".join(
        f"\n[[anchors]]\nid = {i}\nx_in = {x}\ny_in = {y}\nsize_mm = 40\n" for i, x, y in ANCHORS
    )
    (d / "table.toml").write_text(TABLE.format(anchors=entries))
    (d / "three.toml").write_text(TABLE.format(anchors=entries.rsplit("[[anchors]]", 1)[0]))
    (d / "roster.toml").write_text(ROSTER)
    (d / "camera.toml").write_text(cam.calibrated().to_toml())
    return {
        name: d / name
        for name in ("photo.png", "table.toml", "three.toml", "roster.toml", "camera.toml")
    }


def test_detect_finds_the_model_where_it_was_put(setup, tablesight):
    result = tablesight(
        "detect",
        str(setup["photo.png"]),
        "--table",
        str(setup["table.toml"]),
        "--camera",
        str(setup["camera.toml"]),
        "--roster",
        str(setup["roster.toml"]),
        "--json",
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    ganger = out["models"][0]
    assert ganger["id"] == "ganger"
    assert math.dist((ganger["x"], ganger["y"]), (30.0, 18.0)) < 0.02
    assert abs((ganger["heading"] - 120.0 + 180) % 360 - 180) < 1.0
    assert out["pose"]["anchors_used"] == [0, 1, 2, 3] and out["pose"]["height_corrected"]
    assert out["missing"] == [] and out["unknown_markers"] == []
    assert np.asarray(out["markers"][0]["corners_px"]).shape == (4, 2)


def test_without_camera_heights_are_not_corrected(setup, tablesight):
    result = tablesight(
        "detect",
        str(setup["photo.png"]),
        "--table",
        str(setup["table.toml"]),
        "--roster",
        str(setup["roster.toml"]),
        "--json",
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["pose"]["height_corrected"] is False
    # the marker 1 in up is mapped as if flat: off by parallax, far more than 0.02 in
    ganger = out["models"][0]
    assert math.dist((ganger["x"], ganger["y"]), (30.0, 18.0)) > 0.2


def test_too_few_anchors_without_camera(setup, tablesight):
    result = tablesight("detect", str(setup["photo.png"]), "--table", str(setup["three.toml"]))
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"tablesight: {setup['photo.png']}: 3 of 3 anchors visible (0, 1, 2); "
        "4 needed without camera intrinsics"
    )
