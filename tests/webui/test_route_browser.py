"""A flagged move's route over levels, and the charge findings' words, in a real browser
(Debian's Chromium through Playwright), used as a person uses the pages.

The two-model table's ganger went from (10, 10) to (17, 10) (7 in, over its 6: the
``movement`` flag). A parapet 2 in high is then set across the whole table, x 12..14,
climbable, and the move declared again on the page: Necromunda counts every inch climbed
and descended, 7 + 2 + 2 = 11 in, the route climbing up at x = 12 and down at x = 14
(where the ganger's centre crosses the parapet's sides; y = 10). The table view draws the
route of the flagged move with a mark and a label at each climb, on the map and on the
picture, clear of the other labels and bases; a dismissed flag's route is no longer drawn
(unless its model is selected). The broadcast says each charge finding in its own words.
"""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np
import pytest

from tablesight.match.game import Game
from tablesight.rules.geometry import Pose
from tablesight.rules.ruleset import load_ruleset
from tablesight.vision.sources import FileSource
from tablesight.webui.serve import Server

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

#: The parapet: x 12..14 across the table's 30 in depth, 2 in high.
PARAPET = [[12, 0], [14, 0], [14, 30], [12, 30]]
#: Where the route changes level (table inches), and what each mark says.
CLIMBS = [((12.0, 10.0), '+2.0"', "up"), ((14.0, 10.0), '-2.0"', "down")]

#: A drawing's climbs: each mark's class and centre (the drawing's units and the screen),
#: its label's text and box on the screen, the route's ends on the screen, and the boxes
#: of every other label shown and of each base drawn.
CLIMBS_DRAWN = """(sel) => {
  const svg = document.querySelector(sel), m = svg.getScreenCTM();
  const screen = (x, y) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f];
  const rect = (e) => {
    const r = e.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom];
  };
  const shown = (e) => getComputedStyle(e).display !== "none";
  const marks = [...svg.querySelectorAll("g.climbs path.climb")].map((p) => {
    const b = p.getBBox(), c = [b.x + b.width / 2, b.y + b.height / 2];
    const key = p.dataset.climb;
    const label = svg.querySelector(`g.labels text.climb-label[data-climb="${key}"]`);
    return { key, cls: p.getAttribute("class"), at: c, screen: screen(...c),
             label: label && shown(label) ? label.textContent : null,
             box: label ? rect(label) : null };
  });
  const route = svg.querySelector('g.reach path.route[data-route="ganger"]');
  const xy = route ? route.getAttribute("d").replace(/[MLZ]/g, " ").trim().split(/\\s+/)
    .map(Number) : [];
  const n = xy.length;
  const others = [...svg.querySelectorAll("g.labels text:not(.climb-label)")].filter(shown)
    .map((t) => ({ text: t.textContent, box: rect(t) }));
  const bases = [...svg.querySelectorAll("g.bases path.base")]
    .map((p) => ({ model: p.dataset.model, box: rect(p) }));
  return { marks, others, bases,
           route: n >= 4 ? [screen(xy[0], xy[1]), screen(xy[n - 2], xy[n - 1])] : null };
}"""


