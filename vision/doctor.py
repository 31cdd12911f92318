"""``tablesight doctor``: look at the table as the camera sees it and say what is wrong.

One picture, or a few frames of a camera or video (so that one bad frame is not the
verdict), is checked against the user's files: anchors missing, turned or moved; markers
too small in pixels where they stand, with the size to print instead; roster models and
terrain pieces not seen; markers that are in no file; glare over or beside markers; a
blurred picture; and the table pose's health. Each finding says what, where, and what to
do about it.

The thresholds are measured, not guessed (each constant says how):

- a marker's side in pixels: :data:`MISSED_BY_SIDE_PX`, the share of markers of each size
  the detector misses on rendered 1080p frames, none of :data:`RELIABLE_SIDE_PX` and more;
- blur: the width of a marker's outer edge in pixels (:func:`edge_widths_px`) against
  :data:`MAX_EDGE_WIDTH_PX`;
- glare: the share of saturated pixels (grey level :data:`SATURATED` and over) on a
  marker's black border (:data:`MAX_RING_GLARE`) or beside its card
  (:data:`MAX_NEAR_GLARE`), and saturated patches on the table clear of every card larger
  than :data:`MIN_GLARE_AREA_PX`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from tablesight.calibration.camera import CameraModel
from tablesight.calibration.roster import RosterModel, TerrainPiece
from tablesight.calibration.table import MM_PER_IN, TableSpec
from tablesight.vision.sight import detector, sight
from tablesight.vision.tablepose import TablePose, diagonal_centres

#: Markers this many pixels across and more were all found (README: "every marker of 18 px
#: or more found"; docs/detector-settings.md: 245 of 245 on 8 frames with decoys).
RELIABLE_SIDE_PX = 18.0
#: The share of markers of each side (whole pixels, the bucket [n, n + 1)) the detector
#: missed, measured on 60 rendered 1920 x 1080 frames of a 44 x 30 in table (the synthetic
#: camera of the tests: 30 in up, 14 in in front of the near edge, lens distortion, blur
#: 0.6 px, noise, a lighting gradient and JPEG; seeds 0-59), 48 markers of 8-18 mm a frame
#: at random headings: 2,880 markers, 160-280 in each bucket of 10-18 px. Under 12 px: all
#: 447 missed; 18-26 px: 1 missed of 621.
MISSED_BY_SIDE_PX = {12: 0.98, 13: 0.79, 14: 0.43, 15: 0.18, 16: 0.05, 17: 0.03}

#: Grey level taken as saturated (the sensor clipped: a marker's cells read white there).
SATURATED = 250
#: A marker's black border cells should never clip: more than this share of its border's
#: samples at ``SATURATED`` is glare over the marker. (Clean renders: 0.)
MAX_RING_GLARE = 0.02
#: Beside a marker (from its card's edge out to one marker side beyond it) the mat should
#: not clip either: more than this share of samples is glare beside it, likely to reach the
#: marker when the light or the model moves.
MAX_NEAR_GLARE = 0.05
#: A saturated patch on the table, clear of every card seen, larger than this (pixels) can
#: hide a marker: the card of an 18 px marker (its side and a one-cell quiet zone each
#: side, 18 * 8 / 6 px square).
MIN_GLARE_AREA_PX = 576

#: How wide a marker's outer edge is (:func:`edge_widths_px`) in a picture in focus, and
#: what a blurred one needs, measured on 12 rendered 1080p frames (as above; 48 markers of
#: 12-30 mm each) blurred further with ``cv2.GaussianBlur``: in focus the edges were
#: 1.61-1.67 px wide and 99% of markers of 18-24 px were found; blurred by sigma 0.8 px:
#: 2.2-2.35 px, 88% of 18-24 px, 99% of 24-30 px; 1.2 px: 2.5-2.8 px, 36% of 18-24 px,
#: 91% of 24-30 px, all of 30-40 px; 1.6 px: 3.2-3.5 px, 4%, 39% and 91%; 2.0 px:
#: 3.5-3.9 px, 0%, 11%, 62%. A marker is found reliably from about 18 px across times the
#: edge width over ``SHARP_EDGE_PX`` (25 px at 2.3 px, 29 at 2.7, 41 at 3.8), so a picture
#: whose edges are wider than ``MAX_EDGE_WIDTH_PX`` loses markers a sharp one keeps.
SHARP_EDGE_PX = 1.65
MAX_EDGE_WIDTH_PX = 2.0

#: How many frames of a camera or video are looked at, over at most this many seconds.
SOURCE_FRAMES = 10
SOURCE_SECONDS = 1.0


@dataclass(frozen=True)
class Finding:
    """One thing wrong: its kind (one of :data:`KINDS`), what it is about (an anchor, a
    model, a terrain piece, a marker, the picture or the pose), what is wrong and what to
    do about it."""

    kind: str
    subject: str
    message: str
    advice: str

    def to_dict(self) -> dict[str, str]:
        return {
            "kind": self.kind,
            "subject": self.subject,
            "message": self.message,
            "advice": self.advice,
        }

    def line(self) -> str:
        """The finding for a person: its subject named once, what is wrong, what to do."""
        said = (
            self.message
            if self.message.startswith(self.subject)
            else (f"{self.subject}: {self.message}")
        )
        return f"{said}; {self.advice}"


#: Every kind of finding.
KINDS = (
    "anchor_missing",
    "anchor_turned",
    "anchor_off",
    "marker_small",
    "model_unseen",
    "terrain_unseen",
    "marker_unknown",
    "glare",
    "blur",
    "pose",
)


# -- measuring markers in one picture --------------------------------------------------------


def _unit_to_pixels(corners_px: np.ndarray, cells: int, uv: np.ndarray) -> np.ndarray:
    """Points given in each marker's cell units (0..cells across the black square, (K, 2))
    to pixels, (N, K, 2)."""
    square = np.array([[0, 0], [cells, 0], [cells, cells], [0, cells]], dtype=np.float32)
    out = []
    for c in np.asarray(corners_px, dtype=np.float32).reshape(-1, 4, 2):
        h = cv2.getPerspectiveTransform(square, c)
        out.append(cv2.perspectiveTransform(uv.reshape(1, -1, 2).astype(np.float64), h)[0])
    return np.asarray(out).reshape(-1, len(uv), 2)


def _sample(gray: np.ndarray, points_px: np.ndarray) -> np.ndarray:
    """Grey levels at pixel points (..., 2), bilinear; outside the picture: 0."""
    shape = points_px.shape[:-1]
    points = points_px.reshape(-1, 2).astype(np.float32)
    n = len(points)
    width = 1024  # remap's maps must be under 32767 wide
    pad = np.full((-n % width, 2), -1.0, np.float32)
    flat = np.concatenate([points, pad]).reshape(-1, width, 2)
    values = cv2.remap(
        gray.astype(np.float32),
        np.ascontiguousarray(flat[..., 0]),
        np.ascontiguousarray(flat[..., 1]),
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=0,
    ).reshape(-1)[:n]
    return np.asarray(values, dtype=float).reshape(shape)


def edge_widths_px(gray: np.ndarray, corners_px: np.ndarray, cells: int) -> np.ndarray:
    """How wide each marker's outer edge is in the picture (pixels): the step from its black
    border to the white quiet zone, sampled across each side at five places, its height over
    its steepest slope (a Gaussian blur of sigma s gives 2.5 s; a sharp print about 1.5 px).
    The median of the marker's 20 profiles, (N,)."""
    corners = np.asarray(corners_px, dtype=float).reshape(-1, 4, 2)
    if not len(corners):
        return np.zeros(0)
    nxt = np.roll(corners, -1, axis=1)
    along = nxt - corners
    length = np.linalg.norm(along, axis=2, keepdims=True)
    normal = np.stack([along[..., 1], -along[..., 0]], axis=-1) / np.maximum(length, 1e-9)
    mid = (corners + nxt) / 2 - corners.mean(axis=1, keepdims=True)
    normal *= np.where(np.sum(normal * mid, axis=2, keepdims=True) < 0, -1.0, 1.0)  # outward
    t = np.linspace(0.2, 0.8, 5)
    at = corners[:, :, None] + t[None, None, :, None] * along[:, :, None]  # (N, 4, 5, 2)
    reach = 0.9 * length.mean(axis=1).reshape(-1) / cells  # most of one cell each way
    steps = np.linspace(-1.0, 1.0, 17)
    offsets = steps[None, :] * reach[:, None]  # (N, 17)
    points = at[:, :, :, None] + offsets[:, None, None, :, None] * normal[:, :, None, None]
    profile = _sample(gray, points)  # (N, 4, 5, 17)
    dark = profile[..., :3].mean(axis=-1)
    light = profile[..., -3:].mean(axis=-1)
    spacing = (2.0 * reach / 16)[:, None, None]
    slope = np.diff(profile, axis=-1).max(axis=-1) / spacing
    width = (light - dark) / np.maximum(slope, 1e-9)
    width = np.where(light - dark > 1.0, width, np.inf)  # no step at all: as blurred as it gets
    return np.asarray(np.median(width.reshape(len(corners), -1), axis=1))


