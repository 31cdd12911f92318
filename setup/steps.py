"""Setting up a table without writing TOML: the steps a set-up page takes a user through.

1. Calibrate the camera: :class:`CalibrationCapture` takes pictures of the ChArUco board
   one at a time, says of each whether it was kept as a view and why not (the tests and
   thresholds of ``tablesight calibrate camera``), shows which parts of the frame the
   board has covered, and calibrates from the kept views.
2. Place the anchors: the user clicks the table's four corners in a picture;
   :func:`propose_anchors` maps the anchors' centres and headings to table inches through
   them (or takes their places from a tape measure) and solves the table pose with them,
   so the page can show its health as the user goes.
3. Say what each other marker is: :func:`seen_markers` lists the markers that are not
   anchors, where they are on the table; :func:`assign` makes the roster's models and the
   terrain pieces from what the user fills in, with the sizes of the printed sheet as
   defaults and the game's keywords (:func:`game_preset`) to choose from.
4. Write the files (:mod:`tablesight.setup.files`): ``table.toml``, ``roster.toml``,
   ``terrain.toml`` and ``camera.toml``, which :meth:`tablesight.calibration.setup.Setup.load`
   reads.

Table inches are measured from the near-left corner (the corner on the camera's side, to
its left): x along the width, y along the depth, away from the camera. Whatever the user
gave that cannot be used is refused with a :class:`SetupError` naming the field.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import cv2
import numpy as np
from pydantic import BaseModel, ValidationError

from tablesight.calibration.camera import (
    BLUR_MIN,
    BoardSpec,
    BoardViews,
    Calibration,
    CameraModel,
    ViewCheck,
)
from tablesight.calibration.dictionaries import DictionaryError, check_marker, dictionary_id
from tablesight.calibration.printing import misfits, named_fields
from tablesight.calibration.roster import RosterModel, TerrainPiece
from tablesight.calibration.table import MM_PER_IN, Anchor, TableKeys, TableSpec
from tablesight.rules.errors import InputError, from_validation
from tablesight.rules.ruleset import Ruleset, load_ruleset, load_ruleset_file
from tablesight.rules.scenario import GridIn, base_of
from tablesight.rules.values import MAX_TABLE_IN, cut
from tablesight.vision.aruco import MarkerDetections
from tablesight.vision.observe import PoseHealth
from tablesight.vision.tablepose import PoseError, TablePose, diagonal_centres

M = TypeVar("M", bound=BaseModel)

#: An anchor's side as printed, mm, unless the user says otherwise: the README's least.
ANCHOR_MM = 40.0
#: A model's or piece's marker side as printed, mm: ``tablesight markers``'s default.
MARKER_MM = 20.0
#: How high a model's marker face sits above the table, mm: on top of a base.
MARKER_HEIGHT_MM = 4.0
#: A marker whose centre is this close (inches) to a table corner, and the closest one,
#: is taken as that corner's anchor unless the user names the anchors.
ANCHOR_REACH_IN = 4.0
#: A taped anchor place that differs from the picture's by more than this (inches) is
#: said: a click of a few pixels off puts the picture's within about 0.2 in at 1080p, and
#: a tape read from the wrong edge is inches off.
TAPE_CHECK_IN = 0.5
#: How far (inches) an anchor placed from the clicked corners moves for each pixel a click
#: is off, at the most: on a 44 x 30 in table at 1080p from 30 in up and 14 in in front of
#: the near edge, clicks 1 px off at random put the anchors up to 0.09 in off, 2 px 0.18 in.
CLICK_IN_PER_PX = 0.1
#: Rows and columns of the grid over the frame that the board's coverage is told in.
COVERAGE_CELLS = 5
#: The table's corners, in the order they are clicked, as the user knows them.
CORNER_NAMES = ("near-left", "near-right", "far-right", "far-left")
#: Terrain keywords the rules core asks about (``tablesight.rules.checks``,
#: ``tablesight.rules.field``).
TERRAIN_KEYWORDS = ("impassable", "difficult", "dangerous", "climbable", "gap")
#: The same on a square grid (``tablesight.rules.grid``): what a square is, and a door's states.
GRID_TERRAIN_KEYWORDS = ("wall", "slagged", "barrel", "door", "outside", "open", "broken", "hacked")


class SetupError(InputError):
    """What the user gave cannot be used: ``field`` names it (``width_in``,
    ``models[2].marker``), ``message`` says what is allowed and what was given. As an
    :class:`InputError` its text is ``field: message``, the web API's error shape."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message

    def to_dict(self) -> dict[str, str]:
        return {"field": self.field, "message": self.message}


