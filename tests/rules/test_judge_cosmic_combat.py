"""Cosmic Combat (rules text 000), judged scenario by scenario with hand-worked numbers.

All bases are 1" round (radius 0.5"): an edge-to-edge gap is the centre distance minus 1".
No model passes through another, friend or enemy. The 1" control zone of an enemy may be
entered only by boarding (or ramming) it; entering a friend's zone is a Ramming Maneuver,
reported as an advisory.
"""

from __future__ import annotations

import math

import pytest

GAME = "cosmic-combat"


# -- movement -----------------------------------------------------------------------------


@pytest.mark.parametrize(("movement", "rules"), [(6, []), (5.9, ["movement"])])
def test_straight_move(kit, movement, rules):
    # (2,10) -> (5.6,14.8): sqrt(3.6^2 + 4.8^2) = sqrt(12.96 + 23.04) = 6.
    verdict = kit.judge(GAME, [kit.model("a", "red", (2, 10), (5.6, 14.8), movement=movement)])
    assert verdict.rules() == rules
    kit.assert_path(verdict, "a", 6.0, width=1e-9)
    if rules:
        assert kit.one(verdict.violations, "movement").limit == 5.9


@pytest.mark.parametrize(
    ("y", "friend_y", "hand", "rules", "rammed"),
    [
        # Friends at (13,9) and (13,11.1): a 1.1" gap, wider than the base; the centre
        # line y = 10.05 keeps 1.05" from both centres: straight, 16-10 = 6". It passes
        # 1.05 - 1 = 0.05 from each, within their 1" zones; keeping clear of either alone
        # means going round both (the other's base still blocks), far beyond 6.05: a
        # ramming with each.
        (10.05, 11.1, 6.0, [], ["f1", "f2"]),
        # Friends at (13,9) and (13,10.9): a 0.9" gap, too narrow for the 1" base. The
        # centre must keep 1" from both centres; round the top friend (13,10.9):
        # |S-C| = sqrt(3^2 + 0.9^2) = sqrt(9.81); tangent sqrt(9.81-1) = 2.96816 each side;
        # the arc turns 2*(atan(0.9/3) + asin(1/sqrt(9.81))) = 2*(0.29146 + 0.32502)
        # = 1.23296 rad at radius 1. 2*2.96816 + 1.23296 = 7.16928 > 6.05.
        (
            10,
            10.9,
            2 * math.sqrt(8.81) + 2 * (math.atan(0.3) + math.asin(1 / math.sqrt(9.81))),
            ["movement"],
            [],
        ),
    ],
)
def test_gap_between_models_must_be_as_wide_as_the_base(kit, y, friend_y, hand, rules, rammed):
    models = [
        kit.model("a", "red", (10, y), (16, y)),
        kit.model("f1", "red", (13, 9)),
        kit.model("f2", "red", (13, friend_y)),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == rules
    kit.assert_path(verdict, "a", hand)
    # it ends 3" and more from both friends; an illegal move rams nobody on the way
    assert sorted(f.other for f in verdict.advisories if f.rule == "ramming") == rammed
    assert len(verdict.advisories) == len(rammed)
    if rules:
        assert kit.one(verdict.violations, "movement").measured == pytest.approx(hand, abs=0.02)


# (2,13) -> (9,13) round the wall x 5..6, y 10..16, over its top: kit.wall_detour
# (worked out in tests/rules/conftest.py), 10.32967.


@pytest.mark.parametrize(("movement", "rules"), [(10.25, ["movement"]), (10.3, [])])
def test_detour_round_impassable_wall(kit, movement, rules):
    # 10.330 > 10.25 + 0.05 = 10.30: over; 10.330 <= 10.3 + 0.05 = 10.35: fine.
    wall = kit.box("wall", 5, 10, 6, 16, "impassable")
    verdict = kit.judge(GAME, [kit.model("a", "red", (2, 13), (9, 13), movement=movement)], [wall])
    assert verdict.rules() == rules
    kit.assert_path(verdict, "a", kit.wall_detour)
    if rules:
        finding = kit.one(verdict.violations, "movement")
        assert finding.measured == pytest.approx(kit.wall_detour, abs=0.02)
        assert finding.limit == 10.25


def test_long_detour_round_the_end_of_a_long_wall(kit):
    # Wall x 5..6, y 0..20 on a 24 x 24 table; (2,12) -> (9,12) goes over its top end,
    # on the table. |S-(5,20)| = sqrt(3^2 + 8^2) = sqrt(73); tangent sqrt(73 - 0.25)
    # = 8.52936; the arc turns atan(8/3) + asin(0.5/sqrt(73)) = 1.21203 + 0.05857
    # = 1.27060 rad at radius 0.5: 0.63530; 1" along the top; then the mirror image.
    # 2*(8.52936 + 0.63530) + 1 = 19.32932.
    hand = 2 * (math.sqrt(72.75) + 0.5 * (math.atan(8 / 3) + math.asin(0.5 / math.sqrt(73)))) + 1
    wall = kit.box("wall", 5, 0, 6, 20, "impassable")
    verdict = kit.judge(
        GAME, [kit.model("a", "red", (2, 12), (9, 12), movement=20)], [wall], table=(24, 24)
    )
    assert verdict.rules() == []
    kit.assert_path(verdict, "a", hand)


def test_no_route_round_a_wall_that_spans_the_table(kit):
    # Wall x 5..6 from edge to edge (y 0..24). Round its end at y = 24 would be
    # 2*(sqrt(3^2 + 2^2 - 0.25) + 0.5*(atan(2/3) + asin(0.5/sqrt(13)))) + 1
    # = 2*(3.57071 + 0.36369) + 1 = 8.869" but beyond the table edge ("models cannot
    # leave the battlefield"), so there is no legal path at all.
    wall = kit.box("wall", 5, 0, 6, 24, "impassable")
    verdict = kit.judge(
        GAME, [kit.model("a", "red", (2, 22), (9, 22), movement=30)], [wall], table=(24, 24)
    )
    assert verdict.rules() == ["blocked"]


def test_rotating_in_place_is_not_movement(kit):
    # "Models may be rotated freely at any time ... Rotating does not count as movement."
    models = [
        kit.model("a", "red", (10, 10, 0, 0), (10, 10, 0, 90), status=["engaged"]),
        kit.model("e", "blue", (11, 10)),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == []


def test_dangerous_terrain_asks_for_a_test(kit):
    # Dangerous counts as difficult: 6 + 2 = 8, and the crossing is reported.
    nebula = kit.box("nebula", 10, 2, 12, 22, "dangerous")
    verdict = kit.judge(GAME, [kit.model("a", "red", (8, 12), (14, 12), movement=8)], [nebula])
    assert verdict.legal
    kit.assert_path(verdict, "a", 8.0)
    warning = kit.one(verdict.advisories, "dangerous_terrain")
    assert (warning.model, warning.other) == ("a", "nebula")
    kit.assert_path(verdict, "a", 8.0)
    finding = kit.one(verdict.advisories, "dangerous_terrain")
    assert finding.other == "nebula"


# -- control zones and ramming ------------------------------------------------------------


@pytest.mark.parametrize(
    ("end", "gap", "rules"),
    [((8.0, 10), 1.0, []), ((8.6, 10), 0.4, ["control_zone"])],  # 2-1 = 1.0; 1.4-1 = 0.4
)
def test_may_not_end_within_1in_of_an_enemy(kit, end, gap, rules):
    models = [kit.model("a", "red", (2, 10), end, movement=8), kit.model("e", "blue", (10, 10))]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == rules
    kit.assert_path(verdict, "a", end[0] - 2, width=1e-9)
    if rules:
        finding = kit.one(verdict.violations, "control_zone")
        assert (finding.other, finding.measured, finding.limit) == ("e", pytest.approx(gap), 1)


def test_only_route_within_allowance_passes_through_an_enemy_zone(kit):
    # (10,10) -> (16,10) past an enemy at (13,10): straight is 6 (<= 7.05), but keeping
    # R = 0.5 + (1 - 0.05 tolerance) + 0.5 = 1.95 in from its centre costs
    # 2*sqrt(3^2 - R^2) + 2*R*asin(R/3) = 4.55962 + 2.75955 = 7.31917 > 7.05.
    r = 1.95
    hand = 2 * math.sqrt(9 - r**2) + 2 * r * math.asin(r / 3)
    models = [
        kit.model("a", "red", (10, 10), (16, 10), movement=7),
        kit.model("e", "blue", (13, 10)),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == ["control_zone"]
    finding = kit.one(verdict.violations, "control_zone")
    assert (finding.other, finding.limit) == ("e", 7)
    assert finding.measured == pytest.approx(hand, abs=0.02)
    kit.assert_path(verdict, "a", hand)


@pytest.mark.parametrize(("end", "gap"), [((8.5, 10), 0.5), ((9.0, 10), 0.0)])
def test_ending_in_a_friends_zone_is_a_ramming_maneuver(kit, end, gap):
    # Friend at (10,10): 1.5-1 = 0.5; 1.0-1 = 0 (base contact). Legal, but both roll.
    models = [kit.model("a", "red", (2, 10), end, movement=8), kit.model("f", "red", (10, 10))]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == []
    kit.assert_path(verdict, "a", end[0] - 2, width=1e-9)
    finding = kit.one(verdict.advisories, "ramming")
    assert (finding.other, finding.measured, finding.limit) == ("f", pytest.approx(gap), 1)


# Friend f at (5,11.3) beside a's straight route (2,10) -> (8,10): edges 1.3 - 1 = 0.3 apart
# there. Keeping clear (gap >= 1 - 0.05 tolerance) holds a's centre R = 0.5 + 0.95 + 0.5 =
# 1.95 from f's: |S-C| = sqrt(3^2 + 1.3^2) = sqrt(10.69); two tangents of
# sqrt(10.69 - 1.95^2) = 2.62440 and an arc of 1.95 * 2 * (atan(3/1.3) - acos(1.95/sqrt(10.69)))
# = 1.95 * 2 * (1.16189 - 0.93177) = 0.89745: 6.14625 in all.
CLEAR_OF_F = 2 * math.sqrt(10.69 - 1.95**2) + 1.95 * 2 * (
    math.atan(3 / 1.3) - math.acos(1.95 / math.sqrt(10.69))
)


def test_every_route_within_the_allowance_passes_a_friends_zone(kit):
    # Movement 6: the straight 6 in is legal, but keeping clear of f takes 6.146 > 6.05,
    # so a passes within 1 in of f on any route it may take: both roll for a ramming.
    assert abs(CLEAR_OF_F - 6.14625) < 1e-4
    models = [kit.model("a", "red", (2, 10), (8, 10), movement=6), kit.model("f", "red", (5, 11.3))]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == []
    kit.assert_path(verdict, "a", 6.0, width=1e-9)
    finding = kit.one(verdict.advisories, "ramming")
    assert (finding.model, finding.other, finding.limit) == ("a", "f", 6)
    assert finding.measured == pytest.approx(CLEAR_OF_F, abs=0.01)
    assert "a and f roll a D6 against Integrity" in finding.message


@pytest.mark.parametrize(
    ("friend", "movement"),
    [
        # Movement 6.2: the 6.146 in route round f fits 6.2 + 0.05, so a could keep clear.
        ((5, 11.3), 6.2),
        # f at (5,11.95): the straight route keeps 1.95 - 1 = 0.95 from it, the zone less
        # its tolerance: clear as it is.
        ((5, 11.95), 6.0),
    ],
)
def test_no_ramming_when_a_route_within_the_allowance_keeps_clear(kit, friend, movement):
    models = [
        kit.model("a", "red", (2, 10), (8, 10), movement=movement),
        kit.model("f", "red", friend),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == [] and verdict.advisories == ()
    kit.assert_path(verdict, "a", 6.0, width=1e-9)


def test_leaving_a_friends_zone_it_started_in_is_no_ramming(kit):
    # f at (2,11.3) is 1.3 - 1 = 0.3 from a's start (2,10): a starts in f's zone, and
    # leaving it along (2,10) -> (8,10) enters no zone; 6 in of 6.
    models = [kit.model("a", "red", (2, 10), (8, 10), movement=6), kit.model("f", "red", (2, 11.3))]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == [] and verdict.advisories == ()


@pytest.mark.parametrize("keywords", [[], ["fighter"]])
def test_declared_ram_into_base_contact(kit, keywords):
    # Enemy t at (10,10); the ram ends at (9,10): 1-1 = 0, contact. Fighters may ram.
    models = [
        kit.model(
            "a", "red", (2, 10), (9, 10), movement=8, keywords=keywords, action="ram", target="t"
        ),
        kit.model("t", "blue", (10, 10), keywords=keywords),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == []
    assert kit.one(verdict.advisories, "ramming").other == "t"
    kit.assert_path(verdict, "a", 7.0, width=1e-9)


# -- boarding -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("end", "rules"),
    [((9, 10), []), ((8.5, 10), ["control_zone"])],  # contact; 1.5-1 = 0.5 short of it
)
def test_boarding_must_reach_base_contact(kit, end, rules):
    models = [
        kit.model("a", "red", (2, 10), end, movement=8, action="board", target="t"),
        kit.model("t", "blue", (10, 10)),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == rules
    assert verdict.advisories == ()
    kit.assert_path(verdict, "a", end[0] - 2, width=1e-9)


def test_boarding_one_model_does_not_open_anothers_zone(kit):
    # "You can only board one model at a time": the board ends touching t at (10,10) and
    # also u at (9,11): 1 - 1 = 0" from u, whose zone stays closed.
    models = [
        kit.model("a", "red", (2, 10), (9, 10), movement=8, action="board", target="t"),
        kit.model("t", "blue", (10, 10)),
        kit.model("u", "blue", (9, 11)),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == ["control_zone"]
    finding = kit.one(verdict.violations, "control_zone")
    assert (finding.other, finding.measured, finding.limit) == ("u", pytest.approx(0), 1)


@pytest.mark.parametrize(
    ("mover_kw", "target_side", "target_kw", "why"),
    [
        ([], "red", [], "friendly"),  # "you cannot board a friendly unit"
        ([], "blue", ["fighter"], "fighter"),  # fighters cannot be boarded
        (["fighter"], "blue", [], "fighter"),  # fighters do not board
    ],
)
def test_boarding_that_is_not_allowed(kit, mover_kw, target_side, target_kw, why):
    models = [
        kit.model(
            "a", "red", (2, 10), (9, 10), movement=8, keywords=mover_kw, action="board", target="t"
        ),
        kit.model("t", target_side, (10, 10), keywords=target_kw),
    ]
    verdict = kit.judge(GAME, models)
    assert "action" in verdict.rules()
    assert why in kit.one(verdict.violations, "action").message
    kit.assert_path(verdict, "a", 7.0, width=1e-9)  # 9 - 2


# -- where it ended -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("end", "rule", "other", "amount"),
    [
        ((3.0, 10), "base_overlap", "f", 0.6),  # friend at (3.4,10): 1 - 0.4 = 0.6
        ((4.9, 14), "base_overlap", "wall", 0.4),  # base edge at 5.4, wall from x = 5
        ((0.2, 16), "off_table", None, 0.3),  # base edge at -0.3
    ],
)
def test_where_it_ended(kit, end, rule, other, amount):
    models = [kit.model("a", "red", (2, 13), end), kit.model("f", "red", (3.4, 10))]
    verdict = kit.judge(GAME, models, [kit.box("wall", 5, 12, 6, 16, "impassable")])
    assert verdict.rules() == [rule]
    kit.assert_path(verdict, "a", math.dist((2, 13), end), width=1e-9)  # straight
    finding = kit.one(verdict.violations, rule)
    assert finding.other == other
    assert finding.measured == pytest.approx(amount, abs=1e-3)
