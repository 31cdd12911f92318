"""The game session: phases, finished moves, declarations and the events they cause."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tablesight.rules.geometry import Base, Pose
from tablesight.rules.ruleset import load_ruleset
from tablesight.rules.scene import Model, Table
from tablesight.rules.session import (
    OLDER_SNAPSHOTS,
    SNAPSHOT_KEYS,
    Session,
    SessionState,
    SnapshotError,
)
from tablesight.rules.verdict import Finding


def game(name: str = "trench-crusade") -> Session:
    base = Base.round(25.4)
    models = {
        "a": Model("a", "red", "a", base, 6.0, Pose(5, 5)),
        "b": Model("b", "red", "b", base, 6.0, Pose(5, 15)),
        "e": Model("e", "blue", "e", base, 6.0, Pose(17, 5)),
    }
    session = Session(load_ruleset(name), Table(30, 20), models)
    for mid, m in models.items():
        session.seen(mid, m.start)
    return session


def kinds(events):
    return [(e.kind, e.rule) for e in events]


def test_a_legal_move_is_reported_with_its_distance():
    s = game()
    assert kinds(s.start_phase(0.0, 0, turn=2, side="red")) == [("phase_started", None)]
    events = s.moved(1.0, 30, "a", Pose(9, 8))  # 3-4-5: 5 in of 6
    assert kinds(events) == [("model_moved", None)]
    assert events[0].measured == pytest.approx(5.0)


def test_over_long_then_moved_back_is_resolved():
    s = game()
    s.start_phase(0.0, 0)
    over = s.moved(1.0, 30, "a", Pose(12, 5))  # 7 in of 6
    assert kinds(over) == [("model_moved", None), ("violation", "movement")]
    assert (over[1].measured, over[1].limit) == (pytest.approx(7.0), 6.0)
    back = s.moved(2.0, 60, "a", Pose(10.5, 5))  # 5.5 in: fixed
    assert kinds(back) == [("model_moved", None), ("resolved", "movement")]


def test_moved_twice_is_judged_on_the_whole_displacement():
    s = game()
    s.start_phase(0.0, 0)
    assert kinds(s.moved(1.0, 30, "a", Pose(9, 5))) == [("model_moved", None)]  # 4 in
    second = s.moved(2.0, 60, "a", Pose(13, 5))  # 4 more: 8 in from the phase start
    assert kinds(second) == [("model_moved", None), ("violation", "movement")]
    assert second[0].measured == pytest.approx(8.0)


def test_a_declaration_after_the_move_rejudges_it():
    s = game()
    s.start_phase(0.0, 0)
    # 9 in towards the enemy at (17, 5): over a Move's 6 ...
    assert ("violation", "movement") in kinds(s.moved(1.0, 30, "a", Pose(14, 5)))
    # ... but a charge (target 12 - 1 = 11 in away, within 12) with a roll of 4 allows
    # 6 + 4 = 10 in: fixed. It ends 3 - 1 = 2 in from the target: a failed charge, which
    # is an advisory, not a violation.
    events = s.declare(2.0, 60, "a", action="charge", target="e", roll=4)
    assert ("resolved", "movement") in kinds(events)
    assert ("advisory", "charge") in kinds(events)
    assert ("violation", "charge") not in kinds(events)


def test_moves_outside_a_phase_are_reported_but_not_judged():
    s = game()
    events = s.moved(1.0, 30, "a", Pose(25, 5))
    assert kinds(events) == [("model_moved", None)]


def test_unknown_model_declaration():
    s = game()
    with pytest.raises(ValueError, match="unknown model 'z'; the roster has: a, b, e"):
        s.declare(0.0, 0, "z", action="charge")


def test_events_are_kept_in_order():
    s = game()
    s.start_phase(0.0, 0)
    s.moved(1.0, 30, "a", Pose(12, 5))
    s.hidden(1.5, 45, "b")
    s.end_phase(3.0, 90)
    assert [e.kind for e in s.events] == [
        "phase_started",
        "model_moved",
        "violation",
        "model_hidden",
        "phase_ended",
    ]
    assert s.events[2].to_dict()["limit"] == 6.0


def test_uncertain_positions_turn_a_hair_over_into_a_close_call():
    s = game()
    s.seen("a", Pose(5, 5), sigma_in=0.05)
    s.start_phase(0.0, 0)
    # 6.10 in of 6: 0.05 past the tolerance; 0.05 at both ends is 0.071 in quadrature
    events = s.moved(1.0, 30, "a", Pose(11.1, 5), sigma_in=0.02)
    assert kinds(events) == [("model_moved", None), ("close_call", "close_call")]
    assert events[1].uncertainty == pytest.approx(0.05 * 2**0.5)
    assert "6.10 in +/- 0.07: too close to call (movement)" in events[1].message
    # once the camera sees it well, the same move is a violation; the call is resolved
    s.sigmas["a"] = s.phase_sigmas["a"] = 0.01
    again = s.declare(2.0, 60, "a", roll=3)
    assert kinds(again) == [("violation", "movement"), ("resolved", "close_call")]


def test_a_snapshot_restores_a_session_that_judges_on_alike():
    import json

    s = game()
    s.start_phase(0.0, 0, turn=3, side="red")
    s.moved(1.0, 30, "a", Pose(12, 5))  # 7 in of 6: a violation
    s.declare(1.5, 45, "b", action="charge", target="e")
    s.decide(2, "accept")  # 0 phase_started, 1 model_moved, 2 the violation
    saved = json.loads(json.dumps(s.snapshot()))  # through JSON, as a match file keeps it
    restored = game()
    restored.restore(saved, list(s.events))
    assert (restored.turn, restored.side, restored.in_phase) == (3, "red", True)
    assert restored.poses["a"] == Pose(12, 5) and restored.phase_start["a"] == Pose(5, 5)
    assert restored.decisions == {2: "accept"}
    assert [e.kind for e, _ in restored.flags()] == ["violation"]
    # the same next step gives the same events, ids included
    assert restored.moved(2.0, 60, "a", Pose(10.5, 5)) == s.moved(2.0, 60, "a", Pose(10.5, 5))
    assert [e.kind for e in restored.events[-2:]] == ["model_moved", "resolved"]


def test_decisions_on_flags_only():
    s = game()
    s.start_phase(0.0, 0)
    s.moved(1.0, 30, "a", Pose(12, 5))
    with pytest.raises(ValueError, match="flag: no violation, advisory or close call has id 0"):
        s.decide(0, "accept")  # the phase_started event
    with pytest.raises(ValueError, match="decision: expected one of accept, dismiss"):
        s.decide(2, "ignore")
    s.decide(2, "dismiss")
    assert s.decisions == {2: "dismiss"}


def test_the_journal_replays_to_the_same_events_and_rejudges_with_a_change():
    import json

    s = game("cosmic-combat-revised")
    assert [k for k, _ in s.take_journal()] == ["seen", "seen", "seen"]  # placed by game()
    assert s.take_journal() == []  # handed on once
    s.start_phase(0.0, 0, turn=1, side="red")
    s.moved(1.0, 30, "a", Pose(9, 5))  # 4 in of 6: legal
    s.declare(2.0, 60, "a", action="move")
    s.set_side("blue")
    journal = json.loads(json.dumps(s.take_journal()))  # as a match file keeps it
    assert [k for k, _ in journal] == ["start_phase", "moved", "declare", "set_side"]
    assert journal[1][1] == {
        "t": 1.0,
        "frame": 30,
        "model_id": "a",
        "pose": [9, 5, 0.0, 0.0],
    }
    assert [e.kind for e in s.events] == ["phase_started", "model_moved"]

    def fresh():
        new = game("cosmic-combat-revised")
        new.events.clear()
        return new

    again = fresh()
    assert again.replay(journal) == s.events
    assert again.side == "blue"
    # the same match with the move declared defensive (half Movement, 3 in): over, and
    # the model has no shield, which the action needs
    changed = [(k, {**a, "action": "defensive"}) if k == "declare" else (k, a) for k, a in journal]
    events = fresh().replay(changed)
    assert [(e.kind, e.rule) for e in events] == [
        ("phase_started", None),
        ("model_moved", None),
        ("violation", "action"),
        ("violation", "movement"),
    ]
    assert (events[3].measured, events[3].limit) == (pytest.approx(4.0), 3.0)
    with pytest.raises(ValueError, match="journal: unknown input 'teleport'"):
        fresh().replay([("teleport", {})])


def test_a_copy_stays_as_it_was_while_the_session_goes_on():
    s = game()
    s.start_phase(0.0, 0)
    s.moved(1.0, 30, "a", Pose(12, 5))  # 7 in of 6: a violation, event 2
    s.declare(1.5, 45, "a", roll=2)
    copy = s.copy()
    s.moved(2.0, 60, "a", Pose(10.5, 5))  # fixed: resolved
    s.declare(2.5, 75, "a", roll=5)
    s.decide(2, "accept")
    assert copy.poses["a"] == Pose(12, 5) and copy.declarations["a"].roll == 2
    assert [(e.kind, f.rule) for e, f in copy.flags()] == [("violation", "movement")]
    assert copy.decisions == {} and s.decisions == {2: "accept"}
    assert s.flags() == []


# -- the session's state: one value, copied, saved and restored field by field ---------------

#: The fields of the state a snapshot does not keep (a restored session starts them afresh).
NOT_KEPT = {"reports", "pose_doubted_since"}
#: What a session is played with, beside its state: fixed for the game.
SETUP = {"ruleset", "table", "models", "tolerance_in", "grid", "_journal"}


def busy() -> Session:
    """A session whose every field of the state differs from a new session's."""
    s = game()
    s.seen("e", Pose(17, 5), 0.02)  # an uncertain pose, kept as the phase's start
    s.place_terrain("wall", [[10, 10], [12, 10], [12, 11], [10, 11]], 2.0, ["obstacle"])
    s.start_phase(0.0, 0, turn=2, side="red")
    s.moved(1.0, 30, "a", Pose(12, 5), 0.01)  # 7 in of 6: a violation, event 2
    s.start_phase(2.0, 60, turn=3, side="blue")  # event 2 undecided: an earlier flag
    s.decide(2, "dismiss")
    s.declare(3.0, 90, "b", roll=4)
    s.moved(4.0, 120, "b", Pose(5, 22.5))  # off the table: a violation, event 6
    s.unit_findings = {"b": [Finding("coherency", "b", "out of coherency", "a", 2.5, 2.0)]}
    s.pose_checked(5.0, 150, "anchors 2 and 3 hidden")
    s.pose_doubted_since = 4.5
    return s


