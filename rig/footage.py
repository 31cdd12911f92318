"""Rendered match footage from a storyboard: hands move models, hover, and knock the tripod.

A :class:`Storyboard` says what stands where on the table, where the camera is, and what
happens when:

* :class:`Move`: a hand reaches in (``REACH_S`` seconds before ``at``), covers the model's
  marker, carries it along a straight line (or through ``via`` points) for ``seconds``,
  puts it down and withdraws (``REACH_S`` seconds). While carried the model is in the
  hand, not on the table: it is not drawn, and the palm hides where it was;
* :class:`Cover`: a hand hovers over a table point, or over named models, without moving
  anything (it reaches in and withdraws the same way);
* :class:`Bump`: from ``at`` on the camera stands somewhere else, as when someone knocks
  the tripod;
* :class:`Flicker`: a still model's marker drops out of ``frames`` frames from ``at`` on
  (a glint of light washes its card out, as glare or a passing shadow's edge does for a
  frame or two); nothing moves.

``frames(story)`` renders it as :class:`tablesight.vision.sources.Frame` objects, ``write_video``
as a video file, and ``story.pose_at(model, t)`` is the ground truth: where each model
truly is at any time (in the hand, part way along its path, while carried).

Rendering: every distinct state of the table (camera, and where the models rest) is
drawn once by :func:`tablesight.rig.synth.render_table` and reused, so a still stretch costs one
render; hands are drawn over it in image space at ``motion_hz`` (10 Hz: each picture is
held for 3 frames at 30 fps). A hand is a skin-toned palm with fingers, a thumb and a
forearm reaching to the border of the picture nearest its path, shaded towards its
edges, sized by projecting its table-plane outline through the camera (palm
``PALM_IN`` across). Model bases and terrain footprints are tinted onto the mat around
the markers' cards (``decorate``). The sensor noise of a picture is fixed when it is
rendered: frames that show the same state are identical.

The storyboard can be a TOML file (:func:`tablesight.rig.storyboard_file.load_storyboard`); a
malformed one is one line naming the file and the field. ``samples/make.py render
STORYBOARD.toml OUT.mp4`` writes the video. The file has ``duration_s`` (and optionally
``fps``, ``motion_hz``, ``texture_seed``, ``decorate``, a ``[shot]`` table with ``seed``
and the other :class:`tablesight.rig.synth.Shot` fields), ``[table]`` and ``[[anchors]]`` as
in ``table.toml``, ``[camera]`` (``position``, ``look_at``, ``size``, ``hfov_deg``,
``dist``), ``[[models]]`` as in ``roster.toml`` plus ``start = [x, y, heading]``,
``[[terrain]]`` as in ``terrain.toml`` plus ``at = [x, y, heading]``, and ``[[actions]]``
in time order::

    [[actions]]
    kind = "move"
    model = "ganger"
    to = [17, 10]              # or [x, y, heading]; optional: via = [[x, y], ...] and
    at = 2.0                   # arm = "left", "right", "top" or "bottom"
    seconds = 1.5

    [[actions]]
    kind = "cover"             # point = [x, y] or models = [...]
    models = ["ganger"]
    at = 5.0
    seconds = 1.0

    [[actions]]
    kind = "bump"
    at = 8.0
    position = [22.6, -14.4, 30.3]
    look_at = [22.2, 14.1, 0]

    [[actions]]
    kind = "flicker"           # the frames from round(at * fps) on, exactly (not at
    model = "ganger"           # motion_hz): the marker cannot be found in them
    at = 9.0
    frames = 2

``tests/vision/necromunda_match.toml`` is a whole match.

The table in 3D (all off by default; see :mod:`tablesight.rig.bodies`,
:mod:`tablesight.rig.webcam`):

* a model's ``start`` (and a move's ``to``) may be ``[x, y, heading, z]``: it stands z
  inches up (on a tower's top: the tower's height); its marker is at z + marker_height_mm,
  and a move carries it up or down linearly (a ``to`` without z keeps its height);
* ``figure = { height_mm = 45, width_mm = 25, offset_mm = [forward, left], shape =
  "cylinder" | "box", depth_mm, base_mm = 4, colour = [b, g, r] }`` in a model's entry
  stands an opaque miniature on its base top (base_mm above z): it hides what is behind
  it and the part of the base (and card) it stands on; a carried one is drawn in the
  hand. Put the marker on the rim, on a tab, or on the head (marker_height_mm at or
  above base_mm + height_mm);
* ``solid_terrain = true`` draws every terrain piece with a ``height`` as its footprint
  extruded to that height, opaque and shaded; its marker is where marker_height_mm says
  (127 mm: on a 5 in top);
* ``[webcam]``: ``motion_blur_s`` (shutter time), ``exposure_drift`` (fraction, e.g. 0.15)
  and ``exposure_period_s``, ``codec`` (``"mjpg"``, ``"mp4v"``, ``"ffv1"``, ``"h264"``),
  ``bitrate_kbps`` (H.264, default 3000; needs PyAV), ``jpeg_quality`` (MJPG), ``seed``.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np

from tablesight.calibration.dictionaries import DictionaryError, dictionary_id
from tablesight.calibration.roster import RosterModel, TerrainPiece
from tablesight.calibration.table import MM_PER_IN, TableSpec, marker_corners
from tablesight.rig.bodies import TERRAIN_BGR, Figure, Prism, paint_silhouette, render_scene
from tablesight.rig.hands import (
    _OUTWARD,
    PALM_IN,
    Side,
    _border_point,
    _ellipse,
    _Hand,
    _HandPainter,
    _jacobian,
    _smooth,
)
from tablesight.rig.synth import PinholeCamera, PlacedMarker, Shot, render_table
from tablesight.rig.webcam import CODECS, MAX_BLUR_SAMPLES, Webcam, apply_gain, write_frames
from tablesight.rules.errors import field_path
from tablesight.rules.geometry import Pose
from tablesight.rules.scenario import OvalBase, RoundBase
from tablesight.vision.sources import Frame

__all__ = [
    "FOURCC",
    "PALM_IN",
    "REACH_S",
    "Action",
    "Bump",
    "Cover",
    "Flicker",
    "Move",
    "Storyboard",
    "VideoInfo",
    "frames",
    "write_video",
]

#: Seconds a hand takes to reach in before an action and to withdraw after it.
REACH_S = 0.3
#: Margin of palm left around a covered model's card, inches.
COVER_MARGIN_IN = 0.3
#: The colour a glint washes a marker's card out to (BGR), and the margin it reaches past
#: the card, inches: enough that no corner of the pattern is left to find.
GLARE_BGR = (246.0, 248.0, 250.0)
GLARE_MARGIN_IN = 0.08

#: How high a hand lifts a carried figure above its path, inches.
LIFT_IN = 0.4
#: Multipliers of the mat's colour for a model's base and a terrain footprint.
BASE_TINT = (0.34, 0.34, 0.36)
TERRAIN_TINT = (0.62, 0.74, 0.92)
TERRAIN_EDGE_TINT = (0.45, 0.52, 0.62)

_BASES_CACHED = 4  # rendered table states kept (a state may come back after a cover)


# --------------------------------------------------------------------------------------------
# The storyboard


@dataclass(frozen=True)
class Move:
    """A hand carries ``model`` to ``to`` = (x, y) or (x, y, heading), from ``at`` for
    ``seconds``, along a straight line or through the ``via`` points; ``arm`` names the
    picture border the forearm comes from (default: the one nearest the path)."""

    model: str
    to: tuple[float, ...]
    at: float
    seconds: float
    via: tuple[tuple[float, float], ...] = ()
    arm: Side | None = None

    @property
    def end(self) -> float:
        return self.at + self.seconds


@dataclass(frozen=True)
class Cover:
    """A hand hovers over ``point`` (x, y), or over ``models``, from ``at`` for ``seconds``;
    the palm is made wide enough to hide every named model's marker."""

    at: float
    seconds: float
    point: tuple[float, float] | None = None
    models: tuple[str, ...] = ()
    arm: Side | None = None

    @property
    def end(self) -> float:
        return self.at + self.seconds


