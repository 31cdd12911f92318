"""The topic tree and its messages, version 1 (``tablesight.tournament.messages``, described for
others in ``docs/hub.md``): each kind decoded from what a table or the hub sends; a
message that does not fit refused in one line naming its topic and key; keys a later
version adds kept, not refused; topics outside the tree, and the empty message that
clears a retained one, left alone."""

from __future__ import annotations

import json
from typing import Any

import pytest
from paho.mqtt.client import topic_matches_sub

from tablesight.tournament import messages
from tablesight.tournament.messages import MessageError, decode, encode, split_topic, topic

STATUS = {
    "table": "table-7",
    "online": True,
    "since": 1_760_000_000.5,
    "game": "necromunda",
    "title": "Necromunda",
    "game_id": "3f2a9c",
    "turn": 2,
    "phase": "movement",
    "side": "goliath",
    "sides": ["goliath", "escher"],
    "state": "playing",
    "url": "http://192.168.1.37:5000/",
    "events": 12,
}
EVENT = {
    "table": "table-7",
    "game_id": "3f2a9c",
    "sent_ms": 1_760_000_012_345.0,
    "event": {
        "id": 11,
        "t": 84.2,
        "kind": "violation",
        "rule": "movement",
        "model": "ganger-2",
        "measured": 7.21,
        "limit": 5.0,
        "message": 'ganger-2 moved 7.21" by the shortest legal path; its move allows 5.00"',
    },
}
FLAG = {
    "id": 11,
    "kind": "violation",
    "rule": "movement",
    "model": "ganger-2",
    "measured": 7.21,
    "limit": 5.0,
    "uncertainty": 0.04,
    "message": 'ganger-2 moved 7.21"; its move allows 5.00"',
}
FLAGS = {"table": "table-7", "game_id": "3f2a9c", "flags": [FLAG]}
COMMAND = {
    "table": "table-7",
    "id": "9b1e0c",
    "game_id": "3f2a9c",
    "flag": 11,
    "decision": "dismiss",
    "by": "Head judge",
    "note": "the wall is a ruin: the ganger went through it",
}
ANSWER = {"table": "table-7", "command": "9b1e0c", "ok": False, "error": "no flag 11 open"}

KINDS = {
    messages.STATUS: (STATUS, messages.Status),
    messages.EVENTS: (EVENT, messages.EventMessage),
    messages.FLAGS: (FLAGS, messages.Flags),
    messages.COMMANDS: (COMMAND, messages.Command),
    messages.ANSWERS: (ANSWER, messages.Answer),
}


def sent(body: dict[str, Any], **changes: Any) -> bytes:
    """``body`` as it goes over the broker (``encode``: with ``v``), changed; a change
    to ``None`` leaves the key out."""
    changed = {**body, **changes}
    return encode({k: v for k, v in changed.items() if v is not None})


def refusal(kind: str, payload: bytes) -> str:
    """What ``decode`` says of ``payload`` on table-7's ``kind``: one line starting with the
    topic (the test fails if it takes the message)."""
    name = topic("table-7", kind)
    with pytest.raises(MessageError) as refused:
        decode(name, payload)
    line = str(refused.value)
    assert line.startswith(f"{name}: ") and "\n" not in line, line
    return line


# -- each kind ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_decodes_to_its_message(kind: str) -> None:
    body, model = KINDS[kind]

    message = decode(topic("table-7", kind), encode(body))

    assert isinstance(message, model)
    assert message.v == messages.VERSION == 1
    assert message.model_dump(exclude_unset=True) == {"v": 1, **body}


def test_the_messages_say_what_the_hub_reads() -> None:
    status = decode("tablesight/table-7/status", encode(STATUS))
    assert isinstance(status, messages.Status)
    assert (status.online, status.turn, status.sides) == (True, 2, ["goliath", "escher"])

    event = decode("tablesight/table-7/events", encode(EVENT))
    assert isinstance(event, messages.EventMessage)
    assert (event.id, event.game_id, event.event["kind"]) == (11, "3f2a9c", "violation")

    flags = decode("tablesight/table-7/flags", encode(FLAGS))
    assert isinstance(flags, messages.Flags)
    assert flags.flags[0].decision is None and flags.flags[0].measured == 7.21

    command = decode("tablesight/table-7/commands", encode(COMMAND))
    assert isinstance(command, messages.Command)
    assert (command.flag, command.decision, command.by) == (11, "dismiss", "Head judge")


