"""Findings over time: a unit's coherency judged again as its mates move, a move's own
findings kept when another model moves, and flags nobody decided kept across phases.

Every base here is 1 in (25.4 mm) across: two models' edges are 1.00 in closer than their
centres. Cosmic Combat (revised): Movement 6 here, a 1 in zone round every enemy (a
violation), coherency within 1 in as one chain (an advisory), tolerance 0.05 in.
"""

from __future__ import annotations

import json

import pytest

from tablesight.rules.geometry import Base, Pose
from tablesight.rules.ruleset import load_ruleset
from tablesight.rules.scene import Model, Table
from tablesight.rules.session import WHEN_OTHERS_MOVE, Session
from tablesight.rules.verdict import RULE_NAMES

INCH = Base.round(25.4)


def game() -> Session:
    """A squad of three in file along x = 5 (centres 1.8 in apart: 0.80 in edge to edge,
    in coherency), a lone red model ``a`` and a blue enemy ``e``."""
    models = {
        "r1": Model("r1", "red", "squad", INCH, 6.0, Pose(5, 5)),
        "r2": Model("r2", "red", "squad", INCH, 6.0, Pose(5, 6.8)),
        "r3": Model("r3", "red", "squad", INCH, 6.0, Pose(5, 8.6)),
        "a": Model("a", "red", "a", INCH, 6.0, Pose(20, 5)),
        "e": Model("e", "blue", "e", INCH, 6.0, Pose(20, 12)),
    }
    session = Session(load_ruleset("cosmic-combat-revised"), Table(30, 20), models)
    for mid, m in models.items():
        session.seen(mid, m.start)
    return session


def said(events):
    return [(e.kind, e.rule, e.model, e.other) for e in events]


def open_flags(session: Session):
    return [(e.kind, f.rule, f.model, f.other) for e, f in session.flags()]


def test_every_rule_says_what_another_models_move_does_to_it():
    assert set(WHEN_OTHERS_MOVE) == set(RULE_NAMES)
    assert {r for r, (what, _) in WHEN_OTHERS_MOVE.items() if what == "rejudged"} == {
        "coherency",
        "close_call",
    }


def test_a_unit_moved_model_by_model_ends_in_coherency():
    s = game()
    s.start_phase(0.0, 0, turn=1, side="red")
    # r1 (5, 5) -> (10, 5): 5.00 in of its 6, legal. Its nearest mate is r2 at (5, 6.8):
    # sqrt(5^2 + 1.8^2) = sqrt(28.24) = 5.314 between centres, 4.31 in edge to edge (r3:
    # sqrt(25 + 3.6^2) = 6.161, 5.16 in), over the 1 in: out of coherency.
    first = s.moved(1.0, 30, "r1", Pose(10, 5))
    assert said(first) == [
        ("model_moved", None, "r1", None),
        ("advisory", "coherency", "r1", "r2"),
    ]
    assert first[1].measured == pytest.approx(28.24**0.5 - 1.0)
    # r2 (5, 6.8) -> (10, 6.8): 5.00 in. r1 and r2 are 1.8 - 1 = 0.80 in apart: linked,
    # r1 is back in. r3, still at (5, 8.6), is now 5.31 in from r2 (the same 5 by 1.8
    # triangle) and 6.161 - 1 = 5.16 in from r1: the unit as it stands leaves r3 out
    # (the straggler, until it moves too).
    second = s.moved(2.0, 60, "r2", Pose(10, 6.8))
    assert said(second) == [
        ("model_moved", None, "r2", None),
        ("advisory", "coherency", "r3", "r2"),
        ("resolved", "coherency", "r1", "r2"),
    ]
    assert second[1].measured == pytest.approx(28.24**0.5 - 1.0)
    # r3 (5, 8.6) -> (10, 8.6): 5.00 in; 0.80 in from r2: the squad is one chain again
    third = s.moved(3.0, 90, "r3", Pose(10, 8.6))
    assert said(third) == [
        ("model_moved", None, "r3", None),
        ("resolved", "coherency", "r3", "r2"),
    ]
    assert open_flags(s) == []
    assert s.unit_findings == {} and s.open_findings == {"r1": [], "r2": [], "r3": []}


