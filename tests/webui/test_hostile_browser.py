"""Hostile names in a real browser: a roster or match file from someone else whose names
are markup is shown as text on every page, and no script of theirs runs.

The game and the replay here answer with every name made markup (the ``hostile`` fixture:
model ids, sides, units, keywords, and the messages that name them), as a hostile match
file would, since the loaders now refuse such names. Each page is opened, every model is
hovered, pressed (down, 120 ms, up) and chosen in the model list, as a person would; then
no script of the names has run (``window.__pwned`` unset, no dialog), no element was
made of them, the Content-Security-Policy refused nothing the page needs, and each name
reads exactly as written.

Also: the controls' token is taken out of the address bar and kept for the page's
requests.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from tablesight.match.replay import Replay
from tablesight.webui.serve import Server

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

#: Every violation of the page's Content-Security-Policy, noted as it happens.
CSP_WATCH = """
window.__csp = [];
document.addEventListener("securitypolicyviolation",
    (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`));
"""
#: Elements the hostile names would make if they were ever parsed as markup.
INJECTED = "img[src='x'], #info img, svg svg, iframe, script:not([src]):not([type])"


@pytest.fixture(scope="module")
def live(footage, setup, hostile, tmp_path_factory, browser):
    """The clip's long move refereed, served with hostile names."""
    import cv2

    from tablesight.match.game import Game
    from tablesight.vision.sources import FileSource, Frame

    _, pics = footage
    folder = tmp_path_factory.mktemp("hostile")
    cv2.imwrite(str(folder / "0.png"), pics["start"])
    game = Game(setup, FileSource(str(folder)))
    for k, name in enumerate(["start"] * 12 + ["moved"] * 12):
        game.process(Frame(pics[name], k / 30, k))
    web = Server(hostile(game), "127.0.0.1", 0).start()  # type: ignore[arg-type]
    yield web
    game.stop()
    web.close()


@pytest.fixture(scope="module")
def replayed(recorded_match, hostile, browser):
    """The recorded clip in the replay viewer, served with hostile names."""
    replay = Replay(recorded_match)
    web = Server(hostile(replay), "127.0.0.1", 0, replay=True).start()  # type: ignore[arg-type]
    yield web
    replay.stop()
    web.close()
    replay.close()


@pytest.fixture
def visit(browser, wait_ms):
    """Opens a page; after the test, no page error, no console error, no dialog, no CSP
    violation and no ``window.__pwned``."""
    pages, problems = [], []

    def opener(url: str, width: int = 1600, height: int = 1000):
        page = browser.new_page(viewport={"width": width, "height": height})
        page.add_init_script(CSP_WATCH)
        page.set_default_timeout(wait_ms)
        page.on("pageerror", lambda exc: problems.append(f"{url}: {exc}"))
        page.on("console", lambda m: m.type == "error" and problems.append(f"{url}: {m.text}"))
        page.on("dialog", lambda d: (problems.append(f"{url}: dialog {d.message}"), d.dismiss()))
        page.goto(url, wait_until="domcontentloaded")
        pages.append((url, page))
        return page

    yield opener
    for url, page in pages:
        pwned, csp = page.evaluate("() => [window.__pwned, window.__csp]")
        assert pwned is None, f"{url}: script from a name ran: {pwned}"
        assert csp == [], f"{url}: the Content-Security-Policy refused {csp}"
        assert page.locator(INJECTED).count() == 0, f"{url}: markup from a name made elements"
        page.close()
    assert problems == []


def press(page, target) -> None:
    """Hover ``target``, then press it as a person does: down, 120 ms, up."""
    box = target.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, steps=5)
    page.wait_for_timeout(150)
    page.mouse.down()
    page.wait_for_timeout(120)
    page.mouse.up()
    page.wait_for_timeout(150)


def every_model(page, svg: str) -> list:
    bases = page.locator(f"svg#{svg} path.base")
    expect(bases).to_have_count(2)
    return [bases.nth(i) for i in range(2)]


def texts(locator) -> list[str]:
    return locator.evaluate_all("(nodes) => nodes.map((n) => n.textContent)")


def check_card(page, hostile, model: str) -> None:
    """The model's card names it, its side and its keyword as written."""
    card = page.locator("#info")
    shown = None
    for _ in range(200):  # the card of the newest model asked for, within 20 s
        shown = page.evaluate("() => document.querySelector('#info h2')?.textContent")
        if shown == hostile.names[model]:
            break
        page.wait_for_timeout(100)
    assert shown == hostile.names[model]
    profile = card.locator("div").first.evaluate("(n) => n.textContent")
    side = {"ganger": "red", "brute": "blue"}[model]
    assert profile.startswith(f"{hostile.names[side]}, unit {hostile.names[model]}, ")
    assert profile.endswith(hostile.keyword)


def interact(page, hostile) -> None:
    """Every model hovered and pressed on the picture's overlay and on the map, and chosen
    in the model list; each time its card shows its names as text."""
    for svg in ("overlay", "map"):
        for base in every_model(page, svg):
            model = {v: k for k, v in hostile.names.items()}[base.get_attribute("data-model")]
            press(page, base)
            expect(page.locator("#info h2")).to_have_count(1)
            check_card(page, hostile, model)
    # the pointer off the drawings (a base under it shows its card whenever it is redrawn)
    page.mouse.move(2, 2, steps=5)
    for model in ("ganger", "brute"):
        page.select_option("#model", hostile.names[model])
        page.wait_for_timeout(300)
        check_card(page, hostile, model)


def check_names(page, hostile) -> None:
    """The labels on both drawings and the lists name the models as written."""
    ids = sorted(hostile.names[m] for m in ("ganger", "brute"))
    expect(page.locator("svg#overlay text.label")).to_have_count(2)
    for svg in ("overlay", "map"):
        assert sorted(texts(page.locator(f"svg#{svg} text.label"))) == ids
    assert sorted(texts(page.locator("#model option:not([value=''])"))) == ids
    [flag] = texts(page.locator("#flags li"))
    assert flag.startswith(hostile.names["ganger"] + ": movement: ")


def test_the_table_view_shows_hostile_names_as_text(visit, live, hostile):
    page = visit(live.url)
    expect(page.locator("#flags li")).to_have_count(1)
    check_names(page, hostile)
    sides = texts(page.locator("#side option"))
    assert sides == ["-", hostile.names["red"], hostile.names["blue"]]
    moved = page.locator("#events li[data-kind=violation]")
    expect(moved).to_have_count(1)
    assert hostile.names["ganger"] in moved.text_content()
    interact(page, hostile)
    # measuring between the two models names both as written
    page.click("#measure-button")
    ganger, brute = every_model(page, "map")
    if ganger.get_attribute("data-model") != hostile.names["ganger"]:
        ganger, brute = brute, ganger
    press(page, ganger)
    press(page, brute)
    expect(page.locator("output#measure")).to_contain_text(" in +/- ")
    said = page.locator("output#measure").text_content()
    assert said.startswith(f"{hostile.names['ganger']} to {hostile.names['brute']}: ")


@pytest.mark.parametrize("path", ["/broadcast", "/overlay"])
def test_the_obs_pages_show_hostile_names_as_text(visit, live, hostile, path):
    page = visit(live.url.rstrip("/") + path, 1920, 1080)
    labels = page.locator("svg#overlay text.label")
    expect(labels).to_have_count(2)
    assert sorted(texts(labels)) == sorted(hostile.names[m] for m in ("ganger", "brute"))
    for base in every_model(page, "overlay"):
        press(page, base)
    ticks = page.locator("#ticker .tick.violation")
    expect(ticks).to_have_count(1)
    assert hostile.names["ganger"] in ticks.text_content()


def test_the_replay_shows_hostile_names_as_text(visit, replayed, hostile):
    page = visit(replayed.url.rstrip("/") + "/replay?time=0.9")
    expect(page.locator("#flags li")).to_have_count(1)
    check_names(page, hostile)
    for select, names in (
        ("#filter-model", ["ganger", "brute"]),
        ("#filter-side", ["red", "blue"]),
        ("#filter-unit", ["ganger", "brute"]),
    ):
        shown = texts(page.locator(f"{select} option"))
        assert shown[0] == "all" and sorted(shown[1:]) == sorted(hostile.names[n] for n in names)
        page.select_option(select, hostile.names[names[0]])
        page.wait_for_timeout(150)
        page.select_option(select, "")
    marks = page.locator("#marks .mark")
    assert marks.count() > 0
    press(page, marks.last)
    interact(page, hostile)


@pytest.fixture(scope="module")
def guarded(footage, setup, browser, tmp_path_factory):
    """The clip's long move refereed, served on 127.0.0.1 with a token for the controls,
    as ``--host 0.0.0.0`` would ask for."""
    import cv2

    from tablesight.match.game import Game
    from tablesight.vision.sources import FileSource, Frame

    _, pics = footage
    folder = tmp_path_factory.mktemp("guarded")
    cv2.imwrite(str(folder / "0.png"), pics["start"])
    game = Game(setup, FileSource(str(folder)))
    for k, name in enumerate(["start"] * 12 + ["moved"] * 12):
        game.process(Frame(pics[name], k / 30, k))
    web = Server(game, "127.0.0.1", 0, token="t0ken-of-the-table").start()
    yield web
    game.stop()
    web.close()


def phases_started(server) -> int:
    url = server.url.split("?")[0].rstrip("/") + "/api/events"
    with urllib.request.urlopen(url, timeout=10) as answer:
        return sum(e["kind"] == "phase_started" for e in json.load(answer)["events"])


def test_the_token_leaves_the_address_bar_and_still_works(visit, guarded):
    assert "?token=t0ken-of-the-table" in guarded.url
    page = visit(guarded.url)
    expect(page.locator("#flags li")).to_have_count(1)
    assert "token" not in page.evaluate("() => location.href")
    assert page.evaluate("() => location.href") == guarded.url.split("?")[0]
    before = phases_started(guarded)
    page.click("#start-phase")
    expect(page.locator("#events li[data-kind=phase_started]")).to_have_count(before + 1)
    assert phases_started(guarded) == before + 1
    expect(page.locator("#message")).to_have_text("")
    # a reload (the address without the token) keeps it for this tab
    page.reload(wait_until="domcontentloaded")
    expect(page.locator("#events li[data-kind=phase_started]")).to_have_count(before + 1)
    page.click("#start-phase")
    expect(page.locator("#events li[data-kind=phase_started]")).to_have_count(before + 2)
    assert "token" not in page.evaluate("() => location.href")