def state_of(s: Session) -> dict[str, object]:
    return {f.name: getattr(s, f.name) for f in dataclasses.fields(SessionState)}


def test_the_state_is_every_field_but_what_the_game_is_played_with():
    # a field added to Session beside its state would be copied, saved and restored by
    # nobody: it belongs in SessionState
    state = {f.name for f in dataclasses.fields(SessionState)}
    assert {f.name for f in dataclasses.fields(Session)} == state | SETUP
    # every field of the state is kept in a snapshot, or is named here as not kept
    assert set(SNAPSHOT_KEYS) == set(busy().snapshot()) == state - NOT_KEPT


def test_a_snapshot_through_json_restores_every_field():
    s = busy()
    fresh = state_of(game())
    changed = state_of(s)
    # the test covers every field: each differs from a new session's
    assert [k for k in SNAPSHOT_KEYS if changed[k] == fresh[k]] == []
    restored = game()
    restored.restore(json.loads(json.dumps(s.snapshot())), list(s.events))
    assert {k: v for k, v in state_of(restored).items() if k not in NOT_KEPT} == {
        k: v for k, v in changed.items() if k not in NOT_KEPT
    }
    # what a snapshot does not keep starts afresh
    assert (restored.reports, restored.pose_doubted_since) == ({}, None)
    assert restored.snapshot() == s.snapshot()


