"""``tablesight demo`` as a user starts it: the bundled Necromunda match played as a live
camera, its table view opened in Debian's Chromium through Playwright.

The page must outline every model of samples/necromunda/roster.toml on the picture (one
``path.base`` in the overlay each); then the demo is stopped with Ctrl-C, as a user would,
and must exit cleanly.
"""

from __future__ import annotations

import signal
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")

REPO = Path(__file__).resolve().parents[2]
ROSTER = REPO / "samples" / "necromunda" / "roster.toml"
#: How long the demo may take to start serving, and the page to draw every base (s).
WAIT_S = 60.0


@pytest.fixture
def demo(run_demo):
    """The demo on a free port; yields (process, url, stderr lines)."""
    with run_demo(wait_s=WAIT_S) as started:
        yield started


def test_the_demo_shows_every_model_of_the_sample(demo, browser) -> None:
    process, url, lines = demo
    models = tomllib.loads(ROSTER.read_text())["models"]
    assert len(models) == 12
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    try:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url, wait_until="domcontentloaded")
        bases = page.locator("svg#overlay path.base")
        sync_api.expect(bases).to_have_count(len(models), timeout=WAIT_S * 1000)
        drawn = sorted(bases.nth(i).get_attribute("data-model") for i in range(len(models)))
        assert drawn == sorted(m["id"] for m in models)
        assert errors == []
        # Ctrl-C stops it while the page still streams the picture and the events: the
        # clip, the server and the process, with exit status 0 (not an abort from a
        # picture still being encoded as the process exits).
        assert process.poll() is None, "".join(lines)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0, "".join(lines)
    finally:
        page.close()