# -- 1. calibration -------------------------------------------------------------------------


@dataclass(frozen=True)
class Coverage:
    """Which cells of a 5 x 5 grid over the frame (rows from the top) a kept view's board
    corner fell in, and their share."""

    grid: list[list[bool]]
    share: float

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Offer:
    """What became of one picture offered as a calibration view.

    ``why`` is empty when it was kept, else one of ``size`` (not the first view's size),
    ``not_found`` (fewer than ``MIN_CORNERS`` board corners), ``blurry`` (``sharpness``
    under ``BLUR_MIN``) or ``duplicate`` (the board where a kept view had it); ``reason``
    says it as ``tablesight calibrate camera`` does, ``hint`` what to do about it.
    """

    name: str
    kept: bool
    why: str
    reason: str
    hint: str
    corners_px: np.ndarray
    sharpness: float | None
    views: int
    coverage: Coverage

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self) | {
            "corners_px": np.round(self.corners_px, 1).tolist(),
            "sharpness": None if self.sharpness is None else round(self.sharpness, 1),
        }


_HINTS = {
    "": "",
    "size": "every view must come from the same camera at the same resolution",
    "not_found": "show the whole board, flat, with nothing over it",
    "blurry": "hold the board still, and light it better",
    "duplicate": "move the board to another place or angle in the frame",
}


class CalibrationCapture:
    """Board pictures taken one at a time (a webcam's frames, say), each kept as a view
    or refused as ``tablesight calibrate camera`` would, and the camera calibrated from
    the kept views: the same :class:`Calibration` as ``calibrate`` on them."""

    def __init__(self, board: BoardSpec) -> None:
        self.board = board
        self._views = BoardViews(board)
        self._offered = 0

    @property
    def views(self) -> int:
        """How many views are kept."""
        return len(self._views.used)

    def offer(self, image: np.ndarray, name: str | None = None) -> Offer:
        """Judge one picture (grey or BGR), keeping it as a view when it is of use;
        ``name`` defaults to ``view N``, N counting the pictures offered from 1."""
        self._offered += 1
        check = self._views.add(name or f"view {self._offered}", image)
        why = _why(check)
        return Offer(
            check.name,
            check.kept,
            why,
            check.reason,
            _HINTS[why],
            check.corners_px,
            check.sharpness,
            self.views,
            self.coverage(),
        )

    def coverage(self) -> Coverage:
        grid = self._views.coverage_grid(COVERAGE_CELLS)
        return Coverage(grid.tolist(), float(grid.mean()))

    def calibrate(self) -> Calibration:
        """The camera from the kept views (a ``CalibrationError`` under three)."""
        return self._views.calibrate()


def _why(check: ViewCheck) -> str:
    if check.kept:
        return ""
    if check.sharpness is None:
        return "size" if check.reason.startswith("size") else "not_found"
    return "blurry" if check.sharpness < BLUR_MIN else "duplicate"


# -- 2. anchors -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Tape:
    """An anchor's place as measured with a tape: its centre's distance from the nearer
    of the left and right edges (``x_edge_in``) and from the nearer of the near and far
    edges (``y_edge_in``), inches; which edges are the nearer is read from the picture."""

    x_edge_in: float
    y_edge_in: float


