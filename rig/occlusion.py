"""Where to put the camera and the markers when miniatures stand on the bases: a study.

A miniature stands over much of its base, and from a camera that looks down at an angle
a 30-60 mm figure hides the markers of the models just behind it (and, facing away, its
own).  This study renders stills of a 44 x 30 in table with four 40 mm anchors at its
corners and 36 models on 25-40 mm round bases, each with a standing figure
(:class:`tablesight.rig.bodies.Figure`, a 20-sided cylinder), most of them in units standing
close as players stand them (bases 0.15-0.9 in apart edge to edge, a unit facing one way
give or take 40 degrees), at seeded random places and headings.  Each frame goes through
the real pipeline (``MarkerDetector``, ``TablePose.solve``, ``locate``) and every model's
base centre is compared with where it was placed.

What varies:

* the camera's height above the table and its tilt from vertical: it is aimed at the
  table's centre from straight above it (tilt 0) or from in front of the near edge, always
  with the table's width across the picture.  The lens is a 70 degree (horizontal) webcam
  lens with the rig's usual barrel distortion; where a 70 degree lens cannot see the whole
  table from there, the narrowest wider lens that can (the ``hfov`` column), as a player
  would have to buy.  Higher cameras see the table smaller: marker pixels are the price.
* the resolution: 1920 x 1080 and 3840 x 2160.
* where the marker sits (``PLACEMENTS``), sized as it would fit there:

  ``rim``   on the base top in front of the figure (the figure glued 12-18 % of the
            base's diameter back from the centre to make room): the biggest marker whose
            card (the black square and its one-cell white border) fits between the
            figure and the base's edge, 4.5-10.5 mm.  The model's heading is random, so
            the rim faces the camera only sometimes; facing away, the model's own figure
            stands between it and the camera.
  ``tab``   a 15 mm marker on a tab glued on the base top and reaching beyond its front
            edge (4 mm up).  Layouts leave room for the tabs in every placement, so all
            three see the same models at the same places.
  ``head``  on the figure's head: a marker whose card is as wide as the figure
            (``marker_height_mm`` = the base top plus the figure's height, the marker
            three quarters of the figure's width, 9.5-18.5 mm).

What is not studied, and why: a marker *under the figure's feet* is covered by the figure
from every camera position (it cannot be seen at all).  A marker *on the figure's back at
mid-height* would stand upright; the pipeline reads markers lying flat (a marker's height
is measured from its size on a horizontal plane and its heading from its top edge), and
the synthetic camera renders flat cards only, so it is neither measurable nor usable here.

Honest simplifications: the lens's intrinsics are known exactly (with a calibrated lens
``bench accuracy`` finds base centres within 0.005 in, median); the head marker's height
is exactly the roster's (one whose height is off by ``dh`` lands ``dh`` times the tangent
of the view angle away: 1 mm at 42 in up and 35 degrees, 0.03 in on average and 0.042 in
at worst, measured with this module); the bases themselves are not
drawn as solids (a 4 mm base cannot hide a marker lying 4 mm up or higher from any camera
above the table); figures are drawn with one sample per pixel (their outlines aliased,
then blurred as the shot says), markers with 2 x 2 samples a pixel (``SUPERSAMPLE``);
every frame has the rig's realistic :class:`Shot` (blur 0.6 px, noise, a lighting
gradient, JPEG 90).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import cv2
import numpy as np
from shapely.geometry import Point, Polygon
from shapely.ops import unary_union

from tablesight.calibration.camera import CameraModel
from tablesight.calibration.roster import RosterModel
from tablesight.calibration.table import MM_PER_IN, Anchor, TableKeys, TableSpec
from tablesight.rig.bodies import Figure, Prism, _card_box, _depth_test, _overlap, draw_solids
from tablesight.rig.synth import (
    PinholeCamera,
    PlacedMarker,
    Shot,
    _draw_patch,
    _draw_table,
    develop,
)
from tablesight.rules.scenario import RoundBase
from tablesight.vision.aruco import MarkerDetections, MarkerDetector
from tablesight.vision.locate import locate
from tablesight.vision.tablepose import PoseError, TablePose

TABLE_IN = (44.0, 30.0)
ANCHOR_MM = 40.0
DICTIONARY = "4x4_50"
#: A lens no wider than this (horizontal field of view, degrees) is used where it sees
#: the whole table; else the narrowest wider one that does.
WEBCAM_HFOV_DEG = 70.0
HEIGHTS_IN = (30.0, 42.0, 54.0, 66.0)
TILTS_DEG = (0.0, 20.0, 35.0, 50.0)
RESOLUTIONS = ((1920, 1080), (3840, 2160))
PLACEMENTS = ("rim", "tab", "head")
#: The error a model may be off by and still count (inches).
GOOD_IN = 0.05
#: Base top above the table (mm): rim and tab markers lie here, figures stand on it.
BASE_TOP_MM = 4.0
TAB_MARKER_MM = 15.0
#: Subsamples per pixel side for the markers (figures: one).
SUPERSAMPLE = 2
#: Base diameter (mm) -> the figure's height range (mm).
FIGURE_HEIGHTS = {
    25.0: (30.0, 42.0),
    28.0: (32.0, 45.0),
    32.0: (35.0, 50.0),
    40.0: (45.0, 60.0),
    50.0: (50.0, 70.0),
}


def _card_mm(marker_mm: float) -> float:
    """The card a marker is printed on: the black square and a one-cell white border (a
    4x4 marker is six cells across)."""
    return marker_mm * 8.0 / 6.0


@dataclass(frozen=True)
class Model:
    """One model as placed: base centre and heading, its base and its figure."""

    marker: int
    x: float
    y: float
    heading: float
    base_mm: float
    figure: Figure
    #: The marker on the figure's head, if not three quarters of this figure's width (a
    #: player prints one size for all models on a base size).
    head_mm: float | None = None

    def solid(self) -> Prism:
        return self.figure.prism(self.x, self.y, self.heading)

    def marker_at(self, placement: str) -> tuple[float, float, float]:
        """(size mm, height mm, forward offset mm) of the marker in ``placement``."""
        if placement == "rim":
            front = self.figure.offset_mm[0] + self.figure.width_mm / 2 + 0.5
            radius = self.base_mm / 2 - 0.5
            # the biggest card c with (front + c)^2 + (c / 2)^2 <= radius^2
            card = (-2 * front + math.sqrt(4 * front**2 - 5 * (front**2 - radius**2))) / 2.5
            size = math.floor(0.75 * card * 2) / 2
            return size, BASE_TOP_MM, front + _card_mm(size) / 2
        if placement == "tab":
            return TAB_MARKER_MM, BASE_TOP_MM, self.base_mm / 2 + 0.5 + _card_mm(TAB_MARKER_MM) / 2
        if placement == "head":
            size = (
                self.head_mm
                if self.head_mm is not None
                else round(0.75 * self.figure.width_mm * 2) / 2
            )
            top = BASE_TOP_MM + self.figure.height_mm
            return size, top, self.figure.offset_mm[0]
        raise ValueError(f"unknown placement {placement!r}; expected one of {PLACEMENTS}")

    def placed(self, placement: str) -> tuple[RosterModel, PlacedMarker]:
        """The roster entry a player would write, and the marker where it truly is."""
        size, height, forward = self.marker_at(placement)
        a = math.radians(self.heading)
        f = forward / MM_PER_IN
        entry = RosterModel(
            id=f"m{self.marker}",
            side="a",
            base=RoundBase(shape="round", diameter_mm=self.base_mm),
            movement=6,
            marker=self.marker,
            marker_size_mm=size,
            marker_height_mm=height,
            marker_offset_mm=(forward, 0.0),
        )
        marker = PlacedMarker(
            self.marker,
            size,
            self.x + f * math.cos(a),
            self.y + f * math.sin(a),
            height / MM_PER_IN,
            self.heading,
            cv2.aruco.DICT_4X4_50,
        )
        return entry, marker

    def footprint(self) -> Polygon:
        """The base and its tab, inches (layouts keep these apart)."""
        r = self.base_mm / 2 / MM_PER_IN
        half = _card_mm(TAB_MARKER_MM) / 2 / MM_PER_IN
        reach = r + 2 * half + 0.5 / MM_PER_IN
        a = math.radians(self.heading)
        c, s = math.cos(a), math.sin(a)
        tab = [(0.0, -half), (reach, -half), (reach, half), (0.0, half)]
        box = Polygon([(self.x + u * c - v * s, self.y + u * s + v * c) for u, v in tab])
        return unary_union([Point(self.x, self.y).buffer(r, 24), box])


def table_spec(table_in: tuple[float, float] = TABLE_IN) -> TableSpec:
    w, d = table_in
    at = [(1.5, 1.5), (w - 1.5, 1.5), (w - 1.5, d - 1.5), (1.5, d - 1.5)]
    anchors = [Anchor(id=i, x_in=x, y_in=y, size_mm=ANCHOR_MM) for i, (x, y) in enumerate(at)]
    return TableSpec(
        table=TableKeys(width_in=w, depth_in=d, dictionary=DICTIONARY), anchors=anchors
    )


def layout(
    seed: int,
    models: int = 36,
    table_in: tuple[float, float] = TABLE_IN,
    bases: Sequence[float] = (25.0, 25.0, 28.0, 32.0, 32.0, 40.0),
    head_mm: float | None = None,
) -> list[Model]:
    """``models`` models (at most 46) in units of one to five: a unit shares a base size
    (drawn from ``bases``) and faces one way give or take 40 degrees, its members 0.15-0.9
    in apart edge to edge; nothing within 3.5 in of an anchor or 2.5 in of the table's
    edge.  ``head_mm``: the marker on every figure's head, if one size for all."""
    if not 0 < models <= 46:
        raise ValueError("1 to 46 models (marker ids 4-49 of 4x4_50)")
    rng = random.Random(seed)
    w, d = table_in
    corners = [(1.5, 1.5), (w - 1.5, 1.5), (w - 1.5, d - 1.5), (1.5, d - 1.5)]
    out: list[Model] = []
    shapes: list[Polygon] = []

    def fits(m: Model) -> bool:
        if not (2.5 <= m.x <= w - 2.5 and 2.5 <= m.y <= d - 2.5):
            return False
        if any(math.dist((m.x, m.y), c) < 3.5 for c in corners):
            return False
        shape = m.footprint()
        return all(shape.distance(other) >= 0.1 for other in shapes)

    while len(out) < models:
        size = min(rng.choice((1, 2, 3, 4, 5, 5)), models - len(out))
        base = rng.choice(bases)
        facing = rng.uniform(0, 360)
        unit: list[Model] = []
        for _ in range(200):
            if len(unit) == size:
                break
            if unit:
                near = rng.choice(unit)
                a = rng.uniform(0, 2 * math.pi)
                gap = base / MM_PER_IN + rng.uniform(0.15, 0.9)
                x, y = near.x + gap * math.cos(a), near.y + gap * math.sin(a)
            else:
                x, y = rng.uniform(2.5, w - 2.5), rng.uniform(2.5, d - 2.5)
            m = Model(
                4 + len(out),
                x,
                y,
                (facing + rng.uniform(-40, 40)) % 360,
                base,
                Figure(
                    height_mm=round(rng.uniform(*FIGURE_HEIGHTS[base]), 1),
                    width_mm=round(base * rng.uniform(0.5, 0.62), 1),
                    offset_mm=(-round(base * rng.uniform(0.12, 0.18), 1), 0.0),
                    base_mm=BASE_TOP_MM,
                ),
                head_mm,
            )
            if fits(m):
                unit.append(m)
                out.append(m)
                shapes.append(m.footprint())
    return out