@dataclass(frozen=True)
class Bump:
    """From ``at`` on the camera stands at ``position`` aimed at ``look_at`` (inches)."""

    at: float
    position: tuple[float, float, float]
    look_at: tuple[float, float, float]


@dataclass(frozen=True)
class Flicker:
    """``model``'s marker drops out of ``frames`` frames, from the frame at ``at`` on: a
    glint washes its card out (the model stays where it is, and nothing else changes).
    Frames, not seconds: a dropout of one or two pictures is what it stands for."""

    model: str
    at: float
    frames: int = 1

    def covers(self, index: int, fps: float) -> bool:
        """Whether frame ``index`` is one of the washed-out ones."""
        first = round(self.at * fps)
        return first <= index < first + self.frames


Action = Move | Cover | Bump | Flicker


def _as_pose(value: Pose | Sequence[float]) -> Pose:
    if isinstance(value, Pose):
        return value
    v = [float(x) for x in value]
    if len(v) not in (2, 3, 4):
        raise ValueError(f"a pose is [x, y], [x, y, heading] or [x, y, heading, z], got {value!r}")
    return Pose(v[0], v[1], v[2] if len(v) >= 3 else 0.0, v[3] if len(v) == 4 else 0.0)


def _turn(a: float, b: float) -> float:
    """The signed shortest turn from heading ``a`` to ``b``, degrees."""
    return (b - a + 180.0) % 360.0 - 180.0


