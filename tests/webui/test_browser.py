"""The pages in a real browser: Debian's Chromium through Playwright, against a real
waitress server refereeing a rendered clip as it plays.

The clip: the ganger at (10, 10) for two seconds, then at (17, 10) - a 7 in move of a
6 in allowance - with the brute at (30, 20) all along. One server, one game and one
browser serve the whole module, and the tests run in file order on that one game: the
charge of ``test_declare_a_charge_resolves_the_violation`` resolves the violation the
first test waits for, and the ticker test expects both.

Screenshots of each page are kept in ``$TABLESIGHT_ARTEFACTS`` (``tests/artefacts/``
unless set) for the README.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
import urllib.request
from pathlib import Path

import cv2
import numpy as np
import pytest

from tablesight.match.game import Game
from tablesight.vision.sources import FileSource
from tablesight.webui.serve import Server
from tablesight.webui.stream import STATE_HZ

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

ARTEFACTS = Path(
    os.environ.get("TABLESIGHT_ARTEFACTS") or Path(__file__).resolve().parents[1] / "artefacts"
)
#: Frames a second, as a webcam delivers them; the clip's two shots (seconds each) and
#: its last frame's number.
FPS = 30.0
STILL_S, MOVED_S = 2.0, 2.5
LAST_FRAME = round(STILL_S * FPS) + round(MOVED_S * FPS) - 1
#: "movement: 7.00 in / 6.00", possibly with "+/- 0.02" after the measure
FLAG = re.compile(r"movement: (\d+\.\d\d) in(?: \+/- \d+\.\d\d)? / 6\.00")

#: Each page notes the last state its stream brought (when, and the game's version then)
#: and counts them, so a test can tell when the stream has gone quiet.
STREAM_CLOCK = """
window.stream = { at: 0, version: -1, states: 0 };
const Native = window.EventSource;
window.EventSource = class extends Native {
  constructor(...args) {
    super(...args);
    this.addEventListener("state", (m) => {
      const states = window.stream.states + 1;
      window.stream = { at: performance.now(), version: JSON.parse(m.data).live.version, states };
    });
  }
};
"""


@pytest.fixture(scope="module")
def clip(footage, tmp_path_factory):
    """The camera, and a 4.5 s MJPG clip: 2 s with the ganger at (10, 10), then 2.5 s at
    (17, 10)."""
    camera, pics = footage
    video = tmp_path_factory.mktemp("clip") / "match.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), FPS, (1920, 1080))
    for picture, seconds in ((pics["start"], STILL_S), (pics["moved"], MOVED_S)):
        for _ in range(round(seconds * FPS)):
            writer.write(picture)
    writer.release()
    return camera, video


@pytest.fixture(scope="module")
def server(clip, setup, browser):
    """The game playing the clip at its own speed, served by waitress on a free port.

    Started after the browser so that the first page opens while the ganger still
    stands where it began."""
    _, video = clip
    game = Game(setup, FileSource(str(video)), paced=True)
    game.start()
    web = Server(game, "127.0.0.1", 0).start()
    yield web
    game.stop()
    web.close()


@pytest.fixture
def open_page(pages, server):
    """Opens a page of the server; fails the test on any JavaScript error or console error."""

    def opener(path: str, width: int = 1600, height: int = 1000):
        # the picture never completes (a stream), so no waiting for the load event
        url = server.url.rstrip("/") + path
        return pages(url, width, height, init_script=STREAM_CLOCK)

    return opener


def api(server, path: str):
    with urllib.request.urlopen(server.url.rstrip("/") + path, timeout=10) as response:
        return json.load(response)


def poll(page, check, what: str, wait_s: float = 20.0) -> None:
    """Until ``check()`` holds, asked every 50 ms for at most ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while not check():
        assert time.monotonic() < deadline, f"waited {wait_s:.0f} s for {what}"
        page.wait_for_timeout(50)


def wait_for_the_clip_to_end(page, server) -> None:
    """Until the game has played the clip's last frame: from then on nothing changes
    but what the test does."""
    poll(
        page,
        lambda: api(server, "/api/state")["live"]["frame"] == LAST_FRAME,
        "the clip's last frame",
    )


