"""Markers read where the picture changed, not in the whole picture every frame.

A table is still nearly all the time: between moves nothing changes, during a move a hand
carries a model or two across a small part of the picture, and only a bump or a light
switched on changes everything. :class:`Watcher` does the work the picture asks for, one
:meth:`~Watcher.look` a frame, in time order:

* **A change map.** The picture at ``1/SCALE`` in grey (a camera's JPEG decoded straight
  to that scale while all is quiet) is compared with the picture *as last read* there,
  not with the previous frame, in detail rather than in light: the logarithms of the
  grey less their blur, so a lamp turned or auto-exposure is no change, while a change
  of light by more than ``LIGHT_LEVEL`` is, and a slow drift adds up until it is read.
* **Windows.** Where the map changed, the markers are read again in a window at full
  resolution around the change, at every frame while it goes on changing (a hand over
  the table hides what a whole-picture search would not find either); the last
  detections stand everywhere else.
* **Sweeps.** The whole picture is read on the first frame, when most of it changed (a
  bump, the lights, a camera carried round: then at every frame while it goes on), and
  at least every ``sweep_s`` seconds, so
  that no region is read less often than that (a marker taken away without a visible
  change is found gone within ``sweep_s``).
* **Rest.** While nothing has changed since the last look, frames are not even decoded
  (a camera's JPEG is kept as it came, for the recording) until ``check_s`` has passed.

Each look says what it read (:class:`Look`), so a benchmark or a page can say how much of
the picture was searched. The detections of a window are those the whole-frame detector
finds there: the detector's thresholds and corner refinement are local (23 px at most), and
a window holds every marker it re-reads with more than that around it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import cv2
import numpy as np

from tablesight.vision.aruco import MarkerDetections
from tablesight.vision.frame import Frame
from tablesight.vision.sight import detector

#: The change map's scale: one of its pixels is SCALE x SCALE pixels of the picture.
SCALE = 8
#: A change-map pixel changed when its detail differs from the picture's as last read by
#: more than this: the difference of the logarithms of the grey levels, less its blur over
#: ``LIGHT_SIGMA`` (the light), blurred 3 x 3. A lighting change is a factor over the
#: picture, a difference of logarithms that varies slowly, and goes; a marker's black and
#: white cells appearing or going change it by about 1. Measured on the bench's still
#: table (its light turned a new way in every frame, sensor noise, JPEG): at most 0.06; a
#: 35 px marker painted out: 0.9.
LEVEL = 0.15
#: The scale of the light, in change-map pixels (a Gaussian's sigma: 32 px at full size).
LIGHT_SIGMA = 4.0
#: The light itself changed where it differs by more than this factor's logarithm (0.5:
#: 65% brighter or 40% darker): a lamp switched on, the sun through a window. A slow drift
#: adds up against the picture as last read until it passes this.
LIGHT_LEVEL = 0.5
#: Around a change, how much of the picture is read again (pixels at full resolution), at
#: least: a marker whose outline the change touches is read whole, with the detector's
#: threshold window (23 px) around it.
PAD_PX = 48
#: A marker is taken as read whole by a window when it lies this far inside the window's
#: edges (pixels): the detector's widest threshold window (23 px) fits around it.
MARGIN_PX = 32
#: While nothing changed, how often a frame is looked at (seconds): a change is seen within
#: it (a model put down: within this and the frame after).
CHECK_S = 0.1
#: More than this share of the change map changed at once: the whole picture is read.
BUSY_SHARE = 0.5

Read = Literal["none", "rest", "windows", "sweep", "broken"]


@dataclass(frozen=True)
class Look:
    """What one frame was read for, and the markers it stands with.

    ``read``: ``"sweep"`` (the whole picture searched), ``"windows"`` (``windows_px``
    searched, each ``(x, y, width, height)`` at full resolution), ``"none"`` (compared;
    nothing changed), ``"rest"`` (not even decoded) or ``"broken"`` (not a picture: a
    frame cut short, which a game skips).
    ``fresh``: whether ``detections`` differ from the last look's (a new value).
    ``changed_share``: the share of the change map that differs from the picture as last
    read (0 when not compared); ``busy``: most of the picture changed at once.
    """

    detections: MarkerDetections
    read: Read
    fresh: bool
    windows_px: tuple[tuple[int, int, int, int], ...] = ()
    changed_share: float = 0.0
    busy: bool = False

    @property
    def searched_px(self) -> int:
        """Pixels searched for markers in this frame (a sweep: the whole picture's)."""
        return sum(w * h for _, _, w, h in self.windows_px)


class Watcher:
    """One :meth:`look` per frame, in time order (see the module's docstring)."""

    def __init__(
        self,
        dictionary: str | int,
        sweep_s: float = 1.0,
        check_s: float = CHECK_S,
        level: float = LEVEL,
        pad_px: int = PAD_PX,
        busy_share: float = BUSY_SHARE,
    ) -> None:
        if not 0.0 < check_s <= sweep_s:
            raise ValueError(
                f"Watcher: need 0 < check_s <= sweep_s (seconds), got check_s {check_s}, "
                f"sweep_s {sweep_s}"
            )
        if level <= 0 or pad_px < 0 or not 0.0 < busy_share <= 1.0:
            raise ValueError(
                f"Watcher: need level > 0, pad_px >= 0 and 0 < busy_share <= 1, got "
                f"{level}, {pad_px}, {busy_share}"
            )
        self.dictionary = dictionary
        self.sweep_s = sweep_s
        self.check_s = check_s
        self.level = level
        self.pad_px = pad_px
        self.busy_share = busy_share
        self._last = MarkerDetections.empty()
        #: The change map of the picture as last read, region by region.
        self._read: np.ndarray | None = None
        self._swept_t: float | None = None
        self._looked_t = -np.inf
        #: Something changed and is not read yet: look at every frame until it is.
        self._pending = False

    def look(self, frame: Frame) -> Look:
        """The markers ``frame`` stands with, read where it changed."""
        t = frame.t
        due = self._swept_t is None or t - self._swept_t >= self.sweep_s - 1e-9
        if not due and not self._pending and t - self._looked_t < self.check_s - 1e-9:
            return Look(self._last, "rest", False)
        try:
            if due or self._read is None:
                return self._sweep(frame.gray, t)
            small = _shrunk(frame, self._read.shape, quiet=not self._pending)
            if small is None:  # another size of picture: a new camera, or a new mode
                return self._sweep(frame.gray, t)
        except ValueError:  # a picture cut short (a camera's hiccup): nothing to read
            return Look(self._last, "broken", False)
        small = _log(small)
        self._looked_t = t
        changed = self._changed(small, self._read)
        share = float(changed.mean())
        if share > self.busy_share:
            return self._sweep(frame.gray, t, share=share, busy=True)
        if not changed.any():
            self._pending = False
            return Look(self._last, "none", False, changed_share=share)
        gray = frame.gray  # decoded whole only now, to read the windows
        reach = max(1, int(np.ceil(self._pad() / SCALE)))
        windows = self._windows(changed, reach, gray.shape)
        found = [self._read_window(gray, w) for w in windows]
        self._last = _merged(self._last, windows, found, changed)
        for x, y, w, h in windows:  # read there now: compared with this picture from now on
            sx, sy = x // SCALE, y // SCALE
            sw, sh = -(-(x + w) // SCALE) - sx, -(-(y + h) // SCALE) - sy
            self._read[sy : sy + sh, sx : sx + sw] = small[sy : sy + sh, sx : sx + sw]
        # a region read stays watched frame by frame until it looks as it was read (a hand
        # still moving over it is read again at the next frame, as a whole picture would be)
        self._pending = True
        return Look(self._last, "windows", True, tuple(windows), share)

    def _sweep(self, gray: np.ndarray, t: float, share: float = 0.0, busy: bool = False) -> Look:
        self._last = detector(self.dictionary).detect(gray)
        self._read, self._swept_t, self._looked_t = _log(shrink(gray)), t, t
        # most of the picture changing (a camera carried round): looked at again at the
        # next frame, and searched whole again while it goes on, as often as it can be
        self._pending = busy
        whole = ((0, 0, gray.shape[1], gray.shape[0]),)
        return Look(self._last, "sweep", True, whole, share, busy)

    def _changed(self, small: np.ndarray, reference: np.ndarray) -> np.ndarray:
        """Where the detail of ``small`` differs from ``reference``'s by more than
        ``level``, or the light by more than ``LIGHT_LEVEL`` (both maps of logarithms)."""
        diff = cv2.subtract(small, reference)
        light = cv2.GaussianBlur(diff, (0, 0), LIGHT_SIGMA)
        detail = cv2.blur(cv2.absdiff(diff, light), (3, 3))
        return np.asarray((detail > self.level) | (np.abs(light) > LIGHT_LEVEL))

    def _pad(self) -> float:
        """How far around a change to read: the largest marker's diagonal seen, at least
        ``pad_px``."""
        sides = self._last.side_px
        largest = float(sides.max()) * 1.5 if len(sides) else 0.0
        return max(float(self.pad_px), largest + MARGIN_PX)

    def _windows(
        self, changed: np.ndarray, reach: int, shape: tuple[int, ...]
    ) -> list[tuple[int, int, int, int]]:
        """Full-resolution windows around each region of ``changed`` (grown by ``reach``
        change-map pixels), clipped to the picture."""
        grown = _grown(changed, reach).astype(np.uint8)
        count, _, stats, _ = cv2.connectedComponentsWithStats(grown, connectivity=8)
        height, width = shape[:2]
        out = []
        for x, y, w, h, _ in stats[1:count]:
            x0, y0 = int(x) * SCALE, int(y) * SCALE
            x1, y1 = min(width, int(x + w) * SCALE), min(height, int(y + h) * SCALE)
            out.append((x0, y0, x1 - x0, y1 - y0))
        return out

    def _read_window(self, gray: np.ndarray, window: tuple[int, int, int, int]) -> MarkerDetections:
        x, y, w, h = window
        crop = np.ascontiguousarray(gray[y : y + h, x : x + w])
        found = detector(self.dictionary).detect(crop)
        return MarkerDetections(found.ids, found.corners_px + np.array([x, y], dtype=float))


def shrink(gray: np.ndarray) -> np.ndarray:
    """A grey picture at ``1/SCALE`` of its size (each pixel the mean of its block)."""
    height, width = gray.shape[:2]
    size = (max(1, width // SCALE), max(1, height // SCALE))
    return cv2.resize(gray, size, interpolation=cv2.INTER_AREA)


def _shrunk(frame: Frame, shape: tuple[int, ...], quiet: bool) -> np.ndarray | None:
    """The frame at ``1/SCALE`` as ``shape`` (the last one's), or ``None`` when it is of
    another size: a camera's JPEG decoded straight to that scale when it is not decoded
    yet and all was ``quiet`` at the last look (libjpeg keeps each 8 x 8 block's mean: a
    third less work than the whole picture, and a partial block at the edge, which the
    shrunk picture leaves out, is cut off), else the grey picture shrunk (while something
    changes, the whole picture is likely wanted for its windows anyway)."""
    if not frame.decoded and frame.jpeg is not None and quiet:
        small = cv2.imdecode(frame.jpeg.reshape(-1), cv2.IMREAD_REDUCED_GRAYSCALE_8)
        if small is None:
            raise ValueError(f"frame {frame.index}: not a picture OpenCV can decode")
        extra = (small.shape[0] - shape[0], small.shape[1] - shape[1])
        if extra not in ((0, 0), (0, 1), (1, 0), (1, 1)):
            return None
        return np.asarray(small[: shape[0], : shape[1]])
    small = shrink(frame.gray)
    return small if small.shape == shape else None


def _log(small: np.ndarray) -> np.ndarray:
    """A grey picture's logarithm (a change of light is then a difference, not a factor),
    kept off the noise of the darkest greys."""
    return np.asarray(np.log(small.astype(np.float32) + 8.0))


def _grown(mask: np.ndarray, reach: int) -> np.ndarray:
    """``mask`` grown by ``reach`` pixels every way."""
    kernel = np.ones((2 * reach + 1, 2 * reach + 1), np.uint8)
    return np.asarray(cv2.dilate(mask.astype(np.uint8), kernel) > 0)


def _merged(
    last: MarkerDetections,
    windows: list[tuple[int, int, int, int]],
    found: list[MarkerDetections],
    changed: np.ndarray,
) -> MarkerDetections:
    """The last detections with what the windows read: a marker the windows found is as
    they found it; one not found is gone only where its own place changed and a window
    read it whole (``MARGIN_PX`` inside its edges). Elsewhere the last detection stands:
    a window's edge can cut a base next to a marker whose picture did not change."""
    corners = last.corners_px
    inside = np.zeros(len(last), dtype=bool)
    for x0, y0, w0, h0 in windows:
        x, y, w, h = x0 + MARGIN_PX, y0 + MARGIN_PX, w0 - 2 * MARGIN_PX, h0 - 2 * MARGIN_PX
        xs, ys = corners[:, :, 0], corners[:, :, 1]
        inside |= ((xs >= x) & (xs <= x + w) & (ys >= y) & (ys <= y + h)).all(axis=1)
    moved = np.zeros(len(last), dtype=bool)
    for k in np.flatnonzero(inside):
        lo = np.floor(corners[k].min(axis=0) / SCALE).astype(int) - 1
        hi = np.ceil(corners[k].max(axis=0) / SCALE).astype(int) + 1
        moved[k] = bool(changed[max(lo[1], 0) : hi[1] + 1, max(lo[0], 0) : hi[0] + 1].any())
    new_ids = np.concatenate([f.ids for f in found]) if found else np.zeros(0, int)
    new_corners = np.concatenate([f.corners_px for f in found]) if found else np.zeros((0, 4, 2))
    _, first = np.unique(new_ids, return_index=True)  # windows that overlap: once each
    first.sort()
    new_ids, new_corners = new_ids[first], new_corners[first]
    kept = ~(inside & moved) & ~np.isin(last.ids, new_ids)
    return MarkerDetections(
        np.concatenate([last.ids[kept], new_ids]).astype(int),
        np.concatenate([corners[kept], new_corners]).reshape(-1, 4, 2),
    )
