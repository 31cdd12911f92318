"""What every view draws: links, zones, flags and measurements, in inches."""

from __future__ import annotations

import math

import pytest

from rules.geometry import Base, Pose
from rules.ruleset import load_ruleset
from rules.scene import Model, Table
from rules.session import Session
from rules.view import describe, measure, neighbours

INCH = Base.round(25.4)


def session(game: str = "cosmic-combat-revised") -> Session:
    models = {
        "a": Model("a", "red", "squad", INCH, 6.0, Pose(5, 5)),
        "b": Model("b", "red", "squad", INCH, 6.0, Pose(6.8, 5)),
        "c": Model("c", "red", "squad", INCH, 6.0, Pose(10, 5)),
        "e": Model("e", "blue", "e", INCH, 6.0, Pose(20, 5)),
    }
    s = Session(load_ruleset(game), Table(30, 20), models)
    for mid, m in models.items():
        s.seen(mid, m.start, sigma_in=0.03)
    return s


def test_links_join_each_unit_by_its_shortest_gaps():
    links = describe(session())["links"]
    # a-b: centres 1.8 apart, gap 0.8 (within 1 in); b-c: 3.2 apart, gap 2.2 (broken)
    assert [(x["a"], x["b"], x["distance_in"], x["ok"]) for x in links] == [
        ("a", "b", pytest.approx(0.8), True),
        ("b", "c", pytest.approx(2.2), False),
    ]


def test_zones_of_the_side_that_does_not_move():
    s = session()
    assert {z["model"] for z in describe(s)["zones"]} == {"a", "b", "c", "e"}  # no priority
    s.side = "red"
    [zone] = describe(s)["zones"]
    assert (zone["model"], zone["range_in"]) == ("e", 1.0)
    # the enemy's base grown by its zone: every outline point 1.5 in from its centre
    radii = [math.dist(p, (20, 5)) for p in zone["outline"]]
    assert min(radii) == pytest.approx(1.5, abs=1e-4) and max(radii) <= 1.5 + 1e-4  # 4 decimals


def test_a_move_its_route_and_its_flag():
    s = session("necromunda")
    s.start_phase(0, 0, side="red")
    s.moved(1, 30, "c", Pose(17.5, 5))  # 7.5 in of 6, ending 1.5 in from e's centre
    state = describe(s)
    c = next(m for m in state["models"] if m["id"] == "c")
    assert c["start"] == [10, 5] and c["moved"]
    assert c["move"]["allowance_in"] == 6.0 and c["move"]["straight_in"] == pytest.approx(7.5)
    assert c["move"]["route"][0] == [10, 5] and c["move"]["route"][-1] == [17.5, 5]
    # gap 2.5 - 1 = 1.5 in: outside the 1 in zone; only the distance is flagged
    assert [(f["id"], f["rule"], f["measured"], f["decision"]) for f in state["flags"]] == [
        (2, "movement", pytest.approx(7.5), None)
    ]
    s.decide(2, "dismiss")
    assert describe(s)["flags"][0]["decision"] == "dismiss"


def test_measure_and_neighbours():
    s = session()
    out = measure(s, "a", "c")  # centres 5 apart, gap 4
    assert out["distance_in"] == pytest.approx(4.0)
    assert out["uncertainty_in"] == pytest.approx(math.hypot(0.03, 0.03), abs=1e-3)
    assert measure(s, "a", point=(8, 9))["distance_in"] == pytest.approx(5 - 0.5)
    near = neighbours(s, "b")["near"]
    assert [(n["model"], n["distance_in"]) for n in near] == [
        ("a", pytest.approx(0.8)),
        ("c", pytest.approx(2.2)),
    ]
    with pytest.raises(KeyError):
        measure(s, "zz", "a")
