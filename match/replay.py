"""The replay: a recorded match scrubbed to any moment, shown as the live table view
showed it, and judged again with a declaration changed.

A :class:`Replay` offers the web app what a :class:`~tablesight.match.game.Game` does (the protocol
:class:`tablesight.webui.protocol.Refereed`: ``state()``, ``events_since()``, ``wait_for_change()``,
``neighbours()``, ``measure()``, ``jpeg()``, ``declare()``, ``decide()``, ...), for the
moment it was last :meth:`~Replay.seek`-ed to. Phase controls are refused: a replay's phases
are as recorded.

::

    replay = Replay(Path("match.db"))
    replay.seek(754.2)                        # the session as it stood then
    replay.state()                            # what the views draw, as live
    replay.declare("ganger", "charge", "brute", 2)   # re-judged: a new revision

The moment at ``t``: the frame shown is the last one at or before ``t``. For the live
record (revision 0) the session is restored from the last snapshot at or before that frame
(``Match.state_at``), then the inputs of the session's journal taken after the snapshot and
up to the frame are applied (a model first seen, or a declaration, between two snapshots).
A journal input without a time of its own is placed at the time it can be traced to:
``seen`` at the first frame in which that model's recorded track stood settled at that
pose, ``decide`` at its row of the ``decisions`` table, others (``set_side``,
``place_terrain``) just after the input before it. Two things a snapshot does not keep:
the allowance and route of each move (only the flagged moves are measured again, so the
views draw those), and inputs the players gave between the frame a snapshot was taken at
and the next frame (they show from the next snapshot on, at most a second later).

The picture at ``t`` is that frame's picture in the video beside the match file (Motion
JPEG: each picture is a JPEG of its own, served as it is stored), and the overlay's mapping
from table inches to its pixels is solved again from the anchors in that picture (cached
per picture). A match without video shows the map only.

Re-judging: :meth:`~Replay.declare` puts the declaration into the journal at the moment
shown (after every input up to that frame), takes the whole journal again on a new
session, and saves the events as a new revision of the match file (revision 0 and earlier
revisions stay as they were); the replay then shows that revision, the state at ``t``
rebuilt from the journal up to ``t`` (from the nearest of the checkpoints taken while it was
judged again, after every input that caused events). :meth:`~Replay.decide` does the same
with a decision on a flag. A match file keeps each revision's events, not its journal: a
replay opened again shows the live record (and lists the revisions).
"""

from __future__ import annotations

import bisect
import json
import logging
import math
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import cv2
import numpy as np

from tablesight.match.pagestate import Decided, Live, located, page_state, poses_message
from tablesight.match.reader import FrameRow, Match, untrusted
from tablesight.match.schema import TABLE_DECIDES
from tablesight.match.viewstate import StateCache, Worked
from tablesight.rules.errors import InputError
from tablesight.rules.referee import referee_for
from tablesight.rules.ruleset import Ruleset
from tablesight.rules.scene import Scene
from tablesight.rules.session import FLAG_KINDS, Event, Session
from tablesight.rules.verdict import MoveReport
from tablesight.rules.view import measure, neighbours
from tablesight.vision.observe import PoseHealth
from tablesight.vision.sight import sight

log = logging.getLogger("tablesight.replay")


#: What a phase control answers in a replay.
PHASE_REFUSED = "phase: a replay's phases are as recorded"
#: A re-judged revision keeps the session's state after every input that caused events
#: (a judged move, say: the costly ones) and at least every this many inputs, so that a
#: seek takes again only a few inputs, none of them judged.
CHECKPOINT_EVERY = 8
#: How far past the input before it (seconds of footage) a ``seen`` is looked for.
SEEN_WINDOW_S = 120.0
#: Pictures (JPEG bytes) kept in memory, newest used last.
PICTURE_CACHE = 32
#: Table-to-picture mappings kept in memory, by video frame.
MAPPING_CACHE = 1024

Journal = list[tuple[str, dict[str, Any]]]
#: A decision on a flag as the replay shows who made it: when (seconds of footage), the
#: flag's event id, who decided and their note.
Decision = tuple[float, int, str, str | None]
#: A picture's table-to-pixels mapping for views and the health of the pose it is from.
PicturePose = tuple[dict[str, Any] | None, dict[str, object] | None]


# -- the video ---------------------------------------------------------------------------------


