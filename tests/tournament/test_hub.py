"""The hub (``tablesight.tournament.hub.Hub``) on a real Mosquitto, fed by a test client that
publishes exactly the contract's messages (``tablesight.tournament.messages.encode``), as tables
would: the list, its counts and order (worked out here by hand), duplicates dropped, gaps
counted (in a game met under way, only after its first event received), a new game
starting the counts again, a table's last will, messages that do not fit, a
decision sent and its answer matched, the tables' pages tried, and the hub's persistent
session: a hub started again gets the retained status and flags and the events sent
while it was away, also across a broker restart."""

from __future__ import annotations

import http.server
import logging
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from tablesight.rig.tablevoices import flag
from tablesight.rules.errors import InputError
from tablesight.tournament import hub as hub_module
from tablesight.tournament import messages
from tablesight.tournament.hub import Hub, UnknownTable
from tablesight.tournament.link import BrokerLink

WAIT_S = 10.0


def until(hub: Hub, holds: Callable[[], bool], wait_s: float = WAIT_S) -> None:
    """Wait for the hub's changes until ``holds()``."""
    end = time.monotonic() + wait_s
    version = -1
    while not holds():
        left = end - time.monotonic()
        assert left > 0, "the hub never got there"
        version = hub.wait_for_change(version, min(left, 0.5))


def listed(hub: Hub) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in hub.tables()}


def test_the_list_counts_and_puts_the_tables_needing_a_judge_first(started, tables):
    hub = started()
    # alpha: 1 open violation and 1 open advisory; bravo: 3 violations, 1 of them
    # dismissed (2 open); echo: 1 open close call and an accepted violation; charlie: no
    # flags, offline; delta: no flags, online
    tables.status("alpha", "ga")
    tables.flags("alpha", "ga", [flag(2), flag(3, "advisory", "brute")])
    tables.status("bravo", "gb")
    tables.flags("bravo", "gb", [flag(4), flag(5, model="brute"), flag(7, decision="dismiss")])
    tables.status("echo", "ge")
    tables.flags("echo", "ge", [flag(1, "close_call"), flag(6, decision="accept")])
    tables.status("charlie", "gc")
    tables.publish("charlie", messages.STATUS, {"online": False, "reason": "stopped"}, True)
    tables.status("delta", "gd", turn=3, phase="shooting", side="escher")
    sent = [tables.event("alpha", "ga", k) for k in range(3)]
    until(hub, lambda: len(listed(hub)) == 5 and listed(hub)["alpha"]["events"] == 3)
    until(hub, lambda: listed(hub)["bravo"]["violations"] == 2)

    shown = hub.tables()
    assert [t["name"] for t in shown] == ["bravo", "alpha", "echo", "charlie", "delta"]
    by_name = {t["name"]: t for t in shown}
    assert {n: t["violations"] for n, t in by_name.items()} == {
        "bravo": 2,
        "alpha": 1,
        "echo": 0,
        "charlie": 0,
        "delta": 0,
    }
    assert {n: t["open_flags"] for n, t in by_name.items()} == {
        "bravo": 2,
        "alpha": 2,
        "echo": 1,
        "charlie": 0,
        "delta": 0,
    }
    assert by_name["charlie"]["status"] == "offline"
    assert by_name["charlie"]["reason"] == "stopped"
    delta = by_name["delta"]
    assert (delta["status"], delta["since"]) == ("online", 1_700_000_000.0)
    assert (delta["turn"], delta["phase"], delta["side"]) == (3, "shooting", "escher")
    assert (delta["title"], delta["game"], delta["game_id"]) == ("Necromunda", "necromunda", "gd")
    assert [f["model"] for f in by_name["alpha"]["flags"]] == ["ganger", "brute"]
    alpha = by_name["alpha"]
    assert alpha["last_event"]["id"] == 2
    assert alpha["last_event"]["sent_ms"] == pytest.approx(sent[2])
    delay_ms = alpha["last_event"]["received_ms"] - sent[2]
    assert 0.0 <= delay_ms < 2000.0
    print(f"publish -> hub: {delay_ms:.1f} ms")
    details = hub.table("alpha")
    assert [e["id"] for e in details["last_events"]] == [0, 1, 2]
    with pytest.raises(UnknownTable, match="nobody"):
        hub.table("nobody")


