"""Who decided a flag: the table (its page, its keys) or a tournament judge through the
hub, with their note; kept by the game, shown in its state, written to the match file
(format version 2), read back, and read from files of version 1 as decided at the table."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import cv2
import pytest

from tablesight.calibration.setup import Setup
from tablesight.match.game import Game
from tablesight.match.reader import Match
from tablesight.match.schema import FORMAT, MIGRATIONS, SCHEMA_VERSION, setup_meta
from tablesight.match.writer import MatchWriter
from tablesight.rules.errors import InputError
from tablesight.vision.sources import FileSource, Frame


def test_each_decision_says_who_made_it(setup, footage, tmp_path):
    _, pics = footage
    cv2.imwrite(str(tmp_path / "0.png"), pics["start"])
    recorder = MatchWriter(tmp_path / "match.db", setup, video=False)
    game = Game(setup, FileSource(str(tmp_path)), recorder=recorder)
    for k, name in enumerate(["start"] * 12 + ["moved"] * 12):
        game.process(Frame(pics[name], k / 30, k))
    [flag] = game.flags()
    assert (flag["id"], flag["decision"], flag["by"], flag["note"]) == (2, None, None, None)

    game.decide(2, "accept")  # the table's page, as POST /api/flags/2 does
    assert game.decided == {2: ("table", None)}
    assert [(f["decision"], f["by"], f["note"]) for f in game.state()["flags"]] == [
        ("accept", "table", None)
    ]
    game.decide(2, "dismiss", by="hub:Ann", note="the tape says 5.9")  # a judge overrules
    assert game.session.decisions == {2: "dismiss"}
    assert [(f["decision"], f["by"], f["note"]) for f in game.flags()] == [
        ("dismiss", "hub:Ann", "the tape says 5.9")
    ]
    with pytest.raises(InputError, match=r"^flag: no violation, advisory or close call has id 1$"):
        game.decide(1, "dismiss", by="hub:Ann")
    assert game.decided == {2: ("hub:Ann", "the tape says 5.9")}
    game.close_recorder()

    with Match(tmp_path / "match.db") as match:
        assert [(d["event_id"], d["decision"], d["by"], d["note"]) for d in match.decisions()] == [
            (2, "accept", "table", None),
            (2, "dismiss", "hub:Ann", "the tape says 5.9"),
        ]
        assert match.published() == [] and match.unacknowledged() == []  # not published
        assert "broker" not in match.meta

    game.restart()  # a new game: nobody has decided anything in it
    assert game.decided == {} and game.flags() == []


def _version_1_file(path: Path, setup: Setup) -> None:
    """A match file as TableSight wrote it before version 2, with a decision."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript(MIGRATIONS[0])
    meta = {"format": FORMAT, "schema": 1, "app_version": "0.9", **setup_meta(setup)}
    conn.executemany(
        "INSERT INTO meta (key, value) VALUES (?, ?)", [(k, json.dumps(v)) for k, v in meta.items()]
    )
    conn.execute("INSERT INTO revisions VALUES (0, '2025-05-01T18:00:00+00:00', 'live')")
    conn.execute(
        "INSERT INTO events (revision, id, t, frame, kind, message, rule, model, measured, "
        "\"limit\") VALUES (0, 0, 1.0, 30, 'violation', 'ganger moved 7', 'movement', "
        "'ganger', 7.0, 6.0)"
    )
    conn.execute("INSERT INTO decisions (t, event_id, decision) VALUES (2.0, 0, 'dismiss')")
    conn.execute("PRAGMA user_version = 1")
    conn.close()


def test_a_version_1_file_reads_as_decided_at_the_table(setup, tmp_path):
    path = tmp_path / "old.db"
    _version_1_file(path, setup)
    with Match(path) as match:
        assert match.decisions() == [
            {"t": 2.0, "event_id": 0, "decision": "dismiss", "by": "table", "note": None}
        ]
        assert match.published() == [] and match.unacknowledged() == []
        assert match.meta["schema"] == SCHEMA_VERSION == 3
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone() == (3,)
    conn.close()


def test_the_published_table_tells_which_events_never_reached_the_broker(setup, tmp_path):
    from tablesight.rules.session import Event

    path = tmp_path / "match.db"
    with MatchWriter(path, setup, video=False) as writer:
        writer.publishing("mqtt://venue:1883", "t1", "abc-0")
        for k in range(4):
            writer.event(Event(float(k), k, "model_moved", f"move {k}", model="ganger", id=k))
        writer.published(0, 100.0, 100.01)
        writer.published(1, 101.0, 101.02)
        writer.published(1, 101.0, 101.5)  # a repeat is ignored
        writer.published(3, 103.0, 109.0)  # held up while the broker was away
    with Match(path) as match:
        assert match.meta["broker"] == {
            "url": "mqtt://venue:1883",
            "table": "t1",
            "game_id": "abc-0",
        }
        assert match.published() == [
            {"event_id": 0, "emitted": 100.0, "acked": 100.01},
            {"event_id": 1, "emitted": 101.0, "acked": 101.02},
            {"event_id": 3, "emitted": 103.0, "acked": 109.0},
        ]
        assert match.unacknowledged() == [2]


@pytest.mark.parametrize(
    ("damage", "line"),
    [
        ("UPDATE decisions SET \"by\" = x'07'", "decisions id 1: by: not valid (X'07')"),
        ("UPDATE decisions SET note = x'00'", "decisions id 1: note: not valid (X'00')"),
        (
            "INSERT INTO published VALUES (-1, 1.0, 2.0)",
            "published event_id -1: event_id: not valid (-1)",
        ),
        (
            "INSERT INTO published VALUES (5, 'soon', 2.0)",
            "published event_id 5: emitted: not valid ('soon')",
        ),
        (
            "INSERT OR REPLACE INTO meta VALUES ('broker', '[1]')",
            "meta broker: expected an object with url, table and game_id, got [1]",
        ),
    ],
)
def test_a_damaged_decision_or_published_row_is_one_line(setup, tmp_path, damage, line):
    path = tmp_path / "match.db"
    with MatchWriter(path, setup, video=False) as writer:
        writer.decision(1.0, 0, "dismiss", by="hub:Ann", note="fine")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(damage)
    conn.close()
    with pytest.raises(InputError) as caught:
        Match(path)
    assert str(caught.value) == f"{path}: {line}"


def test_the_writer_refuses_a_decision_without_who_made_it(setup, tmp_path):
    with MatchWriter(tmp_path / "match.db", setup, video=False) as writer:
        with pytest.raises(ValueError, match=r"^by: expected who decided, got ''$"):
            writer.decision(1.0, 0, "dismiss", by="")
        with pytest.raises(ValueError, match=r"^note: expected text or None"):
            writer.decision(1.0, 0, "dismiss", note=3)  # type: ignore[arg-type]
