"""What a webcam does to footage over time: motion blur, exposure drift, video compression.

:class:`Webcam` is a storyboard's ``[webcam]`` table (see :mod:`tablesight.rig.footage`); every
effect is off unless asked for, so a storyboard without it renders as before.

* ``motion_blur_s``: the shutter stays open this long before each picture, so whatever a
  hand moves (the hand, and a carried figure) is smeared along its path over that time: the
  moving layer is drawn at several instants across the exposure and averaged (enough
  instants that consecutive ones are under a pixel apart, up to ``MAX_BLUR_SAMPLES``);
* ``exposure_drift``: auto-exposure hunting, a slow gain on the whole picture,
  ``1 + drift * w(t)`` with ``w`` a smooth sum of two sines of periods
  ``exposure_period_s`` and 0.37 of it (phases from ``seed``), ``|w| <= 1``;
* ``codec`` / ``bitrate_kbps``: how :func:`tablesight.rig.footage.write_video` compresses.
  ``"mjpg"`` (``.avi``, OpenCV's own writer, ``jpeg_quality``), ``"mp4v"`` (``.mp4``,
  OpenCV), ``"ffv1"`` (lossless, ``.avi``) and ``"h264"`` (``.mp4``): real H.264 by libx264
  at ``bitrate_kbps`` (default 3000), through PyAV (``pip install av``; its wheels bundle
  FFmpeg with libx264).  OpenCV's own wheels cannot encode H.264 (their FFmpeg has no
  libx264, only hardware encoders that are absent here), but they decode it, so an H.264
  file written here plays through ``cv2.VideoCapture`` like a camera's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import cv2
import numpy as np

__all__ = ["CODECS", "MAX_BLUR_SAMPLES", "Webcam", "apply_gain", "exposure_gain", "write_frames"]

#: The codecs ``write_frames`` knows, and the file suffix each wants.
CODECS = {"mjpg": ".avi", "mp4v": ".mp4", "ffv1": ".avi", "h264": ".mp4"}
#: Most instants a motion-blurred picture averages.
MAX_BLUR_SAMPLES = 32
#: Gain steps: a drifting gain is rounded to 1/GAIN_STEPS (frames with equal gain are shared).
GAIN_STEPS = 1024
Codec = Literal["mjpg", "mp4v", "ffv1", "h264"]


@dataclass(frozen=True)
class Webcam:
    """Time effects and compression of a storyboard's footage (all off by default)."""

    motion_blur_s: float = 0.0
    exposure_drift: float = 0.0
    exposure_period_s: float = 5.0
    codec: Codec | None = None  # None: by the file's suffix (.mp4 mp4v, .avi MJPG)
    bitrate_kbps: float | None = None  # H.264's target bitrate (default 3000)
    jpeg_quality: int | None = None  # MJPG's quality (OpenCV's default otherwise)
    seed: int = 0

    def problem(self) -> tuple[str, str] | None:
        """(field, what) of the first bad value, or None."""
        if not (math.isfinite(self.motion_blur_s) and 0 <= self.motion_blur_s <= 1):
            return "motion_blur_s", f"must be 0 to 1 s, got {self.motion_blur_s!r}"
        if not (math.isfinite(self.exposure_drift) and 0 <= self.exposure_drift < 1):
            return "exposure_drift", f"must be 0 to below 1, got {self.exposure_drift!r}"
        if not (math.isfinite(self.exposure_period_s) and self.exposure_period_s > 0):
            return "exposure_period_s", f"must be positive, got {self.exposure_period_s!r}"
        if self.codec is not None and self.codec not in CODECS:
            return "codec", f"expected one of {', '.join(CODECS)}, got {self.codec!r}"
        if self.bitrate_kbps is not None and not (
            math.isfinite(self.bitrate_kbps) and 50 <= self.bitrate_kbps <= 100_000
        ):
            return "bitrate_kbps", f"must be 50 to 100000, got {self.bitrate_kbps!r}"
        if self.jpeg_quality is not None and not 1 <= self.jpeg_quality <= 100:
            return "jpeg_quality", f"must be 1 to 100, got {self.jpeg_quality!r}"
        return None

    def gain(self, t: float) -> float:
        """The exposure gain at ``t`` (1.0 without drift)."""
        return exposure_gain(t, self.exposure_drift, self.exposure_period_s, self.seed)


