"""The referee's checks: each one rule of a game, measured, with the numbers.

A check is a small function that looks at one move (or one unit) and records what it
finds in a :class:`~rules.verdict.Findings`; the referee (:mod:`rules.referee`) runs them
in the order below. What differs between games is data in ``rules/games/*.toml``.

The declared action comes first (:func:`declared_action`: an action the model may not
take earns none of its exemptions), then :func:`engaged`, then :func:`movement` (which
measures the move), then ``MOVE_CHECKS`` in order, and for each unit involved,
``UNIT_CHECKS``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import shapely
from shapely.geometry import LineString, Point
from shapely.ops import substring

from rules.coherency import components, in_coherency, rise_between
from rules.field import MoveField, climb_cost, on_top_of
from rules.geometry import depth_inside
from rules.measure import Measure
from rules.pathing import Path
from rules.ruleset import ActionRules
from rules.scene import Model
from rules.verdict import FLOAT_EPS_IN, Findings, MoveReport, RuleName, inches


@dataclass(frozen=True)
class Move:
    """One model's move as the checks see it: the model, the action it is held to, how
    far that action lets it move and the route it was measured along (inches)."""

    mover: Model
    action: ActionRules
    allowance: float
    route: tuple[tuple[float, float], ...] = ()


#: A check of one move: what it finds goes into the findings.
MoveCheck = Callable[[Measure, Move, Findings], None]
#: A check of one unit, by its side and name.
UnitCheck = Callable[[Measure, str, str, Findings], None]


def _action_rule(mover: Model) -> RuleName:
    """The rule a wrong declaration falls under: ``charge`` for a charge, else ``action``."""
    return "charge" if mover.action == "charge" else "action"


# -- the declaration --------------------------------------------------------------------------


def declared_action(m: Measure, mover: Model, out: Findings) -> ActionRules:
    """The action the move is held to: the declared one, stripped of its exemptions when
    the model may not take it, or a Move when the game has no such action."""
    action = m.rules.action(mover.action)
    if action is None:
        out.flag("action", mover.id, m.rules.no_such_action(mover.action))
        return m.rules.actions["move"]
    if not _may_take(m, mover, action, out):
        return action.model_copy(update={"zone_exempt": "none", "stop_short_in": None})
    return action


def _may_take(m: Measure, mover: Model, action: ActionRules, out: Findings) -> bool:
    """Flag what is wrong with the declaration; False if the model may not take the action.

    A target out of range or behind an interposing enemy is a wrong choice of target,
    not a forbidden action: the move keeps the action's exemptions.
    """
    flagged = len(out.violations)
    _keywords_and_status(mover, action, out)
    target = m.scene.get(mover.target)
    if target is None or action.target == "none":
        return len(out.violations) == flagged
    _target_allowed(mover, target, action, out)
    permitted = len(out.violations) == flagged
    _target_in_range(m, mover, target, action, out)
    if action.interposing and not target.is_friend_of(mover):
        _interposing(m, mover, target, action, out)
    return permitted


def _keywords_and_status(mover: Model, action: ActionRules, out: Findings) -> None:
    """Keywords the action needs that the model lacks, and keywords or statuses that bar it."""
    rule = _action_rule(mover)
    for keyword in action.requires_keywords:
        if not mover.has(keyword):
            out.flag(rule, mover.id, f"{mover.id} needs '{keyword}' to make a {mover.action} move")
    for keyword in action.forbidden_keywords:
        if mover.has(keyword):
            out.flag(rule, mover.id, f"a model with '{keyword}' may not {mover.action}")
    for status in action.forbidden_status:
        if status in mover.status:
            out.flag(rule, mover.id, f"{mover.id} is {status} and may not {mover.action}")


def _target_allowed(mover: Model, target: Model, action: ActionRules, out: Findings) -> None:
    """A friendly target, or a target whose keywords the action may not be aimed at."""
    rule = _action_rule(mover)
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


def _target_in_range(
    m: Measure, mover: Model, target: Model, action: ActionRules, out: Findings
) -> None:
    """Edge-to-edge distance to the target where the mover started, against the action's
    declaration range."""
    if action.target_range_in is None:
        return
    gap = m.distance(mover, target, at_start=True)
    if gap > action.target_range_in + m.tol:
        out.flag(
            _action_rule(mover),
            mover.id,
            f"{target.id} was {inches(gap)} away when the {mover.action} was declared; "
            f"the most is {inches(action.target_range_in)}",
            other=target.id,
            measured=gap,
            limit=action.target_range_in,
        )


def _interposing(
    m: Measure, mover: Model, target: Model, action: ActionRules, out: Findings
) -> None:
    """A different enemy whose zone the route to the target enters first, when no route
    within the action's reach keeps clear of it."""
    zone_in = m.rules.zone.range_in if m.rules.zone else 1.0
    others = [x for x in m.scene.models if not x.is_friend_of(mover) and x.id != target.id]
    if not others:
        return
    goal = target.base.inflated(target.pose, zone_in + mover.base.radius_in, "inner")
    free = m.route_to(mover, target, frozenset(), ignore=frozenset(x.id for x in others))
    if free is None:
        return
    zones = {x.id: x.base.inflated(x.pose, zone_in + mover.base.radius_in, "inner") for x in others}
    crossed = _entered_first(_until(free, goal), zones, Point(mover.start.xy))
    if crossed is None:
        return
    clear = m.route_to(mover, target, frozenset(zones))
    reach = action.max_in or math.inf
    if clear is not None and _until(clear, goal).length <= reach + m.tol:
        return
    out.flag(
        "charge",
        mover.id,
        f"{crossed} interposes: the route to {target.id} passes within {inches(zone_in)} of "
        f"{crossed} first, so {crossed} must be the target",
        other=crossed,
    )


