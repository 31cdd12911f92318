"""Shortest legal path for a model's centre among obstacles and costly regions.

The moving base is a disc (its radius is half its smallest dimension: a model may
pivot freely while it moves), so every obstacle is what it blocks grown by that
radius, and the question becomes a shortest path for a point. Each obstacle here is
a *core* (a point, or a polygon) grown by a radius: a round base grown by a radius
is a disc around its centre, a wall grown by a radius is the wall with rounded
corners. Around such shapes a shortest path is made of straight segments tangent to
the rounded corners and of arcs around them, so the search is A* over tangent
states: (corner disc, direction of travel around it, where on it the path arrived).
Lengths are exact for round bases and polygons; the only approximation left is an
oval base's curve, which comes as two cores, one inside the true curve and one
around it, giving a lower and an upper bound.

Difficult terrain is a region where each inch of travel costs ``weight`` inches: the
search may bend at region corners, and then the points where each straight run of the
route crosses region boundaries slide along those boundaries, all together, to the
cheapest crossings (the optimum refracts, as light does; the run's cost is convex in
where each crossing lies along its edge).

>>> from shapely.geometry import Point, box
>>> round(shortest_path((0, 0), (9, 0), [Obstacle("wall", box(4, -2, 5, 2))]).length_in, 4)
9.9443
>>> disc = Obstacle("model", Point(5, 0), 1.0)   # tangents 2 * sqrt(24) plus arc 2 asin(1/5)
>>> round(shortest_path((0, 0), (10, 0), [disc]).length_in, 6)
10.200675

A raised level (a crate's lid, a platform, a wall's top) is a footprint at a height: a
route standing over it stands on it, and each change of level along the route costs what
``climb`` says a rise (or a drop) of that height costs. Its sides block a base on
anything lower unless the route climbs onto it there, so going round a level is the
shortest path around its footprint grown by the base, and climbing is a straight run
over its edge: the search bends at the same corners either way and weighs each run with
the climbs it makes, so a route may go up, across and down any number of levels.

>>> crate = Level("crate", box(4, -6, 5, 6), 2.0, 0.5)   # 2" high, 1" thick, 12" long
>>> over = shortest_path((0, 0), (9, 0), [], levels=[crate], climb=abs)
>>> round(over.length_in, 4), [(c.rise_in, c.cost_in) for c in over.climbs]
(13.0, [(2.0, 2.0), (-2.0, 2.0)])
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import shapely
from shapely.geometry import LineString, Point, Polygon
from shapely.geometry.base import BaseGeometry

from tablesight.rules.levels import (
    XY,
    Climb,
    ClimbCost,
    Level,
    Levels,
    cuts,
    ring,
    touching_boxes,
)
from tablesight.rules.refraction import crossings, distance_to_edges, golden, joint, norm, within

#: How far a path may graze into an obstacle without counting (rounding of tangents).
GRAZE_IN = 1e-7
#: Points per full turn at which arcs are checked for running into other obstacles (every
#: 3 degrees: a grown obstacle is at least a base wide, far wider than that on any disc).
ARC_SAMPLES = 120
_TWO_PI = 2.0 * math.pi


@dataclass(frozen=True)
class Obstacle:
    """Somewhere the moving centre may not go: every point within ``radius_in`` of ``core``.

    ``core`` is a point or a polygon. Where the true core is curved (an oval base),
    ``core`` is a polygon around the curve and ``core_lower`` one inside it.
    """

    id: str
    core: BaseGeometry
    radius_in: float = 0.0
    kind: str = "model"
    core_lower: BaseGeometry | None = None

    @classmethod
    def bracketed(cls, id: str, inner: Polygon, outer: Polygon, kind: str = "model") -> Obstacle:
        """A polygonal obstacle known only between two polygons, ``inner`` inside ``outer``."""
        return cls(id, outer, 0.0, kind, inner)

    def core_for(self, lower: bool) -> BaseGeometry:
        return self.core_lower if lower and self.core_lower is not None else self.core

    @property
    def bounding_circle(self) -> tuple[XY, float]:
        x0, y0, x1, y1 = self.core.bounds
        centre = ((x0 + x1) / 2.0, (y0 + y1) / 2.0)
        return centre, math.hypot(x1 - x0, y1 - y0) / 2.0 + self.radius_in


@dataclass(frozen=True)
class Region:
    """A region where each inch travelled by the centre costs ``weight`` inches (>= 1)."""

    id: str
    polygon: Polygon
    weight: float


@dataclass(frozen=True)
class Path:
    """A shortest legal path: its cost bracket in inches and the route (arcs as polylines),
    with each change of level it makes (their costs are part of the length)."""

    length_in: float
    lower_in: float
    points: tuple[XY, ...]
    climbs: tuple[Climb, ...] = ()

    @property
    def climb_in(self) -> float:
        """What the route's climbs cost, in inches."""
        return sum(c.cost_in for c in self.climbs)

    def line(self) -> LineString:
        return LineString(self.points)