@dataclass(frozen=True)
class ClickedTable:
    """The table's plane as its four corners clicked in a picture map it: pixels to table
    inches and back. With a camera the pixels are undistorted first, so the mapping is
    exact on the table (z = 0) whatever the lens; without one it is a homography of the
    raw pixels, as good as the lens is straight.

    ``corners_px`` are the near-left (0, 0), near-right (width, 0), far-right (width,
    depth) and far-left (0, depth) corners, in that order.
    """

    table_in: tuple[float, float]
    corners_px: np.ndarray
    homography: np.ndarray
    camera: CameraModel | None = None

    @classmethod
    def from_corners(
        cls,
        corners_px: Sequence[Sequence[float]] | np.ndarray,
        table_in: tuple[float, float],
        camera: CameraModel | None = None,
    ) -> ClickedTable:
        """The mapping; corners that are not four, cross, lie in a line or go round the
        wrong way are refused (``SetupError`` on ``corners_px``)."""
        width, depth = _table_size(table_in)
        try:
            px = np.asarray(corners_px, dtype=float)
        except (TypeError, ValueError):
            px = np.zeros(0)
        if px.shape != (4, 2) or not np.all(np.isfinite(px)):
            raise SetupError(
                "corners_px",
                "expected the table's 4 corners as [x, y] pixels, near-left (0, 0), "
                "near-right (width, 0), far-right (width, depth), far-left (0, depth); "
                f"got {cut(np.asarray(corners_px, dtype=object).tolist())}",
            )
        plane = _image_plane(px, camera)
        _check_corners(plane)
        table = np.array([[0.0, 0.0], [width, 0.0], [width, depth], [0.0, depth]])
        h, _ = cv2.findHomography(plane, table, 0)
        if h is None or abs(np.linalg.det(h)) < 1e-12:
            raise SetupError("corners_px", "the four corners give no mapping (three in a line?)")
        return cls((width, depth), px, np.asarray(h), camera)

    def pixels_to_table(self, pixels: np.ndarray) -> np.ndarray:
        """Pixels (N, 2) to table inches (N, 2) on the table's plane."""
        plane = _image_plane(np.asarray(pixels, dtype=float).reshape(-1, 2), self.camera)
        return np.asarray(cv2.perspectiveTransform(plane[None], self.homography)[0])

    def table_to_pixels(self, points_in: np.ndarray) -> np.ndarray:
        """Table inches (N, 2) on the table's plane to pixels (N, 2)."""
        pts = np.asarray(points_in, dtype=float).reshape(1, -1, 2)
        plane = cv2.perspectiveTransform(pts, np.linalg.inv(self.homography))[0]
        if self.camera is None:
            return np.asarray(plane)
        rays = np.column_stack([plane, np.ones(len(plane))])
        zero = np.zeros(3)
        k, dist = self.camera.camera_matrix, self.camera.dist_coeffs
        px, _ = cv2.projectPoints(rays, zero, zero, k, dist)
        return np.asarray(px.reshape(-1, 2))

    def marker(self, corners_px: np.ndarray) -> tuple[np.ndarray, float]:
        """A flat marker's centre (inches) and heading (degrees) from its corners as
        seen (4, 2), in printed order."""
        on_table = self.pixels_to_table(corners_px).reshape(1, 4, 2)
        return diagonal_centres(on_table)[0], _heading(on_table[0])


def _number(
    key: str, value: object, low: float, high: float, expected: str, over_low: bool = False
) -> float:
    """``value`` as a float when it is a number from ``low`` (or over it) to ``high``,
    else a ``SetupError`` on ``key``: ``expected ..., got ...``."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    v = float(value) if number else math.nan  # type: ignore[arg-type]
    if not (low < v <= high if over_low else low <= v <= high):
        raise SetupError(key, f"expected {expected}, got {cut(value)}")
    return v


def _table_size(table_in: tuple[float, float]) -> tuple[float, float]:
    """The table's width and depth, each 1 to 240 in (``SetupError`` naming the side)."""
    expected = f"a side of 1 to {MAX_TABLE_IN:g} in"
    width, depth = table_in
    return (
        _number("width_in", width, 1, MAX_TABLE_IN, expected),
        _number("depth_in", depth, 1, MAX_TABLE_IN, expected),
    )