def _entered_first(
    route: LineString, zones: dict[str, shapely.Polygon], start: Point
) -> str | None:
    """The model whose zone ``route`` enters first, of those whose zone ``start`` is not in."""
    crossed = sorted(
        (route.project(Point(shapely.get_coordinates(route.intersection(z))[0])), mid)
        for mid, z in zones.items()
        if route.intersects(z) and not z.contains(start)
    )
    return crossed[0][1] if crossed else None


def engaged(m: Measure, move: Move, out: Findings) -> None:
    """An engaged model that moved under an action not allowed when engaged."""
    mover = move.mover
    if "engaged" in mover.status and mover.moved and not move.action.allowed_when_engaged:
        out.flag(
            "engaged",
            mover.id,
            f"{mover.id} is engaged and may not {mover.action} this phase",
        )


# -- how far it moved -------------------------------------------------------------------------


@dataclass(frozen=True)
class Route:
    """The shortest legal route of a move as measured: the path keeping out of the zones
    of ``zone_ids`` (None when none is within ``cap_in``), the field it was found in, and
    the climb added to it, in inches."""

    path: Path | None
    field: MoveField
    zone_ids: frozenset[str]
    climb_in: float
    cap_in: float
    limit_in: float

    @property
    def length_in(self) -> float | None:
        """The route's length with the climb, or None when there is none."""
        return None if self.path is None else self.path.length_in + self.climb_in

    @property
    def lower_in(self) -> float | None:
        """The least the route's length with the climb may be, or None when there is none."""
        return None if self.path is None else self.path.lower_in + self.climb_in


def legal_route(m: Measure, move: Move) -> Route:
    """The shortest route from start to end that keeps out of the zones the action does
    not exempt, with the climb's cost, searched up to three times the allowance."""
    mover, allowance = move.mover, move.allowance
    climb = climb_cost(mover.pose.z - mover.start.z, m.rules, mover)
    exempt = m.zone_exempt(mover, move.action)
    zone_ids = frozenset(x.id for x in m.zone_sources(mover) if x.id not in exempt)
    # Nobody needs the exact length of a detour three times the allowance.
    cap = max(3.0 * allowance, allowance + 12.0)
    path, field_ = m.path(mover, zone_ids, cap - climb)
    return Route(path, field_, zone_ids, climb, cap, allowance + m.tol + FLOAT_EPS_IN)


def movement(m: Measure, move: Move, out: Findings) -> MoveReport:
    """Whether the shortest legal route fits the action's allowance; what was measured."""
    mover = move.mover
    if not mover.moved:
        return MoveReport(mover.action, move.allowance, 0.0, 0.0, (0.0, 0.0))
    route = legal_route(m, move)
    for judgement in _MOVEMENT_JUDGEMENTS:
        if judgement(m, move, route, out):
            break
    length, lower = route.length_in, route.lower_in
    return MoveReport(
        mover.action,
        move.allowance,
        mover.start.distance_to(mover.pose),
        length,
        None if length is None or lower is None else (lower, length),
        () if route.path is None else route.path.points,
    )


