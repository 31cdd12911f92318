"""The set-up's step 4: its files written (``table.toml``, ``roster.toml``,
``terrain.toml``, ``camera.toml``) only inside the folder the set-up was given, a file
there replaced only when asked, the old one kept beside it."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import textwrap
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import BaseModel

from tablesight.calibration.camera import CameraModel
from tablesight.calibration.roster import RosterModel, TerrainPiece
from tablesight.calibration.setup import Setup
from tablesight.calibration.table import TableSpec
from tablesight.rules.errors import InputError
from tablesight.rules.ruleset import load_ruleset_file
from tablesight.rules.values import cut
from tablesight.setup.steps import GameFile, SetupError, ruleset_of


@dataclass(frozen=True)
class SetupFiles:
    """The files a set-up wrote: give them to ``tablesight run`` (:meth:`options`) or
    load them (:meth:`load`)."""

    game: str
    table: Path
    roster: Path
    terrain: Path | None = None
    camera: Path | None = None
    #: The game's file when it is not a packaged game (``--ruleset``).
    ruleset: Path | None = None

    def load(self) -> Setup:
        rules = load_ruleset_file(self.ruleset) if self.ruleset is not None else None
        return Setup.load(self.game, self.table, self.roster, self.terrain, self.camera, rules)

    def options(self) -> list[str]:
        """``tablesight run``'s (or ``analyze``'s) options for these files."""
        game = ["--ruleset", str(self.ruleset)] if self.ruleset else ["--game", self.game]
        out = [*game, "--table", str(self.table), "--roster", str(self.roster)]
        if self.terrain is not None:
            out += ["--terrain", str(self.terrain)]
        if self.camera is not None:
            out += ["--camera", str(self.camera)]
        return out


def write_files(
    folder: Path,
    game: str | GameFile,
    table: TableSpec,
    roster: Sequence[RosterModel],
    terrain: Sequence[TerrainPiece] = (),
    camera: CameraModel | None = None,
    *,
    inside: Path | None = None,
    replace: bool = False,
) -> SetupFiles:
    """Write ``table.toml``, ``roster.toml``, ``terrain.toml`` (when there are pieces) and
    ``camera.toml`` (when calibrated) to ``folder``, made if missing.

    With ``inside``, ``folder`` (relative: to ``inside``) must be ``inside`` or a folder
    under it once ``..`` and symbolic links are resolved, else it is refused (on
    ``folder``). Files of those names already there that hold other text are replaced
    only with ``replace`` (else :class:`FilesExist`, a conflict on ``replace``), each kept
    beside its new one as it was, byte for byte, under the first free name of
    ``roster.toml.1``, ``roster.toml.2``, ...; one that holds the same text already is
    neither asked about nor kept. The files are checked as :meth:`Setup.load` reads them before
    any replaces what was there: a folder that cannot be written to, or files that would
    not load, are refused (``SetupError`` on ``folder``, or on the file) and nothing is
    changed."""
    rules = ruleset_of(game)
    texts = {"table.toml": table_toml(table), "roster.toml": roster_toml(roster)}
    if terrain:
        texts["terrain.toml"] = terrain_toml(terrain)
    if camera is not None:
        texts["camera.toml"] = camera_toml(camera)
    run = ["tablesight run --source 0", *_files(game, Path(), texts).options()]
    lines = textwrap.wrap(" ".join(run), 84, break_on_hyphens=False)
    texts["table.toml"] = (
        f"# Set up for {rules.title}. Referee it from this folder (--source: your camera):\n"
        + "".join(f"#   {line}\n" for line in lines)
        + texts["table.toml"]
    )
    folder = Path(folder)
    if inside is not None:
        folder = confined(folder, inside)
    existing = differing(folder, texts)
    if existing and not replace:
        raise FilesExist(folder, existing)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if inside is not None:
            confined(folder, inside)  # the folders made are still where they were asked
        staging = Path(tempfile.mkdtemp(prefix=".tablesight-setup-", dir=folder))
    except OSError as exc:
        raise SetupError("folder", f"cannot write to {folder}: {exc.strerror or exc}") from None
    try:
        for name, text in texts.items():
            (staging / name).write_text(text, encoding="utf-8")
        try:
            _files(game, staging, texts).load()
        except InputError as exc:
            text = str(exc).replace(str(staging), str(folder))
            name = next((n for n in texts if text.startswith(str(folder / n))), "folder")
            raise SetupError(name, text.removeprefix(f"{folder / name}: ")) from None
        made = differing(folder, texts)
        if made and not replace:  # made meanwhile, by someone else
            raise FilesExist(folder, made)
        for name in texts:
            if name in made:
                keep_old(folder / name)
            os.replace(staging / name, folder / name)
    except OSError as exc:
        raise SetupError("folder", f"cannot write to {folder}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return _files(game, folder, texts)


class SetupConflict(SetupError):
    """What the user asked for clashes with what is there or under way (the web API's
    409): files to replace, or a game being started."""


class FilesExist(SetupConflict):
    """Files of the names to write are in ``folder`` already: written only with
    ``replace``."""

    def __init__(self, folder: Path, names: Sequence[str]) -> None:
        self.names = list(names)
        these = "it" if len(self.names) == 1 else "them"
        super().__init__(
            "replace",
            f"{', '.join(self.names)} in {folder}: replace {these}? (each old one is kept "
            f"beside its new one, as {self.names[0]}.1 or the next free number)",
        )


def differing(folder: Path, texts: Mapping[str, str]) -> list[str]:
    """The names of ``texts`` there are files (or links, or anything) of in ``folder``
    that do not hold that text already: the files that writing it would change."""
    out = []
    for name, text in texts.items():
        path, data = folder / name, text.encode("utf-8")
        try:
            found = path.lstat()  # a link is not the file it points to
        except OSError:  # none there (or none to be seen, as os.path.lexists says)
            continue
        try:
            same = stat.S_ISREG(found.st_mode) and found.st_size == len(data)
            same = same and path.read_bytes() == data
        except OSError:
            same = False
        if not same:
            out.append(name)
    return out


def confined(folder: Path, inside: Path) -> Path:
    """``folder`` (relative: to ``inside``) with ``..`` and symbolic links resolved, which
    must be ``inside`` or under it; else a :class:`SetupError` on ``folder``."""
    root = Path(inside).expanduser().resolve()
    given = Path(folder).expanduser()
    try:
        where = (root / given).resolve()
    except (OSError, RuntimeError) as exc:  # a loop of links, say
        raise SetupError("folder", f"cannot write to {folder}: {exc}") from None
    if not where.is_relative_to(root):
        raise SetupError(
            "folder",
            f"the set-up writes only in {root} and the folders under it (tablesight setup "
            f"--folder), not in {cut(str(folder), 80)}",
        )
    return where


def keep_old(path: Path) -> Path:
    """Keep the file at ``path`` as it is under the first free name of ``path.1``,
    ``path.2``, ... (a second link to it, or a copy where links cannot be made); that
    name."""
    for number in range(1, 100_000):
        kept = path.with_name(f"{path.name}.{number}")
        try:
            os.link(path, kept, follow_symlinks=False)
        except FileExistsError:
            continue
        except OSError:  # a file system without hard links
            try:
                with path.open("rb") as old, kept.open("xb") as copy:
                    shutil.copyfileobj(old, copy)
            except FileExistsError:
                continue
        return kept
    raise SetupError("replace", f"cannot keep the old {path.name}: too many kept already")


def _files(game: str | GameFile, folder: Path, names: Collection[str]) -> SetupFiles:
    terrain, camera = (folder / n if n in names else None for n in ("terrain.toml", "camera.toml"))
    name, path = (game.ruleset.name, game.path) if isinstance(game, GameFile) else (game, None)
    return SetupFiles(name, folder / "table.toml", folder / "roster.toml", terrain, camera, path)


_TABLE_HEAD = """\
# The table: its size, the ArUco dictionary of every printed marker, and the anchors -
# markers fixed to the table at known places, from which the camera works out where it
# stands in every frame. Lengths on the table are inches from the near-left corner: x
# along the width, y along the depth (away from the camera).
"""
_ANCHORS_HEAD = """\
# One [[anchors]] entry per fixed marker: its id, where its centre is (x_in, y_in), the
# side of its black square as printed (size_mm), and heading: where its printed top edge
# faces, degrees counterclockwise from +x (0 = towards the right edge).
"""
_ROSTER_HEAD = """\
# The models: one [[models]] entry per model, with its profile and the marker on its base.
#   id, side, unit   the model's name, its side (other sides are enemies) and the models
#                    it must keep together with (its own id when left out)
#   base             { shape = "round", diameter_mm } or { shape = "oval" or "rect",
#                    length_mm (along its heading), width_mm }
#   movement         its Movement characteristic, inches (squares on a grid)
#   keywords, status what the rules ask about
#   marker, marker_size_mm   the ArUco marker's id and the side of its black square (mm)
#   marker_height_mm         how high the marker's face is above the table (mm)
#   marker_offset_mm = [forward, left]  where the marker's centre sits from the base's
#                    centre, in the model's own frame (left out: in the middle)
"""
_TERRAIN_HEAD = """\
# The terrain pieces: one [[terrain]] entry per piece, each carrying a marker.
#   id, marker, marker_size_mm, marker_height_mm   as for models (mm)
#   polygon   the piece's footprint, inches, in its marker's frame: +x towards the
#             marker's printed top edge, +y to its left, the origin at its centre
#   height    how tall the piece is (inches); levels: floors below its top
#   keywords  what the rules make of it ("impassable", "difficult", "dangerous", ...)
"""
_CAMERA_HEAD = """\
# The camera's lens, calibrated from views of the ChArUco board (as `tablesight calibrate
# camera` writes it): its image size, camera matrix (pixels), OpenCV's distortion
# coefficients and the calibration's RMS reprojection error (pixels).
"""


def table_toml(table: TableSpec) -> str:
    """``table.toml``'s text, its fields explained in comments."""
    parts = [_TABLE_HEAD, _section("table", table.table.model_dump())]
    if table.grid is not None:
        parts.append(_section("grid", table.grid.model_dump()))
    parts.append(_ANCHORS_HEAD.rstrip("\n"))
    parts += [_section("anchors", a.model_dump(), many=True) for a in table.anchors]
    return "\n".join(parts)


