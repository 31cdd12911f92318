"""Scenario files for ``tablesight check``: a table, terrain and moves, as JSON.

The schema is validated completely at load; the first problem becomes one
``InputError`` line naming the field, what was expected and what was found.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, ValidationError
from shapely.geometry import Polygon

from tablesight.rules.declaration import DeclarationError, check_roll, check_target
from tablesight.rules.errors import InputError, check_unique, from_validation, read_text
from tablesight.rules.geometry import Base, Pose
from tablesight.rules.ruleset import Ruleset, load_ruleset
from tablesight.rules.scene import Model, Scene, Table, Terrain
from tablesight.rules.squares import Grid
from tablesight.rules.values import (
    MAX_ENTRIES,
    MAX_SQUARES,
    Coordinate,
    Corner,
    Corners,
    Count,
    Degrees,
    Distance,
    GridSquare,
    Id,
    Keywords,
    Mm,
    Roll,
    TableSide,
    Uncertainty,
)


class _Strict(BaseModel):
    # NaN and Infinity are valid JSON to Python's parser, and meaningless as inches.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class RoundBase(_Strict):
    shape: Literal["round"]
    diameter_mm: Mm


class OvalBase(_Strict):
    shape: Literal["oval", "rect"]
    length_mm: Mm
    width_mm: Mm


class PoseIn(_Strict):
    x: Coordinate
    y: Coordinate
    heading: Degrees = 0.0
    z: Distance = 0.0


class TableIn(_Strict):
    width: TableSide
    depth: TableSide


def valid_polygon(value: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """A footprint: at least 3 corners in order, its edges not crossing."""
    if len(value) < 3:
        raise ValueError("expected at least 3 [x, y] corners")
    poly = Polygon(value)
    if not poly.is_valid or poly.area <= 0:
        raise ValueError("expected a simple polygon (corners in order, edges not crossing)")
    return value


class TerrainIn(_Strict):
    id: Id
    polygon: Annotated[Corners, AfterValidator(valid_polygon)]
    height: Distance = 0.0
    keywords: Keywords = []


class GridIn(_Strict):
    """Where a game's squares lie: a square corner's table position, rotation, side."""

    square_in: GridSquare = 1.0
    origin: Corner = (0.0, 0.0)
    angle: Degrees = 0.0


class RunIn(_Strict):
    """A run: the Athletics check result, and how many extra squares it was made for."""

    check: Count
    extra: Annotated[int, Strict(), Field(ge=1, le=1000)] = 1


class ModelIn(_Strict):
    note: str = ""
    id: Id
    side: Id
    unit: Id | None = None
    base: Annotated[RoundBase | OvalBase, Field(discriminator="shape")]
    movement: Distance
    keywords: Keywords = []
    status: Keywords = []
    start: PoseIn
    end: PoseIn | None = None
    action: Id = "move"
    target: Id | None = None
    roll: Roll | None = None
    ooc: Count = 0
    run: RunIn | None = None
    uncertainty: Uncertainty = 0.0


class ScenarioIn(_Strict):
    description: str = ""
    game: Id
    table: TableIn
    terrain: Annotated[list[TerrainIn], Field(max_length=MAX_ENTRIES)] = []
    tolerance: Distance = 0.05
    grid: GridIn | None = None
    models: Annotated[list[ModelIn], Field(max_length=MAX_ENTRIES)]


def check_grid(source: str, grid: Grid, width_in: float, depth_in: float) -> None:
    """A grid of more than ``MAX_SQUARES`` squares over the table, as one line."""
    squares = grid.squares_over(width_in, depth_in)
    if squares > MAX_SQUARES:
        raise InputError(
            f"{source}: grid.square_in: expected at most {MAX_SQUARES} squares over the "
            f"table, got {squares} of {grid.square_in} in"
        )


def base_of(spec: RoundBase | OvalBase) -> Base:
    """The base a scenario or roster entry describes."""
    if isinstance(spec, RoundBase):
        return Base.round(spec.diameter_mm)
    return Base(spec.shape, spec.length_mm, spec.width_mm)


def _pose(p: PoseIn) -> Pose:
    return Pose(p.x, p.y, p.heading, p.z)


class Scenario:
    """A validated scenario: its scene and the ruleset of its game."""

    def __init__(self, scene: Scene, ruleset: Ruleset) -> None:
        self.scene = scene
        self.ruleset = ruleset

    @classmethod
    def from_json(
        cls, text: str, source: str = "scenario", ruleset: Ruleset | None = None
    ) -> Scenario:
        """The scenario in ``text``, judged under its ``game``, or under ``ruleset`` when
        one is given (a game loaded from a file outside the package)."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(_comment(source, exc) or f"{source}: not valid JSON: {exc}") from None
        except RecursionError:
            raise InputError(f"{source}: not valid JSON: nested too deeply") from None
        except ValueError as exc:  # an integer of more than 4300 digits
            raise InputError(f"{source}: not valid JSON: {str(exc).split(';')[0]}") from None
        try:
            spec = ScenarioIn.model_validate(data)
        except RecursionError:
            raise InputError(f"{source}: nested too deeply") from None
        except ValidationError as exc:
            raise from_validation(source, ScenarioIn, exc) from None
        if ruleset is None:
            try:
                ruleset = load_ruleset(spec.game)
            except InputError as exc:
                raise InputError(f"{source}: game: {exc}") from None
        return cls(_scene(spec, ruleset, source), ruleset)

    @classmethod
    def from_file(cls, path: Path, ruleset: Ruleset | None = None) -> Scenario:
        text = read_text(
            path,
            "a scenario (a JSON file)",
            not_text="not UTF-8 text (a scenario is a JSON file)",
            missing="cannot read: No such file or directory",
        )
        return cls.from_json(text, str(path), ruleset)


