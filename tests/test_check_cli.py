"""``tablesight check``: verdicts on the sample scenarios, and one clear line for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

#: Each test here runs the command line in a new process.
pytestmark = pytest.mark.slow

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "scenarios"

GOOD = {
    "game": "necromunda",
    "table": {"width": 30, "depth": 22},
    "terrain": [{"id": "wall", "polygon": [[10, 5], [11, 5], [11, 15], [10, 15]]}],
    "models": [
        {
            "id": "g1",
            "side": "a",
            "base": {"shape": "round", "diameter_mm": 25.4},
            "movement": 5,
            "start": {"x": 2, "y": 2},
            "end": {"x": 5, "y": 6},
        },
        {
            "id": "e1",
            "side": "b",
            "base": {"shape": "round", "diameter_mm": 25.4},
            "movement": 5,
            "start": {"x": 20, "y": 10},
        },
    ],
}


def _with(path: list[object], value: object) -> dict[str, object]:
    data = json.loads(json.dumps(GOOD))
    node = data
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


BAD = [
    (
        _with(["game"], "chess"),
        "game: unknown game 'chess'; known games: battlestations, cosmic-combat, ",
    ),
    (_with(["models", 0, "colour"], "red"), "models[0].colour: unknown key; allowed keys: "),
    (_with(["models", 0, "movement"], KeyError), "models[0].movement: required key is missing"),
    (_with(["models", 0, "movement"], -3), "models[0].movement: Input should be greater than"),
    (
        _with(["models", 0, "base"], {"shape": "square", "diameter_mm": 25}),
        "models[0].base: Input tag 'square' found using 'shape' does not match any of the "
        "expected tags: 'round', 'oval', 'rect'",
    ),
    (
        _with(["terrain", 0, "polygon"], [[0, 0], [2, 2], [2, 0], [0, 2]]),
        "terrain[0].polygon: expected a simple polygon (corners in order, edges not crossing)",
    ),
    (
        _with(["models", 0, "target"], "nobody"),
        "models[0].target: expected one of the model ids, got 'nobody'",
    ),
    (
        _with(["models", 0, "action"], "charge"),
        "models[0].roll: a charge in necromunda needs the D3 roll (1-3)",
    ),
    (_with(["table", "width"], 0), "table.width: Input should be greater than 0"),
]


@pytest.mark.parametrize(("scenario", "expected"), BAD)
def test_bad_scenario_is_one_line_and_exit_2(
    tmp_path: Path, scenario: dict[str, object], expected: str, tablesight
) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    result = tablesight("check", str(path), "--json")
    assert result.returncode == 2, result.stdout
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"tablesight: {path}: {expected}")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Python's JSON parser accepts NaN and Infinity; neither is a distance
        (
            json.dumps(GOOD).replace('"x": 2,', '"x": NaN,', 1),
            "models[0].start.x: Input should be a finite number, got nan",
        ),
        (
            json.dumps(GOOD).replace('"movement": 5', '"movement": Infinity', 1),
            "models[0].movement: Input should be a finite number, got inf",
        ),
    ],
)
def test_non_finite_numbers(tmp_path: Path, text: str, expected: str, tablesight) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(text)
    result = tablesight("check", str(path))
    assert result.returncode == 2
    assert result.stderr.strip() == f"tablesight: {path}: {expected}"


def test_not_utf8(tmp_path: Path, tablesight) -> None:
    path = tmp_path / "scenario.json"
    path.write_bytes(b"\xff\xfe{}")
    result = tablesight("check", str(path))
    assert result.returncode == 2
    assert (
        result.stderr.strip() == f"tablesight: {path}: not UTF-8 text (a scenario is a JSON file)"
    )


def test_not_json_and_missing_file(tmp_path: Path, tablesight) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{ not json")
    result = tablesight("check", str(broken))
    assert result.returncode == 2
    assert result.stderr.startswith(f"tablesight: {broken}: not valid JSON: ")
    missing = tmp_path / "missing.json"
    result = tablesight("check", str(missing))
    assert result.returncode == 2
    assert result.stderr.strip() == f"tablesight: {missing}: cannot read: No such file or directory"


def test_legal_move_json_shape(tmp_path: Path, tablesight) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(GOOD))
    result = tablesight("check", str(path), "--json")
    assert result.returncode == 0, result.stderr
    verdict = json.loads(result.stdout)
    # (2, 2) -> (5, 6) is a 3-4-5 triangle: 5.0 in, exactly the Movement of 5.
    assert verdict == {
        "legal": True,
        "violations": [],
        "advisories": [],
        "moves": {
            "g1": {
                "action": "move",
                "allowance": 5.0,
                "straight": 5.0,
                "shortest_path": 5.0,
                "shortest_path_bounds": [5.0, 5.0],
                "climbs": [],
            }
        },
    }


# The verdict each sample's description promises, by rule name and the key number.
SAMPLE_VERDICTS = [
    ("necromunda-wall-detour.json", ["movement"], [], ("ganger", 13.007)),
    ("necromunda-charge.json", ["charge"], [], ("juve", 5.9)),
    ("trench-crusade-interposing.json", ["charge"], ["charge"], ("pilgrim", 4.0)),
    ("cosmic-combat-boarding.json", ["action", "action", "control_zone"], ["ramming"], None),
    ("cosmic-combat-revised-gap.json", ["movement"], [], ("alpha-wide", 10.0)),
    ("battlestations-deck.json", ["movement"], ["free_attack"], ("vex", 11.0)),
    ("necromunda-levels.json", ["movement"], [], ("ganger", 10.0)),
]


@pytest.mark.parametrize(("name", "violations", "advisories", "path"), SAMPLE_VERDICTS)
def test_sample_scenarios(
    name: str,
    violations: list[str],
    advisories: list[str],
    path: tuple[str, float] | None,
    tablesight,
) -> None:
    result = tablesight("check", str(SAMPLES / name), "--json")
    assert result.returncode == 0, result.stderr
    verdict = json.loads(result.stdout)
    assert [v["rule"] for v in verdict["violations"]] == violations
    assert [a["rule"] for a in verdict["advisories"]] == advisories
    if path is not None:
        model, length = path
        assert verdict["moves"][model]["shortest_path"] == pytest.approx(length, abs=0.01)
    text = tablesight("check", str(SAMPLES / name))
    assert text.returncode == 0
    for rule in violations + advisories:
        assert rule in text.stdout


def test_check_says_where_a_route_climbs(tablesight) -> None:
    # up 2 in onto the crate at x = 4, 2 in more onto the platform at x = 6, 1 in a climbed
    # inch: 6 + 2 + 2 = 10
    scenario = str(SAMPLES / "necromunda-levels.json")
    verdict = json.loads(tablesight("check", scenario, "--json").stdout)
    assert verdict["moves"]["ganger"]["climbs"] == [
        {"at": [4.0, 10.0], "from": 0.0, "to": 2.0, "cost": 2.0},
        {"at": [6.0, 10.0], "from": 2.0, "to": 4.0, "cost": 2.0},
    ]
    text = tablesight("check", scenario).stdout
    assert (
        "climbs: up 2.00 in at (4.00, 10.00), costing 2.00 in; "
        "up 2.00 in at (6.00, 10.00), costing 2.00 in"
    ) in text


# -- a game from a file outside the package ---------------------------------------------------


def test_check_with_a_game_from_a_file(tmp_path: Path, tablesight, hasty_necromunda) -> None:
    game = hasty_necromunda
    # code beside an outside file is never run
    (tmp_path / "hasty_necromunda.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w')\n")
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(GOOD))
    result = tablesight("check", str(scenario), "--ruleset", str(game), "--json")
    assert result.returncode == 0, result.stderr
    verdict = json.loads(result.stdout)
    # (2, 2) -> (5, 6): 5.0 in, straight past the wall; the allowance is 5 * 0.5 = 2.5 in
    assert verdict["legal"] is False
    assert [(v["rule"], v["model"], v["measured"], v["limit"]) for v in verdict["violations"]] == [
        ("movement", "g1", 5.0, 2.5)
    ]
    assert verdict["violations"][0]["message"] == (
        'g1 moved 5.00" by the shortest legal path; its move allows 2.50"'
    )
    assert verdict["moves"]["g1"]["allowance"] == 2.5
    assert not (tmp_path / "ran").exists()
    text = tablesight("check", str(scenario), "--ruleset", str(game))
    assert text.stdout.startswith("Hasty Necromunda: 1 move judged: ILLEGAL")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("factor = 0.5", "factor = -0.5"), "actions.move.factor: Input should be greater than"),
        (
            ('pass_through = "friendly"', 'pass_through = "all"'),
            "movement.pass_through: Input should be 'nobody' or 'friendly', got 'all'",
        ),
        (
            ('name = "hasty-necromunda"', 'name = "necromunda"'),
            "name: 'necromunda' is a packaged game's name; give this game its own",
        ),
    ],
)
def test_a_malformed_game_file_is_one_line_naming_the_field(
    tmp_path: Path, change: tuple[str, str], expected: str, tablesight, hasty_necromunda
) -> None:
    game = hasty_necromunda
    game.write_text(game.read_text(encoding="utf-8").replace(*change, 1), encoding="utf-8")
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(GOOD))
    result = tablesight("check", str(scenario), "--ruleset", str(game))
    assert result.returncode == 2, result.stdout
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"tablesight: {game}: {expected}")


def test_analyze_takes_a_game_file_or_a_game_not_both(
    tmp_path: Path, tablesight, hasty_necromunda
) -> None:
    game = hasty_necromunda
    game.write_text(game.read_text(encoding="utf-8").replace("factor = 0.5", "factor = -1", 1))
    sample = SAMPLES.parent / "necromunda"
    files = ["--table", str(sample / "table.toml"), "--roster", str(sample / "roster.toml")]
    video = str(sample / "match.mp4")
    bad = tablesight("analyze", video, "--ruleset", str(game), *files)
    assert (bad.returncode, bad.stderr.strip()) == (
        2,
        f"tablesight: {game}: actions.move.factor: Input should be greater than or equal to 0, "
        "got -1",
    )
    both = tablesight("analyze", video, "--game", "necromunda", "--ruleset", str(game), *files)
    assert (both.returncode, both.stderr.strip()) == (
        2,
        "tablesight: --ruleset: give --game or --ruleset, not both",
    )
    neither = tablesight("analyze", video, *files)
    assert neither.returncode == 2
    assert neither.stderr.startswith("tablesight: --game: missing; give one of battlestations, ")
