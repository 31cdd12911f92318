"""Games as data plus a little code: the registry of the games' code, the game's own words
in its file, and games loaded from a file outside the package."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tablesight.rules import games
from tablesight.rules.errors import InputError
from tablesight.rules.games import hooks_for
from tablesight.rules.games.battlestations import Battlestations
from tablesight.rules.grid import GridReferee
from tablesight.rules.hooks import GameHooks
from tablesight.rules.measure import Measure, Move
from tablesight.rules.referee import Referee, referee_for
from tablesight.rules.ruleset import (
    GAMES_DIR,
    Ruleset,
    available,
    load_ruleset,
    load_ruleset_file,
)
from tablesight.rules.scenario import Scenario
from tablesight.rules.verdict import Findings, Verdict

SCENARIOS = Path(__file__).resolve().parents[2] / "samples" / "scenarios"


def _file(tmp_path: Path, game: str, *changes: tuple[str, str]) -> Path:
    """A packaged game's file copied outside the package, with each change made once."""
    text = (GAMES_DIR / f"{game}.toml").read_text(encoding="utf-8")
    for old, new in changes:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path / "game.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _judge(ruleset: Ruleset | str, models: list[dict[str, Any]]) -> Verdict:
    """Every move of a scenario on a bare 48 x 24 table, under ``ruleset`` (or a packaged
    game by name)."""
    scenario = {
        "game": ruleset if isinstance(ruleset, str) else "necromunda",
        "table": {"width": 48, "depth": 24},
        "models": models,
    }
    given = None if isinstance(ruleset, str) else ruleset
    loaded = Scenario.from_json(json.dumps(scenario), ruleset=given)
    return referee_for(loaded.scene, loaded.ruleset).judge()


def test_every_games_code_sits_beside_its_file():
    assert set(games.HOOKS) <= set(available())
    assert dict(games.HOOKS) == {"battlestations": Battlestations}
    for name in games.HOOKS:
        assert (GAMES_DIR / f"{name.replace('-', '_')}.py").is_file()
    assert hooks_for(load_ruleset("battlestations")) is Battlestations
    assert hooks_for(load_ruleset("necromunda")) is GameHooks


def test_the_square_grid_referee_is_battlestations_code():
    deck = Scenario.from_file(SCENARIOS / "battlestations-deck.json")
    assert isinstance(referee_for(deck.scene, deck.ruleset), GridReferee)
    boarding = Scenario.from_file(SCENARIOS / "cosmic-combat-boarding.json")
    assert isinstance(referee_for(boarding.scene, boarding.ruleset), Referee)


def test_a_games_own_move_check_runs_after_the_common_ones(kit, monkeypatch):
    def risky_everywhere(m: Measure, move: Move, out: Findings) -> None:
        out.advise("risky_roll", move.mover.id, f"{move.mover.id}: house rule")

    class HouseNecromunda(GameHooks):
        name = "necromunda"
        move_checks = (risky_everywhere,)

    monkeypatch.setitem(games.HOOKS, "necromunda", HouseNecromunda)
    # (2,10) -> (8,10): 6" of a 5" move, then the house rule's advisory
    verdict = kit.judge("necromunda", [kit.model("a", "red", (2, 10), (8, 10), movement=5)])
    assert verdict.rules() == ["movement"]
    assert [(a.rule, a.message) for a in verdict.advisories] == [("risky_roll", "a: house rule")]


# -- the game's own words ------------------------------------------------------------------


def test_a_rammings_name_and_roll_are_the_games_words(tmp_path):
    path = _file(
        tmp_path,
        "cosmic-combat",
        ('name = "cosmic-combat"', 'name = "star-skirmish"'),
        ('name = "Ramming Maneuver"', 'name = "Collision"'),
        ('roll = "a D6 against Integrity"', 'roll = "2D6 against Hull"'),
    )
    ruleset = load_ruleset_file(path)
    # b's base edge at 6.2 - 0.5 = 5.7; a's at 5 + 0.5 = 5.5: 0.2" apart, inside 1"
    models = [
        {"id": "a", "side": "red", "base": {"shape": "round", "diameter_mm": 25.4},
         "movement": 6, "start": {"x": 2, "y": 10}, "end": {"x": 5, "y": 10}},
        {"id": "b", "side": "red", "base": {"shape": "round", "diameter_mm": 25.4},
         "movement": 6, "start": {"x": 6.2, "y": 10}},
    ]  # fmt: skip
    verdict = _judge(ruleset, models)
    assert verdict.violations == ()
    [ramming] = verdict.advisories
    assert (
        ramming.message == 'a ended 0.20" from friendly b: both roll 2D6 against Hull (Collision)'
    )
    assert ramming.measured == pytest.approx(0.2)


