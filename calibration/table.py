"""The table as the user describes it: ``table.toml`` (size, dictionary, anchors, grid).

Where the camera sees it from, frame by frame, is :mod:`vision.tablepose`.

A marker's corners, as printed: top-left, top-right, bottom-right, bottom-left, with
its top edge towards ``heading`` (degrees counterclockwise from table +x, seen from
above).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from calibration.dictionaries import dictionary_id
from rules.errors import InputError, load_toml
from rules.scenario import GridIn

MM_PER_IN = 25.4


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Anchor(_Strict):
    """A marker fixed to the table at a known place."""

    id: Annotated[int, Field(ge=0)]
    x_in: float
    y_in: float
    size_mm: Annotated[float, Field(gt=0)]
    heading: float = 0.0


class TableKeys(_Strict):
    """``[table]`` in ``table.toml``."""

    width_in: Annotated[float, Field(gt=0)]
    depth_in: Annotated[float, Field(gt=0)]
    dictionary: str


class TableSpec(_Strict):
    """``table.toml``: the table's size, its markers' dictionary and its anchors."""

    table: TableKeys
    anchors: list[Anchor]
    #: Square-grid games (Battlestations): where the printed deck's squares lie.
    grid: GridIn | None = None

    @classmethod
    def from_toml(cls, path: Path) -> TableSpec:
        spec = load_toml(path, cls)
        try:
            dictionary_id(spec.table.dictionary)
        except ValueError as exc:
            raise InputError(f"{path}: table.dictionary: {exc}") from None
        seen: set[int] = set()
        for i, a in enumerate(spec.anchors):
            if a.id in seen:
                raise InputError(
                    f"{path}: anchors[{i}].id: anchor ids must differ, got {a.id} twice"
                )
            seen.add(a.id)
        if not spec.anchors:
            raise InputError(f"{path}: anchors: expected at least one [[anchors]] entry")
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