def camera_for(
    height_in: float,
    tilt_deg: float,
    size: tuple[int, int] = (1920, 1080),
    table_in: tuple[float, float] = TABLE_IN,
) -> PinholeCamera:
    """The camera ``height_in`` above the table, tilted ``tilt_deg`` from vertical toward
    the table's near edge, aimed at its centre: a 70 degree lens, or the narrowest wider
    one that sees all four of the table's corners (1 % of the frame clear)."""
    w, d = table_in
    centre = (w / 2, d / 2, 0.0)
    at = (w / 2, d / 2 - height_in * math.tan(math.radians(tilt_deg)), height_in)
    corners = np.array([[0, 0, 0], [w, 0, 0], [w, d, 0], [0, d, 0]], dtype=float)

    def sees(hfov: float) -> PinholeCamera | None:
        cam = PinholeCamera.looking_at(at, centre, size[0], size[1], hfov_deg=hfov)
        px = cam.project(corners)
        mx, my = 0.01 * size[0], 0.01 * size[1]
        inside = (px[:, 0] >= mx) & (px[:, 0] <= size[0] - mx)
        inside &= (px[:, 1] >= my) & (px[:, 1] <= size[1] - my)
        return cam if bool(inside.all()) else None

    camera = sees(WEBCAM_HFOV_DEG)
    if camera is not None:
        return camera
    lo, hi = WEBCAM_HFOV_DEG, 150.0
    for _ in range(30):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if sees(mid) is not None else (mid, hi)
    found = sees(hi)
    if found is None:
        raise ValueError(f"no lens sees the table from {height_in} in at {tilt_deg} deg")
    return found


