"""A frame becomes one observation: its sight (markers, table pose), located, tracked.

One :meth:`Observer.observe` per frame, in time order, returns an :class:`Observation`:

1. the frame's markers (pixels) and the table pose solved from whatever anchors it shows,
   with its health (:func:`tablesight.vision.sight.sight`; markers found ahead on a decode
   thread come with the frame, ``Frame.detections``, and are not looked for again);
2. with a trusted pose, every marker, model and terrain piece located in table inches
   (:func:`tablesight.vision.locate.locate`), each model a :class:`Sighting`: its pose
   (a :class:`tablesight.rules.geometry.Pose`) and its centre's uncertainty. The terrain
   pieces placed in earlier frames are passed to ``locate`` with the frame, so a model
   standing on a piece whose marker it hides is still put on that piece's level;
3. the sightings handed to the tracker, whose answer (every track, with this frame's news:
   first seen, moved, hidden, lost) becomes the observation's ``LocatedModel``s as it is,
   each track's pose passed on unchanged;

plus the terrain pieces placed or moved, and whether the camera was bumped. A frame
without a trusted pose changes no track and has no news. Nothing downstream reads the
observer's internals: the session takes the observation
(:meth:`tablesight.rules.session.Session.observe`), the match file records it.

Because the pose is re-solved every frame, a bumped camera leaves positions where they
are in table inches (and the observation says how far the camera moved).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np

from tablesight.calibration.camera import CameraModel
from tablesight.calibration.roster import RosterModel, TerrainPiece
from tablesight.calibration.setup import Setup
from tablesight.calibration.table import MM_PER_IN, TableSpec
from tablesight.rules.observation import LocatedModel, LocatedTerrain
from tablesight.vision.aruco import MarkerDetections
from tablesight.vision.frame import Frame
from tablesight.vision.locate import Located, Placed, locate
from tablesight.vision.sight import sight
from tablesight.vision.tablepose import TablePose
from tablesight.vision.tracking import Sighting, Tracked, Tracker

#: A camera that moved more than this between two frames was bumped (inches).
BUMP_IN = 0.25

#: The least corner error assumed, in pixels (sub-pixel refinement is no better).
MIN_CORNER_PX = 0.1


def centre_sigma_in(corners_px: np.ndarray, size_mm: float, reprojection_px: float) -> float:
    """Uncertainty of a marker's centre in inches, from the pose fit and the marker's size.

    A corner is off by about the pose's reprojection error (at least ``MIN_CORNER_PX``);
    the marker's side in pixels against its printed size turns that into inches, and the
    centre, the mean of four corners, halves it.
    """
    one = np.asarray(corners_px, dtype=float)[None]
    return centre_sigmas_in(one, [size_mm], reprojection_px)[0]


def centre_sigmas_in(
    corners_px: np.ndarray, sizes_mm: Sequence[float], reprojection_px: float
) -> list[float]:
    """``centre_sigma_in`` of N markers at once: corners (N, 4, 2), sizes (N,)."""
    sides = np.linalg.norm(corners_px - np.roll(corners_px, -1, axis=1), axis=2)
    px_per_in = sides.mean(axis=1) / (np.asarray(sizes_mm, dtype=float) / MM_PER_IN)
    return [float(v) for v in max(reprojection_px, MIN_CORNER_PX) / px_per_in / 2.0]


@dataclass(frozen=True)
class PoseHealth:
    """How far the table pose can be trusted: the anchors it was solved from, the
    root-mean-square distance between their corners as seen and as the pose projects them
    (pixels, and as inches on the table), how far the farthest anchor's centre is from
    where table.toml puts it (inches), the anchors left out because they disagree with the
    others (id, inches off), the anchors found turned from their stated heading (id,
    degrees counterclockwise), a line for each of those, and why the pose is not trusted
    (empty when it is: see ``tablesight.vision.tablepose``'s ``ANCHOR_OFF_IN`` and
    ``MAX_CORNER_ERROR_IN``)."""

    anchors_used: tuple[int, ...]
    reprojection_px: float
    reprojection_in: float = 0.0
    anchor_error_in: float = 0.0
    left_out: tuple[tuple[int, float], ...] = ()
    turned: tuple[tuple[int, int], ...] = ()
    warnings: tuple[str, ...] = ()
    problem: str = ""

    @property
    def healthy(self) -> bool:
        return not self.problem

    @classmethod
    def of(cls, pose: TablePose) -> PoseHealth:
        return cls(
            pose.anchors_used,
            pose.reprojection_px,
            pose.reprojection_in,
            pose.anchor_error_in,
            pose.left_out,
            pose.turned,
            pose.warnings,
            pose.problem,
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "healthy": self.healthy,
            "anchors_used": list(self.anchors_used),
            "reprojection_px": round(self.reprojection_px, 4),
            "reprojection_in": round(self.reprojection_in, 4),
            "anchor_error_in": round(self.anchor_error_in, 4),
            "left_out": [{"anchor": a, "off_in": round(off, 3)} for a, off in self.left_out],
            "turned": [{"anchor": a, "turned_deg": deg} for a, deg in self.turned],
            "warnings": list(self.warnings),
            "problem": self.problem,
        }


@dataclass(frozen=True)
class Observation:
    """Everything one frame says, in one value (see the module's docstring)."""

    t: float
    frame: int
    detections: MarkerDetections
    #: The table pose of this frame; None when too few anchors were seen.
    pose: TablePose | None
    #: Every model the tracker knows (seen in this frame or earlier), in the order first seen.
    models: tuple[LocatedModel, ...] = ()
    #: Terrain pieces placed in this frame: first seen, or moved by more than a bump.
    terrain: tuple[LocatedTerrain, ...] = ()
    #: How far the camera moved since the last frame with the table, when it was bumped.
    camera_shift_in: float | None = None
    bump_message: str = ""
    bump_limit_in: float = BUMP_IN
    #: Markers seen that belong to nobody in the roster, terrain or anchors.
    unknown_markers: tuple[int, ...] = field(default=())

    @property
    def table_seen(self) -> bool:
        return self.pose is not None

    @property
    def health(self) -> PoseHealth | None:
        if self.pose is None:
            return None
        return PoseHealth.of(self.pose)

    @property
    def pose_problem(self) -> str:
        """Why this frame's table pose is not trusted (nothing was placed from it)."""
        return self.pose.problem if self.pose is not None else ""


class Observer:
    """The referee's eye: one :meth:`observe` per frame, in time order."""

    def __init__(
        self,
        table: TableSpec,
        roster: list[RosterModel],
        camera: CameraModel | None = None,
        terrain: list[TerrainPiece] | None = None,
        tracker: Tracker | None = None,
    ) -> None:
        self.table = table
        self.roster = roster
        self.terrain = terrain or []
        self.camera = camera
        self.tracker = tracker or Tracker()
        self._model_of = {m.marker: m.id for m in roster}
        self._size_of = {m.marker: m.marker_size_mm for m in roster}
        self._terrain_spec = {t.id: t for t in self.terrain}
        self._camera_at: np.ndarray | None = None
        #: The tracker's last answer: the tracks a frame that updates none shows.
        self._tracked: tuple[Tracked, ...] = ()
        #: Where each terrain piece was last placed (its centroid), as the session has it.
        self._terrain_at: dict[str, tuple[float, float]] = {}
        #: Each terrain piece as the last frame that showed its marker placed it: the
        #: levels a model may stand on in a frame where the piece's marker is hidden.
        self._pieces: dict[str, Placed] = {}
        #: The camera scaled to each size of picture seen (see ``_camera_for``).
        self._scaled: dict[tuple[int, int], CameraModel] = {}
        #: The last detections, their pose and sightings: what a frame whose markers
        #: stand as they were (``fresh`` false) shows again.
        self._standing: (
            tuple[MarkerDetections, TablePose | None, list[Sighting], tuple[int, ...]] | None
        ) = None

    @classmethod
    def for_setup(cls, setup: Setup) -> Observer:
        """A new eye on the table the user's files describe."""
        return cls(setup.table, setup.roster, setup.camera, setup.terrain)

    def observe(
        self, frame: Frame, detections: MarkerDetections | None = None, fresh: bool = True
    ) -> Observation:
        """What ``frame`` shows: its markers ``detections`` (those the frame carries, found
        ahead, or else found here); a frame without a trusted table pose changes no track.

        ``fresh`` false says ``detections`` are the last frame's, standing (nothing in the
        picture changed where they are: :class:`~tablesight.vision.watch.Watcher`): the
        pose and the places are those worked out for them then, and only the tracks move
        on in time."""
        if not fresh and self._standing is not None and detections is self._standing[0]:
            found, pose, sightings, unknown = self._standing
            if pose is None or not pose.healthy:
                quiet = tuple(track.quiet() for track in self._tracked)
                return Observation(frame.t, frame.index, found, pose, self._models(quiet))
            self._tracked = self.tracker.update(frame.t, sightings)
            models = self._models(self._tracked)
            return Observation(frame.t, frame.index, found, pose, models, unknown_markers=unknown)
        found_ahead = detections if detections is not None else frame.detections
        camera = self._camera_for(frame.size)
        seen = sight(frame.gray, self.table, camera, detections=found_ahead)
        found, pose = seen.detections, seen.pose
        if pose is None or not pose.healthy:
            # no table this frame (a hand over the anchors), or a pose not trusted (the
            # observation carries it and its problem, for the session and the views): it
            # places nothing; the tracks as they were, no news
            self._standing = (found, pose, [], ())
            quiet = tuple(track.quiet() for track in self._tracked)
            return Observation(frame.t, frame.index, found, pose, self._models(quiet))
        shift, message = self._bump(pose)
        located = locate(
            found, self.table, pose, self.roster, self.terrain, tuple(self._pieces.values())
        )
        self._pieces.update((piece.id, piece) for piece in located.terrain)
        sightings = self._sightings(located, pose)
        unknown = tuple(located.unknown_markers)
        self._standing = (found, pose, sightings, unknown)
        self._tracked = self.tracker.update(frame.t, sightings)
        return Observation(
            frame.t,
            frame.index,
            found,
            pose,
            self._models(self._tracked),
            tuple(self._placed_terrain(located.terrain)),
            shift,
            message,
            unknown_markers=unknown,
        )

    def _camera_for(self, size: tuple[int, int]) -> CameraModel | None:
        """The camera's intrinsics for pictures of ``size``: calibrated at another size of
        the same shape (a 4K camera calibrated in its 1080p mode), they scale with it."""
        camera = self.camera
        if camera is None or tuple(camera.image_size) == size:
            return camera
        width, height = camera.image_size
        if abs(size[0] * height - size[1] * width) > 0.01 * size[0] * height:
            return camera  # another shape: not the same pictures; the pose's health says so
        scaled = self._scaled.get(size)
        if scaled is None:
            scaled = self._scaled[size] = camera.scaled_to(*size)
        return scaled

    def _sightings(self, located: Located, pose: TablePose) -> list[Sighting]:
        """Each located model as the tracker takes it, with its centre's uncertainty."""
        models = located.models
        corners = {m.id: m.corners_px for m in located.markers}
        sigmas = centre_sigmas_in(
            np.array([corners[m.marker] for m in models]).reshape(-1, 4, 2),
            [self._size_of[m.marker] for m in models],
            pose.reprojection_px,
        )
        return [Sighting(m.marker, m.pose, sigma) for m, sigma in zip(models, sigmas, strict=True)]

    def _models(self, tracked: tuple[Tracked, ...]) -> tuple[LocatedModel, ...]:
        """The tracker's tracks as located models: a move's uncertainty is the settled
        mean's."""
        return tuple(
            LocatedModel(
                self._model_of[track.id],
                track.pose,
                track.moved.sigma_in if track.moved is not None else track.sigma_in,
                track.state.value,
                track.news,
                track.unseen_s,
            )
            for track in tracked
        )

    def _placed_terrain(self, pieces: list[Placed]) -> list[LocatedTerrain]:
        """Terrain pieces when first seen, and again only when moved (by more than a
        bump's worth), not on every frame's noise."""
        out = []
        for piece in pieces:
            polygon = piece.polygon or []
            xy = np.asarray(polygon, dtype=float).mean(axis=0)
            at = (float(xy[0]), float(xy[1]))
            before = self._terrain_at.get(piece.id)
            if before is not None and np.hypot(at[0] - before[0], at[1] - before[1]) <= BUMP_IN:
                continue
            self._terrain_at[piece.id] = at
            spec = self._terrain_spec[piece.id]
            out.append(
                LocatedTerrain(
                    piece.id,
                    tuple((float(x), float(y)) for x, y in polygon),
                    spec.height,
                    tuple(spec.keywords),
                )
            )
        return out

    def _bump(self, pose: TablePose) -> tuple[float | None, str]:
        """How far the solved camera jumped since the last frame, when more than a bump."""
        if pose.rvec is None or pose.tvec is None:
            return None, ""
        r, _ = cv2.Rodrigues(pose.rvec)
        at = -r.T @ pose.tvec
        before, self._camera_at = self._camera_at, at
        if before is None:
            return None, ""
        shift = float(np.linalg.norm(at - before))
        if shift <= BUMP_IN:
            return None, ""
        return shift, (
            f"the camera moved {shift:.2f} in; positions are re-solved from the anchors "
            f"({', '.join(map(str, pose.anchors_used))})"
        )
