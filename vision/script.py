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
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from rules.errors import load_toml


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Declare(_Strict):
    model: str
    action: str | None = None
    target: str | None = None
    roll: int | None = None


class Step(_Strict):
    t: Annotated[float, Field(ge=0)]
    phase: Literal["movement", "end"] | None = None
    turn: Annotated[int, Field(ge=1)] | None = None
    side: str | None = None
    declare: Declare | None = None


class Script(_Strict):
    step: list[Step] = []

    @classmethod
    def from_toml(cls, path: Path) -> Script:
        script = load_toml(path, cls)
        return cls(step=sorted(script.step, key=lambda s: s.t))
