"""Battlestations square-grid movement (rules text 002), counted by hand.

The table is 20 x 12 in with 1 in squares from the corner, so square (c, r) has its
centre at (c + 0.5, r + 0.5). Terrain pieces are given in squares.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tablesight.rules.errors import InputError
from tablesight.rules.referee import referee_for
from tablesight.rules.scenario import Scenario
from tablesight.rules.squares import Grid, squares_crossed
from tablesight.rules.verdict import Verdict

BASE = {"shape": "round", "diameter_mm": 25}


def char(
    id: str,
    start: tuple[int, int],
    end: tuple[int, int] | None = None,
    *,
    side: str = "crew",
    move: int = 5,
    **more: Any,
) -> dict[str, Any]:
    """A character standing in square ``start`` and moved to square ``end``."""
    out: dict[str, Any] = {
        "id": id,
        "side": side,
        "base": BASE,
        "movement": move,
        "start": {"x": start[0] + 0.5, "y": start[1] + 0.5},
    }
    if end is not None:
        out["end"] = {"x": end[0] + 0.5, "y": end[1] + 0.5}
    out.update(more)
    return out


def cells(id: str, c0: int, r0: int, c1: int, r1: int, *keywords: str) -> dict[str, Any]:
    """Terrain covering squares c0..c1-1 by r0..r1-1."""
    poly = [[c0, r0], [c1, r0], [c1, r1], [c0, r1]]
    return {"id": id, "polygon": poly, "keywords": list(keywords)}


def judge(
    models: list[dict[str, Any]], terrain: list[dict[str, Any]] = (), **extra: Any
) -> Verdict:
    data = {"game": "battlestations", "table": {"width": 20, "depth": 12}}
    data.update(terrain=list(terrain), models=models, **extra)
    scenario = Scenario.from_json(json.dumps(data))
    return referee_for(scenario.scene, scenario.ruleset).judge()


def only(verdict: Verdict, model: str) -> tuple[float, float | None]:
    """(allowance, shortest path) of one model's move, in squares."""
    move = verdict.moves[model]
    return move.allowance, move.shortest_path


# -- the examples of rules text 002 ---------------------------------------------------------


def test_ooc_example_move_with_an_action():
    # "if there is 3 OOC and you have a move of 5 you get to go 2 squares and take an action"
    ok = judge([char("a", (2, 2), (4, 2), move=5, ooc=3)])
    assert ok.legal and only(ok, "a") == (2.0, 2.0)
    over = judge([char("a", (2, 2), (5, 2), move=5, ooc=3)])
    assert over.rules() == ["movement"]
    assert (over.violations[0].measured, over.violations[0].limit) == (3.0, 2.0)


def test_ooc_example_move_as_the_action():
    # "... or if you choose move as your action, you'll go a total of 7 squares (5+5-3=7)"
    ok = judge([char("a", (2, 2), (9, 2), move=5, ooc=3, action="move_as_action")])
    assert ok.legal and only(ok, "a") == (7.0, 7.0)
    over = judge([char("a", (2, 2), (10, 2), move=5, ooc=3, action="move_as_action")])
    assert over.rules() == ["movement"] and over.violations[0].measured == 8.0


@pytest.mark.parametrize(
    ("move", "ooc", "action", "allowance"),
    [
        (1, 3, "move", 1.0),  # 1 - 3 < 1: "you can always move 1 square with each move action"
        (1, 5, "move_as_action", 2.0),  # 1 + 1 - 5 < 2: still one square per move action
        (4, 0, "move_as_action", 8.0),  # "allowing you to move twice"
        (0, 0, "move", 1.0),  # even a move value of 0 moves one square
    ],
)
def test_one_square_per_move_action_whatever_the_penalties(move, ooc, action, allowance):
    verdict = judge([char("a", (2, 2), (3, 2), move=move, ooc=ooc, action=action)])
    assert verdict.legal and only(verdict, "a") == (allowance, 1.0)