def test_a_last_will_says_only_that_the_table_is_offline() -> None:
    will = encode({"table": "table-7", "online": False, "reason": "connection lost"})

    status = decode("tablesight/table-7/status", will)

    assert isinstance(status, messages.Status)
    assert (status.online, status.reason, status.game_id, status.since) == (
        False,
        "connection lost",
        None,
        None,
    )
    assert status.model_fields_set == {"v", "table", "online", "reason"}


def test_encode_is_compact_json_with_the_version_first() -> None:
    payload = encode({"table": "t", "online": True})

    assert payload == b'{"v":1,"table":"t","online":true}'
    assert json.loads(payload) == {"v": 1, "table": "t", "online": True}


# -- what does not fit -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "payload", "says"),
    [
        # the table in the message is not the topic's
        ("status", sent(STATUS, table="table-8"), "table: says 'table-8', the topic 'table-7'"),
        ("events", sent(EVENT, table="table-1"), "table: says 'table-1', the topic 'table-7'"),
        ("commands", sent(COMMAND, table="table-8"), "table: says 'table-8'"),
        # a key the kind needs, missing
        ("events", sent(EVENT, game_id=None), "game_id: Field required"),
        ("flags", sent(FLAGS, game_id=None), "game_id: Field required"),
        ("commands", sent(COMMAND, game_id=None), "game_id: Field required"),
        ("events", sent(EVENT, event=None), "event: Field required"),
        ("status", sent(STATUS, online=None), "online: Field required"),
        ("answers", sent(ANSWER, ok=None), "ok: Field required"),
        ("status", sent(STATUS, table=None), "table: Field required"),
        ("status", json.dumps({**STATUS}).encode(), "v: Field required"),
        # a value that is not one the key takes
        ("commands", sent(COMMAND, decision="maybe"), "decision: Input should be 'accept' or"),
        ("commands", sent(COMMAND, flag="eleven"), "flag: Input should be a valid integer"),
        ("commands", sent(COMMAND, by=""), "by: String should have at least 1 character"),
        ("commands", sent(COMMAND, note="x" * 501), "note: String should have at most 500"),
        ("flags", sent(FLAGS, flags=[{**FLAG, "decision": "maybe"}]), "flags[0].decision: "),
        ("flags", sent(FLAGS, flags=[{**FLAG, "message": None}]), "flags[0].message: "),
        ("status", sent(STATUS, turn="second"), "turn: Input should be a valid integer"),
        ("status", sent(STATUS, v=0), "v: Input should be greater than or equal to 1"),
        # not a JSON object at all
        ("commands", b"accept flag 11", "not JSON"),
        ("status", b"\xff\xfe{}", "not JSON"),
        ("events", b'{"v": 1, "table": ', "not JSON"),
        ("flags", b"[1, 2]", "expected a JSON object"),
        ("status", b"null", "expected a JSON object"),
    ],
)
def test_a_message_that_does_not_fit_is_one_line_naming_the_topic_and_key(
    kind: str, payload: bytes, says: str
) -> None:
    line = refusal(kind, payload)

    assert says in line, line


# -- strict types --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "payload", "says"),
    [
        # a string is not an integer, nor a number, nor a boolean
        ("status", sent(STATUS, v="1"), "v: Input should be a valid integer"),
        ("status", sent(STATUS, turn="2"), "turn: Input should be a valid integer"),
        ("status", sent(STATUS, events="12"), "events: Input should be a valid integer"),
        ("status", sent(STATUS, since="1760000000.5"), "since: Input should be a valid number"),
        ("status", sent(STATUS, online="true"), "online: Input should be a valid boolean"),
        ("commands", sent(COMMAND, flag="5"), "flag: Input should be a valid integer"),
        ("flags", sent(FLAGS, flags=[{**FLAG, "id": "11"}]), "flags[0].id: Input should be"),
        ("flags", sent(FLAGS, flags=[{**FLAG, "measured": "7.21"}]), "flags[0].measured: "),
        ("events", sent(EVENT, sent_ms="1760000012345"), "sent_ms: Input should be a valid"),
        ("answers", sent(ANSWER, ok="false"), "ok: Input should be a valid boolean"),
        # a boolean is not an integer, nor a number
        ("status", sent(STATUS, v=True), "v: Input should be a valid integer"),
        ("status", sent(STATUS, turn=True), "turn: Input should be a valid integer"),
        ("commands", sent(COMMAND, flag=True), "flag: Input should be a valid integer"),
        ("flags", sent(FLAGS, flags=[{**FLAG, "id": False}]), "flags[0].id: Input should be"),
        ("flags", sent(FLAGS, flags=[{**FLAG, "limit": True}]), "flags[0].limit: Input should"),
        ("events", sent(EVENT, sent_ms=True), "sent_ms: Input should be a valid number"),
        # an integer is not a boolean, a float not an integer, a number not a string
        ("answers", sent(ANSWER, ok=1), "ok: Input should be a valid boolean"),
        ("status", sent(STATUS, online=0), "online: Input should be a valid boolean"),
        ("commands", sent(COMMAND, flag=11.0), "flag: Input should be a valid integer"),
        ("status", sent(STATUS, turn=2.0), "turn: Input should be a valid integer"),
        ("commands", sent(COMMAND, id=9), "id: Input should be a valid string"),
        ("status", sent(STATUS, sides="goliath"), "sides: Input should be a valid list"),
    ],
)
def test_a_value_of_another_type_is_refused_not_coerced(
    kind: str, payload: bytes, says: str
) -> None:
    line = refusal(kind, payload)

    assert says in line, line


