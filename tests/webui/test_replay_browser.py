"""The replay viewer in a real browser: Debian's Chromium through Playwright, against
``tablesight replay`` serving a match recorded by ``tablesight run --record``.

The clip (``match_files`` in tests/conftest.py): 30 frames at 30 fps, the ganger at (10, 10)
for frames 0-14 and at (17, 10) from frame 15 on - a 7 in move of its 6 in - with the
brute at (30, 20) all along. The referee sees the move once it has stood still for 0.3 s:
the violation is at frame 24 (0.8 s). One server serves the module and the tests run in
file order; the last of them re-judges the match (a new revision).

The Necromunda sample (samples/necromunda, recorded by ``tablesight analyze --script``) is
served by a replay of its own, for a re-judge as a user makes it on a real gang's move.
"""

from __future__ import annotations

import contextlib
import math
import re
import signal
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

#: "movement: 7.00 in / 6.00"
VIOLATION = re.compile(r"^movement: (\d+\.\d\d) in / 6\.00$")
#: The end of the clip: frame 29.
END_T = 29 / 30


@pytest.fixture(scope="module")
def recorded(match_files, tablesight, tmp_path_factory):
    """The clip refereed by ``tablesight run --record``: the match file and its video."""
    video, args = match_files
    db = tmp_path_factory.mktemp("recorded") / "match.db"
    ran = tablesight("run", "--source", str(video), *args, "--port", "0", "--record", str(db))
    assert ran.returncode == 0, ran.stderr
    assert db.with_suffix(".avi").is_file()
    return db


