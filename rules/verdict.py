"""What the referee says: findings with numbers, and a verdict per set of moves.

Verdicts are data: each violation or advisory names the rule, the model, the other model
or terrain involved, what was measured and the limit it was held to, and says why in one
sentence. Both referees (inches and squares) answer with these.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal, TypeGuard, get_args

from tablesight.rules.levels import Climb

#: Every rule a finding may name: the closed set the referees, the events, the match file
#: and the views share. A misspelt name is a type error.
RuleName = Literal[
    # how far a model moved, and by which route
    "movement",
    "blocked",
    "control_zone",
    "close_call",
    # the declared action
    "action",
    "charge",
    "engaged",
    "retreat",
    # where a model ended
    "off_table",
    "base_overlap",
    "terrain",
    "coherency",
    # consequences the players resolve with dice
    "ramming",
    "dangerous_terrain",
    "risky_roll",
    # a vehicle that ended its move on difficult or dangerous terrain it skims over must
    # pass a Handling test (Necromunda's Skimmers): not its route, where it ended
    "handling_test",
    # square-grid games
    "free_attack",
    "diagonal_jet",
    "slagged_jet",
]

#: The rule names, in the order above (for the match file and the views).
RULE_NAMES: tuple[RuleName, ...] = get_args(RuleName)


def is_rule_name(name: str) -> TypeGuard[RuleName]:
    """Whether ``name`` is one of the rules a finding may name."""
    return name in RULE_NAMES


@dataclass(frozen=True)
class Finding:
    """One thing the referee flags: which rule, which model, the numbers and why."""

    rule: RuleName
    model: str
    message: str
    other: str | None = None
    measured: float | None = None
    limit: float | None = None
    #: How far ``measured`` may be off, in inches, when the positions are uncertain.
    uncertainty: float | None = None
    #: Told as an advisory (a consequence, a close call), not as a violation: a move may
    #: draw both under one rule (a charge that went away is illegal, and failed).
    advisory: bool = False

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        for key in ("measured", "limit", "uncertainty"):
            if out[key] is not None:
                out[key] = round(out[key], 3)
        keys = ("rule", "model", "other", "measured", "limit", "uncertainty", "message")
        return {k: out[k] for k in keys}


@dataclass(frozen=True)
class MoveReport:
    """What was measured for one model's move, in inches."""

    action: str
    allowance: float
    straight: float
    shortest_path: float | None
    shortest_path_bounds: tuple[float, float] | None
    route: tuple[tuple[float, float], ...] = ()
    #: Where the shortest route changes level, in order (its costs are in its length).
    climbs: tuple[Climb, ...] = ()

    def to_dict(self) -> dict[str, object]:
        bounds = self.shortest_path_bounds
        return {
            "action": self.action,
            "allowance": round(self.allowance, 3),
            "straight": round(self.straight, 3),
            "shortest_path": None if self.shortest_path is None else round(self.shortest_path, 3),
            "shortest_path_bounds": None if bounds is None else [round(b, 4) for b in bounds],
            "climbs": [
                {
                    "at": [round(c.at[0], 3), round(c.at[1], 3)],
                    "from": round(c.from_in, 3),
                    "to": round(c.to_in, 3),
                    "cost": round(c.cost_in, 3),
                }
                for c in self.climbs
            ],
        }

    def climbs_text(self) -> str:
        """Where the route climbs, in words: 'up 2.00 in at (4.00, 10.00), costing 2.00 in'."""
        return "; ".join(
            f"{'up' if c.rise_in > 0 else 'down'} {abs(c.rise_in):.2f} in at "
            f"({c.at[0]:.2f}, {c.at[1]:.2f}), costing {c.cost_in:.2f} in"
            for c in self.climbs
        )


@dataclass(frozen=True)
class Verdict:
    """The referee's answer for a set of moves."""

    violations: tuple[Finding, ...] = ()
    advisories: tuple[Finding, ...] = ()
    moves: dict[str, MoveReport] = field(default_factory=dict)

    @property
    def legal(self) -> bool:
        return not self.violations

    def rules(self) -> list[RuleName]:
        return [f.rule for f in self.violations]

    def to_text(self, title: str) -> str:
        """This verdict as a plain-text table for the terminal, headed by the game's title."""
        state = "LEGAL" if self.legal else "ILLEGAL"
        lines = [
            f"{title}: {_count(len(self.moves), 'move', 'moves')} judged: {state} "
            f"({_count(len(self.violations), 'violation', 'violations')}, "
            f"{_count(len(self.advisories), 'advisory', 'advisories')})",
            "",
        ]
        lines.append(
            f"{'model':<14}{'action':<16}{'allowance':>10}{'straight':>10}{'shortest':>10}  bracket"
        )
        for model_id, move in self.moves.items():
            path = "blocked" if move.shortest_path is None else f"{move.shortest_path:.2f}"
            bracket = (
                ""
                if move.shortest_path_bounds is None
                else f"[{move.shortest_path_bounds[0]:.3f}, {move.shortest_path_bounds[1]:.3f}]"
            )
            lines.append(
                f"{model_id:<14}{move.action:<16}{move.allowance:>10.2f}"
                f"{move.straight:>10.2f}{path:>10}  {bracket}"
            )
            if move.climbs:
                lines.append(f"{'':<14}climbs: {move.climbs_text()}")
        for heading, findings in (
            ("Violations", self.violations),
            ("Advisories", self.advisories),
        ):
            if findings:
                lines += ["", f"{heading}:"]
                lines += [f"  {f.rule:<14}{f.model:<14}{f.message}" for f in findings]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, object]:
        return {
            "legal": self.legal,
            "violations": [f.to_dict() for f in self.violations],
            "advisories": [f.to_dict() for f in self.advisories],
            "moves": {k: v.to_dict() for k, v in self.moves.items()},
        }


#: Lengths computed to the last bit can land a hair past a limit they meet exactly.
FLOAT_EPS_IN = 1e-9


def inches(x: float) -> str:
    """A distance as players write it: 2 decimals and an inch mark."""
    return f'{x:.2f}"'


class Findings:
    """Violations and advisories as a judge collects them."""

    def __init__(self) -> None:
        self.violations: list[Finding] = []
        self.advisories: list[Finding] = []

    def flag(
        self,
        rule: RuleName,
        model: str,
        message: str,
        *,
        other: str | None = None,
        measured: float | None = None,
        limit: float | None = None,
    ) -> None:
        """Record a violation: an illegal move."""
        self.violations.append(Finding(rule, model, message, other, measured, limit))

    def advise(
        self,
        rule: RuleName,
        model: str,
        message: str,
        *,
        other: str | None = None,
        measured: float | None = None,
        limit: float | None = None,
    ) -> None:
        """Record an advisory: a consequence to resolve, or a call too close to make."""
        self.advisories.append(Finding(rule, model, message, other, measured, limit, advisory=True))


def _count(n: int, one: str, many: str) -> str:
    """``1 move``, ``2 moves``, ``0 advisories``."""
    return f"{n} {one if n == 1 else many}"
