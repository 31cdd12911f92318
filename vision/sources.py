"""Where frames come from: a webcam, a video file, a folder of images, a network stream.

``open_source("0")`` is webcam 0, ``open_source("match.mp4")`` a video file,
``open_source("shots/*.png")`` or a folder a sequence of images, and
``open_source("http://phone:8080/video")`` (or ``rtsp://...``) a network stream.

Files are read in order, every frame, with their own timestamps; a Motion JPEG file's
frames are decoded ahead on a pool of threads (:mod:`tablesight.vision.decodepool`), where their
markers are found too when a ``detect`` stage is given. Live sources are
read on a thread of their own; their JPEG frames are decoded on the pool as they arrive,
and while every worker is busy only the newest frame waits, so processing never falls
behind the camera; a live source that fails or is unplugged is retried with backoff, and its
``status`` says "camera lost, retrying".
"""

from __future__ import annotations

import glob
import os
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np

from tablesight.rules.errors import shown
from tablesight.vision.decodepool import WORKERS, Detect, NewestDecoder, is_jpeg, read_ahead
from tablesight.vision.frame import Frame as Frame  # the frames a source gives

# A lost stream is reported once as "camera lost, retrying", not by FFmpeg on every retry,
# and a camera that is not there is one line of ours, not OpenCV's "[ WARN ...]" lines.
os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")
cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)

#: How long a live source may take to deliver its first picture before it is taken for
#: one that is not there.
OPEN_WAIT_S = 8.0
#: ... or fails to open this many times in a row before that.
GIVE_UP_AFTER = 3

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"}


class SourceError(ValueError):
    """A source that cannot be opened: the message says what was tried."""


class FileSource:
    """A video file or a sequence of image files, every frame in order."""

    live = False

    def __init__(self, spec: str) -> None:
        self.spec = spec
        path = Path(spec)
        try:
            mode: int | None = path.stat().st_mode
        except FileNotFoundError:
            mode = None
        except (OSError, ValueError) as exc:  # a name too long, a NUL in it, no access
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise SourceError(f"{shown(spec)}: {why}") from None
        if any(ch in spec for ch in "*?["):
            self.images = sorted(glob.glob(spec))
            if not self.images:
                raise SourceError(f"{shown(spec)}: no files match")
        elif mode is None:
            raise SourceError(f"{shown(spec)}: no such file or folder")
        elif stat.S_ISDIR(mode):
            self.images = sorted(
                str(p) for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES
            )
            if not self.images:
                raise SourceError(f"{shown(spec)}: no images in this folder")
        elif not stat.S_ISREG(mode):
            raise SourceError(
                f"{shown(spec)}: a device or special file, not a video file or a folder of "
                "pictures (a webcam is given by its number, e.g. --source 0)"
            )
        else:
            self.images = []
            capture = cv2.VideoCapture(spec)
            ok = capture.isOpened()
            capture.release()
            if not ok:
                raise SourceError(f"{shown(spec)}: not a video OpenCV can read")
        self.fps = 30.0
        #: Threads decoding a video's frames ahead.
        self.workers = WORKERS

    def frames(self, detect: Detect | None = None, decode: bool = True) -> Iterator[Frame]:
        """Every frame in order; a video's with the markers ``detect`` found in it on the
        thread that decoded it (see :func:`~tablesight.vision.decodepool.read_ahead`)."""
        if self.images:
            for index, name in enumerate(self.images):
                image = cv2.imread(name)
                if image is None:
                    raise SourceError(f"{name}: not an image OpenCV can read")
                yield Frame(image, index / self.fps, index)
            return
        capture = cv2.VideoCapture(self.spec)
        self.fps = capture.get(cv2.CAP_PROP_FPS) or 30.0
        capture.release()
        for decoded in read_ahead(self.spec, self.workers, detect, decode=decode):
            yield decoded.frame()


