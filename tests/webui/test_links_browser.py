"""Links in a real browser (Debian's Chromium through Playwright): the table view's link
back to the set-up page that started its game is readable on its dark header (WCAG
contrast, from the colours Chromium computes), and a game the set-up page started that
has ended is said to have ended, with no link to its table view, which is gone.
"""

from __future__ import annotations

import re
import sys

import pytest

from tablesight.setup.session import TableSetup, _Run
from tablesight.webui.serve import Server
from tablesight.webui.setup import setup_server

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

#: A link's colour, and the colour painted behind it: its own, or its nearest ancestor's
#: that is not transparent.
COLOURS = """(sel) => {
  const link = document.querySelector(sel);
  let e = link, behind = "rgba(0, 0, 0, 0)";
  while (e && /rgba\\(.*, 0\\)$|transparent/.test(behind)) {
    behind = getComputedStyle(e).backgroundColor;
    e = e.parentElement;
  }
  return [getComputedStyle(link).color, behind];
}"""


def luminance(css: str) -> float:
    """WCAG 2's relative luminance of an opaque ``rgb(r, g, b)``."""
    r, g, b = (int(v) / 255 for v in re.findall(r"\d+", css)[:3])

    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_is_worked_out_as_wcag_says():
    assert contrast("rgb(0, 0, 0)", "rgb(255, 255, 255)") == pytest.approx(21.0)
    # the browser's default link blue on the page's panel: what the header had
    assert contrast("rgb(0, 0, 238)", "rgb(31, 36, 42)") < 2


def test_the_set_up_link_is_readable_on_the_header(played_game, pages):
    server = Server(played_game, "127.0.0.1", 0, setup_url="http://127.0.0.1:9/").start()
    try:
        page = pages(server.url, 1280, 720, allow=("ERR_CONNECTION",))
        link = page.locator("#setup-link")
        expect(link).to_have_text("Set-up")
        colour, behind = page.evaluate(COLOURS, "#setup-link")
        ratio = contrast(colour, behind)
        print(f"\nthe Set-up link: {colour} on {behind}, contrast {ratio:.2f}")
        assert ratio >= 4.5, (colour, behind, ratio)
        page.close()
    finally:
        server.close()


def test_a_game_that_has_ended_is_said_without_a_link(tmp_path, pages):
    """A game started by the set-up page that has ended (its clip played out): its last
    line was where its table view was; the page says it ended and links nowhere."""
    setup = TableSetup(folder=tmp_path, run_port=0)
    # what ``tablesight run`` prints once its table view is up, then its end: exit 0
    line = "table view: http://127.0.0.1:9/"
    run = _Run([sys.executable, "-c", f"import sys; print({line!r}, file=sys.stderr)"])
    run.process.wait(timeout=30)
    run.wait(10)
    assert run.status == "ended (exit status 0)"  # not the address it no longer serves
    setup._run = run
    server = setup_server(setup, port=0).start()
    try:
        page = pages(server.url, 1280, 720)
        said = page.locator("#run")
        expect(said).to_have_text(re.compile(r"\S"))  # the page has said what the game is
        text = said.text_content()
        print(f"\n#run: {text}")
        expect(said.locator("a")).to_have_count(0)
        assert text.startswith("The game has ended (exit status 0). "), text
        assert "127.0.0.1:9" not in text, text
        expect(said).to_have_attribute("data-ended", "0")
        page.close()
    finally:
        server.close()
        setup.close()