def hfov_deg(camera: PinholeCamera) -> float:
    return math.degrees(2 * math.atan(camera.width_px / 2 / camera.fx))


@dataclass
class Cell:
    """One row of the study: a camera, a resolution and a placement, over its frames."""

    height_in: float
    tilt_deg: float
    width_px: int
    height_px: int
    hfov_deg: float
    placement: str
    models: int = 0
    errors_in: list[float] = field(default_factory=list)
    sides_px: list[float] = field(default_factory=list)
    #: Per model: does its front face the camera (its heading within 90 degrees of the
    #: direction to the camera, seen from above), and was it located.
    facing: list[tuple[bool, bool]] = field(default_factory=list)

    def merge(self, other: Cell) -> None:
        self.models += other.models
        self.errors_in += other.errors_in
        self.sides_px += other.sides_px
        self.facing += other.facing

    def located_facing(self, toward: bool) -> float:
        """The share located of the models whose front faces toward (or away from) the
        camera."""
        found = [f for t, f in self.facing if t == toward]
        return sum(found) / max(len(found), 1)

    @property
    def located(self) -> int:
        return len(self.errors_in)

    @property
    def detection(self) -> float:
        return self.located / max(self.models, 1)

    @property
    def within(self) -> float:
        """Models located within ``GOOD_IN``, as a share of all models on the table."""
        return sum(e <= GOOD_IN for e in self.errors_in) / max(self.models, 1)

    @property
    def median_in(self) -> float:
        return float(np.median(self.errors_in)) if self.errors_in else math.nan

    @property
    def p95_in(self) -> float:
        return float(np.percentile(self.errors_in, 95)) if self.errors_in else math.nan

    def row(self) -> str:
        return (
            f"| {self.height_in:.0f} | {self.tilt_deg:.0f} | {self.height_px}p | "
            f"{self.hfov_deg:.0f} | {self.placement} | {np.median(self.sides_px):.0f} | "
            f"{100 * self.detection:.1f} | {self.median_in:.3f} | {self.p95_in:.3f} | "
            f"{100 * self.within:.1f} |"
        )


