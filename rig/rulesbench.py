"""How fast the referee judges moves on a crowded table: figures for ``tablesight bench``.

The table is 60 x 44 in with 40 terrain pieces (walls and buildings, some difficult
ground) and 100 models in units of five. Four timings:

* a clear move: one model moves straight into open ground;
* a detour: one model's straight line is blocked by terrain or models;
* across levels: the same detours with every wall a climbable piece 1-5 in high, so a
  route may go round or over any number of them;
* the whole table: all 100 models moved at once.

For the square-grid game (``run_grid``): a 60 x 40 square deck with 30 characters.

The baseline is the least any judge must do for one move: the edge-to-edge distance
from the mover to every other model (for the whole table: that, for every mover).
Timings on a shared machine drift; each case sample is timed right after a baseline
sample, and the ratio of the two is the figure that travels between machines.

Moves are chosen one after another, as a phase is played, and a single move is
judged against the table as it stood then (earlier movers at their new places).

"""

from __future__ import annotations

import gc
import math
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from shapely.geometry import LineString, Point, Polygon, box

from tablesight.rules.geometry import Base, Pose, edge_distance
from tablesight.rules.referee import Referee
from tablesight.rules.ruleset import Ruleset, load_ruleset
from tablesight.rules.scene import Model, Scene, Table, Terrain
from tablesight.rules.squares import Grid

WIDTH_IN, DEPTH_IN = 60.0, 44.0


@dataclass(frozen=True)
class Timing:
    """Milliseconds per call over ``n`` calls, and the goal it is held to (if any)."""

    name: str
    n: int
    p50_ms: float
    p95_ms: float
    max_ms: float
    goal_ms: float | None = None
    #: Median over samples of (this sample / the baseline sample timed just before it).
    ratio: float = 1.0

    @classmethod
    def of(
        cls,
        name: str,
        samples_s: list[float],
        goal_ms: float | None = None,
        baseline_s: list[float] | None = None,
    ) -> Timing:
        ms = sorted(s * 1000.0 for s in samples_s)
        p95 = ms[min(len(ms) - 1, math.ceil(0.95 * len(ms)) - 1)]
        ratio = (
            statistics.median(c / b for c, b in zip(samples_s, baseline_s, strict=True))
            if baseline_s
            else 1.0
        )
        return cls(name, len(ms), statistics.median(ms), p95, ms[-1], goal_ms, ratio)


def crowded_table(seed: int = 7) -> tuple[Scene, Ruleset]:
    """40 terrain pieces and 100 round and oval models on a 60 x 44 in table, nothing moved."""
    rng = random.Random(seed)
    ruleset = load_ruleset("necromunda")
    terrain: list[Terrain] = []
    taken: list[Polygon] = []
    while len(terrain) < 40:
        w, d = rng.uniform(1.0, 6.0), rng.uniform(1.0, 6.0)
        if rng.random() < 0.4:
            w, d = (rng.uniform(4, 8), 0.5) if rng.random() < 0.5 else (0.5, rng.uniform(4, 8))
        x, y = rng.uniform(1, WIDTH_IN - w - 1), rng.uniform(1, DEPTH_IN - d - 1)
        poly = box(x, y, x + w, y + d)
        if any(poly.distance(t) < 2.0 for t in taken):
            continue
        taken.append(poly)
        kind = "difficult" if len(terrain) % 4 == 0 else "impassable"
        terrain.append(Terrain(f"t{len(terrain)}", poly, 3.0, frozenset({kind})))
    models: list[Model] = []
    spots: list[Polygon] = []
    while len(models) < 100:
        i = len(models)
        base = Base("oval", 60, 35) if i % 10 == 9 else Base.round(rng.choice([25.4, 32.0, 40.0]))
        pose = Pose(rng.uniform(2, WIDTH_IN - 2), rng.uniform(2, DEPTH_IN - 2), rng.uniform(0, 360))
        foot = base.footprint(pose)
        if any(foot.distance(t) < 0.3 for t in taken) or any(foot.distance(s) < 1.2 for s in spots):
            continue
        spots.append(foot)
        side = "a" if i < 50 else "b"
        models.append(
            Model(
                id=f"m{i:03d}",
                side=side,
                unit=f"{side}{i // 5}",
                base=base,
                movement_in=6.0,
                start=pose,
            )
        )
    return Scene(Table(WIDTH_IN, DEPTH_IN), tuple(models), tuple(terrain)), ruleset


