"""One check of a declaration: each bad field is one line naming it and what was expected."""

from __future__ import annotations

import json

import pytest

from tablesight.rules.declaration import DeclarationError, check_declaration
from tablesight.rules.errors import InputError
from tablesight.rules.geometry import Base, Pose
from tablesight.rules.ruleset import load_ruleset
from tablesight.rules.scenario import Scenario
from tablesight.rules.scene import Model, Table
from tablesight.rules.session import Session

ROSTER = ("a", "b", "e")


@pytest.mark.parametrize(
    ("game", "declaration", "field", "message"),
    [
        (
            "trench-crusade",
            {"model": "z", "action": "charge"},
            "model",
            "model: unknown model 'z'; the roster has: a, b, e",
        ),
        (
            "trench-crusade",
            {"model": "a", "action": "fly"},
            "action",
            "action: Trench Crusade has no action 'fly' (it has: charge, dash, move, retreat)",
        ),
        (
            "trench-crusade",
            {"model": "a", "target": "nobody"},
            "target",
            "target: expected another model of the roster, got 'nobody'",
        ),
        (
            "trench-crusade",
            {"model": "a", "target": "a"},
            "target",
            "target: expected another model of the roster, got 'a'",
        ),
        (
            "trench-crusade",
            {"model": "a", "action": "charge", "roll": 7},
            "roll",
            "roll: expected 1 to 6 for charge, got 7",
        ),
        (  # a D3, for the charge declared before
            "necromunda",
            {"model": "a", "roll": 4, "declared": "charge"},
            "roll",
            "roll: expected 1 to 3 for charge, got 4",
        ),
        (  # an action the game does not have is caught before its roll
            "necromunda",
            {"model": "a", "action": "fly", "roll": 9},
            "action",
            "action: Necromunda has no action 'fly' (it has: charge, move)",
        ),
    ],
)
def test_each_bad_field_is_one_line(game, declaration, field, message):
    with pytest.raises(DeclarationError) as raised:
        check_declaration(load_ruleset(game), ROSTER, **declaration)
    assert str(raised.value) == message
    assert raised.value.field == field
    assert isinstance(raised.value, InputError) and isinstance(raised.value, ValueError)


def test_a_good_declaration_passes():
    necromunda = load_ruleset("necromunda")
    check_declaration(necromunda, ROSTER, "a", "charge", "e", 3)
    check_declaration(necromunda, ROSTER, "a", roll=6)  # a D6 for a move


def _session() -> Session:
    base = Base.round(25.4)
    models = {
        mid: Model(mid, "red", mid, base, 6.0, Pose(5, 5 + 5 * k)) for k, mid in enumerate(ROSTER)
    }
    return Session(load_ruleset("necromunda"), Table(30, 20), models)


def test_the_session_takes_no_declaration_the_check_refuses():
    s = _session()
    s.declare(0.0, 0, "a", action="charge", target="e")
    with pytest.raises(DeclarationError, match=r"^roll: expected 1 to 3 for charge, got 4$"):
        s.declare(1.0, 30, "a", roll=4)  # the charge declared before rolls a D3
    with pytest.raises(DeclarationError, match=r"^target: expected another model"):
        s.declare(1.0, 30, "b", target="b")
    assert s.declarations["a"].roll is None and "b" not in s.declarations


def _scenario(**declared: object) -> str:
    model = {
        "id": "c",
        "side": "red",
        "base": {"shape": "round", "diameter_mm": 25.4},
        "movement": 4,
        "start": {"x": 2, "y": 10},
        **declared,
    }
    enemy = {**model, "id": "e", "side": "blue", "start": {"x": 9, "y": 10}}
    return json.dumps(
        {"game": "necromunda", "table": {"width": 24, "depth": 24}, "models": [model, enemy]}
    )


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        (
            {"action": "charge", "target": "e", "roll": 4},
            "scenario: models[0].roll: expected 1 to 3 for charge, got 4",
        ),
        (
            {"target": "c"},
            "scenario: models[0].target: expected another model of the roster, got 'c'",
        ),
    ],
)
def test_a_scenario_names_the_model_and_the_field(declared, message):
    with pytest.raises(InputError) as raised:
        Scenario.from_json(_scenario(**declared))
    assert str(raised.value) == message
