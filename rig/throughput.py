"""Frames per second of the whole referee on video: decode, detect, map, track, judge, record.

The footage is rendered by ``tablesight.rig.synth``: the 44 x 30 in table of
``tablesight.rig.accuracy``
seen by its camera (14 in in front of the near edge, 30 in up) at 1920 x 1080 and
3840 x 2160, with the four corner anchors and 40 models on a jittered grid (markers of
25, 30 and 35 mm, at least the 23 mm that ``marker_size_table`` asks of this table at
1080p; every fourth on a 1 in flying stand, every other off its base centre).
In a clip of ``2 * hold`` frames, pairs of models 3-9 in apart swap places and back, each
pair ``hold`` frames in each place and the pairs in turn, so that on a loop their moves
settle on different frames and are judged, there and back. Every render has its own
sensor noise and a jitter of a few thousandths of an inch on every model. The clip is
written as MJPG in .avi at quality 90, as webcams deliver it, and read back with
``cv2.VideoCapture``, looping.

Loops over the same frames, in interleaved rounds so that they see the machine in the
same state (the ratio columns are medians over rounds of the ratios of fps):

* baseline: decode, then ``cv2.aruco.ArucoDetector.detectMarkers`` with OpenCV's default
  parameters and the table's dictionary;
* decode only, on one thread and on a pool of 2 (``tablesight.rig.poolbench``): the clip's
  JPEG pictures decoded to grey, as the referee decodes them, the ceiling of any loop
  that decodes every frame;
* the baseline with decoding on a reader thread;
* pipeline, sequential: decode (the JPEG picture read as it is and decoded to grey, as
  ``FileSource`` does; the colour picture is never needed), ``Pipeline.process`` (its
  session in a movement phase) and the record;
* pipeline, threaded decode: a reader thread decodes and hands frames over through a
  queue of one frame;
* analyze: the frames decoded and their markers detected ahead on the decode pool, in
  order, the rest of ``process`` and the record here, as ``Game.run`` plays a file.

Then a live camera: frames arriving at 60 fps (1080p) or 30 fps (4K) into the decode pool
as ``LiveSource`` hands them over (``tablesight.vision.decodepool.NewestDecoder``): the frames
dropped,
and the latency from a frame's arrival to its events, in the camera's frame periods.
Latency is also given for the threaded loop (the file is read as fast as it decodes, so
each frame waits for the one before it). Where the time goes comes from the sequential
loop, each stage of ``process`` timed in place.

Recording is on by default (``run(recording=True)``, as ``bench pipeline`` runs): every
pipeline loop writes a match file and its MJPG video (the clip's own JPEG pictures) on
the recorder's thread,
and a loop's round ends when its record has caught up. ``record``, a hook called with
each frame and its events, is for tests.

``tablesight bench pipeline`` prints the table.
"""

from __future__ import annotations

import math
import queue
import random
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import cv2
import numpy as np

import tablesight.vision.observe as pipeline_module
import tablesight.vision.sight as sight_module
from tablesight.calibration.camera import CameraModel
from tablesight.calibration.dictionaries import dictionary_id
from tablesight.calibration.roster import RosterModel, profile
from tablesight.calibration.table import MM_PER_IN, Anchor, TableKeys, TableSpec
from tablesight.match.writer import MatchWriter
from tablesight.rig.accuracy import marked_model, scene_camera
from tablesight.rig.poolbench import (
    LIVE_FPS,
    Segment,
    analyze,
    decode_only,
    drain,
    live,
    packets,
    recorder,
)
from tablesight.rig.synth import PinholeCamera, PlacedMarker, Shot, render_table
from tablesight.rules.ruleset import load_ruleset
from tablesight.rules.scene import Table
from tablesight.rules.session import Event, Session
from tablesight.vision.decodepool import WORKERS, decode
from tablesight.vision.observe import Observer
from tablesight.vision.sources import Frame

TABLE_IN = (44.0, 30.0)
DICTIONARY = "4x4_250"
#: The rate of the camera the latency is counted against, and of the clips' timestamps.
CAMERA_FPS = 30.0
#: Frames per second the pipeline must reach, by image height.
FPS_GOALS = {1080: 60.0, 2160: 30.0}
#: ... or, at 4K, this share of the decode-only ceiling (the pool's), and at least this
#: many times the baseline's fps.
CEILING_SHARE_GOAL = 0.9
BASE_GOAL_4K = 2.0
#: ``analyze``'s fps over the baseline's that it must reach.
ANALYZE_GOAL = 1.8
#: A frame's events must come within this many frame periods of its arrival.
LATENCY_GOAL_PERIODS = 1.5
#: Frames measured per loop at each image height (a 4K frame takes about 0.1 s a loop).
FRAMES = {1080: 120, 2160: 48}
#: Frames the live camera delivers at each image height (3 s).
LIVE_FRAMES = {1080: 180, 2160: 90}
#: Distinct renders in the clip at each image height (a 4K render takes most of a second).
DISTINCT = {1080: 24, 2160: 12}

