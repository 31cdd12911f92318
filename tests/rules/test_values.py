"""The small value types every loader and the web API check the user's input with: what
each accepts and refuses, at its limits."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from tablesight.rules.values import (
    Coordinate,
    Degrees,
    Distance,
    GridSquare,
    Id,
    Keyword,
    MarkerId,
    Mm,
    Roll,
    Seconds,
    TableSide,
    Turn,
    Uncertainty,
    cut,
)

CASES: list[tuple[Any, object, bool]] = [
    (Id, "krotos", True),
    (Id, "gang-1.a_2", True),
    (Id, "7", True),
    (Id, "a" * 32, True),
    (Id, "a" * 33, False),
    (Id, "", False),
    (Id, "-lead", False),
    (Id, ".hidden", False),
    (Id, "<img src=x>", False),
    (Id, "two words", False),
    (Id, "k\u00f6nig", False),
    (Id, "line\nbreak", False),
    (Id, 30, False),
    (Keyword, "owner:pirates", True),
    (Keyword, "impassable", True),
    (Keyword, "<b>", False),
    (Keyword, "", False),
    (TableSide, 30, True),
    (TableSide, 1, True),
    (TableSide, 240, True),
    (TableSide, 1e-9, False),
    (TableSide, 241, False),
    (TableSide, "30", False),
    (TableSide, True, False),
    (Coordinate, -10_000, True),
    (Coordinate, 10_000.5, False),
    (Coordinate, 1e300, False),
    (Coordinate, math.nan, False),
    (Coordinate, math.inf, False),
    (Distance, 0, True),
    (Distance, 1000, True),
    (Distance, 1000.1, False),
    (Distance, -0.1, False),
    (Uncertainty, 100, True),
    (Uncertainty, 1e308, False),
    (Degrees, 270, True),
    (Degrees, -360, True),
    (Degrees, 1e20, False),
    (Mm, 25.4, True),
    (Mm, 0, False),
    (Mm, 1e9, False),
    (GridSquare, 0.25, True),
    (GridSquare, 1e-6, False),
    (MarkerId, 0, True),
    (MarkerId, 1023, True),
    (MarkerId, 1024, False),
    (MarkerId, -1, False),
    (MarkerId, 3.0, False),
    (Turn, 1, True),
    (Turn, 10_000, True),
    (Turn, 0, False),
    (Turn, 10_001, False),
    (Turn, True, False),
    (Turn, 1e29, False),
    (Turn, "30", False),
    (Roll, 3, True),
    (Roll, 0, False),
    (Roll, "3", False),
    (Seconds, 4.5, True),
    (Seconds, -1, False),
    (Seconds, math.inf, False),
]


@pytest.mark.parametrize(("kind", "value", "ok"), CASES, ids=[repr(c[1])[:20] for c in CASES])
def test_value_types_accept_and_refuse(kind: Any, value: object, ok: bool) -> None:
    adapter = TypeAdapter(kind)
    if ok:
        adapter.validate_python(value)
    else:
        with pytest.raises(ValidationError):
            adapter.validate_python(value)


def test_an_id_refused_says_what_is_allowed() -> None:
    with pytest.raises(ValidationError) as caught:
        TypeAdapter(Id).validate_python("<img src=x>")
    assert "expected 1-32 letters, digits, '_', '-' or '.'" in str(caught.value)


def test_cut_keeps_a_short_value_whole_and_cuts_a_long_one_to_one_short_line() -> None:
    assert cut("krotos") == "'krotos'"
    long = cut("x" * 5000)
    assert len(long) <= 45 and long.endswith("...")
    assert "\n" not in cut("a\nb")