def test_duplicates_are_dropped_and_gaps_counted(started, tables):
    hub = started()
    tables.status("alpha", "g1")
    for event_id in (0, 1, 1, 2, 5, 2):
        tables.event("alpha", "g1", event_id)
    tables.event("alpha", "g1", 6)  # the last one: everything before it has come
    until(hub, lambda: (listed(hub).get("alpha", {}).get("last_event") or {}).get("id") == 6)
    alpha = listed(hub)["alpha"]
    # 0, 1, 2, 5, 6 once each; 1 and 2 again; 3 and 4 never came
    assert (alpha["events"], alpha["duplicates"], alpha["gaps"]) == (5, 2, 2)
    assert [e["id"] for e in hub.table("alpha")["last_events"]] == [0, 1, 2, 5, 6]


def test_a_game_met_under_way_counts_no_gaps_before_its_first_event(started, tables):
    # alpha is at event 9 (10 emitted, its retained status says so) when the hub starts
    tables.status("alpha", "g1", events=10)
    # bravo's first message to the hub is its event 5 (no status retained)
    hub = started()
    until(hub, lambda: listed(hub).get("alpha", {}).get("published") == 10)
    for event_id in range(10, 15):
        tables.event("alpha", "g1", event_id)
    for event_id in (5, 6, 7, 9):  # 8 is lost after the first one: a gap
        tables.event("bravo", "g2", event_id)
    until(hub, lambda: (listed(hub)["alpha"].get("last_event") or {}).get("id") == 14)
    until(hub, lambda: (listed(hub).get("bravo", {}).get("last_event") or {}).get("id") == 9)
    alpha, bravo = listed(hub)["alpha"], listed(hub)["bravo"]
    assert (alpha["events"], alpha["gaps"], alpha["duplicates"]) == (5, 0, 0)
    assert (bravo["events"], bravo["gaps"], bravo["duplicates"]) == (4, 1, 0)


def test_a_game_seen_from_its_start_counts_every_missing_id(started, tables):
    hub = started()
    tables.status("alpha", "g1", events=0)
    for event_id in (0, 1, 2, 4, 5):
        tables.event("alpha", "g1", event_id)
    # bravo's first message is its event 0: seen from the start too; 1 and 2 never come
    for event_id in (0, 3):
        tables.event("bravo", "g2", event_id)
    until(hub, lambda: (listed(hub).get("alpha", {}).get("last_event") or {}).get("id") == 5)
    until(hub, lambda: (listed(hub).get("bravo", {}).get("last_event") or {}).get("id") == 3)
    alpha, bravo = listed(hub)["alpha"], listed(hub)["bravo"]
    assert (alpha["events"], alpha["gaps"]) == (5, 1)
    assert (bravo["events"], bravo["gaps"]) == (2, 2)


def test_a_hub_met_again_counts_from_the_first_event_queued_for_it(started, tables):
    # a hub that saw events 0..2 is started again: its session kept 3..7 for it (and the
    # status counting 8); it meets the game under way and counts from 3, with no gaps
    hub = started("judges")
    tables.status("alpha", "g1", events=0)
    for event_id in range(3):
        tables.event("alpha", "g1", event_id)
    until(hub, lambda: listed(hub).get("alpha", {}).get("events") == 3)
    hub.close()
    for event_id in range(3, 8):
        tables.event("alpha", "g1", event_id)
    tables.status("alpha", "g1", events=8)
    again = started("judges")
    until(again, lambda: (listed(again).get("alpha", {}).get("last_event") or {}).get("id") == 7)
    alpha = listed(again)["alpha"]
    assert (alpha["events"], alpha["gaps"], alpha["published"]) == (5, 0, 8)
    assert [e["id"] for e in again.table("alpha")["last_events"]] == [3, 4, 5, 6, 7]