#: Called with each frame and its events: where the match recording will go.
Record = Callable[[Frame, list[Event]], None]

BASELINE = "baseline: decode + detectMarkers"
BASELINE_THREADED = "baseline, threaded decode"
PIPELINE = "pipeline, sequential"
PIPELINE_THREADED = "pipeline, threaded decode"
LIVE = "pipeline, live camera"
DECODE = "decode only, one thread"
DECODE_POOL = "decode only, pool of 2"
ANALYZE = "analyze: pool decode+detect"
ANALYZE_UNRECORDED = "analyze, recording off"
STAGES = ("decode", "detect", "pose", "map", "track", "judge+rest", "record")


@dataclass(frozen=True)
class Footage:
    """A clip on disk and everything needed to referee it."""

    path: Path
    size: tuple[int, int]
    #: Frames in the clip, and how many of them are distinct renders.
    length: int
    distinct: int
    table: TableSpec
    roster: list[RosterModel]
    camera: CameraModel
    #: Markers placed in every frame: anchors and models.
    markers: int
    #: Models that swap places with another and back in the course of the clip.
    movers: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"{self.size[1]}p"

    @property
    def bytes_per_frame(self) -> float:
        return self.path.stat().st_size / self.length


def _card_radius_in(size_mm: float) -> float:
    """Half the diagonal of a 4x4 marker's card (the marker and a one-cell quiet zone)."""
    return size_mm * 8 / 6 / 2 * math.sqrt(2) / MM_PER_IN


def table_spec(anchor_mm: float = 40.0) -> TableSpec:
    """The 44 x 30 in table with an anchor in each corner, its card inside the table."""
    w, d = TABLE_IN
    inset = max(1.5, _card_radius_in(anchor_mm) + 0.25)
    at = [(inset, inset), (w - inset, inset), (w - inset, d - inset), (inset, d - inset)]
    anchors = [Anchor(id=i, x_in=x, y_in=y, size_mm=anchor_mm) for i, (x, y) in enumerate(at)]
    return TableSpec(
        table=TableKeys(width_in=w, depth_in=d, dictionary=DICTIONARY), anchors=anchors
    )