HEADER = (
    "| height (in) | tilt (deg) | camera | hfov (deg) | marker | side (px) | located % "
    "| median (in) | p95 (in) | within 0.05 in % |\n|---|---|---|---|---|---|---|---|---|---|"
)


def _photograph(
    camera: PinholeCamera,
    solids: Sequence[Prism],
    sets: dict[str, list[PlacedMarker]],
    shot: Shot,
    texture_seed: int,
    table_in: tuple[float, float] = TABLE_IN,
) -> dict[str, np.ndarray]:
    """:func:`tablesight.rig.bodies.render_scene` of one table with each marker set in turn:
    the table and the figures are drawn once (figures with one sample a pixel), then each
    set's markers over a copy, depth tested against the figures, and the copy developed."""
    ground = _draw_table(camera, table_in, texture_seed)
    _, seen = draw_solids(ground, camera, solids, 1)
    ss = max(1, shot.supersample)
    out = {}
    for name, markers in sets.items():
        img = ground.copy()
        for patch in sorted((m._patch() for m in markers), key=lambda p: p.centre[2]):
            near = seen and _card_box(camera, patch)
            hiding = [p for p, b in seen if near and _overlap(near, b)]
            _draw_patch(img, camera, patch, ss, _depth_test(hiding, camera) if hiding else None)
        out[name] = develop(img, shot)
    return out


def measure_camera(
    height_in: float,
    tilt_deg: float,
    size: tuple[int, int],
    seeds: Sequence[int],
    placements: Sequence[str] = PLACEMENTS,
    models: int = 36,
    figures: bool = True,
) -> list[Cell]:
    """Every placement's figures from one camera, over the layouts of ``seeds`` (with
    ``figures`` False: the same markers with no figures standing, for comparison)."""
    camera = camera_for(height_in, tilt_deg, size)
    cells = [Cell(height_in, tilt_deg, size[0], size[1], hfov_deg(camera), p) for p in placements]
    layouts = [(seed, layout(seed, models)) for seed in seeds]
    _measure(camera, TABLE_IN, layouts, cells, figures)
    return cells


