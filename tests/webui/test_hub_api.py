"""The hub's API over real HTTP (``tablesight.webui.hub.hub_server`` on a free port) on a real
Mosquitto, fed by a test client publishing the contract's messages as tables would: the
list's shape and values, one table's details, the refusals naming their fields, a
decision arriving at its table as a command, the stream following the list, and the
token a hub listening beyond this machine asks of a decision."""

from __future__ import annotations

import http.server
import itertools
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tablesight.rig.tablevoices import TableVoices, flag
from tablesight.tournament import messages
from tablesight.tournament.hub import Hub
from tablesight.tournament.link import BrokerLink
from tablesight.webui.hub import hub_server

WAIT_S = 10.0
#: Every table in the list has at least these keys.
LISTED_KEYS = {
    "name",
    "status",
    "since",
    "game",
    "title",
    "turn",
    "phase",
    "side",
    "events",
    "violations",
    "flags",
    "last_event",
    "url",
}


def call(
    url: str, body: Any = None, headers: dict[str, str] | None = None, raw: bytes | None = None
) -> tuple[int, Any]:
    """A GET (or, with a body, a POST) and its status and JSON."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(
        url,
        data=data,
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST" if data is not None else "GET",
    )
    try:
        with urllib.request.urlopen(request, timeout=WAIT_S) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, json.loads(exc.read())


@pytest.fixture
def tables(mosquitto) -> Iterator[TableVoices]:
    publisher = TableVoices(mosquitto.port, turn=2)
    yield publisher
    publisher.close()


@pytest.fixture
def hub(mosquitto) -> Iterator[Hub]:
    started = Hub(BrokerLink.parse(mosquitto.url), "api").start()
    assert started.wait_subscribed(WAIT_S)
    yield started
    started.close()


@pytest.fixture
def served(hub) -> Iterator[str]:
    server = hub_server(hub, "127.0.0.1", 0).start()
    yield f"http://127.0.0.1:{server.port}/"
    server.close()


def listed(url: str) -> dict[str, dict[str, Any]]:
    status, body = call(url + "api/tables")
    assert status == 200
    return {t["name"]: t for t in body["tables"]}


def until(url: str, holds, wait_s: float = WAIT_S) -> dict[str, dict[str, Any]]:
    end = time.monotonic() + wait_s
    while True:
        shown = listed(url)
        if holds(shown):
            return shown
        assert time.monotonic() < end, f"never got there: {shown}"
        time.sleep(0.05)


@pytest.fixture
def two_tables(tables, served) -> float:
    """alpha: online, a violation and an advisory open, events 0 and 1 (the sent time of
    1 returned); bravo: offline, nothing open."""
    tables.status("alpha", "ga")
    tables.publish(
        "alpha",
        messages.FLAGS,
        {"game_id": "ga", "flags": [flag(2, "advisory", "brute"), flag(3)]},
        True,
    )
    tables.status("bravo", "gb", turn=4, phase="shooting")
    tables.publish("bravo", messages.STATUS, {"online": False, "reason": "stopped"}, True)
    sent = 0.0
    for event_id in (0, 1):
        sent = time.time() * 1000.0
        event = {"id": event_id, "t": 1.5 * event_id, "kind": "model_moved", "message": "moved"}
        body = {"game_id": "ga", "sent_ms": sent, "event": event}
        tables.publish("alpha", messages.EVENTS, body)
    until(served, lambda s: s.get("alpha", {}).get("events") == 2 and "bravo" in s)
    until(served, lambda s: s["alpha"]["violations"] == 1 and s["bravo"]["status"] == "offline")
    return sent


def test_the_list_says_every_table_with_the_one_needing_a_judge_first(served, two_tables):
    status, body = call(served + "api/tables")
    assert status == 200
    assert [t["name"] for t in body["tables"]] == ["alpha", "bravo"]
    assert body["hub"]["connected"] is True
    assert abs(body["now"] - time.time()) < 5
    alpha, bravo = body["tables"]
    assert set(alpha) >= LISTED_KEYS and set(bravo) >= LISTED_KEYS
    assert {k: alpha[k] for k in ("status", "since", "game", "title", "turn", "phase")} == {
        "status": "online",
        "since": 1_700_000_000.0,
        "game": "necromunda",
        "title": "Necromunda",
        "turn": 2,
        "phase": "movement",
    }
    assert (alpha["side"], alpha["events"], alpha["violations"]) == ("goliath", 2, 1)
    assert [(f["id"], f["kind"], f["headline"]) for f in alpha["flags"]] == [
        (2, "advisory", "brute: moved 7.0 of 6 in"),
        (3, "violation", "ganger: moved 7.0 of 6 in"),
    ]
    assert alpha["last_event"]["id"] == 1
    assert alpha["last_event"]["sent_ms"] == pytest.approx(two_tables)
    assert alpha["last_event"]["received_ms"] >= two_tables - 50
    assert (alpha["url"], alpha["reachable"], alpha["unchecked"]) == (None, None, None)
    assert (bravo["status"], bravo["violations"], bravo["flags"]) == ("offline", 0, [])
    assert (bravo["turn"], bravo["phase"], bravo["last_event"]) == (4, "shooting", None)
    assert time.time() - 10 < bravo["since"] <= time.time()


def test_one_table_and_the_refusals_naming_their_fields(served, two_tables):
    status, alpha = call(served + "api/tables/alpha")
    assert status == 200
    assert [e["id"] for e in alpha["last_events"]] == [0, 1]
    assert alpha["commands"] == []

    def refused(answer: tuple[int, Any], status: int, field: str) -> str:
        assert answer[0] == status, answer
        assert (answer[1]["error"]["status"], answer[1]["error"]["field"]) == (status, field)
        return str(answer[1]["error"]["message"])

    assert "nobody" in refused(call(served + "api/tables/nobody"), 404, "table")
    decide = served + "api/tables/alpha/decide"
    good = {"flag": 3, "decision": "dismiss", "by": "Ann"}
    refused(call(decide, raw=b"{not json"), 400, "body")
    refused(call(decide, [1, 2]), 400, "body")
    refused(call(decide, {**good, "judge": "x"}), 400, "judge")
    for missing in ("flag", "decision", "by"):
        body = {k: v for k, v in good.items() if k != missing}
        refused(call(decide, body), 400, missing)
    for bad, field in [
        ({"flag": "3"}, "flag"),
        ({"flag": True}, "flag"),
        ({"flag": 9}, "flag"),
        ({"decision": "overrule"}, "decision"),
        ({"by": ""}, "by"),
        ({"by": 7}, "by"),
        ({"by": "x" * 65}, "by"),
        ({"note": "n" * 501}, "note"),
        ({"note": 5}, "note"),
    ]:
        refused(call(decide, {**good, **bad}), 400, field)
    refused(call(served + "api/tables/nobody/decide", good), 404, "table")


def test_a_decision_reaches_its_table_as_a_command(served, two_tables, tables):
    tables.listen(messages.topic("alpha", messages.COMMANDS))
    status, body = call(
        served + "api/tables/alpha/decide",
        {"flag": 3, "decision": "accept", "by": "Ann Judge", "note": "measured again: 7.1"},
    )
    assert status == 200
    with tables.news:
        assert tables.news.wait_for(lambda: tables.heard, WAIT_S)
    ((topic, payload),) = tables.heard
    assert topic == "tablesight/alpha/commands"
    sent = json.loads(payload)
    assert sent == {
        "v": 1,
        "table": "alpha",
        "id": body["command"],
        "game_id": "ga",
        "flag": 3,
        "decision": "accept",
        "by": "Ann Judge",
        "note": "measured again: 7.1",
    }
    tables.publish("alpha", messages.ANSWERS, {"command": body["command"], "ok": True})
    shown = until(served, lambda s: s["alpha"]["answer"] is not None)
    assert shown["alpha"]["answer"]["ok"] is True
    _, alpha = call(served + "api/tables/alpha")
    (command,) = alpha["commands"]
    assert (command["id"], command["flag"], command["answer"]["ok"]) == (body["command"], 3, True)


def read_stream(
    url: str, wanted, wait_s: float = WAIT_S, query: str = ""
) -> list[tuple[float, dict[str, Any]]]:
    """The stream's ``tables`` messages (with the time each came) until ``wanted`` of
    the list so far holds."""
    got: list[tuple[float, dict[str, Any]]] = []
    with urllib.request.urlopen(url + "api/stream" + query, timeout=wait_s) as response:
        assert response.headers["Content-Type"].startswith("text/event-stream")
        kind, data = None, []
        end = time.monotonic() + wait_s
        for raw in response:
            line = raw.decode().rstrip("\n")
            if line.startswith("event:"):
                kind = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
            elif not line and data:
                assert kind == "tables"
                got.append((time.monotonic(), json.loads("".join(data))))
                kind, data = None, []
                if wanted(got):
                    return got
            assert time.monotonic() < end, "the stream never said it"
    raise AssertionError("the stream ended")


def merged(got: list[tuple[float, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The list as a page holding the stream's messages so far has it."""
    rows: dict[str, dict[str, Any]] = {}
    for _, message in got:
        if message["full"]:
            rows = {}
        rows.update((t["name"], t) for t in message["tables"])
    return [rows[name] for name in got[-1][1]["order"]]