def wait_until_quiet(page, server, idle_s: float = 2 / STATE_HZ) -> None:
    """The clip played out, the page holding the game's newest state, and its stream
    idle for ``idle_s`` (by default twice its state interval): a change made now is the
    only one that stream has to send, and it sends it at once."""

    def quiet() -> bool:
        live = api(server, "/api/state")["live"]
        heard = page.evaluate("() => [window.stream.version, performance.now() - window.stream.at]")
        return (
            live["frame"] == LAST_FRAME and heard[0] == live["version"] and heard[1] > idle_s * 1000
        )

    poll(page, quiet, "the clip to end and the page's stream to go quiet")


def phases_started(server) -> int:
    return sum(e["kind"] == "phase_started" for e in api(server, "/api/events")["events"])


def artefact(page, name: str, **options) -> None:
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTEFACTS / name), **options)


def measured(text: str) -> float:
    found = FLAG.search(text)
    assert found, f"no 'movement: ... in / 6.00' in {text!r}"
    return float(found.group(1))


def test_table_view_draws_each_model_once_and_flags_the_long_move(open_page, server):
    page = open_page("/")
    broadcast = open_page("/broadcast", 1920, 1080)  # for its picture while the clip plays
    for svg in ("svg#overlay", "svg#map"):
        # one outline per model, on each of the two drawings
        expect(page.locator(f"{svg} path.base")).to_have_count(2)
        for model in ("ganger", "brute"):
            expect(page.locator(f'{svg} path.base[data-model="{model}"]')).to_have_count(1)
    # the move settles: 7 in moved ((10, 10) to (17, 10)) of the ganger's M 6 in
    label = page.locator("svg#overlay text.flag-label.violation")
    expect(label).to_have_count(1)
    flag_id = label.get_attribute("data-flag")
    assert 6.98 <= measured(label.text_content()) <= 7.02
    item = page.locator(f'#flags li[data-flag="{flag_id}"]')
    expect(item).to_have_class(re.compile(r"\bviolation\b"))
    assert item.text_content().startswith("ganger: ")
    assert 6.98 <= measured(item.text_content()) <= 7.02
    expect(item.locator("button.flag-accept")).to_have_text("accept")
    expect(item.locator("button.flag-dismiss")).to_have_text("dismiss")
    event = page.locator("#events li[data-kind=violation]")
    expect(event).to_have_count(1)
    # the event says it in words: "... moved 7.00 in ... 6.00 in ..."
    numbers = [float(v) for v in re.findall(r"\d+\.\d\d", event.text_content())]
    assert any(6.98 <= v <= 7.02 for v in numbers) and 6.0 in numbers, event.text_content()
    # the outlines are still one per model once the move is drawn
    for svg in ("svg#overlay", "svg#map"):
        expect(page.locator(f"{svg} path.base")).to_have_count(2)
    expect(page.locator('svg#overlay path.base.flagged[data-model="ganger"]')).to_have_count(1)
    expect(page.locator("#picture")).to_have_js_property("naturalWidth", 1920)
    artefact(page, "table.png")
    # the broadcast: the camera's picture, the flagged base and the violation on the ticker
    expect(broadcast.locator("#picture")).to_have_js_property("naturalWidth", 1920)
    expect(broadcast.locator("svg#overlay text.flag-label.violation")).to_have_count(1)
    expect(broadcast.locator("#ticker .tick.violation")).to_have_count(1)
    # for viewers, in words: "moved 7.00 in, allowed 6", the ticker naming the model
    caption = broadcast.locator("svg#overlay text.flag-label").text_content()
    found = re.fullmatch(r"moved (\d+\.\d\d) in, allowed 6", caption)
    assert found and 6.98 <= float(found.group(1)) <= 7.02, caption
    expect(broadcast.locator("#ticker .tick.violation")).to_have_text(f"ganger {caption}")
    artefact(broadcast, "broadcast.png")


