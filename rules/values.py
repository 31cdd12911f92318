"""The values users write in their files and send to the API, each checked one way
everywhere: ``check`` scenarios, ``roster.toml``, ``terrain.toml``, ``table.toml``,
``camera.toml``, ``session.toml`` and the web API's bodies all use these types.

Ids (models, terrain, units, sides, games) end up in web pages and match files, so they
are of a safe character set: 1-32 letters, digits, ``_``, ``-`` or ``.``, starting with
a letter or digit. Numbers are strict (``"30"`` and ``true`` are not numbers), finite,
and bounded before anything is allocated from them.

>>> from pydantic import TypeAdapter
>>> TypeAdapter(Id).validate_python("gang-1.krotos")
'gang-1.krotos'
>>> TypeAdapter(Turn).validate_python(3)
3
>>> cut("<" * 100)
"'<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<..."
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field, Strict

#: What an id may be, as every message and the README say it.
ID_RULE = "expected 1-32 letters, digits, '_', '-' or '.', starting with a letter or digit"
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
#: A keyword (``impassable``, ``owner:pirates``): an id's characters and ``:``, up to 64.
KEYWORD_RULE = (
    "expected 1-64 letters, digits, '_', '-', '.' or ':', starting with a letter or digit"
)
_KEYWORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")

#: The largest table side, inches.
MAX_TABLE_IN = 240.0
#: The farthest a coordinate may lie from the table's origin, inches.
MAX_COORDINATE_IN = 10_000.0
#: The longest distance (a move, a height, a tolerance), inches.
MAX_DISTANCE_IN = 1000.0
#: The largest uncertainty of a position, inches.
MAX_UNCERTAINTY_IN = 100.0
#: The largest base, marker or board size, mm.
MAX_MM = 1000.0
#: The smallest grid square, inches, and the most squares a grid may have over a table.
MIN_SQUARE_IN = 0.25
MAX_SQUARES = 1_000_000
#: The most models, terrain pieces or anchors in one file.
MAX_ENTRIES = 500
#: The most corners of a terrain piece's footprint.
MAX_CORNERS = 1000
#: The most keywords or statuses of one model or piece.
MAX_KEYWORDS = 64
#: The most steps of a script.
MAX_STEPS = 10_000
#: The last turn.
MAX_TURN = 10_000
#: The most sides of a die a roll is made with.
MAX_ROLL = 100
#: The largest marker id of any ArUco dictionary (ARUCO_ORIGINAL has 1024 markers).
MAX_MARKER = 1023
#: The latest time in a script or a seek, seconds (over eleven days).
MAX_SECONDS = 1_000_000.0
#: The largest picture side, pixels.
MAX_PIXELS = 100_000


def cut(value: object, width: int = 40) -> str:
    """``repr(value)`` on one line, cut to about ``width`` characters for a message."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _id(value: str) -> str:
    if not _ID.fullmatch(value):
        raise ValueError(ID_RULE)
    return value


def _keyword(value: str) -> str:
    if not _KEYWORD.fullmatch(value):
        raise ValueError(KEYWORD_RULE)
    return value


#: A model, terrain piece, unit, side or game: 1-32 safe characters.
Id = Annotated[str, Strict(), AfterValidator(_id)]
#: A keyword or status: 1-64 safe characters, ``:`` allowed.
Keyword = Annotated[str, Strict(), AfterValidator(_keyword)]
#: Keywords or statuses: at most ``MAX_KEYWORDS``.
Keywords = Annotated[list[Keyword], Field(max_length=MAX_KEYWORDS)]


def _table_side(value: float) -> float:
    if value < 1:
        raise ValueError(f"expected a side of 1 to {MAX_TABLE_IN:g} in")
    return value


#: A table's width or depth, inches: 1 to 240.
TableSide = Annotated[
    float,
    Strict(),
    Field(gt=0, le=MAX_TABLE_IN, allow_inf_nan=False),
    AfterValidator(_table_side),
]
#: A position on (or near) the table, inches: within 10,000 of the origin.
Coordinate = Annotated[
    float, Strict(), Field(ge=-MAX_COORDINATE_IN, le=MAX_COORDINATE_IN, allow_inf_nan=False)
]
#: A distance, length or height, inches: 0 to 1000.
Distance = Annotated[float, Strict(), Field(ge=0, le=MAX_DISTANCE_IN, allow_inf_nan=False)]
#: How far a position may be off, inches: 0 to 100.
Uncertainty = Annotated[float, Strict(), Field(ge=0, le=MAX_UNCERTAINTY_IN, allow_inf_nan=False)]
#: A direction, degrees counterclockwise from +x: -360 to 360.
Degrees = Annotated[float, Strict(), Field(ge=-360, le=360, allow_inf_nan=False)]
#: A size in millimetres (a base, a marker): more than 0, at most 1000.
Mm = Annotated[float, Strict(), Field(gt=0, le=MAX_MM, allow_inf_nan=False)]
#: A height in millimetres (a marker's face above the table): 0 to 1000.
MmHeight = Annotated[float, Strict(), Field(ge=0, le=MAX_MM, allow_inf_nan=False)]
#: An offset in millimetres: -1000 to 1000.
MmOffset = Annotated[float, Strict(), Field(ge=-MAX_MM, le=MAX_MM, allow_inf_nan=False)]
#: A grid square's side, inches: 0.25 to 240.
GridSquare = Annotated[
    float, Strict(), Field(ge=MIN_SQUARE_IN, le=MAX_TABLE_IN, allow_inf_nan=False)
]
#: A corner of a footprint, inches.
Corner = tuple[Coordinate, Coordinate]
#: A footprint's corners: at most ``MAX_CORNERS``.
Corners = Annotated[list[Corner], Field(max_length=MAX_CORNERS)]

#: An ArUco marker id: 0 to 1023 (the dictionary's own size is checked where it is known).
MarkerId = Annotated[int, Strict(), Field(ge=0, le=MAX_MARKER)]
#: A turn: a whole number from 1 to 10,000.
Turn = Annotated[int, Strict(), Field(ge=1, le=MAX_TURN)]
#: A die roll: a whole number from 1 (the die's own sides are checked by the declaration).
Roll = Annotated[int, Strict(), Field(ge=1, le=MAX_ROLL)]
#: A small whole number (a penalty, a check): 0 to 1000.
Count = Annotated[int, Strict(), Field(ge=0, le=1000)]
#: A time, seconds from the start: 0 to 1,000,000.
Seconds = Annotated[float, Strict(), Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]
#: A picture's width or height, pixels.
Pixels = Annotated[int, Strict(), Field(gt=0, le=MAX_PIXELS)]
