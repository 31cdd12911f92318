"""Opaque solids for the synthetic camera: standing miniatures and terrain as prisms.

A :class:`Prism` is a footprint polygon on the table (inches) extruded from ``z0`` up to
``z1``: a tower or walkway is its terrain footprint extruded to the piece's height, a
standing miniature (:class:`Figure`) a 20-sided cylinder (or a box) on its base.

Solids are ray cast like the rest of :mod:`tablesight.rig.synth`: each of ``supersample``^2
subsamples per pixel is undistorted to a ray, the ray is intersected with every solid's top,
bottom and side faces, and the nearest hit wins (a depth buffer per subsample, so solids hide
one another correctly whatever their order).  A face is shaded by its normal against a fixed
light (Lambert with an ambient term).  Cards (markers, decoys) are then drawn with a depth
test against the solids (:func:`render_scene`): a card behind a solid is hidden, a card on a
solid's top (its face at the top's height or higher) is drawn over it.  The table lies
behind everything, so no test is needed against it.

The runtime never imports this module; it is part of the test rig.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import cv2
import numpy as np

from tablesight.rig.synth import (
    MM_PER_IN,
    PinholeCamera,
    PlacedMarker,
    Shot,
    _draw_patch,
    _draw_table,
    _normalized_coords,
    _Patch,
    _place_decoys,
    _square_corners,
    _subpixel_offsets,
    bbox_of,
    develop,
    outline,
)

__all__ = [
    "FIGURE_BGR",
    "TERRAIN_BGR",
    "Figure",
    "Prism",
    "paint_silhouette",
    "render_scene",
]

#: Reflectances (8-bit BGR before lighting) of a painted miniature and of terrain.
FIGURE_BGR = (70.0, 84.0, 104.0)
TERRAIN_BGR = (120.0, 132.0, 140.0)
#: Unit vector toward the light (up, and from the table's low-x, low-y corner).
LIGHT = tuple(float(v) for v in np.array([-0.35, -0.5, 0.79]) / np.linalg.norm([-0.35, -0.5, 0.79]))
AMBIENT = 0.38
#: Sides of the polygon that stands for a round figure.
ROUND_SIDES = 20
#: A card is drawn over a solid where its depth is no more than this behind the solid's
#: surface, inches (a card lying on a tower's top is coplanar with it).
DEPTH_TOLERANCE_IN = 2e-3

Visible = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def _ccw(poly: np.ndarray) -> np.ndarray:
    x, y = poly[:, 0], poly[:, 1]
    area = float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))
    return poly if area > 0 else poly[::-1]


def _light(normal: Sequence[float]) -> float:
    n = np.asarray(normal, dtype=np.float64)
    n = n / np.linalg.norm(n)
    return AMBIENT + (1.0 - AMBIENT) * max(0.0, float(n @ np.asarray(LIGHT)))


@dataclass(frozen=True, eq=False)
class Prism:
    """An opaque solid: ``footprint`` (N, 2) world x, y inches, extruded from ``z0`` to ``z1``."""

    footprint: np.ndarray
    z0: float
    z1: float
    colour_bgr: tuple[float, float, float] = FIGURE_BGR

    def __post_init__(self) -> None:
        poly = np.asarray(self.footprint, dtype=np.float64).reshape(-1, 2)
        if len(poly) < 3 or not self.z1 > self.z0:
            raise ValueError("a prism needs a polygon of 3+ corners and z1 > z0")
        object.__setattr__(self, "footprint", _ccw(poly))

    def vertices(self) -> np.ndarray:
        """(2N, 3): the bottom outline, then the top one."""
        n = len(self.footprint)
        return np.vstack(
            [
                np.column_stack([self.footprint, np.full(n, self.z0)]),
                np.column_stack([self.footprint, np.full(n, self.z1)]),
            ]
        )

    def bbox(self, camera: PinholeCamera) -> tuple[int, int, int, int] | None:
        rings = [
            outline(np.column_stack([self.footprint, np.full(len(self.footprint), z)]), 6)
            for z in (self.z0, self.z1)
        ]
        return bbox_of(camera, np.vstack(rings))

    def cast(
        self, origin: np.ndarray, dx: np.ndarray, dy: np.ndarray, dz: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Nearest hit of rays origin + s * d: (s, the light of the face hit); s is inf on a
        miss.  ``d`` has a camera-frame z of 1, so s is the hit's depth from the camera."""
        best = np.full(dx.shape, np.inf, dtype=np.float32)
        light = np.zeros(dx.shape, dtype=np.float32)
        ox, oy, oz = (np.float32(v) for v in origin)
        poly = self.footprint
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for z, lit in ((self.z1, _light((0, 0, 1))), (self.z0, _light((0, 0, -1)))):
                s = (np.float32(z) - oz) / dz
                x, y = ox + s * dx, oy + s * dy
                hit = (s > 0) & (s < best) & _inside(poly, x, y)
                best[hit] = s[hit]
                light[hit] = lit
            for a, b in zip(poly, np.roll(poly, -1, axis=0), strict=True):
                ex, ey = float(b[0] - a[0]), float(b[1] - a[1])
                length2 = ex * ex + ey * ey
                if length2 == 0:
                    continue
                nx, ny = np.float32(ey), np.float32(-ex)  # outward: the polygon is CCW
                s = (nx * (np.float32(a[0]) - ox) + ny * (np.float32(a[1]) - oy)) / (
                    nx * dx + ny * dy
                )
                x, y, zz = ox + s * dx, oy + s * dy, oz + s * dz
                t = ((x - np.float32(a[0])) * ex + (y - np.float32(a[1])) * ey) / length2
                hit = (s > 0) & (s < best) & (t >= 0) & (t <= 1) & (zz >= self.z0) & (zz <= self.z1)
                best[hit] = s[hit]
                light[hit] = _light((ey, -ex, 0.0))
        return best, light


