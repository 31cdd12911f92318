"""The sample venue broker (``samples/mosquitto/``) on a real Mosquitto: its password file
and ACL read in place, clients made as TableSight makes them (``BrokerLink.client``).

A table's password cannot command another table, write another table's topics or read
another table's commands; what it may write, the hub reads. Each refusal is checked
against a control that the same message, sent by the one allowed to, does arrive:
MQTT says nothing to a publisher whose message the ACL drops, so only silence at the
receiving end shows it. A wrong password, an unknown user and an anonymous client are
refused at connecting. The sample ``mosquitto.conf`` itself starts, keeps the hub's
session from a table that logs in under the hub's client id, and keeps the retained
status and the events queued for the hub over a restart; ``mosquitto_passwd`` adds a
table to the sample password file without losing the others."""

from __future__ import annotations

import getpass
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest

from tablesight.rig.mosquitto import EXECUTABLE, Mosquitto
from tablesight.tournament import messages
from tablesight.tournament.link import BrokerLink

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples" / "mosquitto"
PASSWORDS = SAMPLE / "passwords"
ACL = SAMPLE / "acl"
#: The sample passwords (samples/mosquitto/README.md).
SAMPLE_PASSWORD = {
    "hub": "replace-me-hub",
    **{f"table-{i}": f"replace-me-table-{i}" for i in range(1, 5)},
}
#: How long anything that arrives takes at most (it takes milliseconds).
WAIT_S = 10.0
#: How long a receiver must hear nothing of a refused message.
QUIET_S = 2.0


class Peer:
    """One client of the broker logged in as ``user``, made as TableSight makes its
    clients, keeping what it is told: the broker's answer to its connecting, the
    messages it receives."""

    def __init__(
        self,
        url: str,
        user: str | None,
        password: str | None,
        client_id: str | None = None,
        *,
        clean_session: bool = True,
    ) -> None:
        self.user = user
        self.link = BrokerLink.parse(url, user, password)
        self.client = self.link.client(
            client_id or f"test-{user}-{uuid.uuid4().hex[:8]}", clean_session=clean_session
        )
        self.answered = threading.Event()
        self.reason: Any = None
        self.disconnects = 0
        self.received: list[tuple[str, bytes, bool]] = []
        self._changed = threading.Condition()
        self._subscribed: dict[int, list[Any]] = {}
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        self.client.on_subscribe = self._on_subscribe
        self.link.connect(self.client)

    def _on_connect(self, _c: Any, _d: Any, _f: Any, reason: Any, _p: Any) -> None:
        if not self.answered.is_set():
            self.reason = reason
            self.answered.set()

    def _on_disconnect(self, _c: Any, _d: Any, _f: Any, _r: Any, _p: Any) -> None:
        with self._changed:
            self.disconnects += 1

    def _on_message(self, _c: Any, _d: Any, message: mqtt.MQTTMessage) -> None:
        with self._changed:
            self.received.append((message.topic, bytes(message.payload), bool(message.retain)))
            self._changed.notify_all()

    def _on_subscribe(self, _c: Any, _d: Any, mid: int, codes: list[Any], _p: Any) -> None:
        with self._changed:
            self._subscribed[mid] = codes
            self._changed.notify_all()

    def connected(self) -> Peer:
        assert self.answered.wait(WAIT_S), f"{self.user}: the broker did not answer"
        assert not self.reason.is_failure, f"{self.user}: refused: {self.reason}"
        return self

    def subscribe(self, topic: str) -> None:
        """Subscribed once the broker has answered (it grants a topic its ACL does not let
        the user read, and then sends nothing of it)."""
        _, mid = self.client.subscribe(topic, qos=1)
        with self._changed:
            assert self._changed.wait_for(lambda: mid in self._subscribed, WAIT_S)

    def publish(self, topic: str, payload: bytes, *, retain: bool = False) -> None:
        """Sent and acknowledged (QoS 1): the broker has dealt with it."""
        info = self.client.publish(topic, payload, qos=1, retain=retain)
        info.wait_for_publish(WAIT_S)
        assert info.is_published()

    def publish_as(self, table: str, sent: dict[str, bytes]) -> None:
        """Each of ``sent`` (kind: payload) on ``table``'s topic of that kind, retained
        where a table's is."""
        for kind, payload in sent.items():
            self.publish(messages.topic(table, kind), payload, retain=kind in messages.RETAINED)

    def wait_for(self, topic: str, payload: bytes) -> None:
        with self._changed:
            got = self._changed.wait_for(lambda: self.got(topic, payload), WAIT_S)
        assert got, f"{self.user} did not receive {payload!r} on {topic}: {self.received}"

    def got(self, topic: str, payload: bytes) -> bool:
        return any(t == topic and p == payload for t, p, _ in self.received)

    def topics(self) -> list[str]:
        with self._changed:
            return [t for t, _, _ in self.received]

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    """A real Mosquitto with the sample's password file and ACL, read in place."""
    if not Path(EXECUTABLE).exists():
        pytest.fail(f"{EXECUTABLE} is missing: .ci/run installs Debian's mosquitto")
    with Mosquitto(tmp_path / "broker", passwords=PASSWORDS, acl=ACL) as started:
        yield started


