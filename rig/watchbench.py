"""CPU a frame of reading markers where the picture changed (``vision.watch.Watcher``)
against the plain OpenCV loop on the same frames: each JPEG frame decoded to grey and
searched whole by ``detectMarkers`` with OpenCV's defaults (``tablesight bench watch``).

The clips are ``rig.throughput``'s table (44 markers, a fresh render with its own noise in
every frame), as Motion JPEG at quality 90:

* still table: nothing moves, 24 renders with their own noise, cycled;
* match-like: pairs of models swap places and back every 12 frames (``make_footage``);
* everything changing: the still table's renders, each shifted a few pixels more than the
  last, as a camera carried round the table;
* the Necromunda sample match (hands carrying five models, hovering over two, the tripod
  knocked), at its own 10 frames a second, all 360 frames.

CPU is the process's (``time.process_time``: every thread, OpenCV's included), in ms per
frame; the two loops run in turn over the same packets, twice, and the lower of each
loop's two runs is kept.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from tablesight.rig import poolbench
from tablesight.rig.poolbench import packets as read_packets
from tablesight.rig.throughput import Footage, make_footage
from tablesight.vision.frame import Frame
from tablesight.vision.watch import Watcher

#: Frames per loop, and the clips' frames a second.
FRAMES = 180
FPS = 30.0
#: The sample match's frames a second, and its markers (its table.toml's dictionary).
SAMPLE_FPS = 10.0
SAMPLE_DICTIONARY = "4x4_50"
#: ``analyze`` against the plain loop on the match-like clip, by size: (label, fps, fps).
speeds: list[tuple[str, float, float]] = []


@dataclass
class Row:
    """One clip at one size: both loops' CPU a frame, and what the watcher read."""

    label: str
    clip: str
    plain_ms: float
    watch_ms: float
    reads: dict[str, int] = field(default_factory=dict)
    markers: tuple[int, int] = (0, 0)

    @property
    def ratio(self) -> float:
        return self.watch_ms / self.plain_ms


def _carried(packets: list[np.ndarray]) -> list[np.ndarray]:
    """The pictures shifted 3 px more each frame (wrapping round), encoded again."""
    out = []
    for k, packet in enumerate(packets):
        gray = cv2.imdecode(packet, cv2.IMREAD_GRAYSCALE)
        moved = np.roll(gray, 3 * (k + 1), axis=1)
        ok, data = cv2.imencode(".jpg", moved, [cv2.IMWRITE_JPEG_QUALITY, 90])
        assert ok
        out.append(data.reshape(-1))
    return out


def _sample(folder: Path, height: int) -> list[np.ndarray]:
    """The Necromunda sample match (hands carrying models, moves, a bump) as a Motion JPEG
    camera at ``height`` sends it, at the sample's own 10 frames a second."""
    import subprocess

    sample = Path(__file__).resolve().parents[1] / "samples" / "necromunda" / "match.mp4"
    clip = folder / f"sample-{height}.avi"
    arguments = f"-v error -y -i {sample} -vf scale=-2:{height} -c:v mjpeg -q:v 3 {clip}"
    subprocess.run(["ffmpeg", *arguments.split()], check=True)
    return read_packets(clip)


def _plain(packets: list[np.ndarray], dictionary: int, frames: int) -> tuple[float, int]:
    detector = cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(dictionary), cv2.aruco.DetectorParameters()
    )
    found = 0
    start = time.process_time()
    for k in range(frames):
        gray = cv2.imdecode(packets[k % len(packets)], cv2.IMREAD_GRAYSCALE)
        _, ids, _ = detector.detectMarkers(gray)
        found += 0 if ids is None else len(ids)
    return (time.process_time() - start) / frames * 1000.0, found // frames


