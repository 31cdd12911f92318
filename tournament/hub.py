"""Every table's state as the broker tells it (``tablesight hub``).

The hub is one MQTT client, ``tablesight-hub-<name>``, with a persistent session
(``clean_session=False``): subscribed to ``tablesight/+/+`` at QoS 1 on every connect, it
gets every table's retained status and flags at once, and the broker keeps the QoS 1
events sent while the hub was away (or while the broker restarted, with its persistence
on) and delivers them when it is back.

Per table it keeps what the page shows, and nothing that grows: the status as last said,
the events of the current game counted (a QoS 1 message may come twice: only the highest
event id seen in the game is kept, and what comes at or under it is a duplicate, what
skips ids a gap), the last ``RECENT_EVENTS`` events, the flags of the current game, the
last ``MAX_COMMANDS`` commands sent to it with their answers. A message that does not fit
the contract (:mod:`tablesight.tournament.messages`) is counted, its one-line problem kept, and
never stops the hub. A table whose game id changes (the demo looping) starts its counts
again; an earlier game's events or flags coming late are dropped.

A game the hub first meets under way (its first status there counts events already, or
its first event there is after id 0: the hub started during it) counts gaps only after the
first event received of it, wherever that is: what came before was sent before the hub's
session was on the broker, so nothing was lost. With that session kept, the events queued
while the hub was away come after the retained status, and the first of them is where the
count starts. A game the hub saw begin (a status counting 0 events, or event 0) counts
every id missing as a gap.

A judge's decision on a flag goes to the table as a :class:`~tablesight.tournament.messages.Command`
(``tablesight/<table>/commands``, QoS 1), and the table's answer is matched to it.

The address each table gives for its own page is tried in the background, so that the
page links to it only when it can be reached; and only so far as it is safe for the
judges' machine, whatever a table says (the broker does not tell the hub where a table
connects from, so the address is the table's word): see :func:`page_target`. Only
``http://ADDRESS:PORT/`` is tried, ADDRESS an IP address (never a name: no look-up to
rebind) of a private network or loopback (never a public, link-local, multicast or
unspecified one), PORT from ``LOWEST_PAGE_PORT`` up, the path ``/`` and nothing after it;
with one ``GET /`` that reads no more than the status line (``CHECK_TIMEOUT_S`` in all)
and follows no redirect (only a 2xx is reachable); at most once per table name every
``CHECK_EVERY_S``, whatever its statuses say in between (a new address waits its turn).
``reachable`` is ``None`` for an address not tried.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import re
import socket
import threading
import time
import uuid
from collections import OrderedDict, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import paho.mqtt.client as mqtt
from pydantic import ValidationError

from tablesight.rules.errors import InputError, field_path
from tablesight.tournament import messages
from tablesight.tournament.link import NAME_RE, BrokerLink

log = logging.getLogger("tablesight.hub")

#: The events kept per table for its details (the newest).
RECENT_EVENTS = 50
#: The tables kept at most; a message from one more is a problem.
MAX_TABLES = 500
#: The flags kept per table (a game lists a few).
MAX_FLAGS = 200
#: The commands kept per table with their answers (the newest).
MAX_COMMANDS = 20
#: Earlier games remembered per table, so that their late messages are known as late.
PAST_GAMES = 16
#: A message longer than this (bytes) is a problem, not read.
MAX_PAYLOAD = 256 * 1024
#: The longest problem line kept.
PROBLEM_CHARS = 300
#: A table's problems are logged (one line each) at most this often (s).
PROBLEM_LOG_EVERY_S = 10.0
#: How often each table's page address is tried at most (s), how long a try waits (s),
#: and how many are tried at once.
CHECK_EVERY_S = 30.0
CHECK_TIMEOUT_S = 1.0
CHECKERS = 4
#: Where a table's page may be tried: an address of a private network (the venue's) or
#: this machine's loopback. Not link-local (169.254.169.254 is a cloud's metadata
#: service), not public, not the documentation ranges.
PAGE_NETWORKS = tuple(
    ipaddress.ip_network(n)
    for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "127.0.0.0/8", "::1/128", "fc00::/7")
)
#: The lowest port tried: a table serves its page on a port of its own (5000 by default),
#: not on a system service's.
LOWEST_PAGE_PORT = 1024
#: The status line a page's answer starts with.
STATUS_LINE = re.compile(rb"HTTP/1\.[01] ([0-9]{3})[ \r]")
#: What an event keeps of what a table sends.
EVENT_KEYS = (
    "id",
    "t",
    "kind",
    "message",
    "rule",
    "model",
    "other",
    "measured",
    "limit",
    "uncertainty",
)
#: A status's description of the game, copied as a whole when the table is online.
GAME_FIELDS = ("game", "title", "turn", "phase", "side", "state")
FLAG_FIELDS = set(messages.Flag.model_fields)


class UnknownTable(KeyError):
    """No table of that name has been heard from."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name

    def __str__(self) -> str:
        return f"table: no table named {self.name!r} has been heard from"