def test_declare_a_charge_resolves_the_violation(open_page, server):
    page = open_page("/")
    violation = page.locator("#flags li.violation")
    expect(violation).to_have_count(1)  # the long move of the test above
    flag_id = violation.get_attribute("data-flag")
    wait_until_quiet(page, server)
    # until chosen, the action is a plain move (Necromunda's actions: charge, move)
    expect(page.locator("#action option")).to_have_text(["charge", "move"])
    expect(page.locator("#action")).to_have_value("move")
    # a charge is M + D3 in Necromunda: 6 + 1 = 7 in, and the 7 in move is legal: its
    # full distance, as a charge that falls short must move
    page.select_option("#model", "ganger")
    page.select_option("#action", "charge")
    page.select_option("#target", "brute")
    page.fill("#roll", "1")
    page.click("#declare")
    expect(page.locator(f'#flags li[data-flag="{flag_id}"]')).to_have_count(0)
    expect(page.locator(f'svg#overlay text.flag-label[data-flag="{flag_id}"]')).to_have_count(0)
    resolved = page.locator("#events li[data-kind=resolved]")
    expect(resolved).to_have_count(1)
    expect(resolved).to_contain_text("no longer: ganger moved 7.00")
    expect(page.locator("#message")).to_have_text("")
    # what is left: the charge ended short of the brute - centres (17, 10) and (30, 20),
    # edges sqrt(13^2 + 10^2) - 1 = 15.40 in apart, where a charge ends within 1 in
    [item] = page.locator("#flags li").all()
    expect(item).to_have_class(re.compile(r"\badvisory\b"))
    found = re.match(r"ganger: charge: (\d+\.\d\d) in / 1\.00 ", item.text_content())
    assert found, item.text_content()
    assert float(found.group(1)) == pytest.approx(math.hypot(13, 10) - 1.0, abs=0.05)
    expect(page.locator("svg#overlay text.flag-label")).to_have_count(1)
    expect(page.locator("svg#overlay text.flag-label.advisory")).to_have_text(
        re.compile(r"^charge: \d+\.\d\d in / 1\.00$")
    )


def test_measure_between_two_bases_and_to_a_point(open_page):
    page = open_page("/")
    expect(page.locator("svg#map path.base")).to_have_count(2)
    page.click("#measure-button")
    expect(page.locator("#measure-button")).to_have_class(re.compile(r"\bactive\b"))
    page.click('svg#map path.base[data-model="ganger"]')
    page.click('svg#map path.base[data-model="brute"]')
    out = page.locator("output#measure")
    expect(out).to_contain_text("ganger to brute: ")
    found = re.fullmatch(r"ganger to brute: (\d+\.\d\d) in \+/- (\d+\.\d\d)", out.text_content())
    assert found, out.text_content()
    # centres (17, 10) and (30, 20), 1 in round bases: sqrt(13^2 + 10^2) - 2 * 0.5 = 15.40
    assert float(found.group(1)) == pytest.approx(math.hypot(13, 10) - 1.0, abs=0.05)
    assert 0 < float(found.group(2)) <= 0.05
    expect(page.locator("#measure-button")).not_to_have_class(re.compile(r"\bactive\b"))

    # from the ganger to the table point (20, 10) of the map: 3 in from its centre
    # the table's edge on the map, 44 x 30 in with y up, where the page has it now
    edge = page.evaluate(
        """() => { const r = document.querySelector('svg#map rect.table-edge')
                                  .getBoundingClientRect();
                   return {x: r.x, y: r.y, width: r.width, height: r.height}; }"""
    )
    page.click("#measure-button")
    page.click('svg#map path.base[data-model="ganger"]')
    page.mouse.click(
        edge["x"] + 20 / 44 * edge["width"], edge["y"] + (30 - 10) / 30 * edge["height"]
    )
    expect(out).to_contain_text("ganger to (")
    found = re.fullmatch(
        r"ganger to \((\d+\.\d\d), (\d+\.\d\d)\): (\d+\.\d\d) in \+/- \d+\.\d\d",
        out.text_content(),
    )
    assert found, out.text_content()
    x, y, distance = (float(v) for v in found.groups())
    # the click lands within a map pixel (under 0.1 in here) of (20, 10) ...
    assert (x, y) == (pytest.approx(20, abs=0.1), pytest.approx(10, abs=0.1))
    # ... and the distance is from the base's edge: |(x, y) - (17, 10)| - 0.5
    assert distance == pytest.approx(math.hypot(x - 17, y - 10) - 0.5, abs=0.05)


