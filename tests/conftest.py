"""Shared fixtures for the whole suite.

Test modules share through these fixtures, never by importing one another (with
``--import-mode=importlib`` a test module imported by another is a second copy, and a
fixture imported with it is set up once more); tests/test_suite_layout.py checks it.

- ``shared_dir``: the shared reference data beside the checkout.
- ``tablesight_command``, ``tablesight``: the command line, run as a user would;
  ``run_demo``: ``tablesight demo`` started on a free port, its table view's URL read from
  what it prints, stopped with Ctrl-C (SIGINT) afterwards; ``run_setup`` and ``run_hub``
  the same for ``tablesight setup`` and ``tablesight hub``.
- ``state_shape``: a page state's shape (the path of every key at every level), to
  compare the live game's with the replay's.
- ``hand_lens``: a lens, a corner-anchored table file and a projection written out by
  hand, for tests that make up the pixels a camera would see.
- ``two_model_table``, ``two_model_roster``, ``footage``, ``match_files``: the two-model
  table and its rendered clip. The table is 44 x 30 in with a 40 mm anchor 1.5 in in
  from each corner; the ganger (red, marker 10) and the brute (blue, marker 11, at
  (30, 20)), 1 in round bases, M 6. The shots: ``start`` with the ganger at (10, 10),
  ``hand`` with it hidden, ``moved`` with it at (17, 10) (a 7 in move: over its 6) and
  ``bumped``, the same as ``moved`` from a knocked camera.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np
import pytest

if TYPE_CHECKING:
    from tablesight.calibration.roster import RosterModel
    from tablesight.calibration.setup import Setup
    from tablesight.calibration.table import TableSpec
    from tablesight.rig.synth import PinholeCamera

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = REPO_ROOT.parent / "shared"


@pytest.fixture
def shared_dir() -> Path:
    """The shared reference data beside the checkout; skips where it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"reference data folder {SHARED} is absent on this machine")
    return SHARED