Login = Callable[..., Peer]


@pytest.fixture
def login(broker: Mosquitto) -> Iterator[Login]:
    """``login(user)``: a client logged in with the user's sample password, or
    ``login(user, password)`` with another; every one closed at the end."""
    made: list[Peer] = []

    def make(user: str | None, password: str | None = None, **options: Any) -> Peer:
        given = SAMPLE_PASSWORD.get(user or "") if password is None else password
        peer = Peer(broker.url, user, given, **options)
        made.append(peer)
        return peer

    yield make
    for peer in made:
        peer.close()


def command(table: str, by: str) -> bytes:
    """A judge's decision, as the hub sends it to ``table``."""
    return messages.encode(
        {
            "table": table,
            "id": uuid.uuid4().hex,
            "game_id": "g1",
            "flag": 3,
            "decision": "dismiss",
            "by": by,
        }
    )


def status(table: str, state: str) -> bytes:
    return messages.encode({"table": table, "online": True, "game_id": "g1", "state": state})


def event(table: str, event_id: int, message: str) -> bytes:
    body = {"id": event_id, "t": 1.5, "kind": "violation", "message": message}
    return messages.encode(
        {"table": table, "game_id": "g1", "sent_ms": time.time() * 1000.0, "event": body}
    )


def flags(table: str) -> bytes:
    return messages.encode({"table": table, "game_id": "g1", "flags": []})


def answer(table: str) -> bytes:
    return messages.encode({"table": table, "command": "c1", "ok": True})


def every_kind(table: str, said: str) -> dict[str, bytes]:
    """A message of each kind a table writes (status, events, flags, answers) as ``table``,
    its status's state and its event's message ``said``."""
    return {
        messages.STATUS: status(table, said),
        messages.EVENTS: event(table, 0, said),
        messages.FLAGS: flags(table),
        messages.ANSWERS: answer(table),
    }


# -- what a table may not do -------------------------------------------------------------


def test_a_table_cannot_command_another_table(login: Login) -> None:
    hub, table_2 = login("hub").connected(), login("table-2").connected()
    hub.subscribe("tablesight/#")
    table_2.subscribe("tablesight/table-2/commands")
    table_1 = login("table-1").connected()
    target = messages.topic("table-2", messages.COMMANDS)
    forged, control = command("table-2", "table-1 forging"), command("table-2", "the judge")

    table_1.publish(target, forged)
    # nor its own: only the hub commands a table
    table_1.publish(messages.topic("table-1", messages.COMMANDS), command("table-1", "self"))
    hub.publish(target, control)  # the control: the same topic, from the one allowed

    table_2.wait_for(target, control)
    hub.wait_for(target, control)
    time.sleep(QUIET_S)
    assert table_2.received == [(target, control, False)]
    assert hub.received == [(target, control, False)]


def test_a_table_cannot_write_another_tables_status_events_flags_or_answers(
    login: Login, broker: Mosquitto
) -> None:
    hub = login("hub").connected()
    hub.subscribe("tablesight/#")
    table_1, table_2 = login("table-1").connected(), login("table-2").connected()
    table_1.publish_as("table-2", every_kind("table-2", "forged by table-1"))
    control = status("table-2", "playing")
    table_2.publish(messages.topic("table-2", messages.STATUS), control, retain=True)

    hub.wait_for(messages.topic("table-2", messages.STATUS), control)
    time.sleep(QUIET_S)
    assert hub.topics() == [messages.topic("table-2", messages.STATUS)]

    # nothing forged was retained either: a hub connecting now gets table-2's own status
    late = login("hub", client_id="late-hub").connected()
    late.subscribe("tablesight/+/+")
    late.wait_for(messages.topic("table-2", messages.STATUS), control)
    time.sleep(0.5)
    assert late.received == [(messages.topic("table-2", messages.STATUS), control, True)]


