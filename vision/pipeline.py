"""Frames in, referee events out: detect, solve the table pose, map, track, judge.

One ``Pipeline.process(frame)`` per frame. The table pose is re-solved from whatever
anchors each frame shows, so when the camera is bumped positions stay where they are in
table inches (and a ``camera_bumped`` event says so); the tracker turns sightings into
finished moves, and the session judges them.
"""

from __future__ import annotations

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.table import PoseError, TablePose, TableSpec
from rules.geometry import Pose
from rules.session import Event, Session
from vision.aruco import MarkerDetector
from vision.locate import locate
from vision.roster import RosterModel, TerrainPiece
from vision.sources import Frame
from vision.tracking import Sighting, Tracker, TrackState

#: A camera that moved more than this between two frames was bumped (inches).
BUMP_IN = 0.25


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
        self._camera_at: np.ndarray | None = None
        #: The table pose of the last frame that showed enough anchors.
        self.pose: TablePose | None = None
        self._hidden: set[int] = set()

    def process(self, frame: Frame) -> list[Event]:
        found = self.detector.detect(frame.image)
        try:
            pose = TablePose.solve(found, self.table, self.camera)
        except PoseError:
            return []  # no table this frame (a hand over the anchors): nothing to say
        self.pose = pose
        events = self._bumped(frame, pose)
        located = locate(found, self.table, pose, self.roster, self.terrain)
        sightings = [Sighting(m.marker, m.x, m.y, m.heading, m.z, 0.01) for m in located.models]
        for move in self.tracker.update(frame.t, sightings):
            model_id = self.model_of[move.id]
            to = Pose(move.to_xy[0], move.to_xy[1], move.to_heading)
            events += self.session.moved(frame.t, frame.index, model_id, to)
        for marker, track in self.tracker.tracks.items():
            model_id = self.model_of[marker]
            if track.state is TrackState.HIDDEN:
                if marker not in self._hidden:
                    self._hidden.add(marker)
                    events += self.session.hidden(frame.t, frame.index, model_id)
                continue
            self._hidden.discard(marker)
            if track.state is TrackState.SETTLED and model_id not in self.session.poses:
                # first seen: where it stands, not a move
                self.session.seen(model_id, Pose(track.x, track.y, track.heading))
        return events

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
        event = Event(
            frame.t,
            frame.index,
            "camera_bumped",
            f"the camera moved {shift:.2f} in; positions are re-solved from the anchors "
            f"({', '.join(map(str, pose.anchors_used))})",
            measured=shift,
            limit=BUMP_IN,
        )
        self.session.events.append(event)
        return [event]
