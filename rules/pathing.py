"""Shortest legal path for a model's centre among obstacles and costly regions.

The moving base is a disc (its radius is half its smallest dimension: a model may
pivot freely while it moves), so every obstacle is grown by that radius and the
question becomes a shortest path for a point. Around polygons such a path bends
only at obstacle corners, on lines tangent to the corners it touches: the search
is A* over a visibility graph whose edges are those tangent lines. Difficult
terrain is a region where each inch of travel costs ``weight`` inches: the search
finds the route through region corners, then every point where it crosses a region
boundary slides along that boundary to the cheapest crossing (the optimum refracts,
as light does, and each crossing is a convex one-variable problem).

Curved obstacles come as two polygons, ``inner`` inside the true shape and
``outer`` around it: the path around the outer ones is legal for the true shapes
(an upper bound), the path around the inner ones is no longer than the true
shortest path (a lower bound).

>>> from shapely.geometry import box
>>> wall = Obstacle("wall", box(4, -2, 5, 2), box(4, -2, 5, 2))
>>> round(shortest_path((0, 0), (9, 0), [wall]).length_in, 4)
9.9443
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import shapely
from shapely.geometry import LineString, Point, Polygon

#: Below this many inches a path is the straight line: nothing is that thin.
_EPS = 1e-9

XY = tuple[float, float]


@dataclass(frozen=True)
class Obstacle:
    """Somewhere the moving centre may not go: a grown base, terrain or control zone."""

    id: str
    inner: Polygon
    outer: Polygon
    kind: str = "model"


@dataclass(frozen=True)
class Region:
    """A region where each inch travelled by the centre costs ``weight`` inches (>= 1)."""

    id: str
    polygon: Polygon
    weight: float


@dataclass(frozen=True)
class Path:
    """A shortest legal path: its cost bracket in inches and the route (upper-bound version)."""

    length_in: float
    lower_in: float
    points: tuple[XY, ...]

    @property
    def upper_in(self) -> float:
        return self.length_in

    def line(self) -> LineString:
        return LineString(self.points)


@runtime_checkable
class Field(Protocol):
    """Where the obstacles and costly regions come from, asked for by search ellipse."""

    def near(
        self, start: XY, end: XY, bound_in: float
    ) -> tuple[list[Obstacle], list[Region], bool]:
        """Everything that may touch a path from start to end no longer than ``bound_in``.

        The flag says whether the answer is complete (nothing at all was left out).
        """
        ...


class StaticField:
    """A fixed list of obstacles and regions, filtered by search ellipse."""

    def __init__(self, obstacles: Sequence[Obstacle], regions: Sequence[Region] = ()) -> None:
        self.obstacles = list(obstacles)
        self.regions = list(regions)
        self._boxes = [o.outer for o in self.obstacles] + [r.polygon for r in self.regions]

    def near(
        self, start: XY, end: XY, bound_in: float
    ) -> tuple[list[Obstacle], list[Region], bool]:
        if not self._boxes:
            return [], [], True
        arr = np.asarray(self._boxes, dtype=object)
        keep = shapely.distance(arr, Point(start)) + shapely.distance(arr, Point(end)) <= bound_in
        n = len(self.obstacles)
        obstacles = [o for o, k in zip(self.obstacles, keep[:n], strict=True) if k]
        regions = [r for r, k in zip(self.regions, keep[n:], strict=True) if k]
        return obstacles, regions, bool(keep.all())


def shortest_path(
    start: XY,
    end: XY,
    obstacles: Sequence[Obstacle] | Field,
    regions: Sequence[Region] = (),
    bound_in: float = math.inf,
) -> Path | None:
    """The shortest legal route from ``start`` to ``end``, or ``None`` if there is none.

    With ``bound_in``, ``None`` also when every legal route costs more than that: the
    search gives up as soon as it can prove so, which is much quicker.

    Only what lies inside the ellipse of points whose distances to start and end add up
    to a bound can touch a path no longer than that bound, so the search starts with a
    small ellipse and grows it until the path found fits inside.
    """
    field = obstacles if isinstance(obstacles, Field) else StaticField(obstacles, regions)
    straight = math.dist(start, end)
    ellipse = min(max(2.0 * straight, straight + 4.0), bound_in)
    while True:
        near, near_regions, complete = field.near(start, end, ellipse)
        # With nothing left outside the ellipse, the path may be as long as it needs.
        search = bound_in if complete else ellipse
        upper = _solve(start, end, [o.outer for o in near], near_regions, search)
        if upper is not None or complete or ellipse >= bound_in:
            break
        ellipse = min(ellipse * 2.0, bound_in)
    if upper is None:
        return None
    if len(upper[1]) == 2 and not near_regions:
        return Path(length_in=upper[0], lower_in=upper[0], points=upper[1])
    lower = _solve(start, end, [o.inner for o in near], near_regions, upper[0] + 1e-9)
    lower_cost = upper[0] if lower is None else min(lower[0], upper[0])
    return Path(length_in=upper[0], lower_in=lower_cost, points=upper[1])


def _solve(
    start: XY, end: XY, polygons: list[Polygon], regions: list[Region], bound: float
) -> tuple[float, tuple[XY, ...]] | None:
    """Cheapest route of cost at most ``bound`` around ``polygons`` through ``regions``."""
    for poly in polygons:
        if poly.contains(Point(start)) or poly.contains(Point(end)):
            return None
    segment = LineString([start, end])
    if not any(r.polygon.intersects(segment) for r in regions) and not any(
        shapely.relate_pattern(segment, poly, "T********") for poly in polygons
    ):
        return (segment.length, (start, end)) if segment.length <= bound else None
    return _astar(start, end, polygons, regions, bound)


def _ring(poly: Polygon) -> np.ndarray:
    """Exterior ring of ``poly`` counterclockwise, without the closing vertex."""
    ring = poly.exterior
    xy = np.asarray(ring.coords)[:-1]
    return xy if ring.is_ccw else xy[::-1]


def _cross(ax: np.ndarray, ay: np.ndarray, bx: np.ndarray, by: np.ndarray) -> np.ndarray:
    return np.asarray(ax * by - ay * bx)


class _Graph:
    """Nodes of the visibility graph: start, end, obstacle corners, region corners."""

    def __init__(self, start: XY, end: XY, polygons: list[Polygon], regions: list[Region]) -> None:
        pts = [np.asarray([start, end], dtype=float)]
        prev = [np.full((2, 2), np.nan)]
        nxt = [np.full((2, 2), np.nan)]
        for poly in polygons:
            xy = _ring(poly)
            p, n = np.roll(xy, 1, axis=0), np.roll(xy, -1, axis=0)
            turn = _cross(
                xy[:, 0] - p[:, 0], xy[:, 1] - p[:, 1], n[:, 0] - xy[:, 0], n[:, 1] - xy[:, 1]
            )
            convex = turn > 1e-12
            pts.append(xy[convex])
            prev.append(p[convex])
            nxt.append(n[convex])
        self.regions = regions
        # Region corners come last: bends there are free of any tangency condition.
        for r in regions:
            crossing = _ring(r.polygon)
            pts.append(crossing)
            prev.append(np.full_like(crossing, np.nan))
            nxt.append(np.full_like(crossing, np.nan))
        self.xy = np.concatenate(pts)
        self.prev = np.concatenate(prev)
        self.next = np.concatenate(nxt)
        self.free = np.isnan(self.prev[:, 0])  # no tangency condition at this node
        self.polygons = polygons
        self.tree = shapely.STRtree(polygons)
        self.region_tree = shapely.STRtree([r.polygon for r in regions])
        self.weights = np.asarray([r.weight for r in regions], dtype=float)
        # Corners inside another obstacle are never on a legal path.
        if polygons:
            idx, _ = self.tree.query(shapely.points(self.xy), predicate="within")
            self.dead = np.zeros(len(self.xy), dtype=bool)
            self.dead[idx] = True
            self.dead[:2] = False
        else:
            self.dead = np.zeros(len(self.xy), dtype=bool)

    def tangent(self, u: int, v: np.ndarray) -> np.ndarray:
        """Which edges u->v are tangent at both ends (the only edges a shortest path uses)."""
        d = self.xy[v] - self.xy[u]
        ok = np.ones(len(v), dtype=bool)
        if not self.free[u]:
            a = _cross(d[:, 0], d[:, 1], *(self.prev[u] - self.xy[u]))
            b = _cross(d[:, 0], d[:, 1], *(self.next[u] - self.xy[u]))
            ok &= a * b >= -1e-12
        pv, nv = self.prev[v] - self.xy[v], self.next[v] - self.xy[v]
        a = _cross(d[:, 0], d[:, 1], pv[:, 0], pv[:, 1])
        b = _cross(d[:, 0], d[:, 1], nv[:, 0], nv[:, 1])
        ok &= self.free[v] | (a * b >= -1e-12)
        return ok

    def clear(self, segments: np.ndarray) -> np.ndarray:
        """Which segments stay out of every obstacle's interior."""
        ok = np.ones(len(segments), dtype=bool)
        if not self.polygons or not len(segments):
            return ok
        si, pi = self.tree.query(segments, predicate="intersects")
        if len(si):
            polys = np.asarray(self.tree.geometries)[pi]
            bad = shapely.relate_pattern(segments[si], polys, "T********")
            ok[si[bad]] = False
        return ok

    def costs(self, segments: np.ndarray) -> np.ndarray:
        """Length of each segment plus the extra cost of the regions it crosses."""
        cost = np.asarray(shapely.length(segments), dtype=float)
        if not self.regions or not len(segments):
            return cost
        si, ri = self.region_tree.query(segments, predicate="intersects")
        if len(si):
            # Travel along a region's edge is outside it: only the interior costs more.
            polys = np.asarray(self.region_tree.geometries)[ri]
            inside = shapely.length(shapely.intersection(segments[si], polys)) - shapely.length(
                shapely.intersection(segments[si], shapely.boundary(polys))
            )
            np.add.at(cost, si, (self.weights[ri] - 1.0) * inside)
        return cost