def _ring_uv(cells: int) -> np.ndarray:
    """Sample points over the inner half of every border cell of a marker (cell units)."""
    steps = 0.25 + np.arange(4) / 6.0
    su, sv = np.meshgrid(steps, steps, indexing="ij")
    out = []
    for cu in range(cells):
        for cv in range(cells):
            if cu in (0, cells - 1) or cv in (0, cells - 1):
                out.append(np.column_stack([(cu + su).ravel(), (cv + sv).ravel()]))
    return np.concatenate(out)


def _near_uv(cells: int) -> np.ndarray:
    """Sample points beside a marker's card: from a quarter cell past the card's edge (one
    cell past the black square) out to one marker side past the square (cell units)."""
    grid = np.linspace(-cells, 2 * cells, 37)
    u, v = np.meshgrid(grid, grid, indexing="ij")
    uv = np.column_stack([u.ravel(), v.ravel()])
    card = 1.25
    outside = (np.abs(uv - cells / 2) > cells / 2 + card).any(axis=1)
    return np.asarray(uv[outside])


def glare_shares(gray: np.ndarray, corners_px: np.ndarray, cells: int) -> tuple[np.ndarray, ...]:
    """Each marker's share of saturated samples on its black border and beside its card."""
    corners = np.asarray(corners_px, dtype=float).reshape(-1, 4, 2)
    if not len(corners):
        return np.zeros(0), np.zeros(0)
    ring = _sample(gray, _unit_to_pixels(corners, cells, _ring_uv(cells)))
    near = _sample(gray, _unit_to_pixels(corners, cells, _near_uv(cells)))
    return (ring >= SATURATED).mean(axis=1), (near >= SATURATED).mean(axis=1)


