"""A game's code beside its TOML file: the little its data cannot say.

Most of a game is data (:mod:`tablesight.rules.ruleset`). A game whose rules need code
has a module in ``rules/games/`` named after it (``battlestations.py`` beside
``battlestations.toml``) holding a :class:`GameHooks` subclass that overrides a few class
attributes; :mod:`tablesight.rules.games` registers each by the game's name. A game
without one uses ``GameHooks`` itself: the common checks and the referee in inches.

>>> from tablesight.rules.ruleset import load_ruleset
>>> from tablesight.rules.scene import Scene, Table
>>> GameHooks.move_checks, GameHooks.unit_checks
((), ())
>>> print(GameHooks.referee(Scene(Table(48.0, 48.0), ()), load_ruleset("necromunda")))
None
"""

from __future__ import annotations

from typing import ClassVar, Protocol

from tablesight.rules.checks import MoveCheck, UnitCheck
from tablesight.rules.ruleset import Ruleset
from tablesight.rules.scene import Scene
from tablesight.rules.verdict import Verdict


class Judge(Protocol):
    """What every referee does."""

    def judge(self) -> Verdict: ...

    def judge_model(self, model_id: str) -> Verdict: ...

    def judge_move_and_unit(self, model_id: str) -> tuple[Verdict, Verdict]: ...


class GameHooks:
    """The code of one game; the defaults add nothing to the common referee."""

    #: The game's name: its TOML file's stem.
    name: ClassVar[str] = ""
    #: Checks of each move the game adds, run after the common ones (``checks.MOVE_CHECKS``).
    move_checks: ClassVar[tuple[MoveCheck, ...]] = ()
    #: Checks of each unit the game adds, run after the common ones (``checks.UNIT_CHECKS``).
    unit_checks: ClassVar[tuple[UnitCheck, ...]] = ()

    @classmethod
    def referee(cls, scene: Scene, ruleset: Ruleset) -> Judge | None:
        """A referee of the game's own, e.g. one that counts squares; ``None``: the common
        referee, measured in inches, with the checks above."""
        return None
