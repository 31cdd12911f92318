"""What the web UI's tests share, as fixtures: the two-model table and its rendered clip,
the match files to referee it with, the ``tablesight`` command, and Debian's Chromium
driven by Playwright.

The table: 44 x 30 in with an anchor in each corner; the ganger (red, marker 10) and the
brute (blue, marker 11, at (30, 20)), 1 in round bases, M 6. The clip's shots: ``start``
with the ganger at (10, 10), ``moved`` with it at (17, 10) (a 7 in move: over its 6).

Browser tests are marked ``@pytest.mark.browser``; they are skipped where Chromium is
absent.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from calibration.table import Anchor, TableKeys, TableSpec
from rules.ruleset import load_ruleset
from rules.scenario import RoundBase
from vision.rig.synth import PinholeCamera, PlacedMarker, Shot, render_table
from vision.roster import RosterModel
from vision.setup import Setup

#: Playwright cannot download its browsers here: it drives Debian's.
CHROMIUM = "/usr/bin/chromium"
#: Waiting for a page to catch up (ms).
WAIT_MS = 20_000

AT = [(1.5, 1.5), (42.5, 1.5), (42.5, 28.5), (1.5, 28.5)]
TABLE = TableSpec(
    table=TableKeys(width_in=44, depth_in=30, dictionary="4x4_50"),
    anchors=[Anchor(id=i, x_in=x, y_in=y, size_mm=40) for i, (x, y) in enumerate(AT)],
)
ROSTER = [
    RosterModel(
        id=name,
        side=side,
        base=RoundBase(shape="round", diameter_mm=25.4),
        movement=6,
        marker=marker,
        marker_size_mm=25,
        marker_height_mm=0,
    )
    for name, side, marker in (("ganger", "red", 10), ("brute", "blue", 11))
]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if shutil.which(CHROMIUM) is not None:
        return
    skip = pytest.mark.skip(reason=f"the browser tests drive Debian's Chromium: {CHROMIUM}")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


def _shot(camera: PinholeCamera, ganger_xy: tuple[float, float], seed: int) -> np.ndarray:
    markers = [PlacedMarker(i, 40.0, x, y, 0.0, 0.0) for i, (x, y) in enumerate(AT)]
    markers.append(PlacedMarker(11, 25.0, 30.0, 20.0, 0.0, 180.0))
    markers.append(PlacedMarker(10, 25.0, ganger_xy[0], ganger_xy[1], 0.0, 90.0))
    return render_table(camera, (44, 30), markers, shot=Shot(seed=seed))


@pytest.fixture(scope="module")
def footage() -> tuple[PinholeCamera, dict[str, np.ndarray]]:
    """The camera, and its pictures (1920 x 1080): ``start`` and ``moved``."""
    camera = PinholeCamera.looking_at((22, -14, 30), (22, 14, 0))
    return camera, {"start": _shot(camera, (10, 10), 1), "moved": _shot(camera, (17, 10), 3)}


@pytest.fixture(scope="module")
def setup(footage) -> Setup:
    """Necromunda on the table, with the lens that took the footage."""
    camera, _ = footage
    lens = CameraModel((1920, 1080), camera.camera_matrix, camera.dist_coeffs)
    return Setup("necromunda", load_ruleset("necromunda"), TABLE, ROSTER, [], lens)


@pytest.fixture(scope="module")
def match_files(footage, tmp_path_factory) -> tuple[Path, list[str]]:
    """A 30-frame video at 30 fps (15 ``start``, 15 ``moved``) and the table, roster and
    camera files to referee it with: the video and the command line's options."""
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
            for m in ROSTER
        )
    )
    rows = ", ".join("[" + ", ".join(repr(float(v)) for v in r) + "]" for r in camera.camera_matrix)
    dist = ", ".join(repr(float(v)) for v in camera.dist_coeffs)
    (folder / "camera.toml").write_text(
        f"image_size = [1920, 1080]\ncamera_matrix = [{rows}]\ndist_coeffs = [{dist}]\n"
    )
    args = ["--game", "necromunda", "--table", str(folder / "table.toml")]
    args += ["--roster", str(folder / "roster.toml"), "--camera", str(folder / "camera.toml")]
    return video, args


@pytest.fixture(scope="session")
def tablesight_command() -> list[str]:
    """How to start ``tablesight``: the installed script, or the module."""
    exe = Path(sys.executable).with_name("tablesight")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "tablesight"]


@pytest.fixture(scope="session")
def tablesight(tablesight_command):
    """Runs ``tablesight`` with some arguments to its end (at most a minute)."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*tablesight_command, *args], capture_output=True, text=True, timeout=60
        )

    return run


@pytest.fixture(scope="session")
def wait_ms() -> int:
    """How long a browser test waits for a page to catch up (ms)."""
    return WAIT_MS


@pytest.fixture(scope="module")
def browser():
    """One Chromium for a test module."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM)
        sync_api.expect.set_options(timeout=WAIT_MS)
        yield chromium
        chromium.close()
