"""Judgements every free-movement game makes alike, as one table over the games."""

from __future__ import annotations

import pytest

GAMES = ["cosmic-combat", "cosmic-combat-revised", "necromunda", "trench-crusade"]


@pytest.mark.parametrize("game", GAMES)
def test_an_end_walled_in_is_blocked(kit, game):
    # walls round x 9..15, y 10..14: nothing gets in, however far the model may move
    ring = [
        kit.box("n", 8, 14, 16, 15, "impassable"),
        kit.box("s", 8, 9, 16, 10, "impassable"),
        kit.box("w", 8, 9, 9, 15, "impassable"),
        kit.box("e", 15, 9, 16, 15, "impassable"),
    ]
    verdict = kit.judge(game, [kit.model("a", "red", (2, 12), (12, 12), movement=30)], ring)
    assert verdict.rules() == ["blocked"]
    assert verdict.moves["a"].shortest_path is None


@pytest.mark.parametrize(
    ("game", "movement", "rules"),
    [
        (game, movement, rules)
        for game in GAMES
        for movement, rules in ((8, []), (7.9, ["movement"]))
    ],
)
def test_difficult_strip_crossed_straight_costs_double(kit, game, movement, rules):
    # (8,12) -> (14,12) over a 2 in strip x 10..12, y 4..20: 6 in walked, 2 of them in the
    # strip counting twice: 6 + 2 = 8. Round the strip's end: 2*sqrt(2^2 + 8^2) + 2 = 18.49.
    strip = kit.box("mud", 10, 4, 12, 20, "difficult")
    mover = kit.model("a", "red", (8, 12), (14, 12), movement=movement)
    verdict = kit.judge(game, [mover], [strip])
    assert verdict.rules() == rules
    kit.assert_path(verdict, "a", 8.0)


@pytest.mark.parametrize(
    ("game", "action", "listed"),
    [
        ("cosmic-combat", "charge", "board"),
        ("cosmic-combat-revised", "board", "engage"),
        ("necromunda", "dash", "charge"),
        ("trench-crusade", "board", "dash"),
    ],
)
def test_an_action_the_game_does_not_have(kit, game, action, listed):
    verdict = kit.judge(game, [kit.model("a", "red", (2, 10), (5, 10), action=action)])
    assert verdict.rules() == ["action"]
    assert verdict.moves["a"].allowance == 6  # judged as a plain move
    kit.assert_path(verdict, "a", 3.0, width=1e-9)
    assert listed in verdict.violations[0].message  # it lists the actions it has


@pytest.mark.parametrize("game", ["cosmic-combat", "cosmic-combat-revised", "necromunda"])
def test_an_engaged_model_may_not_move(kit, game):
    models = [
        kit.model("a", "red", (10, 10), (7, 10), status=["engaged"]),
        kit.model("e", "blue", (11, 10)),
    ]
    verdict = kit.judge(game, models)
    assert verdict.rules() == ["engaged"]
    kit.assert_path(verdict, "a", 3.0, width=1e-9)  # 10 - 7