def test_the_stream_sends_the_tables_that_changed_at_most_five_times_a_second(
    served, two_tables, tables
):
    first = read_stream(served, lambda got: True)
    _, message = first[0]
    assert message["full"] is True and message["order"] == ["alpha", "bravo"]
    assert [t["name"] for t in message["tables"]] == ["alpha", "bravo"]
    assert message["tables"][0]["events"] == 2

    def publish() -> None:
        time.sleep(0.3)
        for k in range(2, 42):
            event = {"id": k, "t": k, "kind": "model_moved", "message": "moved"}
            body = {"game_id": "ga", "sent_ms": time.time() * 1000.0, "event": event}
            tables.publish("alpha", messages.EVENTS, body)
            time.sleep(0.02)
        tables.status("bravo", "gb", turn=5)

    writer = threading.Thread(target=publish)
    writer.start()

    def done(got: list[tuple[float, dict[str, Any]]]) -> bool:
        bravo = next(t for t in merged(got) if t["name"] == "bravo")
        return bravo["status"] == "online" and bravo["turn"] == 5

    got = read_stream(served, done)
    writer.join()
    final = {t["name"]: t for t in merged(got)}
    assert final["alpha"]["events"] == 42
    assert final["alpha"]["last_event"]["id"] == 41
    # after the first, each message holds only the tables that changed
    assert [m["full"] for _, m in got] == [True] + [False] * (len(got) - 1)
    changed = [sorted(t["name"] for t in m["tables"]) for _, m in got[1:]]
    assert all(names in (["alpha"], ["bravo"], ["alpha", "bravo"]) for names in changed), changed
    assert sum("bravo" in names for names in changed) == 1
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(got)]
    assert gaps and min(gaps) >= 0.15, gaps
    versions = [m["version"] for _, m in got]
    assert versions == sorted(versions)
    print(f"{len(got)} list messages for 41 changes; shortest gap {min(gaps) * 1000:.0f} ms")


