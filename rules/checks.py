"""The referee's checks: each one rule of a game, measured, with the numbers.

A check is a small function that looks at one move (or one unit) and records what it
finds in a :class:`~tablesight.rules.verdict.Findings`; the referee
(:mod:`tablesight.rules.referee`) runs them
in this order. What differs between games is data in ``rules/games/*.toml``, the game's
own words included (the charge actions, the engaged status, a ramming's roll), and the
few checks a game adds in its module beside it (:mod:`tablesight.rules.games`).

1. :func:`declared_action`: the action the move is held to (an action the model may not
   take earns none of its exemptions), then :func:`engaged`;
2. :func:`tablesight.rules.movement.movement`: the move measured against its allowance;
3. ``MOVE_CHECKS``, in order: where it ended, the zones, the action's consequences;
4. ``UNIT_CHECKS`` for each unit a judged model belongs to (:mod:`tablesight.rules.coherency`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import shapely
from shapely.geometry import LineString, Point
from shapely.ops import substring

from tablesight.rules.coherency import coherency
from tablesight.rules.field import on_top_of
from tablesight.rules.geometry import depth_inside
from tablesight.rules.measure import Measure, Move
from tablesight.rules.movement import search_cap_in, step_in_climb, step_slack_in
from tablesight.rules.pathing import Path
from tablesight.rules.ruleset import ActionRules
from tablesight.rules.scene import Model, Terrain
from tablesight.rules.verdict import FLOAT_EPS_IN, Findings, RuleName, inches

#: A check of one move: what it finds goes into the findings.
MoveCheck = Callable[[Measure, Move, Findings], None]
#: A check of one unit, by its side and name.
UnitCheck = Callable[[Measure, str, str, Findings], None]


def _action_rule(m: Measure, mover: Model) -> RuleName:
    """The rule a wrong declaration falls under: ``charge`` for a charge, else ``action``."""
    return "charge" if m.rules.is_charge(mover.action) else "action"


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
    _keywords_and_status(m, mover, action, out)
    target = m.scene.get(mover.target)
    if target is None or action.target == "none":
        return len(out.violations) == flagged
    _target_allowed(m, mover, target, action, out)
    permitted = len(out.violations) == flagged
    _target_in_range(m, mover, target, action, out)
    if action.interposing and not target.is_friend_of(mover):
        _interposing(m, mover, target, action, out)
    return permitted


def _keywords_and_status(m: Measure, mover: Model, action: ActionRules, out: Findings) -> None:
    """Keywords the action needs that the model lacks, and keywords or statuses that bar it."""
    rule = _action_rule(m, mover)
    for keyword in action.requires_keywords:
        if not mover.has(keyword):
            out.flag(rule, mover.id, f"{mover.id} needs '{keyword}' to make a {mover.action} move")
    for keyword in action.forbidden_keywords:
        if mover.has(keyword):
            out.flag(rule, mover.id, f"a model with '{keyword}' may not {mover.action}")
    for status in action.forbidden_status:
        if status in mover.status:
            out.flag(rule, mover.id, f"{mover.id} is {status} and may not {mover.action}")


def _target_allowed(
    m: Measure, mover: Model, target: Model, action: ActionRules, out: Findings
) -> None:
    """A friendly target, or a target whose keywords the action may not be aimed at."""
    rule = _action_rule(m, mover)
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
            _action_rule(m, mover),
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
    # Clear means reaching the target's 1" before any other enemy's: the route is searched
    # into the goal with every other zone whole (one that covers the target's centre too).
    clear = m.route_into(mover, target, goal, frozenset(zones))
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
    """An engaged model that moved under an action not allowed when engaged: engaged by its
    status, or (where the game says so) by where it and the enemies stood at the start."""
    mover = move.mover
    if not mover.moved or move.action.allowed_when_engaged:
        return
    status = m.rules.engaged_status
    if status is not None and status in mover.status:
        out.flag(
            "engaged",
            mover.id,
            f"{mover.id} is {status} and may not {mover.action} this phase",
        )
        return
    within = m.rules.zone.engaged_within_in if m.rules.zone else None
    if within is None:
        return
    enemies = [x for x in m.scene.models if not x.is_friend_of(mover)]
    gaps = [(m.distance(mover, x, at_start=True, within=within + m.tol), x) for x in enemies]
    close = [(gap, x) for gap, x in gaps if gap <= within + m.tol]
    if not close:
        return
    gap, enemy = min(close, key=lambda p: p[0])
    out.flag(
        "engaged",
        mover.id,
        f"{mover.id} started {inches(gap)} from {enemy.id}, within {inches(within)}: "
        f"it is engaged and may only move away by a retreat, not a {mover.action}",
        other=enemy.id,
        measured=gap,
        limit=within,
    )


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
        elif _resting_on_too_narrow(m, mover, piece):
            width = mover.base.radius_in * 2.0
            out.flag(
                "terrain",
                mover.id,
                f"{mover.id} ended on top of {piece.id}, {inches(piece.width_in)} wide, "
                f"narrower than its {inches(width)} base: a model cannot rest there",
                other=piece.id,
                measured=piece.width_in,
                limit=width * (m.rules.movement.rest_min_top_fraction or 0.0),
            )
        elif piece.has("gap") and piece.polygon.contains(Point(mover.pose.xy)):
            out.flag(
                "terrain",
                mover.id,
                f"{mover.id} ended over gap {piece.id}: a model cannot stand in a gap",
                other=piece.id,
            )


def _resting_on_too_narrow(m: Measure, mover: Model, piece: Terrain) -> bool:
    """Whether ``mover`` ended on top of ``piece`` where the game says a top that narrow
    cannot hold its base."""
    fraction = m.rules.movement.rest_min_top_fraction
    return (
        fraction is not None
        and on_top_of(piece, mover.pose, m.tol)
        and piece.width_in < fraction * 2.0 * mover.base.radius_in - m.tol
    )


def ramming_friends(m: Measure, move: Move, out: Findings) -> None:
    """Friendly models the move ended within the zone of, or had to pass within the zone
    of on every route its allowance allows, where that is a ramming."""
    mover, zone, ramming = move.mover, m.rules.zone, m.rules.ramming
    if not mover.moved or zone is None or zone.friendly_entry != "ramming":
        return
    assert ramming is not None  # the ruleset's file names the ramming where zones ram
    friends = m.friendly_zones(mover)
    ids = {x.id for x in friends}
    ended_in: set[str] = set()
    for other in m.nearby(mover, zone.range_in):
        if other.id in ids:
            gap = m.distance(mover, other, within=zone.range_in)
            if gap < zone.range_in - m.tol:
                ended_in.add(other.id)
                if m.reports_pair(mover, other):
                    out.advise(
                        "ramming",
                        mover.id,
                        f"{mover.id} ended {inches(gap)} from friendly {other.id}: "
                        f"both roll {ramming.roll} ({ramming.name})",
                        other=other.id,
                        measured=gap,
                        limit=zone.range_in,
                    )
    passed = [x for x in friends if x.id not in ended_in]
    for other, clear_in in _friends_passed(m, move, passed, zone.range_in):
        how = "none" if clear_in is None else inches(clear_in)
        out.advise(
            "ramming",
            mover.id,
            f"every route of {mover.id} within its {inches(move.allowance)} passes within "
            f"{inches(zone.range_in)} of friendly {other.id} (keeping clear: {how}): "
            f"{mover.id} and {other.id} roll {ramming.roll} ({ramming.name})",
            other=other.id,
            measured=clear_in,
            limit=move.allowance,
        )


def _friends_passed(
    m: Measure, move: Move, friends: list[Model], zone_in: float
) -> list[tuple[Model, float | None]]:
    """The friends of a legal move whose zone every route within its allowance enters,
    each with the shortest route that keeps clear of it (None when there is none)."""
    mover = move.mover
    limit = move.allowance + m.tol + FLOAT_EPS_IN
    if not friends or move.used is None or move.used > limit or len(move.route) < 2:
        return []
    route = LineString(move.route)
    grow_in = max(zone_in - m.tol, 0.0) + mover.base.radius_in
    # A route through a point within ``reach`` of a friend's centre is at least as long
    # as the two straight legs through it, less twice that reach.
    xy = np.asarray([x.pose.xy for x in friends], dtype=float)
    reach = np.asarray([x.base.reach_in for x in friends], dtype=float) + grow_in
    legs = np.hypot(*(xy - mover.start.xy).T) + np.hypot(*(xy - mover.pose.xy).T)
    kept = m.kept_out(mover, move.action)
    passed: list[tuple[Model, float | None]] = []
    for k in np.flatnonzero(legs - 2.0 * reach <= limit + step_slack_in(m, mover)):
        other = friends[k]
        if m.distance(mover, other, at_start=True) < zone_in - m.tol:
            continue  # it started in that zone: leaving it is no ramming
        if not route.intersects(other.base.inflated(other.pose, grow_in, "inner")):
            continue  # the measured route itself keeps clear
        bound = search_cap_in(move.allowance) + step_slack_in(m, mover)
        clear, _ = m.path(mover, kept | {other.id}, bound)
        if clear is None:
            passed.append((other, None))
            continue
        step = step_in_climb(m, mover, clear)
        if clear.lower_in - step > limit:
            passed.append((other, clear.length_in - step))
    return passed


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
    mover, ramming = move.mover, m.rules.ramming
    target = m.scene.get(mover.target)
    if move.action.ramming and target is not None and m.in_contact(mover, target):
        assert ramming is not None  # the ruleset's file names it where an action rams
        out.advise(
            "ramming",
            mover.id,
            f"{mover.id} rammed {target.id}: both roll {ramming.roll}",
            other=target.id,
        )


def failed_charge(m: Measure, move: Move, out: Findings) -> None:
    """Edge-to-edge distance from a charger to its target, against the zone's range; where
    a failed charge must still move its full distance, what it moved against its allowance."""
    mover = move.mover
    target = m.scene.get(mover.target)
    if not move.action.charge or target is None or not mover.moved:
        return
    gap = m.distance(mover, target)
    zone = m.rules.zone.range_in if m.rules.zone else 1.0
    if gap <= zone + m.tol:
        return
    if _stopped_early(m, move):
        assert move.used is not None
        out.flag(
            "charge",
            mover.id,
            f"{mover.id}'s charge failed {inches(gap)} from {target.id} after "
            f"{inches(move.used)} of its {inches(move.allowance)}: a failed charge must "
            f"still move the full distance",
            other=target.id,
            measured=move.used,
            limit=move.allowance,
        )
        return
    out.advise(
        "charge",
        mover.id,
        f"{mover.id}'s charge failed: it ended {inches(gap)} from {target.id}",
        other=target.id,
        measured=gap,
        limit=zone,
    )


def _stopped_early(m: Measure, move: Move) -> bool:
    """A failed charge that had to move its full distance ended short of it, and not
    because it stopped its ``stop_short_in`` away from an enemy."""
    mover, action = move.mover, move.action
    if not action.failed_moves_full or move.used is None:
        return False
    if move.used >= move.allowance - m.tol:
        return False
    stop = action.stop_short_in
    if stop is None:
        return True
    sources = {x.id for x in m.zone_sources(mover)}
    return not any(
        m.distance(mover, x, within=stop + m.tol) <= stop + m.tol
        for x in m.nearby(mover, stop + m.tol)
        if x.id in sources
    )


def charge_route(m: Measure, move: Move, out: Findings) -> None:
    """Which way a charge went, where the game's text asks it (``charge_route``): the judge
    sees where the charger started and ended, not the way it was carried, so it measures
    from those two places the shortest legal way to base contact with the target."""
    mover, action = move.mover, move.action
    target = m.scene.get(mover.target)
    if (
        not action.charge
        or action.charge_route == "any"
        or target is None
        or target.is_friend_of(mover)
        or not mover.moved
    ):
        return
    if action.charge_route == "toward":
        _toward(m, mover, target, out)
    else:
        _shortest_route(m, mover, target, out)


def _toward(m: Measure, mover: Model, target: Model, out: Findings) -> None:
    """A charge that ended no nearer base contact with its target than it started: further
    by more than the tolerance, or (having moved more than the tolerance) nearer by no more
    than it. A charger left where it stood, give or take the tolerance, went nowhere."""
    if mover.start.distance_to(mover.pose) <= m.tol:
        return
    before = m.to_contact(mover, target, at_start=True)
    after = m.to_contact(mover, target)
    if before is None or after is None or after < before - m.tol:
        return
    how = (
        f"{inches(after - before)} further than where it started ({inches(before)})"
        if after > before + m.tol
        else f"no nearer than where it started ({inches(before)})"
    )
    out.flag(
        "charge",
        mover.id,
        f"{mover.id}'s charge ended {inches(after)} from base contact with {target.id}, "
        f"{how}: a charge moves toward its target",
        other=target.id,
        measured=after,
        limit=before,
    )


def _shortest_route(m: Measure, mover: Model, target: Model, out: Findings) -> None:
    """A charge that ended in base contact with its target by a way longer, by more than
    the tolerance, than the shortest route to base contact: its shortest legal path from
    start to end (zones open to it, climbs counted alike) against that route."""
    if not m.in_contact(mover, target):
        return
    shortest = m.to_contact(mover, target, at_start=True)
    path, _ = m.path(mover, frozenset())
    if shortest is None or path is None or path.length_in <= shortest + m.tol:
        return
    out.flag(
        "charge",
        mover.id,
        f"{mover.id}'s charge took {inches(path.length_in)} to reach {target.id}, "
        f"{inches(path.length_in - shortest)} longer than the shortest route to base "
        f"contact ({inches(shortest)}): a charge should take the shortest route possible",
        other=target.id,
        measured=path.length_in,
        limit=shortest,
    )


def dangerous_terrain(m: Measure, move: Move, out: Findings) -> None:
    """Dangerous terrain the measured route crosses (a mover the game exempts, whose
    difficult terrain costs nothing extra, flies over it: a skimmer)."""
    mover, movement = move.mover, m.rules.movement
    if len(move.route) < 2:
        return
    line = LineString(move.route)
    skims = movement.difficult_factor(mover.keywords) == 1.0 and any(
        mover.has(k) for k in movement.dangerous_exempt_keywords
    )
    for piece in m.scene.terrain:
        if piece.has("dangerous") and line.intersects(piece.polygon) and not skims:
            out.advise(
                "dangerous_terrain",
                mover.id,
                f"{mover.id} crossed dangerous terrain {piece.id}: it must test",
                other=piece.id,
            )


def handling_test(m: Measure, move: Move, out: Findings) -> None:
    """Difficult or dangerous terrain a mover that must then test (a skimmer) ended on:
    its base more than the tolerance inside the piece."""
    mover, keywords = move.mover, m.rules.movement.handling_test_keywords
    if not mover.moved or not any(mover.has(k) for k in keywords):
        return
    footprint = mover.base.footprint(mover.pose)
    for piece in m.scene.terrain:
        kind = next((k for k in ("dangerous", "difficult") if piece.has(k)), None)
        if kind is None or depth_inside(footprint, piece.polygon) <= m.tol:
            continue
        out.advise(
            "handling_test",
            mover.id,
            f"{mover.id} ended on {kind} terrain {piece.id}: it must pass a Handling test",
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
    charge_route,
    dangerous_terrain,
    handling_test,
)


# -- units ------------------------------------------------------------------------------------


#: What is checked of each unit a judged model belongs to.
UNIT_CHECKS: tuple[UnitCheck, ...] = (coherency,)
