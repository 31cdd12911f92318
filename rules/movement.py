"""How far a move went: its shortest legal route against the declared action's allowance.

:func:`movement` measures a move (the shortest route that keeps out of the zones it may
not enter, with terrain and climbing costs) and flags it when that is over the allowance.
Which finding it is depends on why: the first of ``_MOVEMENT_JUDGEMENTS`` that settles
the move says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import shapely
from shapely.geometry import Point

from tablesight.rules.field import MoveField
from tablesight.rules.measure import Measure, Move
from tablesight.rules.pathing import Path
from tablesight.rules.scene import Model
from tablesight.rules.verdict import FLOAT_EPS_IN, Findings, MoveReport, RuleName, inches


@dataclass(frozen=True)
class Route:
    """The shortest legal route of a move as measured: the path keeping out of the zones
    of ``zone_ids`` (None when none is within ``cap_in``), its climbs' costs included, the
    field it was found in, and the travel its climbs already cover (``step_in``)."""

    path: Path | None
    field: MoveField
    zone_ids: frozenset[str]
    step_in: float
    cap_in: float
    limit_in: float

    @property
    def length_in(self) -> float | None:
        """The route's length with its climbs, or None when there is none."""
        return None if self.path is None else self.path.length_in - self.step_in

    @property
    def lower_in(self) -> float | None:
        """The least the route's length with its climbs may be, or None when there is none."""
        return None if self.path is None else self.path.lower_in - self.step_in


def legal_route(m: Measure, move: Move) -> Route:
    """The shortest route from start to end that keeps out of the zones the action does
    not exempt, with its climbs' costs, searched up to three times the allowance."""
    mover, allowance = move.mover, move.allowance
    zone_ids = m.kept_out(mover, move.action)
    cap = search_cap_in(allowance)
    path, field_ = m.path(mover, zone_ids, cap + step_slack_in(m, mover))
    step = step_in_climb(m, mover, path)
    return Route(path, field_, zone_ids, step, cap, allowance + m.tol + FLOAT_EPS_IN)


def step_slack_in(m: Measure, mover: Model) -> float:
    """How much longer than its length a path may be searched for, for the travel its
    climbs cover (the steps of up to three climbs)."""
    return 6.0 * mover.base.radius_in if m.rules.movement.climb_includes_step else 0.0


def step_in_climb(m: Measure, mover: Model, path: Path | None) -> float:
    """The part of ``path`` its climbs already cover, where the game says so: for each
    climb that costs anything, the horizontal travel while the base straddles the edge
    climbed onto (or down from), its centre within its radius of where it crossed, up to
    the base's depth.

    From base contact at a wall's foot to standing wholly on the roof is that depth, so
    the climb alone is what it costs.
    """
    if not m.rules.movement.climb_includes_step or path is None:
        return 0.0
    r = mover.base.radius_in
    line = path.line()
    return sum(
        min(2.0 * r, float(line.intersection(Point(c.at).buffer(r, quad_segs=32)).length))
        for c in path.climbs
        if c.cost_in > 0.0
    )


def search_cap_in(allowance_in: float) -> float:
    """How far a route is searched for: nobody needs the exact length of a detour three
    times the allowance."""
    return max(3.0 * allowance_in, allowance_in + 12.0)


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
        () if route.path is None else route.path.climbs,
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
    through = m.path(mover, frozenset(), route.limit_in + step_slack_in(m, mover))[0]
    if through is None or through.length_in - step_in_climb(m, mover, through) > route.limit_in:
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
    through, _ = m.path(mover, frozenset(), route.cap_in + step_slack_in(m, mover))
    if through is None:
        return False
    length = through.length_in - step_in_climb(m, mover, through)
    out.flag(
        "control_zone",
        mover.id,
        f"no route to {mover.id}'s end keeps {inches(_zone_in(m))} from the models it "
        f"must keep away from; passing through their zones it is "
        f"{inches(length)}",
        measured=length,
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
        _movement_rule(m, mover),
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
    failed = m.rules.is_charge(mover.action) and not m.charge_reached(mover)
    what = f"failed {mover.action}" if failed else mover.action
    out.flag(
        _movement_rule(m, mover),
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


def _movement_rule(m: Measure, mover: Model) -> RuleName:
    """The rule a move over its allowance falls under: ``charge`` for one of the game's
    charges."""
    return "charge" if m.rules.is_charge(mover.action) else "movement"


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