def test_a_game_that_rams_must_name_the_ramming(tmp_path):
    path = _file(
        tmp_path,
        "cosmic-combat",
        ("[ramming]\n", ""),
        ('name = "Ramming Maneuver"\n', ""),
        ('roll = "a D6 against Integrity"\n', ""),
        ('name = "cosmic-combat"', 'name = "no-words"'),
    )
    with pytest.raises(InputError) as err:
        load_ruleset_file(path)
    assert str(err.value) == (
        f"{path}: ramming: required key is missing (zone.friendly_entry asks for a ramming: "
        f"give its name and roll)"
    )


@pytest.mark.parametrize(("status", "rules"), [("pinned", ["engaged"]), ("engaged", [])])
def test_the_engaged_status_is_the_games_word(tmp_path, kit, status, rules):
    path = _file(
        tmp_path,
        "necromunda",
        ('name = "necromunda"', 'name = "pinned-down"'),
        ('engaged_status = "engaged"', 'engaged_status = "pinned"'),
    )
    mover = kit.model("a", "red", (2, 10), (5, 10), status=[status])
    verdict = _judge(load_ruleset_file(path), [mover])
    assert verdict.rules() == rules
    if rules:
        assert verdict.violations[0].message == "a is pinned and may not move this phase"


@pytest.mark.parametrize(("charge", "advisories"), [(True, ["charge"]), (False, [])])
def test_a_charge_is_any_action_the_game_says_charges(tmp_path, kit, charge, advisories):
    # Trench Crusade's charge, called an assault: from (2,10) at a target at (14,10), 11" away
    # edge to edge (within 12"), it stops at (8,10): 14 - 8 - 1 = 5" short, beyond the 1"
    # zone. As a charge it failed (an advisory); as a plain action it is just a move.
    path = _file(
        tmp_path,
        "trench-crusade",
        ('name = "trench-crusade"', 'name = "assaults"'),
        ("[actions.charge]", "[actions.assault]"),
        ("charge = true", f"charge = {str(charge).lower()}"),
    )
    models = [
        kit.model("a", "red", (2, 10), (8, 10), action="assault", target="e", roll=1),
        kit.model("e", "blue", (14, 10)),
    ]
    verdict = _judge(load_ruleset_file(path), models)
    assert verdict.rules() == []
    assert [a.rule for a in verdict.advisories] == advisories
    if charge:
        assert verdict.advisories[0].measured == pytest.approx(5.0)
        assert verdict.advisories[0].message == "a's charge failed: it ended 5.00\" from e"


def test_a_skimmer_is_the_games_word(tmp_path, kit):
    # (2,10) -> (10,10) across dangerous ground x 5..6: a hoverer that crosses difficult
    # ground at no extra cost flies over it where the game names its keyword
    ground = [kit.box("acid", 5, 4, 6, 16, "dangerous")]
    mover = kit.model("h", "red", (2, 10), (8, 10), keywords=["vehicle", "tracked", "hover"])

    def advised(exempt: str) -> list[str]:
        path = _file(
            tmp_path,
            "necromunda",
            ('name = "necromunda"', 'name = "hover-gangs"'),
            ('dangerous_exempt_keywords = ["skimmer"]', f"dangerous_exempt_keywords = {exempt}"),
        )
        scenario = {
            "game": "necromunda",
            "table": {"width": 48, "depth": 24},
            "terrain": ground,
            "models": [mover],
        }
        loaded = Scenario.from_json(json.dumps(scenario), ruleset=load_ruleset_file(path))
        return [a.rule for a in referee_for(loaded.scene, loaded.ruleset).judge().advisories]

    assert advised('["hover"]') == []
    assert advised("[]") == ["dangerous_terrain"]


# -- games from a file outside the package ---------------------------------------------------


def test_a_copy_of_a_packaged_game_judges_as_it_does(tmp_path):
    path = _file(tmp_path, "necromunda", ('name = "necromunda"', 'name = "necromunda-copy"'))
    sample = SCENARIOS / "necromunda-charge.json"
    packaged = Scenario.from_file(sample)
    copied = Scenario.from_file(sample, load_ruleset_file(path))
    assert referee_for(copied.scene, copied.ruleset).judge().to_dict() == (
        referee_for(packaged.scene, packaged.ruleset).judge().to_dict()
    )


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ((), "name: 'necromunda' is a packaged game's name; give this game its own (packaged: "),
        (
            (
                ('name = "necromunda"', 'name = "n2"'),
                ("failed_moves_full = true", "failed_moves_full = true\n[grid]"),
            ),
            "grid: a game from a file outside the package cannot have a [grid]",
        ),
        (
            (('name = "necromunda"', 'name = "n2"'), ("stop_short_in = 1.0", "stop_short_in = -1")),
            "actions.charge.stop_short_in: Input should be greater than or equal to 0",
        ),
    ],
)
def test_a_malformed_outside_file_is_one_line_naming_the_field(tmp_path, changes, expected):
    path = _file(tmp_path, "necromunda", *changes)
    with pytest.raises(InputError) as err:
        load_ruleset_file(path)
    assert str(err.value).startswith(f"{path}: {expected}")
    assert "\n" not in str(err.value)
