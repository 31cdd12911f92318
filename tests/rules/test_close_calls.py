"""Exactly at the limit, and too close to call, in every free-movement game.

Round bases and walls are measured exactly, so a move whose shortest path equals its
allowance plus the tolerance is legal with nothing to report. An oval base's curve is
only known between two polygons: when the limit falls inside that bracket, the verdict
is a ``close_call`` advisory, never a violation.
"""

from __future__ import annotations

import pytest

# (game, the kit's hand-computed detour, the other model, terrain) - the detour of a
# mover from (10,10) to (16,10) round a model at (13,10), or from (2,13) to (9,13) round
# a wall.
EXACT = [
    ("cosmic-combat", "wall_detour", None, ("wall", 5, 10, 6, 16, "impassable")),
    ("cosmic-combat-revised", "zone_detour", ("e", "blue"), None),  # round an enemy's 1" zone
    ("necromunda", "zone_detour", ("e", "blue"), None),
    ("trench-crusade", "round_base_detour", ("f", "red"), None),  # round a friend's base
]

# (game, side of the oval, its keywords, how far its outline is grown for the mover)
OVAL = [
    # an enemy's 1 in zone less the 0.05 tolerance, and the mover's 0.5 in
    ("cosmic-combat", "blue", [], 1.45),
    ("cosmic-combat-revised", "blue", [], 1.45),
    ("necromunda", "blue", ["vehicle"], 0.5),  # an enemy vehicle has no zone
    ("trench-crusade", "red", [], 0.5),  # a friend: no zone, no passing through
]


@pytest.mark.parametrize(("game", "detour", "other", "wall"), EXACT)
def test_exactly_at_the_limit_is_legal(kit, game, detour, other, wall):
    hand = getattr(kit, detour)
    movement = hand - 0.05  # allowance + 0.05 tolerance = exactly the detour
    if wall:
        models = [kit.model("a", "red", (2, 13), (9, 13), movement=movement)]
        terrain = [kit.box(*wall)]
    else:
        models = [
            kit.model("a", "red", (10, 10), (16, 10), movement=movement),
            kit.model(other[0], other[1], (13, 10)),
        ]
        terrain = []
    verdict = kit.judge(game, models, terrain)
    assert verdict.legal and verdict.advisories == ()
    kit.assert_path(verdict, "a", hand, width=1e-6)


@pytest.mark.parametrize(("game", "side", "keywords", "grow"), OVAL)
def test_close_call_round_an_oval(kit, game, side, keywords, grow):
    # True length by an independent method: the convex hull of a dense grown outline.
    true = kit.oval_detour((10, 10), (16, 10), (13, 10), grow_in=grow)
    movement = true - 0.05  # allowance + tolerance = the true length, inside the bracket
    models = [
        kit.model("a", "red", (10, 10), (16, 10), movement=movement),
        kit.model("o", side, (13, 10, 0, 90), base=kit.oval, keywords=keywords),
    ]
    verdict = kit.judge(game, models)
    assert verdict.legal
    kit.assert_path(verdict, "a", true)
    call = kit.one(verdict.advisories, "close_call")
    assert call.measured == pytest.approx(true, abs=0.02)
    assert call.limit == pytest.approx(movement)


# Camera-measured positions carry an uncertainty. (game, mover's end, its uncertainty,
# the expected rule). A 6 in move ending 6.10 in away: 0.05 past the 6.05 limit; the
# uncertainty of a moved model counts twice (start and end), so it is 0.05 * sqrt(2)
# = 0.071 (inside: too close to call) or 0.03 * sqrt(2) = 0.042 (outside: a violation).
GAMES = ["cosmic-combat", "cosmic-combat-revised", "necromunda", "trench-crusade"]


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize(
    ("sigma", "rule", "spread"), [(0.05, "close_call", 0.071), (0.03, None, 0)]
)
def test_an_over_long_move_inside_the_uncertainty_is_a_close_call(kit, game, sigma, rule, spread):
    mover = kit.model("a", "red", (10, 10), (16.10, 10), uncertainty=sigma)
    verdict = kit.judge(game, [mover])
    if rule is None:
        assert kit.one(verdict.violations, "movement").measured == pytest.approx(6.10)
        assert verdict.advisories == ()
        return
    assert verdict.legal
    call = kit.one(verdict.advisories, "close_call")
    assert (call.measured, call.limit) == (pytest.approx(6.10), 6.0)
    assert call.uncertainty == pytest.approx(spread, abs=0.001)
    assert "6.10 in +/- 0.07: too close to call (movement)" in call.message


@pytest.mark.parametrize("game", ["cosmic-combat", "cosmic-combat-revised", "necromunda"])
@pytest.mark.parametrize(("sigma", "close"), [(0.03, True), (0.02, False)])
def test_an_end_inside_a_zone_by_less_than_the_uncertainty_is_a_close_call(kit, game, sigma, close):
    # 1 in bases, centres 1.9 apart: a gap of 0.90, 0.05 inside the 0.95 the tolerance
    # allows. Mover twice and enemy once: sigma * sqrt(3) = 0.052 (call) or 0.035 (flag).
    models = [
        kit.model("a", "red", (14.1, 10), (18.1, 10), uncertainty=sigma),
        kit.model("e", "blue", (20, 10), uncertainty=sigma),
    ]
    verdict = kit.judge(game, models)
    if not close:
        assert kit.one(verdict.violations, "control_zone").measured == pytest.approx(0.90)
        return
    assert verdict.legal
    call = kit.one(verdict.advisories, "close_call")
    assert (call.measured, call.other) == (pytest.approx(0.90), "e")
    assert call.uncertainty == pytest.approx(0.03 * 3**0.5)