@dataclass(frozen=True)
class Storyboard:
    """What the camera films: the table, the models, the camera, and what happens when.

    ``start`` gives each model's (and terrain piece's marker's) pose as ``Pose`` or
    ``(x, y[, heading[, z]])``, z the height in inches the model stands at (on a tower's
    top: the tower's height); ``shot`` says how every rendered picture is degraded (its
    seed is varied per picture); times are seconds from the first frame.  ``figures``
    stands a :class:`~tablesight.rig.bodies.Figure` on the named models' bases,
    ``solid_terrain`` draws every terrain piece with a height as an opaque prism, and
    ``webcam`` adds motion blur, exposure drift and the video codec
    (:class:`~tablesight.rig.webcam.Webcam`); all three are off by default.
    """

    table: TableSpec
    roster: Sequence[RosterModel]
    start: Mapping[str, Pose | Sequence[float]]
    camera: PinholeCamera
    duration_s: float
    actions: Sequence[Action] = ()
    terrain: Sequence[TerrainPiece] = ()
    fps: float = 30.0
    shot: Shot = field(default_factory=Shot)
    motion_hz: float = 10.0
    texture_seed: int = 0
    decorate: bool = True
    figures: Mapping[str, Figure] = field(default_factory=dict)
    solid_terrain: bool = False
    webcam: Webcam = field(default_factory=Webcam)
    _moves: dict[str, tuple[Move, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "roster", tuple(self.roster))
        set_(self, "terrain", tuple(self.terrain))
        set_(self, "actions", tuple(self.actions))
        set_(self, "figures", dict(self.figures))
        try:
            set_(self, "start", {k: _as_pose(v) for k, v in self.start.items()})
        except ValueError as exc:
            raise ValueError(f"start: {exc}") from None
        problem = next(_problems(self), None)
        if problem is not None:
            raise ValueError(f"{field_path(problem[0])}: {problem[1]}")
        moves: dict[str, list[Move]] = {m.id: [] for m in self.roster}
        for action in self.actions:
            if isinstance(action, Move):
                moves[action.model].append(action)
        set_(self, "_moves", {k: tuple(v) for k, v in moves.items()})

    @property
    def frame_count(self) -> int:
        return round(self.duration_s * self.fps)

    @property
    def dictionary(self) -> int:
        return dictionary_id(self.table.table.dictionary)

    def model(self, model_id: str) -> RosterModel:
        for m in self.roster:
            if m.id == model_id:
                return m
        raise KeyError(model_id)

    def pose_at(self, model_id: str, t: float) -> Pose:
        """Where ``model_id`` truly is at ``t``: at rest, or in the hand along its path."""
        return self._state(model_id, t)[0]

    def poses_at(self, t: float) -> dict[str, Pose]:
        """Every model's true pose at ``t`` (the ground truth to check a referee against)."""
        return {m.id: self.pose_at(m.id, t) for m in self.roster}

    def in_hand(self, model_id: str, t: float) -> bool:
        """Is ``model_id`` being carried (off the table) at ``t``?"""
        return self._state(model_id, t)[1]

    def camera_at(self, t: float) -> PinholeCamera:
        """The camera as it stands at ``t`` (after every bump up to then)."""
        camera = self.camera
        for action in self.actions:
            if isinstance(action, Bump) and action.at <= t + 1e-9:
                camera = self.camera.aimed(action.position, action.look_at)
        return camera

    def _state(self, model_id: str, t: float) -> tuple[Pose, bool]:
        start = self.start[model_id]
        assert isinstance(start, Pose)
        pose = start
        for move in self._moves[model_id]:
            if t <= move.at:
                break
            to = Pose(
                move.to[0],
                move.to[1],
                move.to[2] if len(move.to) >= 3 else pose.heading,
                move.to[3] if len(move.to) == 4 else pose.z,
            )
            if t < move.end:
                done = (t - move.at) / move.seconds
                x, y = _along([pose.xy, *move.via, to.xy], done)
                heading = pose.heading + done * _turn(pose.heading, to.heading)
                z = pose.z + done * (to.z - pose.z)
                return Pose(x, y, heading % 360.0, z), True
            pose = to
        return pose, False


def _along(path: Sequence[tuple[float, float]], fraction: float) -> tuple[float, float]:
    """The point ``fraction`` of the way along a polyline, by length."""
    pts = np.asarray(path, dtype=float)
    seg = np.hypot(*np.diff(pts, axis=0).T)
    goal = min(max(fraction, 0.0), 1.0) * float(seg.sum())
    for k, length in enumerate(seg):
        if length > 0 and goal <= length:
            p = pts[k] + (pts[k + 1] - pts[k]) * (goal / length)
            return float(p[0]), float(p[1])
        goal -= length
    return float(pts[-1, 0]), float(pts[-1, 1])


def _problems(story: Storyboard) -> Iterator[tuple[tuple[int | str, ...], str]]:
    """What is wrong with a storyboard, as (field location, what) pairs."""
    for name in ("duration_s", "fps", "motion_hz"):
        value = getattr(story, name)
        if not (math.isfinite(value) and value > 0):
            yield (name,), f"must be a positive number, got {value!r}"
    try:
        dictionary_id(story.table.table.dictionary)
    except DictionaryError as exc:
        yield ("table", "dictionary"), str(exc)
    markers: dict[int, str] = {}
    for i, a in enumerate(story.table.anchors):
        if a.id in markers:
            yield ("anchors", i, "id"), f"anchor ids must differ, got {a.id} twice"
        markers[a.id] = f"anchor {a.id}"
    ids: set[str] = set()
    placed: list[tuple[str, Sequence[RosterModel | TerrainPiece]]] = [
        ("roster", story.roster),
        ("terrain", story.terrain),
    ]
    for key, items in placed:
        for i, item in enumerate(items):
            if item.id in ids:
                yield (key, i, "id"), f"ids must differ, got {item.id!r} twice"
            ids.add(item.id)
            if item.marker in markers:
                yield (key, i, "marker"), f"marker {item.marker} is also {markers[item.marker]}"
            markers[item.marker] = repr(item.id)
            if item.id not in story.start:
                yield ("start",), f"no start pose for {item.id!r}"
    for name in story.start:
        if name not in ids:
            yield ("start", name), "no model or terrain piece has this id"
    models = {m.id for m in story.roster}
    known = ", ".join(sorted(models))
    for name, figure in story.figures.items():
        if name not in models:
            yield ("figures", name), f"unknown model {name!r}; roster: {known}"
        elif (bad := figure.problem()) is not None:
            yield ("figures", name, bad[0]), bad[1]
    if (bad := story.webcam.problem()) is not None:
        yield ("webcam", bad[0]), bad[1]
    last_at = 0.0
    carried_until: dict[str, float] = {}
    for i, action in enumerate(story.actions):
        if not (math.isfinite(action.at) and action.at >= 0):
            yield ("actions", i, "at"), f"must be a time >= 0 s, got {action.at!r}"
        elif action.at < last_at:
            yield ("actions", i, "at"), f"actions must be in time order; {action.at} < {last_at}"
        last_at = max(last_at, action.at)
        if isinstance(action, (Move, Cover)) and not action.seconds > 0:
            yield ("actions", i, "seconds"), f"must be positive, got {action.seconds!r}"
        if isinstance(action, (Move, Cover)) and action.arm not in (None, *_OUTWARD):
            yield ("actions", i, "arm"), f"expected one of {', '.join(_OUTWARD)}"
        if isinstance(action, Move):
            if action.model not in models:
                yield ("actions", i, "model"), f"unknown model {action.model!r}; roster: {known}"
            elif action.at < carried_until.get(action.model, -1.0):
                yield ("actions", i, "at"), f"{action.model} is still being carried then"
            else:
                carried_until[action.model] = action.end
            if len(action.to) not in (2, 3, 4):
                yield (
                    ("actions", i, "to"),
                    f"expected [x, y], [x, y, heading] or [x, y, heading, z], got {action.to}",
                )
        elif isinstance(action, Bump):
            if tuple(action.position) == tuple(action.look_at):
                yield ("actions", i, "look_at"), "the camera cannot look at where it stands"
        elif isinstance(action, Flicker):
            if action.model not in models:
                yield ("actions", i, "model"), f"unknown model {action.model!r}; roster: {known}"
            if not (isinstance(action.frames, int) and action.frames >= 1):
                yield (
                    ("actions", i, "frames"),
                    f"must be a whole number >= 1, got {action.frames!r}",
                )
        elif isinstance(action, Cover):
            if (action.point is None) == (not action.models):
                yield ("actions", i), "a cover names a point or models (one of the two)"
            for j, name in enumerate(action.models):
                if name not in models:
                    yield ("actions", i, "models", j), f"unknown model {name!r}; roster: {known}"


# --------------------------------------------------------------------------------------------
# Rendering


def _marker_of(story: Storyboard, m: RosterModel, pose: Pose) -> PlacedMarker:
    forward, left = (v / MM_PER_IN for v in m.marker_offset_mm)
    a = math.radians(pose.heading)
    x = pose.x + forward * math.cos(a) - left * math.sin(a)
    y = pose.y + forward * math.sin(a) + left * math.cos(a)
    z = pose.z + m.marker_height_mm / MM_PER_IN
    return PlacedMarker(m.marker, m.marker_size_mm, x, y, z, pose.heading, story.dictionary)


def _fixed_markers(story: Storyboard) -> list[PlacedMarker]:
    """The anchors and the terrain pieces' markers: they never move."""
    out = [
        PlacedMarker(a.id, a.size_mm, a.x_in, a.y_in, 0.0, a.heading, story.dictionary)
        for a in story.table.anchors
    ]
    for piece in story.terrain:
        at = story.start[piece.id]
        assert isinstance(at, Pose)
        z = at.z + piece.marker_height_mm / MM_PER_IN
        out.append(
            PlacedMarker(
                piece.marker, piece.marker_size_mm, at.x, at.y, z, at.heading, story.dictionary
            )
        )
    return out


def _solids(story: Storyboard, resting: Sequence[tuple[RosterModel, Pose]]) -> list[Prism]:
    """The opaque bodies standing on the table: terrain pieces with a height (if
    ``solid_terrain``) and the figures of the models at rest."""
    out = []
    if story.solid_terrain:
        for piece in story.terrain:
            at = story.start[piece.id]
            assert isinstance(at, Pose)
            if piece.height > 0:
                poly = _placed(np.asarray(piece.polygon, dtype=float), at)
                out.append(Prism(poly, at.z, at.z + piece.height, TERRAIN_BGR))
    for m, pose in resting:
        figure = story.figures.get(m.id)
        if figure is not None:
            out.append(figure.prism(pose.x, pose.y, pose.heading, pose.z))
    return out


def _placed(local: np.ndarray, pose: Pose) -> np.ndarray:
    """(N, 2) points given in a frame turned to ``pose.heading`` at ``pose``, on the table."""
    a = math.radians(pose.heading)
    ca, sa = math.cos(a), math.sin(a)
    return np.column_stack(
        [pose.x + ca * local[:, 0] - sa * local[:, 1], pose.y + sa * local[:, 0] + ca * local[:, 1]]
    )


def _base_outline(m: RosterModel, pose: Pose) -> np.ndarray:
    """(N, 2) outline of a model's base on the table, inches."""
    if isinstance(m.base, RoundBase):
        r = m.base.diameter_mm / 2 / MM_PER_IN
        local = _ellipse((0.0, 0.0), r, r, 0.0, 48)
    elif isinstance(m.base, OvalBase) and m.base.shape == "oval":
        local = _ellipse(
            (0.0, 0.0), m.base.length_mm / 2 / MM_PER_IN, m.base.width_mm / 2 / MM_PER_IN, 0, 48
        )
    else:
        hl, hw = m.base.length_mm / 2 / MM_PER_IN, m.base.width_mm / 2 / MM_PER_IN
        local = np.array([[hl, hw], [-hl, hw], [-hl, -hw], [hl, -hw]])
    return _placed(local, pose)


def _densify(poly: np.ndarray, step_in: float = 0.25) -> np.ndarray:
    """More points along a closed outline, so its projection follows the lens distortion."""
    out: list[np.ndarray] = []
    for p, q in zip(poly, np.roll(poly, -1, axis=0), strict=True):
        n = max(1, math.ceil(float(np.hypot(*(q - p))) / step_in))
        out.extend(p + (q - p) * k / n for k in range(n))
    return np.asarray(out)


def _projected(camera: PinholeCamera, poly_in: np.ndarray, z_in: float) -> np.ndarray | None:
    """A table-plane outline at height ``z_in`` in pixels; None if it reaches behind the lens."""
    outline = _densify(poly_in)
    pts = np.column_stack([outline, np.full(len(outline), z_in)])
    if np.any(camera.to_camera(pts)[:, 2] <= 0):
        return None
    return camera.project(pts)


def _coverage(shape: np.ndarray, size: tuple[int, int]) -> tuple[np.ndarray, int, int] | None:
    """An antialiased mask (0..1) of a pixel polygon over its bounding box, and the box's
    top-left corner; None if it misses the picture."""
    w, h = size
    x0, y0 = max(0, math.floor(shape[:, 0].min()) - 3), max(0, math.floor(shape[:, 1].min()) - 3)
    x1, y1 = min(w, math.ceil(shape[:, 0].max()) + 4), min(h, math.ceil(shape[:, 1].max()) + 4)
    if x1 <= x0 or y1 <= y0:
        return None
    mask = np.zeros((y1 - y0, x1 - x0), dtype=np.uint8)
    cv2.fillPoly(mask, [np.round((shape - [x0, y0]) * 16).astype(np.int32)], 255, cv2.LINE_AA, 4)
    return mask.astype(np.float32) / 255.0, x0, y0


def _decorate(
    img: np.ndarray,
    story: Storyboard,
    camera: PinholeCamera,
    resting: list[tuple[RosterModel, Pose]],
    solid: np.ndarray | None = None,
) -> np.ndarray:
    """Terrain footprints and model bases tinted onto the mat, never over a marker's card
    nor over the solids (``solid``: their coverage, 0..1), which stand on them."""
    out = img.astype(np.float32)
    size = (camera.width_px, camera.height_px)

    def tint(poly_in: np.ndarray, z_in: float, tint_bgr: tuple[float, ...], rim: bool) -> None:
        shape = _projected(camera, poly_in, z_in)
        cover = None if shape is None else _coverage(shape, size)
        if cover is None:
            return
        mask, x0, y0 = cover
        if rim:  # only the outline, a few pixels wide
            mask = mask - cv2.erode(mask, np.ones((5, 5), np.uint8))
        region = out[y0 : y0 + mask.shape[0], x0 : x0 + mask.shape[1]]
        region *= 1.0 - mask[..., None] * (1.0 - np.asarray(tint_bgr, dtype=np.float32))

    for piece in story.terrain:
        at = story.start[piece.id]
        assert isinstance(at, Pose)
        if story.solid_terrain and piece.height > 0:
            continue  # the prism stands on its footprint
        poly = _placed(np.asarray(piece.polygon, dtype=float), at)
        tint(poly, at.z, TERRAIN_TINT, rim=False)
        tint(poly, at.z, TERRAIN_EDGE_TINT, rim=True)
    for m, pose in resting:
        z = pose.z + m.marker_height_mm / MM_PER_IN
        tint(_base_outline(m, pose), z, BASE_TINT, rim=False)
    # Cards (and what render_table drew of them) are left exactly as rendered.
    cards = np.zeros(img.shape[:2], dtype=np.uint8)
    markers = _fixed_markers(story) + [_marker_of(story, m, p) for m, p in resting]
    for marker in markers:
        side_in = (marker.size_mm + 2 * marker.quiet_zone_mm) / MM_PER_IN
        card = marker_corners(marker.x_in, marker.y_in, 0.0, side_in, marker.heading_deg)
        shape = _projected(camera, card[:, :2], marker.z_in)
        if shape is not None:
            cv2.fillPoly(cards, [np.round(shape * 16).astype(np.int32)], 255, cv2.LINE_AA, 4)
    keep = (cv2.dilate(cards, np.ones((3, 3), np.uint8)) > 0)[..., None]
    if solid is not None:
        out += solid[..., None] * (img.astype(np.float32) - out)
    return np.where(keep, img, np.clip(out, 0, 255).astype(np.uint8))


class _Renderer:
    """Frame pictures of a storyboard, each distinct table state rendered once."""

    def __init__(self, story: Storyboard) -> None:
        self.story = story
        self.fixed = _fixed_markers(story)
        self.painter = _HandPainter(story.camera, story.shot.seed)
        self._bases: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._seeds: dict[tuple, int] = {}
        self._last: tuple[tuple, np.ndarray] | None = None
        self._sides: dict[int, str] = {}

    def picture(self, index: int) -> np.ndarray:
        """Frame ``index``: the table as it stands (models in a hand are off it), the
        hands over it; what moves is sampled at ``motion_hz``, bumps take effect at once."""
        story = self.story
        t = index / story.fps
        if story.motion_hz < story.fps:
            tq = math.floor(index * story.motion_hz / story.fps + 1e-9) / story.motion_hz
        else:
            tq = t
        camera = story.camera_at(t)
        resting = []
        for m in story.roster:
            pose, carried = story._state(m.id, tq)
            if not carried:
                resting.append((m, pose))
        base_key = (camera.rvec, camera.tvec, tuple((m.id, p) for m, p in resting))
        layers = self._layers(tq, camera)
        # a glint is frame-exact (not sampled at motion_hz), on a model at rest
        glints = tuple(
            (m, p)
            for m, p in resting
            if any(
                isinstance(a, Flicker) and a.model == m.id and a.covers(index, story.fps)
                for a in story.actions
            )
        )
        gain = story.webcam.gain(t)
        key = (base_key, layers, tuple(m.id for m, _ in glints), gain)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        img = self._base(base_key, camera, resting)
        if glints:
            img = img.copy()
            for m, pose in glints:
                self._glint(img, camera, _marker_of(story, m, pose))
        if any(hands or carried for hands, carried in layers):
            if len(layers) == 1:
                img = img.copy()
                self._paint(img, *layers[0], camera)
            else:  # motion blur: the moving layer at instants across the exposure, averaged
                total = np.zeros(img.shape, dtype=np.float32)
                for hands, carried in layers:
                    sub = img.copy()
                    self._paint(sub, hands, carried, camera)
                    total += sub
                img = np.clip(np.rint(total / len(layers)), 0, 255).astype(np.uint8)
        img = apply_gain(img, gain)
        img.flags.writeable = False
        self._last = (key, img)
        return img

    def _paint(
        self,
        img: np.ndarray,
        hands: tuple[_Hand, ...],
        carried: tuple[tuple[str, Pose], ...],
        camera: PinholeCamera,
    ) -> None:
        """Carried figures (lifted, no depth test), then the hands over them, in place."""
        for name, pose in carried:
            figure = self.story.figures[name]
            paint_silhouette(
                img, camera, figure.prism(pose.x, pose.y, pose.heading, pose.z + LIFT_IN)
            )
        for hand in hands:
            self.painter.draw(img, hand, camera)

    def _moving(
        self, t: float, camera: PinholeCamera
    ) -> tuple[tuple[_Hand, ...], tuple[tuple[str, Pose], ...]]:
        """What moves at ``t``: the hands, and the carried models that have figures."""
        carried = tuple(
            (name, state[0])
            for name in self.story.figures
            if (state := self.story._state(name, t))[1]
        )
        return self._hands(t, camera), carried

    def _layers(self, t: float, camera: PinholeCamera) -> tuple:
        """The moving layer at each instant the picture at ``t`` averages: one without
        motion blur or when nothing moves, else enough that consecutive ones are under a
        pixel apart (at most ``MAX_BLUR_SAMPLES``)."""
        now = self._moving(t, camera)
        shutter = self.story.webcam.motion_blur_s
        if shutter <= 0 or not (now[0] or now[1]):
            return (now,)
        first = self._moving(t - shutter, camera)
        travel = 0.0 if len(first[0]) == len(now[0]) else math.inf
        for a, b in zip(first[0], now[0], strict=False):
            travel = max(travel, math.dist(a.centre_px, b.centre_px))
        for (_, p), (_, q) in zip(first[1], now[1], strict=False):
            ends = camera.project(np.array([[p.x, p.y, p.z], [q.x, q.y, q.z]]))
            travel = max(travel, float(np.linalg.norm(ends[1] - ends[0])))
        n = min(MAX_BLUR_SAMPLES, math.ceil(travel / 0.75) + 1)
        if n <= 1:
            return (now,)
        return tuple(self._moving(t - shutter * (1 - (k + 0.5) / n), camera) for k in range(n))

    def _base(
        self, key: tuple, camera: PinholeCamera, resting: list[tuple[RosterModel, Pose]]
    ) -> np.ndarray:
        if key in self._bases:
            self._bases.move_to_end(key)
            return self._bases[key]
        seed = self._seeds.setdefault(key, len(self._seeds))
        story = self.story
        markers = self.fixed + [_marker_of(story, m, p) for m, p in resting]
        shot = replace(story.shot, seed=story.shot.seed * 100_003 + seed)
        size = (story.table.table.width_in, story.table.table.depth_in)
        solids = _solids(story, resting)
        solid = None
        if solids:
            img, solid = render_scene(
                camera, size, markers, solids, shot=shot, texture_seed=story.texture_seed
            )
        else:
            img = render_table(camera, size, markers, shot=shot, texture_seed=story.texture_seed)
        if story.decorate:
            img = _decorate(img, story, camera, resting, solid)
        img.flags.writeable = False
        self._bases[key] = img
        if len(self._bases) > _BASES_CACHED:
            self._bases.popitem(last=False)
        return img

    @staticmethod
    def _glint(img: np.ndarray, camera: PinholeCamera, marker: PlacedMarker) -> None:
        """Wash a marker's card out to near white (glare off it), in place."""
        side_in = (marker.size_mm + 2 * marker.quiet_zone_mm) / MM_PER_IN + 2 * GLARE_MARGIN_IN
        card = marker_corners(marker.x_in, marker.y_in, 0.0, side_in, marker.heading_deg)
        shape = _projected(camera, card[:, :2], marker.z_in)
        cover = None if shape is None else _coverage(shape, (camera.width_px, camera.height_px))
        if cover is None:
            return
        mask, x0, y0 = cover
        region = img[y0 : y0 + mask.shape[0], x0 : x0 + mask.shape[1]].astype(np.float32)
        alpha = mask[..., None]
        glare = np.asarray(GLARE_BGR, dtype=np.float32)
        washed = region + alpha * (glare - region)
        img[y0 : y0 + mask.shape[0], x0 : x0 + mask.shape[1]] = np.clip(washed, 0, 255).astype(
            np.uint8
        )

    def _hands(self, t: float, camera: PinholeCamera) -> tuple[_Hand, ...]:
        hands = []
        for i, action in enumerate(self.story.actions):
            if isinstance(action, (Bump, Flicker)):
                continue
            if not action.at - REACH_S < t < action.end + REACH_S:
                continue
            hand = self._hand(i, action, t, camera)
            if hand is not None:
                hands.append(hand)
        return tuple(hands)

    def _point(self, model_id: str, t: float) -> np.ndarray:
        m = self.story.model(model_id)
        marker = _marker_of(self.story, m, self.story.pose_at(model_id, t))
        return np.array([marker.x_in, marker.y_in, marker.z_in])

    def _card_half_diagonal(self, model_id: str, t: float) -> float:
        marker = _marker_of(self.story, self.story.model(model_id), self.story.pose_at(model_id, t))
        return math.sqrt(2) * (marker.size_mm / 2 + marker.quiet_zone_mm) / MM_PER_IN

    def _hand(self, i: int, action: Move | Cover, t: float, camera: PinholeCamera) -> _Hand | None:
        half = PALM_IN / 2
        if isinstance(action, Move):
            first = self._point(action.model, action.at)
            last = self._point(action.model, action.end)
            path = [first, *(np.array([x, y, first[2]]) for x, y in action.via), last]
            now = self._point(action.model, min(max(t, action.at), action.end))
        else:
            if action.point is not None:
                now = np.array([action.point[0], action.point[1], 0.0])
            else:
                pts = np.array([self._point(name, action.at) for name in action.models])
                now = pts.mean(axis=0)
                for name, p in zip(action.models, pts, strict=True):
                    reach = float(np.hypot(*(p - now)[:2])) + self._card_half_diagonal(
                        name, action.at
                    )
                    half = max(half, reach + COVER_MARGIN_IN)
            path = [now]
        side = self._side(i, action, path, camera)
        jac = _jacobian(camera, now)
        centre = camera.project(now[None])[0]
        if t < action.at:
            s = _smooth((t - (action.at - REACH_S)) / REACH_S)
        elif t > action.end:
            s = _smooth((action.end + REACH_S - t) / REACH_S)
        else:
            s = 1.0
        if s <= 0.0:
            return None
        if s < 1.0:
            out = np.array(_OUTWARD[side])
            extent = float(np.linalg.norm(jac, 2)) * (half + 3.0)
            off = _border_point(camera, centre, out) + out * extent
            centre = off + s * (centre - off)
        j = [round(float(v), 4) for v in jac.ravel()]
        return _Hand(
            (round(float(centre[0]), 2), round(float(centre[1]), 2)),
            (j[0], j[1], j[2], j[3]),
            half,
            side,
        )

    def _side(
        self, i: int, action: Move | Cover, path: list[np.ndarray], camera: PinholeCamera
    ) -> str:
        """The border the arm comes from: as given, else the one nearest the path."""
        if action.arm is not None:
            return action.arm
        if i not in self._sides:
            px = camera.project(np.asarray(path, dtype=float))
            w, h = camera.width_px - 1, camera.height_px - 1
            gaps = {
                "left": px[:, 0].mean(),
                "right": w - px[:, 0].mean(),
                "top": px[:, 1].mean(),
                "bottom": h - px[:, 1].mean(),
            }
            self._sides[i] = min(gaps, key=lambda k: gaps[k])
        return self._sides[i]


def frames(story: Storyboard) -> Iterator[Frame]:
    """The footage, frame by frame: ``Frame(image, index / fps, index)``; images are
    read-only and shared between frames that show the same thing."""
    renderer = _Renderer(story)
    for index in range(story.frame_count):
        yield Frame(renderer.picture(index), index / story.fps, index)


# --------------------------------------------------------------------------------------------
# Video files

#: The codec used for each file suffix: both are written and read back by OpenCV's wheels.
FOURCC = {".mp4": "mp4v", ".avi": "MJPG"}


@dataclass(frozen=True)
class VideoInfo:
    """A written video: where, how many frames, how long, how big."""

    path: Path
    fourcc: str
    frames: int
    seconds: float
    bytes: int


def write_video(story: Storyboard, path: Path, fourcc: str | None = None) -> VideoInfo:
    """Render the storyboard into a video file; the codec is ``fourcc`` if named (e.g.
    ``"FFV1"`` in ``.avi``, lossless), else the storyboard's ``webcam.codec`` (``"h264"``:
    libx264 at ``webcam.bitrate_kbps``, see :mod:`tablesight.rig.webcam`), else it follows the
    suffix (``FOURCC``)."""
    path = Path(path)
    cam = story.webcam
    code = fourcc or cam.codec or FOURCC.get(path.suffix.lower())
    if code is None:
        raise ValueError(f"{path}: write .mp4 or .avi, or name a fourcc")
    if code in CODECS and path.suffix.lower() != CODECS[code]:
        raise ValueError(f"{path}: {code} video is written to {CODECS[code]} files")
    size = (story.camera.width_px, story.camera.height_px)
    images = (frame.image for frame in frames(story))
    count = write_frames(images, path, story.fps, size, code, cam.bitrate_kbps, cam.jpeg_quality)
    return VideoInfo(path, code, count, count / story.fps, path.stat().st_size)