def glare_patches(
    gray: np.ndarray, corners_px: np.ndarray, cells: int
) -> list[tuple[float, float, float]]:
    """Saturated patches clear of every marker's card, as (x, y, area) in pixels, largest
    first; only those of :data:`MIN_GLARE_AREA_PX` and more."""
    mask = (gray >= SATURATED).astype(np.uint8)
    corners = np.asarray(corners_px, dtype=float).reshape(-1, 4, 2)
    if len(corners):
        g = 1.5  # the card and half a cell more round it
        square = np.array([[-g, -g], [cells + g, -g], [cells + g, cells + g], [-g, cells + g]])
        cards = _unit_to_pixels(corners, cells, square)
        cv2.fillPoly(mask, [np.round(c).astype(np.int32) for c in cards], 0)
    opened = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    n, _, stats, centroids = cv2.connectedComponentsWithStats(opened, connectivity=8)
    out = [
        (float(centroids[k][0]), float(centroids[k][1]), float(stats[k, cv2.CC_STAT_AREA]))
        for k in range(1, n)
        if stats[k, cv2.CC_STAT_AREA] >= MIN_GLARE_AREA_PX
    ]
    return sorted(out, key=lambda p: -p[2])


def reliable_side_px(edge_px: float) -> float:
    """The side a marker needs, in pixels, to be found reliably in a picture whose marker
    edges are ``edge_px`` wide: 18 px in focus, in proportion to the edge width when the
    picture is blurred (edges over ``MAX_EDGE_WIDTH_PX``)."""
    if not math.isfinite(edge_px) or edge_px <= MAX_EDGE_WIDTH_PX:
        return RELIABLE_SIDE_PX
    return RELIABLE_SIDE_PX * edge_px / SHARP_EDGE_PX


