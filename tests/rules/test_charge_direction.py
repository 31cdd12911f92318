"""Which way a charge went, where the game's text asks it (``charge_route``), worked by hand.

Trench Crusade (rules text 001), Charge Moves: "move the charging model toward the target":
a charge must end nearer base contact with its target, by the shortest legal way, than it
started. Necromunda (rules text 003): "a Charge (Double) action should take the shortest
route possible": a charge that ends in base contact with its target is held to the shortest
route to base contact. The judge sees the start and the end, not the way the model was
carried. Bases are 1" round (radius 0.5"), so in open ground the way to base contact is the
edge-to-edge gap, the centre distance less 1". The tolerance is the default 0.05".
"""

from __future__ import annotations

import math

import pytest

from tablesight.rules.ruleset import load_ruleset

# -- the games' words ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "action", "route"),
    [
        ("trench-crusade", "charge", "toward"),  # "move the charging model toward the target"
        ("necromunda", "charge", "shortest"),  # "should take the shortest route possible"
        # "Models do not have to move in a straight line; they can move in curves or any
        # path as long as they do not exceed their movement allowance" (texts 000 and 004);
        # boarding and engaging are not charges.
        ("cosmic-combat", "board", "any"),
        ("cosmic-combat-revised", "engage", "any"),
    ],
)
def test_each_game_asks_what_its_text_asks(game, action, route):
    assert load_ruleset(game).actions[action].charge_route == route


# -- Trench Crusade: toward the target --------------------------------------------------------


def tc_charge(kit, start, end, target_at=(9, 10), *, roll=3):
    # Movement 6 + Charge Bonus 3 = 9" allowed: every move below fits it.
    return [
        kit.model("c", "red", start, end, action="charge", target="t", roll=roll),
        kit.model("t", "blue", target_at),
    ]


@pytest.mark.parametrize(
    ("start", "end", "before", "after", "flagged"),
    [
        # Walks away: from (6,10) 9 - 6 - 1 = 2" from t to (3,10) 9 - 3 - 1 = 5": 3" further.
        ((6, 10), (3, 10), 2.0, 5.0, True),
        # Nearer but short of contact: (2,10) 6" away to (6,10) 2" away: toward, a failed charge.
        ((2, 10), (6, 10), 6.0, 2.0, False),
        # Round the target on a circle: (6,10) to (9,13), each 3 - 1 = 2" from t; it moved
        # sqrt(3^2 + 3^2) = 4.24" and came no nearer.
        ((6, 10), (9, 13), 2.0, 2.0, True),
        # 0.06" nearer (6 - 6.06 = 0.06 > 0.05): toward.
        ((6, 10), (6.06, 10), 2.0, 1.94, False),
        # 0.04" back: it moved no more than the tolerance, so it went nowhere; not judged.
        ((6, 10), (5.96, 10), 2.0, 2.04, False),
        # Diagonally away: (6,10) to (3,6): sqrt(6^2 + 4^2) - 1 = 6.2111" from t, 4.2111" further.
        ((6, 10), (3, 6), 2.0, math.sqrt(52) - 1, True),
    ],
)
def test_trench_crusade_charge_must_go_toward_its_target(kit, start, end, before, after, flagged):
    verdict = kit.judge("trench-crusade", tc_charge(kit, start, end))
    assert verdict.rules() == (["charge"] if flagged else [])
    # none of these reaches 1" of t: each is also a failed charge (an advisory)
    failed = kit.one(verdict.advisories, "charge")
    assert failed.measured == pytest.approx(after)
    if flagged:
        finding = kit.one(verdict.violations, "charge")
        assert finding.other == "t"
        assert (finding.measured, finding.limit) == (pytest.approx(after), pytest.approx(before))
        assert finding.message.endswith("a charge moves toward its target")
        if after > before + 0.05:
            assert f'{after - before:.2f}" further than where it started' in finding.message
        else:
            assert "no nearer than where it started" in finding.message


def test_trench_crusade_walking_away_names_how_much_further(kit):
    verdict = kit.judge("trench-crusade", tc_charge(kit, (6, 10), (3, 10)))
    finding = kit.one(verdict.violations, "charge")
    assert finding.message == (
        'c\'s charge ended 5.00" from base contact with t, 3.00" further than where it '
        'started (2.00"): a charge moves toward its target'
    )


def test_trench_crusade_charge_into_contact_is_toward(kit):
    # (2,10) -> (8,10): 6" of 9, touching t at (9,10); it started 9 - 2 - 1 = 6" away.
    verdict = kit.judge("trench-crusade", tc_charge(kit, (2, 10), (8, 10)))
    assert verdict.rules() == []
    assert verdict.advisories == ()