def test_a_straggler_is_flagged_once_and_its_numbers_follow_the_unit():
    s = game()
    s.start_phase(0.0, 0)
    s.moved(1.0, 30, "r1", Pose(10, 5))  # 4.31 in from r2, as above
    # r3 (5, 8.6) -> (5, 9.1): 0.5 in further from r2, 9.1 - 6.8 - 1 = 1.30 in: out. Now
    # nobody is linked: r1's nearest is still r2 (4.31 in; r3: sqrt(5^2 + 4.1^2) - 1 =
    # 5.47 in), r2's is r3 (1.30 in, r1 4.31), r3's is r2
    events = s.moved(2.0, 60, "r3", Pose(5, 9.1))
    assert said(events) == [
        ("model_moved", None, "r3", None),
        ("advisory", "coherency", "r2", "r3"),
        ("advisory", "coherency", "r3", "r2"),
    ]
    # r1's finding is the same one (same rule, model, other): not raised again, its
    # numbers as the unit now stands
    flags = {f.model: (e.id, f) for e, f in s.flags()}
    assert flags["r1"][0] == 2  # 0 phase_started, 1 model_moved, 2 the advisory
    assert flags["r3"][1].measured == pytest.approx(1.3)


def test_a_move_into_an_enemy_zone_is_not_undone_by_the_enemy_leaving():
    s = game()
    s.start_phase(0.0, 0, turn=1, side="red")
    # a (20, 5) -> (20, 10.5): 5.50 in of 6; 12 - 10.5 - 1 = 0.50 in from e: inside its
    # 1 in zone. "A model may not move within 1 in of an enemy": a violation.
    moved = s.moved(1.0, 30, "a", Pose(20, 10.5))
    assert said(moved) == [
        ("model_moved", None, "a", None),
        ("violation", "control_zone", "a", "e"),
    ]
    assert moved[1].measured == pytest.approx(0.5)
    # blue moves next (same phase): e (20, 12) -> (20, 17), 5.00 in, 17 - 10.5 - 1 =
    # 5.50 in from a: its own move is legal. a's move still ended in e's zone when it was
    # made (WHEN_OTHERS_MOVE["control_zone"]: kept), so nothing is resolved.
    s.set_side("blue")
    assert said(s.moved(2.0, 60, "e", Pose(20, 17))) == [("model_moved", None, "e", None)]
    assert open_flags(s) == [("violation", "control_zone", "a", "e")]
    assert s.flags()[0][1].measured == pytest.approx(0.5)  # as it was measured
    # a moved again, by its own player: judged again from its phase start, as the table
    # now stands: (20, 5) -> (20, 11), 6.00 in; 17 - 11 - 1 = 5.00 in from e: resolved
    assert said(s.moved(3.0, 90, "a", Pose(20, 11))) == [
        ("model_moved", None, "a", None),
        ("resolved", "control_zone", "a", "e"),
    ]


def test_an_enemy_moving_into_a_zone_is_its_own_move_flagged():
    s = game()
    s.start_phase(0.0, 0)
    assert said(s.moved(1.0, 30, "a", Pose(20, 7))) == [("model_moved", None, "a", None)]
    # e (20, 12) -> (20, 8.5): 3.50 in; 8.5 - 7 - 1 = 0.50 in from a. e's move broke the
    # rule, not a's: only e is flagged
    assert said(s.moved(2.0, 60, "e", Pose(20, 8.5))) == [
        ("model_moved", None, "e", None),
        ("violation", "control_zone", "e", "a"),
    ]


