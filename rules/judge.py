"""The referee's judgements: each move checked against its game, with the numbers.

``Referee(scene, ruleset).judge()`` returns a ``Verdict``: the violations (illegal
moves), the advisories (consequences such as rolls to make, and close calls), and for
every moved model the distances that were measured. Each judgement is one small
function below; what differs between games is data in ``rules/games/*.toml``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import shapely
from shapely.geometry import LineString, Point
from shapely.ops import substring

from rules.field import MoveField, climb_cost, on_top_of
from rules.geometry import Pose, depth_inside, edge_distance, gap_lower_bound
from rules.pathing import Path, shortest_path
from rules.ruleset import ActionRules, Ruleset
from rules.scene import Model, Scene
from rules.verdict import (
    FLOAT_EPS_IN,
    Finding,
    Findings,
    MoveReport,
    RuleName,
    Verdict,
    inches,
)


class Referee:
    """Judges the moves of one scene under one ruleset."""

    def __init__(self, scene: Scene, ruleset: Ruleset) -> None:
        self.scene = scene
        self.rules = ruleset
        self.tol = scene.tolerance_in
        self._batch: frozenset[str] = frozenset()
        self._sources: dict[str, list[Model]] = {}
        self._xy: np.ndarray | None = None
        self._reach = np.zeros(0)

    # -- entry points -------------------------------------------------------------------

    def judge(self) -> Verdict:
        """Judge every model that moved or declared an action, and the units they belong to."""
        return self._judge([m.id for m in self.scene.moved()])

    def judge_model(self, model_id: str) -> Verdict:
        """Judge one model's move, its zones and its unit's coherency."""
        return self._judge([model_id])

    def _judge(self, ids: list[str]) -> Verdict:
        out = Findings()
        self._batch = frozenset(ids)
        moves: dict[str, MoveReport] = {}
        for model_id in ids:
            mover = self.scene.model(model_id)
            moves[model_id] = self._judge_move(mover, out)
        units = {(m.side, m.unit) for m in map(self.scene.model, ids)}
        for side, unit in sorted(units):
            self._coherency(side, unit, out)
        violations = []
        for finding in out.violations:
            call = self._too_close_to_call(finding)
            if call is None:
                violations.append(finding)
            else:
                out.advisories.append(call)
        return Verdict(tuple(violations), tuple(out.advisories), moves)

    # -- uncertain positions --------------------------------------------------------------

    def uncertainty_in(self, finding: Finding) -> float:
        """How far a finding's measurement may be off, from the positions it was taken from.

        A moved model counts twice (where it started and where it stands), another model
        once; independent errors add in quadrature.
        """
        model = self.scene.model(finding.model)
        ends = 2 if model.end is not None else 1
        total = ends * model.sigma_in**2
        other = self.scene.get(finding.other)  # None for terrain and table edges
        if other is not None:
            total += other.sigma_in**2
        return math.sqrt(total)

    def _too_close_to_call(self, finding: Finding) -> Finding | None:
        """A ``close_call`` for a violation whose margin lies inside the uncertainty.

        Every measured violation is one whose measurement is more than the tolerance from
        its limit; when the rest of that gap is within what the positions may be off, the
        camera cannot tell, and the referee says so instead of flagging it.
        """
        if finding.measured is None or finding.limit is None:
            return None
        sigma = self.uncertainty_in(finding)
        margin = abs(finding.measured - finding.limit) - self.tol
        if sigma <= 0 or margin > sigma:
            return None
        return dataclasses.replace(
            finding,
            rule="close_call",
            message=f"{finding.message}; {finding.measured:.2f} in +/- {sigma:.2f}: "
            f"too close to call ({finding.rule})",
            uncertainty=sigma,
        )

    # -- one move -----------------------------------------------------------------------

    def _judge_move(self, mover: Model, out: Findings) -> MoveReport:
        action = self.rules.action(mover.action)
        if action is None:
            out.flag("action", mover.id, self.rules.no_such_action(mover.action))
            action = self.rules.actions["move"]
        else:
            if not self._check_action(mover, action, out):
                # An action the model may not take earns none of its exemptions.
                action = action.model_copy(update={"zone_exempt": "none", "stop_short_in": None})
        allowance = self.allowance(mover, action)
        if "engaged" in mover.status and mover.moved and not action.allowed_when_engaged:
            out.flag(
                "engaged",
                mover.id,
                f"{mover.id} is engaged and may not {mover.action} this phase",
            )
        report = self._movement(mover, action, allowance, out)
        if mover.moved:
            self._end_position(mover, out)
            self._zones_at_end(mover, action, out)
        self._action_consequences(mover, action, report, out)
        return report

    def allowance(self, mover: Model, action: ActionRules) -> float:
        """How far the declared action lets the model move, in inches."""
        allowance = mover.movement_in * action.factor
        if action.add_roll and mover.roll is not None:
            allowance += mover.roll
        if action.max_in is not None:
            allowance = min(allowance, action.max_in)
        return allowance

    def _check_action(self, mover: Model, action: ActionRules, out: Findings) -> bool:
        """Flag what is wrong with the declaration; False if the model may not take the action.

        A target out of range or behind an interposing enemy is a wrong choice of target,
        not a forbidden action: the move keeps the action's exemptions.
        """
        flagged = len(out.violations)
        rule: RuleName = "charge" if mover.action == "charge" else "action"
        for keyword in action.requires_keywords:
            if not mover.has(keyword):
                out.flag(
                    rule, mover.id, f"{mover.id} needs '{keyword}' to make a {mover.action} move"
                )
        for keyword in action.forbidden_keywords:
            if mover.has(keyword):
                out.flag(rule, mover.id, f"a model with '{keyword}' may not {mover.action}")
        for status in action.forbidden_status:
            if status in mover.status:
                out.flag(rule, mover.id, f"{mover.id} is {status} and may not {mover.action}")
        target = self.scene.get(mover.target)
        if target is None or action.target == "none":
            return len(out.violations) == flagged
        if target.is_friend_of(mover):
            out.flag(
                rule,
                mover.id,
                f"{mover.id} may not {mover.action} {target.id}: it is a friendly model",
                other=target.id,
            )
        for keyword in action.target_forbidden_keywords:
            if target.has(keyword):
                out.flag(
                    rule,
                    mover.id,
                    f"{target.id} has '{keyword}' and cannot be the target of a {mover.action}",
                    other=target.id,
                )
        permitted = len(out.violations) == flagged
        if action.target_range_in is not None:
            gap = self.distance(mover, target, at_start=True)
            if gap > action.target_range_in + self.tol:
                out.flag(
                    rule,
                    mover.id,
                    f"{target.id} was {inches(gap)} away when the {mover.action} was declared; "
                    f"the most is {inches(action.target_range_in)}",
                    other=target.id,
                    measured=gap,
                    limit=action.target_range_in,
                )
        if action.interposing and not target.is_friend_of(mover):
            self._interposing(mover, target, action, out)
        return permitted

    # -- distances ----------------------------------------------------------------------

    def distance(
        self, a: Model, b: Model, at_start: bool = False, within: float = math.inf
    ) -> float:
        """Edge-to-edge distance between two models as they stand (or stood at ``a``'s start).

        When the bases are certainly further apart than ``within``, a cheaper lower bound
        (still above ``within``) is returned instead.
        """
        pose_a = a.start if at_start else a.pose
        pose_b = b.start if at_start else b.pose
        bound = gap_lower_bound(a.base, pose_a, b.base, pose_b)
        if bound > within:
            return bound
        return edge_distance(a.base, pose_a, b.base, pose_b)

    def nearby(self, mover: Model, within: float) -> list[Model]:
        """The other models that may stand within ``within`` of ``mover`` (edge to edge).

        A cheap, vectorised first cut (centre distance less both reaches); what it lets
        through is then measured exactly.
        """
        if self._xy is None:
            self._xy = np.asarray([m.pose.xy for m in self.scene.models], dtype=float)
            self._reach = np.asarray([m.base.reach_in for m in self.scene.models], dtype=float)
        p = mover.pose
        bound = np.hypot(self._xy[:, 0] - p.x, self._xy[:, 1] - p.y) - self._reach
        idx = np.flatnonzero(bound - mover.base.reach_in <= within)
        return [self.scene.models[k] for k in idx if self.scene.models[k].id != mover.id]

    def _first(self, mover: Model, other: Model) -> bool:
        """Report a pair once: under the mover, or the first id when both are judged."""
        return other.id not in self._batch or mover.id < other.id

    def in_contact(self, a: Model, b: Model) -> bool:
        return self.distance(a, b, within=self.tol) <= self.tol

    # -- zones --------------------------------------------------------------------------

    def zone_sources(self, mover: Model) -> list[Model]:
        """Models whose zone ``mover`` may not enter, before any action's exemption."""
        if mover.id not in self._sources:
            self._sources[mover.id] = self._zone_sources(mover)
        return self._sources[mover.id]

    def _zone_sources(self, mover: Model) -> list[Model]:
        zone = self.rules.zone
        if zone is None or any(mover.has(k) for k in zone.movers_exempt_keywords):
            return []
        sources = []
        for other in self.scene.models:
            if other.id == mover.id:
                continue
            if zone.applies_to == "enemy" and other.is_friend_of(mover):
                continue
            if other.is_friend_of(mover) and zone.friendly_entry == "ramming":
                continue
            if any(other.has(k) for k in zone.sources_exclude_keywords):
                continue
            exempt = zone.exempt_when_status_all
            if exempt and all(s in other.status for s in exempt):
                continue
            sources.append(other)
        return sources

    def zone_models(self, mover: Model) -> list[Model]:
        """The kind of model the zone rule speaks of (Necromunda: enemy fighters, whatever
        their status), whose base contact a charge must make."""
        zone = self.rules.zone
        excluded = zone.sources_exclude_keywords if zone else []
        return [
            m
            for m in self.scene.models
            if not m.is_friend_of(mover) and not any(m.has(k) for k in excluded)
        ]

    def zone_exempt(self, mover: Model, action: ActionRules) -> set[str]:
        """Models whose zone the declared action lets ``mover`` enter, judged at its end."""
        target = self.scene.get(mover.target)
        sources = self.zone_sources(mover)
        if action.zone_exempt == "all":
            return {m.id for m in sources}
        if (
            action.zone_exempt == "target_if_contact"
            and target is not None
            and not target.is_friend_of(mover)
            and self.in_contact(mover, target)
        ):
            return {target.id}
        touching = {m.id for m in self.nearby(mover, self.tol)}
        if action.zone_exempt == "all_if_contact" and any(
            self.in_contact(mover, m) for m in self.zone_models(mover) if m.id in touching
        ):
            return {m.id for m in sources}
        return set()

    def _zones_at_end(self, mover: Model, action: ActionRules, out: Findings) -> None:
        zone = self.rules.zone
        if zone is not None and zone.friendly_entry == "ramming":
            for other in self.nearby(mover, zone.range_in):
                if other.is_friend_of(mover) and self._first(mover, other):
                    gap = self.distance(mover, other, within=zone.range_in)
                    if gap < zone.range_in - self.tol:
                        out.advise(
                            "ramming",
                            mover.id,
                            f"{mover.id} ended {inches(gap)} from friendly {other.id}: "
                            f"both roll a D6 against Integrity (Ramming Maneuver)",
                            other=other.id,
                            measured=gap,
                            limit=zone.range_in,
                        )
        if zone is None:
            return
        exempt = self.zone_exempt(mover, action)
        short = action.stop_short_in is not None
        close = {m.id for m in self.nearby(mover, zone.range_in)}
        for other in self.zone_sources(mover):
            if other.id in exempt or other.id not in close:
                continue
            gap = self.distance(mover, other, within=zone.range_in)
            if gap < zone.range_in - self.tol:
                if short:
                    out.flag(
                        "charge",
                        mover.id,
                        f"{mover.id}'s charge made no base contact yet ended {inches(gap)} from "
                        f"{other.id}: it must stop {inches(action.stop_short_in or 0.0)} away",
                        other=other.id,
                        measured=gap,
                        limit=action.stop_short_in,
                    )
                else:
                    out.flag(
                        "control_zone",
                        mover.id,
                        f"{mover.id} ended {inches(gap)} from {other.id}, inside its "
                        f"{inches(zone.range_in)} zone",
                        other=other.id,
                        measured=gap,
                        limit=zone.range_in,
                    )
        if action.end_clear_of_enemies_in is not None:
            clear = action.end_clear_of_enemies_in
            for other in self.nearby(mover, clear):
                if other.is_friend_of(mover):
                    continue
                gap = self.distance(mover, other, within=clear)
                if gap <= clear - self.tol:
                    out.flag(
                        "retreat",
                        mover.id,
                        f"{mover.id} must end its {mover.action} more than {inches(clear)} from "
                        f"every enemy; it is {inches(gap)} from {other.id}",
                        other=other.id,
                        measured=gap,
                        limit=clear,
                    )

    # -- movement -----------------------------------------------------------------------

    def _path(
        self, mover: Model, zone_ids: frozenset[str], bound_in: float = math.inf
    ) -> tuple[Path | None, MoveField]:
        field_ = MoveField(self.scene, self.rules, mover, zone_ids)
        return shortest_path(mover.start.xy, mover.pose.xy, field_, bound_in=bound_in), field_

    def _movement(
        self, mover: Model, action: ActionRules, allowance: float, out: Findings
    ) -> MoveReport:
        straight = mover.start.distance_to(mover.pose)
        if not mover.moved:
            return MoveReport(mover.action, allowance, 0.0, 0.0, (0.0, 0.0))
        climb = climb_cost(mover.pose.z - mover.start.z, self.rules, mover)
        exempt = self.zone_exempt(mover, action)
        zone_ids = frozenset(m.id for m in self.zone_sources(mover) if m.id not in exempt)
        limit = allowance + self.tol + FLOAT_EPS_IN
        # Nobody needs the exact length of a detour three times the allowance.
        cap = max(3.0 * allowance, allowance + 12.0)
        legal, field_ = self._path(mover, zone_ids, cap - climb)
        report = MoveReport(
            mover.action,
            allowance,
            straight,
            None if legal is None else legal.length_in + climb,
            None if legal is None else (legal.lower_in + climb, legal.length_in + climb),
            () if legal is None else legal.points,
        )
        if legal is not None and legal.length_in + climb <= limit:
            return report
        if legal is not None and legal.lower_in + climb <= limit:
            out.advise(
                "close_call",
                mover.id,
                f"{mover.id} moved {inches(legal.lower_in + climb)} to "
                f"{inches(legal.length_in + climb)} of its {inches(allowance)}: too close to call",
                measured=legal.length_in + climb,
                limit=allowance,
            )
            return report
        # Over the allowance keeping clear of zones: was it in reach through one?
        through = self._path(mover, frozenset(), limit - climb)[0] if zone_ids else None
        if through is not None:
            crossed = _zones_crossed(through, field_)
            other = crossed[0] if crossed else None
            how = inches(legal.length_in + climb) if legal is not None else "impossible"
            zone_in = self.rules.zone.range_in if self.rules.zone else 0.0
            out.flag(
                "control_zone",
                mover.id,
                f"{mover.id} could only reach its end within {inches(allowance)} by passing "
                f"within {inches(zone_in)} of {other or 'a model'}; keeping clear it is {how}",
                other=other,
                measured=None if legal is None else legal.length_in + climb,
                limit=allowance,
            )
            return report
        best = legal
        if best is None and zone_ids:
            through, _ = self._path(mover, frozenset(), cap - climb)
            if through is not None:
                zone_in = self.rules.zone.range_in if self.rules.zone else 0.0
                out.flag(
                    "control_zone",
                    mover.id,
                    f"no route to {mover.id}'s end keeps {inches(zone_in)} from the models it "
                    f"must keep away from; passing through their zones it is "
                    f"{inches(through.length_in + climb)}",
                    measured=through.length_in + climb,
                    limit=allowance,
                )
                return report
        if best is None:
            if not field_.connected():
                out.flag(
                    "blocked", mover.id, f"no legal path leads from {mover.id}'s start to its end"
                )
                return report
            out.flag(
                "charge" if mover.action == "charge" else "movement",
                mover.id,
                f"{mover.id}'s shortest legal path is longer than {inches(cap)}; "
                f"its {mover.action} allows {inches(allowance)}",
                measured=cap,
                limit=allowance,
            )
            return report
        charge = mover.action == "charge"
        what = "failed charge" if charge and not self._charge_reached(mover) else mover.action
        out.flag(
            "charge" if charge else "movement",
            mover.id,
            f"{mover.id} moved {inches(best.length_in + climb)} by the shortest legal path; "
            f"its {what} allows {inches(allowance)}",
            measured=best.length_in + climb,
            limit=allowance,
        )
        return report

    def _charge_reached(self, mover: Model) -> bool:
        target = self.scene.get(mover.target)
        zone = self.rules.zone.range_in if self.rules.zone else 1.0
        return target is not None and self.distance(mover, target) <= zone + self.tol

    # -- where it ended -----------------------------------------------------------------

    def _end_position(self, mover: Model, out: Findings) -> None:
        table = self.scene.table
        x0, y0, x1, y1 = mover.base.footprint(mover.pose).bounds
        beyond = max(-x0, -y0, x1 - table.width_in, y1 - table.depth_in)
        if beyond > self.tol and not self.rules.movement.may_leave_table:
            out.flag(
                "off_table",
                mover.id,
                f"{mover.id}'s base is {inches(beyond)} beyond the table edge",
                measured=beyond,
                limit=0.0,
            )
        for other in self.nearby(mover, 0.0):
            if not self._first(mover, other):
                continue
            gap = self.distance(mover, other, within=0.0)
            if gap < -self.tol:
                out.flag(
                    "base_overlap",
                    mover.id,
                    f"{mover.id}'s base overlaps {other.id}'s by {inches(-gap)}",
                    other=other.id,
                    measured=-gap,
                    limit=0.0,
                )
        footprint = mover.base.footprint(mover.pose)
        touching = shapely.intersects(footprint, self.scene.terrain_polygons)
        for piece, touches in zip(self.scene.terrain, touching, strict=True):
            if not touches:
                continue
            if piece.has("impassable") or (
                piece.has("climbable") and not on_top_of(piece, mover.pose, self.tol)
            ):
                depth = depth_inside(footprint, piece.polygon)
                if depth > self.tol:
                    out.flag(
                        "base_overlap",
                        mover.id,
                        f"{mover.id}'s base is {inches(depth)} inside terrain {piece.id}",
                        other=piece.id,
                        measured=depth,
                        limit=0.0,
                    )
            elif piece.has("gap") and piece.polygon.contains(Point(mover.pose.xy)):
                out.flag(
                    "terrain",
                    mover.id,
                    f"{mover.id} ended over gap {piece.id}: a model cannot stand in a gap",
                    other=piece.id,
                )

    # -- consequences -------------------------------------------------------------------

    def _action_consequences(
        self, mover: Model, action: ActionRules, report: MoveReport, out: Findings
    ) -> None:
        target = self.scene.get(mover.target)
        if action.advisory:
            out.advise(
                action.advisory,
                mover.id,
                f"{mover.id}'s {mover.action} needs a {action.advisory.replace('_', ' ')}",
            )
        if action.ramming and target is not None and self.in_contact(mover, target):
            out.advise(
                "ramming",
                mover.id,
                f"{mover.id} rammed {target.id}: both roll a D6 against Integrity",
                other=target.id,
            )
        if mover.action == "charge" and target is not None and mover.moved:
            gap = self.distance(mover, target)
            zone = self.rules.zone.range_in if self.rules.zone else 1.0
            if gap > zone + self.tol:
                out.advise(
                    "charge",
                    mover.id,
                    f"{mover.id}'s charge failed: it ended {inches(gap)} from {target.id}",
                    other=target.id,
                    measured=gap,
                    limit=zone,
                )
        if report.route and len(report.route) >= 2:
            line = LineString(report.route)
            for piece in self.scene.terrain:
                if piece.has("dangerous") and line.intersects(piece.polygon):
                    if self.rules.movement.difficult_factor(mover.keywords) == 1.0 and mover.has(
                        "skimmer"
                    ):
                        continue
                    out.advise(
                        "dangerous_terrain",
                        mover.id,
                        f"{mover.id} crossed dangerous terrain {piece.id}: it must test",
                        other=piece.id,
                    )

    # -- charges ------------------------------------------------------------------------

    def _interposing(self, mover: Model, target: Model, action: ActionRules, out: Findings) -> None:
        """A different enemy the route to the target must pass within the zone of first."""
        zone_in = self.rules.zone.range_in if self.rules.zone else 1.0
        others = [
            m for m in self.scene.models if not m.is_friend_of(mover) and m.id not in (target.id,)
        ]
        if not others:
            return
        probe = _at_start(mover)
        goal = target.base.inflated(target.pose, zone_in + mover.base.radius_in, "inner")
        others_ids = frozenset(m.id for m in others)
        free = self._route_to(probe, target, frozenset(), ignore=others_ids)
        if free is None:
            return
        route = _until(free, goal)
        zones = {
            m.id: m.base.inflated(m.pose, zone_in + mover.base.radius_in, "inner") for m in others
        }
        crossed = sorted(
            (route.project(Point(shapely.get_coordinates(route.intersection(z))[0])), mid)
            for mid, z in zones.items()
            if route.intersects(z) and not z.contains(Point(probe.start.xy))
        )
        if not crossed:
            return
        clear = self._route_to(probe, target, frozenset(zones))
        reach = action.max_in or math.inf
        if clear is not None and _until(clear, goal).length <= reach + self.tol:
            return
        first = crossed[0][1]
        out.flag(
            "charge",
            mover.id,
            f"{first} interposes: the route to {target.id} passes within {inches(zone_in)} of "
            f"{first} first, so {first} must be the target",
            other=first,
        )

    def _route_to(
        self,
        probe: Model,
        target: Model,
        zone_ids: frozenset[str],
        ignore: frozenset[str] = frozenset(),
    ) -> Path | None:
        """Shortest route from ``probe``'s start to ``target``'s centre.

        The target, and the models in ``ignore``, are not obstacles on the way.
        """
        scene = Scene(
            self.scene.table,
            tuple(m for m in self.scene.models if m.id != target.id and m.id not in ignore),
            self.scene.terrain,
            self.scene.tolerance_in,
        )
        moving = _moved_to(probe, target.pose.xy)
        field_ = MoveField(scene, self.rules, moving, zone_ids)
        return shortest_path(moving.start.xy, moving.pose.xy, field_)

    # -- coherency ----------------------------------------------------------------------

    def _coherency(self, side: str, unit: str, out: Findings) -> None:
        rules = self.rules.coherency
        members = [m for m in self.scene.models if m.side == side and m.unit == unit]
        if rules is None or len(members) < 2:
            return
        n = len(members)
        gap = [[math.inf] * n for _ in range(n)]
        linked = [[False] * n for _ in range(n)]
        for i in range(n):
            for j in range(i + 1, n):
                d = self.distance(members[i], members[j])
                gap[i][j] = gap[j][i] = d
                rise = abs(members[i].pose.z - members[j].pose.z)
                ok = d <= rules.range_in + self.tol and rise <= rules.vertical_in + self.tol
                linked[i][j] = linked[j][i] = ok
        report = out.flag if rules.severity == "violation" else out.advise
        lonely = [i for i in range(n) if not any(linked[i])]
        for i in lonely:
            j = min(range(n), key=lambda k: gap[i][k])
            report(
                "coherency",
                members[i].id,
                f"{members[i].id} is out of coherency: its nearest unit-mate {members[j].id} "
                f"is {inches(gap[i][j])} away (range {inches(rules.range_in)})",
                other=members[j].id,
                measured=gap[i][j],
                limit=rules.range_in,
            )
        if not rules.connected or lonely:
            return
        groups = _components(linked)
        if len(groups) > 1:
            groups.sort(key=len, reverse=True)
            rest = groups[0]
            for group in groups[1:]:
                i, j = min(((a, b) for a in group for b in rest), key=lambda p: gap[p[0]][p[1]])
                report(
                    "coherency",
                    members[i].id,
                    f"unit {unit} is split: {members[i].id}'s group is {inches(gap[i][j])} from "
                    f"the rest (nearest {members[j].id}, range {inches(rules.range_in)})",
                    other=members[j].id,
                    measured=gap[i][j],
                    limit=rules.range_in,
                )


def _components(linked: list[list[bool]]) -> list[list[int]]:
    n, seen, groups = len(linked), set(), []
    for s in range(n):
        if s in seen:
            continue
        stack, group = [s], []
        seen.add(s)
        while stack:
            i = stack.pop()
            group.append(i)
            for j in range(n):
                if linked[i][j] and j not in seen:
                    seen.add(j)
                    stack.append(j)
        groups.append(group)
    return groups


def _zones_crossed(path: Path, field_: MoveField) -> list[str]:
    """Zone models whose zone the route passes through, in the order it meets them."""
    line = path.line()
    hits = []
    for mid, poly in field_.zones_near(line).items():
        if line.relate_pattern(poly, "T********"):
            first = shapely.get_coordinates(line.intersection(poly))[0]
            hits.append((line.project(Point(first)), mid))
    return [mid for _, mid in sorted(hits)]


def _until(path: Path, goal: shapely.Polygon) -> LineString:
    """The part of the route before it first enters ``goal``."""
    line = path.line()
    if not line.intersects(goal):
        return line
    first = shapely.get_coordinates(line.intersection(goal))[0]
    cut = line.project(Point(first))
    return substring(line, 0.0, cut) if cut > 0 else LineString([line.coords[0]] * 2)


def _at_start(model: Model) -> Model:
    return dataclasses.replace(model, end=None)


def _moved_to(model: Model, xy: tuple[float, float]) -> Model:
    return dataclasses.replace(model, end=Pose(xy[0], xy[1], model.start.heading, model.start.z))