@dataclass(frozen=True)
class Nearby:
    """What may touch a path within a search ellipse, and whether that is all there is."""

    obstacles: list[Obstacle]
    regions: list[Region]
    complete: bool
    levels: list[Level] = dataclasses.field(default_factory=list)
    climb: ClimbCost = abs
    #: The heights the route starts and ends at where they are not the levels' under its
    #: ends (a model at a wall's foot with its centre on the wall's edge): the route then
    #: climbs there first, or last. ``None``: the level under that end.
    start_z: float | None = None
    end_z: float | None = None


@runtime_checkable
class Field(Protocol):
    """Where the obstacles, costly regions and levels come from, asked for by search ellipse."""

    def near(self, start: XY, end: XY, bound_in: float) -> Nearby:
        """Everything that may touch a path from start to end no longer than ``bound_in``."""
        ...


def in_ellipse(start: XY, end: XY, centre: XY, radius: float, bound_in: float) -> bool:
    """Whether a disc may reach inside the ellipse of points within ``bound_in`` of both ends."""
    return math.dist(start, centre) + math.dist(end, centre) - 2.0 * radius <= bound_in


class StaticField:
    """A fixed list of obstacles, regions and levels, filtered by search ellipse."""

    def __init__(
        self,
        obstacles: Sequence[Obstacle],
        regions: Sequence[Region] = (),
        levels: Sequence[Level] = (),
        climb: ClimbCost = abs,
    ) -> None:
        self.obstacles = list(obstacles)
        self.regions = list(regions)
        self.levels = list(levels)
        self.climb = climb

    def near(self, start: XY, end: XY, bound_in: float) -> Nearby:
        kept = [o for o in self.obstacles if in_ellipse(start, end, *o.bounding_circle, bound_in)]
        regions = [r for r in self.regions if _reaches(r.polygon, start, end, bound_in)]
        levels = [v for v in self.levels if _reaches(v.polygon, start, end, bound_in)]
        complete = (len(kept), len(regions), len(levels)) == (
            len(self.obstacles),
            len(self.regions),
            len(self.levels),
        )
        return Nearby(kept, regions, complete, levels, self.climb)


def _reaches(polygon: Polygon, start: XY, end: XY, bound_in: float) -> bool:
    """Whether a path from start to end no longer than ``bound_in`` may touch ``polygon``."""
    return bool(polygon.distance(Point(start)) + polygon.distance(Point(end)) <= bound_in)


def shortest_path(
    start: XY,
    end: XY,
    obstacles: Sequence[Obstacle] | Field,
    regions: Sequence[Region] = (),
    bound_in: float = math.inf,
    lower: bool = True,
    levels: Sequence[Level] = (),
    climb: ClimbCost = abs,
) -> Path | None:
    """The shortest legal route from ``start`` to ``end``, or ``None`` if there is none.

    With ``bound_in``, ``None`` also when every legal route costs more than that: the
    search gives up as soon as it can prove so, which is much quicker. ``lower=False``
    skips the lower-bound search (the bracket is then reported as the upper bound).

    Only what lies inside the ellipse of points whose distances to start and end add up
    to a bound can touch a path no longer than that bound, so the search starts with a
    small ellipse and grows it until the path found fits inside.
    """
    field = (
        obstacles
        if isinstance(obstacles, Field)
        else StaticField(obstacles, regions, levels, climb)
    )
    straight = math.dist(start, end)
    ellipse = min(max(2.0 * straight, straight + 4.0), bound_in)
    while True:
        near = field.near(start, end, ellipse)
        first, last = Levels(near.levels, near.climb).ends(start, end, near.start_z, near.end_z)
        ends_in = sum(c.cost_in for c in (*first, *last))
        # With nothing left outside the ellipse, the path may be as long as it needs.
        search = (bound_in if near.complete else ellipse) - ends_in
        found_upper = _Search(start, end, near, lower=False)
        upper = found_upper.run(search)
        if upper is not None or near.complete or ellipse >= bound_in:
            break
        ellipse = min(ellipse * 2.0, bound_in)
    if upper is None:
        return None
    cost, points = upper
    climbs = (*first, *found_upper.climbs(points), *last)
    # No route is shorter than the straight line, so a straight route is exact.
    straight_route = len(points) == 2 and cost <= straight + 1e-12
    if straight_route or not lower or not any(o.core_lower is not None for o in near.obstacles):
        return Path(cost + ends_in, cost + ends_in, points, climbs)
    found = _Search(start, end, near, lower=True).run(cost + 1e-9)
    lower_cost = cost if found is None else min(found[0], cost)
    return Path(cost + ends_in, lower_cost + ends_in, points, climbs)


def route_costs(start: XY, field: Field, bound_in: float) -> Callable[[np.ndarray], np.ndarray]:
    """What the shortest legal route from ``start`` to points costs: a function of the
    points (N, 2) giving each its cost where that is at most ``bound_in`` (inf where none
    is, or no route is; a few points just past the bound may be given theirs too).

    One search from the start finds every corner disc a route may bend round within the
    bound and what reaching it costs (:meth:`_Search.spread`); a route to a point then
    leaves the last disc it bends round along the tangent to it, so its cost is the least,
    over those discs, of reaching the disc, going round it and the straight tangent, where
    that tangent and arc are clear. Routes are measured as ``shortest_path`` measures
    them, but for the refraction of a straight run across difficult ground (weighed at
    the run's pieces, not slid to the cheapest crossing).
    """
    near = field.near(start, start, 2.0 * bound_in)
    search = _Search(start, start, near, lower=False)
    legs = [leg for leg in search.spread(bound_in) if leg.g <= bound_in]
    return lambda points: search.costs_to(legs, np.asarray(points, dtype=float), bound_in)