#: Codecs whose streams time each frame (FOURCC as OpenCV says it, lower case): their
#: frames are timed by the stream's own clock. A webcam's raw or JPEG pictures, and Motion
#: JPEG over HTTP, carry no times OpenCV reads (it says 0, or makes up steps of 40 ms).
TIMED_CODECS = frozenset({"h264", "avc1", "x264", "hevc", "h265", "hev1", "hvc1"})
#: How much of a stream's step between two frames a frame's time moves on at the least:
#: a lead over the arrivals (frames sent in a burst) is given back by 1% of each step.
STREAM_STEP_SHARE = 0.99
#: A step of the stream's clock longer than this (seconds: a gap in the stream) counts
#: only this much; the arrivals tell the rest.
STREAM_STEP_MAX_S = 1.0
#: A frame whose time is this far (seconds) ahead of its arrival came in a burst (a frame
#: late by a network's jitter and the next on time lead by tens of milliseconds): it waits
#: for the referee to take those before it rather than replace them (the stream waits,
#: as it was sent, in the network's buffers), never past its own time.
BURST_LEAD_S = 0.1
#: ... for this long at most on a connection (seconds): the referee falls behind the
#: stream by no more, once a connection. x264's look-ahead sends 4 s of a 10 fps stream in
#: 0.6 s; a referee taking one frame every 60 ms takes all of it with 5.0 s and 132 of 150
#: frames with 2.0, but is 1.8 s behind at worst with 5.0 and 1.6 s with 2.0 (and one
#: taking one every 200 ms, 3.5 s behind against 1.7 s for the same frames).
BURST_WAIT_S = 2.0
#: Once this many waits in a row end without room while the referee takes frames (it is
#: slower than the stream, not held up for a moment: waiting would only add to its
#: delay), frames on that connection are dropped as before, the oldest first.
BURST_MISSES = 3


class StreamClock:
    """The times of a live source's frames: each frame's time is the later of when it
    arrived and the last frame's time plus 99% of the step the stream's own clock made
    (H.264 and H.265 in MPEG-TS or RTSP time each frame: OpenCV's ``CAP_PROP_POS_MSEC``).
    Frames that arrive in a burst (an encoder's look-ahead emptying as the stream opens:
    x264 sends the first 4 s of a 10 fps stream in 0.6 s) keep the spacing they were taken
    with, and the lead over the arrivals that gives is given back by 1% of each step (4 s
    in 400 s of stream), so a stream clock a little fast never runs away and a slow or
    stalled one is overtaken by the arrivals: no time ever jumps. A stream without times
    (``None``), and a new connection's first frame, step as far as the arrivals did (99%
    of it, so a lead left by a burst is given back as well); a step back (a frame
    reordered or concealed, a count started again) steps nothing. Times only go forward."""

    def __init__(self) -> None:
        self._stream_s: float | None = None  # the last frame's stream time
        self._arrived_s: float | None = None  # when the last frame arrived
        self._t = -np.inf  # the last time given

    def reconnected(self) -> None:
        """A new connection: its stream times start afresh."""
        self._stream_s = None

    def time(self, arrived_s: float, stream_ms: float | None) -> float:
        """The time of a frame that arrived at ``arrived_s`` with the stream's own time
        ``stream_ms`` (milliseconds, or ``None``)."""
        step = arrived_s - self._arrived_s if self._arrived_s is not None else 0.0
        if stream_ms is not None and np.isfinite(stream_ms) and stream_ms >= 0:
            at = stream_ms / 1000.0
            if self._stream_s is not None:
                step = at - self._stream_s
            self._stream_s = at
        self._arrived_s = arrived_s
        step = min(max(step, 0.0), STREAM_STEP_MAX_S)
        t = max(arrived_s, self._t + STREAM_STEP_SHARE * step)
        self._t = max(t, self._t + 1e-6)
        return self._t


class BurstWait:
    """How a live source's frames wait for the referee on one connection: a frame more
    than ``BURST_LEAD_S`` ahead of its arrival (a burst) waits for room
    (:meth:`NewestDecoder.wait_room`), never past its own time, ``BURST_WAIT_S`` in all at
    most, and not at all once ``BURST_MISSES`` waits in a row found none while the referee
    was taking frames."""

    def __init__(self) -> None:
        self.waited_s = 0.0
        self._misses = 0  # waits in a row that ended without room while the referee took

    def wait(self, decoder: NewestDecoder, lead_s: float, asked: bool) -> None:
        """Before a frame ``lead_s`` ahead of its arrival is handed to ``decoder``;
        ``asked``: whether the referee takes frames yet."""
        if lead_s <= BURST_LEAD_S or self.waited_s >= BURST_WAIT_S:
            return
        began = time.monotonic()
        room = decoder.wait_room(min(lead_s, BURST_WAIT_S - self.waited_s))
        self.waited_s += time.monotonic() - began
        self._misses = 0 if room or not asked else self._misses + 1
        if self._misses >= BURST_MISSES:
            self.waited_s = BURST_WAIT_S  # the referee is slower than the stream