def _astar(
    start: XY,
    end: XY,
    polygons: list[Polygon],
    regions: list[Region],
    bound: float = math.inf,
) -> tuple[float, tuple[XY, ...]] | None:
    """A* from start to end; nothing costing more than ``bound`` is explored."""
    graph = _Graph(start, end, polygons, regions)
    xy = graph.xy
    n = len(xy)
    goal = xy[1]
    h = np.hypot(*(xy - goal).T)
    g = np.full(n, np.inf)
    g[0] = 0.0
    parent = np.full(n, -1)
    closed = graph.dead.copy()
    heap: list[tuple[float, int]] = [(h[0], 0)]
    while heap:
        _, u = heapq.heappop(heap)
        if closed[u]:
            continue
        closed[u] = True
        if u == 1:
            break
        cand = np.flatnonzero(~closed)
        cand = cand[graph.tangent(u, cand)]
        # An edge is worth checking only if it could improve the node it reaches and
        # could still lead to a route within the bound.
        dist = np.hypot(*(xy[cand] - xy[u]).T)
        useful = (g[u] + dist < g[cand]) & (g[u] + dist + h[cand] <= bound)
        cand = cand[useful]
        if not len(cand):
            continue
        segs = shapely.linestrings(
            np.stack([np.broadcast_to(xy[u], (len(cand), 2)), xy[cand]], axis=1)
        )
        ok = graph.clear(segs)
        cand, segs = cand[ok], segs[ok]
        cost = g[u] + graph.costs(segs)
        better = cost < g[cand]
        for v, c in zip(cand[better], cost[better], strict=True):
            g[v] = c
            parent[v] = u
            heapq.heappush(heap, (c + h[v], int(v)))
    if not np.isfinite(g[1]) or g[1] > bound:
        return None
    route = [1]
    while route[-1] != 0:
        route.append(int(parent[route[-1]]))
    points = [(float(xy[i, 0]), float(xy[i, 1])) for i in reversed(route)]
    if regions:
        refined = _refine(points, graph)
        if refined is not None and refined[0] < g[1]:
            return refined
    return float(g[1]), tuple(points)


