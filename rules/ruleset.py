"""Rulesets as data: one TOML file per game under ``rules/games/``, validated on load.

The generic checks speak of roles (a charge, the engaged status, a ramming's roll); each
game's file names them in its own words. What data cannot say is code beside the file
(:mod:`tablesight.rules.games`). A game may also be loaded from a file outside the
package (:func:`load_ruleset_file`): it recombines these rules, and no code is taken from
beside it.

>>> load_ruleset("necromunda").zone.range_in
1.0
>>> available()
['battlestations', 'cosmic-combat', 'cosmic-combat-revised', 'necromunda', 'trench-crusade']
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tablesight.rules.errors import InputError, field_error, load_toml
from tablesight.rules.verdict import RuleName

GAMES_DIR = Path(__file__).with_name("games")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class MovementRules(_Strict):
    """How models move: who may be passed through, what terrain costs."""

    pass_through: Literal["nobody", "friendly"] = "nobody"
    #: Cost of one inch of difficult terrain, by locomotion keyword; ``default`` for the rest.
    difficult_cost: dict[str, float] = Field(default_factory=lambda: {"default": 2.0})
    #: Dangerous terrain costs as difficult terrain does (crossing it still warns).
    dangerous_as_difficult: bool = True
    #: Gaps whose width rounded down to the inch is at most this are crossed at no extra
    #: cost; wider ones cost as difficult terrain. ``None``: gaps cost as difficult terrain.
    gap_ignore_in: float | None = None
    #: Climbs whose height rounded down to the inch is at most this are free; higher ones
    #: cost as difficult terrain (per inch climbed). ``None``: every inch climbed counts.
    climb_ignore_in: float | None = None
    #: A climb that costs anything also covers the horizontal step onto (or off) the top:
    #: the travel while the base straddles the edge, up to the base's depth.
    climb_includes_step: bool = False
    #: A model may not end on a climbable piece whose top is narrower than this fraction
    #: of its base's narrowest width (it cannot rest there). ``None``: any top holds it.
    rest_min_top_fraction: float | None = Field(default=None, gt=0)
    may_leave_table: bool = False
    #: Movers with any of these keywords that end a move on difficult or dangerous terrain
    #: must pass a Handling test (reported as an advisory).
    handling_test_keywords: list[str] = []
    #: Movers with any of these keywords whose difficult terrain costs nothing extra fly
    #: over dangerous terrain: crossing it asks for no test.
    dangerous_exempt_keywords: list[str] = []

    def difficult_factor(self, keywords: frozenset[str]) -> float:
        """Inches of allowance one inch of difficult terrain costs a mover with ``keywords``
        (the first of ``difficult_cost``'s keywords, in the file's order, that it has)."""
        for keyword, cost in self.difficult_cost.items():
            if keyword != "default" and keyword in keywords:
                return cost
        return self.difficult_cost.get("default", 2.0)


class ZoneRules(_Strict):
    """The zone around models that a mover may not enter (control zone, the 1" rule)."""

    range_in: float = Field(1.0, ge=0)
    applies_to: Literal["enemy", "any"] = "enemy"
    #: What entering a friendly model's zone means where ``applies_to = "any"``.
    friendly_entry: Literal["violation", "ramming"] = "violation"
    #: Models with any of these keywords project no zone.
    sources_exclude_keywords: list[str] = []
    #: A model with ALL these statuses projects no zone.
    exempt_when_status_all: list[str] = []
    #: Movers with any of these keywords ignore zones.
    movers_exempt_keywords: list[str] = []
    #: A model that started its move within this distance (edge to edge, give or take the
    #: tolerance) of an enemy is engaged, as if its status said so. ``None``: only the
    #: ``engaged`` status makes a model engaged.
    engaged_within_in: float | None = Field(None, ge=0)


class CoherencyRules(_Strict):
    """How close the models of a unit must stay."""

    range_in: float = Field(gt=0)
    vertical_in: float = Field(gt=0)
    #: The unit must form one group linked by in-range pairs (not just pairs).
    connected: bool = False
    severity: Literal["violation", "advisory"] = "violation"


class ActionRules(_Strict):
    """One action a model may declare for its move."""

    factor: float = Field(1.0, ge=0)
    #: Add the declared die roll to the allowance (a charge bonus).
    add_roll: bool = False
    roll_sides: int = Field(6, ge=2)
    max_in: float | None = Field(None, gt=0)
    #: ``enemy``: a target is required and must be an enemy; ``optional``: it may be given.
    target: Literal["none", "enemy", "optional"] = "none"
    #: The target must be at most this far (edge to edge) when the action is declared.
    target_range_in: float | None = Field(None, gt=0)
    target_forbidden_keywords: list[str] = []
    requires_keywords: list[str] = []
    forbidden_keywords: list[str] = []
    forbidden_status: list[str] = []
    #: Which zones the action may enter: ``target_if_contact``: the target's, if the move
    #: ends in base contact with it; ``all_if_contact``: every enemy's, if the move ends in
    #: base contact with an enemy; ``all``: every zone.
    zone_exempt: Literal["none", "target_if_contact", "all_if_contact", "all"] = "none"
    #: After a charge that made no contact the mover must stand at least this far from enemies.
    stop_short_in: float | None = Field(None, ge=0)
    #: A charge that failed (ended beyond the zone's range of its target) must still have
    #: moved its whole allowance, unless it stopped ``stop_short_in`` from an enemy.
    failed_moves_full: bool = False
    #: The move must end more than this far from every enemy.
    end_clear_of_enemies_in: float | None = Field(None, ge=0)
    #: A nearer enemy across the route must be charged instead (interposing enemy models).
    interposing: bool = False
    #: The action is a charge: a wrong declaration or a move over its allowance is a
    #: ``charge`` finding, and one that ends beyond the zone's range of its target failed.
    charge: bool = False
    #: Which way a charge must go, judged from where it started and ended (the route
    #: taken is not seen): ``toward``: it must end nearer base contact with its target,
    #: by the shortest legal way, than it started; ``shortest``: one that ends in base
    #: contact with its target must have come by the shortest route to base contact, give
    #: or take the tolerance; ``any``: the text asks nothing. Only a charge is judged so.
    charge_route: Literal["any", "toward", "shortest"] = "any"
    #: The action is a deliberate collision with the target; both models roll (``[ramming]``).
    ramming: bool = False
    #: A roll this action asks for, reported as an advisory (e.g. ``risky_roll``).
    advisory: RuleName | None = None
    allowed_when_engaged: bool = False


class GridRules(_Strict):
    """Movement square by square (rules text 002)."""

    #: Side of a square in inches, unless the table's grid says otherwise.
    square_in: float = Field(1.0, gt=0)
    slagged_cost: int = Field(2, ge=1)
    outside_extra: int = Field(1, ge=0)
    magboots_activation: int = Field(1, ge=0)
    jet_squares: int = Field(10, ge=1)
    #: Any of these lets a character jet (equipment or species).
    jet_keywords: list[str] = ["jetpack", "avianoid", "whistler"]
    #: Move actions when moving as the action too, by species keyword; ``default`` else.
    move_actions: dict[str, int] = Field(default_factory=lambda: {"default": 2})
    run_difficulty: int = 11
    run_step: int = 3
    #: Statuses of a character who no longer occupies a square for "may not end there".
    unconscious_status: list[str] = ["unconscious", "out_of_action"]

    def moves_as_action(self, keywords: frozenset[str]) -> int:
        for keyword, count in self.move_actions.items():
            if keyword != "default" and keyword in keywords:
                return count
        return self.move_actions.get("default", 2)


class RammingRules(_Strict):
    """What a ramming asks of the players, in the game's words: a friendly model's zone
    entered where ``zone.friendly_entry = "ramming"``, or the target of a ramming action."""

    #: What the game calls it, e.g. "Ramming Maneuver".
    name: str = Field(min_length=1)
    #: The roll both models make, e.g. "a D6 against Integrity".
    roll: str = Field(min_length=1)


class Ruleset(_Strict):
    """Everything the referee needs to know about one game's movement rules."""

    name: str
    title: str
    source: str
    #: The status the players give a model locked in combat: it may then move only by an
    #: action ``allowed_when_engaged``. ``None``: no status makes a model engaged.
    engaged_status: str | None = None
    movement: MovementRules = MovementRules()
    zone: ZoneRules | None = None
    coherency: CoherencyRules | None = None
    grid: GridRules | None = None
    ramming: RammingRules | None = None
    actions: dict[str, ActionRules]

    def action(self, name: str) -> ActionRules | None:
        return self.actions.get(name)

    def is_charge(self, name: str) -> bool:
        """Whether the action declared as ``name`` is one of this game's charges."""
        action = self.actions.get(name)
        return action is not None and action.charge

    def no_such_action(self, name: str) -> str:
        """The one-sentence finding for a declared action this game does not have."""
        return f"{self.title} has no action '{name}' (it has: {', '.join(sorted(self.actions))})"

    @model_validator(mode="after")
    def _whole(self) -> Ruleset:
        """What a game needs whichever way it is read (its file, or a match file's copy)."""
        if "move" not in self.actions:
            raise field_error("actions", "every game needs a 'move' action")
        rams = [f"actions.{n}.ramming" for n, a in self.actions.items() if a.ramming]
        if self.zone is not None and self.zone.friendly_entry == "ramming":
            rams.insert(0, "zone.friendly_entry")
        if rams and self.ramming is None:
            raise field_error(
                "ramming",
                f"required key is missing ({rams[0]} asks for a ramming: give its name and roll)",
            )
        return self

    @classmethod
    def from_toml(cls, path: Path) -> Ruleset:
        return load_toml(path, cls)

    @classmethod
    def from_stored(cls, stored: dict[str, Any]) -> Ruleset:
        """A ruleset as a match file keeps it, recorded by any version of TableSight.

        Before the games named their own words, the generic checks spoke for every game:
        the status ``engaged``, the action called ``charge``, the keyword ``skimmer``
        over dangerous terrain, and Cosmic Combat's "Ramming Maneuver" with "a D6 against
        Integrity". A ruleset recorded then (it has no ``engaged_status`` key, which every
        later one has) is given exactly those words, so it judges as it did.
        """
        if "engaged_status" in stored:
            return cls.model_validate(stored)
        older = dict(stored, engaged_status="engaged")
        actions = {name: dict(a) for name, a in dict(stored.get("actions", {})).items()}
        if "charge" in actions:
            actions["charge"].setdefault("charge", True)
        older["actions"] = actions
        movement = dict(stored.get("movement", {}))
        movement.setdefault("dangerous_exempt_keywords", ["skimmer"])
        older["movement"] = movement
        zone = stored.get("zone") or {}
        if any(a.get("ramming") for a in actions.values()) or (
            zone.get("friendly_entry") == "ramming"
        ):
            older.setdefault("ramming", OLDER_RAMMING)
        return cls.model_validate(older)


#: The ramming every game was told before a game's file named its own.
OLDER_RAMMING = {"name": "Ramming Maneuver", "roll": "a D6 against Integrity"}


def available() -> list[str]:
    """Names of the games the referee knows."""
    return sorted(p.stem for p in GAMES_DIR.glob("*.toml"))


@functools.cache
def load_ruleset(name: str) -> Ruleset:
    """The ruleset registered under ``name``; an unknown name lists the known ones."""
    path = GAMES_DIR / f"{name}.toml"
    if name not in available():
        raise InputError(f"unknown game {name!r}; known games: {', '.join(available())}")
    return Ruleset.from_toml(path)


def load_ruleset_file(path: Path) -> Ruleset:
    """A game from a TOML file outside the package, validated as the packaged ones are.

    It may only recombine the rules of this module: a game's code (a hook module beside
    its file) is found by name among the packaged games only, so the file may not take a
    packaged game's name, and may not have a ``[grid]`` (the square-grid referee is the
    packaged Battlestations' code). Nothing beside the file is imported.
    """
    ruleset = Ruleset.from_toml(path)
    if ruleset.name in available():
        raise InputError(
            f"{path}: name: {ruleset.name!r} is a packaged game's name; give this game its "
            f"own (packaged: {', '.join(available())})"
        )
    if ruleset.grid is not None:
        raise InputError(
            f"{path}: grid: a game from a file outside the package cannot have a [grid] "
            f"(the square-grid referee is packaged code); allowed: no [grid] section"
        )
    return ruleset
