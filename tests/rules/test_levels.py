"""Moves across several levels: up, across and down any number of climbable pieces.

Hand-worked cases, game by game, with the arithmetic in comments. Bases are 1" round
(radius 0.5"). Climbing costs as each game's file says (rules/games/*.toml, the clause
quoted there): in Trench Crusade, Necromunda and Cosmic Combat every inch up or down
counts as an inch moved (the tape follows the model up the wall); in the revised Cosmic
Combat (text 004) a height of 1" rounded down is ignored, a higher climb costs double (as
difficult terrain), climbing down counts as open ground, and a climb that costs anything
covers the step onto (or off) the top, up to the base's depth.

Then a property test of the search itself: a route over levels is never longer than the
best route that climbs at most once, and never shorter than the straight line in three
dimensions where every inch climbed counts.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shapely.geometry import Point, box

from tablesight.rules.levels import Level
from tablesight.rules.pathing import Obstacle, shortest_path

# A crate (2" high, x 4..6) against a platform (4" high, x 6..10), both y 6..14: from the
# table at (2, 10) to (8, 10) on the platform, straight along y = 10.
CRATE = ("crate", 4, 6, 6, 14)
PLATFORM = ("platform", 6, 6, 10, 14)


def _steps(kit):
    return [
        kit.box(*CRATE, "climbable", height=2),
        kit.box(*PLATFORM, "climbable", height=4),
    ]


@pytest.mark.parametrize("game", ["trench-crusade", "necromunda", "cosmic-combat"])
@pytest.mark.parametrize(("movement", "rules"), [(10, []), (9.9, ["movement"])])
def test_up_a_crate_then_onto_a_platform(kit, game, movement, rules):
    # 6" in plan, 2" up onto the crate at x = 4 and 2" more onto the platform at x = 6:
    # 6 + 2 + 2 = 10. (Climbing the whole 4" from the table means going round the crate:
    # at least |(2,10)-(4,5.5)| + |(4,5.5)-(8,10)| = 4.92 + 6.02 in plan, plus 4.)
    verdict = kit.judge(
        game, [kit.model("a", "red", (2, 10, 0), (8, 10, 4), movement=movement)], _steps(kit)
    )
    assert verdict.rules() == rules
    kit.assert_path(verdict, "a", 10.0, width=1e-6)


@pytest.mark.parametrize("game", ["trench-crusade", "necromunda"])
def test_down_a_platform_by_a_crate(kit, game):
    # the same the other way: 4" down by two steps of 2" each, 6" in plan: 10
    verdict = kit.judge(
        game, [kit.model("a", "red", (8, 10, 4), (2, 10, 0), movement=10)], _steps(kit)
    )
    assert verdict.rules() == []
    kit.assert_path(verdict, "a", 10.0, width=1e-6)


def test_revised_steps_each_cost_double_less_the_step(kit):
    # Text 004: each climb of 2" (rounded down, over 1") counts double: 4 + 4; each covers
    # the step onto its top, the travel while the base straddles the edge (1", the base's
    # depth, x 3.5..4.5 and 5.5..6.5): 6 + 8 - 2 = 12.
    verdict = kit.judge(
        "cosmic-combat-revised",
        [kit.model("a", "red", (2, 10, 0), (8, 10, 4), movement=12)],
        _steps(kit),
    )
    assert verdict.rules() == []
    kit.assert_path(verdict, "a", 12.0, width=1e-6)


def test_revised_staircase_of_small_rises_is_free(kit):
    # Text 004: "may ignore any height of 1" rounded down to the inch". Three rises of
    # 1.5" (each 1 rounded down) onto a 4.5" top: each ignored, so only the 7" in plan
    # count. Climbing the 4.5" from the table at once would count 4 x 2 = 8 more.
    stairs = [
        kit.box("step1", 4, 6, 6, 14, "climbable", height=1.5),
        kit.box("step2", 6, 6, 8, 14, "climbable", height=3.0),
        kit.box("top", 8, 6, 12, 14, "climbable", height=4.5),
    ]
    verdict = kit.judge(
        "cosmic-combat-revised",
        [kit.model("a", "red", (2, 10, 0), (9, 10, 4.5), movement=7)],
        stairs,
    )
    assert verdict.rules() == []
    kit.assert_path(verdict, "a", 7.0, width=1e-6)


@pytest.mark.parametrize(
    ("height", "hand"),
    [
        # over a 1" wall: 5" in plan, 1" up and 1" down: 7
        (1.0, 7.0),
        # over a 3.5" one would be 5 + 7 = 12; round its end is shorter. The wall grown by
        # the base runs x 9.5..11.5, y 7.5..16.5; round its foot the centre goes from
        # (8,12) tangent to the corner disc at (10,8) r 0.5 (sqrt(20 - 0.25) = 4.44410),
        # round it to its bottom (from 200.146 deg to 270 deg: 1.21919 rad x 0.5 =
        # 0.60959), 1" along y = 7.5, and the same again to (13,12):
        # 2 x (4.44410 + 0.60959) + 1 = 11.10738
        (3.5, 11.10738),
    ],
)
def test_over_a_low_wall_or_round_a_high_one(kit, height, hand):
    wall = kit.box("wall", 10, 8, 11, 16, "climbable", height=height)
    verdict = kit.judge(
        "cosmic-combat", [kit.model("a", "red", (8, 12), (13, 12), movement=12)], [wall]
    )
    assert verdict.rules() == []
    kit.assert_path(verdict, "a", hand)


def test_a_base_may_not_brush_a_levels_side(kit):
    # Along y = 7.8, 0.2" below the foot of a 2" wall (x 10..11 from y = 8): the base
    # would rub the wall, so the centre keeps 0.5" off it, round the corner discs at
    # (10,8) and (11,8): tangent from (8,7.8), d = sqrt(4 + 0.04) = 2.00998, length
    # sqrt(d^2 - 0.25) = 1.94679; the arc from 261.306 deg to 270 deg, 0.15173 rad x 0.5
    # = 0.07587; 1" along y = 7.5; the same again: 2 x (1.94679 + 0.07587) + 1 = 5.045315.
    # (Over the wall: 5 + 2 + 2 = 9.)
    wall = kit.box("wall", 10, 8, 11, 16, "climbable", height=2)
    verdict = kit.judge(
        "cosmic-combat", [kit.model("a", "red", (8, 7.8), (13, 7.8), movement=6)], [wall]
    )
    assert verdict.rules() == []
    kit.assert_path(verdict, "a", 5.045315)


@pytest.mark.parametrize(("movement", "rules"), [(11, []), (10.9, ["movement"])])
def test_a_parapet_across_the_whole_table_is_climbed_not_blocked(kit, movement, rules):
    # Trench Crusade: a 3" parapet from one table edge to the other, 0.5" thick. Over it:
    # 5" in plan + 3 up + 3 down = 11. (There is no way round: it was "blocked" when a
    # move could only climb onto its end's piece.)
    parapet = kit.box("parapet", 10, 0, 10.5, 24, "climbable", height=3)
    verdict = kit.judge(
        "trench-crusade",
        [kit.model("a", "red", (8, 12), (13, 12), movement=movement)],
        [parapet],
    )
    assert verdict.rules() == rules
    kit.assert_path(verdict, "a", 11.0, width=1e-6)


def test_a_route_says_where_it_climbs(kit):
    verdict = kit.judge(
        "trench-crusade", [kit.model("a", "red", (2, 10, 0), (8, 10, 4))], _steps(kit)
    )
    climbs = verdict.moves["a"].climbs
    # up 2 at the crate's edge (x = 4), up 2 more at the platform's (x = 6)
    assert [(round(c.at[0], 6), c.from_in, c.to_in, c.cost_in) for c in climbs] == [
        (4.0, 0.0, 2.0, 2.0),
        (6.0, 2.0, 4.0, 2.0),
    ]


# -- the search itself ----------------------------------------------------------------------

R_IN = 0.5


@st.composite
def tables(draw):
    """Up to four disjoint climbable rectangles on a 12 x 8 area, and a start and end on
    the table or on top of a piece (never against a piece's side)."""
    pieces = []
    for k in range(draw(st.integers(1, 4))):
        x0 = draw(st.floats(1.0, 9.0))
        y0 = draw(st.floats(1.0, 5.0))
        w = draw(st.floats(0.3, 3.0))
        d = draw(st.floats(0.3, 3.0))
        shape = box(x0, y0, x0 + w, y0 + d)
        if any(shape.distance(p.polygon) < 1e-3 for p in pieces):
            continue
        height = draw(st.sampled_from([0.5, 1.0, 2.0, 3.0, 4.5]))
        pieces.append(Level(f"p{k}", shape, height, R_IN))
    ends = []
    for _ in range(2):
        xy = (draw(st.floats(0.0, 12.0)), draw(st.floats(0.0, 8.0)))
        on = [p for p in pieces if p.polygon.contains(Point(xy))]
        if not on and any(p.polygon.distance(Point(xy)) < R_IN for p in pieces):
            xy = (xy[0], -1.0)  # moved off the pieces' sides, below the area
        ends.append(xy)
    return pieces, ends[0], ends[1]


def _under(pieces, xy):
    return max((p.height_in for p in pieces if p.polygon.covers(Point(xy))), default=0.0)


def _single_climb(pieces, start, end, climb):
    """The best route that climbs at most once: only the level under the start or the end
    (one of them: the other is the table) may be climbed; every other piece is walked
    round, as an obstacle grown by the base."""
    best = math.inf
    for keep in [
        p for p in pieces if p.polygon.covers(Point(start)) or p.polygon.covers(Point(end))
    ] or [None]:
        others = [Obstacle(p.id, p.polygon, R_IN, "terrain") for p in pieces if p is not keep]
        levels = [] if keep is None else [keep]
        path = shortest_path(start, end, others, levels=levels, climb=climb)
        if path is not None:
            best = min(best, path.length_in)
    return best


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(tables(), st.sampled_from(["every inch", "004"]))
def test_a_route_over_levels_is_between_the_3d_line_and_the_best_single_climb(table, cost):
    pieces, start, end = table
    if cost == "every inch":
        climb = abs
    else:  # 004: up to 1" rounded down free, higher up double, down as open ground

        def climb(rise):
            if math.floor(abs(rise) + 1e-9) <= 1:
                return 0.0
            return 2.0 * rise if rise > 0 else -rise

    under = (_under(pieces, start), _under(pieces, end))
    if (
        under[0] > 0
        and under[1] > 0
        and not any(p.polygon.covers(Point(start)) and p.polygon.covers(Point(end)) for p in pieces)
    ):
        # both ends raised on different pieces: no single climb joins them
        single = math.inf
    else:
        single = _single_climb(pieces, start, end, climb)
    path = shortest_path(start, end, [], levels=pieces, climb=climb)
    assert path is not None  # nothing blocks for good: every piece may be climbed
    assert path.length_in <= single + 1e-6
    plan = math.dist(start, end)
    assert path.length_in >= plan - 1e-9
    if cost == "every inch":
        assert path.length_in >= math.hypot(plan, under[1] - under[0]) - 1e-9
        # and the climbs it reports add up to its height change
        assert sum(c.rise_in for c in path.climbs) == pytest.approx(under[1] - under[0])


# -- zones and bases in height --------------------------------------------------------------
# Every text says "within 1"" with a tape in hand: measured as the tape would, from base to
# base, in three dimensions. Heights less than 0.5" apart are one level (a camera's heights
# scatter by less), measured in plan. Text 004 alone gives coherency its own limits, 1"
# horizontally or 6" vertically (tests/rules/test_judge_cosmic_combat_revised.py).

TOWER = ("tower", 10, 8, 14, 12)  # 7" high


@pytest.mark.parametrize("game", ["trench-crusade", "necromunda", "cosmic-combat-revised"])
def test_a_model_on_a_roof_has_no_zone_on_the_ground_below(kit, game):
    # the enemy on the roof at (10.6, 10, 7); the mover at the wall's foot, (9.4, 10, 0):
    # 0.2" apart in plan (1.2 - 1), but sqrt(0.2^2 + 7^2) = 7.003" by the tape
    tower = kit.box(*TOWER, "climbable", height=7)
    models = [
        kit.model("a", "red", (6, 10, 0), (9.4, 10, 0)),
        kit.model("e", "blue", (10.6, 10, 7)),
    ]
    assert kit.judge(game, models, [tower]).rules() == []


@pytest.mark.parametrize("game", ["trench-crusade", "necromunda", "cosmic-combat-revised"])
def test_on_the_same_roof_the_zone_holds(kit, game):
    # both on the 7" roof, (12.0, 10) and (10.6, 10): 1.4 - 1 = 0.4" apart
    tower = kit.box(*TOWER, "climbable", height=7)
    models = [
        kit.model("a", "red", (13.5, 10, 7), (12.0, 10, 7)),
        kit.model("e", "blue", (10.6, 10, 7)),
    ]
    verdict = kit.judge(game, models, [tower])
    assert verdict.rules() == ["control_zone"]
    assert kit.one(verdict.violations, "control_zone").measured == pytest.approx(0.4, abs=1e-3)


def test_walking_along_the_foot_of_a_wall_below_an_enemy_on_its_roof(kit):
    # From (9.4, 4) to (9.4, 16) along the tower's west wall (0.6" off it: the base keeps
    # clear): 12" straight. The enemy's zone on the roof does not reach the ground, so no
    # detour round it (which would be about 2 x sqrt(6^2 - 1.1^2)... well over 12).
    tower = kit.box(*TOWER, "climbable", height=7)
    models = [
        kit.model("a", "red", (9.4, 4, 0), (9.4, 16, 0), movement=12),
        kit.model("e", "blue", (10.6, 10, 7)),
    ]
    verdict = kit.judge("trench-crusade", models, [tower])
    assert verdict.rules() == []
    kit.assert_path(verdict, "a", 12.0)


def test_a_fighter_on_a_vehicles_roof_does_not_overlap_it(kit):
    # Necromunda: fighters "treat vehicles like terrain for the purposes of movement,
    # climbing up the sides". A fighter ending on a friendly vehicle's roof, 2" up, right
    # over its base: 2" above it, no overlap. The same fighter at the vehicle's foot
    # (z 0) with its centre over the vehicle's base overlaps it by all of 0.5 + 17.5 mm.
    vehicle = kit.model(
        "truck", "red", (12, 10), base={"shape": "oval", "length_mm": 60, "width_mm": 35}
    )
    on_roof = kit.model("f", "red", (6, 10, 0), (12, 10, 2), movement=10)
    assert "base_overlap" not in kit.judge("necromunda", [vehicle, on_roof]).rules()
    below = kit.model("f", "red", (6, 10, 0), (12, 10, 0), movement=10)
    assert "base_overlap" in kit.judge("necromunda", [vehicle, below]).rules()


# -- where a model may rest -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "wall_in", "rules"),
    [
        # Text 004: a model "may not rest" where it cannot: a 0.5" wall top under a 1" base
        ("cosmic-combat-revised", 0.5, ["terrain"]),
        # a 1" top holds a 1" base (within the tolerance: 0.96 + 0.05 >= 1)
        ("cosmic-combat-revised", 0.96, []),
        # the other texts say nothing of it: the players' placing is trusted
        ("trench-crusade", 0.5, []),
        ("necromunda", 0.5, []),
    ],
)
def test_a_model_left_on_a_wall_top_narrower_than_its_base(kit, game, wall_in, rules):
    # a 1" wall 1" high, x 10..10+w; the model ends on it, centre over its middle: up 1
    # (free in 004: 1 rounded down) and 2" in plan
    wall = kit.box("wall", 10, 4, 10 + wall_in, 20, "climbable", height=1)
    end = (10 + wall_in / 2, 12, 1)
    verdict = kit.judge(game, [kit.model("a", "red", (end[0] - 2, 12, 0), end)], [wall])
    assert verdict.rules() == rules
    if rules:
        finding = kit.one(verdict.violations, "terrain")
        assert (finding.other, finding.measured, finding.limit) == ("wall", 0.5, 1.0)


