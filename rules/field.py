"""What stands in a moving model's way: the obstacles and costly regions of its move.

For a mover whose base turns within a disc of radius ``r``:

* a base it may not pass through is an obstacle grown by ``r``;
* a zone it may not enter is the zone's model grown by ``zone + r``;
* impassable terrain is grown by ``r``;
* climbable terrain is a raised level: its sides block as impassable terrain does, and a
  route may climb onto it, across it and down again at the cost ``climb_cost`` says;
* difficult and dangerous terrain and gaps are regions where each inch costs more.

A mover already touching a base, or already inside a zone, at its start (or end) may
leave (or arrive) as it stands: each obstacle is grown only as far as leaves the start
and end outside it. Obstacles are built on demand, only for the ones inside the search
ellipse, so a clear move on a crowded table costs next to nothing.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import LineString, MultiPolygon, Point, Polygon
from shapely.geometry.base import BaseGeometry

from tablesight.rules.geometry import CIRCLE_SEGMENTS, Pose, centre_to_base, outer_scale
from tablesight.rules.levels import XY, Level
from tablesight.rules.pathing import Nearby, Obstacle, Region, in_ellipse
from tablesight.rules.ruleset import Ruleset
from tablesight.rules.scene import Model, Scene, Terrain

#: How far inside a contact the start or end may sit, so touching counts as touching.
CONTACT_EPS_IN = 1e-6


@dataclass
class _Lazy:
    """An obstacle known by its bounding circle until a search needs its polygons."""

    id: str
    kind: str
    center: XY
    radius_in: float
    build: Callable[[], Obstacle]
    _built: Obstacle | None = None

    def get(self) -> Obstacle:
        if self._built is None:
            self._built = self.build()
        return self._built


def on_top_of(terrain: Terrain, pose: Pose, tolerance_in: float) -> bool:
    """True when ``pose`` stands on top of climbable ``terrain`` (centre over it, z level)."""
    return (
        terrain.has("climbable")
        and abs(pose.z - terrain.height_in) <= max(tolerance_in, 1e-9)
        and bool(terrain.polygon.covers(Point(pose.x, pose.y)))
    )


class MoveField:
    """The obstacles and regions one mover meets, for ``tablesight.rules.pathing.shortest_path``.

    ``zone_ids`` are the models whose zones are obstacles (see ``tablesight.rules.checks``).
    """

    def __init__(
        self,
        scene: Scene,
        ruleset: Ruleset,
        mover: Model,
        zone_ids: frozenset[str] = frozenset(),
    ) -> None:
        self.mover = mover
        self.r_in = mover.base.radius_in
        self.difficult = ruleset.movement.difficult_factor(mover.keywords)
        start, end = mover.start, mover.pose
        self._items: list[_Lazy] = []
        self._centres = np.zeros((0, 2))
        self._radii = np.zeros(0)
        self.regions: list[Region] = []
        self._region_circles: list[tuple[XY, float]] = []
        self.levels: list[Level] = []
        self._heights_area: dict[tuple[float, float], BaseGeometry | None] = {}
        self.tol_in = scene.tolerance_in
        self._level_circles: list[tuple[XY, float]] = []
        self.ruleset = ruleset
        zone_in = ruleset.zone.range_in if ruleset.zone else 0.0
        friendly_pass = ruleset.movement.pass_through == "friendly"
        others, grows = [], []
        for other in scene.models:
            if other.id == mover.id:
                continue
            blocks = not (friendly_pass and other.is_friend_of(mover))
            if other.id in zone_ids:
                others.append(other)
                # as at the end of a move, the tolerance applies while passing too
                grows.append(max(zone_in - scene.tolerance_in, 0.0))
            elif blocks:
                others.append(other)
                grows.append(0.0)
        self._add_models(others, np.asarray(grows, dtype=float), start, end)
        self._terrain_reach = np.minimum(
            shapely.distance(scene.terrain_polygons, Point(start.xy)),
            shapely.distance(scene.terrain_polygons, Point(end.xy)),
        )
        for i, piece in enumerate(scene.terrain):
            self._add_terrain(i, piece, ruleset, scene)
        if self.levels:
            self._zones_in_height(scene, zone_in - scene.tolerance_in)
        if not ruleset.movement.may_leave_table:
            self._add_table_edges(scene.table.width_in, scene.table.depth_in)

    def _add_models(self, others: list[Model], grow_in: np.ndarray, start: Pose, end: Pose) -> None:
        if not others:
            return
        xy = np.asarray([m.pose.xy for m in others], dtype=float)
        reach = np.asarray([_reach(m) for m in others], dtype=float)
        radius = grow_in + self.r_in
        # Grow each only as far as leaves the mover's start and end outside (a contact
        # there); only the few models that close need the exact distance. It is measured
        # to the outline the obstacle is grown from: an oval's is a polygon just around
        # its curve, so a base in exact contact with the curve stays outside it.
        for p in (start, end):
            close = np.hypot(xy[:, 0] - p.x, xy[:, 1] - p.y) - reach <= radius
            for k in np.flatnonzero(close):
                m = others[k]
                gap = _to_core(m, p.xy) - CONTACT_EPS_IN
                radius[k] = min(radius[k], gap)
        for k in np.flatnonzero(radius > 0.0):  # else the mover stands on it: an overlap
            self._items.append(_model_item(others[k], float(grow_in[k]), float(radius[k])))

    def _add_terrain(self, i: int, piece: Terrain, ruleset: Ruleset, scene: Scene) -> None:
        if piece.has("climbable") and not piece.has("impassable"):
            self._add_level(i, piece, scene)
        elif piece.has("impassable"):
            reach = float(self._terrain_reach[i])
            if reach <= 0.0:
                return  # standing on or in it: judged as an overlap, not a path
            obstacle = Obstacle(
                piece.id, piece.polygon, min(self.r_in, reach - CONTACT_EPS_IN), "terrain"
            )
            centre, far = scene.terrain_circles[i]
            self._items.append(
                _Lazy(piece.id, "terrain", centre, far + obstacle.radius_in, _const(obstacle))
            )
            return
        weight = region_weight(piece, ruleset, self.difficult)
        if weight != 1.0:
            self.regions.append(Region(piece.id, piece.polygon, weight))
            self._region_circles.append(scene.terrain_circles[i])

    def _add_level(self, i: int, piece: Terrain, scene: Scene) -> None:
        """A climbable piece as a level. A start or end inside its footprint but not on its
        top is judged as an overlap, and the piece is then left out of the route; a start
        or end below it whose base already touches its side may leave or arrive as it
        stands (the side blocks only as far as leaves it clear)."""
        side = self.r_in
        for pose in (self.mover.start, self.mover.pose):
            if on_top_of(piece, pose, scene.tolerance_in):
                continue
            if piece.polygon.contains(Point(pose.xy)):
                return
            side = min(side, float(piece.polygon.distance(Point(pose.xy))) - CONTACT_EPS_IN)
        self.levels.append(Level(piece.id, piece.polygon, piece.height_in, max(side, 0.0)))
        self._level_circles.append(scene.terrain_circles[i])
        weight = region_weight(piece, self.ruleset, self.difficult)
        if weight != 1.0:
            self.regions.append(Region(piece.id, piece.polygon, weight))
            self._region_circles.append(scene.terrain_circles[i])

    def _zones_in_height(self, scene: Scene, range_in: float) -> None:
        """Each zone of a model standing above the table by its range or more kept out of
        only where the route stands within that range in height of it: a model on a 7"
        roof has no zone on the ground below. (Cut when a search first needs the zone.) A
        zone on the ground stays whole over the tops of the pieces beside it: a route over
        a crate's top beside an enemy keeps clear of the enemy's zone there, as it does on
        the ground, which costs no legal move a flag and keeps the search quick."""
        for k, item in enumerate(self._items):
            z_in = scene.model(item.id).pose.z if item.kind == "zone" else 0.0
            if abs(z_in) >= range_in:
                build = self._in_height(item, z_in, range_in)
                self._items[k] = dataclasses.replace(item, build=build)

    def _in_height(self, item: _Lazy, z_in: float, range_in: float) -> Callable[[], Obstacle]:
        def build() -> Obstacle:
            area = self._within_height(z_in, range_in)
            # (a polygon just around the zone's bounding circle: one wholly inside the area
            # needs no cutting)
            r = item.radius_in / math.cos(math.pi / 16)
            if area is None or area.contains(Point(item.center).buffer(r, quad_segs=4)):
                return item.build()
            return _clipped(item.build, area)()

        return build

    def _within_height(self, z_in: float, range_in: float) -> BaseGeometry | None:
        """Where (in plan) the route stands within ``range_in`` of height ``z_in``: None
        for everywhere (worked out once per height)."""
        key = (z_in, range_in)
        if key not in self._heights_area:
            self._heights_area[key] = self._area_within(z_in, range_in)
        return self._heights_area[key]

    def _area_within(self, z_in: float, range_in: float) -> BaseGeometry | None:
        heights = [0.0, *(v.height_in for v in self.levels)]
        if all(abs(h - z_in) < range_in for h in heights):
            return None
        parts = []
        if abs(z_in) < range_in:  # the table, where no level stands
            raised = shapely.union_all([v.polygon for v in self.levels])
            parts.append(shapely.box(-1e4, -1e4, 1e4, 1e4).difference(raised))
        for v in self.levels:
            if abs(v.height_in - z_in) < range_in:
                higher = [w.polygon for w in self.levels if w.height_in > v.height_in]
                parts.append(v.polygon.difference(shapely.union_all(higher)))
        return shapely.union_all(parts) if parts else Polygon()

    def climb(self, rise_in: float) -> float:
        """What a change of level by ``rise_in`` costs this mover."""
        return climb_cost(rise_in, self.ruleset, self.mover)

    def _add_table_edges(self, width_in: float, depth_in: float) -> None:
        """The base may not cross the table edge on the way: four walls outside the table."""
        ends = (self.mover.start.xy, self.mover.pose.xy)
        far = 1000.0
        walls = [
            ("edge-left", (-far, -far, 0.0, depth_in + far), [p[0] for p in ends]),
            (
                "edge-right",
                (width_in, -far, width_in + far, depth_in + far),
                [width_in - p[0] for p in ends],
            ),
            ("edge-bottom", (-far, -far, width_in + far, 0.0), [p[1] for p in ends]),
            (
                "edge-top",
                (-far, depth_in, width_in + far, depth_in + far),
                [depth_in - p[1] for p in ends],
            ),
        ]
        for name, (x0, y0, x1, y1), insets in walls:
            grow = min(self.r_in, *(d - CONTACT_EPS_IN for d in insets))
            if grow <= 0.0:
                continue  # the move starts or ends over the edge: judged as off the table
            centre = ((x0 + x1) / 2, (y0 + y1) / 2)
            obstacle = Obstacle(name, shapely.box(x0, y0, x1, y1), grow, "edge")
            self._items.append(_Lazy(name, "edge", centre, 2 * far, _const(obstacle)))

    def connected(self) -> bool:
        """Whether any route at all joins the start and end (however long)."""
        start, end = Point(self.mover.start.xy), Point(self.mover.pose.xy)
        blocked = shapely.unary_union([_shape(item.get()) for item in self._items])
        free = shapely.box(-1e4, -1e4, 1e4, 1e4).difference(blocked)
        parts = getattr(free, "geoms", [free])
        return any(p.covers(start) and p.covers(end) for p in parts)

    def near(self, start: XY, end: XY, bound_in: float) -> Nearby:
        """Obstacles, regions and levels that a path of at most ``bound_in`` could touch."""
        if len(self._centres) != len(self._items):
            self._centres = np.asarray([item.center for item in self._items], dtype=float)
            self._radii = np.asarray([item.radius_in for item in self._items], dtype=float)
        inside = (
            np.hypot(self._centres[:, 0] - start[0], self._centres[:, 1] - start[1])
            + np.hypot(self._centres[:, 0] - end[0], self._centres[:, 1] - end[1])
            - 2.0 * self._radii
            <= bound_in
        )
        kept = [self._items[k].get() for k in np.flatnonzero(inside)]
        complete = bool(inside.all())
        regions = []
        for region, (centre, radius) in zip(self.regions, self._region_circles, strict=True):
            if in_ellipse(start, end, centre, radius, bound_in):
                regions.append(region)
            else:
                complete = False
        levels = []
        for level, (centre, radius) in zip(self.levels, self._level_circles, strict=True):
            if in_ellipse(start, end, centre, radius + level.side_in, bound_in):
                levels.append(level)
            else:
                complete = False
        return Nearby(kept, regions, complete, levels, self.climb, *self._ends_z())

    def _ends_z(self) -> tuple[float | None, float | None]:
        """The heights the mover starts and ends at, where they are not (within the
        tolerance) those of the levels under its centre."""
        out: list[float | None] = []
        for pose in (self.mover.start, self.mover.pose):
            under = max(
                (v.height_in for v in self.levels if v.polygon.covers(Point(pose.xy))),
                default=0.0,
            )
            out.append(None if abs(pose.z - under) <= max(self.tol_in, 1e-9) else pose.z)
        return out[0], out[1]

    def zones_near(self, line: LineString) -> dict[str, Polygon]:
        """Inner polygons of the zone obstacles that may touch ``line``, by model id."""
        return {
            item.id: _shape(item.get())
            for item in self._items
            if item.kind == "zone" and line.distance(Point(item.center)) <= item.radius_in
        }


class CutBack:
    """``field`` with every obstacle cut back to outside ``goal``: for a route that is done
    once it enters ``goal``, nothing inside it stands in the way, so a search to a point
    inside ``goal`` finds, up to where it enters ``goal``, the shortest route into it
    (exactly when ``goal`` is a disc around that point)."""

    def __init__(self, field: MoveField, goal: Polygon) -> None:
        self.field = field
        self.goal = goal

    def near(self, start: XY, end: XY, bound_in: float) -> Nearby:
        nearby = self.field.near(start, end, bound_in)
        out = []
        for obstacle in nearby.obstacles:
            shape = _shape(obstacle)
            if not shape.intersects(self.goal):
                out.append(obstacle)
                continue
            rest = shape.difference(self.goal)
            for part in getattr(rest, "geoms", [rest]):
                if isinstance(part, Polygon) and part.area > 1e-12:
                    out.append(Obstacle(obstacle.id, part, 0.0, obstacle.kind))
        return dataclasses.replace(nearby, obstacles=out)


def _to_core(model: Model, xy: XY) -> float:
    """How far ``xy`` is outside the outline a model's obstacle is grown from (0 inside)."""
    base, pose = model.base, model.pose
    if base.shape != "oval":
        return centre_to_base(base, pose, xy)
    return float(shapely.distance(base.core(pose, "outer"), Point(xy)))


