"""From marker detections (pixels) to poses in table inches.

Each marker's corner rays meet the plane at that marker's known height (so raised
markers have no parallax); its centre is the mean of those four points and its heading
the direction from the centre to the middle of its top edge. A model's base centre is
its marker centre less the marker's offset turned by the heading.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from calibration.table import MM_PER_IN, TableSpec
from vision.aruco import MarkerDetections
from vision.roster import RosterModel, TerrainPiece
from vision.tablepose import TablePose


@dataclass(frozen=True)
class MarkerPose:
    """A marker on the table: centre (inches), height, heading (degrees), pixel corners."""

    id: int
    x: float
    y: float
    z: float
    heading: float
    corners_px: np.ndarray

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "x": round(self.x, 4),
            "y": round(self.y, 4),
            "z": round(self.z, 4),
            "heading": round(self.heading, 2),
            "corners_px": np.round(self.corners_px, 2).tolist(),
        }


@dataclass(frozen=True)
class Placed:
    """A roster model or terrain piece where its marker says it is."""

    id: str
    marker: int
    x: float
    y: float
    heading: float
    z: float = 0.0
    polygon: list[tuple[float, float]] | None = None

    def to_dict(self) -> dict[str, object]:
        if self.polygon is not None:
            return {"id": self.id, "marker": self.marker, "polygon": self.polygon}
        return {
            "id": self.id,
            "marker": self.marker,
            "x": round(self.x, 4),
            "y": round(self.y, 4),
            "heading": round(self.heading, 2),
            "z": round(self.z, 4),
        }


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
    ids = detections.ids.tolist()
    z = np.asarray(
        [heights_in.get(i, 0.0) if pose.height_corrected else 0.0 for i in ids], dtype=float
    )
    # All corners through the lens and onto their planes in one go.
    xy = pose.pixels_to_table(detections.corners_px.reshape(-1, 2), np.repeat(z, 4)).reshape(
        -1, 4, 2
    )
    centres = xy.mean(axis=1)
    tops = (xy[:, 0] + xy[:, 1]) / 2 - centres
    headings = np.degrees(np.arctan2(tops[:, 1], tops[:, 0])) % 360.0
    return [
        MarkerPose(i, float(c[0]), float(c[1]), float(h), float(a), corners)
        for i, c, h, a, corners in zip(
            ids, centres, z, headings, detections.corners_px, strict=True
        )
    ]


def locate(
    detections: MarkerDetections,
    table: TableSpec,
    pose: TablePose,
    roster: list[RosterModel] = (),  # type: ignore[assignment]
    terrain: list[TerrainPiece] = (),  # type: ignore[assignment]
) -> Located:
    """Markers, models and terrain where this frame sees them."""
    heights = {m.marker: m.marker_height_mm / MM_PER_IN for m in roster}
    heights.update({t.marker: t.marker_height_mm / MM_PER_IN for t in terrain})
    anchors = {a.id for a in table.anchors}
    markers = [m for m in marker_poses(detections, pose, heights) if m.id not in anchors]
    by_marker = {m.id: m for m in markers}
    models = []
    for entry in roster:
        seen = by_marker.get(entry.marker)
        if seen is None:
            continue
        forward, left = (v / MM_PER_IN for v in entry.marker_offset_mm)
        a = math.radians(seen.heading)
        x = seen.x - (forward * math.cos(a) - left * math.sin(a))
        y = seen.y - (forward * math.sin(a) + left * math.cos(a))
        models.append(Placed(entry.id, entry.marker, x, y, seen.heading))
    pieces = []
    for piece in terrain:
        seen = by_marker.get(piece.marker)
        if seen is None:
            continue
        a = math.radians(seen.heading)
        c, s = math.cos(a), math.sin(a)
        poly = [
            (round(seen.x + u * c - v * s, 4), round(seen.y + u * s + v * c, 4))
            for u, v in piece.polygon
        ]
        pieces.append(Placed(piece.id, piece.marker, seen.x, seen.y, seen.heading, polygon=poly))
    known = {m.marker for m in roster} | {t.marker for t in terrain}
    return Located(
        pose,
        markers,
        models,
        pieces,
        unknown_markers=sorted(m.id for m in markers if m.id not in known) if known else [],
        missing=[m.id for m in roster if m.marker not in by_marker]
        + [t.id for t in terrain if t.marker not in by_marker],
    )
