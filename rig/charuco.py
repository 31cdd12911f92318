"""Rendered ChArUco calibration boards: on the table, or held in front of the synthetic
camera at random angles, with the board's corners as the truth.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import cv2
import numpy as np

from tablesight.rig.synth import (
    BACKGROUND_BGR,
    MM_PER_IN,
    PinholeCamera,
    Shot,
    bbox_of,
    develop,
    draw_plane,
    outline,
    printed_axes,
    project_in_field,
)

#: A shot with the synthetic camera's default blur, noise and compression.
PLAIN_SHOT = Shot()


def board_on_table(
    board: cv2.aruco.CharucoBoard,
    x_in: float,
    y_in: float,
    heading_deg: float = 0.0,
    z_in: float = 0.0,
    units_per_in: float = MM_PER_IN,
) -> tuple[np.ndarray, np.ndarray]:
    """Pose (rvec, tvec) of a board lying face up with its centre at (x_in, y_in, z_in).

    ``heading_deg`` is where the board's printed top edge points, CCW from +x, as for markers.
    """
    right, down = printed_axes(heading_deg)
    rot = np.column_stack([right, down, [0.0, 0.0, -1.0]])  # board z points into the table
    cols, rows = board.getChessboardSize()
    sq = board.getSquareLength()
    centre_b = np.array([cols * sq / 2, rows * sq / 2, 0.0]) / units_per_in
    tvec = np.array([x_in, y_in, z_in], dtype=np.float64) - rot @ centre_b
    return cv2.Rodrigues(rot)[0].ravel(), tvec


def board_corners_in(
    board: cv2.aruco.CharucoBoard,
    board_pose: tuple[np.ndarray, np.ndarray],
    units_per_in: float = MM_PER_IN,
) -> np.ndarray:
    """World inches of the board's ChArUco corners (index = charuco id)."""
    rot = cv2.Rodrigues(np.asarray(board_pose[0], dtype=np.float64))[0]
    pts = np.asarray(board.getChessboardCorners(), dtype=np.float64) / units_per_in
    return pts @ rot.T + np.asarray(board_pose[1], dtype=np.float64).ravel()


