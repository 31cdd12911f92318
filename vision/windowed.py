"""Markers searched where they were: windows around the last sightings, a scan spread over frames.

Between two frames of a table almost every marker stands where it stood, so searching the
whole frame again each time is mostly wasted. :class:`WindowedDetector` searches each
marker of the last frame in a window around where its last two sightings put it, and
finds markers that appear (put down, uncovered) with a scan of the whole frame spread
over ``bands`` frames: one horizontal band of the frame per frame, the bands overlapping
by more than a marker. A marker put down anywhere is found within ``bands`` frames (at
most 4, 0.13 s at 30 fps, by default), sooner when it lands in another marker's window.

Its markers are those of a search of the whole frame (:class:`vision.aruco.MarkerDetector`):
each crop is searched with the same settings in pixels (the perimeter limits, rates of
the image's larger side, are worked out for the whole frame and given to the crop as
rates of its own), and a marker is taken from a crop only when it stands at least
``CONTEXT_PX`` inside it (or at the frame's own border), where everything the detector
looks at around it (the adaptive threshold's 23 px window, the contour, the border
check) is the same in the crop as in the frame. A marker of the last frame not found in
its window is searched once more in a window three times as wide; when that misses too it
is left to the scan. The whole frame is searched when its size changes, when nothing was
found in the last frame, and when most of the markers of the last frame were missed
(the camera was knocked).

The corners are not bit for bit the whole frame's: without refinement the candidates
are (a crop at any offset finds the same to the last bit), but OpenCV's contour
refinement fits each edge's line by normal equations in single precision on the
pixel coordinates as they are, so its rounding depends on where the marker stands in the
image searched. The whole frame's corners are the noisier ones (larger coordinates):
measured against a crop's, up to 0.01 px at 720p, 0.03-0.06 px at 1080p and 0.16 px at
4K. Nor is it faster on a table full of markers: the detector's time goes mostly into
the candidates each marker's cells make, which every window holds, not into the empty
table between them (on the throughput footage's 1080p frame, 44 windows cost 70-90% of
the whole frame's search, the scan's band a fifth more). :class:`vision.observe.Observer`
uses it only when asked (``windowed=True``).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.aruco import MarkerDetections, MarkerDetector, clean_cells, detector_parameters

#: How far inside a crop a marker must stand to be found there as in the whole frame, in
#: pixels: the adaptive threshold's largest window reaches 11 px around a pixel, the
#: detector refuses candidates within 3 px of the image border; the rest is a margin.
CONTEXT_PX = 16
#: Bands of the frame scanned in turn for new markers: one per frame.
BANDS = 4
#: The tallest marker the scan is sure to find, as a share of the frame's height (taller
#: ones are found when tracked markers are, or by a search of the whole frame).
TALLEST = 1.0 / 12.0
#: A window reaches this many marker sides around the predicted square, plus
#: ``SLACK_PX``; the second search of a marker missed reaches ``WIDER`` times as far.
SLACK_SIDES = 0.25
SLACK_PX = 3.0
WIDER = 3.0
#: Share of the last frame's markers missed in their windows beyond which the frame is
#: searched whole (a knocked camera moves every marker at once).
MISSED_SHARE = 0.5


@dataclass(frozen=True)
class Box:
    """A rectangle of pixels, ``x0 <= x < x1``, ``y0 <= y < y1``."""

    x0: int
    y0: int
    x1: int
    y1: int

    def overlaps(self, other: Box) -> bool:
        return (
            self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1
        )

    def union(self, other: Box) -> Box:
        return Box(
            min(self.x0, other.x0),
            min(self.y0, other.y0),
            max(self.x1, other.x1),
            max(self.y1, other.y1),
        )

    @property
    def area(self) -> int:
        return (self.x1 - self.x0) * (self.y1 - self.y0)


def merged(boxes: list[Box]) -> list[Box]:
    """Boxes that overlap replaced by their union where that union is no larger than the
    two apart (one search instead of two over the same pixels), until none is."""
    out = list(boxes)
    changed = True
    while changed:
        changed = False
        done: list[Box] = []
        for box in out:
            for i, other in enumerate(done):
                union = other.union(box)
                if box.overlaps(other) and union.area <= box.area + other.area:
                    done[i] = union
                    changed = True
                    break
            else:
                done.append(box)
        out = done
    return out


class WindowedDetector:
    """:class:`vision.aruco.MarkerDetector`'s results, searched in windows (see the module)."""

    def __init__(
        self,
        dictionary: str | int,
        image_size: tuple[int, int] = (1920, 1080),
        refine: str = "contour",
        bands: int = BANDS,
    ) -> None:
        self.full = MarkerDetector(dictionary, image_size, refine)
        self.dictionary = self.full.dictionary
        self.refine = refine
        self.bands = bands
        self._reset(image_size)

    @property
    def image_size(self) -> tuple[int, int]:
        return self.full.image_size

    def _reset(self, image_size: tuple[int, int]) -> None:
        self.full._resize(image_size)
        params = detector_parameters(image_size, self.refine)
        longest = max(image_size)
        # the perimeter limits in pixels, as the detector works them out for the whole frame
        self._perimeter_px = (
            int(params.minMarkerPerimeterRate * longest),
            int(params.maxMarkerPerimeterRate * longest),
        )
        self._crop_detectors: dict[int, cv2.aruco.ArucoDetector] = {}
        self._last = MarkerDetections.empty()
        self._before = MarkerDetections.empty()
        self._band = 0
        #: the tallest marker side seen, for the bands' overlap
        self._tallest_px = 0.0

    def _crop_detector(self, longest: int) -> cv2.aruco.ArucoDetector:
        """A detector for crops whose larger side is ``longest``, with the whole frame's
        perimeter limits in pixels."""
        detector = self._crop_detectors.get(longest)
        if detector is None:
            params = detector_parameters(self.image_size, self.refine)
            low, high = self._perimeter_px
            params.minMarkerPerimeterRate = (low + 0.5) / longest
            params.maxMarkerPerimeterRate = (high + 0.5) / longest
            detector = cv2.aruco.ArucoDetector(self.dictionary, params)
            self._crop_detectors[longest] = detector
        return detector

    def detect(self, image: np.ndarray) -> MarkerDetections:
        """Markers in a BGR or grey frame, as ``MarkerDetector.detect`` finds them."""
        gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        size = (gray.shape[1], gray.shape[0])
        if size != self.image_size:
            self._reset(size)
        found = self._windowed(gray) if len(self._last) else self._whole(gray)
        self._before, self._last = self._last, found
        if len(found):
            self._tallest_px = max(self._tallest_px, float(_extent(found.corners_px).max()))
        return found

    def _whole(self, gray: np.ndarray) -> MarkerDetections:
        self._band = 0
        return _ordered(self.full.detect(gray))

    def _windowed(self, gray: np.ndarray) -> MarkerDetections:
        h, w = gray.shape
        predicted = self._predicted()
        sides = self._last.side_px
        boxes = [self._window(c, s, 1.0, w, h) for c, s in zip(predicted, sides, strict=True)]
        boxes.append(self._band_box(w, h))
        ids, corners = self._search(gray, merged(boxes))
        missed = [
            k
            for k, i in enumerate(self._last.ids.tolist())
            if not _has(ids, corners, i, predicted[k], sides[k])
        ]
        if len(missed) > MISSED_SHARE * len(self._last):
            return self._whole(gray)
        if missed:
            wider = [self._window(predicted[k], sides[k], WIDER, w, h) for k in missed]
            more_ids, more_corners = self._search(gray, merged(wider))
            ids += more_ids
            corners += more_corners
        self._band = (self._band + 1) % self.bands
        found = _unique(ids, corners)
        if not len(found):
            return found
        found = found.select(clean_cells(gray, found.corners_px, self.dictionary.markerSize + 2))
        return _ordered(found)

    def _predicted(self) -> np.ndarray:
        """Where each marker of the last frame should be now: moved on as much as it moved
        since the frame before (when that frame saw it, near enough to be the same)."""
        out = self._last.corners_px.copy()
        before = self._before
        if not len(before):
            return out
        for k, (i, c) in enumerate(
            zip(self._last.ids.tolist(), self._last.corners_px, strict=True)
        ):
            same = np.flatnonzero(before.ids == i)
            if not len(same):
                continue
            centre = c.mean(axis=0)
            d = np.linalg.norm(before.corners_px[same].mean(axis=1) - centre, axis=1)
            j = int(np.argmin(d))
            side = float(self._last.side_px[k])
            if d[j] < 2.0 * side:
                out[k] = c + (c - before.corners_px[same[j]])
        return out

    def _window(self, corners: np.ndarray, side: float, scale: float, w: int, h: int) -> Box:
        slack = scale * (SLACK_SIDES * side + SLACK_PX) + CONTEXT_PX
        lo = corners.min(axis=0) - slack
        hi = corners.max(axis=0) + slack
        return Box(
            max(0, int(np.floor(lo[0]))),
            max(0, int(np.floor(lo[1]))),
            min(w, int(np.ceil(hi[0])) + 1),
            min(h, int(np.ceil(hi[1])) + 1),
        )

    def _band_box(self, w: int, h: int) -> Box:
        """This frame's band of the scan, reaching a marker's height (and the context)
        past its share of the rows."""
        tallest = max(TALLEST * h, 1.5 * self._tallest_px)
        y0 = self._band * h // self.bands
        y1 = (self._band + 1) * h // self.bands
        return Box(0, max(0, y0 - CONTEXT_PX), w, min(h, int(y1 + tallest) + CONTEXT_PX + 1))

    def _search(self, gray: np.ndarray, boxes: list[Box]) -> tuple[list[int], list[np.ndarray]]:
        """Markers found in the boxes, at least ``CONTEXT_PX`` inside (or at the frame's
        border), in frame pixels; before the cell check."""
        h, w = gray.shape
        ids: list[int] = []
        corners: list[np.ndarray] = []
        for box in boxes:
            crop = gray[box.y0 : box.y1, box.x0 : box.x1]
            detector = self._crop_detector(max(crop.shape))
            found_corners, found_ids, _ = detector.detectMarkers(crop)
            if found_ids is None or not len(found_corners):
                continue
            c = np.asarray(found_corners, dtype=float).reshape(-1, 4, 2)
            lo = c.min(axis=1)
            hi = c.max(axis=1)
            inside = (
                ((lo[:, 0] >= CONTEXT_PX) | (box.x0 == 0))
                & ((lo[:, 1] >= CONTEXT_PX) | (box.y0 == 0))
                & ((hi[:, 0] < crop.shape[1] - CONTEXT_PX) | (box.x1 == w))
                & ((hi[:, 1] < crop.shape[0] - CONTEXT_PX) | (box.y1 == h))
            )
            offset = np.array([box.x0, box.y0], dtype=float)
            for i, q, ok in zip(np.asarray(found_ids).reshape(-1).tolist(), c, inside, strict=True):
                if ok:
                    ids.append(int(i))
                    corners.append(q + offset)
        return ids, corners