def _model_item(other: Model, grow_in: float, radius: float) -> _Lazy:
    """A model as an obstacle of the given radius, built when a search first needs it."""
    kind = "zone" if grow_in > 0.0 else "model"
    base, pose = other.base, other.pose

    def build() -> Obstacle:
        lower = None if base.shape != "oval" else base.core(pose, "inner")
        return Obstacle(
            other.id, base.core(pose, "outer"), radius + base.core_radius_in(), kind, lower
        )

    return _Lazy(other.id, kind, pose.xy, _reach(other) + radius, build)


def _reach(model: Model) -> float:
    """How far a model's obstacle outline reaches from its centre: an oval's polygon
    stands a little proud of its curve."""
    reach = model.base.reach_in
    return reach * outer_scale(CIRCLE_SEGMENTS) if model.base.shape == "oval" else reach


def _clipped(build: Callable[[], Obstacle], area: BaseGeometry) -> Callable[[], Obstacle]:
    """An obstacle cut down to ``area``: its outline drawn inside its curve (64 sides to a
    circle: within 0.002 in of it for a 1.5 in zone), then cut. Where nothing is left it
    blocks nothing (a point far off)."""

    def clip() -> Obstacle:
        whole = build()
        core = whole.core_for(lower=True)
        cut = core.buffer(whole.radius_in, quad_segs=16).intersection(area)
        parts = [g for g in getattr(cut, "geoms", [cut]) if isinstance(g, Polygon) and g.area > 0]
        if not parts:
            return Obstacle(whole.id, Point(1e5, 1e5), 0.0, whole.kind)
        return Obstacle(
            whole.id, parts[0] if len(parts) == 1 else MultiPolygon(parts), 0.0, whole.kind
        )

    return clip


