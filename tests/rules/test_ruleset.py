"""Rulesets load from rules/games/*.toml, and a malformed one says exactly what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

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


# -- rulesets as match files keep them ----------------------------------------------------


def _as_recorded_before(ruleset: Ruleset) -> dict[str, object]:
    """A ruleset as a match file recorded it before the games named their own words: no
    engaged_status, no [ramming], no action's charge flag, no dangerous exemptions."""
    stored = ruleset.model_dump(mode="json")
    del stored["engaged_status"], stored["ramming"]
    for action in stored["actions"].values():
        del action["charge"]
    del stored["movement"]["dangerous_exempt_keywords"]
    return stored


@pytest.mark.parametrize(
    ("game", "engaged", "charges"),
    [
        # the old generic checks: every game's status "engaged", the action named "charge"
        ("necromunda", "engaged", ["charge"]),
        ("trench-crusade", "engaged", ["charge"]),
        ("cosmic-combat", "engaged", []),
        ("cosmic-combat-revised", "engaged", []),
        ("battlestations", "engaged", []),
    ],
)
def test_a_ruleset_recorded_before_judges_as_it_did(
    game: str, engaged: str, charges: list[str]
) -> None:
    packaged = load_ruleset(game)
    older = Ruleset.from_stored(_as_recorded_before(packaged))
    assert older.engaged_status == engaged
    assert sorted(n for n, a in older.actions.items() if a.charge) == charges
    # "skimmer" flew over dangerous terrain in every game
    assert older.movement.dangerous_exempt_keywords == ["skimmer"]
    if packaged.ramming is not None:  # Cosmic Combat's words, as the checks had them
        assert older.ramming == packaged.ramming
        assert (older.ramming.name, older.ramming.roll) == (
            "Ramming Maneuver",
            "a D6 against Integrity",
        )
    # everything else as recorded
    same = {"name", "title", "source", "zone", "coherency", "grid"}
    assert older.model_dump(include=same) == packaged.model_dump(include=same)


def test_a_ruleset_stored_now_is_read_as_it_is() -> None:
    packaged = load_ruleset("trench-crusade")
    assert Ruleset.from_stored(packaged.model_dump(mode="json")) == packaged


def test_a_stored_ruleset_that_rams_without_its_words_is_refused() -> None:
    stored = load_ruleset("cosmic-combat").model_dump(mode="json")
    stored["ramming"] = None
    with pytest.raises(ValidationError, match=r"ramming: required key is missing \(zone"):
        Ruleset.from_stored(stored)
