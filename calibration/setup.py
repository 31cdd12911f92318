"""What a game is refereed with, as the user describes it in files: the game's ruleset,
``table.toml``, ``roster.toml``, ``terrain.toml`` and ``camera.toml``, loaded and
cross-checked once (:meth:`Setup.load`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tablesight.calibration.camera import CameraModel
from tablesight.calibration.roster import (
    RosterModel,
    TerrainPiece,
    load_roster,
    load_terrain,
    profile,
)
from tablesight.calibration.table import TableSpec
from tablesight.rules.errors import InputError
from tablesight.rules.ruleset import Ruleset, available, load_ruleset, load_ruleset_file
from tablesight.rules.scenario import GridIn
from tablesight.rules.scene import Table
from tablesight.rules.session import Session
from tablesight.rules.squares import Grid


@dataclass(frozen=True)
class Setup:
    """Everything a game is refereed with, as loaded from the user's files."""

    game: str
    ruleset: Ruleset
    table: TableSpec
    roster: list[RosterModel]
    terrain: list[TerrainPiece]
    camera: CameraModel | None = None

    @classmethod
    def load(
        cls,
        game: str,
        table_path: Path,
        roster_path: Path,
        terrain_path: Path | None = None,
        camera_path: Path | None = None,
        ruleset: Ruleset | None = None,
    ) -> Setup:
        """Load and cross-check the files; an :class:`InputError` names the bad one.

        ``ruleset``: the game's ruleset already loaded, e.g. from a file outside the
        package (:func:`~tablesight.rules.ruleset.load_ruleset_file`); ``game`` is then its
        name. Without it the packaged game ``game`` is loaded.
        """
        if ruleset is None:
            ruleset = load_ruleset(game)
        table, roster, terrain, camera = load_table_files(
            table_path, roster_path, terrain_path, camera_path
        )
        return cls(game, ruleset, table, roster, terrain, camera)

    def session(self) -> Session:
        """A new session: every model's profile, none of them seen yet."""
        table = Table(self.table.table.width_in, self.table.table.depth_in)
        grid = None
        if self.ruleset.grid is not None:
            g = self.table.grid or GridIn(square_in=self.ruleset.grid.square_in)
            grid = Grid(g.square_in, g.origin, g.angle)
        models = {m.id: profile(m, square_grid=grid is not None) for m in self.roster}
        return Session(self.ruleset, table, models, grid=grid)

    @property
    def sides(self) -> list[str]:
        """The sides in the roster, in the order they first appear."""
        return list(dict.fromkeys(m.side for m in self.roster))


def chosen_ruleset(game: str | None, ruleset_path: Path | None) -> Ruleset:
    """The game asked for by ``--game`` (a packaged game's name) or ``--ruleset`` (a file
    outside the package), one of them; an :class:`InputError` says what is wrong."""
    if game is not None and ruleset_path is not None:
        raise InputError("--ruleset: give --game or --ruleset, not both")
    if ruleset_path is not None:
        return load_ruleset_file(ruleset_path)
    if game is None:
        raise InputError(
            f"--game: missing; give one of {', '.join(available())}, or --ruleset PATH"
        )
    return load_ruleset(game)


def load_table_files(
    table_path: Path,
    roster_path: Path | None = None,
    terrain_path: Path | None = None,
    camera_path: Path | None = None,
) -> tuple[TableSpec, list[RosterModel], list[TerrainPiece], CameraModel | None]:
    """The table, roster, terrain and camera files, each marker id used once across them
    (anchors first); an :class:`InputError` names the bad file and field."""
    table = TableSpec.from_toml(table_path)
    anchors = {a.id for a in table.anchors}
    dictionary = table.table.dictionary
    roster = load_roster(roster_path, anchors, dictionary) if roster_path else []
    taken = anchors | {m.marker for m in roster}
    terrain = load_terrain(terrain_path, taken, dictionary) if terrain_path else []
    camera = CameraModel.from_toml(camera_path) if camera_path else None
    return table, roster, terrain, camera
