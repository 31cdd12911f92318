"""A test client that speaks for any number of tables on a broker, in exactly the
contract's messages (:mod:`tablesight.tournament.messages`), never through the table side's own
code; and hears what is sent to them (the hub's commands).

::

    tables = TableVoices(broker.port, turn=2)
    tables.status("alpha", "g1")              # retained, online, the defaults and turn 2
    tables.flags("alpha", "g1", [flag(4)])
    tables.event("alpha", "g1", 0)
    tables.listen("tablesight/+/commands")
    with tables.news:
        tables.news.wait_for(lambda: tables.commands(), 10.0)
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from tablesight.tournament import messages

WAIT_S = 10.0

#: A table's status as the tests say it, unless told otherwise.
STATUS = {
    "online": True,
    "since": 1_700_000_000.0,
    "game": "necromunda",
    "title": "Necromunda",
    "turn": 1,
    "phase": "movement",
    "side": "goliath",
    "sides": ["goliath", "escher"],
    "state": "playing",
    "url": None,
    "events": 0,
}


def flag(
    flag_id: int, kind: str = "violation", model: str = "ganger", **given: Any
) -> dict[str, Any]:
    """A flag as a table lists it: a 7 in move on a 6 in allowance, unless told otherwise."""
    return {
        "id": flag_id,
        "kind": kind,
        "rule": "movement",
        "model": model,
        "measured": 7.0,
        "limit": 6.0,
        "uncertainty": 0.05,
        "message": f"{model} moved 7.00 in; its allowance is 6.00 in",
        "label": "7.0/6.0 in",
        "headline": f"{model}: moved 7.0 of 6 in",
        "decision": None,
        **given,
    }


class TableVoices:
    """One paho client on ``127.0.0.1:port``; ``defaults`` change :data:`STATUS`'s."""

    def __init__(self, port: int, client_id: str = "test-tables", **defaults: Any) -> None:
        self.defaults = {**STATUS, **defaults}
        #: What it heard, in order: (topic, payload); ``news`` is notified at each.
        self.heard: list[tuple[str, bytes]] = []
        self.news = threading.Condition()
        self.connect(port, client_id)

    def connect(self, port: int, client_id: str) -> None:
        """(Again, as another client: the one before is left as it is.)"""
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv311
        )
        connected = threading.Event()
        self.client.on_connect = lambda *_: connected.set()
        self.client.on_message = self._message
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        if not connected.wait(WAIT_S):
            raise TimeoutError(f"no broker answered on 127.0.0.1:{port}")

    def _message(self, _c: Any, _d: Any, message: mqtt.MQTTMessage) -> None:
        with self.news:
            self.heard.append((message.topic, message.payload))
            self.news.notify_all()

    def listen(self, topic: str) -> None:
        """Subscribe to ``topic`` (QoS 1) and wait until the broker says so."""
        done = threading.Event()
        self.client.on_subscribe = lambda *_: done.set()
        self.client.subscribe(topic, qos=1)
        if not done.wait(WAIT_S):
            raise TimeoutError(f"the broker never took the subscription to {topic}")

    def commands(self) -> list[dict[str, Any]]:
        """The commands heard, in order, each with its ``topic``."""
        return [
            {"topic": topic, **json.loads(payload)}
            for topic, payload in self.heard
            if topic.endswith(f"/{messages.COMMANDS}")
        ]

    def raw(self, topic: str, payload: bytes, retain: bool = False) -> None:
        self.client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(WAIT_S)

    def publish(self, table: str, kind: str, body: dict[str, Any], retain: bool = False) -> None:
        self.raw(messages.topic(table, kind), messages.encode({"table": table, **body}), retain)

    def status(self, table: str, game_id: str, **given: Any) -> None:
        body = {**self.defaults, "game_id": game_id, **given}
        self.publish(table, messages.STATUS, body, retain=True)

    def flags(self, table: str, game_id: str, flags: list[dict[str, Any]]) -> None:
        self.publish(table, messages.FLAGS, {"game_id": game_id, "flags": flags}, retain=True)

    def event(self, table: str, game_id: str, event_id: int, kind: str = "model_moved") -> float:
        """One event (its ``t`` half a second a step); when it was sent, Unix ms."""
        sent_ms = time.time() * 1000.0
        event = {"id": event_id, "t": event_id * 0.5, "kind": kind, "message": f"event {event_id}"}
        body = {"game_id": game_id, "sent_ms": sent_ms, "event": event}
        self.publish(table, messages.EVENTS, body)
        return sent_ms

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
