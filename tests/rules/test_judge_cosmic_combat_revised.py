"""Cosmic Combat, revised movement (rules text 004), with hand-worked numbers.

All bases are 1" round (radius 0.5"). Friends step aside (a move may pass through them),
enemies do not, and a move may not come within 1" of an enemy unless it Engages it.
Gaps up to 2" (rounded down) and climbs up to 1" (rounded down) are free; wider gaps and
higher climbs cost double. Coherency is an advisory.
"""

from __future__ import annotations

import math

import pytest

GAME = "cosmic-combat-revised"

# The 0.05 in tolerance applies while passing a zone as at the end of a move: round an
# enemy's 1" zone the detour is kit.zone_detour (worked out in tests/rules/conftest.py),
# 7.31917.


# -- movement -----------------------------------------------------------------------------


def test_friends_step_aside_but_bases_may_not_end_overlapping(kit):
    # (2,10) -> (8,10) straight through a friend at (5,10): 6". b ends 0.7" from the
    # friend at (11,10): 1 - 0.7 = 0.3 overlap.
    models = [
        kit.model("a", "red", (2, 10), (8, 10)),
        kit.model("f", "red", (5, 10)),
        kit.model("b", "red", (10.3, 14), (10.3, 10)),
        kit.model("g", "red", (11, 10)),
    ]
    verdict = kit.judge(GAME, models)
    kit.assert_path(verdict, "a", 6.0, width=1e-9)
    assert verdict.rules() == ["base_overlap"]
    finding = kit.one(verdict.violations, "base_overlap")
    assert (finding.model, finding.other) == ("b", "g")
    assert finding.measured == pytest.approx(0.3, abs=1e-3)


