"""``session.toml``: phase changes and declarations with timestamps, for ``analyze``.

::

    [[step]]
    t = 0.0
    phase = "movement"   # starts a movement phase (poses are snapshot); "end" ends it
    turn = 1
    side = "goliath"

    [[step]]
    t = 4.5
    declare = { model = "brute", action = "charge", target = "champion", roll = 3 }
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from tablesight.rules.declaration import DeclarationError, check_declaration
from tablesight.rules.errors import InputError, load_toml
from tablesight.rules.values import MAX_STEPS, Id, Roll, Seconds, Turn, cut

if TYPE_CHECKING:
    from tablesight.calibration.setup import Setup


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Declare(_Strict):
    model: Id
    action: Id | None = None
    target: Id | None = None
    roll: Roll | None = None


class Step(_Strict):
    t: Seconds
    phase: Literal["movement", "end"] | None = None
    turn: Turn | None = None
    side: Id | None = None
    declare: Declare | None = None


class Script(_Strict):
    step: Annotated[list[Step], Field(max_length=MAX_STEPS)] = []

    @classmethod
    def from_toml(cls, path: Path, setup: Setup | None = None) -> Script:
        """The steps in time order; with the ``setup`` they are for, each side and
        declaration is checked as the live controls check them (one line naming the step
        and field at fault)."""
        script = load_toml(path, cls)
        if setup is not None:
            script.check(str(path), setup)
        return cls(step=sorted(script.step, key=lambda s: s.t))

    def check(self, source: str, setup: Setup) -> None:
        """A side the roster does not have, or a declaration the game cannot take
        (:func:`tablesight.rules.declaration.check_declaration`), as one ``InputError`` line."""
        models = [m.id for m in setup.roster]
        sides = setup.sides
        declared: dict[str, str] = {}
        for i, step in sorted(enumerate(self.step), key=lambda pair: pair[1].t):
            where = f"{source}: step[{i}]"
            if step.phase == "movement":
                declared = {}
            if step.side is not None and step.side not in sides:
                raise InputError(
                    f"{where}.side: expected one of the roster's sides "
                    f"({', '.join(sides)}), got {cut(step.side)}"
                )
            d = step.declare
            if d is None:
                continue
            before = declared.get(d.model, "move")
            try:
                check_declaration(
                    setup.ruleset, models, d.model, d.action, d.target, d.roll, before
                )
            except DeclarationError as exc:
                raise InputError(f"{where}.declare.{exc}") from None
            declared[d.model] = d.action or before