def test_events_queued_for_the_hub_after_the_retained_status_start_the_count(link):
    # the order Mosquitto gives depends on when the session resumes; here the retained
    # status counting 8 comes first, then the events 3..7 kept for the hub, then 9
    hub = Hub(link, "unstarted")
    try:
        status = {"table": "alpha", "online": True, "game_id": "g1", "events": 8}
        hub._take(messages.topic("alpha", messages.STATUS), messages.encode(status), 0.0)
        for event_id in (3, 4, 5, 6, 7, 9):
            event = {"id": event_id, "t": 0.0, "kind": "model_moved", "message": "m"}
            body = {"table": "alpha", "game_id": "g1", "sent_ms": 1.0, "event": event}
            hub._take(messages.topic("alpha", messages.EVENTS), messages.encode(body), 1.0)
    finally:
        hub.close()
    alpha = listed(hub)["alpha"]
    assert (alpha["events"], alpha["gaps"], alpha["published"]) == (6, 1, 8)


def test_a_new_game_starts_the_counts_again_and_the_old_one_is_late(started, tables):
    hub = started()
    tables.status("alpha", "g1")
    tables.flags("alpha", "g1", [flag(2)])
    for event_id in range(4):
        tables.event("alpha", "g1", event_id)
    until(hub, lambda: listed(hub).get("alpha", {}).get("events") == 4)
    tables.status("alpha", "g2", turn=1)
    tables.event("alpha", "g2", 0)
    until(hub, lambda: listed(hub)["alpha"]["game_id"] == "g2")
    until(hub, lambda: listed(hub)["alpha"]["events"] == 1)
    alpha = listed(hub)["alpha"]
    assert (alpha["violations"], alpha["flags"]) == (0, [])
    # the first game's messages coming late change nothing
    tables.event("alpha", "g1", 9)
    tables.flags("alpha", "g1", [flag(3)])
    tables.event("alpha", "g2", 1)
    until(hub, lambda: listed(hub)["alpha"]["events"] == 2)
    alpha = listed(hub)["alpha"]
    assert (alpha["game_id"], alpha["violations"], alpha["flags"]) == ("g2", 0, [])
    assert alpha["last_event"]["id"] == 1
    assert hub.table("alpha")["late"] == 2


def test_a_tables_last_will_says_it_is_offline_since_the_hub_saw_it(started, tables, mosquitto):
    hub = started()
    table = mqtt.Client(
        CallbackAPIVersion.VERSION2, client_id="tablesight-table-alpha", protocol=mqtt.MQTTv311
    )
    will = {"table": "alpha", "online": False, "reason": "connection lost"}
    table.will_set(
        messages.topic("alpha", messages.STATUS), messages.encode(will), qos=1, retain=True
    )
    connected = threading.Event()
    table.on_connect = lambda *_: connected.set()
    table.connect("127.0.0.1", mosquitto.port)
    table.loop_start()
    assert connected.wait(WAIT_S)
    since = time.time() - 600.0
    status = {"online": True, "since": since, "game_id": "g1", "title": "Necromunda", "turn": 2}
    payload = messages.encode({"table": "alpha", **status})
    table.publish(messages.topic("alpha", messages.STATUS), payload, 1, True).wait_for_publish(5)
    until(hub, lambda: listed(hub).get("alpha", {}).get("status") == "online")
    assert listed(hub)["alpha"]["since"] == pytest.approx(since)
    # the laptop dies: its connection drops without a goodbye
    table.loop_stop()
    before = time.time()
    sock = table.socket()
    assert sock is not None
    sock.shutdown(socket.SHUT_RDWR)
    sock.close()
    until(hub, lambda: listed(hub)["alpha"]["status"] == "offline")
    after = time.time()
    alpha = listed(hub)["alpha"]
    assert alpha["reason"] == "connection lost"
    assert before - 0.1 <= alpha["since"] <= after + 0.1
    # what it last said of its game stays
    assert (alpha["title"], alpha["turn"], alpha["game_id"]) == ("Necromunda", 2, "g1")


