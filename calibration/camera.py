"""Camera intrinsics: calibrated once from ChArUco board views, kept in ``camera.toml``.

``camera.toml``::

    image_size = [1920, 1080]
    camera_matrix = [[fx, 0, cx], [0, fy, cy], [0, 0, 1]]
    dist_coeffs = [k1, k2, p1, p2, k3]
    rms_px = 0.21
    [board]
    squares_x = 5 ...
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import cv2
import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict

from tablesight.calibration.dictionaries import dictionary_id
from tablesight.rules.errors import InputError, check_regular, load_toml, read_toml, validate
from tablesight.rules.values import Mm, Pixels

#: Views blurrier than this (variance of the Laplacian over the board) are rejected: sharp
#: photos of a board measure in the thousands, a Gaussian blur of 1.3 px about 150.
BLUR_MIN = 200.0
#: Views whose corners moved less than this (px, on average) from a kept view are duplicates.
DUPLICATE_PX = 8.0
#: A view needs this many board corners to be of use.
MIN_CORNERS = 8


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class BoardSpec(_Strict):
    """A ChArUco board in OpenCV's current layout."""

    squares_x: Annotated[int, Strict(), Field(ge=3, le=100)]
    squares_y: Annotated[int, Strict(), Field(ge=3, le=100)]
    square_mm: Mm
    marker_mm: Mm
    dictionary: Annotated[str, Strict(), Field(max_length=40)] = "6x6_250"

    def board(self) -> cv2.aruco.CharucoBoard:
        return cv2.aruco.CharucoBoard(
            (self.squares_x, self.squares_y),
            self.square_mm,
            self.marker_mm,
            cv2.aruco.getPredefinedDictionary(dictionary_id(self.dictionary)),
        )

    @classmethod
    def from_toml(cls, path: Path) -> BoardSpec:
        data = read_toml(path)
        spec = validate(path, cls, data.get("board", data))
        _check_dictionary(path, "dictionary", spec.dictionary)
        if spec.marker_mm >= spec.square_mm:
            raise InputError(
                f"{path}: marker_mm: expected less than square_mm ({spec.square_mm}), "
                f"got {spec.marker_mm}"
            )
        return spec


#: How many distortion terms OpenCV's lens model takes.
DIST_TERMS = (4, 5, 8, 12, 14)
#: A camera matrix entry, pixels: finite and within a million.
_Px = Annotated[float, Strict(), Field(ge=-1e6, le=1e6, allow_inf_nan=False)]
#: A distortion coefficient: finite and within a thousand.
_Coefficient = Annotated[float, Strict(), Field(ge=-1e3, le=1e3, allow_inf_nan=False)]


def _dist_terms(value: list[float]) -> list[float]:
    if len(value) not in DIST_TERMS:
        raise ValueError(f"expected 4, 5, 8, 12 or 14 distortion terms, not {len(value)}")
    return value


class _CameraFile(_Strict):
    image_size: tuple[Pixels, Pixels]
    camera_matrix: tuple[tuple[_Px, _Px, _Px], tuple[_Px, _Px, _Px], tuple[_Px, _Px, _Px]]
    dist_coeffs: Annotated[list[_Coefficient], AfterValidator(_dist_terms)]
    rms_px: Annotated[float, Strict(), Field(ge=0, le=1e6, allow_inf_nan=False)] | None = None
    board: BoardSpec | None = None


