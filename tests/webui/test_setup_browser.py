"""The set-up page in a real browser, as a player goes through it: from a camera and a
printer to a refereed game without writing TOML.

``tablesight setup --source clip.avi`` runs as a user starts it, on a Motion JPEG clip
from the synthetic camera (the accuracy rig's: 1920 x 1080, 30 in up and 14 in in front
of a 44 x 30 in table): the table, then 15 ChArUco board views held two seconds each
(where the page's coverage map asks for them, so that the frame is covered), then the
table again with its four corner anchors, 12 models (16 mm markers on 32 mm bases, 20 mm
on 40 mm ones, every fourth on a 1 in stand) and a wall, held as its last frame. In
Chromium, at a person's pace (clicks held, text typed key by key): the camera chosen,
the lens calibrated until no more views are kept, the table's size typed and its four
corners clicked, zoomed in, where the rig's camera puts them; the game chosen and each
marker clicked and said what it is; the files written and the game started.

The truth is the rig's: where it placed the anchors and models, and ``calibrate`` run in
the test on the clip's board pictures; never what the set-up itself says. Each step's
refusals are checked at the field they name. Screenshots of the steps are kept in
``$TABLESIGHT_ARTEFACTS`` (``tests/artefacts/``) as ``setup-1-camera.png`` ... for the
docs.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import time
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from tablesight.calibration.camera import calibrate
from tablesight.calibration.setup import Setup
from tablesight.calibration.table import MM_PER_IN
from tablesight.rig.accuracy import scene_camera
from tablesight.rig.charuco import board_corners_in, board_on_table, random_charuco_views
from tablesight.rig.synth import PlacedMarker, render_table
from tablesight.rig.webcam import write_frames
from tablesight.setup.session import BOARD
from tablesight.vision.decodepool import read_ahead

pytestmark = [pytest.mark.browser, pytest.mark.slow]
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

REPO = Path(__file__).resolve().parents[2]
ARTEFACTS = Path(os.environ.get("TABLESIGHT_ARTEFACTS") or REPO / "tests" / "artefacts")

TABLE_IN = (44.0, 30.0)
W, D = TABLE_IN
DICTIONARY = "4x4_50"
#: The anchors as glued: (id, x, y, heading); anchor 1 a quarter turn.
ANCHORS = [(0, 1.5, 1.5, 0.0), (1, 42.5, 1.5, 90.0), (2, 42.5, 28.5, 0.0), (3, 1.5, 28.5, 0.0)]
ANCHOR_MM = 40.0
#: The table's corners in the order they are clicked: near-left, near-right, far-right,
#: far-left.
CORNERS_IN = np.array([[0.0, 0.0, 0.0], [W, 0.0, 0.0], [W, D, 0.0], [0.0, D, 0.0]])
#: The models' bases and the markers printed for them (mm): a 20 mm marker (the sheet's
#: default) on a 40 mm base; on a 32 mm one, at most 16.9 mm fits with its white border.
#: How high a marker's face is on a base's top, and on a stand (mm).
BASES_MM = {32.0: 16.0, 40.0: 20.0}
MARKER_MM = 20.0
BASE_TOP_MM, STAND_MM = 4.0, 25.4
#: The wall: its marker flat on the table at its middle, its footprint round it.
WALL = SimpleNamespace(
    id="wall", marker=30, x=21.5, y=9.25, footprint="-2, -0.75\n2, -0.75\n2, 0.75\n-2, 0.75"
)
#: The clip: frames a second, and how long (s) the table, each board view and the table
#: with the models are shown.
FPS = 2.0
LEAD_S, VIEW_S, TAIL_S = 8.0, 2.0, 2.0
VIEWS, CANDIDATES = 15, 40
#: How long a person holds the button for a click (ms), and between keys (ms).
HOLD_MS, KEY_MS = 100, 25
#: Tolerances: the page's RMS and fx against calibrate's; the anchors' places (in);
#: the models located with the written files (median, in).
CALIBRATION_SHARE, ANCHOR_IN, LOCATED_IN = 0.02, 0.05, 0.02
#: What the set-up server prints when its page is up.


def model_truth() -> list[SimpleNamespace]:
    """12 models in a 4 x 3 grid with any heading: their names, sides, bases (40 mm in
    the far row and the third column, where a 16 mm marker would be under 18 px; else
    32 mm), markers (ids 10-21) and where each base's centre is; every fourth on a
    stand."""
    rng = random.Random(5)
    out = []
    for i in range(12):
        height = STAND_MM if i % 4 == 3 else BASE_TOP_MM
        x, y = 8.0 + 9.0 * (i % 4), 5.5 + 7.5 * (i // 4)
        heading = rng.uniform(0, 360)
        side = ("goliath", "escher")[i % 2]
        base = 40.0 if i // 4 == 2 or i % 4 == 2 else 32.0
        out.append(
            SimpleNamespace(
                id=f"{side[:3]}{i + 1}",
                side=side,
                marker=10 + i,
                x=x,
                y=y,
                height_mm=height,
                base_mm=base,
                placed=PlacedMarker(
                    10 + i, BASES_MM[base], x, y, height / MM_PER_IN, heading, cv2.aruco.DICT_4X4_50
                ),
            )
        )
    return out


def covering_views(camera) -> list[np.ndarray]:
    """``VIEWS`` pictures of the board by the camera, held where the frame is not covered
    yet, as the page's coverage map asks: of ``CANDIDATES`` random views, each the one
    whose board corners fall in the most cells of a 10 x 10 grid over the frame that no
    view chosen before reached. (Views left to chance cover 60-70 % of the 5 x 5 grid, and
    the lens's distortion is then guessed at the frame's corners, where the near table
    corners are: anchors 0.07 in off from exact clicks.)"""
    board = BOARD.board()
    corners_in = board_corners_in(board, board_on_table(board, 0.0, 0.0))
    candidates = random_charuco_views(board, CANDIDATES, *camera.size, 3, lens=camera)

    def cells(view) -> set[tuple[int, int]]:
        px = view.project(corners_in)
        inside = (px[:, 0] >= 0) & (px[:, 0] < camera.width_px)
        inside &= (px[:, 1] >= 0) & (px[:, 1] < camera.height_px)
        scale = np.array([10 / camera.width_px, 10 / camera.height_px])
        return {(int(c), int(r)) for c, r in (px[inside] * scale)}

    reached = [cells(view) for _, view in candidates]
    covered: set[tuple[int, int]] = set()
    chosen: list[int] = []
    while len(chosen) < VIEWS:
        k = max((i for i in range(len(candidates)) if i not in chosen),
                key=lambda i: len(reached[i] - covered))  # fmt: skip
        chosen.append(k)
        covered |= reached[k]
    return [candidates[k][0] for k in chosen]


@pytest.fixture(scope="module")
def rig(tmp_path_factory) -> SimpleNamespace:
    """The clip and what it shows: the camera, the table picture, the models and the
    board pictures as the clip holds them (decoded as the server decodes them)."""
    folder = tmp_path_factory.mktemp("setup-clip")
    camera = scene_camera()
    models = model_truth()
    anchors = [PlacedMarker(i, ANCHOR_MM, x, y, 0.0, h) for i, x, y, h in ANCHORS]
    wall = PlacedMarker(WALL.marker, MARKER_MM, WALL.x, WALL.y, 0.0, 0.0)
    table = render_table(camera, TABLE_IN, anchors + [wall] + [m.placed for m in models])
    bare = render_table(camera, TABLE_IN, anchors)
    views = covering_views(camera)
    lead, hold, tail = (round(s * FPS) for s in (LEAD_S, VIEW_S, TAIL_S))
    frames = [bare] * lead + [v for v in views for _ in range(hold)] + [table] * tail
    clip = folder / "clip.avi"
    write_frames(frames, clip, FPS, camera.size, "mjpg")
    cv2.imwrite(str(folder / "table.png"), table)
    decoded = [d.gray for d in read_ahead(str(clip))]
    boards = [decoded[lead + k * hold] for k in range(VIEWS)]
    return SimpleNamespace(
        folder=folder,
        clip=clip,
        table_png=folder / "table.png",
        camera=camera,
        models=models,
        boards=boards,
        corners_px=camera.project(CORNERS_IN),
    )


@pytest.fixture(scope="module")
def table_only(rig) -> Path:
    """A clip of the table with its models alone (a camera already calibrated)."""
    clip = rig.folder / "table-only.avi"
    table = cv2.imread(str(rig.table_png))
    write_frames([table] * 4, clip, FPS, rig.camera.size, "mjpg")
    return clip


@pytest.fixture
def run_setup(run_setup, tmp_path):
    """``with run_setup(source) as (process, url, stderr lines):`` ``tablesight setup
    --source SOURCE --folder TMP_PATH`` on a free port, as a user starts it (the files
    are written in ``tmp_path`` or under it); stopped with Ctrl-C on leaving."""
    return lambda source, wait_s=60.0: run_setup(source, wait_s, "--folder", str(tmp_path))


def api(url: str, path: str) -> dict:
    with urllib.request.urlopen(url + path.lstrip("/"), timeout=10) as response:
        return json.load(response)


def poll(page, check, what: str, wait_s: float = 30.0) -> None:
    """Until ``check()`` holds, asked every 100 ms for at most ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while not check():
        assert time.monotonic() < deadline, f"waited {wait_s:.0f} s for {what}"
        page.wait_for_timeout(100)


