"""The topic tree and the messages on it, version 1 (``docs/hub.md`` describes both for
anyone writing their own hub or table).

Every message is a JSON object with ``"v": 1``. A table named ``t`` writes
``tablesight/t/status`` (retained), ``tablesight/t/events``, ``tablesight/t/flags``
(retained) and ``tablesight/t/answers``, and reads ``tablesight/t/commands``, which only the
hub writes. A receiver checks each message against the models here and drops (and counts)
one that does not fit; a later version only adds keys.

The types are strict, as ``docs/hub.md`` gives them: an integer is a JSON integer (not
``"1"``, not ``1.0``, not ``true``), a number an integer or a float (not a boolean nor a
string), a boolean ``true`` or ``false``, a string a string. Nothing is coerced.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tablesight.rules.errors import field_path

#: The version of the topics and messages; written in every message as ``v``.
VERSION = 1
ROOT = "tablesight"
#: What a table writes, each a level under ``tablesight/<table>/``.
STATUS, EVENTS, FLAGS, ANSWERS, COMMANDS = "status", "events", "flags", "answers", "commands"
#: Retained: a hub that (re)connects reads every table's status and flags at once.
RETAINED = (STATUS, FLAGS)
#: What a hub subscribes to: every table's every topic.
ALL_TABLES = f"{ROOT}/+/+"

DECISIONS = ("accept", "dismiss")


def topic(table: str, kind: str) -> str:
    return f"{ROOT}/{table}/{kind}"


def split_topic(name: str) -> tuple[str, str] | None:
    """``tablesight/<table>/<kind>`` -> ``(table, kind)``; ``None`` for any other topic."""
    parts = name.split("/")
    if len(parts) != 3 or parts[0] != ROOT or not parts[1]:
        return None
    return parts[1], parts[2]


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps({"v": VERSION, **message}, separators=(",", ":")).encode()


#: Strict types (no string for a number, no boolean for an integer); keys a later
#: version adds are kept, never refused.
STRICT = ConfigDict(extra="allow", strict=True)


class _Message(BaseModel):
    model_config = STRICT
    v: int = Field(ge=1)
    table: str


class Status(_Message):
    """``status`` (retained): the table's game as it stands, or its last will."""

    online: bool
    #: When the table came online (its clock, Unix seconds); absent in the last will.
    since: float | None = None
    #: Why it is offline: "stopped" (it said goodbye) or "connection lost" (its will).
    reason: str | None = None
    game: str | None = None
    title: str | None = None
    #: This game's id: a table that starts a new game (the demo looping) gets a new one,
    #: and its event ids start again at 0.
    game_id: str | None = None
    turn: int | None = None
    phase: str | None = None
    side: str | None = None
    sides: list[str] = []
    #: What the referee is doing: "playing", "camera lost, retrying", "ended", ...
    state: str | None = None
    #: The table's own page (without its token), or None when it serves none.
    url: str | None = None
    #: Events emitted in this game so far.
    events: int = 0


class EventMessage(_Message):
    """``events`` (QoS 1, in order): one event, as the match file has it."""

    game_id: str
    #: The table's wall clock when it published it, Unix milliseconds.
    sent_ms: float
    event: dict[str, Any]

    @property
    def id(self) -> int:
        return int(self.event["id"])


class Flag(BaseModel):
    model_config = STRICT
    id: int
    kind: str
    rule: str
    model: str
    other: str | None = None
    measured: float | None = None
    limit: float | None = None
    uncertainty: float | None = None
    message: str
    label: str | None = None
    headline: str | None = None
    decision: Literal["accept", "dismiss"] | None = None
    #: Who decided: "table" (its own page or keys), or the hub user's judge.
    by: str | None = None
    note: str | None = None


class Flags(_Message):
    """``flags`` (retained): every flag listed now at the table, decided or not."""

    game_id: str
    flags: list[Flag]


class Command(_Message):
    """``commands`` (QoS 1, written by the hub only): a decision on one of a game's flags.
    A ruling is a decision with the judge's note."""

    #: Unique per command: the answer quotes it.
    id: str
    game_id: str
    flag: int
    decision: Literal["accept", "dismiss"]
    by: str = Field(min_length=1, max_length=64)
    note: str | None = Field(default=None, max_length=500)


class Answer(_Message):
    """``answers``: what the table made of a command."""

    command: str
    ok: bool
    error: str | None = None


KINDS: dict[str, type[_Message]] = {
    STATUS: Status,
    EVENTS: EventMessage,
    FLAGS: Flags,
    COMMANDS: Command,
    ANSWERS: Answer,
}


#: The most digits an integer in a message may have (Python converts no more than 4300):
#: a longer one is refused naming its key.
LONGEST_INTEGER = 4300


class _LongInteger:
    """An integer of more than ``LONGEST_INTEGER`` digits, left unconverted."""

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _integer(text: str) -> int | _LongInteger:
    digits = len(text.lstrip("-"))
    return _LongInteger(digits) if digits > LONGEST_INTEGER else int(text)


def read_json(payload: bytes) -> Any:
    """The JSON in ``payload``, with a placeholder where an integer is too long to read
    (never Python's ValueError for it); ``ValueError`` or ``RecursionError`` for what is
    not JSON or nests too deep."""
    return json.loads(payload, parse_int=_integer)


def _long_number(data: Any) -> tuple[str, int] | None:
    """Where the first integer too long to read is in ``data`` (its key's path), and its
    digits; ``None`` when there is none. Walked without recursion (the JSON may nest
    as deep as the reader takes)."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _LongInteger):
            return (field_path(path) if path else "payload"), value.digits
        if isinstance(value, dict):
            stack.extend(((*path, k), v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(value))))
    return None


class MessageError(ValueError):
    """A message that does not fit its topic's format; one line naming the topic and key."""


def one_line(exc: BaseException) -> str:
    """A fault met handling a message, as one short line: its type and the first line of
    what it says."""
    said = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {said}"[:200]


def decode(name: str, payload: bytes) -> _Message | None:
    """The message on topic ``name``, checked; ``None`` for a topic outside the tree (or
    an empty retained message, which clears one); :class:`MessageError` if it does not fit
    (also when it names another table than its topic)."""
    where = split_topic(name)
    if where is None or where[1] not in KINDS or not payload:
        return None
    table, kind = where
    try:
        data = read_json(payload)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise MessageError(f"{name}: not JSON") from None
    except RecursionError:
        raise MessageError(f"{name}: not JSON (nested too deep)") from None
    # (only a payload longer than that many digits can hold one)
    long = _long_number(data) if len(payload) > LONGEST_INTEGER else None
    if long is not None:
        key, digits = long
        raise MessageError(f"{name}: {key}: a number of {digits} digits, too long to read")
    if not isinstance(data, dict):
        raise MessageError(f"{name}: expected a JSON object")
    try:
        message = KINDS[kind].model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise MessageError(f"{name}: {field_path(first['loc'])}: {first['msg']}") from None
    if message.table != table:
        raise MessageError(f"{name}: table: says {message.table!r}, the topic {table!r}")
    return message