def test_overlay_is_transparent_but_for_the_shapes(open_page, clip):
    camera, _ = clip
    page = open_page("/overlay", 1920, 1080)
    expect(page.locator("svg#overlay path.base")).to_have_count(2)
    artefact(page, "overlay.png", omit_background=True)
    png = page.screenshot(omit_background=True)
    picture = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_UNCHANGED)
    assert picture.shape == (1080, 1920, 4)
    # the top left corner: above the table's far edge, no model within 500 px of it
    centres = camera.project(np.array([[17.0, 10.0, 0.0], [30.0, 20.0, 0.0]])).reshape(-1, 2)
    assert np.linalg.norm(centres - [20, 20], axis=1).min() > 500
    assert picture[20, 20, 3] == 0
    # the brute's base, 1 in across at (30, 20): its edge point (30.5, 20) through the lens
    u, v = camera.project(np.array([[30.5, 20.0, 0.0]])).reshape(2)
    assert picture[round(v), round(u), 3] > 0
    # and its centre too (the base is filled, faintly)
    u, v = camera.project(np.array([[30.0, 20.0, 0.0]])).reshape(2)
    assert picture[round(v), round(u), 3] > 0


def test_broadcast_fits_1920x1080_with_the_overlay_and_the_ticker(open_page, server):
    page = open_page("/broadcast", 1920, 1080)
    expect(page.locator("svg#overlay path.base")).to_have_count(2)
    # what is current, newest first: by now the charge's advisory (short of the brute; the
    # long move's violation was resolved by that charge), then the phase being played
    state = api(server, "/api/state")
    [advisory] = [f for f in state["flags"] if not f["decision"]]
    ticks = page.locator("#ticker .tick")
    expect(ticks).to_have_text([advisory["headline"], state["session"]["headline"]])
    assert re.fullmatch(
        r"ganger's charge fell short: \d+\.\d\d in from brute, needed 1", advisory["headline"]
    ), advisory["headline"]
    expect(ticks.first).to_have_class(re.compile(r"\badvisory\b"))
    sizes = page.evaluate(
        """() => [document.documentElement, document.body].map(
               (e) => [e.scrollWidth, e.scrollHeight])"""
    )
    for width, height in sizes:
        assert width <= 1920 and height <= 1080, sizes


def test_broadcast_shows_the_picture_when_the_clip_has_ended(open_page, server):
    page = open_page("/broadcast", 1920, 1080)
    wait_for_the_clip_to_end(page, server)  # the last frame is the newest, and stays so
    expect(page.locator("#picture")).to_have_js_property("naturalWidth", 1920, timeout=5000)


def test_keyboard_help_and_m_starts_a_movement_phase(open_page, server):
    page = open_page("/")
    started = page.locator("#events li[data-kind=phase_started]")
    expect(started).to_have_count(1)  # the one at the clip's first frame
    page.keyboard.press("?")
    help_ = page.locator("dialog#help")
    expect(help_).to_be_visible()
    expect(help_.locator("dt")).to_have_text(["m", "e", "n", "s", "t", "d", "a / x", "Esc", "?"])
    expect(help_.locator("dd").first).to_have_text("start a movement phase")
    page.keyboard.press("Escape")
    expect(help_).to_be_hidden()
    wait_until_quiet(page, server)
    page.keyboard.press("m")
    expect(started).to_have_count(2)
    expect(page.locator("#phase")).to_contain_text("movement")


