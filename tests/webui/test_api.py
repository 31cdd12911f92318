"""Every API route through Flask's test client, on a game fed rendered frames."""

from __future__ import annotations

import json
import math

import cv2
import numpy as np
import pytest

from tablesight.match.game import Game
from tablesight.vision.sources import FileSource, Frame
from tablesight.webui.app import create_app


@pytest.fixture
def game(footage, setup, tmp_path):
    _, pics = footage
    cv2.imwrite(str(tmp_path / "0.png"), pics["start"])
    g = Game(setup, FileSource(str(tmp_path)))
    # the ganger at (10, 10), then moved 7 in to (17, 10): over its 6
    for k, name in enumerate(["start"] * 12 + ["moved"] * 12):
        g.process(Frame(pics[name], k / 30, k))
    return g


@pytest.fixture
def client(game):
    return create_app(game).test_client()


def error(response, status, field):
    assert response.status_code == status
    body = response.get_json()["error"]
    assert body["status"] == status and body["field"] == field
    return body["message"]


def test_state(client, footage):
    camera, _ = footage
    state = client.get("/api/state").get_json()
    assert state["game"] == {"name": "necromunda", "title": "Necromunda"}
    assert state["session"]["in_phase"] and state["session"]["sides"] == ["red", "blue"]
    models = {m["id"]: m for m in state["models"]}
    ganger = models["ganger"]
    assert (ganger["x"], ganger["y"]) == (pytest.approx(17, abs=0.02), pytest.approx(10, abs=0.02))
    assert ganger["start"] == [pytest.approx(10, abs=0.02), pytest.approx(10, abs=0.02)]
    assert ganger["move"]["allowance_in"] == 6.0
    assert ganger["move"]["shortest_in"] == pytest.approx(7.0, abs=0.02)
    assert 0 < ganger["sigma_in"] < 0.03 and ganger["track"] == "settled"
    # a 1 in base drawn as a 48-gon inscribed in its circle: 48/2 r^2 sin(2 pi/48)
    area = 24 * 0.5**2 * math.sin(2 * math.pi / 48)
    assert _area(ganger["outline"]) == pytest.approx(area, rel=1e-3)
    # no side has priority: every model's 1 in zone, the base grown by 1 in
    zones = {z["model"]: z for z in state["zones"]}
    assert set(zones) == {"ganger", "brute"}
    # (a 1.5 in circle drawn as the rules core's inscribed 32-gon)
    zone_area = 16 * 1.5**2 * math.sin(2 * math.pi / 32)
    assert _area(zones["brute"]["outline"]) == pytest.approx(zone_area, rel=1e-3)
    [flag] = state["flags"]
    assert (flag["kind"], flag["rule"], flag["model"], flag["limit"]) == (
        "violation",
        "movement",
        "ganger",
        6.0,
    )
    # the mapping sends a table point where the lens does
    cam = state["camera"]
    assert cam["image_size"] == [1920, 1080]
    rvec, _ = cv2.Rodrigues(np.array(cam["rotation"]))
    ours, _ = cv2.projectPoints(
        np.array([[30.0, 20.0, 0.0]]),
        rvec,
        np.array(cam["translation"]),
        np.array(cam["camera_matrix"]),
        np.array(cam["dist_coeffs"]),
    )
    truth = camera.project(np.array([[30.0, 20.0, 0.0]]))
    assert np.abs(ours.reshape(2) - truth.reshape(2)).max() < 0.5


def _area(points):
    xy = np.array(points)
    x, y = xy[:, 0], xy[:, 1]
    return 0.5 * abs(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1)))


def test_events(client):
    events = client.get("/api/events").get_json()["events"]
    assert [(e["id"], e["kind"]) for e in events] == [
        (0, "phase_started"),
        (1, "model_moved"),
        (2, "violation"),
    ]
    assert [e["id"] for e in client.get("/api/events?since=2").get_json()["events"]] == [2]
    assert "since: expected an event id" in error(client.get("/api/events?since=x"), 400, "since")


def test_phase(client):
    out = client.post("/api/phase", json={"action": "next_turn"}).get_json()
    assert [e["kind"] for e in out["events"]] == ["phase_ended", "phase_started"]
    assert out["session"]["turn"] == 2
    assert client.post("/api/phase", json={"action": "side", "side": "blue"}).status_code == 200
    assert client.get("/api/state").get_json()["session"]["side"] == "blue"
    message = error(client.post("/api/phase", json={"action": "fight"}), 400, "action")
    assert "allowed: start, end, next_turn, side" in message
    assert "unknown side 'green'" in error(
        client.post("/api/phase", json={"action": "side", "side": "green"}), 400, "side"
    )
    assert error(client.post("/api/phase", json={"action": "start", "x": 1}), 400, "x")
    assert error(client.post("/api/phase", data="not json"), 400, "body")
    assert error(client.post("/api/phase", json={"action": "start", "turn": 0}), 400, "turn")