def _image_plane(px: np.ndarray, camera: CameraModel | None) -> np.ndarray:
    """Pixels (N, 2) without the lens's distortion: normalised image coordinates with a
    camera, the pixels themselves without."""
    return px.copy() if camera is None else camera.undistort(px)


def _check_corners(plane: np.ndarray) -> None:
    """Four corners of a table seen from above go round one way: clockwise on the screen
    (the image's y points down) from the near-left one to the near-right one."""
    edges = np.roll(plane, -1, axis=0) - plane
    turns = (
        edges[:, 0] * np.roll(edges, -1, axis=0)[:, 1]
        - edges[:, 1] * np.roll(edges, -1, axis=0)[:, 0]
    )
    scale = float(np.sum(np.linalg.norm(edges, axis=1))) ** 2
    if np.any(np.abs(turns) < 1e-6 * scale):
        raise SetupError(
            "corners_px", "three of the corners lie in a line (or two are the same point)"
        )
    if np.all(turns > 0):
        raise SetupError(
            "corners_px",
            "the corners go round the wrong way: after the near-left corner click the "
            "near-right one (along the width), then far-right, then far-left",
        )
    if not np.all(turns < 0):
        raise SetupError(
            "corners_px",
            "the corners cross: click them in order round the table, near-left, near-right, "
            "far-right, far-left",
        )


def _heading(corners_in: np.ndarray) -> float:
    """Where a marker's printed top edge faces, degrees counterclockwise from +x, from its
    corners on the table (4, 2) in printed order (top-left, top-right, bottom-right,
    bottom-left: ``tablesight.calibration.table.marker_corners``): the turn that best fits a square
    of heading 0 to them (least squares, every corner counted; half the scatter of the
    side edges' direction alone on a far anchor)."""
    q = corners_in - corners_in.mean(axis=0)
    square = np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, -1.0], [-1.0, 1.0]])
    sin = np.sum(square[:, 0] * q[:, 1] - square[:, 1] * q[:, 0])
    cos = np.sum(square[:, 0] * q[:, 0] + square[:, 1] * q[:, 1])
    return math.degrees(math.atan2(sin, cos))


def _tidy_heading(degrees: float) -> float:
    """A heading in (-180, 180], to a tenth of a degree."""
    out = degrees % 360.0
    return round(out - 360.0 if out > 180.0 else out, 1) + 0.0


@dataclass(frozen=True)
class AnchorProposal:
    """Anchors as the picture (or the tape) places them, the table they make, and the
    table pose solved with them on the same frame: ``problem`` says why it is not trusted
    or could not be solved (empty when it is sound); ``warnings`` what to check."""

    table: TableSpec
    pose: TablePose | None
    problem: str
    warnings: tuple[str, ...]

    @property
    def anchors(self) -> list[Anchor]:
        return self.table.anchors

    @property
    def healthy(self) -> bool:
        return self.pose is not None and not self.problem

    def to_dict(self) -> dict[str, object]:
        return {
            "anchors": [a.model_dump() for a in self.anchors],
            "healthy": self.healthy,
            "health": None if self.pose is None else PoseHealth.of(self.pose).to_dict(),
            "problem": self.problem,
            "warnings": list(self.warnings),
        }


