"""Labels and layout in a real browser (Debian's Chromium through Playwright), at a phone's
390 px, a tablet's 768 px and a laptop's 1280 px: the table view, ``/broadcast`` and the
replay, on the Necromunda sample (twelve models, flags on crowded models).

The game plays the sample clip with its script, frame by frame in the test (no thread),
recorded; it stops at moments when labels crowd (brakk's long move beside krotos, then
mirra's, nyx's charge and hruk in mirra's zone) and the pages are measured there. The
recording is then opened as a replay and measured at the same moments.

What is measured is independent of the placement: each base's outline is the state's
(table inches, the numbers the page was sent) put through OpenCV's projection with the
state's camera, and onto the screen by the drawing's own screen transform; each label's
box is its text's box in the DOM. No label may meet another model's drawn outline (the
outline and half its 3 px stroke) or another label; a label set apart from its base
carries a leader line from that base to it. Each test prints its figures (``-s``).
"""

from __future__ import annotations

import json
import math
import os
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from shapely.geometry import LineString, Polygon, box

from tablesight.calibration.script import Script
from tablesight.match.game import Game
from tablesight.match.replay import Replay
from tablesight.match.writer import MatchWriter
from tablesight.vision.sources import FileSource
from tablesight.webui.serve import Server

pytestmark = [pytest.mark.browser, pytest.mark.slow]
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples" / "necromunda"
SHOTS = Path(os.environ.get("TABLESIGHT_SHOTS", "/tmp/tablesight-layout"))
#: The moments measured (s into the clip): brakk's long move settled beside krotos;
#: mirra's; nyx's charge; hruk inside mirra's zone.
MOMENTS = (6.0, 22.0, 25.5, 28.0)
#: Screen widths: a phone, a tablet, a laptop (each with a height of its kind).
SCREENS = {390: 844, 768: 1024, 1280: 720}
#: Half the drawn outline's stroke (3 px): a label must keep off it by more than this.
STROKE_PX = 1.5
#: A label this far from its own base (px) must have a leader line to it, which ends
#: this close to the label's text (its box has a margin round the text).
APART_PX = 8.0
LEADER_TO_LABEL_PX = 4.0

#: Every state (and replay seek) the page is sent is kept, as the page got it.
KEEP = """
window.kept = { state: null };
const Native = window.EventSource;
window.EventSource = class extends Native {
  constructor(...args) {
    super(...args);
    this.addEventListener("state", (m) => { window.kept.state = JSON.parse(m.data); });
  }
};
const fetched = window.fetch;
window.fetch = async (...args) => {
  const r = await fetched(...args);
  if (String(args[0]).includes("/api/replay/seek")) {
    r.clone().json().then((out) => { if (out && out.state) window.kept.state = out.state; });
  }
  return r;
};
"""

#: What a drawing shows: its screen transform, each label's box and key (hidden ones
#: apart), each leader's ends, in screen pixels.
DRAWN = """(sel) => {
  const svg = document.querySelector(sel), m = svg.getScreenCTM();
  const screen = (x, y) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f];
  const labels = [], hidden = [];
  for (const t of svg.querySelectorAll("g.labels text")) {
    if (getComputedStyle(t).display === "none") { hidden.push(t.dataset.key); continue; }
    const r = t.getBoundingClientRect();
    labels.push({ key: t.dataset.key, text: t.textContent, label: t.dataset.label || null,
                  flag: t.dataset.flag || null, box: [r.left, r.top, r.right, r.bottom] });
  }
  const shown = (e) => getComputedStyle(e).display !== "none";
  const leaders = [...svg.querySelectorAll("g.leaders line")].filter(shown).map((l) => ({
    key: l.dataset.key,
    ends: [screen(+l.getAttribute("x1"), +l.getAttribute("y1")),
           screen(+l.getAttribute("x2"), +l.getAttribute("y2"))] }));
  const moved = [...svg.querySelectorAll("path.base[transform]")].length;
  return { ctm: [m.a, m.b, m.c, m.d, m.e, m.f], labels, hidden, leaders, moved,
           version: window.kept.state && window.kept.state.live.version };
}"""

#: What the page's frame shows: the picture's box, the header's and its children's, the
#: viewport and how wide the document is.
FRAME = """() => {
  const rect = (e) => {
    const r = e.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom];
  };
  const header = document.querySelector("header");
  const picture = document.querySelector(".picture") || document.querySelector(".stage");
  return { picture: rect(picture), header: header ? rect(header) : null,
           parts: header ? [...header.children].map((c) => [c.id || c.tagName, ...rect(c)]) : [],
           viewport: [innerWidth, innerHeight], scroll: document.documentElement.scrollWidth,
           note: (document.getElementById("picture-note") || {}).textContent || "" };
}"""