def _measure(
    camera: PinholeCamera,
    table_in: tuple[float, float],
    layouts: Sequence[tuple[int, list[Model]]],
    cells: Sequence[Cell],
    figures: bool = True,
) -> None:
    """Photograph each ``(seed, models)`` layout on a ``table_in`` table through
    ``camera``, once for each cell's placement, and add to each cell what the pipeline
    located, against where each model was placed."""
    cv2.setNumThreads(1)
    intrinsics = CameraModel(camera.size, camera.camera_matrix, camera.dist_coeffs)
    table = table_spec(table_in)
    anchors = [
        PlacedMarker(a.id, a.size_mm, a.x_in, a.y_in, 0.0, a.heading, cv2.aruco.DICT_4X4_50)
        for a in table.anchors
    ]
    detector = MarkerDetector(DICTIONARY, camera.size)
    placements = [c.placement for c in cells]
    for seed, placed in layouts:
        truth = {p: [m.placed(p) for m in placed] for p in placements}
        sets = {p: anchors + [marker for _, marker in truth[p]] for p in placements}
        shot = Shot(seed=seed, supersample=SUPERSAMPLE)
        solids = [m.solid() for m in placed] if figures else []
        images = _photograph(camera, solids, sets, shot, seed, table_in)
        eye = camera.position_in
        toward = [
            (eye[0] - m.x) * math.cos(math.radians(m.heading))
            + (eye[1] - m.y) * math.sin(math.radians(m.heading))
            > 0
            for m in placed
        ]
        for cell in cells:
            p = cell.placement
            cell.models += len(placed)
            for _, marker in truth[p]:
                px = camera.project(marker.corners_in())
                cell.sides_px.append(
                    float(np.linalg.norm(px - np.roll(px, 1, axis=0), axis=1).mean())
                )
            where = _located(detector.detect(images[p]), table, intrinsics, truth[p])
            for m, (entry, _), front in zip(placed, truth[p], toward, strict=True):
                got = where.get(entry.id)
                cell.facing.append((front, got is not None))
                if got is not None:
                    cell.errors_in.append(math.dist(got, (m.x, m.y)))


def _located(
    found: MarkerDetections,
    table: TableSpec,
    intrinsics: CameraModel,
    truth: Sequence[tuple[RosterModel, PlacedMarker]],
) -> dict[str, tuple[float, float]]:
    """Where the pipeline puts each model it locates; none when the table pose is not
    found or not trusted (the referee would not judge that frame)."""
    try:
        pose = TablePose.solve(found, table, intrinsics)
    except PoseError:
        return {}
    if not pose.healthy:
        return {}
    result = locate(found, table, pose, [entry for entry, _ in truth])
    return {m.id: m.pose.xy for m in result.models}


def _job(args: tuple) -> list[Cell]:
    return measure_camera(*args)


def study(
    heights: Sequence[float] = HEIGHTS_IN,
    tilts: Sequence[float] = TILTS_DEG,
    resolutions: Sequence[tuple[int, int]] = RESOLUTIONS,
    placements: Sequence[str] = PLACEMENTS,
    frames: int = 2,
    models: int = 36,
    workers: int = 2,
) -> list[Cell]:
    """The whole grid: every camera height x tilt x resolution, each over the same
    ``frames`` layouts, in ``workers`` processes; rows in the grid's order."""
    jobs = [
        (h, t, size, tuple(range(frames)), tuple(placements), models)
        for size in resolutions
        for h in heights
        for t in tilts
    ]
    if workers <= 1:
        results = [_job(j) for j in jobs]
    else:
        with ProcessPoolExecutor(workers) as pool:
            results = list(pool.map(_job, jobs))
    return [cell for cells in results for cell in cells]


#: The recommended set-up's corner the study confirms on more layouts: the highest and
#: most tilted camera of the recommendation, 4K, markers on the figures' heads.
CONFIRM = (42.0, 35.0, (3840, 2160), "head")


def confirm(
    height_in: float = CONFIRM[0],
    tilt_deg: float = CONFIRM[1],
    size: tuple[int, int] = CONFIRM[2],
    placement: str = CONFIRM[3],
    frames: int = 8,
    workers: int = 2,
) -> Cell:
    """One cell over ``frames`` layouts the grid did not use (seeds 100 on), split between
    ``workers`` processes."""
    seeds = list(range(100, 100 + frames))
    jobs = [
        (height_in, tilt_deg, size, tuple(seeds[k::workers]), (placement,), 36)
        for k in range(max(workers, 1))
        if seeds[k::workers]
    ]
    if workers <= 1:
        parts = [_job(j) for j in jobs]
    else:
        with ProcessPoolExecutor(workers) as pool:
            parts = list(pool.map(_job, jobs))
    cell = parts[0][0]
    for more in parts[1:]:
        cell.merge(more[0])
    return cell