def test_trench_crusade_charge_round_a_wall_is_toward_though_its_gap_grew(kit):
    # An impassable wall x 5..6, y 4..14 stands between c at (4,10) and t at (8,10). The
    # charger goes round the wall's top end and runs out at (5.5,14.6), above the wall.
    # Edge to edge it ended further: sqrt(2.5^2 + 4.6^2) - 1 = 4.2355" against 8 - 4 - 1 =
    # 3" at the start. By the shortest legal way to base contact (the centre within 1" of
    # (8,10), and 0.5" off the wall) it ended nearer. From the start the centre must cross
    # x = 5.5 above y = 14.5 (or below y = 3.5, longer): at least sqrt(1.5^2 + 4.5^2) =
    # 4.743 there and sqrt(2.5^2 + 4.5^2) - 1 = 4.148 on: over 8.89". From the end, (6.5,
    # 14.6) is 1" on (sqrt(0.5^2 + 0.6^2) = 0.78 > 0.5 from the corner (6,14)), and the
    # straight line on to (8,10) passes |(-0.5)(-4.6) - (-0.6)(1.5)| / sqrt(1.5^2 + 4.6^2)
    # = 3.2 / 4.838 = 0.66 > 0.5 from that corner: at most 1 + 4.838 - 1 = 4.838".
    wall = kit.box("wall", 5, 4, 6, 14, "impassable")
    verdict = kit.judge("trench-crusade", tc_charge(kit, (4, 10), (5.5, 14.6), (8, 10)), [wall])
    assert verdict.rules() == []
    failed = kit.one(verdict.advisories, "charge")
    assert failed.measured == pytest.approx(math.sqrt(2.5**2 + 4.6**2) - 1)


# -- Necromunda: the shortest route possible ----------------------------------------------------

#: From (2,10) round g's base at (9,10) to its far side (10,10): the centre keeps 0.5 + 0.5
#: = 1" from g's, so the way is the tangent from 7" away, sqrt(7^2 - 1) = sqrt(48) =
#: 6.92820, then the arc of radius 1 from the tangent point, acos(1/7) = 1.42745 rad from
#: the line to the start, to the far point, pi rad from it: pi - 1.42745 = 1.71414.
#: 6.92820 + 1.71414 = 8.64234. The shortest route to base contact is 7 - 1 = 6".
FAR_SIDE = math.sqrt(48) + math.pi - math.acos(1 / 7)


def contact_at(degrees):
    """Where c touches g at (9,10), ``degrees`` round g from the point nearest c's start."""
    a = math.radians(degrees)
    return (9 - math.cos(a), 10 + math.sin(a))


def chord(degrees):
    """The straight way from (2,10) to ``contact_at(degrees)``: a triangle with sides 7 (to
    g's centre) and 1 (to the contact) and the angle between them at g's centre:
    sqrt(7^2 + 1^2 - 2*7*1*cos(degrees))."""
    return math.sqrt(50 - 14 * math.cos(math.radians(degrees)))


@pytest.mark.parametrize(
    ("end", "path", "flagged"),
    [
        # Straight in: (2,10) -> (8,10), 6" = the shortest route.
        ((8, 10), 6.0, False),
        # 15 deg round: sqrt(50 - 14 cos 15) = sqrt(36.47704) = 6.03962, 0.040 < 0.05 longer.
        (contact_at(15), chord(15), False),
        # 20 deg round: sqrt(50 - 14 cos 20) = sqrt(36.84430) = 6.06995, 0.070 > 0.05 longer.
        (contact_at(20), chord(20), True),
        # Swung round to the far side: 8.64234, 2.64234 longer.
        ((10, 10), FAR_SIDE, True),
    ],
)
def test_necromunda_charge_must_take_the_shortest_route(kit, end, path, flagged):
    # Movement 8 + D3 roll 2 = 10" allowed: every charge here fits it, and each ends in
    # base contact with g (so every zone is open to it).
    models = [
        kit.model("c", "red", (2, 10), end, movement=8, action="charge", target="g", roll=2),
        kit.model("g", "blue", (9, 10)),
    ]
    verdict = kit.judge("necromunda", models)
    assert verdict.rules() == (["charge"] if flagged else [])
    assert verdict.advisories == ()
    # (the end touches g: the search keeps 1e-6" off it, hence the 1e-5)
    assert verdict.moves["c"].shortest_path == pytest.approx(path, abs=1e-5)
    if flagged:
        finding = kit.one(verdict.violations, "charge")
        assert finding.other == "g"
        assert finding.measured == pytest.approx(path, abs=1e-5)
        assert finding.limit == pytest.approx(6.0, abs=1e-6)


def test_necromunda_far_side_names_both_lengths(kit):
    models = [
        kit.model("c", "red", (2, 10), (10, 10), movement=8, action="charge", target="g", roll=2),
        kit.model("g", "blue", (9, 10)),
    ]
    finding = kit.one(kit.judge("necromunda", models).violations, "charge")
    assert finding.message == (
        'c\'s charge took 8.64" to reach g, 2.64" longer than the shortest route to base '
        'contact (6.00"): a charge should take the shortest route possible'
    )


def test_necromunda_failed_charge_is_not_held_to_a_route(kit):
    # (2,10) -> (8,10) is its full 4 + 2 = 6, ending 12 - 8 - 1 = 3" from g: no base
    # contact, so no route to judge; it is a failed charge (held to the full distance).
    models = [
        kit.model("c", "red", (2, 10), (8, 10), movement=4, action="charge", target="g", roll=2),
        kit.model("g", "blue", (12, 10)),
    ]
    verdict = kit.judge("necromunda", models)
    assert verdict.rules() == []
    assert [a.rule for a in verdict.advisories] == ["charge"]