@dataclass
class _Every:
    """Log lines at most once every ``PROBLEM_LOG_EVERY_S``, counting those held back."""

    last: float | None = None
    held: int = 0

    def due(self) -> int | None:
        """How many were held back since the last line, when one is due now; ``None`` (and
        this one held back too) when not."""
        now = time.monotonic()
        if self.last is not None and now - self.last < PROBLEM_LOG_EVERY_S:
            self.held += 1
            return None
        held, self.last, self.held = self.held, now, 0
        return held


@dataclass(eq=False)
class _Table:
    """One table as the hub knows it (every field bounded)."""

    name: str
    #: When the hub first heard of it (Unix s).
    first_seen: float
    heard_status: bool = False
    online: bool = False
    since: float | None = None
    reason: str | None = None
    game: str | None = None
    title: str | None = None
    game_id: str | None = None
    turn: int | None = None
    phase: str | None = None
    side: str | None = None
    sides: list[str] = field(default_factory=list)
    state: str | None = None
    url: str | None = None
    #: Events the table says it emitted in this game (its status's ``events``).
    published: int = 0
    #: Events received in this game, once each; the highest id among them.
    events: int = 0
    highest: int = -1
    duplicates: int = 0
    gaps: int = 0
    #: Whether the hub met this game under way (``None`` until its first status or event
    #: says): then the first event received is where counting starts, with no gaps before.
    midway: bool | None = None
    #: Messages of an earlier game that came after a later one's.
    late: int = 0
    last_event: dict[str, Any] | None = None
    recent: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=RECENT_EVENTS))
    past: deque[str] = field(default_factory=lambda: deque(maxlen=PAST_GAMES))
    flags: list[dict[str, Any]] = field(default_factory=list)
    commands: OrderedDict[str, dict[str, Any]] = field(default_factory=OrderedDict)
    answer: dict[str, Any] | None = None
    problems: int = 0
    problem: str | None = None
    #: Where its page is tried (:func:`page_target`), or why it is not (``None`` both
    #: without an address); whether it answered there (``None``: not tried at this address).
    target: tuple[str, int] | None = None
    unchecked: str | None = None
    reachable: bool | None = None
    #: The hub's version when this table last changed.
    version: int = 0
    #: Its problems' log lines.
    problem_lines: _Every = field(default_factory=_Every)


def _page_url(url: str | None) -> str | None:
    """A table's page address if it is one a browser may be sent to (http or https)."""
    if not url or len(url) > 2000:
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    return url if parts.scheme in ("http", "https") and parts.hostname else None


def page_target(url: str | None) -> tuple[str, int] | str:
    """Where a table's page may be tried, ``(address, port)``, or why not, in a few words.

    Only ``http://ADDRESS:PORT/``: ADDRESS an IP address in :data:`PAGE_NETWORKS` (a name
    would be looked up, and a look-up can be made to answer anything), PORT from
    :data:`LOWEST_PAGE_PORT`, the path ``/`` with no user, query or fragment."""
    if not url:
        return "no address"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "not an address"
    if parts.scheme != "http":
        return "not http://"
    if parts.username is not None or parts.password is not None:
        return "a user name in it"
    if parts.path != "/" or parts.query or parts.fragment or url.endswith(("?", "#")):
        return "a path other than /"
    try:
        address = ipaddress.ip_address(parts.hostname or "")
    except ValueError:
        return "a name, not an IP address"
    if not any(address in network for network in PAGE_NETWORKS):
        return "not a private network's address"
    if port is None or port < LOWEST_PAGE_PORT:
        return f"no port from {LOWEST_PAGE_PORT} up"
    return str(address), port