@contextlib.contextmanager
def replaying(tablesight_command, db: Path):
    """``tablesight replay match.db --port 0 --no-browser``; its URL from the line it
    prints."""
    process = subprocess.Popen(
        [*tablesight_command, "replay", str(db), "--port", "0", "--no-browser"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.fullmatch(r"replay: (http://127\.0\.0\.1:\d+/replay)\n", line)
        assert found, line
        yield found.group(1)
    finally:
        process.send_signal(signal.SIGINT)  # Ctrl-C: the server stops, and says nothing
        code = process.wait(timeout=10)
        rest = process.stderr.read() if process.stderr is not None else ""
        if process.stderr is not None:
            process.stderr.close()
    assert (code, rest) == (0, "")


@pytest.fixture(scope="module")
def server(recorded, tablesight_command):
    """The clip's replay; its URL."""
    with replaying(tablesight_command, recorded) as url:
        yield url


@pytest.fixture
def open_page(pages, server):
    """Opens the replay page (with a query); fails the test on any JavaScript error or
    console error."""

    def opener(query: str = "", refused: bool = False):
        """``refused``: the page is expected to have a request refused (a 400 answer)."""
        allow = ("status of 400",) if refused else ()
        return pages(server + query, allow=allow, wait_until="load")

    return opener


def frame_shown(page, index: int) -> None:
    expect(page.locator("#clock")).to_contain_text(f", frame {index}")


def test_the_next_flag_by_keyboard_shows_the_overlay_of_that_moment(open_page):
    page = open_page("?time=0")
    frame_shown(page, 0)
    expect(page.locator("svg#overlay path.base")).to_have_count(0)  # nobody settled yet
    # one mark on the timeline per event, the violation's at 0.8 of 0.967 s
    marks = page.locator("#marks .mark")
    expect(marks).to_have_count(3)
    mark = page.locator("#marks .mark.violation")
    left = float(mark.evaluate("(m) => m.style.left").rstrip("%"))
    assert left == pytest.approx(100 * 0.8 / END_T, abs=0.01)

    page.keyboard.press("n")
    frame_shown(page, 24)
    expect(page.locator("#clock")).to_contain_text("0.80 s of 0.97 s")
    label = page.locator("svg#overlay text.flag-label.violation")
    expect(label).to_have_count(1)
    found = VIOLATION.match(label.text_content() or "")
    assert found, label.text_content()
    assert 6.98 <= float(found.group(1)) <= 7.02  # (10, 10) to (17, 10)
    expect(page.locator('svg#overlay path.base.flagged[data-model="ganger"]')).to_have_count(1)
    # the picture of that moment, and the address to come back to it
    picture = page.locator("#picture")
    expect(picture).to_have_attribute("src", "/replay/frame.jpg?t=0.8")
    expect(picture).to_have_js_property("naturalWidth", 1920)
    assert page.url.endswith("/replay?time=0.8")
    expect(page.locator("#timeline")).to_have_value("0.8")
    expect(page.locator("#flags li.violation")).to_have_count(1)

    # a frame back: not yet flagged; no flag before it; the next flag again
    page.keyboard.press("ArrowLeft")
    frame_shown(page, 23)
    expect(page.locator("svg#overlay text.flag-label")).to_have_count(0)
    page.keyboard.press("ArrowDown")
    expect(page.locator("#message")).to_have_text("no flag before this moment")
    page.keyboard.press("ArrowUp")
    frame_shown(page, 24)
    expect(label).to_have_count(1)
    page.keyboard.press("End")
    frame_shown(page, 29)
    page.keyboard.press("Home")
    frame_shown(page, 0)
    page.keyboard.press("Shift+ArrowRight")  # a second on: past the end, so the end
    frame_shown(page, 29)
    page.keyboard.press("Shift+ArrowLeft")
    frame_shown(page, 0)


def test_a_time_link_opens_that_moment(open_page, footage):
    camera, _ = footage
    page = open_page("?time=0.4")
    frame_shown(page, 12)
    expect(page.locator("#clock")).to_contain_text("0.40 s of 0.97 s")
    expect(page.locator("#timeline")).to_have_value("0.4")
    picture = page.locator("#picture")
    expect(picture).to_have_attribute("src", "/replay/frame.jpg?t=0.4")
    expect(picture).to_have_js_property("naturalWidth", 1920)
    assert page.url.endswith("/replay?time=0.4")
    # the overlay of that moment: both bases where the camera that rendered the clip
    # puts them, and no flag
    expect(page.locator("svg#overlay path.base")).to_have_count(2)
    expect(page.locator("svg#overlay text.flag-label")).to_have_count(0)
    for model, xy in (("ganger", (10.0, 10.0)), ("brute", (30.0, 20.0))):
        box = page.locator(f'svg#overlay path.base[data-model="{model}"]').evaluate(
            "(p) => { const b = p.getBBox(); return [b.x + b.width / 2, b.y + b.height / 2]; }"
        )
        u, v = camera.project([[xy[0], xy[1], 0.0]]).reshape(2)
        assert math.hypot(box[0] - u, box[1] - v) < 3.0, (model, box, (u, v))
    # the events up to then are marked as past
    expect(page.locator("#events li.past")).to_have_count(1)
    expect(page.locator("#events li.now")).to_have_attribute("data-kind", "phase_started")

    # a time outside the footage is said, and the page opens anyway
    page = open_page("?time=5", refused=True)
    expect(page.locator("#message")).to_have_text(
        "t: expected seconds from 0.000 to 0.967, got 5.0"
    )
    expect(page.locator("#clock")).to_contain_text(", frame ")


def test_space_plays_to_the_end_and_pauses(open_page):
    page = open_page("?time=0")
    frame_shown(page, 0)
    page.keyboard.press(" ")
    expect(page.locator("#play")).to_have_text("Pause")
    frame_shown(page, 29)  # played through the clip, and stopped at its end
    expect(page.locator("#play")).to_have_text("Play")
    page.keyboard.press("Home")
    frame_shown(page, 0)
    page.keyboard.press(" ")
    page.keyboard.press(" ")
    expect(page.locator("#play")).to_have_text("Play")


def test_re_judge_a_charge_and_measure_at_that_moment(open_page):
    page = open_page("?time=0.4")
    frame_shown(page, 12)
    expect(page.locator("#revision")).to_have_text("live record")
    expect(page.locator("#action option")).to_have_text(["charge", "move"])
    page.select_option("#model", "ganger")
    page.select_option("#action", "charge")
    page.select_option("#target", "brute")
    page.fill("#roll", "1")
    page.click("#declare")
    expect(page.locator("#revision")).to_have_text(
        "revision 1: ganger declared charge on brute, roll 1 at 0.40 s (frame 12); "
        "judged again from revision 0"
    )
    # M 6 + D3 of 1 = 7 in: the 7 in move is no violation (its full distance); the charge
    # ends short of the brute, edges sqrt(13^2 + 10^2) - 1 = 15.40 in apart where 1 in is
    # needed
    expect(page.locator("#events li.violation")).to_have_count(0)
    expect(page.locator("#marks .mark")).to_have_count(3)
    expect(page.locator("#marks .mark.advisory")).to_have_count(1)
    page.keyboard.press("n")
    frame_shown(page, 24)
    label = page.locator("svg#overlay text.flag-label")
    expect(label).to_have_count(1)
    expect(label).to_have_class(re.compile(r"\badvisory\b"))
    found = re.fullmatch(r"charge: (\d+\.\d\d) in / 1\.00", label.text_content() or "")
    assert found, label.text_content()
    assert float(found.group(1)) == pytest.approx(math.hypot(13, 10) - 1.0, abs=0.05)

    # only the charge's events, by rule
    page.select_option("#filter-rule", "charge")
    expect(page.locator("#events li")).to_have_count(1)
    expect(page.locator("#events li")).to_have_attribute("data-kind", "advisory")
    expect(page.locator("#marks .mark")).to_have_count(1)

    # the measuring tool on the moment shown
    page.click("#measure-button")
    page.click('svg#map path.base[data-model="ganger"]')
    page.click('svg#map path.base[data-model="brute"]')
    out = page.locator("output#measure")
    expect(out).to_contain_text("ganger to brute: ")
    found = re.fullmatch(r"ganger to brute: (\d+\.\d\d) in \+/- \d+\.\d\d", out.text_content())
    assert found, out.text_content()
    assert float(found.group(1)) == pytest.approx(math.hypot(13, 10) - 1.0, abs=0.05)


# -- the Necromunda sample ------------------------------------------------------------------

NECROMUNDA = Path(__file__).resolve().parents[2] / "samples" / "necromunda"
#: How long a person holds the button for a click (ms), and pauses between two actions.
HOLD_MS, PAUSE_MS = 120, 400


@pytest.fixture(scope="module")
def necromunda_server(tablesight, tablesight_command, sample_options, tmp_path_factory):
    """The Necromunda sample's match, recorded by ``tablesight analyze --script`` as its
    README says, and its replay; the replay's URL."""
    db = tmp_path_factory.mktemp("necromunda") / "match.db"
    ran = tablesight(
        "analyze",
        str(NECROMUNDA / "match.mp4"),
        *sample_options("necromunda"),
        "--script",
        str(NECROMUNDA / "session.toml"),
        "-o",
        str(db),
    )
    assert ran.returncode == 0, ran.stderr
    with replaying(tablesight_command, db) as url:
        yield url


def press(page, target) -> None:
    """A person's click on ``target``: the pointer onto it, the button held, released,
    and a pause to read what it did."""
    target.scroll_into_view_if_needed()
    box = target.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, steps=8)
    page.wait_for_timeout(PAUSE_MS // 2)
    page.mouse.down()
    page.wait_for_timeout(HOLD_MS)
    page.mouse.up()
    page.wait_for_timeout(PAUSE_MS)


#: The card's move: "moved 5.74 in of 6.00 (straight 5.74)".
CARD_MOVE = re.compile(r"moved (\d+\.\d\d) in of (\d+\.\d\d) \(straight \d+\.\d\d\)")
#: A flag's label: "movement: 5.74 in / 5.00".
MOVEMENT_FLAG = re.compile(r"movement: (\d+\.\d\d) in / (\d+\.\d\d)")


def test_a_re_judged_move_shows_one_allowance_on_the_card_and_the_flag(pages, necromunda_server):
    """Issue 28 item 6: nyx re-judged as a move, its card said "moved 5.73 in of 6.00" (the
    charge's allowance, from before the re-judge) while its flag said "5.73 / 5.00"."""
    page = pages(necromunda_server + "?time=0", wait_until="load")
    expect(page.locator("#clock")).to_contain_text(", frame 0")
    page.wait_for_timeout(PAUSE_MS)

    # to nyx's charge: its move's event in the list, then nyx on the map
    press(page, page.locator("#events li", has_text="nyx moved"))
    expect(page.locator("#flags li", has_text="nyx: charge:")).to_have_count(1)
    press(page, page.locator('svg#map path.base[data-model="nyx"]'))
    card = page.locator("#info")
    expect(card.locator("h2")).to_have_text("nyx")
    expect(page.locator("#model")).to_have_value("nyx")
    # as charged: nyx's Movement 5 (roster.toml) plus the D3 roll of 1 (session.toml) = 6 in
    found = CARD_MOVE.search(card.inner_text())
    assert found, card.inner_text()
    assert float(found.group(2)) == 6.0

    # re-judged as a plain move with the page's controls
    page.select_option("#action", "move")
    page.wait_for_timeout(PAUSE_MS)
    expect(page.locator("#target")).to_have_value("")
    expect(page.locator("#roll")).to_have_value("")
    press(page, page.locator("#declare"))
    expect(page.locator("#revision")).to_contain_text("nyx declared move at ")
    expect(page.locator("#message")).to_have_text(re.compile(r"^revision \d+ saved$"))
    flag = page.locator("#flags li", has_text="nyx: movement:")
    expect(flag).to_have_count(1)
    expect(page.locator("#flags li", has_text="nyx: charge:")).to_have_count(0)
    page.wait_for_timeout(PAUSE_MS)  # a person reads the card and the flag

    # a plain move allows nyx's Movement: 5 in (roster.toml: movement = 5); it went from
    # (3, 14.5) to (3, 8.76) (storyboard.toml): 14.5 - 8.76 = 5.74 in
    shown = card.inner_text()
    on_card = CARD_MOVE.search(shown)
    assert on_card, shown
    flag_id = flag.get_attribute("data-flag")
    texts = {
        "flag list": flag.locator(".flag-what").inner_text(),
        "map label": page.locator(f'svg#map text.flag-label[data-flag="{flag_id}"]').text_content(),
    }
    for where, text in texts.items():
        on_flag = MOVEMENT_FLAG.search(text)
        assert on_flag, (where, text)
        assert float(on_flag.group(2)) == 5.0, (where, text)
        assert float(on_flag.group(1)) == pytest.approx(14.5 - 8.76, abs=0.05), (where, text)
    assert float(on_card.group(2)) == 5.0, shown
    assert float(on_card.group(1)) == pytest.approx(14.5 - 8.76, abs=0.05), shown