def _fits(m: Measure, move: Move, route: Route, out: Findings) -> bool:
    """A route within the allowance: nothing to flag."""
    return route.length_in is not None and route.length_in <= route.limit_in


def _too_close_to_call(m: Measure, move: Move, route: Route, out: Findings) -> bool:
    """A route whose length the search only bounds, and the bound is within the allowance."""
    if route.length_in is None or route.lower_in is None or route.lower_in > route.limit_in:
        return False
    mover = move.mover
    out.advise(
        "close_call",
        mover.id,
        f"{mover.id} moved {inches(route.lower_in)} to "
        f"{inches(route.length_in)} of its {inches(move.allowance)}: too close to call",
        measured=route.length_in,
        limit=move.allowance,
    )
    return True


def _only_through_a_zone(m: Measure, move: Move, route: Route, out: Findings) -> bool:
    """An end within the allowance only by a route through a zone it must keep out of."""
    if not route.zone_ids:
        return False
    mover = move.mover
    through = m.path(mover, frozenset(), route.limit_in - route.climb_in)[0]
    if through is None:
        return False
    crossed = _zones_crossed(through, route.field)
    other = crossed[0] if crossed else None
    how = inches(route.length_in) if route.length_in is not None else "impossible"
    out.flag(
        "control_zone",
        mover.id,
        f"{mover.id} could only reach its end within {inches(move.allowance)} by passing "
        f"within {inches(_zone_in(m))} of {other or 'a model'}; keeping clear it is {how}",
        other=other,
        measured=route.length_in,
        limit=move.allowance,
    )
    return True


def _no_route_clear_of_zones(m: Measure, move: Move, route: Route, out: Findings) -> bool:
    """No route keeps clear of the zones, though one through them exists."""
    if route.path is not None or not route.zone_ids:
        return False
    mover = move.mover
    through, _ = m.path(mover, frozenset(), route.cap_in - route.climb_in)
    if through is None:
        return False
    out.flag(
        "control_zone",
        mover.id,
        f"no route to {mover.id}'s end keeps {inches(_zone_in(m))} from the models it "
        f"must keep away from; passing through their zones it is "
        f"{inches(through.length_in + route.climb_in)}",
        measured=through.length_in + route.climb_in,
        limit=move.allowance,
    )
    return True


def _blocked(m: Measure, move: Move, route: Route, out: Findings) -> bool:
    """No legal path joins the start to the end at all."""
    if route.path is not None or route.field.connected():
        return False
    mover = move.mover
    out.flag("blocked", mover.id, f"no legal path leads from {mover.id}'s start to its end")
    return True


def _beyond_the_search(m: Measure, move: Move, route: Route, out: Findings) -> bool:
    """A legal path exists but is longer than the search went (three allowances)."""
    if route.path is not None:
        return False
    mover = move.mover
    out.flag(
        _movement_rule(mover),
        mover.id,
        f"{mover.id}'s shortest legal path is longer than {inches(route.cap_in)}; "
        f"its {mover.action} allows {inches(move.allowance)}",
        measured=route.cap_in,
        limit=move.allowance,
    )
    return True


def _over_allowance(m: Measure, move: Move, route: Route, out: Findings) -> bool:
    """The shortest legal path against the allowance (a charge that did not reach its
    target is a failed charge)."""
    mover, length = move.mover, route.length_in
    assert length is not None
    failed = mover.action == "charge" and not m.charge_reached(mover)
    what = "failed charge" if failed else mover.action
    out.flag(
        _movement_rule(mover),
        mover.id,
        f"{mover.id} moved {inches(length)} by the shortest legal path; "
        f"its {what} allows {inches(move.allowance)}",
        measured=length,
        limit=move.allowance,
    )
    return True


#: How a move is judged against its allowance: the first that settles it says so.
_MOVEMENT_JUDGEMENTS: tuple[Callable[[Measure, Move, Route, Findings], bool], ...] = (
    _fits,
    _too_close_to_call,
    _only_through_a_zone,
    _no_route_clear_of_zones,
    _blocked,
    _beyond_the_search,
    _over_allowance,
)


def _movement_rule(mover: Model) -> RuleName:
    """The rule a move over its allowance falls under: ``charge`` for a charge."""
    return "charge" if mover.action == "charge" else "movement"