def test_canosians_move_three_times_as_their_action():
    # "(3 times for Canosians!)": 4 + 4 + 4 = 12
    ok = judge([char("c", (1, 1), (13, 1), move=4, action="move_as_action", keywords=["canosian"])])
    assert ok.legal and only(ok, "c") == (12.0, 12.0)
    human = judge([char("h", (1, 1), (13, 1), move=4, action="move_as_action")])
    assert human.rules() == ["movement"] and only(human, "h") == (8.0, 12.0)


# -- mazes counted by hand ------------------------------------------------------------------

WALL = cells("bulkhead", 5, 0, 6, 8, "wall")  # column 5, rows 0-7: open from row 8 up


def test_a_wall_forces_the_way_round_not_manhattan():
    # (2,2) -> (8,2): Manhattan 6, but column 5 is walled up to row 7. Cheapest: up to
    # row 8, across, down: |2-8| + |5-2| to reach (5,8) = 9, then 3 + 6 = 9 more: 18.
    verdict = judge([char("a", (2, 2), (8, 2), move=20)], [WALL])
    assert verdict.legal
    assert verdict.moves["a"].straight == 6.0
    assert only(verdict, "a") == (20.0, 18.0)


def test_slagged_squares_cost_two():
    # Same route, with column 7 slagged from row 0 to 11: one of its squares must be
    # entered (cost 2 instead of 1): 19.
    slag = cells("slag-module", 7, 0, 8, 12, "slagged")
    verdict = judge([char("a", (2, 2), (8, 2), move=18)], [WALL, slag])
    assert verdict.rules() == ["movement"]
    assert verdict.violations[0].measured == 19.0


def test_a_barrel_counts_as_slagged_and_the_cheaper_way_goes_round():
    # (2,5) -> (6,5) straight is 4 squares, with a barrel at (4,5) it is 5 (the barrel
    # costs 2); stepping round it is 6. So 5.
    barrel = cells("barrel", 4, 5, 5, 6, "barrel")
    verdict = judge([char("a", (2, 5), (6, 5), move=5)], [barrel])
    assert verdict.legal and only(verdict, "a") == (5.0, 5.0)


def test_walled_in_is_blocked():
    ring = [
        cells("n", 9, 9, 12, 10, "wall"),
        cells("s", 9, 5, 12, 6, "wall"),
        cells("w", 9, 6, 10, 9, "wall"),
        cells("e", 11, 6, 12, 9, "wall"),
    ]  # square (10,7) and (10,8) are shut in
    verdict = judge([char("a", (2, 2), (10, 7), move=30)], ring)
    assert verdict.rules() == ["blocked"]
    assert verdict.moves["a"].shortest_path is None


def test_ending_on_a_wall_square():
    verdict = judge([char("a", (4, 3), (5, 3), move=5)], [WALL])
    assert "blocked" in verdict.rules()


# -- occupied squares -----------------------------------------------------------------------


def test_friends_are_passed_freely_enemies_cost_two_and_owe_a_free_attack():
    # A corridor one square wide (row 5) between walls: (1,5) -> (6,5) is 5 squares.
    corridor = [cells("upper", 0, 6, 20, 7, "wall"), cells("lower", 0, 4, 20, 5, "wall")]
    friend = judge([char("a", (1, 5), (6, 5)), char("f", (3, 5))], corridor)
    assert friend.legal and only(friend, "a") == (5.0, 5.0)
    # An enemy at (3,5): its square is slagged (2): 6 > 5, and it may strike once.
    enemy = judge([char("a", (1, 5), (6, 5)), char("e", (3, 5), side="pirates")], corridor)
    assert enemy.rules() == ["movement"] and enemy.violations[0].measured == 6.0
    attack = [a for a in enemy.advisories if a.rule == "free_attack"]
    assert [(a.model, a.other) for a in attack] == [("a", "e")]


def test_no_free_attack_when_the_enemy_could_be_gone_round():
    # Open floor: (1,5) -> (6,5) with an enemy at (3,5). Through it: 6; round it: 7. With a
    # move of 7 the character could have avoided the enemy, so no free attack is owed.
    verdict = judge([char("a", (1, 5), (6, 5), move=7), char("e", (3, 5), side="pirates")])
    assert verdict.legal and only(verdict, "a") == (7.0, 6.0)
    assert verdict.advisories == ()


