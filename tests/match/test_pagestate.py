"""The page state is built in one place: a live game's and the replay of its match file
have one shape, the replay's flags say who decided them, and its located models keep their
height (the match file's ``poses.z_in``, format version 3; older files stand on the table).

The match recorded here: the two-model clip's shots (``footage``), 12 frames with the
ganger at (10, 10), then 12 with it at (17, 10), a 7 in move over its 6, flagged as event
2; a tournament judge dismisses the flag, then 6 more frames."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import cv2
import numpy as np
import pytest

from tablesight.calibration.setup import Setup
from tablesight.match.game import Game
from tablesight.match.pagestate import Live, page_state
from tablesight.match.reader import Match
from tablesight.match.replay import Replay
from tablesight.match.schema import FORMAT, MIGRATIONS, SCHEMA_VERSION, setup_meta
from tablesight.match.writer import MatchWriter
from tablesight.rules.errors import InputError
from tablesight.vision.sources import FileSource, Frame

JUDGE, NOTE = "hub:Ann", "the tape says 5.9"
#: A 4 in tower around (10, 5), as the session's journal places it.
TOWER = {
    "terrain_id": "tower",
    "polygon": [[8, 3], [12, 3], [12, 7], [8, 7]],
    "height_in": 4.0,
    "keywords": [],
}
NOISE = np.zeros((48, 64, 3), np.uint8)


@pytest.fixture
def played(setup, footage, tmp_path) -> tuple[Game, Path]:
    """The match above, played live and recorded with its video."""
    _, pics = footage
    cv2.imwrite(str(tmp_path / "0.png"), pics["start"])
    path = tmp_path / "match.db"
    game = Game(setup, FileSource(str(tmp_path)), recorder=MatchWriter(path, setup))
    for k, name in enumerate(["start"] * 12 + ["moved"] * 12):
        game.process(Frame(pics[name], k / 30, k))
    game.decide(2, "dismiss", by=JUDGE, note=NOTE)
    for k in range(24, 30):
        game.process(Frame(pics["moved"], k / 30, k))
    return game, path


def test_the_live_state_and_the_replays_have_one_shape(played, state_shape):
    game, path = played
    live = game.state()
    game.close_recorder()
    with Replay(path) as replay:
        replay.seek(replay.end_t)  # the frame the live state was of
        replayed = replay.state()
    assert (live["live"]["frame"], replayed["live"]["frame"]) == (29, 29)
    # the replay says where it stands, too; every other key is the live state's
    assert state_shape(replayed) - state_shape(live) == {
        "state.replay",
        *(f"state.replay.{k}" for k in ("t", "frame", "prev_t", "next_t", "revision")),
        *(f"state.replay.frame.{k}" for k in ("t", "index", "video_frame")),
    }
    assert state_shape(live) - state_shape(replayed) == set()
    # nothing was left out as None on either side: the table pose, its health, the poses
    for state in (live, replayed):
        assert state["camera"] is not None and state["live"]["pose"]["healthy"] is True
        assert sorted(m[0] for m in state["poses"]["models"]) == ["brute", "ganger"]
        assert {m["id"]: m["track"] for m in state["models"]} == {
            "ganger": "settled",
            "brute": "settled",
        }


def test_the_replays_flag_says_who_decided_it(played):
    game, path = played
    game.close_recorder()
    flag = ("dismiss", JUDGE, NOTE)
    assert [(f["id"], f["decision"], f["by"], f["note"]) for f in game.flags()] == [(2, *flag)]
    with Replay(path) as replay:
        replay.seek(replay.end_t)
        assert [(f["id"], f["decision"], f["by"], f["note"]) for f in replay.state()["flags"]] == [
            (2, *flag)
        ]
        replay.seek(23 / 30)  # the frame it was decided at
        assert [(f["decision"], f["by"]) for f in replay.state()["flags"]] == [flag[:2]]
        replay.seek(22 / 30)  # before it: flagged, undecided
        assert [(f["decision"], f["by"], f["note"]) for f in replay.state()["flags"]] == [
            (None, None, None)
        ]
        # decided again in the replay: a revision, and who decided it there
        replay.seek(replay.end_t)
        replay.decide(2, "accept", by="hub:Bo", note="measured again")
        assert [(f["decision"], f["by"], f["note"]) for f in replay.state()["flags"]] == [
            ("accept", "hub:Bo", "measured again")
        ]
        replay.seek(22 / 30)
        assert [f["by"] for f in replay.state()["flags"]] == [None]


def test_the_state_is_worked_out_and_written_once(played):
    game, _ = played
    worked = game.newest_state(game.generation, game.version)
    while worked is None:  # being worked out on a thread of its own
        worked = game.newest_state(game.generation, game.version)
    assert worked.state is game.state()
    assert worked.key == (game.generation, game.version)
    written = worked.text(json.dumps)
    assert worked.text(lambda _: "again") is written  # written once, shared
    assert game.newest_state(game.generation + 1, 0) is None  # a new game's is not this one
    game.close_recorder()


def _tower_match(path: Path, setup: Setup) -> None:
    """A match in which the ganger stands on the tower (z 4.0) and the brute on the table."""
    with MatchWriter(path, setup, video=False) as writer:
        writer.input("place_terrain", TOWER)
        seen = {"model_id": "ganger", "pose": [10.0, 5.0, 90.0, 4.0], "sigma_in": 0.004}
        writer.input("seen", seen)
        for k in range(3):
            writer.frame(
                Frame(NOISE, k / 30, k),
                {
                    "ganger": (10.0, 5.0, 90.0, 0.004, "settled", 4.0),
                    "brute": (30.0, 20.0, 180.0, 0.006, "moving"),  # z left out: the table
                },
                write_image=False,
            )


def test_a_replay_shows_a_model_on_a_tower_at_its_height(setup, tmp_path):
    path = tmp_path / "match.db"
    _tower_match(path, setup)
    with Match(path) as match:
        moment = match.state_at(1 / 30)
        assert moment.poses["ganger"] == (10.0, 5.0, 90.0, 0.004, "settled", 4.0)
        assert moment.poses["brute"].z_in == 0.0
        assert [p.z_in for p in match.tracks("ganger")["ganger"]] == [4.0, 4.0, 4.0]
    with Replay(path) as replay:
        replay.seek(1 / 30)
        state = replay.state()
        assert sorted(state["poses"]["models"]) == [
            ["brute", 30.0, 20.0, 180.0, 0.0, "moving"],
            ["ganger", 10.0, 5.0, 90.0, 4.0, "settled"],
        ]
        [ganger] = state["models"]
        assert (ganger["z"], ganger["stands"], ganger["track"]) == (
            4.0,
            "on tower, 4.00 in",
            "settled",
        )


def _version_2_file(path: Path, setup: Setup) -> None:
    """A match file as TableSight wrote it before version 3: poses without a height."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript(MIGRATIONS[0])
    conn.executescript(MIGRATIONS[1])
    meta = {"format": FORMAT, "schema": 2, "app_version": "0.9", **setup_meta(setup)}
    conn.executemany(
        "INSERT INTO meta (key, value) VALUES (?, ?)", [(k, json.dumps(v)) for k, v in meta.items()]
    )
    conn.execute("INSERT INTO revisions VALUES (0, '2025-05-01T18:00:00+00:00', 'live')")
    conn.execute("INSERT INTO frames VALUES (0, 0.0, 0, NULL)")
    conn.execute(
        "INSERT INTO poses (frame, model, x_in, y_in, heading_deg, sigma_in, state) "
        "VALUES (0, 'ganger', 10.0, 5.0, 90.0, 0.004, 'settled')"
    )
    conn.execute("PRAGMA user_version = 2")
    conn.close()