def test_messages_that_do_not_fit_are_counted_and_the_hub_goes_on(started, tables):
    hub = started()
    tables.status("alpha", "g1")
    bad = [
        (messages.topic("alpha", messages.STATUS), b"not json"),
        (messages.topic("alpha", messages.FLAGS), messages.encode({"table": "alpha"})),
        (messages.topic("alpha", messages.EVENTS), messages.encode({"table": "bravo"})),
        (
            messages.topic("alpha", messages.EVENTS),
            messages.encode(
                {"table": "alpha", "game_id": "g1", "sent_ms": 1.0, "event": {"id": "x"}}
            ),
        ),
        (messages.topic("alpha", messages.STATUS), b"[1, 2]"),
    ]
    for topic, payload in bad:
        tables.raw(topic, payload)
    tables.event("alpha", "g1", 0)
    until(hub, lambda: listed(hub).get("alpha", {}).get("events") == 1)
    alpha = listed(hub)["alpha"]
    assert alpha["problems"] == len(bad) == hub.state()["problems"]
    assert alpha["problem"].startswith("tablesight/alpha/status")
    assert alpha["status"] == "online"  # the good status before them stands
    assert hub.state()["connected"] is True


def test_an_unreadable_message_is_one_line_in_the_log_and_counted_against_its_table(
    started, tables, caplog, monkeypatch
):
    caplog.set_level(logging.DEBUG, logger="tablesight")
    hub = started()
    tables.status("alpha", "g1")
    tables.status("bravo", "g2")
    status = messages.topic("alpha", messages.STATUS)
    events = messages.topic("alpha", messages.EVENTS)
    flags = messages.topic("alpha", messages.FLAGS)
    bad = [
        (status, b'{"v": 1, "table": "alpha", "online": true, "turn": ' + b"7" * 5000 + b"}"),
        (events, b"[" * 100_000 + b"]" * 100_000),
        (flags, b'{"v": 1, "table": "alpha", "game_id": "g1", "flags": "none"}'),
        (flags, b'{"v": 1, "table": "alpha", "game_id": "g1", "flags": [], "x": "\xff"}'),
        (status, messages.encode({"table": "alpha", "online": True}).replace(b'"v":1', b'"v":"1"')),
        (status, messages.encode({"table": "alpha", "online": True, "turn": True})),
    ]
    said = [
        f"{status}: turn: a number of 5000 digits, too long to read",
        f"{events}: not JSON (nested too deep)",
        f"{flags}: flags: Input should be a valid list",
        f"{flags}: not JSON",  # a byte 0xff is not UTF-8
        f"{status}: v: Input should be a valid integer",
        f"{status}: turn: Input should be a valid integer",
    ]
    for topic, payload in bad:
        tables.raw(topic, payload)
    tables.event("alpha", "g1", 0)
    until(hub, lambda: listed(hub)["alpha"]["events"] == 1)
    shown = listed(hub)
    assert shown["alpha"]["problems"] == len(bad) == hub.state()["problems"]
    assert shown["alpha"]["problem"] == said[-1]
    assert shown["bravo"]["problems"] == 0
    assert shown["alpha"]["turn"] == 1  # the good status before them stands
    # logged in one line, at most one a table per 10 s: the burst's first only ...
    lines = [r.getMessage() for r in caplog.records if r.name == "tablesight.hub"]
    assert lines == [f"hub hub: a message not read: {said[0]}"]
    # ... and the next line, once due, says how many were not
    monkeypatch.setattr(hub_module, "PROBLEM_LOG_EVERY_S", 0.0)
    tables.raw(status, b"[1, 2]")
    until(hub, lambda: listed(hub)["alpha"]["problems"] == len(bad) + 1)
    lines = [r.getMessage() for r in caplog.records if r.name == "tablesight.hub"]
    assert lines[1:] == [
        f"hub hub: a message not read: {status}: expected a JSON object (and 5 more not logged)"
    ]
    assert not [r for r in caplog.records if r.exc_info]
    assert "Traceback" not in caplog.text