@pytest.mark.parametrize(
    ("status", "rules"),
    [([], ["base_overlap"]), (["unconscious"], [])],
)
def test_a_move_may_not_end_on_a_conscious_character(status, rules):
    verdict = judge([char("a", (1, 1), (3, 1)), char("f", (3, 1), status=status)])
    assert verdict.rules() == rules


# -- jets -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "crossed"),
    [
        ((0, 0), (3, 0), [(1, 0), (2, 0), (3, 0)]),
        ((0, 0), (2, 2), [(1, 1), (2, 2)]),  # through corners only: the side squares not
        # slope 1/2: x sides at t = 1/4, 3/4, y side at 1/2 -> (1,0), (1,1), (2,1)
        ((0, 0), (2, 1), [(1, 0), (1, 1), (2, 1)]),
        ((0, 0), (-1, 3), [(0, 1), (-1, 2), (-1, 3)]),  # t = 1/6, 1/2 (both), 5/6
    ],
)
def test_squares_a_jet_line_passes_through(start, end, crossed):
    assert squares_crossed(start, end) == crossed


def test_jet_of_ten_and_of_eleven_squares():
    ok = judge([char("j", (1, 3), (11, 3), action="jet", keywords=["jetpack"])])
    assert ok.legal and only(ok, "j") == (10.0, 10.0)
    far = judge([char("j", (1, 3), (12, 3), action="jet", keywords=["jetpack"])])
    assert far.rules() == ["movement"] and far.violations[0].measured == 11.0


def test_diagonal_jet_counts_every_square_its_line_passes():
    # (1,1) -> (9,4): 8 across, 3 up. Vertical sides at t = 1/16, 3/16, ... 15/16 (8 of
    # them), horizontal at 1/6, 1/2, 5/6 (3), no two at once: 11 squares, over 10.
    verdict = judge([char("j", (1, 1), (9, 4), action="jet", keywords=["avianoid"])])
    assert verdict.rules() == ["diagonal_jet"]
    assert (verdict.violations[0].measured, verdict.violations[0].limit) == (11.0, 10.0)


def test_jets_never_pass_slagged_squares_and_need_a_jetpack_or_wings():
    slag = cells("slag", 5, 0, 6, 12, "slagged")
    through = judge([char("j", (1, 3), (8, 3), action="jet", keywords=["jetpack"])], [slag])
    assert through.rules() == ["slagged_jet"] and through.violations[0].other == "slag"
    enemy = judge(
        [
            char("j", (1, 3), (8, 3), action="jet", keywords=["whistler"]),
            char("e", (4, 3), side="pirates"),
        ]
    )
    assert enemy.rules() == ["slagged_jet"] and enemy.violations[0].other == "e"
    walker = judge([char("h", (1, 3), (4, 3), action="jet")])
    assert walker.rules() == ["action"]


# -- outside the hull, doors, magboots ------------------------------------------------------

OUTSIDE = cells("hull-out", 10, 0, 20, 12, "outside")


def test_outside_squares_cost_one_more_and_magboots_cost_one_to_switch_on():
    # (8,2) -> (14,2): 2 squares inside (9, then... 9 is inside, 10-14 outside: 5 squares
    # at 2 each) = 1 + 10 = 11. With magboots: 1 to switch on + 6 = 7. Already on: 6.
    plain = judge([char("a", (8, 2), (14, 2), move=20)], [OUTSIDE])
    booted = judge([char("a", (8, 2), (14, 2), move=20, keywords=["magboots"])], [OUTSIDE])
    active = judge(
        [char("a", (8, 2), (14, 2), move=20, keywords=["magboots"], status=["magboots_active"])],
        [OUTSIDE],
    )
    assert [only(v, "a")[1] for v in (plain, booted, active)] == [11.0, 7.0, 6.0]


