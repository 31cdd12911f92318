"""A synthetic camera: renders a wargames table with ArUco-marked models, and ChArUco boards.

This is how vision is tested without a camera: every picture has exact ground truth.

World frame: table inches, origin at a table corner, x along the width, y along the depth,
z up from the table surface.  Cameras follow OpenCV: ``rvec``/``tvec`` map world points into
the camera frame (x right, y down, z forward) and pixel centres sit at integer coordinates.

Rendering is an inverse mapping through the lens, not a homography warp: every (sub)pixel is
undistorted to a ray, the ray is intersected with the plane of the surface that is there (the
table at z=0, a marker's card at its own z, a calibration board in its own plane) and that
surface's texture is sampled at the hit point.  Rays come from a per-lens table of undistorted
directions every 4 px (``cv2.undistortPoints`` to convergence), interpolated bilinearly; that is
exact to ~0.002 px because distortion is smooth.  Markers, decoys and boards are drawn exactly
(their cell grids are evaluated per subsample, no raster resampling) and antialiased with
``Shot.supersample``^2 samples per pixel; the table, a low-contrast procedural mat, takes one
sample per pixel (its table coordinates interpolated from the same 4 px lattice).  Cards are
drawn in order of height over what is below them.  Then the picture is degraded as a
:class:`Shot` says: lighting gradient and vignette, Gaussian blur, Gaussian noise, 8-bit
rounding, JPEG.

Typical use::

    cam = PinholeCamera.looking_at((22, -10, 32), (22, 14, 0))
    markers = [PlacedMarker(7, 25.0, 10.0, 12.0, z_in=1.0, heading_deg=30.0)]
    frame = render_table(cam, markers=markers, decoys=20)
    truth_px = cam.project(markers[0].corners_in())
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from statistics import NormalDist

import cv2
import numpy as np

from tablesight.calibration.camera import CameraModel

__all__ = [
    "CLEAN_SHOT",
    "INK_BGR",
    "MM_PER_IN",
    "PAPER_BGR",
    "PinholeCamera",
    "PlacedMarker",
    "Shot",
    "marker_cells",
    "render_table",
]

MM_PER_IN = 25.4

# Reflectances as 8-bit BGR before lighting: matte print on white card.
PAPER_BGR = (228.0, 234.0, 238.0)
INK_BGR = (28.0, 26.0, 26.0)
MAT_BGR = (92.0, 116.0, 100.0)  # a muted grey-green gaming mat
FLOOR_BGR = (48.0, 58.0, 70.0)  # what is seen past the table's edge
BACKGROUND_BGR = (118.0, 118.0, 118.0)  # plain backdrop behind a calibration board

Vec3 = tuple[float, float, float]
Dist5 = tuple[float, float, float, float, float]

_GRID_ITERATIONS = 16  # fixed-point undistortion steps for the ray lattice
_LATTICE = 4  # pixels between ray lattice nodes
_TABLE_PPI = 16.0  # mat texels per inch
_RAY_CRITERIA = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 50, 1e-12)
_STRIP_SAMPLES = 1 << 20  # subsamples processed at once (bounds the memory of big patches)


# --------------------------------------------------------------------------------------------
# Camera


def _undistort_normalized(
    pixels: np.ndarray, camera_matrix: np.ndarray, dist: np.ndarray, criteria: tuple
) -> np.ndarray:
    """(N,2) distorted pixels -> (N,2) ideal normalized coordinates (x/z, y/z)."""
    src = np.ascontiguousarray(pixels, dtype=np.float64).reshape(-1, 1, 2)
    if src.shape[0] == 0:
        return np.zeros((0, 2))
    try:  # OpenCV 5: undistortPoints takes the termination criteria
        out = cv2.undistortPoints(src, camera_matrix, dist, None, None, None, criteria)
    except (TypeError, cv2.error):  # OpenCV 4.x: a separate function
        out = cv2.undistortPointsIter(src, camera_matrix, dist, None, None, criteria)
    return np.asarray(out, dtype=np.float64).reshape(-1, 2)


@dataclass(frozen=True)
class PinholeCamera:
    """A pinhole camera with OpenCV's 5-term distortion, posed in the table's world frame."""

    width_px: int
    height_px: int
    fx: float
    fy: float
    cx: float
    cy: float
    dist: Dist5 = (0.0, 0.0, 0.0, 0.0, 0.0)  # OpenCV order k1, k2, p1, p2, k3
    rvec: Vec3 = (0.0, 0.0, 0.0)  # world (inches) -> camera, Rodrigues
    tvec: Vec3 = (0.0, 0.0, 0.0)  # world (inches) -> camera, inches

    @classmethod
    def looking_at(
        cls,
        position_in: Sequence[float],
        target_in: Sequence[float],
        width_px: int = 1920,
        height_px: int = 1080,
        hfov_deg: float = 70.0,
        dist: Sequence[float] = (-0.12, 0.05, 0.0005, -0.0003, 0.0),
        up: Sequence[float] = (0.0, 0.0, 1.0),
    ) -> PinholeCamera:
        """A camera at ``position_in`` aimed at ``target_in`` with ``up`` toward the image top.

        Square pixels, principal point at the image centre ((w-1)/2, (h-1)/2), fx from the
        horizontal field of view.  When looking along ``up`` (e.g. straight down), world +y is
        taken as the image's up direction instead.
        """
        fx = (width_px / 2.0) / math.tan(math.radians(hfov_deg) / 2.0)
        rvec, tvec = _look_at_pose(position_in, target_in, up)
        return cls(
            width_px=int(width_px),
            height_px=int(height_px),
            fx=fx,
            fy=fx,
            cx=(width_px - 1) / 2.0,
            cy=(height_px - 1) / 2.0,
            dist=_dist5(dist),
            rvec=rvec,
            tvec=tvec,
        )

    def aimed(
        self,
        position_in: Sequence[float],
        target_in: Sequence[float],
        up: Sequence[float] = (0.0, 0.0, 1.0),
    ) -> PinholeCamera:
        """The same lens and sensor, moved to ``position_in`` and aimed at ``target_in``."""
        rvec, tvec = _look_at_pose(position_in, target_in, up)
        return replace(self, rvec=rvec, tvec=tvec)

    def calibrated(self) -> CameraModel:
        """This camera's intrinsics as a perfect calibration gives them (``camera.toml``:
        ``calibrated().to_toml()``)."""
        return CameraModel(self.size, self.camera_matrix, self.dist_coeffs)

    @property
    def camera_matrix(self) -> np.ndarray:
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    @property
    def dist_coeffs(self) -> np.ndarray:
        return np.array(self.dist, dtype=np.float64)

    @property
    def rotation(self) -> np.ndarray:
        """3x3 world -> camera rotation."""
        return cv2.Rodrigues(np.array(self.rvec, dtype=np.float64))[0]

    @property
    def position_in(self) -> np.ndarray:
        """The camera centre in world inches."""
        return -self.rotation.T @ np.array(self.tvec, dtype=np.float64)

    @property
    def size(self) -> tuple[int, int]:
        """(width, height), as OpenCV's imageSize arguments want it."""
        return (self.width_px, self.height_px)

    def to_camera(self, points_in: np.ndarray) -> np.ndarray:
        """(N,3) world points -> (N,3) camera-frame points (z is the depth in inches)."""
        pts = np.asarray(points_in, dtype=np.float64).reshape(-1, 3)
        return pts @ self.rotation.T + np.array(self.tvec, dtype=np.float64)

    def project(self, points_in: np.ndarray) -> np.ndarray:
        """(N,3) world points -> (N,2) distorted pixel coordinates (cv2.projectPoints).

        Points behind the camera are projected too (as OpenCV does); check ``to_camera`` depth.
        """
        pts = np.asarray(points_in, dtype=np.float64).reshape(-1, 1, 3)
        if pts.shape[0] == 0:
            return np.zeros((0, 2))
        img, _ = cv2.projectPoints(
            pts,
            np.array(self.rvec, dtype=np.float64),
            np.array(self.tvec, dtype=np.float64),
            self.camera_matrix,
            self.dist_coeffs,
        )
        return img.reshape(-1, 2)

    def rays(self, pixels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rays through distorted pixels: (origin (3,), unit directions (N,3)), world frame."""
        norm = _undistort_normalized(
            np.asarray(pixels, dtype=np.float64).reshape(-1, 2),
            self.camera_matrix,
            self.dist_coeffs,
            _RAY_CRITERIA,
        )
        dirs_cam = np.column_stack([norm, np.ones(len(norm))])
        dirs = dirs_cam @ self.rotation  # R^T applied to each row
        dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
        return self.position_in, dirs

    def table_points(self, pixels: np.ndarray, z_in: float = 0.0) -> np.ndarray:
        """(N,2) distorted pixels -> (N,2) world x, y where their rays meet the plane z=z_in."""
        origin, dirs = self.rays(pixels)
        s = (z_in - origin[2]) / dirs[:, 2]
        return origin[:2] + s[:, None] * dirs[:, :2]

    def _intrinsics_key(self) -> tuple:
        return (self.width_px, self.height_px, self.fx, self.fy, self.cx, self.cy, self.dist)


def _dist5(dist: Sequence[float]) -> Dist5:
    d = [float(v) for v in dist] + [0.0] * 5
    return (d[0], d[1], d[2], d[3], d[4])


def _look_at_pose(
    position_in: Sequence[float], target_in: Sequence[float], up: Sequence[float]
) -> tuple[Vec3, Vec3]:
    pos = np.asarray(position_in, dtype=np.float64)
    forward = np.asarray(target_in, dtype=np.float64) - pos
    if np.linalg.norm(forward) == 0:
        raise ValueError("camera position and target coincide")
    forward /= np.linalg.norm(forward)
    up_v = np.asarray(up, dtype=np.float64)
    right = np.cross(forward, up_v)
    if np.linalg.norm(right) < 1e-9 * max(1.0, np.linalg.norm(up_v)):
        right = np.cross(forward, np.array([0.0, 1.0, 0.0]))
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    rot = np.vstack([right, down, forward])
    rvec = cv2.Rodrigues(rot)[0].ravel()
    tvec = -rot @ pos
    return (
        (float(rvec[0]), float(rvec[1]), float(rvec[2])),
        (float(tvec[0]), float(tvec[1]), float(tvec[2])),
    )


@functools.lru_cache(maxsize=4)
def _ray_lattice(key: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Ideal normalized coordinates (x, y) on a lattice of every _LATTICE-th pixel, per lens.

    Node (i, j) is pixel (x, y) = (_LATTICE * (j - 1), _LATTICE * (i - 1)), so the lattice runs
    one step past every edge of the frame.  Distortion is smooth, so bilinear interpolation
    between nodes is exact to ~1e-3 px while only 1/16 of the points are undistorted.
    """
    width, height, fx, fy, cx, cy, dist = key
    step = _LATTICE
    xs = step * (np.arange(math.ceil((width - 1) / step) + 3, dtype=np.float64) - 1)
    ys = step * (np.arange(math.ceil((height - 1) / step) + 3, dtype=np.float64) - 1)
    gx, gy = np.meshgrid(xs, ys)
    k = np.array([[fx, 0.0, cx], [0.0, fy, cy], [0.0, 0.0, 1.0]])
    norm = _undistort_normalized(
        np.stack([gx.ravel(), gy.ravel()], axis=1),
        k,
        np.array(dist, dtype=np.float64),
        (cv2.TERM_CRITERIA_COUNT, _GRID_ITERATIONS, 0.0),
    ).reshape(len(ys), len(xs), 2)
    lx = np.ascontiguousarray(norm[..., 0], dtype=np.float32)
    ly = np.ascontiguousarray(norm[..., 1], dtype=np.float32)
    lx.flags.writeable = ly.flags.writeable = False
    return lx, ly


def _lattice_axis(start: int, stop: int, offset: float, n_nodes: int) -> tuple[np.ndarray, ...]:
    """Positions pixel + offset for pixels start..stop-1, as lattice cells and fractions."""
    q = (np.arange(start, stop, dtype=np.float64) + offset) / _LATTICE + 1.0
    i0 = np.clip(np.floor(q).astype(np.intp), 0, n_nodes - 2)
    return i0, (q - i0).astype(np.float32)


def _normalized_coords(
    camera: PinholeCamera, x0: int, x1: int, y0: int, y1: int, dx: float = 0.0, dy: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Ideal normalized (x, y) of the points (x + dx, y + dy) for pixels [x0,x1) x [y0,y1).

    Two (y1-y0, x1-x0) float32 arrays; pixel centres are at integer coordinates.
    """
    lattices = _ray_lattice(camera._intrinsics_key())
    r0, fr = _lattice_axis(y0, y1, dy, lattices[0].shape[0])
    c0, fc = _lattice_axis(x0, x1, dx, lattices[0].shape[1])
    first = r0[0]
    r0 = r0 - first
    fr = fr[:, None]
    out = []
    for lat in lattices:
        rows = lat[first : first + r0[-1] + 2]  # interpolate along x on the rows needed ...
        left = rows[:, c0]
        across = rows[:, c0 + 1]
        across -= left
        across *= fc
        across += left
        top = across[r0]  # ... then along y
        bottom = across[r0 + 1]
        bottom -= top
        bottom *= fr
        bottom += top
        out.append(bottom)
    return out[0], out[1]


def _subpixel_offsets(ss: int) -> list[tuple[float, float]]:
    """ss*ss sample offsets from the pixel centre on a sheared ("n-rooks") grid.

    Every one of the ss*ss columns and rows of the pixel holds exactly one sample, so an edge
    close to horizontal or vertical is resolved to 1/ss^2 px, not the 1/ss of a square grid
    (which biases corner refinement near axis-aligned edges by up to 1/(2 ss) px).
    """
    n = ss * ss
    return [
        ((i * ss + j + 0.5) / n - 0.5, (j * ss + i + 0.5) / n - 0.5)
        for i in range(ss)
        for j in range(ss)
    ]


# --------------------------------------------------------------------------------------------
# Markers and the surfaces they are printed on


@functools.cache
def _dictionary(dictionary: int) -> cv2.aruco.Dictionary:
    return cv2.aruco.getPredefinedDictionary(dictionary)


@functools.lru_cache(maxsize=4096)
def marker_cells(dictionary: int, marker_id: int) -> np.ndarray:
    """The printed cell grid of a marker, border included: (bits+2)^2 bool, True where inked.

    Row 0 is the printed top edge; it is exactly ``cv2.aruco.generateImageMarker`` at one
    pixel per cell.
    """
    dic = _dictionary(dictionary)
    if not 0 <= marker_id < dic.bytesList.shape[0]:
        raise ValueError(f"marker id {marker_id} is not in dictionary {dictionary}")
    n = dic.markerSize + 2
    cells = cv2.aruco.generateImageMarker(dic, marker_id, n, borderBits=1) < 128
    cells.flags.writeable = False
    return cells


@dataclass(frozen=True)
class PlacedMarker:
    """An ArUco marker lying flat, face up, on a card at height ``z_in`` above the table."""

    id: int
    size_mm: float  # side of the black square (quiet zone excluded)
    x_in: float  # centre of the marker face
    y_in: float
    z_in: float = 0.0
    heading_deg: float = 0.0  # centre -> middle of the printed top edge, degrees CCW from +x
    dictionary: int = cv2.aruco.DICT_4X4_50
    quiet_mm: float | None = None  # white border; default one cell, size / (bits + 2)

    @property
    def cells(self) -> np.ndarray:
        return marker_cells(self.dictionary, self.id)

    @property
    def quiet_zone_mm(self) -> float:
        if self.quiet_mm is not None:
            return float(self.quiet_mm)
        return self.size_mm / self.cells.shape[0]

    def corners_in(self) -> np.ndarray:
        """(4,3) world corners of the black square, in OpenCV's order as printed:
        top-left, top-right, bottom-right, bottom-left."""
        return _square_corners(
            (self.x_in, self.y_in, self.z_in), self.heading_deg, self.size_mm / 2 / MM_PER_IN
        )

    def _patch(self) -> _Patch:
        return _Patch(
            centre=(self.x_in, self.y_in, self.z_in),
            heading_deg=self.heading_deg,
            size_mm=self.size_mm,
            quiet_mm=self.quiet_zone_mm,
            cells=self.cells,
        )


def printed_axes(heading_deg: float) -> tuple[np.ndarray, np.ndarray]:
    """World unit vectors of a face-up print's right (+u) and down (+v) directions."""
    h = math.radians(heading_deg)
    right = np.array([math.sin(h), -math.cos(h), 0.0])
    down = np.array([-math.cos(h), -math.sin(h), 0.0])
    return right, down


def _square_corners(centre: Sequence[float], heading_deg: float, half_in: float) -> np.ndarray:
    right, down = printed_axes(heading_deg)
    c = np.asarray(centre, dtype=np.float64)
    uv = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]]) * half_in
    return c + uv[:, :1] * right + uv[:, 1:] * down