def _missed_words(side_px: float) -> str:
    """What the measurement says of markers this size, in words."""
    whole = int(side_px)
    if whole < min(MISSED_BY_SIDE_PX):
        return f"markers under {min(MISSED_BY_SIDE_PX)} px were missed in 99% of test frames"
    share = MISSED_BY_SIDE_PX.get(whole, 0.0)
    return (
        f"markers of {whole}-{whole + 1} px were missed in {share:.0%} of test frames, "
        f"none of {RELIABLE_SIDE_PX:.0f} px and more"
    )


# -- one picture -----------------------------------------------------------------------------


@dataclass
class Look:
    """What one picture shows: every marker's side in pixels and where it lies on the table,
    its glare, the picture's sharpness, saturated patches, and the table pose (or why
    there is none)."""

    side_px: dict[int, float]
    at_in: dict[int, tuple[float, float]]
    ring_glare: dict[int, float]
    near_glare: dict[int, float]
    edge_px: float
    patches: list[tuple[float, float, float]]
    pose: TablePose | None
    pose_error: str = ""
    #: Where the other anchors' pose puts each anchor it left out (table inches).
    left_out_at: dict[int, tuple[float, float]] = field(default_factory=dict)
    #: Each saturated patch's centre on the table, when there is a pose.
    patches_in: list[tuple[float, float] | None] = field(default_factory=list)


