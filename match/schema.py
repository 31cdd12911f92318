"""The match file's layout: its SQLite schema and migrations, opening and checking a file,
and the setup stored in its meta table. The layout is documented in
docs/match-format.md.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tablesight.rules.errors import InputError
from tablesight.rules.session import Event

if TYPE_CHECKING:
    from tablesight.calibration.camera import CameraModel
    from tablesight.calibration.setup import Setup


#: What ``meta.format`` says in every match file.
FORMAT = "tablesight-match"
#: The version of the JSON export (``docs/match-format.md``); the CSV columns share it.
EXPORT_VERSION = 1
#: Numbers in exports are rounded to this many decimals (as ``Event.to_dict`` does).
EXPORT_DIGITS = 4
#: The writer commits at least this often (seconds), so a kill loses at most ~1 s.
COMMIT_S = 0.25
#: How much footage (seconds) between two snapshots; see :meth:`MatchWriter.snapshot_due`.
SNAPSHOT_EVERY_S = 1.0
#: Free space a new match needs in its folder (bytes).
MIN_FREE_BYTES = 100_000_000
#: How often (seconds) the writer checks the free space; below ``min_free_bytes`` it
#: stops the video. A 4K camera's own JPEGs at 30 fps are about 20 MB a second, so the
#: margin above lasts five checks.
SPACE_CHECK_S = 1.0
#: Items waiting for the writer beyond which the backlog is logged (about 30 s of frames).
BACKLOG_WARN = 900
#: The states a model's track can be in (``tablesight.vision.tracking.TrackState`` values).
STATES = ("settled", "moving", "hidden")
#: Codec and suffix of the video beside the database.
VIDEO_FOURCC = "MJPG"
VIDEO_SUFFIX = ".avi"

SQLITE_MAGIC = b"SQLite format 3\x00"

#: Schema migrations: ``MIGRATIONS[v]`` takes a file from ``user_version`` v to v + 1.
#: Version 0 is an empty file. Append, never edit: old files are migrated in order.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    CREATE TABLE frames (
        id INTEGER PRIMARY KEY,
        t REAL NOT NULL,
        source_index INTEGER NOT NULL,
        video_frame INTEGER
    );
    CREATE INDEX frames_t ON frames (t);
    CREATE TABLE poses (
        frame INTEGER NOT NULL REFERENCES frames (id),
        model TEXT NOT NULL,
        x_in REAL NOT NULL,
        y_in REAL NOT NULL,
        heading_deg REAL NOT NULL,
        sigma_in REAL NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (frame, model)
    ) WITHOUT ROWID;
    CREATE TABLE revisions (
        revision INTEGER PRIMARY KEY,
        created TEXT NOT NULL,
        note TEXT NOT NULL
    );
    CREATE TABLE events (
        revision INTEGER NOT NULL REFERENCES revisions (revision),
        id INTEGER NOT NULL,
        t REAL NOT NULL,
        frame INTEGER NOT NULL,
        kind TEXT NOT NULL,
        message TEXT NOT NULL,
        rule TEXT,
        model TEXT,
        other TEXT,
        measured REAL,
        "limit" REAL,
        uncertainty REAL,
        PRIMARY KEY (revision, id)
    );
    CREATE INDEX events_t ON events (revision, t);
    CREATE TABLE snapshots (
        id INTEGER PRIMARY KEY,
        t REAL NOT NULL,
        frame INTEGER NOT NULL,
        state TEXT NOT NULL
    );
    CREATE INDEX snapshots_t ON snapshots (t);
    CREATE TABLE declarations (
        id INTEGER PRIMARY KEY,
        t REAL NOT NULL,
        frame INTEGER NOT NULL,
        model TEXT NOT NULL,
        action TEXT,
        target TEXT,
        roll INTEGER
    );
    CREATE TABLE decisions (
        id INTEGER PRIMARY KEY,
        t REAL NOT NULL,
        event_id INTEGER NOT NULL,
        decision TEXT NOT NULL
    );
    CREATE TABLE inputs (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        args TEXT NOT NULL
    );
    """,
    # 2: who decided a flag (the table, or a tournament hub's judge) and their note; the
    # events the broker acknowledged when the game was published (``--broker``)
    """
    ALTER TABLE decisions ADD COLUMN "by" TEXT NOT NULL DEFAULT 'table';
    ALTER TABLE decisions ADD COLUMN note TEXT;
    CREATE TABLE published (
        event_id INTEGER PRIMARY KEY,
        emitted REAL NOT NULL,
        acked REAL NOT NULL
    );
    """,
    # 3: each pose's height (a model on a tower); poses of older files stand on the table
    """
    ALTER TABLE poses ADD COLUMN z_in REAL NOT NULL DEFAULT 0.0;
    """,
)
#: The schema version this code writes and reads.
SCHEMA_VERSION = len(MIGRATIONS)

