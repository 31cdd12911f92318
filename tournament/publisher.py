"""A table's game published to the broker (``run --broker``, ``demo --broker``).

:class:`TablePublisher` is one MQTT client, ``tablesight-table-<name>``, with a clean
session, writing the topics of :mod:`tablesight.tournament.messages` under
``tablesight/<name>/``:

* ``status`` (retained, QoS 1): the game as it stands, published on every (re)connect and
  whenever the game, its turn, phase, side or state changes (and with a new count of
  events at most every ``COUNT_EVERY_S``). ``phase`` is ``"movement"`` while a movement
  phase runs and ``"between phases"`` otherwise (before the first one, and after one
  ended). ``state`` is the referee's (``Game.status``): ``"starting"``, ``"playing"``,
  ``"analyzing"``, ``"camera lost, retrying"``, ``"ended"``. Its last will, set when it
  connects, is ``{"online": false, "reason": "connection lost"}`` with the game's name and
  title; closing says ``{"online": false, "reason": "stopped"}`` with the game's last
  fields.
* ``events`` (QoS 1, not retained): every event the game emits, in the order emitted,
  each with its game's id (``game_id``: this process's run id and the game's
  ``generation``: a looping demo starts a new game, whose ids start again at 0).
* ``flags`` (retained, QoS 1): the flags the table lists now
  (:meth:`tablesight.match.game.Game.flags`), published on every (re)connect and whenever they or
  their decisions change.
* ``answers`` (QoS 1): what the table made of each command read on ``commands``.

The referee is never held up: the game's listener only puts the event on a queue. The
publisher's own thread publishes it, checks the status and flags (taking the game's lock
for the moment it takes to read them), and applies the hub's commands. While the broker
is away the events wait on that queue, in order, and are published when the client is
connected and subscribed again (after the messages paho still holds from before the
outage, which it sends again first): the hub's persistent session gets every one, in order.
When the game records a match file, each event the broker acknowledged is written to its
``published`` table (``docs/match-format.md``), so the file tells which never reached it.

A command (a judge's decision on a flag) for this game is applied as the table's page
applies one (:meth:`Game.decide`), recorded as decided by ``hub:<judge>`` with the
judge's note, and answered ``ok``; one that does not fit (not JSON, a key missing or
wrong, an earlier game's, a flag the game does not have) changes nothing and is answered
``ok: false`` with one line naming the field.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import secrets
import socket
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any, NamedTuple

import paho.mqtt.client as mqtt

from tablesight.match.game import Game
from tablesight.match.schema import RecordError
from tablesight.match.writer import MatchWriter
from tablesight.rules.errors import InputError
from tablesight.rules.session import Event
from tablesight.tournament import messages
from tablesight.tournament.link import BrokerLink, check_name

log = logging.getLogger("tablesight.broker")

#: What ``status.phase`` says: a movement phase running, or none.
PHASE_MOVEMENT = "movement"
PHASE_BETWEEN = "between phases"
#: What an offline status says: closed (``stopped``) or the broker's last will.
STOPPED, CONNECTION_LOST = "stopped", "connection lost"
#: How often (s) the publisher's thread looks at the game when no event comes.
POLL_S = 0.2
#: A status that differs only in its count of events is published at most this often (s).
COUNT_EVERY_S = 2.0
#: How long (s) closing waits for the events still queued to be acknowledged.
CLOSE_WAIT_S = 3.0
#: The commands whose answers are remembered (a command delivered twice is answered twice
#: the same way, applied once).
REMEMBERED_COMMANDS = 256
#: The longest command id quoted back in an answer.
COMMAND_ID_CHARS = 200
#: A command longer than this (bytes) is refused unread.
MAX_COMMAND_BYTES = 64 * 1024


class _Queued(NamedTuple):
    """An event heard from the game, waiting to be published."""

    generation: int
    event: Event
    #: The match file its game records into (``None``: none), and when it was emitted
    #: (wall clock, Unix s).
    recorder: MatchWriter | None
    emitted: float


class _Sent(NamedTuple):
    """A message handed to paho, waiting for its PUBACK."""

    recorder: MatchWriter | None
    event_id: int | None
    emitted: float


class TablePublisher:
    """The game ``game`` published to the broker at ``link`` as the table ``name``,
    whose page is served on ``host:port``. :meth:`start` it once; :meth:`close` says
    goodbye. Neither raises nor hangs when the broker is away."""

    def __init__(
        self,
        game: Game,
        link: BrokerLink,
        name: str,
        host: str,
        port: int,
        say: Callable[[str], object] | None = None,
    ) -> None:
        self.game = game
        #: Where a judge's ruling applied here is told (``run``'s terminal), one line each.
        self.say = say
        self.link = link
        self.name = check_name(name)
        self.host = host
        self.port = port
        #: This process's part of every game id: a restarted table's games are new games.
        self.run_id = secrets.token_hex(6)
        self.client_id = f"tablesight-table-{name}"
        #: When this table first came online (Unix s), ``None`` before.
        self.since: float | None = None
        #: Counts, for a look from outside: events published and acknowledged, commands
        #: applied and refused, and the most events that waited for the broker at once.
        self.sent = 0
        self.acked = 0
        self.applied = 0
        self.refused = 0
        self.most_waiting = 0
        self._queue: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        #: Events taken from the queue that wait for the broker (the publisher's thread's).
        self._waiting: deque[_Queued] = deque()
        #: Connected and subscribed: the publisher's thread may publish.
        self._ready = threading.Event()
        self._acks = threading.Condition(threading.Lock())
        self._inflight: dict[int, _Sent] = {}
        #: PUBACKs that came before ``publish`` returned their mid (Unix s).
        self._early: dict[int, float] = {}
        self._answers: OrderedDict[str, tuple[bool, str | None]] = OrderedDict()
        self._last_status: dict[str, Any] | None = None
        self._status_at = 0.0
        self._last_flags: str | None = None
        self._local_address: str | None = None
        self._started = False
        self._closed = False
        #: The broker was lost and is not back yet (said when it is).
        self._lost = False
        #: Why the broker did not take this table at its last try, in one line (said once,
        #: not at every try), until it takes it.
        self.refusal: str | None = None
        self.client = link.client(self.client_id, clean_session=True)
        will = {
            "table": name,
            "online": False,
            "reason": CONNECTION_LOST,
            "game": game.setup.game,
            "title": game.setup.ruleset.title,
        }
        self.client.will_set(self._topic(messages.STATUS), messages.encode(will), 1, True)
        self.client.on_connect = self._on_connect
        self.client.on_connect_fail = self._on_connect_fail
        self.client.on_disconnect = self._on_disconnect
        self.client.on_subscribe = self._on_subscribe
        self.client.on_publish = self._on_publish
        self.client.on_message = self._on_message
        self._thread = threading.Thread(target=self._run, name=f"publish {name}", daemon=True)

    def _topic(self, kind: str) -> str:
        return messages.topic(self.name, kind)

    def game_id(self, generation: int | None = None) -> str:
        """The id of the game ``generation`` (the game's current one by default)."""
        return f"{self.run_id}-{self.game.generation if generation is None else generation}"

    @property
    def connected(self) -> bool:
        """Connected to the broker and subscribed to the table's commands."""
        return self._ready.is_set()

    # -- running -------------------------------------------------------------------------

    def start(self) -> TablePublisher:
        """Listen to the game (the events of its current game so far are published
        first) and start connecting, on threads of their own; never waits for the broker."""
        if self._started:
            return self
        self._started = True
        game = self.game
        with game.lock:
            now = time.time()
            recorder = game.recorder
            for event in game.session.events:
                self._queue.put(("event", _Queued(game.generation, event, recorder, now)))
            game.listen(self._heard)
            game_id = self.game_id(game.generation)
        if recorder is not None:
            with contextlib.suppress(RecordError):  # the game reports its recording stopped
                recorder.publishing(self.link.url, self.name, game_id)
        self._thread.start()
        self.link.connect(self.client)
        return self

    def close(self) -> None:
        """Publish what waits (for up to ``CLOSE_WAIT_S`` while the broker takes it), say
        the table stopped (retained), and leave the broker. Never raises, never hangs."""
        if self._closed:
            return
        self._closed = True
        if not self._started:
            return
        self.game.unlisten(self._heard)
        self._queue.put(("stop",))
        self._thread.join(timeout=CLOSE_WAIT_S + 2.0)
        try:
            self.client.disconnect()
        except Exception:  # closing goes on whatever paho says
            log.debug("disconnecting from the broker failed", exc_info=True)
        # paho's thread may be in a connect attempt to a broker that does not answer
        stopper = threading.Thread(target=self.client.loop_stop, daemon=True)
        stopper.start()
        stopper.join(timeout=2.0)

    def _heard(self, event: Event) -> None:
        """The game's listener, under its lock on the referee's thread: queue, nothing more."""
        game = self.game
        self._queue.put(("event", _Queued(game.generation, event, game.recorder, time.time())))

    def _run(self) -> None:
        """The publisher's thread: events, commands, status and flags, until closed."""
        closing_until: float | None = None
        said_goodbye = False
        while True:
            wait = POLL_S if closing_until is None else 0.05
            items: list[tuple[Any, ...]] = []
            try:
                items.append(self._queue.get(timeout=wait))
                while True:
                    items.append(self._queue.get_nowait())
            except queue.Empty:
                pass
            commands: list[tuple[str, bytes]] = []
            connected = False
            for item in items:
                if item[0] == "event":
                    self._waiting.append(item[1])
                elif item[0] == "command":
                    commands.append((item[1], item[2]))
                elif item[0] == "connected":
                    connected = True
                elif item[0] == "stop" and closing_until is None:
                    closing_until = time.monotonic() + CLOSE_WAIT_S
            self.most_waiting = max(self.most_waiting, len(self._waiting))
            for topic, payload in commands:  # each on its own: one never costs another
                self._command_alone(topic, payload)
            try:
                self._publish_waiting()
                self._publish_state(connected, closing=closing_until is not None)
                if closing_until is not None and self.connected and not self._waiting:
                    if not said_goodbye:
                        said_goodbye = True
                        self._goodbye()
                    with self._acks:
                        if not self._inflight:
                            return
            except Exception:  # nothing a message or the game does stops the publisher
                log.exception("table %s: publishing failed", self.name)
            if closing_until is not None and time.monotonic() >= closing_until:
                return

    # -- what is published ---------------------------------------------------------------

    def _publish(
        self, kind: str, payload: bytes, *, retain: bool = False, sent: _Sent | None = None
    ) -> None:
        """One message (QoS 1) on ``kind``'s topic; an event's PUBACK (``sent``) is
        recorded when it comes."""
        sent = sent or _Sent(None, None, 0.0)
        info = self.client.publish(self._topic(kind), payload, 1, retain)
        with self._acks:
            acked = self._early.pop(info.mid, None)
            if acked is None and info.rc in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_NO_CONN):
                self._inflight[info.mid] = sent
        if info.rc not in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_NO_CONN):
            log.warning("table %s: %s not sent: %s", self.name, kind, mqtt.error_string(info.rc))
        elif acked is not None:
            self._acknowledged(sent, acked)

    def _publish_waiting(self) -> None:
        """The events waiting, in order, while the broker is there."""
        while self._waiting and self.connected:
            queued = self._waiting[0]
            message = {
                "table": self.name,
                "game_id": self.game_id(queued.generation),
                "sent_ms": round(time.time() * 1000.0, 1),
                "event": queued.event.to_dict(),
            }
            try:
                payload = messages.encode(message)
            except (TypeError, ValueError):  # never seen; it would stop all that follow
                log.exception("table %s: event %d cannot be sent", self.name, queued.event.id)
                self._waiting.popleft()
                continue
            sent = _Sent(queued.recorder, queued.event.id, queued.emitted)
            self._publish(messages.EVENTS, payload, sent=sent)
            self._waiting.popleft()
            self.sent += 1

    def _game_now(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The game's fields for its status, and its flags, read together under its lock."""
        game = self.game
        with game.lock:
            session = game.session
            fields = {
                "game": game.setup.game,
                "title": game.setup.ruleset.title,
                "game_id": self.game_id(game.generation),
                "turn": session.turn,
                "phase": PHASE_MOVEMENT if session.in_phase else PHASE_BETWEEN,
                "side": session.side,
                "sides": list(game.setup.sides),
                "state": game.status,
                "url": self._url(),
                "events": len(session.events),
            }
            listed = game.flags()
        return fields, [_plain(f) for f in listed]

    def _publish_state(self, connected: bool, *, closing: bool) -> None:
        """The status and the flags, when they changed (both on a new connection)."""
        if not self.connected:
            return
        fields, listed = self._game_now()
        now = time.monotonic()
        counted = {k: v for k, v in fields.items() if k != "events"}
        last = self._last_status
        changed = last is None or {k: v for k, v in last.items() if k != "events"} != counted
        recount = last is not None and last["events"] != fields["events"]
        if not closing and (
            connected or changed or (recount and now - self._status_at >= COUNT_EVERY_S)
        ):
            status = {"table": self.name, "online": True, "since": self.since, **fields}
            self._publish(messages.STATUS, messages.encode(status), retain=True)
            self._last_status, self._status_at = fields, now
        flags = {"table": self.name, "game_id": fields["game_id"], "flags": listed}
        text = json.dumps(flags, sort_keys=True)
        if connected or text != self._last_flags:
            self._publish(messages.FLAGS, messages.encode(flags), retain=True)
            self._last_flags = text

    def _goodbye(self) -> None:
        """The retained status of a table that stopped, with its game as it ended."""
        fields, _ = self._game_now()
        status = {"table": self.name, "online": False, "reason": STOPPED, **fields}
        self._publish(messages.STATUS, messages.encode(status), retain=True)

    def _url(self) -> str:
        """The table's page as the hub may reach it (no token): a server listening on
        every address is named by the address this table reaches the broker from."""
        host = self.host
        if host in ("", "0.0.0.0", "::"):
            host = self._local_address or socket.gethostname()
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}/"

    # -- commands ------------------------------------------------------------------------

    def _command_alone(self, topic: str, payload: bytes) -> None:
        """One command applied and answered; should handling it fail, it is answered
        with an error, in one line, and the commands that came with it go on."""
        try:
            self._command(topic, payload)
        except Exception as exc:  # never seen: a fault here, not the command's
            log.warning(
                "table %s: a command could not be handled: %s", self.name, messages.one_line(exc)
            )
            log.debug("the command's fault", exc_info=True)
            with contextlib.suppress(Exception):
                self._answer(_command_id(payload), False, "payload: could not be handled")

    def _command(self, topic: str, payload: bytes) -> None:
        """A command read on ``commands``: applied and answered, or refused and answered."""
        if len(payload) > MAX_COMMAND_BYTES:
            self._answer("", False, f"payload: {len(payload)} bytes, over {MAX_COMMAND_BYTES}")
            return
        try:
            message = messages.decode(topic, payload)
        except messages.MessageError as exc:
            self._answer(_command_id(payload), False, _field_error(str(exc), topic))
            return
        except RecursionError:  # JSON nested deeper than Python reads
            self._answer("", False, "payload: not JSON (nested too deep)")
            return
        if not isinstance(message, messages.Command):
            return  # an empty (retained) message: nothing asked
        known = self._answers.get(message.id)
        if known is not None:  # delivered again (QoS 1): answered again, applied once
            self._answer(message.id, *known)
            return
        game = self.game
        error: str | None = None
        flagged: Event | None = None
        with game.lock:
            current = self.game_id(game.generation)
            if message.game_id != current:
                error = f"game_id: {message.game_id!r} is not this table's game now ({current!r})"
            else:
                try:
                    game.decide(
                        message.flag, message.decision, by=f"hub:{message.by}", note=message.note
                    )
                    flagged = game.session.events[message.flag]
                except InputError as exc:
                    error = str(exc).splitlines()[0]
        self._answers[message.id] = (error is None, error)
        while len(self._answers) > REMEMBERED_COMMANDS:
            self._answers.popitem(last=False)
        if error is None:
            self.applied += 1
            log.info(
                "table %s: flag %d %s by %s", self.name, message.flag, message.decision, message.by
            )
            if self.say is not None:
                self.say(ruling_line(flagged, message))
        self._answer(message.id, error is None, error)

    def _answer(self, command: str, ok: bool, error: str | None) -> None:
        if not ok:
            self.refused += 1
            log.info("table %s: command %s refused: %s", self.name, command, error)
        answer: dict[str, Any] = {"table": self.name, "command": command, "ok": ok}
        if error is not None:
            answer["error"] = error
        self._publish(messages.ANSWERS, messages.encode(answer))

    # -- paho's callbacks (its network thread: nothing long) -----------------------------

    def _on_connect(
        self, client: mqtt.Client, _data: Any, _flags: Any, reason: Any, _props: Any
    ) -> None:
        if reason.is_failure:
            self._not_taken(self.link.refused(reason))
            return
        if self.refusal is not None:
            self.refusal = None
            log.warning("table %s: the broker %s accepted it now", self.name, self.link.url)
        if self.since is None:
            self.since = time.time()
        try:
            sock = client.socket()
            if isinstance(sock, socket.socket):  # (TLS: an ssl.SSLSocket, one too)
                self._local_address = str(sock.getsockname()[0])
        except (OSError, AttributeError, IndexError):
            pass
        client.subscribe(self._topic(messages.COMMANDS), qos=1)

    def _on_connect_fail(self, _client: mqtt.Client, _data: Any) -> None:
        if not self._lost:  # a broker lost is said so already
            self._not_taken(self.link.unreachable())

    def _not_taken(self, why: str) -> None:
        """The broker did not take the table: said once, not at every try."""
        told, self.refusal = self.refusal, why
        if told != why:
            log.warning(
                "table %s: %s; refereeing goes on, and the table tries again quietly",
                self.name,
                why,
            )

    def _on_subscribe(
        self, _client: mqtt.Client, _data: Any, _mid: int, codes: list[Any], _props: Any
    ) -> None:
        # The SUBACK comes after paho sent again what it held from before: what the
        # publisher's thread publishes from now on goes after it, in order.
        if any(getattr(c, "is_failure", False) for c in codes):
            log.warning(
                "table %s: the broker refused %s: no decisions from the hub",
                self.name,
                self._topic(messages.COMMANDS),
            )
        self._ready.set()
        self._queue.put(("connected",))
        if self._lost:
            self._lost = False
            log.warning("table %s: the broker %s is back", self.name, self.link.url)

    def _on_disconnect(
        self, _client: mqtt.Client, _data: Any, _flags: Any, reason: Any, _props: Any
    ) -> None:
        was = self._ready.is_set()
        self._ready.clear()
        if was and not self._closed:  # said once a loss, not at every try
            self._lost = True
            log.warning(
                "table %s: lost the broker %s (%s); refereeing goes on, and the events wait "
                "to be sent in order when it is back",
                self.name,
                self.link.url,
                reason,
            )

    def _on_publish(
        self, _client: mqtt.Client, _data: Any, mid: int, _reason: Any, _props: Any
    ) -> None:
        now = time.time()
        with self._acks:
            sent = self._inflight.pop(mid, None)
            if sent is None:
                self._early[mid] = now
            self._acks.notify_all()
        if sent is not None:
            self._acknowledged(sent, now)

    def _acknowledged(self, sent: _Sent, acked: float) -> None:
        if sent.event_id is None:
            return
        self.acked += 1
        if sent.recorder is not None:
            # the match file may be closed already (or have failed: the game says so)
            with contextlib.suppress(RecordError, ValueError):
                sent.recorder.published(sent.event_id, sent.emitted, acked)

    def _on_message(self, _client: mqtt.Client, _data: Any, message: mqtt.MQTTMessage) -> None:
        self._queue.put(("command", message.topic, bytes(message.payload)))