# -- a person at the page ---------------------------------------------------------------


def click(page, selector: str) -> None:
    """A held click on an element, as a hand makes it."""
    page.locator(selector).click(delay=HOLD_MS)


def type_into(page, selector: str, text: str) -> None:
    """The field emptied and ``text`` typed key by key."""
    field = page.locator(selector)
    field.click(delay=HOLD_MS)
    field.fill("")
    field.press_sequentially(text, delay=KEY_MS)


def go_to(page, step: str) -> None:
    click(page, f'#steps button[data-step="{step}"]')
    expect(page.locator(f"#step-{step}")).to_be_visible()


def shot(page, name: str) -> None:
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTEFACTS / name))


def on_picture(page, px: tuple[float, float], scroll: bool = False) -> tuple[float, float]:
    """Where on the screen a pixel of the picture is shown (its displayed size over its
    own); with ``scroll``, the zoomed frame is scrolled to bring it to the middle first."""
    if scroll:
        page.evaluate(
            """([x, y]) => { const img = document.getElementById("picture");
                const f = document.getElementById("frame");
                const k = img.clientWidth / img.naturalWidth;
                f.scrollTo(x * k - f.clientWidth / 2, y * k - f.clientHeight / 2); }""",
            [float(px[0]), float(px[1])],
        )
        page.wait_for_timeout(150)
    box = page.evaluate(
        """() => { const img = document.getElementById("picture");
            const r = img.getBoundingClientRect();
            return [r.left, r.top, r.width / img.naturalWidth, r.height / img.naturalHeight]; }"""
    )
    return box[0] + px[0] * box[2], box[1] + px[1] * box[3]


