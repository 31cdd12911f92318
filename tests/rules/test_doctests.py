"""The examples in the rules modules' docstrings are tests too."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "tablesight.rules.geometry",
    "tablesight.rules.pathing",
    "tablesight.rules.ruleset",
    "tablesight.rules.hooks",
    "tablesight.rules.games",
    "tablesight.rules.grid",
    "tablesight.rules.squares",
    "tablesight.rules.coherency",
    "tablesight.rules.declaration",
    "tablesight.calibration.dictionaries",
    "tablesight.rules.observation",
    "tablesight.rules.view",
    "tablesight.calibration.printing",
    "tablesight.vision.tracking",
    "tablesight.vision.frame",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0
    assert result.failed == 0