def _layout(
    n: int, rng: random.Random, marker_mm: Sequence[float], first_id: int
) -> list[tuple[RosterModel, PlacedMarker]]:
    """``n`` models on a jittered grid over the table (4 in clear of its edges)."""
    w, d = TABLE_IN
    margin = 4.0
    cols = math.ceil(math.sqrt(n * w / d))
    rows = math.ceil(n / cols)
    cell_w, cell_d = (w - 2 * margin) / cols, (d - 2 * margin) / rows
    out = []
    for i in range(n):
        x = margin + (i % cols + 0.5 + rng.uniform(-0.15, 0.15)) * cell_w
        y = margin + (i // cols + 0.5 + rng.uniform(-0.15, 0.15)) * cell_d
        size = marker_mm[i % len(marker_mm)]
        side = "a" if i % 2 else "b"
        out.append(marked_model(first_id + i, x, y, size, i, rng, side, dictionary_id(DICTIONARY)))
    return out


def _pairs(placed: list[PlacedMarker], pairs: int, rng: random.Random) -> list[tuple[int, int]]:
    """Up to ``pairs`` pairs of models 3-9 in apart (by marker id): they swap places, so
    every card stands clear of the others in either state."""
    where = {m.id: (m.x_in, m.y_in) for m in placed}
    out: list[tuple[int, int]] = []
    taken: set[int] = set()
    for m in rng.sample(placed, len(placed)):
        if len(out) == pairs:
            break
        if m.id in taken:
            continue
        partners = [
            k
            for k, xy in where.items()
            if k != m.id and k not in taken and 3.0 <= math.dist(xy, where[m.id]) <= 9.0
        ]
        if partners:
            other = rng.choice(partners)
            out.append((m.id, other))
            taken |= {m.id, other}
    return out


def make_footage(
    directory: Path,
    size: tuple[int, int] = (1920, 1080),
    distinct: int = 24,
    hold: int = 12,
    models: int = 40,
    movers: int = 6,
    marker_mm: Sequence[float] = (25.0, 30.0, 35.0),
    anchor_mm: float = 40.0,
    camera: PinholeCamera | None = None,
    quality: int = 90,
    seed: int = 5,
) -> Footage:
    """Render a clip of ``2 * hold`` frames and write it to ``directory`` as MJPG in .avi.

    ``movers`` models (in pairs) swap places and back, each pair ``hold`` frames in each
    place; the pairs take turns, so their moves settle on different frames. Frames that
    show the same places share up to ``distinct`` renders in all, cycled. ``hold`` must
    outlast the tracker's settling time (10 frames at 30 fps) for the moves to be judged.
    ``camera`` defaults to ``tablesight.rig.accuracy``'s at ``size``.
    """
    width, height = size
    camera = camera or scene_camera(width, height)
    table = table_spec(anchor_mm)
    rng = random.Random(seed)
    layout = _layout(models, rng, marker_mm, first_id=len(table.anchors))
    dict_id = dictionary_id(DICTIONARY)
    anchors = [
        PlacedMarker(a.id, a.size_mm, a.x_in, a.y_in, 0.0, a.heading, dict_id)
        for a in table.anchors
    ]
    placed = [p for _, p in layout]
    where = {p.id: (p.x_in, p.y_in) for p in placed}
    pairs = _pairs(placed, movers // 2, rng)
    length = 2 * hold
    offsets = [j * length // len(pairs) for j in range(len(pairs))]
    # which pairs stand swapped in each frame of the clip
    states = [tuple((f - o) % length >= hold for o in offsets) for f in range(length)]
    per_state = max(1, distinct // len(set(states)))
    last = {state: f for f, state in enumerate(states)}
    renders: dict[tuple[bool, ...], list[np.ndarray]] = {}
    used: dict[tuple[bool, ...], int] = {}
    path = Path(directory) / f"table-{height}p.avi"
    writer = cv2.VideoWriter(
        str(path),
        cv2.CAP_OPENCV_MJPEG,
        cv2.VideoWriter_fourcc(*"MJPG"),  # type: ignore[attr-defined]
        CAMERA_FPS,
        (width, height),
        [cv2.VIDEOWRITER_PROP_QUALITY, quality],
    )
    if not writer.isOpened():
        raise OSError(f"{path}: OpenCV cannot write MJPG video here")
    rendered = 0
    jitter = 0.004
    for f, state in enumerate(states):
        shots = renders.setdefault(state, [])
        k = used.get(state, 0) % per_state
        used[state] = used.get(state, 0) + 1
        if k == len(shots):
            now = dict(where)
            for (a, b), swapped in zip(pairs, state, strict=True):
                if swapped:
                    now[a], now[b] = where[b], where[a]
            markers = [
                PlacedMarker(
                    p.id,
                    p.size_mm,
                    now[p.id][0] + rng.uniform(-jitter, jitter),
                    now[p.id][1] + rng.uniform(-jitter, jitter),
                    p.z_in,
                    p.heading_deg,
                    p.dictionary,
                )
                for p in placed
            ]
            shot = Shot(seed=seed * 1000 + rendered, jpeg_quality=None)
            shots.append(render_table(camera, TABLE_IN, anchors + markers, shot=shot))
            rendered += 1
        writer.write(shots[k])
        if last[state] == f:
            del renders[state]  # not shown again
    writer.release()
    lens = CameraModel((width, height), camera.camera_matrix, camera.dist_coeffs)
    ids = {p.id: e.id for e, p in layout}
    return Footage(
        path=path,
        size=(width, height),
        length=length,
        distinct=rendered,
        table=table,
        roster=[e for e, _ in layout],
        camera=lens,
        markers=len(anchors) + len(placed),
        movers=tuple(ids[m] for pair in pairs for m in pair),
    )


class _Video:
    """A video file read on and on: at its end it starts again. With ``packets``, its
    frames are read as the JPEG pictures they are and decoded to grey, as the referee's
    sources do (``tablesight.vision.decodepool``); else decoded in colour by
    ``cv2.VideoCapture``."""

    def __init__(self, path: Path, packets: bool = False) -> None:
        self.path = path
        self.packets = packets
        self.capture = cv2.VideoCapture(str(path))
        if not self.capture.isOpened():
            raise OSError(f"{path}: not a video OpenCV can read")
        if packets and not self.capture.set(cv2.CAP_PROP_FORMAT, -1):
            raise OSError(f"{path}: OpenCV cannot read its frames undecoded")

    def next_frame(self, index: int) -> Frame:
        """The next frame, as frame ``index`` of a camera at ``CAMERA_FPS``."""
        data = self.read()
        if not self.packets:
            return _frame(data, index)
        packet = data.copy()
        gray = decode(packet, cv2.IMREAD_GRAYSCALE)
        return Frame(None, index / CAMERA_FPS, index, jpeg=packet, gray=gray)

    def read(self) -> np.ndarray:
        ok, image = self.capture.read()
        if not ok:
            self.capture.set(cv2.CAP_PROP_POS_FRAMES, 0)
            ok, image = self.capture.read()
            if not ok:
                raise OSError(f"{self.path}: no frame could be decoded")
        return np.asarray(image)

    def close(self) -> None:
        self.capture.release()


class Pipeline:
    """Frames to events as the live game runs them: observe the frame, the session judges."""

    def __init__(self, observer: Observer, session: Session) -> None:
        self.observer, self.session = observer, session
        self.tracker = observer.tracker

        self.observation: Any = None

    def process(self, frame: Frame) -> list[Event]:
        self.observation = self.observer.observe(frame)
        return self.session.observe(self.observation)


class _StageClock:
    """Seconds spent in each stage of ``Pipeline.process``, for the frame in hand."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self.markers = 0

    def timed(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def clocked(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                result = fn(*args, **kwargs)
            finally:
                self.spent[stage] = self.spent.get(stage, 0.0) + time.perf_counter() - t0
            if stage == "detect":
                self.markers = len(result)
            return result

        return clocked


@contextmanager
def _clocked(pipeline: Pipeline, clock: _StageClock) -> Iterator[None]:
    """Time the stages of ``pipeline.process`` in place: the detection and pose solve its
    sight calls, its ``locate`` and its tracker (all restored afterwards)."""
    detect, pose_class, locate = sight_module.detect, sight_module.TablePose, pipeline_module.locate
    setattr(sight_module, "detect", clock.timed("detect", detect))  # noqa: B010
    pose = SimpleNamespace(solve=clock.timed("pose", pose_class.solve))
    setattr(sight_module, "TablePose", pose)  # noqa: B010
    setattr(pipeline_module, "locate", clock.timed("map", locate))  # noqa: B010
    setattr(pipeline.tracker, "update", clock.timed("track", pipeline.tracker.update))  # noqa: B010
    try:
        yield
    finally:
        del pipeline.tracker.update
        setattr(sight_module, "detect", detect)  # noqa: B010
        setattr(sight_module, "TablePose", pose_class)  # noqa: B010
        setattr(pipeline_module, "locate", locate)  # noqa: B010


def _frame(image: np.ndarray, index: int) -> Frame:
    return Frame(image, index / CAMERA_FPS, index)


def _baseline(video: _Video, count: int, detector: Any) -> Segment:
    """Decode and ``detectMarkers``, one frame after the other."""
    seg = Segment(frames=count)
    cpu_start = time.process_time()
    t_start = last = time.perf_counter()
    for _ in range(count):
        t0 = time.perf_counter()
        image = video.read()
        t1 = time.perf_counter()
        _, ids, _ = detector.detectMarkers(image)
        t2 = time.perf_counter()
        seg.frame_s.append(t2 - last)
        seg.latency_s.append(t2 - t1)
        seg.stage("decode", t1 - t0)
        seg.stage("detect", t2 - t1)
        seg.markers.append(0 if ids is None else len(ids))
        last = t2
    seg.elapsed_s = time.perf_counter() - t_start
    seg.cpu_s = time.process_time() - cpu_start
    return seg


def _pipeline(
    video: _Video, start: int, count: int, pipeline: Pipeline, record: Record | None
) -> Segment:
    """Decode, ``Pipeline.process`` and ``record``, one frame after the other, each stage
    of ``process`` timed."""
    seg = Segment(frames=count)
    clock = _StageClock()
    with _clocked(pipeline, clock):
        cpu_start = time.process_time()
        t_start = last = time.perf_counter()
        for k in range(count):
            clock.spent = {}
            t0 = time.perf_counter()
            frame = video.next_frame(start + k)
            t1 = time.perf_counter()
            events = pipeline.process(frame)
            t2 = time.perf_counter()
            if record is not None:
                record(frame, events)
            t3 = time.perf_counter()
            seg.frame_s.append(t3 - last)
            seg.latency_s.append(t3 - t1)
            seg.stage("decode", t1 - t0)
            for name in ("detect", "pose", "map", "track"):
                seg.stage(name, clock.spent.get(name, 0.0))
            seg.stage("judge+rest", (t2 - t1) - sum(clock.spent.values()))
            seg.stage("record", t3 - t2)
            seg.markers.append(clock.markers)
            last = t3
        seg.elapsed_s = time.perf_counter() - t_start
        seg.cpu_s = time.process_time() - cpu_start
    return seg


def _threaded(
    video: _Video,
    start: int,
    count: int,
    work: Callable[[Frame], int | None],
    queue_size: int = 1,
) -> Segment:
    """A reader thread decodes and hands frames over through a queue of ``queue_size``;
    this thread runs ``work`` on each. A frame is handed over when it is decoded and the
    queue has room: when the frame ``queue_size`` before it was taken."""
    seg = Segment(frames=count)
    handover: queue.Queue[tuple[Frame, float] | None] = queue.Queue(maxsize=queue_size)
    stop = threading.Event()
    failed: list[BaseException] = []

    def put(item: tuple[Frame, float] | None) -> None:
        while not stop.is_set():
            try:
                handover.put(item, timeout=0.05)
                return
            except queue.Full:
                continue

    def read() -> None:
        try:
            for k in range(count):
                put((video.next_frame(start + k), time.perf_counter()))
        except BaseException as exc:  # handed to the consumer, raised there
            failed.append(exc)
            put(None)

    taken: list[float] = []
    reader = threading.Thread(target=read, name="throughput reader", daemon=True)
    cpu_start = time.process_time()
    t_start = last = time.perf_counter()
    reader.start()
    try:
        for k in range(count):
            item = handover.get()
            if item is None:
                raise failed[0]
            frame, decoded = item
            taken.append(time.perf_counter())
            found = work(frame)
            done = time.perf_counter()
            if found is not None:
                seg.markers.append(found)
            handed = max(decoded, taken[k - queue_size]) if k >= queue_size else decoded
            seg.latency_s.append(done - handed)
            seg.frame_s.append(done - last)
            last = done
        seg.elapsed_s = time.perf_counter() - t_start
        seg.cpu_s = time.process_time() - cpu_start
    finally:
        stop.set()
        reader.join()
    return seg


@dataclass(frozen=True)
class Row:
    """One loop at one resolution: what it did and how fast."""

    resolution: str
    loop: str
    frames: int
    fps: float
    #: Milliseconds from one frame's results to the next.
    p50_ms: float
    p95_ms: float
    #: CPU milliseconds per frame, all threads (what the frame costs, whatever else runs).
    cpu_ms: float = math.nan
    #: fps over the sequential baseline's, and over the baseline that decodes the same
    #: way (median over rounds).
    ratio: float | None = None
    ratio_same: float | None = None
    goal: str = ""
    #: A frame handed over to its events: p50 and p95.
    latency_ms: tuple[float, float] | None = None
    latency_goal: str = ""
    #: Mean milliseconds per frame in each stage.
    stages_ms: dict[str, float] = field(default_factory=dict)
    #: Fewest and most markers found in a frame (where the loop counts them).
    markers: tuple[int, int] | None = None
    models_seen: int = 0
    moves_judged: int = 0
    events: int = 0
    dropped: int = 0
    #: Whether a ``record`` hook ran in this loop.
    recorded: bool = False
    #: The rate frames arrived at (the live camera's), for latency in frame periods.
    camera_fps: float = CAMERA_FPS
    note: str = ""


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def _session(footage: Footage) -> tuple[Pipeline, Session]:
    """A pipeline whose session is in a movement phase from the first frame."""
    session = Session(
        load_ruleset("necromunda"),
        Table(*TABLE_IN),
        {m.id: profile(m) for m in footage.roster},
    )
    session.start_phase(0.0, 0)
    observer = Observer(footage.table, footage.roster, footage.camera)
    return Pipeline(observer, session), session


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def _goal_text(fps: float, ratio: float, height: int, ceiling: float, loop: str) -> str:
    """The issue's goals: 1080p at 60 fps; 4K at 30 fps or within 90% of the decode-only
    ceiling, and twice the baseline; ``analyze`` 1.8 times the baseline."""
    if loop in (ANALYZE, ANALYZE_UNRECORDED):
        return f">= {ANALYZE_GOAL:g} x base: " + _met(ratio >= ANALYZE_GOAL)
    goal = FPS_GOALS.get(height)
    if goal is None:
        return ""
    if height < 2160:
        return f">= {goal:g} fps: " + _met(fps >= goal)
    near = fps >= CEILING_SHARE_GOAL * ceiling
    return (
        f">= {goal:g} fps or >= {CEILING_SHARE_GOAL:.0%} of decode ceiling "
        f"({fps / ceiling:.0%}): {_met(fps >= goal or near)}; "
        f">= {BASE_GOAL_4K:g} x base: {_met(ratio >= BASE_GOAL_4K)}"
    )


def _latency_goal(p95_ms: float, fps: float = CAMERA_FPS) -> str:
    """The goal in periods of the camera."""
    limit = LATENCY_GOAL_PERIODS * 1000 / fps
    return f"p95 <= {limit:.0f} ms: " + _met(p95_ms <= limit)


def _count(events: list[Event], kind: str) -> int:
    return sum(1 for e in events if e.kind == kind)


def measure(
    footage: Footage,
    frames: int,
    rounds: int = 3,
    live_frames: int = 60,
    record: Record | None = None,
    recording: Path | None = None,
) -> list[Row]:
    """Time the loops on ``footage`` (``frames`` each, rounded up to a multiple of
    ``rounds``) in interleaved rounds, then the live camera (``live_frames`` arriving at
    ``LIVE_FPS``; none when 0). Each pipeline loop has its own pipeline and session, kept
    from round to round; with ``recording`` (a folder), each its own match file and video
    there, written as the frames are processed (and ``record`` is called too)."""
    per_round = max(1, math.ceil(frames / rounds))
    height = footage.size[1]
    camera_fps = LIVE_FPS.get(height, CAMERA_FPS)
    raw = cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(dictionary_id(footage.table.table.dictionary)),
        cv2.aruco.DetectorParameters(),
    )

    def detect_only(frame: Frame) -> int:
        _, ids, _ = raw.detectMarkers(frame.image)
        return 0 if ids is None else len(ids)

    names = (PIPELINE, PIPELINE_THREADED, ANALYZE, LIVE)
    sessions = {name: _session(footage) for name in (*names, ANALYZE_UNRECORDED)}
    writers: dict[str, MatchWriter] = {}
    if recording is not None:
        for k, name in enumerate(names):
            writers[name] = recorder(
                recording,
                f"{footage.label}-{k}",
                footage.table,
                footage.roster,
                footage.camera,
                camera_fps,
            )

    def hook(name: str) -> Record | None:
        pipeline, session = sessions[name]
        writer = writers.get(name)
        if writer is None:
            return record

        def write(frame: Frame, events: list[Event]) -> None:
            due = events or writer.snapshot_due(frame.t)
            writer.record(frame, pipeline.observation, events, session.snapshot() if due else None)
            if record is not None:
                record(frame, events)

        return write

    def processing(name: str) -> Callable[[Frame], None]:
        pipeline, recorded = sessions[name][0], hook(name)

        def process(frame: Frame) -> None:
            events = pipeline.process(frame)
            if recorded is not None:
                recorded(frame, events)

        return process

    seq_pipeline = sessions[PIPELINE][0]
    threaded = processing(PIPELINE_THREADED)
    data = packets(footage.path)

    # Warm up: first calls into OpenCV and the rules core, on a pipeline not measured.
    video = _Video(footage.path)
    warm, _ = _session(footage)
    for k in range(2):
        image = video.read()
        raw.detectMarkers(image)
        warm.process(_frame(image, k))
    video.close()

    loops: dict[str, list[Segment]] = {
        BASELINE: [],
        DECODE: [],
        DECODE_POOL: [],
        PIPELINE: [],
        BASELINE_THREADED: [],
        PIPELINE_THREADED: [],
        ANALYZE: [],
        ANALYZE_UNRECORDED: [],
    }
    # Each loop reads its own copy of the clip on from where its last round stopped.
    videos = {
        name: _Video(footage.path, packets=name in (PIPELINE, PIPELINE_THREADED)) for name in loops
    }
    try:
        for r in range(rounds):
            start = r * per_round
            for name in list(loops) if r % 2 == 0 else reversed(list(loops)):
                video = videos[name]
                if name == BASELINE:
                    seg = _baseline(video, per_round, raw)
                elif name == DECODE:
                    seg = decode_only(data, start, per_round, 0)
                elif name == DECODE_POOL:
                    seg = decode_only(data, start, per_round, WORKERS)
                elif name == PIPELINE:
                    seg = _pipeline(video, start, per_round, seq_pipeline, hook(PIPELINE))
                elif name == BASELINE_THREADED:
                    seg = _threaded(video, start, per_round, detect_only)
                elif name in (ANALYZE, ANALYZE_UNRECORDED):
                    seg = analyze(data, start, per_round, sessions[name][0], hook(name))
                else:
                    seg = _threaded(video, start, per_round, threaded)
                if name in writers:  # the loop is done when its record has caught up
                    seg.elapsed_s += drain(writers[name])
                loops[name].append(seg)
    finally:
        for video in videos.values():
            video.close()

    ceiling = statistics.median(s.fps for s in loops[DECODE_POOL])
    rows = []
    for name, segs in loops.items():
        same = loops[BASELINE_THREADED if "threaded" in name else BASELINE]
        fps = sum(s.frames for s in segs) / sum(s.elapsed_s for s in segs)
        ratio = statistics.median(s.fps / b.fps for s, b in zip(segs, loops[BASELINE], strict=True))
        frame_ms = [1000 * v for s in segs for v in s.frame_s]
        latency = [1000 * v for s in segs for v in s.latency_s]
        markers = [m for s in segs for m in s.markers]
        session = sessions[name][1] if name in sessions else None
        shown = name in (PIPELINE, PIPELINE_THREADED)
        lat = (statistics.median(latency), _percentile(latency, 0.95)) if shown else (0.0, 0.0)
        rows.append(
            Row(
                resolution=footage.label,
                loop=name,
                frames=sum(s.frames for s in segs),
                fps=fps,
                p50_ms=statistics.median(frame_ms),
                p95_ms=_percentile(frame_ms, 0.95),
                cpu_ms=1000 * sum(s.cpu_s for s in segs) / sum(s.frames for s in segs),
                ratio=ratio,
                ratio_same=statistics.median(
                    s.fps / b.fps for s, b in zip(segs, same, strict=True)
                ),
                goal=_goal_text(fps, ratio, height, ceiling, name) if session else "",
                latency_ms=lat if shown else None,
                latency_goal=_latency_goal(lat[1]) if shown else "",
                stages_ms={
                    stage: 1000 * statistics.fmean(v for s in segs for v in s.stages_s[stage])
                    for stage in STAGES
                    if stage in segs[0].stages_s
                },
                markers=(min(markers), max(markers)) if markers else None,
                models_seen=len(session.poses) if session else 0,
                moves_judged=_count(session.events, "model_moved") if session else 0,
                events=len(session.events) if session else 0,
                recorded=session is not None and (record is not None or name in writers),
                note=(
                    f"{footage.length}-frame clip ({footage.distinct} distinct renders), "
                    f"{footage.markers} markers placed, "
                    f"{footage.bytes_per_frame / 1024:.0f} KiB/frame MJPG"
                    if name == BASELINE
                    else ""
                ),
            )
        )
    if live_frames > 0:
        seg = live(data, 0, live_frames, camera_fps, sessions[LIVE][0], hook(LIVE))
        behind = f", record at most {writers[LIVE].max_backlog} items behind" if writers else ""
        latency = [1000 * v for v in seg.latency_s]
        session = sessions[LIVE][1]
        p95 = _percentile(latency, 0.95)
        limit = LATENCY_GOAL_PERIODS * 1000 / camera_fps
        rows.append(
            Row(
                resolution=footage.label,
                loop=LIVE,
                frames=seg.frames,
                fps=seg.fps,
                p50_ms=math.nan,
                p95_ms=math.nan,
                latency_ms=(statistics.median(latency), p95),
                latency_goal=f"no drops, p95 <= {limit:.0f} ms: "
                + _met(seg.dropped == 0 and p95 <= limit),
                models_seen=len(session.poses),
                moves_judged=_count(session.events, "model_moved"),
                events=len(session.events),
                dropped=seg.dropped,
                recorded=record is not None or LIVE in writers,
                camera_fps=camera_fps,
                note=f"{seg.arrivals} frames arrived at {camera_fps:g} fps, {seg.dropped} dropped"
                + behind,
            )
        )
    for writer in writers.values():
        writer.close()
    return rows


def run(
    sizes: Sequence[tuple[int, int]] = ((1920, 1080), (3840, 2160)),
    frames: dict[int, int] | None = None,
    rounds: int = 3,
    live_frames: dict[int, int] | None = None,
    record: Record | None = None,
    recording: bool = True,
) -> list[Row]:
    """Render the footage into a temporary folder and time every loop at every size;
    ``frames`` per loop by image height (default ``FRAMES``), ``live_frames`` arriving
    at the live camera (default ``LIVE_FRAMES``: 3 s); with ``recording``, every pipeline
    writes its match file and video into that folder."""
    frames = {**FRAMES, **(frames or {})}
    live_counts = {**LIVE_FRAMES, **(live_frames or {})}
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="tablesight-throughput-") as folder:
        for size in sizes:
            footage = make_footage(Path(folder), size, distinct=DISTINCT.get(size[1], 24))
            rows += measure(
                footage,
                frames.get(size[1], 96),
                rounds,
                live_counts.get(size[1], 90),
                record,
                Path(folder) if recording else None,
            )
    return rows


def report(rows: list[Row]) -> str:
    """The figures as plain-text tables: fps, latency, where the time goes, sessions."""
    recorded = any(r.recorded for r in rows)
    lines = [
        f"Whole pipeline on MJPG video: {cv2.getNumberOfCPUs()} cores, OpenCV "
        f"{cv2.__version__} with {cv2.getNumThreads()} threads. Each loop is timed in "
        "rounds interleaved with the baselines.",
        "recording: "
        + (
            "ON in every pipeline row (pipeline, analyze, live) but 'recording off': each "
            "writes its match file and its MJPG video (the camera's JPEG pictures as they "
            "came) on the recorder's thread, timed with it"
            if recorded
            else "off: these figures are without recording"
        ),
    ]
    lines += [f"{r.resolution}: {r.note}" for r in rows if r.loop == BASELINE and r.note]
    lines += [
        "",
        f"{'res':<7}{'loop':<34}{'frames':>7}{'fps':>8}{'p50 ms':>8}{'p95 ms':>8}"
        f"{'x base':>8}{'x same':>8}{'cpu ms':>8}  goal",
    ]
    for r in rows:
        if r.loop == LIVE:
            continue
        ratio = f"{r.ratio:>8.2f}" if r.ratio is not None else " " * 8
        same = f"{r.ratio_same:>8.2f}" if r.ratio_same is not None else " " * 8
        lines.append(
            f"{r.resolution:<7}{r.loop:<34}{r.frames:>7}{r.fps:>8.1f}{r.p50_ms:>8.1f}"
            f"{r.p95_ms:>8.1f}{ratio}{same}{r.cpu_ms:>8.1f}  {r.goal}"
        )
    lines += [
        "ms: from one frame's results to the next. x base: fps over the sequential "
        "baseline's, x same: over the baseline",
        "that decodes the same way (medians over rounds). cpu ms: CPU time per frame, all "
        "threads. decode only: the",
        "clip's JPEG frames decoded to grey (as the pipeline decodes them) and nothing else, "
        "the ceiling of any loop that decodes every frame. analyze: the",
        "file's frames in order, decoded and detected ahead on a pool of 2 threads, "
        "as `tablesight analyze` runs; recording off: the same without a match file, what "
        "recording costs.",
        "",
        "Latency, frame handed over -> its events, in ms and in frame periods (of the "
        "camera: 30 fps, live: its rate; of the pipeline's own rate)",
        f"{'res':<7}{'loop':<34}{'frames':>7}{'p50 ms':>8}{'p95 ms':>8}"
        f"{'p50 cam':>9}{'p95 cam':>9}{'p50 own':>9}{'p95 own':>9}  goal",
    ]
    own = {r.resolution: 1000 / r.fps for r in rows if r.loop == PIPELINE_THREADED and r.fps}
    for r in rows:
        if r.latency_ms is None:
            continue
        p50, p95 = r.latency_ms
        own_ms = own.get(r.resolution, math.nan)
        camera_ms = 1000 / r.camera_fps
        lines.append(
            f"{r.resolution:<7}{r.loop:<34}{r.frames:>7}{p50:>8.1f}{p95:>8.1f}"
            f"{p50 / camera_ms:>9.2f}{p95 / camera_ms:>9.2f}{p50 / own_ms:>9.2f}"
            f"{p95 / own_ms:>9.2f}  {r.latency_goal}" + (f" ({r.note})" if r.loop == LIVE else "")
        )
    lines += [
        "Threaded decode: the file is read as fast as it decodes, so each frame also waits "
        "for the one before it.",
        "Live camera: frames arriving at 60 fps (1080p) or 30 fps (4K), decoded and "
        "detected on a pool of 2 as LiveSource does; while both",
        "threads are busy the newest frame waits and the one it replaces is dropped.",
        "",
        "Where the time goes, mean ms per frame (sequential loops)",
        f"{'res':<7}{'loop':<34}" + "".join(f"{s:>11}" for s in STAGES) + f"{'total':>8}",
    ]
    for r in rows:
        if not r.stages_ms:
            continue
        cells = "".join(
            f"{r.stages_ms[s]:>11.2f}" if s in r.stages_ms else " " * 11 for s in STAGES
        )
        lines.append(f"{r.resolution:<7}{r.loop:<34}{cells}{sum(r.stages_ms.values()):>8.2f}")
    lines += [
        "decode: the baseline's in colour, the pipeline's to grey. detect: the baseline's is "
        "detectMarkers with OpenCV's defaults; the pipeline's is detectMarkers",
        "with the project's settings and the cell check. judge+rest: sightings, the "
        "session's judgements, the rest of process.",
        "",
        "What each loop saw (sessions in a movement phase from the first frame)",
    ]
    for r in rows:
        seen = (
            [] if r.markers is None else [f"markers found per frame {r.markers[0]}-{r.markers[1]}"]
        )
        if r.loop in (PIPELINE, PIPELINE_THREADED, ANALYZE, ANALYZE_UNRECORDED, LIVE):
            seen = [
                f"{r.models_seen} models seen, {r.moves_judged} moves judged, {r.events} events",
                *seen,
            ]
        lines.append(f"{r.resolution:<7}{r.loop:<34}" + "; ".join(seen))
    return "\n".join(lines)
