"""How fast a model's reach is worked out: figures for ``tablesight bench reach``.

Two kinds of table:

* the sample scenarios (``samples/scenarios``, the games measured in inches): the reach of
  every model in each, for its move;
* a 48 x 36 in table with ten terrain pieces (walls, difficult ground, climbable crates
  1-3 in high) and 40 models in two sides of 20: the reach of each model for its 6 in
  move, and of ten models of a side one after another (what a "show the side's reach"
  asks for).

Goals: one model under 50 ms at the 95th percentile, a side of ten under 300 ms, on one
core. The baseline, timed just before each sample as in ``bench rules``, is the least any
judge does for one model: the edge-to-edge distance to every other model.
"""

from __future__ import annotations

import functools
import random
from pathlib import Path

from shapely.geometry import Point, box

from tablesight.rig.rulesbench import Timing, _time
from tablesight.rules.geometry import Base, Pose, edge_distance
from tablesight.rules.reach import reach
from tablesight.rules.ruleset import Ruleset, load_ruleset
from tablesight.rules.scenario import Scenario
from tablesight.rules.scene import Model, Scene, Table, Terrain

SCENARIOS = Path(__file__).resolve().parents[1] / "samples" / "scenarios"


def forty_models(seed: int = 7) -> tuple[Scene, Ruleset]:
    """Ten terrain pieces and 40 round models (25-40 mm) on a 48 x 36 in table."""
    rng = random.Random(seed)
    terrain: list[Terrain] = []
    while len(terrain) < 10:
        w, d = (
            (rng.uniform(3, 8), 0.5)
            if rng.random() < 0.5
            else (rng.uniform(2, 5), rng.uniform(2, 5))
        )
        x, y = rng.uniform(2, 46 - w), rng.uniform(2, 34 - d)
        poly = box(x, y, x + w, y + d)
        if any(poly.distance(t.polygon) < 2.0 for t in terrain):
            continue
        kind = ("impassable", "difficult", "climbable")[len(terrain) % 3]
        terrain.append(
            Terrain(f"t{len(terrain)}", poly, rng.choice([1.0, 2.0, 3.0]), frozenset({kind}))
        )
    models: list[Model] = []
    while len(models) < 40:
        base = Base.round(rng.choice([25.4, 32.0, 40.0]))
        x, y = rng.uniform(2, 46), rng.uniform(2, 34)
        spot = Point(x, y).buffer(base.radius_in + 0.6)
        if any(spot.intersects(t.polygon) for t in terrain) or any(
            Point(m.start.xy).distance(Point(x, y)) < 2.5 for m in models
        ):
            continue
        side = "a" if len(models) < 20 else "b"
        models.append(
            Model(f"m{len(models):02d}", side, f"{side}{len(models) // 5}", base, 6.0, Pose(x, y))
        )
    return Scene(Table(48.0, 36.0), tuple(models), tuple(terrain)), load_ruleset("trench-crusade")


def _baseline(scene: Scene, mover: Model) -> float:
    return _time(
        lambda: [edge_distance(mover.base, mover.pose, m.base, m.pose) for m in scene.models]
    )


def run(seed: int = 7, repeats: int = 3) -> list[Timing]:
    """Time one model's reach on the samples and on the 40-model table, and a side of ten."""
    samples: list[tuple[Scene, Ruleset, str]] = []
    for path in sorted(SCENARIOS.glob("*.json")):
        if path.name == "expected.json":
            continue
        loaded = Scenario.from_file(path)
        if loaded.ruleset.grid is None:
            samples += [(loaded.scene, loaded.ruleset, m.id) for m in loaded.scene.models]
    sample_times, sample_base = [], []
    for _ in range(repeats):
        for scene, ruleset, model_id in samples:
            sample_base.append(_baseline(scene, scene.model(model_id)))
            once = functools.partial(reach, scene, ruleset, model_id, "move")
            sample_times.append(_time(once))
    scene, ruleset = forty_models(seed)
    one, one_base = [], []
    for _ in range(repeats):
        for m in scene.models:
            one_base.append(_baseline(scene, m))
            one.append(_time(lambda m=m: reach(scene, ruleset, m.id, "move")))
    side = [m.id for m in scene.models if m.side == "a"][:10]
    ten, ten_base = [], []
    for _ in range(repeats):
        ten_base.append(sum(_baseline(scene, scene.model(i)) for i in side))
        ten.append(_time(lambda: [reach(scene, ruleset, i, "move") for i in side]))
    return [
        Timing.of("baseline: distances to all models", one_base),
        Timing.of(f"one model, samples ({len(samples)} models)", sample_times, 50.0, sample_base),
        Timing.of("one model, 40 models + 10 pieces", one, 50.0, one_base),
        Timing.of("a side of 10, 40 models + 10 pieces", ten, 300.0, ten_base),
    ]