def propose_anchors(
    table_in: tuple[float, float],
    dictionary: str,
    detections: MarkerDetections,
    corners_px: Sequence[Sequence[float]] | np.ndarray,
    camera: CameraModel | None = None,
    *,
    anchor_ids: Sequence[int] | None = None,
    size_mm: float = ANCHOR_MM,
    tape: Mapping[int, Tape] | None = None,
) -> AnchorProposal:
    """Anchors for ``table.toml`` from one picture's markers and the table's corners
    clicked in it (near-left (0, 0), near-right (width, 0), far-right (width, depth),
    far-left (0, depth): inches run from the near-left corner, x along the width).

    Each anchor is a marker of ``anchor_ids`` or, by default, the marker nearest each
    table corner within ``ANCHOR_REACH_IN``. Its centre is mapped to table inches through
    the clicked corners (undistorted with ``camera`` when there is one), to 0.01 in; its
    heading is where its printed top edge faces on the table, to 0.1 degree; its size is
    ``size_mm``. A ``tape`` measure of an anchor, by id, gives its x and y instead, from
    the edges nearer to where the picture puts it.

    The clicks set how good the places are: exact corners put the anchors within 0.01 in
    of where they are, and each pixel a click is off moves them by up to
    ``CLICK_IN_PER_PX`` at 1080p, often without the pose noticing; the tape's are as good
    as the tape.
    """
    width, depth = _table_size(table_in)
    _check_dictionary(dictionary)
    size = _number("size_mm", size_mm, 0, 1000, "a size over 0 and at most 1000 mm", True)
    clicked = ClickedTable.from_corners(corners_px, (width, depth), camera)
    seen = detections.by_id()
    placed = {i: clicked.marker(np.asarray(c, dtype=float)) for i, c in seen.items()}
    warnings: list[str] = []
    ids = (
        _named_anchors(anchor_ids, seen, dictionary)
        if anchor_ids is not None
        else _corner_anchors(placed, (width, depth), warnings)
    )
    tape = dict(tape or {})
    for i in tape:
        if i not in ids:
            raise SetupError(
                f"tape[{i}]",
                f"marker {i} is not an anchor (the anchors: {', '.join(map(str, ids)) or 'none'})",
            )
    anchors = []
    for i in ids:
        (x, y), heading = placed[i]
        if i in tape:
            x, y = _taped(i, tape[i], (float(x), float(y)), (width, depth), warnings)
        anchors.append(
            Anchor(
                id=i,
                x_in=round(float(x), 2),
                y_in=round(float(y), 2),
                size_mm=size,
                heading=_tidy_heading(heading),
            )
        )
    if not anchors:
        keys = TableKeys(width_in=width, depth_in=depth, dictionary=dictionary)
        problem = "no anchors: fix a marker near each corner of the table, or name them"
        return AnchorProposal(TableSpec(table=keys, anchors=[]), None, problem, tuple(warnings))
    table = table_spec((width, depth), dictionary, anchors)
    try:
        pose = TablePose.solve(detections, table, camera)
    except PoseError as exc:
        return AnchorProposal(table, None, str(exc), tuple(warnings))
    clicked_only = [a.id for a in anchors if a.id not in tape]
    suspects = [i for i, _ in pose.left_out if i not in tape]
    if suspects or (clicked_only and pose.problem):
        warnings.append(
            f"the anchors placed from the clicked corners disagree: a click a pixel off moves "
            f"them by up to {CLICK_IN_PER_PX:g} in; click the corners again, zoomed in, or "
            f"measure anchors {', '.join(map(str, clicked_only))} with a tape"
        )
    return AnchorProposal(table, pose, pose.problem, tuple(warnings))


def _check_dictionary(dictionary: str) -> None:
    try:
        dictionary_id(dictionary)
    except DictionaryError as exc:
        raise SetupError("dictionary", str(exc)) from None


def _named_anchors(
    anchor_ids: Sequence[int], seen: Mapping[int, np.ndarray], dictionary: str
) -> list[int]:
    ids: list[int] = []
    for k, i in enumerate(anchor_ids):
        key = f"anchor_ids[{k}]"
        if not isinstance(i, int) or isinstance(i, bool):
            raise SetupError(key, f"expected a marker id, got {cut(i)}")
        try:
            check_marker(dictionary, i)
        except DictionaryError as exc:
            raise SetupError(key, str(exc)) from None
        if i in ids:
            raise SetupError(key, f"marker {i} is named twice")
        if i not in seen:
            found = ", ".join(map(str, sorted(seen))) or "none"
            raise SetupError(key, f"marker {i} is not in the picture (the markers seen: {found})")
        ids.append(i)
    return ids


