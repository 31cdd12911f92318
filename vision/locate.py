"""From marker detections (pixels) to poses in table inches, heights included.

Each marker's corner rays meet the plane at that marker's height (so raised markers have
no parallax); its centre is the mean of those four points and its heading the direction
from the centre to the middle of its top edge. A model's base centre is its marker centre
less the marker's offset turned by the heading.

A model's height is measured, not assumed. A pixel's ray meets the plane at height z at a
point that moves linearly with z, so the marker's four corners back-projected onto the
planes z = 0 and z = 1 give its outline on every plane; only on the plane it truly lies in
is that outline as large as the printed marker (the outline shrinks in proportion to the
distance from the camera). That plane, less the marker's height on its base, is where the
base stands: the *measured* height. The candidates are the table and the top (and any
``levels``) of each terrain piece with the model's base centre on its footprint (the
centre as it would be on that level: the marker's corners traced to the plane at the
level's height, less the offset); the one nearest the measured height is chosen when it
is within ``level_tolerance_in`` of it, and the model is placed on that plane, its marker's
corners traced to it again, so it is where it stands in plan too. When none is, the model
is placed at the measured height and said to stand on no known level (:attr:`Placed.on`
is None) rather than put on a guessed one. A piece whose marker the frame does not show
(the model on it hides it) is where an earlier frame placed it, when one is given
(``placed_before``). Without camera intrinsics (a homography) heights cannot be
measured: every model stands on the table.

The levels cost a few point-in-polygon tests per model: 17 models among 6 pieces are
located in 0.48 ms, 0.25 ms of it the levels (``tests/vision/test_levels.py``, with -s).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from shapely.geometry import Point, Polygon

from tablesight.calibration.roster import RosterModel, TerrainPiece
from tablesight.calibration.table import MM_PER_IN, TableSpec
from tablesight.rules.geometry import Pose
from tablesight.vision.aruco import MarkerDetections
from tablesight.vision.tablepose import TablePose


@dataclass(frozen=True)
class MarkerPose:
    """A marker on the table: its pose in table inches (centre, heading in degrees, the
    height of the plane it lies in) and its corners in pixels."""

    id: int
    pose: Pose
    corners_px: np.ndarray

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "x": round(self.pose.x, 4),
            "y": round(self.pose.y, 4),
            "z": round(self.pose.z, 4),
            "heading": round(self.pose.heading, 2),
            "corners_px": np.round(self.corners_px, 2).tolist(),
        }


#: What a model stands on when its height matches no piece: the table.
TABLE_LEVEL = "table"
#: The least margin (inches) between a measured height and a level it is put on; the
#: measurement's own uncertainty widens it (see :func:`level_tolerance_in`).
MIN_LEVEL_TOLERANCE_IN = 0.75
#: How many of its own uncertainties a measured height may be from a level it is put on.
#: On rendered tables of towers and crates 2-7 in high with models on their tops and
#: beside them, in five set-ups (15-25 mm markers, cameras 32-60 in up, 1080p and 4K;
#: ``tests/vision/test_levels.py`` prints the spread with -s), a height is off by a third
#: of its uncertainty at the median and by 1.3 of it at most for 99% of the models, but
#: with the camera 32 in up, where the uncertainty is least and 2.6 of it is still within
#: ``MIN_LEVEL_TOLERANCE_IN``; under standing figures (the occlusion study's 2,839 models
#: with rim, tab and head markers) by 1.9 for 99%, and by more than 2.5 for 2. A wider
#: margin puts models on the table that stand on a piece the camera has not placed: of the
#: 359 models on pieces in those tables, 4 uncertainties would put 22 on it, 2.5 put 6.
LEVEL_UNCERTAINTIES = 2.5
#: How far off (pixels) a marker's corners are taken to be at the least when its height is
#: measured: four corners each this far off put the mean of its sides about
#: ``HEIGHT_CORNER_PX / sqrt(2)`` off (a 15 px marker 66 in away: 0.9 in of height).
HEIGHT_CORNER_PX = 0.3
#: A model's base centre may be this far (inches) outside the footprint of the piece it
#: stands on: the footprint as its marker places it is off by a few hundredths, and the
#: piece as ``terrain.toml`` describes it maybe by more. Less than any base's radius (a
#: 20 mm base's is 0.39 in), so a model on the table with its base against a piece's side
#: is never on the piece.
LEVEL_EDGE_IN = 0.25


@dataclass(frozen=True)
class Placed:
    """A roster model or terrain piece where its marker says it is.

    ``pose`` is where it stands in table inches: for a model its base's centre, heading and
    the height ``z`` its base stands at; for a piece its marker's centre and heading, at
    z 0. For a model, ``on`` is what it stands on (the table, a piece's id, or None when
    its measured height ``z_measured_in`` fits no level), ``z_measured_in`` the height
    the camera measured and ``z_uncertainty_in`` how far that may be off (both None
    without intrinsics).
    """

    id: str
    marker: int
    pose: Pose
    polygon: list[tuple[float, float]] | None = None
    on: str | None = TABLE_LEVEL
    z_measured_in: float | None = None
    z_uncertainty_in: float | None = None

    def to_dict(self) -> dict[str, object]:
        if self.polygon is not None:
            return {"id": self.id, "marker": self.marker, "polygon": self.polygon}
        return {
            "id": self.id,
            "marker": self.marker,
            "x": round(self.pose.x, 4),
            "y": round(self.pose.y, 4),
            "heading": round(self.pose.heading, 2),
            "z": round(self.pose.z, 4),
            "on": self.on,
            "z_measured": None if self.z_measured_in is None else round(self.z_measured_in, 3),
            "stands": self.stands,
        }

    @property
    def stands(self) -> str:
        """Where a model stands, for people: "on the table", "on tower5, 5.00 in", or
        "at 3.72 in, on no known level"."""
        if self.on == TABLE_LEVEL:
            return "on the table"
        if self.on is None:
            return f"at {self.pose.z:.2f} in, on no known level"
        return f"on {self.on}, {self.pose.z:.2f} in"


@dataclass(frozen=True)
class Located:
    """Everything one frame says about the table."""

    pose: TablePose
    markers: list[MarkerPose]
    models: list[Placed] = field(default_factory=list)
    terrain: list[Placed] = field(default_factory=list)
    unknown_markers: list[int] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "markers": [m.to_dict() for m in self.markers],
            "models": [m.to_dict() for m in self.models],
            "terrain": [t.to_dict() for t in self.terrain],
            "unknown_markers": self.unknown_markers,
            "missing": self.missing,
            "pose": {
                "anchors_used": list(self.pose.anchors_used),
                "reprojection_px": round(self.pose.reprojection_px, 4),
                "height_corrected": self.pose.height_corrected,
            },
        }


def marker_poses(
    detections: MarkerDetections, pose: TablePose, heights_in: dict[int, float]
) -> list[MarkerPose]:
    """Every detected marker mapped onto the plane at its height (0 where unknown)."""
    return _Planes(detections, pose).markers(
        {i: heights_in.get(i, 0.0) for i in detections.ids.tolist()}
    )


class _Planes:
    """Every detected marker's corners on the planes z = 0 and z = 1; on any other plane
    they follow linearly (a ray's point at height z is p0 + z (p1 - p0)).

    The corners are first moved outward by the detector's bias (``TablePose.corner_bias_px``,
    measured on the anchors): a marker's centre and heading do not care, but its size does.
    """

    def __init__(self, detections: MarkerDetections, pose: TablePose, bias_px: float = 0.0) -> None:
        self.detections = detections
        self.measures_height = pose.height_corrected
        self.index = {m: k for k, m in enumerate(detections.ids.tolist())}
        pixels = _grown(detections.corners_px, -bias_px).reshape(-1, 2)
        self.p0 = pose.pixels_to_table(pixels, 0.0).reshape(-1, 4, 2)
        if self.measures_height:
            self.dp = pose.pixels_to_table(pixels, 1.0).reshape(-1, 4, 2) - self.p0
        else:
            self.dp = np.zeros_like(self.p0)

    def corners_at(self, marker: int, z_in: float) -> np.ndarray:
        k = self.index[marker]
        return np.asarray(self.p0[k] + z_in * self.dp[k])

    def heights_of(self, markers: list[int], sizes_in: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The height of the plane each marker lies in, from its outline's size there (see
        the module's docstring), and how far that height may be off (inches): the relative
        error of its size (the spread of its four sides, and at least what corners
        ``HEIGHT_CORNER_PX`` off give its mean side in pixels) times the camera's distance
        above it (the outline shrinks to nothing at the camera's height)."""
        k = [self.index[m] for m in markers]
        side0 = _sides(self.p0[k])
        slope = _sides(self.p0[k] + self.dp[k]) - side0  # negative: sides shrink as z grows
        z = (sizes_in - side0.mean(axis=1)) / slope.mean(axis=1)
        spread = np.std(side0 + z[:, None] * slope, axis=1) / sizes_in
        side_px = self.detections.side_px[k]
        floor = HEIGHT_CORNER_PX / (np.sqrt(2.0) * np.maximum(side_px, 1.0))
        above_in = sizes_in / np.maximum(-slope.mean(axis=1), 1e-12)
        return z, np.maximum(spread, floor) * above_in

    def markers(self, heights_in: dict[int, float]) -> list[MarkerPose]:
        ids = list(heights_in)
        if not ids:
            return []
        k = [self.index[m] for m in ids]
        z = np.asarray([heights_in[m] for m in ids], dtype=float)
        if not self.measures_height:
            z = np.zeros_like(z)
        xy = self.p0[k] + z[:, None, None] * self.dp[k]
        centres = xy.mean(axis=1)
        tops = (xy[:, 0] + xy[:, 1]) / 2 - centres
        headings = np.degrees(np.arctan2(tops[:, 1], tops[:, 0])) % 360.0
        corners = self.detections.corners_px[k]
        return [
            MarkerPose(i, Pose(float(c[0]), float(c[1]), float(a), float(h)), px)
            for i, c, h, a, px in zip(ids, centres, z, headings, corners, strict=True)
        ]


