"""Where a straight run crosses into and out of difficult ground, slid to the cheapest
crossings: a run's cost is convex in where each crossing lies along its edge, and the
optimum refracts, as light does. Pure geometry over numpy, for
:mod:`tablesight.rules.pathing`.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def norm(v: np.ndarray) -> float:
    return math.hypot(float(v[0]), float(v[1]))


def distance_to_edges(p: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Distance from point ``p`` to each edge (a segment) in ``edges`` (N, 2, 2)."""
    a, e = edges[:, 0], edges[:, 1] - edges[:, 0]
    t = np.clip(
        np.einsum("ij,ij->i", p - a, e) / np.maximum(np.einsum("ij,ij->i", e, e), 1e-300), 0, 1
    )
    return np.asarray(np.hypot(*(a + t[:, None] * e - p).T))


def crossings(p: np.ndarray, q: np.ndarray, edges: np.ndarray) -> list[tuple[float, int]]:
    """Where segment p-q crosses the edges strictly inside both: (t along p-q, edge index)."""
    d = q - p
    e = edges[:, 1] - edges[:, 0]
    denom = d[0] * e[:, 1] - d[1] * e[:, 0]
    ok = np.abs(denom) > 1e-15
    w = edges[:, 0] - p
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t = (w[:, 0] * e[:, 1] - w[:, 1] * e[:, 0]) / denom
        u = (w[:, 0] * d[1] - w[:, 1] * d[0]) / denom
    hit = ok & (t > 1e-9) & (t < 1 - 1e-9) & (u > 1e-9) & (u < 1 - 1e-9)
    return sorted((float(t[i]), int(i)) for i in np.flatnonzero(hit))


def within(points: list[np.ndarray], edges: np.ndarray) -> bool:
    """Whether no segment of the polyline crosses an edge (each stays in one region)."""
    return not any(crossings(p, q, edges) for p, q in itertools.pairwise(points))


def joint(
    pts: list[np.ndarray], along: list[int], edges: np.ndarray, weights: np.ndarray
) -> tuple[list[np.ndarray], float]:
    """Slide every point with an edge (``along[i] >= 0``) along it at once, minimising the
    run's cost sum(weights[k] |pts[k + 1] - pts[k]|): projected Newton's method on where
    each lies along its edge, kept between the edge's ends, each step halved until the
    cost falls. Returns the points and the farthest any moved."""
    movable = np.asarray([i for i, e in enumerate(along) if e >= 0], dtype=int)
    if not len(movable):
        return pts, 0.0
    edge = edges[np.asarray(along)[movable]]
    e0, d = edge[:, 0], edge[:, 1] - edge[:, 0]
    dd = np.maximum(np.einsum("ij,ij->i", d, d), 1e-300)
    base = np.asarray(pts, dtype=float)
    t = np.clip(np.einsum("ij,ij->i", base[movable] - e0, d) / dd, 0.0, 1.0)
    neighbours = np.flatnonzero(np.diff(movable) == 1)  # movable i and i + 1 share a segment

    def place(t: np.ndarray) -> np.ndarray:
        xy = base.copy()
        xy[movable] = e0 + t[:, None] * d
        return xy

    def cost(t: np.ndarray) -> float:
        xy = place(t)
        return float(weights @ np.hypot(*(xy[1:] - xy[:-1]).T))

    start = place(t)
    now = cost(t)
    for _ in range(30):
        seg = np.diff(place(t), axis=0)
        length = np.hypot(seg[:, 0], seg[:, 1])
        live = length > 1e-12
        u = np.zeros_like(seg)
        u[live] = seg[live] / length[live, None]
        # Gradient and Hessian of w |q - p| in each segment's ends, then in t.
        pull = weights[:, None] * u
        grad_xy = np.zeros_like(base)
        grad_xy[:-1] -= pull
        grad_xy[1:] += pull
        grad = np.einsum("ij,ij->i", grad_xy[movable], d)
        curve = np.zeros((len(seg), 2, 2))
        curve[live] = (np.eye(2) - u[live, :, None] * u[live, None, :]) * (
            weights[live] / length[live]
        )[:, None, None]
        before, after = curve[movable - 1], curve[movable]
        hess = np.diag(np.einsum("ij,ijk,ik->i", d, before + after, d))
        k = neighbours
        off = -np.einsum("ij,ijk,ik->i", d[k], curve[movable[k]], d[k + 1])
        hess[k, k + 1] = off
        hess[k + 1, k] = off
        free = ~(((t <= 0.0) & (grad > 0.0)) | ((t >= 1.0) & (grad < 0.0)))
        if not free.any():
            break
        h = hess[np.ix_(free, free)]
        h += np.eye(len(h)) * (1e-9 * float(np.trace(h)) / len(h) + 1e-12)
        step = np.zeros_like(t)
        try:
            step[free] = -np.linalg.solve(h, grad[free])
        except np.linalg.LinAlgError:
            break
        scale = 1.0
        while scale > 1e-6:
            trial = np.clip(t + scale * step, 0.0, 1.0)
            value = cost(trial)
            if value < now:
                break
            scale /= 2.0
        else:
            break
        shift = float(np.max(np.abs(trial - t) * np.sqrt(dd)))
        t, now = trial, value
        if shift < 1e-10:
            break
    end = place(t)
    out = [end[i] if along[i] >= 0 else pts[i] for i in range(len(pts))]
    return out, float(np.max(np.hypot(*(end - start).T)))


def golden(
    e0: np.ndarray, e1: np.ndarray, a: np.ndarray, b: np.ndarray, w_in: float, w_out: float
) -> tuple[np.ndarray, float]:
    """The point of edge e0-e1 minimising w_in |a - p| + w_out |p - b| (a convex function)."""

    def f(t: float) -> float:
        p = e0 + t * (e1 - e0)
        return w_in * norm(p - a) + w_out * norm(b - p)

    lo, hi = 0.0, 1.0
    c, d = hi - GOLDEN * (hi - lo), lo + GOLDEN * (hi - lo)
    fc, fd = f(c), f(d)
    for _ in range(48):
        if fc < fd:
            hi, d, fd = d, c, fc
            c = hi - GOLDEN * (hi - lo)
            fc = f(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + GOLDEN * (hi - lo)
            fd = f(d)
    t = (lo + hi) / 2
    return e0 + t * (e1 - e0), f(t)