def click_picture(page, px: tuple[float, float], scroll: bool = False) -> None:
    """A held click on the screen pixel nearest where the picture shows ``px``."""
    x, y = on_picture(page, px, scroll)
    page.mouse.move(round(x), round(y), steps=4)
    page.mouse.down()
    page.wait_for_timeout(HOLD_MS)
    page.mouse.up()


def field_error(page, section: str, field: str):
    return page.locator(f'#step-{section} output.field-error[data-field="{field}"]')


def number(text: str) -> float:
    found = re.search(r"-?\d+(\.\d+)?", text)
    assert found, text
    return float(found.group(0))


def choose_source(page, clip: Path) -> None:
    go_to(page, "camera")
    type_into(page, "#spec", str(clip))
    click(page, "#use-source")
    expect(page.locator("#source-status")).to_contain_text("1920 x 1080")


def click_corners(page, corners_px: np.ndarray) -> None:
    """The table's four corners, clicked zoomed in at 300 % where the camera puts them."""
    page.select_option("#zoom", "3")
    click(page, "#clear-corners")
    for k, name in enumerate(("near-left", "near-right", "far-right", "far-left")):
        expect(page.locator("#corner-prompt")).to_contain_text(f"the {name} corner")
        click_picture(page, tuple(corners_px[k]), scroll=True)
    page.select_option("#zoom", "fit")


