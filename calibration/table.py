"""The table as the user describes it: ``table.toml`` (size, dictionary, anchors, grid).

Where the camera sees it from, frame by frame, is :mod:`tablesight.vision.tablepose`.

A marker's corners, as printed: top-left, top-right, bottom-right, bottom-left, with
its top edge towards ``heading`` (degrees counterclockwise from table +x, seen from
above).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, Strict

from tablesight.calibration.dictionaries import DictionaryError, check_marker, dictionary_id
from tablesight.rules.errors import InputError, load_toml
from tablesight.rules.scenario import GridIn, check_grid
from tablesight.rules.squares import Grid
from tablesight.rules.values import MAX_ENTRIES, Coordinate, Degrees, MarkerId, Mm, TableSide

MM_PER_IN = 25.4


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Anchor(_Strict):
    """A marker fixed to the table at a known place."""

    id: MarkerId
    x_in: Coordinate
    y_in: Coordinate
    size_mm: Mm
    heading: Degrees = 0.0


class TableKeys(_Strict):
    """``[table]`` in ``table.toml``."""

    width_in: TableSide
    depth_in: TableSide
    dictionary: Annotated[str, Strict(), Field(max_length=40)]


class TableSpec(_Strict):
    """``table.toml``: the table's size, its markers' dictionary and its anchors."""

    table: TableKeys
    anchors: Annotated[list[Anchor], Field(max_length=MAX_ENTRIES)]
    #: Square-grid games (Battlestations): where the printed deck's squares lie.
    grid: GridIn | None = None

    @classmethod
    def from_toml(cls, path: Path) -> TableSpec:
        spec = load_toml(path, cls)
        dictionary = spec.table.dictionary
        try:
            dictionary_id(dictionary)
        except ValueError as exc:
            raise InputError(f"{path}: table.dictionary: {exc}") from None
        first: dict[int, int] = {}
        for i, a in enumerate(spec.anchors):
            if a.id in first:
                raise InputError(
                    f"{path}: anchors[{i}].id: anchor ids must differ, got {a.id} twice "
                    f"(also anchors[{first[a.id]}].id)"
                )
            first[a.id] = i
            try:
                check_marker(dictionary, a.id)
            except DictionaryError as exc:
                raise InputError(f"{path}: anchors[{i}].id: {exc}") from None
        if not spec.anchors:
            raise InputError(f"{path}: anchors: expected at least one [[anchors]] entry")
        if spec.grid is not None:
            grid = Grid(spec.grid.square_in, spec.grid.origin, spec.grid.angle)
            check_grid(str(path), grid, spec.table.width_in, spec.table.depth_in)
        return spec

    def anchor_corners_in(self) -> dict[int, np.ndarray]:
        """Each anchor's corners on the table plane (4, 3), by id."""
        return {
            a.id: marker_corners(a.x_in, a.y_in, 0.0, a.size_mm / MM_PER_IN, a.heading)
            for a in self.anchors
        }


def marker_corners(x: float, y: float, z: float, side_in: float, heading: float) -> np.ndarray:
    """The four corners (4, 3) of a flat marker centred at (x, y, z), in printed order."""
    a = math.radians(heading)
    fwd = np.array([math.cos(a), math.sin(a)]) * side_in / 2
    left = np.array([-math.sin(a), math.cos(a)]) * side_in / 2
    c = np.array([x, y])
    xy = [c + fwd + left, c + fwd - left, c - fwd - left, c - fwd + left]
    return np.column_stack([np.asarray(xy), np.full(4, z)])
