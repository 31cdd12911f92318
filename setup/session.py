"""A table set-up in progress, as the set-up page drives it (``tablesight setup``).

:class:`TableSetup` holds one source and plays it on a thread of its own, keeping the
newest picture and the markers found in it: a video file at its own frame rate, as a
camera would deliver it, holding its last picture when it ends (so a recorded clip can be
set up from); a camera or stream live. Over it, the steps of :mod:`tablesight.setup.steps`:

1. the camera: while calibration is on, the newest picture is offered as a board view at
   most ``OFFER_HZ`` times a second, on a thread of its own, and the camera recalibrated
   after each view kept once there are three; or a saved ``camera.toml`` is loaded;
2. the table: its size, dictionary and the corners clicked give the anchors
   (:func:`~tablesight.setup.steps.propose_anchors` on the newest picture), and the table
   pose's health is solved again on every new picture;
3. the game, and the models and terrain pieces (:func:`~tablesight.setup.steps.assign`);
4. the files (:func:`~tablesight.setup.files.write_files`), and ``tablesight run`` started on
   them, on the next port, once the source is let go of (a webcam opens for one program).

Every method is safe to call from any thread. What cannot be used is refused with a
:class:`~tablesight.setup.steps.SetupError` naming the field, as the web API names it.
"""

from __future__ import annotations

import contextlib
import glob
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import cv2

from tablesight.calibration.camera import BoardSpec, Calibration, CalibrationError, CameraModel
from tablesight.calibration.dictionaries import DictionaryError, dictionary_id
from tablesight.calibration.printing import SheetEntry, SheetEntryError, charuco_sheet, roster_sheet
from tablesight.rules.errors import InputError
from tablesight.rules.errors import shown as shown_path
from tablesight.rules.ruleset import available
from tablesight.rules.scenario import base_of
from tablesight.rules.values import cut
from tablesight.setup.files import (
    SetupConflict,
    SetupFiles,
    write_files,
)
from tablesight.setup.steps import (
    ANCHOR_MM,
    AnchorProposal,
    Assignment,
    CalibrationCapture,
    GameFile,
    GamePreset,
    Offer,
    SetupError,
    Tape,
    assign,
    game_preset,
    propose_anchors,
    seen_markers,
)
from tablesight.vision.aruco import MarkerDetections
from tablesight.vision.frame import Frame
from tablesight.vision.observe import PoseHealth
from tablesight.vision.sight import sight
from tablesight.vision.sources import FileSource, LiveSource, SourceError, open_source
from tablesight.vision.tablepose import TablePose

#: Most pictures a second offered as calibration views.
OFFER_HZ = 4.0
#: The board a set-up calibrates with unless told: ``tablesight markers --charuco``'s.
BOARD = BoardSpec(squares_x=5, squares_y=7, square_mm=30, marker_mm=22, dictionary="6x6_250")
#: The dictionary of the table's markers until the user says: ``tablesight markers``'s.
DICTIONARY = "4x4_50"
#: How long writing with ``start`` waits for the game to say where it is served.
RUN_WAIT_S = 20.0
#: What ``tablesight run`` prints when its table view is up.
RUN_URL = re.compile(r"table view: (https?://\S+)")
#: What a held file says once played through.
HELD = "ended: holding the last picture"


@dataclass(frozen=True)
class Seen:
    """The newest picture, counted from 1 over every source of the set-up, and the
    markers of ``dictionary`` found in it."""

    count: int
    frame: Frame
    markers: MarkerDetections
    dictionary: str


