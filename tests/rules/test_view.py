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


@pytest.mark.parametrize(
    ("rule", "measured", "limit", "message", "said"),
    [
        # the search went three allowances (18 in of 6) and found no route within them
        (
            "movement",
            18.0,
            6.0,
            'a\'s shortest legal path is longer than 18.00"; its move allows 6.00"',
            "needs over 18.00 in, allowed 6",
        ),
        (
            "charge",
            27.0,
            9.0,
            'a\'s shortest legal path is longer than 27.00"; its charge allows 9.00"',
            "'s charge needs over 27.00 in, allowed 9",
        ),
        # 5.00 - 2.00 = 3.00 in further from contact than it started
        (
            "charge",
            5.0,
            2.0,
            'a\'s charge ended 5.00" from base contact with e, 3.00" further than where it '
            'started (2.00"): a charge moves toward its target',
            "'s charge ended 3.00 in further from e than it started",
        ),
    ],
)
def test_flag_captions_told_apart_by_the_message(rule, measured, limit, message, said):
    assert flag_caption(rule, measured, limit, None, "e", message=message) == said


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


# -- a move's route over levels, with its climbs marked -----------------------------------------


def levels_session(game: str, terrain: list[tuple], start: Pose, end: Pose, movement: float):
    """One model ``a`` (1 in base) moved from ``start`` to ``end`` over ``terrain``, each
    piece climbable; an enemy far off at (25, 20)."""
    models = {
        "a": Model("a", "red", "a", INCH, movement, start),
        "e": Model("e", "blue", "e", INCH, 5.0, Pose(25, 20)),
    }
    s = Session(load_ruleset(game), Table(30, 22), models)
    for piece, polygon, height in terrain:
        s.place_terrain(piece, polygon, height, ["climbable"])
    for mid, m in models.items():
        s.seen(mid, m.start)
    s.start_phase(0, 0, side="red")
    s.moved(1, 30, "a", end)
    return s


def move_of(state: dict, model: str = "a") -> dict:
    return next(m for m in state["models"] if m["id"] == model)["move"]


def test_the_route_over_levels_and_each_climb_on_it():
    # samples/scenarios/necromunda-levels.json: Movement 9, from (2, 10) on the ground up a
    # 2 in crate (x 4..6) and onto a 4 in platform (x 6..10), ending at (8, 10) 4 in up.
    # Straight 6 in; each inch climbed counts: 6 + 2 + 2 = 10 in, over its 9.
    crate = ("crate", [[4, 6], [6, 6], [6, 14], [4, 14]], 2.0)
    platform = ("platform", [[6, 6], [10, 6], [10, 14], [6, 14]], 4.0)
    s = levels_session("necromunda", [crate, platform], Pose(2, 10), Pose(8, 10, 0, 4.0), 9.0)
    state = describe(s)
    move = move_of(state)
    assert (move["straight_in"], move["shortest_in"]) == (6.0, 10.0)
    assert move["route"] == [[2.0, 10.0], [8.0, 10.0]]
    # the centre crosses the crate's edge at x = 4 and the platform's at x = 6
    assert move["climbs"] == [
        {"at": [4.0, 10.0], "from_in": 0.0, "to_in": 2.0, "rise_in": 2.0, "cost_in": 2.0,
         "label": '+2.0"'},
        {"at": [6.0, 10.0], "from_in": 2.0, "to_in": 4.0, "rise_in": 2.0, "cost_in": 2.0,
         "label": '+2.0"'},
    ]  # fmt: skip
    [flag] = state["flags"]
    assert (flag["rule"], flag["measured"], flag["limit"]) == ("movement", 10.0, 9.0)
    assert flag["of_move"] is True  # a flag on the move: the views draw its route
    assert flag["caption"] == "moved 10.00 in, allowed 9"


# A parapet across the whole table, x 12..14, 2 in high; from (10, 10) to (17, 10), 7 in
# in plan, Movement 6; up at x = 12 and down at x = 14.
PARAPET = ("parapet", [[12, 0], [14, 0], [14, 22], [12, 22]], 2.0)
# A 1.5 in step across the table, x 4..6.
STEP = ("step", [[4, 0], [6, 0], [6, 22], [4, 22]], 1.5)


