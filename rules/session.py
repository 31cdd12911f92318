"""A game in progress: turns, the movement phase, declarations, and the events they cause.

The session is the one object the live pipeline, the replay and the web UI share. It
knows every model's profile (from the roster) and where it stands; starting a movement
phase snapshots every pose, and each finished move is judged from that snapshot (so a
model moved twice is judged on its whole displacement). Declarations (action, target,
roll) may come before or after the move; a change re-judges it. A violation that goes
away (the player moves the model back) is reported ``resolved``, not forgotten.

Pure Python: the camera side calls ``moved``, ``hidden`` and ``camera_*``; it never
reaches in.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Literal

from rules.geometry import Pose
from rules.referee import referee_for
from rules.ruleset import Ruleset
from rules.scene import Model, Scene, Table, Terrain
from rules.verdict import Finding

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
    "camera_bumped",
]


@dataclass(frozen=True)
class Event:
    """Something the referee tells the table, with the numbers behind it."""

    t: float
    frame: int
    kind: EventKind
    message: str
    rule: str | None = None
    model: str | None = None
    other: str | None = None
    measured: float | None = None
    limit: float | None = None
    #: How far ``measured`` may be off (close calls), in inches.
    uncertainty: float | None = None

    def to_dict(self) -> dict[str, object]:
        out = dataclasses.asdict(self)
        for key in ("measured", "limit", "uncertainty", "t"):
            if out[key] is not None:
                out[key] = round(out[key], 4)
        return out


@dataclass
class Declaration:
    action: str = "move"
    target: str | None = None
    roll: int | None = None


@dataclass
class Session:
    """The state of one game, and the events each change brings."""

    ruleset: Ruleset
    table: Table
    models: dict[str, Model]
    terrain: tuple[Terrain, ...] = ()
    tolerance_in: float = 0.05
    turn: int = 1
    side: str | None = None
    in_phase: bool = False
    poses: dict[str, Pose] = field(default_factory=dict)
    #: How far each model's pose may be off, in inches (the camera's uncertainty).
    sigmas: dict[str, float] = field(default_factory=dict)
    phase_sigmas: dict[str, float] = field(default_factory=dict)
    phase_start: dict[str, Pose] = field(default_factory=dict)
    declarations: dict[str, Declaration] = field(default_factory=dict)
    open_findings: dict[str, list[Finding]] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)

    # -- control --------------------------------------------------------------------------

    def start_phase(
        self, t: float, frame: int, turn: int | None = None, side: str | None = None
    ) -> list[Event]:
        """Start a movement phase: every pose seen so far is where moves are judged from."""
        self.turn = turn if turn is not None else self.turn
        self.side = side
        self.in_phase = True
        self.phase_start = dict(self.poses)
        self.phase_sigmas = dict(self.sigmas)
        self.declarations = {}
        self.open_findings = {}
        who = f", {side} moving" if side else ""
        return self._emit(Event(t, frame, "phase_started", f"turn {self.turn}: movement{who}"))

    def end_phase(self, t: float, frame: int) -> list[Event]:
        self.in_phase = False
        return self._emit(Event(t, frame, "phase_ended", f"turn {self.turn}: movement ended"))

    def declare(
        self,
        t: float,
        frame: int,
        model_id: str,
        action: str | None = None,
        target: str | None = None,
        roll: int | None = None,
    ) -> list[Event]:
        """Record a model's declaration; if it has already moved, judge it again."""
        if model_id not in self.models:
            known = ", ".join(sorted(self.models))
            raise ValueError(f"unknown model {model_id!r}; the roster has: {known}")
        d = self.declarations.setdefault(model_id, Declaration())
        d.action = action or d.action
        d.target = target if target is not None else d.target
        d.roll = roll if roll is not None else d.roll
        if self.in_phase and self._has_moved(model_id):
            return self._judge(t, frame, model_id)
        return []

    # -- what the camera side reports ------------------------------------------------------

    def seen(self, model_id: str, pose: Pose, sigma_in: float = 0.0) -> None:
        """Where a model stands now (before any phase, or while it does not move)."""
        self.poses[model_id] = pose
        self.sigmas[model_id] = sigma_in
        if self.in_phase:
            self.phase_start.setdefault(model_id, pose)
            self.phase_sigmas.setdefault(model_id, sigma_in)

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

    def hidden(self, t: float, frame: int, model_id: str) -> list[Event]:
        return self._emit(Event(t, frame, "model_hidden", f"{model_id} is hidden", model=model_id))

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

    def camera_lost(self, t: float, frame: int, status: str) -> list[Event]:
        """The camera stopped delivering frames; poses are kept until it is back."""
        return self._emit(Event(t, frame, "camera_lost", status))

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
        return Scene(self.table, tuple(models), self.terrain, self.tolerance_in)

    def _judge(self, t: float, frame: int, model_id: str) -> list[Event]:
        verdict = referee_for(self.scene(), self.ruleset).judge_model(model_id)
        now = list(verdict.violations) + list(verdict.advisories)
        before = self.open_findings.get(model_id, [])
        events: list[Event] = []
        for f in now:
            if _key(f) not in {_key(b) for b in before}:
                kind: EventKind = (
                    "violation"
                    if f in verdict.violations
                    else ("close_call" if f.rule == "close_call" else "advisory")
                )
                events.append(
                    Event(
                        t,
                        frame,
                        kind,
                        f.message,
                        f.rule,
                        f.model,
                        f.other,
                        f.measured,
                        f.limit,
                        f.uncertainty,
                    )
                )
        for b in before:
            if _key(b) not in {_key(f) for f in now}:
                events.append(
                    Event(
                        t,
                        frame,
                        "resolved",
                        f"no longer: {b.message}",
                        b.rule,
                        b.model,
                        b.other,
                        b.measured,
                        b.limit,
                    )
                )
        self.open_findings[model_id] = now
        return self._emit(*events)

    def _emit(self, *events: Event) -> list[Event]:
        self.events.extend(events)
        return list(events)


def _key(f: Finding) -> tuple[str, str, str | None]:
    """What makes a finding the same one again: its rule, model and other model."""
    return (f.rule, f.model, f.other)