class _Player:
    """One source played on a thread of its own, each picture handed to ``take``."""

    def __init__(
        self, spec: str, source: FileSource | LiveSource, take: Callable[[Frame], None]
    ) -> None:
        self.spec = spec
        self.source = source
        self.status = "live" if source.live else "playing"
        self._take = take
        self._arrived: deque[float] = deque(maxlen=30)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._play, name=f"setup {spec}", daemon=True)
        self._thread.start()

    @property
    def fps(self) -> float | None:
        """The file's frame rate; a camera's as measured over its last pictures."""
        if isinstance(self.source, FileSource):
            return self.source.fps
        times = list(self._arrived)
        if len(times) < 2 or times[-1] <= times[0] or time.monotonic() - times[-1] > 2.0:
            return None
        return (len(times) - 1) / (times[-1] - times[0])

    def _play(self) -> None:
        try:
            if isinstance(self.source, LiveSource):
                self._live(self.source)
            else:
                self._file(self.source)
        except (SourceError, ValueError) as exc:
            self.status = f"failed: {exc}"
        except Exception as exc:  # a picture that broke detection: said, not silent
            self.status = f"failed: {type(exc).__name__}: {exc}"

    def _live(self, source: LiveSource) -> None:
        while not self._stop.is_set():
            for frame in source.frames(timeout_s=1.0):
                self.status = source.status
                self._arrived.append(time.monotonic())
                self._take(frame)
            self.status = source.status

    def _file(self, source: FileSource) -> None:
        """At the file's own rate: a picture already a frame late is skipped, but the
        last, which is held."""
        began = time.monotonic()
        late: Frame | None = None
        frames: Iterator[Frame] = source.frames()
        try:
            for frame in frames:
                due = frame.t - (time.monotonic() - began)
                if self._stop.wait(max(0.0, due)):
                    return
                if due < -1.0 / source.fps:
                    late = frame
                    continue
                late = None
                self._take(frame)
        finally:
            close = getattr(frames, "close", None)
            if close is not None:
                close()
        if late is not None:
            self._take(late)
        self.status = HELD

    def stop(self) -> None:
        self._stop.set()
        if isinstance(self.source, LiveSource):
            self.source.close()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)