def _grown(corners_px: np.ndarray, by_px: float) -> np.ndarray:
    """Quadrilaterals (N, 4, 2) with each corner moved ``by_px`` away from their centre."""
    corners = np.asarray(corners_px, dtype=float).reshape(-1, 4, 2)
    if by_px == 0.0 or not len(corners):
        return corners
    out = corners - corners.mean(axis=1, keepdims=True)
    reach = np.linalg.norm(out, axis=2, keepdims=True)
    return np.asarray(corners + by_px * out / np.maximum(reach, 1e-12))


def _sides(corners: np.ndarray) -> np.ndarray:
    """The four side lengths of each quadrilateral (N, 4, 2), (N, 4)."""
    return np.asarray(np.linalg.norm(corners - np.roll(corners, -1, axis=1), axis=2))


def level_tolerance_in(uncertainty_in: float) -> float:
    """How far a measured height may be from a level and still be on it: at least
    ``MIN_LEVEL_TOLERANCE_IN``, or ``LEVEL_UNCERTAINTIES`` times the measurement's own
    uncertainty."""
    return max(MIN_LEVEL_TOLERANCE_IN, LEVEL_UNCERTAINTIES * uncertainty_in)


@dataclass(frozen=True)
class Level:
    """A level a model may stand on: what it is (the table, or a piece's id), its height
    (inches) and the footprint over which it is (None: the whole table)."""

    what: str
    height_in: float
    footprint: Polygon | None = None