@pytest.mark.parametrize(("movement", "rules"), [(7, ["control_zone"]), (7.4, [])])
def test_enemy_is_not_passed_through_nor_within_1in(kit, movement, rules):
    models = [
        kit.model("a", "red", (10, 10), (16, 10), movement=movement),
        kit.model("e", "blue", (13, 10)),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == rules  # 7.391 > 7.05; 7.391 <= 7.45
    kit.assert_path(verdict, "a", kit.zone_detour)
    if rules:
        finding = kit.one(verdict.violations, "control_zone")
        assert (finding.other, finding.limit) == ("e", 7)
        assert finding.measured == pytest.approx(kit.zone_detour, abs=0.02)


@pytest.mark.parametrize(
    ("end", "rule", "amount"),
    [((8.6, 10), "control_zone", 0.4), ((0.4, 10), "off_table", 0.1)],  # 1.4-1; 0.5-0.4
)
def test_where_it_ended(kit, end, rule, amount):
    models = [kit.model("a", "red", (4, 10), end), kit.model("e", "blue", (10, 10))]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == [rule]
    assert kit.one(verdict.violations, rule).measured == pytest.approx(amount, abs=1e-3)


# -- gaps: the Alpha (Movement 6) --------------------------------------------------------

# A chasm from x = 6: a 4"-wide gap x 6..10 below y = 10, rock x 6..8 between y 10 and 11,
# a 2"-wide gap x 6..8 above y = 11. The gaps run far past the table edges.
CHASM = [
    ("gap4", 6, -20, 10, 10, "gap"),
    ("rock", 6, 10, 8, 11, "impassable"),
    ("gap2", 6, 11, 8, 44, "gap"),
]


@pytest.mark.parametrize(
    ("start", "end", "hand", "rules"),
    [
        # Over the 4" gap: 0.5 + 2*4 + 0.5 = 9 > 6.05. From edge to edge: 2*4 = 8 > 6.05
        # ("would need 8": it cannot cross).
        ((5.5, 5), (10.5, 5), 9.0, ["movement"]),
        ((6, 5), (10, 5), 8.0, ["movement"]),
        # Over the 2" gap, ignored: 0.5 + 2 + 0.5 = 3; edge to edge 2.
        ((5.5, 20), (8.5, 20), 3.0, []),
        ((6, 20), (8, 20), 2.0, []),
    ],
)
def test_alpha_crosses_a_2in_gap_but_not_a_4in_one(kit, start, end, hand, rules):
    terrain = [kit.box(*piece) for piece in CHASM]
    verdict = kit.judge(GAME, [kit.model("alpha", "red", start, end)], terrain, table=(24, 24))
    assert verdict.rules() == rules
    kit.assert_path(verdict, "alpha", hand)
    if rules:
        finding = kit.one(verdict.violations, "movement")
        assert (finding.measured, finding.limit) == (pytest.approx(hand, abs=0.02), 6)


def test_alpha_takes_the_2in_gap_route(kit):
    # (5,10.5) -> (10,10.5) past the rock: over it through the 2" gap, or under it through
    # the 4" gap, the same length by symmetry about y = 10.5, but under it runs inside the
    # 4" gap. Over it: tangent to the corner (6,11) from 1.118" away: sqrt(1.25-0.25) = 1;
    # arc turning atan(0.5/1) + asin(0.5/sqrt(1.25)) = 2*0.46365 rad at r 0.5: 0.46365;
    # 2" along y = 11.5; arc round (8,11) turning atan(0.5/2) + asin(0.5/sqrt(4.25))
    # = 2*0.24498 rad: 0.24498; tangent to the end sqrt(4.25-0.25) = 2.
    # 1 + 0.46365 + 2 + 0.24498 + 2 = 5.70863 <= 6.
    hand = 1 + 0.5 * 2 * math.atan(0.5) + 2 + 0.5 * 2 * math.atan(0.25) + 2
    terrain = [kit.box(*piece) for piece in CHASM]
    verdict = kit.judge(
        GAME, [kit.model("alpha", "red", (5, 10.5), (10, 10.5))], terrain, table=(24, 24)
    )
    assert verdict.rules() == []
    kit.assert_path(verdict, "alpha", hand)
    assert all(y > 10.5 for _, y in verdict.moves["alpha"].route[1:-1])  # over the rock


def test_a_model_cannot_stand_in_a_gap(kit):
    # (5.5,5) -> (8,5): 0.5 + 2*2 = 4.5 <= 6, but it ends over the 4" gap.
    terrain = [kit.box(*piece) for piece in CHASM]
    verdict = kit.judge(GAME, [kit.model("alpha", "red", (5.5, 5), (8, 5))], terrain)
    assert verdict.rules() == ["terrain"]
    assert kit.one(verdict.violations, "terrain").other == "gap4"
    kit.assert_path(verdict, "alpha", 4.5)


# -- climbing: the assassin (Movement 8) --------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "hand", "rules"),
    [
        # Straight up the 4" wall: 2*4 = 8 <= 8.05: "he can only climb the 4" building".
        ((5, 5, 0), (5, 5, 4), 8.0, []),
        # The 5" one: 2*5 = 10 > 8.05.
        ((5, 19, 0), (5, 19, 5), 10.0, ["movement"]),
        # From base contact at its foot (centre 0.5 outside the wall at x = 5) to standing
        # wholly on the roof (centre 0.5 in): all 1" of it with the base straddling the
        # edge, the step the climb covers: 0 + 2*4 = 8 <= 8.05. The book's example.
        ((4.5, 5, 0), (5.5, 5, 4), 8.0, []),
        # The same onto the 5" building: 0 + 2*5 = 10 > 8.05.
        ((4.5, 19, 0), (5.5, 19, 5), 10.0, ["movement"]),
        # From 0.5" short of base contact: 1.5 across less the 1" step = 0.5 on the
        # ground, + 8 = 8.5 > 8.05.
        ((4, 5, 0), (5.5, 5, 4), 8.5, ["movement"]),
        # From 3" back to 1" in: 4 across, of which the step is 1: 3 + 8 = 11.
        ((2, 5, 0), (6, 5, 4), 11.0, ["movement"]),
        # Down from the 4" roof: every inch down counts once, 4, and the 0.5" off the edge
        # is the step: 0 + 4 = 4.
        ((5, 5, 4), (4.5, 5, 0), 4.0, []),
        # Onto the 1.5" ledge: rounded down to 1", ignored: 3 across, 0 up.
        ((2, 12, 0), (5, 12, 1.5), 3.0, []),
    ],
)
def test_assassin_climbs_a_4in_building_but_not_a_5in_one(kit, start, end, hand, rules):
    terrain = [
        kit.box("b4", 5, 0, 10, 10, "climbable", height=4),
        kit.box("ledge", 5, 10.5, 10, 13.5, "climbable", height=1.5),
        kit.box("b5", 5, 14, 10, 24, "climbable", height=5),
    ]
    mover = kit.model("assassin", "red", start, end, movement=8)
    verdict = kit.judge(GAME, [mover], terrain, table=(24, 24))
    assert verdict.rules() == rules
    kit.assert_path(verdict, "assassin", hand)
    if rules:
        finding = kit.one(verdict.violations, "movement")
        assert (finding.measured, finding.limit) == (pytest.approx(hand, abs=0.02), 8)