def _moves(scene: Scene, rng: random.Random) -> tuple[list[Model], list[Model]]:
    """A move of 3-6 in for every model, chosen one after another as a phase is played:
    each ends clear of terrain and at least 1.2 in from every model where it stands by
    then. Returns the moves whose straight line is clear and those that must detour."""
    clear: list[Model] = []
    detour: list[Model] = []
    walls = [t.polygon for t in scene.terrain if t.has("impassable")]
    standing = {m.id: m.base.footprint(m.start) for m in scene.models}
    for k, m in enumerate(scene.models):
        others = [f for mid, f in standing.items() if mid != m.id]
        want_detour = k % 3 == 0  # every third model looks for a move it must detour
        for attempt in range(400):
            angle, dist = rng.uniform(0, 2 * math.pi), rng.uniform(3.0, 6.0)
            end = Pose(m.start.x + dist * math.cos(angle), m.start.y + dist * math.sin(angle))
            if not (2 <= end.x <= WIDTH_IN - 2 and 2 <= end.y <= DEPTH_IN - 2):
                continue
            here = Point(end.xy).buffer(m.base.reach_in + 1.2)
            if any(here.intersects(w) for w in walls) or any(here.intersects(o) for o in others):
                continue
            line = LineString([m.start.xy, end.xy]).buffer(m.base.radius_in)
            blocked = any(line.intersects(w) for w in walls)
            near = any(line.distance(o) < 1.0 for o in others)
            crosses = any(line.intersects(t.polygon) for t in scene.terrain)
            if blocked:
                detour.append(replace(m, end=end))
            elif not (near or crosses) and (not want_detour or attempt >= 300):
                clear.append(replace(m, end=end))
            else:
                continue
            standing[m.id] = m.base.footprint(end)
            break
    return clear, detour


def _time(fn: Callable[[], object]) -> float:
    """Seconds for one call, with the garbage collector held off as ``timeit`` does."""
    gc.disable()
    try:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    finally:
        gc.enable()


def run(seed: int = 7, repeats: int = 3) -> list[Timing]:
    """Time the three cases and the baseline; returns one ``Timing`` per case."""
    scene, ruleset = crowded_table(seed)
    clear, detour = _moves(scene, random.Random(seed))

    by_id = {m.id: m for m in clear + detour}
    everything = replace(scene, models=tuple(by_id.get(m.id, m) for m in scene.models))
    order = [m.id for m in scene.models]

    def one(moved: Model) -> Callable[[], object]:
        # The table as it stood at that move: earlier movers moved, later ones not yet.
        k = order.index(moved.id)
        then = tuple(by_id.get(m.id, m) if i <= k else m for i, m in enumerate(scene.models))
        at_the_time = replace(scene, models=then)
        return lambda: Referee(at_the_time, ruleset).judge_model(moved.id)

    def baseline(moved: Model) -> Callable[[], object]:
        return lambda: [edge_distance(moved.base, moved.pose, m.base, m.pose) for m in scene.models]

    # Each sample of a case is timed right after a baseline sample, so that both see the
    # machine in the same state; the ratio column is the median of those pairs.
    def paired(cases: list[Model]) -> tuple[list[float], list[float]]:
        base, case = [], []
        for m in cases * repeats:
            base.append(_time(baseline(m)))
            case.append(_time(one(m)))
        return base, case

    clear_base, clear_times = paired(clear)
    detour_base, detour_times = paired(detour)
    # The same detours with every wall a climbable piece 1-5 in high: each route may go
    # round or climb over any number of them (``one`` judges on ``scene`` as it is now).
    heights = random.Random(seed)
    scene = replace(
        scene,
        terrain=tuple(
            replace(
                t, height_in=heights.choice([1.0, 2.0, 3.0, 5.0]), keywords=frozenset({"climbable"})
            )
            if t.has("impassable")
            else t
            for t in scene.terrain
        ),
    )
    levels_base, levels_times = paired(detour)
    whole, whole_base = [], []
    for _ in range(repeats):
        whole_base.append(sum(_time(baseline(m)) for m in by_id.values()))
        whole.append(_time(lambda: Referee(everything, ruleset).judge()))
    results = [
        Timing.of("baseline: distances to all models", clear_base),
        Timing.of(f"clear move ({len(clear)} models)", clear_times, 2.0, clear_base),
        Timing.of(f"detour ({len(detour)} models)", detour_times, 20.0, detour_base),
        Timing.of(f"across levels ({len(detour)} models)", levels_times, 20.0, levels_base),
        Timing.of(f"all {len(by_id)} moved at once", whole, 300.0, whole_base),
    ]
    return results