# -- the command line ---------------------------------------------------------------------


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The product's wheel, built from the checkout as a user's pip builds it (the build
    backend from the package index); pip builds in the tree, and what it leaves there
    (``build/``) goes with it."""
    repo = Path(__file__).resolve().parent.parent
    out = tmp_path_factory.mktemp("wheel")
    leftover = repo / "build"
    kept = leftover.exists()
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(repo)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if not kept:
        shutil.rmtree(leftover, ignore_errors=True)
    assert built.returncode == 0, built.stdout + built.stderr[-2000:]
    (wheel,) = out.glob("tablesight-*.whl")
    return wheel


@pytest.fixture
def hasty_necromunda(tmp_path: Path) -> Path:
    """Necromunda with a Move of half the Movement characteristic, as a game file of its
    own outside the package (``--ruleset``)."""
    games = Path(__file__).resolve().parent.parent / "rules" / "games"
    text = (games / "necromunda.toml").read_text(encoding="utf-8")
    text = text.replace('name = "necromunda"', 'name = "hasty-necromunda"', 1)
    text = text.replace('title = "Necromunda"', 'title = "Hasty Necromunda"', 1)
    text = text.replace("[actions.move]\n", "[actions.move]\nfactor = 0.5\n", 1)
    text = text.replace("# Move (Simple): up to the Movement characteristic.\nfactor = 1.0\n", "")
    path = tmp_path / "hasty-necromunda.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def sample_options() -> Callable[[str], list[str]]:
    """The command line's options that referee a sample game with its files:
    ``--game G --table ... --roster ... --terrain ... --camera ...``."""

    def options(game: str) -> list[str]:
        folder = REPO_ROOT / "samples" / game
        out = ["--game", game]
        for name in ("table", "roster", "terrain", "camera"):
            out += [f"--{name}", str(folder / f"{name}.toml")]
        return out

    return options


@pytest.fixture(scope="session")
def tablesight_command() -> list[str]:
    """How to start ``tablesight``: the script on the PATH, or the module."""
    exe = shutil.which("tablesight")
    return [exe] if exe else [sys.executable, "-m", "tablesight"]


#: What the demo prints on stderr when its table view is up.
DEMO_URL = re.compile(r"table view: (http://127\.0\.0\.1:\d+/\S*)")

#: What ``tablesight setup`` prints on stderr when its page is up.
SETUP_URL = re.compile(r"set-up page: (http://127\.0\.0\.1:\d+/)")

#: What ``tablesight hub`` prints on stderr when its page is up.
HUB_URL = re.compile(r"hub: reading tables from \S+; the page: (http://127\.0\.0\.1:\d+/)")

Served = tuple[subprocess.Popen[str], str, list[str]]
Demo = Served


@contextlib.contextmanager
def served(command: list[str], url: re.Pattern[str], wait_s: float = 60.0) -> Iterator[Served]:
    """``command`` started as a user starts it, until it prints ``url`` on stderr: the
    process, the URL and its stderr lines (kept drained for as long as it runs); stopped
    with Ctrl-C (SIGINT) on leaving, if it still runs."""
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT
    )
    lines: list[str] = []
    found = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if url.search(line):
                found.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not found.wait(wait_s):
            pytest.fail(f"{' '.join(command[-6:])} printed no URL: {''.join(lines)}")
        yield process, next(m for m in map(url.search, lines) if m).group(1), lines
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        reader.join(timeout=5)
        if process.stderr is not None:
            process.stderr.close()


@pytest.fixture(scope="session")
def run_demo(tablesight_command: list[str]) -> Callable[..., AbstractContextManager[Demo]]:
    """``with run_demo(*options) as (process, url, stderr lines):`` the demo of the
    necromunda sample on a free port (see :func:`served`)."""

    def started(*options: str, wait_s: float = 60.0) -> AbstractContextManager[Demo]:
        command = [*tablesight_command, "demo", "--no-browser", "--port", "0"]
        return served([*command, "--game", "necromunda", *options], DEMO_URL, wait_s)

    return started


@pytest.fixture(scope="session")
def run_setup(tablesight_command: list[str]) -> Callable[..., AbstractContextManager[Served]]:
    """``with run_setup(source) as (process, url, stderr lines):`` ``tablesight setup
    --source SOURCE`` on a free port, with any more options after ``wait_s`` (see
    :func:`served`)."""

    def started(source: Path, wait_s: float = 60.0, *more: str) -> AbstractContextManager[Served]:
        command = [*tablesight_command, "setup", "--source", str(source), "--port", "0"]
        return served([*command, *more], SETUP_URL, wait_s)

    return started


@pytest.fixture(scope="session")
def run_hub(tablesight_command: list[str]) -> Callable[..., AbstractContextManager[Served]]:
    """``with run_hub(broker_url, *options) as (process, url, stderr lines):`` ``tablesight
    hub`` reading the broker, its page on a free port (see :func:`served`)."""

    def started(broker: str, *options: str, wait_s: float = 60.0) -> AbstractContextManager[Served]:
        command = [*tablesight_command, "hub", "--broker", broker, "--port", "0", *options]
        return served(command, HUB_URL, wait_s)

    return started


@pytest.fixture(scope="session")
def tablesight(
    tablesight_command: list[str],
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Runs ``tablesight`` with some arguments to its end (at most a minute), its output
    captured as text."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*tablesight_command, *args], capture_output=True, text=True, timeout=60
        )

    return run


# -- a lens and a table worked out by hand ------------------------------------------------

LENS_K = np.array([[1400.0, 0.0, 960.0], [0.0, 1400.0, 540.0], [0.0, 0.0, 1.0]])
LENS_DIST = np.array([-0.1, 0.04, 0.0007, -0.0004, 0.0])
#: 44 x 30 in, a 40 mm anchor 1 in in from each corner; anchor 1 turned by 90 degrees.
CORNER_TABLE_TOML = """
[table]
width_in = 44
depth_in = 30
dictionary = "4x4_50"

[[anchors]]
id = 0
x_in = 1
y_in = 1
size_mm = 40

[[anchors]]
id = 1
x_in = 43
y_in = 1
size_mm = 40
heading = 90

[[anchors]]
id = 2
x_in = 43
y_in = 29
size_mm = 40

[[anchors]]
id = 3
x_in = 1
y_in = 29
size_mm = 40
"""


def project(points: np.ndarray, r: np.ndarray, t: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """Pinhole camera with OpenCV's radial/tangential distortion, written out by hand."""
    cam = points @ r.T + t
    x, y = cam[:, 0] / cam[:, 2], cam[:, 1] / cam[:, 2]
    k1, k2, p1, p2, k3 = dist
    r2 = x * x + y * y
    radial = 1 + k1 * r2 + k2 * r2**2 + k3 * r2**3
    xd = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x)
    yd = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y
    return np.column_stack([LENS_K[0, 0] * xd + LENS_K[0, 2], LENS_K[1, 1] * yd + LENS_K[1, 2]])