def _corner_anchors(
    placed: Mapping[int, tuple[np.ndarray, float]],
    table_in: tuple[float, float],
    warnings: list[str],
) -> list[int]:
    """The marker nearest each table corner within ``ANCHOR_REACH_IN``, corner by corner."""
    width, depth = table_in
    corners = [(0.0, 0.0), (width, 0.0), (width, depth), (0.0, depth)]
    ids: list[int] = []
    for name, corner in zip(CORNER_NAMES, corners, strict=True):
        near = sorted(
            (math.dist(corner, (float(c[0]), float(c[1]))), i)
            for i, (c, _) in placed.items()
            if i not in ids
        )
        if near and near[0][0] <= ANCHOR_REACH_IN:
            ids.append(near[0][1])
        else:
            warnings.append(
                f"no marker within {ANCHOR_REACH_IN:g} in of the {name} corner "
                f"({corner[0]:g}, {corner[1]:g}): fix an anchor there, or name the anchors"
            )
    return ids


def _taped(
    anchor: int,
    tape: Tape,
    seen_in: tuple[float, float],
    table_in: tuple[float, float],
    warnings: list[str],
) -> tuple[float, float]:
    """The anchor's place from the tape, each distance from the edge nearer to where the
    picture puts it; a warning when the two differ by more than ``TAPE_CHECK_IN``."""
    out = []
    for axis, (key, value) in enumerate(
        (("x_edge_in", tape.x_edge_in), ("y_edge_in", tape.y_edge_in))
    ):
        side = table_in[axis]
        value = _number(f"tape[{anchor}].{key}", value, 0, side, f"0 to {side:g} in")
        far = seen_in[axis] > side / 2
        edge = (("far", "near"), ("right", "left"))[axis == 0][not far]
        at = side - value if far else value
        if abs(at - seen_in[axis]) > TAPE_CHECK_IN:
            from_edge = side - seen_in[axis] if far else seen_in[axis]
            warnings.append(
                f"anchor {anchor}: the tape puts its centre {value:g} in from the {edge} edge, "
                f"the picture {from_edge:.2f} in: check the tape and the clicked corners"
            )
        out.append(float(at))
    return out[0], out[1]


def table_spec(
    table_in: tuple[float, float],
    dictionary: str,
    anchors: Sequence[Anchor],
    grid: GridIn | None = None,
) -> TableSpec:
    """A table from its size, dictionary and anchors, checked as ``table.toml`` is: each
    side 1 to 240 in, a known dictionary, at least one anchor, each a marker of the
    dictionary and none twice (``SetupError`` naming the field)."""
    width, depth = _table_size(table_in)
    _check_dictionary(dictionary)
    if not anchors:
        raise SetupError("anchors", "expected at least one anchor")
    seen: dict[int, int] = {}
    for k, a in enumerate(anchors):
        try:
            check_marker(dictionary, a.id)
        except DictionaryError as exc:
            raise SetupError(f"anchors[{k}].id", str(exc)) from None
        if a.id in seen:
            raise SetupError(f"anchors[{k}].id", f"{a.id} is also anchors[{seen[a.id]}].id")
        seen[a.id] = k
    keys = TableKeys(width_in=width, depth_in=depth, dictionary=dictionary)
    return TableSpec(table=keys, anchors=list(anchors), grid=grid)


# -- 3. the markers on models and terrain --------------------------------------------------


@dataclass(frozen=True)
class SeenMarker:
    """A marker seen that is not an anchor: where it is in the picture and, once the
    anchors give a pose, on the table (inches; at the height it was asked at) and where
    its printed top edge faces (degrees counterclockwise from +x)."""

    id: int
    centre_px: tuple[float, float]
    side_px: float
    centre_in: tuple[float, float] | None = None
    heading: float | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "centre_px": [round(v, 2) for v in self.centre_px],
            "side_px": round(self.side_px, 2),
            "centre_in": None if self.centre_in is None else [round(v, 3) for v in self.centre_in],
            "heading": None if self.heading is None else round(self.heading, 1),
        }


