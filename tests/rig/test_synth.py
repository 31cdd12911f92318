"""The synthetic camera against numbers computed independently of it.

Geometry is checked with a pinhole + distortion model written out here, rendered pictures are
checked with OpenCV's own detectors (ArUco, ChArUco, calibrateCamera), and parallax with the
similar-triangles formula done by hand.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

import cv2
import numpy as np
import pytest

from tablesight.rig.charuco import (
    board_corners_in,
    board_on_table,
    random_charuco_views,
    render_charuco,
)
from tablesight.rig.synth import (
    CLEAN_SHOT,
    INK_BGR,
    MM_PER_IN,
    PAPER_BGR,
    PinholeCamera,
    PlacedMarker,
    Shot,
    marker_cells,
    render_table,
)

DICT = cv2.aruco.DICT_4X4_50
# An overhead webcam a little behind the near long edge of a 44 x 30 in table.
CAMERA = PinholeCamera.looking_at((22.0, -10.0, 32.0), (22.0, 14.0, 0.0))


def _detector(dictionary: int = DICT, subpix: bool = False) -> cv2.aruco.ArucoDetector:
    params = cv2.aruco.DetectorParameters()
    if subpix:
        params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    return cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(dictionary), params)


def _detect(img: np.ndarray, dictionary: int = DICT, subpix: bool = False) -> dict[int, np.ndarray]:
    """id -> (4, 2) corners; fails on a duplicated id."""
    gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    corners, ids, _ = _detector(dictionary, subpix).detectMarkers(gray)
    if ids is None:
        return {}
    ids = np.asarray(ids).ravel()  # 1-D in OpenCV 5, (N, 1) in 4.x
    assert len(set(ids.tolist())) == len(ids), f"duplicate detections {sorted(ids)}"
    return {int(i): c.reshape(4, 2) for i, c in zip(ids, corners, strict=True)}


# ------------------------------------------------------------------------------------------
# Camera geometry


def _rodrigues_by_hand(rvec: np.ndarray) -> np.ndarray:
    theta = float(np.linalg.norm(rvec))
    if theta == 0:
        return np.eye(3)
    k = rvec / theta
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return (
        np.eye(3) * math.cos(theta) + (1 - math.cos(theta)) * np.outer(k, k) + math.sin(theta) * kx
    )


def _project_by_hand(cam: PinholeCamera, pts: np.ndarray) -> np.ndarray:
    """Brown-Conrady, as OpenCV documents it, with nothing from OpenCV."""
    k1, k2, p1, p2, k3 = cam.dist
    xc = pts @ _rodrigues_by_hand(np.array(cam.rvec)).T + np.array(cam.tvec)
    x, y = xc[:, 0] / xc[:, 2], xc[:, 1] / xc[:, 2]
    r2 = x * x + y * y
    radial = 1 + k1 * r2 + k2 * r2**2 + k3 * r2**3
    xd = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x)
    yd = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y
    return np.column_stack([cam.fx * xd + cam.cx, cam.fy * yd + cam.cy])


def test_project_matches_a_pinhole_and_distortion_model_written_out_by_hand() -> None:
    cam = PinholeCamera.looking_at(
        (-6.0, -9.0, 28.0), (20.0, 16.0, 0.0), dist=(-0.2, 0.07, 0.001, -0.0008, -0.01)
    )
    rng = np.random.default_rng(5)
    pts = np.column_stack([rng.uniform(0, 44, 50), rng.uniform(0, 30, 50), rng.uniform(0, 3, 50)])
    marker = PlacedMarker(3, 40.0, 31.5, 12.25, z_in=1.2, heading_deg=117.0)
    pts = np.vstack([pts, marker.corners_in()])
    np.testing.assert_allclose(cam.project(pts), _project_by_hand(cam, pts), atol=1e-6)


def test_looking_at_aims_the_optical_axis_and_sets_focal_length_from_the_fov() -> None:
    cam = PinholeCamera.looking_at((10.0, -5.0, 30.0), (22.0, 15.0, 0.0), 1280, 720, 60.0)
    assert cam.fx == pytest.approx(640 / math.tan(math.radians(30)))
    assert cam.fy == cam.fx
    assert (cam.cx, cam.cy) == (639.5, 359.5)
    # The target is on the optical axis, where distortion does nothing.
    np.testing.assert_allclose(cam.project(np.array([[22.0, 15.0, 0.0]]))[0], [639.5, 359.5])
    np.testing.assert_allclose(cam.position_in, [10.0, -5.0, 30.0], atol=1e-9)
    above = cam.project(np.array([[22.0, 15.0, 0.0], [22.0, 15.0, 5.0]]))
    assert above[1, 1] < above[0, 1] - 50, "world up is image up"
    # Straight down: image top is world +y, image right is world +x.
    down = PinholeCamera.looking_at((22.0, 15.0, 40.0), (22.0, 15.0, 0.0), dist=(0,) * 5)
    px = down.project(np.array([[22.0, 15.0, 0.0], [23.0, 15.0, 0.0], [22.0, 16.0, 0.0]]))
    assert px[1, 0] > px[0, 0] and abs(px[1, 1] - px[0, 1]) < 1e-9
    assert px[2, 1] < px[0, 1] and abs(px[2, 0] - px[0, 0]) < 1e-9


def test_rays_invert_project() -> None:
    rng = np.random.default_rng(2)
    pixels = np.column_stack([rng.uniform(0, 1919, 200), rng.uniform(0, 1079, 200)])
    pixels = np.vstack([pixels, [[0, 0], [1919, 0], [0, 1079], [1919, 1079]]])  # worst corners
    origin, dirs = CAMERA.rays(pixels)
    np.testing.assert_allclose(origin, [22.0, -10.0, 32.0], atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(dirs, axis=1), 1.0)
    np.testing.assert_allclose(CAMERA.project(origin + 37.0 * dirs), pixels, atol=1e-6)
    on_table = CAMERA.table_points(pixels[:5], z_in=1.5)
    back = CAMERA.project(np.column_stack([on_table, np.full(5, 1.5)]))
    np.testing.assert_allclose(back, pixels[:5], atol=1e-6)


def test_marker_corners_follow_heading_and_opencv_order() -> None:
    m = PlacedMarker(0, 50.8, 10.0, 20.0, z_in=0.5, heading_deg=0.0)  # 2 in square
    np.testing.assert_allclose(
        m.corners_in(), [[11, 21, 0.5], [11, 19, 0.5], [9, 19, 0.5], [9, 21, 0.5]], atol=1e-12
    )
    m = replace(m, heading_deg=90.0)  # printed top toward +y: an unrotated picture from above
    np.testing.assert_allclose(
        m.corners_in(), [[9, 21, 0.5], [11, 21, 0.5], [11, 19, 0.5], [9, 19, 0.5]], atol=1e-12
    )
    m = replace(m, heading_deg=-30.0)
    c = m.corners_in()
    top_mid = (c[0] + c[1]) / 2 - [10.0, 20.0, 0.5]
    assert math.degrees(math.atan2(top_mid[1], top_mid[0])) == pytest.approx(-30.0)
    np.testing.assert_allclose(np.linalg.norm(np.diff(c, axis=0, append=c[:1]), axis=1), 2.0)


def test_marker_cells_are_opencvs_picture() -> None:
    dic = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_5X5_100)
    for marker_id in (0, 17, 99):
        big = cv2.aruco.generateImageMarker(dic, marker_id, 7 * 9, borderBits=1)
        cells = marker_cells(cv2.aruco.DICT_5X5_100, marker_id)
        np.testing.assert_array_equal(np.kron(cells, np.ones((9, 9))) * 255, 255 - big)
    with pytest.raises(ValueError, match="not in dictionary"):
        marker_cells(DICT, 50)


# ------------------------------------------------------------------------------------------
# Rendered markers


def _edge_offsets(img: np.ndarray, cam: PinholeCamera, marker: PlacedMarker) -> np.ndarray:
    """Where the rendered ink/paper edge crosses 50 %, in px along the outward normal,
    relative to the projected true edge, at 60 points on the middle of the four sides."""
    g = img[..., 1].astype(np.float64)
    half = (INK_BGR[1] + PAPER_BGR[1]) / 2
    c = marker.corners_in()
    centre = c.mean(axis=0)
    out = []
    for k in range(4):
        a, b = c[k], c[(k + 1) % 4]
        normal = np.cross(b - a, [0.0, 0.0, 1.0])
        normal /= np.linalg.norm(normal)
        normal *= np.sign(normal @ ((a + b) / 2 - centre))
        for t in np.linspace(0.3, 0.7, 15):
            p = a + t * (b - a)
            p0, p1 = cam.project(np.array([p, p + 0.01 * normal]))
            d = (p1 - p0) / np.linalg.norm(p1 - p0)
            ts = np.linspace(-2.0, 2.0, 401)
            x, y = (p0 + ts[:, None] * d).T
            x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
            fx, fy = x - x0, y - y0
            v = (
                g[y0, x0] * (1 - fx) * (1 - fy)
                + g[y0, x0 + 1] * fx * (1 - fy)
                + g[y0 + 1, x0] * (1 - fx) * fy
                + g[y0 + 1, x0 + 1] * fx * fy
            )
            ups = np.nonzero((v[:-1] < half) & (v[1:] >= half))[0]
            j = ups[np.argmin(np.abs(ts[ups]))]
            out.append(ts[j] + (half - v[j]) / (v[j + 1] - v[j]) * (ts[j + 1] - ts[j]))
    return np.array(out)


@pytest.mark.parametrize(
    ("x", "y", "z", "heading"), [(22.0, 14.0, 0.0, 20.0), (6.0, 25.0, 2.0, 200.0)]
)
def test_rendered_edges_lie_on_the_projected_edges(
    x: float, y: float, z: float, heading: float
) -> None:
    """The renderer alone, no detector: the antialiased edge sits where projection says."""
    cam = replace(CAMERA, dist=(-0.25, 0.08, 0.001, -0.001, 0.0))  # strong barrel distortion
    marker = PlacedMarker(9, 60.0, x, y, z, heading)
    offsets = _edge_offsets(render_table(cam, markers=[marker], shot=CLEAN_SHOT), cam, marker)
    assert abs(offsets.mean()) < 0.03, offsets
    assert np.abs(offsets).max() < 0.25, offsets


CELL_CORNERS = ((0, 0), (1, 0), (1, 1), (0, 1))


def _independent_ink_coverage(
    cam: PinholeCamera, marker: PlacedMarker, box: tuple[int, int, int, int], scale: int = 16
) -> np.ndarray:
    """Ink fraction per pixel by another route: every inked cell's corners projected, the
    quads filled with cv2.fillPoly on a 16x canvas (8 fractional bits), area-averaged down.
    (Cells are ~12 px, so their lens-bent edges are straight to well under 0.01 px.)"""
    x0, y0, x1, y1 = box
    c = marker.corners_in()
    n = marker.cells.shape[0]
    ex, ey = (c[1] - c[0]) / n, (c[3] - c[0]) / n
    polys = []
    for r, q in zip(*np.nonzero(marker.cells), strict=True):
        quad = np.array([c[0] + (q + dq) * ex + (r + dr) * ey for dq, dr in CELL_CORNERS])
        canvas_xy = ((cam.project(quad) - [x0, y0] + 0.5) * scale - 0.5) * 256
        polys.append(np.round(canvas_xy).astype(np.int32))
    canvas = np.zeros(((y1 - y0) * scale, (x1 - x0) * scale), dtype=np.uint8)
    cv2.fillPoly(canvas, polys, 255, lineType=cv2.LINE_8, shift=8)
    return cv2.resize(
        canvas.astype(np.float32) / 255, (x1 - x0, y1 - y0), interpolation=cv2.INTER_AREA
    )


def test_render_matches_an_independent_rasterisation() -> None:
    marker = PlacedMarker(12, 70.0, 25.0, 26.0, 0.0, 238.6)
    img = render_table(CAMERA, markers=[marker], shot=CLEAN_SHOT)
    corners = CAMERA.project(marker.corners_in())
    x0, y0 = np.floor(corners.min(axis=0)).astype(int) - 4
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 4
    expected = _independent_ink_coverage(CAMERA, marker, (x0, y0, x1, y1))
    got = (PAPER_BGR[1] - img[y0:y1, x0:x1, 1]) / (PAPER_BGR[1] - INK_BGR[1])
    inside = np.zeros(expected.shape, dtype=np.uint8)
    cv2.fillConvexPoly(inside, np.round(corners - [x0, y0]).astype(np.int32), 1)
    diff = (got - expected)[inside.astype(bool)]
    assert abs(diff.mean()) < 0.005  # no shift: half a pixel would be ~0.05
    assert np.abs(diff).mean() < 0.015  # 3x3 supersampling: coverage steps of 1/9
    assert np.abs(diff).max() < 0.3


def test_detected_corners_match_projection_within_0_3_px() -> None:
    marker = PlacedMarker(7, 120.0, 20.5, 13.0, heading_deg=25.0)
    img = render_table(CAMERA, markers=[marker], shot=Shot(seed=4))
    found = _detect(img, subpix=True)
    assert list(found) == [7]
    truth = CAMERA.project(marker.corners_in())
    err = np.linalg.norm(found[7] - truth, axis=1)
    assert np.linalg.norm(truth[0] - truth[1]) > 130  # a large marker: 22 px modules
    assert err.max() < 0.3, err


def test_detected_corners_over_many_placements() -> None:
    """cornerSubPix pulls an L-shaped corner 0.1-0.3 px toward the inside of the square, the
    more so the sharper the corner's angle in the picture (it does the same on the independent
    rasterisation above), so single corners scatter to ~0.45 px while the marker centres,
    where that bias largely cancels, stay within ~0.1 px."""
    rng = np.random.default_rng(2)
    markers = [
        PlacedMarker(i, 70.0, 5.0 + 8.5 * (i % 5), 6.0 + 10.0 * (i // 5), 0.0, rng.uniform(0, 360))
        for i in range(15)
    ]
    img = render_table(CAMERA, markers=markers, shot=Shot(seed=2))
    found = _detect(img, subpix=True)
    assert sorted(found) == list(range(15))
    errs, centre_errs = [], []
    for m in markers:
        truth = CAMERA.project(m.corners_in())
        errs.extend(np.linalg.norm(found[m.id] - truth, axis=1))
        centre_errs.append(np.linalg.norm(found[m.id].mean(axis=0) - truth.mean(axis=0)))
    errs_a = np.array(errs)
    assert np.sqrt(np.mean(errs_a**2)) < 0.26, errs_a
    assert errs_a.max() < 0.55, errs_a
    assert max(centre_errs) < 0.15, centre_errs
    assert np.mean(centre_errs) < 0.06, centre_errs


def test_raised_marker_shows_the_parallax_computed_by_hand() -> None:
    """A marker on a 2.5 in stand, seen from C, lands on the table plane where the line from C
    through it meets z=0: displaced by (P - C) * h / (C_z - h), and scaled by C_z / (C_z - h)."""
    x, y, h, size = 34.0, 22.0, 2.5, 80.0
    flat = PlacedMarker(5, size, x, y, 0.0, 60.0)
    raised = replace(flat, z_in=h)
    apparent = {}
    for m in (flat, raised):
        found = _detect(render_table(CAMERA, markers=[m], shot=Shot(seed=2)), subpix=True)
        corners_on_table = CAMERA.table_points(found[5], z_in=0.0)
        apparent[m.z_in] = corners_on_table
    cx, cy, cz = 22.0, -10.0, 32.0  # the camera centre, as placed
    expected_shift = np.array([x - cx, y - cy]) * h / (cz - h)
    shift = apparent[h].mean(axis=0) - apparent[0.0].mean(axis=0)
    assert np.linalg.norm(expected_shift) > 1.0  # 1.1 in: a real error if ignored
    np.testing.assert_allclose(shift, expected_shift, atol=0.01)  # 0.25 mm
    np.testing.assert_allclose(apparent[0.0].mean(axis=0), [x, y], atol=0.005)
    side = np.linalg.norm(np.diff(apparent[h], axis=0, append=apparent[h][:1]), axis=1)
    np.testing.assert_allclose(side, size / MM_PER_IN * cz / (cz - h), rtol=0.005)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_decoys_are_never_detected(seed: int) -> None:
    rng = np.random.default_rng(seed)
    cam = PinholeCamera.looking_at(
        (rng.uniform(5, 39), rng.uniform(-12, -2), rng.uniform(26, 40)), (22.0, 15.0, 0.0)
    )
    markers = [
        PlacedMarker(10 * i + 3, 25.0, 6.0 + 7.0 * i, 15.0, 1.0 * (i % 2), 45.0 * i)
        for i in range(5)
    ]
    img = render_table(cam, markers=markers, decoys=100, shot=Shot(seed=seed), texture_seed=seed)
    gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    _, ids, rejected = _detector().detectMarkers(gray)
    assert sorted(np.asarray(ids).ravel().tolist()) == [3, 13, 23, 33, 43]
    # The decoys got past the detector's quad stage and were then refused on their bits.
    assert len(rejected) >= 80


# ------------------------------------------------------------------------------------------
# ChArUco


@pytest.mark.parametrize("legacy", [False, True])
def test_charuco_render_is_board_generate_image(legacy: bool) -> None:
    """Straight down, no distortion, 2 px per mm: the render is OpenCV's picture of the board
    (4 rows: the current and the pre-4.6 layouts differ)."""
    board = cv2.aruco.CharucoBoard((5, 4), 32.0, 24.0, cv2.aruco.getPredefinedDictionary(DICT))
    board.setLegacyPattern(legacy)
    height = 1000.0 / (2.0 * MM_PER_IN)  # fx / height = 2 px per mm
    cam = PinholeCamera(400, 340, 1000.0, 1000.0, 199.5, 169.5).aimed(
        (0.0, 0.0, height), (0.0, 0.0, 0.0)
    )
    img = render_charuco(cam, board, board_on_table(board, 0.0, 0.0, heading_deg=90.0), CLEAN_SHOT)
    expected = board.generateImage((320, 256), marginSize=0, borderBits=1)
    got = img[42:298, 40:360, 1]
    assert np.mean((got > 128) != (expected > 128)) < 1e-3
    assert got.min() == round(INK_BGR[1]) and got.max() == round(PAPER_BGR[1])
    assert (img[40, 38:362, 1] == round(PAPER_BGR[1])).all()  # the paper margin


@pytest.mark.slow
def test_charuco_corners_detected_where_projected_and_calibration_recovers_camera() -> None:
    board = cv2.aruco.CharucoBoard(
        (9, 6), 30.0, 22.0, cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_5X5_100)
    )
    views = random_charuco_views(board, 12, 1280, 720, seed=3)
    truth_cam = views[0][1]
    assert {v[1].camera_matrix.tobytes() for v in views} == {truth_cam.camera_matrix.tobytes()}
    corners_world = board_corners_in(board, board_on_table(board, 0.0, 0.0))
    detector = cv2.aruco.CharucoDetector(board)
    obj, img_pts, errs = [], [], []
    for img, cam in views:
        corners, ids, _, _ = detector.detectBoard(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY))
        assert ids is not None and len(ids) >= 12
        ids = np.asarray(ids).ravel()
        errs.extend(
            np.linalg.norm(corners.reshape(-1, 2) - cam.project(corners_world[ids]), axis=1)
        )
        obj.append(board.getChessboardCorners()[ids].astype(np.float32))
        img_pts.append(corners.reshape(-1, 1, 2).astype(np.float32))
    assert np.median(errs) < 0.1 and np.percentile(errs, 99) < 0.5
    rms, k, dist, _, _ = cv2.calibrateCamera(obj, img_pts, truth_cam.size, None, None)
    assert rms < 0.5
    assert k[0, 0] == pytest.approx(truth_cam.fx, rel=0.01)
    assert k[1, 1] == pytest.approx(truth_cam.fy, rel=0.01)
    assert k[0, 2] == pytest.approx(truth_cam.cx, abs=3.0)
    assert k[1, 2] == pytest.approx(truth_cam.cy, abs=3.0)
    # The views cover the frame, corners included, so the distortion is recovered too.
    assert dist.ravel()[0] == pytest.approx(truth_cam.dist[0], abs=0.02)


def test_random_charuco_views_can_use_a_given_lens() -> None:
    board = cv2.aruco.CharucoBoard((5, 4), 30.0, 22.0, cv2.aruco.getPredefinedDictionary(DICT))
    lens = PinholeCamera.looking_at((0.0, 0.0, 20.0), (0.0, 0.0, 0.0), 320, 240, 62.0)
    ((img, cam),) = random_charuco_views(board, 1, 320, 240, seed=0, lens=lens)
    assert img.shape == (240, 320, 3)
    assert cam.camera_matrix.tolist() == lens.camera_matrix.tolist() and cam.dist == lens.dist
    with pytest.raises(ValueError, match="size"):
        random_charuco_views(board, 1, 640, 480, seed=0, lens=lens)


# ------------------------------------------------------------------------------------------
# Speed (printed, not asserted)


@pytest.mark.slow
def test_render_time_with_100_markers(capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(0)
    markers = [
        PlacedMarker(
            i,
            25.0,
            2.0 + 4.4 * (i % 10) + rng.uniform(-0.5, 0.5),
            2.0 + 2.9 * (i // 10) + rng.uniform(-0.3, 0.3),
            z_in=float(rng.choice([0.0, 0.0, 1.0, 2.0])),
            heading_deg=rng.uniform(0, 360),
            dictionary=cv2.aruco.DICT_4X4_100,
        )
        for i in range(100)
    ]
    times = {}
    for w, h in ((1920, 1080), (3840, 2160)):
        cam = PinholeCamera.looking_at((22.0, -10.0, 32.0), (22.0, 14.0, 0.0), w, h)
        start = time.perf_counter()
        img = render_table(cam, markers=markers)
        times[h] = time.perf_counter() - start
        assert img.shape == (h, w, 3) and img.dtype == np.uint8
        if h == 1080:  # cards on 1-2 in stands hide a few markers behind them
            found = _detect(img, cv2.aruco.DICT_4X4_100)
            assert set(found) <= set(range(100)) and len(found) >= 90
    with capsys.disabled():
        print(
            f"\nsynth render, 100 markers: 1080p {times[1080]:.2f} s, 4K {times[2160]:.2f} s "
            "(first frame of each lens, ray table included)"
        )
