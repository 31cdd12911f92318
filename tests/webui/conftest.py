"""What the browser tests share: Debian's Chromium driven by Playwright."""

from __future__ import annotations

import shutil

import pytest

#: Playwright cannot download its browsers here: it drives Debian's.
CHROMIUM = "/usr/bin/chromium"
#: Waiting for a page to catch up (ms).
WAIT_MS = 20_000
#: The marks of a browser test module: ``pytestmark = BROWSER``.
BROWSER = [
    pytest.mark.browser,
    pytest.mark.skipif(
        shutil.which(CHROMIUM) is None,
        reason=f"the browser tests drive Debian's Chromium, and {CHROMIUM} is absent",
    ),
]


@pytest.fixture(scope="module")
def browser():
    """One Chromium for a test module."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM)
        sync_api.expect.set_options(timeout=WAIT_MS)
        yield chromium
        chromium.close()