def reachable(address: str, port: int, timeout: float = CHECK_TIMEOUT_S) -> bool:
    """Whether ``GET /`` at ``address:port`` answers with a 2xx, read within ``timeout``
    seconds in all. Only the status line is read; a redirect is not followed (it is not
    the table's page)."""
    end = time.monotonic() + timeout
    host = f"[{address}]" if ":" in address else address
    request = (
        f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUser-Agent: TableSight hub\r\n"
        "Accept: text/html\r\nConnection: close\r\n\r\n"
    ).encode()
    head = b""
    try:
        with socket.create_connection((address, port), timeout=timeout) as sock:
            sock.sendall(request)
            while b"\n" not in head and len(head) < 512:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                sock.settimeout(left)
                chunk = sock.recv(512)
                if not chunk:
                    break
                head += chunk
    except OSError:
        return False
    answered = STATUS_LINE.match(head)
    return answered is not None and 200 <= int(answered.group(1)) < 300


def _open_flags(table: _Table) -> tuple[int, int]:
    """The table's undecided violations, and its other undecided flags."""
    undecided = [f for f in table.flags if f.get("decision") is None]
    violations = sum(1 for f in undecided if f.get("kind") == "violation")
    return violations, len(undecided) - violations


def _row(table: _Table) -> dict[str, Any]:
    """What the list shows of a table (copies: the caller may keep them)."""
    violations, others = _open_flags(table)
    return {
        "name": table.name,
        "status": "online" if table.online else "offline",
        "since": table.since if table.since is not None else table.first_seen,
        "reason": table.reason,
        "game": table.game,
        "title": table.title,
        "game_id": table.game_id,
        "turn": table.turn,
        "phase": table.phase,
        "side": table.side,
        "sides": list(table.sides),
        "state": table.state,
        "url": table.url,
        "reachable": table.reachable,
        "unchecked": table.unchecked,
        "events": table.events,
        "published": table.published,
        "duplicates": table.duplicates,
        "gaps": table.gaps,
        "violations": violations,
        "open_flags": violations + others,
        "flags": [dict(f) for f in table.flags],
        "last_event": dict(table.last_event) if table.last_event else None,
        "answer": dict(table.answer) if table.answer else None,
        "problems": table.problems,
        "problem": table.problem,
        "version": table.version,
    }


def _order(table: _Table) -> tuple[int, int, int, str]:
    """The tables needing a judge first: the most undecided violations, then other
    undecided flags, then offline before online, then by name."""
    violations, others = _open_flags(table)
    return (-violations, -others, 1 if table.online else 0, table.name)