_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def _refine(points: list[XY], graph: _Graph) -> tuple[float, tuple[XY, ...]] | None:
    """Bend the route where it crosses region boundaries, to the cheapest crossing points.

    The corner-to-corner route crosses each boundary where a straight line happens to;
    the cheapest route refracts there (Snell's law). Every crossing point slides along
    its boundary edge to minimise the cost of its two segments (a convex problem in one
    variable), sweeping until nothing moves. ``None`` if the result is not clear.
    """
    rings = [_ring(r.polygon) for r in graph.regions]
    edges = np.concatenate([np.stack([r, np.roll(r, -1, axis=0)], axis=1) for r in rings])
    pts: list[np.ndarray] = []
    slide: list[list[int]] = []  # boundary edges each point may slide along
    for k, (p, q) in enumerate(itertools.pairwise(np.asarray(points, dtype=float))):
        pts.append(p)
        at_corner = np.flatnonzero(np.hypot(*(edges[:, 0] - p).T) < 1e-9)
        at_corner2 = np.flatnonzero(np.hypot(*(edges[:, 1] - p).T) < 1e-9)
        slide.append([] if k == 0 else [*at_corner, *at_corner2])
        for t, e in _crossings(p, q, edges):
            pts.append(p + t * (q - p))
            slide.append([e])
    pts.append(np.asarray(points[-1], dtype=float))
    slide.append([])
    if not any(slide):
        return None
    weight = _weigher(graph.regions)
    for _ in range(20):
        moved = 0.0
        for i in range(1, len(pts) - 1):
            if not slide[i]:
                continue
            a, b = pts[i - 1], pts[i + 1]
            w_in, w_out = weight((a + pts[i]) / 2), weight((pts[i] + b) / 2)
            best, best_cost = pts[i], w_in * _norm(pts[i] - a) + w_out * _norm(b - pts[i])
            for e in slide[i]:
                p, cost = _golden(edges[e, 0], edges[e, 1], a, b, w_in, w_out)
                if cost < best_cost - 1e-12:
                    best, best_cost = p, cost
            moved = max(moved, _norm(best - pts[i]))
            pts[i] = best
        if moved < 1e-9:
            break
    route = [tuple(map(float, p)) for p in pts]
    segs = shapely.linestrings([[route[i], route[i + 1]] for i in range(len(route) - 1)])
    if not graph.clear(segs).all():
        return None
    return float(graph.costs(segs).sum()), tuple((x, y) for x, y in route)


