"""Bases, poses and distances in table inches.

Round and oval bases are curves; shapely works on polygons. Every curved shape is
therefore available in two polygon versions that bracket the truth: ``inner``
(vertices on the curve, so the polygon lies inside the true shape) and ``outer``
(edges tangent to the curve, so the polygon contains it). Path lengths computed
around inner shapes are lower bounds, around outer shapes upper bounds.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import shapely
from shapely.geometry import Point, Polygon

MM_PER_IN = 25.4

#: Vertices of the polygon standing in for a full circle in path finding.
CIRCLE_SEGMENTS = 32
#: Segments per quarter circle when shapely buffers a polygon (inflating it by a radius).
QUAD_SEGS = 8
#: Vertices used for distance measurement between curved bases (error < 0.0005 in).
FINE_SEGMENTS = 128

Variant = Literal["inner", "outer"]
BaseShape = Literal["round", "oval", "rect"]


def outer_scale(segments: int) -> float:
    """Radius factor that turns a regular polygon inscribed in a circle into one circumscribed."""
    return 1.0 / math.cos(math.pi / segments)


#: Radius factor that makes shapely buffer arcs of ``QUAD_SEGS`` segments per quarter circle
#: contain the true arc. GEOS rounds the number of chords of a corner, so one chord may span
#: up to twice the nominal angle; this covers that.
BUFFER_OUTER_SCALE = outer_scale(2 * QUAD_SEGS)


@dataclass(frozen=True)
class Pose:
    """Where a model stands: centre in table inches, heading in degrees CCW from +x, height z."""

    x: float
    y: float
    heading: float = 0.0
    z: float = 0.0

    @property
    def xy(self) -> tuple[float, float]:
        return (self.x, self.y)

    def distance_to(self, other: Pose) -> float:
        """Horizontal distance between the two centres, in inches."""
        return math.hypot(self.x - other.x, self.y - other.y)


@dataclass(frozen=True)
class Base:
    """A model's base; ``length_mm`` runs along the model's heading.

    >>> Base.round(32).radius_in
    0.6299212598425197
    """

    shape: BaseShape
    length_mm: float
    width_mm: float

    @classmethod
    def round(cls, diameter_mm: float) -> Base:
        return cls("round", diameter_mm, diameter_mm)

    @functools.cached_property
    def radius_in(self) -> float:
        """Half the base's smallest dimension: the radius of the disc it can turn within."""
        return min(self.length_mm, self.width_mm) / MM_PER_IN / 2.0

    @functools.cached_property
    def reach_in(self) -> float:
        """How far the base reaches from its centre: half a rect's diagonal, an oval's
        half-length, a round base's radius."""
        half_l, half_w = self.length_mm / MM_PER_IN / 2.0, self.width_mm / MM_PER_IN / 2.0
        return math.hypot(half_l, half_w) if self.shape == "rect" else max(half_l, half_w)

    def core(self, pose: Pose, variant: Variant = "outer") -> Point | Polygon:
        """What the base is, for growing by a radius: its centre point if round (then the
        radius grows by the base's own), else its outline (an oval's brackets its curve)."""
        if self.shape == "round":
            return Point(pose.x, pose.y)
        return self.footprint(pose, variant, CIRCLE_SEGMENTS)

    def core_radius_in(self) -> float:
        """The radius already in the core: a round base's own radius, else 0."""
        return self.length_mm / MM_PER_IN / 2.0 if self.shape == "round" else 0.0

    def footprint(
        self, pose: Pose, variant: Variant = "inner", segments: int = FINE_SEGMENTS
    ) -> Polygon:
        """The outline at ``pose`` as a polygon (inner or outer bracket of the true curve)."""
        return _footprint(self, pose, variant, segments)

    def inflated(self, pose: Pose, radius_in: float, variant: Variant) -> Polygon:
        """The set of centres a disc of ``radius_in`` cannot occupy without touching this base.

        This is the base grown by ``radius_in`` (a Minkowski sum); ``inner`` lies inside the
        true grown shape and ``outer`` contains it.
        """
        if self.shape == "round":
            radius = self.length_mm / MM_PER_IN / 2.0 + radius_in
            return circle((pose.x, pose.y), radius, variant)
        return inflate(self.footprint(pose, variant, CIRCLE_SEGMENTS), radius_in, variant)


@functools.lru_cache(maxsize=8192)
def _footprint(base: Base, pose: Pose, variant: Variant, segments: int) -> Polygon:
    half_l = base.length_mm / MM_PER_IN / 2.0
    half_w = base.width_mm / MM_PER_IN / 2.0
    if base.shape == "rect":
        local = np.array(
            [(-half_l, -half_w), (half_l, -half_w), (half_l, half_w), (-half_l, half_w)]
        )
    else:
        scale = outer_scale(segments) if variant == "outer" else 1.0
        angles = np.linspace(0.0, 2.0 * math.pi, segments, endpoint=False)
        local = np.column_stack([half_l * scale * np.cos(angles), half_w * scale * np.sin(angles)])
    theta = math.radians(pose.heading)
    c, s = math.cos(theta), math.sin(theta)
    rotated = local @ np.array([[c, s], [-s, c]])
    return Polygon(rotated + np.array([pose.x, pose.y]))