def test_a_fault_reading_a_message_is_one_line_counted_against_its_table(
    started, tables, caplog, monkeypatch
):
    hub = started()
    tables.status("alpha", "g1")
    until(hub, lambda: "alpha" in listed(hub))

    def fails(*_args: Any) -> None:
        raise RuntimeError("a fault\nof two lines")

    monkeypatch.setattr(hub, "_flags", fails)
    tables.flags("alpha", "g1", [flag(2)])
    until(hub, lambda: listed(hub)["alpha"]["problems"] == 1)
    alpha = listed(hub)["alpha"]
    assert alpha["problem"] == ("tablesight/alpha/flags: could not be read (RuntimeError: a fault)")
    assert hub.state()["problems"] == 1
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert lines == [f"hub hub: a message not read: {alpha['problem']}"]
    assert "Traceback" not in caplog.text


def test_a_decision_is_sent_to_its_table_and_its_answer_matched(started, tables, mosquitto):
    hub = started()
    tables.status("alpha", "g1")
    tables.flags("alpha", "g1", [flag(2), flag(3, "advisory")])
    until(hub, lambda: listed(hub).get("alpha", {}).get("violations") == 1)
    received: list[bytes] = []
    got = threading.Event()

    def take(_c: Any, _d: Any, message: mqtt.MQTTMessage) -> None:
        received.append(message.payload)
        got.set()

    tables.client.on_message = take
    tables.client.subscribe(messages.topic("alpha", messages.COMMANDS), qos=1)
    time.sleep(0.3)
    with pytest.raises(UnknownTable):
        hub.decide("nobody", 2, "accept", "Ann")
    for args, field in [
        ((9, "accept", "Ann"), "flag"),
        ((2, "overrule", "Ann"), "decision"),
        ((2, "accept", "  "), "by"),
        ((2, "accept", "A" * 65), "by"),
        ((2, "accept", "Ann", "n" * 501), "note"),
    ]:
        with pytest.raises(InputError, match=f"^{field}: "):
            hub.decide("alpha", *args)
    command_id = hub.decide("alpha", 2, "dismiss", "Ann", "the tape says 5.9")
    assert got.wait(WAIT_S)
    command = messages.decode(messages.topic("alpha", messages.COMMANDS), received[0])
    assert isinstance(command, messages.Command)
    assert (command.id, command.game_id, command.flag) == (command_id, "g1", 2)
    assert (command.decision, command.by, command.note) == ("dismiss", "Ann", "the tape says 5.9")
    assert len(command_id) == 32
    tables.publish("alpha", messages.ANSWERS, {"command": command_id, "ok": False, "error": "no"})
    until(hub, lambda: listed(hub)["alpha"]["answer"] is not None)
    answer = listed(hub)["alpha"]["answer"]
    assert (answer["command"], answer["ok"], answer["error"]) == (command_id, False, "no")
    assert (answer["flag"], answer["decision"], answer["by"]) == (2, "dismiss", "Ann")
    (sent,) = hub.table("alpha")["commands"]
    assert sent["answer"]["ok"] is False


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"table view")

    def log_message(self, *_args: Any) -> None:
        pass


