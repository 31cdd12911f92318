"""Frames decoded on a pool of threads, so that decoding and detection use every core.

Motion JPEG (what webcams send and what match videos hold) is a sequence of independent
JPEG pictures: one capture reads the compressed pictures (``CAP_PROP_FORMAT = -1``, no
decoding) and a pool of threads decodes them with ``cv2.imdecode``, which, like
``detectMarkers``, lets go of the GIL, so the threads run on separate cores. Given a
``detect`` stage (a picture in, its :class:`~tablesight.vision.aruco.MarkerDetections`
out, such as ``functools.partial(vision.sight.detect, dictionary=...)``), each worker also
finds the markers of the picture it decoded, and they travel on with it: in
:attr:`Decoded.detections`, then in the :class:`~tablesight.vision.frame.Frame`'s.

* :func:`read_ahead`: every frame of a file, decoded ahead and handed over in order;
* :class:`NewestDecoder`: a live camera's frames, decoded as they arrive; when every
  worker is busy, only the newest frame waits (older ones are dropped and counted), and
  frames come out in the order they arrived.

A video whose frames are not JPEG pictures (H.264, say) is decoded by ``cv2.VideoCapture``
on a reader thread of its own, one frame ahead of processing. Pictures decoded here come
from libjpeg, not FFmpeg's decoder: a few levels apart on some pixels, the same markers
at the same corners.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import cv2
import numpy as np

from tablesight.vision.aruco import MarkerDetections
from tablesight.vision.frame import Frame

#: Threads that decode frames (and find their markers): the cores of a small machine.
WORKERS = 2
#: Frames decoded ahead of the one being processed, per worker.
AHEAD_PER_WORKER = 2
#: A live camera's frames handed on undecoded, kept while the referee is behind (a 4K
#: sweep takes a frame period or more): a quarter of a second at 30 fps.
UNDECODED_KEEP = 8

#: A picture's markers found: run on the thread that decoded it.
Detect = Callable[[np.ndarray], MarkerDetections]


@dataclass(frozen=True)
class Decoded:
    """One decoded frame: its number, time (seconds), its picture in grey, the markers
    ``detect`` found in it (``None`` without one), and either the JPEG ``packet`` it was
    decoded from or, for a video that is not Motion JPEG, its colour ``image``."""

    index: int
    t: float
    gray: np.ndarray | None
    detections: MarkerDetections | None = None
    packet: np.ndarray | None = None
    image: np.ndarray | None = None

    def frame(self) -> Frame:
        """As a :class:`~tablesight.vision.frame.Frame` with its markers (colour decoded from the
        packet when asked)."""
        return Frame(self.image, self.t, self.index, self.packet, self.gray, self.detections)


def is_jpeg(packet: np.ndarray | None) -> bool:
    """Whether a packet read with ``CAP_PROP_FORMAT = -1`` is a JPEG picture."""
    return (
        packet is not None
        and packet.size > 4
        and int(packet.flat[0]) == 0xFF
        and int(packet.flat[1]) == 0xD8
    )


def decode(packet: np.ndarray, flags: int = cv2.IMREAD_COLOR) -> np.ndarray:
    """A JPEG packet as a BGR picture (or grey, with ``cv2.IMREAD_GRAYSCALE``);
    ``ValueError`` if it is not one."""
    image = cv2.imdecode(packet.reshape(-1), flags)
    if image is None:
        raise ValueError("a frame of the video is not a picture OpenCV can decode")
    return image


def _work(
    index: int, t: float, packet: np.ndarray, detect: Detect | None, decode_now: bool = True
) -> Decoded | None:
    """A packet decoded to grey (all detection needs; colour is decoded from the packet
    when a view asks) and its markers found; ``None`` for one that is not a picture (a frame cut
    short or garbled, as a camera's stream gives when it hiccups): skipped, not fatal."""
    if not decode_now and detect is None and is_jpeg(packet):
        if not _ends_whole(packet):
            return None  # cut short: never a picture, whoever looks at it
        return Decoded(index, t, None, packet=packet)  # decoded when, and if, it is looked at
    try:
        gray = decode(packet, cv2.IMREAD_GRAYSCALE)
    except ValueError:
        return None
    found = detect(gray) if detect is not None else None
    return Decoded(index, t, gray, found, packet=packet)


def _ends_whole(packet: np.ndarray) -> bool:
    """Whether a JPEG packet ends with its end-of-image marker (FF D9), allowing the few
    padding bytes some cameras add after it: one cut short has none (inside the picture's
    data a 0xFF byte is always followed by 00 or a restart marker)."""
    return b"\xff\xd9" in packet.reshape(-1)[-32:].tobytes()


def _picture(index: int, t: float, image: np.ndarray, detect: Detect | None) -> Decoded:
    """A picture decoded already (by ``cv2.VideoCapture``), its markers found on its grey."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    return Decoded(index, t, gray, detect(gray) if detect is not None else None, image=image)


def _open_raw(path: str) -> tuple[cv2.VideoCapture, np.ndarray] | None:
    """A capture that hands over compressed JPEG pictures and its first one, or ``None``
    (not MJPG)."""
    capture = cv2.VideoCapture(path)
    if not capture.isOpened() or not capture.set(cv2.CAP_PROP_FORMAT, -1):
        capture.release()
        return None
    ok, packet = capture.read()
    if not ok or not is_jpeg(packet):
        capture.release()
        return None
    return capture, packet.copy()


def read_ahead(
    path: str,
    workers: int = WORKERS,
    detect: Detect | None = None,
    ahead: int | None = None,
    decode: bool = True,
) -> Iterator[Decoded]:
    """Every frame of the video file ``path``, in order, decoded ``ahead`` frames ahead
    (default ``AHEAD_PER_WORKER`` per worker) on ``workers`` threads; each with the
    markers ``detect`` found in it on the thread that decoded it. Without ``detect`` and
    with ``decode`` false, a Motion JPEG file's pictures come undecoded (decoded when
    something looks at them: :attr:`Frame.gray <tablesight.vision.frame.Frame.gray>`)."""
    ahead = ahead if ahead is not None else max(1, workers) * AHEAD_PER_WORKER
    opened = _open_raw(path)
    if opened is None:
        yield from _read_sequential(path, detect, ahead)
        return
    capture, first = opened
    fps = capture.get(cv2.CAP_PROP_FPS) or 30.0
    pending: deque[Future[Decoded | None]] = deque()
    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="decode")
    try:
        index = 0
        more = True
        while more or pending:
            while more and len(pending) < ahead:
                if index == 0:
                    ok, packet = True, first
                else:
                    ok, packet = capture.read()
                if not ok:
                    more = False
                    break
                msec = capture.get(cv2.CAP_PROP_POS_MSEC)
                t = msec / 1000.0 if msec > 0 else index / fps
                pending.append(pool.submit(_work, index, t, packet.copy(), detect, decode))
                index += 1
            if pending:
                done = pending.popleft().result()
                if done is not None:
                    yield done
    finally:
        for job in pending:
            job.cancel()
        pool.shutdown(wait=True)
        capture.release()


def _read_sequential(path: str, detect: Detect | None, ahead: int) -> Iterator[Decoded]:
    """A video that is not MJPG: ``cv2.VideoCapture`` decodes it on a thread of its own."""
    capture = cv2.VideoCapture(path)
    fps = capture.get(cv2.CAP_PROP_FPS) or 30.0
    done = object()
    slots = threading.Semaphore(ahead)
    out: deque[object] = deque()
    ready = threading.Condition()
    stop = threading.Event()

    def read() -> None:
        index = 0
        try:
            while not stop.is_set():
                ok, image = capture.read()
                if not ok:
                    break
                msec = capture.get(cv2.CAP_PROP_POS_MSEC)
                t = msec / 1000.0 if msec > 0 else index / fps
                item: object = _picture(index, t, image, detect)
                while not slots.acquire(timeout=0.1):
                    if stop.is_set():
                        return
                with ready:
                    out.append(item)
                    ready.notify()
                index += 1
        except BaseException as exc:  # raised by the consumer
            with ready:
                out.append(exc)
                ready.notify()
        finally:
            with ready:
                out.append(done)
                ready.notify()

    reader = threading.Thread(target=read, name=f"decode {path}", daemon=True)
    reader.start()
    try:
        while True:
            with ready:
                ready.wait_for(lambda: bool(out))
                item = out.popleft()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            slots.release()
            assert isinstance(item, Decoded)
            yield item
    finally:
        stop.set()
        reader.join(timeout=5.0)
        capture.release()


class NewestDecoder:
    """A live camera's compressed frames decoded on ``workers`` threads as they arrive.

    :meth:`submit` hands over a frame (a JPEG packet, or a picture already decoded); while
    every worker is decoding, the newest frame waits and the one it replaces is dropped
    (counted in :attr:`dropped`). :meth:`take` gives decoded frames in the order they
    arrived; of those decoded and not yet taken, at most one per worker is kept (the
    oldest is dropped): the referee sees every frame it can keep up with, a frame at most
    a few periods old, and never one older than a frame it has seen. With ``detect``, each
    frame's markers are found on the thread that decoded it and come with it.
    """

    def __init__(self, workers: int = WORKERS) -> None:
        self.workers = max(1, workers)
        self.dropped = 0
        self.arrived = 0
        self._cond = threading.Condition()
        self._waiting: tuple[int, float, np.ndarray, Detect | None, bool] | None = None
        self._running = 0
        self._done: dict[int, Decoded] = {}
        self._failed: BaseException | None = None
        self._order: deque[int] = deque()  # indexes in flight or done, oldest first
        self._closed = False
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="decode")

    def submit(
        self,
        index: int,
        t: float,
        data: np.ndarray,
        detect: Detect | None = None,
        decode: bool = True,
    ) -> None:
        """Frame ``index`` arrived at ``t``: a JPEG packet or a decoded picture, to be
        decoded and, with ``detect``, its markers found on the same thread (without
        ``detect`` and with ``decode`` false, a JPEG packet is handed on undecoded)."""
        with self._cond:
            if self._closed:
                return
            self.arrived += 1
            if self._running >= self.workers:
                if self._waiting is not None:
                    self.dropped += 1
                self._waiting = (index, t, data, detect, decode)
                return
            self._start(index, t, data, detect, decode)

    def _start(
        self, index: int, t: float, data: np.ndarray, detect: Detect | None, decode: bool
    ) -> None:
        self._running += 1
        self._order.append(index)
        self._pool.submit(self._run, index, t, data, detect, decode)

    def _run(
        self, index: int, t: float, data: np.ndarray, detect: Detect | None, decode: bool
    ) -> None:
        failure: BaseException | None = None
        garbled = False
        done: Decoded | None = None
        try:
            if data.ndim == 1 or (data.ndim == 2 and data.shape[0] == 1):  # a packet
                done = _work(index, t, data, detect, decode)
                garbled = done is None
            else:
                done = _picture(index, t, data, detect)
        except BaseException as exc:  # handed to the consumer
            failure = exc
        with self._cond:
            self._running -= 1
            if garbled:  # a frame cut short: dropped, as one the referee could not keep up with
                self._order.remove(index)
                self.dropped += 1
            elif failure is None and done is not None:
                self._done[index] = done
                # the referee is behind: skip the oldest of those waiting beyond a worker's
                # each (a decoded picture is large and ages), or beyond UNDECODED_KEEP of a
                # camera's JPEGs (small; the referee catches up on them after a sweep)
                keep = self.workers if done.gray is not None else UNDECODED_KEEP
                while len(self._done) > keep:
                    oldest = min(self._done)
                    del self._done[oldest]
                    self._order.remove(oldest)
                    self.dropped += 1
            else:
                self._order.remove(index)
                self._failed = self._failed or failure
            self._start_waiting()
            self._cond.notify_all()

    def _start_waiting(self) -> None:
        waiting, self._waiting = self._waiting, None
        if waiting is not None and not self._closed:
            self._start(*waiting)

    def take(self, timeout_s: float | None = None) -> Decoded | None:
        """The oldest frame in flight once it is decoded; ``None`` after ``timeout_s``
        without one, or once closed."""
        with self._cond:
            ok = self._cond.wait_for(
                lambda: (
                    self._closed
                    or self._failed is not None
                    or (bool(self._order) and self._order[0] in self._done)
                ),
                timeout=timeout_s,
            )
            if self._failed is not None:
                failure, self._failed = self._failed, None
                raise failure
            if not ok or self._closed:
                return None
            self._cond.notify_all()  # room for a frame that waits for it (wait_room)
            return self._done.pop(self._order.popleft())

    def wait_room(self, timeout_s: float) -> bool:
        """Wait, at most ``timeout_s``, until a frame submitted now drops none: a worker
        free and fewer frames in flight or decoded and not taken than workers; whether
        there is room (or the decoder is closed). A frame that arrived ahead of its own
        time (a burst as a stream opens) waits so, for the referee to take those before
        it, instead of replacing them."""
        with self._cond:
            return self._cond.wait_for(
                lambda: self._closed or len(self._order) < self.workers,
                timeout=timeout_s,
            )

    @property
    def idle(self) -> bool:
        """Nothing in flight, waiting or decoded and not taken."""
        with self._cond:
            return not self._order and self._waiting is None

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._waiting = None
            self._cond.notify_all()
        self._pool.shutdown(wait=True)
