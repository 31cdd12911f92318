"""Reading a match file: :class:`Match` rebuilds any moment (``state_at``), also while the
file is still being written or after the program that wrote it was killed.
"""

from __future__ import annotations

import contextlib
import json
import math
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, get_args

from pydantic import ValidationError

from tablesight.match.schema import (
    EVENT_COLUMNS,
    EVENT_FIELDS,
    INSERT_EVENT,
    SCHEMA_VERSION,
    STATES,
    VIDEO_SUFFIX,
    camera_from_dict,
    connect,
    event_row,
    inspect_file,
    migrate,
    now_iso,
    refuse_future,
)
from tablesight.rules.errors import NAME_MAX, InputError, check_regular, check_unique
from tablesight.rules.session import INPUTS, Event, EventKind
from tablesight.rules.verdict import RuleName

if TYPE_CHECKING:
    from tablesight.calibration.setup import Setup


@dataclass(frozen=True, slots=True)
class FrameRow:
    """A processed frame: its time (s), its number in the source, its number in the video
    (``None``: no picture was recorded)."""

    t: float
    index: int
    video_frame: int | None


class PoseRow(NamedTuple):
    """A model's pose in one frame, as recorded (``z_in``: its height, 0.0 on the table
    and in files from before version 3)."""

    x_in: float
    y_in: float
    heading_deg: float
    sigma_in: float
    state: str
    z_in: float = 0.0


class TrackPoint(NamedTuple):
    """A model's pose at a time: one row of :meth:`Match.tracks` (``z_in`` as in
    :class:`PoseRow`)."""

    t: float
    x_in: float
    y_in: float
    heading_deg: float
    sigma_in: float
    state: str
    z_in: float = 0.0


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


#: Every value read from a match file is checked like a config file's: a crafted or damaged
#: file is one :class:`InputError` line naming the file and the field, never a traceback,
#: and never names a file to touch. Rows are checked in SQL when the file is opened.
_NUMBER = "typeof({c}) IN ('integer', 'real') AND abs({c}) < 1e300"
_INTEGER = "typeof({c}) = 'integer'"
_TEXT = "typeof({c}) = 'text'"
_JSON_OBJECT = "typeof({c}) = 'text' AND json_valid({c}) AND json_type({c}) = 'object'"


def _one_of(values: Sequence[str]) -> str:
    return "{c} IN (" + ", ".join("'" + v.replace("'", "''") + "'" for v in values) + ")"


def _or_null(check: str) -> str:
    return "({c} IS NULL OR " + check + ")"


#: Each table's columns and what they must hold (SQL over ``{c}``, the column).
ROW_CHECKS: dict[str, tuple[str, dict[str, str]]] = {
    "frames": (
        "id",
        {
            "t": _NUMBER,
            "source_index": _INTEGER,
            "video_frame": _or_null(_INTEGER + " AND {c} >= 0"),
        },
    ),
    "poses": (
        "frame",
        {
            "frame": _INTEGER,
            "model": _TEXT,
            "x_in": _NUMBER,
            "y_in": _NUMBER,
            "heading_deg": _NUMBER,
            "sigma_in": _NUMBER,
            "state": _one_of(STATES),
            "z_in": _NUMBER,
        },
    ),
    "revisions": ("revision", {"revision": _INTEGER, "created": _TEXT, "note": _TEXT}),
    "events": (
        "id",
        {
            "revision": _INTEGER,
            "id": _INTEGER + " AND {c} >= 0",
            "t": _NUMBER,
            "frame": _INTEGER,
            "kind": _one_of(get_args(EventKind)),
            "message": _TEXT,
            "rule": _or_null(_one_of(get_args(RuleName))),
            "model": _or_null(_TEXT),
            "other": _or_null(_TEXT),
            "measured": _or_null(_NUMBER),
            '"limit"': _or_null(_NUMBER),
            "uncertainty": _or_null(_NUMBER),
        },
    ),
    "snapshots": ("id", {"t": _NUMBER, "frame": _INTEGER, "state": _JSON_OBJECT}),
    "declarations": (
        "id",
        {
            "t": _NUMBER,
            "frame": _INTEGER,
            "model": _TEXT,
            "action": _or_null(_TEXT),
            "target": _or_null(_TEXT),
            "roll": _or_null(_INTEGER),
        },
    ),
    "decisions": (
        "id",
        {
            "t": _NUMBER,
            "event_id": _INTEGER,
            "decision": _one_of(("accept", "dismiss")),
            '"by"': _TEXT,
            "note": _or_null(_TEXT),
        },
    ),
    "published": (
        "event_id",
        {"event_id": _INTEGER + " AND {c} >= 0", "emitted": _NUMBER, "acked": _NUMBER},
    ),
    "inputs": ("id", {"kind": _one_of(INPUTS), "args": _JSON_OBJECT}),
}