def look(
    image: np.ndarray,
    table: TableSpec,
    camera: CameraModel | None,
    heights_in: dict[int, float],
) -> Look:
    """Measure one picture (BGR or grey)."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    seen = sight(gray, table, camera)
    found, pose, error = seen.detections, seen.pose, seen.why
    cells = detector(table.table.dictionary).dictionary.markerSize + 2
    ids = found.ids.tolist()
    widths = edge_widths_px(gray, found.corners_px, cells)
    ring, near = glare_shares(gray, found.corners_px, cells)
    patches = glare_patches(gray, found.corners_px, cells)
    sides = found.side_px
    if pose is not None and pose.healthy:
        # the detector finds each corner about 0.8 px inside the printed square (a side
        # about 1.1 px short); the sizes measured for detection rates are the true ones
        bias = pose.corner_bias_px if pose.height_corrected else 0.0
        sides = sides - math.sqrt(2.0) * bias
    at: dict[int, tuple[float, float]] = {}
    left_out_at: dict[int, tuple[float, float]] = {}
    patches_in: list[tuple[float, float] | None] = [None] * len(patches)
    if pose is not None:
        centres = diagonal_centres(found.corners_px)
        z = np.array([heights_in.get(i, 0.0) for i in ids])
        if len(ids):
            on_table = pose.pixels_to_table(centres, z if pose.height_corrected else 0.0)
            at = {i: (float(p[0]), float(p[1])) for i, p in zip(ids, on_table, strict=True)}
        left_out_at = {i: at[i] for i, _ in pose.left_out if i in at}
        if patches:
            spots = pose.pixels_to_table(np.array([p[:2] for p in patches]))
            patches_in = [(float(p[0]), float(p[1])) for p in spots]
    finite = widths[np.isfinite(widths)]
    return Look(
        side_px={i: float(s) for i, s in zip(ids, sides, strict=True)},
        at_in=at,
        ring_glare={i: float(r) for i, r in zip(ids, ring, strict=True)},
        near_glare={i: float(r) for i, r in zip(ids, near, strict=True)},
        edge_px=float(np.median(finite)) if len(finite) else math.nan,
        patches=patches,
        pose=pose,
        pose_error=error,
        left_out_at=left_out_at,
        patches_in=patches_in,
    )


# -- the verdict over a few pictures ---------------------------------------------------------


@dataclass(frozen=True)
class Report:
    """What was found over ``frames`` pictures, and what was seen."""

    findings: list[Finding]
    frames: int
    anchors: tuple[int, int]  # seen, in table.toml
    models: tuple[int, int]
    terrain: tuple[int, int]
    #: The sound pose's health (median over the frames): how far the farthest anchor's
    #: centre is from table.toml (inches), and its reprojection error (pixels, inches).
    pose_in: float | None
    reprojection_px: float | None = None
    reprojection_in: float | None = None

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "frames": self.frames,
            "findings": [f.to_dict() for f in self.findings],
            "seen": {
                "anchors": list(self.anchors),
                "models": list(self.models),
                "terrain": list(self.terrain),
            },
            "pose_in": _rounded(self.pose_in),
            "reprojection_px": _rounded(self.reprojection_px),
            "reprojection_in": _rounded(self.reprojection_in),
        }

    def seen_words(self) -> str:
        parts = [_count(self.anchors[0], "anchor", "anchors")]
        if self.models[1]:
            parts.append(_count(self.models[0], "model", "models"))
        if self.terrain[1]:
            parts.append(_count(self.terrain[0], "terrain piece", "terrain pieces"))
        pose = ", no sound pose"
        if self.pose_in is not None:
            pose = f", pose {self.pose_in:.2f} in"
            if self.reprojection_px is not None and self.reprojection_in is not None:
                pose += (
                    f" (reprojection {self.reprojection_px:.2f} px, {self.reprojection_in:.3f} in)"
                )
        return ", ".join(parts) + " seen" + pose

    def to_text(self) -> str:
        frames = "" if self.frames == 1 else f" (over {self.frames} frames)"
        if self.ok:
            return f"all well: {self.seen_words()}{frames}"
        lines = [f.line() for f in self.findings]
        problems = _count(len(self.findings), "problem", "problems")
        lines.append(f"{problems}: {self.seen_words()}{frames}")
        return "\n".join(lines)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _where(at: tuple[float, float] | None) -> str:
    return "" if at is None else f" at ({at[0]:.1f}, {at[1]:.1f}) in"


class _Verdict:
    """The findings over a few looks at the same table."""

    def __init__(
        self,
        looks: Sequence[Look],
        table: TableSpec,
        roster: Sequence[RosterModel],
        terrain: Sequence[TerrainPiece],
    ) -> None:
        self.looks = looks
        self.n = len(looks)
        self.table = table
        self.roster = roster
        self.terrain = terrain
        self.findings: list[Finding] = []
        self.seen = {i: sum(i in lk.side_px for lk in looks) for lk in looks for i in lk.side_px}
        edges = [lk.edge_px for lk in looks if math.isfinite(lk.edge_px)]
        self.edge_px = float(np.median(edges)) if edges else math.nan
        self.posed = [lk for lk in looks if lk.pose is not None]
        self.names = {a.id: f"anchor {a.id}" for a in table.anchors}
        self.names |= {m.marker: m.id for m in roster} | {t.marker: t.id for t in terrain}
        self.sizes = {a.id: a.size_mm for a in table.anchors}
        self.sizes |= {m.marker: m.marker_size_mm for m in roster}
        self.sizes |= {t.marker: t.marker_size_mm for t in terrain}

    def add(self, kind: str, subject: str, message: str, advice: str) -> None:
        assert kind in KINDS
        self.findings.append(Finding(kind, subject, message, advice))

    def median(self, values: list[float]) -> float:
        return float(np.median(values)) if values else math.nan

    def at(self, marker: int) -> tuple[float, float] | None:
        spots = [lk.at_in[marker] for lk in self.looks if marker in lk.at_in]
        if not spots:
            return None
        xy = np.median(np.asarray(spots), axis=0)
        return float(xy[0]), float(xy[1])

    def seen_in(self, marker: int) -> str:
        return f"seen in only {self.seen.get(marker, 0)} of {self.n} frames"

    def report(self) -> Report:
        self.blur()
        self.pose()
        self.anchors()
        self.glare()
        self.small()
        self.unseen()
        self.unknown()
        healthy = [lk.pose for lk in self.posed if lk.pose is not None and lk.pose.healthy]
        pose_in = reprojection_px = reprojection_in = None
        if healthy:
            pose_in = self.median([p.anchor_error_in for p in healthy])
            reprojection_px = self.median([p.reprojection_px for p in healthy])
            reprojection_in = self.median([p.reprojection_in for p in healthy])
        anchors = [a.id for a in self.table.anchors]
        return Report(
            self.findings,
            self.n,
            (sum(i in self.seen for i in anchors), len(anchors)),
            (sum(m.marker in self.seen for m in self.roster), len(self.roster)),
            (sum(t.marker in self.seen for t in self.terrain), len(self.terrain)),
            pose_in,
            reprojection_px,
            reprojection_in,
        )

    def anchors(self) -> None:
        for a in self.table.anchors:
            if a.id not in self.seen:
                self.add(
                    "anchor_missing",
                    f"anchor {a.id}",
                    f"anchor {a.id} is in table.toml (at ({a.x_in:g}, {a.y_in:g}) in) but not seen",
                    "check that it is on the table, uncovered, lit and in the camera's view, "
                    f"and that the marker there is id {a.id} of {self.table.table.dictionary}",
                )
        half = max(len(self.posed) / 2, 0.5)
        turns: dict[int, list[int]] = {}
        offs: dict[int, list[float]] = {}
        for lk in self.posed:
            assert lk.pose is not None
            for i, t in lk.pose.turned:
                turns.setdefault(i, []).append(t)
            for i, off in lk.pose.left_out:
                offs.setdefault(i, []).append(off)
        spec = {a.id: a for a in self.table.anchors}
        for i, ts in sorted(turns.items()):
            if len(ts) < half:
                continue
            t = max(set(ts), key=ts.count)
            heading = (spec[i].heading + t) % 360
            words = {90: "90 deg counterclockwise", 180: "180 deg", 270: "90 deg clockwise"}[t]
            self.add(
                "anchor_turned",
                f"anchor {i}",
                f"anchor {i} is turned {words} from table.toml's heading {spec[i].heading:g}",
                f"write heading = {heading:g} for anchor {i} in table.toml (or turn the print "
                f"back to heading {spec[i].heading:g})",
            )
        for i, off_in in sorted(offs.items()):
            if len(off_in) < half:
                continue
            spots = [lk.left_out_at[i] for lk in self.posed if i in lk.left_out_at]
            there = np.median(np.asarray(spots), axis=0) if spots else None
            others = (
                f"; the other anchors put its centre at ({there[0]:.2f}, {there[1]:.2f}) in"
                if there is not None
                else ""
            )
            self.add(
                "anchor_off",
                f"anchor {i}",
                f"anchor {i} is {self.median(off_in):.2f} in from where table.toml puts it "
                f"({spec[i].x_in:g}, {spec[i].y_in:g}), so it was left out of the pose{others}",
                f"measure its centre again and correct x_in, y_in of anchor {i} in "
                "table.toml (or put it back where table.toml says)",
            )

    def pose(self) -> None:
        failing = [lk for lk in self.looks if lk.pose is None or not lk.pose.healthy]
        if len(failing) * 2 <= self.n:
            return
        first = failing[0]
        if first.pose is None:
            self.add(
                "pose",
                "table pose",
                f"no table pose: {first.pose_error}",
                "make the anchors visible (four or more, near the table's corners), or fix "
                "their ids in table.toml",
            )
            return
        pose = first.pose
        self.add(
            "pose",
            "table pose",
            f"the table pose is not trusted (reprojection {pose.reprojection_px:.2f} px, "
            f"{pose.reprojection_in:.3f} in; anchors within {pose.anchor_error_in:.2f} in of "
            f"table.toml): {pose.problem}",
            "measure the anchors' centres again and correct x_in, y_in and size_mm in "
            "table.toml; the referee does not judge moves meanwhile",
        )

    def small(self) -> None:
        need = reliable_side_px(self.edge_px)
        blurred = math.isfinite(self.edge_px) and self.edge_px > MAX_EDGE_WIDTH_PX
        for marker, name in self.names.items():
            sides = [lk.side_px[marker] for lk in self.looks if marker in lk.side_px]
            if not sides:
                continue
            side = self.median(sides)
            if side >= need:
                continue
            size = self.sizes[marker]
            print_mm = math.ceil(size * need / side)
            whose = f"{name}'s marker" if not name.startswith("anchor") else name
            why = (
                f"at this picture's sharpness (marker edges {self.edge_px:.1f} px wide) markers "
                f"need {need:.0f} px"
                if blurred
                else _missed_words(side)
            )
            self.add(
                "marker_small",
                name,
                f"{whose} is {side:.1f} px across where it stands{_where(self.at(marker))}; {why}",
                (
                    "focus the lens first (the picture is blurred); if it stays so, "
                    if blurred
                    else ""
                )
                + f"print it at least {print_mm} mm (it is {size:g} mm), or bring the camera "
                "closer or to a higher resolution",
            )

    def unseen(self) -> None:
        groups: list[tuple[str, str, Sequence[RosterModel] | Sequence[TerrainPiece]]] = [
            ("model_unseen", "roster.toml", self.roster),
            ("terrain_unseen", "terrain.toml", self.terrain),
        ]
        for kind, file, entries in groups:
            for entry in entries:
                count = self.seen.get(entry.marker, 0)
                if count == self.n:
                    continue
                if count == 0:
                    self.add(
                        kind,
                        entry.id,
                        f"{entry.id} (marker {entry.marker}) is in {file} but not seen",
                        "check that it is on the table with its marker uncovered, lit and "
                        f"facing the camera, and that its marker is id {entry.marker}",
                    )
                else:
                    self.add(
                        kind,
                        entry.id,
                        f"{entry.id} (marker {entry.marker}) is {self.seen_in(entry.marker)}"
                        f"{_where(self.at(entry.marker))}",
                        "a marker missed now and then is too small, blurred or in glare "
                        "there: print it bigger, focus, or move the light",
                    )

    def unknown(self) -> None:
        for marker, count in sorted(self.seen.items()):
            if marker in self.names or count * 2 < self.n:
                continue
            self.add(
                "marker_unknown",
                f"marker {marker}",
                f"marker {marker} is seen{_where(self.at(marker))} but is in no file",
                "add it to roster.toml or terrain.toml (or to table.toml as an anchor), or "
                "take it off the table",
            )

    def glare(self) -> None:
        for marker in sorted(self.seen):
            name = self.names.get(marker, f"marker {marker}")
            ring = self.median(
                [lk.ring_glare[m] for lk in self.looks for m in [marker] if m in lk.ring_glare]
            )
            near = self.median(
                [lk.near_glare[m] for lk in self.looks for m in [marker] if m in lk.near_glare]
            )
            where = _where(self.at(marker))
            if ring > MAX_RING_GLARE:
                self.add(
                    "glare",
                    name,
                    f"glare over {name}'s marker{where}: {ring:.0%} of its black border is "
                    f"saturated ({SATURATED}+), which reads as white",
                    "move the light (or the camera) so that it does not reflect off the "
                    "marker, print on matt paper, or shorten the exposure",
                )
            elif near > MAX_NEAR_GLARE:
                self.add(
                    "glare",
                    name,
                    f"glare beside {name}'s marker{where}: {near:.0%} of the table round it "
                    f"is saturated ({SATURATED}+); a marker moved into it cannot be read",
                    "move the light (or the camera) so that it does not reflect off the "
                    "table there, or shorten the exposure",
                )
        counts = [len(lk.patches) for lk in self.looks]
        typical = self.looks[int(np.argsort(counts)[len(counts) // 2])]
        for (x, y, area), spot in zip(typical.patches, typical.patches_in, strict=True):
            where = (
                f"at ({spot[0]:.1f}, {spot[1]:.1f}) in on the table"
                if spot is not None
                else f"at pixel ({x:.0f}, {y:.0f})"
            )
            self.add(
                "glare",
                "picture",
                f"a saturated patch of {area:.0f} px {where}: a marker under it cannot be read",
                "move the light (or the camera) so that it does not reflect off the table "
                "there, or shorten the exposure",
            )

    def blur(self) -> None:
        if not math.isfinite(self.edge_px) or self.edge_px <= MAX_EDGE_WIDTH_PX:
            return
        self.add(
            "blur",
            "picture",
            f"the picture is blurred: marker edges are {self.edge_px:.1f} px wide (in focus: "
            f"about {SHARP_EDGE_PX:.1f} px), so markers need {reliable_side_px(self.edge_px):.0f}"
            f" px across instead of {RELIABLE_SIDE_PX:.0f}",
            "focus the lens on the table (or let autofocus settle, then lock it); if the "
            "camera or table shakes, fix it; in dim light add light for a shorter exposure",
        )


def diagnose(
    pictures: Sequence[np.ndarray],
    table: TableSpec,
    roster: Sequence[RosterModel] = (),
    terrain: Sequence[TerrainPiece] = (),
    camera: CameraModel | None = None,
) -> Report:
    """Look at these pictures of the table (one, or a few frames of a source) and report."""
    if not pictures:
        raise ValueError("no pictures to look at")
    heights = {m.marker: m.marker_height_mm / MM_PER_IN for m in roster}
    heights |= {t.marker: t.marker_height_mm / MM_PER_IN for t in terrain}
    looks = [look(p, table, camera, heights) for p in pictures]
    return _Verdict(looks, table, roster, terrain).report()


# -- what to look at ---------------------------------------------------------------------------


def pictures(spec: str) -> list[np.ndarray]:
    """The pictures to look at: an image file itself; of a camera, stream, video or folder of
    frames, up to :data:`SOURCE_FRAMES` over its first :data:`SOURCE_SECONDS`. A
    :class:`~tablesight.vision.sources.SourceError` says why there are none."""
    from tablesight.vision.sources import IMAGE_SUFFIXES, LiveSource, SourceError, open_source

    path = Path(spec)
    if path.suffix.lower() in IMAGE_SUFFIXES and path.is_file():
        image = cv2.imread(spec)
        if image is None:
            raise SourceError(f"{spec}: not an image OpenCV can read")
        return [image]
    source = open_source(spec)
    out: list[np.ndarray] = []
    try:
        if isinstance(source, LiveSource):
            source.wait_opened()
        frames: Iterator = source.frames()  # type: ignore[type-arg]
        started = time.monotonic()
        first = due = 0.0
        for frame in frames:
            if out and frame.t - first >= SOURCE_SECONDS:
                break
            if not out:
                first = due = frame.t
            if frame.t >= due:
                out.append(frame.image)
                due = frame.t + SOURCE_SECONDS / SOURCE_FRAMES
            if len(out) >= SOURCE_FRAMES:
                break
            if source.live and time.monotonic() - started > 4 * SOURCE_SECONDS + 5:
                break
    finally:
        if isinstance(source, LiveSource):
            source.close()
    if not out:
        raise SourceError(f"{spec}: no frames to look at")
    return out