def _watched(
    packets: list[np.ndarray], dictionary: str, frames: int, fps: float = FPS
) -> tuple[float, dict[str, int], int]:
    watcher = Watcher(dictionary)
    reads: dict[str, int] = {}
    found = 0
    start = time.process_time()
    for k in range(frames):
        look = watcher.look(Frame(None, k / fps, k, jpeg=packets[k % len(packets)]))
        reads[look.read] = reads.get(look.read, 0) + 1
        found += len(look.detections)
    return (time.process_time() - start) / frames * 1000.0, reads, found // frames


def analyze_speed(footage: Footage, loops: int = 8) -> tuple[float, float]:
    """Frames a second of the plain loop (one thread: decode to grey, detectMarkers) and of
    the product's ``analyze`` loop (``Game.run`` on the clip played ``loops`` times over,
    recording off), wall time, on the same frames."""
    import subprocess

    from tablesight.calibration.dictionaries import dictionary_id
    from tablesight.calibration.setup import Setup
    from tablesight.match.game import Game
    from tablesight.rules.ruleset import load_ruleset
    from tablesight.vision.sources import FileSource

    long = footage.path.with_name("long.avi")
    subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-y",
            "-stream_loop",
            str(loops - 1),
            "-i",
            str(footage.path),
            "-c",
            "copy",
            str(long),
        ],
        check=True,
    )
    packets = read_packets(long)
    name = footage.table.table.dictionary
    detector = cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(dictionary_id(name)), cv2.aruco.DetectorParameters()
    )
    start = time.perf_counter()
    for packet in packets:
        detector.detectMarkers(cv2.imdecode(packet, cv2.IMREAD_GRAYSCALE))
    plain = len(packets) / (time.perf_counter() - start)
    setup = Setup(
        "necromunda", load_ruleset("necromunda"), footage.table, footage.roster, [], footage.camera
    )
    game = Game(setup, FileSource(str(long)))
    start = time.perf_counter()
    game.run()
    watched = len(packets) / (time.perf_counter() - start)
    return plain, watched


@dataclass
class Live:
    """A live camera's frames arriving at their rate into the referee (``Game.process``,
    recording on), beside a one-thread x264 encode of a 1080p30 picture or not."""

    label: str
    beside_x264: bool
    fps: float
    arrived: int
    taken: int
    latency_periods: tuple[float, float]
    cpu_ms: float