class LiveSource:
    """A webcam or network stream read on its own thread; its frames are decoded on a pool
    of ``workers`` threads, and while all are busy only the newest frame waits."""

    live = True

    def __init__(
        self,
        spec: str,
        size: tuple[int, int] = (1920, 1080),
        retry_s: tuple[float, float] = (0.5, 8.0),
        workers: int = WORKERS,
    ) -> None:
        self.spec = spec
        self.size = size
        self.retry_s = retry_s
        self.status = "starting"
        self.granted: tuple[int, int, str] | None = None
        #: Decodes the frames as they arrive; counts those dropped.
        self.decoder = NewestDecoder(workers)
        #: Set once the source has delivered its first picture.
        self.delivered = threading.Event()
        #: Times the source could not be opened, or gave nothing, since the last picture.
        self.failures = 0
        #: Whether the source sends JPEG pictures (passed through) or another codec
        #: (decoded by OpenCV); ``None`` until its first frame says.
        self._jpeg: bool | None = None
        #: What the decode threads find in each frame (``frames`` says), with its decoding.
        self._detect: Detect | None = None
        #: Until the game asks (``frames``), a camera's JPEGs wait undecoded: the game
        #: decodes those it needs, and more of them wait while it starts than pictures.
        self._decode = False
        #: Whether the game has asked for frames (:meth:`frames`).
        self._asked = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name=f"source {spec}", daemon=True)
        self._thread.start()

    def _open(self) -> cv2.VideoCapture:
        target: int | str = int(self.spec) if self.spec.isdigit() else self.spec
        capture = cv2.VideoCapture(target)
        if isinstance(target, int) and capture.isOpened():
            # Ask webcams for 1080p MJPG; report what they granted.
            capture.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter.fourcc(*"MJPG"))
            capture.set(cv2.CAP_PROP_FRAME_WIDTH, self.size[0])
            capture.set(cv2.CAP_PROP_FRAME_HEIGHT, self.size[1])
        if capture.isOpened():
            self.granted = (
                int(capture.get(cv2.CAP_PROP_FRAME_WIDTH)),
                int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT)),
                _fourcc(capture),
            )
        return capture

    def _raw(self, capture: cv2.VideoCapture) -> tuple[bool, np.ndarray | None]:
        """Ask for compressed frames (decoded on the pool); whether they are JPEG, and the
        first one read. Decided once per source: a camera that sends another codec (H.264
        from a phone or an IP camera) is opened again to be decoded by OpenCV, from then on
        (switching a capture back from compressed frames is not to be trusted: some
        OpenCV versions go on handing over packets)."""
        if self._jpeg is False or not _says_jpeg(capture):
            self._jpeg = False  # H.264, H.265, raw: OpenCV decodes it (one connection)
            return False, None
        if not capture.set(cv2.CAP_PROP_FORMAT, -1):
            return False, None
        ok, packet = capture.read()
        if ok and is_jpeg(packet):
            self._jpeg = True
            return True, packet
        if ok:
            self._jpeg = False  # another codec: decoded by OpenCV, reopened below
        return False, None

    def _read(self) -> None:
        delay = self.retry_s[0]
        index = 0
        start = time.monotonic()
        clock = StreamClock()
        while not self._stop.is_set():
            capture = self._open()
            clock.reconnected()
            raw, first = self._raw(capture) if capture.isOpened() else (False, None)
            if not raw and capture.isOpened() and capture.get(cv2.CAP_PROP_FORMAT) == -1:
                capture.release()  # asked for packets that are not JPEG: open it anew
                capture = self._open()
            timed = self._timed()  # decided once a connection, not at every frame
            burst = BurstWait()
            while not self._stop.is_set() and capture.isOpened():
                if first is not None:
                    ok, image, first = True, first, None
                else:
                    ok, image = capture.read()
                if not ok:
                    break
                if raw and not is_jpeg(image):
                    self._jpeg = False
                    break  # reopened in the ordinary way
                if not raw and (image.ndim == 1 or image.shape[0] == 1):
                    break  # a packet where a picture was asked for: not a picture, retried
                self.status = "live"
                self.failures = 0
                self.delivered.set()
                delay = self.retry_s[0]
                data = image.copy() if raw else image
                arrived = time.monotonic() - start
                t = clock.time(arrived, capture.get(cv2.CAP_PROP_POS_MSEC) if timed else None)
                # ahead of its time (a burst): read at the referee's pace, the stream
                # waiting as it was sent
                burst.wait(self.decoder, t - arrived, self._asked)
                self.decoder.submit(index, t, data, self._detect, self._decode)
                index += 1
            capture.release()
            if self._stop.is_set():
                break
            self.failures += 1
            self.status = "camera lost, retrying"
            self._stop.wait(delay)
            delay = min(delay * 2.0, self.retry_s[1])

    def _timed(self) -> bool:
        """Whether the frames carry the stream's own times: decoded by OpenCV, of a codec
        that times its frames."""
        codec = self.granted[2].lower() if self.granted else ""
        return self._jpeg is False and codec in TIMED_CODECS

    def wait_opened(self, timeout_s: float = OPEN_WAIT_S) -> None:
        """Wait for the first picture; a source that gives none within ``timeout_s`` is
        closed and is a :class:`SourceError` (once it has delivered, a source that drops
        out is retried instead: "camera lost, retrying")."""
        deadline = time.monotonic() + timeout_s
        while not self.delivered.wait(0.1):
            # a webcam that is not there fails at once, every time: no need to wait it out
            if time.monotonic() > deadline or self.failures >= GIVE_UP_AFTER:
                break
        else:
            return
        self._stop.set()  # the reader may be stuck opening a stream: it is not waited for
        self.decoder.close()
        if self.spec.isdigit():
            what = f"camera {self.spec}: no such camera answers on this machine"
        elif self.failures:
            what = f"{self.spec}: the stream cannot be opened"
        else:
            what = f"{self.spec}: the stream sends no pictures"
        hint = (
            "is it plugged in, switched on, and not in use by another program?"
            if self.spec.isdigit()
            else "is the address right (host, port and path, as the camera's app shows it), "
            "and the camera on and on this network?"
        )
        tried_s = time.monotonic() - deadline + timeout_s
        raise SourceError(f"{what} (tried for {tried_s:.0f} s); {hint}")

    def frames(
        self, timeout_s: float | None = None, detect: Detect | None = None, decode: bool = True
    ) -> Iterator[Frame]:
        """Each frame decoded, in the order they arrived, with the markers ``detect``
        found in it on the thread that decoded it; frames the referee cannot keep up with
        are skipped, the newest kept (a burst's frames, ahead of their times, wait for it
        instead: ``BURST_WAIT_S``). Ends after ``timeout_s`` without a frame."""
        self._detect, self._decode, self._asked = detect, decode, True
        while not self._stop.is_set():
            decoded = self.decoder.take(timeout_s)
            if decoded is None:
                return
            yield decoded.frame()

    @property
    def dropped(self) -> int:
        """Frames that arrived and were skipped: the referee was behind (or a frame came
        cut short)."""
        return self.decoder.dropped

    def close(self) -> None:
        self._stop.set()
        self.decoder.close()
        self._thread.join(timeout=5.0)


def _fourcc(capture: cv2.VideoCapture) -> str:
    """The capture's codec as its four letters ("MJPG", "h264", "YUYV", ...)."""
    code = int(capture.get(cv2.CAP_PROP_FOURCC))
    return "".join(chr((code >> 8 * i) & 0xFF) for i in range(4)).strip("\x00 ")


def _says_jpeg(capture: cv2.VideoCapture) -> bool:
    """Whether the capture's codec is Motion JPEG, by its FOURCC (known before a frame is
    read: a stream that serves one connection is not opened twice to find out)."""
    return _fourcc(capture).upper() in ("MJPG", "JPEG", "MJPEG")


def open_source(spec: str) -> FileSource | LiveSource:
    """The source ``spec`` names: a webcam index, a URL, a file, a folder or a glob."""
    if spec.isdigit() or "://" in spec:
        return LiveSource(spec)
    return FileSource(spec)