def seen_markers(
    detections: MarkerDetections,
    anchors: Collection[int] = (),
    pose: TablePose | None = None,
    height_mm: float = MARKER_HEIGHT_MM,
) -> list[SeenMarker]:
    """The markers seen that are not ``anchors``, by id; with a ``pose``, each one's place
    on the table with its face ``height_mm`` above it (a marker on a base top)."""
    out = []
    for i, corners in sorted(detections.by_id().items()):
        if i in anchors:
            continue
        corners = np.asarray(corners, dtype=float).reshape(4, 2)
        side = float(np.linalg.norm(corners - np.roll(corners, -1, axis=0), axis=1).mean())
        centre_px = diagonal_centres(corners[None])[0]
        centre_in = heading = None
        if pose is not None:
            on_table = pose.pixels_to_table(corners, height_mm / MM_PER_IN).reshape(1, 4, 2)
            c = diagonal_centres(on_table)[0]
            centre_in, heading = (float(c[0]), float(c[1])), _heading(on_table[0])
        out.append(
            SeenMarker(i, (float(centre_px[0]), float(centre_px[1])), side, centre_in, heading)
        )
    return out


def footprint_in_marker_frame(
    polygon_in: Sequence[Sequence[float]], centre_in: Sequence[float], heading: float
) -> list[tuple[float, float]]:
    """A footprint drawn in table inches as ``terrain.toml`` wants it: in the frame of the
    piece's marker (centre ``centre_in``, top edge facing ``heading``), +x towards its top
    edge and +y to its left, to 0.001 in.

    >>> footprint_in_marker_frame([(9, 4), (11, 4), (11, 7)], (10, 5), 90)
    [(-1.0, 1.0), (-1.0, -1.0), (2.0, -1.0)]
    """
    a = math.radians(heading)
    fwd, left = (math.cos(a), math.sin(a)), (-math.sin(a), math.cos(a))
    out = []
    for x, y in polygon_in:
        dx, dy = x - centre_in[0], y - centre_in[1]
        u = round(dx * fwd[0] + dy * fwd[1], 3) + 0.0
        v = round(dx * left[0] + dy * left[1], 3) + 0.0
        out.append((u, v))
    return out


@dataclass(frozen=True)
class GamePreset:
    """What a game's ruleset asks of the models and pieces a user describes: the model
    keywords and statuses its rules name, the terrain keywords they read, and what a
    model's ``movement`` counts (``in``, or ``squares`` on a grid). The rulesets give no
    base sizes or Movement values: those are the user's."""

    game: str
    title: str
    movement_unit: str
    keywords: tuple[str, ...]
    statuses: tuple[str, ...]
    terrain_keywords: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def game_preset(game: str | GameFile) -> GamePreset:
    """The keywords a game's rules name, read from its ruleset (``rules/games/``)."""
    rules = ruleset_of(game)
    keywords: list[str] = [k for k in rules.movement.difficult_cost if k != "default"]
    keywords += rules.movement.handling_test_keywords
    statuses: list[str] = []
    if rules.zone is not None:
        keywords += rules.zone.sources_exclude_keywords + rules.zone.movers_exempt_keywords
        statuses += rules.zone.exempt_when_status_all
    for action in rules.actions.values():
        keywords += action.requires_keywords + action.forbidden_keywords
        keywords += action.target_forbidden_keywords
        statuses += action.forbidden_status
    terrain: tuple[str, ...] = TERRAIN_KEYWORDS
    if rules.grid is not None:
        keywords += rules.grid.jet_keywords + [k for k in rules.grid.move_actions if k != "default"]
        keywords.append("magboots")  # rules.grid: magboots let a character move outside
        statuses += rules.grid.unconscious_status
        terrain = GRID_TERRAIN_KEYWORDS
    return GamePreset(
        rules.name,
        rules.title,
        "squares" if rules.grid is not None else "in",
        tuple(dict.fromkeys(keywords)),
        tuple(dict.fromkeys(statuses)),
        terrain,
    )


@dataclass(frozen=True)
class GameFile:
    """A game from a file outside the package (``setup --ruleset``), as loaded."""

    ruleset: Ruleset
    path: Path

    @classmethod
    def load(cls, path: Path) -> GameFile:
        """The file read as ``run --ruleset`` reads it; an :class:`InputError` names what
        is wrong."""
        return cls(load_ruleset_file(path), path.resolve())


