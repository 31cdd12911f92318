"""From a frame's arrival to the overlay drawn in a browser
(``python -m tablesight.rig.overlaylatency``).

A live game (:class:`~tablesight.match.game.Game`) is fed frames at the camera's 30 fps from a
thread of its own, as a camera's reader thread does, and serves the web UI
(:class:`~tablesight.webui.serve.Server`); Debian's Chromium, driven by Playwright, shows
``/overlay?latency=1`` at 1920 x 1080. Each frame's ``poses`` message carries the time it
reached :meth:`Game.process` (wall clock); the page notes, in the animation frame that
draws the moved shapes, how long ago that was (``window.tableSightLatency``). The report
splits it: arrival to the frame observed (the markers detected and the table pose solved,
after which its poses go out), arrival to the message heard by the page, and the rest
(the page moving the shapes and the browser's next animation frame).

The frames: the 44 x 30 in table of ``tablesight.rig.accuracy`` rendered once at 1080p (or
4K) with its four anchors and 40 model markers; each frame is detected and its table
pose solved for real (the work a frame costs before it is judged), while the models'
poses come from a script: one model at a time slides 6 in over a second, then settles
(a move the session judges) and the next one goes. The picture is not sent: the overlay
page draws on nothing, as OBS lays it over its own copy of the camera.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Any

import cv2

from tablesight.calibration.camera import CameraModel
from tablesight.calibration.roster import RosterModel
from tablesight.calibration.setup import Setup
from tablesight.calibration.table import Anchor, TableKeys, TableSpec
from tablesight.rig.accuracy import TABLE_IN, scene_camera
from tablesight.rig.synth import PlacedMarker, render_table
from tablesight.rules.geometry import Pose
from tablesight.rules.observation import LocatedModel
from tablesight.rules.ruleset import load_ruleset
from tablesight.rules.scenario import RoundBase
from tablesight.vision.aruco import MarkerDetector
from tablesight.vision.observe import Observation
from tablesight.vision.sources import Frame
from tablesight.vision.tablepose import TablePose

CHROMIUM = "/usr/bin/chromium"
FPS = 30.0
#: The goal: frame arrival to the overlay drawn, 95th percentile.
GOAL_P95_MS = 100.0
SLIDE_IN, SLIDE_FRAMES, REST_FRAMES = 6.0, 30, 6


@dataclass
class Result:
    height: int
    frames: int
    messages: int
    latencies_ms: list[float]
    bytes_per_message: float
    nodes_before: int
    nodes_after: int
    #: Frame arrival to the message heard by the page (before it is drawn).
    received_ms: list[float]
    #: Frame arrival to the frame observed (its poses ready to go out), on the server.
    observed_ms: list[float]

    def percentile(self, q: float) -> float:
        return _pct(self.latencies_ms, q)

    def report(self) -> str:
        p50, p95 = self.percentile(50), self.percentile(95)
        verdict = "meets" if p95 <= GOAL_P95_MS else "misses"
        return "\n".join(
            [
                f"overlay at {self.height}p, 40 models, frames fed at {FPS:g} fps: "
                f"{self.frames} frames, {len(self.latencies_ms)} drawn by Chromium "
                f"({self.messages} poses messages, {self.bytes_per_message:.0f} bytes each "
                "on average)",
                f"frame arrival -> overlay drawn: p50 {p50:.1f} ms, p95 {p95:.1f} ms, "
                f"max {max(self.latencies_ms):.1f} ms, mean "
                f"{statistics.fmean(self.latencies_ms):.1f} ms "
                f"({verdict} the goal of p95 <= {GOAL_P95_MS:g} ms)",
                f"of which frame arrival -> message heard by the page: p50 "
                f"{_pct(self.received_ms, 50):.1f} ms, p95 {_pct(self.received_ms, 95):.1f} ms",
                f"of which frame arrival -> frame observed (markers detected, table pose "
                f"solved): p50 {_pct(self.observed_ms, 50):.1f} ms, p95 "
                f"{_pct(self.observed_ms, 95):.1f} ms",
                f"SVG elements before and after: {self.nodes_before} and {self.nodes_after}",
            ]
        )


def _pct(values: list[float], q: float) -> float:
    xs = sorted(values) or [math.nan]
    return xs[min(len(xs) - 1, max(0, math.ceil(q / 100 * len(xs)) - 1))]


def _table() -> TableSpec:
    w, d = TABLE_IN
    at = [(1.5, 1.5), (w - 1.5, 1.5), (w - 1.5, d - 1.5), (1.5, d - 1.5)]
    return TableSpec(
        table=TableKeys(width_in=w, depth_in=d, dictionary="4x4_250"),
        anchors=[Anchor(id=i, x_in=x, y_in=y, size_mm=40.0) for i, (x, y) in enumerate(at)],
    )


def _places(models: int) -> list[tuple[float, float]]:
    cols = 8
    return [(4.0 + 4.5 * (k % cols), 5.0 + 5.0 * (k // cols)) for k in range(models)]


class _Scripted:
    """The observer of the bench: each frame detected and its table pose solved (their
    cost is real), the models where the script has them."""

    def __init__(self, table: TableSpec, camera: CameraModel, models: int, size: tuple[int, int]):
        self.table, self.camera = table, camera
        self.detector = MarkerDetector(table.table.dictionary, size)
        self.ids = [f"m{k:02d}" for k in range(models)]
        self.at = {m: list(p) for m, p in zip(self.ids, _places(models), strict=True)}
        self.first = True
        #: When each frame was observed (wall clock, s), by its number.
        self.observed: dict[int, float] = {}

    def observe(self, frame: Frame, detections: object = None, fresh: bool = True) -> Observation:
        # detects every frame itself, whatever the game read (the cost is real)
        found = self.detector.detect(frame.image)
        pose = TablePose.solve(found, self.table, self.camera)
        k = frame.index
        cycle = SLIDE_FRAMES + REST_FRAMES
        mover = self.ids[(k // cycle) % len(self.ids)]
        step, news = k % cycle, None
        located = []
        for m in self.ids:
            x, y = self.at[m]
            track = "settled"
            if m == mover and step < SLIDE_FRAMES:
                sign = 1.0 if (k // cycle // len(self.ids)) % 2 == 0 else -1.0
                x += sign * SLIDE_IN / SLIDE_FRAMES
                self.at[m][0] = x
                track = "moving"
            elif m == mover and step == SLIDE_FRAMES:
                news = "moved"
            n: tuple[Any, ...] = ("first_seen",) if self.first else ()
            if m == mover and news:
                n = (news,)
            located.append(LocatedModel(m, Pose(x, y, 90.0), 0.004, track, n))  # type: ignore[arg-type]
        self.first = False
        self.observed[k] = time.time()
        return Observation(frame.t, k, found, pose, tuple(located))


#: The page counts the poses messages it hears, and their bytes.
HEARD = """
window.heard = [0, 0];
window.received = [];
const Native = window.EventSource;
window.EventSource = class extends Native {
  constructor(...args) {
    super(...args);
    this.addEventListener("poses", (m) => {
      window.heard = [window.heard[0] + 1, window.heard[1] + m.data.length];
      const at = JSON.parse(m.data).arrived_ms;
      window.received.push(performance.timeOrigin + performance.now() - at);
    });
  }
};
"""


class _Source:
    live = False


def measure(frames: int = 400, height: int = 1080, models: int = 40) -> Result:
    """Feed ``frames`` frames at 30 fps and time each to the overlay drawn in Chromium."""
    from playwright.sync_api import sync_playwright

    from tablesight.match.game import Game
    from tablesight.webui.serve import Server

    width = height * 16 // 9
    lens = scene_camera(width, height)
    camera = CameraModel((width, height), lens.camera_matrix, lens.dist_coeffs)
    table = _table()
    roster = [
        RosterModel(
            id=f"m{k:02d}",
            side=("goliath", "escher")[k % 2],
            base=RoundBase(shape="round", diameter_mm=25.4),
            movement=6,
            marker=10 + k,
            marker_size_mm=25,
        )
        for k in range(models)
    ]
    placed = [
        PlacedMarker(a.id, a.size_mm, a.x_in, a.y_in, 0.0, 0.0, cv2.aruco.DICT_4X4_250)
        for a in table.anchors
    ] + [
        PlacedMarker(10 + k, 25.0, x, y, 0.0, 90.0, cv2.aruco.DICT_4X4_250)
        for k, (x, y) in enumerate(_places(models))
    ]
    image = render_table(lens, TABLE_IN, placed)
    setup = Setup("necromunda", load_ruleset("necromunda"), table, roster, [], camera)
    game = Game(setup, _Source())  # type: ignore[arg-type]
    observer = _Scripted(table, camera, models, (width, height))
    game.observer = observer  # type: ignore[assignment]
    server = Server(game, port=0).start()
    observed: list[float] = []

    def feed(first: int, count: int) -> None:
        began = time.monotonic()
        for i in range(count):
            time.sleep(max(0.0, i / FPS - (time.monotonic() - began)))
            k = first + i
            game.process(Frame(image, k / FPS, k))
            poses = game.poses()
            if poses is not None and k in observer.observed:
                observed.append(1000.0 * observer.observed.pop(k) - poses["arrived_ms"])

    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM)
            page = browser.new_page(viewport={"width": 1920, "height": 1080})
            page.add_init_script(HEARD)
            page.goto(f"http://127.0.0.1:{server.port}/overlay?latency=1")
            warm = round(2 * FPS)
            feed(0, warm)  # the first state drawn, the page warmed up
            page.wait_for_function(
                "() => document.querySelectorAll('path.base').length > 0", timeout=20_000
            )
            nodes_before = page.evaluate("() => document.querySelectorAll('svg *').length")
            page.evaluate(
                "() => { window.tableSightLatency.length = 0; window.heard = [0, 0];"
                " window.received = []; }"
            )
            observed.clear()
            feed(warm, frames)
            time.sleep(0.5)
            latencies = page.evaluate("() => window.tableSightLatency.slice()")
            messages, size = page.evaluate("() => window.heard")
            received = page.evaluate("() => window.received.slice()")
            nodes_after = page.evaluate("() => document.querySelectorAll('svg *').length")
            browser.close()
    finally:
        game.stop()
        server.close()
    return Result(
        height,
        frames,
        messages,
        [float(v) for v in latencies],
        size / max(1, messages),
        nodes_before,
        nodes_after,
        [float(v) for v in received],
        observed,
    )


def main(frames: int = 400, heights: tuple[int, ...] = (1080,)) -> str:
    return "\n\n".join(measure(frames, h).report() for h in heights)


if __name__ == "__main__":
    print(main())