def live(
    footage: Footage,
    packets: list[np.ndarray],
    fps: float,
    seconds: float = 8.0,
    beside_x264: bool = False,
) -> Live:
    """``seconds`` of the clip's packets arriving at ``fps`` as a camera's reader thread
    hands them to the decoder pool (undecoded, as ``LiveSource`` does for the game), each
    taken and refereed by a real :class:`~tablesight.match.game.Game` that records; the
    latency is from a frame's arrival to its events, in frame periods."""
    import subprocess

    from tablesight.calibration.setup import Setup
    from tablesight.match.game import Game
    from tablesight.match.writer import MatchWriter
    from tablesight.rules.ruleset import load_ruleset
    from tablesight.vision.sources import FileSource

    setup = Setup(
        "necromunda", load_ruleset("necromunda"), footage.table, footage.roster, [], footage.camera
    )
    record = footage.path.with_name(f"live-{beside_x264}.db")
    game = Game(setup, FileSource(str(footage.path)), recorder=MatchWriter(record, setup))
    encoder = None
    if beside_x264:
        arguments = (
            f"-v error -f lavfi -i testsrc2=size=1920x1080:rate=30 -t {seconds + 5} "
            "-c:v libx264 -threads 1 -preset veryfast -f null -"
        )
        encoder = subprocess.Popen(["ffmpeg", *arguments.split()])
        time.sleep(1.0)  # the encoder under way
    try:
        seg = poolbench.live(packets, 0, int(seconds * fps), fps, game, None, ahead=False)
    finally:
        game.close_recorder()
        if encoder is not None:
            encoder.kill()
            encoder.wait()
    latency = sorted(s * fps for s in seg.latency_s)
    cpu_ms = seg.cpu_s / max(1, seg.frames) * 1000.0
    p50 = latency[len(latency) // 2]
    p95 = latency[min(len(latency) - 1, int(0.95 * len(latency)))]
    label = f"{footage.size[1]}p"
    return Live(label, beside_x264, fps, seg.arrivals, seg.frames, (p50, p95), cpu_ms)


#: The live camera rows of the last run.
lives: list[Live] = []


def run(sizes: tuple[tuple[int, int], ...] = ((1920, 1080), (3840, 2160))) -> list[Row]:
    from tablesight.calibration.dictionaries import dictionary_id

    rows = []
    speeds.clear()
    lives.clear()
    for size in sizes:
        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / "still").mkdir()
            (Path(folder) / "match").mkdir()
            still = make_footage(Path(folder) / "still", size=size, movers=0)
            match = make_footage(Path(folder) / "match", size=size)
            name = still.table.table.dictionary
            clips = {
                "still table": read_packets(still.path),
                "match-like": read_packets(match.path),
            }
            clips["everything changing"] = _carried(clips["still table"])
            plain_fps, analyze_fps = analyze_speed(match)
            camera_fps = 60.0 if size[1] <= 1080 else 30.0
            for beside in (False, True):
                lives.append(live(match, clips["match-like"], camera_fps, beside_x264=beside))
            speeds.append((f"{size[1]}p", plain_fps, analyze_fps))
            sample = _sample(Path(folder), size[1])
            for clip, packets in [*clips.items(), ("sample match (10 fps)", sample)]:
                fps = SAMPLE_FPS if packets is sample else FPS
                count = len(packets) if packets is sample else FRAMES
                which = SAMPLE_DICTIONARY if packets is sample else name
                plain, watch = [], []
                for _ in range(2):
                    plain.append(_plain(packets, dictionary_id(which), count))
                    watch.append(_watched(packets, which, count, fps))
                best_plain = min(plain)
                best_watch = min(watch, key=lambda w: w[0])
                rows.append(
                    Row(
                        f"{size[1]}p",
                        clip,
                        best_plain[0],
                        best_watch[0],
                        best_watch[1],
                        (best_plain[1], best_watch[2]),
                    )
                )
    return rows


def report(rows: list[Row]) -> str:
    lines = [
        f"{'res':<6} {'clip':<20} {'plain ms':>9} {'watch ms':>9} {'ratio':>6}  "
        f"{'markers plain/watch':>19}  reads"
    ]
    for r in rows:
        reads = ", ".join(f"{k} {v}" for k, v in sorted(r.reads.items()))
        lines.append(
            f"{r.label:<6} {r.clip:<20} {r.plain_ms:9.2f} {r.watch_ms:9.2f} {r.ratio:6.2f}  "
            f"{r.markers[0]:>9}/{r.markers[1]:<9}  {reads}"
        )
    for label, plain, analyzed in speeds:
        lines.append(
            f"{label:<6} analyze on the match-like clip: {analyzed:6.1f} fps, the plain loop "
            f"{plain:6.1f} fps: {analyzed / plain:4.2f} x"
        )
    for c in lives:
        beside = "beside a one-thread x264 encode" if c.beside_x264 else "alone"
        lines.append(
            f"{c.label:<6} live camera at {c.fps:.0f} fps, match-like, recording, {beside}: "
            f"{c.taken} of {c.arrived} frames taken, latency p50 {c.latency_periods[0]:.2f} "
            f"p95 {c.latency_periods[1]:.2f} frame periods, cpu {c.cpu_ms:.1f} ms a frame"
        )
    lines.append(
        "ms: CPU a frame, every thread. plain: JPEG decoded to grey, detectMarkers with "
        "OpenCV's defaults on the whole picture. watch: vision.watch.Watcher.look (decoded "
        "only when looked at; the change map, windows, sweeps). ratio: watch / plain."
    )
    return "\n".join(lines)