def test_a_copy_shares_no_container_but_the_events():
    s = busy()
    copy = s.copy()
    assert state_of(copy) == state_of(s)
    assert copy.pose_doubted_since == s.pose_doubted_since  # (not compared by ==)
    for name, value in state_of(s).items():
        if isinstance(value, dict | list) and name != "events":
            assert getattr(copy, name) is not value, name
    assert copy.events is s.events  # only ever appended to
    assert copy.declarations["b"] is not s.declarations["b"]
    assert copy.unit_findings["b"] is not s.unit_findings["b"]
    assert copy.take_journal() == []  # the copy hands on nothing of the session's


@pytest.mark.parametrize(
    ("drop", "added", "refused"),
    [
        ({"poses"}, {}, "snapshot: missing 'poses'"),
        ({"turn", "events"}, {}, "snapshot: missing 'turn', 'events'"),
        (set(), {"teleports": []}, "snapshot: unknown key 'teleports'"),
        ({"side"}, {"sides": "red"}, "snapshot: missing 'side'; unknown key 'sides'"),
        # a key added later missing alone is damage, not an older file's snapshot
        ({"unit_findings"}, {}, "snapshot: missing 'unit_findings'"),
        ({"terrain"}, {}, "snapshot: missing 'terrain'"),
    ],
)
def test_a_snapshot_without_a_key_or_with_an_unknown_one_is_refused(drop, added, refused):
    saved = {k: v for k, v in busy().snapshot().items() if k not in drop} | added
    with pytest.raises(SnapshotError, match=f"^{refused}$"):
        game().restore(saved, [])
    assert issubclass(SnapshotError, ValueError)  # a match file's reader names the file


