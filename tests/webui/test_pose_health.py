"""The live state says how far the table pose is trusted, and why not when it is not."""

from __future__ import annotations

import cv2

from tablesight.match.game import Game
from tablesight.vision.sources import FileSource, Frame
from tablesight.webui.app import create_app


def test_state_carries_the_pose_health(footage, setup, tmp_path):
    _, pics = footage
    cv2.imwrite(str(tmp_path / "0.png"), pics["start"])
    game = Game(setup, FileSource(str(tmp_path)))
    client = create_app(game).test_client()
    assert client.get("/api/state").get_json()["live"]["pose"] is None  # not seen yet
    for k in range(12):
        game.process(Frame(pics["start"], k / 30, k))
    pose = client.get("/api/state").get_json()["live"]["pose"]
    assert pose["healthy"] and pose["problem"] == "" and pose["warnings"] == []
    assert pose["anchors_used"] == [0, 1, 2, 3]
    assert 0 < pose["reprojection_px"] < 2.0 and 0 < pose["reprojection_in"] < 0.1
    # anchors 0 and 3 stated 1 in to the right of where they are: not trusted, and said why
    anchors = list(setup.table.anchors)
    for k in (0, 3):
        anchors[k] = anchors[k].model_copy(update={"x_in": anchors[k].x_in + 1.0})
    game.observer.table = setup.table.model_copy(update={"anchors": anchors})
    game.process(Frame(pics["moved"], 12 / 30, 12))
    state = client.get("/api/state").get_json()
    pose = state["live"]["pose"]
    assert not pose["healthy"] and pose["problem"].startswith("the anchors disagree")
    # the ganger moved in that frame, but nothing was placed from the pose: still at 10 in
    ganger = next(m for m in state["models"] if m["id"] == "ganger")
    assert abs(ganger["x"] - 10.0) < 0.02
    kinds = [e["kind"] for e in events_of(client)]
    assert "judging_held" not in kinds  # one doubtful frame is not news
    for k in range(13, 43):  # the doubt lasts 30 frames more: 1.0 s
        game.process(Frame(pics["moved"], k / 30, k))
    kinds = [e["kind"] for e in events_of(client)]
    assert kinds[-1] == "judging_held"


def events_of(client) -> list[dict]:
    held = client.get("/api/events").get_json()
    return held["events"] if isinstance(held, dict) else held
