"""Raised levels for the route search: footprints at a height a route may climb onto.

A route standing over a level stands on it (the highest, where levels overlap), so the
height under a route is known from where it is in plan, and each change of height along
it is a climb that costs what the game says. A level's sides block a base on anything
lower, unless the route climbs onto it there. :mod:`tablesight.rules.pathing` searches
with these.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import Polygon
from shapely.geometry.base import BaseGeometry

XY = tuple[float, float]

#: How far a path may graze into a level's side without counting (rounding of tangents).
GRAZE_IN = 1e-7


@dataclass(frozen=True)
class Level:
    """A raised surface: every point of ``polygon`` stands at ``height_in``. A base of
    radius ``side_in`` on anything lower may not overlap it, but where it climbs onto it."""

    id: str
    polygon: Polygon
    height_in: float
    side_in: float = 0.0


@dataclass(frozen=True)
class Climb:
    """One change of level along a route: where (on the level's edge), from and to which
    height, and what it cost in inches."""

    at: XY
    from_in: float
    to_in: float
    cost_in: float

    @property
    def rise_in(self) -> float:
        """Up is positive, down negative."""
        return self.to_in - self.from_in


#: What a change of level costs a mover: inches for a rise (negative: a drop) in inches.
ClimbCost = Callable[[float], float]


class Levels:
    """The raised levels of one search: which stands under a point, what a run's climbs
    cost, and where their sides block a base below them."""

    def __init__(self, levels: list[Level], climb: ClimbCost) -> None:
        self.levels = levels
        self.climb = climb
        self.polys = np.asarray([v.polygon for v in levels], dtype=object)
        for poly in self.polys:
            shapely.prepare(poly)
        self.heights = np.asarray([v.height_in for v in levels], dtype=float)
        self.boxes = np.asarray([v.polygon.bounds for v in levels], dtype=float).reshape(-1, 4)
        rings = [ring(v.polygon) for v in levels]
        self.level_edges = [np.stack([r, np.roll(r, -1, axis=0)], axis=1) for r in rings]
        self.edges = (
            np.concatenate([np.stack([r, np.roll(r, -1, axis=0)], axis=1) for r in rings])
            if rings
            else np.zeros((0, 2, 2))
        )
        # Where a level's side blocks nothing: over another level at least as high.
        self.over: list[BaseGeometry | None] = []
        for v in levels:
            higher = [
                w.polygon
                for w in levels
                if w is not v
                and w.height_in >= v.height_in - 1e-9
                and w.polygon.distance(v.polygon) < v.side_in
            ]
            self.over.append(shapely.union_all(higher) if higher else None)

    def __bool__(self) -> bool:
        return bool(self.levels)

    def heights_at(self, xy: np.ndarray) -> np.ndarray:
        """The height each point (rows of ``xy``) stands at: the highest level over it, or 0."""
        xy = np.atleast_2d(xy)
        h = np.zeros(len(xy))
        for poly, height in zip(self.polys, self.heights, strict=True):
            h = np.where(shapely.intersects_xy(poly, xy[:, 0], xy[:, 1]), np.maximum(h, height), h)
        return h

    def ends(
        self, start: XY, end: XY, start_z: float | None, end_z: float | None
    ) -> tuple[list[Climb], list[Climb]]:
        """The climbs from ``start_z`` onto the level under ``start``, and from the level
        under ``end`` to ``end_z``, where those differ."""
        under = self.heights_at(np.asarray([start, end], dtype=float))

        def climb(at: XY, a: float | None, b: float | None) -> list[Climb]:
            if a is None or b is None or abs(b - a) <= 1e-9:
                return []
            return [Climb((float(at[0]), float(at[1])), a, b, float(self.climb(b - a)))]

        return climb(start, start_z, float(under[0])), climb(end, float(under[1]), end_z)

    def change_costs(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        """What going from where each ``p`` stands to where each ``q`` stands costs (arcs)."""
        hp, hq = np.broadcast_arrays(self.heights_at(p), self.heights_at(q))
        return self._rise_costs(hq - hp)

    def _rise_costs(self, rises: np.ndarray) -> np.ndarray:
        """What each rise (negative: a drop) costs, ``climb`` asked once per distinct one;
        no change of height costs nothing."""
        cost = np.zeros(np.shape(rises))
        change = np.abs(rises) > 1e-9
        if change.any():
            unique, back = np.unique(np.round(rises[change], 9), return_inverse=True)
            cost[change] = np.asarray([self.climb(float(r)) for r in unique])[back]
        return cost

    def climb_costs(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        """What the climbs of each straight run p[i]-q[i] cost."""
        cost = np.zeros(len(p))
        near = np.flatnonzero(touching_boxes(p, q, self.boxes))
        if not len(near):
            return cost
        heights, _ = self.profile(p[near], q[near])
        cost[near] = self._rise_costs(np.diff(heights, axis=1)).sum(axis=1)
        return cost

    def profile(self, p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The heights each run p[i]-q[i] stands at, piece by piece between the levels'
        edges: (runs, pieces + 2) heights, the first at p and the last at q, and the
        fractions along the run where each piece begins (its start for p, 1 for q)."""
        t = cuts(p, q, self.edges)
        middles = (t[:, :-1] + t[:, 1:]) / 2.0
        where = np.concatenate([np.zeros((len(p), 1)), middles, np.ones((len(p), 1))], axis=1)
        d = q - p
        xy = p[:, None, :] + where[:, :, None] * d[:, None, :]
        xy[:, 0], xy[:, -1] = p, q  # the ends exactly (a route ends on a level's corner)
        heights = self.heights_at(xy.reshape(-1, 2)).reshape(where.shape)
        # a piece of no length (a run through a corner) stands where the piece before did
        edge = np.zeros((len(p), 1), bool)
        empty = np.concatenate([edge, (t[:, 1:] - t[:, :-1]) < 1e-12, edge], axis=1)
        index = np.where(empty, 0, np.arange(where.shape[1])[None, :])
        heights = np.take_along_axis(heights, np.maximum.accumulate(index, axis=1), axis=1)
        begins = np.concatenate([np.zeros((len(p), 1)), t[:, :-1], np.ones((len(p), 1))], axis=1)
        return heights, begins

    def along(self, p: np.ndarray, q: np.ndarray) -> list[Climb]:
        """Each change of level on the straight run from p to q, in order."""
        heights, begins = self.profile(p[None, :], q[None, :])
        out: list[Climb] = []
        now = heights[0, 0]
        for k in range(1, heights.shape[1]):
            if abs(heights[0, k] - now) > 1e-9:
                xy = p + begins[0, k] * (q - p)
                to = float(heights[0, k])
                cost = float(self.climb(to - float(now)))
                out.append(Climb((float(xy[0]), float(xy[1])), float(now), to, cost))
                now = heights[0, k]
        return out

    def sides_block(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Which runs p[i]-q[i] press a base into a level's side without climbing onto it."""
        bad = np.zeros(len(p), dtype=bool)
        segs = shapely.linestrings(np.stack([p, q], axis=1))
        for k, (level, poly, over) in enumerate(
            zip(self.levels, self.polys, self.over, strict=True)
        ):
            if level.side_in <= GRAZE_IN:
                continue
            near = np.flatnonzero(~bad & (shapely.distance(segs, poly) < level.side_in - GRAZE_IN))
            if not len(near):
                continue
            # climbing onto it: a run that goes over it, or starts or ends on it
            onto = (
                _goes_over(p[near], q[near], poly, self.level_edges[k])
                | shapely.intersects_xy(poly, p[near, 0], p[near, 1])
                | shapely.intersects_xy(poly, q[near, 0], q[near, 1])
            )
            near = near[~onto]
            if over is not None and len(near):
                # the part of the run over something as high as this level passes above it
                below = shapely.difference(segs[near], over)
                near = near[shapely.distance(below, poly) < level.side_in - GRAZE_IN]
            bad[near] = True
        return bad

    def sides_hold(self, xy: np.ndarray) -> np.ndarray:
        """Which points (rows of ``xy``) stand a base against a level's side, below its top."""
        bad = np.zeros(len(xy), dtype=bool)
        points = shapely.points(xy)
        heights = self.heights_at(xy)
        for level, poly in zip(self.levels, self.polys, strict=True):
            d = shapely.distance(points, poly)
            bad |= (d > 1e-9) & (d < level.side_in - 1e-6) & (heights < level.height_in - 1e-9)
        return bad


def touching_boxes(p: np.ndarray, q: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Which segments p[i]-q[i] have a bounding box meeting one of ``boxes`` (rows of
    x0, y0, x1, y1): the only ones that may cross what lies in them."""
    lo, hi = np.minimum(p, q), np.maximum(p, q)
    return np.asarray(
        (
            (lo[:, None, 0] <= boxes[None, :, 2])
            & (hi[:, None, 0] >= boxes[None, :, 0])
            & (lo[:, None, 1] <= boxes[None, :, 3])
            & (hi[:, None, 1] >= boxes[None, :, 1])
        ).any(axis=1)
    )


def _goes_over(p: np.ndarray, q: np.ndarray, polygon: Polygon, edges: np.ndarray) -> np.ndarray:
    """Which segments p[i]-q[i] run some length over ``polygon`` (whose edges are ``edges``)."""
    t = cuts(p, q, edges)
    middles = p[:, None, :] + ((t[:, :-1] + t[:, 1:]) / 2.0)[:, :, None] * (q - p)[:, None, :]
    over = shapely.contains_xy(polygon, middles[..., 0], middles[..., 1])
    long = (t[:, 1:] - t[:, :-1]) * np.hypot(*(q - p).T)[:, None] > 1e-9
    return np.asarray((over & long).any(axis=1))


def cuts(p: np.ndarray, q: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Where each segment p[i]-q[i] crosses the edges (E, 2, 2), as fractions along it in
    order, 0 first and 1 last: (segments, E + 2); a segment that crosses fewer edges has
    its last fractions at 1."""
    d = q - p
    e = edges[:, 1] - edges[:, 0]
    denom = d[:, 0, None] * e[None, :, 1] - d[:, 1, None] * e[None, :, 0]
    w = edges[None, :, 0, :] - p[:, None, :]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t = (w[..., 0] * e[None, :, 1] - w[..., 1] * e[None, :, 0]) / denom
        u = (w[..., 0] * d[:, 1, None] - w[..., 1] * d[:, 0, None]) / denom
    hit = (np.abs(denom) > 1e-15) & (t > 0.0) & (t < 1.0) & (u >= -1e-12) & (u <= 1.0 + 1e-12)
    t = np.where(hit, t, 1.0)
    ends = np.ones((len(p), 1))
    return np.sort(np.concatenate([0.0 * ends, t, ends], axis=1), axis=1)


def ring(poly: Polygon) -> np.ndarray:
    """Exterior ring of ``poly`` counterclockwise, without the closing vertex."""
    ring = poly.exterior
    xy = np.asarray(ring.coords)[:-1]
    return xy if ring.is_ccw else xy[::-1]