class _Search:
    """One A* search over tangent states among grown cores."""

    def __init__(self, start: XY, end: XY, near: Nearby, lower: bool) -> None:
        obstacles, regions = near.obstacles, near.regions
        self.start = np.asarray(start, dtype=float)
        self.end = np.asarray(end, dtype=float)
        self.cores = np.asarray([o.core_for(lower) for o in obstacles], dtype=object)
        self.radii = np.asarray([o.radius_in for o in obstacles], dtype=float)
        # Round obstacles (a point grown by a radius) are checked with plain arithmetic;
        # polygons through shapely.
        is_point = np.asarray([isinstance(c, Point) for c in self.cores], dtype=bool)
        self.px = np.asarray([c.x for c in self.cores[is_point]], dtype=float)
        self.py = np.asarray([c.y for c in self.cores[is_point]], dtype=float)
        self.pr = self.radii[is_point]
        self.poly_cores = self.cores[~is_point]
        self.poly_radii = self.radii[~is_point]
        self.tree = shapely.STRtree(self.poly_cores)
        self.max_r = float(self.poly_radii.max()) if len(self.poly_radii) else 0.0
        self.regions = regions
        self.region_polys = np.asarray([r.polygon for r in regions], dtype=object)
        self.region_weights = np.asarray([r.weight for r in regions], dtype=float)
        rings = [ring(r.polygon) for r in regions]
        self.region_boxes = np.asarray([r.polygon.bounds for r in regions]).reshape(-1, 4)
        self.region_edges = (
            np.concatenate([np.stack([r, np.roll(r, -1, axis=0)], axis=1) for r in rings])
            if rings
            else np.zeros((0, 2, 2))
        )
        self.weight_at = _weigher(regions)
        self._masks: dict[int, np.ndarray] = {}
        self.levels = Levels(near.levels, near.climb)
        self.reached: list[_Leg] = []

    def _build_discs(self) -> None:
        """The corner discs a route may bend around (only needed when it must bend)."""
        cx, cy, cr = [], [], []
        for core, radius in zip(self.cores, self.radii, strict=True):
            for x, y in _corners(core):
                cx.append(x)
                cy.append(y)
                cr.append(radius)
        # Region corners, and a seed halfway along each region edge: a route may cross an
        # edge anywhere, and the seeds let the search find crossings that bend nowhere
        # near a corner (the slide afterwards puts them where they belong).
        seeds = []
        for region in self.regions:
            corners = ring(region.polygon)
            seeds += [corners, (corners + np.roll(corners, -1, axis=0)) / 2.0]
        for level in self.levels.levels:
            if level.side_in > GRAZE_IN:
                for x, y in _corners(level.polygon):
                    cx.append(x)
                    cy.append(y)
                    cr.append(level.side_in)
            seeds.append(ring(level.polygon))  # a route over a level may bend at its edge
        free = [*seeds, *self._exits()]
        for xy in free:
            cx.extend(xy[:, 0])
            cy.extend(xy[:, 1])
            cr.extend([0.0] * len(xy))
        self.cx = np.asarray(cx, dtype=float)
        self.cy = np.asarray(cy, dtype=float)
        self.cr = np.asarray(cr, dtype=float)

    def _exits(self) -> list[np.ndarray]:
        """Where a route starting or ending inside a region best leaves it for each edge.

        From a point at distance h from an edge of a region of weight w, the cheapest way
        out to travel along that edge meets it h / sqrt(w^2 - 1) from the foot of the
        perpendicular (the critical angle of refraction).
        """
        out = []
        for region in self.regions:
            if region.weight <= 1.0 + 1e-9:
                continue
            corners = ring(region.polygon)
            a, b = corners, np.roll(corners, -1, axis=0)
            real = np.hypot(*(b - a).T) > 1e-12
            a, b = a[real], b[real]
            for p in (self.start, self.end):
                if not region.polygon.contains(Point(p)):
                    continue
                e = b - a
                length = np.hypot(e[:, 0], e[:, 1])
                u = e / length[:, None]
                t = np.einsum("ij,ij->i", p - a, u)
                h = np.abs(_cross(u[:, 0], u[:, 1], (p - a)[:, 0], (p - a)[:, 1]))
                off = h / math.sqrt(region.weight**2 - 1.0)
                for sign in (-1.0, 1.0):
                    s = t + sign * off
                    ok = (s > 0) & (s < length)
                    out.append(a[ok] + u[ok] * s[ok, None])
        return out

    # -- checks ---------------------------------------------------------------------------

    def blocked(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Which segments p[i]-q[i] pass into an obstacle."""
        bad = np.zeros(len(p), dtype=bool)
        if not len(p):
            return bad
        if len(self.px):
            # Distance from each round obstacle's centre to each segment.
            d = q - p
            length2 = np.maximum(np.einsum("ij,ij->i", d, d), 1e-300)
            wx = self.px[None, :] - p[:, 0:1]
            wy = self.py[None, :] - p[:, 1:2]
            t = np.clip((wx * d[:, 0:1] + wy * d[:, 1:2]) / length2[:, None], 0.0, 1.0)
            gap = np.hypot(wx - t * d[:, 0:1], wy - t * d[:, 1:2])
            bad |= (gap < self.pr[None, :] - GRAZE_IN).any(axis=1)
        if self.levels:
            bad |= self.levels.sides_block(p, q)
        if not len(self.poly_cores):
            return bad
        todo = np.flatnonzero(~bad)
        segs = shapely.linestrings(np.stack([p[todo], q[todo]], axis=1))
        # (GEOS's dwithin matches nothing at distance 0, hence the nudge.)
        si, oi = self.tree.query(segs, predicate="dwithin", distance=self.max_r + 1e-9)
        if not len(si):
            return bad
        r = self.poly_radii[oi]
        grown = r > GRAZE_IN
        hit = np.zeros(len(si), dtype=bool)
        if grown.any():
            dist = shapely.distance(segs[si[grown]], self.poly_cores[oi[grown]])
            hit[grown] = dist < r[grown] - GRAZE_IN
        if (~grown).any():
            hit[~grown] = shapely.relate_pattern(
                segs[si[~grown]], self.poly_cores[oi[~grown]], "T********"
            )
        bad[todo[si[hit]]] = True
        return bad

    def mask(self, disc: int) -> np.ndarray:
        """Cumulative count of blocked sample points around a disc (doubled for wrap-around)."""
        if disc not in self._masks:
            angles = np.arange(ARC_SAMPLES) * (_TWO_PI / ARC_SAMPLES)
            pts = np.column_stack(
                [
                    self.cx[disc] + self.cr[disc] * np.cos(angles),
                    self.cy[disc] + self.cr[disc] * np.sin(angles),
                ]
            )
            bad = np.zeros(ARC_SAMPLES, dtype=bool)
            if len(self.px):
                gap = np.hypot(pts[:, 0:1] - self.px[None, :], pts[:, 1:2] - self.py[None, :])
                bad |= (gap < self.pr[None, :] - 1e-6).any(axis=1)
            if len(self.poly_cores):
                points = shapely.points(pts)
                pi, oi = self.tree.query(points, predicate="dwithin", distance=self.max_r + 1e-9)
                if len(pi):
                    d = shapely.distance(points[pi], self.poly_cores[oi])
                    r = self.poly_radii[oi]
                    # a polygon grown by nothing (a bracketed curve) blocks its interior
                    inside = shapely.contains_properly(self.poly_cores[oi], points[pi])
                    hit = np.where(r > GRAZE_IN, d < r - 1e-6, inside)
                    bad[pi[hit]] = True
            if self.levels:
                bad |= self.levels.sides_hold(pts)
            self._masks[disc] = np.concatenate([[0], np.cumsum(np.concatenate([bad, bad]))])
        return self._masks[disc]

    def arcs_clear(self, disc: int, orient: int, a: float, b: np.ndarray) -> np.ndarray:
        """Whether travel around ``disc`` from angle a to each angle b (in ``orient``) is clear."""
        sweep = np.mod(orient * (b - a), _TWO_PI)
        lo = np.where(orient > 0, a, b)
        step = _TWO_PI / ARC_SAMPLES
        first = np.floor(np.mod(lo, _TWO_PI) / step).astype(int) + 1
        last = np.ceil((np.mod(lo, _TWO_PI) + sweep) / step).astype(int) - 1
        cum = self.mask(disc)
        count = np.where(last >= first, cum[np.clip(last + 1, 0, 2 * ARC_SAMPLES)] - cum[first], 0)
        return np.asarray(count == 0)

    def segment_costs(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Length of each segment plus the extra cost of the regions' interiors it crosses
        and of the climbs it makes."""
        cost = np.hypot(*(q - p).T)
        if self.levels and len(p):
            cost = cost + self.levels.climb_costs(p, q)
        if not self.regions or not len(p):
            return np.asarray(cost)
        # each piece between the regions' edges weighed at its middle
        near = np.flatnonzero(touching_boxes(p, q, self.region_boxes))
        a, b = p[near], q[near]
        t = cuts(a, b, self.region_edges)
        middles = a[:, None, :] + ((t[:, :-1] + t[:, 1:]) / 2.0)[:, :, None] * (b - a)[:, None, :]
        weights = self.weights_at(middles[..., 0], middles[..., 1])
        pieces = (t[:, 1:] - t[:, :-1]) * np.hypot(*(b - a).T)[:, None]
        cost[near] += ((weights - 1.0) * pieces).sum(axis=1)
        return np.asarray(cost)

    # -- search ---------------------------------------------------------------------------

    def run(self, bound: float) -> tuple[float, tuple[XY, ...]] | None:
        s, e = self.start, self.end
        for core, r in zip(self.cores, self.radii, strict=True):
            if (r > GRAZE_IN and core.distance(Point(s)) < r - GRAZE_IN) or (
                r <= GRAZE_IN and (core.contains(Point(s)) or core.contains(Point(e)))
            ):
                return None
            if r > GRAZE_IN and core.distance(Point(e)) < r - GRAZE_IN:
                return None
        direct = self.segment_costs(s[None], e[None])[0]
        if not self.blocked(s[None], e[None])[0] and (
            (not self.regions and not self.levels) or direct <= math.dist(s, e) + 1e-12
        ):
            return (float(direct), (tuple(s), tuple(e))) if direct <= bound else None
        found = self._astar(bound)
        if found is None:
            return None
        cost, legs = found
        if self.regions or self.levels:
            # The search weighs each arc at its middle; the route is then measured piece
            # by piece, its crossings slid to the cheapest places where that stays clear.
            measured = [r for r in (self._refine(legs), self._refine(legs, slide=False)) if r]
            if measured:
                return min(measured, key=lambda r: r[0])
        return cost, self._polyline(legs)

    def spread(self, bound: float) -> list[_Leg]:
        """Every way round a corner disc the start reaches within ``bound``, each with what
        it cost (Dijkstra's search with no goal): where a route to anywhere may last bend.
        The first is the start itself."""
        self._astar(bound, goal=False)
        return self.reached

    def _astar(self, bound: float, goal: bool = True) -> tuple[float, list[_Leg]] | None:
        self._build_discs()
        s, e = self.start, self.end
        # Discs that could be on a route within the bound (the rest still block): one to
        # the goal goes there and on; one to anywhere only there.
        slack = np.hypot(self.cx - s[0], self.cy - s[1]) - self.cr
        if goal:
            slack += np.hypot(self.cx - e[0], self.cy - e[1]) - self.cr
        cand = np.flatnonzero(slack <= bound)
        orients = [1, -1]
        end = [1] if goal else []
        tx = np.concatenate([self.cx[cand]] * 2 + [[e[0]] * len(end)])
        ty = np.concatenate([self.cy[cand]] * 2 + [[e[1]] * len(end)])
        tr = np.concatenate([self.cr[cand]] * 2 + [[0.0] * len(end)])
        to = np.concatenate([np.full(len(cand), o) for o in orients] + [[0] * len(end)])
        tdisc = np.concatenate([cand, cand, [-2] * len(end)]).astype(int)
        # Zero-radius corners have no direction of travel: keep one copy.
        keep = ~((tr <= GRAZE_IN) & (to < 0))
        tx, ty, tr, to, tdisc = tx[keep], ty[keep], tr[keep], to[keep], tdisc[keep]
        h_goal = math.dist if goal else (lambda a, b: 0.0)

        # State: (disc, orient, angle, x, y, g, parent leg)
        best: dict[tuple[int, int, int], float] = {}
        legs: list[_Leg] = [_Leg(-1, 0, 0.0, (s[0], s[1]), 0.0, 0.0, (s[0], s[1]), 0.0, -1)]
        self.reached = legs
        heap: list[tuple[float, int]] = [(h_goal(tuple(s), tuple(e)), 0)]
        while heap:
            f, k = heapq.heappop(heap)
            leg = legs[k]
            if leg.disc == -2:
                return leg.g, _chain(legs, k)
            if f > bound:
                return None
            disc, orient = leg.disc, leg.orient
            if disc >= 0:
                c1 = np.array([self.cx[disc], self.cy[disc]])
                r1 = self.cr[disc]
            else:
                c1, r1 = np.asarray(leg.at), 0.0
            o1 = orient if r1 > GRAZE_IN else 0
            dx, dy = tx - c1[0], ty - c1[1]
            sgn = to * tr - o1 * r1
            dist2 = dx * dx + dy * dy
            ok = (dist2 - sgn * sgn > 1e-18) & (tdisc != disc)
            length = np.sqrt(np.maximum(dist2 - sgn * sgn, 0.0))
            ang = np.arctan2(dy, dx) - np.arctan2(sgn, length)
            nx, ny = -np.sin(ang), np.cos(ang)
            p = np.column_stack([c1[0] - o1 * r1 * nx, c1[1] - o1 * r1 * ny])
            q = np.column_stack([tx - to * tr * nx, ty - to * tr * ny])
            arc = np.zeros(len(tx))
            depart = np.zeros(len(tx))
            if r1 > GRAZE_IN:
                depart = np.arctan2(p[:, 1] - c1[1], p[:, 0] - c1[0])
                sweep = np.mod(o1 * (depart - leg.angle), _TWO_PI)
                sweep = np.where(sweep > _TWO_PI - 1e-9, 0.0, sweep)
                arc = r1 * sweep
            arc_cost = arc
            if self.regions and r1 > GRAZE_IN:
                middle = leg.angle + o1 * arc / (2.0 * r1)
                arc_cost = arc * self.weights_at(
                    c1[0] + r1 * np.cos(middle), c1[1] + r1 * np.sin(middle)
                )
            if self.levels and r1 > GRAZE_IN:
                arc_cost = arc_cost + self.levels.change_costs(np.asarray(leg.at)[None], p)
            g = leg.g + arc_cost + length
            h = np.hypot(q[:, 0] - e[0], q[:, 1] - e[1]) if goal else np.zeros(len(q))
            ok &= g + h <= bound
            idx = np.flatnonzero(ok)
            if not len(idx):
                continue
            if r1 > GRAZE_IN:
                idx = idx[self.arcs_clear(disc, o1, leg.angle, depart[idx])]
            idx = idx[~self.blocked(p[idx], q[idx])]
            if (self.regions or self.levels) and len(idx):
                extra = self.segment_costs(p[idx], q[idx]) - length[idx]
                g[idx] += extra
                idx = idx[g[idx] + h[idx] <= bound]
            arrive = np.arctan2(q[:, 1] - ty, q[:, 0] - tx)
            for i in idx:
                key = (int(tdisc[i]), int(to[i]), round(float(arrive[i]) * 1e7))
                if best.get(key, math.inf) <= g[i]:
                    continue
                best[key] = float(g[i])
                legs.append(
                    _Leg(
                        int(tdisc[i]),
                        int(to[i]),
                        float(arrive[i]),
                        (float(q[i, 0]), float(q[i, 1])),
                        float(g[i]),
                        float(depart[i]),
                        (float(p[i, 0]), float(p[i, 1])),
                        float(arc[i]),
                        k,
                    )
                )
                heapq.heappush(heap, (float(g[i] + h[i]), len(legs) - 1))
        return None

    def climbs(self, points: tuple[XY, ...]) -> tuple[Climb, ...]:
        """Each change of level along a route given as points."""
        out: list[Climb] = []
        for p, q in itertools.pairwise(points):
            out.extend(self.levels.along(np.asarray(p), np.asarray(q)))
        return tuple(out)

    def costs_to(self, legs: list[_Leg], points: np.ndarray, bound: float) -> np.ndarray:
        """The least cost of reaching each point straight from one of ``legs``' discs (see
        :func:`route_costs`); inf where none is clear within ``bound``.

        Each point is given, by arithmetic alone, what each way in would cost were it
        clear; then, round by round, each point's cheapest way in not yet tried is tried
        (are its tangent and arc clear? what do its ground and climbs add?), all points at
        once, until none has a way in cheaper than the best it has found.
        """
        n = len(points)
        best = np.full(n, np.inf)
        if not legs or not n:
            return best
        disc = np.asarray([leg.disc for leg in legs], dtype=int)
        angle = np.asarray([leg.angle for leg in legs], dtype=float)
        g = np.asarray([leg.g for leg in legs], dtype=float)
        at = np.asarray([leg.at for leg in legs], dtype=float)
        on = disc >= 0
        k0 = np.maximum(disc, 0)
        cx = np.where(on, self.cx[k0] if len(self.cx) else 0.0, at[:, 0])
        cy = np.where(on, self.cy[k0] if len(self.cy) else 0.0, at[:, 1])
        cr = np.where(on, self.cr[k0] if len(self.cr) else 0.0, 0.0)
        orient = np.where(cr > GRAZE_IN, [leg.orient for leg in legs], 0).astype(float)
        lower = np.empty((len(legs), n), dtype=np.float32)
        for a in range(0, n, 2048):
            pts = points[a : a + 2048]
            discs = (cx[:, None], cy[:, None], cr[:, None], orient[:, None], angle[:, None])
            cost, _, _ = _leaving(*discs, pts[None, :, 0], pts[None, :, 1])
            lower[:, a : a + 2048] = g[:, None] + cost
        columns = np.arange(n)
        tries = min(1, len(legs))
        while True:  # each round tries each point's next few best ways in
            first = np.argmin(lower, axis=0)
            low = lower[first, columns].astype(float)
            todo = np.flatnonzero((low <= bound) & (low < best - 1e-6))
            if not len(todo):
                break
            few = np.argpartition(lower[:, todo], tries - 1, axis=0)[:tries]
            k = few.ravel()
            todo = np.tile(todo, tries)
            keep = lower[k, todo] <= np.minimum(bound, best[todo] - 1e-6)
            k, todo = k[keep], todo[keep]
            q = points[todo]
            cost, leave, depart = _leaving(cx[k], cy[k], cr[k], orient[k], angle[k], *q.T)
            cost = g[k] + cost
            ok = ~self.blocked(leave, q)
            arcs = (disc[k] >= 0) & (cr[k] > GRAZE_IN)
            for leg in np.unique(k[arcs & ok]):  # each arc, from where it arrived on
                sel = np.flatnonzero((k == leg) & ok)
                turn = int(disc[leg]), int(orient[leg]), float(angle[leg])
                ok[sel] = self.arcs_clear(*turn, depart[sel])
            if self.regions or self.levels:
                cost = cost + self.segment_costs(leave, q) - np.hypot(*(q - leave).T)
            if self.levels and arcs.any():
                arrived = np.column_stack(
                    [cx[k] + cr[k] * np.cos(angle[k]), cy[k] + cr[k] * np.sin(angle[k])]
                )
                cost = cost + np.where(arcs, self.levels.change_costs(arrived, leave), 0.0)
            np.minimum.at(best, todo[ok], cost[ok])
            lower[k, todo] = np.inf
        return best

    def _polyline(self, legs: list[_Leg]) -> tuple[XY, ...]:
        """The route as points, arcs drawn every few degrees."""
        pts: list[XY] = [legs[0].at]
        for prev, leg in itertools.pairwise(legs):
            if prev.disc >= 0 and leg.arc > 0.0:
                pts.extend(self._arc_points(prev, leg))
            pts.append(leg.leave)
            pts.append(leg.at)
        return tuple(_dedupe(pts))

    def _arc_points(self, prev: _Leg, leg: _Leg) -> list[XY]:
        r = self.cr[prev.disc]
        sweep = leg.arc / r
        n = max(math.ceil(sweep / math.radians(5.0)), 1)
        angles = prev.angle + prev.orient * sweep * np.arange(1, n) / n
        cx, cy = self.cx[prev.disc], self.cy[prev.disc]
        return [(float(cx + r * math.cos(a)), float(cy + r * math.sin(a))) for a in angles]

    def weights_at(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Cost per inch at each point: the heaviest region containing it, else 1."""
        w = np.ones(np.shape(x))
        for poly, weight in zip(self.region_polys, self.region_weights, strict=True):
            w = np.where(shapely.contains_xy(poly, x, y), np.maximum(w, weight), w)
        return w

    def _arc_cost(self, prev: _Leg, leg: _Leg) -> float:
        """An arc's cost, measured in pieces of at most 5 degrees."""
        r = float(self.cr[prev.disc])
        sweep = leg.arc / r
        n = max(math.ceil(sweep / math.radians(5.0)), 1)
        middles = prev.angle + prev.orient * sweep * (np.arange(n) + 0.5) / n
        cx, cy = self.cx[prev.disc], self.cy[prev.disc]
        w = self.weights_at(cx + r * np.cos(middles), cy + r * np.sin(middles))
        return float(leg.arc / n * w.sum())

    def _refine(self, legs: list[_Leg], slide: bool = True) -> tuple[float, tuple[XY, ...]] | None:
        """Bend the straight parts of the route where they cross region boundaries.

        The crossing points of each straight run slide along their boundary edges to
        minimise the run's cost (``_slide``), sweeping until nothing moves.
        ``None`` if the result runs into an obstacle. Without ``slide``, the route as
        found, measured the same way.
        """
        rings = [ring(r.polygon) for r in self.regions]
        edges = (
            np.concatenate([np.stack([r, np.roll(r, -1, axis=0)], axis=1) for r in rings])
            if rings
            else np.zeros((0, 2, 2))
        )
        arc_cost = 0.0
        pieces: list[list[np.ndarray]] = []  # straight runs between arcs
        arcs: list[list[XY]] = []
        run = [np.asarray(legs[0].at)]
        for prev, leg in itertools.pairwise(legs):
            if prev.disc >= 0 and leg.arc > 0.0:
                arc_cost += self._arc_cost(prev, leg)
                ends = np.asarray([prev.at]), np.asarray([leg.leave])
                arc_cost += float(self.levels.change_costs(*ends)[0])
                pieces.append(run)
                arcs.append(self._arc_points(prev, leg))
                run = [np.asarray(leg.leave)]
            elif prev.disc >= 0 and not np.allclose(run[-1], leg.leave):
                run.append(np.asarray(leg.leave))
            run.append(np.asarray(leg.at))
        pieces.append(run)
        total = arc_cost
        out: list[XY] = []
        for n, piece in enumerate(pieces):
            refined = self._slide(piece, edges, slide)
            if refined is None:
                return None
            cost, pts = refined
            total += cost
            out.extend(pts)
            if n < len(arcs):
                out.extend(arcs[n])
        return total, tuple(_dedupe(out))

    def _slide(
        self, points: list[np.ndarray], edges: np.ndarray, slide_points: bool = True
    ) -> tuple[float, list[XY]] | None:
        """Measure one straight run, each of its crossings slid to the refraction optimum.

        Crossings are coupled (moving where a route enters a heavy region changes where it
        should leave), so sliding them one at a time creeps towards the optimum ever more
        slowly the heavier and narrower the region. Each sweep slides them one at a time
        (which lets a point at a corner choose its edge), then all together by Newton's
        method on their positions along their edges (``_joint``).
        """
        pts: list[np.ndarray] = []
        slide: list[list[int]] = []
        for k, (p, q) in enumerate(itertools.pairwise(points)):
            pts.append(p)
            on = np.flatnonzero(distance_to_edges(p, edges) < 1e-9)  # a corner or a seed
            slide.append([] if k == 0 else [int(c) for c in on])
            for t, edge in crossings(p, q, edges):
                pts.append(p + t * (q - p))
                slide.append([edge])
        pts.append(points[-1])
        slide.append([])
        along = [s[0] if s else -1 for s in slide]  # the edge each point slides on
        for _ in range(20 if slide_points and any(slide) else 0):
            moved = 0.0
            for i in range(1, len(pts) - 1):
                if not slide[i]:
                    continue
                a, b = pts[i - 1], pts[i + 1]
                w_in, w_out = self.weight_at((a + pts[i]) / 2), self.weight_at((pts[i] + b) / 2)
                best, best_cost = pts[i], w_in * norm(pts[i] - a) + w_out * norm(b - pts[i])
                for edge in slide[i]:
                    p, cost = golden(edges[edge, 0], edges[edge, 1], a, b, w_in, w_out)
                    # Weighed as if each segment stays in one region: if one would cross
                    # a boundary, that cost is not its cost.
                    if cost < best_cost - 1e-12 and within([a, p, b], edges):
                        best, best_cost, along[i] = p, cost, edge
                moved = max(moved, norm(best - pts[i]))
                pts[i] = best
            weights = [self.weight_at((p + q) / 2) for p, q in itertools.pairwise(pts)]
            together, jumped = joint(pts, along, edges, np.asarray(weights))
            if within(together, edges):
                pts = together
            else:
                jumped = 0.0
            if max(moved, jumped) < 1e-9:
                break
        arr = np.asarray(pts)
        if self.blocked(arr[:-1], arr[1:]).any():
            return None
        cost = float(self.segment_costs(arr[:-1], arr[1:]).sum())
        return cost, [(float(x), float(y)) for x, y in arr]


def _leaving(
    cx: np.ndarray,
    cy: np.ndarray,
    r: np.ndarray,
    o: np.ndarray,
    arrived: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Going round a disc (centre, radius ``r``, ``o`` +1 anticlockwise, -1 clockwise, 0
    a point) from angle ``arrived`` and leaving it along the tangent to (x, y): what the arc
    and the tangent cost (inf for a point inside the disc), where it leaves, and at which
    angle. As the search has it: the point left is c - o r n, n = (-sin a, cos a)."""
    dx, dy = x - cx, y - cy
    dist2 = dx * dx + dy * dy
    length = np.sqrt(np.maximum(dist2 - r * r, 0.0))
    a = np.arctan2(dy, dx) - np.arctan2(-o * r, length)
    lx = cx + o * r * np.sin(a)
    ly = cy - o * r * np.cos(a)
    depart = np.arctan2(ly - cy, lx - cx)
    sweep = np.mod(o * (depart - arrived), _TWO_PI)
    sweep = np.where(sweep > _TWO_PI - 1e-9, 0.0, sweep)
    # (a point inside a disc is not reached round it; a point is no disc: its own place is)
    cost = np.where((r > GRAZE_IN) & (dist2 <= r * r + 1e-12), np.inf, r * sweep + length)
    leave = np.stack(np.broadcast_arrays(lx, ly), axis=-1)
    return cost, leave, depart


@dataclass(frozen=True)
class _Leg:
    """One step of a route: around the previous disc, then straight to ``at`` on ``disc``.

    ``disc`` is -1 for the start and -2 for the goal; ``angle`` is where on its disc the
    step arrives; ``leave`` is where it left the previous disc (``depart`` its angle).
    """

    disc: int
    orient: int
    angle: float
    at: XY
    g: float
    depart: float
    leave: XY
    arc: float
    parent: int


def _chain(legs: list[_Leg], k: int) -> list[_Leg]:
    out = [legs[k]]
    while out[-1].parent >= 0:
        out.append(legs[out[-1].parent])
    return out[::-1]


def _dedupe(points: list[XY]) -> list[XY]:
    out = [points[0]]
    for p in points[1:]:
        if math.dist(p, out[-1]) > 1e-12:
            out.append(p)
    return out


def _corners(core: BaseGeometry) -> list[XY]:
    """Where a path may bend around a core: the point itself, or a polygon's convex corners."""
    if isinstance(core, Point):
        return [(core.x, core.y)]
    if isinstance(core, Polygon):
        xy = ring(core)
        p, n = np.roll(xy, 1, axis=0), np.roll(xy, -1, axis=0)
        turn = _cross(
            xy[:, 0] - p[:, 0], xy[:, 1] - p[:, 1], n[:, 0] - xy[:, 0], n[:, 1] - xy[:, 1]
        )
        return [(float(x), float(y)) for x, y in xy[turn > 1e-12]]
    return [(float(x), float(y)) for x, y in shapely.get_coordinates(core)]


def _cross(ax: np.ndarray, ay: np.ndarray, bx: np.ndarray, by: np.ndarray) -> np.ndarray:
    return np.asarray(ax * by - ay * bx)


def _weigher(regions: list[Region]) -> Callable[[np.ndarray], float]:
    """The cost per inch at a point: the heaviest region containing it, else 1."""
    prepared = [(r.polygon, r.weight) for r in regions]
    for poly, _ in prepared:
        shapely.prepare(poly)

    def weight(xy: np.ndarray) -> float:
        point = Point(float(xy[0]), float(xy[1]))
        return max([w for poly, w in prepared if poly.contains(point)], default=1.0)

    return weight