def turn_one() -> Session:
    """Turn 1, red: a moves 7 in of 6 (event 2, a violation) and r1 leaves its squad
    (event 4, an advisory); the players accept the violation."""
    s = game()
    s.start_phase(0.0, 0, turn=1, side="red")
    s.moved(1.0, 30, "a", Pose(27, 5))  # (20, 5) -> (27, 5): 7.00 in of 6
    s.moved(2.0, 60, "r1", Pose(10, 5))  # 4.31 in from r2, as above
    s.decide(2, "accept")
    s.end_phase(3.0, 90)
    return s


def test_undecided_flags_stay_listed_across_turns():
    s = turn_one()
    assert [(e.id, f.rule) for e, f in s.flags()] == [(2, "movement"), (4, "coherency")]
    s.start_phase(4.0, 120, turn=2, side="red")
    # the accepted one leaves the list; the undecided one stays, as it was
    assert [(e.id, e.kind, f.rule, f.model) for e, f in s.flags()] == [
        (4, "advisory", "coherency", "r1")
    ]
    assert s.flags()[0][1].measured == pytest.approx(28.24**0.5 - 1.0)
    # turn 2: r2 joins r1. The new phase judges from the new phase-start poses: r2's move
    # (5, 6.8) -> (10, 6.8) leaves r3 out (a new advisory, event 8; 5 ended turn 1 and 6
    # started turn 2), and r1 is in (r1 has
    # no finding this phase: nothing to resolve). Turn 1's flag is not judged again.
    events = s.moved(5.0, 150, "r2", Pose(10, 6.8))
    assert said(events) == [
        ("model_moved", None, "r2", None),
        ("advisory", "coherency", "r3", "r2"),
    ]
    assert [(e.id, f.model) for e, f in s.flags()] == [(4, "r1"), (8, "r3")]
    # decided in turn 2: listed (with the decision) until the next phase starts
    s.decide(4, "dismiss")
    assert [e.id for e, _ in s.flags()] == [4, 8]
    s.end_phase(6.0, 180)
    s.start_phase(7.0, 210, turn=3, side="red")
    assert [e.id for e, _ in s.flags()] == [8]
    assert s.open_findings == {} and s.unit_findings == {}


def test_earlier_flags_survive_a_snapshot_a_copy_and_the_journal():
    s = game()
    s.take_journal()  # the models placed: the journal from here on
    s.start_phase(0.0, 0, turn=1, side="red")
    s.moved(1.0, 30, "a", Pose(27, 5))
    s.moved(2.0, 60, "r1", Pose(10, 5))
    s.start_phase(4.0, 120, turn=2, side="red")
    s.moved(5.0, 150, "r2", Pose(10, 6.8))
    journal = json.loads(json.dumps(s.take_journal()))  # as a match file keeps it
    listed = [(e.id, f) for e, f in s.flags()]
    assert [i for i, _ in listed] == [2, 4, 7]

    saved = json.loads(json.dumps(s.snapshot()))
    restored = game()
    restored.restore(saved, list(s.events))
    assert [(e.id, f) for e, f in restored.flags()] == listed
    assert [(e.id, f) for e, f in s.copy().flags()] == listed

    again = game()
    again.events.clear()
    again.replay(journal)
    assert again.events == s.events
    assert [(e.id, f) for e, f in again.flags()] == listed
    # and the restored session goes on alike: r3 joins, r3's advisory is resolved
    step = ("moved", {"t": 6.0, "frame": 180, "model_id": "r3", "pose": Pose(10, 8.6)})
    assert restored.moved(**step[1]) == s.moved(**step[1])
    assert [e.id for e, _ in s.flags()] == [2, 4]


def test_an_old_snapshot_without_unit_findings_restores():
    s = game()
    s.start_phase(0.0, 0)
    s.moved(1.0, 30, "a", Pose(27, 5))
    saved = s.snapshot()
    # as match files of 2026-11-21 to 2026-11-24 hold them: nor was the pose's trust kept
    del saved["unit_findings"], saved["earlier_flags"], saved["pose_problem"]
    restored = game()
    restored.restore(saved, list(s.events))
    assert [e.id for e, _ in restored.flags()] == [2]
