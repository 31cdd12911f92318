"""``tablesight detect`` says how far the table pose is trusted: anchors found turned are
named, and a pose it cannot trust is refused in one line naming the anchors."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

from tablesight.rig.synth import PinholeCamera, PlacedMarker, Shot, render_table

AT = [(0, 1.5, 1.5), (1, 42.5, 1.5), (2, 42.5, 28.5), (3, 1.5, 28.5)]
TABLE = '[table]\nwidth_in = 44\ndepth_in = 30\ndictionary = "4x4_50"\n'


def anchors(stated: list[tuple[int, float, float, float]]) -> str:
    return "".join(
        f"\n[[anchors]]\nid = {i}\nx_in = {x}\ny_in = {y}\nsize_mm = 40\nheading = {h}\n"
        for i, x, y, h in stated
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("health")
    cam = PinholeCamera.looking_at((22.0, -14.0, 30.0), (22.0, 14.0, 0.0))
    # every anchor stuck down at heading 90; a marker at (30, 18)
    placed = [PlacedMarker(i, 40.0, x, y, 0.0, 90.0) for i, x, y in AT]
    placed.append(PlacedMarker(10, 25.0, 30.0, 18.0, 0.0, 0.0))
    cv2.imwrite(str(d / "photo.png"), render_table(cam, (44, 30), placed, shot=Shot(seed=4)))
    (d / "at0.toml").write_text(TABLE + anchors([(i, x, y, 0.0) for i, x, y in AT]))
    two_off = [(i, x + (1.0 if i in (0, 3) else 0.0), y, 90.0) for i, x, y in AT]
    (d / "two_off.toml").write_text(TABLE + anchors(two_off))
    (d / "camera.toml").write_text(cam.calibrated().to_toml())
    return {p.name: p for p in d.iterdir()}


def test_detect_names_anchors_turned_and_finds_the_marker(files, tablesight):
    args = ["detect", str(files["photo.png"]), "--table", str(files["at0.toml"])]
    args += ["--camera", str(files["camera.toml"])]
    result = tablesight(*args, "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    (marker,) = [m for m in out["markers"] if m["id"] == 10]
    assert abs(marker["x"] - 30.0) < 0.02 and abs(marker["y"] - 18.0) < 0.02
    health = out["health"]
    assert health["healthy"] and health["turned"] == [
        {"anchor": i, "turned_deg": 90} for i in range(4)
    ]
    text = tablesight(*args)
    assert text.returncode == 0, text.stderr
    assert (
        "warning: anchor 2 is turned 90 deg counterclockwise from table.toml's heading 0 "
        "(it lies at heading 90)"
    ) in text.stdout.splitlines()


def test_detect_refuses_a_pose_it_cannot_trust(files, tablesight):
    result = tablesight(
        "detect",
        str(files["photo.png"]),
        "--table",
        str(files["two_off.toml"]),
        "--camera",
        str(files["camera.toml"]),
    )
    assert result.returncode == 2 and result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(
        f"tablesight: {files['photo.png']}: the table pose is not trusted: the anchors disagree"
    )