def ship_deck(seed: int = 7) -> tuple[Scene, Ruleset]:
    """A 60 x 40 square deck (1 in squares) with bulkheads, slagged modules, barrels, an
    outside strip and 30 characters of two crews, each given a move of 2-8 squares."""
    rng = random.Random(seed)
    ruleset = load_ruleset("battlestations")
    terrain: list[Terrain] = []

    def cells(name: str, c0: int, r0: int, c1: int, r1: int, *keywords: str) -> None:
        terrain.append(Terrain(name, box(c0, r0, c1, r1), 0.0, frozenset(keywords)))

    for k, c in enumerate(range(8, 56, 8)):  # bulkheads with a 2-square gap each
        gap = rng.randrange(2, 36)
        cells(f"bulkhead-{k}a", c, 0, c + 1, gap, "wall")
        cells(f"bulkhead-{k}b", c, gap + 2, c + 1, 38, "wall")
    for k in range(4):
        c, r = rng.randrange(0, 50), rng.randrange(0, 30)
        cells(f"slag-{k}", c, r, c + 6, r + 6, "slagged")
    for k in range(10):
        c, r = rng.randrange(0, 60), rng.randrange(0, 38)
        cells(f"barrel-{k}", c, r, c + 1, r + 1, "barrel")
    cells("space", 0, 38, 60, 40, "outside")
    taken: set[tuple[int, int]] = set()
    models: list[Model] = []
    while len(models) < 30:
        c, r = rng.randrange(0, 60), rng.randrange(0, 38)
        if (c, r) in taken or any(t.polygon.contains(Point(c + 0.5, r + 0.5)) for t in terrain):
            continue
        taken.add((c, r))
        i = len(models)
        action = ("move", "move_as_action", "jet")[i % 3]
        dc, dr = rng.randint(-5, 5), rng.randint(-5, 5)
        end = Pose(min(max(c + dc, 0), 59) + 0.5, min(max(r + dr, 0), 37) + 0.5)
        models.append(
            Model(
                id=f"c{i:02d}",
                side="crew" if i % 2 else "pirates",
                unit=f"c{i:02d}",
                base=Base.round(25.0),
                movement_in=0.0,
                start=Pose(c + 0.5, r + 0.5),
                end=end,
                keywords=frozenset({"jetpack"} if action == "jet" else ()),
                action=action,
                move_squares=rng.randint(2, 6),
            )
        )
    scene = Scene(Table(60.0, 40.0), tuple(models), tuple(terrain), grid=Grid())
    return scene, ruleset


def run_grid(seed: int = 7, repeats: int = 20) -> list[Timing]:
    """Judging all 30 characters of ``ship_deck`` at once, against a baseline of counting
    their Manhattan distances (what a judge that ignores walls and costs would do)."""
    from tablesight.rules.grid import GridReferee

    scene, ruleset = ship_deck(seed)
    grid = scene.grid or Grid()

    def manhattan() -> int:
        total = 0
        for m in scene.models:
            (c0, r0), (c1, r1) = grid.square_of(*m.start.xy), grid.square_of(*m.pose.xy)
            total += abs(c1 - c0) + abs(r1 - r0)
        return total

    base, times = [], []
    for _ in range(repeats):
        base.append(_time(manhattan))
        times.append(_time(lambda: GridReferee(scene, ruleset).judge()))
    return [
        Timing.of("baseline: Manhattan counts for all", base),
        Timing.of("all 30 characters judged", times, 20.0, base),
    ]


def report(timings: list[Timing]) -> str:
    """The figures as a table; ratios are to baseline samples timed alongside."""
    lines = [
        f"{'case':<36}{'n':>5}{'p50 ms':>10}{'p95 ms':>10}{'max ms':>10}{'x base':>9}  goal (p95)"
    ]
    for t in timings:
        goal = (
            ""
            if t.goal_ms is None
            else f"< {t.goal_ms:g} ms: " + ("met" if t.p95_ms < t.goal_ms else "MISSED")
        )
        lines.append(
            f"{t.name:<36}{t.n:>5}{t.p50_ms:>10.2f}{t.p95_ms:>10.2f}{t.max_ms:>10.2f}"
            f"{t.ratio:>9.2f}  {goal}"
        )
    return "\n".join(lines)