@dataclass(frozen=True, eq=False)
class _Patch:
    """A square cell pattern printed on a flat white card (a marker or a decoy)."""

    centre: tuple[float, float, float]
    heading_deg: float
    size_mm: float
    quiet_mm: float
    cells: np.ndarray = field(repr=False)

    @property
    def card_half_in(self) -> float:
        return (self.size_mm / 2 + self.quiet_mm) / MM_PER_IN

    def shader(self) -> Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        half = np.float32(self.size_mm / 2 / MM_PER_IN)
        card = np.float32(self.card_half_in)
        n = self.cells.shape[0]
        cell_scale = np.float32(n / (2 * half))
        flat = self.cells.ravel()

        def shade(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            covered = (np.abs(u) <= card) & (np.abs(v) <= card)
            cu = np.floor((u + half) * cell_scale).astype(np.intp)
            cv = np.floor((v + half) * cell_scale).astype(np.intp)
            inside = (cu >= 0) & (cu < n) & (cv >= 0) & (cv < n)
            ink = np.zeros(u.shape, dtype=bool)
            ink[inside] = flat[cv[inside] * n + cu[inside]]
            return covered, ink

        return shade


# --------------------------------------------------------------------------------------------
# Degradation


@dataclass(frozen=True)
class Shot:
    """How the picture is degraded (and how finely it is sampled)."""

    blur_px: float = 0.6  # Gaussian sigma, pixels
    noise_sigma: float = 2.0  # Gaussian sensor noise, 8-bit levels
    gradient: float = 0.25  # peak-to-peak brightness change across the frame, as a fraction
    jpeg_quality: int | None = 90  # None: no JPEG round trip
    seed: int = 0  # lighting direction and noise
    supersample: int = 3  # subsamples per pixel side for markers and boards (table: 1)


CLEAN_SHOT = Shot(blur_px=0.0, noise_sigma=0.0, gradient=0.0, jpeg_quality=None)


@functools.lru_cache(maxsize=1)
def _normal_quantiles() -> np.ndarray:
    """N(0, 1) at the centres of 65536 equal-probability bins: noise by table look-up."""
    inv = NormalDist().inv_cdf
    return np.array([inv((i + 0.5) / 65536) for i in range(65536)], dtype=np.float32)


def develop(img: np.ndarray, shot: Shot) -> np.ndarray:
    """Lighting gradient, lens blur, sensor noise, quantisation and JPEG, in that order.

    ``img`` is float32 BGR on the 0..255 scale and may be overwritten.
    """
    rng = np.random.default_rng([shot.seed, 0x5107])
    h, w = img.shape[:2]
    if shot.gradient:
        angle = rng.uniform(0, 2 * math.pi)
        half_diag = 0.5 * math.hypot(w, h)
        xs = (np.arange(w, dtype=np.float32) - (w - 1) / 2) / half_diag
        ys = (np.arange(h, dtype=np.float32) - (h - 1) / 2) / half_diag
        ramp = math.cos(angle) * xs[None, :] + math.sin(angle) * ys[:, None]
        vignette = xs[None, :] ** 2 + ys[:, None] ** 2
        light = (1 + 0.5 * shot.gradient * ramp) * (1 - 0.25 * shot.gradient * vignette)
        light = light.astype(np.float32)
        cv2.multiply(img, cv2.merge([light, light, light]), dst=img)
    if shot.blur_px > 0:
        img = cv2.GaussianBlur(img, (0, 0), shot.blur_px)
    if shot.noise_sigma > 0:
        # Gaussian by inverse CDF from 16-bit uniforms: ~3x faster than standard_normal.
        uniform = rng.integers(0, 65536, size=img.shape, dtype=np.uint16)
        noise = np.take(_normal_quantiles(), uniform)
        noise *= np.float32(shot.noise_sigma)
        img += noise
    out = cv2.add(img, 0.0, dtype=cv2.CV_8U)  # round to nearest and saturate
    if shot.jpeg_quality is not None:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(shot.jpeg_quality)])
        if not ok:
            raise RuntimeError("JPEG encoding failed")
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


