"""Frames in, referee events out: detect, solve the table pose, map, track, judge.

One ``Pipeline.process(frame)`` per frame. The table pose is re-solved from whatever
anchors each frame shows, so when the camera is bumped positions stay where they are in
table inches (and a ``camera_bumped`` event says so); the tracker turns sightings into
finished moves, and the session judges them.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.table import MM_PER_IN, TableSpec
from rules.geometry import Pose
from rules.session import Event, Session
from vision.aruco import MarkerDetector
from vision.locate import locate
from vision.roster import RosterModel, TerrainPiece
from vision.sources import Frame
from vision.tablepose import PoseError, TablePose
from vision.tracking import Sighting, Tracker, TrackState

#: A camera that moved more than this between two frames was bumped (inches).
BUMP_IN = 0.25

#: A model hidden for longer than this (seconds) is reported lost.
LOST_S = 10.0


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
    return (max(reprojection_px, MIN_CORNER_PX) / px_per_in / 2.0).tolist()


class Pipeline:
    """The referee's eye: turns frames into session events."""

    def __init__(
        self,
        table: TableSpec,
        roster: list[RosterModel],
        session: Session,
        camera: CameraModel | None = None,
        terrain: list[TerrainPiece] | None = None,
        tracker: Tracker | None = None,
    ) -> None:
        self.table = table
        self.roster = roster
        self.terrain = terrain or []
        self.session = session
        self.camera = camera
        self.tracker = tracker or Tracker()
        self.detector = MarkerDetector(table.table.dictionary)
        self.model_of = {m.marker: m.id for m in roster}
        self._size_of = {m.marker: m.marker_size_mm for m in roster}
        self._camera_at: np.ndarray | None = None
        #: The table pose of the last frame that showed enough anchors.
        self.pose: TablePose | None = None
        self._hidden: set[int] = set()
        self._lost: set[int] = set()
        #: Where each terrain piece was last placed in the session (its centroid).
        self._terrain_at: dict[str, tuple[float, float]] = {}
        self._terrain_spec = {t.id: t for t in self.terrain}

    def process(self, frame: Frame) -> list[Event]:
        found = self.detector.detect(frame.image)
        try:
            pose = TablePose.solve(found, self.table, self.camera)
        except PoseError:
            return []  # no table this frame (a hand over the anchors): nothing to say
        self.pose = pose
        events = self._bumped(frame, pose)
        located = locate(found, self.table, pose, self.roster, self.terrain)
        for piece in located.terrain:
            self._place_terrain(piece.id, piece.polygon or [])
        corners = {m.id: m.corners_px for m in located.markers}
        models = located.models
        sigmas = centre_sigmas_in(
            np.array([corners[m.marker] for m in models]).reshape(-1, 4, 2),
            [self._size_of[m.marker] for m in models],
            pose.reprojection_px,
        )
        sightings = [
            Sighting(m.marker, m.x, m.y, m.heading, m.z, sigma)
            for m, sigma in zip(models, sigmas, strict=True)
        ]
        for move in self.tracker.update(frame.t, sightings):
            model_id = self.model_of[move.id]
            to = Pose(move.to_xy[0], move.to_xy[1], move.to_heading)
            events += self.session.moved(frame.t, frame.index, model_id, to, move.sigma_in)
        for marker, track in self.tracker.tracks.items():
            model_id = self.model_of[marker]
            if track.state is TrackState.HIDDEN:
                if marker not in self._hidden:
                    self._hidden.add(marker)
                    events += self.session.hidden(frame.t, frame.index, model_id)
                unseen = frame.t - track.last_seen
                if unseen > LOST_S and marker not in self._lost:
                    self._lost.add(marker)
                    events += self.session.lost(frame.t, frame.index, model_id, unseen)
                continue
            self._hidden.discard(marker)
            self._lost.discard(marker)
            if track.state is TrackState.SETTLED and model_id not in self.session.poses:
                # first seen: where it stands, not a move
                self.session.seen(model_id, Pose(track.x, track.y, track.heading), track.sigma_in)
        return events

    def _place_terrain(self, terrain_id: str, polygon: list[tuple[float, float]]) -> None:
        """Tell the session where a terrain piece stands: when first seen, and again only
        when it has been moved (by more than a bump's worth), not on every frame's noise."""
        xy = np.asarray(polygon, dtype=float).mean(axis=0)
        at = (float(xy[0]), float(xy[1]))
        before = self._terrain_at.get(terrain_id)
        if before is not None and np.hypot(at[0] - before[0], at[1] - before[1]) <= BUMP_IN:
            return
        self._terrain_at[terrain_id] = at
        spec = self._terrain_spec[terrain_id]
        self.session.place_terrain(
            terrain_id, [list(p) for p in polygon], spec.height, list(spec.keywords)
        )

    def _bumped(self, frame: Frame, pose: TablePose) -> list[Event]:
        """A ``camera_bumped`` event when the solved camera jumped since the last frame."""
        if pose.rvec is None or pose.tvec is None:
            return []
        r, _ = cv2.Rodrigues(pose.rvec)
        at = -r.T @ pose.tvec
        before, self._camera_at = self._camera_at, at
        if before is None:
            return []
        shift = float(np.linalg.norm(at - before))
        if shift <= BUMP_IN:
            return []
        return self.session.camera_bumped(
            frame.t,
            frame.index,
            f"the camera moved {shift:.2f} in; positions are re-solved from the anchors "
            f"({', '.join(map(str, pose.anchors_used))})",
            shift,
            BUMP_IN,
        )