EVENT_FIELDS = tuple(f.name for f in dataclasses.fields(Event))
EVENT_COLUMNS = ", ".join(f'"{name}"' for name in ("revision", *EVENT_FIELDS))
INSERT_EVENT = (
    f"INSERT INTO events ({EVENT_COLUMNS}) VALUES ({', '.join('?' * (len(EVENT_FIELDS) + 1))})"
)
INSERT_FRAME = "INSERT INTO frames (id, t, source_index, video_frame) VALUES (?, ?, ?, ?)"
INSERT_POSE = (
    "INSERT INTO poses (frame, model, x_in, y_in, heading_deg, sigma_in, state, z_in) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
INSERT_SNAPSHOT = "INSERT INTO snapshots (t, frame, state) VALUES (?, ?, ?)"
INSERT_DECLARATION = (
    "INSERT INTO declarations (t, frame, model, action, target, roll) VALUES (?, ?, ?, ?, ?, ?)"
)
INSERT_DECISION = 'INSERT INTO decisions (t, event_id, decision, "by", note) VALUES (?, ?, ?, ?, ?)'
#: Who decided a flag when nobody says: the players at the table (its page or keys).
TABLE_DECIDES = "table"
INSERT_PUBLISHED = "INSERT OR IGNORE INTO published (event_id, emitted, acked) VALUES (?, ?, ?)"
INSERT_INPUT = "INSERT INTO inputs (kind, args) VALUES (?, ?)"
SET_META = "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)"

#: One model's pose in one frame: x and y (inches), heading (degrees CCW from +x), the
#: centre's uncertainty (inches), the track's state and, optionally, the height z (inches;
#: 0.0, on the table, when left out).
PoseTuple = tuple[float, float, float, float, str] | tuple[float, float, float, float, str, float]


def event_row(revision: int, e: Event) -> tuple[Any, ...]:
    """An event as a row of ``events`` (plain Python numbers, whatever the session used)."""
    row: list[Any] = [revision]
    for name in EVENT_FIELDS:
        value = getattr(e, name)
        if isinstance(value, np.generic):
            value = value.item()
        row.append(value)
    return tuple(row)


class RecordError(RuntimeError):
    """The record stopped (the disk filled up, say); the message is one line."""


# -- opening files --------------------------------------------------------------------------


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def reason(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()


def connect(path: Path, *, read_only: bool = False, untouched: bool = False) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), usable from any thread
    (each user keeps to one thread or holds a lock).

    Read-only, it also opens a finished match on read-only media: a WAL database needs its
    ``-shm`` file, which cannot be made there, so a file with no (or an empty) ``-wal``
    beside it (no writer is at work) is opened as immutable. ``untouched`` (read-only)
    opens such a file as immutable at once, so that no ``-wal`` or ``-shm`` file is left
    beside it (for a quick look or an export; it does not see later writes).
    """
    if not read_only:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 5000")
        return conn
    uri = path.resolve().as_uri()
    wal = path.with_name(path.name + "-wal")
    if untouched and not (wal.exists() and wal.stat().st_size > 0):
        conn = sqlite3.connect(
            f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None, check_same_thread=False
        )
        conn.execute("PRAGMA busy_timeout = 5000")
        return conn
    conn = sqlite3.connect(
        f"{uri}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        conn.close()
        if wal.exists() and wal.stat().st_size > 0:
            raise
        conn = sqlite3.connect(
            f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None, check_same_thread=False
        )
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


def user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Apply the migrations the file lacks, each in a transaction of its own."""
    version = user_version(conn)
    refuse_future(path, version)
    for v in range(version, SCHEMA_VERSION):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in MIGRATIONS[v].split(";"):
                if statement.strip():
                    conn.execute(statement)
            if v > 0:
                conn.execute(SET_META, ("schema", json.dumps(v + 1)))
            conn.execute(f"PRAGMA user_version = {v + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def refuse_future(path: Path, version: int) -> None:
    if version > SCHEMA_VERSION:
        raise InputError(
            f"{path}: match file format version {version} is newer than this TableSight "
            f"reads ({SCHEMA_VERSION}); update TableSight"
        )


@dataclass(frozen=True)
class Existing:
    """What already lies at a path: nothing (or an empty database), or a match."""

    match: bool
    version: int = 0
    created: str | None = None
    video: str | None = None


def inspect_file(path: Path, writing: bool) -> Existing:
    """What is at ``path``: nothing (or an empty database) or a match; anything else is an
    :class:`InputError` (``writing``: one that refuses to overwrite it)."""
    refuse = "; refusing to overwrite it" if writing else ""
    if path.is_dir():
        raise InputError(f"{path}: is a folder, not a match file")
    if not path.exists() or path.stat().st_size == 0:
        return Existing(False)
    try:
        with path.open("rb") as f:
            magic = f.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise InputError(f"{path}: cannot read it: {reason(exc)}") from None
    if magic != SQLITE_MAGIC:
        raise InputError(f"{path}: not a match file{refuse}")
    try:
        conn = connect(path, read_only=True, untouched=True)
        try:
            version = user_version(conn)
            tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if version == 0 and tables == 0:
                return Existing(False)
            has_meta = conn.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
            ).fetchone()[0]
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall()) if has_meta else {}
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise InputError(f"{path}: cannot read it as a database: {exc}{refuse}") from None

    def value(key: str) -> Any:
        try:
            return json.loads(meta.get(key, "null"))
        except (json.JSONDecodeError, TypeError):
            return None

    if value("format") != FORMAT:
        raise InputError(f"{path}: an SQLite database but not a match file{refuse}")
    created, video = value("created"), value("video")
    return Existing(
        True,
        version,
        created if isinstance(created, str) else None,
        video if isinstance(video, str) else None,
    )


