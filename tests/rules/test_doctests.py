"""The examples in the rules modules' docstrings are tests too."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "rules.geometry",
    "rules.pathing",
    "rules.ruleset",
    "rules.grid",
    "rules.squares",
    "rules.coherency",
    "rules.declaration",
    "calibration.dictionaries",
    "rules.observation",
    "rules.view",
    "calibration.printing",
    "vision.tracking",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0
    assert result.failed == 0