def test_a_version_2_file_opens_with_its_models_on_the_table(setup, tmp_path):
    path = tmp_path / "old.db"
    _version_2_file(path, setup)
    with Match(path) as match:
        assert match.meta["schema"] == SCHEMA_VERSION == 3
        assert match.state_at(0.0).poses["ganger"] == (10.0, 5.0, 90.0, 0.004, "settled", 0.0)
        assert match.tracks()["ganger"][0].z_in == 0.0
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone() == (3,)
    conn.close()
    with Replay(path) as replay:
        assert replay.state()["poses"]["models"] == [["ganger", 10.0, 5.0, 90.0, 0.0, "settled"]]


def test_a_damaged_height_is_one_line(setup, tmp_path):
    path = tmp_path / "match.db"
    _tower_match(path, setup)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("UPDATE poses SET z_in = 'high' WHERE model = 'ganger' AND frame = 1")
    conn.close()
    line = r"poses frame 1: z_in: not valid \('high'\)$"
    with Match(path) as match, pytest.raises(InputError, match=line):
        match.state_at(1 / 30)


def test_page_state_is_built_from_values_only(setup):
    """Nothing but the values given: a session with nobody seen, no frame, no picture."""
    live = Live("replay", 0, 1, None, None, 0, None)
    state = page_state(setup.session(), live=live, decided={}, poses=None, camera=None)
    assert state["live"] == {
        "status": "replay",
        "generation": 0,
        "version": 1,
        "t": None,
        "frame": None,
        "events": 0,
        "pose": None,
    }
    assert (state["camera"], state["poses"], state["models"], state["flags"]) == (
        None,
        None,
        [],
        [],
    )
    assert "replay" not in state