@pytest.fixture(scope="module")
def played(tmp_path_factory, necromunda_sample):
    """The sample game, recorded and served, played in the test (:func:`play_to`,
    :func:`finish`)."""
    setup = necromunda_sample
    script = Script.from_toml(SAMPLE / "session.toml", setup)
    video = SAMPLE / "match.mp4"
    db = tmp_path_factory.mktemp("layout") / "match.db"
    writer = MatchWriter(db, setup, source=str(video))
    game = Game(setup, FileSource(str(video)), recorder=writer, script=script)
    server = Server(game, "127.0.0.1", 0).start()
    frames = game.source.frames(decode=False)
    played = {"game": game, "server": server, "frames": frames, "db": db, "next": None}
    yield played
    if not played.get("done"):
        server.close()
        game.stop()
        game.close_recorder()


def play_to(played, t: float) -> None:
    """The game's frames up to the clip's time ``t``."""
    held = played["next"]
    if held is not None:
        if held.t > t + 1e-9:
            return
        played["game"].process(held)
        played["next"] = None
    for frame in played["frames"]:
        if frame.t > t + 1e-9:
            played["next"] = frame
            return
        played["game"].process(frame)


def finish(played) -> Path:
    """The rest of the clip played and recorded; the match file."""
    if played.get("done"):
        return played["db"]
    play_to(played, math.inf)
    game = played["game"]
    game.close_recorder()
    played["server"].close()
    game.stop()
    played["done"] = True
    return played["db"]


def outlines(state: dict, drawing: str, ctm: list[float], person) -> dict[str, Polygon]:
    """Each model's base outline on the screen, where the newest frame has it: the
    picture's (``overlay``) through the lens, or the map's (``map``: y up from the table's
    near edge)."""
    a, b, c, d, e, f = ctm
    out = {}
    # where each base stands in the newest frame (the page moves its shapes there): its
    # outline turned and shifted from where the state's session has it
    posed = {p[0]: p for p in (state["poses"] or {}).get("models", [])}
    for m in state["models"]:
        pts = np.array(m["outline"], dtype=np.float64)
        if m["id"] in posed:
            _, x, y, heading, _, _ = posed[m["id"]]
            turn = math.radians(heading - (m.get("heading") or 0.0))
            rot = np.array([[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]])
            pts = (pts - [m["x"], m["y"]]) @ rot.T + [x, y]
        if drawing == "overlay":
            uv = person.project(state, pts)
        else:
            uv = np.column_stack([pts[:, 0], state["table"]["depth_in"] - pts[:, 1]])
        screen = np.column_stack([a * uv[:, 0] + c * uv[:, 1] + e, b * uv[:, 0] + d * uv[:, 1] + f])
        out[m["id"]] = Polygon(screen)
    return out


def check_drawing(page, sel: str, drawing: str, where: str, person) -> dict:
    """Measures one drawing against the state it was drawn from; fails on a label that
    meets another model's outline or another label, or a label set apart without a
    leader. Returns the figures."""
    drawn = page.evaluate(DRAWN, sel)
    state = page.evaluate("() => window.kept.state")
    bases = outlines(state, drawing, drawn["ctm"], person)
    owner_of_flag = {str(f["id"]): f["model"] for f in state["flags"]}
    gaps, apart, problems = [], 0, []
    labels = drawn["labels"]
    leaders = {ld["key"]: ld["ends"] for ld in drawn["leaders"]}
    for i, lab in enumerate(labels):
        owner = lab["label"] or owner_of_flag.get(lab["flag"] or "")
        shape = box(*lab["box"])
        for model, outline in bases.items():
            if model == owner:
                continue
            gap = shape.distance(outline.exterior) if not shape.intersects(outline) else 0.0
            gaps.append((gap, lab["text"], model))
            if gap <= STROKE_PX:
                problems.append(f"{lab['text']!r} {gap:.1f} px from {model}'s base")
        for other in labels[i + 1 :]:
            if shape.intersects(box(*other["box"])):
                problems.append(f"{lab['text']!r} meets {other['text']!r}")
        if owner is not None and owner in bases:
            away = shape.distance(bases[owner])
            if away > APART_PX:
                apart += 1
                ends = leaders.get(lab["key"])
                if ends is None:
                    problems.append(f"{lab['text']!r} {away:.0f} px from {owner}, no leader")
                    continue
                line = LineString(ends)
                # from its base's edge to the label's box, and long enough to see
                near_base = min(bases[owner].exterior.distance(LineString([p, p])) for p in ends)
                near_label = min(shape.exterior.distance(LineString([p, p])) for p in ends)
                if near_base > 2.5 or near_label > LEADER_TO_LABEL_PX or line.length < 5:
                    problems.append(
                        f"{lab['text']!r}: leader {line.length:.1f} px long, "
                        f"{near_base:.1f} px from {owner}, {near_label:.1f} px from the label"
                    )
    # a leader is followed by eye: one across another label is misread as leading to it
    crossings = []
    owner_of = {lab["key"]: lab["label"] or owner_of_flag.get(lab["flag"] or "") for lab in labels}
    for key, ends in leaders.items():
        line = LineString(ends)
        for lab in labels:
            if owner_of[lab["key"]] == owner_of.get(key):
                continue  # its own model's other label: it leads there all the same
            if line.intersects(box(*lab["box"]).buffer(-1.0)):
                crossings.append(f"{owner_of.get(key)}'s leader across {lab['text']!r}")
    heights = [lab["box"][3] - lab["box"][1] for lab in labels]
    smallest = min(gaps)[0] if gaps else math.inf
    assert not problems, f"{where}: {problems}"
    return {
        "labels": len(labels),
        "hidden": len(drawn["hidden"]),
        "apart": apart,
        "gap": smallest,
        "nearest": min(gaps)[1:] if gaps else None,
        "height": min(heights) if heights else math.inf,
        "crossings": crossings,
    }


