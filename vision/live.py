"""A game being refereed: a source through the pipeline into the session, shared by all.

``Setup`` is what a user describes in files (game, table, roster, terrain, camera);
``Game`` runs a source's frames through a :class:`~vision.pipeline.Pipeline` into a
:class:`~rules.session.Session` and is the one object the terminal, the web UI and the
match file talk to. Every change goes through its lock; every event it produces is handed
to its listeners (the terminal printer, each web page's stream, the recorder) in order.

::

    setup = Setup.load("necromunda", Path("table.toml"), Path("roster.toml"))
    game = Game(setup, open_source("0"))
    game.listen(print)
    game.run()  # until the source ends or game.stop()
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from calibration.camera import CameraModel
from calibration.table import TableSpec
from rules.errors import InputError
from rules.ruleset import Ruleset, load_ruleset
from rules.scene import Table
from rules.session import Event, Session
from vision.pipeline import Pipeline
from vision.roster import RosterModel, TerrainPiece, load_roster, load_terrain, profile
from vision.script import Script, Step
from vision.sources import FileSource, Frame, LiveSource

#: How long a live source may go without a frame before the camera is reported lost.
CAMERA_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class Setup:
    """Everything a game is refereed with, as loaded from the user's files."""

    game: str
    ruleset: Ruleset
    table: TableSpec
    roster: list[RosterModel]
    terrain: list[TerrainPiece]
    camera: CameraModel | None = None

    @classmethod
    def load(
        cls,
        game: str,
        table_path: Path,
        roster_path: Path,
        terrain_path: Path | None = None,
        camera_path: Path | None = None,
    ) -> Setup:
        """Load and cross-check the files; an :class:`InputError` names the bad one."""
        ruleset = load_ruleset(game)
        table = TableSpec.from_toml(table_path)
        anchors = {a.id for a in table.anchors}
        roster = load_roster(roster_path, anchors)
        taken = anchors | {m.marker for m in roster}
        terrain = load_terrain(terrain_path, taken) if terrain_path else []
        camera = CameraModel.from_toml(camera_path) if camera_path else None
        return cls(game, ruleset, table, roster, terrain, camera)

    def session(self) -> Session:
        """A new session: every model's profile, none of them seen yet."""
        table = Table(self.table.table.width_in, self.table.table.depth_in)
        return Session(self.ruleset, table, {m.id: profile(m) for m in self.roster})

    def pipeline(self, session: Session) -> Pipeline:
        return Pipeline(self.table, self.roster, session, self.camera, self.terrain)

    @property
    def sides(self) -> list[str]:
        """The sides in the roster, in the order they first appear."""
        return list(dict.fromkeys(m.side for m in self.roster))


Listener = Callable[[Event], None]


