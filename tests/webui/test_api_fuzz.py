"""Every API route driven with malformed values (hypothesis, through Flask's test client):
wrong types, ``NaN`` and infinities as numbers and as text, huge numbers, deep nesting,
markup, unknown keys, empty values, bytes that are not UTF-8. Whatever comes in, the
answer is never a fault (no 5xx), never a hang, always valid JSON (no ``NaN`` or
``Infinity``), and a refusal is the one error shape.

The live game and a replay (of a copy of the recorded clip: a re-judged declaration
writes a revision into it) are both driven; a test checks that every route of both apps
is among those driven, so a new route cannot be missed.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablesight.match.replay import Replay
from tablesight.webui.app import create_app

pytestmark = pytest.mark.slow

#: Longest any one request may take before it counts as a hang (s): generous, it is no
#: speed measure.
HANG_S = 30.0
EXAMPLES = 300

#: Text a field may be sent instead of what it expects.
ODD_TEXT = [
    "",
    " ",
    "NaN",
    "nan",
    "Infinity",
    "-inf",
    "1e999",
    "-1e308",
    "9" * 5000,
    "\u00b2",
    "\u0661\u0662",
    "0x1F",
    "-1",
    "1.5",
    "0",
    "<img src=x onerror=alert(1)>",
    "</script><script>alert(1)</script>",
    "../../etc/passwd",
    "a\x00b",
    "\ud7ff\ufffd",
    "ganger",
    "brute",
    "red",
    "blue",
    "start",
    "here",
    "charge",
    "move",
    "accept",
]
text = st.sampled_from(ODD_TEXT) | st.text(max_size=40)
scalar = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**6), max_value=10**6)
    | st.integers(min_value=10**20, max_value=10**400)
    | st.floats(allow_nan=True, allow_infinity=True)
    | text
)
json_value = st.recursive(
    scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
deep = st.integers(min_value=50, max_value=20_000).flatmap(
    lambda d: st.sampled_from(["[" * d + "]" * d, '{"a":' * d + "1" + "}" * d, "[" * d])
)

#: The POST routes' fields (each body is made of some of them, and maybe unknown keys).
FIELDS = {
    "/api/phase": ("action", "side", "turn"),
    "/api/declare": ("model", "action", "target", "roll"),
    "/api/flags/<int:flag_id>": ("decision",),
    "/api/replay/seek": ("t",),
}
#: The GET routes' query parameters.
PARAMS = {
    "/api/state": (),
    "/api/events": ("since",),
    "/api/stream": ("since",),
    "/video.mjpg": (),
    "/api/models/<model_id>": (),
    "/api/measure": ("a", "b", "x", "y"),
    "/api/reach": ("model", "side", "action", "from"),
    "/api/threat": ("model", "from"),
    "/api/replay": (),
    "/replay/frame.jpg": ("t",),
}
PAGES = {"/", "/broadcast", "/overlay", "/replay", "/favicon.ico", "/static/<path:filename>"}


def body_for(route: str) -> st.SearchStrategy[bytes]:
    fields = FIELDS[route]
    objects = st.fixed_dictionaries({}, optional={f: json_value for f in fields}) | st.dictionaries(
        st.sampled_from(fields) | text, json_value, max_size=4
    )
    as_json = objects.map(lambda d: json.dumps(d).encode())
    return (
        as_json
        | json_value.map(lambda v: json.dumps(v).encode())
        | deep.map(str.encode)
        | st.binary(max_size=64)
        | st.sampled_from([b"", b"{", b"null", b'{"action": NaN}', b'{"t": Infinity}'])
    )


def path_value(route: str) -> st.SearchStrategy[str]:
    if "<int:flag_id>" in route:
        return st.integers(min_value=-5, max_value=10**30).map(str) | text
    return text


request_for = st.sampled_from(sorted(FIELDS)).flatmap(
    lambda route: st.tuples(
        st.just("POST"),
        st.just(route),
        path_value(route),
        st.just({}),
        body_for(route),
        st.sampled_from(["application/json", "text/plain", "application/json; charset=latin-1"]),
    )
) | st.sampled_from(sorted(PARAMS)).flatmap(
    lambda route: st.tuples(
        st.just("GET"),
        st.just(route),
        text,
        st.fixed_dictionaries({}, optional={p: text for p in PARAMS[route] + ("zz",)}),
        st.just(b""),
        st.just(""),
    )
)


def url(route: str, value: str) -> str:
    for name in ("<int:flag_id>", "<model_id>"):
        route = route.replace(name, quote(value, safe="") or "x")
    return route


def strict(raw: bytes):
    def refuse(name: str):
        raise AssertionError(f"{name} in an answer")

    return json.loads(raw, parse_constant=refuse)


@pytest.fixture(scope="module")
def apps(footage, setup, recorded_match, tmp_path_factory):
    """The live game's app and a replay's app, and the count of requests each route got."""
    import cv2

    from tablesight.match.game import Game
    from tablesight.vision.sources import FileSource, Frame

    _, pics = footage
    folder = tmp_path_factory.mktemp("fuzz")
    cv2.imwrite(str(folder / "0.png"), pics["start"])
    game = Game(setup, FileSource(str(folder)))
    for k, name in enumerate(["start"] * 12 + ["moved"] * 12):
        game.process(Frame(pics[name], k / 30, k))
    for name in (recorded_match.name, recorded_match.with_suffix(".avi").name):
        shutil.copy(recorded_match.parent / name, folder / name)
    counts: Counter[str] = Counter()
    with Replay(folder / recorded_match.name) as replay, ThreadPoolExecutor(1) as pool:
        yield {
            "live": create_app(game),
            "replay": create_app(replay, replay=replay),
            "pool": pool,
            "counts": counts,
        }
        game.stop()
        replay.stop()
    statuses = Counter(k.rsplit(" ", 1)[1] for k in counts.elements())
    print(f"\n{sum(counts.values())} requests; by status: {dict(sorted(statuses.items()))}")
    for route, n in sorted(Counter(k.rsplit(" ", 1)[0] for k in counts.elements()).items()):
        print(f"  {n:4d}  {route}")


#: Answers read only as far as their first chunk: they go on for as long as they are open.
STREAMED = ("text/event-stream", "multipart/x-mixed-replace")


def send(app, method, path, query, data, content_type, headers):
    """The status, type and body of one request (a stream's first chunk only)."""
    client = app.test_client()
    if method == "POST":
        answer = client.post(path, data=data, content_type=content_type)
        return answer.status_code, answer.mimetype, answer.get_data()
    answer = client.get(path, query_string=query, headers=headers, buffered=False)
    try:
        if answer.mimetype in STREAMED:
            first = next(iter(answer.response), b"")
            return answer.status_code, answer.mimetype, first
        return answer.status_code, answer.mimetype, answer.get_data()
    finally:
        answer.close()


#: A header's text: anything but control characters.
header_text = st.sampled_from(ODD_TEXT[:-9]).filter(lambda t: "\x00" not in t) | st.text(
    st.characters(blacklist_categories=("Cc", "Cs")), max_size=40
)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(which=st.sampled_from(["live", "replay"]), asked=request_for, last_event=header_text)
def test_no_request_is_a_fault_or_a_hang(apps, which, asked, last_event):
    method, route, value, query, data, content_type = asked
    if route.startswith(("/api/replay", "/replay")):
        which = "replay"
    path = url(route, value)
    headers = {"Last-Event-ID": last_event.encode("utf-8").decode("latin-1")}
    sent = apps["pool"].submit(send, apps[which], method, path, query, data, content_type, headers)
    status, mimetype, body = sent.result(timeout=HANG_S)  # a hang fails here
    what = f"{method} {path} {query} {data[:200]!r}"
    assert status < 500, f"{what}: {status} {body[:300]!r}"
    if mimetype == "application/json":
        out = strict(body)
        if status >= 400:
            error = out["error"]
            assert set(error) == {"status", "field", "message"} and error["status"] == status
            assert len(body) < 1000, f"{what}: a long error {body[:300]!r}"
    else:
        assert status < 400, f"{what}: a refusal that is not JSON"
    apps["counts"][f"{which} {method} {route} {status}"] += 1


def test_every_route_is_driven(apps):
    for which in ("live", "replay"):
        for rule in apps[which].url_map.iter_rules():
            assert rule.rule in set(FIELDS) | set(PARAMS) | PAGES, f"{which}: {rule.rule} undriven"
