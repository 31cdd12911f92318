"""What the web UI's tests share, as fixtures: the game's setup on the two-model table,
and Debian's Chromium driven by Playwright. The table, its rendered clip (``footage``:
the web tests use ``start`` and ``moved``), the match files to referee it with and the
``tablesight`` command come from tests/conftest.py.

Browser tests are marked ``@pytest.mark.browser``; they are skipped where Chromium is
absent.

For the security tests: ``played_game`` (the clip's move refereed, frame by frame, no
thread), ``recorded_match`` (the clip recorded with its video, as ``run --record`` does)
and ``hostile`` (a game or replay whose every name is markup, as a hostile roster or match
file would carry: the loaders refuse such names now, so it is made here).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tablesight.match.viewstate import Worked

#: Playwright cannot download its browsers here: it drives Debian's.
CHROMIUM = "/usr/bin/chromium"
#: Waiting for a page to catch up (ms).
WAIT_MS = 20_000


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if shutil.which(CHROMIUM) is not None:
        return
    skip = pytest.mark.skip(reason=f"the browser tests drive Debian's Chromium: {CHROMIUM}")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


#: How long a person's click holds the button down (ms).
HOLD_MS = 120


def _hold_click(page: Any, locator: Any) -> None:
    """A person's click on what ``locator`` finds: brought into view, the pointer moved
    onto its middle, button down, held, up."""
    locator.scroll_into_view_if_needed()
    box = locator.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, steps=8)
    page.mouse.down()
    page.wait_for_timeout(HOLD_MS)
    page.mouse.up()


def _project(state: dict[str, Any], pts: Any) -> Any:
    """Table inches to the live picture's pixels, by OpenCV, with the camera the state
    gives (its homography where it has one)."""
    import cv2
    import numpy as np

    cam = state["camera"]
    if cam.get("homography"):
        h = np.array(cam["homography"])
        return cv2.perspectiveTransform(pts.reshape(-1, 1, 2), h).reshape(-1, 2)
    flat = np.hstack([pts, np.zeros((len(pts), 1))])
    rvec, _ = cv2.Rodrigues(np.array(cam["rotation"], dtype=np.float64))
    out, _ = cv2.projectPoints(
        flat,
        rvec,
        np.array(cam["translation"], dtype=np.float64),
        np.array(cam["camera_matrix"], dtype=np.float64),
        np.array(cam["dist_coeffs"], dtype=np.float64),
    )
    return out.reshape(-1, 2)


@pytest.fixture(scope="session")
def person() -> SimpleNamespace:
    """What a person does with a page and a test checks it against: ``click(page,
    locator)``, held as a hand does, and ``project(state, points)``, table inches to the
    picture's pixels by OpenCV."""
    return SimpleNamespace(click=_hold_click, project=_project)


@pytest.fixture(scope="session")
def wait_ms() -> int:
    """How long a browser test waits for a page to catch up (ms)."""
    return WAIT_MS


