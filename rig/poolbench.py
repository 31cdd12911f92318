"""The loops of ``tablesight.rig.throughput`` that use both cores: decoding alone, ``analyze``,
and a live camera, each on the decode pool of :mod:`tablesight.vision.decodepool`, with recording.

The clip's compressed pictures are read into memory once and played on and on:

* decode only, one thread / the pool: ``cv2.imdecode`` alone, the ceiling of any loop
  that decodes every frame (the pool's figure is the best a frame rate can be here);
* analyze: every frame in order, decoded and its markers detected ahead on the pool
  (:func:`~tablesight.vision.decodepool.read_ahead`'s loop), the rest of ``process`` and the record
  on this thread, as ``Game.run`` does with a file;
* live camera: frames arriving at a camera's rate, handed to a
  :class:`~tablesight.vision.decodepool.NewestDecoder` as ``LiveSource`` does (decoded and detected
  on the pool; while every worker is busy, the newest waits and the one it replaces is
  dropped), the rest of ``process`` and the record as they come. Latency: a frame's
  arrival to its events.

Recording: each pipeline has a :class:`~tablesight.match.writer.MatchWriter` of its own (the
match file and its Motion JPEG video, every frame's picture at full size) on its own
thread, as ``analyze --record`` and ``serve`` run it; each loop's time includes waiting
for its record to catch up at the end of each round, so that no record writes on behind
the next loop's back.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import cv2
import numpy as np

from tablesight.calibration.table import TableSpec
from tablesight.match.writer import MatchWriter
from tablesight.rules.ruleset import load_ruleset
from tablesight.rules.session import Event
from tablesight.vision.decodepool import WORKERS, Decoded, NewestDecoder, _work, decode
from tablesight.vision.sight import detect
from tablesight.vision.sources import Frame


@dataclass
class Segment:
    """One loop's figures over one round."""

    frames: int = 0
    elapsed_s: float = 0.0
    #: CPU time of the whole process (every thread) over the loop.
    cpu_s: float = 0.0
    #: Per frame: time from one frame's results to the next (the first from the start).
    frame_s: list[float] = field(default_factory=list)
    latency_s: list[float] = field(default_factory=list)
    stages_s: dict[str, list[float]] = field(default_factory=dict)
    markers: list[int] = field(default_factory=list)
    dropped: int = 0
    arrivals: int = 0

    def stage(self, name: str, seconds: float) -> None:
        self.stages_s.setdefault(name, []).append(seconds)

    @property
    def fps(self) -> float:
        return self.frames / self.elapsed_s if self.elapsed_s > 0 else 0.0


#: The rate a live camera delivers, by image height (the issue's goals).
LIVE_FPS = {1080: 60.0, 2160: 30.0}


def packets(path: Path) -> list[np.ndarray]:
    """The clip's compressed pictures, in order."""
    capture = cv2.VideoCapture(str(path))
    if not capture.set(cv2.CAP_PROP_FORMAT, -1):
        raise OSError(f"{path}: OpenCV cannot hand over its compressed frames")
    out = []
    while True:
        ok, packet = capture.read()
        if not ok:
            break
        out.append(packet.reshape(-1).copy())
    capture.release()
    return out


def recorder(
    folder: Path, name: str, table: TableSpec, roster: list[Any], camera: Any, fps: float
) -> MatchWriter:
    """A match file (and its video) in ``folder`` for a pipeline of the benchmark."""
    setup = SimpleNamespace(
        game="necromunda",
        ruleset=load_ruleset("necromunda"),
        table=table,
        roster=roster,
        terrain=[],
        camera=camera,
    )
    return MatchWriter(folder / f"{name}.db", setup, fps=fps, app_version="bench")  # type: ignore[arg-type]


def drain(writer: MatchWriter, timeout_s: float = 60.0) -> float:
    """Wait until ``writer`` has written everything handed over; the seconds waited."""
    t0 = time.perf_counter()
    while writer.backlog and time.perf_counter() - t0 < timeout_s:
        time.sleep(0.002)
    return time.perf_counter() - t0


def _gray(packet: np.ndarray) -> np.ndarray:
    return decode(packet, cv2.IMREAD_GRAYSCALE)


