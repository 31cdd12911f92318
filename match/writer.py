"""Writing a match file while the game is refereed: :class:`MatchWriter`.

Writing never waits on the disk: the public methods put work on a queue, and one writer
thread owns the database connection and the video file. It commits at least every
``COMMIT_S`` seconds, so a killed program loses at most the last second. The queue is
unbounded: nothing handed over is dropped; a long backlog is logged and noted in ``meta``.

The video is Motion JPEG in an AVI file (``match.db`` -> ``match.avi``). An MP4 file keeps
its index at the end and cannot be read at all when the program is killed before closing
it; an AVI file stays readable from the start up to the frames last flushed to disk.

A camera's frame goes into the video as the JPEG the camera sent (:attr:`Frame.jpeg`),
byte for byte: neither decoded nor encoded again. A frame without one (a rendered picture,
a frame of an H.264 file) is encoded to JPEG on the writer thread and written the same way.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import shutil
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import cv2
import numpy as np

from tablesight.match.schema import (
    BACKLOG_WARN,
    COMMIT_S,
    FORMAT,
    INSERT_DECISION,
    INSERT_DECLARATION,
    INSERT_EVENT,
    INSERT_FRAME,
    INSERT_INPUT,
    INSERT_POSE,
    INSERT_PUBLISHED,
    INSERT_SNAPSHOT,
    MIN_FREE_BYTES,
    SCHEMA_VERSION,
    SET_META,
    SNAPSHOT_EVERY_S,
    SPACE_CHECK_S,
    STATES,
    TABLE_DECIDES,
    VIDEO_FOURCC,
    VIDEO_SUFFIX,
    PoseTuple,
    RecordError,
    check_writable,
    connect,
    event_row,
    inspect_file,
    installed_version,
    migrate,
    now_iso,
    reason,
    refuse_future,
    setup_meta,
)
from tablesight.rules.errors import InputError
from tablesight.rules.observation import Observed
from tablesight.rules.session import DECISIONS, Event
from tablesight.vision.sources import Frame

log = logging.getLogger("tablesight.record")

if TYPE_CHECKING:
    from tablesight.calibration.setup import Setup


_STOP = object()

#: OpenCV's flag (4.9 on) for a writer that takes pictures encoded already, one per
#: ``write``; without it the video is encoded by the writer from decoded pictures.
_RAW_VIDEO: int | None = getattr(cv2, "VIDEOWRITER_PROP_RAW_VIDEO", None)
#: The JPEG quality of a picture that came without its own JPEG.
JPEG_QUALITY = 90


class _Picture(NamedTuple):
    """A frame's picture as handed to the writer thread: the camera's JPEG or the decoded
    picture (one of the two), and its size (width, height)."""

    jpeg: np.ndarray | None
    image: np.ndarray | None
    size: tuple[int, int]


class MatchWriter:
    """Records one game's session into ``path`` (and its video beside it).

    At start it checks that the folder exists and can be written, that it has
    ``min_free_bytes`` free, and that ``path`` is new, an empty file or a match file; any
    problem is one :class:`InputError` line naming the path. An existing match file is
    replaced (with its video) when ``replace`` is true and refused otherwise; any other
    existing file, at ``path`` or where the video would go, is refused, never overwritten.
    While recording, the video stops if less than ``min_free_bytes`` is left (poses and
    events go on; ``meta.video_error`` says so). If the file cannot be written at all (the
    disk is full, the folder was deleted or the file moved), the writer thread rolls back
    the uncommitted second and stops: what was committed stays a valid match file (without
    ``meta.closed``), :attr:`error` says why in one line, and the calls that follow raise
    :class:`RecordError`; :class:`~tablesight.match.game.Game` then stops recording and referees on.

    ``fps`` is the nominal frame rate written in the video's header (the ``frames`` table
    has each frame's true time). Pictures are scaled to ``video_size`` (width, height;
    by default the first picture's size). A camera's JPEG of that size is written as it
    came, for a fraction of a millisecond, and takes what the camera made of it (a 1080p
    webcam's at quality 90, some 190 kB: 20 GB an hour at 30 fps). Any other picture is
    scaled and encoded at ``JPEG_QUALITY``: a rendered 1080p table picture costs the writer
    thread about 5 ms and 90 kB (some 10 GB an hour at 30 fps); a 720p one, 60 kB.

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
        #: The file's identity: a file deleted or moved away ends the record.
        self._identity = _identity(self.path)
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
        #: The video takes JPEG pictures as they are (else decoded pictures, encoded by it).
        self._raw = False
        self._video_size = video_size
        self._thread = threading.Thread(target=self._run, name=f"record {self.path.name}")
        self._thread.start()

    # -- start ----------------------------------------------------------------------------

    def _prepare(self, replace: bool) -> None:
        check_writable(self.path, self.min_free_bytes)
        existing = inspect_file(self.path, writing=True)
        if existing.match:
            refuse_future(self.path, existing.version)
            if not replace:
                when = f" (recorded {existing.created})" if existing.created else ""
                raise InputError(f"{self.path}: already holds a match{when}; choose another name")
        # Only the video this match would have (its own name, beside it) goes with it: a
        # name stored in the file is never trusted to say which file to delete.
        own_video = self.path.with_suffix(VIDEO_SUFFIX)
        old_video = own_video if existing.video == own_video.name else None
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
            raise InputError(f"{self.path}: cannot replace it: {reason(exc)}") from None

    def _create(self, setup: Setup, app_version: str | None, source: str | None) -> None:
        meta = {
            "format": FORMAT,
            "schema": SCHEMA_VERSION,
            "app_version": app_version or installed_version(),
            "created": now_iso(),
            **setup_meta(setup),
            "fps": self.fps,
            "video": self.video_path.name if self.video_path is not None else None,
            "video_fourcc": VIDEO_FOURCC if self.video_path is not None else None,
            "source": source,
        }
        try:
            conn = connect(self.path)
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                migrate(conn, self.path)
                conn.execute("BEGIN")
                conn.executemany(SET_META, [(k, json.dumps(v)) for k, v in meta.items()])
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

    def record(
        self,
        frame: Frame,
        observation: Observed,
        events: Sequence[Event] = (),
        snapshot: Mapping[str, Any] | None = None,
    ) -> None:
        """One refereed frame, told once: its picture, every model's pose as the observation
        has it, the events the frame caused, and the session's snapshot when the caller
        took one (see :meth:`snapshot_due`)."""
        self.frame(
            frame,
            {
                m.id: (m.pose.x, m.pose.y, m.pose.heading, m.sigma_in, m.track, m.pose.z)
                for m in observation.models
            },
        )
        for e in events:
            self.event(e)
        if snapshot is not None:
            self.snapshot(frame.t, frame.index, snapshot)

    def frame(
        self, frame: Frame, poses: Mapping[str, PoseTuple], *, write_image: bool = True
    ) -> None:
        """One processed frame: its time and number, and each model's pose in it.

        ``poses`` maps a model id to ``(x_in, y_in, heading_deg, sigma_in, state, z_in)``,
        state one of ``STATES`` (``z_in`` left out: 0.0, on the table). The frame's picture
        goes into the video unless ``write_image`` is false or the writer has no video;
        such a frame has no ``video_frame``. The picture is kept by reference until it is
        written: do not draw on it afterwards. A frame with its camera's JPEG is never
        decoded here: the JPEG is what is written.
        """
        rows = []
        for model, pose in poses.items():
            x, y, heading, sigma, state = pose[:5]
            z = pose[5] if len(pose) > 5 else 0.0
            if state not in STATES:
                raise ValueError(f"pose of {model}: state must be one of {STATES}, got {state!r}")
            rows.append((model, float(x), float(y), float(heading), float(sigma), state, float(z)))
        picture = None
        if write_image and self.video_path is not None:
            # frame.image would decode a camera's frame in colour: its JPEG is taken instead
            jpeg = frame.jpeg
            picture = _Picture(jpeg, frame.image if jpeg is None else None, frame.size)
        with self._handing:
            self._put(("frame", self._frames, float(frame.t), int(frame.index), picture, rows))
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
            self._put(("event", event_row(0, e)))
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
        """One input of the session's journal (from ``Session.take_journal``), in order."""
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

    def decision(
        self,
        t: float,
        event_id: int,
        decision: str,
        by: str = TABLE_DECIDES,
        note: str | None = None,
    ) -> None:
        """A decision on a flag: ``accept`` or ``dismiss``, by whom (``table``: the
        players, on the table's page or keys; ``hub:<judge>``: a tournament judge) and with
        what note."""
        if decision not in DECISIONS:
            raise ValueError(f"decision: expected one of {', '.join(DECISIONS)}, got {decision!r}")
        if not isinstance(by, str) or not by:
            raise ValueError(f"by: expected who decided, got {by!r}")
        if note is not None and not isinstance(note, str):
            raise ValueError(f"note: expected text or None, got {note!r}")
        self._put(("decision", (float(t), int(event_id), decision, by, note)))

    def publishing(self, broker: str, table: str, game_id: str) -> None:
        """The game is published to a broker (``--broker``) as ``table``, its game
        ``game_id``: ``meta.broker``; the events it acknowledges go to ``published``."""
        value = {"url": broker, "table": table, "game_id": game_id}
        self._put(("meta", ("broker", json.dumps(value))))

    def published(self, event_id: int, emitted: float, acked: float) -> None:
        """The broker acknowledged event ``event_id`` (a PUBACK): emitted by the game at
        ``emitted``, acknowledged at ``acked`` (both Unix seconds). Once per event; a
        repeat is ignored."""
        if event_id < 0:
            raise ValueError(f"published: not an event's id: {event_id}")
        self._put(("published", (int(event_id), float(emitted), float(acked))))

    @property
    def backlog(self) -> int:
        """Items handed over and not yet written."""
        return self._queue.qsize()

    @property
    def error(self) -> BaseException | None:
        """Why the writer thread stopped, if it did."""
        return self._error

    @property
    def failure(self) -> str | None:
        """Why the writer thread stopped, as one line (``None`` while it is well)."""
        exc = self._error
        if exc is None:
            return None
        if isinstance(exc, RecordError):
            return str(exc)
        if isinstance(exc, OSError):
            return f"{self.path}: {reason(exc)}"
        return f"{self.path}: {exc}"

    def _put(self, item: object) -> None:
        """Hand an item to the writer thread, in order."""
        with self._handing:
            if self._error is not None:
                raise RecordError(f"recording stopped: {self.failure}")
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
            raise RecordError(f"recording stopped: {self.failure}")

    def __enter__(self) -> MatchWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the writer thread -----------------------------------------------------------------

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        try:
            conn = connect(self.path)
            conn.execute("PRAGMA synchronous = NORMAL")
            self._loop(conn)
        except BaseException as exc:  # kept for the caller: the record stopped
            self._error = exc
            # The caller reports it (the Game: once, as an event); logged for the record.
            log.info("%s: recording stopped: %s", self.path, exc)
        finally:
            if self._video is not None:
                with contextlib.suppress(cv2.error):
                    self._video.release()
                self._video = None
            if conn is not None:
                try:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")  # the committed record stays as it was
                except sqlite3.Error:
                    pass
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
                self._check_file()
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
            _, frame_id, t, index, picture, rows = item
            video_frame = self._write_picture(conn, picture) if picture is not None else None
            conn.execute(INSERT_FRAME, (frame_id, t, index, video_frame))
            conn.executemany(INSERT_POSE, [(frame_id, *row) for row in rows])
        elif kind == "event":
            conn.execute(INSERT_EVENT, item[1])
        elif kind == "snapshot":
            conn.execute(INSERT_SNAPSHOT, item[1])
        elif kind == "declaration":
            conn.execute(INSERT_DECLARATION, item[1])
        elif kind == "input":
            conn.execute(INSERT_INPUT, item[1])
        elif kind == "decision":
            conn.execute(INSERT_DECISION, item[1])
        elif kind == "published":
            conn.execute(INSERT_PUBLISHED, item[1])
        elif kind == "meta":
            conn.execute(SET_META, item[1])

    def _write_picture(self, conn: sqlite3.Connection, picture: _Picture) -> int | None:
        if not self._video_opened:
            self._video_opened = True
            self._video_size = self._video_size or picture.size
            self._video = self._open_video(self._video_size)
            if self._video is None:
                message = f"OpenCV cannot write {VIDEO_FOURCC} video to {self.video_path}"
                log.error("%s: %s; recording without video", self.path, message)
                conn.execute(SET_META, ("video", "null"))
                conn.execute(SET_META, ("video_error", json.dumps(message)))
        if self._video is None or self._video_size is None:
            return None
        if self._raw:
            if picture.jpeg is not None and picture.size == self._video_size:
                packet = picture.jpeg  # as the camera encoded it
            else:
                image = self._image(picture)
                if image is None:
                    return None
                ok, packet = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
                if not ok:
                    return None
            self._video.write(np.ascontiguousarray(packet, dtype=np.uint8).reshape(1, -1))
        else:
            image = self._image(picture)
            if image is None:
                return None
            self._video.write(image)
        self.video_frames += 1
        return self.video_frames - 1

    def _image(self, picture: _Picture) -> np.ndarray | None:
        """The picture decoded, in colour, at the video's size; ``None`` for a JPEG that
        does not decode (it is left out of the video)."""
        image = picture.image
        if image is None and picture.jpeg is not None:
            image = cv2.imdecode(picture.jpeg.reshape(-1), cv2.IMREAD_COLOR)
            if image is None:
                log.warning("%s: a frame's JPEG does not decode; left out of the video", self.path)
                return None
        assert image is not None and self._video_size is not None
        if image.ndim == 2:
            image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        elif image.shape[2] == 4:
            image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
        if (image.shape[1], image.shape[0]) != self._video_size:
            image = cv2.resize(image, self._video_size, interpolation=cv2.INTER_AREA)
        return np.ascontiguousarray(image, dtype=np.uint8)

    def _open_video(self, size: tuple[int, int]) -> cv2.VideoWriter | None:
        """A writer that takes JPEG pictures as they are (FFmpeg's); failing that (an
        OpenCV before 4.9), one that encodes decoded pictures itself."""
        fourcc = cv2.VideoWriter.fourcc(*VIDEO_FOURCC)
        if _RAW_VIDEO is not None:
            params = [_RAW_VIDEO, 1]
            writer = cv2.VideoWriter(
                str(self.video_path), cv2.CAP_FFMPEG, fourcc, self.fps, size, params
            )
            if writer.isOpened():
                self._raw = True
                return writer
            writer.release()
        self._raw = False
        for api in (cv2.CAP_FFMPEG, cv2.CAP_ANY):
            writer = cv2.VideoWriter(str(self.video_path), api, fourcc, self.fps, size)
            if writer.isOpened():
                log.info("%s: this OpenCV writes the video by encoding every picture", self.path)
                return writer
            writer.release()
        return None

    def _check_file(self) -> None:
        """The file is still where it was: writing on into a deleted (or moved) file would
        fill the disk with a record nobody can open."""
        if _identity(self.path) != self._identity:
            raise RecordError(
                f"{self.path}: the match file was deleted or moved while it was recorded"
            )

    def _check_space(self, conn: sqlite3.Connection) -> None:
        """On a disk nearly full, stop the video, so that poses and events go on."""
        self._check_file()
        try:
            free = shutil.disk_usage(self.path.parent).free
        except OSError as exc:
            raise RecordError(f"{self.path.parent}: {reason(exc)}") from None
        if free >= self.min_free_bytes or self._video is None:
            return
        self._video.release()
        self._video = None
        message = (
            f"stopped after {self.video_frames} pictures: {free / 1e6:.0f} MB free on the disk"
        )
        log.warning("%s: video %s; poses and events are still recorded", self.path, message)
        conn.execute(SET_META, ("video_error", json.dumps(message)))

    def _finish(self, conn: sqlite3.Connection) -> None:
        self._closed = True  # also when the program ended without close()
        self._check_file()
        if self._video is not None:
            self._video.release()
            self._video = None
        conn.executemany(
            SET_META,
            [
                ("closed", json.dumps(now_iso())),
                ("frames", json.dumps(self._frames)),
                ("video_frames", json.dumps(self.video_frames)),
                ("max_backlog", json.dumps(self.max_backlog)),
            ],
        )
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _identity(path: Path) -> tuple[int, int] | None:
    """The file's device and inode, ``None`` if it is gone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)