# --------------------------------------------------------------------------------------------
# Planes through the lens


def draw_plane(
    out: np.ndarray,
    camera: PinholeCamera,
    origin_w: np.ndarray,
    e1_w: np.ndarray,
    e2_w: np.ndarray,
    shade: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
    bbox: tuple[int, int, int, int],
    ss: int,
    visible: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> None:
    """Composite a printed plane over ``out`` (float32 HxWx3) inside bbox (x0, y0, x1, y1).

    The plane is origin + a*e1 + b*e2 (world, e1 and e2 orthonormal).  Each of ss*ss subsamples
    per pixel (see :func:`_subpixel_offsets`) is undistorted to a ray and intersected with the
    plane; ``shade(a, b)`` says whether the plane is there (covered) and whether it is inked.
    Uncovered subsamples keep whatever was drawn before, so drawing in order of height gives
    painter's occlusion.  ``visible(xn, yn, depth)``, if given, says which subsamples are not
    hidden by something nearer (the solids of :mod:`tablesight.rig.bodies`).
    """
    x0, y0, x1, y1 = bbox
    if x1 <= x0 or y1 <= y0:
        return
    rot = camera.rotation
    t = np.array(camera.tvec, dtype=np.float64)
    o_c = rot @ origin_w + t  # plane origin, camera frame
    e1_c, e2_c = rot @ e1_w, rot @ e2_w
    n_c = np.cross(e1_c, e2_c)
    n_dot_o = float(n_c @ o_c)
    e1_o, e2_o = float(e1_c @ o_c), float(e2_c @ o_c)
    n_c, e1_c, e2_c = (v.astype(np.float32) for v in (n_c, e1_c, e2_c))
    paper = np.array(PAPER_BGR, dtype=np.float32)
    ink_col = np.array(INK_BGR, dtype=np.float32)
    offsets = _subpixel_offsets(ss)
    nsub = np.float32(len(offsets))
    rows_per_strip = max(1, _STRIP_SAMPLES // (x1 - x0))
    for ys in range(y0, y1, rows_per_strip):
        ye = min(y1, ys + rows_per_strip)
        cnt = np.zeros((ye - ys, x1 - x0), dtype=np.float32)
        n_ink = np.zeros_like(cnt)
        for dx, dy in offsets:
            xn, yn = _normalized_coords(camera, x0, x1, ys, ye, dx, dy)
            denom = n_c[0] * xn + n_c[1] * yn + n_c[2]
            with np.errstate(divide="ignore", invalid="ignore"):
                s = np.float32(n_dot_o) / denom
            ahead = np.isfinite(s) & (s > 0) & (s < 1e6)  # in front, and not grazing
            s[~ahead] = 0
            a = s * (e1_c[0] * xn + e1_c[1] * yn + e1_c[2]) - np.float32(e1_o)
            b = s * (e2_c[0] * xn + e2_c[1] * yn + e2_c[2]) - np.float32(e2_o)
            covered, ink = shade(a, b)
            covered &= ahead
            if visible is not None:
                covered &= visible(xn, yn, s)
            ink &= covered
            cnt += covered
            n_ink += ink
        region = out[ys:ye, x0:x1]
        region *= ((nsub - cnt) / nsub)[..., None]
        region += ((cnt - n_ink) / nsub)[..., None] * paper
        region += (n_ink / nsub)[..., None] * ink_col


@functools.lru_cache(maxsize=4)
def _field_radius(key: tuple) -> float:
    """Largest ideal normalized radius seen by the lens (a lattice step past the frame)."""
    lx, ly = _ray_lattice(key)
    return float(np.sqrt(lx.astype(np.float64) ** 2 + ly.astype(np.float64) ** 2).max())


def project_in_field(camera: PinholeCamera, points_in: np.ndarray) -> tuple[np.ndarray, ...]:
    """Project world points, pulling those outside the lens's field radially onto its rim.

    A distortion polynomial can fold back beyond the field of view and map far-off points
    into the frame; clamped, they land at the frame's edge in their own direction instead.
    Returns (pixels (N,2), in_field (N,) bool); points behind the camera must be excluded.
    """
    pts_c = camera.to_camera(points_in)
    norm = pts_c[:, :2] / pts_c[:, 2:3]
    radius = np.hypot(norm[:, 0], norm[:, 1])
    r_max = _field_radius(camera._intrinsics_key())
    in_field = radius <= r_max
    norm[~in_field] *= (r_max / radius[~in_field])[:, None]
    px, _ = cv2.projectPoints(
        np.column_stack([norm, np.ones(len(norm))]).reshape(-1, 1, 3),
        np.zeros(3),
        np.zeros(3),
        camera.camera_matrix,
        camera.dist_coeffs,
    )
    return px.reshape(-1, 2), in_field


def bbox_of(camera: PinholeCamera, outline_in: np.ndarray, pad: int = 2) -> tuple | None:
    """Pixel bbox (x0, y0, x1, y1) of a world outline, clipped to the frame; None if unseen."""
    depth = camera.to_camera(outline_in)[:, 2]
    if np.any(depth <= 1e-6):
        if np.all(depth <= 1e-6):
            return None
        return (0, 0, camera.width_px, camera.height_px)  # straddles the camera: do it all
    px, _ = project_in_field(camera, outline_in)
    x0 = max(0, math.floor(px[:, 0].min()) - pad)
    y0 = max(0, math.floor(px[:, 1].min()) - pad)
    x1 = min(camera.width_px, math.ceil(px[:, 0].max()) + pad + 1)
    y1 = min(camera.height_px, math.ceil(px[:, 1].max()) + pad + 1)
    if x1 <= x0 or y1 <= y0:
        return None
    return (x0, y0, x1, y1)


def outline(corners: np.ndarray, per_edge: int = 8) -> np.ndarray:
    """Points along a closed polygon's edges, so a distorted bbox still contains it."""
    t = np.linspace(0.0, 1.0, per_edge, endpoint=False)[:, None]
    nxt = np.roll(corners, -1, axis=0)
    return np.concatenate([c + t * (d - c) for c, d in zip(corners, nxt, strict=True)])


def _draw_patch(
    out: np.ndarray,
    camera: PinholeCamera,
    patch: _Patch,
    ss: int,
    visible: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> None:
    right, down = printed_axes(patch.heading_deg)
    centre = np.array(patch.centre, dtype=np.float64)
    bbox = bbox_of(camera, outline(_square_corners(centre, patch.heading_deg, patch.card_half_in)))
    if bbox is not None:
        draw_plane(out, camera, centre, right, down, patch.shader(), bbox, ss, visible)


# --------------------------------------------------------------------------------------------
# The table


@functools.lru_cache(maxsize=8)
def _table_texture(table_in: tuple[float, float], seed: int, ppi: float) -> np.ndarray:
    """A procedural mat, BGR float32, one texel per 1/ppi inch, texel (0,0) at the corner."""
    rng = np.random.default_rng([seed, 0x7AB1E])
    w_px = max(2, math.ceil(table_in[0] * ppi))
    h_px = max(2, math.ceil(table_in[1] * ppi))
    lum = np.zeros((h_px, w_px), dtype=np.float32)
    for scale_in, amp in ((9.0, 6.0), (3.0, 4.0), (0.8, 2.5)):
        step = max(1, math.ceil(scale_in * ppi))  # texels per noise lattice cell
        shape = (h_px // step + 4, w_px // step + 4)
        coarse = rng.standard_normal(shape).astype(np.float32)
        big = cv2.resize(coarse, (shape[1] * step, shape[0] * step), interpolation=cv2.INTER_CUBIC)
        oy = int(rng.integers(0, big.shape[0] - h_px + 1))
        ox = int(rng.integers(0, big.shape[1] - w_px + 1))
        lum += amp * big[oy : oy + h_px, ox : ox + w_px]
    # A few soft blotches (wear, spills) and a fine felt grain.
    blotch = np.zeros_like(lum)
    for _ in range(int(rng.integers(6, 14))):
        centre = (int(rng.integers(0, w_px)), int(rng.integers(0, h_px)))
        axes = (int(rng.uniform(1.0, 4.0) * ppi), int(rng.uniform(0.7, 3.0) * ppi))
        cv2.ellipse(blotch, centre, axes, rng.uniform(0, 180), 0, 360, rng.uniform(-9, 9), -1)
    lum += cv2.GaussianBlur(blotch, (0, 0), 0.6 * ppi)
    lum += rng.standard_normal(lum.shape, dtype=np.float32) * 2.5
    tint = rng.standard_normal(3).astype(np.float32) * 0.04 + 1.0
    tex = np.array(MAT_BGR, dtype=np.float32) + lum[..., None] * tint
    tex.flags.writeable = False
    return tex


def _draw_table(
    camera: PinholeCamera, table_in: tuple[float, float], texture_seed: int
) -> np.ndarray:
    """The table plane z=0 and the floor beyond its edge, one sample per pixel; float32 BGR.

    Rays are cast at the ray lattice nodes; where they meet the table is interpolated between
    nodes (the mat is smooth at that scale), and the mat texture is sampled there.
    """
    lx, ly = _ray_lattice(camera._intrinsics_key())
    rot = camera.rotation
    t = np.array(camera.tvec, dtype=np.float64)
    n_c, ex, ey = rot[:, 2], rot[:, 0], rot[:, 1]  # world axes in the camera frame
    xn, yn = lx.astype(np.float64), ly.astype(np.float64)
    denom = n_c[0] * xn + n_c[1] * yn + n_c[2]
    with np.errstate(divide="ignore", invalid="ignore"):
        s = (n_c @ t) / denom
    ahead = np.isfinite(s) & (s > 0) & (s < 1e6)
    s[~ahead] = 0
    ppi = _TABLE_PPI
    tex_x = np.where(ahead, (s * (ex[0] * xn + ex[1] * yn + ex[2]) - ex @ t) * ppi - 0.5, -1e4)
    tex_y = np.where(ahead, (s * (ey[0] * xn + ey[1] * yn + ey[2]) - ey @ t) * ppi - 0.5, -1e4)
    size = (camera.width_px, camera.height_px)
    to_pixels = np.array([[1 / _LATTICE, 0, 1], [0, 1 / _LATTICE, 1]])  # pixel -> lattice node
    map_x, map_y = (
        cv2.warpAffine(
            np.clip(m, -1e4, 1e5).astype(np.float32),
            to_pixels,
            size,
            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
            borderMode=cv2.BORDER_REPLICATE,
        )
        for m in (tex_x, tex_y)
    )
    tex = _table_texture(table_in, texture_seed, ppi)
    return cv2.remap(
        tex, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=FLOOR_BGR
    )


# --------------------------------------------------------------------------------------------
# Decoys: marker-like patterns that are not codes of the dictionary


@functools.cache
def _code_words(dictionary: int) -> np.ndarray:
    """Every code of the dictionary in all four rotations, as (4*N, bits*bits) bool."""
    dic = _dictionary(dictionary)
    words = []
    for i in range(dic.bytesList.shape[0]):
        inner = marker_cells(dictionary, i)[1:-1, 1:-1]
        words.extend(np.rot90(inner, k).ravel() for k in range(4))
    return np.array(words)


@functools.cache
def _detector(dictionary: int) -> cv2.aruco.ArucoDetector:
    return cv2.aruco.ArucoDetector(_dictionary(dictionary), cv2.aruco.DetectorParameters())


def _detected_in_print(cells: np.ndarray, dictionary: int) -> bool:
    """Does the ArUco detector find anything in a clean (or slightly blurred) print of it?"""
    img = np.where(np.kron(cells, np.ones((12, 12), dtype=bool)), 20, 235).astype(np.uint8)
    img = cv2.copyMakeBorder(img, 24, 24, 24, 24, cv2.BORDER_CONSTANT, value=235)
    for candidate in (img, cv2.GaussianBlur(img, (0, 0), 2.0)):
        _, ids, _ = _detector(dictionary).detectMarkers(candidate)
        if ids is not None and len(ids):
            return True
    return False


def _decoy_cells(rng: np.random.Generator, dictionary: int) -> np.ndarray:
    """A random marker-like cell grid that the dictionary's detector will not accept."""
    dic = _dictionary(dictionary)
    bits = dic.markerSize
    n = bits + 2
    words = _code_words(dictionary)
    # Far enough from every code that two misread cells still leave it uncorrectable.
    min_distance = int(dic.maxCorrectionBits * 0.6) + 3
    for _ in range(200):
        kind = rng.integers(0, 3)
        if kind == 0:  # valid black border, random inner bits that are no code
            cells = np.ones((n, n), dtype=bool)
            inner = rng.random((bits, bits)) < 0.5
            if (words != inner.ravel()).sum(axis=1).min() < min_distance:
                continue
            cells[1:-1, 1:-1] = inner
        elif kind == 1:  # a real code with a broken border
            cells = marker_cells(dictionary, int(rng.integers(0, dic.bytesList.shape[0]))).copy()
            ring = np.ones((n, n), dtype=bool)
            ring[1:-1, 1:-1] = False
            border = np.flatnonzero(ring)
            broken = rng.choice(border, size=math.ceil(0.5 * len(border)), replace=False)
            cells.flat[broken] = False
        else:  # a finer random grid: looks like a marker, samples to garbage
            m = n + int(rng.integers(1, 3))
            cells = np.ones((m, m), dtype=bool)
            cells[1:-1, 1:-1] = rng.random((m - 2, m - 2)) < 0.5
        if not _detected_in_print(cells, dictionary):
            return cells
    raise RuntimeError("could not make a decoy that the detector rejects")


def _place_decoys(
    count: int,
    table_in: tuple[float, float],
    markers: Sequence[PlacedMarker],
    rng: np.random.Generator,
) -> list[_Patch]:
    """Up to ``count`` decoys flat on the table, clear of the markers and of each other."""
    dictionary = markers[0].dictionary if markers else cv2.aruco.DICT_4X4_50
    sizes = sorted({m.size_mm for m in markers}) or [25.0]
    taken = [(m.x_in, m.y_in, math.sqrt(2) * m._patch().card_half_in) for m in markers]
    decoys: list[_Patch] = []
    for _ in range(count):
        cells = _decoy_cells(rng, dictionary)
        size = float(rng.choice(sizes)) * rng.uniform(0.85, 1.2)
        quiet = size / cells.shape[0]
        radius = math.sqrt(2) * (size / 2 + quiet) / MM_PER_IN
        for _attempt in range(100):
            x = rng.uniform(radius, table_in[0] - radius)
            y = rng.uniform(radius, table_in[1] - radius)
            if all(math.hypot(x - tx, y - ty) > r + radius + 0.1 for tx, ty, r in taken):
                break
        else:
            continue  # the table is full: place fewer
        taken.append((x, y, radius))
        decoys.append(
            _Patch(
                centre=(x, y, 0.0),
                heading_deg=float(rng.uniform(0, 360)),
                size_mm=size,
                quiet_mm=quiet,
                cells=cells,
            )
        )
    return decoys


# --------------------------------------------------------------------------------------------
# Public renderers


def render_table(
    camera: PinholeCamera,
    table_in: tuple[float, float] = (44.0, 30.0),
    markers: Sequence[PlacedMarker] = (),
    decoys: int = 0,
    shot: Shot = Shot(),
    texture_seed: int = 0,
) -> np.ndarray:
    """Photograph a table: HxWx3 uint8 BGR.

    The mat (procedural texture from ``texture_seed``) fills the table rectangle, a dark floor
    lies beyond it.  Markers are drawn on their white cards in order of height (higher ones
    hide lower ones); ``decoys`` marker-like patterns that are not codes of the markers'
    dictionary are scattered flat on the table, clear of the markers (fewer if they don't fit;
    their layout also follows ``texture_seed``).
    """
    table = (float(table_in[0]), float(table_in[1]))
    img = _draw_table(camera, table, texture_seed)
    patches = _place_decoys(decoys, table, markers, np.random.default_rng([texture_seed, 0xDEC0]))
    patches += [m._patch() for m in markers]
    ss = max(1, int(shot.supersample))
    for patch in sorted(patches, key=lambda p: p.centre[2]):
        _draw_patch(img, camera, patch, ss)
    return develop(img, shot)