#: Tables checked whole when a match is opened. The poses (millions of rows in a long
#: match: seconds to scan) are checked as they are read, a frame or a range at a time.
CHECKED_AT_OPEN = tuple(table for table in ROW_CHECKS if table != "poses")


def check_rows(
    conn: sqlite3.Connection,
    path: Path,
    tables: Sequence[str] = CHECKED_AT_OPEN,
    where: str = "1",
    args: Sequence[Any] = (),
) -> None:
    """Every row of ``tables`` (those matching ``where``) holds what the format says
    (types, kinds, JSON objects); the first that does not is one :class:`InputError` line
    naming its table, row and column."""
    for table in tables:
        key, columns = ROW_CHECKS[table]
        checks = [f"coalesce({check.format(c=column)}, 0)" for column, check in columns.items()]
        # one pass over the rows; the row found says which column failed
        row = conn.execute(
            f"SELECT {key}, {', '.join(checks)}, {', '.join(f'quote({c})' for c in columns)} "
            f"FROM {table} WHERE ({where}) AND NOT ({' AND '.join(checks)}) LIMIT 1",
            tuple(args),
        ).fetchone()
        if row is not None:
            n = len(columns)
            k = next(i for i, ok in enumerate(row[1 : 1 + n]) if not ok)
            column = list(columns)[k].strip('"')
            raise InputError(
                f"{path}: {table} {key} {row[0]}: {column}: not valid ({_short(row[1 + n + k])})"
            )


def _short(text: object) -> str:
    text = str(text)
    return text if len(text) <= 60 else text[:57] + "..."


def check_video_name(path: Path, name: object) -> str | None:
    """``meta.video``: ``None``, or a plain file name beside the match ending in ``.avi``."""
    if name is None:
        return None
    if (
        not isinstance(name, str)
        or name in ("", ".", "..")
        or any(c in name for c in "/\\\0")
        or Path(name).name != name
        or not name.endswith(VIDEO_SUFFIX)
        or len(name) <= len(VIDEO_SUFFIX)
    ):
        raise InputError(
            f"{path}: meta video: expected null or a file name beside it ending in "
            f"{VIDEO_SUFFIX}, got {_short(json.dumps(name))}"
        )
    size = len(name.encode("utf-8", "surrogatepass"))
    if size > NAME_MAX:  # no system takes it: looking for it fails
        raise InputError(
            f"{path}: meta video: expected a file name of at most {NAME_MAX} bytes, got "
            f"one of {size}: {_short(json.dumps(name))}"
        )
    return name


def check_meta(path: Path, meta: dict[str, Any]) -> None:
    """The scalar ``meta`` keys a reader uses before any setup is rebuilt."""

    def bad(key: str, expected: str) -> InputError:
        return InputError(
            f"{path}: meta {key}: expected {expected}, got {_short(json.dumps(meta[key]))}"
        )

    schema = meta.get("schema")
    if "schema" in meta and (type(schema) is not int or not 1 <= schema <= SCHEMA_VERSION):
        raise bad("schema", f"a version from 1 to {SCHEMA_VERSION}")
    if "game" in meta and (not isinstance(meta["game"], str) or not meta["game"]):
        raise bad("game", "the game's name")
    fps = meta.get("fps")
    if fps is not None and (
        type(fps) not in (int, float) or not math.isfinite(fps) or not 0 < fps <= 1000
    ):
        raise bad("fps", "a frame rate from 0 to 1000")
    check_video_name(path, meta.get("video"))
    roster = meta.get("roster", [])
    if not isinstance(roster, list) or not all(
        isinstance(m, dict) and isinstance(m.get("id"), str) for m in roster
    ):
        raise bad("roster", "a list of models, each with an id")
    # the replay and the export know a model, or a piece, by its id: a file with one id
    # twice is refused whole, never read with one entry silently in place of another
    check_unique(str(path), "meta roster", [m["id"] for m in roster])
    broker = meta.get("broker")
    if broker is not None and not (
        isinstance(broker, dict)
        and all(isinstance(broker.get(k), str) for k in ("url", "table", "game_id"))
    ):
        raise bad("broker", "an object with url, table and game_id")
    for key in ("table", "ruleset", "camera"):
        if meta.get(key) is not None and not isinstance(meta[key], dict):
            raise bad(key, "an object")
    terrain = meta.get("terrain", [])
    if not isinstance(terrain, list):
        raise bad("terrain", "a list of pieces")
    ids = [t.get("id") if isinstance(t, dict) else None for t in terrain]
    check_unique(str(path), "meta terrain", [i if isinstance(i, str) else None for i in ids])
    # the camera knows a model or a piece by its marker: one marker on two is refused, as
    # roster.toml and terrain.toml refuse it
    carried = [_marker(m) for m in roster]
    check_unique(str(path), "meta roster", carried, field="marker")
    pieces = [_marker(t) for t in terrain]
    check_unique(str(path), "meta terrain", pieces, field="marker")
    on_model = {m: i for i, m in enumerate(carried) if m is not None}
    for i, m in enumerate(pieces):
        if m in on_model:
            raise InputError(
                f"{path}: meta terrain[{i}].marker: {m} is also meta roster[{on_model[m]}].marker"
            )


