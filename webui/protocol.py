"""What the web UI asks of a game: the one protocol the live game and the replay share.

:class:`tablesight.match.game.Game` (live) and :class:`tablesight.match.replay.Replay` (the moment a
recorded match is scrubbed to) both implement :class:`Refereed`; the views call nothing
else. Every method is safe to call from any server thread: the game takes its own lock, so
no view ever holds it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast

from flask import current_app

if TYPE_CHECKING:
    from tablesight.match.replay import Replay
    from tablesight.match.viewstate import Worked
    from tablesight.rules.session import Event

#: Where the app keeps the game (``app.extensions``), and the replay when it serves one.
GAME, REPLAY = "tablesight.game", "tablesight.replay"


class Refereed(Protocol):
    """A game being refereed, live or replayed, as the pages see it."""

    @property
    def version(self) -> int:
        """Counts the changes: any change to what views show moves it on."""

    @property
    def generation(self) -> int:
        """Counts new games (a clip looping) or revisions: the event ids start over."""

    @property
    def closing(self) -> bool:
        """The game is stopping: open streams end."""

    # -- what views show

    def state(self) -> dict[str, Any]:
        """The table as views draw it (:func:`tablesight.rules.view.describe`, with ``live`` and
        ``camera``)."""

    def newest_state(self, generation: int, version: int) -> Worked | None:
        """Without waiting: the state worked out last, with its text made once for every
        caller, if it is of ``generation`` and at least ``version``; else ``None``, and the
        newest is being worked out (what a page's stream sends)."""

    def events_since(self, first_id: int) -> list[Event]:
        """The events from id ``first_id`` on."""

    def wait_for_change(self, version: int, timeout: float) -> int:
        """Until ``version`` is not the game's (or it closes), at most ``timeout`` s; the
        version then."""

    def neighbours(self, model_id: str) -> dict[str, Any]:
        """A model and those near it; ``KeyError`` for no such model."""

    def measure(
        self, a: str, b: str | None = None, point: tuple[float, float] | None = None
    ) -> dict[str, Any]:
        """Edge to edge from model ``a`` to model ``b`` or a table point; ``KeyError``
        naming a missing model."""

    def jpeg(self, quality: int = 80) -> tuple[int, bytes] | None:
        """The picture shown as JPEG, with its frame number; ``None`` without one."""

    # -- controls (an ``InputError`` naming the field when refused)

    def start_phase(self, turn: int | None = None, side: str | None = None) -> list[Event]: ...

    def end_phase(self) -> list[Event]: ...

    def next_turn(self) -> list[Event]: ...

    def set_side(self, side: str) -> list[Event]: ...

    def declare(
        self,
        model: str,
        action: str | None = None,
        target: str | None = None,
        roll: int | None = None,
    ) -> list[Event]: ...

    def decide(self, event_id: int, decision: str) -> None: ...


def game() -> Refereed:
    """The game the app serving this request shows."""
    return cast(Refereed, current_app.extensions[GAME])


def replay() -> Replay:
    """The replay the app serving this request shows (its replay routes only)."""
    return cast("Replay", current_app.extensions[REPLAY])
