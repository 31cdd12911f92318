"""What a picture shows of the table: its markers (pixels), then the table pose solved on them.

Every part that looks at a picture goes through here: the observer (each frame of a game),
the ``detect`` command, the doctor, the set-up page and the replay's picture. Markers are
found by :func:`detect` with a detector of the calling thread's own (one per dictionary and
thread, made once: the decode threads, the game's and each web request's), and the pose by
``TablePose.solve`` on them::

    seen = sight(picture, table, camera)
    seen.detections  # MarkerDetections, pixels
    seen.pose  # TablePose, or None when it cannot be solved (seen.why says why)

Markers found already (on a decode thread, ahead of the frame's turn) are passed in as
``detections``, and the picture is not looked at again.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from tablesight.calibration.camera import CameraModel
from tablesight.calibration.table import TableSpec
from tablesight.vision.aruco import MarkerDetections, MarkerDetector
from tablesight.vision.tablepose import PoseError, TablePose

#: Each thread's detectors, by dictionary (gone with the thread).
_local = threading.local()


def detector(dictionary: str | int) -> MarkerDetector:
    """The calling thread's detector for ``dictionary`` (an ``ArucoDetector`` is not to be
    shared between threads), made the first time the thread asks."""
    own: dict[str | int, MarkerDetector] = _local.__dict__.setdefault("detectors", {})
    found = own.get(dictionary)
    if found is None:
        found = own[dictionary] = MarkerDetector(dictionary)
    return found


def detect(picture: np.ndarray, dictionary: str | int) -> MarkerDetections:
    """The markers of ``dictionary`` in a BGR or grey picture."""
    return detector(dictionary).detect(picture)


@dataclass(frozen=True)
class Sight:
    """A picture's markers and the table pose solved on them (``None``, and ``why``, when
    it cannot be: too few anchors seen, or no table asked for)."""

    detections: MarkerDetections
    pose: TablePose | None = None
    why: str = ""


def sight(
    picture: np.ndarray,
    table: TableSpec | None,
    camera: CameraModel | None = None,
    *,
    dictionary: str | int | None = None,
    detections: MarkerDetections | None = None,
) -> Sight:
    """Detect the picture's markers (unless ``detections`` found them already), then solve
    the pose of ``table`` on them (none without a table).

    Markers are of ``dictionary``, by default the table's. A pose that cannot be solved
    (a :class:`~tablesight.vision.tablepose.PoseError`) is no pose and its message; a
    pose solved but not trusted is returned with its ``problem``, for the caller to judge.
    """
    if detections is None:
        if dictionary is None:
            if table is None:
                raise ValueError("sight: give a table or a dictionary to detect markers of")
            dictionary = table.table.dictionary
        detections = detect(picture, dictionary)
    if table is None:
        return Sight(detections)
    try:
        return Sight(detections, TablePose.solve(detections, table, camera))
    except PoseError as exc:
        return Sight(detections, None, str(exc))