def _norm(v: np.ndarray) -> float:
    return math.hypot(float(v[0]), float(v[1]))


def _crossings(p: np.ndarray, q: np.ndarray, edges: np.ndarray) -> list[tuple[float, int]]:
    """Where segment p-q crosses the edges strictly inside both: (t along p-q, edge index)."""
    d = q - p
    e = edges[:, 1] - edges[:, 0]
    denom = d[0] * e[:, 1] - d[1] * e[:, 0]
    ok = np.abs(denom) > 1e-15
    w = edges[:, 0] - p
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (w[:, 0] * e[:, 1] - w[:, 1] * e[:, 0]) / denom
        u = (w[:, 0] * d[1] - w[:, 1] * d[0]) / denom
    hit = ok & (t > 1e-9) & (t < 1 - 1e-9) & (u > 1e-9) & (u < 1 - 1e-9)
    return sorted((float(t[i]), int(i)) for i in np.flatnonzero(hit))


def _weigher(regions: list[Region]) -> Callable[[np.ndarray], float]:
    """The cost per inch at a point: the heaviest region containing it, else 1."""
    prepared = [(r.polygon, r.weight) for r in regions]
    for poly, _ in prepared:
        shapely.prepare(poly)

    def weight(xy: np.ndarray) -> float:
        point = Point(float(xy[0]), float(xy[1]))
        return max([w for poly, w in prepared if poly.contains(point)], default=1.0)

    return weight


def _golden(
    e0: np.ndarray, e1: np.ndarray, a: np.ndarray, b: np.ndarray, w_in: float, w_out: float
) -> tuple[np.ndarray, float]:
    """The point of edge e0-e1 minimising w_in |a - p| + w_out |p - b| (a convex function)."""

    def f(t: float) -> float:
        p = e0 + t * (e1 - e0)
        return w_in * _norm(p - a) + w_out * _norm(b - p)

    lo, hi = 0.0, 1.0
    c, d = hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo)
    fc, fd = f(c), f(d)
    for _ in range(48):
        if fc < fd:
            hi, d, fd = d, c, fc
            c = hi - _GOLDEN * (hi - lo)
            fc = f(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + _GOLDEN * (hi - lo)
            fd = f(d)
    t = (lo + hi) / 2
    return e0 + t * (e1 - e0), f(t)