def fill_model(page, model: SimpleNamespace, marker_size: bool = True) -> None:
    """The model's form filled in: the marker's size only where it is not the sheet's
    default (or not at all, without ``marker_size``), its height only on a stand."""
    form = "#entry-form"
    page.locator(f'{form} input[name="kind"][value="model"]').check()
    type_into(page, f'{form} input[name="entry.id"]', model.id)
    type_into(page, f'{form} input[name="entry.side"]', model.side)
    page.select_option(f'{form} select[name="entry.base.shape"]', "round")
    type_into(page, f'{form} input[name="entry.base.diameter_mm"]', f"{model.base_mm:g}")
    type_into(page, f'{form} input[name="entry.movement"]', "5")
    if marker_size and BASES_MM[model.base_mm] != MARKER_MM:
        type_into(
            page, f'{form} input[name="entry.marker_size_mm"]', f"{BASES_MM[model.base_mm]:g}"
        )
    if model.height_mm != BASE_TOP_MM:
        type_into(page, f'{form} input[name="entry.marker_height_mm"]', f"{model.height_mm:g}")


def open_marker(page, url: str, marker: int) -> None:
    """Click a marker's box on the picture, where the state puts it."""
    seen = {m["id"]: m for m in api(url, "/api/setup/state")["markers"]}
    click_picture(page, tuple(seen[marker]["centre_px"]))
    expect(page.locator("#entry-form")).to_be_visible()
    expect(page.locator("#entry-title")).to_contain_text(f"Marker {marker}")


# -- the whole way through ----------------------------------------------------------------


