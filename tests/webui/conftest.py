"""What the web UI's tests share, as fixtures: the game's setup on the two-model table,
and Debian's Chromium driven by Playwright. The table, its rendered clip (``footage``:
the web tests use ``start`` and ``moved``), the match files to referee it with and the
``tablesight`` command come from tests/conftest.py.

Browser tests are marked ``@pytest.mark.browser``; they are skipped where Chromium is
absent.
"""

from __future__ import annotations

import shutil

import pytest

from calibration.camera import CameraModel
from rules.ruleset import load_ruleset
from vision.setup import Setup

#: Playwright cannot download its browsers here: it drives Debian's.
CHROMIUM = "/usr/bin/chromium"
#: Waiting for a page to catch up (ms).
WAIT_MS = 20_000


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if shutil.which(CHROMIUM) is not None:
        return
    skip = pytest.mark.skip(reason=f"the browser tests drive Debian's Chromium: {CHROMIUM}")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def setup(footage, two_model_table, two_model_roster) -> Setup:
    """Necromunda on the table, with the lens that took the footage."""
    camera, _ = footage
    lens = CameraModel((1920, 1080), camera.camera_matrix, camera.dist_coeffs)
    return Setup(
        "necromunda", load_ruleset("necromunda"), two_model_table, two_model_roster, [], lens
    )


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