def _is_jpeg(data: bytes) -> bool:
    """A whole JPEG file: its start marker and its own Huffman tables (some cameras' Motion
    JPEG leaves them out, and browsers cannot show such a picture)."""
    return data[:2] == b"\xff\xd8" and b"\xff\xc4" in data


#: The RIFF lists a recorded AVI's pictures sit in, at any depth: the file (and its OpenDML
#: extensions past 1 GB), the movie list and its record groups.
_AVI_LISTS = {(b"RIFF", b"AVI "), (b"RIFF", b"AVIX"), (b"LIST", b"movi"), (b"LIST", b"rec ")}


def avi_pictures(path: Path) -> list[tuple[int, int]] | None:
    """Where each picture of an AVI file is: (offset, length) of each video chunk
    (``NNdc``/``NNdb``), in order, found by walking the file's chunks from the start.

    This needs neither the index at the end of the file nor the sizes written into its
    headers when it is closed, so a file cut off (the program killed while recording) is
    read right up to its last whole picture. ``None`` if the file is not an AVI file.
    """
    pictures: list[tuple[int, int]] = []
    try:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(12)
            if head[:4] != b"RIFF" or head[8:12] != b"AVI ":
                return None
            pos = 0
            while pos + 8 <= size:
                f.seek(pos)
                head = f.read(12)
                fourcc, length = head[:4], int.from_bytes(head[4:8], "little")
                if (fourcc, head[8:12]) in _AVI_LISTS:
                    pos += 12  # go into it: its own size is not trusted (0 when cut off)
                    continue
                if pos + 8 + length > size:
                    break  # cut off in the middle of this chunk
                if len(fourcc) == 4 and fourcc[:2].isdigit() and fourcc[2:] in (b"dc", b"db"):
                    pictures.append((pos + 8, length))
                pos += 8 + length + (length & 1)
    except OSError:
        return None
    return pictures