def test_the_page_is_served_with_its_policy(served):
    with urllib.request.urlopen(served, timeout=WAIT_S) as response:
        page = response.read().decode()
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    assert "hub.js" in page and "hub.css" in page


def test_beyond_this_machine_a_decision_needs_the_token(hub, tables):
    tables.status("alpha", "ga")
    tables.publish("alpha", messages.FLAGS, {"game_id": "ga", "flags": [flag(3)]}, True)
    server = hub_server(hub, "0.0.0.0", 0).start()
    try:
        assert server.token
        url = f"http://127.0.0.1:{server.port}/"
        until(url, lambda s: s.get("alpha", {}).get("violations") == 1)
        decide = url + "api/tables/alpha/decide"
        good = {"flag": 3, "decision": "dismiss", "by": "Ann"}
        status, body = call(decide, good)
        assert (status, body["error"]["field"]) == (403, "token")
        status, body = call(decide, good, {"X-TableSight-Token": "wrong"})
        assert (status, body["error"]["field"]) == (403, "token")
        foreign = {"X-TableSight-Token": server.token, "Origin": "http://evil.example"}
        status, body = call(decide, good, foreign)
        assert (status, body["error"]["field"]) == (403, "Origin")
        status, body = call(decide, good, {"X-TableSight-Token": server.token})
        assert status == 200 and len(body["command"]) == 32
        status, body = call(decide + f"?token={server.token}", good)
        assert status == 200
        assert call(url + "api/tables")[0] == 200  # watching needs no token
        assert "?token=" in server.url
    finally:
        server.close()


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_args: Any) -> None:
        pass