def _inside(poly: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Even-odd point-in-polygon test, vectorised over the points."""
    inside = np.zeros(x.shape, dtype=bool)
    for a, b in zip(poly, np.roll(poly, -1, axis=0), strict=True):
        ax, ay, bx, by = (np.float32(v) for v in (a[0], a[1], b[0], b[1]))
        if ay == by:
            continue
        crosses = (ay > y) != (by > y)
        x_at = ax + (y - ay) * ((bx - ax) / (by - ay))
        inside ^= crosses & (x < x_at)
    return inside


@dataclass(frozen=True)
class Figure:
    """A standing miniature on a model's base: a cylinder (or box) ``height_mm`` tall and
    ``width_mm`` across, its centre ``offset_mm`` = (forward, left) of the base centre in the
    model's frame, standing on the base top ``base_mm`` above the model's z."""

    height_mm: float = 45.0
    width_mm: float = 25.0
    offset_mm: tuple[float, float] = (0.0, 0.0)
    shape: Literal["cylinder", "box"] = "cylinder"
    depth_mm: float | None = None  # a box's front-to-back depth; default its width
    base_mm: float = 4.0
    colour_bgr: tuple[float, float, float] = FIGURE_BGR

    def problem(self) -> tuple[str, str] | None:
        """(field, what) of the first bad value, or None."""
        for name in ("height_mm", "width_mm"):
            value = getattr(self, name)
            if not (math.isfinite(value) and 0 < value <= 1000):
                return name, f"must be a length in mm, 0 < it <= 1000, got {value!r}"
        if self.depth_mm is not None and not (
            math.isfinite(self.depth_mm) and 0 < self.depth_mm <= 1000
        ):
            return "depth_mm", f"must be a length in mm, 0 < it <= 1000, got {self.depth_mm!r}"
        if not (math.isfinite(self.base_mm) and 0 <= self.base_mm <= 1000):
            return "base_mm", f"must be a height in mm, 0 to 1000, got {self.base_mm!r}"
        if self.shape not in ("cylinder", "box"):
            return "shape", f"expected 'cylinder' or 'box', got {self.shape!r}"
        if len(self.offset_mm) != 2 or not all(math.isfinite(v) for v in self.offset_mm):
            return "offset_mm", f"expected [forward, left] in mm, got {self.offset_mm!r}"
        return None

    def prism(self, x: float, y: float, heading_deg: float, z: float = 0.0) -> Prism:
        """The solid for a model standing at (x, y, z) turned to ``heading_deg``."""
        half_w = self.width_mm / 2 / MM_PER_IN
        if self.shape == "box":
            half_d = (self.depth_mm or self.width_mm) / 2 / MM_PER_IN
            local = np.array(
                [[half_d, half_w], [-half_d, half_w], [-half_d, -half_w], [half_d, -half_w]]
            )
        else:
            a = np.linspace(0.0, 2 * math.pi, ROUND_SIDES, endpoint=False)
            local = np.column_stack([half_w * np.cos(a), half_w * np.sin(a)])
        local = local + np.asarray(self.offset_mm, dtype=np.float64) / MM_PER_IN
        h = math.radians(heading_deg)
        c, s = math.cos(h), math.sin(h)
        world = np.column_stack(
            [x + c * local[:, 0] - s * local[:, 1], y + s * local[:, 0] + c * local[:, 1]]
        )
        z0 = z + self.base_mm / MM_PER_IN
        return Prism(world, z0, z0 + self.height_mm / MM_PER_IN, self.colour_bgr)


def _world_dirs(camera: PinholeCamera, xn: np.ndarray, yn: np.ndarray) -> tuple[np.ndarray, ...]:
    """World directions (camera-frame z = 1) of rays through normalized (xn, yn)."""
    r = camera.rotation.astype(np.float32)
    return tuple(r[0, i] * xn + r[1, i] * yn + r[2, i] for i in range(3))


def _overlap(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def draw_solids(
    out: np.ndarray, camera: PinholeCamera, solids: Sequence[Prism], ss: int
) -> tuple[np.ndarray, list[tuple[Prism, tuple[int, int, int, int]]]]:
    """Composite the solids over ``out`` (float32 HxWx3) with a depth buffer per subsample;
    returns their coverage (HxW, 0..1) and the solids seen with their pixel boxes."""
    h, w = out.shape[:2]
    seen = [(p, b) for p in solids if (b := p.bbox(camera)) is not None]
    count = np.zeros((h, w), dtype=np.float32)
    colour = np.zeros((h, w, 3), dtype=np.float32)
    origin = camera.position_in
    offsets = _subpixel_offsets(ss)
    for i, (prism, box) in enumerate(seen):
        others = [q for j, (q, b) in enumerate(seen) if j != i and _overlap(box, b)]
        x0, y0, x1, y1 = box
        base = np.asarray(prism.colour_bgr, dtype=np.float32)
        for dx, dy in offsets:
            xn, yn = _normalized_coords(camera, x0, x1, y0, y1, dx, dy)
            d = _world_dirs(camera, xn, yn)
            depth, light = prism.cast(origin, *d)
            win = np.isfinite(depth)
            for q in others:
                win &= depth < q.cast(origin, *d)[0]
            count[y0:y1, x0:x1] += win
            colour[y0:y1, x0:x1] += (win * light)[..., None] * base
    n = np.float32(len(offsets))
    coverage = count / n
    out *= (1.0 - coverage)[..., None]
    out += colour / n
    return coverage, seen


def _depth_test(solids: Sequence[Prism], camera: PinholeCamera) -> Visible:
    origin = camera.position_in

    def visible(xn: np.ndarray, yn: np.ndarray, s: np.ndarray) -> np.ndarray:
        d = _world_dirs(camera, xn, yn)
        nearest = np.full(xn.shape, np.inf, dtype=np.float32)
        for p in solids:
            np.minimum(nearest, p.cast(origin, *d)[0], out=nearest)
        return s <= nearest + np.float32(DEPTH_TOLERANCE_IN) * (1 + s * np.float32(1e-3))

    return visible


def render_scene(
    camera: PinholeCamera,
    table_in: tuple[float, float] = (44.0, 30.0),
    markers: Sequence[PlacedMarker] = (),
    solids: Sequence[Prism] = (),
    decoys: int = 0,
    shot: Shot | None = None,
    texture_seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`tablesight.rig.synth.render_table` with opaque solids standing on the table:
    (HxWx3 uint8 BGR picture, HxW float32 coverage of the solids before blur).

    With no solids the picture is exactly ``render_table``'s.
    """
    shot = Shot() if shot is None else shot
    table = (float(table_in[0]), float(table_in[1]))
    img = _draw_table(camera, table, texture_seed)
    ss = max(1, int(shot.supersample))
    coverage, seen = draw_solids(img, camera, solids, ss)
    patches = _place_decoys(decoys, table, markers, np.random.default_rng([texture_seed, 0xDEC0]))
    patches += [m._patch() for m in markers]
    for patch in sorted(patches, key=lambda p: p.centre[2]):
        near = seen and _card_box(camera, patch)
        hiding = [p for p, b in seen if near and _overlap(near, b)]
        _draw_patch(img, camera, patch, ss, _depth_test(hiding, camera) if hiding else None)
    return develop(img, shot), coverage


def _card_box(camera: PinholeCamera, patch: _Patch) -> tuple[int, int, int, int] | None:
    corners = _square_corners(np.array(patch.centre), patch.heading_deg, patch.card_half_in)
    return bbox_of(camera, outline(corners))


def paint_silhouette(
    img: np.ndarray, camera: PinholeCamera, prism: Prism, alpha: float = 1.0
) -> None:
    """Paint a convex solid (a carried figure) over a uint8 or float picture in image space:
    the projected hull in its sides' shade, the top face lighter; no depth test."""
    verts = prism.vertices()
    if np.any(camera.to_camera(verts)[:, 2] <= 0):
        return
    px = camera.project(verts)
    n = len(prism.footprint)
    hull = cv2.convexHull(px.astype(np.float32)).reshape(-1, 2)
    base = np.asarray(prism.colour_bgr, dtype=np.float32)
    h, w = img.shape[:2]
    layers = [(hull, 0.62), (px[n:], _light((0, 0, 1)))]
    for poly, lit in layers:
        mask = np.zeros((h, w), dtype=np.uint8)
        cv2.fillPoly(mask, [np.round(poly * 16).astype(np.int32)], 255, cv2.LINE_AA, 4)
        ys, xs = np.nonzero(mask)
        if len(ys) == 0:
            continue
        a = (mask[ys, xs].astype(np.float32) / 255.0 * alpha)[:, None]
        region = img[ys, xs].astype(np.float32)
        painted = region + a * (base * lit - region)
        if img.dtype == np.uint8:
            painted = np.clip(np.rint(painted), 0, 255)
        img[ys, xs] = painted.astype(img.dtype)