@dataclass(frozen=True)
class CameraModel:
    """A calibrated pinhole camera with lens distortion (OpenCV's model)."""

    image_size: tuple[int, int]
    camera_matrix: np.ndarray
    dist_coeffs: np.ndarray
    rms_px: float | None = None
    board: BoardSpec | None = None

    @classmethod
    def from_toml(cls, path: Path) -> CameraModel:
        spec = load_toml(path, _CameraFile)
        k = np.asarray(spec.camera_matrix, dtype=float)
        if k[0, 0] <= 0 or k[1, 1] <= 0:
            raise InputError(
                f"{path}: camera_matrix: focal lengths must be positive, "
                f"got fx {k[0, 0]} and fy {k[1, 1]}"
            )
        return cls(
            (spec.image_size[0], spec.image_size[1]),
            k,
            np.asarray(spec.dist_coeffs, dtype=float),
            spec.rms_px,
            spec.board,
        )

    def to_toml(self) -> str:
        rows = ", ".join(
            "[" + ", ".join(f"{v:.6f}" for v in row) + "]" for row in self.camera_matrix
        )
        lines = [
            f"image_size = [{self.image_size[0]}, {self.image_size[1]}]",
            f"camera_matrix = [{rows}]",
            "dist_coeffs = [" + ", ".join(f"{v:.8f}" for v in self.dist_coeffs.ravel()) + "]",
        ]
        if self.rms_px is not None:
            lines.append(f"rms_px = {self.rms_px:.4f}")
        if self.board is not None:
            b = self.board
            lines += [
                "",
                "[board]",
                f"squares_x = {b.squares_x}",
                f"squares_y = {b.squares_y}",
                f"square_mm = {b.square_mm}",
                f"marker_mm = {b.marker_mm}",
                f'dictionary = "{b.dictionary}"',
            ]
        return "\n".join(lines) + "\n"

    @property
    def fx(self) -> float:
        return float(self.camera_matrix[0, 0])

    @property
    def fy(self) -> float:
        return float(self.camera_matrix[1, 1])

    @property
    def principal_point(self) -> tuple[float, float]:
        return float(self.camera_matrix[0, 2]), float(self.camera_matrix[1, 2])

    def scaled_to(self, width: int, height: int) -> CameraModel:
        """The same camera with its pictures scaled to ``width`` x ``height`` pixels (a
        video recorded smaller than the camera's pictures, say): the focal lengths and the
        principal point scale with the picture, the distortion (in normalised coordinates)
        does not. Itself at its own size.

        >>> k = np.array([[1000.0, 0, 960], [0, 1000, 540], [0, 0, 1]])
        >>> CameraModel((1920, 1080), k, np.zeros(5)).scaled_to(960, 540).camera_matrix
        array([[500.,   0., 480.],
               [  0., 500., 270.],
               [  0.,   0.,   1.]])
        """
        if (width, height) == tuple(self.image_size):
            return self
        if width <= 0 or height <= 0:
            raise ValueError(
                f"CameraModel.scaled_to: expected a picture size, got {width}x{height}"
            )
        sx, sy = width / self.image_size[0], height / self.image_size[1]
        matrix = np.asarray(self.camera_matrix, dtype=float) * [[sx], [sy], [1.0]]
        return CameraModel((width, height), matrix, self.dist_coeffs)

    def undistort(self, pixels: np.ndarray) -> np.ndarray:
        """Distorted pixels (N, 2) to normalised image coordinates (N, 2): rays (x, y, 1)."""
        pts = np.asarray(pixels, dtype=float).reshape(-1, 1, 2)
        return np.asarray(
            cv2.undistortPoints(pts, self.camera_matrix, self.dist_coeffs).reshape(-1, 2)
        )


@dataclass
class Calibration:
    """What a calibration run found: the camera, and what it used and refused."""

    camera: CameraModel
    used: list[str]
    rejected: dict[str, str] = field(default_factory=dict)
    coverage: float = 0.0
    warnings: list[str] = field(default_factory=list)


class CalibrationError(ValueError):
    """The views cannot calibrate a camera (too few usable ones, say)."""


@dataclass(frozen=True)
class ViewCheck:
    """One board view as a calibration judges it: kept, or why not (``reason``, in the
    words ``Calibration.rejected`` uses), with the board corners found (pixels) and their
    sharpness (None when the board was not found)."""

    name: str
    kept: bool
    reason: str = ""
    corners_px: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    sharpness: float | None = None