class Hub:
    """Every table heard on the broker at ``link``, as the hub ``name`` (its session)."""

    def __init__(
        self,
        link: BrokerLink,
        name: str,
        *,
        check_every_s: float = CHECK_EVERY_S,
        check_timeout_s: float = CHECK_TIMEOUT_S,
    ) -> None:
        self.link = link
        self.name = name
        self.client_id = f"tablesight-hub-{name}"
        self.check_every_s = check_every_s
        self.check_timeout_s = check_timeout_s
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        #: Goes up with every change to what :meth:`tables` shows.
        self.version = 0
        self.closing = False
        self.connected = False
        #: Messages that did not fit, in all, and the last one's problem.
        self.problems = 0
        self.problem: str | None = None
        #: The log lines of the problems of no table.
        self._problem_lines = _Every()
        #: Why the hub is not on the broker, as its last try found (refused: "Not
        #: authorized"; or not reached), until it is connected.
        self.refused: str | None = None
        self._tables: dict[str, _Table] = {}
        #: When each table name's page was last tried (monotonic s), kept while it may not
        #: be tried again: a table cleared and heard from again is still not tried sooner.
        self._tried: dict[str, float] = {}
        self._subscribed = threading.Event()
        self._stop = threading.Event()
        self.client = link.client(self.client_id, clean_session=False)
        self.client.on_connect = self._on_connect
        self.client.on_connect_fail = self._on_connect_fail
        self.client.on_disconnect = self._on_disconnect
        self.client.on_subscribe = self._on_subscribe
        self.client.on_message = self._on_message
        self._pool = ThreadPoolExecutor(CHECKERS, thread_name_prefix="hub-check")
        self._checker = threading.Thread(target=self._check_pages, name="hub-pages", daemon=True)
        self._started = False

    # -- running -------------------------------------------------------------------------

    def start(self) -> Hub:
        """Start connecting (and reconnecting) to the broker, and trying the tables' pages;
        never waits for the broker."""
        self._started = True
        self.link.connect(self.client)
        self._checker.start()
        return self

    def wait_subscribed(self, timeout: float) -> bool:
        """Until the broker has taken the hub's subscription (after its first connect)."""
        return self._subscribed.wait(timeout)

    def close(self) -> None:
        """Leave the broker (the session stays there, collecting events) and stop."""
        with self._changed:
            if self.closing:
                return
            self.closing = True
            self._changed.notify_all()
        self._stop.set()
        if self._started:
            self.client.disconnect()
            self.client.loop_stop()
            self._checker.join(timeout=5)
        self._pool.shutdown(wait=False, cancel_futures=True)

    def wait_for_change(self, version: int, timeout: float) -> int:
        """The version once it is not ``version`` (or the hub closes), or after
        ``timeout`` seconds."""
        with self._changed:
            self._changed.wait_for(lambda: self.version != version or self.closing, timeout)
            return self.version

    def _bump(self, table: _Table | None = None) -> None:
        """Under the lock: what the tables show changed (``table``'s row, if given)."""
        self.version += 1
        if table is not None:
            table.version = self.version
        self._changed.notify_all()

    # -- what is shown -------------------------------------------------------------------

    def tables(self) -> list[dict[str, Any]]:
        """Every table, those needing a judge first (:func:`_order`)."""
        with self._lock:
            return [_row(t) for t in sorted(self._tables.values(), key=_order)]

    def changes(self, since: int) -> tuple[int, list[str], list[dict[str, Any]]]:
        """The version now, every table's name in :meth:`tables`'s order, and the rows of
        the tables that changed after version ``since`` (all of them for ``-1``), read
        together."""
        with self._lock:
            order = sorted(self._tables.values(), key=_order)
            rows = [_row(t) for t in order if t.version > since]
            return self.version, [t.name for t in order], rows

    def table(self, name: str) -> dict[str, Any]:
        """One table with its last events (oldest first) and the commands sent to it
        (newest first); :class:`UnknownTable` if none of that name was heard from."""
        with self._lock:
            table = self._tables.get(name)
            if table is None:
                raise UnknownTable(name)
            return {
                **_row(table),
                "last_events": [dict(e) for e in table.recent],
                "commands": [dict(c) for c in reversed(table.commands.values())],
                "late": table.late,
                "first_seen": table.first_seen,
            }

    def state(self) -> dict[str, Any]:
        """The hub itself: its broker, whether it is connected, the problems in all."""
        with self._lock:
            return {
                "name": self.name,
                "broker": self.link.url,
                "connected": self.connected,
                "tables": len(self._tables),
                "problems": self.problems,
                "problem": self.problem,
                # why the broker would not have the hub, while it would not
                "refused": self.refused,
            }

    # -- decisions -----------------------------------------------------------------------

    def decide(self, table: str, flag: int, decision: str, by: str, note: str | None = None) -> str:
        """Send ``table`` a judge's decision on its flag ``flag`` in its current game;
        the command's id. :class:`UnknownTable`, or :class:`InputError` naming the field
        (``flag``, ``decision``, ``by``, ``note``)."""
        if isinstance(flag, bool) or not isinstance(flag, int):
            raise InputError(f"flag: expected a flag's number, got {flag!r}"[:200])
        if decision not in messages.DECISIONS:
            raise InputError(f"decision: expected accept or dismiss, got {decision!r}"[:200])
        if not isinstance(by, str) or not by.strip():
            raise InputError("by: give the judge's name")
        if note is not None and not isinstance(note, str):
            raise InputError("note: expected text")
        by, note = by.strip(), (note.strip() or None) if note is not None else None
        with self._lock:
            shown = self._tables.get(table)
            if shown is None:
                raise UnknownTable(table)
            if shown.game_id is None:
                raise InputError(f"flag: table {table!r} has no game running")
            if not shown.online:
                # a table's session is clean: a command sent while it is away is lost
                raise InputError(
                    f"table: {table!r} is offline ({shown.reason or 'gone'}); decide once it "
                    "is back"
                )
            listed = next((f for f in shown.flags if f.get("id") == flag), None)
            if listed is None:
                raise InputError(f"flag: table {table!r} has no flag {flag} in its game")
            try:
                command = messages.Command(
                    v=messages.VERSION,
                    table=table,
                    id=uuid.uuid4().hex,
                    game_id=shown.game_id,
                    flag=flag,
                    decision=decision,  # type: ignore[arg-type]
                    by=by,
                    note=note,
                )
            except ValidationError as exc:
                first = exc.errors()[0]
                raise InputError(f"{field_path(first['loc'])}: {first['msg']}") from None
            self._remember(
                shown,
                {
                    "id": command.id,
                    "game_id": command.game_id,
                    "flag": flag,
                    "model": listed.get("model"),
                    "decision": decision,
                    "by": by,
                    "note": note,
                    "sent_ms": time.time() * 1000.0,
                    "mine": True,
                    "queued": False,
                    "answer": None,
                },
            )
            self._bump(shown)
        body = command.model_dump(exclude={"v"})
        info = self.client.publish(
            messages.topic(table, messages.COMMANDS), messages.encode(body), qos=1
        )
        if info.rc == mqtt.MQTT_ERR_NO_CONN:  # sent when the hub is connected again
            with self._lock:
                sent = shown.commands.get(command.id)
                if sent is not None:
                    sent["queued"] = True
                    self._bump(shown)
        elif info.rc != mqtt.MQTT_ERR_SUCCESS:
            raise InputError(f"flag: the command could not be sent: {mqtt.error_string(info.rc)}")
        return command.id

    @staticmethod
    def _remember(table: _Table, command: dict[str, Any]) -> None:
        table.commands[command["id"]] = command
        while len(table.commands) > MAX_COMMANDS:
            table.commands.popitem(last=False)

    # -- the broker's callbacks (paho's thread) ------------------------------------------

    def _on_connect(
        self, client: mqtt.Client, _data: Any, _flags: Any, reason: Any, _props: Any
    ) -> None:
        if reason.is_failure:
            self._not_taken(self.link.refused(reason))
            return
        client.subscribe(messages.ALL_TABLES, qos=1)
        with self._lock:
            self.connected = True
            told, self.refused = self.refused, None
            self._bump()
        if told is not None:
            log.warning("hub %s: connected to the broker %s", self.name, self.link.url)

    def _on_connect_fail(self, _client: mqtt.Client, _data: Any) -> None:
        self._not_taken(self.link.unreachable())

    def _not_taken(self, line: str) -> None:
        """The broker did not take the hub, or could not be reached: shown on the page, and
        said once (not at every try) until it is connected again."""
        with self._lock:
            self.connected = False
            told, self.refused = self.refused, line
            self._bump()
        if told != line:
            log.warning("hub %s: %s; trying again", self.name, line)

    def _on_disconnect(
        self, _client: mqtt.Client, _data: Any, _flags: Any, _reason: Any, _props: Any
    ) -> None:
        with self._lock:
            self.connected = False
            self._bump()

    def _on_subscribe(
        self, _client: mqtt.Client, _data: Any, _mid: int, codes: list[Any], _props: Any
    ) -> None:
        refused = [c for c in codes if getattr(c, "is_failure", False)]
        if refused:
            with self._lock:
                self._problem(None, f"the broker refused {messages.ALL_TABLES}: {refused[0]}")
                self._bump()
            return
        self._subscribed.set()

    def _on_message(self, _client: mqtt.Client, _data: Any, message: mqtt.MQTTMessage) -> None:
        received_ms = time.time() * 1000.0
        topic = message.topic
        try:
            self._take(topic, bytes(message.payload), received_ms)
        except Exception as exc:  # never seen: a fault of the hub's, and it goes on
            log.debug("hub %s: the fault reading %s", self.name, topic, exc_info=True)
            with self._lock:
                where = messages.split_topic(topic)
                table = self._tables.get(where[0]) if where else None
                self._problem(table, f"{topic}: could not be read ({messages.one_line(exc)})")
                self._bump(table)

    # -- reading a message ---------------------------------------------------------------

    def _take(self, topic: str, payload: bytes, received_ms: float) -> None:
        where = messages.split_topic(topic)
        if where is None:
            return
        name, kind = where
        problem: str | None = None
        decoded: Any = None
        if len(payload) > MAX_PAYLOAD:
            problem = f"{topic}: {len(payload)} bytes, over {MAX_PAYLOAD}"
        else:
            try:
                decoded = messages.decode(topic, payload)
            except messages.MessageError as exc:
                problem = str(exc)
            if (
                problem is None
                and isinstance(decoded, messages.EventMessage)
                and not _event_id_fits(decoded.event.get("id"))
            ):
                problem = f"{topic}: event.id: expected a whole number from 0"
        with self._lock:
            if not NAME_RE.fullmatch(name):
                self._problem(None, f"{topic[:80]}: not a table's name")
                self._bump()
                return
            table = self._tables.get(name)
            if decoded is None and problem is None:
                if not payload and kind == messages.STATUS and table is not None:
                    del self._tables[name]  # its status cleared: the table is gone
                    self._bump()
                elif not payload and kind == messages.FLAGS and table is not None:
                    table.flags = []
                    self._bump(table)
                return
            if table is None and kind == messages.COMMANDS:
                return  # another hub's command to a table this one has not heard from
            if table is None:
                if len(self._tables) >= MAX_TABLES:
                    self._problem(None, f"{topic}: over {MAX_TABLES} tables; not kept")
                    self._bump()
                    return
                table = self._tables[name] = _Table(name, received_ms / 1000.0)
            if problem is not None:
                self._problem(table, problem)
            elif isinstance(decoded, messages.Status):
                self._status(table, decoded, received_ms / 1000.0)
            elif isinstance(decoded, messages.EventMessage):
                self._event(table, decoded, received_ms)
            elif isinstance(decoded, messages.Flags):
                self._flags(table, decoded)
            elif isinstance(decoded, messages.Answer):
                self._answer(table, decoded, received_ms)
            elif isinstance(decoded, messages.Command):
                self._command(table, decoded)
            self._bump(table)

    def _problem(self, table: _Table | None, line: str) -> None:
        """Under the lock: a message that did not fit, counted (against its table, if it
        names one) and logged in one line, at most once per ``PROBLEM_LOG_EVERY_S`` per
        table (the next line says how many were not)."""
        line = line[:PROBLEM_CHARS]
        self.problems += 1
        self.problem = line
        if table is not None:
            table.problems += 1
            table.problem = line
        more = (self._problem_lines if table is None else table.problem_lines).due()
        if more is None:
            return
        log.warning(
            "hub %s: a message not read: %s%s",
            self.name,
            line,
            f" (and {more} more not logged)" if more else "",
        )

    def _game(self, table: _Table, game_id: str) -> bool:
        """Whether ``game_id`` is the table's current game, entering it if it is a new
        one (its counts start again); ``False``: an earlier game's, come late."""
        if game_id == table.game_id:
            return True
        if game_id in table.past:
            table.late += 1
            return False
        if table.game_id is not None:
            table.past.append(table.game_id)
        table.game_id = game_id
        table.events, table.highest, table.duplicates, table.gaps = 0, -1, 0, 0
        table.midway = None
        table.last_event = None
        table.recent.clear()
        table.flags = []
        return True

    def _status(self, table: _Table, status: messages.Status, now: float) -> None:
        if status.game_id is not None and not self._game(table, status.game_id):
            return
        given = status.model_fields_set
        if status.game_id is not None and table.midway is None and "events" in given:
            table.midway = status.events > 0
        was_online = table.online and table.heard_status
        table.heard_status = True
        if status.online:
            table.online, table.reason = True, None
            if status.since is not None and math.isfinite(status.since):
                table.since = status.since
            elif not was_online:
                table.since = now
            for key in GAME_FIELDS:
                setattr(table, key, _short(getattr(status, key)))
            table.sides = [str(s)[:64] for s in status.sides[:16]]
            self._url(table, status.url)
            table.published = status.events
        else:
            if was_online or table.since is None:
                table.since = now
            table.online, table.reason = False, status.reason
            # a goodbye may say the game as it ended; a last will says nothing of it
            for key in GAME_FIELDS:
                if key in given:
                    setattr(table, key, _short(getattr(status, key)))
            if "url" in given:
                self._url(table, status.url)
            if "events" in given:
                table.published = status.events

    @staticmethod
    def _url(table: _Table, url: str | None) -> None:
        """The page address a status gives: kept to be shown (http or https), and tried
        only if :func:`page_target` allows it."""
        shown = _page_url(url)
        if shown != table.url:  # not tried at this address yet
            table.url, table.reachable = shown, None
        target = page_target(shown) if shown is not None else None
        table.target = target if isinstance(target, tuple) else None
        table.unchecked = target if isinstance(target, str) else None

    def _event(self, table: _Table, message: messages.EventMessage, received_ms: float) -> None:
        if not self._game(table, message.game_id):
            return
        event_id = message.id
        if event_id <= table.highest:
            table.duplicates += 1
            return
        if table.midway is None:
            table.midway = event_id > 0
        if not (table.midway and table.highest < 0):  # not the first event of a game met
            table.gaps += event_id - table.highest - 1
        table.highest = event_id
        table.events += 1
        kept = {key: _short(message.event.get(key)) for key in EVENT_KEYS}
        kept["game_id"] = _short(message.game_id)
        kept["sent_ms"] = _short(message.sent_ms)
        kept["received_ms"] = received_ms
        table.last_event = kept
        table.recent.append(kept)

    def _flags(self, table: _Table, message: messages.Flags) -> None:
        if not self._game(table, message.game_id):
            return
        table.flags = [
            {key: _short(value) for key, value in f.model_dump(include=FLAG_FIELDS).items()}
            for f in message.flags[:MAX_FLAGS]
        ]

    def _answer(self, table: _Table, answer: messages.Answer, received_ms: float) -> None:
        sent = table.commands.get(answer.command)
        said = {"ok": answer.ok, "error": _short(answer.error), "received_ms": received_ms}
        if sent is not None:
            sent["answer"] = said
        table.answer = {
            "command": _short(answer.command),
            **said,
            "flag": sent["flag"] if sent else None,
            "decision": sent["decision"] if sent else None,
            "by": sent["by"] if sent else None,
        }

    def _command(self, table: _Table, command: messages.Command) -> None:
        """A command seen on the broker: this hub's own coming back, or another hub's."""
        sent = table.commands.get(command.id)
        if sent is not None:
            sent["queued"] = False
            return
        self._remember(
            table,
            {
                "id": _short(command.id),
                "game_id": _short(command.game_id),
                "flag": command.flag,
                "model": None,
                "decision": command.decision,
                "by": command.by,
                "note": command.note,
                "sent_ms": None,
                "mine": False,
                "queued": False,
                "answer": None,
            },
        )

    # -- the tables' pages ---------------------------------------------------------------

    def _check_pages(self) -> None:
        """Each table's page tried when it is first heard of, then at most once every
        ``check_every_s`` per table name, whatever its statuses say in between; only at
        an address :func:`page_target` allows."""
        tick = min(1.0, self.check_every_s)
        while not self._stop.wait(tick):
            due: list[tuple[str, str, tuple[str, int]]] = []
            with self._lock:
                now = time.monotonic()
                every = self.check_every_s
                self._tried = {n: t for n, t in self._tried.items() if now - t < every}
                for table in self._tables.values():
                    if table.target is None or table.url is None or table.name in self._tried:
                        continue
                    self._tried[table.name] = now
                    due.append((table.name, table.url, table.target))
            if not due:
                continue
            try:
                answers = list(
                    self._pool.map(lambda d: reachable(d[2][0], d[2][1], self.check_timeout_s), due)
                )
            except RuntimeError:  # the pool shut down: closing
                return
            with self._lock:
                for (name, url, _), ok in zip(due, answers, strict=True):
                    tried = self._tables.get(name)
                    # (an address changed meanwhile waits for its own try)
                    if tried is not None and tried.url == url and tried.reachable != ok:
                        tried.reachable = ok
                        self._bump(tried)


def _event_id_fits(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53


#: The longest text kept from a table's message (a flag's message, an event's).
TEXT_CHARS = 500


def _short(value: Any) -> Any:
    """A table's value as kept: text cut to ``TEXT_CHARS``, numbers and names as they are,
    anything else (a list, an object) left out."""
    if isinstance(value, str):
        return value if len(value) <= TEXT_CHARS else value[: TEXT_CHARS - 3] + "..."
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int)):
        return value
    return None
