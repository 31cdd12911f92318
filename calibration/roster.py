"""``roster.toml`` and ``terrain.toml``: which marker sits where on which model or piece.

A model entry has the fields of a model in a ``check`` scenario (``id``, ``side``,
``unit``, ``base``, ``movement``, ``keywords``) plus its marker: ``marker`` (id),
``marker_size_mm`` (side of the black square), ``marker_height_mm`` (height of the
marker face above the table; about 4 mm on a base top) and ``marker_offset_mm`` =
``[forward, left]``, where the marker's centre sits relative to the base centre in the
model's own frame. A terrain entry has ``id``, ``marker``, ``marker_size_mm``,
``marker_height_mm``, ``height`` (of its top), optional ``levels`` (heights of lower
floors a model may stand on), ``keywords`` and its footprint ``polygon`` in inches in
the marker's frame (+x towards the marker's top edge, +y to its left).
"""

from __future__ import annotations

from collections.abc import Set
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from tablesight.calibration.dictionaries import DictionaryError, check_marker
from tablesight.rules.errors import InputError, check_unique, load_toml
from tablesight.rules.geometry import Pose
from tablesight.rules.scenario import OvalBase, RoundBase, base_of, valid_polygon
from tablesight.rules.scene import Model
from tablesight.rules.values import (
    MAX_ENTRIES,
    Corners,
    Distance,
    Id,
    Keywords,
    MarkerId,
    Mm,
    MmHeight,
    MmOffset,
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class RosterModel(_Strict):
    id: Id
    side: Id
    unit: Id | None = None
    base: Annotated[RoundBase | OvalBase, Field(discriminator="shape")]
    movement: Distance
    keywords: Keywords = []
    status: Keywords = []
    marker: MarkerId
    marker_size_mm: Mm
    marker_height_mm: MmHeight = 4.0
    marker_offset_mm: tuple[MmOffset, MmOffset] = (0.0, 0.0)


class TerrainPiece(_Strict):
    id: Id
    marker: MarkerId
    marker_size_mm: Mm
    marker_height_mm: MmHeight = 0.0
    polygon: Annotated[Corners, AfterValidator(valid_polygon)]
    height: Distance = 0.0
    #: Heights (inches) of floors below the top a model may stand on (a walkway's decks).
    levels: Annotated[list[Distance], Field(max_length=16)] = []
    keywords: Keywords = []


class _RosterFile(_Strict):
    models: Annotated[list[RosterModel], Field(max_length=MAX_ENTRIES)]


class _TerrainFile(_Strict):
    terrain: Annotated[list[TerrainPiece], Field(max_length=MAX_ENTRIES)]


def check_markers(
    path: Path, key: str, markers: list[int], taken: Set[int], dictionary: str | None
) -> None:
    """Each marker id once, none that the table's anchors (or others) already use, and
    each one a marker of the table's ``dictionary`` (when it is known)."""
    first: dict[int, int] = {}
    for i, m in enumerate(markers):
        where = f"{path}: {key}[{i}].marker: marker {m} is used twice"
        if m in first:
            raise InputError(f"{where} (also {key}[{first[m]}].marker)")
        if m in taken:
            raise InputError(f"{where} (an anchor or a model already carries it)")
        first[m] = i
        if dictionary is not None:
            try:
                check_marker(dictionary, m)
            except DictionaryError as exc:
                raise InputError(f"{path}: {key}[{i}].marker: {exc}") from None


def load_roster(
    path: Path, taken: Set[int] = frozenset(), dictionary: str | None = None
) -> list[RosterModel]:
    """The models of ``roster.toml``; ``taken`` are marker ids already in use (anchors),
    ``dictionary`` the table's (its markers are the only ones a model may carry)."""
    roster = load_toml(path, _RosterFile)
    check_unique(str(path), "models", [m.id for m in roster.models])
    check_markers(path, "models", [m.marker for m in roster.models], taken, dictionary)
    return roster.models


def load_terrain(
    path: Path, taken: Set[int] = frozenset(), dictionary: str | None = None
) -> list[TerrainPiece]:
    """The pieces of ``terrain.toml``; ``taken`` are marker ids already in use."""
    terrain = load_toml(path, _TerrainFile)
    check_unique(str(path), "terrain", [t.id for t in terrain.terrain])
    check_markers(path, "terrain", [t.marker for t in terrain.terrain], taken, dictionary)
    return terrain.terrain


def profile(entry: RosterModel, square_grid: bool = False) -> Model:
    """The model a roster entry describes, as the rules core sees it (where it stands
    comes later, from the camera). On a square grid, ``movement`` counts squares."""
    return Model(
        id=entry.id,
        side=entry.side,
        unit=entry.unit or entry.id,
        base=base_of(entry.base),
        movement_in=entry.movement,
        start=Pose(0.0, 0.0),
        keywords=frozenset(entry.keywords),
        status=frozenset(entry.status),
        move_squares=int(entry.movement) if square_grid else 0,
    )