class Game:
    """One game: frames in, events out, and the controls the players use.

    ``auto_phase`` starts the first movement phase at the first frame that shows the
    table (as ``analyze`` does without a script); ``paced`` plays a file source at its
    own speed, as a camera would deliver it; ``loop`` starts a file over (as a new game)
    when it ends. A ``script`` (``session.toml``) makes its phase changes and declarations
    at their times, before the frame that reaches them; with one, no phase starts by itself.
    """

    def __init__(
        self,
        setup: Setup,
        source: FileSource | LiveSource,
        *,
        auto_phase: bool = True,
        paced: bool = False,
        loop: bool = False,
        script: Script | None = None,
    ) -> None:
        self.setup = setup
        self.source = source
        self.script = script
        self.auto_phase = auto_phase and script is None
        self._steps = list(script.step) if script else []
        self.paced = paced and not source.live
        self.loop = loop and not source.live
        self.lock = threading.RLock()
        self.session = setup.session()
        self.pipeline = setup.pipeline(self.session)
        #: The newest frame processed, and its time and number.
        self.frame: Frame | None = None
        self.status = "starting"
        self._listeners: list[Listener] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- listeners ------------------------------------------------------------------------

    def listen(self, listener: Listener) -> None:
        with self.lock:
            self._listeners.append(listener)

    def unlisten(self, listener: Listener) -> None:
        with self.lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def _tell(self, events: list[Event]) -> list[Event]:
        for event in events:
            for listener in list(self._listeners):
                listener(event)
        return events

    # -- frames ---------------------------------------------------------------------------

    def process(self, frame: Frame) -> list[Event]:
        """One frame through the pipeline; the events it caused, already told."""
        with self.lock:
            events: list[Event] = []
            while self._steps and self._steps[0].t <= frame.t:
                events += self._apply(self._steps.pop(0), frame)
            events += self.pipeline.process(frame)
            self.frame = frame
            if self.auto_phase and not self.session.in_phase and self.pipeline.pose is not None:
                self.auto_phase = False
                events += self.session.start_phase(frame.t, frame.index, side=self.session.side)
            return self._tell(events)

    def _apply(self, step: Step, frame: Frame) -> list[Event]:
        """One scripted step: a phase change and/or a declaration."""
        events: list[Event] = []
        if step.phase == "movement":
            events += self.session.start_phase(frame.t, frame.index, step.turn, step.side)
        elif step.phase == "end":
            events += self.session.end_phase(frame.t, frame.index)
        if step.declare is not None:
            d = step.declare
            try:
                events += self.session.declare(
                    frame.t, frame.index, d.model, d.action, d.target, d.roll
                )
            except ValueError as exc:
                raise InputError(f"step at t={step.t}: {exc}") from None
        return events

    def run(self) -> None:
        """Process the source until it ends (a file without ``loop``) or ``stop()``."""
        offset_t, offset_index = 0.0, 0
        while not self._stop.is_set():
            last: Frame | None = None
            for frame in self._frames():
                last = Frame(frame.image, frame.t + offset_t, frame.index + offset_index)
                self.process(last)
                if self._stop.is_set():
                    return
            if self.source.live:
                self._camera_lost()
                continue
            if not self.loop or last is None:
                break
            # Start over as a new game: a looped clip is not a move back to the start.
            offset_t, offset_index = last.t + 1.0 / 30.0, last.index + 1
            self.restart()
        self.status = "ended"

    def _frames(self) -> Iterator[Frame]:
        if isinstance(self.source, LiveSource):
            yield from self.source.frames(timeout_s=CAMERA_TIMEOUT_S)
            return
        self.status = "playing" if self.paced else "analyzing"
        began = time.monotonic()
        for frame in self.source.frames():
            if self.paced:
                self._stop.wait(max(0.0, frame.t - (time.monotonic() - began)))
            yield frame

    def _camera_lost(self) -> None:
        status = getattr(self.source, "status", "camera lost, retrying")
        if status == self.status:
            return
        self.status = "camera lost, retrying"
        with self.lock:
            t = self.frame.t if self.frame else 0.0
            index = self.frame.index if self.frame else 0
            self._tell(self.session.camera_lost(t, index, "camera lost, retrying"))

    def start(self) -> None:
        """Run on a thread of its own."""
        self._thread = threading.Thread(target=self.run, name="game", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if isinstance(self.source, LiveSource):
            self.source.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)

    def restart(self) -> None:
        """A new game on the same setup (the demo's clip looping)."""
        with self.lock:
            self.session = self.setup.session()
            self.pipeline = self.setup.pipeline(self.session)
            self.auto_phase = self.script is None
            self._steps = list(self.script.step) if self.script else []

    # -- controls -------------------------------------------------------------------------

    def _now(self) -> tuple[float, int]:
        return (self.frame.t, self.frame.index) if self.frame else (0.0, 0)

    def start_phase(self, turn: int | None = None, side: str | None = None) -> list[Event]:
        """Start a movement phase now: poses as they stand are where moves count from."""
        with self.lock:
            self.auto_phase = False
            ended = self.session.end_phase(*self._now()) if self.session.in_phase else []
            side = side if side is not None else self.session.side
            return self._tell(ended + self.session.start_phase(*self._now(), turn, side))

    def end_phase(self) -> list[Event]:
        with self.lock:
            self.auto_phase = False
            if not self.session.in_phase:
                return []
            return self._tell(self.session.end_phase(*self._now()))

    def next_turn(self) -> list[Event]:
        """End the phase if one is running and start the next turn's movement phase."""
        with self.lock:
            return self.start_phase(turn=self.session.turn + 1)

    def set_side(self, side: str) -> list[Event]:
        """The side with priority (the one moving); checked against the roster."""
        if side not in self.setup.sides:
            raise InputError(f"side: unknown side {side!r}; the roster has: {self.setup.sides}")
        with self.lock:
            self.session.side = side
            return []

    def next_side(self) -> str:
        sides = self.setup.sides
        with self.lock:
            now = self.session.side
            self.session.side = sides[(sides.index(now) + 1) % len(sides)] if now else sides[0]
            return self.session.side

    def declare(
        self,
        model: str,
        action: str | None = None,
        target: str | None = None,
        roll: int | None = None,
    ) -> list[Event]:
        with self.lock:
            return self._tell(self.session.declare(*self._now(), model, action, target, roll))
