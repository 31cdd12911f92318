"""A game in progress: turns, the movement phase, declarations, and the events they cause.

The session is the one object the live pipeline, the replay and the web UI share. It
knows every model's profile (from the roster) and where it stands; starting a movement
phase snapshots every pose, and each finished move is judged from that snapshot (so a
model moved twice is judged on its whole displacement). Declarations (action, target,
roll) may come before or after the move; a change re-judges it. A violation that goes
away (the player moves the model back) is reported ``resolved``, not forgotten.

A finding belongs either to a move or to a unit (``tablesight.rules.referee.judge_move_and_unit``):

* a move's findings (``open_findings``) are about where that move ended and what it
  caused. They are judged again when the model itself moves again or its declaration
  changes, and only then: another model's later move does not undo them (see
  ``WHEN_OTHERS_MOVE``, rule by rule);
* a unit's findings (``unit_findings``: coherency) are about how the unit stands. A unit
  moves model by model, so they are judged again on every move of any of its models, and
  a model flagged out of coherency is ``resolved`` once its mates have joined it.

A flag nobody accepted or dismissed outlives its phase: a new phase starts judging afresh,
but keeps listing the earlier flags still undecided (``earlier_flags``), as they were
when their phase ended, until the players decide them.

Pure Python: the camera side hands over one observation per frame (``observe``); it
never reaches in. Each observation becomes the journaled inputs below (``seen``,
``moved``, ``hidden``, ``lost``, ``camera_bumped``, ``pose_checked``, ``place_terrain``),
so a journal replays without the camera.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, ParamSpec, TypeVar

from shapely.geometry import Polygon

from tablesight.rules.declaration import check_declaration
from tablesight.rules.geometry import Pose
from tablesight.rules.observation import Observed
from tablesight.rules.referee import judge_move_and_unit
from tablesight.rules.ruleset import Ruleset
from tablesight.rules.scene import Model, Scene, Table, Terrain
from tablesight.rules.squares import Grid
from tablesight.rules.verdict import Finding, MoveReport, RuleName, Verdict

#: What players may decide about a flag: let it stand (accept) or set it aside (dismiss).
DECISIONS = ("accept", "dismiss")

#: Seconds a table pose must stay untrusted before judging is said to be held. Nothing is
#: placed from an untrusted pose at once, but one or two such frames are not news: a hand
#: reaching over an anchor deforms its corners for a moment (as
#: ``tablesight.vision.tracking.HIDDEN_S``
#: waits before a dropped-out marker is reported hidden).
POSE_HOLD_S = 1.0

EventKind = Literal[
    "phase_started",
    "phase_ended",
    "model_moved",
    "violation",
    "advisory",
    "close_call",
    "resolved",
    "model_hidden",
    "model_lost",
    "camera_lost",
    "camera_back",
    "camera_bumped",
    "recording_stopped",
    "judging_held",
    "judging_resumed",
]


@dataclass(frozen=True)
class Event:
    """Something the referee tells the table, with the numbers behind it."""

    t: float
    frame: int
    kind: EventKind
    message: str
    rule: RuleName | None = None
    model: str | None = None
    other: str | None = None
    measured: float | None = None
    limit: float | None = None
    #: How far ``measured`` may be off (close calls), in inches.
    uncertainty: float | None = None
    #: Its place in the session's list of events (set when the session emits it).
    id: int = -1

    def to_dict(self) -> dict[str, object]:
        out = dataclasses.asdict(self)
        for key in ("measured", "limit", "uncertainty", "t"):
            if out[key] is not None:
                out[key] = round(out[key], 4)
        return out


P = ParamSpec("P")
R = TypeVar("R")

#: A journal: the inputs a session took, in order, each its name and its arguments as
#: plain JSON values (``Session.replay`` takes one; a match file keeps one).
Journal = list[tuple[str, dict[str, Any]]]


def _journaled(method: Callable[P, R]) -> Callable[P, R]:
    """Add each input, once it has been taken, to the journal the session hands on
    (``Session.take_journal``).

    Everything a session knows comes through these inputs, so replaying the journal
    (``Session.replay``) rebuilds it exactly, and replaying it with one declaration
    changed re-judges the match.
    """
    signature = inspect.signature(method)

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        out = method(*args, **kwargs)
        session = args[0]
        assert isinstance(session, Session)
        bound = signature.bind(*args, **kwargs)
        plain = {
            k: [v.x, v.y, v.heading, v.z] if isinstance(v, Pose) else v
            for k, v in list(bound.arguments.items())[1:]
        }
        session._journal.append((method.__name__, plain))
        return out

    return wrapper


#: The inputs a journal may hold.
INPUTS = (
    "place_terrain",
    "start_phase",
    "end_phase",
    "set_side",
    "declare",
    "decide",
    "seen",
    "moved",
    "hidden",
    "lost",
    "camera_bumped",
    "camera_lost",
    "camera_back",
    "pose_checked",
)


#: The kinds of event that flag something players may accept or dismiss.
FLAG_KINDS = ("violation", "advisory", "close_call")

Rejudge = Literal["rejudged", "kept"]

#: What becomes of a finding when another model it names (or a unit-mate) moves, rule by
#: rule, and why (quoting the rules texts). "rejudged": the finding says how the table
#: stands, so it is judged again and ``resolved`` when it no longer holds. "kept": the
#: finding is about where a move ended or what it caused, settled when it ended; it is
#: judged again only when its own model moves again or its declaration changes. Every rule
#: has its entry (tests/rules/test_findings_over_time.py holds new rules to it).
WHEN_OTHERS_MOVE: dict[RuleName, tuple[Rejudge, str]] = {
    "coherency": (
        "rejudged",
        "a unit moves model by model, and coherency is the unit's: 'players must ensure "
        "that their models are within coherency' once the unit has moved, so the first "
        "model out is back in when its mates join it (judged on every unit-mate's move)",
    ),
    "close_call": (
        "rejudged",
        "as the rule it is too close to call: a coherency close call goes with its unit, "
        "any other with its move",
    ),
    "control_zone": (
        "kept",
        "'A model may not move within 1\" of an enemy' (Cosmic Combat: 'of any unit'): the "
        "move broke it when it ended there; the enemy leaving in its own activation does "
        "not make that move legal",
    ),
    "base_overlap": (
        "kept",
        "'no models can end their movement with overlapping bases': where the move ended; "
        "the other model stepping aside afterwards does not change it",
    ),
    "ramming": (
        "kept",
        "'If for any reason a friendly model moves into the control zone of another "
        "friendly model, both must make a Ramming Maneuver roll': the collision happened",
    ),
    "charge": (
        "kept",
        "the target is picked where the models stood, and 'If after completing the move "
        "the charging model is within 1\" of the target' it succeeded: settled when the "
        "move completed, whatever the target does next",
    ),
    "retreat": (
        "kept",
        "'A retreating model must end its retreat move more than 1\" away from all enemy "
        "models': where it ended",
    ),
    "action": ("kept", "the declaration's target, chosen when it was declared"),
    "engaged": (
        "kept",
        "its own status, or where it and the enemies stood when it started: a Retreat 'is "
        "used when a model is within 1\" of an enemy model and wishes to move away'",
    ),
    "free_attack": ("kept", "the enemies it left or passed as it moved: that move's consequence"),
    # the rules below never name another model: nothing another model does changes them
    "movement": ("kept", "its own route, measured round the models where they stood"),
    "blocked": ("kept", "its own route, measured round the models where they stood"),
    "off_table": ("kept", "its own base and the table edge"),
    "terrain": ("kept", "its own base and the terrain"),
    "dangerous_terrain": ("kept", "its own route and the terrain"),
    "risky_roll": ("kept", "its own declaration"),
    "handling_test": ("kept", "its own base and the terrain it ended on"),
    "diagonal_jet": ("kept", "its own route"),
    "slagged_jet": ("kept", "its own status"),
}


@dataclass
class Declaration:
    action: str = "move"
    target: str | None = None
    roll: int | None = None


class SnapshotError(ValueError):
    """A snapshot (a match file's session state) this version cannot restore: the keys it
    lacks or does not know, named in one line."""


@dataclass(frozen=True)
class _Kept:
    """How one field of :class:`SessionState` is copied, and kept in a snapshot."""

    #: A copy to read while the session goes on changing.
    copy: Callable[[Any], Any]
    #: To plain JSON values, and back (given the events up to the snapshot); ``None``
    #: when a snapshot does not keep it (a restored session starts it afresh).
    dump: Callable[[Any], object] | None
    load: Callable[[Any, Sequence[Event]], Any] | None


def _same(value: Any) -> Any:
    return value


def _keep(
    copy: Callable[[Any], Any] = _same,
    dump: Callable[[Any], object] | None = _same,
    load: Callable[[Any], Any] | None = _same,
) -> dict[str, _Kept]:
    """The metadata of a field of :class:`SessionState`: how it is copied and kept in a
    snapshot (``dump=None``: not kept)."""

    def loaded(value: Any, _events: Sequence[Event]) -> Any:
        assert load is not None
        return load(value)

    return {"kept": _Kept(copy, dump, loaded if load is not None else None)}


#: Kept in snapshots as it is (a number, a text or ``None``).
_AS_IS = _keep()


def _poses_out(poses: dict[str, Pose]) -> dict[str, list[float]]:
    return {k: [p.x, p.y, p.heading, p.z] for k, p in poses.items()}


def _poses_in(poses: dict[str, list[float]]) -> dict[str, Pose]:
    return {k: Pose(p[0], p[1], p[2], p[3]) for k, p in poses.items()}


def _findings_out(findings: dict[str, list[Finding]]) -> dict[str, list[dict[str, Any]]]:
    return {k: [dataclasses.asdict(f) for f in v] for k, v in findings.items()}


def _findings_in(findings: dict[str, list[dict[str, Any]]]) -> dict[str, list[Finding]]:
    return {k: [Finding(**f) for f in v] for k, v in findings.items()}


def _terrain_piece(
    terrain_id: str, polygon: list[list[float]], height_in: float, keywords: Iterable[str]
) -> Terrain:
    return Terrain(terrain_id, Polygon(polygon), height_in, frozenset(keywords))


def _terrain_out(terrain: tuple[Terrain, ...]) -> list[list[object]]:
    return [
        [t.id, [list(p) for p in t.polygon.exterior.coords[:-1]], t.height_in, sorted(t.keywords)]
        for t in terrain
    ]


def _terrain_in(pieces: list[list[Any]]) -> tuple[Terrain, ...]:
    placed: dict[str, Terrain] = {}
    for terrain_id, polygon, height_in, keywords in pieces:
        placed.pop(terrain_id, None)  # placed again: where it stands last
        placed[terrain_id] = _terrain_piece(terrain_id, polygon, height_in, keywords)
    return tuple(placed.values())


def _copied(d: dict[Any, Any]) -> dict[Any, Any]:
    return dict(d)


#: How the state's dicts of poses, of plain values and of findings are copied and kept.
_POSES = _keep(copy=_copied, dump=_poses_out, load=_poses_in)
_PLAIN = _keep(copy=_copied, dump=_copied, load=_copied)
_FINDINGS = _keep(
    copy=lambda d: {k: list(v) for k, v in d.items()}, dump=_findings_out, load=_findings_in
)


@dataclass(kw_only=True)
class SessionState:
    """What changes as a game goes on, each field declared once with how it is copied and
    kept in a snapshot (``Session.copy``, ``Session.snapshot`` and ``Session.restore`` all
    go over these fields; a field without its ``_keep`` metadata is refused at import)."""

    turn: int = field(default=1, metadata=_AS_IS)
    side: str | None = field(default=None, metadata=_AS_IS)
    in_phase: bool = field(default=False, metadata=_AS_IS)
    poses: dict[str, Pose] = field(default_factory=dict, metadata=_POSES)
    phase_start: dict[str, Pose] = field(default_factory=dict, metadata=_POSES)
    #: How far each model's pose may be off, in inches (the camera's uncertainty).
    sigmas: dict[str, float] = field(default_factory=dict, metadata=_PLAIN)
    phase_sigmas: dict[str, float] = field(default_factory=dict, metadata=_PLAIN)
    declarations: dict[str, Declaration] = field(
        default_factory=dict,
        metadata=_keep(
            copy=lambda d: {k: dataclasses.replace(v) for k, v in d.items()},
            dump=lambda d: {k: dataclasses.asdict(v) for k, v in d.items()},
            load=lambda d: {k: Declaration(**v) for k, v in d.items()},
        ),
    )
    #: The findings of each model's move this phase, as last judged (by the model's id).
    open_findings: dict[str, list[Finding]] = field(default_factory=dict, metadata=_FINDINGS)
    #: The unit checks' findings about each model, as its unit stands (by the model's id).
    unit_findings: dict[str, list[Finding]] = field(default_factory=dict, metadata=_FINDINGS)
    #: Flags of earlier phases nobody has decided yet, as they stood when their phase
    #: ended, by the id of the event that raised them.
    earlier_flags: dict[int, Finding] = field(
        default_factory=dict,
        metadata=_keep(
            copy=_copied,
            dump=lambda d: [[k, dataclasses.asdict(f)] for k, f in d.items()],
            load=lambda pairs: {int(k): Finding(**f) for k, f in pairs},
        ),
    )
    #: The event that raised each finding still open, by the finding's key.
    flag_events: dict[tuple[str, str, str | None, bool], int] = field(
        default_factory=dict,
        metadata=_keep(
            copy=_copied,
            dump=lambda d: [[*k, v] for k, v in d.items()],
            # (rows of four are from before advisories were told apart: their findings
            # load as violations too)
            load=lambda rows: {(*r[:3], bool(r[3]) if len(r) == 5 else False): r[-1] for r in rows},
        ),
    )
    #: What the players decided about a flag, by its event id: "accept" or "dismiss".
    decisions: dict[int, str] = field(
        default_factory=dict,
        metadata=_keep(
            copy=_copied,
            dump=lambda d: {str(k): v for k, v in d.items()},
            load=lambda d: {int(k): v for k, v in d.items()},
        ),
    )
    #: The terrain pieces on the table (placed from the setup, and as the camera sees them).
    terrain: tuple[Terrain, ...] = field(
        default=(), metadata=_keep(dump=_terrain_out, load=_terrain_in)
    )
    #: Why the camera side does not trust the table pose, while it does not (moves are
    #: not judged meanwhile); empty when it does.
    pose_problem: str = field(default="", metadata=_AS_IS)
    #: Every event so far, by id; a copy shares the list (it is only ever appended to), a
    #: snapshot keeps how many there were (the match file keeps the events themselves).
    events: list[Event] = field(
        default_factory=list,
        metadata={"kept": _Kept(_same, len, lambda n, events: list(events[:n]))},
    )
    #: The latest measurement of each model's move this phase. Not kept in snapshots
    #: (a snapshot keeps the findings, not the allowances and routes views draw).
    reports: dict[str, MoveReport] = field(
        default_factory=dict, metadata=_keep(copy=_copied, dump=None, load=None)
    )
    #: Since when the table pose has not been trusted, until judging is held. Not kept
    #: in snapshots: it is timed on frames, and a snapshot goes on with journal inputs.
    pose_doubted_since: float | None = field(
        default=None, compare=False, repr=False, metadata=_keep(dump=None, load=None)
    )


def _fresh(name: str) -> Any:
    """A field of the state as a new session has it."""
    f = SessionState.__dataclass_fields__[name]
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return f.default


def _kept(f: dataclasses.Field[Any]) -> _Kept:
    kept = f.metadata.get("kept")
    if not isinstance(kept, _Kept):
        raise TypeError(
            f"SessionState.{f.name}: give it metadata=_keep(...) (how it is copied and kept)"
        )
    return kept


#: Each field of the state with how it is copied and kept (checked at import).
STATE_FIELDS: tuple[tuple[str, _Kept], ...] = tuple(
    (f.name, _kept(f)) for f in dataclasses.fields(SessionState)
)
#: The keys of a snapshot (``Session.snapshot``), in the order written.
SNAPSHOT_KEYS: tuple[str, ...] = tuple(name for name, kept in STATE_FIELDS if kept.dump)

#: Keys snapshots gained after match files were first written, oldest first, each with
#: what a snapshot written before it stood for. Match files of schema version 1 (written
#: 2026-11-21 to 2026-11-24) hold snapshots of each of these ages; every file of version 2
#: on has every key. Only a whole age's keys are filled in (``upgrade_snapshot``).
OLDER_SNAPSHOTS: tuple[dict[str, object], ...] = (
    {"terrain": []},  # before terrain seen by the camera was placed: none
    {"unit_findings": {}, "earlier_flags": []},  # before units and earlier flags were kept
    {"pose_problem": ""},  # before the table pose could be untrusted: trusted
)


def upgrade_snapshot(state: Mapping[str, Any]) -> dict[str, Any]:
    """A snapshot of an older match file as this version writes it: the keys it lacks for
    its age (``OLDER_SNAPSHOTS``, newest first) filled with what they stood for then. Any
    other key missing is left missing (``Session.restore`` refuses it).

    >>> sorted(upgrade_snapshot({"turn": 1, "unit_findings": {}}))
    ['pose_problem', 'turn', 'unit_findings']
    """
    out = dict(state)
    for added in reversed(OLDER_SNAPSHOTS):
        if any(key in out for key in added):
            break
        out.update(added)
    return out


def check_snapshot(state: Mapping[str, Any]) -> None:
    """A ``SnapshotError`` naming the keys when ``state`` does not have exactly the keys of
    a snapshot (``SNAPSHOT_KEYS``)."""
    missing = [key for key in SNAPSHOT_KEYS if key not in state]
    unknown = sorted(str(key) for key in state if key not in SNAPSHOT_KEYS)
    problems = []
    if missing:
        problems.append("missing " + ", ".join(repr(k) for k in missing))
    if unknown:
        problems.append("unknown key " + ", ".join(repr(k) for k in unknown))
    if problems:
        raise SnapshotError("snapshot: " + "; ".join(problems))


@dataclass
class Session(SessionState):
    """The state of one game (a :class:`SessionState`, what changes as it goes on), what it
    is played with, and the events each change brings."""

    ruleset: Ruleset
    table: Table
    models: dict[str, Model]
    tolerance_in: float = 0.05
    #: Where the squares lie, for games played on a square grid.
    grid: Grid | None = None
    #: The inputs taken and not yet handed on (``take_journal``).
    _journal: Journal = field(default_factory=list, init=False, repr=False, compare=False)

    # -- control --------------------------------------------------------------------------

    @_journaled
    def start_phase(
        self, t: float, frame: int, turn: int | None = None, side: str | None = None
    ) -> list[Event]:
        """Start a movement phase: every pose seen so far is where moves are judged from.

        The flags listed that nobody has decided stay listed, as they are (their moves
        are not judged again from the new phase's start); decided ones leave the list
        (the record keeps them and the decision)."""
        self.turn = turn if turn is not None else self.turn
        self.side = side
        self.in_phase = True
        self.phase_start = dict(self.poses)
        self.phase_sigmas = dict(self.sigmas)
        self.earlier_flags = {
            event.id: f for event, f in self.flags() if event.id not in self.decisions
        }
        self.declarations = {}
        self.open_findings = {}
        self.unit_findings = {}
        self.flag_events = {}
        self.reports = {}
        who = f", {side} moving" if side else ""
        return self._emit(Event(t, frame, "phase_started", f"turn {self.turn}: movement{who}"))

    @_journaled
    def end_phase(self, t: float, frame: int) -> list[Event]:
        self.in_phase = False
        return self._emit(Event(t, frame, "phase_ended", f"turn {self.turn}: movement ended"))

    @_journaled
    def declare(
        self,
        t: float,
        frame: int,
        model_id: str,
        action: str | None = None,
        target: str | None = None,
        roll: int | None = None,
    ) -> list[Event]:
        """Record a model's declaration; if it has already moved, judge it again.

        A declaration the game cannot take is a ``DeclarationError`` naming the field.
        """
        self.check_declaration(model_id, action, target, roll)
        d = self.declarations.setdefault(model_id, Declaration())
        d.action = action or d.action
        d.target = target if target is not None else d.target
        d.roll = roll if roll is not None else d.roll
        if self.in_phase and self._has_moved(model_id):
            return self._judge(t, frame, model_id)
        return []

    def check_declaration(
        self,
        model_id: str,
        action: str | None = None,
        target: str | None = None,
        roll: int | None = None,
    ) -> None:
        """A ``DeclarationError`` naming the field when this game cannot take the declaration:
        an unknown model, action or target, or a roll off the action's die."""
        before = self.declarations.get(model_id)
        declared = before.action if before is not None else "move"
        check_declaration(self.ruleset, self.models, model_id, action, target, roll, declared)

    # -- what the camera side reports ------------------------------------------------------

    def observe(self, observation: Observed) -> list[Event]:
        """One frame's observation: the events it causes.

        In order: a camera bump, terrain placed or moved, every finished move, then each
        model's other news (hidden, lost, first seen). A frame without the table says
        nothing: a hand over the anchors is not news.
        """
        if not observation.table_seen:
            return []
        t, frame = observation.t, observation.frame
        events: list[Event] = []
        problem = observation.pose_problem
        if problem:  # a pose not trusted places nothing: judging waits for a sound one
            if self.pose_doubted_since is None:
                self.pose_doubted_since = t
            if not self.pose_problem and t - self.pose_doubted_since >= POSE_HOLD_S - 1e-9:
                events += self.pose_checked(t, frame, problem)
            return events
        self.pose_doubted_since = None
        if self.pose_problem:
            events += self.pose_checked(t, frame, "")
        if observation.camera_shift_in is not None:
            events += self.camera_bumped(
                t,
                frame,
                observation.bump_message,
                observation.camera_shift_in,
                observation.bump_limit_in,
            )
        for piece in observation.terrain:
            self.place_terrain(
                piece.id, [list(p) for p in piece.polygon], piece.height_in, list(piece.keywords)
            )
        for m in observation.models:
            if m.has("moved"):
                events += self.moved(t, frame, m.id, m.pose, m.sigma_in)
        for m in observation.models:
            if m.has("hidden"):
                events += self.hidden(t, frame, m.id)
            if m.has("lost"):
                events += self.lost(t, frame, m.id, m.unseen_s)
            if m.has("first_seen"):
                self.seen(m.id, m.pose, m.sigma_in)
        return events

    @_journaled
    def seen(self, model_id: str, pose: Pose, sigma_in: float = 0.0) -> None:
        """Where a model stands now (before any phase, or while it does not move)."""
        self.poses[model_id] = pose
        self.sigmas[model_id] = sigma_in
        if self.in_phase:
            self.phase_start.setdefault(model_id, pose)
            self.phase_sigmas.setdefault(model_id, sigma_in)

    @_journaled
    def moved(
        self, t: float, frame: int, model_id: str, pose: Pose, sigma_in: float = 0.0
    ) -> list[Event]:
        """A model settled at a new place: report and, in a movement phase, judge it."""
        before = self.poses.get(model_id)
        self.poses[model_id] = pose
        self.sigmas[model_id] = sigma_in
        events: list[Event] = []
        if before is not None:
            start = self.phase_start.get(model_id, before)
            straight = start.distance_to(pose)
            events += self._emit(
                Event(
                    t,
                    frame,
                    "model_moved",
                    f"{model_id} moved {straight:.2f} in from where the phase began",
                    model=model_id,
                    measured=straight,
                )
            )
        if self.in_phase:
            events += self._judge(t, frame, model_id)
        return events

    @_journaled
    def hidden(self, t: float, frame: int, model_id: str) -> list[Event]:
        return self._emit(Event(t, frame, "model_hidden", f"{model_id} is hidden", model=model_id))

    @_journaled
    def lost(self, t: float, frame: int, model_id: str, unseen_s: float) -> list[Event]:
        """A model unseen for long: kept where it was last seen, and said so."""
        where = self.poses.get(model_id)
        at = f" at ({where.x:.2f}, {where.y:.2f})" if where else ""
        return self._emit(
            Event(
                t,
                frame,
                "model_lost",
                f"{model_id} not seen for {unseen_s:.1f} s; kept where it was last seen{at}",
                model=model_id,
                measured=unseen_s,
            )
        )

    @_journaled
    def camera_bumped(
        self, t: float, frame: int, message: str, shift_in: float, limit_in: float
    ) -> list[Event]:
        """The camera moved; positions stay put in table inches."""
        return self._emit(
            Event(t, frame, "camera_bumped", message, measured=shift_in, limit=limit_in)
        )

    @_journaled
    def pose_checked(self, t: float, frame: int, problem: str) -> list[Event]:
        """Whether the table pose is trusted: while it is not (``problem`` says why),
        moves are not judged; the change either way is an event."""
        held, self.pose_problem = bool(self.pose_problem), problem
        if problem and not held:
            message = f"moves are not judged while the table pose is not trusted: {problem}"
            return self._emit(Event(t, frame, "judging_held", message))
        if not problem and held:
            message = "the table pose is trusted again: moves are judged"
            return self._emit(Event(t, frame, "judging_resumed", message))
        return []

    def recording_stopped(self, t: float, frame: int, reason: str) -> list[Event]:
        """The match file stopped before the game did (the disk filled up, say). Not an
        input: the file it describes has ended, so no journal holds it."""
        return self._emit(Event(t, frame, "recording_stopped", reason))

    @_journaled
    def camera_lost(self, t: float, frame: int, status: str) -> list[Event]:
        """The camera stopped delivering frames; poses are kept until it is back."""
        return self._emit(Event(t, frame, "camera_lost", status))

    @_journaled
    def camera_back(self, t: float, frame: int, status: str) -> list[Event]:
        """The camera delivers frames again after it was lost."""
        return self._emit(Event(t, frame, "camera_back", status))

    @_journaled
    def place_terrain(
        self,
        terrain_id: str,
        polygon: list[list[float]],
        height_in: float = 0.0,
        keywords: list[str] | None = None,
    ) -> None:
        """Where a terrain piece stands (first seen, or moved): its footprint in inches."""
        self._place(terrain_id, polygon, height_in, keywords or [])

    def _place(
        self, terrain_id: str, polygon: list[list[float]], height_in: float, keywords: list[str]
    ) -> None:
        piece = _terrain_piece(terrain_id, polygon, height_in, keywords)
        self.terrain = (*(t for t in self.terrain if t.id != terrain_id), piece)

    @_journaled
    def set_side(self, side: str | None) -> None:
        """The side with priority (the one moving)."""
        self.side = side

    def replay(self, inputs: Iterable[tuple[str, dict[str, Any]]]) -> list[Event]:
        """Take a journal's inputs again, in order; the events they cause."""
        first = len(self.events)
        for kind, args in inputs:
            if kind not in INPUTS:
                raise ValueError(f"journal: unknown input {kind!r}; expected one of {INPUTS}")
            if "pose" in args:
                args = {**args, "pose": Pose(*args["pose"])}
            getattr(self, kind)(**args)
        return self.events[first:]

    def take_journal(self) -> Journal:
        """The inputs taken since the last call, in order, as ``replay`` takes them; the
        caller hands them on (the game to its match file)."""
        taken, self._journal = self._journal, []
        return taken

    def copy(self) -> Session:
        """A copy to read while this session goes on changing (its events list is shared:
        it is only ever appended to). Its journal starts empty."""
        return dataclasses.replace(
            self, **{name: k.copy(getattr(self, name)) for name, k in STATE_FIELDS}
        )

    # -- saving and restoring -----------------------------------------------------------------

    def snapshot(self) -> dict[str, object]:
        """The session's state as plain JSON values (events are kept apart, by id)."""
        return {name: k.dump(getattr(self, name)) for name, k in STATE_FIELDS if k.dump}

    def restore(self, state: Mapping[str, Any], events: Sequence[Event]) -> None:
        """Back to a snapshot, with the events up to it (``len(events) == state["events"]``).

        A snapshot of an older match file is upgraded first (``upgrade_snapshot``); one
        that still lacks a key, or has one this version does not know, is a
        ``SnapshotError`` naming them. What a snapshot does not keep starts afresh."""
        state = upgrade_snapshot(state)
        check_snapshot(state)
        restored = {
            name: k.load(state[name], events) if k.load else _fresh(name)
            for name, k in STATE_FIELDS
        }
        for name, value in restored.items():
            setattr(self, name, value)

    # -- judging ----------------------------------------------------------------------------

    def _has_moved(self, model_id: str) -> bool:
        start, now = self.phase_start.get(model_id), self.poses.get(model_id)
        return start is not None and now is not None and start != now

    def scene(self) -> Scene:
        """The table as it stands: each model from its phase-start pose to its pose now."""
        models = []
        for mid, profile in self.models.items():
            now = self.poses.get(mid)
            if now is None:
                continue  # never seen: not on the table
            start = self.phase_start.get(mid, now)
            d = self.declarations.get(mid, Declaration())
            models.append(
                dataclasses.replace(
                    profile,
                    start=start,
                    end=None if start == now else now,
                    action=d.action,
                    target=d.target,
                    roll=d.roll,
                    # the larger of where it started and where it stands
                    sigma_in=max(self.sigmas.get(mid, 0.0), self.phase_sigmas.get(mid, 0.0)),
                )
            )
        return Scene(self.table, tuple(models), self.terrain, self.tolerance_in, self.grid)

    @_journaled
    def decide(self, event_id: int, decision: str) -> None:
        """The players' decision on a flag; it stays in the record, marked."""
        if decision not in DECISIONS:
            raise ValueError(f"decision: expected one of {', '.join(DECISIONS)}, got {decision!r}")
        if not 0 <= event_id < len(self.events) or self.events[event_id].kind not in FLAG_KINDS:
            raise ValueError(f"flag: no violation, advisory or close call has id {event_id}")
        self.decisions[event_id] = decision

    def flags(self) -> list[tuple[Event, Finding]]:
        """The flags listed now, each with the event that first raised it, in the order
        they were raised: the findings open in this phase (with their numbers as they
        stand), and those of earlier phases nobody has decided yet (as they were)."""
        out = [(self.events[k], f) for k, f in self.earlier_flags.items()]
        for findings in (*self.open_findings.values(), *self.unit_findings.values()):
            for f in findings:
                out.append((self.events[self.flag_events[_key(f)]], f))
        return sorted(out, key=lambda pair: pair[0].id)

    def _judge(self, t: float, frame: int, model_id: str) -> list[Event]:
        """Judge a model's move, and its unit as it now stands: a flag for each finding
        not open before, ``resolved`` for each open one no longer found. The unit's
        findings may be about any of its models (the first of a unit to move is out of
        coherency until its mates join it)."""
        scene = self.scene()
        move, unit = judge_move_and_unit(scene, self.ruleset, model_id)
        if model_id in move.moves:
            self.reports[model_id] = move.moves[model_id]
        mover = scene.model(model_id)
        mates = [m.id for m in scene.models if (m.side, m.unit) == (mover.side, mover.unit)]
        # (findings open before, found now, the verdict they come from)
        changes = [(self.open_findings.get(model_id, []), _found(move), move)]
        self.open_findings[model_id] = changes[0][1]
        for mate in mates:
            found = [f for f in _found(unit) if f.model == mate]
            changes.append((self.unit_findings.pop(mate, []), found, unit))
            if found:
                self.unit_findings[mate] = found
        events = [
            _raised(t, frame, f, verdict)
            for before, found, verdict in changes
            for f in found
            if _key(f) not in {_key(b) for b in before}
        ]
        events += [
            _resolved(t, frame, b)
            for before, found, _ in changes
            for b in before
            if _key(b) not in {_key(f) for f in found}
        ]
        emitted = self._emit(*events)
        for e in emitted:
            key = (e.rule or "", e.model or "", e.other, e.kind == "advisory")
            if e.kind == "resolved":
                self.flag_events.pop(key, None)
            elif e.kind in FLAG_KINDS:
                self.flag_events[key] = e.id
        return emitted

    def _emit(self, *events: Event) -> list[Event]:
        numbered = [dataclasses.replace(e, id=len(self.events) + k) for k, e in enumerate(events)]
        self.events.extend(numbered)
        return numbered


def _key(f: Finding) -> tuple[str, str, str | None, bool]:
    """What makes a finding the same one again: its rule, model and other model, and
    whether it is told as an advisory (a charge may be both illegal and failed)."""
    return (f.rule, f.model, f.other, f.advisory)


def _found(verdict: Verdict) -> list[Finding]:
    return list(verdict.violations) + list(verdict.advisories)


def _raised(t: float, frame: int, f: Finding, verdict: Verdict) -> Event:
    """The flag a new finding raises: a violation, a close call or an advisory."""
    kind: EventKind = (
        "violation"
        if f in verdict.violations
        else ("close_call" if f.rule == "close_call" else "advisory")
    )
    return Event(
        t, frame, kind, f.message, f.rule, f.model, f.other, f.measured, f.limit, f.uncertainty
    )


def _resolved(t: float, frame: int, f: Finding) -> Event:
    """The finding ``f``, open until now, no longer found."""
    return Event(
        t,
        frame,
        "resolved",
        f"no longer: {f.message}",
        f.rule,
        f.model,
        f.other,
        f.measured,
        f.limit,
    )