class BoardViews:
    """ChArUco views taken one at a time, each kept or refused: another picture size than
    the first view's, the board not found (under ``MIN_CORNERS`` corners), blurry
    (sharpness under ``BLUR_MIN``) or a duplicate of a kept view. :func:`calibrate` is
    this over a sequence of views."""

    def __init__(self, board_spec: BoardSpec) -> None:
        self.board_spec = board_spec
        self._board = board_spec.board()
        self._detector = cv2.aruco.CharucoDetector(self._board)
        self.size: tuple[int, int] | None = None
        self.used: list[str] = []
        self.rejected: dict[str, str] = {}
        self._obj_points: list[np.ndarray] = []
        self._img_points: list[np.ndarray] = []
        self._kept: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, name: str, image: np.ndarray) -> ViewCheck:
        """Judge one view (BGR or grey), keeping it when it is of use."""
        gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        this_size = (gray.shape[1], gray.shape[0])
        if self.size is None:
            self.size = this_size
        elif this_size != self.size:
            size = self.size
            return self._refuse(
                name, f"size {this_size[0]}x{this_size[1]}, the others {size[0]}x{size[1]}"
            )
        corners, ids, _, _ = self._detector.detectBoard(gray)
        if ids is None or len(ids) < MIN_CORNERS:
            found = np.zeros((0, 2)) if corners is None else corners.reshape(-1, 2)
            reason = f"board not found ({0 if ids is None else len(ids)} corners)"
            return self._refuse(name, reason, found)
        sharpness = _sharpness(gray, corners)
        ids = ids.reshape(-1)
        pts = corners.reshape(-1, 2)
        if sharpness < BLUR_MIN:
            reason = f"blurry (sharpness {sharpness:.0f} < {BLUR_MIN:.0f})"
            return self._refuse(name, reason, pts, sharpness)
        if any(_same_view(ids, pts, k_ids, k_pts) for k_ids, k_pts in self._kept):
            return self._refuse(name, "a duplicate of an earlier view", pts, sharpness)
        # a ChArUco board takes the (N, 1, 2) corner array; the stubs want a sequence
        obj, img = self._board.matchImagePoints(corners, ids)  # type: ignore[call-overload]
        self._obj_points.append(obj)
        self._img_points.append(img)
        self._kept.append((ids, pts))
        self.used.append(name)
        return ViewCheck(name, True, "", pts, sharpness)

    def _refuse(
        self,
        name: str,
        reason: str,
        corners_px: np.ndarray | None = None,
        sharpness: float | None = None,
    ) -> ViewCheck:
        self.rejected[name] = reason
        found = np.zeros((0, 2)) if corners_px is None else corners_px
        return ViewCheck(name, False, reason, found, sharpness)

    def coverage_grid(self, cells: int = 5) -> np.ndarray:
        """Which cells of a ``cells`` x ``cells`` grid over the frame (rows from the top)
        a corner of a kept view fell in."""
        if self.size is None:
            return np.zeros((cells, cells), dtype=bool)
        return coverage_grid([p for _, p in self._kept], self.size, cells)

    def calibrate(self) -> Calibration:
        """The camera from the kept views; a :class:`CalibrationError` under three."""
        size = self.size
        if size is None or len(self.used) < 3:
            detail = "; ".join(f"{k}: {v}" for k, v in self.rejected.items())
            raise CalibrationError(
                f"need at least 3 usable board views, got {len(self.used)}"
                + (f" ({detail})" if detail else "")
            )
        rms, k, dist, _, _ = cv2.calibrateCamera(
            self._obj_points, self._img_points, size, None, None
        )
        camera = CameraModel(size, k, dist.reshape(-1), float(rms), self.board_spec)
        coverage = float(self.coverage_grid().mean())
        warnings = []
        if rms > 1.0:
            warnings.append(f"RMS reprojection error {rms:.2f} px is over 1 px: recheck the views")
        if coverage < 0.6:
            warnings.append(
                f"the board covered only {coverage:.0%} of the frame: add views with it near "
                f"the edges and corners"
            )
        return Calibration(camera, list(self.used), dict(self.rejected), coverage, warnings)


def calibrate(views: Iterable[tuple[str, np.ndarray]], board_spec: BoardSpec) -> Calibration:
    """Calibrate from named ChArUco views; blurry and duplicate views are refused."""
    kept = BoardViews(board_spec)
    for name, image in views:
        kept.add(name, image)
    return kept.calibrate()


def read_views(paths: Iterable[Path], every: int = 15) -> Iterator[tuple[str, np.ndarray]]:
    """Images, or frames of videos (one in ``every``), as (name, image)."""
    for path in paths:
        check_regular(path, "an image or video of the board")  # not a device or a pipe
        image = cv2.imread(str(path))
        if image is not None:
            yield str(path), image
            continue
        capture = cv2.VideoCapture(str(path))
        if not capture.isOpened():
            raise InputError(f"{path}: not an image or video OpenCV can read")
        index = 0
        while True:
            ok, frame = capture.read()
            if not ok:
                break
            if index % every == 0:
                yield f"{path}#{index}", frame
            index += 1
        capture.release()


def _sharpness(gray: np.ndarray, corners: np.ndarray) -> float:
    """Variance of the Laplacian over the board's bounding box."""
    x, y, w, h = cv2.boundingRect(corners.reshape(-1, 2).astype(np.float32))
    patch = gray[max(y, 0) : y + h, max(x, 0) : x + w]
    return float(cv2.Laplacian(patch, cv2.CV_64F).var()) if patch.size else 0.0


def _same_view(ids: np.ndarray, pts: np.ndarray, k_ids: np.ndarray, k_pts: np.ndarray) -> bool:
    common, a, b = np.intersect1d(ids, k_ids, return_indices=True)
    if len(common) < 0.8 * max(len(ids), len(k_ids)):
        return False
    return bool(np.linalg.norm(pts[a] - k_pts[b], axis=1).mean() < DUPLICATE_PX)


def coverage_grid(views: list[np.ndarray], size: tuple[int, int], cells: int = 5) -> np.ndarray:
    """Which cells of a ``cells`` x ``cells`` grid over the frame some board corner fell in
    (rows from the top); ``views`` are each view's corners (N, 2) in pixels."""
    hit = np.zeros((cells, cells), dtype=bool)
    for pts in views:
        cx = np.clip((pts[:, 0] / size[0] * cells).astype(int), 0, cells - 1)
        cy = np.clip((pts[:, 1] / size[1] * cells).astype(int), 0, cells - 1)
        hit[cy, cx] = True
    return hit


def _check_dictionary(path: Path, key: str, name: str) -> None:
    try:
        dictionary_id(name)
    except ValueError as exc:
        raise InputError(f"{path}: {key}: {exc}") from None
