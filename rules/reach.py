"""Where can it go? The region of the table a model may legally end a move in.

For a model and an action, its reach is every point its base's centre can end at: reached
by the shortest legal route within the action's allowance (round and over terrain and
other models, through difficult ground and up levels at their costs, keeping out of the
zones the action must keep out of), and where the rules let it end (on the table, its base
clear of every other base and of the terrain it cannot stand in, outside those zones):
what the referee accepts, so give or take its tolerance as the referee gives it.

How it is worked out: one search from the model's start finds what the shortest legal
route to any point costs (:func:`tablesight.rules.pathing.route_costs`), asked for on a
grid over the allowance's circle: every 0.4 in, then every 0.1 in where the region's
edge, a level's or difficult ground's may pass. A point inside something a route may not
cross takes the cost of the nearest point outside it plus the way in, so that the cost
varies smoothly, and the region where it is within the allowance is traced between grid
points (by linear interpolation, ``contourpy``). Where the rules bound it (a base, a
wall, a zone, the table edge) the exact shapes are cut out of it. Against the same
worked out every 0.025 in, on eight generated tables, half its edge lies within 0.0002 in
and 99% within 0.02 in; the worst, 0.07 in, where the allowance's edge meets a base or a
piece's corner.

>>> from tablesight.rules.scenario import Scenario
>>> scenario = Scenario.from_json('''{"game": "trench-crusade",
...   "table": {"width": 24, "depth": 24},
...   "models": [{"id": "a", "side": "red", "movement": 6,
...               "base": {"shape": "round", "diameter_mm": 25.4},
...               "start": {"x": 12, "y": 12}}]}''')
>>> found = reach(scenario.scene, scenario.ruleset, "a")
>>> round(found.area_sq_in, 1)  # pi 6.05^2: the referee takes 0.05 in past 6 in
115.0
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import contourpy
import numpy as np
import shapely
from shapely.geometry import MultiPolygon, Point, Polygon
from shapely.geometry.base import BaseGeometry

from tablesight.rules.errors import InputError
from tablesight.rules.field import MoveField
from tablesight.rules.grid import GridReferee
from tablesight.rules.measure import Measure
from tablesight.rules.pathing import route_costs
from tablesight.rules.ruleset import ActionRules, Ruleset
from tablesight.rules.scene import Model, Scene
from tablesight.rules.verdict import inches

#: Grid spacing of the route costs, in inches.
STEP_IN = 0.1
#: Every how many grid steps the costs are first worked out (see ``_cost_grid``).
COARSE = 4


@dataclass(frozen=True)
class Reach:
    """Where a model may end a move under one action: ``region`` in table inches, and
    what bounds it (``limits``: each thing with the share of the region's edge it makes)."""

    model: str
    action: str
    allowance_in: float
    region: BaseGeometry
    limits: tuple[tuple[str, float], ...]
    #: A square-grid game's: how many squares the region holds (its allowance is in
    #: movement points); 0 for the games measured in inches.
    squares: int = 0

    @property
    def area_sq_in(self) -> float:
        return float(self.region.area)

    def polygons(self) -> list[Polygon]:
        """The region as separate polygons (a wall may cut it in two)."""
        return [g for g in getattr(self.region, "geoms", [self.region]) if not g.is_empty]

    def explain(self) -> str:
        """One line: how much table, and what limits it."""
        parts = [f"{what} ({share:.0%} of its edge)" for what, share in self.limits]
        limited = ", ".join(parts) if parts else "nothing: it cannot move"
        if self.squares:
            return (
                f"{self.model} may end its {self.action} ({self.allowance_in:.0f} movement "
                f"points) in {self.squares} squares ({self.area_sq_in:.1f} sq in); limited by "
                f"{limited}"
            )
        return (
            f"{self.model} may end its {self.action} ({inches(self.allowance_in)}) on "
            f"{self.area_sq_in:.1f} sq in of table; limited by {limited}"
        )

    def to_geojson(self) -> dict[str, object]:
        """The region as a GeoJSON Feature in table inches (x along the width, y along the
        depth), with the model, the action, the area and the limits as properties."""
        return {
            "type": "Feature",
            "geometry": shapely.geometry.mapping(self.region),
            "properties": {
                "model": self.model,
                "action": self.action,
                "allowance_in": round(self.allowance_in, 3),
                "area_sq_in": round(self.area_sq_in, 2),
                "limits": [{"by": what, "share": round(share, 3)} for what, share in self.limits],
            },
        }


def reach(scene: Scene, ruleset: Ruleset, model_id: str, action: str | None = None) -> Reach:
    """Where ``model_id`` may end a move by ``action`` (its declared action by default)
    from where it starts in ``scene``. Raises ``InputError`` naming an unknown model or
    action."""
    mover, name, rules = _asked(scene, ruleset, model_id, action)
    standing = dataclasses.replace(mover, action=name, end=None)
    scene = _with(scene, standing)
    if ruleset.grid is not None:
        return _squares(scene, ruleset, standing)
    m = Measure(scene, ruleset)
    return _region(m, standing, name, m.allowance(standing, rules), m.kept_out(standing, rules))


def _squares(scene: Scene, ruleset: Ruleset, mover: Model) -> Reach:
    """A square-grid game's reach: the squares a walk reaches within the move's movement
    points and may end in, as the game's own referee counts them."""
    if mover.action == "jet":
        raise InputError(
            "action: a jet flies in a straight line, not a walk: its reach is not worked out"
        )
    referee = GridReferee(scene, ruleset)
    allowance = referee.allowance(mover)
    ends = [
        sq
        for sq in referee.reachable(mover, allowance)
        if referee.may_end_in(mover, sq) or sq == referee.square(mover, at_start=True)
    ]
    to_table = referee.grid.to_table
    squares = [
        Polygon([to_table(c + du, r + dv) for du, dv in ((0, 0), (1, 0), (1, 1), (0, 1))])
        for c, r in ends
    ]
    region = _tidy(shapely.union_all(squares)) if squares else Polygon()
    limit = f"its {allowance:.0f} movement points"
    return Reach(mover.id, mover.action, allowance, region, ((limit, 1.0),), len(ends))


def threat(scene: Scene, ruleset: Ruleset, model_id: str) -> tuple[Reach, list[str]]:
    """Where ``model_id``'s charge could end at most (the best roll of its die), and the
    models of the other side it could reach: any of them may be its target, so their
    zones are open to it, and a model is threatened where the region reaches its base."""
    mover, _, _ = _asked(scene, ruleset, model_id, None)
    charges = [name for name, a in ruleset.actions.items() if a.charge]
    if not charges:
        raise InputError(f"action: {ruleset.title} has no charge")
    name = charges[0]
    rules = ruleset.actions[name]
    best = rules.roll_sides if rules.add_roll else None
    standing = dataclasses.replace(mover, action=name, end=None, target=None, roll=best)
    scene = _with(scene, standing)
    m = Measure(scene, ruleset)
    found = _region(m, standing, name, m.allowance(standing, rules), frozenset())
    r = standing.base.radius_in + m.tol
    threatened = [
        x.id
        for x in scene.models
        if not x.is_friend_of(standing)
        and found.region.intersects(x.base.inflated(x.pose, r, "outer"))
    ]
    return found, threatened


def standing_now(scene: Scene) -> Scene:
    """``scene`` with every model starting where it stands now (for the reach of a move
    still to be made)."""
    return dataclasses.replace(
        scene, models=tuple(dataclasses.replace(m, start=m.pose, end=None) for m in scene.models)
    )


def _asked(
    scene: Scene, ruleset: Ruleset, model_id: str, action: str | None
) -> tuple[Model, str, ActionRules]:
    """The model and the action asked for, or ``InputError`` naming what is wrong."""
    mover = scene.get(model_id)
    if mover is None:
        known = ", ".join(m.id for m in scene.models)
        raise InputError(f"model: no model {model_id!r}; the models are {known}")
    name = action or mover.action
    rules = ruleset.action(name)
    if rules is None:
        raise InputError(f"action: {ruleset.no_such_action(name)}")
    return mover, name, rules


def _with(scene: Scene, model: Model) -> Scene:
    return dataclasses.replace(
        scene, models=tuple(model if m.id == model.id else m for m in scene.models)
    )


def _region(
    m: Measure, mover: Model, action: str, allowance: float, zone_ids: frozenset[str]
) -> Reach:
    """The reach of ``mover`` from its start within ``allowance``, keeping out of the
    zones of ``zone_ids`` on the way and at the end."""
    field = MoveField(m.scene, m.rules, mover, zone_ids)
    cost = _cost_grid(field, mover.start.xy, allowance + m.tol)
    inside = _traced(cost, allowance + m.tol)
    keep_out = _keep_out(m, mover, zone_ids, allowance + m.tol)
    region = _tidy(inside.difference(shapely.union_all([shape for _, shape in keep_out])))
    return Reach(mover.id, action, allowance, region, _limits(region, keep_out, allowance))


def _cost_grid(
    field: MoveField, start: tuple[float, float], level: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The route cost at every grid point over the circle of ``level`` (and a margin).

    Worked out every ``COARSE`` steps first, then, halving the step, only inside the cells
    that may hold the region's edge: a cell whose corners' costs all lie well inside
    ``level``, or all well outside, and that no level's or difficult ground's edge crosses,
    is filled in between its corners (the trace never passes through it).
    """
    span = level + 3.0 * STEP_IN
    n = COARSE * math.ceil(span / (STEP_IN * COARSE))
    xs = start[0] + STEP_IN * np.arange(-n, n + 1)
    ys = start[1] + STEP_IN * np.arange(-n, n + 1)
    gx, gy = np.meshgrid(xs, ys)
    blocked = _blocking(field, start, span)
    deep = None if blocked is None else blocked.buffer(-2.0 * STEP_IN)
    outline = None if blocked is None else blocked.boundary
    for shape in (blocked, deep, outline):
        if shape is not None:
            shapely.prepare(shape)
    # Costs are worked out up to past the widest margin a cell is judged with (below), so
    # that a cell beyond them all is surely outside.
    steepest = max([1.0, *(r.weight for r in field.regions)])
    bound = level + COARSE * STEP_IN * math.sqrt(2.0) * steepest + STEP_IN
    way = route_costs(start, field, bound)
    edges = _edges(field, start, span)
    cost = np.full(gx.shape, np.nan)
    stride = COARSE
    todo = np.zeros(gx.shape, dtype=bool)
    todo[::stride, ::stride] = True
    while True:
        # (on the first, coarsest pass points deep inside what blocks routes take the way
        # in from the nearest point outside too, so that a cell round a base well inside
        # the reach is sure)
        inside = None if stride == COARSE else deep
        points = np.column_stack([gx[todo], gy[todo]])
        cost[todo] = _costs(way, start, points, bound, (blocked, outline, inside), span)
        if stride == 1:
            break
        unsure = _unsure(cost, stride, (gx, gy), level, (field, outline, edges))
        _fill_sure(cost, stride, ~unsure)
        stride //= 2
        todo = np.zeros(gx.shape, dtype=bool)
        rows, cols = np.nonzero(unsure)
        for dr in range(0, 2 * stride + 1, stride):
            for dc in range(0, 2 * stride + 1, stride):
                todo[rows * 2 * stride + dr, cols * 2 * stride + dc] = True
        todo &= np.isnan(cost)
    assert not np.isnan(cost).any()
    return xs, ys, cost


def _unsure(
    cost: np.ndarray,
    stride: int,
    grid: tuple[np.ndarray, np.ndarray],
    level: float,
    what: tuple[MoveField, BaseGeometry | None, BaseGeometry | None],
) -> np.ndarray:
    """Which cells of side ``stride`` (with points still to work out) may hold the edge
    of the region: each point of a cell lies within half its diagonal of a corner, and
    the route cost changes by at most the ground's weight per inch, twice that in a cell
    holding an edge of something in the way (round the end of a wall inside it)."""
    field, outline, edges = what
    gx, gy = grid
    corners = cost[::stride, ::stride]
    m = len(corners) - 1
    open_ = np.isnan(cost[:-1, :-1]).reshape(m, stride, m, stride).any(axis=(1, 3))
    quad = [corners[:-1, :-1], corners[1:, :-1], corners[:-1, 1:], corners[1:, 1:]]
    lo, hi = np.minimum.reduce(quad), np.maximum.reduce(quad)
    rows, cols = np.nonzero(open_)
    x0, x1 = gx[0, cols * stride], gx[0, (cols + 1) * stride]
    y0, y1 = gy[rows * stride, 0], gy[(rows + 1) * stride, 0]
    cells = shapely.box(x0, y0, x1, y1)
    weight = np.ones(len(rows))
    for region in field.regions:
        middle = shapely.contains_xy(region.polygon, (x0 + x1) / 2, (y0 + y1) / 2)
        weight = np.where(middle, np.maximum(weight, region.weight), weight)
    if outline is not None:
        weight = np.where(shapely.intersects(cells, outline), 2.0 * weight, weight)
    margin = stride * STEP_IN * math.sqrt(2.0) / 2.0 * weight
    sure = (hi[rows, cols] <= level - margin) | (lo[rows, cols] >= level + margin)
    if edges is not None:
        sure &= ~shapely.intersects(cells, edges)
    unsure = np.zeros(open_.shape, dtype=bool)
    unsure[rows[~sure], cols[~sure]] = True
    return unsure


def _fill_sure(cost: np.ndarray, stride: int, sure: np.ndarray) -> None:
    """Fill the points still unknown in each sure cell between its corners (bilinearly)."""
    corners = cost[::stride, ::stride]
    size = len(cost)
    index = np.arange(size)
    k = np.minimum(index // stride, len(corners) - 2)
    t = (index - k * stride) / stride
    along = corners[:, k] * (1 - t) + corners[:, k + 1] * t
    between = along[k, :] * (1 - t)[:, None] + along[k + 1, :] * t[:, None]
    cells = np.kron(sure, np.ones((stride, stride), dtype=bool))
    where = np.zeros(cost.shape, dtype=bool)
    where[:-1, :-1] = cells
    where[-1, :-1] = cells[-1, :]
    where[:-1, -1] = cells[:, -1]
    where[-1, -1] = cells[-1, -1]
    fill = where & np.isnan(cost)
    cost[fill] = between[fill]


def _costs(
    way: Callable[[np.ndarray], np.ndarray],
    start: tuple[float, float],
    points: np.ndarray,
    bound: float,
    blocking: tuple[BaseGeometry | None, BaseGeometry | None, BaseGeometry | None],
    span: float,
) -> np.ndarray:
    """The route cost to each point (``way`` works it out): within ``span`` of the start
    exactly where at most ``bound``; a point just inside what blocks routes takes the cost
    of the nearest point outside it and the way in from there (deeper in, where the move
    may not end anyway, as far as the straight line); the rest at least the straight line."""
    blocked, outline, deep = blocking
    far = np.hypot(points[:, 0] - start[0], points[:, 1] - start[1])
    near = np.flatnonzero(far <= span)
    asked = points[near]
    cost = np.full(len(points), np.inf)
    if blocked is not None and len(near):
        # (inside what blocks routes no route arrives: ask for the nearest point outside)
        at = shapely.points(asked)
        inside = shapely.contains(blocked, at)
        if deep is not None and not deep.is_empty:
            inside &= ~shapely.contains(deep, at)
        if inside.any():
            edge = shapely.get_coordinates(shapely.shortest_line(at[inside], outline))[1::2]
            asked = asked.copy()
            asked[inside] = edge + 1e-3 * _unit(edge - points[near[inside]])  # (past chords)
    cost[near] = way(asked) + np.hypot(*(points[near] - asked).T)
    # past the bound, as far as the straight line at least (keeps the trace outside)
    return np.where(np.isfinite(cost), cost, np.maximum(far, bound) + STEP_IN)


def _edges(field: MoveField, start: tuple[float, float], span: float) -> BaseGeometry | None:
    """The edges within ``span`` across which the route cost jumps or bends sharply
    without anything blocking there: of the levels (a climb) and of difficult ground."""
    around = Point(start).buffer(span)
    lines = [v.polygon.boundary for v in field.levels if v.polygon.intersects(around)]
    lines += [r.polygon.boundary for r in field.regions if r.polygon.intersects(around)]
    if not lines:
        return None
    edges = shapely.union_all(lines)
    shapely.prepare(edges)
    return edges


def _unit(v: np.ndarray) -> np.ndarray:
    length = np.hypot(v[:, 0], v[:, 1])
    return np.asarray(v / np.maximum(length, 1e-12)[:, None])


def _blocking(field: MoveField, start: tuple[float, float], span: float) -> BaseGeometry | None:
    """Everything a route may not cross within ``span`` of the start, as one shape: the
    obstacles, and the sides of the levels (where a base below would rub them)."""
    near = field.near(start, start, 2.0 * span)
    shapes = [
        o.core_for(lower=True).buffer(o.radius_in, quad_segs=32)
        if o.radius_in > 0
        else o.core_for(lower=True)
        for o in near.obstacles
    ]
    shapes += [
        v.polygon.buffer(v.side_in, quad_segs=32).difference(v.polygon)
        for v in near.levels
        if v.side_in > 0
    ]
    return shapely.union_all(shapes) if shapes else None


def _traced(grid: tuple[np.ndarray, np.ndarray, np.ndarray], allowance: float) -> BaseGeometry:
    """The region where the route cost is within the allowance, traced between grid points."""
    xs, ys, cost = grid
    generator = contourpy.contour_generator(xs, ys, cost, fill_type=contourpy.FillType.OuterOffset)
    filled = generator.filled(-1.0, allowance)
    out = []
    for points, offset in zip(filled[0], filled[1], strict=True):
        assert points is not None and offset is not None
        rings = [points[a:b] for a, b in itertools.pairwise(offset.tolist())]
        if len(rings[0]) >= 4:
            out.append(Polygon(rings[0], [r for r in rings[1:] if len(r) >= 4]))
    return shapely.make_valid(shapely.union_all(out)) if out else Polygon()


def _keep_out(
    m: Measure, mover: Model, zone_ids: frozenset[str], reach_in: float
) -> list[tuple[str, BaseGeometry]]:
    """Where the move may not end, within ``reach_in`` of its start, each with what it
    is: off the table, on another base (on whatever level that base stands, the end
    stands on it too), in a zone it must keep out of, inside terrain it cannot stand in,
    over a gap, on a top too narrow to rest on. Each is what the referee flags: past the
    tolerance."""
    r, tol = mover.base.radius_in, m.tol
    scene, zone, movement = m.scene, m.rules.zone, m.rules.movement
    start = Point(mover.start.xy)
    zone_in = zone.range_in if zone is not None else 0.0
    near = [
        o
        for o in scene.models
        if o.id != mover.id
        and start.distance(Point(o.pose.xy)) - o.base.reach_in - zone_in - r <= reach_in
    ]
    out: list[tuple[str, BaseGeometry]] = []
    if not movement.may_leave_table:
        t, inset = scene.table, r - tol
        edge = shapely.box(-1e3, -1e3, t.width_in + 1e3, t.depth_in + 1e3).difference(
            shapely.box(inset, inset, t.width_in - inset, t.depth_in - inset)
        )
        out.append(("the table's edge", edge))
    for other in near:
        if other.id in zone_ids and zone is not None:
            grown = other.base.inflated(other.pose, zone.range_in - tol + r, "inner")
            out.append((f"{other.id}'s {inches(zone.range_in)} zone", grown))
        else:
            out.append((f"{other.id}'s base", other.base.inflated(other.pose, r - tol, "inner")))
    narrow = movement.rest_min_top_fraction
    for piece in scene.terrain:
        if piece.polygon.distance(start) - r > reach_in:
            continue
        if piece.has("impassable"):
            out.append((piece.id, piece.polygon.buffer(r - tol, quad_segs=16)))
        elif piece.has("climbable"):
            side = piece.polygon.buffer(r - tol, quad_segs=16).difference(piece.polygon)
            too_narrow = narrow is not None and piece.width_in < narrow * 2.0 * r - tol
            out.append((piece.id, piece.polygon.union(side) if too_narrow else side))
        elif piece.has("gap"):
            out.append((piece.id, piece.polygon))
    return out


def _tidy(region: BaseGeometry) -> BaseGeometry:
    """Polygons only, without slivers thinner than a thousandth of an inch."""
    parts = [
        g for g in getattr(region, "geoms", [region]) if isinstance(g, Polygon) and g.area > 1e-6
    ]
    if not parts:
        return Polygon()
    return parts[0] if len(parts) == 1 else MultiPolygon(parts)


def _limits(
    region: BaseGeometry, keep_out: list[tuple[str, BaseGeometry]], allowance: float
) -> tuple[tuple[str, float], ...]:
    """What bounds the region, each with its share of the region's edge: the allowance
    (the traced edge), and each thing it may not end in."""
    edge = region.boundary
    total = float(edge.length)
    if total <= 0.0:
        return ()
    shares: dict[str, float] = {}
    touching: list[int] | np.ndarray
    shapes = np.asarray([shape for _, shape in keep_out], dtype=object)
    touching = (
        np.flatnonzero(shapely.dwithin(shapes, edge, 2e-3)) if len(shapes) else np.zeros(0, int)
    )
    for k in touching:
        along = float(edge.intersection(shapes[k].buffer(2e-3)).length)
        if along >= 0.005 * total:  # (what makes less than half a percent of it is not said)
            shares[keep_out[k][0]] = along / total
    rest = max(0.0, 1.0 - sum(shares.values()))
    if rest > 1e-3:
        shares[f"its {inches(allowance)} allowance"] = rest
    return tuple(sorted(shares.items(), key=lambda kv: -kv[1]))


def reach_svg(found: Reach, scene: Scene) -> str:
    """The table seen from above with the region shaded: terrain in grey, bases as
    circles (the model's in blue), 20 px to the inch, y up as on the table."""
    px = 20.0
    w, d = scene.table.width_in, scene.table.depth_in

    def path(shape: BaseGeometry, style: str) -> str:
        parts = getattr(shape, "geoms", [shape])
        rings = []
        for part in parts:
            for ring in [part.exterior, *part.interiors]:
                xy = " ".join(f"{x * px:.1f},{(d - y) * px:.1f}" for x, y in ring.coords)
                rings.append(f"M{xy}Z")
        return f'<path d="{" ".join(rings)}" {style} fill-rule="evenodd"/>' if rings else ""

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w * px:.0f}" height="{d * px:.0f}">',
        f'<rect width="{w * px:.0f}" height="{d * px:.0f}" fill="#f4f1ea" stroke="#555"/>',
    ]
    out += [path(t.polygon, 'fill="#9a9a9a" stroke="#444"') for t in scene.terrain]
    out.append(path(found.region, 'fill="#2f7de1" fill-opacity="0.35" stroke="#2f7de1"'))
    for m in scene.models:
        colour = "#2f7de1" if m.id == found.model else "#333"
        out.append(path(m.base.footprint(m.pose), f'fill="none" stroke="{colour}"'))
    out.append("</svg>")
    return "\n".join(x for x in out if x)


class ReachCache:
    """Reach and threat worked out again only when the model, or something within its
    allowance, has moved (by more than a hundredth of an inch) or the terrain changed:
    a table stands still nearly all the time, and a camera's poses jitter."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._kept: dict[tuple[object, ...], object] = {}

    def reach(self, scene: Scene, ruleset: Ruleset, model_id: str, action: str | None) -> Reach:
        key = ("reach", action, *self._around(scene, ruleset, model_id, action))
        found = self._kept.get(key)
        if not isinstance(found, Reach):
            found = reach(scene, ruleset, model_id, action)
            self._keep(key, found)
        return found

    def threat(self, scene: Scene, ruleset: Ruleset, model_id: str) -> tuple[Reach, list[str]]:
        key = ("threat", *self._around(scene, ruleset, model_id, None, threat=True))
        found = self._kept.get(key)
        if not isinstance(found, tuple):
            found = threat(scene, ruleset, model_id)
            self._keep(key, found)
        return found

    def _keep(self, key: tuple[object, ...], value: object) -> None:
        if len(self._kept) >= self.size:
            self._kept.pop(next(iter(self._kept)))
        self._kept[key] = value

    @staticmethod
    def _around(
        scene: Scene, ruleset: Ruleset, model_id: str, action: str | None, threat: bool = False
    ) -> tuple[object, ...]:
        """What the answer depends on: the game, the terrain, the model as it stands and
        every model that may stand within its allowance, to the hundredth of an inch."""
        mover, name, rules = _asked(scene, ruleset, model_id, action)
        roll = rules.roll_sides if threat and rules.add_roll else mover.roll
        allowance = Measure(scene, ruleset).allowance(dataclasses.replace(mover, roll=roll), rules)
        zone = ruleset.zone.range_in if ruleset.zone is not None else 0.0
        far = allowance + zone + 2.0 * mover.base.reach_in + 1.0
        near = tuple(
            (m.id, m.side, round(m.pose.x, 2), round(m.pose.y, 2), round(m.pose.z, 1), m.status)
            for m in scene.models
            if m.id == mover.id or m.start.distance_to(mover.start) <= far + m.base.reach_in
        )
        here = (round(mover.start.x, 2), round(mover.start.y, 2), round(mover.start.z, 1))
        return (ruleset.name, name, scene.terrain, here, roll, near)
