"""Where can it go, in a real browser (Debian's Chromium through Playwright), used as a
person uses the pages: clicks held for 120 ms, a pause between them, taps on a phone.

The two-model table (``played_game``): the ganger went from (10, 10) to (17, 10), 7 in of
its 6 (flagged), the brute stands at (30, 20), both on 1 in bases; nothing else is near,
so the ganger's reach from where it stands is a disc of 6 + 0.05 in (the referee's
tolerance) round (17, 10). The Necromunda sample's first frames (twelve models, two sides
of six) show a side's reach on the broadcast.

What is drawn is measured against what it should be, worked out apart from the page: the
shaded outline on the map is read back to table inches and its distance from the model
taken; on the picture, the same disc is put through OpenCV's projection with the state's
camera and onto the screen by the drawing's own transform, and compared with the outline
drawn. Labels stay readable: every label over the shading is drawn above it (its letters'
pixels are the same, shading shown or hidden), and none is left off for it. Each test
prints its figures (``-s``).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import urllib.request
from pathlib import Path

import cv2
import numpy as np
import pytest
from shapely.geometry import Point, Polygon, box

from tablesight.match.game import Game
from tablesight.match.replay import Replay
from tablesight.vision.sources import FileSource
from tablesight.webui.serve import Server

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples" / "necromunda"
#: How long a person waits between two clicks (ms).
PAUSE_MS = 600
#: From the press on a model to its reach drawn, at most (ms).
SHOWN_MS = 300
#: The ganger's reach from where it stands: its 6 in and the tolerance.
REACH_IN = 6.0 + 0.05

#: From the next press to the shading of ``model`` drawn on the picture: the press's
#: time, then the time of the second animation frame after the shading appeared (the
#: first after it was painted), in ``window.__reach``.
TIMED = """(model) => {
  window.__reach = { model, down: null, drawn: null };
  if (window.__timing) return;
  window.__timing = true;
  document.addEventListener("pointerdown", () => {
    const model = window.__reach.model;
    window.__reach = { model, down: performance.now(), drawn: null, seen: false };
  }, { capture: true });
  new MutationObserver(() => {
    const r = window.__reach;
    const sel = `svg#overlay g.shade path[data-reach-of="${r.model}"]`;
    if (r.down === null || r.seen || !document.querySelector(sel)) return;
    r.seen = true;
    requestAnimationFrame(() => requestAnimationFrame(() => { r.drawn = performance.now(); }));
  }).observe(document.querySelector("svg#overlay"), { subtree: true, childList: true });
}"""

#: A drawing's shading: each reach's rings (the drawing's units), its screen transform.
SHADING = """(sel) => {
  const svg = document.querySelector(sel), m = svg.getScreenCTM();
  return { ctm: [m.a, m.b, m.c, m.d, m.e, m.f],
           areas: [...svg.querySelectorAll("g.shade path")].map((p) => ({
             of: p.dataset.reachOf, kind: p.dataset.kind, d: p.getAttribute("d") })),
           threatened: [...svg.querySelectorAll("g.shade-edge path.threatened")].map(
             (p) => p.dataset.threatened) };
}"""

#: Every label shown on a drawing: its key, text, box on the screen and letters' colour.
LABELS = """(sel) => [...document.querySelectorAll(`${sel} g.labels text`)]
  .filter((t) => getComputedStyle(t).display !== "none")
  .map((t) => {
    const r = t.getBoundingClientRect();
    return { key: t.dataset.key, text: t.textContent, box: [r.left, r.top, r.right, r.bottom],
             fill: getComputedStyle(t).fill,
             above: Boolean(t.compareDocumentPosition(
               document.querySelector(`${sel} g.shade`)) & Node.DOCUMENT_POSITION_PRECEDING) };
  })"""


def rings_of(d: str) -> list[np.ndarray]:
    """An SVG path's subpaths (``M x y L x y ... Z``) as arrays of points."""
    out = []
    for part in d.split("M")[1:]:
        nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", part)]
        out.append(np.asarray(nums).reshape(-1, 2))
    return out