@pytest.mark.parametrize(
    ("door", "into", "legal"),
    [
        (["door"], False, True),  # going out through any door is free
        (["door"], True, False),  # coming in through another ship's closed door is not
        (["door", "hacked"], True, True),
        (["door", "owner:crew"], True, True),  # a crew's own ship's door
    ],
)
def test_external_doors(door, into, legal):
    # The hull is column 9 (wall) with a door at (9,5); outside from column 10.
    hull = [
        cells("hull-a", 9, 0, 10, 5, "wall"),
        cells("airlock", 9, 5, 10, 6, *door),
        cells("hull-b", 9, 6, 10, 12, "wall"),
        OUTSIDE,
    ]
    start, end = ((12, 5), (7, 5)) if into else ((7, 5), (12, 5))
    verdict = judge([char("a", start, end, move=20)], hull)
    assert verdict.legal == legal
    if not legal:
        assert verdict.rules() == ["blocked"]


# -- running --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("check", "extra", "allowance"),
    [
        (11, 1, 6.0),  # Athletics vs 11 made: one more square
        (14, 2, 7.0),  # vs 11 + 3 for the second extra square, made: two more
        (9, 1, 3.0),  # failed by 2: "reduces your move by the amount of failure"
        (2, 1, 1.0),  # failed by 9: still one square
    ],
)
def test_run(check, extra, allowance):
    verdict = judge([char("a", (1, 1), (2, 1), action="run", run={"check": check, "extra": extra})])
    assert only(verdict, "a")[0] == allowance


# -- the grid may lie anywhere --------------------------------------------------------------


def test_grid_placement_turned_and_shifted():
    grid = Grid(square_in=1.5, origin=(10.0, 2.0), angle_deg=90.0)
    # square (0,0) spans x 8.5-10 and y 2-3.5 after turning 90 degrees about (10,2)
    assert grid.square_of(9.9, 2.1) == (0, 0)
    assert grid.square_of(8.4, 2.1) == (0, 1)
    assert grid.centre((0, 0)) == pytest.approx((9.25, 2.75))
    assert grid.to_grid(*grid.to_table(3.25, -1.5)) == pytest.approx((3.25, -1.5))


def test_same_maze_on_a_turned_grid_counts_the_same():
    # The wall maze above, on a grid turned 90 degrees with its corner at (14, 0): table
    # point of grid (u, v) is (14 - v, u); the wall covers u 5-6, v 0-8. The table is 14 in
    # wide so that, as above, there is no way round the wall's other end (v < 0).
    def at(u: float, v: float) -> dict[str, float]:
        return {"x": 14 - v, "y": u}

    wall = {"id": "w", "polygon": [[14, 5], [14, 6], [6, 6], [6, 5]], "keywords": ["wall"]}
    a = char("a", (0, 0), (0, 0), move=20)
    a["start"], a["end"] = at(2.5, 2.5), at(8.5, 2.5)
    data = {
        "game": "battlestations",
        "table": {"width": 14, "depth": 12},
        "grid": {"square_in": 1.0, "origin": [14, 0], "angle": 90},
        "terrain": [wall],
        "models": [a],
    }
    scenario = Scenario.from_json(json.dumps(data))
    verdict = referee_for(scenario.scene, scenario.ruleset).judge()
    assert only(verdict, "a") == (20.0, 18.0)


def test_ending_off_the_grid():
    verdict = judge([char("a", (18, 2), (21, 2))])
    assert verdict.rules() == ["off_table"]


# -- scenario checks ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (char("a", (1, 1), (2, 1), move=2.5), "models[0].movement: battlestations moves in whole"),
        (char("a", (1, 1), (2, 1), action="run"), "models[0].run: a run needs the Athletics check"),
    ],
)
def test_grid_scenario_errors(model, message):
    data = {"game": "battlestations", "table": {"width": 20, "depth": 12}, "models": [model]}
    with pytest.raises(InputError) as err:
        Scenario.from_json(json.dumps(data), "s.json")
    assert str(err.value).startswith(f"s.json: {message}")


def test_free_movement_games_refuse_grid_keys():
    model = char("a", (1, 1), (2, 1), ooc=2)
    data = {"game": "necromunda", "table": {"width": 20, "depth": 12}, "models": [model]}
    with pytest.raises(InputError) as err:
        Scenario.from_json(json.dumps(data), "s.json")
    assert str(err.value) == "s.json: models[0].ooc: only square-grid games use it, not necromunda"
