"""The keyboard: each key, the action it runs and what that does, said once.

The pages' keys, and the terminal's (``tablesight run`` reads single key presses, and
prints ``TERMINAL`` as its help).


A page's help dialog (``?``) is rendered from its list, and the page's script is handed
the same list's bindings (``KeyboardEvent.key``, ``Shift+`` before a named key pressed
with shift, to the name of an action); the script maps action names to functions and
knows no key or description itself.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tablesight.match.game import Game


@dataclass(frozen=True)
class Key:
    """One line of a page's keyboard help: ``label`` as shown (``"a / x"``), what it
    does, and ``binds``: each key (as ``KeyboardEvent.key`` names it) to its action."""

    label: str
    does: str
    binds: dict[str, str]


#: The table view (``/``).
TABLE = (
    Key("m", "start a movement phase", {"m": "start_phase"}),
    Key("e", "end the phase", {"e": "end_phase"}),
    Key("n", "next turn", {"n": "next_turn"}),
    Key("s", "priority to the next side", {"s": "next_side"}),
    Key("t", "measure: click two models, or a model and a point on the map", {"t": "measure"}),
    Key("d", "declare for the selected model", {"d": "declare"}),
    Key("a / x", "accept / dismiss the newest flag", {"a": "accept_flag", "x": "dismiss_flag"}),
    Key("Esc", "cancel, unselect", {"Escape": "cancel"}),
    Key("?", "this list", {"?": "help"}),
)

#: The replay viewer (``/replay``).
REPLAY = (
    Key(
        "\u2190 / \u2192",
        "previous / next frame",
        {"ArrowLeft": "previous_frame", "ArrowRight": "next_frame"},
    ),
    Key(
        "shift \u2190 / \u2192",
        "one second back / on",
        {"Shift+ArrowLeft": "second_back", "Shift+ArrowRight": "second_on"},
    ),
    Key(
        "\u2191 or n",
        "next flag (violation, close call, advisory) of the events listed",
        {"ArrowUp": "next_flag", "n": "next_flag"},
    ),
    Key("\u2193 or p", "previous flag", {"ArrowDown": "previous_flag", "p": "previous_flag"}),
    Key("Home / End", "the start / the end", {"Home": "start", "End": "end"}),
    Key("space", "play / pause", {" ": "play"}),
    Key("t", "measure: click two models, or a model and a point on the map", {"t": "measure"}),
    Key("Esc", "cancel, unselect", {"Escape": "cancel"}),
    Key("?", "this list", {"?": "help"}),
)


#: ``tablesight run`` in a terminal: the table view's phase keys, help and quit.
TERMINAL = (
    *(key for key in TABLE if key.label in ("m", "e", "n", "s")),
    Key("?", "list these keys", {"?": "help"}),
    Key("q", "quit", {"q": "quit"}),
)


def bindings(keys: tuple[Key, ...]) -> dict[str, str]:
    """Every key of a page to its action's name, for the page's script."""
    out: dict[str, str] = {}
    for key in keys:
        for name, action in key.binds.items():
            if name in out:
                raise ValueError(f"key {name!r} bound twice: to {out[name]} and {action}")
            out[name] = action
    return out


def keys_help() -> str:
    """The terminal's keys, on one line."""
    return "keys: " + "  ".join(f"{k.label} {k.does}" for k in TERMINAL)


def terminal_keys(referee: Game, say: Callable[[str], object]) -> None:
    """Single key presses on the terminal, without Enter, until q; ``say`` prints."""
    import termios
    import tty

    actions: dict[str, Callable[[], object]] = {
        "start_phase": referee.start_phase,
        "end_phase": referee.end_phase,
        "next_turn": referee.next_turn,
        "next_side": lambda: say(f"priority: {referee.next_side()}"),
        "help": lambda: say(keys_help()),
    }
    keys = bindings(TERMINAL)
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        while True:
            action = keys.get(sys.stdin.read(1).lower() or "q")
            if action == "quit":
                referee.stop()
                return
            if action is not None:
                actions[action]()
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
