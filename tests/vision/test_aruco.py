"""Marker detection: OpenCV's real photo, the detections value, and ``tablesight detect``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tablesight.calibration.dictionaries import DictionaryError, dictionary_id
from tablesight.vision.aruco import MarkerDetections, MarkerDetector

# OpenCV's own tests expect exactly these ids in singlemarkersoriginal.jpg.
OPENCV_IDS = [23, 40, 62, 98, 124, 203]


def test_real_photo_ids(shared_dir: Path) -> None:
    import cv2

    image = cv2.imread(str(shared_dir / "real-photos" / "singlemarkersoriginal.jpg"))
    found = MarkerDetector("6x6_250").detect(image)
    assert sorted(found.ids.tolist()) == OPENCV_IDS
    # each side measured by hand on the photo is 30-44 px
    assert found.side_px.min() > 29 and found.side_px.max() < 45


def test_cli_lists_markers_in_pixels(shared_dir: Path, tablesight) -> None:
    photo = shared_dir / "real-photos" / "singlemarkersoriginal.jpg"
    result = tablesight("detect", str(photo), "--dictionary", "6x6_250", "--json")
    assert result.returncode == 0, result.stderr
    markers = json.loads(result.stdout)["markers"]
    assert sorted(m["id"] for m in markers) == OPENCV_IDS
    for m in markers:
        corners = np.asarray(m["corners_px"])
        assert corners.shape == (4, 2)
        assert np.allclose(corners.mean(axis=0), m["center_px"], atol=0.01)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.jpg", "--dictionary", "6x6_250"], "missing.jpg: no such file"),
        (["{readme}", "--dictionary", "6x6_250"], "{readme}: not an image OpenCV can read"),
        (["{photo}"], "detect: give --table table.toml, or --dictionary to list markers"),
        (["{photo}", "--dictionary", "7x7_9"], "unknown ArUco dictionary '7x7_9'"),
    ],
)
def test_cli_errors_are_one_line(
    shared_dir: Path, args: list[str], message: str, tablesight
) -> None:
    names = {
        "readme": str(shared_dir / "real-photos" / "README.md"),
        "photo": str(shared_dir / "real-photos" / "singlemarkersoriginal.jpg"),
    }
    result = tablesight("detect", *[a.format(**names) for a in args])
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert message.format(**names) in result.stderr


def test_detections_check_their_shapes() -> None:
    with pytest.raises(ValueError, match="ids must be \\(N,\\) and corners_px \\(N, 4, 2\\)"):
        MarkerDetections(np.zeros(2, dtype=int), np.zeros((3, 4, 2)))
    # OpenCV 4.x gave ids as (N, 1); 5.x gives (N,): both are read the same
    corners = [np.zeros((1, 4, 2)), np.ones((1, 4, 2))]
    assert MarkerDetections.from_aruco(corners, np.array([[3], [4]])).ids.tolist() == [3, 4]
    assert MarkerDetections.from_aruco(corners, np.array([3, 4])).ids.tolist() == [3, 4]
    assert len(MarkerDetections.from_aruco((), None)) == 0


def test_dictionary_names() -> None:
    import cv2

    assert dictionary_id("6x6_250") == cv2.aruco.DICT_6X6_250
    assert dictionary_id("DICT_APRILTAG_36h11") == cv2.aruco.DICT_APRILTAG_36h11
    with pytest.raises(DictionaryError, match="valid names: 4x4_100, 4x4_1000, 4x4_250, 4x4_50"):
        dictionary_id("4x4")