def test_from_a_webcam_to_a_refereed_game(rig, pages, run_setup, tablesight, tmp_path):
    with run_setup(rig.clip) as (_, url, _lines):
        page = pages(url + "setup", 1600, 1000)

        # 1. the camera: the clip chosen again, so that it plays from its start
        choose_source(page, rig.clip)
        shot(page, "setup-1-camera.png")

        # 2. calibrating until no more views are kept
        go_to(page, "calibrate")
        click(page, "#calibration-toggle")
        expect(page.locator("#calibration-toggle")).to_have_text("Stop calibrating")
        assert api(url, "/api/setup/state")["calibration"]["board"] == BOARD.model_dump()
        mine = calibrate(((f"view {k}", g) for k, g in enumerate(rig.boards)), BOARD)
        views, steady = -1, time.monotonic()
        deadline = time.monotonic() + LEAD_S + VIEWS * VIEW_S + 60
        while time.monotonic() - steady < 6 * VIEW_S:
            assert time.monotonic() < deadline, "the views kept never settled"
            now = int(page.locator("#views").text_content())
            if now != views:
                views, steady = now, time.monotonic()
            page.wait_for_timeout(250)
        expect(page.locator("#rms")).not_to_have_text("-")
        shot(page, "setup-2-calibrate.png")
        rms = number(page.locator("#rms").text_content())
        fx = number(page.locator("#focal").text_content())
        print(
            f"\nviews kept {views} (calibrate: {len(mine.used)}); RMS {rms} px (calibrate: "
            f"{mine.camera.rms_px:.4f}); fx {fx} (calibrate: {mine.camera.fx:.1f}, the rig: "
            f"{rig.camera.fx:.1f})"
        )
        assert views == len(mine.used)
        assert rms == pytest.approx(mine.camera.rms_px, rel=CALIBRATION_SHARE)
        assert fx == pytest.approx(mine.camera.fx, rel=CALIBRATION_SHARE)
        click(page, "#calibration-toggle")
        expect(page.locator("#calibration-toggle")).to_have_text("Start calibrating")

        # 3. the table: its size typed, its corners clicked
        go_to(page, "table")
        type_into(page, "#width-in", "44")
        type_into(page, "#depth-in", "30")
        type_into(page, "#dictionary", DICTIONARY)
        type_into(page, "#anchor-size", f"{ANCHOR_MM:g}")
        click_corners(page, rig.corners_px)
        expect(page.locator("#anchors tbody tr")).to_have_count(4)
        expect(page.locator("#table-health")).to_contain_text("Table pose:")
        shot(page, "setup-3-table.png")
        rows = page.locator("#anchors tbody tr").all()
        shown = {
            int(r.locator("td").nth(0).text_content()): (
                float(r.locator("td").nth(1).text_content()),
                float(r.locator("td").nth(2).text_content()),
            )
            for r in rows
        }
        off = {i: math.dist(shown[i], (x, y)) for i, x, y, _ in ANCHORS}
        print(f"anchors off (in): { {i: round(v, 3) for i, v in off.items()} }")
        assert max(off.values()) <= ANCHOR_IN, off
        assert api(url, "/api/setup/state")["table"]["proposal"]["healthy"]

        # 4. the roster: the game, then every marker clicked and said what it is
        go_to(page, "roster")
        page.select_option("#game", "necromunda")
        expect(page.locator("#keywords, #marker-list").first).to_be_attached()
        expect(page.locator("svg#marks g.markers rect.unassigned")).to_have_count(13)
        for k, model in enumerate(rig.models):
            open_marker(page, url, model.marker)
            fill_model(page, model)
            if k == 8:
                shot(page, "setup-4-roster.png")
            click(page, "#save-entry")
            expect(page.locator("#entry-form")).to_be_hidden()
            box = page.locator(f'svg#marks g.markers rect[data-marker="{model.marker}"]')
            expect(box).to_have_class(re.compile(r"\bassigned\b"))
        open_marker(page, url, WALL.marker)
        page.locator('#entry-form input[name="kind"][value="terrain"]').check()
        type_into(page, '#entry-form input[name="entry.id"]', WALL.id)
        page.locator('#entry-form textarea[name="entry.polygon"]').fill(WALL.footprint)
        type_into(page, '#entry-form input[name="entry.height"]', "3")
        page.locator('#keywords input[value="impassable"]').check()
        click(page, "#save-entry")
        expect(page.locator("#entry-form")).to_be_hidden()
        expect(page.locator("svg#marks g.markers rect.unassigned")).to_have_count(0)
        expect(page.locator("svg#marks g.markers rect.assigned")).to_have_count(13)

        # 5. the marker sheet
        go_to(page, "print")
        expect(page.locator("#sheet-count")).to_contain_text("12 models and 1 terrain piece")
        page.wait_for_timeout(1000)
        expect(page.locator("#step-print .step-message")).to_be_empty()
        shot(page, "setup-5-print.png")
        with urllib.request.urlopen(url + "api/setup/markers.pdf", timeout=30) as pdf:
            assert pdf.read(5) == b"%PDF-"

        # 6. the files written and the game started
        go_to(page, "start")
        folder = tmp_path / "my table"
        type_into(page, "#folder", str(folder))
        click(page, "#write")
        expect(page.locator("#run a")).to_be_visible(timeout=60_000)
        shot(page, "setup-6-start.png")
        run_url = page.locator("#run a").get_attribute("href")
        written = page.locator("#written li").all_text_contents()
        print(f"written: {written}; refereed at {run_url}")
        for name in ("table.toml", "roster.toml", "terrain.toml", "camera.toml"):
            assert (folder / name).is_file(), name
            assert any(name in line for line in written), (name, written)
        with urllib.request.urlopen(run_url.rstrip("/") + "/api/state", timeout=10) as r:
            assert r.status == 200 and "models" in json.load(r)
        # the game's table view links back to this set-up page
        with urllib.request.urlopen(run_url, timeout=10) as r:
            table_view = r.read().decode()
        setup_page = page.url.split("#")[0]
        assert setup_page.endswith("/setup")
        assert f'id="setup-link" href="{setup_page}"' in table_view
        page.close()  # before its server stops, so that it asks no more

    loaded = Setup.load(
        "necromunda",
        folder / "table.toml",
        folder / "roster.toml",
        folder / "terrain.toml",
        folder / "camera.toml",
    )
    assert sorted(m.marker for m in loaded.roster) == [m.marker for m in rig.models]
    assert [t.id for t in loaded.terrain] == [WALL.id]

    detect = tablesight(
        "detect", str(rig.table_png), "--json",
        "--table", str(folder / "table.toml"),
        "--roster", str(folder / "roster.toml"),
        "--terrain", str(folder / "terrain.toml"),
        "--camera", str(folder / "camera.toml"),
    )  # fmt: skip
    assert detect.returncode == 0, detect.stderr
    where = {m["id"]: m for m in json.loads(detect.stdout)["models"]}
    errors = [math.dist((where[m.id]["x"], where[m.id]["y"]), (m.x, m.y)) for m in rig.models]
    print(f"models located: median {np.median(errors):.4f} in, worst {max(errors):.4f} in")
    assert len(errors) == 12
    assert float(np.median(errors)) <= LOCATED_IN


