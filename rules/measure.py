"""What the checks measure on one scene under one ruleset: distances, zones and routes.

A :class:`Move` is one model's move as the checks see it.

``Measure(scene, ruleset)`` answers in table inches, and keeps what it works out (the
models' positions as arrays, each mover's zone sources) for the checks of one judgement.
The checks (:mod:`tablesight.rules.checks`) ask it; the views ask it which zones to draw.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from shapely.geometry import Polygon

from tablesight.rules.field import CutBack, MoveField
from tablesight.rules.geometry import Pose, centre_to_base, edge_distance, gap_lower_bound
from tablesight.rules.pathing import Path, shortest_path
from tablesight.rules.ruleset import ActionRules, Ruleset
from tablesight.rules.scene import Model, Scene
from tablesight.rules.verdict import Finding


@dataclass(frozen=True)
class Move:
    """One model's move as the checks see it: the model, the action it is held to, how
    far that action lets it move, the route it was measured along and what that route
    cost (inches)."""

    mover: Model
    action: ActionRules
    allowance: float
    route: tuple[tuple[float, float], ...] = ()
    #: The length of the shortest legal route with its terrain and climbing costs, once
    #: measured (None before, or when no route was found).
    used: float | None = None


#: Two heights closer than this are one level (a camera's heights scatter by less): their
#: bases are measured in plan.
SAME_LEVEL_IN = 0.5


class Measure:
    """Distances, zones and routes on one scene under one ruleset, in inches."""

    def __init__(self, scene: Scene, ruleset: Ruleset) -> None:
        self.scene = scene
        self.rules = ruleset
        self.tol = scene.tolerance_in
        #: The models judged together: a pair of them is reported once.
        self.batch: frozenset[str] = frozenset()
        self._sources: dict[str, list[Model]] = {}
        self._xy: np.ndarray | None = None
        self._reach = np.zeros(0)

    # -- a move's allowance and how sure a measurement is ------------------------------------

    def allowance(self, mover: Model, action: ActionRules) -> float:
        """How far the declared action lets the model move, in inches."""
        allowance = mover.movement_in * action.factor
        if action.add_roll and mover.roll is not None:
            allowance += mover.roll
        if action.max_in is not None:
            allowance = min(allowance, action.max_in)
        return allowance

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

    # -- distances ---------------------------------------------------------------------------

    def distance(
        self,
        a: Model,
        b: Model,
        at_start: bool = False,
        within: float = math.inf,
        in_plan: bool = False,
    ) -> float:
        """Edge-to-edge distance between two models as they stand (or stood at ``a``'s start),
        as a tape measures it: bases on different levels (heights at least
        ``SAME_LEVEL_IN`` apart) are as far apart as the straight line between their
        nearest edges, so a model on a 7" roof is 7" from one at the wall's foot below it
        and its base overlaps nothing down there. ``in_plan``: the distance seen from above.

        When the bases are certainly further apart than ``within``, a cheaper lower bound
        (still above ``within``) is returned instead.
        """
        pose_a = a.start if at_start else a.pose
        pose_b = b.start if at_start else b.pose
        bound = gap_lower_bound(a.base, pose_a, b.base, pose_b)
        if bound > within:
            return bound
        gap = edge_distance(a.base, pose_a, b.base, pose_b)
        rise = abs(pose_a.z - pose_b.z)
        if in_plan or rise < SAME_LEVEL_IN:
            return gap
        return math.hypot(max(gap, 0.0), rise)

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

    def reports_pair(self, mover: Model, other: Model) -> bool:
        """Whether a finding about the pair goes under ``mover``: the first id when both
        are judged together."""
        return other.id not in self.batch or mover.id < other.id

    def in_contact(self, a: Model, b: Model) -> bool:
        """Whether two bases touch, give or take the tolerance."""
        return self.distance(a, b, within=self.tol) <= self.tol

    def charge_reached(self, mover: Model) -> bool:
        """Whether a charger ended within the zone's range of its target."""
        target = self.scene.get(mover.target)
        zone = self.rules.zone.range_in if self.rules.zone else 1.0
        return target is not None and self.distance(mover, target) <= zone + self.tol

    # -- zones -------------------------------------------------------------------------------

    def zone_sources(self, mover: Model) -> list[Model]:
        """Models whose zone ``mover`` may not enter, before any action's exemption."""
        if mover.id not in self._sources:
            self._sources[mover.id] = [m for m in self.scene.models if self._projects(m, mover)]
        return self._sources[mover.id]

    def _projects(self, other: Model, mover: Model) -> bool:
        """Whether ``other`` projects a zone that ``mover`` must keep out of."""
        zone = self.rules.zone
        if zone is None or other.id == mover.id:
            return False
        if any(mover.has(k) for k in zone.movers_exempt_keywords):
            return False
        if other.is_friend_of(mover) and (
            zone.applies_to == "enemy" or zone.friendly_entry == "ramming"
        ):
            return False
        if any(other.has(k) for k in zone.sources_exclude_keywords):
            return False
        exempt = zone.exempt_when_status_all
        return not (exempt and all(s in other.status for s in exempt))

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

    def kept_out(self, mover: Model, action: ActionRules) -> frozenset[str]:
        """The models whose zones ``mover``'s route must keep out of under ``action``."""
        exempt = self.zone_exempt(mover, action)
        return frozenset(x.id for x in self.zone_sources(mover) if x.id not in exempt)

    def friendly_zones(self, mover: Model) -> list[Model]:
        """Friendly models whose zone ``mover`` may enter at the cost of a ramming roll."""
        zone = self.rules.zone
        if zone is None or zone.friendly_entry != "ramming":
            return []
        if any(mover.has(k) for k in zone.movers_exempt_keywords):
            return []
        return [
            x
            for x in self.scene.models
            if x.id != mover.id
            and x.is_friend_of(mover)
            and not any(x.has(k) for k in zone.sources_exclude_keywords)
        ]

    # -- routes ------------------------------------------------------------------------------

    def path(
        self, mover: Model, zone_ids: frozenset[str], bound_in: float = math.inf
    ) -> tuple[Path | None, MoveField]:
        """The shortest legal path from ``mover``'s start to its end, keeping out of the
        zones of ``zone_ids`` (None if none is shorter than ``bound_in``), and its field."""
        field_ = MoveField(self.scene, self.rules, mover, zone_ids)
        return shortest_path(mover.start.xy, mover.pose.xy, field_, bound_in=bound_in), field_

    def route_to(
        self,
        probe: Model,
        target: Model,
        zone_ids: frozenset[str],
        ignore: frozenset[str] = frozenset(),
    ) -> Path | None:
        """Shortest route from ``probe``'s start to ``target``'s centre.

        The target, and the models in ``ignore``, are not obstacles on the way.
        """
        moving = _moved_to(probe, target.pose.xy)
        field_ = MoveField(self._without(target, ignore), self.rules, moving, zone_ids)
        return shortest_path(moving.start.xy, moving.pose.xy, field_)

    def route_into(
        self, probe: Model, target: Model, goal: Polygon, zone_ids: frozenset[str]
    ) -> Path | None:
        """Shortest route from ``probe``'s start towards ``target``'s centre that keeps out
        of the zones of ``zone_ids`` (whole) until it enters ``goal``, a region around the
        target; what lies inside ``goal`` does not stand in the way."""
        standing = _moved_to(probe, probe.start.xy)  # zones shrink for the start alone
        field_ = MoveField(self._without(target), self.rules, standing, zone_ids)
        return shortest_path(probe.start.xy, target.pose.xy, CutBack(field_, goal))

    def to_contact(self, mover: Model, target: Model, at_start: bool = False) -> float | None:
        """How far ``mover`` stood from base contact with ``target`` by the shortest legal
        way, where it ended (or where it started): the cost in inches (terrain counted as
        a move counts it, climbs too) of the shortest route for its centre to where its
        base would first touch the target's as it stands. No zone is kept out of (a charge
        that makes contact may enter them), the target is not in the way, every other
        obstacle is. In open ground it is the edge-to-edge gap. 0 within the tolerance of
        contact; None when no route leads there.
        """
        here = mover.start if at_start else mover.pose
        gap = edge_distance(mover.base, here, target.base, target.pose)
        if gap <= self.tol:
            return max(gap, 0.0)
        r = mover.base.radius_in
        there = Pose(target.pose.x, target.pose.y, here.heading, target.pose.z)
        probe = dataclasses.replace(mover, start=here, end=there)
        goal = target.base.inflated(target.pose, r, "inner")
        field_ = CutBack(MoveField(self._without(target), self.rules, probe), goal)
        route = shortest_path(here.xy, there.xy, field_)
        if route is None:
            return None
        entry = _first_contact(route.points, target, r)
        if len(route.points) == 2 and route.length_in <= here.distance_to(there) + 1e-12:
            return math.dist(here.xy, entry)  # a straight route through open ground
        head = shortest_path(here.xy, entry, field_)  # the same route, up to contact
        return None if head is None else head.length_in

    def _without(self, target: Model, ignore: frozenset[str] = frozenset()) -> Scene:
        """The scene without ``target`` and the models in ``ignore``."""
        return Scene(
            self.scene.table,
            tuple(m for m in self.scene.models if m.id != target.id and m.id not in ignore),
            self.scene.terrain,
            self.scene.tolerance_in,
        )


def _moved_to(model: Model, xy: tuple[float, float]) -> Model:
    """``model`` as if it had moved from its start to ``xy``."""
    return dataclasses.replace(model, end=Pose(xy[0], xy[1], model.start.heading, model.start.z))


def _first_contact(
    points: tuple[tuple[float, float], ...], target: Model, radius_in: float
) -> tuple[float, float]:
    """Where a disc of ``radius_in`` moving along ``points`` first touches ``target``'s base
    (the route ends at the target's centre, so it does): found on the first leg that ends
    touching, to 1e-10 in (the distance to a base is convex along a line)."""
    base, pose = target.base, target.pose
    prev = points[0]
    for point in points[1:]:
        if centre_to_base(base, pose, point) <= radius_in:
            lo, hi = 0.0, 1.0
            while math.dist(prev, point) * (hi - lo) > 1e-10:
                mid = (lo + hi) / 2.0
                at = (prev[0] + mid * (point[0] - prev[0]), prev[1] + mid * (point[1] - prev[1]))
                if centre_to_base(base, pose, at) <= radius_in:
                    hi = mid
                else:
                    lo = mid
            return (prev[0] + hi * (point[0] - prev[0]), prev[1] + hi * (point[1] - prev[1]))
        prev = point
    return points[-1]