def _levels(pieces: list[tuple[TerrainPiece, Placed]]) -> list[Level]:
    """Every level a model may stand on: the table, and each piece's top and levels."""
    out = [Level(TABLE_LEVEL, 0.0)]
    for piece, placed in pieces:
        footprint = Polygon(placed.polygon or [])
        for height in sorted({piece.height, *piece.levels}):
            if height > 0.0:
                out.append(Level(piece.id, float(height), footprint))
    return out


def _base(centre: np.ndarray, heading_deg: float, entry: RosterModel) -> tuple[float, float]:
    """A model's base centre from its marker's centre and heading: the marker's offset
    (forward, left of the base centre, in the model's frame) turned by the heading and
    taken off."""
    forward, left = (v / MM_PER_IN for v in entry.marker_offset_mm)
    a = math.radians(heading_deg)
    x = float(centre[0]) - (forward * math.cos(a) - left * math.sin(a))
    y = float(centre[1]) - (forward * math.sin(a) + left * math.cos(a))
    return x, y


def _base_at(planes: _Planes, entry: RosterModel, z_in: float) -> tuple[float, float]:
    """Where a model's base centre is if its base stands at height ``z_in``: its marker's
    corners on the plane ``z_in`` + the marker's height, less the offset."""
    corners = planes.corners_at(entry.marker, z_in + entry.marker_height_mm / MM_PER_IN)
    centre = corners.mean(axis=0)
    top = (corners[0] + corners[1]) / 2 - centre
    return _base(centre, math.degrees(math.atan2(top[1], top[0])), entry)