# -- actions ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("end", "target_side", "rules"),
    [
        ((9, 10), "blue", []),  # base contact: 1 - 1 = 0
        ((8.5, 10), "blue", ["control_zone"]),  # 0.5 short of contact, inside the zone
        ((7, 10), "red", ["action"]),  # a friend cannot be engaged
    ],
)
def test_engage_must_end_in_base_contact_with_an_enemy(kit, end, target_side, rules):
    models = [
        kit.model("a", "red", (3, 10), end, action="engage", target="t"),
        kit.model("t", target_side, (10, 10)),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.rules() == rules
    kit.assert_path(verdict, "a", end[0] - 3, width=1e-9)


@pytest.mark.parametrize(
    ("action", "keywords", "dist", "rules"),
    [
        # Half of Movement 6 = 3.
        ("defensive", ["shield"], 3.0, []),
        ("defensive", ["shield"], 3.5, ["movement"]),
        ("defensive", [], 3.0, ["action"]),
        ("stealth", ["cloak"], 3.0, []),
        ("stealth", ["cloak"], 3.5, ["movement"]),
        ("stealth", ["shield"], 3.5, ["action", "movement"]),
    ],
)
def test_defensive_and_stealth_moves_are_half_distance(kit, action, keywords, dist, rules):
    mover = kit.model("a", "red", (2, 10), (2 + dist, 10), keywords=keywords, action=action)
    verdict = kit.judge(GAME, [mover])
    assert verdict.rules() == rules
    assert verdict.moves["a"].allowance == 3
    if "movement" in rules:
        finding = kit.one(verdict.violations, "movement")
        assert (finding.measured, finding.limit) == (pytest.approx(dist), 3)


# -- coherency (an advisory) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("others", "end", "measured", "limit", "words"),
    [
        # u1, u3 touch at x 10, 9; u2 moves through them to 2" off u1: 3-1 = 2 > 1.05.
        ([(10, 18), (9, 18)], (13, 18), 2.0, 1, 'is 2.00" away (range 1.00")'),
        # u1, u3 stand 7" up on a tower; u2 ends at its foot: 1-1 = 0" across from u1,
        # 2-1 = 1" from u3, but both 7" above it (7 - 0 = 7 > 6 + 0.05). The link fails on
        # height, so the finding names the height and the vertical limit, not the 0" across.
        (
            [(10.5, 10, 7), (11.5, 10, 7)],
            (9.5, 10),
            7.0,
            6,
            'is 0.00" away across but 7.00" above (vertical limit 6.00")',
        ),
    ],
)
def test_model_out_of_coherency(kit, others, end, measured, limit, words):
    models = [kit.model("u2", "red", (7, end[1]), end, unit="u")]
    models += [kit.model(f"u{i}", "red", p, unit="u") for i, p in zip((1, 3), others, strict=True)]
    tower = kit.box("tower", 10, 8, 14, 12, "climbable", height=7)
    verdict = kit.judge(GAME, models, [tower])
    assert verdict.legal
    finding = kit.one(verdict.advisories, "coherency")
    assert (finding.model, finding.other) == ("u2", "u1")
    assert (finding.measured, finding.limit) == (pytest.approx(measured), limit)
    assert f"its nearest unit-mate u1 {words}" in finding.message


def test_unit_split_into_two_groups(kit):
    # a1-a2 touch at x 10, 11; a3-a4 come to x 14, 15: the groups are 14-11-1 = 2" apart.
    models = [
        kit.model("a1", "red", (10, 10), unit="a"),
        kit.model("a2", "red", (11, 10), unit="a"),
        kit.model("a3", "red", (14, 14), (14, 10), unit="a"),
        kit.model("a4", "red", (15, 14), (15, 10), unit="a"),
    ]
    verdict = kit.judge(GAME, models)
    assert verdict.legal
    finding = kit.one(verdict.advisories, "coherency")
    assert {finding.model, finding.other} == {"a2", "a3"}
    assert (finding.measured, finding.limit) == (pytest.approx(2.0), 1)


def test_unit_in_a_chain_is_coherent(kit):
    # 1" gaps: x 10 -> 12 -> 14 (2-1 = 1 each).
    models = [
        kit.model("a1", "red", (10, 10), unit="a"),
        kit.model("a2", "red", (12, 14), (12, 10), unit="a"),
        kit.model("a3", "red", (14, 10), unit="a"),
    ]
    assert kit.judge(GAME, models).advisories == ()


def test_cheapest_route_cuts_the_tip_of_a_difficult_triangle(kit):
    # Regression: the search bent only at corners, so a route cutting across the tip of a
    # difficult triangle (neither straight nor round a corner) was missed. The optimum, by
    # an independent grid search over where the route enters (edge (3,6)-(7,3)) and leaves
    # (edge (7,3)-(6.5,4.2)) the triangle, costing the inside twice:
    import numpy as np

    a, b = np.array([2.5, 3.5]), np.array([8.0, 4.5])
    t = np.linspace(0.5, 1.0, 1001)[:, None]  # along the first edge, towards the tip
    u = np.linspace(0.0, 1.0, 1001)[None, :]  # and along the second
    p = (3 + 4 * t, 6 - 3 * t)
    q = (7 - 0.5 * u, 3 + 1.2 * u)
    cost = (
        np.hypot(p[0] - a[0], p[1] - a[1])
        + 2 * np.hypot(q[0] - p[0], q[1] - p[1])
        + np.hypot(b[0] - q[0], b[1] - q[1])
    )
    hand = float(cost.min())  # 6.198 (the corner route (7, 3) would cost 6.33)
    scrub = {"id": "scrub", "polygon": [[3, 6], [7, 3], [6.5, 4.2]], "keywords": ["difficult"]}
    mover = kit.model("a", "red", (2.5, 3.5), (8, 4.5), movement=6.2)
    verdict = kit.judge(GAME, [mover], [scrub], table=(20.0, 10.0))
    assert verdict.rules() == []
    kit.assert_path(verdict, "a", hand, width=1e-5)
    assert verdict.moves["a"].shortest_path == pytest.approx(hand, abs=1e-5)