# -- refusals at their fields -------------------------------------------------------------


def test_each_steps_refusal_is_said_at_its_field(rig, table_only, pages, run_setup, tmp_path):
    camera_toml = tmp_path / "camera.toml"
    camera_toml.write_text(rig.camera.calibrated().to_toml())
    with run_setup(table_only) as (_, url, _lines):
        # the browser logs each refused request as an error: those are what is tested
        page = pages(url + "setup", 1600, 1000, allow=("status of 400", "status of 409"))
        choose_source(page, table_only)

        go_to(page, "calibrate")
        type_into(page, "#camera-path", str(tmp_path / "no-such-camera.toml"))
        click(page, "#load-camera")
        expect(field_error(page, "calibrate", "path")).to_contain_text("no-such-camera.toml")
        type_into(page, "#camera-path", str(camera_toml))
        click(page, "#load-camera")
        expect(page.locator("#camera-file")).to_contain_text("camera.toml")
        expect(field_error(page, "calibrate", "path")).to_be_hidden()

        # a table of no width
        go_to(page, "table")
        type_into(page, "#width-in", "0")
        type_into(page, "#depth-in", "30")
        type_into(page, "#dictionary", DICTIONARY)
        click_corners(page, rig.corners_px)
        error = field_error(page, "table", "width_in")
        expect(error).to_contain_text("got 0")
        expect(page.locator("#width-in")).to_have_class(re.compile("invalid"))
        type_into(page, "#width-in", "44")
        click(page, "#propose")
        expect(error).to_be_hidden()
        expect(page.locator("#anchors tbody tr")).to_have_count(4)

        # a tape measure longer than the table, then the true one (anchor 1: 1.5 in from
        # the right edge and from the near one)
        tape_x = '#anchors input[name="tape[1].x_edge_in"]'
        tape_y = '#anchors input[name="tape[1].y_edge_in"]'
        type_into(page, tape_x, "50")
        type_into(page, tape_y, "1.5")
        click(page, "#propose")
        tape_error = field_error(page, "table", "tape[1]")
        expect(tape_error).to_contain_text("got 50")
        expect(page.locator(tape_x)).to_have_class(re.compile("invalid"))
        type_into(page, tape_x, "1.5")
        click(page, "#propose")
        expect(tape_error).to_be_hidden()
        taped = page.locator('#anchors tbody tr[data-anchor="1"] td')
        expect(taped.nth(1)).to_have_text("42.50")
        expect(taped.nth(2)).to_have_text("1.50")

        # two models on one marker, and a marker the dictionary does not have
        go_to(page, "roster")
        page.select_option("#game", "necromunda")
        first, second = rig.models[:2]
        assert first.base_mm == 32.0
        open_marker(page, url, first.marker)
        fill_model(page, first, marker_size=False)  # the sheet's 20 mm: too big for its base
        page.locator('#keywords input[value="walker"]').check()
        click(page, "#save-entry")
        # refused where it is typed, not when printing: 20 mm with its one-cell border of
        # 20 / 6 mm is 26.7 mm square, 37.7 mm across, over a 32 mm base; at most
        # 32 / sqrt(2) x 6 / 8 = 16.97, floored to 16.9 mm
        size_error = field_error(page, "roster", "entry.marker_size_mm")
        expect(size_error).to_contain_text(f"{first.id} 20 mm on a 32 mm round base")
        expect(size_error).to_contain_text("(at most 16.9 mm)")
        assert size_error.inner_text().count(first.id) == 1
        assert api(url, "/api/setup/state")["models"] == []
        type_into(page, '#entry-form input[name="entry.marker_size_mm"]', "16")
        click(page, "#save-entry")
        expect(page.locator("#entry-form")).to_be_hidden()
        assert api(url, "/api/setup/state")["models"][0]["marker_size_mm"] == 16.0
        open_marker(page, url, second.marker)
        fill_model(page, second)
        type_into(page, '#entry-form input[name="entry.marker"]', str(first.marker))
        click(page, "#save-entry")
        marker_error = field_error(page, "roster", "entry.marker")
        expect(marker_error).to_contain_text(f"marker {first.marker} is also")
        type_into(page, '#entry-form input[name="entry.marker"]', "99")
        click(page, "#save-entry")
        expect(marker_error).to_contain_text("99")
        expect(marker_error).to_contain_text(DICTIONARY)
        assert len(api(url, "/api/setup/state")["models"]) == 1
        type_into(page, '#entry-form input[name="entry.marker"]', str(second.marker))
        click(page, "#save-entry")
        expect(page.locator("#entry-form")).to_be_hidden()
        shown = api(url, "/api/setup/state")["models"]
        assert [m["marker"] for m in shown] == [first.marker, second.marker]
        assert shown[0]["keywords"] == ["walker"]
        go_to(page, "print")
        page.wait_for_timeout(1000)
        expect(page.locator("#step-print .step-message")).to_be_empty()

        # a folder that cannot be written to: under a file
        go_to(page, "start")
        blocker = tmp_path / "a file"
        blocker.write_text("not a folder")
        type_into(page, "#folder", str(blocker / "my table"))
        click(page, "#write")
        expect(field_error(page, "start", "folder")).to_contain_text("cannot write")
        assert not (blocker.parent / "my table").exists()

        # a folder outside the one the set-up was given
        type_into(page, "#folder", str(tmp_path.parent))
        click(page, "#write")
        expect(field_error(page, "start", "folder")).to_contain_text(
            f"writes only in {tmp_path} and the folders under it"
        )

        # a roster of the user's own there: replaced only once the user says so, and kept
        kept = tmp_path / "kept"
        kept.mkdir()
        (kept / "roster.toml").write_bytes(b"# my own roster\n")
        asked: list[str] = []

        def dismiss(dialog) -> None:
            asked.append(dialog.message)
            dialog.dismiss()

        type_into(page, "#folder", "kept")  # under the set-up's folder
        page.once("dialog", dismiss)
        click(page, "#write")
        expect(field_error(page, "start", "folder")).to_contain_text("the files there are kept")
        assert asked == [
            f"roster.toml in {kept}: replace it? (each old one is kept beside its new one, "
            "as roster.toml.1 or the next free number)"
        ]
        assert sorted(p.name for p in kept.iterdir()) == ["roster.toml"]
        page.once("dialog", lambda dialog: dialog.accept())
        click(page, "#write")
        expect(page.locator("#written-folder")).to_have_text(f"Written to {kept}:")
        assert (kept / "roster.toml.1").read_bytes() == b"# my own roster\n"
        assert sorted(p.name for p in kept.iterdir()) == [
            "camera.toml",
            "roster.toml",
            "roster.toml.1",
            "table.toml",
        ]
        assert Setup.load("necromunda", *(kept / f"{n}.toml" for n in ("table", "roster"))).roster
        page.close()