def test_climbing_onto_a_vehicles_roof_counts_its_height(kit):
    # Necromunda: "climbing up the sides": 6" in plan to stand over the truck's centre,
    # and its 2" roof: 6 + 2 = 8. With Movement 7.9 that is over by 0.1 (past the 0.05
    # tolerance).
    truck = kit.model(
        "truck", "red", (12, 10), base={"shape": "oval", "length_mm": 60, "width_mm": 35}
    )
    for movement, rules in ((8, []), (7.9, ["movement"])):
        fighter = kit.model("f", "red", (6, 10, 0), (12, 10, 2), movement=movement)
        verdict = kit.judge("necromunda", [truck, fighter])
        assert verdict.rules() == rules
        kit.assert_path(verdict, "f", 8.0, width=1e-6)


def test_a_route_onto_a_level_by_its_corner_counts_the_climb():
    # Found by the property test above: the route bends at the crate's corner and goes
    # onto it from there; the climb at the corner (2") is counted once, so the length is
    # the two straight legs in plan plus 2.
    crate = Level("crate", box(8.332077501241162, 2.5391535344774776, 9.7734966, 4.7488327), 2, 0.5)
    start, end = (3.0, 6.702235911478691), (9.0, 3.0)
    path = shortest_path(start, end, [], levels=[crate], climb=abs)
    assert [(c.from_in, c.to_in) for c in path.climbs] == [(0.0, 2.0)]
    corner = (8.332077501241162, 2.5391535344774776)
    legs = math.dist(start, corner) + math.dist(corner, end)
    assert path.length_in == pytest.approx(min(legs, math.dist(start, end)) + 2.0, abs=1e-6)