def check_writable(path: Path, min_free_bytes: int) -> None:
    """The folder exists, a file can be made in it, and it has room."""
    folder = path.parent
    if not folder.is_dir():
        raise InputError(f"{path}: cannot write here: no such folder {folder}")
    try:
        fd, probe = tempfile.mkstemp(prefix=".tablesight-", suffix=".probe", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"{path}: cannot write here: {reason(exc)}") from None
    free = shutil.disk_usage(folder).free
    if free < min_free_bytes:
        raise InputError(
            f"{path}: cannot write here: {free / 1e6:.0f} MB free, "
            f"{min_free_bytes / 1e6:.0f} MB needed"
        )


def installed_version() -> str:
    try:
        return importlib.metadata.version("tablesight")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def camera_to_dict(camera: CameraModel) -> dict[str, Any]:
    """A camera as ``camera.toml`` holds it (:meth:`CameraModel.to_toml`), at full precision."""
    out: dict[str, Any] = {
        "image_size": [int(camera.image_size[0]), int(camera.image_size[1])],
        "camera_matrix": np.asarray(camera.camera_matrix, dtype=float).tolist(),
        "dist_coeffs": np.asarray(camera.dist_coeffs, dtype=float).ravel().tolist(),
    }
    if camera.rms_px is not None:
        out["rms_px"] = float(camera.rms_px)
    if camera.board is not None:
        out["board"] = camera.board.model_dump(mode="json")
    return out


def camera_from_dict(data: Mapping[str, Any]) -> CameraModel:
    """The inverse of :func:`camera_to_dict`."""
    from tablesight.calibration.camera import BoardSpec, CameraModel

    board = data.get("board")
    return CameraModel(
        (int(data["image_size"][0]), int(data["image_size"][1])),
        np.asarray(data["camera_matrix"], dtype=float),
        np.asarray(data["dist_coeffs"], dtype=float),
        data.get("rms_px"),
        BoardSpec.model_validate(board) if board is not None else None,
    )


def setup_meta(setup: Setup) -> dict[str, Any]:
    """Everything needed to referee the match again, as JSON values."""
    return {
        "game": setup.game,
        "ruleset": setup.ruleset.model_dump(mode="json"),
        "table": setup.table.model_dump(mode="json"),
        "roster": [m.model_dump(mode="json") for m in setup.roster],
        "terrain": [p.model_dump(mode="json") for p in setup.terrain],
        "camera": camera_to_dict(setup.camera) if setup.camera is not None else None,
    }
