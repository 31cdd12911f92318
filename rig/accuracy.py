"""How accurately the camera side finds models: rendered tables against ground truth.

A 44 x 30 in table is photographed at 1920 x 1080 by the project's synthetic camera
(``tablesight.rig.synth``: a pinhole with lens distortion, blur, noise, a lighting gradient and
JPEG) from above and in front of its near edge. The camera is first calibrated from
rendered ChArUco views, as a user would; then each frame goes through the real
pipeline (detect, solve the table pose from the four corner anchors, map every marker
at its height, subtract its offset) and every model's base centre is compared with
where it was placed.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

import cv2
import numpy as np

from tablesight.calibration.camera import BoardSpec, CameraModel, calibrate
from tablesight.calibration.roster import RosterModel
from tablesight.calibration.table import MM_PER_IN, Anchor, TableKeys, TableSpec
from tablesight.rig.charuco import random_charuco_views
from tablesight.rig.synth import PinholeCamera, PlacedMarker, Shot, render_table
from tablesight.rules.geometry import Base
from tablesight.rules.scenario import RoundBase
from tablesight.vision.aruco import MarkerDetector
from tablesight.vision.locate import locate
from tablesight.vision.tablepose import TablePose

TABLE_IN = (44.0, 30.0)
#: The camera: 14 in in front of the near edge, 30 in up, aimed at the table's middle.
CAMERA_AT = (22.0, -14.0, 30.0)
AIMED_AT = (22.0, 14.0, 0.0)
BOARD = BoardSpec(squares_x=7, squares_y=5, square_mm=30, marker_mm=22, dictionary="6x6_250")
ANCHOR_MM = 40.0


def scene_camera(width_px: int = 1920, height_px: int = 1080) -> PinholeCamera:
    return PinholeCamera.looking_at(CAMERA_AT, AIMED_AT, width_px, height_px, hfov_deg=70.0)


def calibrated(camera: PinholeCamera, views: int = 14, seed: int = 1) -> tuple[CameraModel, float]:
    """The camera as a user would know it: calibrated from rendered board views taken by
    this very camera (its lens), from the varied viewpoints of ``random_charuco_views``."""
    board = BOARD.board()
    views_shot = random_charuco_views(
        board, views, camera.width_px, camera.height_px, seed, lens=camera
    )
    shots = ((f"view{i}", img) for i, (img, _) in enumerate(views_shot))
    result = calibrate(shots, BOARD)
    return result.camera, float(result.camera.rms_px or 0.0)


def table_spec() -> TableSpec:
    w, d = TABLE_IN
    at = [(1.5, 1.5), (w - 1.5, 1.5), (w - 1.5, d - 1.5), (1.5, d - 1.5)]
    anchors = [Anchor(id=i, x_in=x, y_in=y, size_mm=ANCHOR_MM) for i, (x, y) in enumerate(at)]
    return TableSpec(table=TableKeys(width_in=w, depth_in=d, dictionary="4x4_250"), anchors=anchors)


@dataclass(frozen=True)
class Truth:
    """Where a model was placed: its base centre and heading, and its marker."""

    entry: RosterModel
    x: float
    y: float
    heading: float
    marker: PlacedMarker


def random_models(n: int, rng: random.Random, first_id: int = 4) -> list[Truth]:
    """``n`` models at random on the table: marker 15-25 mm, on the base top (4 mm) or on a
    flying stand (1 in), centred or off-centre by up to 8 mm, any heading."""
    out: list[Truth] = []
    spots: list[tuple[float, float]] = []
    while len(out) < n:
        x, y = rng.uniform(4, TABLE_IN[0] - 4), rng.uniform(4, TABLE_IN[1] - 4)
        if any(math.dist((x, y), s) < 2.2 for s in spots):
            continue
        spots.append((x, y))
        i = len(out)
        entry, placed = marked_model(
            first_id + i, x, y, (15.0, 20.0, 25.0)[i % 3], i, rng, "a", cv2.aruco.DICT_4X4_250
        )
        out.append(Truth(entry, x, y, placed.heading_deg, placed))
    return out


def marked_model(
    marker: int,
    x: float,
    y: float,
    size_mm: float,
    i: int,
    rng: random.Random,
    side: str,
    dictionary: int,
    base_mm: float = 32.0,
) -> tuple[RosterModel, PlacedMarker]:
    """A model on a ``base_mm`` round base whose centre is at ``(x, y)``, and its marker as
    placed: every fourth (by ``i``) on a 1 in flying stand, else on the base top (4 mm);
    every other off-centre by up to 8 mm; any heading."""
    height = 25.4 if i % 4 == 3 else 4.0
    offset = (rng.uniform(-8, 8), rng.uniform(-8, 8)) if i % 2 else (0.0, 0.0)
    heading = rng.uniform(0, 360)
    a = math.radians(heading)
    fx, fy = (v / MM_PER_IN for v in offset)
    mx = x + fx * math.cos(a) - fy * math.sin(a)
    my = y + fx * math.sin(a) + fy * math.cos(a)
    entry = RosterModel(
        id=f"m{marker}",
        side=side,
        base=RoundBase(shape="round", diameter_mm=base_mm),
        movement=6,
        marker=marker,
        marker_size_mm=size_mm,
        marker_height_mm=height,
        marker_offset_mm=offset,
    )
    return entry, PlacedMarker(marker, size_mm, mx, my, height / MM_PER_IN, heading, dictionary)


@dataclass
class Accuracy:
    """Figures over all frames."""

    errors_in: list[float] = field(default_factory=list)
    heading_errors_deg: list[float] = field(default_factory=list)
    detected_big: int = 0
    total_big: int = 0
    false_ids: list[int] = field(default_factory=list)
    camera_rms_px: float = 0.0
    pose_reprojection_px: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        e = np.asarray(self.errors_in)
        return {
            "models": float(len(e)),
            "median_in": float(np.median(e)) if len(e) else math.nan,
            "p99_in": float(np.percentile(e, 99)) if len(e) else math.nan,
            "max_in": float(e.max()) if len(e) else math.nan,
            "median_heading_deg": float(np.median(self.heading_errors_deg)),
            "detection_rate_18px": self.detected_big / max(self.total_big, 1),
            "false_detections": float(len(self.false_ids)),
            "camera_rms_px": self.camera_rms_px,
            "pose_reprojection_px": float(np.median(self.pose_reprojection_px)),
        }


def measure(frames: int = 4, models: int = 40, seed: int = 3, decoys: int = 20) -> Accuracy:
    """Render ``frames`` tables and measure the pipeline against their ground truth."""
    camera = scene_camera()
    intrinsics, rms = calibrated(camera)
    table = table_spec()
    anchors = [
        PlacedMarker(a.id, a.size_mm, a.x_in, a.y_in, 0.0, a.heading, cv2.aruco.DICT_4X4_250)
        for a in table.anchors
    ]
    detector = MarkerDetector(table.table.dictionary, (camera.width_px, camera.height_px))
    rng = random.Random(seed)
    acc = Accuracy(camera_rms_px=rms)
    for frame in range(frames):
        truth = random_models(models, rng)
        image = render_table(
            camera,
            TABLE_IN,
            anchors + [t.marker for t in truth],
            decoys=decoys,
            shot=Shot(seed=frame),
            texture_seed=frame,
        )
        found = detector.detect(image)
        placed_ids = {a.id for a in table.anchors} | {t.marker.id for t in truth}
        acc.false_ids += [i for i in found.ids.tolist() if i not in placed_ids]
        pose = TablePose.solve(found, table, intrinsics)
        acc.pose_reprojection_px.append(pose.reprojection_px)
        result = locate(found, table, pose, [t.entry for t in truth])
        where = {m.id: m.pose for m in result.models}
        for t in truth:
            side_px = _side_px(camera, t.marker)
            if side_px >= 18.0:
                acc.total_big += 1
                acc.detected_big += t.entry.id in where
            got = where.get(t.entry.id)
            if got is None:
                continue
            acc.errors_in.append(math.dist(got.xy, (t.x, t.y)))
            acc.heading_errors_deg.append(abs((got.heading - t.heading + 180) % 360 - 180))
    return acc


def _side_px(camera: PinholeCamera, marker: PlacedMarker) -> float:
    return _side(camera.project(marker.corners_in()))


def detect_and_map_timings(repeats: int = 5) -> list[object]:
    """Per-frame time of the whole detect-and-map step at 1080p and 4K with 10, 50 and 100
    markers, next to OpenCV's raw ``detectMarkers`` with default parameters on the same
    frames (the ratio column)."""
    import time

    from tablesight.rig.rulesbench import Timing

    table = table_spec()
    anchors = [
        PlacedMarker(a.id, a.size_mm, a.x_in, a.y_in, 0.0, a.heading, cv2.aruco.DICT_4X4_250)
        for a in table.anchors
    ]
    raw = cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_250), cv2.aruco.DetectorParameters()
    )
    out: list[object] = []
    for width, height in ((1920, 1080), (3840, 2160)):
        camera = scene_camera(width, height)
        intrinsics = CameraModel(
            (width, height), camera.camera_matrix, camera.dist_coeffs
        )  # the true lens: this is about time, not accuracy
        detector = MarkerDetector(table.table.dictionary, (width, height))
        for n in (10, 40, 50, 100) if height == 1080 else (10, 50, 100):
            truth = random_models(n, random.Random(n))
            image = render_table(camera, TABLE_IN, anchors + [t.marker for t in truth])
            gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
            roster = [t.entry for t in truth]
            base, ours, detect_only = [], [], []
            for _ in range(repeats):
                t0 = time.perf_counter()
                raw.detectMarkers(gray)
                base.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                found = detector.detect(gray)
                t1 = time.perf_counter()
                pose = TablePose.solve(found, table, intrinsics)
                locate(found, table, pose, roster)
                ours.append(time.perf_counter() - t0)
                detect_only.append(t1 - t0)
            goal = 16.0 if height == 1080 and n == 40 else None
            out.append(Timing.of(f"{height}p, {n} markers: detect and map", ours, goal, base))
            if height == 1080 and n == 40:
                mapping = [a - b for a, b in zip(ours, detect_only, strict=True)]
                out.append(
                    Timing.of("  of which mapping (x base: detection)", mapping, None, detect_only)
                )
    return out


def settings_study(frames: int = 4, seed: int = 21) -> str:
    """The detector settings tried, measured on the same rendered 1080p frames: markers of
    18 px and more found, marker-centre error in px (against the rendered truth), false
    detections among 40 decoys a frame, ms per frame. Markdown, for docs/."""
    import time

    from tablesight.vision.aruco import detector_parameters

    camera = scene_camera()
    table = table_spec()
    anchors = [
        PlacedMarker(a.id, a.size_mm, a.x_in, a.y_in, 0.0, a.heading, cv2.aruco.DICT_4X4_250)
        for a in table.anchors
    ]
    rng = random.Random(seed)
    shots = []
    for f in range(frames):
        truth = random_models(40, rng)
        markers = anchors + [t.marker for t in truth]
        image = render_table(
            camera, TABLE_IN, markers, decoys=40, shot=Shot(seed=f), texture_seed=f
        )
        shots.append((cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), {m.id: m for m in markers}))
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_250)

    def ours(refine: str, **changes: float) -> object:
        params = detector_parameters((camera.width_px, camera.height_px), refine)
        for key, value in changes.items():
            setattr(params, key, value)
        return params

    default = cv2.aruco.DetectorParameters()
    trials: list[tuple[str, object]] = [
        ("OpenCV defaults (no refinement)", default),
        ("ours, no refinement", ours("none")),
        ("ours, CORNER_REFINE_SUBPIX", ours("subpix")),
        ("ours, CORNER_REFINE_APRILTAG", ours("apriltag")),
        ("ours, CORNER_REFINE_CONTOUR (chosen)", ours("contour")),
        (
            "contour, OpenCV's minMarkerPerimeterRate 0.03",
            ours("contour", minMarkerPerimeterRate=0.03),
        ),
        (
            "contour, threshold windows 3, 13, 23",
            ours("contour", adaptiveThreshWinSizeMax=23, adaptiveThreshWinSizeStep=10),
        ),
        ("contour, threshold window 3 only", ours("contour", adaptiveThreshWinSizeMax=3)),
        ("contour, useAruco3Detection", ours("contour", useAruco3Detection=True)),
    ]
    rows = [
        "| settings | found (>= 18 px) | centre error median / p99 (px) | false | ms/frame |",
        "|---|---|---|---|---|",
    ]
    for name, params in trials:
        detector = cv2.aruco.ArucoDetector(dictionary, params)
        found = total = false = 0
        errors, times = [], []
        for gray, truth in shots:
            t0 = time.perf_counter()
            corners, ids, _ = detector.detectMarkers(gray)
            times.append(time.perf_counter() - t0)
            got = {} if ids is None else dict(zip(ids.reshape(-1).tolist(), corners, strict=True))
            for marker_id, marker in truth.items():
                projected = camera.project(marker.corners_in())
                if _side(projected) < 18.0:
                    continue
                total += 1
                if marker_id in got:
                    found += 1
                    centre = got[marker_id].reshape(4, 2).mean(axis=0)
                    errors.append(float(np.linalg.norm(centre - projected.mean(axis=0))))
            false += sum(1 for i in got if i not in truth)
        rows.append(
            f"| {name} | {found}/{total} | {np.median(errors):.3f} / "
            f"{np.percentile(errors, 99):.3f} | {false} | {1000 * np.median(times):.1f} |"
        )
    return "\n".join(rows)


def marker_size_table() -> str:
    """The smallest marker (mm) that stays 18 px wide everywhere on the table, for common
    tables and cameras: the camera 14 in in front of the near edge and high enough for a
    70 degree lens to see the whole table, aimed at its middle; a marker lying flat at each
    far corner, turned the worst way. Markdown."""
    tables = [(22.0, 30.0), (44.0, 30.0), (48.0, 48.0), (60.0, 44.0), (72.0, 48.0)]
    cameras = [(1280, 720), (1920, 1080), (3840, 2160)]
    rows = ["| table (in) | " + " | ".join(f"{h}p" for _, h in cameras) + " |"]
    rows.append("|---|" + "---|" * len(cameras))
    for w, d in tables:
        cells = []
        for width, height in cameras:
            camera = None
            for z in np.arange(10.0, 120.0, 1.0):
                cam = PinholeCamera.looking_at(
                    (w / 2, -14.0, z), (w / 2, d / 2, 0.0), width, height, hfov_deg=70.0
                )
                corners = np.array([[0, 0, 0], [w, 0, 0], [w, d, 0], [0, d, 0]], dtype=float)
                px = cam.project(corners)
                if (px >= 0).all() and (px[:, 0] < width).all() and (px[:, 1] < height).all():
                    camera = cam
                    break
            if camera is None:
                cells.append("-")
                continue
            worst = min(
                _side(camera.project(PlacedMarker(0, 10.0, x, y, 0.0, h).corners_in()))
                for x, y in ((0.5, d - 0.5), (w - 0.5, d - 0.5), (w / 2, d - 0.5))
                for h in (0.0, 45.0)
            )
            cells.append(f"{math.ceil(18.0 / worst * 10.0)} mm")
        rows.append(f"| {w:g} x {d:g} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _side(px: np.ndarray) -> float:
    return float(np.linalg.norm(px - np.roll(px, -1, axis=0), axis=1).mean())


#: The smallest marker side (px) read reliably: of 2,880 rendered markers, 3% of those of
#: 17 px were missed, 43% of 14 px, none of 18 px and more (README, "Set-up doctor").
RELIABLE_PX = 18.0
#: Bases players use (mm): round ones, and the oval of a bike or a large beast.
BASES = [Base.round(25), Base.round(28), Base.round(32), Base.round(40), Base.round(50)]
BASES += [Base("oval", 60, 35)]
#: Tables, smallest first (in).
TABLES_IN = [(30.0, 22.0), (44.0, 30.0), (48.0, 48.0), (60.0, 44.0), (72.0, 48.0)]


def boom_camera(table_in: tuple[float, float], width_px: int, height_px: int) -> PinholeCamera:
    """The samples' camera: a 70 degree lens on a boom over the middle of the near edge,
    as low as sees the whole table with 1 in to spare, aimed at the point of the table
    that keeps the farthest corner's marker biggest."""
    w, d = table_in
    edge = np.array(
        [[-1.0, -1.0, 0], [w + 1.0, -1.0, 0], [w + 1.0, d + 1.0, 0], [-1.0, d + 1.0, 0]]
    )
    best: tuple[float, PinholeCamera] | None = None
    for z in np.arange(10.0, 120.0, 1.0):
        for aim in np.arange(0.3, 0.71, 0.05):
            cam = PinholeCamera.looking_at(
                (w / 2, 0.0, z), (w / 2, aim * d, 0.0), width_px, height_px
            )
            px = cam.project(edge)
            if not (
                (px >= 0).all() and (px[:, 0] < width_px).all() and (px[:, 1] < height_px).all()
            ):
                continue
            worst = _far_side_px(cam, table_in, 10.0)
            if best is None or worst > best[0]:
                best = (worst, cam)
        if best is not None:
            return best[1]
    raise ValueError(f"no height up to 120 in sees a {w:g} x {d:g} in table")