def decode_only(data: list[np.ndarray], start: int, count: int, workers: int) -> Segment:
    """Decode ``count`` pictures to grey, as the pipeline decodes them: on this thread
    (``workers`` 0) or on a pool, in order."""
    seg = Segment(frames=count)
    cpu0, t0 = time.process_time(), time.perf_counter()
    if workers == 0:
        for k in range(count):
            _gray(data[(start + k) % len(data)])
            seg.frame_s.append(time.perf_counter() - t0)
    else:
        with ThreadPoolExecutor(workers, thread_name_prefix="bench decode") as pool:
            for _ in pool.map(_gray, (data[(start + k) % len(data)] for k in range(count))):
                pass
    seg.elapsed_s = time.perf_counter() - t0
    seg.cpu_s = time.process_time() - cpu0
    seg.frame_s = [seg.elapsed_s / count] * count
    return seg


def _markers(pipeline: Any) -> Callable[[np.ndarray], Any]:
    """The pipeline's marker detection, run on the decode threads (as the game runs it)."""
    dictionary = pipeline.observer.table.table.dictionary
    return lambda picture: detect(picture, dictionary)


def analyze(
    data: list[np.ndarray],
    start: int,
    count: int,
    pipeline: Any,
    record: Callable[[Frame, list[Event]], None] | None,
    finish: Callable[[], None] | None = None,
    workers: int = WORKERS,
    fps: float = 30.0,
) -> Segment:
    """Every frame in order, decoded and detected ahead on ``workers`` threads; the rest
    of ``process`` and ``record`` here; ``finish`` (the record closed) timed with it."""
    seg = Segment(frames=count)
    markers = _markers(pipeline)
    pending: deque[Future[Decoded | None]] = deque()
    depth = 2 * workers
    cpu0, t0 = time.process_time(), time.perf_counter()
    last = t0
    with ThreadPoolExecutor(workers, thread_name_prefix="bench analyze") as pool:
        submitted = 0
        while submitted < count or pending:
            while submitted < count and len(pending) < depth:
                packet = data[(start + submitted) % len(data)]
                t = (start + submitted) / fps
                pending.append(pool.submit(_work, start + submitted, t, packet, markers))
                submitted += 1
            decoded = pending.popleft().result()
            assert decoded is not None
            frame = decoded.frame()
            events = pipeline.process(frame)
            if record is not None:
                record(frame, events)
            now = time.perf_counter()
            seg.frame_s.append(now - last)
            last = now
    if finish is not None:
        finish()
    seg.elapsed_s = time.perf_counter() - t0
    seg.cpu_s = time.process_time() - cpu0
    return seg


def live(
    data: list[np.ndarray],
    start: int,
    count: int,
    fps: float,
    pipeline: Any,
    record: Callable[[Frame, list[Event]], None] | None,
    workers: int = WORKERS,
    ahead: bool = True,
) -> Segment:
    """``count`` frames arriving at ``fps`` into a :class:`NewestDecoder`; each taken is
    processed and recorded here. ``dropped``: frames that arrived and were never taken.
    ``ahead``: decoded and their markers found on the pool; else handed on undecoded, as
    a live source hands them to a game (whose watcher reads them)."""
    seg = Segment()
    decoder = NewestDecoder(workers)
    markers = _markers(pipeline) if ahead else None
    arrived_at: dict[int, float] = {}
    finished = threading.Event()

    def camera() -> None:
        t0 = time.perf_counter()
        for k in range(count):
            time.sleep(max(0.0, t0 + k / fps - time.perf_counter()))
            arrived_at[start + k] = time.perf_counter()
            packet = data[(start + k) % len(data)]
            decoder.submit(start + k, (start + k) / fps, packet, markers, decode=ahead)
        finished.set()

    thread = threading.Thread(target=camera, name="bench camera", daemon=True)
    cpu0, t0 = time.process_time(), time.perf_counter()
    thread.start()
    try:
        while True:
            decoded = decoder.take(timeout_s=0.05)
            if decoded is None:
                if finished.is_set() and decoder.idle:
                    break
                continue
            frame = decoded.frame()
            events = pipeline.process(frame)
            if record is not None:
                record(frame, events)
            seg.latency_s.append(time.perf_counter() - arrived_at[decoded.index])
            seg.frames += 1
    finally:
        thread.join()
        decoder.close()
    seg.elapsed_s = time.perf_counter() - t0
    seg.cpu_s = time.process_time() - cpu0
    seg.arrivals = decoder.arrived
    seg.dropped = decoder.arrived - seg.frames
    return seg
