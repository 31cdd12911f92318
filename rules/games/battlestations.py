"""Battlestations (rules text 002): characters move square by square, so the game has a
referee of its own that counts squares (:class:`~tablesight.rules.grid.GridReferee`)."""

from __future__ import annotations

from tablesight.rules.grid import GridReferee
from tablesight.rules.hooks import GameHooks, Judge
from tablesight.rules.ruleset import Ruleset
from tablesight.rules.scene import Scene


class Battlestations(GameHooks):
    """Judged square by square on the grid of ``battlestations.toml``'s ``[grid]``."""

    name = "battlestations"

    @classmethod
    def referee(cls, scene: Scene, ruleset: Ruleset) -> Judge | None:
        return GridReferee(scene, ruleset)
