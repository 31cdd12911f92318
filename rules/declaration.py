"""Whether a game can take a declaration: the model, its action, its target and its roll.

One check for every way a declaration comes in (the web page, a script, the replay, the
session itself): each bad field is one :class:`DeclarationError` line that starts with the
field's name and says what was expected.

>>> from tablesight.rules.ruleset import load_ruleset
>>> necromunda = load_ruleset("necromunda")
>>> check_declaration(necromunda, ["ganger", "brute"], "ganger", "charge", "brute", 4)
Traceback (most recent call last):
...
tablesight.rules.declaration.DeclarationError: roll: expected 1 to 3 for charge, got 4
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal

from tablesight.rules.errors import InputError
from tablesight.rules.ruleset import Ruleset

#: The fields of a declaration.
DeclarationField = Literal["model", "action", "target", "roll"]


class DeclarationError(InputError):
    """A declaration the game cannot take; the message starts with the field at fault."""

    def __init__(self, field: DeclarationField, detail: str) -> None:
        super().__init__(f"{field}: {detail}")
        self.field: DeclarationField = field
        self.detail = detail


def check_model(roster: Collection[str], model: str) -> None:
    """A model the roster does not have."""
    if model not in roster:
        known = ", ".join(sorted(roster))
        raise DeclarationError("model", f"unknown model {model!r}; the roster has: {known}")


def check_action(ruleset: Ruleset, action: str | None) -> None:
    """An action the game does not have (``None`` keeps the one declared before)."""
    if action is not None and ruleset.action(action) is None:
        raise DeclarationError("action", ruleset.no_such_action(action))


def check_target(roster: Collection[str], model: str, target: str | None) -> None:
    """A target that is not another model of the roster."""
    if target is not None and (target not in roster or target == model):
        raise DeclarationError("target", f"expected another model of the roster, got {target!r}")


def check_roll(ruleset: Ruleset, action: str, roll: int | None) -> None:
    """A roll off the die of ``action`` (a D6 for an action the game does not have)."""
    rules = ruleset.action(action)
    sides = rules.roll_sides if rules is not None else 6
    if roll is not None and not 1 <= roll <= sides:
        raise DeclarationError("roll", f"expected 1 to {sides} for {action}, got {roll}")


def check_declaration(
    ruleset: Ruleset,
    roster: Collection[str],
    model: str,
    action: str | None = None,
    target: str | None = None,
    roll: int | None = None,
    declared: str = "move",
) -> None:
    """The first field of a declaration the game cannot take, as a ``DeclarationError``.

    ``None`` leaves a field as declared before; ``declared`` is the action declared
    before, which a roll without an action is for.
    """
    check_model(roster, model)
    check_action(ruleset, action)
    check_target(roster, model, target)
    check_roll(ruleset, action or declared, roll)
