"""Trench Crusade (rules text 001), judged scenario by scenario with hand-worked numbers.

All bases are 1" round (radius 0.5"), so an edge-to-edge gap is the centre distance
minus 1". Tolerance is the default 0.05". Zones: a Move may not end within 1" of an enemy;
charges and retreats may. Models block each other (friends too).
"""

from __future__ import annotations

import math

import pytest

GAME = "trench-crusade"

# Detours worked out by hand in tests/rules/conftest.py: round a 1" base at (13,10),
# kit.round_base_detour = 6.33653; round an enemy's 1" zone (the 0.05 in tolerance applies
# while passing a zone as at the end of a move), kit.zone_detour = 7.31917; round the
# impassable wall below, kit.wall_detour = 10.32967.


def wall(kit):
    return kit.box("wall", 5, 10, 6, 16, "impassable")


# -- movement -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("end", "movement", "hand", "rules"),
    [
        ((8, 10), 6, 6.0, []),  # 8-2 = 6 of 6
        ((8.04, 10), 6, 6.04, []),  # 6.04 <= 6 + 0.05 tolerance
        ((8.1, 10), 6, 6.1, ["movement"]),  # 6.1 > 6.05
        ((5, 14), 5, 5.0, []),  # 3-4-5 triangle: sqrt(9+16) = 5
        ((5, 14), 4.5, 5.0, ["movement"]),
    ],
)
def test_open_ground_move_is_measured_straight(kit, end, movement, hand, rules):
    verdict = kit.judge(GAME, [kit.model("a", "red", (2, 10), end, movement=movement)])
    assert verdict.rules() == rules
    kit.assert_path(verdict, "a", hand, width=1e-9)
    if rules:
        finding = kit.one(verdict.violations, "movement")
        assert (finding.measured, finding.limit) == (pytest.approx(hand), movement)


@pytest.mark.parametrize(("movement", "rules"), [(10, ["movement"]), (10.5, [])])
def test_detour_round_impassable_wall(kit, movement, rules):
    mover = kit.model("a", "red", (2, 13), (9, 13), movement=movement)
    verdict = kit.judge(GAME, [mover], [wall(kit)])
    assert verdict.rules() == rules
    kit.assert_path(verdict, "a", kit.wall_detour)
    if rules:  # 10.330 > 10.05
        finding = kit.one(verdict.violations, "movement")
        assert finding.measured == pytest.approx(kit.wall_detour, abs=0.02)
        assert finding.limit == 10


def test_friendly_model_blocks_and_forces_a_detour(kit):
    verdict = kit.judge(
        GAME,
        [kit.model("a", "red", (10, 10), (16, 10)), kit.model("f", "red", (13, 10))],
    )
    assert verdict.rules() == ["movement"]  # 6.337 > 6.05
    kit.assert_path(verdict, "a", kit.round_base_detour)
    assert kit.one(verdict.violations, "movement").limit == 6


def test_climbing_costs_every_inch_once(kit):
    # No climbing rule in text 001: a 3" climb straight up the wall costs 3".
    tower = kit.box("tower", 5, 0, 10, 10, "climbable", height=3)
    verdict = kit.judge(GAME, [kit.model("a", "red", (5, 5, 0), (5, 5, 3), movement=3)], [tower])
    assert verdict.rules() == []
    kit.assert_path(verdict, "a", 3.0, width=1e-9)


# -- difficult terrain --------------------------------------------------------------------


def test_skirting_a_small_difficult_patch_is_cheaper_than_crossing(kit):
    # Patch x 10..12, y 11..13. Straight across: 6 + 2 = 8. Skirting its top edge:
    # (8,12)->(10,13)->(12,13)->(14,12): sqrt(5) + 2 + sqrt(5) = 6.47214, no inch inside.
    patch = kit.box("mud", 10, 11, 12, 13, "difficult")
    verdict = kit.judge(GAME, [kit.model("a", "red", (8, 12), (14, 12), movement=7)], [patch])
    assert verdict.rules() == []
    kit.assert_path(verdict, "a", 2 * math.sqrt(5) + 2)


# -- where it ended -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("end", "gap", "rules"),
    [
        ((8.0, 10), 1.0, []),  # centres 2" apart: 2-1 = 1.0, not within 1"
        ((8.5, 10), 0.5, ["control_zone"]),  # 1.5-1 = 0.5
        ((8.7, 10), 0.3, ["control_zone"]),  # 1.3-1 = 0.3
    ],
)
def test_move_may_not_end_within_1in_of_an_enemy(kit, end, gap, rules):
    models = [kit.model("a", "red", (2, 10), end, movement=8), kit.model("e", "blue", (10, 10))]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == rules
    kit.assert_path(verdict, "a", end[0] - 2)
    if rules:
        finding = kit.one(verdict.violations, "control_zone")
        assert (finding.other, finding.measured, finding.limit) == ("e", pytest.approx(gap), 1)