def _stand(
    planes: _Planes,
    entry: RosterModel,
    levels: list[Level],
    plane_z: float,
    uncertainty_in: float,
) -> tuple[float, str | None, float | None]:
    """The height a model's base stands at, what it stands on, and the measured height,
    from the height of the plane its marker was measured in: the level nearest the
    measured height, within the tolerance, whose footprint has the base's centre (placed
    at that level's height) on it or within ``LEVEL_EDGE_IN`` of its edge."""
    lift_in = entry.marker_height_mm / MM_PER_IN
    measured = plane_z - lift_in
    tolerance = level_tolerance_in(uncertainty_in)
    best: Level | None = None
    for level in sorted(levels, key=lambda v: abs(measured - v.height_in)):
        if abs(measured - level.height_in) > tolerance:
            break
        if level.footprint is not None:
            x, y = _base_at(planes, entry, level.height_in)
            if level.footprint.distance(Point(x, y)) > LEVEL_EDGE_IN:
                continue
        best = level
        break
    if best is None:
        return measured, None, measured
    return best.height_in, best.what, measured


def locate(
    detections: MarkerDetections,
    table: TableSpec,
    pose: TablePose,
    roster: Sequence[RosterModel] = (),
    terrain: Sequence[TerrainPiece] = (),
    placed_before: Sequence[Placed] = (),
) -> Located:
    """Markers, models and terrain where this frame sees them, each model at the height
    it stands at.

    ``placed_before`` are terrain pieces as earlier frames placed them (``Located.terrain``
    of those frames): a piece of ``terrain`` whose marker this frame does not show (hidden
    by the model standing on it, or by a hand) is still a level there, so a model on it
    is put on its top and not left at its measured height. A piece this frame shows is
    where this frame puts it; ``Located.terrain`` lists only those."""
    planes = _Planes(detections, pose, pose.corner_bias_px if pose.height_corrected else 0.0)
    anchors = {a.id for a in table.anchors}
    seen = set(planes.index) - anchors
    heights = {i: 0.0 for i in seen}
    shown = [piece for piece in terrain if piece.marker in seen]
    for piece in shown:
        heights[piece.marker] = piece.marker_height_mm / MM_PER_IN
    at = {m.id: m for m in planes.markers({p.marker: heights[p.marker] for p in shown})}
    pieces = [(piece, _piece(piece, at[piece.marker])) for piece in shown]
    shown_ids = {piece.id for piece in shown}
    spec = {piece.id: piece for piece in terrain}
    hidden = [
        (spec[placed.id], placed)
        for placed in placed_before
        if placed.id in spec and placed.id not in shown_ids and placed.polygon
    ]
    levels = _levels(pieces + hidden)
    stands: dict[str, tuple[float, str | None, float | None]] = {}
    uncertain: dict[str, float] = {}
    standing = [entry for entry in roster if entry.marker in seen]
    if standing and planes.measures_height:
        sizes = np.asarray([e.marker_size_mm / MM_PER_IN for e in standing], dtype=float)
        plane_z, uncertainty = planes.heights_of([e.marker for e in standing], sizes)
        for entry, z, u in zip(standing, plane_z, uncertainty, strict=True):
            stands[entry.id] = _stand(planes, entry, levels, float(z), float(u))
            uncertain[entry.id] = float(u)
    else:
        stands = {entry.id: (0.0, TABLE_LEVEL, None) for entry in standing}
    for entry in standing:
        heights[entry.marker] = stands[entry.id][0] + entry.marker_height_mm / MM_PER_IN
    markers = planes.markers(dict(sorted(heights.items())))
    by_marker = {m.id: m for m in markers}
    models = []
    for entry in standing:
        marker = by_marker[entry.marker].pose
        x, y = _base(np.array([marker.x, marker.y]), marker.heading, entry)
        z, on, measured = stands[entry.id]
        pose_in = Pose(x, y, marker.heading, z)
        u_in = uncertain.get(entry.id)
        models.append(Placed(entry.id, entry.marker, pose_in, None, on, measured, u_in))
    known = {m.marker for m in roster} | {t.marker for t in terrain}
    return Located(
        pose,
        markers,
        models,
        [placed for _, placed in pieces],
        unknown_markers=sorted(m.id for m in markers if m.id not in known) if known else [],
        missing=[m.id for m in roster if m.marker not in by_marker]
        + [t.id for t in terrain if t.marker not in by_marker],
    )


def _piece(piece: TerrainPiece, seen: MarkerPose) -> Placed:
    """A terrain piece's footprint where its marker is, in table inches."""
    at = seen.pose
    a = math.radians(at.heading)
    c, s = math.cos(a), math.sin(a)
    poly = [
        (round(at.x + u * c - v * s, 4), round(at.y + u * s + v * c, 4)) for u, v in piece.polygon
    ]
    return Placed(piece.id, piece.marker, Pose(at.x, at.y, at.heading), polygon=poly)
