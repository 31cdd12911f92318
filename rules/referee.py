"""The referee for a game: measured in inches (``Referee``), or the game's own.

``Referee(scene, ruleset).judge()`` returns a ``Verdict``: the violations (illegal
moves), the advisories (consequences such as rolls to make, and close calls), and for
every moved model the distances that were measured. It runs the checks of
:mod:`tablesight.rules.checks`, in the order given there, on each model judged and then on each
unit involved; a violation whose margin lies inside what the positions may be off
becomes a close call. A game whose code (:mod:`tablesight.rules.games`) brings a referee
of its own, e.g. one that counts squares, is judged by that one (:func:`referee_for`).

A game in progress judges one move at a time and keeps apart what belongs to the move
and what belongs to its unit (:func:`judge_move_and_unit`): a move's findings are about
where it ended, a unit's about how the unit stands now, which its mates' moves change.
"""

from __future__ import annotations

import dataclasses

from tablesight.rules import checks
from tablesight.rules.games import hooks_for
from tablesight.rules.hooks import Judge
from tablesight.rules.measure import Measure, Move
from tablesight.rules.movement import movement
from tablesight.rules.ruleset import Ruleset
from tablesight.rules.scene import Model, Scene
from tablesight.rules.verdict import Finding, Findings, MoveReport, Verdict

__all__ = ["Judge", "Referee", "judge_move_and_unit", "referee_for"]


def referee_for(scene: Scene, ruleset: Ruleset) -> Judge:
    """The referee that judges ``ruleset``'s game: the game's own if its code brings one
    (Battlestations counts squares), else the common one, measured in inches."""
    return hooks_for(ruleset).referee(scene, ruleset) or Referee(scene, ruleset)


def judge_move_and_unit(scene: Scene, ruleset: Ruleset, model_id: str) -> tuple[Verdict, Verdict]:
    """One model's move judged on its own (the move checks: findings about that model and
    that move), and its unit as it stands (the unit checks: findings about any of its
    models). Together they are ``judge_model``'s findings."""
    return referee_for(scene, ruleset).judge_move_and_unit(model_id)


class Referee:
    """Judges the moves of one scene under one ruleset, measured in inches."""

    def __init__(self, scene: Scene, ruleset: Ruleset) -> None:
        self.scene = scene
        self.rules = ruleset
        self.measure = Measure(scene, ruleset)
        hooks = hooks_for(ruleset)
        self.move_checks = (*checks.MOVE_CHECKS, *hooks.move_checks)
        self.unit_checks = (*checks.UNIT_CHECKS, *hooks.unit_checks)

    def judge(self) -> Verdict:
        """Judge every model that moved or declared an action, and the units they belong to."""
        return self._judge([m.id for m in self.scene.moved()])

    def judge_model(self, model_id: str, units: bool = True) -> Verdict:
        """Judge one model's move, its zones and (unless ``units`` is False) its unit's
        coherency."""
        return self._judge([model_id], units)

    def judge_move_and_unit(self, model_id: str) -> tuple[Verdict, Verdict]:
        """The move checks on one model's move, and the unit checks on its unit as it stands."""
        mover = self.scene.model(model_id)
        return self.judge_model(model_id, units=False), self.judge_unit(mover.side, mover.unit)

    def judge_unit(self, side: str, unit: str) -> Verdict:
        """Only the unit checks, on one unit as it stands."""
        out = Findings()
        self.measure.batch = frozenset()
        for unit_check in self.unit_checks:
            unit_check(self.measure, side, unit, out)
        return self._verdict(out, {})

    def _judge(self, ids: list[str], units: bool = True) -> Verdict:
        """Run every check on the models of ``ids`` and (if ``units``) their units."""
        out = Findings()
        self.measure.batch = frozenset(ids)
        moves = {model_id: self._judge_move(self.scene.model(model_id), out) for model_id in ids}
        for side, unit in sorted({(m.side, m.unit) for m in map(self.scene.model, ids)}):
            for unit_check in self.unit_checks if units else ():
                unit_check(self.measure, side, unit, out)
        return self._verdict(out, moves)

    def _verdict(self, out: Findings, moves: dict[str, MoveReport]) -> Verdict:
        """The findings as a verdict: a violation too close to call becomes a close call."""
        violations = []
        for finding in out.violations:
            call = self.too_close_to_call(finding)
            if call is None:
                violations.append(finding)
            else:
                out.advisories.append(call)
        return Verdict(tuple(violations), tuple(out.advisories), moves)

    def _judge_move(self, mover: Model, out: Findings) -> MoveReport:
        """Run the move checks on one model, in order; what was measured of its move."""
        action = checks.declared_action(self.measure, mover, out)
        move = Move(mover, action, self.measure.allowance(mover, action))
        checks.engaged(self.measure, move, out)
        report = movement(self.measure, move, out)
        move = dataclasses.replace(move, route=report.route, used=report.shortest_path)
        for check in self.move_checks:
            check(self.measure, move, out)
        return report

    def too_close_to_call(self, finding: Finding) -> Finding | None:
        """A ``close_call`` for a violation whose margin lies inside the uncertainty.

        Every measured violation is one whose measurement is more than the tolerance from
        its limit; when the rest of that gap is within what the positions may be off, the
        camera cannot tell, and the referee says so instead of flagging it.
        """
        if finding.measured is None or finding.limit is None:
            return None
        sigma = self.measure.uncertainty_in(finding)
        margin = abs(finding.measured - finding.limit) - self.measure.tol
        if sigma <= 0 or margin > sigma:
            return None
        return dataclasses.replace(
            finding,
            rule="close_call",
            message=f"{finding.message}; {finding.measured:.2f} in +/- {sigma:.2f}: "
            f"too close to call ({finding.rule})",
            uncertainty=sigma,
        )
