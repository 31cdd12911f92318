"""Necromunda (rules text 003), judged scenario by scenario with hand-worked numbers.

All bases are 1" round (radius 0.5"): an edge-to-edge gap is the centre distance minus 1".
Fighters pass through friends, not enemies, and keep 1" from enemy fighters (the 1" Rule)
unless these are Prone and Seriously Injured; vehicles neither keep nor impose it.
A Charge adds a D3 to Movement and may come within 1" only if it ends in base contact.
"""

from __future__ import annotations

import math

import pytest

GAME = "necromunda"

# The 0.05 in tolerance applies while passing a zone as at the end of a move: round an
# enemy's 1" zone the detour is kit.zone_detour (worked out in tests/rules/conftest.py),
# 7.31917.


# -- movement -----------------------------------------------------------------------------


@pytest.mark.parametrize(("movement", "rules"), [(5, []), (4.9, ["movement"])])
def test_move_through_a_friend(kit, movement, rules):
    # (2,10) -> (5,14) passes over the friend at (3.5,12): 3-4-5, 5".
    models = [
        kit.model("a", "red", (2, 10), (5, 14), movement=movement),
        kit.model("f", "red", (3.5, 12)),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == rules
    kit.assert_path(verdict, "a", 5.0, width=1e-9)
    if rules:
        finding = kit.one(verdict.violations, "movement")
        assert (finding.measured, finding.limit) == (pytest.approx(5), 4.9)


@pytest.mark.parametrize(("movement", "rules"), [(7, ["control_zone"]), (7.4, [])])
def test_passing_within_1in_of_an_enemy_fighter(kit, movement, rules):
    models = [
        kit.model("a", "red", (10, 10), (16, 10), movement=movement),
        kit.model("e", "blue", (13, 10)),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == rules  # straight 6 <= 7.05; clear 7.391 > 7.05, <= 7.45
    kit.assert_path(verdict, "a", kit.zone_detour)
    if rules:
        finding = kit.one(verdict.violations, "control_zone")
        assert (finding.other, finding.limit) == ("e", 7)
        assert finding.measured == pytest.approx(kit.zone_detour, abs=0.02)


@pytest.mark.parametrize(
    ("end", "rule", "other", "amount"),
    [
        ((7.6, 12), "base_overlap", "f", 0.4),  # friend at (7,12): 1 - 0.6 = 0.4
        ((4.8, 3), "base_overlap", "wall", 0.3),  # base edge at 5.3, wall from x = 5
        ((4, 23.8), "off_table", None, 0.3),  # base edge at 24.3 on a 24" table
    ],
)
def test_where_it_ended(kit, end, rule, other, amount):
    models = [kit.model("a", "red", (4, 8), end, movement=20), kit.model("f", "red", (7, 12))]
    verdict = kit.judge(GAME, models, [kit.box("wall", 5, 0, 6, 5, "impassable")])
    assert verdict.rules() == [rule]
    kit.assert_path(verdict, "a", math.dist((4, 8), end))  # straight
    finding = kit.one(verdict.violations, rule)
    assert (finding.other, finding.measured) == (other, pytest.approx(amount, abs=1e-3))


# -- the 1" rule --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mover_kw", "enemy_kw", "enemy_status", "rules"),
    [
        ([], [], [], ["control_zone"]),
        ([], [], ["prone"], ["control_zone"]),
        ([], [], ["seriously_injured"], ["control_zone"]),
        ([], [], ["prone", "seriously_injured"], []),  # Prone and Seriously Injured
        ([], ["vehicle", "wheeled"], [], []),  # a vehicle is not a fighter
        (["vehicle", "wheeled"], [], [], []),  # "Vehicles suffer no such restriction"
    ],
)
def test_one_inch_rule(kit, mover_kw, enemy_kw, enemy_status, rules):
    # a ends at (8.5,10), enemy at (10,10): 1.5 - 1 = 0.5".
    models = [
        kit.model("a", "red", (4, 10), (8.5, 10), keywords=mover_kw),
        kit.model("e", "blue", (10, 10), keywords=enemy_kw, status=enemy_status),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == rules
    kit.assert_path(verdict, "a", 4.5, width=1e-9)
    if rules:
        finding = kit.one(verdict.violations, "control_zone")
        assert (finding.other, finding.measured, finding.limit) == ("e", pytest.approx(0.5), 1)


# -- charges ------------------------------------------------------------------------------


def charge(kit, end, *, roll=2, target="g", **kw):
    return kit.model(
        "c", "red", (2, 10), end, movement=4, action="charge", roll=roll, target=target, **kw
    )


def test_charge_into_base_contact(kit):
    # Movement 4 + D3 roll 2 = 6; (2,10) -> (8,10) is 6 and touches g at (9,10). It may
    # also end within 1" of f at (8,11.5): 1.5 - 1 = 0.5.
    models = [
        charge(kit, (8, 10)),
        kit.model("g", "blue", (9, 10)),
        kit.model("f", "blue", (8, 11.5)),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == []
    assert verdict.advisories == ()
    assert verdict.moves["c"].allowance == 6
    kit.assert_path(verdict, "c", 6.0, width=1e-9)


def test_charge_without_contact_must_stop_1in_away(kit):
    # Ends at (7.5,10): 1.5 - 1 = 0.5 from g, no contact.
    verdict = kit.judge(GAME, [charge(kit, (7.5, 10)), kit.model("g", "blue", (9, 10))])
    assert verdict.rules() == ["charge"]
    finding = kit.one(verdict.violations, "charge")
    assert (finding.other, finding.measured, finding.limit) == ("g", pytest.approx(0.5), 1)
    kit.assert_path(verdict, "c", 5.5, width=1e-9)


def test_charge_that_falls_short_is_reported(kit):
    # Movement 4 + D3 roll 2 = 6: (2,10) -> (8,10) is the full 6, ending 12 - 8 - 1 = 3
    # from g: a failed charge, not illegal.
    verdict = kit.judge(GAME, [charge(kit, (8, 10)), kit.model("g", "blue", (12, 10))])
    assert verdict.rules() == []
    failed = kit.one(verdict.advisories, "charge")
    assert (failed.other, failed.measured, failed.limit) == ("g", pytest.approx(3), 1)


@pytest.mark.parametrize(
    ("end", "enemies", "used", "gap"),
    [
        # (2,10) -> (5,10) is 3 of its 4 + 2 = 6 (3 < 6 - 0.05), ending 9 - 5 - 1 = 3
        # from g: it stopped early, so the charge is illegal, not merely failed.
        ((5, 10), [("g", (9, 10))], 3.0, None),
        # 5.96 of 6 (>= 6 - 0.05): the full distance, ending 12 - 7.96 - 1 = 3.04 from g.
        ((7.96, 10), [("g", (12, 10))], None, 3.04),
        # 3 of 6, but it stopped 1" from enemy f at (5,12): 2 - 1 = 1 ("stopping 1"
        # away"); g is 12 - 5 - 1 = 6 away: a failed charge only.
        ((5, 10), [("g", (12, 10)), ("f", (5, 12))], None, 6.0),
    ],
)
def test_failed_charge_must_still_move_its_full_distance(kit, end, enemies, used, gap):
    # "if the fighter has insufficient movement to make it into base to base contact with
    # an enemy fighter, they must still move the full distance (stopping 1" away ...)".
    models = [charge(kit, end)] + [kit.model(mid, "blue", at) for mid, at in enemies]
    verdict = kit.judge(GAME, models)
    if used is None:
        assert verdict.rules() == []
        failed = kit.one(verdict.advisories, "charge")
        assert (failed.other, failed.measured, failed.limit) == ("g", pytest.approx(gap), 1)
    else:
        assert verdict.rules() == ["charge"]
        finding = kit.one(verdict.violations, "charge")
        assert (finding.other, finding.measured, finding.limit) == ("g", pytest.approx(used), 6)
        assert "must still move the full distance" in finding.message
        assert verdict.advisories == ()


def test_charge_beyond_movement_plus_d3(kit):
    # 4 + 1 = 5 allowed; (2,10) -> (8,10) is 6 > 5.05, even though it reaches contact.
    verdict = kit.judge(GAME, [charge(kit, (8, 10), roll=1), kit.model("g", "blue", (9, 10))])
    assert verdict.rules() == ["charge"]
    finding = kit.one(verdict.violations, "charge")
    assert (finding.measured, finding.limit) == (pytest.approx(6), 5)


@pytest.mark.parametrize(
    ("status", "count"),
    [(["prone"], 1), (["seriously_injured"], 1), (["prone", "seriously_injured"], 2)],
)
def test_only_a_standing_active_fighter_may_charge(kit, status, count):
    # The charge moves its full 4 + 2 = 6 to (8,10), 11 - 8 - 1 = 2" from g: outside its
    # zone, a failed charge.
    models = [charge(kit, (8, 10), status=status), kit.model("g", "blue", (11, 10))]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == ["charge"] * count
    assert all("may not charge" in f.message for f in verdict.violations)
    failed = kit.one(verdict.advisories, "charge")
    assert (failed.measured, failed.limit) == (pytest.approx(2), 1)


def test_vehicle_charge_is_not_held_to_the_1in_rule(kit):
    # A vehicle ending 0.5" from g without contact: no restriction.
    models = [
        charge(kit, (7.5, 10), keywords=["vehicle", "wheeled"]),
        kit.model("g", "blue", (9, 10)),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == []
    kit.assert_path(verdict, "c", 5.5, width=1e-9)  # 7.5 - 2, within 4 + 2


def test_charge_contact_must_be_with_an_enemy_fighter(kit):
    # The exception needs base contact "with one or more enemy fighters"; the vehicle at
    # (9,10) is not one. f at (8,11.5) is 1.5 - 1 = 0.5" away: stop 1" away.
    models = [
        charge(kit, (8, 10), target=None),
        kit.model("v", "blue", (9, 10), keywords=["vehicle", "wheeled"]),
        kit.model("f", "blue", (8, 11.5)),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == ["charge"]
    finding = kit.one(verdict.violations, "charge")
    assert (finding.other, finding.measured) == ("f", pytest.approx(0.5))


# -- terrain and locomotion ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("keywords", "hand"),
    [
        ([], 8.0),  # a fighter: the usual double cost, 6 + 2
        (["vehicle", "wheeled"], 8.0),  # Wheeled: every 1" counts as 2"
        (["vehicle", "walker"], 8.0),  # Walker: the same
        (["vehicle", "tracked"], 6.0),  # Tracked: no penalty
        (["vehicle", "skimmer"], 6.0),  # Skimmer: ignores difficult terrain
    ],
)
def test_difficult_terrain_by_locomotion(kit, keywords, hand):
    # (8,12) -> (14,12) straight over the 2"-wide strip x 10..12 (y 0..24): 6" walked, 2"
    # of them in the strip. The strip spans the table: there is no way round.
    strip = kit.box("rubble", 10, 0, 12, 24, "difficult")
    mover = kit.model("a", "red", (8, 12), (14, 12), movement=7, keywords=keywords)
    verdict = kit.judge(GAME, [mover], [strip])
    assert verdict.rules() == ([] if hand <= 7.05 else ["movement"])
    kit.assert_path(verdict, "a", hand)
    assert verdict.advisories == ()


@pytest.mark.parametrize(
    ("keywords", "hand", "warned"),
    [
        ([], 8.0, True),
        (["vehicle", "wheeled"], 8.0, True),  # crossed as difficult, with a Handling check
        (["vehicle", "tracked"], 6.0, True),
        (["vehicle", "skimmer"], 6.0, False),  # ignores dangerous terrain
    ],
)
def test_dangerous_terrain(kit, keywords, hand, warned):
    pit = kit.box("pit", 10, 0, 12, 24, "dangerous")
    mover = kit.model("a", "red", (8, 12), (14, 12), movement=8, keywords=keywords)
    verdict = kit.judge(GAME, [mover], [pit])
    assert verdict.legal
    kit.assert_path(verdict, "a", hand)
    assert kit.advisories(verdict) == (["dangerous_terrain"] if warned else [])


@pytest.mark.parametrize(
    ("kind", "keywords", "end_x", "advised"),
    [
        # A skimmer ending at x 11: its 1" base spans x 10.5..11.5, all inside the strip
        # x 10..12: "If ending an activation on difficult or dangerous terrain, pass a
        # Handling test".
        ("difficult", ["vehicle", "skimmer"], 11, True),
        ("dangerous", ["vehicle", "skimmer"], 11, True),
        # Crossing the strip to x 14 (base x 13.5..14.5) and ending off it: no test.
        ("difficult", ["vehicle", "skimmer"], 14, False),
        ("dangerous", ["vehicle", "skimmer"], 14, False),
        # Base x 9.04..10.04 reaches 0.04 <= 0.05 tolerance into the strip: not on it.
        ("difficult", ["vehicle", "skimmer"], 9.54, False),
        # Not a skimmer: a tracked vehicle ending on difficult terrain takes no test.
        ("difficult", ["vehicle", "tracked"], 11, False),
    ],
)
def test_skimmer_ending_on_difficult_or_dangerous_terrain_takes_a_handling_test(
    kit, kind, keywords, end_x, advised
):
    strip = kit.box("strip", 10, 0, 12, 24, kind)
    mover = kit.model("a", "red", (8, 12), (end_x, 12), movement=8, keywords=keywords)
    verdict = kit.judge(GAME, [mover], [strip])
    assert verdict.legal
    assert kit.advisories(verdict) == (["handling_test"] if advised else [])
    if advised:
        finding = kit.one(verdict.advisories, "handling_test")
        assert finding.other == "strip"
        assert f"ended on {kind} terrain strip" in finding.message


@pytest.mark.parametrize(
    ("end_y", "rules", "depth"), [(1.49, [], None), (1.3, ["base_overlap"], 0.2)]
)
def test_overlap_with_an_l_shaped_wall_is_measured_from_the_arm_it_touches(
    kit, end_y, rules, depth
):
    # Regression: the depth was measured against the L's convex hull (1.99 in). The base
    # (r 0.5) at (3, end_y) reaches y = end_y - 0.5 into the arm y 0..1: 0.01 (inside the
    # 0.05 tolerance) or 0.2 in.
    wall = {
        "id": "L",
        "polygon": [[0, 0], [10, 0], [10, 1], [1, 1], [1, 10], [0, 10]],
        "keywords": ["impassable"],
    }
    verdict = kit.judge(GAME, [kit.model("a", "red", (3, 4), (3, end_y), movement=6)], [wall])
    assert verdict.rules() == rules
    if depth is not None:
        assert verdict.violations[0].measured == pytest.approx(depth, abs=1e-3)


def test_tolerance_applies_while_passing_as_at_the_end(kit):
    # Regression: ending 0.97 in from an enemy was legal (1 - 0.05 tolerance) but passing
    # 0.97 in from two was not. The straight line y = 11.97 runs 1.97 in from both centres:
    # 1.97 - 0.5 - 0.5 = 0.97 in edge to edge. Straight: 8 in, the allowance.
    models = [
        kit.model("a", "red", (1, 11.97), (9, 11.97), movement=8),
        kit.model("e1", "blue", (5, 10)),
        kit.model("e2", "blue", (5, 13.94)),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == []
    kit.assert_path(verdict, "a", 8.0, width=1e-9)