def test_a_table_cannot_read_another_tables_commands(login: Login) -> None:
    table_1, table_2 = login("table-1").connected(), login("table-2").connected()
    for topic in ("tablesight/table-2/commands", "tablesight/+/commands", "tablesight/#"):
        table_1.subscribe(topic)
    table_2.subscribe("tablesight/table-2/commands")
    hub = login("hub").connected()
    to_2, to_1 = command("table-2", "the judge"), command("table-1", "the judge")

    hub.publish(messages.topic("table-2", messages.COMMANDS), to_2)
    hub.publish(messages.topic("table-1", messages.COMMANDS), to_1)

    table_2.wait_for(messages.topic("table-2", messages.COMMANDS), to_2)  # the control
    table_1.wait_for(messages.topic("table-1", messages.COMMANDS), to_1)  # its own
    time.sleep(QUIET_S)
    # one copy of its own command for each subscription that covers it, nothing else
    assert set(table_1.topics()) == {messages.topic("table-1", messages.COMMANDS)}


def test_the_hub_cannot_speak_for_a_table(login: Login) -> None:
    watcher = login("hub", client_id="watching-hub").connected()
    watcher.subscribe("tablesight/#")
    hub, table_1 = login("hub").connected(), login("table-1").connected()

    hub.publish(messages.topic("table-1", messages.EVENTS), event("table-1", 0, "forged by hub"))
    hub.publish(messages.topic("table-1", messages.STATUS), status("table-1", "forged by hub"))
    control = event("table-1", 0, "the table's own")
    table_1.publish(messages.topic("table-1", messages.EVENTS), control)

    watcher.wait_for(messages.topic("table-1", messages.EVENTS), control)
    time.sleep(QUIET_S)
    assert watcher.topics() == [messages.topic("table-1", messages.EVENTS)]


def test_the_hub_cannot_be_a_table_named_hub(tmp_path: Path) -> None:
    """The sample ACL's ``pattern`` lines give every user its own table's topics; the user
    ``hub`` is denied ``tablesight/hub/...``. Read by a watcher of every topic (a user
    added to copies of the sample's files for the test, the sample's lines unchanged):
    what the hub writes there never arrives, while its command to table-1, written after
    them, does (a client's messages arrive in the order sent: nothing is still coming)."""
    if not Path(EXECUTABLE).exists():
        pytest.fail(f"{EXECUTABLE} is missing: .ci/run installs Debian's mosquitto")
    passwords, acl = tmp_path / "passwords", tmp_path / "acl"
    shutil.copyfile(PASSWORDS, passwords)
    subprocess.run(
        ["mosquitto_passwd", "-b", str(passwords), "watcher", "watching"],
        check=True,
        capture_output=True,
    )
    acl.write_text(ACL.read_text() + "\nuser watcher\ntopic read #\n")
    with Mosquitto(tmp_path / "broker", passwords=passwords, acl=acl) as broker:
        watcher = Peer(broker.url, "watcher", "watching").connected()
        hub = Peer(broker.url, "hub", SAMPLE_PASSWORD["hub"]).connected()
        table_1 = Peer(broker.url, "table-1", SAMPLE_PASSWORD["table-1"]).connected()
        try:
            watcher.subscribe("#")
            hub.subscribe(messages.ALL_TABLES)
            hub.publish_as("hub", every_kind("hub", "a table named hub"))
            control = command("table-1", "Ann")
            hub.publish(messages.topic("table-1", messages.COMMANDS), control)
            table_1.publish(messages.topic("table-1", messages.STATUS), status("table-1", "on"))

            watcher.wait_for(messages.topic("table-1", messages.COMMANDS), control)
            assert [t for t in watcher.topics() if t.startswith("tablesight/hub/")] == []
            assert watcher.topics()[0] == messages.topic("table-1", messages.COMMANDS)
            # the hub reads every table still, and commands them
            hub.wait_for(messages.topic("table-1", messages.STATUS), status("table-1", "on"))
            assert not [t for t in hub.topics() if t.startswith("tablesight/hub/")]
        finally:
            for peer in (watcher, hub, table_1):
                peer.close()


# -- what a table may do -----------------------------------------------------------------


def test_a_table_writes_its_own_topics_and_the_hub_reads_them(login: Login) -> None:
    hub = login("hub").connected()
    hub.subscribe(messages.ALL_TABLES)
    table_1 = login("table-1").connected()
    sent = every_kind("table-1", 'ganger moved 7.20" of 5.00"')
    table_1.publish_as("table-1", sent)

    for kind, payload in sent.items():
        hub.wait_for(messages.topic("table-1", kind), payload)
    decoded = [messages.decode(t, p) for t, p, _ in hub.received]
    assert [type(m).__name__ for m in decoded] == ["Status", "EventMessage", "Flags", "Answer"]
    assert {m.table for m in decoded if m is not None} == {"table-1"}