def fetch(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


def on_screen(ctm: list[float], uv: np.ndarray) -> np.ndarray:
    a, b, c, d, e, f = ctm
    return np.column_stack([a * uv[:, 0] + c * uv[:, 1] + e, b * uv[:, 0] + d * uv[:, 1] + f])


def disc(x: float, y: float, r: float, n: int = 360) -> np.ndarray:
    a = np.linspace(0, 2 * math.pi, n, endpoint=False)
    return np.column_stack([x + r * np.cos(a), y + r * np.sin(a)])


def shown_reach(page, model: str, person) -> float:
    """Times a press on ``model``'s base on the picture until its reach is drawn (ms)."""
    page.evaluate(TIMED, model)
    person.click(page, page.locator(f'svg#overlay path.base[data-model="{model}"]'))
    page.wait_for_function("() => window.__reach.drawn !== null")
    timed = page.evaluate("() => window.__reach")
    return float(timed["drawn"] - timed["down"])


@pytest.fixture
def served(played_game):
    server = Server(played_game, "127.0.0.1", 0).start()
    yield server
    server.close()


def test_a_click_shows_a_models_reach_within_300_ms_and_a_second_hides_it(served, pages, person):
    page = pages(served.url, 1600, 1000)
    shading = page.locator('g.shade path[data-reach-of="ganger"]')
    expect(page.locator('svg#overlay path.base[data-model="ganger"]')).to_have_count(1)
    page.wait_for_timeout(PAUSE_MS)
    times = []
    for _ in range(3):  # shown, hidden, shown again, hidden...
        times.append(shown_reach(page, "ganger", person))
        expect(shading).to_have_count(2)  # on the picture and on the map
        expect(page.locator("#reach-bar .reach-explain")).to_have_text(
            re.compile(r'^ganger may end its move \(6\.00"\) on 11[45]\.\d sq in of table')
        )
        expect(page.locator('#reach-bar button[data-choice="move"]')).to_have_attribute(
            "aria-pressed", "true"
        )
        page.wait_for_timeout(PAUSE_MS)
        if len(times) == 1:
            measured_against_the_disc(page, fetch(served.url + "api/state"), person)
        person.click(page, page.locator('svg#map path.base[data-model="ganger"]'))
        expect(shading).to_have_count(0)
        expect(page.locator("#reach-bar")).to_be_hidden()
        expect(page.locator("#info h2")).to_have_text("ganger")  # still selected
        page.wait_for_timeout(PAUSE_MS)
    print(f"\nfrom the press to the reach drawn: {', '.join(f'{t:.0f}' for t in times)} ms")
    assert max(times) < SHOWN_MS, times

    # Esc: nothing selected, nothing shaded
    shown_reach(page, "ganger", person)
    page.keyboard.press("Escape")
    expect(shading).to_have_count(0)


def measured_against_the_disc(page, state: dict, person) -> None:
    """The ganger's shading: on the map, 6.05 in from where it stands all round; on the
    picture, the same disc as OpenCV projects it."""
    ganger = next(m for m in state["models"] if m["id"] == "ganger")
    x, y, depth = ganger["x"], ganger["y"], state["table"]["depth_in"]
    drawn = page.evaluate(SHADING, "svg#map")
    [area] = [a for a in drawn["areas"] if a["of"] == "ganger"]
    outer = max(rings_of(area["d"]), key=len)
    far = np.hypot(outer[:, 0] - x, (depth - outer[:, 1]) - y)
    print(f"\nmap: the outline {far.min():.3f}-{far.max():.3f} in from the ganger")
    assert far.min() > REACH_IN - 0.02 and far.max() < REACH_IN + 0.02

    drawn = page.evaluate(SHADING, "svg#overlay")
    [area] = [a for a in drawn["areas"] if a["of"] == "ganger"]
    outer = max(rings_of(area["d"]), key=len)
    shaded = Polygon(on_screen(drawn["ctm"], outer))
    truth = Polygon(on_screen(drawn["ctm"], person.project(state, disc(x, y, REACH_IN))))
    apart = shaded.hausdorff_distance(truth)
    print(
        f"picture: {shaded.area:.0f} px^2 shaded, {truth.area:.0f} projected, {apart:.2f} px apart"
    )
    assert shaded.area == pytest.approx(truth.area, rel=0.01) and apart < 2.0


def test_no_label_under_the_shading_becomes_unreadable(served, pages, person):
    page = pages(served.url, 1600, 1000)
    expect(page.locator("svg#overlay text.flag-label")).to_have_count(1)
    page.wait_for_timeout(PAUSE_MS)
    shown_reach(page, "ganger", person)
    expect(page.locator('svg#overlay g.shade path[data-reach-of="ganger"]')).to_have_count(1)
    page.wait_for_timeout(PAUSE_MS)  # the labels are placed
    state = fetch(served.url + "api/state")
    found = fetch(served.url + "api/reach?model=ganger")
    ctm = page.evaluate(SHADING, "svg#overlay")["ctm"]
    # the region as OpenCV puts it on the screen
    region = Polygon(
        on_screen(ctm, person.project(state, np.asarray(found["geometry"]["coordinates"][0][0])))
    )
    labels = page.evaluate(LABELS, "svg#overlay")
    with_shading = page.screenshot()
    person.click(page, page.locator('svg#map path.base[data-model="ganger"]'))
    expect(page.locator("svg#overlay g.shade path")).to_have_count(0)
    page.wait_for_timeout(PAUSE_MS)
    without = page.screenshot()
    after = page.evaluate(LABELS, "svg#overlay")
    # the same labels, where they were: the shading moves none and leaves none off
    assert [(a["key"], a["text"]) for a in after] == [(a["key"], a["text"]) for a in labels]
    for a, b in zip(labels, after, strict=True):
        assert a["box"] == pytest.approx(b["box"], abs=0.5), (a, b)
    shot = [
        cv2.imdecode(np.frombuffer(s, np.uint8), cv2.IMREAD_COLOR) for s in (with_shading, without)
    ]
    under = 0
    for lab in labels:
        if not region.intersects(box(*lab["box"])):
            continue
        under += 1
        assert lab["above"], lab  # drawn after the shading: over it
        # its letters: the pixels of its colour without the shading; the same with it
        r, g, b = (int(v) for v in re.findall(r"\d+", lab["fill"])[:3])
        left, top, right, bottom = (round(v) for v in lab["box"])
        crops = [s[top:bottom, left:right].astype(int) for s in shot]
        letters = np.abs(crops[1] - [b, g, r]).max(axis=2) <= 24
        changed = np.abs(crops[0] - crops[1]).max(axis=2)[letters]
        print(f"\n{lab['text']!r}: {letters.sum()} letter pixels, most changed {changed.max()}")
        assert letters.sum() > 20 and changed.max() <= 24, lab
    assert under >= 2  # the ganger's name and its flag lie in its reach


@contextlib.contextmanager
def two_models(setup, tmp_path, pages, ganger, brute):
    """A game with no picture (the map is drawn) where the ganger and the brute stand at
    the given places, served, and its table view open: (the game, the page)."""
    from tablesight.rules.geometry import Pose

    cv2.imwrite(str(tmp_path / "0.png"), np.zeros((8, 8, 3), np.uint8))
    game = Game(setup, FileSource(str(tmp_path)))
    with game.lock:
        game.session.seen("ganger", Pose(*ganger))
        game.session.seen("brute", Pose(*brute))
    server = Server(game, "127.0.0.1", 0).start()
    page = None
    try:
        page = pages(server.url, 1600, 1000)
        yield game, page
    finally:
        if page is not None:  # before the server goes: its stream ends with the page
            page.close()
        server.close()
        game.stop()


def test_threat_shows_an_enemys_charge_and_marks_whom_it_reaches(setup, tmp_path, pages, person):
    # the brute 6 in from the ganger, its charge 6 + 3 in
    with two_models(setup, tmp_path, pages, (10, 15), (16, 15)) as (_, page):
        brute = page.locator('svg#map path.base[data-model="brute"]')
        expect(brute).to_have_count(1)
        page.wait_for_timeout(PAUSE_MS)
        person.click(page, brute)
        expect(page.locator('svg#map g.shade path[data-reach-of="brute"]')).to_have_count(1)
        page.wait_for_timeout(PAUSE_MS)
        person.click(page, page.locator('#reach-bar button[data-choice="threat"]'))
        threat = page.locator('svg#map g.shade path.threat[data-reach-of="brute"]')
        expect(threat).to_have_count(1)
        expect(page.locator("#reach-bar .reach-explain")).to_contain_text(
            "its charge could reach ganger"
        )
        drawn = page.evaluate(SHADING, "svg#map")
        assert drawn["threatened"] == ["ganger"]
        outer = max(rings_of(drawn["areas"][0]["d"]), key=len)
        far = np.hypot(outer[:, 0] - 16, (30 - outer[:, 1]) - 15)
        print(f"\nthe brute's charge: its outline at most {far.max():.3f} in away")
        assert far.max() == pytest.approx(9.05, abs=0.02)
        page.wait_for_timeout(PAUSE_MS)
        person.click(page, page.locator('#reach-bar button[data-choice="move"]'))
        expect(page.locator('svg#map g.shade path.reach[data-reach-of="brute"]')).to_have_count(1)
        expect(page.locator("svg#map path.threatened")).to_have_count(0)


def test_the_shading_follows_the_table(setup, tmp_path, pages, person):
    # the ganger's reach shown; the brute then comes within it: the page asks again and
    # the brute's zone is cut out of the shading
    from tablesight.rules.geometry import Pose

    with two_models(setup, tmp_path, pages, (10, 15), (30, 20)) as (game, page):
        ganger = page.locator('svg#map path.base[data-model="ganger"]')
        expect(ganger).to_have_count(1)
        page.wait_for_timeout(PAUSE_MS)
        person.click(page, ganger)
        said = page.locator("#reach-bar .reach-explain")
        expect(said).to_contain_text('limited by its 6.00" allowance (100% of its edge)')
        with game.lock:
            game.session.seen("brute", Pose(14, 15))
        game.set_side("red")  # a change: the page is sent the new state
        expect(said).to_contain_text("brute's 1.00\" zone")
        outer = max(
            rings_of(page.locator("svg#map g.shade path").get_attribute("d") or ""), key=len
        )
        near = np.hypot(outer[:, 0] - 14, (30 - outer[:, 1]) - 15).min()
        print(f"\nthe shading now keeps {near:.3f} in from the brute's centre")
        assert near == pytest.approx(1.95, abs=0.02)


def test_on_a_phone_the_reach_control_is_usable(served, browser, wait_ms):
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(wait_ms)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(served.url)
        expect(page.locator('svg#map path.base[data-model="ganger"]')).to_have_count(1)
        page.select_option("#model", "ganger")  # a phone's way to choose a model
        shading = page.locator('svg#map g.shade path[data-reach-of="ganger"]')
        expect(shading).to_have_count(1)
        bar = page.locator("#reach-bar")
        expect(bar).to_be_visible()
        buttons = bar.locator("button")
        expect(buttons).to_have_count(4)  # charge, move, threat, Hide
        boxes = [buttons.nth(i).bounding_box() for i in range(4)]
        sizes = [(round(b["width"]), round(b["height"])) for b in boxes if b is not None]
        print(f"\n390 px: the reach bar's buttons (w, h) {sizes}")
        for i, b in enumerate(boxes):
            assert b is not None and b["x"] >= 0 and b["x"] + b["width"] <= 390, b
            assert b["width"] >= 44 and b["height"] >= 44, b  # a finger's size
            for other in boxes[i + 1 :]:
                assert not box(
                    b["x"], b["y"], b["x"] + b["width"], b["y"] + b["height"]
                ).intersects(
                    box(
                        other["x"],
                        other["y"],
                        other["x"] + other["width"],
                        other["y"] + other["height"],
                    )
                )
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        bar.locator('button[data-choice="charge"]').tap()
        expect(bar.locator('button[data-choice="charge"]')).to_have_attribute(
            "aria-pressed", "true"
        )
        expect(bar.locator(".reach-explain")).to_contain_text("ganger may end its charge")
        bar.locator("#reach-hide").tap()
        expect(shading).to_have_count(0)
        expect(bar).to_be_hidden()
        # a tap on the model's base on the map (still selected) shows it again
        ganger = page.locator('svg#map path.base[data-model="ganger"]')
        ganger.scroll_into_view_if_needed()
        page.wait_for_timeout(PAUSE_MS)
        base = ganger.bounding_box()
        assert base is not None
        page.touchscreen.tap(base["x"] + base["width"] / 2, base["y"] + base["height"] / 2)
        expect(shading).to_have_count(1)
    finally:
        context.close()
    assert errors == []


@pytest.fixture(scope="module")
def sample_game(necromunda_sample):
    """The Necromunda sample's first half second: twelve models, goliath and escher."""
    setup = necromunda_sample
    game = Game(setup, FileSource(str(SAMPLE / "match.mp4")))
    for frame in game.source.frames(decode=False):
        if frame.t > 0.5:
            break
        game.process(frame)
    server = Server(game, "127.0.0.1", 0).start()
    yield game, server
    server.close()
    game.stop()


def test_on_the_sample_each_models_reach_is_shown_within_300_ms(sample_game, pages, person):
    # twelve models, terrain, zones: each pressed in turn, its reach worked out afresh
    _, server = sample_game
    models = [m["id"] for m in fetch(server.url + "api/state")["models"]]
    page = pages(server.url, 1600, 1000)
    expect(page.locator("svg#overlay path.base")).to_have_count(len(models))
    page.wait_for_timeout(PAUSE_MS)
    times = {}
    for model in models:
        times[model] = shown_reach(page, model, person)
        expect(page.locator("#reach-bar .reach-of")).to_have_text(f"{model}:")
        page.wait_for_timeout(PAUSE_MS)
    said = ", ".join(f"{m} {t:.0f}" for m, t in times.items())
    print(f"\nthe sample, from the press to the reach drawn (ms): {said}")
    assert max(times.values()) < SHOWN_MS, times


def test_the_broadcasts_control_shows_a_sides_reach(sample_game, pages):
    _, server = sample_game
    state = fetch(server.url + "api/state")
    sides = {
        s: [m["id"] for m in state["models"] if m["side"] == s] for s in state["session"]["sides"]
    }
    assert [len(v) for v in sides.values()] == [6, 6]
    page = pages(server.url + "broadcast", 1280, 720)
    pick = page.locator("#reach-of")
    expect(pick.locator("option")).to_have_count(1 + 2 + 12)
    shading = page.locator("svg#overlay g.shade path")
    expect(shading).to_have_count(0)
    page.locator("#reach-panel").hover()
    page.wait_for_timeout(PAUSE_MS)
    for side, models in sides.items():
        pick.select_option(f"side:{side}")
        for model in models:
            expect(
                page.locator(f'svg#overlay g.shade path[data-reach-of="{model}"]')
            ).to_have_count(1)
        expect(shading).to_have_count(len(models))
        drawn = sorted(shading.evaluate_all("(ps) => ps.map((p) => p.dataset.reachOf)"))
        assert drawn == sorted(models)
        expect(page.locator("#reach-explain")).to_have_text(
            f"{side}: where its 6 models may end a move"
        )
        # each region in the side's colour (its bases' outline's)
        colours = set(shading.evaluate_all("(ps) => ps.map((p) => p.getAttribute('fill'))"))
        bases = set(
            page.locator("svg#overlay path.base").evaluate_all(
                f"(ps) => ps.filter((p) => {json.dumps(models)}.includes(p.dataset.model))"
                ".map((p) => p.getAttribute('stroke'))"
            )
        )
        assert colours == bases and len(colours) == 1
        page.wait_for_timeout(PAUSE_MS)
    # one model, then none
    pick.select_option("krotos")
    expect(shading).to_have_count(1)
    expect(page.locator("#reach-explain")).to_contain_text("krotos may end its move")
    pick.select_option("")
    expect(shading).to_have_count(0)
    # the overlay page opens with a side's reach from its address, and no control shown
    overlay = pages(server.url + "overlay?reach=side:escher&controls=0", 1280, 720)
    expect(overlay.locator("svg#overlay g.shade path")).to_have_count(6)
    expect(overlay.locator("#reach-panel")).to_be_hidden()


def test_the_replay_shows_where_a_flagged_move_could_have_gone(recorded_match, pages):
    with Replay(recorded_match) as replay:
        server = Server(replay, "127.0.0.1", 0, replay=True).start()
        page = None
        try:
            page = pages(server.url + "replay?time=0", 1600, 1000)
            expect(page.locator("#clock")).to_contain_text(", frame 0")
            page.wait_for_timeout(PAUSE_MS)
            page.keyboard.press("n")  # the next flag: the ganger's 7 in of its 6
            expect(page.locator("#flags li.violation")).to_have_count(1)
            shading = page.locator('svg#map g.shade path[data-reach-of="ganger"]')
            expect(shading).to_have_count(1)
            expect(page.locator("#reach-bar .reach-explain")).to_contain_text(
                "ganger may end its move"
            )
            # from where the move started, (10, 10), not where it ended, (17, 10)
            outer = max(rings_of(shading.get_attribute("d") or ""), key=len)
            far = np.hypot(outer[:, 0] - 10, (30 - outer[:, 1]) - 10)
            print(f"\nreplay: the outline {far.min():.3f}-{far.max():.3f} in from (10, 10)")
            assert far.max() == pytest.approx(REACH_IN, abs=0.07)
            assert Polygon(outer).contains(Point(10, 30 - 10))
            assert not Polygon(outer).contains(Point(17, 30 - 10))
            expect(page.locator('svg#overlay g.shade path[data-reach-of="ganger"]')).to_have_count(
                1
            )
        finally:
            if page is not None:
                page.close()
            server.close()
