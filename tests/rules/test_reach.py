"""Where can it go: a model's reach, by hand and against the referee.

Hand-worked cases with the arithmetic in comments (1" round bases, radius 0.5"; the
referee takes 0.05" past the allowance and 0.05" into what a base may not overlap, so the
region does too). Then the agreement: on generated tables in every game measured in
inches, points well inside the region (by more than 0.05") are judged legal by the
referee and points well outside it illegal.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
import shapely
from shapely.geometry import Point

from tablesight.rules.errors import InputError
from tablesight.rules.geometry import Pose
from tablesight.rules.reach import reach, threat
from tablesight.rules.referee import Referee, referee_for
from tablesight.rules.scenario import Scenario

BASE = {"shape": "round", "diameter_mm": 25.4}
SCENARIOS = Path(__file__).resolve().parents[2] / "samples" / "scenarios"


def scenario(game, models, terrain=(), size=(30, 24)):
    return Scenario.from_json(
        json.dumps(
            {
                "game": game,
                "table": {"width": size[0], "depth": size[1]},
                "terrain": list(terrain),
                "models": list(models),
            }
        )
    )


def model(id, side, x, y, movement=6.0, **more):
    return {"id": id, "side": side, "base": BASE, "movement": movement,
            "start": {"x": x, "y": y}, **more}  # fmt: skip


def box(id, x0, y0, x1, y1, *keywords, height=0.0):
    corners = [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]
    return {"id": id, "polygon": corners, "height": height, "keywords": list(keywords)}


def edge_along(region, start, direction, far=20.0):
    """Where a ray from ``start`` leaves the region first (distance along it)."""
    end = (start[0] + far * direction[0], start[1] + far * direction[1])
    ray = shapely.LineString([start, end])
    inside = ray.intersection(region)
    first = min(getattr(inside, "geoms", [inside]), key=lambda g: Point(start).distance(g))
    return max(Point(start).distance(Point(c)) for c in first.coords)


def test_open_ground_is_a_circle_of_the_allowance():
    # 6" and the 0.05" the referee takes past it: pi 6.05^2 = 114.99
    s = scenario("trench-crusade", [model("a", "red", 15, 12)])
    found = reach(s.scene, s.ruleset, "a")
    assert found.area_sq_in == pytest.approx(math.pi * 6.05**2, rel=2e-3)
    assert found.limits == (('its 6.00" allowance', 1.0),)
    assert edge_along(found.region, (15, 12), (1, 0)) == pytest.approx(6.05, abs=0.01)


def test_a_base_in_the_way_casts_a_shadow():
    # A friend (no zone) at (11, 12) in front of a at (9, 12): the centre keeps 1" from
    # the friend's (0.5 + 0.5). Straight behind it the way round is the tangent
    # sqrt(2^2 - 1) = 1.7321, the arc round to the far side pi - acos(1/2) - acos(1/x),
    # and the tangent sqrt(x^2 - 1) on, x from the friend's centre; = 6.05 at
    # x = 3.65674 (solved by bisection), so the region ends at 11 + 3.65674 = 14.657
    # there, where in open ground it would end at 15.05.
    s = scenario("trench-crusade", [model("a", "red", 9, 12), model("f", "red", 11, 12)])
    found = reach(s.scene, s.ruleset, "a")
    behind = edge_along(found.region, (12.05, 12), (1, 0))  # from just past the friend
    assert 12.05 + behind == pytest.approx(14.6567, abs=0.02)
    # and the friend's base is cut out: no end within 1 - 0.05 of its centre
    assert not found.region.intersects(Point(11, 12).buffer(0.94))
    assert found.region.contains(Point(11, 12).buffer(0.97).exterior.interpolate(0.0))


def test_a_zone_is_not_entered_nor_ended_in():
    # An enemy at (15, 12): its 1" zone keeps the centre 0.5 + 1 + 0.5 - 0.05 = 1.95
    # from the enemy's, on the way and at the end; nothing behind it is reached (the way
    # round its 1.95 circle to the far side is longer than 6.05 from (9, 12), 6" away).
    s = scenario("trench-crusade", [model("a", "red", 9, 12), model("e", "blue", 15, 12)])
    found = reach(s.scene, s.ruleset, "a")
    assert not found.region.intersects(Point(15, 12).buffer(1.94))
    assert edge_along(found.region, (9, 12), (1, 0)) == pytest.approx(6 - 1.95, abs=0.01)
    assert any(what == "e's 1.00\" zone" for what, _ in found.limits)


def test_a_door_the_base_fits_through():
    # A wall across the table at x 12..12.5 with a door 1.2" wide (y 11.4..12.6): the
    # base (1") passes with 0.1" each side. Straight through the door from (9, 12): the
    # region runs on to 9 + 6.05 = 15.05; with no door nothing beyond the wall is reached.
    walls = [
        box("w1", 12, 0, 12.5, 11.4, "impassable"),
        box("w2", 12, 12.6, 12.5, 24, "impassable"),
    ]
    s = scenario("trench-crusade", [model("a", "red", 9, 12)], walls)
    found = reach(s.scene, s.ruleset, "a")
    assert edge_along(found.region, (9, 12), (1, 0)) == pytest.approx(6.05, abs=0.02)
    closed = scenario(
        "trench-crusade", [model("a", "red", 9, 12)], [box("w", 12, 0, 12.5, 24, "impassable")]
    )
    beyond = reach(closed.scene, closed.ruleset, "a").region.intersection(
        shapely.box(12.5, 0, 30, 24)
    )
    assert beyond.area == pytest.approx(0.0, abs=1e-9)


def test_difficult_ground_costs_double():
    # Mud from x = 13 on: 3" to its edge from (10, 12), then (6.05 - 3) / 2 = 1.525" in:
    # the region ends at x = 14.525 along y = 12
    s = scenario(
        "trench-crusade", [model("a", "red", 10, 12)], [box("mud", 13, 0, 25, 24, "difficult")]
    )
    found = reach(s.scene, s.ruleset, "a")
    assert edge_along(found.region, (10, 12), (1, 0)) == pytest.approx(4.525, abs=0.02)


def test_a_climb_onto_a_crate():
    # A 1" crate from x = 14 (y 6..18): 4" to its foot from (10, 12), 1" up, so
    # 6.05 - 5 = 1.05" across its top: the region on it ends at x = 15.05. At its foot the
    # base may not rub its side: no end with the centre within 0.5 - 0.05 of it below.
    s = scenario(
        "trench-crusade",
        [model("a", "red", 10, 12)],
        [box("crate", 14, 6, 20, 18, "climbable", height=1)],
    )
    found = reach(s.scene, s.ruleset, "a")
    on_top = found.region.intersection(shapely.box(14, 6, 20, 18))
    assert on_top.bounds[2] == pytest.approx(15.05, abs=0.02)
    assert not found.region.intersects(shapely.box(13.56, 11, 13.99, 13))
    assert found.region.contains(Point(13.5, 12))


def test_a_charge_is_capped_at_12in():
    # Trench Crusade: Movement 8 + a 6 on the Charge Bonus is 14, "up to a maximum
    # Movement Characteristic of 12"": 12.05 on open ground
    s = scenario("trench-crusade", [model("a", "red", 25, 20, movement=8, roll=6)], size=(50, 40))
    found = reach(s.scene, s.ruleset, "a", "charge")
    assert found.allowance_in == 12.0
    assert edge_along(found.region, (25, 20), (0, 1)) == pytest.approx(12.05, abs=0.02)


def test_unknown_model_or_action_is_one_line():
    s = scenario("trench-crusade", [model("a", "red", 9, 12)])
    with pytest.raises(InputError, match="model: no model 'zz'; the models are a"):
        reach(s.scene, s.ruleset, "zz")
    with pytest.raises(InputError, match="action: "):
        reach(s.scene, s.ruleset, "a", "teleport")


# -- agreement with the referee ----------------------------------------------------------------

GAMES = ["trench-crusade", "necromunda", "cosmic-combat", "cosmic-combat-revised"]


def generated(seed: int, game: str) -> Scenario:
    """A 24" table: four walls, patches of difficult ground or climbable pieces (1-3"
    high), five other models of either side, the mover in the middle, clear of them."""
    rng = random.Random(seed)
    terrain, shapes = [], []
    for k in range(4):
        x, y = rng.uniform(4, 20), rng.uniform(4, 20)
        w, d = (rng.uniform(3, 8), 0.5) if rng.random() < 0.5 else (0.5, rng.uniform(3, 8))
        shape = shapely.box(x, y, x + w, y + d)
        if shape.distance(Point(12, 12)) < 1.0:
            continue
        shapes.append(shape)
        kind = rng.choice(["impassable", "difficult", "climbable"])
        terrain.append(box(f"t{k}", x, y, x + w, y + d, kind, height=rng.choice([1, 2, 3])))
    models = [model("a", "red", 12, 12)]
    while len(models) < 6:
        x, y = rng.uniform(2, 22), rng.uniform(2, 22)
        spot = Point(x, y).buffer(0.7)
        if math.dist((x, y), (12, 12)) > 2.5 and not any(spot.intersects(t) for t in shapes):
            base = {"shape": "round", "diameter_mm": rng.choice([25.4, 32])}
            side = rng.choice(["red", "blue"])
            models.append({**model(f"m{len(models)}", side, x, y), "base": base})
    return scenario(game, models, terrain, size=(24, 24))


@pytest.mark.parametrize("game", GAMES)
def test_the_reach_agrees_with_the_referee(game):
    agree, disagree = 0, []
    for seed in range(3):
        s = generated(seed * 7 + GAMES.index(game), game)
        region = reach(s.scene, s.ruleset, "a", "move").region
        rng = np.random.default_rng(seed)
        for x, y in rng.uniform(5.5, 18.5, (150, 2)):
            point = Point(x, y)
            if region.boundary.distance(point) <= 0.05:
                continue
            raised = [
                t.height_in
                for t in s.scene.terrain
                if t.has("climbable") and t.polygon.covers(point)
            ]
            mover = dataclasses.replace(
                s.scene.model("a"), end=Pose(x, y, 0.0, max(raised, default=0.0))
            )
            scene = dataclasses.replace(
                s.scene, models=tuple(mover if m.id == "a" else m for m in s.scene.models)
            )
            legal = Referee(scene, s.ruleset).judge_model("a", units=False).legal
            if legal == region.contains(point):
                agree += 1
            else:
                disagree.append((seed, round(x, 3), round(y, 3), legal))
    print(f"\n{game}: {agree} of {agree + len(disagree)} points agree")
    assert agree > 300
    assert len(disagree) <= 0.005 * (agree + len(disagree)), disagree


def test_threat_is_the_best_charge_and_names_who_it_reaches():
    # Trench Crusade: e (Movement 6) charges with at best a 6: 12" (the cap), its
    # targets' zones open. a stands 11" from e edge to edge (centres 12 apart): reached;
    # b 13" (centres 14 apart): out of reach, 12.05 + 0.5 + 0.5 = 13.05 < 14.
    models = [model("e", "blue", 10, 20), model("a", "red", 22, 20), model("b", "red", 10, 34)]
    s = scenario("trench-crusade", models, size=(48, 40))
    found, threatened = threat(s.scene, s.ruleset, "e")
    assert found.allowance_in == 12.0 and found.action == "charge"
    assert threatened == ["a"]
    # a charge of 12 ends in contact with a: centres 1" apart, 11" along
    assert found.region.contains(Point(21.0, 20))


def test_reach_is_worked_out_again_only_when_something_near_moved():
    from tablesight.rules.reach import ReachCache

    def table(a_x=9.0, f_x=11.0, far_x=40.0):
        models = [
            model("a", "red", a_x, 12),
            model("f", "red", f_x, 12),
            model("z", "blue", far_x, 12),
        ]
        return scenario("trench-crusade", models, size=(48, 24))

    cache = ReachCache()
    first = cache.reach(table().scene, table().ruleset, "a", "move")
    # a camera's jitter: a thousandth of an inch
    assert cache.reach(table(a_x=9.001, f_x=11.002).scene, table().ruleset, "a", "move") is first
    # a model 31" off, beyond 6 + 1 + 1 + 1: nothing to do with a's reach
    assert cache.reach(table(far_x=38.0).scene, table().ruleset, "a", "move") is first
    # the friend in the way moves half an inch: worked out again, and different
    again = cache.reach(table(f_x=11.5).scene, table().ruleset, "a", "move")
    assert again is not first and again.area_sq_in != pytest.approx(first.area_sq_in, abs=0.01)
    found, threatened = cache.threat(table(far_x=20.0).scene, table().ruleset, "z")
    assert cache.threat(table(far_x=20.0).scene, table().ruleset, "z")[0] is found
    # f at 11: 9 - 1 = 8 edge to edge; a behind it at 9 is reached round f, at (9, 13)
    # in contact with it: |(20,12)-(9,13)| = 11.05, a little more round f, within 12.05
    assert threatened == ["a", "f"]


@pytest.mark.parametrize(("door_in", "through"), [(1.0, True), (0.9, False)])
def test_a_door_exactly_a_base_wide(door_in, through):
    # Cosmic Combat: "Gaps must be at least as wide as a model's base for another model to
    # pass through." A wall across the table at x 12..12.5 with a door centred on y = 12:
    # 1" wide lets the 1" base through (then on, up to 9 + 6.05 = 15.05 along y = 12);
    # 0.9" does not, and nothing beyond the wall is reached.
    half = door_in / 2.0
    walls = [
        box("w1", 12, 0, 12.5, 12 - half, "impassable"),
        box("w2", 12, 12 + half, 12.5, 24, "impassable"),
    ]
    s = scenario("cosmic-combat", [model("a", "red", 9, 12)], walls)
    beyond = reach(s.scene, s.ruleset, "a").region.intersection(shapely.box(12.5, 0, 30, 24))
    if through:
        assert beyond.area > 1.0
        assert beyond.bounds[2] == pytest.approx(15.05, abs=0.02)
    else:
        assert beyond.area == pytest.approx(0.0, abs=1e-9)


def test_a_corridor_leads_its_length_and_no_wider():
    # Walls along y = 10..10.5 and 13.5..14 from x = 10 to 20: a corridor 3" wide. From
    # (8, 12) straight down it to x = 8 + 6.05 = 14.05; across it the centre keeps 0.45
    # (0.5 less the 0.05 the referee lets a base overlap) from each wall: y 10.95..13.05.
    walls = [box("w1", 10, 10, 20, 10.5, "impassable"), box("w2", 10, 13.5, 20, 14, "impassable")]
    s = scenario("trench-crusade", [model("a", "red", 8, 12)], walls)
    region = reach(s.scene, s.ruleset, "a").region
    inside = region.intersection(shapely.box(11, 10, 20, 14))
    assert inside.bounds[2] == pytest.approx(14.05, abs=0.02)
    assert inside.bounds[1] == pytest.approx(10.95, abs=0.01)
    assert inside.bounds[3] == pytest.approx(13.05, abs=0.01)


# -- square-grid games ---------------------------------------------------------------------


def test_on_squares_an_open_deck_reaches_a_diamond():
    # Battlestations, 1" squares, move 3: the squares within 3 steps (no diagonals):
    # 1 + 4 + 8 + 12 = 25 of them, 25 sq in.
    s = scenario("battlestations", [{**model("a", "crew", 10.5, 10.5, movement=3), "ooc": 0}])
    found = reach(s.scene, s.ruleset, "a", "move")
    assert found.squares == 25
    assert found.area_sq_in == pytest.approx(25.0)
    assert found.region.contains(Point(13.5, 10.5)) and not found.region.contains(Point(12.5, 12.5))
    assert "(3 movement points) in 25 squares" in found.explain()


def test_on_squares_the_reach_agrees_with_the_referee_square_by_square():
    # The sample deck: a bulkhead with a two-square opening, slagged squares, a pirate.
    # Every square of the deck (15 x 20, lying at 90 degrees) and the ring round it, 374:
    # ending vex's move there is legal to the referee exactly where the reach holds it.
    s = Scenario.from_file(SCENARIOS / "battlestations-deck.json")
    found = reach(s.scene, s.ruleset, "vex")
    grid = s.scene.grid
    legal_squares = 0
    for u in range(-1, 16):  # the deck's 15 x 20 squares and a ring off it
        for v in range(-1, 21):
            x, y = grid.centre((u, v))
            mover = dataclasses.replace(s.scene.model("vex"), end=Pose(x, y))
            scene = dataclasses.replace(
                s.scene, models=tuple(mover if m.id == "vex" else m for m in s.scene.models)
            )
            verdict = referee_for(scene, s.ruleset).judge_model("vex")
            legal = not [f for f in verdict.violations if f.rule != "action"]
            assert legal == found.region.contains(Point(x, y)), (u, v, verdict.rules())
            legal_squares += legal
    # and the region holds those squares and no others, whole
    assert found.squares == legal_squares
    assert found.area_sq_in == pytest.approx(legal_squares * 1.5**2)


def test_a_base_on_a_crate_is_not_ended_on():
    # A 1" crate from x = 14; f stands on it at (14.8, 12). a, on the ground at (10, 12),
    # climbs on (4 + 1 = 5 in to its edge): where its base would overlap f's up there
    # (within 0.95 of f's centre, 1 less the tolerance) is no end, and the referee says
    # so too; beside f it is (|(10,12)-(14.6,11)| = 4.71, + 1 climbed = 5.71).
    crate = box("crate", 14, 6, 20, 18, "climbable", height=1)
    models = [
        model("a", "red", 10, 12),
        {**model("f", "red", 14.8, 12), "start": {"x": 14.8, "y": 12, "z": 1}},
    ]
    s = scenario("trench-crusade", models, [crate])
    region = reach(s.scene, s.ruleset, "a").region
    assert not region.intersects(Point(14.8, 12).buffer(0.94))
    assert region.contains(Point(14.6, 11.0))
    on_f = dataclasses.replace(s.scene.model("a"), end=Pose(15.0, 12.0, 0.0, 1.0))
    scene = dataclasses.replace(s.scene, models=(on_f, s.scene.model("f")))
    assert "base_overlap" in Referee(scene, s.ruleset).judge_model("a", units=False).rules()