def test_events_told_while_the_stream_waits_all_reach_the_page(open_page, server, monkeypatch):
    # a state at most every 2 s, so that the last two presses below surely fall in one wait
    monkeypatch.setattr("tablesight.webui.stream.STATE_HZ", 0.5)
    page = open_page("/")
    wait_until_quiet(page, server, idle_s=2.5)
    started = page.locator("#events li[data-kind=phase_started]")
    before = phases_started(server)
    expect(started).to_have_count(before)
    # "m" three times: the first phase's state comes at once; the second phase starts
    # while the stream waits out its interval before it may send another, and the third
    # half a second later, in that same wait
    page.evaluate(
        """async () => {
            const m = () => document.dispatchEvent(new KeyboardEvent("keydown", { key: "m" }));
            const until = (ok) => new Promise((done) => {
                const poll = () => (ok() ? done() : setTimeout(poll, 2));
                poll();
            });
            const states = window.stream.states;
            m();
            await until(() => window.stream.states > states);
            m();
            await new Promise((done) => setTimeout(done, 500));
            m();
        }"""
    )
    # all three phases started: the game says so ...
    poll(page, lambda: phases_started(server) == before + 3, "three new phases")
    # ... and so does the page, within the stream's interval
    expect(started).to_have_count(before + 3, timeout=5000)


def test_js_projection_agrees_with_opencv(open_page, server):
    page = open_page("/")
    page.wait_for_function("() => typeof TS === 'object'")
    cam = api(server, "/api/state")["camera"]
    points = np.array(
        [[0, 0], [44, 0], [44, 30], [0, 30], [22, 15], [17, 10], [30, 20], [3.25, 27.5]],
        dtype=np.float64,
    )
    project = """([cam, points]) => {
        const f = TS.projector(cam);
        return points.map(([x, y]) => f(x, y));
    }"""

    def opencv(cam):
        rvec, _ = cv2.Rodrigues(np.array(cam["rotation"]))
        out, _ = cv2.projectPoints(
            np.hstack([points, np.zeros((len(points), 1))]),
            rvec,
            np.array(cam["translation"]),
            np.array(cam["camera_matrix"]),
            np.array(cam["dist_coeffs"]),
        )
        return out.reshape(-1, 2)

    # the live mapping: the solved pose and the lens's five distortion terms
    ours = np.array(page.evaluate(project, [cam, points.tolist()]))
    assert np.abs(ours - opencv(cam)).max() < 0.01
    # all of OpenCV's twelve terms: radial k1-k6 (rational), tangential, thin prism
    full = dict(
        cam,
        dist_coeffs=[-0.12, 0.05, 5e-4, -3e-4, 0.01, 0.02, -0.01, 0.005, 1e-3, -5e-4, 7e-4, 2e-4],
    )
    ours = np.array(page.evaluate(project, [full, points.tolist()]))
    assert np.abs(ours - opencv(full)).max() < 0.01
    # a table mapped without intrinsics: a homography, as cv2.perspectiveTransform applies it
    h = np.array([[40.0, 5.0, 100.0], [-3.0, -30.0, 1000.0], [1e-3, 2e-3, 1.0]])
    ours = np.array(page.evaluate(project, [{"homography": h.tolist()}, points.tolist()]))
    theirs = cv2.perspectiveTransform(points.reshape(-1, 1, 2), h).reshape(-1, 2)
    assert np.abs(ours - theirs).max() < 0.01


def test_the_pose_panel_and_where_a_model_stands(open_page):
    page = open_page("/")
    pose = page.locator("#pose")
    expect(pose).to_have_class("pose-ok")
    found = re.match(
        r"Table pose: (\d+\.\d\d) px \((\d\.\d\d\d) in\) from anchors 0, 1, 2, 3$",
        pose.locator("div").first.text_content(),
    )
    assert found, pose.text_content()
    # a sound pose of the rendered table: under 2 px, under 0.1 in on the table
    assert 0 < float(found.group(1)) < 2.0 and 0 < float(found.group(2)) < 0.1
    # the ganger's card says it stands on the table (its marker measured there)
    page.click('svg#map path.base[data-model="ganger"]')
    expect(page.locator("#info h2")).to_have_text("ganger")
    expect(page.locator("#info")).to_contain_text("on the table")