def circle(center: tuple[float, float], radius_in: float, variant: Variant) -> Polygon:
    """A regular polygon standing for a circle: inscribed (inner) or circumscribed (outer)."""
    r = radius_in * (outer_scale(CIRCLE_SEGMENTS) if variant == "outer" else 1.0)
    angles = np.linspace(0.0, 2.0 * math.pi, CIRCLE_SEGMENTS, endpoint=False)
    return Polygon(
        np.column_stack([center[0] + r * np.cos(angles), center[1] + r * np.sin(angles)])
    )


def inflate(polygon: Polygon, radius_in: float, variant: Variant) -> Polygon:
    """``polygon`` grown by ``radius_in`` in every direction, bracketing the rounded corners."""
    if radius_in <= 0.0:
        return polygon
    r = radius_in * (BUFFER_OUTER_SCALE if variant == "outer" else 1.0)
    grown = polygon.buffer(r, quad_segs=QUAD_SEGS)
    assert isinstance(grown, Polygon)
    return grown


def edge_distance(a: Base, pose_a: Pose, b: Base, pose_b: Pose) -> float:
    """Edge-to-edge distance between the closest points of two bases, horizontally, in inches.

    Negative when the bases overlap: then it is minus the overlap depth, how far apart they
    must be pushed to stop overlapping. Exact when one base is round and the other round or
    rect; an oval is measured as a 128-gon on its curve (error under 0.03% of its length).

    >>> round(edge_distance(Base.round(25.4), Pose(0, 0), Base.round(25.4), Pose(3, 4)), 6)
    4.0
    """
    if a.shape == "round" and b.shape == "round":
        return pose_a.distance_to(pose_b) - a.radius_in - b.radius_in
    if b.shape == "round":
        a, pose_a, b, pose_b = b, pose_b, a, pose_a
    fb = b.footprint(pose_b)
    if a.shape == "round":
        # A disc against a convex outline: centre distance to it, less the radius.
        centre = Point(pose_a.x, pose_a.y)
        outside = float(shapely.distance(centre, fb))
        if outside > 0.0:
            return outside - a.radius_in
        return -(a.radius_in + float(shapely.distance(centre, fb.exterior)))
    fa = a.footprint(pose_a)
    gap = float(shapely.distance(fa, fb))
    return gap if gap > 0.0 else -overlap_depth(fa, fb)


def gap_lower_bound(a: Base, pose_a: Pose, b: Base, pose_b: Pose) -> float:
    """A cheap lower bound of ``edge_distance``: centre distance minus both reaches."""
    return pose_a.distance_to(pose_b) - a.reach_in - b.reach_in


def centre_to_base(base: Base, pose: Pose, xy: tuple[float, float]) -> float:
    """Horizontal distance from the point ``xy`` to the edge of the base (0 inside it)."""
    if base.shape == "round":
        return max(0.0, math.dist(xy, pose.xy) - base.radius_in)
    return float(shapely.distance(base.footprint(pose), Point(xy)))


def overlap_depth(a: Polygon, b: Polygon) -> float:
    """How deep two outlines press into each other, in inches (0 when apart).

    The penetration depth: the shortest push that separates them. For convex outlines it
    is the shortest push along the normals of their edges that clears their shadows (the
    separating axis theorem); a non-convex outline is taken as its convex hull. Two discs give
    exactly ``r1 + r2 - centre distance``.
    """
    if not a.intersects(b) or a.intersection(b).area <= 0.0:
        return 0.0
    pa = np.asarray(a.convex_hull.exterior.coords)[:-1]
    pb = np.asarray(b.convex_hull.exterior.coords)[:-1]
    edges = np.concatenate([np.roll(pa, -1, axis=0) - pa, np.roll(pb, -1, axis=0) - pb])
    normals = np.column_stack([-edges[:, 1], edges[:, 0]])
    normals /= np.hypot(normals[:, 0], normals[:, 1])[:, None]
    sa, sb = pa @ normals.T, pb @ normals.T
    # The push along each axis that clears them, either way; the shortest over all axes.
    push = np.minimum(sa.max(0) - sb.min(0), sb.max(0) - sa.min(0))
    return float(max(push.min(), 0.0))


def depth_inside(outline: Polygon, region: Polygon) -> float:
    """How far ``outline`` reaches inside ``region`` (any shape), in inches: the deepest
    corner of their intersection, measured from the region's edge. 0 when apart.

    >>> from shapely.geometry import box
    >>> depth_inside(box(0, 0, 2, 2), box(1.5, -5, 9, 5))
    0.5
    """
    common = outline.intersection(region)
    if common.is_empty or common.area <= 0.0:
        return 0.0
    corners = shapely.points(shapely.get_coordinates(common))
    return float(shapely.distance(corners, region.boundary).max())
