"""What the API refuses, and the headers it answers with, through Flask's test client: bad
event ids, points and tokens are a 400 or 403 naming the field (never a fault), bodies are
bounded, errors never echo a whole value, answers are always valid JSON, a foreign
``Host`` or another site's control is refused, and every page carries its
Content-Security-Policy."""

from __future__ import annotations

import json
import re

import pytest

from tablesight.match.replay import Replay
from tablesight.webui.app import MAX_BODY, create_app
from tablesight.webui.guard import StreamLimits, StreamSlots, allowed_hosts

#: The tests here start real servers and send hundreds of malformed requests.
pytestmark = pytest.mark.slow


@pytest.fixture
def client(played_game):
    return create_app(played_game).test_client()


def strict(text: str):
    """JSON as a browser reads it: ``NaN`` and ``Infinity`` are not JSON."""

    def refuse(name: str):
        raise AssertionError(f"{name} in an answer")

    return json.loads(text, parse_constant=refuse)


def error(response, status: int, field: str | None) -> str:
    assert response.status_code == status, response.get_data(as_text=True)[:300]
    body = strict(response.get_data(as_text=True))["error"]
    assert (body["status"], body["field"]) == (status, field)
    return body["message"]


BAD_IDS = ["\u00b2", "9" * 5000, "-1", "1.5", "0x10", " ", "\u0661"]


@pytest.mark.parametrize("path", ["/api/events", "/api/stream"])
@pytest.mark.parametrize("bad", BAD_IDS)
def test_a_bad_event_id_is_a_400(client, path, bad):
    message = error(client.get(path, query_string={"since": bad}), 400, "since")
    assert len(message) < 120
    message = error(client.get(path, headers={"Last-Event-ID": bad}), 400, "Last-Event-ID")
    assert len(message) < 120


def test_event_ids_from_the_query_or_the_header(client):
    assert [e["id"] for e in client.get("/api/events?since=2").get_json()["events"]] == [2]
    answer = client.get("/api/events", headers={"Last-Event-ID": "1"})
    assert [e["id"] for e in answer.get_json()["events"]] == [1, 2]
    stream = client.get("/api/stream", headers={"Last-Event-ID": "2"}, buffered=False)
    assert stream.status_code == 200
    stream.close()


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("a=ganger&x=nan&y=10", "x"),
        ("a=ganger&x=inf&y=10", "x"),
        ("a=ganger&x=-inf&y=10", "x"),
        ("a=ganger&x=-1e308&y=10", "x"),
        ("a=ganger&x=20&y=1e400", "y"),
        ("a=ganger&x=20&y=%C2%B2", "y"),
        ("a=ganger&x=" + "9" * 5000 + "&y=1", "x"),
        ("a=ganger&b=ganger", "b"),
        ("a=ganger&x=20", "b"),
    ],
)
def test_measure_refuses_points_that_are_not_on_a_table_and_a_model_to_itself(client, query, field):
    assert len(error(client.get(f"/api/measure?{query}"), 400, field)) < 200


def test_a_token_that_is_not_ascii_is_a_wrong_token(played_game):
    client = create_app(played_game, token="s3cret").test_client()
    control = {"action": "end"}
    for given in ("\u00e9", "s3cret\u00e9", "\u00ff" * 1000):
        headers = {"X-TableSight-Token": given}
        error(client.post("/api/phase", json=control, headers=headers), 403, "token")
    answer = client.post("/api/phase?token=%E2%98%83", json=control)
    error(answer, 403, "token")
    ok = client.post("/api/phase", json=control, headers={"X-TableSight-Token": "s3cret"})
    assert ok.status_code == 200