def ruleset_of(game: object) -> Ruleset:
    """A packaged game by its name, or a game from a file."""
    if isinstance(game, GameFile):
        return game.ruleset
    try:
        return load_ruleset(str(game))
    except InputError as exc:
        raise SetupError("game", str(exc)) from None


@dataclass(frozen=True)
class Assignment:
    """The models of ``roster.toml`` and the pieces of ``terrain.toml``."""

    roster: list[RosterModel]
    terrain: list[TerrainPiece]


def assign(
    game: str | GameFile,
    table: TableSpec,
    models: Sequence[Mapping[str, Any]],
    terrain: Sequence[Mapping[str, Any]] = (),
    *,
    marker_mm: float = MARKER_MM,
    marker_height_mm: float = MARKER_HEIGHT_MM,
) -> Assignment:
    """The roster's models and the terrain pieces from what the user filled in, one
    mapping each with the fields of ``roster.toml``'s ``[[models]]`` (``marker``, ``id``,
    ``side``, ``base``, ``movement``; ``unit``, ``keywords``, ``status``,
    ``marker_offset_mm``) or ``terrain.toml``'s ``[[terrain]]`` (``marker``, ``id``,
    ``polygon``; ``height``, ``levels``, ``keywords``). ``marker_size_mm`` defaults to the
    printed sheet's ``marker_mm``, a model's ``marker_height_mm`` to ``marker_height_mm``.

    Refused, naming the field (``models[3].marker``): an unknown game, a value of the
    wrong kind, a marker that is no marker of the table's dictionary, an anchor's marker,
    one marker on two models or pieces, a model or piece id used twice, and every model
    whose marker with its quiet zone does not fit its base (all named at once, with the
    largest each base takes).
    """
    ruleset_of(game)
    dictionary = table.table.dictionary
    anchors = {a.id for a in table.anchors}
    defaults = {"marker_size_mm": marker_mm, "marker_height_mm": marker_height_mm}
    roster = [
        _entry(RosterModel, f"models[{k}]", entry, defaults) for k, entry in enumerate(models)
    ]
    pieces = [
        _entry(TerrainPiece, f"terrain[{k}]", entry, {"marker_size_mm": marker_mm})
        for k, entry in enumerate(terrain)
    ]
    entries = [("models", k, m.id, m.marker) for k, m in enumerate(roster)]
    entries += [("terrain", k, t.id, t.marker) for k, t in enumerate(pieces)]
    carried: dict[int, str] = {}
    first: dict[tuple[str, str], int] = {}
    for key, k, name, marker in entries:
        if (key, name) in first:
            raise SetupError(f"{key}[{k}].id", f"{cut(name)} is also {key}[{first[key, name]}].id")
        first[key, name] = k
        where = f"{key}[{k}].marker"
        try:
            check_marker(dictionary, marker)
        except DictionaryError as exc:
            raise SetupError(where, str(exc)) from None
        if marker in anchors:
            listed = ", ".join(map(str, sorted(anchors)))
            raise SetupError(where, f"marker {marker} is an anchor (the anchors: {listed})")
        if marker in carried:
            raise SetupError(
                where, f"marker {marker} is also {carried[marker]}: one marker, one model or piece"
            )
        carried[marker] = where
    bad, said = misfits([(m.id, base_of(m.base), m.marker_size_mm) for m in roster], dictionary)
    if bad:  # all of them in one answer
        names = [f"models[{k}]" for k in range(len(roster))]
        raise SetupError(named_fields(names, bad, "marker_size_mm"), said)
    return Assignment(roster, pieces)


def _entry(schema: type[M], key: str, entry: object, defaults: Mapping[str, float]) -> M:
    """One filled-in entry, its defaults added, checked as its file checks it."""
    if not isinstance(entry, Mapping):
        raise SetupError(key, f"expected a table of fields, got {cut(entry)}")
    try:
        return schema.model_validate({**defaults, **entry})
    except ValidationError as exc:
        text = str(from_validation(key, schema, exc)).removeprefix(f"{key}: ")
        field, _, message = text.partition(": ")
        raise SetupError(f"{key}.{field}" if field != "(top level)" else key, message) from None
