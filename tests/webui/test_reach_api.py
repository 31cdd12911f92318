"""``GET /api/reach`` and ``GET /api/threat`` through Flask's test client, on games whose
models stand where the test puts them (the two-model table, Necromunda: 1 in round bases,
M 6, a charge of M + D3, a 1 in zone, a 44 x 30 in table), on a replay of the recorded
clip, and refused: each refusal a 400 naming the field.

The regions are checked against figures worked out by hand here, from the answer's rings
(their area by the shoelace formula, their points' distances), not from the answer's own
``area_sq_in``. The referee's tolerance is 0.05 in: a move may end that far past its
allowance, and a base that far over the table's edge.
"""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np
import pytest

from tablesight.match.game import Game
from tablesight.match.replay import Replay
from tablesight.rules.geometry import Pose
from tablesight.rules.ruleset import load_ruleset
from tablesight.vision.sources import FileSource
from tablesight.webui.app import create_app

TOL = 0.05
#: The bases' radius (1 in round).
R = 0.5


def placed(setup, folder, at: dict[str, tuple[float, float]], game_name: str = "necromunda"):
    """A game of ``game_name`` on the two-model table, without a picture, each model seen
    where ``at`` puts it."""
    cv2.imwrite(str(folder / "0.png"), np.zeros((8, 8, 3), np.uint8))
    setup = dataclasses.replace(setup, game=game_name, ruleset=load_ruleset(game_name))
    game = Game(setup, FileSource(str(folder)))
    with game.lock:
        for model, (x, y) in at.items():
            game.session.seen(model, Pose(x, y))
    return game


def asked(client, url: str) -> dict:
    response = client.get(url)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def refused(client, url: str, field: str) -> str:
    response = client.get(url)
    assert response.status_code == 400, response.get_data(as_text=True)
    error = response.get_json()["error"]
    assert error["status"] == 400 and error["field"] == field, error
    assert "\n" not in error["message"] and "Traceback" not in error["message"]
    return error["message"]