@pytest.mark.parametrize("depth", [1000, 10_000])
def test_json_nested_deep_is_not_a_body(client, depth):
    for text in ("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth):
        answer = client.post("/api/phase", data=text, content_type="application/json")
        error(answer, 400, "body")


def test_a_big_body_is_refused_and_never_echoed(client):
    huge = json.dumps({"action": "x" * (10 * 1024 * 1024)})
    answer = client.post("/api/phase", data=huge, content_type="application/json")
    error(answer, 413, None)
    assert len(answer.get_data()) < 1000
    # under the limit, a long value is refused, and quoted cut short
    for body in (
        {"action": "start", "side": "<" * 60_000},
        {"model": "x" * 60_000},
        {"action": "y" * 60_000},
    ):
        path = "/api/declare" if "model" in body else "/api/phase"
        answer = client.post(path, json=body)
        assert answer.status_code == 400
        assert len(answer.get_data()) < 1000, answer.get_data()[:300]
    assert MAX_BODY <= 64 * 1024
    long = "q" * 5000
    for path in (
        f"/api/models/{long}",
        f"/api/measure?a={long}&b=brute",
        f"/api/events?since={long}",
    ):
        answer = client.get(path)
        assert 400 <= answer.status_code < 500 and len(answer.get_data()) < 1000


def test_a_foreign_host_is_refused(played_game):
    app = create_app(played_game, hosts=allowed_hosts("127.0.0.1", 5000))
    client = app.test_client()
    for host in ("127.0.0.1:5000", "localhost:5000", "LOCALHOST:5000"):
        assert client.get("/api/state", base_url=f"http://{host}").status_code == 200
    for host in ("evil.example:5000", "127.0.0.1:5001", "127.0.0.1", "attacker.test"):
        error(client.get("/api/state", base_url=f"http://{host}"), 400, "Host")
        answer = client.post("/api/phase", json={"action": "end"}, base_url=f"http://{host}")
        error(answer, 400, "Host")
    assert allowed_hosts("0.0.0.0", 5000) is None  # every address: reached by any name
    assert allowed_hosts("192.168.1.20", 8000) == frozenset({"192.168.1.20:8000"})
    assert allowed_hosts("192.168.1.20", 80) == frozenset({"192.168.1.20:80", "192.168.1.20"})
    assert "[::1]:5000" in allowed_hosts("::1", 5000)


def test_a_control_from_another_site_is_refused(client):
    control = {"action": "end"}
    for headers in (
        {"Origin": "http://evil.example"},
        {"Origin": "http://localhost:8080"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
    ):
        error(client.post("/api/phase", json=control, headers=headers), 403, "Origin")
    same = {"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"}
    assert client.post("/api/phase", json=control, headers=same).status_code == 200
    assert client.post("/api/phase", json=control).status_code == 200  # curl, say


def test_every_page_runs_only_the_servers_script_and_only_obs_pages_may_be_framed(
    client, recorded_match
):
    with Replay(recorded_match) as replay:
        replayed = create_app(replay, replay=replay).test_client()
        pages = [(client, p) for p in ("/", "/broadcast", "/overlay", "/api/state", "/nothing")]
        pages += [(replayed, "/replay"), (replayed, "/api/replay")]
        for app, path in pages:
            answer = app.get(path)
            policy = answer.headers["Content-Security-Policy"]
            for directive in ("script-src 'self'", "object-src 'none'", "base-uri 'none'"):
                assert directive in policy, (path, policy)
            assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
            framed = path in ("/broadcast", "/overlay")
            assert ("frame-ancestors 'none'" in policy) is not framed, (path, policy)
            assert (answer.headers.get("X-Frame-Options") == "DENY") is not framed
            assert answer.headers["X-Content-Type-Options"] == "nosniff"
            if answer.mimetype == "text/html":
                html = answer.get_data(as_text=True)
                # every script is a file of the server's, or data (never run)
                for tag in re.findall(r"<script\b[^>]*>", html):
                    assert re.search(r'\bsrc="/static/', tag) or 'type="application/json"' in tag
                assert not re.search(r"\son\w+\s*=", html)  # no inline handlers


def test_streams_are_capped_per_client_and_in_all():
    slots = StreamSlots(StreamLimits(per_client=2, total=3))
    a1, a2 = slots.take("10.0.0.1"), slots.take("10.0.0.1")
    with pytest.raises(Exception) as refused:
        slots.take("10.0.0.1")
    assert refused.value.status == 503 and ("Retry-After", "5") in refused.value.headers()
    b1 = slots.take("10.0.0.2")
    with pytest.raises(Exception, match="in all"):
        slots.take("10.0.0.3")
    a1()
    a1()  # given back once only
    assert slots.open == 2
    c1 = slots.take("10.0.0.3")
    for give in (a2, b1, c1):
        give()
    assert slots.open == 0


def test_a_stream_beyond_the_cap_is_a_503_and_its_slot_comes_back(played_game):
    client = create_app(played_game, limits=StreamLimits(per_client=2, total=2)).test_client()
    held = [client.get(p, buffered=False) for p in ("/api/stream", "/video.mjpg")]
    assert [r.status_code for r in held] == [200, 200]
    for path in ("/api/stream", "/video.mjpg"):
        answer = client.get(path)
        assert "at most 2 streams" in error(answer, 503, "stream")
        assert answer.headers["Retry-After"] == "5"
    assert client.get("/api/state").status_code == 200
    held[0].close()
    again = client.get("/api/stream", buffered=False)
    assert again.status_code == 200
    again.close()
    held[1].close()


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ('{"a": 1}', 1),
        ('{"a": "[[[{", "b": [[1]]}', 3),  # brackets inside a string do not count
        ('["\\"[", [[]]]', 3),  # nor after an escaped quote
        ("[" * 40 + "]" * 40, 40),
    ],
)
def test_nesting_is_read_without_parsing(text, depth):
    from tablesight.webui.jsonio import nesting

    assert nesting(text) == depth