def test_what_the_hub_made_of_a_tables_page_is_shown_only_with_the_token(hub, tables):
    """A hub listening beyond this machine: a viewer without its token sees no table's
    page address and nothing of whether it answered (null), with a wrong token neither;
    with the token (a header, or ?token= for the stream) the address, whether it answered
    and why one is not tried. The rest of the row is the same to both."""
    page = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=page.serve_forever, daemon=True).start()
    server = hub_server(hub, "0.0.0.0", 0).start()
    try:
        live = f"http://127.0.0.1:{page.server_address[1]}/"
        named = f"http://localhost:{page.server_address[1]}/"
        tables.status("alpha", "ga", url=live)
        tables.status("bravo", "gb", url=named)
        end = time.monotonic() + WAIT_S
        while not any(t["name"] == "alpha" and t["reachable"] for t in hub.tables()):
            assert time.monotonic() < end, hub.tables()
            hub.wait_for_change(hub.version, 0.2)
        url = f"http://127.0.0.1:{server.port}/"
        until(url, lambda s: "bravo" in s)
        token = {"X-TableSight-Token": server.token}
        page_keys = ("url", "reachable", "unchecked")
        seen = {
            "alpha": (live, True, None),
            "bravo": (named, None, "a name, not an IP address"),
        }
        unseen = (None, None, None)

        def keys(row: dict[str, Any]) -> tuple[Any, ...]:
            return tuple(row[k] for k in page_keys)

        def rest(row: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in row.items() if k not in page_keys}

        for headers, shown in [
            ({}, False),
            ({"X-TableSight-Token": "wrong"}, False),
            (token, True),
        ]:
            status, body = call(url + "api/tables", headers=headers)
            assert status == 200
            rows = {t["name"]: t for t in body["tables"]}
            for name, expected in seen.items():
                assert keys(rows[name]) == (expected if shown else unseen), (name, headers)
            status, alpha = call(url + "api/tables/alpha", headers=headers)
            assert status == 200
            assert keys(alpha) == (seen["alpha"] if shown else unseen)
        _, plain = call(url + "api/tables")
        _, trusted = call(url + "api/tables", headers=token)
        assert [rest(t) for t in plain["tables"]] == [rest(t) for t in trusted["tables"]]
        status, alpha = call(url + f"api/tables/alpha?token={server.token}")
        assert keys(alpha) == seen["alpha"]

        for query, shown in [
            ("", False),
            ("?token=wrong", False),
            (f"?token={server.token}", True),
        ]:
            (_, message), *_ = read_stream(url, lambda got: True, query=query)
            assert message["full"] is True
            rows = {t["name"]: t for t in message["tables"]}
            for name, expected in seen.items():
                assert keys(rows[name]) == (expected if shown else unseen), (name, query)
    finally:
        server.close()
        page.shutdown()
        page.server_close()
