"""What every view draws: links, zones, flags and measurements, in inches."""

from __future__ import annotations

import math

import pytest

from tablesight.rules.geometry import Base, Pose
from tablesight.rules.ruleset import load_ruleset
from tablesight.rules.scene import Model, Table
from tablesight.rules.session import Session
from tablesight.rules.view import closest_points, describe, flag_caption, measure, neighbours

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


def test_a_flag_in_words_for_players_and_for_viewers():
    s = session("necromunda")
    s.start_phase(0, 0, side="red")
    s.moved(1, 30, "c", Pose(17.5, 5))
    [flag] = describe(s)["flags"]
    # the players' numbers, and a commentator's words (no "/ 6.00")
    assert flag["label"] == "movement: 7.50 in / 6.00"
    assert flag["caption"] == "moved 7.50 in, allowed 6"
    assert flag["headline"] == "c moved 7.50 in, allowed 6"
    assert describe(s)["session"]["headline"] == "turn 1: red moving"
    s.end_phase(2, 60)
    assert describe(s)["session"]["headline"] == "turn 1: no phase"


@pytest.mark.parametrize(
    ("rule", "measured", "limit", "uncertainty", "said"),
    [
        ("charge", 0.5, 1.0, None, "'s charge ended 0.50 in from e, must stop 1 away"),
        ("charge", 15.4, 1.0, None, "'s charge fell short: 15.40 in from e, needed 1"),
        ("close_call", 0.97, 1.0, 0.04, "is too close to call: about 0.97 in against 1"),
        ("coherency", 2.25, 1.5, None, "is 2.25 in from e, coherency allows 1.5"),
    ],
)
def test_flag_captions(rule, measured, limit, uncertainty, said):
    assert flag_caption(rule, measured, limit, uncertainty, "e") == said
    assert flag_caption(rule, None, None, None, "e") is None
    assert "/" not in said


def test_the_measured_line_runs_between_the_closest_points():
    s = session()
    out = measure(s, "a", "c")  # centres (5, 5) and (10, 5), 1 in bases
    assert out["points"] == [[5.5, 5.0], [9.5, 5.0]]
    assert math.dist(*out["points"]) == pytest.approx(out["distance_in"])
    to_point = measure(s, "a", point=(5, 9))
    assert to_point["points"] == [[5.0, 5.5], [5, 9]]
    oval = Base("oval", 60, 35)
    assert closest_points(oval, Pose(0, 0), INCH, Pose(5, 0))[0] == [
        pytest.approx(60 / 25.4 / 2, abs=1e-3),
        pytest.approx(0, abs=1e-3),
    ]


def test_what_a_model_stands_on():
    s = session()
    # tower5: a 4 x 4 in top 5 in up, x 8..12, y 3..7; c stands on it at (10, 5)
    s.place_terrain("tower5", [[8, 3], [12, 3], [12, 7], [8, 7]], 5.0, ["climbable"])
    s.seen("c", Pose(10, 5, 0, 5.0), sigma_in=0.03)
    s.seen("b", Pose(6.8, 5, 0, 3.2), sigma_in=0.03)  # 3.2 in up, off the tower (x < 8)
    stands = {m["id"]: (m["z"], m["stands"]) for m in describe(s)["models"]}
    assert stands["a"] == (0.0, "on the table")
    assert stands["c"] == (5.0, "on tower5, 5.00 in")
    assert stands["b"] == (3.2, "3.20 in up, on no piece")