@pytest.mark.parametrize("age", range(len(OLDER_SNAPSHOTS)))
def test_an_older_match_files_snapshot_restores_as_it_stood_then(age):
    s = game()
    s.start_phase(0.0, 0, turn=2, side="red")
    s.moved(1.0, 30, "a", Pose(12, 5))  # a violation, event 2
    saved = s.snapshot()
    for added in OLDER_SNAPSHOTS[age:]:  # written before these keys were kept
        for key in added:
            del saved[key]
    restored = game()
    restored.restore(saved, list(s.events))
    assert restored.snapshot() == s.snapshot()
    assert [e.id for e, _ in restored.flags()] == [2]


def test_a_charge_away_is_both_illegal_and_failed_and_both_are_listed():
    # Trench Crusade: a charges e (12" away edge to edge: 17 - 5 - 1 = 11) with a 6 on
    # the bonus, but walks 3" away from it: the charge "toward the target" is broken (a
    # violation, 14 in from contact, 3 further than the 11 it started), and the charge
    # failed (an advisory). One rule, one model, one target: two flags, each its own.
    s = game()
    s.start_phase(0.0, 0)
    s.declare(0.5, 15, "a", action="charge", target="e", roll=6)
    events = s.moved(1.0, 30, "a", Pose(2, 5))
    flags = [(e.kind, e.rule) for e in events if e.kind in ("violation", "advisory")]
    assert flags == [("violation", "charge"), ("advisory", "charge")]
    listed = s.flags()
    assert [(e.kind, f.rule, f.advisory) for e, f in listed] == [
        ("violation", "charge", False),
        ("advisory", "charge", True),
    ]
    assert len({e.id for e, _ in listed}) == 2
    # moved back on target: the violation resolves, the failed charge stays (still short)
    back = s.moved(2.0, 60, "a", Pose(8, 5))
    assert [(e.kind, e.rule) for e in back if e.kind == "resolved"] == [("resolved", "charge")]
    assert [(e.kind, f.advisory) for e, f in s.flags()] == [("advisory", True)]