def _const(obstacle: Obstacle) -> Callable[[], Obstacle]:
    return lambda: obstacle


def _shape(obstacle: Obstacle) -> Polygon:
    """An obstacle as a polygon just inside it (for connectivity and crossing tests)."""
    core = obstacle.core_for(lower=True)
    grown = core.buffer(obstacle.radius_in * (1.0 - 1e-6), quad_segs=16)
    return grown if isinstance(grown, Polygon) else core


def region_weight(piece: Terrain, ruleset: Ruleset, factor: float) -> float:
    """Inches one inch over ``piece`` costs a mover paying ``factor`` in difficult terrain."""
    movement = ruleset.movement
    if piece.has("gap"):
        ignore = movement.gap_ignore_in
        return 1.0 if ignore is not None and math.floor(piece.width_in + 1e-9) <= ignore else factor
    if piece.has("difficult") or (piece.has("dangerous") and movement.dangerous_as_difficult):
        return factor
    return 1.0


def climb_cost(rise_in: float, ruleset: Ruleset, mover: Model) -> float:
    """Allowance spent changing height by ``rise_in`` (negative: climbing down)."""
    height = abs(rise_in)
    ignore = ruleset.movement.climb_ignore_in
    if height <= 1e-9 or (ignore is not None and math.floor(height + 1e-9) <= ignore):
        return 0.0
    if rise_in > 0 and ignore is not None:
        return height * ruleset.movement.difficult_factor(mover.keywords)
    return height