def _zone_in(m: Measure) -> float:
    """The zone's range, or 0 for a game without zones."""
    return m.rules.zone.range_in if m.rules.zone else 0.0


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


# -- where it ended ---------------------------------------------------------------------------


def off_table(m: Measure, move: Move, out: Findings) -> None:
    """How far the moved base reaches beyond the table's edge, where the game forbids it."""
    mover, table = move.mover, m.scene.table
    if not mover.moved:
        return
    x0, y0, x1, y1 = mover.base.footprint(mover.pose).bounds
    beyond = max(-x0, -y0, x1 - table.width_in, y1 - table.depth_in)
    if beyond > m.tol and not m.rules.movement.may_leave_table:
        out.flag(
            "off_table",
            mover.id,
            f"{mover.id}'s base is {inches(beyond)} beyond the table edge",
            measured=beyond,
            limit=0.0,
        )


def base_overlap(m: Measure, move: Move, out: Findings) -> None:
    """How far the moved base overlaps another model's, edge to edge."""
    mover = move.mover
    if not mover.moved:
        return
    for other in m.nearby(mover, 0.0):
        if not m.reports_pair(mover, other):
            continue
        gap = m.distance(mover, other, within=0.0)
        if gap < -m.tol:
            out.flag(
                "base_overlap",
                mover.id,
                f"{mover.id}'s base overlaps {other.id}'s by {inches(-gap)}",
                other=other.id,
                measured=-gap,
                limit=0.0,
            )


def terrain_at_end(m: Measure, move: Move, out: Findings) -> None:
    """How deep the moved base stands inside terrain it cannot stand in, and whether its
    centre is over a gap, piece by piece."""
    mover = move.mover
    if not mover.moved:
        return
    footprint = mover.base.footprint(mover.pose)
    touching = shapely.intersects(footprint, m.scene.terrain_polygons)
    for piece, touches in zip(m.scene.terrain, touching, strict=True):
        if not touches:
            continue
        if piece.has("impassable") or (
            piece.has("climbable") and not on_top_of(piece, mover.pose, m.tol)
        ):
            depth = depth_inside(footprint, piece.polygon)
            if depth > m.tol:
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


def ramming_friends(m: Measure, move: Move, out: Findings) -> None:
    """Friendly models the move ended within the zone of, where that is a ramming."""
    mover, zone = move.mover, m.rules.zone
    if not mover.moved or zone is None or zone.friendly_entry != "ramming":
        return
    for other in m.nearby(mover, zone.range_in):
        if other.is_friend_of(mover) and m.reports_pair(mover, other):
            gap = m.distance(mover, other, within=zone.range_in)
            if gap < zone.range_in - m.tol:
                out.advise(
                    "ramming",
                    mover.id,
                    f"{mover.id} ended {inches(gap)} from friendly {other.id}: "
                    f"both roll a D6 against Integrity (Ramming Maneuver)",
                    other=other.id,
                    measured=gap,
                    limit=zone.range_in,
                )


