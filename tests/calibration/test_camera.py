"""Camera calibration, on OpenCV's own real ChArUco photos and through the CLI."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from tablesight.calibration.camera import (
    BoardSpec,
    CalibrationError,
    CameraModel,
    calibrate,
    read_views,
)
from tablesight.rules.errors import InputError

# OpenCV's sample calibration from exactly these four photos (opencv_reference_calibration.yml)
REF_FX, REF_FY, REF_CX, REF_CY = 452.5107, 456.7671, 317.7030, 277.7516
BOARD = BoardSpec(squares_x=5, squares_y=7, square_mm=40, marker_mm=20, dictionary="6x6_250")


def photos(shared: Path) -> list[Path]:
    return sorted((shared / "real-photos").glob("img_0*.jpg"))


def test_real_photos_calibrate_like_opencv(shared_dir: Path) -> None:
    result = calibrate(read_views(photos(shared_dir)), BOARD)
    cam = result.camera
    assert len(result.used) == 4 and result.rejected == {}
    assert abs(cam.fx - REF_FX) / REF_FX < 0.02
    assert abs(cam.fy - REF_FY) / REF_FY < 0.02
    assert abs(cam.principal_point[0] - REF_CX) < 5.0
    assert abs(cam.principal_point[1] - REF_CY) < 5.0
    assert cam.rms_px is not None and cam.rms_px < 0.3
    # Four photos of a small board near the middle: it says the frame was poorly covered.
    assert result.coverage < 0.6 and any("covered only" in w for w in result.warnings)


def test_duplicate_and_blurry_views_are_refused(shared_dir: Path) -> None:
    import cv2

    first = cv2.imread(str(photos(shared_dir)[0]))
    blurry = cv2.GaussianBlur(first, (0, 0), 1.3)  # still 17 corners found, sharpness 155
    views = [(str(p), cv2.imread(str(p))) for p in photos(shared_dir)]
    views += [("again", first.copy()), ("blurry", blurry)]
    result = calibrate(views, BOARD)
    assert result.rejected["again"] == "a duplicate of an earlier view"
    assert result.rejected["blurry"].startswith("blurry (sharpness")
    assert len(result.used) == 4


def test_too_few_views(shared_dir: Path) -> None:
    with pytest.raises(CalibrationError, match="need at least 3 usable board views, got 2"):
        calibrate(read_views(photos(shared_dir)[:2]), BOARD)


def test_cli_writes_camera_toml_that_reads_back(
    shared_dir: Path, tmp_path: Path, tablesight
) -> None:
    board = tmp_path / "board.toml"
    board.write_text(
        'squares_x = 5\nsquares_y = 7\nsquare_mm = 40\nmarker_mm = 20\ndictionary = "6x6_250"\n'
    )
    out = tmp_path / "camera.toml"
    result = tablesight(
        "calibrate", "camera", *map(str, photos(shared_dir)), "--board", str(board), "-o", str(out)
    )
    assert result.returncode == 0, result.stderr
    assert "RMS reprojection error 0.1" in result.stdout
    data = tomllib.loads(out.read_text())
    assert data["image_size"] == [640, 480] and len(data["dist_coeffs"]) == 5
    cam = CameraModel.from_toml(out)
    assert abs(cam.fx - REF_FX) / REF_FX < 0.02
    assert cam.board == BOARD


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("squares_x = 5\nsquares_y = 7\nsquare_mm = 40\n", "marker_mm: required key is missing"),
        (
            'squares_x = 5\nsquares_y = 7\nsquare_mm = 40\nmarker_mm = 20\ndictionary = "9x9"\n',
            "dictionary: unknown ArUco dictionary '9x9'; valid names: ",
        ),
        (
            "squares_x = 5\nsquares_y = 7\nsquare_mm = 40\nmarker_mm = 45\n",
            "marker_mm: expected less than square_mm (40.0), got 45.0",
        ),
    ],
)
def test_bad_board_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "board.toml"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        BoardSpec.from_toml(path)
    assert str(err.value).startswith(f"{path}: {message}")


def test_undistort_inverts_projection() -> None:
    import cv2

    k = np.array([[900.0, 0, 960], [0, 905.0, 540], [0, 0, 1]])
    dist = np.array([-0.2, 0.08, 0.001, -0.0005, 0.0])
    cam = CameraModel((1920, 1080), k, dist)
    rays = np.array([[0.1, -0.2, 1.0], [-0.5, 0.3, 1.0], [0.0, 0.0, 1.0]])
    px, _ = cv2.projectPoints(rays, np.zeros(3), np.zeros(3), k, dist)
    assert np.allclose(cam.undistort(px.reshape(-1, 2)), rays[:, :2], atol=1e-6)


def test_calibrates_from_a_video(shared_dir: Path, tmp_path: Path) -> None:
    import cv2

    video = tmp_path / "board.avi"
    # A lossless codec: with 4 views, JPEG re-compression moves fx by 2%.
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"FFV1"), 2.0, (640, 480))
    for path in photos(shared_dir):
        frame = cv2.imread(str(path))
        for _ in range(3):  # each view held for 3 frames: the repeats are duplicates
            writer.write(frame)
    writer.release()
    result = calibrate(read_views([video], every=1), BOARD)
    assert len(result.used) == 4
    assert sum(why == "a duplicate of an earlier view" for why in result.rejected.values()) == 8
    assert abs(result.camera.fx - REF_FX) / REF_FX < 0.02


def test_a_camera_scaled_to_smaller_pictures_scales_its_intrinsics_not_its_distortion():
    k = np.array([[1400.0, 0.0, 960.0], [0.0, 1380.0, 540.0], [0.0, 0.0, 1.0]])
    dist = np.array([-0.2, 0.05, 0.001, -0.001, 0.0])
    camera = CameraModel((1920, 1080), k, dist, rms_px=0.3)
    half = camera.scaled_to(960, 540)
    assert half.image_size == (960, 540)
    assert half.camera_matrix.tolist() == [[700.0, 0.0, 480.0], [0.0, 690.0, 270.0], [0, 0, 1]]
    assert half.dist_coeffs is camera.dist_coeffs
    # a pixel's ray is the same in the picture and in its scaled copy
    ray = camera.undistort(np.array([[1500.0, 300.0]]))
    assert half.undistort(np.array([[750.0, 150.0]])) == pytest.approx(ray)
    assert camera.scaled_to(1920, 1080) is camera
    with pytest.raises(ValueError, match="expected a picture size, got 0x540"):
        camera.scaled_to(0, 540)