class _Run:
    """``tablesight run`` on the written files, in a process of its own; where it serves
    the table view is read from what it prints."""

    def __init__(self, command: Sequence[str], game: str = "") -> None:
        self.command = list(command)
        #: The game refereed (its name).
        self.game = game
        self.url: str | None = None
        self.lines: deque[str] = deque(maxlen=20)
        self._up = threading.Event()
        self.process = subprocess.Popen(
            self.command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            # its own session: a Ctrl-C at the terminal reaches the set-up, which stops it
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, name="setup run", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        with self.process.stderr:
            for line in self.process.stderr:
                self.lines.append(line.rstrip())
                found = RUN_URL.search(line)
                if found and self.url is None:
                    self.url = found.group(1)
                    self._up.set()
        self._up.set()

    def wait(self, timeout_s: float) -> None:
        self._up.wait(timeout_s)

    @property
    def status(self) -> str:
        code = self.process.poll()
        if code is None:
            return "running" if self.url else "starting"
        said = (line for line in reversed(self.lines) if line and not RUN_URL.search(line))
        last = next(said, "")  # its last word, not the address it no longer serves
        return f"ended (exit status {code})" + (f": {last}" if last else "")

    def to_dict(self, viewer: bool = False) -> dict[str, object]:
        """As the state shows it; to a ``viewer``, its address without its token."""
        return {
            "game": self.game,
            "pid": self.process.pid,
            "url": without_token(self.url) if viewer and self.url else self.url,
            "status": self.status,
            "command": self.command,
        }

    def stop(self) -> None:
        """SIGTERM, which ``run`` takes as Ctrl-C (also when started with SIGINT
        ignored); killed if it has not ended in ten seconds."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5.0)
        self._reader.join(timeout=5.0)


def cameras() -> list[dict[str, str]]:
    """The cameras this machine has, as sources (``/dev/videoN`` on Linux; camera 0
    where there is no such list)."""
    found = sorted(
        (int(m.group(1)), path)
        for path in glob.glob("/dev/video*")
        if (m := re.fullmatch(r"/dev/video(\d+)", path))
    )
    if not found and not sys.platform.startswith("linux"):
        return [{"spec": "0", "label": "camera 0"}]
    return [{"spec": str(n), "label": f"camera {n} ({path})"} for n, path in found]


def run_command() -> list[str]:
    """How to start ``tablesight``: the script on the PATH, or the module."""
    exe = shutil.which("tablesight")
    return [exe] if exe else [sys.executable, "-m", "tablesight"]


class TableSetup:
    """A set-up in progress: a source played, the camera, the table, the game, the models
    and terrain, and the files written (see the module's description).

    ``folder`` is where the page offers to write, and the files are written only there or
    in folders under it; ``command`` starts ``tablesight`` (its ``run`` is started on the
    files), served on ``host`` and ``run_port`` (0: any free port).
    """

    def __init__(
        self,
        board: BoardSpec = BOARD,
        folder: Path = Path("."),
        command: Sequence[str] | None = None,
        host: str = "127.0.0.1",
        run_port: int = 5001,
        offer_hz: float = OFFER_HZ,
        game_file: GameFile | None = None,
    ) -> None:
        self.board = board
        #: A game from a file outside the package (``setup --ruleset``), offered beside
        #: the packaged ones.
        self.game_file = game_file
        #: Where the files are written: this folder, or a folder under it.
        self.folder = Path(folder).expanduser().resolve()
        self.command = list(command) if command is not None else run_command()
        #: This set-up page's address, once it is served: the game's table view links to it.
        self.page_url: str | None = None
        self.host = host
        self.run_port = run_port
        self.offer_hz = offer_hz
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._closing = threading.Event()
        self._player: _Player | None = None
        self._switching = threading.Lock()  # one source opened or let go of at a time
        self._writing = threading.Lock()  # one writing (and game started) at a time
        self._specs: list[str] = []
        self._seen: Seen | None = None
        self._count = 0
        self._jpeg: tuple[int, bytes] | None = None
        # the camera
        self._capture = CalibrationCapture(board)
        self._capture_lock = threading.Lock()
        self._calibrating = False
        self._worker: threading.Thread | None = None
        self._offered = 0  # the count of the picture offered last
        self._last: Offer | None = None
        self._kept: list[str] = []  # the views kept, by name ("frame N": the source's Nth)
        self._views = 0
        self._coverage = self._capture.coverage()
        self._calibration: Calibration | None = None
        self._calibration_warnings: list[str] = []
        self._camera: CameraModel | None = None
        self._camera_file: str | None = None
        # the table
        self._dictionary = DICTIONARY
        self._table_in: tuple[float, float] | None = None
        self._corners: list[list[float]] | None = None
        self._proposal: AnchorProposal | None = None
        self._health: PoseHealth | None = None
        self._pose: TablePose | None = None
        # the game, the models and terrain, the files
        self._game: str | None = None
        self._preset: GamePreset | None = None
        self._forms: tuple[list[Any], list[Any]] = ([], [])
        self._assignment: Assignment | None = None
        self._written: SetupFiles | None = None
        self._run: _Run | None = None

    # -- the source -----------------------------------------------------------------------

    def use_source(self, spec: object) -> None:
        """Play ``spec`` (a webcam's number, a video file, a folder or glob of pictures, a
        stream's URL) instead of the source played now."""
        if not isinstance(spec, str) or not spec.strip():
            raise SetupError("spec", f"expected a camera number, a file or a URL, got {cut(spec)}")
        spec = spec.strip()
        live = spec.isdigit() or "://" in spec
        with self._switching:
            if not live:  # a file is checked before the source played now is let go of
                source = self._open(spec)
            before = self._player.spec if self._player is not None else None
            self._release()
            if live:
                try:
                    source = self._open(spec)
                except SetupError:
                    if before is not None:  # the source that worked plays on
                        with contextlib.suppress(SetupError):
                            self._restart(before)
                    raise
            player = _Player(spec, source, self._take)
            with self._changed:
                self._player = player
                if spec not in self._specs:
                    self._specs.append(spec)
                self._changed.notify_all()

    def _restart(self, spec: str) -> None:
        player = _Player(spec, self._open(spec), self._take)
        with self._changed:
            self._player = player
            self._changed.notify_all()

    @staticmethod
    def _open(spec: str) -> FileSource | LiveSource:
        try:
            source = open_source(spec)
            if isinstance(source, LiveSource):
                source.wait_opened()
        except SourceError as exc:
            raise SetupError("spec", str(exc)) from None
        return source

    def _release(self) -> None:
        """Stop playing the source (its last picture stays), so another program may open it."""
        with self._lock:
            player, self._player = self._player, None
        if player is not None:
            player.stop()

    def _take(self, frame: Frame) -> None:
        """A new picture: its markers found, and the table pose solved on them."""
        with self._lock:
            dictionary, proposal, camera = self._dictionary, self._proposal, self._camera
        markers, pose, health = _sight(frame, dictionary, proposal, camera)
        with self._changed:
            self._count += 1
            self._seen = Seen(self._count, frame, markers, dictionary)
            if proposal is not None and proposal is self._proposal:
                self._pose, self._health = pose, health
            self._changed.notify_all()

    def newest(self) -> Seen | None:
        with self._lock:
            return self._seen

    def jpeg(self, quality: int = 85) -> tuple[int, bytes] | None:
        """The newest picture as JPEG, with its count: the camera's own JPEG when it sent
        one, else encoded once, whoever asks."""
        with self._lock:
            seen, cached = self._seen, self._jpeg
        if seen is None:
            return None
        if cached is not None and cached[0] == seen.count:
            return cached
        data = seen.frame.encoded(quality)
        if data is None:
            return None
        with self._lock:
            self._jpeg = (seen.count, data)
        return seen.count, data

    def wait_for_frame(self, count: int, timeout: float) -> int:
        """Until a picture newer than ``count`` (or the set-up closes), at most
        ``timeout`` s; the newest count then (0: none yet)."""
        with self._changed:
            self._changed.wait_for(
                lambda: self._count != count or self._closing.is_set(), timeout=timeout
            )
            return self._count

    @property
    def closing(self) -> bool:
        return self._closing.is_set()

    # -- 1. the camera --------------------------------------------------------------------

    def set_calibration(self, on: object, reset: object = False) -> None:
        """Offer the newest pictures as board views (``on``) or stop; ``reset`` forgets
        the views kept so far."""
        if not isinstance(on, bool):
            raise SetupError("on", f"expected true or false, got {cut(on)}")
        if not isinstance(reset, bool):
            raise SetupError("reset", f"expected true or false, got {cut(reset)}")
        if reset:
            with self._capture_lock:
                self._capture = CalibrationCapture(self.board)
                with self._lock:
                    self._last, self._views, self._kept = None, 0, []
                    self._coverage = self._capture.coverage()
                    self._calibration, self._calibration_warnings = None, []
        with self._changed:
            self._calibrating = on
            if on and self._worker is None:
                self._worker = threading.Thread(
                    target=self._calibrate, name="calibrate", daemon=True
                )
                self._worker.start()
            self._changed.notify_all()

    def _calibrate(self) -> None:
        """Offer the newest picture at most ``offer_hz`` times a second while calibration
        is on, each picture once, and calibrate after each view kept (from three)."""
        last = 0.0
        while not self._closing.is_set():
            with self._changed:
                self._changed.wait_for(self._offer_due, timeout=1.0)
            if self._closing.wait(max(0.0, last + 1.0 / self.offer_hz - time.monotonic())):
                return
            with self._lock:
                seen, on = self._seen, self._calibrating
            if not on or seen is None or seen.count == self._offered:
                continue
            self._offered, last = seen.count, time.monotonic()
            with self._capture_lock:
                offer = self._capture.offer(seen.frame.gray, f"frame {seen.frame.index}")
                calibration, warnings = None, None
                if offer.kept and self._capture.views >= 3:
                    try:
                        calibration = self._capture.calibrate()
                        warnings = calibration.warnings
                    except (CalibrationError, cv2.error) as exc:
                        warnings = [f"the views do not calibrate yet: {exc}"]
                with self._changed:
                    self._last, self._views, self._coverage = offer, offer.views, offer.coverage
                    if offer.kept:
                        self._kept.append(offer.name)
                    if warnings is not None:
                        self._calibration_warnings = list(warnings)
                    if calibration is not None:
                        self._calibration = calibration
                        self._camera, self._camera_file = calibration.camera, None
                    self._changed.notify_all()

    def _offer_due(self) -> bool:
        """Closing, or a picture not offered yet while calibration is on (lock held)."""
        return self._closing.is_set() or (self._calibrating and self._count != self._offered)

    def load_camera(self, path: object) -> CameraModel:
        """Use a saved ``camera.toml`` instead of calibrating (calibration goes off)."""
        if not isinstance(path, str) or not path.strip():
            raise SetupError("path", f"expected the path of a camera.toml, got {cut(path)}")
        try:
            camera = CameraModel.from_toml(Path(path).expanduser())
        except InputError as exc:
            raise SetupError("path", str(exc)) from None
        with self._changed:
            self._camera, self._camera_file = camera, path
            self._calibrating, self._calibration_warnings = False, []
            self._changed.notify_all()
        return camera

    @property
    def camera(self) -> CameraModel | None:
        with self._lock:
            return self._camera

    def board_pdf(self, paper: str = "a4") -> bytes:
        """The ChArUco board the calibration expects, to print at 100%."""
        b = self.board
        return _pdf(
            lambda p: charuco_sheet(
                p, b.squares_x, b.squares_y, b.square_mm, b.marker_mm, b.dictionary, _paper(paper)
            )
        )

    # -- 2. the table ---------------------------------------------------------------------

    def set_table(
        self,
        width_in: object,
        depth_in: object,
        dictionary: object,
        corners_px: object,
        anchor_size_mm: object = ANCHOR_MM,
        anchor_ids: object = None,
        tape: object = None,
    ) -> AnchorProposal:
        """The anchors from the table's corners clicked in the newest picture (see
        :func:`~tablesight.setup.steps.propose_anchors`); the pose's health follows each new
        picture from here on."""
        if not isinstance(dictionary, str):
            raise SetupError("dictionary", f"expected a dictionary's name, got {cut(dictionary)}")
        try:
            dictionary_id(dictionary)
        except DictionaryError as exc:
            raise SetupError("dictionary", str(exc)) from None
        if anchor_ids is not None and not isinstance(anchor_ids, list):
            raise SetupError("anchor_ids", f"expected a list of marker ids, got {cut(anchor_ids)}")
        tapes = _tape(tape)
        with self._lock:
            seen, camera = self._seen, self._camera
        if seen is None:
            raise SetupError("source", "no picture yet: choose a camera or a video first")
        if camera is not None and tuple(camera.image_size) != seen.frame.size:
            w, h = seen.frame.size
            raise SetupError(
                "camera",
                f"the camera was calibrated at {camera.image_size[0]}x{camera.image_size[1]}, "
                f"the pictures are {w}x{h}: calibrate again, or load the camera.toml for it",
            )
        markers = (
            seen.markers
            if seen.dictionary == dictionary
            else sight(seen.frame.gray, None, dictionary=dictionary).detections
        )
        try:
            proposal = propose_anchors(
                (width_in, depth_in),  # type: ignore[arg-type]
                dictionary,
                markers,
                corners_px,  # type: ignore[arg-type]
                camera,
                anchor_ids=anchor_ids,
                size_mm=anchor_size_mm,  # type: ignore[arg-type]
                tape=tapes,
            )
        except SetupError as exc:
            if exc.field == "size_mm":
                raise SetupError("anchor_size_mm", exc.message) from None
            raise
        with self._changed:
            self._dictionary = dictionary
            self._table_in = (proposal.table.table.width_in, proposal.table.table.depth_in)
            self._corners = [[float(v) for v in p] for p in corners_px]  # type: ignore[attr-defined]
            self._proposal, self._pose = proposal, proposal.pose
            self._health = None if proposal.pose is None else PoseHealth.of(proposal.pose)
            self._changed.notify_all()
        return proposal

    # -- 3. the game, the models and terrain ----------------------------------------------

    def set_game(self, game: object) -> GamePreset:
        """The game to referee, and what its rules ask of the models and pieces."""
        if not isinstance(game, str):
            raise SetupError("game", f"expected a game's name, got {cut(game)}")
        preset = game_preset(self._game_named(game))
        with self._changed:
            self._game, self._preset = preset.game, preset
            self._changed.notify_all()
        return preset

    def set_models(self, models: object, terrain: object = ()) -> Assignment:
        """The models and terrain pieces, all of them each time, as filled in (the fields
        of ``roster.toml`` and ``terrain.toml``: :func:`~tablesight.setup.steps.assign`)."""
        for key, value in (("models", models), ("terrain", terrain)):
            if not isinstance(value, list | tuple):
                raise SetupError(key, f"expected a list of entries, got {cut(value)}")
        done = self._assign(list(models), list(terrain))  # type: ignore[call-overload]
        with self._changed:
            self._forms = (list(models), list(terrain))  # type: ignore[call-overload]
            self._assignment = done
            self._changed.notify_all()
        return done

    def _games(self) -> list[str]:
        """The games offered: the packaged ones, and the game of ``game_file``."""
        extra = [] if self.game_file is None else [self.game_file.ruleset.name]
        return available() + extra

    def _game_named(self, game: str) -> str | GameFile:
        """A game offered, by its name: the game file's when it is that one."""
        if self.game_file is not None and game == self.game_file.ruleset.name:
            return self.game_file
        return game

    def _assign(self, models: list[Any], terrain: list[Any]) -> Assignment:
        with self._lock:
            game, proposal = self._game, self._proposal
        if game is None:
            raise SetupError("game", f"choose a game first: {', '.join(self._games())}")
        if proposal is None or not proposal.anchors:
            raise SetupError("table", "place the anchors first: click the table's corners")
        return assign(self._game_named(game), proposal.table, models, terrain)

    def markers_pdf(self, paper: str = "a4") -> bytes:
        """The markers of the models and pieces, each on its base's outline, to print."""
        with self._lock:
            done, dictionary = self._assignment, self._dictionary
        if done is None or not (done.roster or done.terrain):
            raise SetupError("models", "no models or terrain pieces to print yet")
        entries = [
            SheetEntry(
                m.marker,
                m.marker_size_mm,
                m.id,
                m.side + (f", unit {m.unit}" if m.unit else ""),
                base_of(m.base),
                m.marker_offset_mm,
            )
            for m in done.roster
        ] + [SheetEntry(t.marker, t.marker_size_mm, t.id, "terrain") for t in done.terrain]
        where = [f"models[{k}]" for k in range(len(done.roster))]
        where += [f"terrain[{k}]" for k in range(len(done.terrain))]
        try:
            return _pdf(lambda p: roster_sheet(p, entries, dictionary, _paper(paper)))
        except SheetEntryError as exc:
            field = {"size_mm": "marker_size_mm", "offset_mm": "marker_offset_mm"}
            name = field.get(exc.field, exc.field)
            raise SetupError(exc.where(where, name), exc.reason) from None

    # -- 4. the files ---------------------------------------------------------------------

    def write(
        self, folder: object, start: object = False, replace: object = False
    ) -> tuple[SetupFiles, _Run | None]:
        """Write the files to ``folder`` (relative: to :attr:`folder`; it must be that
        folder or under it), over files of their names only with ``replace`` (each old one
        kept beside it); with ``start``, let go of the source and start ``tablesight run``
        on them (waiting up to ``RUN_WAIT_S`` for its address), instead of the game
        started before. One at a time: while one is under way, another is refused
        (:class:`~tablesight.setup.files.SetupConflict` on ``start``)."""
        if not isinstance(folder, str) or not folder.strip():
            raise SetupError("folder", f"expected a folder's path, got {cut(folder)}")
        if not isinstance(start, bool):
            raise SetupError("start", f"expected true or false, got {cut(start)}")
        if not isinstance(replace, bool):
            raise SetupError("replace", f"expected true or false, got {cut(replace)}")
        if not self._writing.acquire(blocking=False):
            raise SetupConflict(
                "start",
                "a game is being started already (by another click or page): it is shown "
                "here once it is up",
            )
        try:
            return self._write(folder.strip(), start, replace)
        finally:
            self._writing.release()

    def _write(self, folder: str, start: bool, replace: bool) -> tuple[SetupFiles, _Run | None]:
        with self._lock:
            forms, game, proposal, camera = self._forms, self._game, self._proposal, self._camera
            player = self._player
            spec = player.spec if player is not None else next(reversed(self._specs), None)
        done = self._assign(*forms)
        assert game is not None and proposal is not None
        if start and spec is None:
            raise SetupError("source", "choose the camera the game is played under first")
        files = write_files(
            Path(folder),
            self._game_named(game),
            proposal.table,
            done.roster,
            done.terrain,
            camera,
            inside=self.folder,
            replace=replace,
        )
        run = None
        if start:
            self._stop_run()
            with self._switching:
                self._release()
            command = [*self.command, "run", "--source", str(spec), *files.options()]
            command += ["--host", self.host, "--port", str(self.run_port)]
            if self.page_url is not None:  # the page's address alone: never its token
                command += ["--setup-url", without_token(self.page_url)]
            try:
                run = _Run(command, files.game)
            except OSError as exc:
                raise SetupError("start", f"cannot start {command[0]}: {exc.strerror}") from None
            run.wait(RUN_WAIT_S)
        stale = None
        with self._changed:
            self._written = files
            if run is not None:
                stale, self._run = self._run, run
            self._changed.notify_all()
        if stale is not None:
            stale.stop()
        if run is not None and self._closing.is_set():  # closed while it started
            self._stop_run()
        return files, run

    def _stop_run(self) -> None:
        with self._lock:
            run, self._run = self._run, None
        if run is not None:
            run.stop()

    def close(self) -> None:
        """Stop everything: the source, the calibration, the game started (as Ctrl-C does),
        and end the page's picture streams."""
        self._closing.set()
        with self._changed:
            self._changed.notify_all()
        self._release()
        self._stop_run()

    # -- what the page shows --------------------------------------------------------------

    def state(self, viewer: bool = False) -> dict[str, Any]:
        """Everything the set-up page shows (the web API's ``/api/setup/state``); to a
        ``viewer`` (who may only watch), the game's address without its token, and every
        text without the credentials of the sources' URLs (:func:`hide_credentials`)."""
        with self._lock:
            seen, player = self._seen, self._player
            proposal, pose, health = self._proposal, self._pose, self._health
            done, written, run = self._assignment, self._written, self._run
            calibration, camera = self._calibration, self._camera
            specs = list(self._specs)
            state: dict[str, Any] = {
                "frame": None if seen is None else seen.count,
                "source": _source(player, seen, self._specs),
                "sources": self._sources(),
                "calibration": {
                    "on": self._calibrating,
                    "views": self._views,
                    "kept": list(self._kept),
                    "coverage": self._coverage.to_dict(),
                    "last": None if self._last is None else self._last.to_dict(),
                    "rms_px": None if camera is None else camera.rms_px,
                    "fx": None if camera is None else round(camera.fx, 2),
                    "fy": None if camera is None else round(camera.fy, 2),
                    "warnings": list(self._calibration_warnings),
                    "camera_file": self._camera_file,
                    "calibrated": camera is not None,
                    "from_views": None if calibration is None else len(calibration.used),
                    "board": self.board.model_dump(),
                },
                "table": {
                    "width_in": None if self._table_in is None else self._table_in[0],
                    "depth_in": None if self._table_in is None else self._table_in[1],
                    "dictionary": self._dictionary,
                    "corners_px": self._corners,
                    "proposal": None if proposal is None else proposal.to_dict(),
                    "health": None if health is None else health.to_dict(),
                },
                "game": self._game,
                "games": self._games(),
                "presets": None if self._preset is None else self._preset.to_dict(),
                "folder": str(self.folder),
            }
        anchors = [] if proposal is None else [a.id for a in proposal.anchors]
        carried: dict[int, tuple[str, str]] = {}
        if done is not None:
            carried |= {m.marker: (m.id, "model") for m in done.roster}
            carried |= {t.marker: (t.id, "terrain") for t in done.terrain}
        listed = [] if seen is None else seen_markers(seen.markers, anchors, pose)
        state["markers"] = [
            m.to_dict()
            | dict(zip(("assigned", "kind"), carried.get(m.id, (None, None)), strict=True))
            for m in listed
        ]
        state["models"] = [] if done is None else [_dump(m) for m in done.roster]
        state["terrain"] = [] if done is None else [_dump(t) for t in done.terrain]
        state["written"] = None if written is None else _written(written)
        state["run"] = None if run is None else run.to_dict(viewer)
        return hide_credentials(state, specs) if viewer else state

    def _sources(self) -> list[dict[str, str]]:
        out = {c["spec"]: c for c in cameras()}
        for spec in self._specs:
            out.setdefault(spec, {"spec": spec, "label": Path(spec).name or spec})
        return list(out.values())


def _sight(
    frame: Frame, dictionary: str, proposal: AnchorProposal | None, camera: CameraModel | None
) -> tuple[MarkerDetections, TablePose | None, PoseHealth | None]:
    """A picture's markers, the table pose the proposed anchors give on them, and its
    health (none without proposed anchors; a pose that cannot be solved: no pose, and
    why)."""
    table = proposal.table if proposal is not None and proposal.anchors else None
    seen = sight(frame.gray, table, camera, dictionary=dictionary)
    if table is None:
        return seen.detections, None, None
    if seen.pose is None:
        return seen.detections, None, PoseHealth((), 0.0, problem=seen.why)
    return seen.detections, seen.pose, PoseHealth.of(seen.pose)


def _tape(tape: object) -> dict[int, Tape] | None:
    """``{"<id>": [x_edge_in, y_edge_in]}`` as tapes by marker id."""
    if tape is None:
        return None
    if not isinstance(tape, Mapping):
        raise SetupError("tape", f"expected {{marker id: [x_edge_in, y_edge_in]}}, got {cut(tape)}")
    out = {}
    for key, value in tape.items():
        text = str(key)
        if not text.isdigit():
            raise SetupError(f"tape[{cut(key, 12)}]", "expected a marker id")
        if not isinstance(value, list | tuple) or len(value) != 2:
            raise SetupError(f"tape[{text}]", f"expected [x_edge_in, y_edge_in], got {cut(value)}")
        out[int(text)] = Tape(value[0], value[1])
    return out


def _paper(paper: str) -> Any:
    if paper not in ("a4", "letter"):
        raise SetupError("paper", f"expected 'a4' or 'letter', got {cut(paper)}")
    return paper


def _pdf(write: Callable[[Path], object]) -> bytes:
    """What ``write`` writes to a PDF file, read back."""
    with tempfile.TemporaryDirectory(prefix="tablesight-") as folder:
        path = Path(folder) / "sheet.pdf"
        try:
            write(path)
        except (SetupError, SheetEntryError):
            raise
        except ValueError as exc:
            raise SetupError("paper", str(exc)) from None
        return path.read_bytes()


def _source(
    player: _Player | None, seen: Seen | None, specs: Sequence[str]
) -> dict[str, Any] | None:
    if player is None and not specs:
        return None
    size = None if seen is None else seen.frame.size
    return {
        "spec": player.spec if player is not None else specs[-1],
        "status": player.status if player is not None else "released",
        "width": None if size is None else size[0],
        "height": None if size is None else size[1],
        "fps": None if player is None or player.fps is None else round(player.fps, 3),
    }


def _dump(entry: Any) -> dict[str, Any]:
    out: dict[str, Any] = entry.model_dump(mode="json", exclude_none=True)
    return out


def _written(files: SetupFiles) -> dict[str, Any]:
    return {
        "folder": str(files.table.parent),
        "files": {
            "table": str(files.table),
            "roster": str(files.roster),
            "terrain": None if files.terrain is None else str(files.terrain),
            "camera": None if files.camera is None else str(files.camera),
        },
        "game": files.game,
        "options": files.options(),
    }


def without_token(url: str) -> str:
    """``url`` without its ``token`` (the query's ``token=``)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "token"]
    return urlunsplit(parts._replace(query=urlencode(query)))


def credentials(spec: str) -> str | None:
    """A stream URL's ``user:password@``, if it has one: all from ``://`` to its last
    ``@`` (more than the user information where a path holds an ``@``: never less)."""
    _, scheme, rest = spec.partition("://")
    userinfo, at, _ = rest.rpartition("@")
    return f"{userinfo}@" if scheme and at else None


def hide_credentials(state: Any, specs: Sequence[str]) -> Any:
    """``state`` (: dicts, lists and values) with the credentials of each of
    ``specs`` (the sources' URLs) put out of sight in every text, whole or where a
    message cut the URL short (:func:`~tablesight.rules.errors.shown`)."""
    hidden = []
    for spec in specs:
        secret = credentials(spec)
        if secret is not None:
            bare = spec.replace(secret, "***@", 1)
            hidden += [(shown_path(spec), shown_path(bare)), (secret, "***@")]

    def hide(value: Any) -> Any:
        if isinstance(value, str):
            for secret, mask in hidden:
                value = value.replace(secret, mask)
            return value
        if isinstance(value, Mapping):
            return {k: hide(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [hide(v) for v in value]
        return value

    return hide(state) if hidden else state