def meets(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def off_segment(p: list[float], a: list[float], b: list[float]) -> float:
    """How far ``p`` is from the segment a-b (pixels)."""
    ax, ay, bx, by = *a, *b
    t = ((p[0] - ax) * (bx - ax) + (p[1] - ay) * (by - ay)) / ((bx - ax) ** 2 + (by - ay) ** 2)
    t = min(1.0, max(0.0, t))
    return math.dist(p, (ax + t * (bx - ax), ay + t * (by - ay)))


def climbs_drawn(page, drawing: str, depth_in: float | None) -> dict:
    """The climbs of ``svg#<drawing>``, checked: one mark a climb, up then down, each with
    its label shown, clear of every other label and every base; on the map (``depth_in``
    given: y up from the near edge) each mark at its point of the table."""
    got = page.evaluate(CLIMBS_DRAWN, f"svg#{drawing}")
    marks = got["marks"]
    assert [(m["key"], m["cls"], m["label"]) for m in marks] == [
        (f"ganger:{i}", f"climb {way}", text) for i, (_, text, way) in enumerate(CLIMBS)
    ], got
    for m, ((x, y), _, _) in zip(marks, CLIMBS, strict=True):
        if depth_in is not None:  # the triangle's box is centred on its point to 0.1 of its size
            assert m["at"] == [pytest.approx(x, abs=0.25), pytest.approx(depth_in - y, abs=0.25)]
        for other in got["others"]:
            assert not meets(m["box"], other["box"]), (m, other)
        for base in got["bases"]:
            assert not meets(m["box"], base["box"]), (m, base)
    assert not meets(marks[0]["box"], marks[1]["box"]), marks
    # each mark on the route, in order from its start
    start, end = got["route"]
    for m in marks:
        assert off_segment(m["screen"], start, end) < 3.0, (m, got["route"])
    along = [math.dist(start, m["screen"]) for m in marks]
    assert 0 < along[0] < along[1] < math.dist(start, end), along
    return got


def test_a_flagged_moves_route_is_drawn_with_its_climbs(played_game, pages, person):
    game = played_game
    with game.lock:
        game.session.place_terrain("parapet", PARAPET, 2.0, ["climbable"])
    server = Server(game, "127.0.0.1", 0).start()
    opened = []
    try:
        page = pages(server.url, 1600, 1000)
        opened.append(page)
        flag = page.locator("#flags li.violation")
        expect(flag).to_have_count(1)
        # the flagged move's route is drawn though nobody selected it; judged before the
        # parapet was set, it has no climbs
        expect(page.locator('svg#map path.route.flagged[data-route="ganger"]')).to_have_count(1)
        expect(page.locator('svg#overlay path.route.flagged[data-route="ganger"]')).to_have_count(1)
        expect(page.locator("svg#map path.allowance")).to_have_count(0)
        expect(page.locator("svg#map path.climb")).to_have_count(0)

        # declared again as a person does: the model chosen, then Declare pressed
        page.select_option("#model", "ganger")
        page.wait_for_timeout(300)
        expect(page.locator("#action")).to_have_value("move")
        person.click(page, page.locator("#declare"))
        expect(flag.locator(".flag-what")).to_have_text("ganger: movement: 11.00 in / 6.00 ")
        page.keyboard.press("Escape")  # nothing selected: the flag alone draws the route
        expect(page.locator("svg#map path.base.selected")).to_have_count(0)
        expect(page.locator("svg#map path.allowance")).to_have_count(0)
        for drawing in ("map", "overlay"):
            expect(page.locator(f"svg#{drawing} path.route[data-route='ganger']")).to_have_count(1)
            expect(page.locator(f"svg#{drawing} path.climb")).to_have_count(2)
            expect(page.locator(f"svg#{drawing} text.climb-label")).to_have_count(2)
        page.wait_for_timeout(300)  # the labels are placed
        for drawing, depth in (("map", 30.0), ("overlay", None)):
            got = climbs_drawn(page, drawing, depth)
            print(f"\n{drawing}: {[(m['label'], m['screen']) for m in got['marks']]}")

        # the model's card says where its route climbs
        person.click(page, page.locator('svg#map path.base[data-model="ganger"]'))
        expect(page.locator("#info h2")).to_have_text("ganger")
        expect(page.locator("#info [data-testid=climbs]")).to_have_text(
            'climbs +2.0" at (12.00, 10.00), -2.0" at (14.00, 10.00)'
        )
        page.keyboard.press("Escape")

        # the broadcast: the flag's caption on the picture and in the ticker, the climbs
        broadcast = pages(server.url + "broadcast", 1280, 720)
        opened.append(broadcast)
        expect(broadcast.locator("#ticker .tick.violation")).to_have_text(
            "ganger moved 11.00 in, allowed 6"
        )
        expect(broadcast.locator("svg#overlay text.flag-label.violation")).to_have_text(
            "moved 11.00 in, allowed 6"
        )
        expect(broadcast.locator("svg#overlay path.climb")).to_have_count(2)
        broadcast.wait_for_timeout(300)
        climbs_drawn(broadcast, "overlay", None)

        # dismissed, the flag no longer draws the route; selecting the model does
        person.click(page, flag.locator("button.flag-dismiss"))
        expect(flag).to_have_class("violation dismiss")
        expect(page.locator("svg#map path.route")).to_have_count(0)
        expect(page.locator("svg#map path.climb")).to_have_count(0)
        expect(page.locator("svg#map text.climb-label")).to_have_count(0)
        person.click(page, page.locator('svg#map path.base[data-model="ganger"]'))
        expect(page.locator('svg#map path.route:not(.flagged)[data-route="ganger"]')).to_have_count(
            1
        )
        expect(page.locator("svg#map path.allowance")).to_have_count(1)
        expect(page.locator("svg#map path.climb")).to_have_count(2)
        page.wait_for_timeout(300)
        climbs_drawn(page, "map", 30.0)
    finally:
        for p in opened:  # before the server goes: its streams end with the pages
            p.close()
        server.close()


def charged(setup, folder, game_name: str, start, end, target_at, roll: int) -> Game:
    """A game of ``game_name`` on the two-model table with no picture: the ganger seen at
    ``start`` and the brute at ``target_at``, a phase started, the ganger moved to ``end``,
    then its charge on the brute declared (as the page's controls would), judged."""
    setup = dataclasses.replace(setup, game=game_name, ruleset=load_ruleset(game_name))
    game = Game(setup, FileSource(str(folder)))
    with game.lock:
        game.session.seen("ganger", Pose(*start))
        game.session.seen("brute", Pose(*target_at))
    game.start_phase(side="red")
    with game.lock:
        game.session.moved(1.0, 30, "ganger", Pose(*end))
    game.declare("ganger", "charge", "brute", roll)
    return game


@pytest.mark.parametrize(
    ("game_name", "start", "end", "target_at", "roll", "said"),
    [
        # Trench Crusade, "toward the target": from 9 - 6 - 1 = 2 in from base contact back
        # to 9 - 3 - 1 = 5 in, 3 in further; and a failed charge, 5 in from the brute
        (
            "trench-crusade",
            (6, 15),
            (3, 15),
            (9, 15),
            3,
            [
                "ganger's charge ended 3.00 in further from brute than it started",
                "ganger's charge fell short: 5.00 in from brute, needed 1",
            ],
        ),
        # Necromunda, "the shortest route possible": round the brute to its far side, the
        # tangent sqrt(7^2 - 1) = 6.93 and the arc pi - acos(1/7) = 1.71, 8.64 in (of
        # 6 + 3), where base contact was 9 - 2 - 1 = 6 in away
        (
            "necromunda",
            (2, 15),
            (10, 15),
            (9, 15),
            3,
            ["ganger's charge took 8.64 in to reach brute, the shortest route is 6"],
        ),
        # Necromunda: a failed charge moves its full distance; 2 in of 9, 7 in short
        (
            "necromunda",
            (2, 15),
            (4, 15),
            (12, 15),
            3,
            ["ganger's failed charge stopped after 2.00 in, it must go all 9"],
        ),
    ],
)
def test_the_broadcast_says_each_charge_finding_in_its_own_words(
    setup, tmp_path, pages, game_name, start, end, target_at, roll, said
):
    cv2.imwrite(str(tmp_path / "0.png"), np.zeros((8, 8, 3), np.uint8))
    game = charged(setup, tmp_path, game_name, start, end, target_at, roll)
    server = Server(game, "127.0.0.1", 0).start()
    page = None
    try:
        page = pages(server.url + "broadcast", 1280, 720)
        ticks = page.locator("#ticker .tick:not(.phase)")
        expect(ticks).to_have_count(len(said))
        page.wait_for_timeout(500)  # as long as a viewer reads it: still what it said
        assert sorted(ticks.all_text_contents()) == said
        expect(page.locator("#ticker .tick.phase")).to_have_text("turn 1: red moving")
    finally:
        if page is not None:  # before the server goes: its stream ends with the page
            page.close()
        server.close()
        game.stop()
