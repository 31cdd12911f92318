"""The games' code, found by name: each packaged game's TOML file may have a module of
hooks beside it (:class:`~tablesight.rules.hooks.GameHooks`), listed here.

Only the packaged games have code: a ruleset loaded from a file outside the package may
not take a packaged game's name (:func:`~tablesight.rules.ruleset.load_ruleset_file`), so
it gets the common referee and nothing is ever imported from beside it.

>>> from tablesight.rules.ruleset import load_ruleset
>>> hooks_for(load_ruleset("battlestations")).__name__
'Battlestations'
>>> hooks_for(load_ruleset("necromunda")) is GameHooks
True
"""

from __future__ import annotations

from tablesight.rules.games.battlestations import Battlestations
from tablesight.rules.hooks import GameHooks
from tablesight.rules.ruleset import Ruleset

#: The games with code of their own, by name.
HOOKS: dict[str, type[GameHooks]] = {hooks.name: hooks for hooks in (Battlestations,)}


def hooks_for(ruleset: Ruleset) -> type[GameHooks]:
    """The code of ``ruleset``'s game, found by its name; the defaults for a game with none."""
    return HOOKS.get(ruleset.name, GameHooks)