def _far_side_px(camera: PinholeCamera, table_in: tuple[float, float], size_mm: float) -> float:
    w, d = table_in
    return min(
        _side(camera.project(PlacedMarker(0, size_mm, x, y, 4.0 / MM_PER_IN, h).corners_in()))
        for x, y in ((1.5, d - 1.5), (w - 1.5, d - 1.5), (w / 2, d - 1.5))
        for h in (0.0, 45.0)
    )


def base_marker_table(shots: int = 3) -> str:
    """For each base, the largest marker it takes and, for each table, the camera it needs:
    1080p where a 1080p camera finds every marker and none is under ``RELIABLE_PX``, else 4K
    where a 4K one does. Rendered with the boom camera, the markers 4 mm up on the base top
    along the far edge (the worst place: 10 base centres 1.5 in in from the far edge, from
    one side to the other, turned 0-45 degrees), ``shots`` shots of webcam blur, noise and
    JPEG each; the smallest marker side in pixels in brackets. Markdown."""
    from tablesight.calibration.printing import largest_marker_mm

    cameras = {"1080p": (1920, 1080), "4K": (3840, 2160)}
    booms = {(t, name): boom_camera(t, *size) for t in TABLES_IN for name, size in cameras.items()}
    head = " | ".join(f"{w:g} x {d:g} in" for w, d in TABLES_IN)
    rows = [f"| base | marker | {head} |", "|---|---|" + "---|" * len(TABLES_IN)]
    for base in BASES:
        size = float(math.floor(largest_marker_mm(base)))
        cells = []
        for t in TABLES_IN:
            cell = "neither"
            for name in cameras:
                found, total, px = _far_edge_found(booms[t, name], t, size, shots)
                if found == total and px >= RELIABLE_PX:
                    cell = f"{name} ({px:.0f} px)"
                    break
            cells.append(cell)
        what = (
            f"{base.length_mm:g} mm"
            if base.shape == "round"
            else (f"{base.length_mm:g} x {base.width_mm:g} mm oval")
        )
        rows.append(f"| {what} | {size:g} mm | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _far_edge_found(
    camera: PinholeCamera, table_in: tuple[float, float], size_mm: float, shots: int
) -> tuple[int, int, float]:
    """Markers of ``size_mm`` along the far edge found, of how many, and their smallest
    side in pixels."""
    w, d = table_in
    xs = np.linspace(1.5, w - 1.5, 10)
    markers = [
        PlacedMarker(10 + i, size_mm, float(x), d - 1.5, 4.0 / MM_PER_IN, 4.5 * i)
        for i, x in enumerate(xs)
    ]
    detector = MarkerDetector("4x4_50", camera.size)
    found = 0
    for seed in range(shots):
        frame = render_table(camera, table_in, markers, shot=Shot(seed=seed), texture_seed=seed)
        ids = set(detector.detect(frame).ids.tolist())
        found += sum(m.id in ids for m in markers)
    smallest = min(_side(camera.project(m.corners_in())) for m in markers)
    return found, shots * len(markers), smallest