def shoelace(ring: list[list[float]]) -> float:
    xy = np.asarray(ring)
    x, y = xy[:, 0], xy[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def area_of(geometry: dict) -> float:
    """A GeoJSON MultiPolygon's area: each outer ring's less its holes'."""
    assert geometry["type"] == "MultiPolygon"
    return sum(
        abs(shoelace(poly[0])) - sum(abs(shoelace(h)) for h in poly[1:])
        for poly in geometry["coordinates"]
    )


def points_of(geometry: dict) -> np.ndarray:
    """The points of the region's outer edges."""
    return np.asarray([p for poly in geometry["coordinates"] for p in poly[0]])


def test_a_model_in_open_ground_may_end_anywhere_within_its_allowance(setup, tmp_path):
    # the ganger at (10, 10), the brute 22 in away: nothing near, a disc of 6 + 0.05 in
    game = placed(setup, tmp_path, {"ganger": (10, 10), "brute": (30, 20)})
    client = create_app(game).test_client()
    got = asked(client, "/api/reach?model=ganger")
    assert (got["model"], got["side"], got["action"], got["from"]) == (
        "ganger",
        "red",
        "move",
        "here",
    )
    assert got["start"] == [10, 10] and got["allowance_in"] == 6.0
    [polygon] = got["geometry"]["coordinates"]
    # no holes (but a speck at its very centre, under its base: see the next test)
    assert all(abs(shoelace(hole)) < 1e-3 for hole in polygon[1:])
    disc = math.pi * (6.0 + TOL) ** 2  # 114.99 sq in
    assert area_of(got["geometry"]) == pytest.approx(disc, rel=1e-3)
    assert got["area_sq_in"] == pytest.approx(disc, rel=1e-3)
    # every point of its edge 6.05 in from where it stands
    far = np.hypot(*(points_of(got["geometry"]) - [10, 10]).T)
    assert far.min() > 6.05 - 0.005 and far.max() < 6.05 + 0.005
    assert got["limits"] == [{"by": 'its 6.00" allowance', "share": 1.0}]
    assert got["explain"].startswith('ganger may end its move (6.00") on 115.0 sq in of table')
    # a charge: its declared roll unknown, the 6 in of its move (the die's best is threat's)
    charge = asked(client, "/api/reach?model=ganger&action=charge")
    assert charge["action"] == "charge" and charge["allowance_in"] >= 6.0
    # a side's: every model of it, the same answers
    side = asked(client, "/api/reach?side=red")
    assert side["side"] == "red" and side["reaches"] == [got]


def test_a_model_may_end_where_it_started(setup, tmp_path):
    from shapely.geometry import Point, shape

    game = placed(setup, tmp_path, {"ganger": (10, 10), "brute": (30, 20)})
    got = asked(create_app(game).test_client(), "/api/reach?model=ganger")
    assert shape(got["geometry"]).contains(Point(10, 10))


def test_the_tables_edge_cuts_the_reach(setup, tmp_path):
    # The ganger 3 in from the table's left edge: its base may hang 0.05 in over it, so its
    # centre may end at x >= 0.5 - 0.05 = 0.45; the disc of 6.05 in less the segment beyond
    # that chord, 2.55 in from the centre: r^2 acos(d/r) - d sqrt(r^2 - d^2) = 27.58 sq in,
    # leaving 114.99 - 27.58 = 87.41 sq in. The chord is 2 sqrt(r^2 - d^2) = 10.97 in of an
    # edge of 10.97 + r (2 pi - 2 acos(d/r)) = 35.24 in: 31% of it.
    game = placed(setup, tmp_path, {"ganger": (3, 15), "brute": (30, 20)})
    got = asked(create_app(game).test_client(), "/api/reach?model=ganger")
    r, d = 6.0 + TOL, 3.0 - (R - TOL)
    segment = r * r * math.acos(d / r) - d * math.sqrt(r * r - d * d)
    assert segment == pytest.approx(27.58, abs=0.01)
    assert area_of(got["geometry"]) == pytest.approx(math.pi * r * r - segment, rel=2e-3)
    points = points_of(got["geometry"])
    assert points[:, 0].min() == pytest.approx(R - TOL, abs=0.005)
    chord = 2 * math.sqrt(r * r - d * d)
    edge = chord + r * (2 * math.pi - 2 * math.acos(d / r))
    limits = {x["by"]: x["share"] for x in got["limits"]}
    assert set(limits) == {"the table's edge", 'its 6.00" allowance'}
    assert limits["the table's edge"] == pytest.approx(chord / edge, abs=0.01)


def test_an_enemys_zone_is_kept_out_of(setup, tmp_path):
    # Necromunda's 1" rule: the ganger may not end within 1 in of the brute (base to base):
    # its centre stays 0.5 + 1 + 0.5 - 0.05 = 1.95 in from the brute's
    game = placed(setup, tmp_path, {"ganger": (10, 15), "brute": (14, 15)})
    got = asked(create_app(game).test_client(), "/api/reach?model=ganger")
    from_brute = np.hypot(*(points_of(got["geometry"]) - [14, 15]).T)
    assert from_brute.min() == pytest.approx(2 * R + 1.0 - TOL, abs=0.005)
    assert "brute's 1.00\" zone" in {x["by"] for x in got["limits"]}
    assert area_of(got["geometry"]) < math.pi * (6.0 + TOL) ** 2 - math.pi * 1.95**2


def test_threat_is_the_enemys_best_charge_and_whom_it_reaches(setup, tmp_path):
    # the brute's charge: M 6 + the D3's best, 9 in; the ganger 6 in away is within it
    near = placed(setup, tmp_path, {"ganger": (10, 15), "brute": (16, 15)})
    got = asked(create_app(near).test_client(), "/api/threat?model=brute")
    assert (got["model"], got["side"], got["action"]) == ("brute", "blue", "charge")
    assert got["allowance_in"] == 9.0 and got["threatened"] == ["ganger"]
    points = points_of(got["geometry"])
    assert np.hypot(*(points - [16, 15]).T).max() < 9.0 + TOL + 0.005
    # it may not end on the ganger's base: a hole 0.5 + 0.5 - 0.05 in round its centre
    holes = [np.asarray(h) for poly in got["geometry"]["coordinates"] for h in poly[1:]]
    round_ganger = [h for h in holes if np.hypot(*(h.mean(axis=0) - [10, 15])) < 0.1]
    assert len(round_ganger) == 1
    assert np.hypot(*(round_ganger[0] - [10, 15]).T) == pytest.approx(2 * R - TOL, abs=0.005)
    # 10 + 9.05 in away at most reaches nobody 22 in off
    far = placed(setup, tmp_path, {"ganger": (10, 10), "brute": (30, 20)})
    alone = asked(create_app(far).test_client(), "/api/threat?model=brute")
    assert alone["threatened"] == []
    disc = math.pi * (9.0 + TOL) ** 2
    assert area_of(alone["geometry"]) == pytest.approx(disc, rel=1e-3)


def test_from_here_or_from_where_the_move_started(setup, tmp_path):
    # a phase started with the ganger at (10, 10); it has moved to (17, 10)
    game = placed(setup, tmp_path, {"ganger": (10, 10), "brute": (30, 20)})
    game.start_phase(side="red")
    with game.lock:
        game.session.moved(1.0, 30, "ganger", Pose(17, 10))
    client = create_app(game).test_client()
    here = asked(client, "/api/reach?model=ganger")
    start = asked(client, "/api/reach?model=ganger&from=start")
    assert (here["from"], here["start"]) == ("here", [17, 10])
    assert (start["from"], start["start"]) == ("start", [10, 10])
    for got, (x, y) in ((here, (17, 10)), (start, (10, 10))):
        far = np.hypot(*(points_of(got["geometry"]) - [x, y]).T)
        assert far.max() < 6.05 + 0.005
        assert area_of(got["geometry"]) == pytest.approx(math.pi * 6.05**2, rel=1e-3)


def test_bad_requests_are_400s_naming_the_field(setup, tmp_path):
    game = placed(setup, tmp_path, {"ganger": (10, 10), "brute": (30, 20)})
    client = create_app(game).test_client()
    said = refused(client, "/api/reach?model=zz", "model")
    assert said == "model: no model 'zz'; the models are ganger, brute"
    said = refused(client, "/api/reach?model=ganger&action=fly", "action")
    assert said == "action: Necromunda has no action 'fly' (it has: charge, move)"
    assert refused(client, "/api/reach", "model") == "model: give a model (or a side)"
    refused(client, "/api/reach?model=ganger&side=red", "side")
    said = refused(client, "/api/reach?side=green", "side")
    assert said == "side: no side 'green' on the table; the sides are red, blue"
    refused(client, "/api/reach?model=ganger&from=there", "from")
    refused(client, "/api/reach?model=" + "g" * 5000, "model")
    refused(client, "/api/threat", "model")
    refused(client, "/api/threat?model=zz", "model")
    refused(client, "/api/threat?model=ganger&from=x", "from")
    # a game played on squares has no charge to threaten with
    squares = placed(setup, tmp_path, {"ganger": (10, 10), "brute": (30, 20)}, "battlestations")
    said = refused(create_app(squares).test_client(), "/api/threat?model=brute", "action")
    assert said == "action: Battlestations has no charge"


def test_reading_reach_needs_no_token_and_changes_nothing(setup, tmp_path):
    game = placed(setup, tmp_path, {"ganger": (10, 10), "brute": (30, 20)})
    client = create_app(game, token="s3cret").test_client()
    version = game.version
    asked(client, "/api/reach?model=ganger")
    asked(client, "/api/threat?model=brute")
    assert game.version == version
    assert client.post("/api/reach?model=ganger").status_code == 403  # a GET only


def test_reach_is_worked_out_again_only_when_something_near_moved(setup, tmp_path, monkeypatch):
    import tablesight.rules.reach as rules_reach

    worked = []
    original = rules_reach.reach

    def counted(*args, **kwargs):
        worked.append(args[2])
        return original(*args, **kwargs)

    monkeypatch.setattr(rules_reach, "reach", counted)
    game = placed(setup, tmp_path, {"ganger": (10, 10), "brute": (30, 20)})
    client = create_app(game).test_client()
    first = asked(client, "/api/reach?model=ganger")
    for _ in range(3):
        assert asked(client, "/api/reach?model=ganger") == first
    assert worked == ["ganger"]
    # the brute moves, still far: nothing to work out again
    with game.lock:
        game.session.seen("brute", Pose(31, 20))
    assert asked(client, "/api/reach?model=ganger") == first
    assert worked == ["ganger"]
    # the brute comes within the ganger's allowance: worked out again, its zone cut out
    with game.lock:
        game.session.seen("brute", Pose(14, 10))
    near = asked(client, "/api/reach?model=ganger")
    assert worked == ["ganger", "ganger"] and near["area_sq_in"] < first["area_sq_in"]


def test_the_replay_shows_the_reach_of_a_flagged_move_as_it_was(recorded_match):
    # the recorded clip: the ganger from (10, 10) to (17, 10), 7 in of its 6, flagged
    with Replay(recorded_match) as replay:
        flagged = [e for e in replay.events if e.kind == "violation"]
        assert [e.model for e in flagged] == ["ganger"]
        replay.seek(flagged[0].t)
        client = create_app(replay, replay=replay).test_client()
        then = asked(client, "/api/reach?model=ganger&from=start")
        assert then["start"] == [pytest.approx(10, abs=0.05), pytest.approx(10, abs=0.05)]
        assert area_of(then["geometry"]) == pytest.approx(math.pi * 6.05**2, rel=1e-3)
        here = asked(client, "/api/reach?model=ganger")
        assert here["start"] == [pytest.approx(17, abs=0.05), pytest.approx(10, abs=0.05)]
        # the moment before the ganger was first seen: no ganger on the table to reach from
        replay.seek(replay.start_t)
        if not any(m.id == "ganger" for m in replay.session.scene().models):
            refused(client, "/api/reach?model=ganger", "model")