def roster_toml(roster: Sequence[RosterModel]) -> str:
    """``roster.toml``'s text, its fields explained in comments."""
    if not roster:
        return _ROSTER_HEAD + "\nmodels = []\n"
    entries = [_section("models", _plain(m), many=True) for m in roster]
    return "\n".join([_ROSTER_HEAD, *entries])


def terrain_toml(terrain: Sequence[TerrainPiece]) -> str:
    """``terrain.toml``'s text, its fields explained in comments."""
    entries = [_section("terrain", _plain(t), many=True) for t in terrain]
    return "\n".join([_TERRAIN_HEAD, *entries])


def camera_toml(camera: CameraModel) -> str:
    """``camera.toml``'s text: :meth:`CameraModel.to_toml` under a comment."""
    return _CAMERA_HEAD + "\n" + camera.to_toml()


def _plain(entry: BaseModel) -> dict[str, Any]:
    """An entry's fields as a user writes them: none left empty, no offset of nothing."""
    out = entry.model_dump(exclude_none=True)
    return {
        k: v
        for k, v in out.items()
        if v != [] and not (k == "marker_offset_mm" and tuple(v) == (0.0, 0.0))
    }


def _section(name: str, fields: Mapping[str, Any], many: bool = False) -> str:
    head = f"[[{name}]]" if many else f"[{name}]"
    return "\n".join([head, *(f"{k} = {_value(v)}" for k, v in fields.items())]) + "\n"


def _value(value: object) -> str:
    """One value on one line: arrays and tables inline, whole numbers without a point,
    strings and numbers as tomli-w writes them."""
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    return tomli_w.dumps({"v": value}).removeprefix("v = ").rstrip("\n")
