"""A game being refereed: a source's frames observed, judged by the session, shared by all.

``Setup`` is what a user describes in files (game, table, roster, terrain, camera);
``Game`` turns a source's frames into observations
(:class:`~tablesight.vision.observe.Observer`) that a
:class:`~tablesight.rules.session.Session` judges, and is the one object the terminal, the
web UI and the match file talk to. Every change goes through its lock; every event it
produces is handed to its listeners (the terminal printer, each web page's stream, the
recorder) in order.

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
from typing import Any

from tablesight.calibration.script import Script, Step
from tablesight.calibration.setup import Setup
from tablesight.match.pagestate import Live, decided_by, located, page_state, poses_message
from tablesight.match.schema import TABLE_DECIDES, RecordError
from tablesight.match.viewstate import StateCache, Worked
from tablesight.match.writer import MatchWriter
from tablesight.rules.errors import InputError
from tablesight.rules.ruleset import Ruleset
from tablesight.rules.scene import Scene
from tablesight.rules.session import Event
from tablesight.rules.view import flags, measure, neighbours
from tablesight.vision.observe import Observation, Observer, PoseHealth
from tablesight.vision.sources import FileSource, Frame, LiveSource
from tablesight.vision.tablepose import TablePose
from tablesight.vision.watch import CHECK_S, Look, Watcher

#: How long a live source may go without a frame before the camera is reported lost.
CAMERA_TIMEOUT_S = 2.0
#: A live source's status: delivering frames, not delivering them, and the word told
#: when it delivers again.
LIVE = "live"
CAMERA_LOST = "camera lost, retrying"
CAMERA_BACK = "camera back"
#: How long most of the picture must go on changing before the status says the camera is
#: moving (seconds), and what it says then.
MOVING_S = 0.5
MOVING = "the picture changes everywhere (the camera moving?): markers read at every frame"


Listener = Callable[[Event], None]


class Game:
    """One game: frames in, events out, and the controls the players use.

    ``auto_phase`` starts the first movement phase at the first frame that shows the
    table (as ``analyze`` does without a script); ``paced`` plays a file source at its
    own speed (times ``speed``: 2.0 plays it twice as fast), as a camera would deliver it;
    ``loop`` starts a file over (as a new game) when it ends. A ``script``
    (``session.toml``) makes its phase changes and declarations at their times, before the
    frame that reaches them; with one, no phase starts by itself.

    Times are times within the game, which starts at 0: a frame's ``t`` and ``index`` as
    its source gives them (a file's first frame is at 0, and again at 0 when the file
    is played again for the next game). The script's steps, the session's events and the
    match file are all on that one clock; ``generation`` counts the games started over.
    """

    def __init__(
        self,
        setup: Setup,
        source: FileSource | LiveSource,
        *,
        auto_phase: bool = True,
        paced: bool = False,
        loop: bool = False,
        speed: float = 1.0,
        script: Script | None = None,
        recorder: MatchWriter | None = None,
        check_s: float = CHECK_S,
    ) -> None:
        if not speed > 0.0:
            raise ValueError(f"speed: expected more than 0, got {speed}")
        self.setup = setup
        self.source = source
        self.script = script
        self.auto_phase = auto_phase and script is None
        self._steps = list(script.step) if script else []
        self.paced = paced and not source.live
        self.loop = loop and not source.live
        self.speed = float(speed)
        self.lock = threading.RLock()
        #: Notified on every change; ``version`` counts them, ``generation`` counts restarts.
        self.changed = threading.Condition(self.lock)
        self.version = 0
        self.generation = 0
        self._state = StateCache(self.lock)
        self._jpeg: tuple[tuple[int, int], bytes] | None = None
        self._poses: dict[str, Any] | None = None
        #: Notified with each frame's poses (before it is judged) and each change, on a
        #: lock of its own: a stream waiting on it is not held up by a frame being judged.
        self._news = threading.Condition(threading.Lock())
        self.session = setup.session()
        self.observer = Observer.for_setup(setup)
        #: Reads each frame's markers where the picture changed (the rest stand).
        self.check_s = check_s
        self.watcher = Watcher(setup.table.table.dictionary, check_s=check_s)
        #: The newest observation, and the newest table pose (kept while a hand hides it).
        self.observation: Observation | None = None
        #: Since when most of the picture has changed at every look (a camera carried).
        self._moving_since: float | None = None
        self._status_before_moving = ""
        self.pose: TablePose | None = None
        self.health: PoseHealth | None = None
        #: The newest frame processed, and its time and number.
        self.frame: Frame | None = None
        self.status = "starting"
        self._listeners: list[Listener] = []
        #: Who made each flag's decision in this game, and their note: ``table`` (its page
        #: or keys) or ``hub:<judge>`` (a tournament judge through the broker).
        self.decided: dict[int, tuple[str, str | None]] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: The match file being written, if any: every frame's poses, every event, the
        #: session's journal, declarations, decisions, and a snapshot each second.
        self.recorder = recorder
        #: Why recording stopped before the game ended (the disk filled up, the folder was
        #: deleted), as one line; the game goes on without it.
        self.record_failure: str | None = None
        self._failure_told = True

    # -- listeners ------------------------------------------------------------------------

    def listen(self, listener: Listener) -> None:
        with self.lock:
            self._listeners.append(listener)

    def unlisten(self, listener: Listener) -> None:
        with self.lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def _tell(self, events: list[Event], *, recorded: bool = False) -> list[Event]:
        """Hand events to the match file (unless a frame's record already holds them) and
        to every listener, and wake whoever waits for a change. A recording that failed is
        told here, once, as a ``recording_stopped`` event (it is not in the file)."""
        self._journal()
        if not recorded and events:

            def write(recorder: MatchWriter) -> None:
                for event in events:
                    recorder.event(event)

            self._record(write)
        if not self._failure_told:
            self._failure_told = True
            t, index = self._now()
            message = f"{self.record_failure}; refereeing goes on without it"
            events = [*events, *self.session.recording_stopped(t, index, message)]
        for event in events:
            for listener in list(self._listeners):
                listener(event)
        with self.changed:
            self.version += 1
            self.changed.notify_all()
        with self._news:
            self._news.notify_all()
        return events

    # -- the match file -------------------------------------------------------------------

    def _record(self, write: Callable[[MatchWriter], object]) -> None:
        """Hand something to the match file; if the file cannot be written any more, stop
        recording (reported once, by the next :meth:`_tell`) and go on refereeing."""
        recorder = self.recorder
        if recorder is None:
            return
        try:
            write(recorder)
        except RecordError as exc:
            self._stop_recording(str(exc))

    def _journal(self) -> None:
        """Hand the inputs the session took since the last change to the match file, in
        order (every change is told, so none waits longer); without one, let them go."""
        inputs = self.session.take_journal()
        if not inputs:
            return

        def write(recorder: MatchWriter) -> None:
            for kind, args in inputs:
                recorder.input(kind, args)

        self._record(write)

    def _stop_recording(self, failure: str | None) -> None:
        """Close the match file (what was committed stays valid); ``failure``: why it
        stopped early, reported once."""
        with self.lock:
            recorder, self.recorder = self.recorder, None
            if recorder is not None:
                try:
                    recorder.close()
                except RecordError as exc:
                    failure = failure or str(exc)
            if failure is not None and self.record_failure is None:
                self.record_failure = failure
                self._failure_told = False

    def close_recorder(self) -> None:
        """Finish the match file (at the end of the game); a failure to is reported as
        one while recording is, and raises nothing."""
        with self.lock:
            if self.recorder is None:
                return
            self._stop_recording(None)
            self._tell([])

    # -- frames ---------------------------------------------------------------------------

    def process(self, frame: Frame) -> list[Event]:
        """One frame observed and judged; the events it caused, recorded and told.

        ``frame.t`` and ``frame.index`` are within the game (see the class)."""
        arrived = time.time()
        with self.lock:
            events: list[Event] = []
            while self._steps and self._steps[0].t <= frame.t:
                events += self._apply(self._steps.pop(0), frame)
            if self.source.live and self.status in ("starting", CAMERA_LOST):
                if self.status == CAMERA_LOST:  # frames again: said, once
                    events += self.session.camera_back(frame.t, frame.index, CAMERA_BACK)
                self.status = LIVE
            look = self.watcher.look(frame)
            if look.read == "broken":
                return []  # not a picture (a frame cut short in the stream): skipped
            observation = self.observer.observe(frame, look.detections, fresh=look.fresh)
            self._say_if_moving(look, observation)
            with self._news:
                self._poses = _poses(self.generation, frame, arrived, observation)
                self._news.notify_all()
            events += self.session.observe(observation)
            self.frame, self.observation = frame, observation
            if observation.pose is not None and observation.pose.healthy:
                self.pose = observation.pose  # the views draw with a pose that is trusted
            self.health = observation.health or self.health
            if self.auto_phase and not self.session.in_phase and self.pose is not None:
                self.auto_phase = False
                events += self.session.start_phase(frame.t, frame.index, side=self.session.side)
            recorder = self.recorder
            if recorder is not None:
                due = events or recorder.snapshot_due(frame.t)
                snapshot = self.session.snapshot() if due else None
                self._record(lambda r: r.record(frame, observation, events, snapshot))
            return self._tell(events, recorded=True)

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
            self._record(
                lambda r: r.declaration(frame.t, frame.index, d.model, d.action, d.target, d.roll)
            )
        return events

    def run(self, progress: Callable[[Frame], object] | None = None) -> None:
        """Process the source until it ends (a file without ``loop``) or ``stop()``;
        ``progress`` is told of each frame once it is processed (a progress bar, say).

        A looping file starts over as a new game (:meth:`restart`); the file's clock starts
        again at 0, and so does the game's: its script's steps come at their times again."""
        while not self._stop.is_set():
            last: Frame | None = None
            for frame in self._frames():
                last = frame
                self.process(frame)
                if progress is not None:
                    progress(frame)
                if self._stop.is_set():
                    return
            if self.source.live:
                if self._stop.is_set():
                    break  # stopped, not lost
                self._camera_lost()
                continue
            if not self.loop or last is None:
                break
            # Start over as a new game: a looped clip is not a move back to the start.
            self.restart()
        with self.lock:
            self.status = "ended"
            self._tell([])

    def _frames(self) -> Iterator[Frame]:
        """The source's frames as they came: a camera's JPEG pictures are decoded only
        when :meth:`process` looks at them (:class:`~tablesight.vision.watch.Watcher`)."""
        if isinstance(self.source, LiveSource):
            yield from self.source.frames(timeout_s=CAMERA_TIMEOUT_S, decode=False)
            return
        self.status = "playing" if self.paced else "analyzing"
        began = time.monotonic()
        for frame in self.source.frames(decode=False):
            if self.paced:
                due = frame.t / self.speed
                self._stop.wait(max(0.0, due - (time.monotonic() - began)))
            yield frame

    def _say_if_moving(self, look: Look, seen: Observation) -> None:
        """While the camera goes on moving for ``MOVING_S`` (carried round the table: most
        of the picture changing, or the table pose jumping, at every look), the status
        says so; it is what it was once a look finds the camera still. Recording and
        refereeing go on throughout."""
        if look.read == "rest":
            return  # not looked at: nothing new
        if look.busy or seen.camera_shift_in is not None:
            self._moving_since = seen.t if self._moving_since is None else self._moving_since
            if seen.t - self._moving_since >= MOVING_S - 1e-9 and self.status != MOVING:
                self._status_before_moving, self.status = self.status, MOVING
            return
        self._moving_since = None
        if self.status == MOVING:
            self.status = self._status_before_moving

    def _camera_lost(self) -> None:
        """The live source gave no frame for ``CAMERA_TIMEOUT_S``: said once per loss."""
        with self.lock:
            if self.status == CAMERA_LOST:
                return
            self._moving_since = None
            self.status = CAMERA_LOST
            t = self.frame.t if self.frame else 0.0
            index = self.frame.index if self.frame else 0
            self._tell(self.session.camera_lost(t, index, CAMERA_LOST))

    def start(self) -> None:
        """Run on a thread of its own."""
        self._thread = threading.Thread(target=self.run, name="game", daemon=True)
        self._thread.start()

    @property
    def closing(self) -> bool:
        """True once the game is stopping: open streams finish."""
        return self._stop.is_set()

    def stop(self) -> None:
        self._stop.set()
        with self.changed:
            self.changed.notify_all()
        with self._news:
            self._news.notify_all()
        if isinstance(self.source, LiveSource):
            self.source.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)

    def restart(self) -> None:
        """A new game on the same setup (the demo's clip looping)."""
        with self.lock:
            if self.recorder is not None:  # one match file records one game
                self.close_recorder()
            self.generation += 1
            self.session = self.setup.session()
            self.decided = {}
            self.observer = Observer.for_setup(self.setup)
            self.watcher = Watcher(self.setup.table.table.dictionary, check_s=self.check_s)
            if self.status == MOVING:  # a new clock: the camera's moving is judged anew
                self.status = self._status_before_moving
            self._moving_since = None
            # nothing of the last game's clock is shown as this game's (its last frame's
            # time with this game's phase, say)
            self.frame, self.observation, self.pose = None, None, None
            self._poses = None
            self.health = None
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
            self.session.set_side(side)
            return self._tell([])

    def next_side(self) -> str:
        sides = self.setup.sides
        with self.lock:
            now = self.session.side
            side = sides[(sides.index(now) + 1) % len(sides)] if now else sides[0]
            self.session.set_side(side)
            self._tell([])
            return side

    def declare(
        self,
        model: str,
        action: str | None = None,
        target: str | None = None,
        roll: int | None = None,
    ) -> list[Event]:
        """A model's declaration, checked against the roster and the game's actions."""
        with self.lock:
            self.session.check_declaration(model, action, target, roll)
            events = self.session.declare(*self._now(), model, action, target, roll)
            self._record(lambda r: r.declaration(*self._now(), model, action, target, roll))
            return self._tell(events)

    def decide(
        self, event_id: int, decision: str, by: str = TABLE_DECIDES, note: str | None = None
    ) -> None:
        """Accept or dismiss a flag; it stays in the record, marked with who decided
        (``table``: the players, on the page or the keys; ``hub:<judge>``: a tournament
        judge) and their note. A later decision on the same flag replaces it."""
        with self.lock:
            try:
                self.session.decide(event_id, decision)
            except ValueError as exc:
                raise InputError(str(exc)) from None
            self.decided[event_id] = (by, note)
            self._record(lambda r: r.decision(self._now()[0], event_id, decision, by, note))
            self._tell([])

    def flags(self) -> list[dict[str, Any]]:
        """The flags listed now (:func:`tablesight.rules.view.flags`), each with ``by`` and ``note``
        of its decision (``None`` while undecided)."""
        with self.lock:
            return decided_by(flags(self.session), dict(self.decided))

    # -- what views show --------------------------------------------------------------------

    def table(self) -> tuple[Scene, Ruleset]:
        """The table as it stands at the moment shown, and its game's rules: the session's
        scene, read under the game's lock (a frame judged meanwhile waits that long)."""
        with self.lock:
            return self.session.scene(), self.session.ruleset

    def state(self) -> dict[str, Any]:
        """The table as views draw it (see :mod:`tablesight.rules.view`), plus the live picture's
        mapping from table inches to pixels. Computed once per change, shared by all.

        Working it out takes tens of milliseconds for a full table, so it is done on a
        copy of the session, outside the game's lock: frames never wait for it.
        """
        return self._state.get(self._key, self._take_state).state

    def newest_state(self, generation: int, version: int) -> Worked | None:
        """Without waiting: the state worked out last, with its text made once for every
        stream, if it is of ``generation`` and at least ``version``; else ``None``, and the
        newest is being worked out on a thread of its own (:meth:`StateCache.ask`)."""
        return self._state.ask((generation, version), self._key, self._take_state)

    def _key(self) -> tuple[int, int]:
        return self.generation, self.version

    def _take_state(self) -> Callable[[], dict[str, Any]]:
        """(Under the lock) a copy of what the state is worked out from, and the work."""
        session = self.session.copy()
        decided = dict(self.decided)
        live = Live(
            self.status,
            self.generation,
            self.version,
            self.frame.t if self.frame else None,
            self.frame.index if self.frame else None,
            len(self.session.events),
            # how far the newest table pose can be trusted (None until the table is seen)
            self.health.to_dict() if self.health is not None else None,
        )
        poses, camera = self._poses, self.mapping()

        def work() -> dict[str, Any]:
            return page_state(session, live=live, decided=decided, poses=poses, camera=camera)

        return work

    def poses(self) -> dict[str, Any] | None:
        """The newest frame's models as the overlay moves them, sent with every frame
        (:mod:`tablesight.webui.stream`): ``generation``, ``frame``, ``t``, ``arrived_ms`` (when the
        frame reached :meth:`process`, wall clock, ms) and ``models``, each ``[id, x, y,
        heading, z, track]``. ``None`` before the first frame of a game."""
        return self._poses

    def wait_for_news(self, version: int, frame: tuple[int, int] | None, timeout: float) -> int:
        """Like :meth:`wait_for_change`, and also until the newest poses are not those of
        ``frame`` (``(generation, frame)``); never waits for the game's lock."""

        def news() -> bool:
            poses = self._poses
            # no poses yet (a game just started over) is no news, whatever was sent before
            fresh = poses is not None and (poses["generation"], poses["frame"]) != frame
            return self.version != version or fresh or self.closing

        with self._news:
            self._news.wait_for(news, timeout)
        return self.version

    def mapping(self) -> dict[str, Any] | None:
        """How table inches (z = 0) map to this frame's pixels, for views to draw with:
        a pinhole camera with OpenCV's distortion, or a plane-to-plane homography."""
        pose = self.pose
        if pose is None or self.frame is None:
            return None
        return pose.for_views(self.frame.size)

    def events_since(self, first_id: int) -> list[Event]:
        with self.lock:
            return self.session.events[first_id:]

    def wait_for_change(self, version: int, timeout: float) -> int:
        """Wait until the game's ``version`` is no longer ``version`` (or the game is
        closing), at most ``timeout`` seconds; returns the version then."""
        with self.changed:
            self.changed.wait_for(lambda: self.version != version or self.closing, timeout)
            return self.version

    def neighbours(self, model_id: str) -> dict[str, Any]:
        """A model and those near it (:func:`tablesight.rules.view.neighbours`); ``KeyError`` when
        no model has that id."""
        with self.lock:
            return neighbours(self.session, model_id)

    def measure(
        self, a: str, b: str | None = None, point: tuple[float, float] | None = None
    ) -> dict[str, Any]:
        """Edge to edge from model ``a`` to model ``b`` or a table ``point``
        (:func:`tablesight.rules.view.measure`); ``KeyError`` naming a model that is not there."""
        with self.lock:
            return measure(self.session, a, b, point)

    def jpeg(self, quality: int = 80) -> tuple[int, bytes] | None:
        """The newest frame as JPEG, with its number: the camera's own JPEG when it sent
        one (no decoding, no encoding), else encoded once, whoever asks."""
        with self.lock:
            frame = self.frame
            if frame is None:
                return None
            key = (self.generation, frame.index)
            if self._jpeg is not None and self._jpeg[0] == key:
                return frame.index, self._jpeg[1]
        data = frame.encoded(quality)
        if data is None:
            return None
        with self.lock:
            self._jpeg = (key, data)
        return frame.index, data


def _poses(generation: int, frame: Frame, arrived: float, seen: Observation) -> dict[str, Any]:
    """A frame's light message (:meth:`Game.poses`): a few dozen bytes a model."""
    return poses_message(
        generation,
        frame.index,
        frame.t,
        round(arrived * 1000.0, 1),
        (located(m.id, m.pose.x, m.pose.y, m.pose.heading, m.pose.z, m.track) for m in seen.models),
    )