@pytest.fixture(scope="module")
def browser():
    """One Chromium for a test module."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM)
        sync_api.expect.set_options(timeout=WAIT_MS)
        yield chromium
        chromium.close()


@pytest.fixture
def pages(browser, wait_ms):
    """``pages(url, width, height, init_script=, console_errors=, allow=, wait_until=)``
    opens a page as a new tab; the test fails on any JavaScript error in any page it
    opened, and (unless ``console_errors`` is false) on any console error whose text holds
    none of ``allow``."""
    opened, errors = [], []

    def open_page(
        url: str,
        width: int = 1600,
        height: int = 1000,
        *,
        init_script: str | None = None,
        console_errors: bool = True,
        allow: tuple[str, ...] = (),
        wait_until: str = "domcontentloaded",
    ):
        page = browser.new_page(viewport={"width": width, "height": height})
        if init_script is not None:
            page.add_init_script(init_script)
        page.set_default_timeout(wait_ms)
        page.on("pageerror", lambda exc: errors.append(f"{url}: {exc}"))

        def console(message) -> None:
            if message.type == "error" and not any(a in message.text for a in allow):
                errors.append(f"{url}: console: {message.text}")

        if console_errors:
            page.on("console", console)
        page.goto(url, wait_until=wait_until)
        opened.append(page)
        return page

    yield open_page
    for page in opened:
        page.close()
    assert errors == []


@pytest.fixture
def played_game(footage, setup, tmp_path):
    """A game that has seen the ganger at (10, 10), then 7 in on at (17, 10) (over its 6):
    the events ``phase_started``, ``model_moved``, ``violation`` (id 2)."""
    import cv2

    from tablesight.match.game import Game
    from tablesight.vision.sources import FileSource, Frame

    _, pics = footage
    cv2.imwrite(str(tmp_path / "0.png"), pics["start"])
    # it looks at every frame: the tests show it frames one by one, each its own
    game = Game(setup, FileSource(str(tmp_path)), check_s=1 / 30)
    for k, name in enumerate(["start"] * 12 + ["moved"] * 12):
        game.process(Frame(pics[name], k / 30, k))
    return game


@pytest.fixture(scope="module")
def recorded_match(setup, match_files, tmp_path_factory) -> Path:
    """The 30-frame clip (``match_files``) recorded by a game, with its video beside it."""
    from tablesight.match.game import Game
    from tablesight.match.writer import MatchWriter
    from tablesight.vision.sources import FileSource

    video, _ = match_files
    db = tmp_path_factory.mktemp("recorded") / "match.db"
    writer = MatchWriter(db, setup, source=str(video))
    Game(setup, FileSource(str(video)), recorder=writer).run()
    writer.close()
    return db


#: Each name of the two-model table, and what a hostile file would call it instead: markup
#: that runs script if it is ever parsed as HTML (it sets ``window.__pwned``).
HOSTILE_NAMES = {
    "ganger": "ganger<img src=x onerror=\"window.__pwned='ganger'\">&amp;",
    "brute": "brute'><svg onload=window.__pwned='brute'>",
    "red": "red<script>window.__pwned='red'</script>",
    "blue": "blue<iframe srcdoc=\"<script>parent.__pwned='blue'</script>\"></iframe>",
}
#: A keyword every model is given, as markup.
HOSTILE_KEYWORD = "<img src=x onerror=\"window.__pwned='keyword'\">"


class _Event:
    """An event as the web UI reads it (``id``, ``to_dict()``), its names made hostile."""

    def __init__(self, event: Any, names: Callable[[Any], Any]) -> None:
        self.id = event.id
        self._dict = names(event.to_dict())

    def to_dict(self) -> dict[str, Any]:
        return self._dict


class _HostileSession:
    """A session whose table (``scene()``, what reach is worked out on) names its models,
    sides, units and targets with ``HOSTILE_NAMES``."""

    def __init__(self, session: Any) -> None:
        self._session = session

    @property
    def ruleset(self) -> Any:
        return self._session.ruleset

    def scene(self) -> Any:
        scene = self._session.scene()

        def named(value: str | None) -> str | None:
            return None if value is None else HOSTILE_NAMES.get(value, value)

        models = tuple(
            dataclasses.replace(
                m, id=named(m.id), side=named(m.side), unit=named(m.unit), target=named(m.target)
            )
            for m in scene.models
        )
        return dataclasses.replace(scene, models=models)


class Hostile:
    """A game or replay seen through hostile names: every name in what it answers
    (states, events, messages, the roster, its table's reach) is the markup of
    ``HOSTILE_NAMES``, each model has the keyword ``HOSTILE_KEYWORD``, and those names are
    taken back on the way in."""

    def __init__(self, shown: Any) -> None:
        self._shown = shown
        self._back = {v: k for k, v in HOSTILE_NAMES.items()}
        self._word = re.compile(r"\b(" + "|".join(map(re.escape, HOSTILE_NAMES)) + r")\b")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._shown, name)

    @property
    def session(self) -> _HostileSession:
        return _HostileSession(self._shown.session)

    def table(self) -> tuple[Any, Any]:
        """The table reach is worked out on, its names hostile."""
        session = _HostileSession(self._shown.session)
        return session.scene(), session.ruleset

    def _out(self, value: Any) -> Any:
        if isinstance(value, str):
            if value in HOSTILE_NAMES:
                return HOSTILE_NAMES[value]
            return self._word.sub(lambda m: HOSTILE_NAMES[m.group(1)], value)
        if isinstance(value, dict):
            out = {self._out(k): self._out(v) for k, v in value.items()}
            if "keywords" in out and isinstance(out["keywords"], list):
                out["keywords"] = [*out["keywords"], HOSTILE_KEYWORD]
            return out
        if isinstance(value, (list, tuple)):
            return [self._out(v) for v in value]
        return value

    def _in(self, name: str | None) -> str | None:
        return self._back.get(name, name) if name is not None else None

    def state(self) -> dict[str, Any]:
        return self._out(self._shown.state())

    def newest_state(self, generation: int, version: int) -> Worked | None:
        worked = self._shown.newest_state(generation, version)
        return None if worked is None else Worked(worked.key, self._out(worked.state))

    def info(self) -> dict[str, Any]:
        return self._out(self._shown.info())

    def seek(self, t: float) -> dict[str, Any]:
        return self._out(self._shown.seek(t))

    def events_since(self, first_id: int) -> list[_Event]:
        return [_Event(e, self._out) for e in self._shown.events_since(first_id)]

    def neighbours(self, model_id: str) -> dict[str, Any]:
        return self._out(self._shown.neighbours(self._in(model_id)))

    def measure(self, a: str, b: str | None = None, point: Any = None) -> dict[str, Any]:
        return self._out(self._shown.measure(self._in(a), self._in(b), point))

    def set_side(self, side: str) -> list[_Event]:
        return [_Event(e, self._out) for e in self._shown.set_side(self._in(side))]

    def declare(self, model: str, action=None, target=None, roll=None) -> list[_Event]:
        done = self._shown.declare(self._in(model), action, self._in(target), roll)
        return [_Event(e, self._out) for e in done]

    def start_phase(self, turn=None, side=None) -> list[_Event]:
        return [_Event(e, self._out) for e in self._shown.start_phase(turn, self._in(side))]

    def end_phase(self) -> list[_Event]:
        return [_Event(e, self._out) for e in self._shown.end_phase()]

    def next_turn(self) -> list[_Event]:
        return [_Event(e, self._out) for e in self._shown.next_turn()]


@pytest.fixture(scope="session")
def hostile() -> Callable[[Any], Hostile]:
    """Wraps a game or a replay so that every name it shows is markup (``HOSTILE_NAMES``
    and ``HOSTILE_KEYWORD``, which the wrapper also offers as attributes)."""

    def wrap(shown: Any) -> Hostile:
        return Hostile(shown)

    wrap.names = HOSTILE_NAMES  # type: ignore[attr-defined]
    wrap.keyword = HOSTILE_KEYWORD  # type: ignore[attr-defined]
    return wrap