class _BoardPattern:
    """Exact point sampling of a CharucoBoard's printed picture, in board units."""

    def __init__(self, board: cv2.aruco.CharucoBoard, margin: float) -> None:
        self.cols, self.rows = (int(v) for v in board.getChessboardSize())
        self.sq = float(board.getSquareLength())
        self.ml = float(board.getMarkerLength())
        self.margin = margin
        dic = board.getDictionary()
        n = dic.markerSize + 2
        self.n = n
        ids = np.asarray(board.getIds()).ravel()
        square_marker = -np.ones((self.rows, self.cols), dtype=np.intp)
        tl = np.zeros((self.rows, self.cols, 2))
        cells = np.zeros((max(1, len(ids)), n, n), dtype=bool)
        for k, (mid, corners) in enumerate(zip(ids, board.getObjPoints(), strict=True)):
            c = np.asarray(corners, dtype=np.float64).reshape(4, 3)
            if not np.allclose(c[1] - c[0], [self.ml, 0, 0], atol=1e-3 * self.ml):
                raise ValueError("only axis-aligned ChArUco layouts are supported")
            col, row = (int(v) for v in np.floor(c[:, :2].mean(axis=0) / self.sq))
            square_marker[row, col] = k
            tl[row, col] = c[0, :2]
            cells[k] = self._cells(dic, int(mid))
        parity = np.add.outer(np.arange(self.rows), np.arange(self.cols)) % 2
        white_parity = parity[square_marker >= 0]
        white = int(white_parity[0]) if len(white_parity) else 1
        self.black = ((parity != white) & (square_marker < 0)).ravel()
        self.square_marker = square_marker.ravel()
        self.tl = tl.reshape(-1, 2).astype(np.float32)
        self.cells = cells.reshape(len(cells), -1)

    @staticmethod
    def _cells(dic: cv2.aruco.Dictionary, marker_id: int) -> np.ndarray:
        n = dic.markerSize + 2
        return cv2.aruco.generateImageMarker(dic, marker_id, n, borderBits=1) < 128

    def shade(self, bx: np.ndarray, by: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        w, h = self.cols * self.sq, self.rows * self.sq
        m = self.margin
        covered = (bx >= -m) & (bx <= w + m) & (by >= -m) & (by <= h + m)
        on_board = (bx >= 0) & (bx < w) & (by >= 0) & (by < h)
        col = np.clip(np.floor(bx / self.sq), 0, self.cols - 1).astype(np.intp)
        row = np.clip(np.floor(by / self.sq), 0, self.rows - 1).astype(np.intp)
        sq_idx = row * self.cols + col
        ink = on_board & self.black[sq_idx]
        k = self.square_marker[sq_idx]
        in_marker_sq = on_board & (k >= 0)
        idx = sq_idx[in_marker_sq]
        scale = np.float32(self.n / self.ml)
        cu = np.floor((bx[in_marker_sq] - self.tl[idx, 0]) * scale).astype(np.intp)
        cv = np.floor((by[in_marker_sq] - self.tl[idx, 1]) * scale).astype(np.intp)
        inside = (cu >= 0) & (cu < self.n) & (cv >= 0) & (cv < self.n)
        marker_ink = np.zeros(len(idx), dtype=bool)
        marker_ink[inside] = self.cells[k[in_marker_sq][inside], cv[inside] * self.n + cu[inside]]
        ink[in_marker_sq] = marker_ink
        return covered, ink


def render_charuco(
    camera: PinholeCamera,
    board: cv2.aruco.CharucoBoard,
    board_pose: tuple[np.ndarray, np.ndarray],
    shot: Shot = PLAIN_SHOT,
    *,
    units_per_in: float = MM_PER_IN,
    margin: float | None = None,
    background_bgr: tuple[float, float, float] = BACKGROUND_BGR,
) -> np.ndarray:
    """Photograph a ChArUco board in front of a plain background: HxWx3 uint8 BGR.

    ``board_pose`` = (rvec, tvec) places the board in the camera's world frame: a point P of
    the board, in board units as ``board.getChessboardCorners()`` gives them (x right, y down
    the printed picture, z into it; millimetres unless ``units_per_in`` says otherwise), is at
    ``R(rvec) @ (P / units_per_in) + tvec`` world inches.  :func:`board_on_table` makes the pose
    of a board lying face up.  The board is printed on white paper with ``margin`` board units
    of paper around the squares (default half a square).  The picture is the board's current
    (non-legacy unless the board says so) layout, i.e. what ``board.generateImage`` draws.
    """
    pattern = _BoardPattern(board, 0.5 * board.getSquareLength() if margin is None else margin)
    img = np.empty((camera.height_px, camera.width_px, 3), dtype=np.float32)
    img[:] = background_bgr
    rot = cv2.Rodrigues(np.asarray(board_pose[0], dtype=np.float64))[0]
    origin = np.asarray(board_pose[1], dtype=np.float64).ravel()
    w_b, h_b, m = pattern.cols * pattern.sq, pattern.rows * pattern.sq, pattern.margin
    corners_b = np.array([[-m, -m, 0], [w_b + m, -m, 0], [w_b + m, h_b + m, 0], [-m, h_b + m, 0]])
    edge = outline(corners_b / units_per_in @ rot.T + origin, per_edge=32)
    bbox = bbox_of(camera, edge)
    scale = np.float32(units_per_in)

    def shade(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return pattern.shade(a * scale, b * scale)

    if bbox is not None:
        ss = max(1, int(shot.supersample))
        draw_plane(img, camera, origin, rot[:, 0], rot[:, 1], shade, bbox, ss)
    return develop(img, shot)


def random_charuco_views(
    board: cv2.aruco.CharucoBoard,
    n: int,
    width_px: int,
    height_px: int,
    seed: int,
    *,
    hfov_deg: float | None = None,
    dist: Sequence[float] | None = None,
    shot: Shot | None = None,
    units_per_in: float = MM_PER_IN,
    min_visible: float = 0.6,
    lens: PinholeCamera | None = None,
) -> list[tuple[np.ndarray, PinholeCamera]]:
    """``n`` calibration pictures of one board by one camera from varied viewpoints.

    The board lies face up at the world origin (:func:`board_on_table` at (0, 0), so its pose
    is ``board_on_table(board, 0, 0)``); each returned camera has the same intrinsics (hfov
    drawn in 55..75 degrees unless given, principal point up to 2 % off centre, the default
    distortion of :meth:`PinholeCamera.looking_at` unless given) and its own pose: tilted up
    to 50 degrees, any roll, at a distance where the board fills 35..95 % of the frame, and
    aimed off the board's centre so the board lands in different parts of the frame.  At
    least ``min_visible`` of the ChArUco corners are inside every frame.  Given ``lens``, its
    intrinsics (fx, fy, cx, cy, dist; its size must be width_px x height_px) are used instead,
    e.g. to calibrate a camera that :func:`render_table` also photographs with.
    """
    rng = np.random.default_rng([seed, 0xCA11B])
    fov = float(rng.uniform(55.0, 75.0)) if hfov_deg is None else float(hfov_deg)
    base = PinholeCamera.looking_at(
        (0.0, 0.0, 20.0),
        (0.0, 0.0, 0.0),
        width_px,
        height_px,
        fov,
        dist if dist is not None else (-0.12, 0.05, 0.0005, -0.0003, 0.0),
    )
    fy = base.fx * float(rng.uniform(0.997, 1.003))
    cx = base.cx + float(rng.uniform(-0.02, 0.02)) * width_px
    cy = base.cy + float(rng.uniform(-0.02, 0.02)) * height_px
    base = replace(base, fy=fy, cx=cx, cy=cy)
    if lens is not None:
        if (lens.width_px, lens.height_px) != (width_px, height_px):
            raise ValueError("lens size differs from width_px x height_px")
        base = replace(lens, rvec=base.rvec, tvec=base.tvec)
    pose = board_on_table(board, 0.0, 0.0, units_per_in=units_per_in)
    corners = board_corners_in(board, pose, units_per_in)
    cols, rows = board.getChessboardSize()
    sq = board.getSquareLength() / units_per_in
    board_w, board_h = cols * sq, rows * sq
    half_diag_fov = math.atan(0.5 * math.hypot(width_px, height_px) / base.fx)
    views: list[tuple[np.ndarray, PinholeCamera]] = []
    shot = shot if shot is not None else Shot()
    attempts = 0
    while len(views) < n:
        attempts += 1
        if attempts > 200 * max(n, 1):
            raise RuntimeError("could not find enough views of the board")
        tilt = math.radians(rng.uniform(0.0, 50.0))
        azimuth = rng.uniform(0.0, 2 * math.pi)
        roll = rng.uniform(0.0, 2 * math.pi)
        fill = rng.uniform(0.35, 0.95)
        distance = (0.5 * math.hypot(board_w, board_h)) / math.tan(fill * half_diag_fov)
        target = np.array([rng.uniform(-0.3, 0.3) * board_w, rng.uniform(-0.3, 0.3) * board_h, 0.0])
        direction = np.array(
            [
                math.sin(tilt) * math.cos(azimuth),
                math.sin(tilt) * math.sin(azimuth),
                math.cos(tilt),
            ]
        )
        cam = base.aimed(target + distance * direction, target, (math.cos(roll), math.sin(roll), 0))
        if np.any(cam.to_camera(corners)[:, 2] <= 0):
            continue
        px, inside = project_in_field(cam, corners)
        inside &= (px[:, 0] >= 8) & (px[:, 0] <= width_px - 9)
        inside &= (px[:, 1] >= 8) & (px[:, 1] <= height_px - 9)
        if inside.mean() < min_visible:
            continue
        view_shot = replace(shot, seed=shot.seed * 1000 + len(views))
        views.append((render_charuco(cam, board, pose, view_shot, units_per_in=units_per_in), cam))
    return views