def _marker(entry: object) -> int | None:
    """An entry's marker id, where it has one (an integer)."""
    marker = entry.get("marker") if isinstance(entry, dict) else None
    return marker if type(marker) is int else None


@contextlib.contextmanager
def untrusted(path: Path, what: str) -> Iterator[None]:
    """Values from the match file at work: any failure to make sense of them is the file's,
    one :class:`InputError` line naming the file and ``what`` was read."""
    try:
        yield
    except InputError:
        raise
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InputError(f"{path}: {what}{': ' + where if where else ''}: {first['msg']}") from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        detail = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        raise InputError(f"{path}: {what}: not valid ({_short(detail)})") from None


def _event_dict(row: Sequence[Any]) -> dict[str, object]:
    revision, *fields = row
    out = Event(**dict(zip(EVENT_FIELDS, fields, strict=True))).to_dict()
    out["revision"] = revision
    return out


class Match:
    """A match file, read-only (also while it is being written, or after a crash).

    A file at an older schema version is migrated first (which needs it to be writable);
    a file from a newer TableSight, or anything but a match file, is one
    :class:`InputError` line. Safe to share between threads. ``untouched``: a finished
    match is read as it is, leaving no ``-wal``/``-shm`` file beside it (see
    :func:`~tablesight.match.schema.connect`; later writes are not seen).
    """

    def __init__(self, path: Path, *, untouched: bool = False) -> None:
        self.path = Path(path)
        # SQLite opens what it is given: never a device, a pipe (it would wait) or a folder
        check_regular(self.path, "a match file")
        existing = inspect_file(self.path, writing=False)
        if not existing.match:
            raise InputError(f"{self.path}: not a match file (an empty database)")
        refuse_future(self.path, existing.version)
        if existing.version < SCHEMA_VERSION:
            try:
                conn = connect(self.path)
                try:
                    migrate(conn, self.path)
                finally:
                    conn.close()
            except sqlite3.Error as exc:
                raise InputError(
                    f"{self.path}: format version {existing.version} needs upgrading to "
                    f"{SCHEMA_VERSION} and the file cannot be written: {exc}"
                ) from None
        self._conn = connect(self.path, read_only=True, untouched=untouched)
        self._lock = threading.Lock()
        try:
            with untrusted(self.path, "meta"):
                check_meta(self.path, self.meta)
            check_rows(self._conn, self.path)
        except BaseException:
            self._conn.close()
            raise

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Match:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _all(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    def first_seen_t(self) -> float | None:
        """The time of the first frame in which a model was located (the table seen with
        models on it); ``None`` when none ever was."""
        row = self._one(
            "SELECT min(t) FROM frames WHERE EXISTS (SELECT 1 FROM poses WHERE frame = frames.id)"
        )
        return None if row is None or row[0] is None else float(row[0])

    def _one(self, sql: str, args: Sequence[Any] = ()) -> Any:
        with self._lock:
            return self._conn.execute(sql, args).fetchone()

    # -- what the match is ------------------------------------------------------------------

    @property
    def meta(self) -> dict[str, Any]:
        """``meta`` as JSON values: format, schema, app version, game, ruleset, table, ..."""
        out = {}
        for key, value in self._all("SELECT key, value FROM meta"):
            with untrusted(self.path, f"meta {key}"):
                out[str(key)] = json.loads(value)
        return out

    @property
    def video(self) -> Path | None:
        """The video file beside the database, if there is one."""
        name = check_video_name(self.path, self.meta.get("video"))
        path = self.path.with_name(name) if name else None
        try:
            return path if path is not None and path.is_file() else None
        except OSError:  # beside a match whose own name is nearly as long as names go
            return None

    @property
    def duration_s(self) -> float:
        """Footage recorded, from the first frame's time to the last's (seconds)."""
        first, last = self._one("SELECT min(t), max(t) FROM frames")
        return 0.0 if first is None else float(last - first)

    def setup(self) -> Setup:
        """The setup the match was refereed with, rebuilt from ``meta``: to judge it again."""
        from tablesight.calibration.roster import RosterModel, TerrainPiece
        from tablesight.calibration.setup import Setup
        from tablesight.calibration.table import TableSpec
        from tablesight.rules.ruleset import Ruleset

        m = self.meta
        with untrusted(self.path, "meta game"):
            game = str(m["game"])
        with untrusted(self.path, "meta ruleset"):
            ruleset = Ruleset.from_stored(m["ruleset"])
        with untrusted(self.path, "meta table"):
            table = TableSpec.model_validate(m["table"])
        with untrusted(self.path, "meta roster"):
            roster = [RosterModel.model_validate(r) for r in m["roster"]]
        with untrusted(self.path, "meta terrain"):
            terrain = [TerrainPiece.model_validate(p) for p in m["terrain"]]
        with untrusted(self.path, "meta camera"):
            camera = camera_from_dict(m["camera"]) if m.get("camera") else None
        with untrusted(self.path, "meta"):
            return Setup(game, ruleset, table, roster, terrain, camera)

    # -- the record ---------------------------------------------------------------------------

    def events(self, revision: int | None = None) -> list[dict[str, object]]:
        """Events as ``Event.to_dict()`` plus ``revision``: one revision (0 is the live
        record), or every revision when ``None``, in order of revision and id."""
        sql = f"SELECT {EVENT_COLUMNS} FROM events"
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
        """Decisions in the order made (a later one on the same flag supersedes it), each
        with who made it (``table``, or ``hub:<judge>``) and their note."""
        rows = self._all('SELECT t, event_id, decision, "by", note FROM decisions ORDER BY id')
        return [
            {"t": t, "event_id": e, "decision": d, "by": by, "note": note}
            for t, e, d, by, note in rows
        ]

    def published(self) -> list[dict[str, object]]:
        """The events of the live record the broker acknowledged, by id: ``event_id``,
        ``emitted`` and ``acked`` (Unix seconds). Empty unless the game was published
        (``meta.broker``)."""
        rows = self._all("SELECT event_id, emitted, acked FROM published ORDER BY event_id")
        return [{"event_id": e, "emitted": t, "acked": a} for e, t, a in rows]

    def unacknowledged(self) -> list[int]:
        """The live record's events the broker never acknowledged (those a hub may have
        missed); empty when the game was not published (no ``meta.broker``)."""
        if self.meta.get("broker") is None:
            return []
        rows = self._all(
            "SELECT id FROM events WHERE revision = 0 AND id NOT IN "
            "(SELECT event_id FROM published) ORDER BY id"
        )
        return [int(r[0]) for r in rows]

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
            "SELECT p.model, f.t, p.x_in, p.y_in, p.heading_deg, p.sigma_in, p.state, p.z_in "
            "FROM poses p JOIN frames f ON f.id = p.frame WHERE p.frame BETWEEN ? AND ?"
        )
        args: list[Any] = [lo, hi]
        if model_id is not None:
            sql += " AND p.model = ?"
            args.append(model_id)
        with self._lock:
            check_rows(self._conn, self.path, ("poses",), "frame BETWEEN ? AND ?", (lo, hi))
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
            with self._lock:
                check_rows(
                    self._conn,
                    self.path,
                    ("poses",),
                    "frame BETWEEN ? AND ?",
                    (lo, lo + frames - 1),
                )
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
                check_rows(c, self.path, ("poses",), "frame = ?", (frame[0],))
                for model, *rest in c.execute(
                    "SELECT model, x_in, y_in, heading_deg, sigma_in, state, z_in FROM poses "
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
                f"SELECT {EVENT_COLUMNS} FROM events WHERE revision = 0 AND t <= ? ORDER BY id",
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
            conn = connect(self.path)
        except sqlite3.Error as exc:
            raise InputError(f"{self.path}: cannot write a revision: {exc}") from None
        try:
            conn.execute("BEGIN IMMEDIATE")
            (last,) = conn.execute("SELECT max(revision) FROM revisions").fetchone()
            revision = (last if last is not None else -1) + 1
            conn.execute(
                "INSERT INTO revisions (revision, created, note) VALUES (?, ?, ?)",
                (revision, now_iso(), note),
            )
            conn.executemany(INSERT_EVENT, [event_row(revision, e) for e in events])
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
