"""Rulesets load from rules/games/*.toml, and a malformed one says exactly what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablesight.rules.errors import InputError
from tablesight.rules.ruleset import Ruleset, available, load_ruleset

GOOD = """
name = "test-game"
title = "Test Game"
source = "a test"

[zone]
range_in = 1.0
applies_to = "enemy"

[actions.move]
factor = 1.0
"""


def test_the_four_games_load() -> None:
    assert available() == [
        "battlestations",
        "cosmic-combat",
        "cosmic-combat-revised",
        "necromunda",
        "trench-crusade",
    ]
    # numbers straight from the rules texts
    assert load_ruleset("trench-crusade").actions["charge"].max_in == 12.0
    assert load_ruleset("cosmic-combat-revised").actions["defensive"].factor == 0.5
    assert load_ruleset("cosmic-combat-revised").coherency is not None
    assert load_ruleset("cosmic-combat").zone is not None
    assert load_ruleset("cosmic-combat").zone.applies_to == "any"
    necromunda = load_ruleset("necromunda")
    assert necromunda.movement.difficult_factor(frozenset({"vehicle", "tracked"})) == 1.0
    assert necromunda.movement.difficult_factor(frozenset({"vehicle", "wheeled"})) == 2.0
    assert necromunda.movement.difficult_factor(frozenset()) == 2.0


def test_unknown_game_lists_the_known_ones() -> None:
    with pytest.raises(InputError) as err:
        load_ruleset("chess")
    assert str(err.value) == (
        "unknown game 'chess'; known games: battlestations, cosmic-combat, "
        "cosmic-combat-revised, necromunda, trench-crusade"
    )


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            ('applies_to = "enemy"', 'applies_to = "foes"'),
            "zone.applies_to: Input should be 'enemy' or 'any', got 'foes'",
        ),
        (("range_in = 1.0", "range_in = -1.0"), "zone.range_in: Input should be greater than"),
        (
            ("range_in = 1.0", "range_in = 1.0\ncolour = 'red'"),
            "zone.colour: unknown key; allowed keys: applies_to, engaged_within_in, "
            "exempt_when_status_all, friendly_entry, movers_exempt_keywords, range_in, "
            "sources_exclude_keywords",
        ),
        (('title = "Test Game"\n', ""), "title: required key is missing"),
        (("[actions.move]", "[actions.walk]"), "actions: every game needs a 'move' action"),
        (("factor = 1.0", "factor = = 1"), "not valid TOML: "),
    ],
)
def test_malformed_ruleset_names_file_key_and_allowed_values(
    tmp_path: Path, change: tuple[str, str], expected: str
) -> None:
    path = tmp_path / "test-game.toml"
    path.write_text(GOOD.replace(*change))
    with pytest.raises(InputError) as err:
        Ruleset.from_toml(path)
    assert str(err.value).startswith(f"{path}: {expected}")
    assert "\n" not in str(err.value)


def test_good_ruleset_loads(tmp_path: Path) -> None:
    path = tmp_path / "test-game.toml"
    path.write_text(GOOD)
    ruleset = Ruleset.from_toml(path)
    assert (ruleset.name, ruleset.actions["move"].factor) == ("test-game", 1.0)
