"""The referee for a game: measured in inches, or counted in squares."""

from __future__ import annotations

from typing import Protocol

from rules.grid import GridReferee
from rules.judge import Referee
from rules.ruleset import Ruleset
from rules.scene import Scene
from rules.verdict import Verdict


class Judge(Protocol):
    """What both referees do."""

    def judge(self) -> Verdict: ...

    def judge_model(self, model_id: str) -> Verdict: ...


def referee_for(scene: Scene, ruleset: Ruleset) -> Judge:
    """The referee that judges ``ruleset``'s game: square by square if it has a grid."""
    if ruleset.grid is not None:
        return GridReferee(scene, ruleset)
    return Referee(scene, ruleset)