def ruling_line(flag: Event | None, command: messages.Command) -> str:
    """A judge's ruling applied at the table, in one line for its terminal: who, what, on
    which flag (its time, kind and message), and the judge's note."""
    decided = {"accept": "accepted", "dismiss": "dismissed"}[command.decision]
    line = f"ruling: judge {command.by} {decided} flag {command.flag}"
    if flag is not None:
        line += f" ({flag.t:.2f}s {flag.kind}: {flag.message})"
    if command.note:
        line += f"; note: {' '.join(command.note.split())}"
    return line


def _plain(flag: dict[str, Any]) -> dict[str, Any]:
    """A flag's values as JSON takes them (numbers as plain floats)."""
    return {k: float(v) if isinstance(v, float) else v for k, v in flag.items()}


def _command_id(payload: bytes) -> str:
    """The id a command that does not fit says it has, if any, to quote in the answer."""
    try:
        data = messages.read_json(payload)
    except (ValueError, RecursionError):  # (UnicodeDecodeError, JSONDecodeError too)
        return ""
    found = data.get("id") if isinstance(data, dict) else None
    return found[:COMMAND_ID_CHARS] if isinstance(found, str) else ""


def _field_error(line: str, topic: str) -> str:
    """A decoding problem as one line naming the field (without the topic)."""
    line = line.removeprefix(f"{topic}: ").splitlines()[0] if line else "payload: not valid"
    if line.startswith("not JSON") or line == "expected a JSON object":
        line = f"payload: {line}"
    return line