def wait_for_state(page, version: int) -> None:
    page.wait_for_function(
        "(v) => window.kept.state && window.kept.state.live.version === v"
        " && document.querySelectorAll('svg#overlay g.labels text').length > 0",
        arg=version,
    )
    # one animation frame more: the drawing is made from the state it was sent
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => done()))")


def api(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def frame_is_whole(page, where: str) -> dict:
    got = page.evaluate(FRAME)
    width, height = got["viewport"]
    left, top, right, bottom = got["picture"]
    # across the screen on a phone or a tablet (but its margins), in its column beside
    # the panels on a laptop
    share = 0.9 if width <= 768 else 0.6
    assert right - left >= share * width - 30 and bottom - top > 0, (where, got["picture"])
    assert left >= 0 and right <= width, (where, got["picture"])
    assert got["scroll"] <= width, (where, got["scroll"])
    if got["header"] is not None:
        hl, ht, hr, hb = got["header"]
        assert hl >= 0 and ht >= 0 and hr <= width and hb <= height, (where, got["header"])
        for name, pl, pt, pr, pb in got["parts"]:
            assert pl >= 0 and pr <= width and pt >= ht and pb <= hb, (where, name, got["parts"])
    return got


@pytest.fixture(scope="module")
def figures():
    out: list[str] = []
    yield out
    print("\n" + "\n".join(out))


def test_live_pages_keep_labels_off_other_bases_at_each_width(played, pages, figures, person):
    server = played["server"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    smallest: dict[tuple[str, int], float] = {}
    for moment in MOMENTS:
        play_to(played, moment)
        version = api(server.url + "api/state")["live"]["version"]
        for width, height in SCREENS.items():
            for path, drawings in (("", ("overlay", "map")), ("broadcast", ("overlay",))):
                page = pages(server.url + path, width, height, init_script=KEEP)
                wait_for_state(page, version)
                where = f"/{path} at {width} px, {moment} s"
                got = frame_is_whole(page, where)
                for drawing in drawings:
                    f = check_drawing(page, f"svg#{drawing}", drawing, f"{where} {drawing}", person)
                    figures.append(f"{where} {drawing}: {f}")
                    key = (f"/{path} {drawing}", width)
                    smallest[key] = min(smallest.get(key, math.inf), f["gap"])
                    assert f["height"] >= 12, (where, f)
                    if width >= 768:
                        assert f["hidden"] == 0, (where, f)
                    elif f["hidden"] and drawing == "overlay" and path == "":
                        assert f"{f['hidden']} label" in got["note"], (where, got["note"])
                page.screenshot(path=str(SHOTS / f"{path or 'table'}-{width}-{moment:g}s.png"))
                page.close()
    figures.append(f"smallest gap, label to another base (px): {smallest}")


def test_replay_keeps_labels_off_other_bases_at_each_width(played, pages, figures, person):
    db = finish(played)
    replay = Replay(db)
    server = Server(replay, "127.0.0.1", 0, replay=True).start()
    smallest: dict[int, float] = {}
    try:
        for moment in MOMENTS:
            for width, height in SCREENS.items():
                page = pages(f"{server.url}replay?time={moment}", width, height, init_script=KEEP)
                page.wait_for_function(
                    "() => window.kept.state && window.kept.state.replay"
                    " && document.querySelectorAll('svg#overlay g.labels text').length > 0"
                )
                page.evaluate("() => new Promise((done) => requestAnimationFrame(() => done()))")
                where = f"replay at {width} px, {moment} s"
                frame_is_whole(page, where)
                for drawing in ("overlay", "map"):
                    f = check_drawing(page, f"svg#{drawing}", drawing, f"{where} {drawing}", person)
                    figures.append(f"{where} {drawing}: {f}")
                    smallest[width] = min(smallest.get(width, math.inf), f["gap"])
                    assert f["height"] >= 12, (where, f)
                    if width >= 768:
                        assert f["hidden"] == 0, (where, f)
                page.screenshot(path=str(SHOTS / f"replay-{width}-{moment:g}s.png"))
                page.close()
    finally:
        server.close()
        replay.close()
    figures.append(f"replay: smallest gap, label to another base (px): {smallest}")