def control_zones(m: Measure, move: Move, out: Findings) -> None:
    """Edge-to-edge distance from the moved model to each model whose zone it may not end
    in, against the zone's range (a charge that made no contact must stop short)."""
    mover, zone, action = move.mover, m.rules.zone, move.action
    if not mover.moved or zone is None:
        return
    exempt = m.zone_exempt(mover, action)
    close = {x.id for x in m.nearby(mover, zone.range_in)}
    for other in m.zone_sources(mover):
        if other.id in exempt or other.id not in close:
            continue
        gap = m.distance(mover, other, within=zone.range_in)
        if gap >= zone.range_in - m.tol:
            continue
        if action.stop_short_in is not None:
            out.flag(
                "charge",
                mover.id,
                f"{mover.id}'s charge made no base contact yet ended {inches(gap)} from "
                f"{other.id}: it must stop {inches(action.stop_short_in)} away",
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


def clear_of_enemies(m: Measure, move: Move, out: Findings) -> None:
    """Edge-to-edge distance from the moved model to each enemy, for an action that must
    end more than a distance from every enemy (a retreat)."""
    mover, clear = move.mover, move.action.end_clear_of_enemies_in
    if not mover.moved or m.rules.zone is None or clear is None:
        return
    for other in m.nearby(mover, clear):
        if other.is_friend_of(mover):
            continue
        gap = m.distance(mover, other, within=clear)
        if gap <= clear - m.tol:
            out.flag(
                "retreat",
                mover.id,
                f"{mover.id} must end its {mover.action} more than {inches(clear)} from "
                f"every enemy; it is {inches(gap)} from {other.id}",
                other=other.id,
                measured=gap,
                limit=clear,
            )


# -- consequences -----------------------------------------------------------------------------


def action_advisory(m: Measure, move: Move, out: Findings) -> None:
    """The roll the declared action asks for, if any."""
    mover, advisory = move.mover, move.action.advisory
    if advisory:
        out.advise(
            advisory,
            mover.id,
            f"{mover.id}'s {mover.action} needs a {advisory.replace('_', ' ')}",
        )


def rammed_target(m: Measure, move: Move, out: Findings) -> None:
    """Base contact with the target of a ramming action."""
    mover = move.mover
    target = m.scene.get(mover.target)
    if move.action.ramming and target is not None and m.in_contact(mover, target):
        out.advise(
            "ramming",
            mover.id,
            f"{mover.id} rammed {target.id}: both roll a D6 against Integrity",
            other=target.id,
        )


def failed_charge(m: Measure, move: Move, out: Findings) -> None:
    """Edge-to-edge distance from a charger to its target, against the zone's range."""
    mover = move.mover
    target = m.scene.get(mover.target)
    if mover.action != "charge" or target is None or not mover.moved:
        return
    gap = m.distance(mover, target)
    zone = m.rules.zone.range_in if m.rules.zone else 1.0
    if gap > zone + m.tol:
        out.advise(
            "charge",
            mover.id,
            f"{mover.id}'s charge failed: it ended {inches(gap)} from {target.id}",
            other=target.id,
            measured=gap,
            limit=zone,
        )


def dangerous_terrain(m: Measure, move: Move, out: Findings) -> None:
    """Dangerous terrain the measured route crosses (a skimmer that ignores difficult
    terrain flies over it)."""
    mover = move.mover
    if len(move.route) < 2:
        return
    line = LineString(move.route)
    skims = m.rules.movement.difficult_factor(mover.keywords) == 1.0 and mover.has("skimmer")
    for piece in m.scene.terrain:
        if piece.has("dangerous") and line.intersects(piece.polygon) and not skims:
            out.advise(
                "dangerous_terrain",
                mover.id,
                f"{mover.id} crossed dangerous terrain {piece.id}: it must test",
                other=piece.id,
            )


#: What is checked of each move once it has been measured, in this order.
MOVE_CHECKS: tuple[MoveCheck, ...] = (
    off_table,
    base_overlap,
    terrain_at_end,
    ramming_friends,
    control_zones,
    clear_of_enemies,
    action_advisory,
    rammed_target,
    failed_charge,
    dangerous_terrain,
)


# -- units ------------------------------------------------------------------------------------


def coherency(m: Measure, side: str, unit: str, out: Findings) -> None:
    """Each unit-mate's gap to its nearest linked mate, and (where the unit must form one
    chain) the gap between its groups, against the coherency range."""
    rules = m.rules.coherency
    members = [x for x in m.scene.models if x.side == side and x.unit == unit]
    if rules is None or len(members) < 2:
        return
    gap, linked = _unit_links(m, members)
    report = out.flag if rules.severity == "violation" else out.advise
    n = len(members)
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
    if rules.connected and not lonely:
        _unit_split(m, unit, members, gap, linked, out)


def _unit_links(m: Measure, members: list[Model]) -> tuple[list[list[float]], list[list[bool]]]:
    """The edge-to-edge gap between every two unit-mates, and whether they are linked."""
    rules = m.rules.coherency
    assert rules is not None
    n = len(members)
    gap = [[math.inf] * n for _ in range(n)]
    linked = [[False] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            d = m.distance(members[i], members[j])
            gap[i][j] = gap[j][i] = d
            ok = in_coherency(d, rise_between(members[i], members[j]), rules, m.tol)
            linked[i][j] = linked[j][i] = ok
    return gap, linked


def _unit_split(
    m: Measure,
    unit: str,
    members: list[Model],
    gap: list[list[float]],
    linked: list[list[bool]],
    out: Findings,
) -> None:
    """The gap from each smaller group of a split unit to its largest group."""
    rules = m.rules.coherency
    assert rules is not None
    report = out.flag if rules.severity == "violation" else out.advise
    groups = components(linked)
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


#: What is checked of each unit a judged model belongs to.
UNIT_CHECKS: tuple[UnitCheck, ...] = (coherency,)
