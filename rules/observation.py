"""What the camera side tells the session about one frame: the observation.

A frame becomes one observation (built by :class:`tablesight.vision.observe.Observer`); the session
takes it whole (:meth:`tablesight.rules.session.Session.observe`) and returns the events it causes.
This module holds the part of an observation the session reads, as plain numbers in table
inches: every model the tracker knows, with its pose (x, y, heading and height z) and
uncertainty, and what the tracker concluded about it in this frame; the terrain pieces
placed or moved; whether the table was seen at all, whether its pose is trusted, and
whether the camera was bumped.

The camera side's own observation (with the detections in pixels and the table pose)
satisfies :class:`Observed` structurally, so this package needs nothing from it.

>>> still = LocatedModel("krotos", Pose(10.0, 5.0, 90.0, 4.0), 0.01, "settled")
>>> still.pose.z
4.0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from tablesight.rules.geometry import Pose

#: What a model's track is doing: moving (seen, not yet still), settled, or hidden.
TrackName = Literal["moving", "settled", "hidden"]
#: The tracks' states, in the order a match file lists them.
TRACK_NAMES: tuple[TrackName, ...] = ("settled", "moving", "hidden")

#: What the tracker concluded about a model in this frame:
#: ``first_seen`` it settled for the first time (where it stands, not a move);
#: ``moved`` it settled somewhere other than where it last settled (a finished move);
#: ``hidden`` it has been out of sight long enough to matter
#: (``tablesight.vision.tracking.HIDDEN_S``:
#: a marker dropping out for a frame or two is not news); ``lost`` out of sight too long.
News = Literal["first_seen", "moved", "hidden", "lost"]


@dataclass(frozen=True)
class LocatedModel:
    """A model where the camera has it: its pose in table inches (z is the height its base
    stands at), the centre's uncertainty (inches, one standard deviation), its track's state,
    and this frame's news about it."""

    id: str
    pose: Pose
    sigma_in: float
    track: TrackName
    news: tuple[News, ...] = ()
    #: With ``lost``: seconds since it was last seen.
    unseen_s: float = 0.0

    def has(self, news: News) -> bool:
        return news in self.news


@dataclass(frozen=True)
class LocatedTerrain:
    """A terrain piece placed (first seen, or moved) in this frame: its footprint in table
    inches, its height and keywords."""

    id: str
    polygon: tuple[tuple[float, float], ...]
    height_in: float
    keywords: tuple[str, ...] = ()


class Observed(Protocol):
    """The part of an observation the session reads."""

    @property
    def t(self) -> float: ...
    @property
    def frame(self) -> int: ...
    @property
    def table_seen(self) -> bool: ...
    @property
    def pose_problem(self) -> str:
        """Why the table pose of this frame is not trusted; empty when it is."""
        ...

    @property
    def camera_shift_in(self) -> float | None: ...
    @property
    def bump_message(self) -> str: ...
    @property
    def bump_limit_in(self) -> float: ...
    @property
    def models(self) -> Sequence[LocatedModel]: ...
    @property
    def terrain(self) -> Sequence[LocatedTerrain]: ...
