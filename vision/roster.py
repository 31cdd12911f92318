"""``roster.toml`` and ``terrain.toml``: which marker sits where on which model or piece.

A model entry has the fields of a model in a ``check`` scenario (``id``, ``side``,
``unit``, ``base``, ``movement``, ``keywords``) plus its marker: ``marker`` (id),
``marker_size_mm`` (side of the black square), ``marker_height_mm`` (height of the
marker face above the table; about 4 mm on a base top) and ``marker_offset_mm`` =
``[forward, left]``, where the marker's centre sits relative to the base centre in the
model's own frame. A terrain entry has ``id``, ``marker``, ``marker_size_mm``,
``marker_height_mm``, ``height``, ``keywords`` and its footprint ``polygon`` in inches in
the marker's frame (+x towards the marker's top edge, +y to its left).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator
from shapely.geometry import Polygon

from rules.errors import InputError, load_toml
from rules.geometry import Pose
from rules.scenario import OvalBase, RoundBase, base_of
from rules.scene import Model


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class RosterModel(_Strict):
    id: str
    side: str
    unit: str | None = None
    base: Annotated[RoundBase | OvalBase, Field(discriminator="shape")]
    movement: Annotated[float, Field(ge=0)]
    keywords: list[str] = []
    status: list[str] = []
    marker: Annotated[int, Field(ge=0)]
    marker_size_mm: Annotated[float, Field(gt=0)]
    marker_height_mm: Annotated[float, Field(ge=0)] = 4.0
    marker_offset_mm: tuple[float, float] = (0.0, 0.0)


class TerrainPiece(_Strict):
    id: str
    marker: Annotated[int, Field(ge=0)]
    marker_size_mm: Annotated[float, Field(gt=0)]
    marker_height_mm: Annotated[float, Field(ge=0)] = 0.0
    polygon: list[tuple[float, float]]
    height: Annotated[float, Field(ge=0)] = 0.0
    keywords: list[str] = []

    @field_validator("polygon")
    @classmethod
    def _valid_polygon(cls, value: list[tuple[float, float]]) -> list[tuple[float, float]]:
        if len(value) < 3 or not Polygon(value).is_valid or Polygon(value).area <= 0:
            raise ValueError("expected a simple polygon of at least 3 [x, y] corners")
        return value


class _RosterFile(_Strict):
    models: list[RosterModel]


class _TerrainFile(_Strict):
    terrain: list[TerrainPiece]


def _unique_markers(path: Path, key: str, markers: list[int], taken: set[int]) -> None:
    """Each marker id once, and none that the table's anchors (or others) already use."""
    used = set(taken)
    for i, m in enumerate(markers):
        if m in used:
            raise InputError(f"{path}: {key}[{i}].marker: marker {m} is used twice")
        used.add(m)


def load_roster(path: Path, taken: set[int] = frozenset()) -> list[RosterModel]:  # type: ignore[assignment]
    """The models of ``roster.toml``; ``taken`` are marker ids already in use (anchors)."""
    roster = load_toml(path, _RosterFile)
    _unique_markers(path, "models", [m.marker for m in roster.models], set(taken))
    return roster.models


def load_terrain(path: Path, taken: set[int] = frozenset()) -> list[TerrainPiece]:  # type: ignore[assignment]
    """The pieces of ``terrain.toml``; ``taken`` are marker ids already in use."""
    terrain = load_toml(path, _TerrainFile)
    _unique_markers(path, "terrain", [t.marker for t in terrain.terrain], set(taken))
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