def look_down(eye: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    """A camera at ``eye`` looking straight down, image x along table +x (R, t: world->cam)."""
    r = np.array([[1.0, 0, 0], [0, -1.0, 0], [0, 0, -1.0]])
    return r, -r @ np.asarray(eye)


def look_at(eye: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A camera at ``eye`` looking at ``target``, the table's +z up (R, t: world->cam)."""
    z = (target - eye) / np.linalg.norm(target - eye)
    x = np.cross(z, [0.0, 0.0, 1.0])
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    r = np.vstack([x, y, z])
    return r, -r @ eye


@pytest.fixture(scope="session")
def hand_lens() -> SimpleNamespace:
    """``K`` and ``dist`` of a 1920 x 1080 lens, ``table_toml`` (44 x 30 in, an anchor
    1 in in from each corner), and ``project``, ``look_at``, ``look_down``."""
    return SimpleNamespace(
        K=LENS_K,
        dist=LENS_DIST,
        table_toml=CORNER_TABLE_TOML,
        project=project,
        look_at=look_at,
        look_down=look_down,
    )


# -- the two-model table and its clip -----------------------------------------------------

# The product is imported inside the fixtures, so that a run of the rules' tests alone
# needs neither OpenCV nor the renderer.

AT = [(1.5, 1.5), (42.5, 1.5), (42.5, 28.5), (1.5, 28.5)]
#: (id, side, marker) of the two models.
MODELS = [("ganger", "red", 10), ("brute", "blue", 11)]
XYZ = tuple[float, float, float]
#: Where the camera stands and what it looks at; the knocked camera of ``bumped``.
CAMERA: tuple[XYZ, XYZ] = ((22, -14, 30), (22, 14, 0))
BUMPED: tuple[XYZ, XYZ] = ((22.6, -14.4, 30.3), (22.2, 14.1, 0))
#: name: (camera, where the ganger stands or None when a hand hides it, noise seed)
SHOTS: dict[str, tuple[tuple[XYZ, XYZ], tuple[float, float] | None, int]] = {
    "start": (CAMERA, (10, 10), 1),
    "hand": (CAMERA, None, 2),
    "moved": (CAMERA, (17, 10), 3),  # 7 in along x: over its 6
    "bumped": (BUMPED, (17, 10), 4),
}


class Shots(Mapping[str, np.ndarray]):
    """The pictures (1920 x 1080), each rendered the first time it is asked for and kept,
    read-only, for the rest of the session."""

    def __init__(self) -> None:
        self._rendered: dict[str, np.ndarray] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._rendered:
            picture = self._render(*SHOTS[name])
            picture.flags.writeable = False
            self._rendered[name] = picture
        return self._rendered[name]

    def __iter__(self) -> Iterator[str]:
        return iter(SHOTS)

    def __len__(self) -> int:
        return len(SHOTS)

    @staticmethod
    def _render(
        camera: tuple[XYZ, XYZ],
        ganger_xy: tuple[float, float] | None,
        seed: int,
    ) -> np.ndarray:
        from tablesight.rig.synth import PinholeCamera, PlacedMarker, Shot, render_table

        markers = [PlacedMarker(i, 40.0, x, y, 0.0, 0.0) for i, (x, y) in enumerate(AT)]
        markers.append(PlacedMarker(11, 25.0, 30.0, 20.0, 0.0, 180.0))
        if ganger_xy is not None:
            markers.append(PlacedMarker(10, 25.0, ganger_xy[0], ganger_xy[1], 0.0, 90.0))
        lens = PinholeCamera.looking_at(*camera)
        return render_table(lens, (44, 30), markers, shot=Shot(seed=seed))


def _key_paths(value: object, path: str) -> set[str]:
    if isinstance(value, dict):
        out = {f"{path}.{k}" for k in value}
        for k, v in value.items():
            out |= _key_paths(v, f"{path}.{k}")
        return out
    if isinstance(value, list):
        out = set()
        items = [sorted(v) for v in value if isinstance(v, dict)]
        if any(keys != items[0] for keys in items):
            out.add(f"{path}[] (items with other keys)")
        for v in value:
            out |= _key_paths(v, f"{path}[]")
        return out
    return set()


@pytest.fixture(scope="session")
def state_shape() -> Callable[[object], set[str]]:
    """A state's shape: the path of every key at every level (``state.live.pose``), a
    list's items under ``[]``, and a mark on a list of dicts whose items differ in keys."""
    return lambda state: _key_paths(state, "state")


@pytest.fixture(scope="session")
def two_model_table() -> TableSpec:
    """44 x 30 in, a 40 mm anchor (ids 0-3) 1.5 in in from each corner, ``4x4_50``."""
    from tablesight.calibration.table import Anchor, TableKeys, TableSpec

    return TableSpec(
        table=TableKeys(width_in=44, depth_in=30, dictionary="4x4_50"),
        anchors=[Anchor(id=i, x_in=x, y_in=y, size_mm=40) for i, (x, y) in enumerate(AT)],
    )


@pytest.fixture(scope="session")
def two_model_roster() -> list[RosterModel]:
    """The ganger (red, marker 10) and the brute (blue, marker 11): 1 in round bases, M 6,
    25 mm markers flat on their bases."""
    from tablesight.calibration.roster import RosterModel
    from tablesight.rules.scenario import RoundBase

    return [
        RosterModel(
            id=name,
            side=side,
            base=RoundBase(shape="round", diameter_mm=25.4),
            movement=6,
            marker=marker,
            marker_size_mm=25,
            marker_height_mm=0,
        )
        for name, side, marker in MODELS
    ]


@pytest.fixture(scope="session")
def footage() -> tuple[PinholeCamera, Mapping[str, np.ndarray]]:
    """The camera, and its pictures: ``start``, ``hand``, ``moved`` and ``bumped``."""
    from tablesight.rig.synth import PinholeCamera

    return PinholeCamera.looking_at(*CAMERA), Shots()


@pytest.fixture(scope="session")
def necromunda_sample() -> Setup:
    """The Necromunda sample's set-up (``samples/necromunda``: table, roster, terrain,
    camera), as ``tablesight run`` loads it."""
    from tablesight.calibration.setup import Setup

    sample = REPO_ROOT / "samples" / "necromunda"
    files = ("table.toml", "roster.toml", "terrain.toml", "camera.toml")
    return Setup.load("necromunda", *(sample / name for name in files))


@pytest.fixture(scope="session")
def setup(footage, two_model_table, two_model_roster) -> Setup:
    """Necromunda on the two-model table, with the lens that took the footage."""
    from tablesight.calibration.camera import CameraModel
    from tablesight.calibration.setup import Setup
    from tablesight.rules.ruleset import load_ruleset

    camera, _ = footage
    lens = CameraModel((1920, 1080), camera.camera_matrix, camera.dist_coeffs)
    return Setup(
        "necromunda", load_ruleset("necromunda"), two_model_table, two_model_roster, [], lens
    )


@pytest.fixture
def two_model_referee(footage, two_model_table, two_model_roster) -> SimpleNamespace:
    """A Necromunda session of the two models (profiles only: where each stands comes from
    the camera) and an observer of the footage's table with a perfectly calibrated lens."""
    from tablesight.rules.geometry import Base, Pose
    from tablesight.rules.ruleset import load_ruleset
    from tablesight.rules.scene import Model, Table
    from tablesight.rules.session import Session
    from tablesight.vision.observe import Observer

    camera, _ = footage
    models = {
        m.id: Model(m.id, m.side, m.id, Base.round(25.4), 6.0, Pose(0, 0)) for m in two_model_roster
    }
    return SimpleNamespace(
        session=Session(load_ruleset("necromunda"), Table(44, 30), models),
        observer=Observer(two_model_table, two_model_roster, camera.calibrated()),
    )


@pytest.fixture(scope="session")
def match_files(footage, two_model_roster, tmp_path_factory) -> tuple[Path, list[str]]:
    """A 30-frame video at 30 fps (15 ``start``, 15 ``moved``) and the table, roster and
    camera files to referee it with: the video and the command line's options."""
    import cv2

    folder = tmp_path_factory.mktemp("match")
    camera, pics = footage
    video = folder / "match.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"FFV1"), 30.0, (1920, 1080))
    for name in ["start"] * 15 + ["moved"] * 15:
        writer.write(pics[name])
    writer.release()
    anchors = "".join(
        f"[[anchors]]\nid = {i}\nx_in = {x}\ny_in = {y}\nsize_mm = 40\n\n"
        for i, (x, y) in enumerate(AT)
    )
    (folder / "table.toml").write_text(
        f'[table]\nwidth_in = 44\ndepth_in = 30\ndictionary = "4x4_50"\n\n{anchors}'
    )
    (folder / "roster.toml").write_text(
        "".join(
            f'[[models]]\nid = "{m.id}"\nside = "{m.side}"\n'
            f'base = {{ shape = "round", diameter_mm = 25.4 }}\nmovement = 6\n'
            f"marker = {m.marker}\nmarker_size_mm = 25\nmarker_height_mm = 0\n\n"
            for m in two_model_roster
        )
    )
    (folder / "camera.toml").write_text(camera.calibrated().to_toml())
    args = ["--game", "necromunda", "--table", str(folder / "table.toml")]
    args += ["--roster", str(folder / "roster.toml"), "--camera", str(folder / "camera.toml")]
    return video, args


# -- the broker ---------------------------------------------------------------------------


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[object]:
    """A real Mosquitto broker on a free port of 127.0.0.1, persistence on, in a folder of
    its own (:class:`tablesight.rig.mosquitto.Mosquitto`); ``mosquitto.url`` is its address.
    ``mosquitto.stop()`` and ``mosquitto.start()`` take it away and bring it back."""
    from tablesight.rig.mosquitto import EXECUTABLE, Mosquitto

    if not Path(EXECUTABLE).exists():
        pytest.fail(f"{EXECUTABLE} is missing: .ci/run installs Debian's mosquitto")
    with Mosquitto(tmp_path / "broker") as broker:
        yield broker