class _Video:
    """The match's video: picture ``n`` as JPEG or decoded.

    A Motion JPEG AVI file (what ``run --record`` writes) is read by its own chunks (see
    :func:`avi_pictures`): picture ``n`` is the ``n``-th picture written, exactly, even in
    a file whose recording was killed before it was finished (no index at its end). Any
    other video goes through OpenCV's capture, seeking by frame number.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._jpegs: OrderedDict[int, bytes | None] = OrderedDict()
        self._capture: cv2.VideoCapture | None = None
        self._file: BinaryIO | None = None
        self._chunks = avi_pictures(path)
        if self._chunks:
            self._file = path.open("rb")
            #: Pictures in the file (one cut short may hold fewer than the frames table says).
            self.count = len(self._chunks)
            return
        capture = cv2.VideoCapture(str(path), cv2.CAP_FFMPEG)
        # FFmpeg hands over each stored picture as it is: a seek and a read cost no decoding.
        self._raw = capture.isOpened() and bool(capture.set(cv2.CAP_PROP_FORMAT, -1))
        if not self._raw:
            capture.release()
            capture = cv2.VideoCapture(str(path))
        if not capture.isOpened():
            capture.release()
            raise InputError(f"{path}: not a video OpenCV can read")
        self._capture = capture
        self.count = max(0, int(capture.get(cv2.CAP_PROP_FRAME_COUNT)))

    def close(self) -> None:
        with self._lock:
            if self._capture is not None:
                self._capture.release()
            if self._file is not None:
                self._file.close()

    def _read(self, n: int) -> bytes | None:
        if self.count and not 0 <= n < self.count:
            return None
        if self._chunks and self._file is not None:
            offset, length = self._chunks[n]
            self._file.seek(offset)
            return _as_jpeg(self._file.read(length))
        if self._capture is None:
            return None
        self._capture.set(cv2.CAP_PROP_POS_FRAMES, n)
        ok, data = self._capture.read()
        if not ok or data is None:
            return None
        if self._raw:
            return _as_jpeg(np.asarray(data, dtype=np.uint8).tobytes())
        ok, encoded = cv2.imencode(".jpg", data, [cv2.IMWRITE_JPEG_QUALITY, 90])
        return encoded.tobytes() if ok else None

    def jpeg(self, n: int) -> bytes | None:
        """Picture ``n`` (0 = the first) as JPEG, or ``None`` if the file has no such one."""
        with self._lock:
            if n in self._jpegs:
                self._jpegs.move_to_end(n)
                return self._jpegs[n]
            data = self._read(n)
            self._jpegs[n] = data
            while len(self._jpegs) > PICTURE_CACHE:
                self._jpegs.popitem(last=False)
            return data

    def image(self, n: int) -> np.ndarray | None:
        data = self.jpeg(n)
        if data is None:
            return None
        return cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)


def _as_jpeg(raw: bytes) -> bytes | None:
    """A stored picture as a JPEG a browser shows (one without its Huffman tables is
    decoded and encoded again)."""
    if _is_jpeg(raw):
        return raw
    image = cv2.imdecode(np.frombuffer(raw, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        return None
    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    return encoded.tobytes() if ok else None


def _tidy(path: Path) -> None:
    """Leave no ``-wal`` or ``-shm`` file beside a match file the replay had open: the last
    connection to close takes them away (a recorder still writing keeps them; a file that
    cannot be written, on read-only media, is left as it is)."""
    if not path.with_name(path.name + "-wal").exists():
        return
    try:
        conn = sqlite3.connect(path, timeout=0.5)
        try:
            conn.execute("PRAGMA schema_version").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        pass


# -- revisions -----------------------------------------------------------------------------------


@dataclass
class _Revision:
    """A re-judged list of events, with the journal that made it and checkpoints in it."""

    number: int
    note: str
    inputs: Journal
    times: list[float]
    events: list[Event]
    #: (inputs taken, the session's snapshot then as JSON, its move reports then), in
    #: order; the first is (0, None, {}).
    checkpoints: list[tuple[int, str | None, dict[str, MoveReport]]]
    #: Who made each decision on a flag, in the order taken (the live record's, and those
    #: made in the replay).
    decisions: list[Decision]


def _describe_input(kind: str, args: dict[str, Any]) -> str:
    if kind == "declare":
        what = args.get("action") or "its declared action"
        target = f" on {args['target']}" if args.get("target") else ""
        roll = f", roll {args['roll']}" if args.get("roll") is not None else ""
        return f"{args['model_id']} declared {what}{target}{roll}"
    return f"flag {args['event_id']} {args['decision']}ed"


class Replay:
    """A recorded match, shown at one moment at a time; see the module's docstring.

    Opening a file that is missing, not a match, or has no frames is one
    :class:`InputError` line. The file is read only, but for :meth:`declare` and
    :meth:`decide`, which add a revision to it.
    """

    def __init__(self, match_path: Path) -> None:
        self.match = Match(Path(match_path))
        self.video: _Video | None = None
        self._closing = threading.Event()
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    def table(self) -> tuple[Scene, Ruleset]:
        """The table at the moment shown, and its game's rules: the session's scene, read
        under the replay's lock (a seek meanwhile waits that long)."""
        with self.lock:
            return self.session.scene(), self.session.ruleset

    def _open(self) -> None:
        match = self.match
        self.path = match.path
        frames = match.frames()
        if not frames:
            raise InputError(f"{self.path}: no frames recorded; nothing to replay")
        self.setup = match.setup()
        meta = match.meta
        #: Each frame's time (seconds), number in its source, and number in the video.
        self.times: list[float] = [f.t for f in frames]
        self._frames = frames
        self.start_t, self.end_t = self.times[0], self.times[-1]
        self.duration_s = self.end_t - self.start_t
        self.fps = float(meta.get("fps") or 30.0)  # checked when the match was opened
        self.lock = threading.RLock()
        #: Notified on every change; ``version`` counts them, ``generation`` counts the
        #: revisions shown (a new one has a new list of events).
        self.changed = threading.Condition(self.lock)
        self.version = 0
        self.generation = 0
        self.status = "replay"
        self.session: Session = self.setup.session()
        #: The frame shown.
        self.frame: FrameRow | None = None
        #: The time sought (the frame shown is the one nearest it).
        self.t = self.start_t
        #: The revision of the events shown: 0 is the live record.
        self.revision = 0
        self._live_inputs: Journal = match.inputs()
        with untrusted(self.path, "inputs"):
            self._live_times = self._input_times(self._live_inputs)
        # the live record's events at full precision (``Match.events`` rounds them)
        self._live_events = match.state_at(math.inf).events
        self._rejudged: _Revision | None = None
        self._live_decisions = [_decision(d) for d in match.decisions()]
        #: The models located in the frame shown, as the live game's poses message.
        self._located: dict[str, Any] | None = None
        self._state = StateCache(self.lock)
        self._mappings: OrderedDict[int, PicturePose] = OrderedDict()
        path = match.video
        if path is not None:
            try:
                self.video = _Video(path)
            except InputError as exc:
                log.warning("%s; the replay shows the map only", exc)
        #: Where the replay opens: the first moment a model is seen on the table (before
        #: it, the footage shows nothing to judge), or the footage's start.
        seen_t = match.first_seen_t()
        self.opening_t = self.start_t if seen_t is None else seen_t
        self.seek(self.opening_t)

    @property
    def closing(self) -> bool:
        """True once the replay is stopping: open streams finish."""
        return self._closing.is_set()

    def stop(self) -> None:
        """Let open streams finish (before the server stops and :meth:`close`)."""
        self._closing.set()
        with self.changed:
            self.changed.notify_all()

    def close(self) -> None:
        if hasattr(self, "changed"):
            self.stop()
        if self.video is not None:
            self.video.close()
        self.match.close()
        _tidy(self.match.path)

    def __enter__(self) -> Replay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the journal's times --------------------------------------------------------------

    def _input_times(self, inputs: Journal) -> list[float]:
        """When each input was taken (seconds of footage), never decreasing."""
        decided = iter([float(d["t"]) for d in self.match.decisions()])  # type: ignore[arg-type]
        stamped = [float(args["t"]) if "t" in args else None for _, args in inputs]
        after: list[float] = [self.end_t] * len(inputs)
        upcoming = self.end_t
        for k in range(len(inputs) - 1, -1, -1):
            after[k] = upcoming
            if stamped[k] is not None:
                upcoming = stamped[k]  # type: ignore[assignment]
        out: list[float] = []
        last = self.start_t
        for k, (kind, args) in enumerate(inputs):
            t = stamped[k]
            if t is None and kind == "decide":
                t = next(decided, last)
            elif t is None and kind == "seen":
                t = self._seen_at(args, last, min(after[k], last + SEEN_WINDOW_S))
            last = max(last, t if t is not None else last)
            out.append(last)
        return out

    def _seen_at(self, args: dict[str, Any], start: float, end: float) -> float:
        """The first frame from ``start`` to ``end`` in which the model's track stood
        settled where the ``seen`` input put it (the pipeline reports it then)."""
        x, y = float(args["pose"][0]), float(args["pose"][1])
        model = str(args["model_id"])
        for point in self.match.tracks(model, start, end).get(model, []):
            here = math.isclose(point.x_in, x, abs_tol=1e-9) and math.isclose(
                point.y_in, y, abs_tol=1e-9
            )
            if point.state == "settled" and here:
                return float(point.t)
        return start

    # -- seeking ------------------------------------------------------------------------------

    def parse_t(self, value: object) -> float:
        """Seconds of this match from a JSON number or a query string's text; anything else,
        or a time outside the footage, is an :class:`InputError` naming ``t``."""
        t: float | None = None
        if isinstance(value, int | float) and not isinstance(value, bool):
            t = float(value)
        elif isinstance(value, str):
            try:
                t = float(value)
            except ValueError:
                t = None
        # a time written rounded (to hundredths, say) may lie just past either end
        slack = 0.5 / self.fps
        if t is None or not math.isfinite(t) or not self.start_t - slack <= t <= self.end_t + slack:
            raise InputError(
                f"t: expected seconds from {self.start_t:.3f} to {self.end_t:.3f}, got {value!r}"
            )
        return min(max(t, self.start_t), self.end_t)

    def _frame_at(self, t: float) -> int:
        """The frame nearest ``t`` (the earlier of two as near): a time written to share a
        moment (``?time=5.6``) opens the frame it was written from, whatever the rounding
        of the frames' times (5.6000000000000005 s)."""
        k = bisect.bisect_left(self.times, t)
        if k == len(self.times) or (k > 0 and t - self.times[k - 1] <= self.times[k] - t):
            return max(0, k - 1)
        return k

    def seek(self, t: float) -> dict[str, Any]:
        """Show the match as it stood at ``t`` seconds; returns :meth:`position`."""
        t = self.parse_t(t)
        with self.lock:
            k = self._frame_at(t)
            frame = self._frames[k]
            moment = self.match.state_at(frame.t)
            if self._rejudged is None:
                session = self._live_session(moment.snapshot_t, moment.state, moment.events, frame)
                _fill_reports(session)
            else:
                session = self._rejudged_session(self._rejudged, frame.t)
            self.session = session
            self.frame = frame
            self.t = t
            self._located = poses_message(
                self.generation,
                frame.index,
                frame.t,
                None,
                (
                    located(m, p.x_in, p.y_in, p.heading_deg, p.z_in, p.state)
                    for m, p in moment.poses.items()
                ),
            )
            self._touch()
            return self.position()

    def _live_session(
        self,
        snapshot_t: float | None,
        state: dict[str, Any] | None,
        events: list[Event],
        frame: FrameRow,
    ) -> Session:
        session = self.setup.session()
        first = 0
        if state is not None and snapshot_t is not None:
            with untrusted(self.path, f"snapshots: the one at {snapshot_t:.3f} s"):
                session.restore(state, events)
            first = bisect.bisect_right(self._live_times, snapshot_t)
        last = bisect.bisect_right(self._live_times, frame.t)
        if last > first:
            with untrusted(self.path, f"inputs: those up to {frame.t:.3f} s"):
                session.replay(self._live_inputs[first:last])
        return session

    def _rejudged_session(self, rev: _Revision, t: float) -> Session:
        last = bisect.bisect_right(rev.times, t)
        k = bisect.bisect_right([n for n, _, _ in rev.checkpoints], last) - 1
        taken, state, reports = rev.checkpoints[k]
        session = self.setup.session()
        if state is not None:
            session.restore(json.loads(state), rev.events)
            session.reports = dict(reports)
        session.replay(rev.inputs[taken:last])
        return session

    def _touch(self) -> None:
        with self.changed:
            self.version += 1
            self.changed.notify_all()

    def position(self) -> dict[str, Any]:
        """Where the replay stands: the time sought, the frame shown, the frames before and
        after it (to step by one), and the revision shown."""
        with self.lock:
            k = self._frame_at(self.t)
            frame = self._frames[k]
            return {
                "t": self.t,
                "frame": {"t": frame.t, "index": frame.index, "video_frame": frame.video_frame},
                "prev_t": self.times[k - 1] if k > 0 else None,
                "next_t": self.times[k + 1] if k + 1 < len(self.times) else None,
                "revision": self.revision,
            }

    # -- what views show ----------------------------------------------------------------------

    @property
    def events(self) -> list[Event]:
        """Every event of the revision shown, whatever the moment."""
        with self.lock:
            return list(self._rejudged.events if self._rejudged else self._live_events)

    def events_since(self, first_id: int) -> list[Event]:
        """The events of the revision shown up to the moment shown, from ``first_id`` on."""
        with self.lock:
            return self.session.events[first_id:]

    def wait_for_change(self, version: int, timeout: float) -> int:
        """Wait until the replay's ``version`` is no longer ``version`` (a seek, a new
        revision) or it is closing, at most ``timeout`` seconds; returns the version then."""
        with self.changed:
            self.changed.wait_for(lambda: self.version != version or self.closing, timeout)
            return self.version

    def neighbours(self, model_id: str) -> dict[str, Any]:
        """A model and those near it at the moment shown (as :meth:`Game.neighbours`)."""
        with self.lock:
            return neighbours(self.session, model_id)

    def measure(
        self, a: str, b: str | None = None, point: tuple[float, float] | None = None
    ) -> dict[str, Any]:
        """Edge to edge at the moment shown (as :meth:`Game.measure`)."""
        with self.lock:
            return measure(self.session, a, b, point)

    def state(self) -> dict[str, Any]:
        """The table at the moment shown, as :meth:`Game.state` gives it live (``live`` has
        the moment's time and frame), plus ``replay``: :meth:`position`."""
        return self._state.get(self._key, self._take_state).state

    def newest_state(self, generation: int, version: int) -> Worked | None:
        """Without waiting, as :meth:`Game.newest_state`."""
        return self._state.ask((generation, version), self._key, self._take_state)

    def _key(self) -> tuple[int, int]:
        return self.generation, self.version

    def _take_state(self) -> Callable[[], dict[str, Any]]:
        """(Under the lock) the state worked out: a moment's table is small enough."""
        frame = self.frame
        camera, health = self._picture_pose()
        live = Live(
            self.status,
            self.generation,
            self.version,
            frame.t if frame else None,
            frame.index if frame else None,
            len(self.session.events),
            health,
        )
        state = page_state(
            self.session,
            live=live,
            decided=self._decided_at(frame.t if frame else self.t),
            poses=self._located,
            camera=camera,
            replay=self.position(),
        )
        return lambda: state

    def _decided_at(self, t: float) -> Decided:
        """Who made each flag's decision taken by ``t`` (the latest on each flag)."""
        decisions = self._rejudged.decisions if self._rejudged else self._live_decisions
        return {event_id: (by, note) for at, event_id, by, note in decisions if at <= t}

    def info(self) -> dict[str, Any]:
        """The whole match for the replay page: its footage, revisions, roster, and every
        event of the revision shown (each with its model's side and unit, and ``flag``
        when players may accept or dismiss it)."""
        with self.lock:
            models = self.session.models
            events = []
            for e in self.events:
                d = e.to_dict()
                d["t"] = e.t  # to the frame: seeking to it shows this event's frame
                profile = models.get(e.model or "")
                d["side"] = profile.side if profile else None
                d["unit"] = profile.unit if profile else None
                d["flag"] = e.kind in FLAG_KINDS
                events.append(d)
            return {
                "match": self.path.name,
                "game": {"name": self.setup.ruleset.name, "title": self.setup.ruleset.title},
                "start_t": self.start_t,
                "end_t": self.end_t,
                "duration_s": self.duration_s,
                "fps": self.fps,
                "frames": len(self.times),
                "video": self.video is not None,
                "position": self.position(),
                "revision": self.revision,
                "revisions": self.match.revisions(),
                "roster": [{"id": m.id, "side": m.side, "unit": m.unit} for m in models.values()],
                "actions": sorted(self.setup.ruleset.actions),
                "events": events,
            }

    def picture(self, t: float) -> bytes | None:
        """The picture of the frame at ``t`` as JPEG; ``None`` without one."""
        frame = self._frames[self._frame_at(self.parse_t(t))]
        if self.video is None or frame.video_frame is None:
            return None
        return self.video.jpeg(frame.video_frame)

    def jpeg(self, quality: int = 80) -> tuple[int, bytes] | None:
        """The picture shown, with its frame number (``quality`` is the stored one's)."""
        frame = self.frame
        if frame is None or self.video is None or frame.video_frame is None:
            return None
        data = self.video.jpeg(frame.video_frame)
        return None if data is None else (frame.index, data)

    def mapping(self) -> dict[str, Any] | None:
        """How table inches (z = 0) map to the shown picture's pixels, solved from the
        anchors in that picture (as :meth:`Game.mapping` gives it); ``None`` without a
        picture or when too few anchors show in it."""
        return self._picture_pose()[0]

    def _picture_pose(self) -> PicturePose:
        """The shown picture's :meth:`mapping` and the health of the pose it is from (as
        the live game's ``live.pose``); ``(None, None)`` without a picture or a pose."""
        frame = self.frame
        if frame is None or self.video is None or frame.video_frame is None:
            return None, None
        n = frame.video_frame
        with self.lock:
            if n in self._mappings:
                self._mappings.move_to_end(n)
                return self._mappings[n]
        image = self.video.image(n)
        out: PicturePose = (None, None) if image is None else self._solve(image)
        with self.lock:
            self._mappings[n] = out
            while len(self._mappings) > MAPPING_CACHE:
                self._mappings.popitem(last=False)
        return out

    def _solve(self, image: np.ndarray) -> PicturePose:
        h, w = image.shape[:2]
        camera = self.setup.camera
        if camera is not None:  # the video may be scaled from the camera's pictures
            camera = camera.scaled_to(w, h)
        pose = sight(image, self.setup.table, camera).pose
        if pose is None:
            return None, None
        return pose.for_views((w, h)), PoseHealth.of(pose).to_dict()

    # -- controls -----------------------------------------------------------------------------

    def start_phase(self, turn: int | None = None, side: str | None = None) -> list[Event]:
        raise InputError(PHASE_REFUSED)

    def end_phase(self) -> list[Event]:
        raise InputError(PHASE_REFUSED)

    def next_turn(self) -> list[Event]:
        raise InputError(PHASE_REFUSED)

    def set_side(self, side: str) -> list[Event]:
        raise InputError(PHASE_REFUSED)

    def next_side(self) -> str:
        raise InputError(PHASE_REFUSED)

    def declare(
        self,
        model: str,
        action: str | None = None,
        target: str | None = None,
        roll: int | None = None,
    ) -> list[Event]:
        """Judge the match again with this declaration made at the moment shown; saves and
        shows the new revision. Returns the events the declaration itself caused."""
        with self.lock:
            self.session.check_declaration(model, action, target, roll)
            frame = self.frame
            assert frame is not None
            args = {
                "t": frame.t,
                "frame": frame.index,
                "model_id": model,
                "action": action,
                "target": target,
                "roll": roll,
            }
            return self._rejudge("declare", args)

    def decide(
        self, event_id: int, decision: str, by: str = TABLE_DECIDES, note: str | None = None
    ) -> None:
        """Accept or dismiss a flag at the moment shown; saved as a new revision (its
        events are the same; its note says what was decided). The state shows ``by`` and
        ``note`` on the flag (as :meth:`Game.decide`); the match file keeps each revision's
        events only, not who decided in it."""
        with self.lock:
            probe = self.setup.session()
            probe.restore(self.session.snapshot(), self.session.events)
            try:
                probe.decide(event_id, decision)
            except ValueError as exc:
                raise InputError(str(exc)) from None
            args = {"event_id": event_id, "decision": decision}
            self._rejudge("decide", args, (by, note))

    def _rejudge(
        self, kind: str, args: dict[str, Any], decided: tuple[str, str | None] | None = None
    ) -> list[Event]:
        """Insert one input into the journal at the frame shown, take the whole journal
        again, save the events as a revision and show it; ``decided``: who made a decision
        and their note."""
        frame = self.frame
        assert frame is not None
        base = self._rejudged
        decisions = list(base.decisions if base else self._live_decisions)
        if decided is not None:
            after = bisect.bisect_right([d[0] for d in decisions], frame.t)
            decisions.insert(after, (frame.t, int(args["event_id"]), *decided))
        inputs = base.inputs if base else self._live_inputs
        times = base.times if base else self._live_times
        at = bisect.bisect_right(times, frame.t)
        journal = [*inputs[:at], (kind, args), *inputs[at:]]
        stamps = [*times[:at], frame.t, *times[at:]]
        session = self.setup.session()
        checkpoints: list[tuple[int, str | None, dict[str, MoveReport]]] = [(0, None, {})]
        caused: list[Event] = []
        for k, entry in enumerate(journal):
            try:
                out = session.replay([entry])
            except ValueError as exc:
                raise InputError(f"{kind}: {exc}") from None
            except (KeyError, TypeError, IndexError, AttributeError) as exc:
                raise InputError(f"{self.path}: inputs: not valid ({exc!r})") from None
            if k == at:
                caused = out
            if out or (k + 1) % CHECKPOINT_EVERY == 0:
                state = json.dumps(session.snapshot())
                checkpoints.append((k + 1, state, dict(session.reports)))
        note = (
            f"{_describe_input(kind, args)} at {frame.t:.2f} s (frame {frame.index}); "
            f"judged again from revision {base.number if base else 0}"
        )
        number = self.match.save_revision(session.events, note)
        self._rejudged = _Revision(
            number, note, journal, stamps, session.events, checkpoints, decisions
        )
        self.revision = number
        self.generation += 1
        self.seek(self.t)
        return caused


def _decision(row: dict[str, object]) -> Decision:
    """A row of :meth:`Match.decisions` (its types checked when the file was opened)."""
    t, event_id, by, note = row["t"], row["event_id"], row["by"], row["note"]
    assert isinstance(t, int | float) and isinstance(event_id, int) and isinstance(by, str)
    return float(t), event_id, by, None if note is None else str(note)


def _fill_reports(session: Session) -> None:
    """Measure again the moves flagged at this moment whose report a session restored from
    a snapshot lacks (a snapshot keeps the findings, not the allowances and routes views
    draw). Only the flagged ones: measuring every move of a long phase again would cost
    more than the seek itself."""
    if not session.in_phase:
        return
    open_now = [*session.open_findings.values(), *session.unit_findings.values()]
    flagged = {f.model for findings in open_now for f in findings}
    moved = [
        m
        for m, now in session.poses.items()
        if m in flagged and m not in session.reports and session.phase_start.get(m, now) != now
    ]
    if not moved:
        return
    referee = referee_for(session.scene(), session.ruleset)
    for m in moved:
        verdict = referee.judge_model(m)
        if m in verdict.moves:
            session.reports[m] = verdict.moves[m]