@pytest.mark.parametrize(("movement", "rules"), [(7, ["control_zone"]), (7.5, [])])
def test_only_route_within_allowance_passes_through_a_zone(kit, movement, rules):
    # Straight through e's zone is 6" (<= 7.05); keeping clear it is 7.391.
    models = [
        kit.model("a", "red", (10, 10), (16, 10), movement=movement),
        kit.model("e", "blue", (13, 10)),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == rules
    kit.assert_path(verdict, "a", kit.zone_detour)
    if rules:
        finding = kit.one(verdict.violations, "control_zone")
        assert finding.other == "e"
        assert finding.measured == pytest.approx(kit.zone_detour, abs=0.02)
        assert finding.limit == 7


@pytest.mark.parametrize(
    ("end", "other", "depth"),
    [
        ((2.8, 10), "f", 0.2),  # friend at (3.6,10): 1 - 0.8 = 0.2 overlap
        ((4.8, 12), "wall", 0.3),  # base reaches x = 5.3, 0.3 into the wall at x = 5
    ],
)
def test_base_overlap(kit, end, other, depth):
    models = [kit.model("a", "red", (2, 12), end), kit.model("f", "red", (3.6, 10))]
    verdict = kit.judge(GAME, models, [wall(kit)])
    assert verdict.rules() == ["base_overlap"]
    finding = kit.one(verdict.violations, "base_overlap")
    assert finding.other == other
    assert finding.measured == pytest.approx(depth, abs=1e-3)


@pytest.mark.parametrize(
    ("end", "beyond", "rules"),
    [
        ((0.3, 10), 0.2, ["off_table"]),  # base edge at 0.3-0.5 = -0.2
        ((47.9, 10), 0.4, ["off_table"]),  # 47.9+0.5 = 48.4 on a 48" table
        ((20, 23.54), 0.04, []),  # 23.54+0.5 = 24.04: within the 0.05 tolerance
        ((20, 23.4), 0.0, []),  # 23.9: on the table
    ],
)
def test_off_table(kit, end, beyond, rules):
    verdict = kit.judge(GAME, [kit.model("a", "red", (20, 20), end, movement=30)])
    assert verdict.rules() == rules
    kit.assert_path(verdict, "a", math.dist((20, 20), end), width=1e-9)
    if rules:
        assert kit.one(verdict.violations, "off_table").measured == pytest.approx(beyond, abs=1e-3)


# -- actions ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "rules"), [("move", ["engaged"]), ("dash", ["engaged"]), ("retreat", [])]
)
def test_engaged_model_may_only_retreat(kit, action, rules):
    models = [
        kit.model("a", "red", (10, 10), (7, 10), status=["engaged"], action=action),
        kit.model("e", "blue", (11, 10)),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == rules
    kit.assert_path(verdict, "a", 3.0, width=1e-9)  # 10 - 7


@pytest.mark.parametrize(
    ("enemy_x", "action", "gap", "rules"),
    [
        (11.5, "move", 0.5, ["engaged"]),  # 1.5 - 1 = 0.5 <= 1: engaged, a Move may not leave
        (11.5, "dash", 0.5, ["engaged"]),  # nor may a Dash
        (11.5, "retreat", 0.5, []),  # a Retreat may; it ends 11.5-7-1 = 3.5 > 1 away
        (12.04, "move", 1.04, ["engaged"]),  # 2.04 - 1 = 1.04 <= 1 + 0.05 tolerance
        (12.1, "move", 1.1, []),  # 2.1 - 1 = 1.1 > 1.05: not engaged
        (12.5, "move", 1.5, []),  # 2.5 - 1 = 1.5: not engaged, the Move is free
    ],
)
def test_starting_within_1in_of_an_enemy_engages(kit, enemy_x, action, gap, rules):
    # No status: a at (10,10) moves away to (7,10), 3"; enemy e at (enemy_x, 10). "Retreat
    # ... is used when a model is within 1" of an enemy model and wishes to move away", so
    # where the bases stood at the start decides whether it is engaged.
    models = [
        kit.model("a", "red", (10, 10), (7, 10), action=action),
        kit.model("e", "blue", (enemy_x, 10)),
    ]
    verdict = kit.judge(GAME, models)
    assert sorted(verdict.rules()) == rules
    kit.assert_path(verdict, "a", 3.0, width=1e-9)  # 10 - 7
    if "engaged" in rules:
        finding = kit.one(verdict.violations, "engaged")
        assert (finding.other, finding.measured, finding.limit) == ("e", pytest.approx(gap), 1)


def test_engaged_status_still_engages_far_from_enemies(kit):
    # The players' `engaged` status holds though e stands 20-10-1 = 9" away at the start.
    models = [
        kit.model("a", "red", (10, 10), (7, 10), status=["engaged"]),
        kit.model("e", "blue", (20, 10)),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == ["engaged"]
    assert kit.one(verdict.violations, "engaged").measured is None


@pytest.mark.parametrize(
    ("end", "gap", "rules"),
    [((7, 10), 3.0, []), ((9, 10), 1.0, []), ((9.2, 10), 0.8, ["retreat"])],
)
def test_retreat_must_end_more_than_1in_from_every_enemy(kit, end, gap, rules):
    # Enemy at (11,10). (7,10): 4-1 = 3. (9,10): 2-1 = 1.0, given the benefit of the
    # 0.05 tolerance. (9.2,10): 1.8-1 = 0.8 <= 1 - 0.05.
    models = [
        kit.model("a", "red", (10, 10), end, status=["engaged"], action="retreat"),
        kit.model("e", "blue", (11, 10)),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == rules
    kit.assert_path(verdict, "a", 10 - end[0], width=1e-9)
    if rules:
        finding = kit.one(verdict.violations, "retreat")
        assert (finding.other, finding.measured, finding.limit) == ("e", pytest.approx(gap), 1)


def test_dash_asks_for_a_risky_roll(kit):
    verdict = kit.judge(GAME, [kit.model("a", "red", (2, 10), (7, 10), action="dash")])
    assert verdict.legal
    assert kit.advisories(verdict) == ["risky_roll"]
    kit.assert_path(verdict, "a", 5.0, width=1e-9)


# -- charges ------------------------------------------------------------------------------


def charger(kit, end=None, *, movement=6, roll=3, target="t", **kw):
    return kit.model(
        "c", "red", (2, 10), end, movement=movement, action="charge", target=target, roll=roll, **kw
    )


def test_charge_into_contact_is_legal_and_may_enter_zones(kit):
    # 6 + 3 = 9 allowed; (2,10) -> (10,10) is 8 and ends touching t at (11,10).
    verdict = kit.judge(GAME, [charger(kit, (10, 10)), kit.model("t", "blue", (11, 10))])
    assert verdict.rules() == []
    assert verdict.advisories == ()
    assert verdict.moves["c"].allowance == 9
    kit.assert_path(verdict, "c", 8.0, width=1e-9)


@pytest.mark.parametrize(("tx", "rules"), [(15, []), (16, ["charge"])])
def test_charge_target_must_be_within_12in(kit, tx, rules):
    # (2,10) to (15,10): 13-1 = 12 edge to edge; (16,10): 14-1 = 13 > 12.05.
    verdict = kit.judge(GAME, [charger(kit), kit.model("t", "blue", (tx, 10))])
    assert verdict.rules() == rules
    if rules:
        finding = kit.one(verdict.violations, "charge")
        assert (finding.other, finding.measured, finding.limit) == ("t", pytest.approx(13), 12)


def test_charge_may_not_target_a_friend(kit):
    verdict = kit.judge(GAME, [charger(kit, (7, 10)), kit.model("t", "red", (8, 10))])
    assert verdict.rules() == ["charge"]
    assert kit.one(verdict.violations, "charge").other == "t"
    kit.assert_path(verdict, "c", 5.0, width=1e-9)  # 7 - 2


@pytest.mark.parametrize(("interposer", "rules"), [((8, 10), ["charge"]), ((17, 10), [])])
def test_interposing_enemy_must_be_charged_first(kit, interposer, rules):
    # A corridor between walls (centres may use y 9.3..10.7): i's 1" zone keeps the centre
    # 2" from (8,10), so y 8..12, and closes it. Leaving the corridor round the walls'
    # ends is far more than 12". Behind the target (17,10), i is not in the way.
    walls = [
        kit.box("n", 0, 11.2, 20, 12.2, "impassable"),
        kit.box("s", 0, 7.8, 20, 8.8, "impassable"),
    ]
    models = [charger(kit), kit.model("t", "blue", (14, 10)), kit.model("i", "blue", interposer)]
    verdict = kit.judge(GAME, models, walls)
    assert verdict.rules() == rules
    assert verdict.moves["c"].allowance == 9  # 6 + 3, declared without moving
    if rules:
        assert kit.one(verdict.violations, "charge").other == "i"


@pytest.mark.parametrize(
    ("half_door", "rules"),
    [
        # Door centres may use |y - 10| <= 1.6 where the wall is (x 10.25..10.75), every
        # such point within sqrt(0.25^2 + 1.6^2) = 1.62 < 1.95 of b: no way in keeps
        # clear of b's zone. (b's zone shrunk to leave t's centre outside it, 1.5 - 0.5 =
        # 1 from b's base, 1.5 from its centre, would let a route by at 1.5..1.6.)
        (1.6, ["charge"]),
        # 1.9 < 1.95: still every way through the door enters b's zone.
        (1.9, ["charge"]),
        # 2.0: a strip 1.95..2.0 beside b at x = 10.5, then round to t's 1" (e.g. (12,12),
        # 2 from t and sqrt(1.5^2 + 2^2) = 2.5 from b); about 8.7 + 1.6 = 10.3 <= 12.
        (2.0, []),
    ],
)
def test_a_bodyguard_in_a_doorway_interposes(kit, half_door, rules):
    # A wall x 10.25..10.75 across the table with a door; bodyguard b stands in the door
    # at (10.5,10) and the target t just behind it at (12,10), 1.5 - 1 = 0.5 from b's
    # base: t's centre lies inside b's zone (the centre of a 1" base keeps R = 0.5 + 0.95
    # + 0.5 = 1.95 from b's). The charge may target t only if some route reaches 1" of
    # t's base (centre within 0.5 + 1 + 0.5 = 2 of (12,10)) before 1" of b's; going
    # round the wall's ends is off the table. The wall's half-door of h leaves the
    # centre |y - 10| <= h in the door (0.5 from each wall end at y = 10 +- (h + 0.5)).
    door = half_door + 0.5
    walls = [
        kit.box("n", 10.25, 10 + door, 10.75, 24, "impassable"),
        kit.box("s", 10.25, 0, 10.75, 10 - door, "impassable"),
    ]
    models = [charger(kit), kit.model("t", "blue", (12, 10)), kit.model("b", "blue", (10.5, 10))]
    verdict = kit.judge(GAME, models, walls)
    assert verdict.rules() == rules
    if rules:
        assert kit.one(verdict.violations, "charge").other == "b"


def test_failed_charge_beyond_movement_plus_roll(kit):
    # 6 + 2 = 8 allowed; moved 11-2 = 9 > 8.05 and ended 14-11-1 = 2" from t: failed.
    verdict = kit.judge(GAME, [charger(kit, (11, 10), roll=2), kit.model("t", "blue", (14, 10))])
    assert verdict.rules() == ["charge"]
    finding = kit.one(verdict.violations, "charge")
    assert (finding.measured, finding.limit) == (pytest.approx(9), 8)
    assert "failed charge" in finding.message
    failed = kit.one(verdict.advisories, "charge")
    assert (failed.measured, failed.limit) == (pytest.approx(2), 1)


@pytest.mark.parametrize(
    ("movement", "roll", "limit"),
    [(8, 6, 12), (8, 3, 11), (5, 6, 11), (7, 6, 12)],  # 8+6 = 14 capped at 12; 7+6 = 13 -> 12
)
def test_charge_bonus_capped_at_12in(kit, movement, roll, limit):
    # (2,10) -> (14.5,10) is 12.5 and ends touching t at (14.5,11). Declared from
    # sqrt(12.5^2 + 1^2) - 1 = 11.540" away, within 12.
    models = [
        charger(kit, (14.5, 10), movement=movement, roll=roll),
        kit.model("t", "blue", (14.5, 11)),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == ["charge"]
    assert verdict.moves["c"].allowance == limit
    finding = kit.one(verdict.violations, "charge")
    assert (finding.measured, finding.limit) == (pytest.approx(12.5, abs=0.02), limit)


def test_arc_inside_difficult_ground_costs_double_though_its_centre_is_outside(kit):
    # Regression: an arc was charged at the rate of the point it bends round. The mover
    # (r 0.5) passes under a friend at (5, 10.3): 1 in from its centre, all of it inside the
    # mud (y < 10). From (3.5, 9.5): |(1.5, 0.8)| = 1.7, tangent sqrt(1.7^2 - 1) = 1.374773;
    # each tangent meets the circle atan2(1.5, 0.8) - acos(1 / 1.7) = 0.138918 rad from its
    # bottom: 2 * 1.374773 + 2 * 0.138918 = 3.027381 in, all in mud at 2 each: 6.054761.
    mud = kit.box("mud", 0, 0, 10, 10, "difficult")
    models = [
        kit.model("a", "red", (3.5, 9.5), (6.5, 9.5), movement=5.9),
        kit.model("b", "red", (5, 10.3)),
    ]
    verdict = kit.judge(GAME, models, [mud], table=(20.0, 20.0))
    assert verdict.rules() == ["movement"]
    kit.assert_path(verdict, "a", 2 * 3.027381, width=1e-6)
