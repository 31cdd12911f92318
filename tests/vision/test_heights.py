"""Heights from the camera: models on towers and walkways, end to end through ``detect``.

A rendered photo (the synthetic camera 42" up, 12" in front of the near edge, as a tripod
at a table's end stands) with models standing on the table and on pieces 2", 5" and 7"
high. The truth is where each marker was put; nothing is read back from the code under
test. Markers sit at their bases' centres (no offset), 4 mm above the base's underside.
Without heights a marker 5" up would be placed where its ray meets the table, inches
beyond where it stands (see the last test).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import pytest

from tablesight.rig.synth import PinholeCamera, PlacedMarker, Shot, render_table

MM = 25.4
TABLE = """
[table]
width_in = 44
depth_in = 30
dictionary = "4x4_50"
"""
ANCHORS = [(0, 1.5, 1.5), (1, 42.5, 1.5), (2, 42.5, 28.5), (3, 1.5, 28.5)]
#: Terrain: id, marker, where its marker is (centre of a 6 x 6 in top), height, levels.
PIECES = [
    ("tower2", 20, (10.0, 20.0), 2.0, []),
    ("tower5", 21, (22.0, 20.0), 5.0, []),
    ("tower7", 22, (34.0, 20.0), 7.0, []),
    ("walkway", 23, (22.0, 9.0), 6.0, [3.0]),
]
#: Models: id, marker, base centre, heading, height its base stands at, what it is on.
MODELS = [
    ("ground", 10, (6.0, 8.0), 30.0, 0.0, "table"),
    ("on2", 11, (11.5, 21.0), 90.0, 2.0, "tower2"),
    ("on5", 12, (23.0, 18.5), 200.0, 5.0, "tower5"),
    ("on7", 13, (35.5, 21.5), 315.0, 7.0, "tower7"),
    ("deck", 14, (20.5, 8.0), 0.0, 3.0, "walkway"),
    ("floating", 15, (38.0, 9.0), 45.0, 3.5, None),  # held 3.5 in up: no piece there
]
MARKER_MM = 20.0
LIFT_MM = 4.0  # the marker face above the base's underside


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("heights")
    cam = PinholeCamera.looking_at((22.0, -12.0, 42.0), (22.0, 15.0, 0.0))
    markers = [PlacedMarker(i, 40.0, x, y, 0.0, 0.0) for i, x, y in ANCHORS]
    markers += [PlacedMarker(m, 30.0, x, y, h, 0.0) for _, m, (x, y), h, _ in PIECES]
    markers += [
        PlacedMarker(m, MARKER_MM, x, y, z + LIFT_MM / MM, heading)
        for _, m, (x, y), heading, z, _ in MODELS
    ]
    photo = render_table(cam, (44, 30), markers, shot=Shot(seed=11))
    cv2.imwrite(str(d / "photo.png"), photo)
    anchors = "".join(
        f"\n[[anchors]]\nid = {i}\nx_in = {x}\ny_in = {y}\nsize_mm = 40\n" for i, x, y in ANCHORS
    )
    (d / "table.toml").write_text(TABLE + anchors)
    (d / "terrain.toml").write_text(
        "".join(
            f'[[terrain]]\nid = "{pid}"\nmarker = {m}\nmarker_size_mm = 30\n'
            f"marker_height_mm = {h * MM}\nheight = {h}\nlevels = {levels}\n"
            "polygon = [[-3, -3], [3, -3], [3, 3], [-3, 3]]\n"
            'keywords = ["climbable"]\n\n'
            for pid, m, _, h, levels in PIECES
        )
    )
    (d / "roster.toml").write_text(
        "".join(
            f'[[models]]\nid = "{mid}"\nside = "red"\nbase = {{ shape = "round", '
            f"diameter_mm = 32 }}\nmovement = 8\nmarker = {m}\nmarker_size_mm = {MARKER_MM}\n"
            f"marker_height_mm = {LIFT_MM}\n\n"
            for mid, m, *_ in MODELS
        )
    )
    (d / "camera.toml").write_text(cam.calibrated().to_toml())
    return {
        n: d / n for n in ("photo.png", "table.toml", "terrain.toml", "roster.toml", "camera.toml")
    }


def detect(table: dict[str, Path], tablesight, *extra: str) -> dict:
    result = tablesight(
        "detect",
        str(table["photo.png"]),
        "--table",
        str(table["table.toml"]),
        "--roster",
        str(table["roster.toml"]),
        "--terrain",
        str(table["terrain.toml"]),
        "--json",
        *extra,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_models_on_towers_are_placed_where_they_stand(table, tablesight):
    out = detect(table, tablesight, "--camera", str(table["camera.toml"]))
    found = {m["id"]: m for m in out["models"]}
    assert sorted(found) == sorted(mid for mid, *_ in MODELS)
    for mid, _, (x, y), heading, z, on in MODELS:
        model = found[mid]
        assert abs(model["z_measured"] - z) < 0.5, (mid, model)
        assert model["on"] == on, (mid, model)
        if on:  # on a level: placed on that plane, exactly at its height
            assert math.dist((model["x"], model["y"]), (x, y)) < 0.1, (mid, model)
            assert model["z"] == pytest.approx(z)
        else:  # on none: at the measured height, which may be a little off, and said so
            assert model["z"] == pytest.approx(model["z_measured"], abs=1e-3)
            assert math.dist((model["x"], model["y"]), (x, y)) < 0.3, (mid, model)
        assert abs((model["heading"] - heading + 180) % 360 - 180) < 1.5


def test_without_intrinsics_heights_are_not_measured(table, tablesight):
    out = detect(table, tablesight)
    found = {m["id"]: m for m in out["models"]}
    # every model on the table plane, heights unknown; one 5 in up is far from where it is
    assert {m["on"] for m in found.values()} == {"table"}
    assert {m["z_measured"] for m in found.values()} == {None}
    assert math.dist((found["on5"]["x"], found["on5"]["y"]), (23.0, 18.5)) > 2.0
