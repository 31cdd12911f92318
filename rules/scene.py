"""The scene the referee judges: models, terrain and the table, in inches."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import shapely
from shapely.geometry import Polygon

from tablesight.rules.geometry import Base, Pose
from tablesight.rules.squares import Grid


@dataclass(frozen=True)
class Model:
    """One model on the table: its profile, where it stood and where it stands now.

    ``end`` is ``None`` when the model did not move. ``action``, ``target`` and ``roll``
    are the player's declaration for this move.
    """

    id: str
    side: str
    unit: str
    base: Base
    movement_in: float
    start: Pose
    end: Pose | None = None
    keywords: frozenset[str] = frozenset()
    status: frozenset[str] = frozenset()
    action: str = "move"
    target: str | None = None
    roll: int | None = None
    #: Square-grid games: the move value in squares, the out-of-control penalty this
    #: phase, and a run's Athletics check result and the extra squares it was made for.
    move_squares: int = 0
    ooc: int = 0
    run_check: int | None = None
    run_extra: int = 1
    #: How far, in inches, each of the model's poses may be off (from the camera's pose
    #: fit and the marker's size); 0 for positions given as numbers.
    sigma_in: float = 0.0

    @property
    def pose(self) -> Pose:
        """Where the model stands after the move."""
        return self.end if self.end is not None else self.start

    @property
    def moved(self) -> bool:
        """Whether the model changed place; turning on the spot is not moving."""
        end = self.end
        return end is not None and (end.x, end.y, end.z) != (
            self.start.x,
            self.start.y,
            self.start.z,
        )

    def has(self, keyword: str) -> bool:
        return keyword in self.keywords

    def is_friend_of(self, other: Model) -> bool:
        return self.side == other.side


@dataclass(frozen=True)
class Terrain:
    """A terrain piece: footprint polygon in table inches, height, keywords."""

    id: str
    polygon: Polygon
    height_in: float = 0.0
    keywords: frozenset[str] = frozenset()

    def has(self, keyword: str) -> bool:
        return keyword in self.keywords

    @property
    def width_in(self) -> float:
        """The piece's narrowest width (the short side of its smallest enclosing rectangle)."""
        rect = shapely.minimum_rotated_rectangle(self.polygon)
        xs, ys = rect.exterior.coords.xy
        sides = [((xs[i + 1] - xs[i]) ** 2 + (ys[i + 1] - ys[i]) ** 2) ** 0.5 for i in range(2)]
        return float(min(sides))


@dataclass(frozen=True)
class Table:
    """The playing area: origin at a corner, x along the width, y along the depth."""

    width_in: float
    depth_in: float

    @property
    def polygon(self) -> Polygon:
        return shapely.box(0.0, 0.0, self.width_in, self.depth_in)


@dataclass(frozen=True)
class Scene:
    """Everything the referee looks at for one round of moves."""

    table: Table
    models: tuple[Model, ...]
    terrain: tuple[Terrain, ...] = ()
    tolerance_in: float = 0.05
    #: Where the squares lie, for games played on a square grid.
    grid: Grid | None = None
    _by_id: dict[str, Model] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {m.id: m for m in self.models})

    @property
    def terrain_polygons(self) -> np.ndarray:
        """The terrain footprints as one array, for vectorised shapely calls."""
        return _terrain_index(self.terrain)[0]

    @property
    def terrain_circles(self) -> list[tuple[tuple[float, float], float]]:
        """A circle around each terrain piece: its centroid and its furthest corner's distance."""
        return _terrain_index(self.terrain)[1]

    def model(self, model_id: str) -> Model:
        return self._by_id[model_id]

    def get(self, model_id: str | None) -> Model | None:
        return None if model_id is None else self._by_id.get(model_id)

    def moved(self) -> Iterator[Model]:
        return (m for m in self.models if m.moved or m.action != "move")

    def unit_of(self, model: Model) -> list[Model]:
        return [m for m in self.models if m.unit == model.unit and m.side == model.side]


_TerrainIndex = tuple[np.ndarray, list[tuple[tuple[float, float], float]]]
#: Terrain arrays by the identity of the terrain tuple; scenes of one game share it.
_TERRAIN_CACHE: dict[int, tuple[tuple[Terrain, ...], _TerrainIndex]] = {}


def _terrain_index(terrain: tuple[Terrain, ...]) -> _TerrainIndex:
    """Arrays about the terrain, computed once per terrain layout (it rarely changes)."""
    hit = _TERRAIN_CACHE.get(id(terrain))
    if hit is not None and hit[0] is terrain:
        return hit[1]
    polygons = np.asarray([t.polygon for t in terrain], dtype=object)
    circles = []
    for t in terrain:
        c = t.polygon.centroid
        xy = np.asarray(t.polygon.exterior.coords)
        circles.append(((c.x, c.y), float(np.max(np.hypot(*(xy - (c.x, c.y)).T)))))
    if len(_TERRAIN_CACHE) > 16:
        _TERRAIN_CACHE.clear()
    _TERRAIN_CACHE[id(terrain)] = (terrain, (polygons, circles))
    return polygons, circles