def report(cells: Sequence[Cell]) -> str:
    """The study as a Markdown table."""
    return "\n".join([HEADER, *(c.row() for c in cells)])


#: Round bases (mm) of the lead table, with their figures standing.
FIGURE_BASES = (25.0, 28.0, 32.0, 40.0, 50.0)


def head_marker_mm(base_mm: float) -> float:
    """The marker (to 0.5 mm) on a card on the figure's head that fits every figure the
    base carries: three quarters of the narrowest figure, half the base wide (25 mm: 9 mm,
    32 mm: 12 mm, 40 mm: 15 mm)."""
    return math.floor(0.75 * 0.5 * base_mm * 2) / 2


def overhead_camera(table_in: tuple[float, float], size: tuple[int, int]) -> PinholeCamera:
    """The recommended camera: straight above the table's centre with a 70 degree lens, as
    low as it sees the whole table with 1 in to spare (straight down, any lens that just
    sees the table gives its markers the same pixels)."""
    w, d = table_in
    edge = np.array([[-1.0, -1.0, 0], [w + 1, -1.0, 0], [w + 1, d + 1, 0], [-1.0, d + 1, 0]])

    def at(z: float) -> PinholeCamera:
        return PinholeCamera.looking_at((w / 2, d / 2, z), (w / 2, d / 2, 0.0), *size)

    def sees(z: float) -> bool:
        px = at(z).project(edge)
        return bool(((px >= 0) & (px <= np.array(size) - 1)).all())

    lo, hi = 1.0, 200.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if sees(mid) else (mid, hi)
    return at(hi)


def _figure_job(args: tuple) -> Cell:
    table_in, base_mm, size, seeds, models = args
    camera = overhead_camera(table_in, size)
    head = head_marker_mm(base_mm)
    cell = Cell(camera.position_in[2], 0.0, size[0], size[1], hfov_deg(camera), "head")
    layouts = [(s, layout(s, models, table_in, (base_mm,), head)) for s in seeds]
    _measure(camera, table_in, layouts, [cell])
    return cell


def figure_table(layouts: int = 4, models: int = 36, workers: int = 2) -> str:
    """The README's lead table: for each base, the marker on its figure's head and, for
    each table, the camera that locates every model within ``GOOD_IN`` with the figures
    standing: 1080p where a 1080p camera does, else 4K where a 4K one does, else
    "neither"; the smallest marker side in pixels in brackets.  Each cell: ``layouts``
    layouts of ``models`` models all on that base, in units as players stand them,
    photographed by :func:`overhead_camera` with a webcam's blur, noise and JPEG.
    Markdown."""
    from tablesight.rig.accuracy import TABLES_IN

    sizes = {"1080p": (1920, 1080), "4K": (3840, 2160)}
    seeds = tuple(range(200, 200 + layouts))
    cells: dict[tuple[tuple[float, float], float, str], Cell] = {}
    for name, size in sizes.items():
        todo = [
            (t, b)
            for t in TABLES_IN
            for b in FIGURE_BASES
            if not _every_one(cells.get((t, b, "1080p")))
        ]
        jobs = [(t, b, size, seeds, models) for t, b in todo]
        with ProcessPoolExecutor(workers) as pool:
            for (t, b), cell in zip(todo, pool.map(_figure_job, jobs), strict=True):
                cells[t, b, name] = cell
    head = " | ".join(f"{w:g} x {d:g} in" for w, d in TABLES_IN)
    rows = [f"| base | marker on the head | {head} |", "|---|---|" + "---|" * len(TABLES_IN)]
    for b in FIGURE_BASES:
        row = []
        for t in TABLES_IN:
            fit = next(
                (
                    f"{n} ({min(c.sides_px):.0f} px)"
                    for n in sizes
                    if (c := cells.get((t, b, n))) is not None and _every_one(c)
                ),
                "neither",
            )
            row.append(fit)
        rows.append(f"| {b:g} mm | {head_marker_mm(b):g} mm | " + " | ".join(row) + " |")
    return "\n".join(rows)


def _every_one(cell: Cell | None) -> bool:
    """Every model of the cell located within ``GOOD_IN``."""
    return cell is not None and cell.models > 0 and cell.within == 1.0
