"""The match file: one SQLite database per match, and the video beside it.

A :class:`MatchWriter` records a game as it is refereed: every processed frame (its time,
its number in the source and in the video), every model's pose in that frame, every event,
the players' declarations and decisions, and a snapshot of the session about once a second
of footage. ``Match`` reads it back, also while it is still being written or after the
program was killed, and rebuilds any moment (``state_at``) for a replay to scrub to.
``export`` writes a match as JSON or CSV for other tools. The layout of the file and of both
exports is in ``docs/match-format.md``.

::

    writer = MatchWriter(Path("match.db"), setup)        # and match.avi beside it
    game.listen(writer.event)
    ...                                                  # per processed frame:
    writer.frame(frame, poses_of(game.pipeline))
    if writer.snapshot_due(frame.t):
        writer.snapshot(frame.t, frame.index, game.session.snapshot())
    writer.close()

    match = Match(Path("match.db"))
    moment = match.state_at(754.2)       # the snapshot and poses of that moment

Writing never waits on the disk: the public methods put work on a queue, and one writer
thread owns the database connection and the video file. It commits at least every
``COMMIT_S`` seconds, so a killed program loses at most the last second. The queue is
unbounded: nothing handed over is dropped; a long backlog is logged and noted in ``meta``.

The video is Motion JPEG in an AVI file (``match.db`` -> ``match.avi``). An MP4 file keeps
its index at the end and cannot be read at all when the program is killed before closing
it; an AVI file stays readable from the start up to the frames last flushed to disk.

``python -m vision.record bench`` builds a synthetic hour-long match and times seeking in it.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import importlib.metadata
import json
import logging
import math
import os
import queue
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import cv2
import numpy as np

from rules.errors import InputError
from rules.session import DECISIONS, Event
from vision.sources import Frame

if TYPE_CHECKING:
    from calibration.camera import CameraModel
    from vision.live import Setup
    from vision.pipeline import Pipeline

log = logging.getLogger("tablesight.record")

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
#: stops the video.
SPACE_CHECK_S = 5.0
#: Items waiting for the writer beyond which the backlog is logged (about 30 s of frames).
BACKLOG_WARN = 900
#: The states a model's track can be in (``vision.tracking.TrackState`` values).
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
)
#: The schema version this code writes and reads.
SCHEMA_VERSION = len(MIGRATIONS)

EVENT_FIELDS = tuple(f.name for f in dataclasses.fields(Event))
_EVENT_COLUMNS = ", ".join(f'"{name}"' for name in ("revision", *EVENT_FIELDS))
_INSERT_EVENT = (
    f"INSERT INTO events ({_EVENT_COLUMNS}) VALUES ({', '.join('?' * (len(EVENT_FIELDS) + 1))})"
)
_INSERT_FRAME = "INSERT INTO frames (id, t, source_index, video_frame) VALUES (?, ?, ?, ?)"
_INSERT_POSE = (
    "INSERT INTO poses (frame, model, x_in, y_in, heading_deg, sigma_in, state) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_SNAPSHOT = "INSERT INTO snapshots (t, frame, state) VALUES (?, ?, ?)"
_INSERT_DECLARATION = (
    "INSERT INTO declarations (t, frame, model, action, target, roll) VALUES (?, ?, ?, ?, ?, ?)"
)
_INSERT_DECISION = "INSERT INTO decisions (t, event_id, decision) VALUES (?, ?, ?)"
_INSERT_INPUT = "INSERT INTO inputs (kind, args) VALUES (?, ?)"
_SET_META = "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)"

#: One model's pose in one frame: x and y (inches), heading (degrees CCW from +x), the
#: centre's uncertainty (inches) and the track's state.
PoseTuple = tuple[float, float, float, float, str]


def _event_row(revision: int, e: Event) -> tuple[Any, ...]:
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


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _reason(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()


def _connect(path: Path, *, read_only: bool = False) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), usable from any thread
    (each user keeps to one thread or holds a lock).

    Read-only, it also opens a finished match on read-only media: a WAL database needs its
    ``-shm`` file, which cannot be made there, so a file with no (or an empty) ``-wal``
    beside it (no writer is at work) is opened as immutable.
    """
    if not read_only:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 5000")
        return conn
    uri = path.resolve().as_uri()
    conn = sqlite3.connect(
        f"{uri}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        conn.close()
        wal = path.with_name(path.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise
        conn = sqlite3.connect(
            f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None, check_same_thread=False
        )
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


def _user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Apply the migrations the file lacks, each in a transaction of its own."""
    version = _user_version(conn)
    _refuse_future(path, version)
    for v in range(version, SCHEMA_VERSION):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in MIGRATIONS[v].split(";"):
                if statement.strip():
                    conn.execute(statement)
            if v > 0:
                conn.execute(_SET_META, ("schema", json.dumps(v + 1)))
            conn.execute(f"PRAGMA user_version = {v + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def _refuse_future(path: Path, version: int) -> None:
    if version > SCHEMA_VERSION:
        raise InputError(
            f"{path}: match file format version {version} is newer than this TableSight "
            f"reads ({SCHEMA_VERSION}); update TableSight"
        )


@dataclass(frozen=True)
class _Existing:
    """What already lies at a path: nothing (or an empty database), or a match."""

    match: bool
    version: int = 0
    created: str | None = None
    video: str | None = None


def _inspect(path: Path, writing: bool) -> _Existing:
    """What is at ``path``: nothing (or an empty database) or a match; anything else is an
    :class:`InputError` (``writing``: one that refuses to overwrite it)."""
    refuse = "; refusing to overwrite it" if writing else ""
    if path.is_dir():
        raise InputError(f"{path}: is a folder, not a match file")
    if not path.exists() or path.stat().st_size == 0:
        return _Existing(False)
    try:
        with path.open("rb") as f:
            magic = f.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise InputError(f"{path}: cannot read it: {_reason(exc)}") from None
    if magic != SQLITE_MAGIC:
        raise InputError(f"{path}: not a match file{refuse}")
    try:
        conn = _connect(path, read_only=True)
        try:
            version = _user_version(conn)
            tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if version == 0 and tables == 0:
                return _Existing(False)
            has_meta = conn.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
            ).fetchone()[0]
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall()) if has_meta else {}
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise InputError(f"{path}: cannot read it as a database: {exc}{refuse}") from None
    try:
        match = json.loads(meta.get("format", "null")) == FORMAT
    except json.JSONDecodeError:
        match = False
    if not match:
        raise InputError(f"{path}: an SQLite database but not a match file{refuse}")
    return _Existing(
        True,
        version,
        json.loads(meta.get("created", "null")),
        json.loads(meta.get("video", "null")),
    )


def _check_writable(path: Path, min_free_bytes: int) -> None:
    """The folder exists, a file can be made in it, and it has room."""
    folder = path.parent
    if not folder.is_dir():
        raise InputError(f"{path}: cannot write here: no such folder {folder}")
    try:
        fd, probe = tempfile.mkstemp(prefix=".tablesight-", suffix=".probe", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"{path}: cannot write here: {_reason(exc)}") from None
    free = shutil.disk_usage(folder).free
    if free < min_free_bytes:
        raise InputError(
            f"{path}: cannot write here: {free / 1e6:.0f} MB free, "
            f"{min_free_bytes / 1e6:.0f} MB needed"
        )


def _app_version() -> str:
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
    from calibration.camera import BoardSpec, CameraModel

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


def poses_of(pipeline: Pipeline) -> dict[str, PoseTuple]:
    """Every tracked model's pose as :meth:`MatchWriter.frame` takes it, by model id."""
    out: dict[str, PoseTuple] = {}
    for marker, track in pipeline.tracker.tracks.items():
        model = pipeline.model_of.get(marker)
        if model is not None:
            out[model] = (track.x, track.y, track.heading, track.sigma_in, track.state.value)
    return out


# -- writing ---------------------------------------------------------------------------------

_STOP = object()


class MatchWriter:
    """Records one game's session into ``path`` (and its video beside it).

    At start it checks that the folder exists and can be written, that it has
    ``min_free_bytes`` free, and that ``path`` is new, an empty file or a match file; any
    problem is one :class:`InputError` line naming the path. An existing match file is
    replaced (with its video) when ``replace`` is true and refused otherwise; any other
    existing file, at ``path`` or where the video would go, is refused, never overwritten.
    While recording, the video stops if less than ``min_free_bytes`` is left (poses and
    events go on; ``meta.video_error`` says so).

    ``fps`` is the nominal frame rate written in the video's header (the ``frames`` table
    has each frame's true time). Pictures are scaled to ``video_size`` (width, height;
    by default the first picture's size). A rendered 1080p table picture costs the writer
    thread about 20 ms and 70 kB (some 7 GB an hour at 30 fps); a 720p one, 30 kB.

    ``app_version`` defaults to the installed package's; ``source`` names the footage (for
    ``analyze``: the video file whose frame numbers ``frames.source_index`` refers to).

    One writer records one session: event ids must not repeat (after ``Game.restart()``,
    close this writer and start a new file). The methods may be called from any thread and
    return at once, whatever the disk is doing; after :meth:`close` (or leaving a ``with``
    block) the file is complete. If the writer thread fails (the disk is full, say), the
    next call raises :class:`RecordError`.
    """

    def __init__(
        self,
        path: Path,
        setup: Setup,
        *,
        fps: float = 30.0,
        video: bool = True,
        replace: bool = True,
        app_version: str | None = None,
        source: str | None = None,
        video_size: tuple[int, int] | None = None,
        min_free_bytes: int = MIN_FREE_BYTES,
    ) -> None:
        self.path = Path(path)
        self.fps = float(fps)
        self.video_path = self.path.with_suffix(VIDEO_SUFFIX) if video else None
        if self.video_path == self.path:
            raise InputError(f"{path}: a match file may not end in {VIDEO_SUFFIX}")
        self.min_free_bytes = min_free_bytes
        self._prepare(replace)
        self._create(setup, app_version, source)
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        #: Callers may hand over from several threads; this keeps their order and counts.
        self._handing = threading.RLock()
        self._frames = 0
        self._event_ids: set[int] = set()
        self._last_snapshot_t: float | None = None
        self._closed = False
        self._error: BaseException | None = None
        self._behind = False
        #: The longest the queue has been (items); notes a writer that fell behind.
        self.max_backlog = 0
        #: Pictures written to the video so far (counted by the writer thread).
        self.video_frames = 0
        self._video: cv2.VideoWriter | None = None
        self._video_opened = False
        self._video_size = video_size
        self._thread = threading.Thread(target=self._run, name=f"record {self.path.name}")
        self._thread.start()

    # -- start ----------------------------------------------------------------------------

    def _prepare(self, replace: bool) -> None:
        _check_writable(self.path, self.min_free_bytes)
        existing = _inspect(self.path, writing=True)
        if existing.match:
            _refuse_future(self.path, existing.version)
            if not replace:
                when = f" (recorded {existing.created})" if existing.created else ""
                raise InputError(f"{self.path}: already holds a match{when}; choose another name")
        old_video = self.path.with_name(existing.video) if existing.video else None
        video = self.video_path
        if video is not None and video.exists() and video != old_video:
            raise InputError(
                f"{video}: exists and is not this match's video; refusing to overwrite it"
            )
        try:
            for stale in (
                self.path,
                self.path.with_name(self.path.name + "-wal"),
                self.path.with_name(self.path.name + "-shm"),
                old_video,
            ):
                if stale is not None and (stale.exists() or stale.is_symlink()):
                    stale.unlink()
        except OSError as exc:
            raise InputError(f"{self.path}: cannot replace it: {_reason(exc)}") from None

    def _create(self, setup: Setup, app_version: str | None, source: str | None) -> None:
        meta = {
            "format": FORMAT,
            "schema": SCHEMA_VERSION,
            "app_version": app_version or _app_version(),
            "created": _now_iso(),
            **setup_meta(setup),
            "fps": self.fps,
            "video": self.video_path.name if self.video_path is not None else None,
            "video_fourcc": VIDEO_FOURCC if self.video_path is not None else None,
            "source": source,
        }
        try:
            conn = _connect(self.path)
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                _migrate(conn, self.path)
                conn.execute("BEGIN")
                conn.executemany(_SET_META, [(k, json.dumps(v)) for k, v in meta.items()])
                conn.execute(
                    "INSERT INTO revisions (revision, created, note) VALUES (0, ?, 'live')",
                    (meta["created"],),
                )
                conn.execute("COMMIT")
            finally:
                conn.close()
        except sqlite3.Error as exc:
            raise InputError(f"{self.path}: cannot write here: {exc}") from None

    # -- what the game hands over ----------------------------------------------------------

    def frame(
        self, frame: Frame, poses: Mapping[str, PoseTuple], *, write_image: bool = True
    ) -> None:
        """One processed frame: its time and number, and each model's pose in it.

        ``poses`` maps a model id to ``(x_in, y_in, heading_deg, sigma_in, state)``, state
        one of ``STATES`` (:func:`poses_of` builds it from a pipeline). The frame's picture
        goes into the video unless ``write_image`` is false or the writer has no video;
        such a frame has no ``video_frame``. The picture is kept by reference until it is
        written: do not draw on it afterwards.
        """
        rows = []
        for model, (x, y, heading, sigma, state) in poses.items():
            if state not in STATES:
                raise ValueError(f"pose of {model}: state must be one of {STATES}, got {state!r}")
            rows.append((model, float(x), float(y), float(heading), float(sigma), state))
        image = frame.image if write_image and self.video_path is not None else None
        with self._handing:
            self._put(("frame", self._frames, float(frame.t), int(frame.index), image, rows))
            self._frames += 1

    def event(self, e: Event) -> None:
        """An event of the session (a :meth:`Game.listen` listener), by its id."""
        if e.id < 0:
            raise ValueError(f"event: not numbered by a session (id {e.id}): {e.message}")
        with self._handing:
            if e.id in self._event_ids:
                raise ValueError(
                    f"event {e.id} is already in the record; one MatchWriter records one session"
                )
            self._put(("event", _event_row(0, e)))
            self._event_ids.add(e.id)

    def snapshot(self, t: float, frame_index: int, state: Mapping[str, Any]) -> None:
        """The session's state (``Session.snapshot()``) at time ``t``.

        The caller (the Game) takes one about once per second of footage
        (:meth:`snapshot_due`), so that any moment is rebuilt from at most a second back.
        """
        self._last_snapshot_t = float(t)
        self._put(("snapshot", (float(t), int(frame_index), json.dumps(state))))

    def snapshot_due(self, t: float) -> bool:
        """True when ``SNAPSHOT_EVERY_S`` of footage has passed since the last snapshot."""
        last = self._last_snapshot_t
        return last is None or t < last or t - last >= SNAPSHOT_EVERY_S

    def input(self, kind: str, args: Mapping[str, Any]) -> None:
        """One input of the session's journal (a ``Session.journal``), in order."""
        self._put(("input", (kind, json.dumps(args))))

    def declaration(
        self,
        t: float,
        frame_index: int,
        model: str,
        action: str | None,
        target: str | None,
        roll: int | None,
    ) -> None:
        """A player's declaration for a model, as ``Session.declare`` received it."""
        roll = int(roll) if roll is not None else None
        self._put(("declaration", (float(t), int(frame_index), model, action, target, roll)))

    def decision(self, t: float, event_id: int, decision: str) -> None:
        """The players' decision on a flag: ``accept`` or ``dismiss``."""
        if decision not in DECISIONS:
            raise ValueError(f"decision: expected one of {', '.join(DECISIONS)}, got {decision!r}")
        self._put(("decision", (float(t), int(event_id), decision)))

    @property
    def backlog(self) -> int:
        """Items handed over and not yet written."""
        return self._queue.qsize()

    @property
    def error(self) -> BaseException | None:
        """Why the writer thread stopped, if it did."""
        return self._error

    def _put(self, item: object) -> None:
        """Hand an item to the writer thread, in order."""
        with self._handing:
            if self._error is not None:
                raise RecordError(f"{self.path}: recording stopped: {self._error}")
            if self._closed:
                raise RecordError(f"{self.path}: the record is closed")
            self._queue.put(item)
            waiting = self._queue.qsize()
            self.max_backlog = max(self.max_backlog, waiting)
            if waiting > BACKLOG_WARN and not self._behind:
                self._behind = True
                log.warning(
                    "%s: the record is %d items behind; nothing is dropped", self.path, waiting
                )
            elif waiting < BACKLOG_WARN // 2:
                self._behind = False

    def close(self) -> None:
        """Write everything handed over, finish the video, checkpoint; then return."""
        with self._handing:
            closing = not self._closed
            if closing:
                self._closed = True
                self._queue.put(_STOP)
        if closing:
            self._thread.join()
        if self._error is not None:
            raise RecordError(f"{self.path}: recording stopped: {self._error}")

    def __enter__(self) -> MatchWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the writer thread -----------------------------------------------------------------

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        try:
            conn = _connect(self.path)
            conn.execute("PRAGMA synchronous = NORMAL")
            self._loop(conn)
        except BaseException as exc:  # kept for the caller: the record stopped
            self._error = exc
            log.error("%s: recording stopped: %s", self.path, exc)
        finally:
            if self._video is not None:
                self._video.release()
            if conn is not None:
                conn.close()

    def _loop(self, conn: sqlite3.Connection) -> None:
        dirty = False
        last_commit = time.monotonic()
        last_space_check = last_commit
        conn.execute("BEGIN")
        while True:
            now = time.monotonic()
            wait = max(0.0, last_commit + COMMIT_S - now) if dirty else COMMIT_S
            try:
                item = self._queue.get(timeout=wait)
            except queue.Empty:
                item = None
                if not threading.main_thread().is_alive() and self._queue.empty():
                    break  # the program ended without close(): finish the file
            if item is _STOP:
                break
            if item is not None:
                self._apply(conn, item)
                dirty = True
            now = time.monotonic()
            if dirty and now - last_commit >= COMMIT_S:
                conn.execute("COMMIT")
                conn.execute("BEGIN")
                dirty, last_commit = False, now
            if now - last_space_check > SPACE_CHECK_S:
                last_space_check = now
                self._check_space(conn)
        self._finish(conn)

    def _apply(self, conn: sqlite3.Connection, item: tuple[Any, ...]) -> None:
        kind = item[0]
        if kind == "frame":
            _, frame_id, t, index, image, rows = item
            video_frame = self._write_image(conn, image) if image is not None else None
            conn.execute(_INSERT_FRAME, (frame_id, t, index, video_frame))
            conn.executemany(_INSERT_POSE, [(frame_id, *row) for row in rows])
        elif kind == "event":
            conn.execute(_INSERT_EVENT, item[1])
        elif kind == "snapshot":
            conn.execute(_INSERT_SNAPSHOT, item[1])
        elif kind == "declaration":
            conn.execute(_INSERT_DECLARATION, item[1])
        elif kind == "input":
            conn.execute(_INSERT_INPUT, item[1])
        elif kind == "decision":
            conn.execute(_INSERT_DECISION, item[1])

    def _write_image(self, conn: sqlite3.Connection, image: np.ndarray) -> int | None:
        if image.ndim == 2:
            image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        elif image.shape[2] == 4:
            image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
        if not self._video_opened:
            self._video_opened = True
            self._video_size = self._video_size or (image.shape[1], image.shape[0])
            self._video = self._open_video(self._video_size)
            if self._video is None:
                message = f"OpenCV cannot write {VIDEO_FOURCC} video to {self.video_path}"
                log.error("%s: %s; recording without video", self.path, message)
                conn.execute(_SET_META, ("video", "null"))
                conn.execute(_SET_META, ("video_error", json.dumps(message)))
        if self._video is None or self._video_size is None:
            return None
        if (image.shape[1], image.shape[0]) != self._video_size:
            image = cv2.resize(image, self._video_size, interpolation=cv2.INTER_AREA)
        self._video.write(np.ascontiguousarray(image, dtype=np.uint8))
        self.video_frames += 1
        return self.video_frames - 1

    def _open_video(self, size: tuple[int, int]) -> cv2.VideoWriter | None:
        fourcc = cv2.VideoWriter.fourcc(*VIDEO_FOURCC)
        for api in (cv2.CAP_FFMPEG, cv2.CAP_ANY):
            writer = cv2.VideoWriter(str(self.video_path), api, fourcc, self.fps, size)
            if writer.isOpened():
                return writer
            writer.release()
        return None

    def _check_space(self, conn: sqlite3.Connection) -> None:
        """On a disk nearly full, stop the video, so that poses and events go on."""
        free = shutil.disk_usage(self.path.parent).free
        if free >= self.min_free_bytes or self._video is None:
            return
        self._video.release()
        self._video = None
        message = (
            f"stopped after {self.video_frames} pictures: {free / 1e6:.0f} MB free on the disk"
        )
        log.warning("%s: video %s; poses and events are still recorded", self.path, message)
        conn.execute(_SET_META, ("video_error", json.dumps(message)))

    def _finish(self, conn: sqlite3.Connection) -> None:
        self._closed = True  # also when the program ended without close()
        if self._video is not None:
            self._video.release()
            self._video = None
        conn.executemany(
            _SET_META,
            [
                ("closed", json.dumps(_now_iso())),
                ("frames", json.dumps(self._frames)),
                ("video_frames", json.dumps(self.video_frames)),
                ("max_backlog", json.dumps(self.max_backlog)),
            ],
        )
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


# -- reading ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FrameRow:
    """A processed frame: its time (s), its number in the source, its number in the video
    (``None``: no picture was recorded)."""

    t: float
    index: int
    video_frame: int | None


class PoseRow(NamedTuple):
    """A model's pose in one frame, as recorded."""

    x_in: float
    y_in: float
    heading_deg: float
    sigma_in: float
    state: str


class TrackPoint(NamedTuple):
    """A model's pose at a time: one row of :meth:`Match.tracks`."""

    t: float
    x_in: float
    y_in: float
    heading_deg: float
    sigma_in: float
    state: str


@dataclass(frozen=True)
class Moment:
    """A moment of the match rebuilt: what a replay shows at time ``t``.

    ``frame`` is the frame at or just before ``t`` and ``poses`` every model's pose in it;
    ``state`` is the latest session snapshot at or before ``t`` (taken at ``snapshot_t``,
    frame ``snapshot_frame``) and ``events`` the live record's events up to ``t``, so that
    ``session.restore(moment.state, moment.events)`` puts a session back at the snapshot.
    Before the first frame or snapshot, those fields are ``None`` (and ``poses`` empty).
    """

    t: float
    frame: FrameRow | None
    poses: dict[str, PoseRow]
    snapshot_t: float | None
    snapshot_frame: int | None
    state: dict[str, Any] | None
    events: list[Event]


def _event_dict(row: Sequence[Any]) -> dict[str, object]:
    revision, *fields = row
    out = Event(**dict(zip(EVENT_FIELDS, fields, strict=True))).to_dict()
    out["revision"] = revision
    return out


class Match:
    """A match file, read-only (also while it is being written, or after a crash).

    A file at an older schema version is migrated first (which needs it to be writable);
    a file from a newer TableSight, or anything but a match file, is one
    :class:`InputError` line. Safe to share between threads.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        if not self.path.exists():
            raise InputError(f"{self.path}: no such file")
        existing = _inspect(self.path, writing=False)
        if not existing.match:
            raise InputError(f"{self.path}: not a match file (an empty database)")
        _refuse_future(self.path, existing.version)
        if existing.version < SCHEMA_VERSION:
            try:
                conn = _connect(self.path)
                try:
                    _migrate(conn, self.path)
                finally:
                    conn.close()
            except sqlite3.Error as exc:
                raise InputError(
                    f"{self.path}: format version {existing.version} needs upgrading to "
                    f"{SCHEMA_VERSION} and the file cannot be written: {exc}"
                ) from None
        self._conn = _connect(self.path, read_only=True)
        self._lock = threading.Lock()

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Match:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _all(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    def _one(self, sql: str, args: Sequence[Any] = ()) -> Any:
        with self._lock:
            return self._conn.execute(sql, args).fetchone()

    # -- what the match is ------------------------------------------------------------------

    @property
    def meta(self) -> dict[str, Any]:
        """``meta`` as JSON values: format, schema, app version, game, ruleset, table, ..."""
        return {k: json.loads(v) for k, v in self._all("SELECT key, value FROM meta")}

    @property
    def video(self) -> Path | None:
        """The video file beside the database, if there is one."""
        name = self.meta.get("video")
        path = self.path.with_name(name) if name else None
        return path if path is not None and path.exists() else None

    @property
    def duration_s(self) -> float:
        """Footage recorded, from the first frame's time to the last's (seconds)."""
        first, last = self._one("SELECT min(t), max(t) FROM frames")
        return 0.0 if first is None else float(last - first)

    def setup(self) -> Setup:
        """The setup the match was refereed with, rebuilt from ``meta``: to judge it again."""
        from calibration.table import TableSpec
        from rules.ruleset import Ruleset
        from vision.live import Setup
        from vision.roster import RosterModel, TerrainPiece

        m = self.meta
        return Setup(
            m["game"],
            Ruleset.model_validate(m["ruleset"]),
            TableSpec.model_validate(m["table"]),
            [RosterModel.model_validate(r) for r in m["roster"]],
            [TerrainPiece.model_validate(p) for p in m["terrain"]],
            camera_from_dict(m["camera"]) if m.get("camera") else None,
        )

    # -- the record ---------------------------------------------------------------------------

    def events(self, revision: int | None = None) -> list[dict[str, object]]:
        """Events as ``Event.to_dict()`` plus ``revision``: one revision (0 is the live
        record), or every revision when ``None``, in order of revision and id."""
        sql = f"SELECT {_EVENT_COLUMNS} FROM events"
        if revision is None:
            rows = self._all(sql + " ORDER BY revision, id")
        else:
            rows = self._all(sql + " WHERE revision = ? ORDER BY id", (revision,))
        return [_event_dict(r) for r in rows]

    def revisions(self) -> list[dict[str, object]]:
        """Each revision of the events: number, when it was saved, note, how many events."""
        rows = self._all(
            "SELECT r.revision, r.created, r.note, count(e.id) FROM revisions r "
            "LEFT JOIN events e ON e.revision = r.revision GROUP BY r.revision "
            "ORDER BY r.revision"
        )
        return [{"revision": r, "created": c, "note": n, "events": k} for r, c, n, k in rows]

    def frames(self) -> list[FrameRow]:
        """Every processed frame in the order recorded."""
        rows = self._all("SELECT t, source_index, video_frame FROM frames ORDER BY id")
        return [FrameRow(*r) for r in rows]

    def inputs(self) -> list[tuple[str, dict[str, Any]]]:
        """The session's journal: every input in order (``Session.replay`` takes it)."""
        return [
            (k, json.loads(a)) for k, a in self._all("SELECT kind, args FROM inputs ORDER BY id")
        ]

    def declarations(self) -> list[dict[str, object]]:
        rows = self._all(
            "SELECT t, frame, model, action, target, roll FROM declarations ORDER BY id"
        )
        keys = ("t", "frame", "model", "action", "target", "roll")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def decisions(self) -> list[dict[str, object]]:
        """Decisions in the order made (a later one on the same flag supersedes it)."""
        rows = self._all("SELECT t, event_id, decision FROM decisions ORDER BY id")
        return [{"t": t, "event_id": e, "decision": d} for t, e, d in rows]

    def models(self) -> list[str]:
        """The models with recorded poses: the roster's order, then any others."""
        roster = [m["id"] for m in self.meta.get("roster", [])]
        seen = {r[0] for r in self._all("SELECT DISTINCT model FROM poses")}
        return [m for m in roster if m in seen] + sorted(seen - set(roster))

    def tracks(
        self,
        model_id: str | None = None,
        start: float | None = None,
        end: float | None = None,
    ) -> dict[str, list[TrackPoint]]:
        """Each model's poses over time (one model's, with ``model_id``), optionally only
        from ``start`` to ``end`` seconds."""
        out: dict[str, list[TrackPoint]] = {}
        for model, point in self._track_rows(model_id, start, end):
            out.setdefault(model, []).append(point)
        return out

    def _track_rows(
        self, model_id: str | None, start: float | None, end: float | None
    ) -> Iterator[tuple[str, TrackPoint]]:
        lo, hi = self._frame_range(start, end)
        sql = (
            "SELECT p.model, f.t, p.x_in, p.y_in, p.heading_deg, p.sigma_in, p.state "
            "FROM poses p JOIN frames f ON f.id = p.frame WHERE p.frame BETWEEN ? AND ?"
        )
        args: list[Any] = [lo, hi]
        if model_id is not None:
            sql += " AND p.model = ?"
            args.append(model_id)
        with self._lock:
            cursor = self._conn.execute(sql + " ORDER BY p.frame, p.model", args)
            rows = cursor.fetchall()
        for model, *rest in rows:
            yield model, TrackPoint(*rest)

    def _frame_range(self, start: float | None, end: float | None) -> tuple[int, int]:
        """The first and last frame ids from ``start`` to ``end`` seconds (frames are
        recorded in time order)."""
        lo = hi = None
        if start is None:
            lo = 0
        else:
            row = self._one("SELECT id FROM frames WHERE t >= ? ORDER BY t, id LIMIT 1", (start,))
            lo = row[0] if row else None
        if end is None:
            hi = self._one("SELECT max(id) FROM frames")[0]
        else:
            row = self._one(
                "SELECT id FROM frames WHERE t <= ? ORDER BY t DESC, id DESC LIMIT 1", (end,)
            )
            hi = row[0] if row else None
        if lo is None or hi is None:
            return 0, -1
        return lo, hi

    def pose_chunks(self, frames: int = 2000) -> Iterator[list[tuple[Any, ...]]]:
        """Every recorded pose as ``(t, source_index, video_frame, model, x_in, y_in,
        heading_deg, sigma_in, state)`` rows in the order recorded, ``frames`` frames at a
        time: for exports of long matches."""
        last = self._one("SELECT max(id) FROM frames")[0]
        if last is None:
            return
        sql = (
            "SELECT f.t, f.source_index, f.video_frame, p.model, p.x_in, p.y_in, "
            "p.heading_deg, p.sigma_in, p.state FROM poses p JOIN frames f ON f.id = p.frame "
            "WHERE p.frame BETWEEN ? AND ? ORDER BY p.frame, p.model"
        )
        for lo in range(0, last + 1, frames):
            yield self._all(sql, (lo, lo + frames - 1))

    def state_at(self, t: float) -> Moment:
        """The match as it stood at ``t`` seconds: see :class:`Moment`."""
        with self._lock:
            c = self._conn
            frame = c.execute(
                "SELECT id, t, source_index, video_frame FROM frames WHERE t <= ? "
                "ORDER BY t DESC, id DESC LIMIT 1",
                (t,),
            ).fetchone()
            poses: dict[str, PoseRow] = {}
            if frame is not None:
                for model, *rest in c.execute(
                    "SELECT model, x_in, y_in, heading_deg, sigma_in, state FROM poses "
                    "WHERE frame = ?",
                    (frame[0],),
                ):
                    poses[model] = PoseRow(*rest)
            snap = c.execute(
                "SELECT t, frame, state FROM snapshots WHERE t <= ? "
                "ORDER BY t DESC, id DESC LIMIT 1",
                (t,),
            ).fetchone()
            rows = c.execute(
                f"SELECT {_EVENT_COLUMNS} FROM events WHERE revision = 0 AND t <= ? ORDER BY id",
                (t,),
            ).fetchall()
        events = [Event(**dict(zip(EVENT_FIELDS, r[1:], strict=True))) for r in rows]
        return Moment(
            t,
            FrameRow(*frame[1:]) if frame is not None else None,
            poses,
            snap[0] if snap else None,
            snap[1] if snap else None,
            json.loads(snap[2]) if snap else None,
            events,
        )

    # -- re-judging ---------------------------------------------------------------------------

    def save_revision(self, events: Sequence[Event], note: str) -> int:
        """Save a re-judged list of events as a new revision; returns its number.

        Revision 0, the live record, and earlier revisions stay as they were.
        """
        try:
            conn = _connect(self.path)
        except sqlite3.Error as exc:
            raise InputError(f"{self.path}: cannot write a revision: {exc}") from None
        try:
            conn.execute("BEGIN IMMEDIATE")
            (last,) = conn.execute("SELECT max(revision) FROM revisions").fetchone()
            revision = (last if last is not None else -1) + 1
            conn.execute(
                "INSERT INTO revisions (revision, created, note) VALUES (?, ?, ?)",
                (revision, _now_iso(), note),
            )
            conn.executemany(_INSERT_EVENT, [_event_row(revision, e) for e in events])
            conn.execute("COMMIT")
            return int(revision)
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise InputError(f"{self.path}: cannot write a revision: {exc}") from None
        finally:
            conn.close()

    def integrity(self) -> str:
        """SQLite's ``PRAGMA integrity_check``: ``"ok"`` for a sound file."""
        return str(self._one("PRAGMA integrity_check")[0])


# -- export ----------------------------------------------------------------------------------


def export(match_path: Path, fmt: Literal["json", "csv"], out: Path | None = None) -> list[Path]:
    """Write a match for other tools; returns the files written.

    ``json``: one document at ``out`` (default: the match file with ``.json``).
    ``csv``: ``<out>-events.csv`` and ``<out>-tracks.csv``, where ``out`` is a path
    without suffix (a ``.csv`` suffix is dropped; default: the match file without its
    suffix). Both formats are described in ``docs/match-format.md``.
    """
    with Match(match_path) as match:
        if fmt == "json":
            target = out if out is not None else match.path.with_suffix(".json")
            _export_json(match, target)
            return [target]
        if fmt == "csv":
            stem = out if out is not None else match.path.with_suffix("")
            if stem.suffix.lower() == ".csv":
                stem = stem.with_suffix("")
            events = stem.with_name(stem.name + "-events.csv")
            tracks = stem.with_name(stem.name + "-tracks.csv")
            _export_csv(match, events, tracks)
            return [events, tracks]
    raise ValueError(f"export: format must be json or csv, got {fmt!r}")


def _export_json(match: Match, target: Path) -> None:
    head = {
        "format": FORMAT,
        "version": EXPORT_VERSION,
        "meta": match.meta,
        "revisions": match.revisions(),
        "events": match.events(),
        "declarations": match.declarations(),
        "decisions": match.decisions(),
    }
    models = match.models()
    # One pass over the poses, each model's rows into a file of its own, then joined.
    with tempfile.TemporaryDirectory(prefix="tablesight-export-") as folder:
        parts = {
            m: (Path(folder) / f"{k}.json").open("w", encoding="utf-8")
            for k, m in enumerate(models)
        }
        started: set[str] = set()
        try:
            for rows in match.pose_chunks():
                by_model: dict[str, list[tuple[Any, ...]]] = {}
                for t, _, _, model, x, y, heading, sigma, state in rows:
                    by_model.setdefault(model, []).append(
                        (
                            round(t, EXPORT_DIGITS),
                            round(x, EXPORT_DIGITS),
                            round(y, EXPORT_DIGITS),
                            round(heading, EXPORT_DIGITS),
                            round(sigma, EXPORT_DIGITS),
                            state,
                        )
                    )
                for model, points in by_model.items():
                    if model in started:
                        parts[model].write(", ")
                    started.add(model)
                    parts[model].write(json.dumps(points)[1:-1])
        finally:
            for part in parts.values():
                part.close()
        with target.open("w", encoding="utf-8") as f:
            f.write(json.dumps(head)[:-1] + ', "tracks": {')
            for k, model in enumerate(models):
                f.write(("," if k else "") + "\n" + json.dumps(model) + ": [")
                with (Path(folder) / f"{k}.json").open(encoding="utf-8") as part:
                    shutil.copyfileobj(part, f)
                f.write("]")
            f.write("\n}}\n")


#: The columns of ``<out>-events.csv`` and ``<out>-tracks.csv`` (export version 1).
EVENT_CSV_COLUMNS = ("revision", "id", *(n for n in EVENT_FIELDS if n != "id"))
TRACK_CSV_COLUMNS = (
    "t",
    "frame",
    "video_frame",
    "model",
    "x_in",
    "y_in",
    "heading_deg",
    "sigma_in",
    "state",
)


def _export_csv(match: Match, events: Path, tracks: Path) -> None:
    with events.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(EVENT_CSV_COLUMNS)
        for e in match.events():
            writer.writerow([e[c] for c in EVENT_CSV_COLUMNS])
    with tracks.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(TRACK_CSV_COLUMNS)
        for rows in match.pose_chunks():
            writer.writerows(
                (
                    round(t, EXPORT_DIGITS),
                    i,
                    vf,
                    m,
                    round(x, EXPORT_DIGITS),
                    round(y, EXPORT_DIGITS),
                    round(h, EXPORT_DIGITS),
                    round(s, EXPORT_DIGITS),
                    state,
                )
                for t, i, vf, m, x, y, h, s, state in rows
            )


# -- seek benchmark --------------------------------------------------------------------------


def _synthetic_setup(models: int) -> Setup:
    from calibration.table import Anchor, TableKeys, TableSpec
    from rules.ruleset import load_ruleset
    from rules.scenario import RoundBase
    from vision.live import Setup
    from vision.roster import RosterModel

    corners = [(1.5, 1.5), (42.5, 1.5), (42.5, 28.5), (1.5, 28.5)]
    table = TableSpec(
        table=TableKeys(width_in=44, depth_in=30, dictionary="4x4_250"),
        anchors=[Anchor(id=i, x_in=x, y_in=y, size_mm=40) for i, (x, y) in enumerate(corners)],
    )
    roster = [
        RosterModel(
            id=f"m{k:02d}",
            side=("red", "blue")[k % 2],
            base=RoundBase(shape="round", diameter_mm=25.4),
            movement=6,
            marker=10 + k,
            marker_size_mm=20,
        )
        for k in range(models)
    ]
    return Setup("necromunda", load_ruleset("necromunda"), table, roster, [], None)


def build_synthetic(
    path: Path,
    *,
    seconds: float = 3600.0,
    models: int = 40,
    fps: float = 30.0,
    seed: int = 1,
    progress: Callable[[float], None] | None = None,
) -> None:
    """A poses-only match through :class:`MatchWriter`: ``models`` models wandering for
    ``seconds`` at ``fps``, a snapshot every second, an event every ten."""
    from rules.geometry import Pose

    setup = _synthetic_setup(models)
    session = setup.session()
    rng = random.Random(seed)
    ids = [m.id for m in setup.roster]
    at = {m: [rng.uniform(2, 42), rng.uniform(2, 28), rng.uniform(0, 360)] for m in ids}
    image = np.zeros((8, 8, 3), np.uint8)
    writer = MatchWriter(path, setup, fps=fps, video=False, app_version="bench")
    mover = ids[0]
    for k in range(round(seconds * fps)):
        t = k / fps
        if k % round(fps) == 0:
            mover = rng.choice(ids)
        x, y, heading = at[mover]
        at[mover] = [min(max(x + rng.gauss(0, 0.05), 1), 43), min(max(y + 0.02, 1), 29), heading]
        poses = {
            m: (p[0], p[1], p[2], 0.004, "moving" if m == mover else "settled")
            for m, p in at.items()
        }
        writer.frame(Frame(image, t, k), poses, write_image=False)
        if writer.snapshot_due(t):
            for m, p in at.items():
                session.seen(m, Pose(p[0], p[1], p[2]), 0.004)
            if k % round(10 * fps) == 0:
                for e in session.moved(t, k, mover, Pose(at[mover][0], at[mover][1]), 0.004):
                    writer.event(e)
            writer.snapshot(t, k, session.snapshot())
        if progress is not None and k % round(60 * fps) == 0:
            progress(t / seconds)
    writer.close()


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


def bench(seconds: float = 3600.0, models: int = 40, seeks: int = 200, seed: int = 1) -> str:
    """Build a synthetic match in a temporary folder and time ``Match.state_at``."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="tablesight-bench-") as folder:
        path = Path(folder) / "bench.db"
        began = time.perf_counter()
        level = log.level
        log.setLevel(logging.ERROR)  # built faster than real time: a backlog is expected
        try:
            build_synthetic(
                path,
                seconds=seconds,
                models=models,
                seed=seed,
                progress=lambda f: print(f"building: {f:4.0%}", end="\r", file=sys.stderr),
            )
        finally:
            log.setLevel(level)
        build_s = time.perf_counter() - began
        print(" " * 20, end="\r", file=sys.stderr)
        size = path.stat().st_size
        match = Match(path)
        frames = len(match.frames())
        times = [rng.uniform(0.0, match.duration_s) for _ in range(seeks)]
        plain = _connect(path, read_only=True)
        seek_ms, base_ms = [], []
        for t in times:
            began = time.perf_counter()
            moment = match.state_at(t)
            seek_ms.append((time.perf_counter() - began) * 1000)
            assert moment.frame is not None and len(moment.poses) == models
            began = time.perf_counter()
            rows = plain.execute(
                "SELECT model, x_in, y_in, heading_deg, sigma_in, state FROM poses WHERE frame = ?",
                (int(t * 30.0),),
            ).fetchall()
            base_ms.append((time.perf_counter() - began) * 1000)
            assert len(rows) == models
        plain.close()
        match.close()
    stats = [
        (name, f(seek_ms), f(base_ms))
        for name, f in (
            ("p50", statistics.median),
            ("p95", lambda v: _percentile(v, 0.95)),
            ("max", max),
        )
    ]
    lines = [
        f"synthetic match: {seconds / 3600:.2f} h at 30 fps, {models} models: {frames} frames, "
        f"{frames * models} poses, a snapshot a second",
        f"build: {build_s:.1f} s through MatchWriter; file {size / 1e6:.1f} MB "
        f"({size / max(frames * models, 1):.0f} bytes a pose)",
        f"{seeks} seeks at random times; baseline: SELECT one frame's poses by primary key",
        f"{'':6}{'state_at (ms)':>15}{'baseline (ms)':>15}{'ratio':>8}",
    ]
    for name, s, b in stats:
        lines.append(f"{name:6}{s:15.3f}{b:15.3f}{s / b:8.1f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.record", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    b = commands.add_parser("bench", help="time seeking in a synthetic hour-long match")
    b.add_argument("--minutes", type=float, default=60.0, help="footage (default 60)")
    b.add_argument("--models", type=int, default=40, help="models on the table (default 40)")
    b.add_argument("--seeks", type=int, default=200, help="random seeks timed (default 200)")
    b.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print(bench(args.minutes * 60.0, args.models, args.seeks, args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