@pytest.mark.parametrize(
    ("game", "piece", "start", "end", "shortest", "climbs"),
    [
        # Necromunda: every inch climbed or descended counts: 7 + 2 + 2 = 11.
        (
            "necromunda",
            PARAPET,
            Pose(10, 10),
            Pose(17, 10),
            11.0,
            [([12, 10], 2.0, 2.0, '+2.0"'), ([14, 10], -2.0, 2.0, '-2.0"')],
        ),
        # Trench Crusade: the same, as the tape follows the model.
        (
            "trench-crusade",
            PARAPET,
            Pose(10, 10),
            Pose(17, 10),
            11.0,
            [([12, 10], 2.0, 2.0, '+2.0"'), ([14, 10], -2.0, 2.0, '-2.0"')],
        ),
        # Cosmic Combat, revised: 2 in up is difficult ground, 2 x 2 = 4 in (its cost, not its
        # height, is said); down like open ground, 2 in. Each climb covers the step on or off
        # the top (the base's depth, 1 in): 1.5 to the foot + 4 + 1 across + 2 + 2.5 = 11.
        (
            "cosmic-combat-revised",
            PARAPET,
            Pose(10, 10),
            Pose(17, 10),
            11.0,
            [([12, 10], 2.0, 4.0, '+2.0" costs 4.0"'), ([14, 10], -2.0, 2.0, '-2.0"')],
        ),
        # Cosmic Combat, revised: a height of 1.5 in rounds down to 1 and is ignored, up
        # and down: 6 in in plan, nothing for the step.
        (
            "cosmic-combat-revised",
            STEP,
            Pose(2, 10),
            Pose(8, 10),
            6.0,
            [([4, 10], 1.5, 0.0, '+1.5" free'), ([6, 10], -1.5, 0.0, '-1.5" free')],
        ),
    ],
)
def test_each_climb_says_its_rise_and_its_cost_where_that_differs(
    game, piece, start, end, shortest, climbs
):
    move = move_of(describe(levels_session(game, [piece], start, end, 6.0)))
    assert move["shortest_in"] == pytest.approx(shortest)
    assert [(c["at"], c["rise_in"], c["cost_in"], c["label"]) for c in move["climbs"]] == [
        ([pytest.approx(x), pytest.approx(y)], rise, cost, label)
        for (x, y), rise, cost, label in climbs
    ]


def test_a_move_on_one_level_has_no_climbs_and_a_unit_flag_is_not_the_moves():
    s = session()  # cosmic-combat-revised: coherency within 1 in
    s.start_phase(0, 0, side="red")
    s.moved(1, 30, "c", Pose(12, 5))  # 2 in on, within its 6; 5.2 - 1 = 4.2 in from b
    state = describe(s)
    assert move_of(state, "c")["climbs"] == []
    [flag] = state["flags"]
    assert flag["rule"] == "coherency" and flag["of_move"] is False


# -- what each charge finding says to viewers -------------------------------------------------


def charge_flags(
    game: str, start: tuple, end: tuple, target_at: tuple, movement: float, roll: int
) -> list[str]:
    """The captions of the flags raised when ``c`` (1 in base) charges ``t`` from ``start``
    to ``end``, having rolled ``roll``."""
    models = {
        "c": Model("c", "red", "c", INCH, movement, Pose(*start)),
        "t": Model("t", "blue", "t", INCH, 6.0, Pose(*target_at)),
    }
    s = Session(load_ruleset(game), Table(30, 22), models)
    for mid, m in models.items():
        s.seen(mid, m.start)
    s.start_phase(0, 0, side="red")
    s.declare(0, 0, "c", "charge", "t", roll)
    s.moved(1, 30, "c", Pose(*end))
    flags = describe(s)["flags"]
    assert all(f["rule"] == "charge" and f["of_move"] for f in flags)
    assert all(f["headline"] == "c's " + f["caption"] for f in flags)
    return sorted(f["caption"] for f in flags)


@pytest.mark.parametrize(
    ("game", "start", "end", "target_at", "movement", "roll", "captions"),
    [
        # Trench Crusade, "toward the target": from 9 - 6 - 1 = 2 in from base contact back
        # to 9 - 3 - 1 = 5 in: 3 in further; and it failed, 5 in from t where 1 was needed.
        (
            "trench-crusade",
            (6, 15),
            (3, 15),
            (9, 15),
            6.0,
            3,
            [
                "charge ended 3.00 in further from t than it started",
                "charge fell short: 5.00 in from t, needed 1",
            ],
        ),
        # Round t on a circle: (6, 10) and (9, 13) are each 3 - 1 = 2 in from contact.
        (
            "trench-crusade",
            (6, 10),
            (9, 13),
            (9, 10),
            6.0,
            3,
            [
                "charge ended no nearer t than it started, 2.00 in from contact",
                "charge fell short: 2.00 in from t, needed 1",
            ],
        ),
        # Necromunda, "the shortest route possible": Movement 8 + 2 swings round t to its
        # far side: the tangent sqrt(7^2 - 1^2) = 6.93 and the arc pi - acos(1/7) = 1.71,
        # 8.64 in, where base contact was 9 - 2 - 1 = 6 in away.
        (
            "necromunda",
            (2, 15),
            (10, 15),
            (9, 15),
            8.0,
            2,
            ["charge took 8.64 in to reach t, the shortest route is 6"],
        ),
        # Necromunda, a failed charge must move its full distance: 2 in of 6 + 3 = 9,
        # ending 12 - 4 - 1 = 7 in from t and from any enemy.
        (
            "necromunda",
            (2, 15),
            (4, 15),
            (12, 15),
            6.0,
            3,
            ["failed charge stopped after 2.00 in, it must go all 9"],
        ),
        # Necromunda, too far: 8 in to base contact (11 - 10 - 1 = 0) with 6 + 1 = 7 allowed.
        ("necromunda", (2, 15), (10, 15), (11, 15), 6.0, 1, ["charge moved 8.00 in, allowed 7"]),
        # Necromunda, no contact and within 1 in: 11 - 9.5 - 1 = 0.5 in from t; 7.5 of 9 in.
        (
            "necromunda",
            (2, 15),
            (9.5, 15),
            (11, 15),
            6.0,
            3,
            ["charge ended 0.50 in from t, must stop 1 away"],
        ),
    ],
)
def test_each_charge_finding_has_its_own_caption(
    game, start, end, target_at, movement, roll, captions
):
    assert charge_flags(game, start, end, target_at, movement, roll) == captions