def test_a_tables_page_is_linked_only_when_it_answers(started, tables):
    page = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=page.serve_forever, daemon=True).start()
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    try:
        hub = started(check_every_s=0.2)
        live = f"http://127.0.0.1:{page.server_address[1]}/"
        tables.status("alpha", "g1", url=live)
        tables.status("bravo", "g2", url=f"http://127.0.0.1:{closed}/")
        tables.status("charlie", "g3", url="javascript:alert(1)")
        until(hub, lambda: listed(hub).get("alpha", {}).get("reachable") is True)
        until(hub, lambda: listed(hub).get("bravo", {}).get("reachable") is not None)
        shown = listed(hub)
        assert (shown["alpha"]["url"], shown["alpha"]["reachable"]) == (live, True)
        assert shown["bravo"]["reachable"] is False
        # no page address: nothing tried, nothing said of it
        assert (shown["charlie"]["url"], shown["charlie"]["reachable"]) == (None, None)
        assert shown["charlie"]["unchecked"] is None
        page.shutdown()
        page.server_close()
        until(hub, lambda: listed(hub)["alpha"]["reachable"] is False)
    finally:
        page.server_close()


def test_what_is_kept_per_table_is_bounded(started, tables):
    hub = started()
    tables.status("alpha", "g1")
    tables.flags("alpha", "g1", [flag(2)])
    for event_id in range(120):
        tables.event("alpha", "g1", event_id)
    until(hub, lambda: listed(hub).get("alpha", {}).get("events") == 120)
    assert [e["id"] for e in hub.table("alpha")["last_events"]] == list(range(70, 120))
    for _ in range(30):
        hub.decide("alpha", 2, "accept", "Ann")
    assert len(hub.table("alpha")["commands"]) == 20


def test_a_hub_started_again_gets_what_was_sent_while_it_was_away(started, tables, mosquitto):
    hub = started("judges")
    tables.status("alpha", "g1", turn=2)
    tables.flags("alpha", "g1", [flag(2)])
    tables.status("bravo", "g2")
    for event_id in range(3):
        tables.event("alpha", "g1", event_id)
    until(hub, lambda: listed(hub).get("alpha", {}).get("events") == 3)
    hub.close()
    # while it is away: events, a flag decided, and the broker restarted
    for event_id in range(3, 8):
        tables.event("alpha", "g1", event_id)
    tables.flags("alpha", "g1", [flag(2, decision="accept"), flag(4, model="brute")])
    tables.close()
    mosquitto.stop()
    mosquitto.start()
    tables.connect(mosquitto.port, "test-tables-2")

    again = started("judges")
    until(again, lambda: listed(again).get("alpha", {}).get("events") == 5)
    until(again, lambda: "bravo" in listed(again))
    alpha = listed(again)["alpha"]
    assert [e["id"] for e in again.table("alpha")["last_events"]] == [3, 4, 5, 6, 7]
    # 0..2 were the hub's before it went away, not lost: it met the game under way
    assert (alpha["turn"], alpha["gaps"], alpha["duplicates"]) == (2, 0, 0)
    assert [(f["id"], f["decision"]) for f in alpha["flags"]] == [(2, "accept"), (4, None)]
    assert alpha["violations"] == 1
    # and while it runs, the broker restarting: it connects again by itself
    mosquitto.stop()
    until(again, lambda: again.state()["connected"] is False)
    mosquitto.start()
    until(again, lambda: again.state()["connected"] is True, wait_s=15.0)
    tables.close()
    tables.connect(mosquitto.port, "test-tables-3")
    tables.event("alpha", "g1", 8)
    until(again, lambda: listed(again)["alpha"]["events"] == 6)


