"""One reading of coherency for the referee and the view: within range horizontally and
within the vertical limit, each give or take the tolerance."""

from __future__ import annotations

import json

import pytest

from tablesight.rules.coherency import in_coherency
from tablesight.rules.geometry import Base, Pose
from tablesight.rules.referee import Referee
from tablesight.rules.ruleset import CoherencyRules, load_ruleset
from tablesight.rules.scenario import Scenario
from tablesight.rules.scene import Model, Table
from tablesight.rules.session import Session
from tablesight.rules.view import describe

GAME = "cosmic-combat-revised"  # coherency: 1 in horizontally and 6 in vertically
INCH = Base.round(25.4)  # 1 in across: the gap is the centre distance less 1 in


@pytest.mark.parametrize(
    ("gap", "rise", "linked"),
    [
        (0.98, 6.03, True),  # both inside their limit plus 0.05
        (1.05, 6.05, True),  # both exactly at it
        (1.06, 0.0, False),  # 0.01 past the range and its tolerance
        (0.98, 6.06, False),  # 0.01 past the vertical limit and its tolerance
    ],
)
def test_in_coherency(gap, rise, linked):
    rules = CoherencyRules(range_in=1.0, vertical_in=6.0)
    assert in_coherency(gap, rise, rules, tolerance_in=0.05) is linked


def _judged(rise: float) -> tuple[str, ...]:
    """The referee's coherency findings for two unit-mates 0.98 in apart edge to edge
    (centres 1.98 in) and ``rise`` apart vertically."""
    models = [
        {
            "id": id_,
            "side": "red",
            "unit": "u",
            "base": {"shape": "round", "diameter_mm": 25.4},
            "movement": 6,
            "start": start,
        }
        for id_, start in (("a", {"x": 10, "y": 10}), ("b", {"x": 11.98, "y": 10, "z": rise}))
    ]
    spec = {"game": GAME, "table": {"width": 24, "depth": 24}, "tolerance": 0.05, "models": models}
    scenario = Scenario.from_json(json.dumps(spec))
    verdict = Referee(scenario.scene, scenario.ruleset).judge_model("a")
    return tuple(f.rule for f in (*verdict.violations, *verdict.advisories))


def _drawn(rise: float) -> list[tuple[str, str, float, bool]]:
    """The view's coherency links for the same two unit-mates."""
    models = {
        "a": Model("a", "red", "u", INCH, 6.0, Pose(10, 10)),
        "b": Model("b", "red", "u", INCH, 6.0, Pose(11.98, 10, 0.0, rise)),
    }
    session = Session(load_ruleset(GAME), Table(24, 24), models, tolerance_in=0.05)
    for mid, m in models.items():
        session.seen(mid, m.start)
    return [(x["a"], x["b"], x["distance_in"], x["ok"]) for x in describe(session)["links"]]


def test_the_referee_and_the_view_agree_on_a_rise_within_the_tolerance():
    # Regression: the view held the vertical limit without the tolerance (6.03 > 6: a
    # broken link drawn) while the referee held it with it (6.03 <= 6.05: in coherency).
    assert _judged(6.03) == ()
    assert _drawn(6.03) == [("a", "b", pytest.approx(0.98), True)]


def test_the_referee_and_the_view_agree_on_a_rise_past_the_tolerance():
    assert _judged(6.06) == ("coherency", "coherency")  # each is out of coherency
    assert _drawn(6.06) == [("a", "b", pytest.approx(0.98), False)]