# -- who may log in ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("user", "password"),
    [
        ("table-1", "wrong"),  # a wrong password
        ("table-2", SAMPLE_PASSWORD["table-1"]),  # another table's password
        ("hub", SAMPLE_PASSWORD["table-1"]),
        ("table-9", "replace-me-table-9"),  # no such user
        (None, None),  # anonymous
    ],
)
def test_a_client_without_its_password_is_refused(
    login: Login, user: str | None, password: str | None
) -> None:
    refused = login(user, password)
    assert refused.answered.wait(WAIT_S)
    # MQTT 3.1.1's "not authorized" (5), which paho says as MQTT 5's 135
    assert refused.reason.is_failure
    assert str(refused.reason) == "Not authorized"


# -- the sample's mosquitto.conf ---------------------------------------------------------


def venue_broker(folder: Path) -> Mosquitto:
    """A broker run from ``samples/mosquitto/mosquitto.conf`` as it stands, but for its
    listener (a free port of 127.0.0.1, not 1883), its files' folder (the sample's, named
    absolutely), and where it keeps its database and log (``folder``)."""
    broker = Mosquitto(folder)  # its port and folder; its config replaced below
    text = (SAMPLE / "mosquitto.conf").read_text()
    assert "\nlistener 1883\n" in text and "samples/mosquitto/passwords" in text
    text = text.replace(
        "\nlistener 1883\n", f"\nlistener {broker.port} 127.0.0.1\nuser {getpass.getuser()}\n"
    ).replace("samples/mosquitto/", f"{SAMPLE}/")
    text += f"\npersistence_location {folder}/\nlog_dest file {folder}/mosquitto.log\n"
    broker.config.write_text(text)
    return broker


def test_the_sample_config_keeps_the_hubs_session_and_queue(tmp_path: Path) -> None:
    if not Path(EXECUTABLE).exists():
        pytest.fail(f"{EXECUTABLE} is missing: .ci/run installs Debian's mosquitto")
    broker = venue_broker(tmp_path / "venue").start()
    peers: list[Peer] = []

    def login(user: str, client_id: str) -> Peer:
        peers.append(Peer(broker.url, user, SAMPLE_PASSWORD[user], client_id, clean_session=False))
        return peers[-1].connected()

    try:
        hub = login("hub", "tablesight-hub-hub")
        hub.subscribe(messages.ALL_TABLES)
        # a table's password under the hub's client id: the broker knows it as table-1
        table_1 = login("table-1", "tablesight-hub-hub")
        said = status("table-1", "playing")
        table_1.publish(messages.topic("table-1", messages.STATUS), said, retain=True)
        hub.wait_for(messages.topic("table-1", messages.STATUS), said)
        assert hub.disconnects == 0

        # the hub away, an event queued for it, the broker restarted: both kept
        hub.close()
        queued = event("table-1", 0, "sent while the hub was away")
        table_1.publish(messages.topic("table-1", messages.EVENTS), queued)
        table_1.close()
        broker.stop()
        broker.start()
        back = login("hub", "tablesight-hub-hub")
        back.wait_for(messages.topic("table-1", messages.EVENTS), queued)
        back.subscribe(messages.ALL_TABLES)
        back.wait_for(messages.topic("table-1", messages.STATUS), said)
    finally:
        for peer in peers:
            peer.close()
        broker.stop()
    assert "Error" not in broker.log(), broker.log()


# -- the sample's password file ----------------------------------------------------------


def test_mosquitto_passwd_adds_a_table_and_keeps_the_others(tmp_path: Path) -> None:
    tool = shutil.which("mosquitto_passwd")
    if tool is None:
        pytest.skip("mosquitto_passwd is not installed (Debian's mosquitto package has it)")
    passwords = tmp_path / "passwords"
    shutil.copyfile(PASSWORDS, passwords)

    done = subprocess.run(
        [tool, "-b", str(passwords), "table-5", "replace-me-table-5"],
        capture_output=True,
        text=True,
        check=False,
    )

    assert (done.returncode, done.stderr) == (0, "")
    users = [line.split(":")[0] for line in passwords.read_text().splitlines()]
    assert users == ["hub", "table-1", "table-2", "table-3", "table-4", "table-5"]
    # the new table needs nothing in the ACL: its user name is its table name
    with Mosquitto(tmp_path / "broker", passwords=passwords, acl=ACL) as broker:
        peers = [
            Peer(broker.url, "hub", SAMPLE_PASSWORD["hub"]),
            Peer(broker.url, "table-5", "replace-me-table-5"),
            Peer(broker.url, "table-1", SAMPLE_PASSWORD["table-1"]),
        ]
        try:
            hub, table_5, _ = (peer.connected() for peer in peers)
            hub.subscribe(messages.ALL_TABLES)
            said = status("table-5", "playing")
            table_5.publish(messages.topic("table-5", messages.STATUS), said, retain=True)
            hub.wait_for(messages.topic("table-5", messages.STATUS), said)
        finally:
            for peer in peers:
                peer.close()