def test_a_table_whose_status_is_cleared_is_gone_and_commands_make_none(started, tables):
    hub = started()
    tables.status("alpha", "g1")
    tables.status("bravo", "g2")
    until(hub, lambda: set(listed(hub)) == {"alpha", "bravo"})
    version = hub.version
    tables.raw(messages.topic("alpha", messages.STATUS), b"", retain=True)  # the organiser
    until(hub, lambda: set(listed(hub)) == {"bravo"})
    # another hub's command to a table never heard from is no table
    command = {"id": "c1", "game_id": "g9", "flag": 1, "decision": "accept", "by": "Bo"}
    tables.publish("ghost", messages.COMMANDS, command)
    tables.status("charlie", "g3")
    until(hub, lambda: "charlie" in listed(hub))
    assert set(listed(hub)) == {"bravo", "charlie"}
    now, order, rows = hub.changes(version)
    assert (order, [r["name"] for r in rows]) == (["bravo", "charlie"], ["charlie"])
    assert now == hub.version


def test_a_table_that_is_away_is_sent_no_decision(started, tables):
    """A table's session is clean: a command sent while it is away would be lost, so the
    hub refuses it, naming the table and why it is offline; once back, it is sent."""
    hub = started()
    tables.status("alpha", "g1")
    tables.flags("alpha", "g1", [flag(2)])
    until(hub, lambda: listed(hub).get("alpha", {}).get("violations") == 1)
    tables.publish(
        "alpha", messages.STATUS, {"online": False, "reason": "connection lost"}, retain=True
    )
    until(hub, lambda: listed(hub)["alpha"]["status"] == "offline")
    with pytest.raises(InputError, match=r"^table: 'alpha' is offline \(connection lost\)"):
        hub.decide("alpha", 2, "dismiss", "Ann")
    assert hub.table("alpha")["commands"] == []
    tables.status("alpha", "g1")
    until(hub, lambda: listed(hub)["alpha"]["status"] == "online")
    assert len(hub.decide("alpha", 2, "dismiss", "Ann")) == 32


def test_a_broker_that_refuses_the_hub_is_said_apart_from_bad_messages(tmp_path):
    """A wrong password: the hub says why the broker will not have it (the broker's own
    reason), and counts no message as not read."""
    from pathlib import Path

    from tablesight.rig.mosquitto import Mosquitto

    sample = Path(__file__).resolve().parents[2] / "samples" / "mosquitto"
    broker = Mosquitto(tmp_path / "b", passwords=sample / "passwords", acl=sample / "acl")
    with broker:
        hub = Hub(BrokerLink.parse(broker.url, "hub", "not the password"), "hub").start()
        try:
            until(hub, lambda: hub.state()["refused"] is not None)
            state = hub.state()
            assert "Not authorized" in state["refused"], state
            assert (state["connected"], state["problems"]) == (False, 0)
        finally:
            hub.close()


def test_a_broker_that_cannot_be_reached_is_said_once_until_the_hub_connects(tmp_path, caplog):
    """A --broker that no broker answers at (a mistyped port, the broker not started): the
    page says why the hub is not connected and the log says it once, not at every try;
    the broker started there, the hub connects and says so."""
    from tablesight.rig.mosquitto import Mosquitto, free_port

    caplog.set_level(logging.WARNING, logger="tablesight.hub")
    port = free_port()
    hub = Hub(BrokerLink.parse(f"mqtt://127.0.0.1:{port}"), "hub").start()
    try:
        line = (
            f"cannot connect to the broker mqtt://127.0.0.1:{port} (check the host and port "
            "in --broker, and that the broker runs)"
        )
        until(hub, lambda: hub.state()["refused"] is not None)
        assert hub.state()["refused"] == line
        time.sleep(3.0)  # tried again meanwhile (every 0.5 s, then 1, 2)
        with Mosquitto(tmp_path / "broker", port=port):
            assert hub.wait_subscribed(WAIT_S)
            state = hub.state()
    finally:
        hub.close()
    assert (state["connected"], state["refused"]) == (True, None)
    said = [r.getMessage() for r in caplog.records]
    assert said == [
        f"hub hub: {line}; trying again",
        f"hub hub: connected to the broker mqtt://127.0.0.1:{port}",
    ]