#: What starts a comment in the JSON-with-comments people write (JSON itself has none).
COMMENT_STARTS = ("//", "/*", "#")


def _comment(source: str, exc: json.JSONDecodeError) -> str | None:
    """The line refusing the scenario when what stops its JSON is a comment (``// ...``),
    else ``None``."""
    mark = next((m for m in COMMENT_STARTS if exc.doc.startswith(m, exc.pos)), None)
    if mark is None:
        return None
    return (
        f"{source}: line {exc.lineno}: a comment ({mark} ...): JSON has no comments; "
        "take them all out (samples/scenarios/ has files that load as they are)"
    )


def _scene(spec: ScenarioIn, ruleset: Ruleset, source: str) -> Scene:
    """The scene a validated scenario describes, once its models make sense together."""
    ids = [m.id for m in spec.models]
    check_unique(source, "models", ids)
    check_unique(source, "terrain", [t.id for t in spec.terrain])
    for i, m in enumerate(spec.models):
        where = f"{source}: models[{i}]"
        _check_ids(m, ids, where)
        _check_squares(m, ruleset, where)
        _check_declared(m, ids, ruleset, where)
    models = tuple(_model(m, ruleset) for m in spec.models)
    terrain = tuple(
        Terrain(t.id, Polygon(t.polygon), t.height, frozenset(t.keywords)) for t in spec.terrain
    )
    grid = None
    if ruleset.grid is not None:
        g = spec.grid or GridIn(square_in=ruleset.grid.square_in)
        grid = Grid(g.square_in, g.origin, g.angle)
        check_grid(source, grid, spec.table.width, spec.table.depth)
    elif spec.grid is not None:
        raise InputError(f"{source}: grid: {ruleset.name} is not played on a square grid")
    return Scene(Table(spec.table.width, spec.table.depth), models, terrain, spec.tolerance, grid)


def _check_ids(m: ModelIn, ids: list[str], where: str) -> None:
    """A target that is none of the scenario's models."""
    if m.target is not None and m.target not in ids:
        raise InputError(f"{where}.target: expected one of the model ids, got {m.target!r}")


def _check_squares(m: ModelIn, ruleset: Ruleset, where: str) -> None:
    """Keys only square-grid games use, or a square-grid move that lacks what it needs."""
    if ruleset.grid is None:
        if m.ooc or m.run is not None:
            key = "ooc" if m.ooc else "run"
            raise InputError(f"{where}.{key}: only square-grid games use it, not {ruleset.name}")
        return
    if m.movement != int(m.movement):
        raise InputError(
            f"{where}.movement: {ruleset.name} moves in whole squares, got {m.movement}"
        )
    if m.action == "run" and m.run is None:
        raise InputError(
            f'{where}.run: a run needs the Athletics check, e.g. {{"check": 12, "extra": 1}}'
        )


def _check_declared(m: ModelIn, ids: list[str], ruleset: Ruleset, where: str) -> None:
    """A declaration the game cannot take (:mod:`tablesight.rules.declaration`), or one that lacks
    the
    target or the roll its action needs. An action the game does not have is judged (it is
    a finding, not malformed input)."""
    action = ruleset.action(m.action)
    try:
        check_target(ids, m.id, m.target)
        if action is not None and action.add_roll:
            check_roll(ruleset, m.action, m.roll)
    except DeclarationError as exc:
        raise InputError(f"{where}.{exc}") from None
    if action is None:
        return
    if action.target == "enemy" and m.target is None:
        raise InputError(f"{where}.target: a {m.action} needs a target model id")
    if action.add_roll and m.roll is None:
        raise InputError(
            f"{where}.roll: a {m.action} in {ruleset.name} needs the D{action.roll_sides} "
            f"roll (1-{action.roll_sides})"
        )


def _model(m: ModelIn, ruleset: Ruleset) -> Model:
    """The model a scenario entry describes."""
    return Model(
        id=m.id,
        side=m.side,
        unit=m.unit if m.unit is not None else m.id,
        base=base_of(m.base),
        movement_in=m.movement,
        start=_pose(m.start),
        end=None if m.end is None else _pose(m.end),
        keywords=frozenset(m.keywords),
        status=frozenset(m.status),
        action=m.action,
        target=m.target,
        roll=m.roll,
        move_squares=int(m.movement) if ruleset.grid is not None else 0,
        ooc=m.ooc,
        run_check=None if m.run is None else m.run.check,
        run_extra=1 if m.run is None else m.run.extra,
        sigma_in=m.uncertainty,
    )