def test_an_integer_is_a_number_where_a_number_is_asked() -> None:
    status = decode("tablesight/table-7/status", sent(STATUS, since=1_760_000_000))
    assert isinstance(status, messages.Status)
    assert status.since == 1_760_000_000.0 and isinstance(status.since, float)

    flags = decode("tablesight/table-7/flags", sent(FLAGS, flags=[{**FLAG, "limit": 5}]))
    assert isinstance(flags, messages.Flags)
    assert flags.flags[0].limit == 5.0


@pytest.mark.parametrize(
    ("payload", "says"),
    [
        # 5,000 digits: more than Python turns into an integer; named by its key
        (
            b'{"v": 1, "table": "table-7", "flag": ' + b"7" * 5000 + b"}",
            "flag: a number of 5000 digits, too long to read",
        ),
        (
            b'{"v": 1, "flags": [{"id": 1}, {"id": -' + b"7" * 4301 + b"}]}",
            "flags[1].id: a number of 4301 digits, too long to read",
        ),
        (b"7" * 5000, "payload: a number of 5000 digits, too long to read"),
        (b"[" * 100_000 + b"]" * 100_000, "not JSON (nested too deep)"),
        (b'{"a": ' * 100_000 + b"1" + b"}" * 100_000, "not JSON (nested too deep)"),
    ],
)
def test_a_payload_python_cannot_read_is_one_line_too(payload: bytes, says: str) -> None:
    line = refusal(messages.COMMANDS, payload)

    assert line == f"tablesight/table-7/commands: {says}"


# -- a later version ---------------------------------------------------------------------


def test_keys_a_later_version_adds_are_kept() -> None:
    later = sent(
        STATUS,
        v=2,
        weather="fog",  # a new key at the top
        score={"goliath": 3, "escher": 1},
    )
    status = decode("tablesight/table-7/status", later)

    assert isinstance(status, messages.Status)
    assert status.v == 2
    assert status.model_extra == {"weather": "fog", "score": {"goliath": 3, "escher": 1}}
    assert status.model_dump()["weather"] == "fog"

    flag = {**FLAG, "cover": "partial"}  # and inside a flag
    flags = decode("tablesight/table-7/flags", sent(FLAGS, flags=[flag], round=3))
    assert isinstance(flags, messages.Flags)
    assert flags.flags[0].model_extra == {"cover": "partial"}
    assert flags.model_extra == {"round": 3}


# -- the topic tree ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "other/table-7/status",  # another root
        "TableSight/table-7/status",  # topics are case-sensitive
        "tablesight/table-7/status/extra",  # a level too many
        "tablesight/table-7",  # a level too few
        "tablesight",
        "tablesight//status",  # no table
        "tablesight/table-7/",  # no kind
        "tablesight/table-7/scores",  # a kind version 1 does not know
        "$SYS/broker/uptime",
    ],
)
def test_a_topic_outside_the_tree_is_ignored(name: str) -> None:
    assert decode(name, encode(STATUS)) is None
    assert decode(name, b"not JSON") is None  # ignored, not even read


def test_an_empty_message_clears_a_retained_one_and_is_no_message() -> None:
    for kind in messages.KINDS:
        assert decode(topic("table-7", kind), b"") is None


def test_the_tree_names_a_table_and_kind_per_topic() -> None:
    for kind in messages.KINDS:
        name = topic("table-7", kind)
        assert name == f"tablesight/table-7/{kind}"
        assert split_topic(name) == ("table-7", kind)
        assert topic_matches_sub(messages.ALL_TABLES, name)  # what a hub subscribes to
    assert messages.RETAINED == ("status", "flags")
    assert messages.DECISIONS == ("accept", "dismiss")
    assert split_topic("tablesight/table-7/status/x") is None
    assert not topic_matches_sub(messages.ALL_TABLES, "tablesight/table-7/status/x")