def test_declare(client):
    # a charge: 6 in plus a D3; a 2 makes 8 in, and the 7 in move is legal
    out = client.post(
        "/api/declare", json={"model": "ganger", "action": "charge", "target": "brute", "roll": 2}
    )
    assert out.status_code == 200
    kinds = [(e["kind"], e["rule"]) for e in out.get_json()["events"]]
    assert ("resolved", "movement") in kinds
    assert "unknown model 'orc'" in error(
        client.post("/api/declare", json={"model": "orc"}), 400, "model"
    )
    assert error(
        client.post("/api/declare", json={"model": "ganger", "action": "fly"}), 400, "action"
    )
    assert "roll: expected 1 to 3 for charge, got 9" in error(  # a D3
        client.post("/api/declare", json={"model": "ganger", "roll": 9}), 400, "roll"
    )
    assert error(
        client.post("/api/declare", json={"model": "ganger", "target": "ganger"}), 400, "target"
    )
    assert error(client.post("/api/declare", json={"model": "ganger", "roll": "x"}), 400, "roll")


def test_flags(client):
    assert client.post("/api/flags/2", json={"decision": "accept"}).get_json() == {
        "id": 2,
        "decision": "accept",
    }
    [flag] = client.get("/api/state").get_json()["flags"]
    assert flag["decision"] == "accept"
    assert "no violation, advisory or close call has id 0" in error(
        client.post("/api/flags/0", json={"decision": "accept"}), 400, "flag"
    )
    assert error(client.post("/api/flags/2", json={"decision": "ignore"}), 400, "decision")


def test_measure_and_model(client):
    # centres (17, 10) and (30, 20): sqrt(13^2 + 10^2) = 16.401, less two 0.5 in radii
    out = client.get("/api/measure?a=ganger&b=brute").get_json()
    assert out["distance_in"] == pytest.approx(math.hypot(13, 10) - 1.0, abs=0.03)
    assert 0 < out["uncertainty_in"] < 0.04
    # to a point 3 in along x from the ganger's centre: 2.5 in from its edge
    out = client.get("/api/measure?a=ganger&x=20&y=10").get_json()
    assert out["distance_in"] == pytest.approx(2.5, abs=0.03)
    assert error(client.get("/api/measure?b=brute"), 400, "a")
    assert error(client.get("/api/measure?a=ganger"), 400, "b")
    assert error(client.get("/api/measure?a=orc&b=brute"), 400, "a")
    info = client.get("/api/models/brute").get_json()
    assert info["model"]["id"] == "brute" and info["near"] == []  # nothing within 6 in
    assert error(client.get("/api/models/orc"), 404, "model")


def test_token_guards_the_controls(game):
    client = create_app(game, token="s3cret").test_client()
    assert client.get("/api/state").status_code == 200  # watching needs no token
    assert error(client.post("/api/phase", json={"action": "end"}), 403, "token")
    ok = client.post("/api/phase", json={"action": "end"}, headers={"X-TableSight-Token": "s3cret"})
    assert ok.status_code == 200


def test_unknown_route_is_a_json_error(client):
    assert error(client.get("/api/nothing"), 404, None)
    assert error(client.delete("/api/state"), 405, None)


def test_stream_sends_events_then_state(client):
    response = client.get("/api/stream?since=1", buffered=False)
    assert response.mimetype == "text/event-stream"
    chunks = response.response
    assert _text(next(chunks)) == "retry: 1000\n\n"
    messages = [next(chunks) for _ in range(4)]
    response.close()
    text = "".join(map(_text, messages))
    # the poses of the newest frame come too, on their own (the overlay's light message)
    blocks = [b for b in text.split("\n\n") if b and not b.startswith("event: poses\n")]
    assert blocks[0].startswith("id: 1\nevent: event\n")
    assert blocks[1].startswith("id: 2\nevent: event\n")
    assert blocks[2].startswith("event: state\n")
    state = json.loads(blocks[2].split("data: ", 1)[1])
    assert len(state["models"]) == 2


def test_mjpeg_sends_the_newest_frame(client):
    response = client.get("/video.mjpg", buffered=False)
    head = b"--frame\r\nContent-Type: image/jpeg\r\n\r\n"
    assert next(response.response) == head
    part = next(response.response)  # the picture, then the next part's boundary and headers
    response.close()
    assert part.endswith(b"\r\n" + head)
    data = part[: -len(b"\r\n" + head)]
    picture = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert picture.shape == (1080, 1920, 3)


def _text(chunk):
    return chunk.decode() if isinstance(chunk, bytes) else chunk


def test_the_table_view_links_to_the_set_up_page_that_started_it(game):
    started = create_app(game, setup_url="http://127.0.0.1:5000/setup").test_client()
    page = started.get("/").get_data(as_text=True)
    assert 'id="setup-link" href="http://127.0.0.1:5000/setup"' in page
    alone = create_app(game).test_client().get("/").get_data(as_text=True)
    assert "setup-link" not in alone
