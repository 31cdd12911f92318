"""The web UI's edges: the views take no lock, the live game and the replay both answer
the one protocol with states of one shape, and each page's keyboard is said once
(webui/keys.py)."""

from __future__ import annotations

import ast
import inspect
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import cv2
import pytest

from tablesight.match.game import Game
from tablesight.match.replay import Replay
from tablesight.vision.sources import FileSource, Frame
from tablesight.webui import keys
from tablesight.webui.app import create_app
from tablesight.webui.protocol import Refereed

WEBUI = Path(__file__).resolve().parents[2] / "webui"
#: What a view would take to hold a game still: its lock, or the condition over it.
LOCKS = {"lock", "changed"}


def test_no_view_takes_the_games_lock() -> None:
    found = []
    for path in sorted(WEBUI.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr in LOCKS:
                found.append(f"{path.name}:{node.lineno}: .{node.attr}")
    assert found == []


def _members(kind: type) -> dict[str, object]:
    return {n: v for n, v in vars(kind).items() if not n.startswith("_")}


@pytest.mark.parametrize("kind", [Game, Replay])
def test_the_game_and_the_replay_answer_the_protocol(kind: type) -> None:
    for name, member in _members(Refereed).items():
        if isinstance(member, property):
            continue  # an attribute of each instance: see the test below
        theirs = getattr(kind, name, None)
        assert callable(theirs), f"{kind.__name__} has no {name}()"
        ours = list(inspect.signature(member).parameters)  # type: ignore[arg-type]
        params = inspect.signature(theirs).parameters
        # the protocol's parameters, in its order; any more only with defaults (the live
        # game's decide also takes who decided: a judge through the hub)
        assert list(params)[: len(ours)] == ours, name
        more = list(params.values())[len(ours) :]
        assert all(p.default is not inspect.Parameter.empty for p in more), name


def test_a_live_game_has_the_protocols_attributes(setup, footage, tmp_path) -> None:
    _, pics = footage
    cv2.imwrite(str(tmp_path / "0.png"), pics["start"])
    game = Game(setup, FileSource(str(tmp_path)))
    for name, member in _members(Refereed).items():
        if isinstance(member, property):
            kind = {"int": int, "bool": bool}[inspect.get_annotations(member.fget)["return"]]
            assert type(getattr(game, name)) is kind, name
    # the change counter: a frame moves it on, and a waiter sees it at once
    version = game.wait_for_change(-1, timeout=0)
    game.process(Frame(pics["start"], 0.0, 0))
    assert game.wait_for_change(version, timeout=1) == version + 1
    # the state is worked out once per change, and shared
    assert game.state() is game.state()
    first = game.state()
    game.process(Frame(pics["start"], 1 / 30, 1))
    assert game.state() is not first and game.state()["live"]["frame"] == 1


def test_the_game_and_the_replay_give_states_of_one_shape(
    played_game, recorded_match, state_shape
) -> None:
    """Every key of the live game's state, at every level, is in the replay's, and the
    replay's only other keys say where it stands (``replay``)."""
    live = played_game.state()
    with Replay(recorded_match) as replay:
        replay.seek(replay.end_t)  # the ganger moved, its move flagged: as in the game
        replayed = replay.state()
    assert [f["kind"] for f in live["flags"]] == [f["kind"] for f in replayed["flags"]]
    where = {k for k in state_shape(replayed) if k.startswith("state.replay")}
    assert where and state_shape(replayed) - where == state_shape(live)


class _Help(HTMLParser):
    """The help dialog's lines (``dt``, ``dd``) and the page's key bindings (``#keys``)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[list[str]] = []
        self.bindings = ""
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "dt":
            self.lines.append([])
        if tag in ("dt", "dd") or (tag == "script" and ("id", "keys") in attrs):
            self._in = tag

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in in ("dt", "dd"):
            self.lines[-1].append(data)
        elif self._in == "script":
            self.bindings += data


@pytest.mark.parametrize(
    ("path", "keyboard", "script"),
    [("/", keys.TABLE, "table.js"), ("/replay", keys.REPLAY, "replay.js")],
)
def test_each_pages_keyboard_is_said_once(path, keyboard, script) -> None:
    shown = object()  # rendering a page asks nothing of the game
    replay = shown if path == "/replay" else None
    client = create_app(shown, replay=replay).test_client()  # type: ignore[arg-type]
    page = _Help()
    page.feed(client.get(path).get_data(as_text=True))
    assert page.lines == [[k.label, k.does] for k in keyboard]
    assert json.loads(page.bindings) == keys.bindings(keyboard)
    # the page's script has a function for every action, and no description of its own
    code = (WEBUI / "static" / script).read_text()
    for action in set(keys.bindings(keyboard).values()) - {"help"}:
        assert re.search(rf"\b{action}\b\s*[:(]", code), f"{script} does not do {action}"
    for key in keyboard:
        assert key.does not in code, f"{script} says what {key.label} does itself"


def test_a_key_bound_twice_is_refused() -> None:
    twice = (keys.Key("a", "one", {"a": "one"}), keys.Key("A", "two", {"a": "two"}))
    with pytest.raises(ValueError, match="key 'a' bound twice: to one and two"):
        keys.bindings(twice)