def exposure_gain(t: float, drift: float, period_s: float, seed: int = 0) -> float:
    """Auto-exposure's slow gain at ``t``: ``1 + drift * w(t)``, ``|w| <= 1``, smooth."""
    if drift == 0:
        return 1.0
    phase = np.random.default_rng([seed, 0xE8]).uniform(0, 2 * math.pi, 2)
    w = 0.7 * math.sin(2 * math.pi * t / period_s + phase[0]) + 0.3 * math.sin(
        2 * math.pi * t / (0.37 * period_s) + phase[1]
    )
    return round((1.0 + drift * w) * GAIN_STEPS) / GAIN_STEPS


def apply_gain(img: np.ndarray, gain: float) -> np.ndarray:
    """A uint8 picture times ``gain``, rounded and saturated (a new array; the same one at 1)."""
    if gain == 1.0:
        return img
    lut = np.clip(np.rint(np.arange(256, dtype=np.float64) * gain), 0, 255).astype(np.uint8)
    return cv2.LUT(img, lut)


def write_frames(
    images: Iterable[np.ndarray],
    path: Path,
    fps: float,
    size: tuple[int, int],
    codec: Codec | str,
    bitrate_kbps: float | None = None,
    jpeg_quality: int | None = None,
) -> int:
    """Write BGR pictures to a video file; returns how many. ``codec`` is one of ``CODECS``
    or any OpenCV fourcc; ``"h264"`` needs PyAV (``ValueError`` saying so if it is absent)."""
    if codec == "h264":
        return _write_h264(images, path, fps, size, bitrate_kbps or 3000.0)
    fourcc = {"mjpg": "MJPG", "mp4v": "mp4v", "ffv1": "FFV1"}.get(codec, codec)
    writer = cv2.VideoWriter(
        str(path),
        cv2.VideoWriter_fourcc(*fourcc),  # type: ignore[attr-defined]
        fps,
        size,
    )
    if not writer.isOpened():
        raise ValueError(f"{path}: OpenCV cannot write {fourcc!r} video here")
    if jpeg_quality is not None:
        writer.set(cv2.VIDEOWRITER_PROP_QUALITY, float(jpeg_quality))
    count = 0
    try:
        for image in images:
            writer.write(image)
            count += 1
    finally:
        writer.release()
    return count


def _write_h264(
    images: Iterable[np.ndarray], path: Path, fps: float, size: tuple[int, int], kbps: float
) -> int:
    try:
        import av
    except ImportError:
        raise ValueError(f"{path}: H.264 needs PyAV (pip install av)") from None
    from fractions import Fraction

    count = 0
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=Fraction(fps).limit_denominator(1001))
        stream.width, stream.height = size
        stream.pix_fmt = "yuv420p"
        stream.bit_rate = int(kbps * 1000)
        # a webcam's encoder: no B-frames, a keyframe every 2 s, rate-controlled
        stream.options = {
            "preset": "veryfast",
            "bf": "0",
            "g": str(max(1, round(2 * fps))),
            "maxrate": f"{int(kbps * 1.2)}k",
            "bufsize": f"{int(kbps)}k",
        }
        for image in images:
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(image), format="bgr24")
            for packet in stream.encode(frame):
                container.mux(packet)
            count += 1
        for packet in stream.encode():
            container.mux(packet)
    return count


def pictures(path: Path, count: int | None = None) -> list[np.ndarray]:
    """A video's pictures in order (the first ``count``), as ``cv2.VideoCapture`` decodes
    them: what a test reads back."""
    return [image for _, image in timed_pictures(path, count)]


def timed_pictures(path: Path, count: int | None = None) -> list[tuple[float, np.ndarray]]:
    """The video's pictures in order (the first ``count``), each with its time in seconds."""
    capture = cv2.VideoCapture(str(path))
    out = []
    while count is None or len(out) < count:
        ok, image = capture.read()
        if not ok:
            break
        out.append((capture.get(cv2.CAP_PROP_POS_MSEC) / 1000.0, image))
    capture.release()
    return out
