"""Markers searched where they are: windows around their tracks, a scan spread over frames.

Between two frames of a table almost every marker stands where it stood, so searching the
whole frame again each time is mostly wasted. :class:`WindowedDetector` searches each
marker of the frames before in a window around where its motion puts it now, and finds
markers that appear (put down, uncovered, carried in) with a scan of the whole frame in
tiles, a few tiles a frame: a marker put down anywhere is found within ``SCAN_FRAMES``
frames (0.2 s at 30 fps), sooner when it lands in a window.

The windows and this frame's scan tiles are packed side by side into one picture, a
mosaic, searched by one ``detectMarkers`` call: one call, not one per window, so the
detector's fixed cost per call is paid once, and both threads of its thresholding work
on the whole. Boxes stand ``GAP_PX`` apart in the mosaic, wider than the adaptive
threshold's window, so nothing in one box reaches into another.

Its markers are those of a search of the whole frame (:class:`vision.aruco.MarkerDetector`),
with the same settings in pixels: a marker is taken from a box only when it stands at
least ``CONTEXT_PX`` inside it (or at the frame's own border), where everything the
detector looks at around a marker (the threshold's 23 px window, its contour, the border
check) is what it is in the whole frame. A marker of the frame before not found in its
window is searched again in one ``WIDER`` times as wide; when that misses too it is left
to the scan. The whole frame is searched on the first frame, when the frame's size
changes, and when most markers were missed at once (the camera was knocked).

Measured on the throughput footage (``vision.rig.throughput``'s clip, 44 markers, one
OpenCV thread, 24 frames): 1080p 28.5 ms a frame against the whole frame's 19.1 (0.67x),
4K 59.4 against 64.6 (1.09x). The mosaic holds a quarter of the frame's pixels for the
windows and a fifth for the scan's tiles, but the detector's time goes mostly into the
candidates each marker's cells make, which every window holds, and into the textured
models around them, not into the empty table between. Corners: up to 0.06 px from the
whole frame's at 1080p, 0.24 px at 4K (OpenCV's contour refinement sums in single
precision over coordinates as large as the picture searched).

One detector serves every thread of a decode pool at once (``concurrent``): the frames'
searches share what was found under a lock, each thread searches with its own OpenCV
detectors, and a frame is predicted from the newest frame found before it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import cv2
import numpy as np

from vision.aruco import MarkerDetections, MarkerDetector, clean_cells, detector_parameters

#: How far inside a box a marker must stand to be found there as in the whole frame, in
#: pixels: the adaptive threshold's largest window reaches 11 px around a pixel, the
#: detector refuses candidates within 3 px of the image border; the rest is a margin.
CONTEXT_PX = 16
#: Empty pixels between two boxes in the mosaic: more than the threshold's reach on both
#: sides, so that no contour joins two boxes.
GAP_PX = 32
#: Frames over which the scan covers the whole frame once.
SCAN_FRAMES = 8
#: The side of a scan tile, before its overlap with the next, in pixels.
TILE_PX = 1024
#: The tallest marker the scan is sure to find, as a share of the frame's height (a taller
#: one is found when tracked, or by a search of the whole frame).
TALLEST = 1.0 / 12.0
#: A window reaches this many marker sides around the predicted square, plus ``SLACK_PX``
#: and the distance the marker moved since the frame before; the second search of a
#: marker missed reaches ``WIDER`` times as far.
SLACK_SIDES = 0.25
SLACK_PX = 3.0
WIDER = 3.0
#: Share of the last frame's markers missed in their windows beyond which the frame is
#: searched whole (a knocked camera moves every marker at once).
MISSED_SHARE = 0.5
#: The mosaic's width in pixels (its height grows with what it holds), and the step its
#: sides are rounded up to (one OpenCV detector per size a thread has met).
MOSAIC_WIDTH_PX = 1024
MOSAIC_STEP_PX = 128


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
    def width(self) -> int:
        return self.x1 - self.x0

    @property
    def height(self) -> int:
        return self.y1 - self.y0

    @property
    def area(self) -> int:
        return self.width * self.height


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


def tiles(size: tuple[int, int], overlap_px: int, tile_px: int = TILE_PX) -> list[Box]:
    """The frame cut into tiles of about ``tile_px``, each reaching ``overlap_px`` into the
    next, so that any marker up to ``overlap_px - 2 * CONTEXT_PX`` tall stands, with its
    context, wholly inside one of them."""
    w, h = size
    out = []
    for y in range(0, h, tile_px):
        for x in range(0, w, tile_px):
            out.append(
                Box(x, y, min(w, x + tile_px + overlap_px), min(h, y + tile_px + overlap_px))
            )
    return out


@dataclass(frozen=True)
class Mosaic:
    """Boxes of a frame packed into one picture: ``at[k]`` is where box ``k``'s top left
    corner lands."""

    boxes: tuple[Box, ...]
    at: tuple[tuple[int, int], ...]
    size: tuple[int, int]

    @classmethod
    def pack(cls, boxes: list[Box], width: int = MOSAIC_WIDTH_PX) -> Mosaic:
        """Shelves of boxes, tallest first, ``GAP_PX`` apart and from the edges."""
        width = max([width] + [b.width + 2 * GAP_PX for b in boxes])
        order = sorted(range(len(boxes)), key=lambda k: (-boxes[k].height, k))
        at: dict[int, tuple[int, int]] = {}
        x = y = GAP_PX
        shelf = 0
        for k in order:
            box = boxes[k]
            if x + box.width + GAP_PX > width:
                x, y, shelf = GAP_PX, y + shelf + GAP_PX, 0
            at[k] = (x, y)
            x += box.width + GAP_PX
            shelf = max(shelf, box.height)
        height = y + shelf + GAP_PX
        step = MOSAIC_STEP_PX
        size = (-(-width // step) * step, -(-height // step) * step)
        return cls(tuple(boxes), tuple(at[k] for k in range(len(boxes))), size)

    def picture(self, gray: np.ndarray) -> np.ndarray:
        out = np.full((self.size[1], self.size[0]), 128, np.uint8)
        for box, (x, y) in zip(self.boxes, self.at, strict=True):
            out[y : y + box.height, x : x + box.width] = gray[box.y0 : box.y1, box.x0 : box.x1]
        return out

    def to_frame(
        self, ids: np.ndarray, corners: np.ndarray, frame_size: tuple[int, int]
    ) -> tuple[list[int], list[np.ndarray]]:
        """Markers found in the mosaic, in frame pixels: each from the box it stands at
        least ``CONTEXT_PX`` inside (or at the frame's border); others are dropped."""
        w, h = frame_size
        out_ids: list[int] = []
        out: list[np.ndarray] = []
        lo_all = corners.min(axis=1)
        hi_all = corners.max(axis=1)
        for i, c, lo, hi in zip(ids.tolist(), corners, lo_all, hi_all, strict=True):
            for box, (x, y) in zip(self.boxes, self.at, strict=True):
                if not (
                    x <= lo[0] and hi[0] < x + box.width and y <= lo[1] and hi[1] < y + box.height
                ):
                    continue
                inside = (
                    (lo[0] - x >= CONTEXT_PX or box.x0 == 0)
                    and (lo[1] - y >= CONTEXT_PX or box.y0 == 0)
                    and (x + box.width - hi[0] > CONTEXT_PX or box.x1 == w)
                    and (y + box.height - hi[1] > CONTEXT_PX or box.y1 == h)
                )
                if inside:
                    out_ids.append(int(i))
                    out.append(c + np.array([box.x0 - x, box.y0 - y], dtype=float))
                break
        return out_ids, out


class WindowedDetector:
    """:class:`vision.aruco.MarkerDetector`'s results, searched in windows (see the module)."""

    #: Safe to call from several threads at once (a decode pool's).
    concurrent = True

    def __init__(
        self,
        dictionary: str | int,
        image_size: tuple[int, int] = (1920, 1080),
        refine: str = "contour",
        scan_frames: int = SCAN_FRAMES,
    ) -> None:
        self._dictionary_arg = dictionary
        self.dictionary = MarkerDetector(dictionary, image_size, refine).dictionary
        self.refine = refine
        self.scan_frames = scan_frames
        self._lock = threading.Lock()
        self._local = threading.local()
        #: Counts of what each frame's search did, for benchmarks and tests.
        self.whole_searches = 0
        self.windowed_searches = 0
        self.wider_searches = 0
        self._reset(image_size)

    @property
    def image_size(self) -> tuple[int, int]:
        return self._size

    def _reset(self, image_size: tuple[int, int]) -> None:
        self._size = image_size
        params = detector_parameters(image_size, self.refine)
        longest = max(image_size)
        # the perimeter limits in pixels, as the detector works them out for the whole frame
        self._perimeter_px = (
            int(params.minMarkerPerimeterRate * longest),
            int(params.maxMarkerPerimeterRate * longest),
        )
        self._generation = getattr(self, "_generation", 0) + 1
        #: the newest frame found and the one before it: (sequence, markers)
        self._last: tuple[int, MarkerDetections] | None = None
        self._before: tuple[int, MarkerDetections] | None = None
        self._seq = 0
        #: the tallest marker side seen, for the tiles' overlap
        self._tallest_px = 0.0

    # -- OpenCV detectors, one set per thread -----------------------------------------

    def _own(self) -> dict[object, cv2.aruco.ArucoDetector]:
        own = getattr(self._local, "detectors", None)
        if own is None or self._local.generation != self._generation:
            own = {}
            self._local.detectors, self._local.generation = own, self._generation
        return own

    def _whole_detector(self) -> MarkerDetector:
        own = self._own()
        detector = own.get("whole")
        if detector is None:
            detector = MarkerDetector(self._dictionary_arg, self._size, self.refine)
            own["whole"] = detector
        assert isinstance(detector, MarkerDetector)
        return detector

    def _mosaic_detector(self, size: tuple[int, int]) -> cv2.aruco.ArucoDetector:
        """A detector for a mosaic of ``size`` with the whole frame's perimeter limits in
        pixels."""
        own = self._own()
        longest = max(size)
        detector = own.get(longest)
        if detector is None:
            params = detector_parameters(self._size, self.refine)
            low, high = self._perimeter_px
            params.minMarkerPerimeterRate = (low + 0.5) / longest
            params.maxMarkerPerimeterRate = (high + 0.5) / longest
            detector = cv2.aruco.ArucoDetector(self.dictionary, params)
            own[longest] = detector
        return detector

    # -- a frame ------------------------------------------------------------------------

    def detect(self, image: np.ndarray) -> MarkerDetections:
        """Markers in a BGR or grey frame, as ``MarkerDetector.detect`` finds them."""
        gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        size = (gray.shape[1], gray.shape[0])
        with self._lock:
            if size != self._size:
                self._reset(size)
            seq = self._seq
            self._seq += 1
            last, before = self._last, self._before
            tallest = self._tallest_px
        if last is None or not len(last[1]):
            found = self._whole(gray)
        else:
            found = self._windowed(gray, seq, last, before, tallest)
        with self._lock:
            if size == self._size and (self._last is None or seq > self._last[0]):
                self._before, self._last = self._last, (seq, found)
                if len(found):
                    self._tallest_px = max(self._tallest_px, float(_extent(found.corners_px).max()))
        return found

    def _whole(self, gray: np.ndarray) -> MarkerDetections:
        with self._lock:
            self.whole_searches += 1
        return _ordered(self._whole_detector().detect(gray))

    def _windowed(
        self,
        gray: np.ndarray,
        seq: int,
        last: tuple[int, MarkerDetections],
        before: tuple[int, MarkerDetections] | None,
        tallest_px: float,
    ) -> MarkerDetections:
        h, w = gray.shape
        markers = last[1]
        predicted, moved = _predicted(seq, last, before)
        sides = markers.side_px
        boxes = [
            _window(c, s, m, 1.0, w, h) for c, s, m in zip(predicted, sides, moved, strict=True)
        ]
        boxes += self._scan(seq, (w, h), tallest_px)
        ids, corners = self._search(gray, merged(boxes))
        missed = [
            k
            for k, i in enumerate(markers.ids.tolist())
            if not _has(ids, corners, i, predicted[k], sides[k] + moved[k])
        ]
        if len(missed) > MISSED_SHARE * len(markers):
            return self._whole(gray)
        with self._lock:
            self.windowed_searches += 1
        if missed:
            with self._lock:
                self.wider_searches += 1
            wider = [_window(predicted[k], sides[k], moved[k], WIDER, w, h) for k in missed]
            more_ids, more_corners = self._search(gray, merged(wider))
            ids += more_ids
            corners += more_corners
        found = _unique(ids, corners)
        if not len(found):
            return found
        found = found.select(clean_cells(gray, found.corners_px, self.dictionary.markerSize + 2))
        return _ordered(found)

    def _scan(self, seq: int, size: tuple[int, int], tallest_px: float) -> list[Box]:
        """This frame's share of the scan's tiles: every ``scan_frames``-th, in turn."""
        overlap = int(max(TALLEST * size[1], 1.5 * tallest_px)) + 2 * CONTEXT_PX
        every = tiles(size, overlap)
        turn = seq % max(1, self.scan_frames)
        return every[turn :: max(1, self.scan_frames)]

    def _search(self, gray: np.ndarray, boxes: list[Box]) -> tuple[list[int], list[np.ndarray]]:
        """Markers found in the boxes (one mosaic, one search), in frame pixels; before the
        cell check."""
        mosaic = Mosaic.pack(boxes)
        found_corners, found_ids, _ = self._mosaic_detector(mosaic.size).detectMarkers(
            mosaic.picture(gray)
        )
        if found_ids is None or not len(found_corners):
            return [], []
        c = np.asarray(found_corners, dtype=float).reshape(-1, 4, 2)
        size = (gray.shape[1], gray.shape[0])
        return mosaic.to_frame(np.asarray(found_ids).reshape(-1), c, size)


def _predicted(
    seq: int, last: tuple[int, MarkerDetections], before: tuple[int, MarkerDetections] | None
) -> tuple[np.ndarray, np.ndarray]:
    """Where each marker of the newest frame found should be in frame ``seq``: moved on at
    the pace it moved since the frame before (when that frame saw it, near enough to be
    the same); and how far that is, in pixels."""
    seq_last, markers = last
    out = markers.corners_px.copy()
    moved = np.zeros(len(markers))
    if before is None or not len(before[1]):
        return out, moved
    seq_before, earlier = before
    pace = (seq - seq_last) / max(1, seq_last - seq_before)
    for k, (i, c) in enumerate(zip(markers.ids.tolist(), markers.corners_px, strict=True)):
        same = np.flatnonzero(earlier.ids == i)
        if not len(same):
            continue
        centre = c.mean(axis=0)
        d = np.linalg.norm(earlier.corners_px[same].mean(axis=1) - centre, axis=1)
        j = int(np.argmin(d))
        side = float(markers.side_px[k])
        if d[j] < 2.0 * side:
            step = (c - earlier.corners_px[same[j]]) * pace
            out[k] = c + step
            moved[k] = float(np.linalg.norm(step.mean(axis=0)))
    return out, moved


def _window(corners: np.ndarray, side: float, moved: float, scale: float, w: int, h: int) -> Box:
    slack = scale * (SLACK_SIDES * side + SLACK_PX + moved) + CONTEXT_PX
    lo = corners.min(axis=0) - slack
    hi = corners.max(axis=0) + slack
    return Box(
        max(0, int(np.floor(lo[0]))),
        max(0, int(np.floor(lo[1]))),
        min(w, int(np.ceil(hi[0])) + 1),
        min(h, int(np.ceil(hi[1])) + 1),
    )


def _extent(corners: np.ndarray) -> np.ndarray:
    """Each marker's larger extent along x or y, in pixels."""
    return np.asarray((corners.max(axis=1) - corners.min(axis=1)).max(axis=1))


def _has(
    ids: list[int], corners: list[np.ndarray], marker: int, near: np.ndarray, reach: float
) -> bool:
    centre = near.mean(axis=0)
    return any(
        i == marker and float(np.linalg.norm(c.mean(axis=0) - centre)) < 2.0 * reach + SLACK_PX
        for i, c in zip(ids, corners, strict=True)
    )


def _unique(ids: list[int], corners: list[np.ndarray]) -> MarkerDetections:
    """One of each marker found in more than one box (same id, same place)."""
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
