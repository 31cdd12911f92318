"""ArUco marker detection: one detector pass per frame, corners in pixels.

Uses the OpenCV 4.7+/5.x API only (``cv2.aruco.ArucoDetector``); in 5.x ``ids`` comes
back 1-D. Detection runs on the raw frame; lens distortion is removed from the corner
points afterwards, never from the whole image.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from tablesight.calibration.dictionaries import dictionary_id


@dataclass(frozen=True)
class MarkerDetections:
    """Markers found in one frame: ``ids`` (N,) and ``corners_px`` (N, 4, 2).

    Corners are in OpenCV's order for the printed marker: top-left, top-right,
    bottom-right, bottom-left.
    """

    ids: np.ndarray
    corners_px: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.ids)
        if self.ids.shape != (n,) or self.corners_px.shape != (n, 4, 2):
            raise ValueError(
                f"MarkerDetections: ids must be (N,) and corners_px (N, 4, 2), got "
                f"{self.ids.shape} and {self.corners_px.shape}"
            )

    @classmethod
    def from_aruco(cls, corners: Sequence[np.ndarray], ids: np.ndarray | None) -> MarkerDetections:
        """From ``ArucoDetector.detectMarkers`` output (ids 1-D in 5.x, (N,1) in 4.x)."""
        if ids is None or len(corners) == 0:
            return cls.empty()
        return cls(
            np.asarray(ids, dtype=int).reshape(-1),
            np.asarray(corners, dtype=float).reshape(-1, 4, 2),
        )

    @classmethod
    def empty(cls) -> MarkerDetections:
        return cls(np.zeros(0, dtype=int), np.zeros((0, 4, 2)))

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def centers_px(self) -> np.ndarray:
        return np.asarray(self.corners_px.mean(axis=1))

    @property
    def side_px(self) -> np.ndarray:
        """Mean side length of each marker in pixels."""
        sides = np.linalg.norm(self.corners_px - np.roll(self.corners_px, -1, axis=1), axis=2)
        return np.asarray(sides.mean(axis=1))

    def select(self, mask: np.ndarray) -> MarkerDetections:
        return MarkerDetections(self.ids[mask], self.corners_px[mask])

    def by_id(self) -> dict[int, np.ndarray]:
        """Corners by id (a marker seen twice keeps its first sighting)."""
        out: dict[int, np.ndarray] = {}
        for i, c in zip(self.ids.tolist(), self.corners_px, strict=True):
            out.setdefault(i, c)
        return out


#: The smallest marker side, in pixels, the detector is asked to look for.
MIN_SIDE_PX = 12.0
#: The share of a cell's inner samples that must agree with its colour. Measured on 8
#: rendered frames with 60 decoys each: printed markers of 24 px and more score 1.0; at this
#: threshold all 245 markers of 18 px and more were kept and both decoys that decode to a
#: valid code (scoring 0.50 and 0.56) were refused.
CELL_PURITY = 0.6


def detector_parameters(
    image_size: tuple[int, int], refine: str = "contour"
) -> cv2.aruco.DetectorParameters:
    """Detector settings chosen by measurement (see docs/detector-settings.md).

    OpenCV's default ``minMarkerPerimeterRate`` (0.03 of the larger image side) drops
    markers under 14 px at 1080p and under 29 px at 4K; it is set here from a fixed
    smallest side in pixels instead. Corners are refined by fitting lines to the marker's
    edges (``CORNER_REFINE_CONTOUR``): its marker centres were 2.5 times as accurate as
    ``cornerSubPix``'s, which pulls L-shaped corners 0.1-0.3 px inwards.
    """
    params = cv2.aruco.DetectorParameters()
    params.minMarkerPerimeterRate = 4.0 * MIN_SIDE_PX / max(image_size)
    params.cornerRefinementMethod = {
        "none": cv2.aruco.CORNER_REFINE_NONE,
        "subpix": cv2.aruco.CORNER_REFINE_SUBPIX,
        "contour": cv2.aruco.CORNER_REFINE_CONTOUR,
        "apriltag": cv2.aruco.CORNER_REFINE_APRILTAG,
    }[refine]
    params.cornerRefinementWinSize = 4
    params.cornerRefinementMaxIterations = 50
    params.cornerRefinementMinAccuracy = 0.01
    # Two thresholding passes (3 and 23 px windows) instead of OpenCV's three (3, 13, 23):
    # as many markers found, in 60% of the time.
    params.adaptiveThreshWinSizeMin = 3
    params.adaptiveThreshWinSizeMax = 23
    params.adaptiveThreshWinSizeStep = 20
    return params


class MarkerDetector:
    """One ``cv2.aruco.ArucoDetector`` for frames of one size and one dictionary."""

    def __init__(
        self,
        dictionary: str | int,
        image_size: tuple[int, int] = (1920, 1080),
        refine: str = "contour",
    ) -> None:
        dict_id = dictionary_id(dictionary) if isinstance(dictionary, str) else dictionary
        self.dictionary = cv2.aruco.getPredefinedDictionary(dict_id)
        self.refine = refine
        self._resize(image_size)

    def _resize(self, image_size: tuple[int, int]) -> None:
        self.image_size = image_size
        self._detector = cv2.aruco.ArucoDetector(
            self.dictionary, detector_parameters(image_size, self.refine)
        )

    def detect(self, image: np.ndarray) -> MarkerDetections:
        """Markers in a BGR or grey frame."""
        gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        size = (gray.shape[1], gray.shape[0])
        if size != self.image_size:
            self._resize(size)
        corners, ids, _ = self._detector.detectMarkers(gray)
        found = MarkerDetections.from_aruco(corners, ids)
        if not len(found):
            return found
        return found.select(clean_cells(gray, found.corners_px, self.dictionary.markerSize + 2))


def clean_cells(gray: np.ndarray, corners_px: np.ndarray, cells: int) -> np.ndarray:
    """Which markers have every cell one colour inside (a printed marker's are).

    A pattern of finer squares can sample to a valid code; its cells are split. Each
    marker's cells are sampled at 4 x 4 points over their inner half (one ``remap`` for
    all markers), split at the middle of the marker's dark and light values, and
    ``CELL_PURITY`` of each cell's samples must agree with its colour.
    """
    n = len(corners_px)
    square = np.array([[0, 0], [cells, 0], [cells, cells], [0, cells]], dtype=np.float32)
    homographies = np.stack(
        [cv2.getPerspectiveTransform(square, c.astype(np.float32)) for c in corners_px]
    )
    steps = 0.25 + np.arange(4) / 6.0  # 0.25 .. 0.75 of a cell
    cu, cv = np.meshgrid(np.arange(cells), np.arange(cells), indexing="ij")
    su, sv = np.meshgrid(steps, steps, indexing="ij")
    u = (cu[:, :, None, None] + su).ravel()
    v = (cv[:, :, None, None] + sv).ravel()
    pts = np.stack([u, v, np.ones_like(u)])  # (3, K)
    img = homographies @ pts  # (n, 3, K)
    xy = (img[:, :2] / img[:, 2:3]).astype(np.float32)
    values = cv2.remap(gray, xy[:, 0], xy[:, 1], cv2.INTER_LINEAR).astype(float)  # (n, K)
    ordered = np.sort(values, axis=1)
    tenth = max(values.shape[1] // 10, 1)
    split = (ordered[:, :tenth].mean(axis=1) + ordered[:, -tenth:].mean(axis=1)) / 2
    light = (values > split[:, None]).reshape(n, cells * cells, 16).mean(axis=2)
    purity = np.maximum(light, 1.0 - light).min(axis=1)
    return np.asarray(purity >= CELL_PURITY)