def _extent(corners: np.ndarray) -> np.ndarray:
    """Each marker's larger extent along x or y, in pixels."""
    return np.asarray((corners.max(axis=1) - corners.min(axis=1)).max(axis=1))


def _has(
    ids: list[int], corners: list[np.ndarray], marker: int, near: np.ndarray, side: float
) -> bool:
    centre = near.mean(axis=0)
    return any(
        i == marker and float(np.linalg.norm(c.mean(axis=0) - centre)) < 2.0 * side + SLACK_PX
        for i, c in zip(ids, corners, strict=True)
    )


def _unique(ids: list[int], corners: list[np.ndarray]) -> MarkerDetections:
    """One of each marker found in more than one crop (same id, same place)."""
    keep_ids: list[int] = []
    keep: list[np.ndarray] = []
    for i, c in zip(ids, corners, strict=True):
        centre = c.mean(axis=0)
        if any(
            j == i and float(np.linalg.norm(k.mean(axis=0) - centre)) < 1.0
            for j, k in zip(keep_ids, keep, strict=True)
        ):
            continue
        keep_ids.append(i)
        keep.append(c)
    if not keep:
        return MarkerDetections.empty()
    return MarkerDetections(np.array(keep_ids, dtype=int), np.array(keep, dtype=float))


def _ordered(found: MarkerDetections) -> MarkerDetections:
    """By id, then top to bottom, left to right (a whole-frame search's order is the
    detector's own)."""
    if not len(found):
        return found
    c = found.centers_px
    order = np.lexsort((c[:, 0], c[:, 1], found.ids))
    return MarkerDetections(found.ids[order], found.corners_px[order])
