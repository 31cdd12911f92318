"""Tracks of markers in table inches: smoothed, settled, hidden, moved, and the news of each.

Identity is the marker id. Each frame's sightings (already in table inches, so a bumped
camera changes nothing here) update one track per marker:

* noise must not move a still model: a sighting within ``deadband_in`` of the track
  only nudges it (exponential smoothing); one further away is a real move and the track
  jumps to it at once, so a move is followed without lag;
* a track is ``settled`` once every sighting of the last ``settle_s`` seconds lies within
  ``still_in`` of their mean; its settled pose is that mean (noise averages out);
* a marker not seen is ``hidden`` and keeps its last pose: a hand over the table is
  never a move. Seen again near where it was, it is simply settled again; seen
  elsewhere, it moved.

``Tracker.update(t, sightings)`` returns every track (in the order first seen) as a
:class:`Tracked` value with this frame's ``news``: ``first_seen`` when it first settles,
``moved`` each time it settles somewhere other than where it last settled (with the
finished :class:`Moved`), ``hidden`` once it has been unseen for ``hidden_s`` seconds and
``lost`` once for more than ``lost_s``; each said once, and again only after it is seen.

>>> tracker = Tracker()
>>> for frame in range(12):
...     for track in tracker.update(frame / 30, [Sighting(7, Pose(10.0, 5.0, 90.0))]):
...         if track.news:
...             print(frame, track.id, track.state.value, track.news)
9 7 settled ('first_seen',)
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Literal

from tablesight.rules.geometry import Pose

#: A model unseen for this long (seconds) is reported hidden. A still marker drops out of
#: detection for a frame or two now and then (glare, motion blur as the camera settles
#: after a bump, a finger passing), which is not news: at 30 fps a second is 30 frames,
#: far beyond such a dropout, while a model lifted by a hand stays unseen for longer (a
#: carry takes a second or more). The track is hidden at once all the same (a hand over
#: the table is never a move); only the report waits.
HIDDEN_S = 1.0

#: A model hidden for longer than this (seconds) is reported lost.
LOST_S = 10.0

#: What a frame may say about a track (``tablesight.rules.observation.News``).
TrackNews = Literal["first_seen", "moved", "hidden", "lost"]


class TrackState(Enum):
    MOVING = "moving"
    SETTLED = "settled"
    HIDDEN = "hidden"


@dataclass(frozen=True)
class Sighting:
    """One marker seen in one frame: its pose in table inches (centre, heading in degrees,
    height) and the uncertainty of the centre (inches, one standard deviation)."""

    id: int
    pose: Pose
    sigma_in: float = 0.01


@dataclass(frozen=True)
class Moved:
    """A marker that settled somewhere new: from its last settled pose to this one (whose
    ``z`` is the height it now stands at), with the uncertainty of the new centre."""

    id: int
    t: float
    from_pose: Pose
    to_pose: Pose
    sigma_in: float

    @property
    def distance_in(self) -> float:
        """Horizontal distance from the old centre to the new, in inches."""
        return math.dist(self.from_pose.xy, self.to_pose.xy)


@dataclass
class Track:
    """What is known of one marker (the tracker's own, changed in place)."""

    id: int
    #: Smoothed, or the settled mean; ``z`` the latest sighting's.
    pose: Pose
    sigma_in: float
    state: TrackState = TrackState.MOVING
    last_seen: float = 0.0
    #: Where it last settled (None until it first has).
    settled: Pose | None = None
    recent: deque[tuple[float, float, float, float]] = field(default_factory=deque)
    #: Told where it stands (first seen or moved), told hidden and told lost (until seen).
    told_placed: bool = False
    told_hidden: bool = False
    told_lost: bool = False


@dataclass(frozen=True)
class Tracked:
    """One track as a frame leaves it: its pose in table inches (smoothed, or the settled
    mean), the centre's uncertainty (inches), its state, and this frame's news: with
    ``moved``, the finished move (its uncertainty averaged over the settling window); with
    ``lost``, how long it has been unseen (seconds)."""

    id: int
    pose: Pose
    sigma_in: float
    state: TrackState
    news: tuple[TrackNews, ...] = ()
    moved: Moved | None = None
    unseen_s: float = 0.0

    def quiet(self) -> Tracked:
        """The same track with no news (as a frame that updates no track shows it)."""
        return replace(self, news=(), moved=None, unseen_s=0.0)


def _angle_mean(degrees: Iterable[float]) -> float:
    values = list(degrees)
    s = sum(math.sin(math.radians(d)) for d in values)
    c = sum(math.cos(math.radians(d)) for d in values)
    return math.degrees(math.atan2(s, c)) % 360.0


class Tracker:
    """One ``update(t, sightings)`` per frame; returns every track with its news."""

    def __init__(
        self,
        deadband_in: float = 0.05,
        still_in: float = 0.03,
        settle_s: float = 0.3,
        smoothing: float = 0.2,
        hidden_s: float = HIDDEN_S,
        lost_s: float = LOST_S,
    ) -> None:
        if not 0.0 < smoothing <= 1.0:
            raise ValueError(f"Tracker: smoothing must be in (0, 1], got {smoothing}")
        if still_in <= 0 or deadband_in <= 0 or settle_s <= 0:
            raise ValueError(
                "Tracker: deadband_in, still_in and settle_s must be positive, got "
                f"{deadband_in}, {still_in}, {settle_s}"
            )
        if not (math.isfinite(hidden_s) and math.isfinite(lost_s) and 0 <= hidden_s <= lost_s):
            raise ValueError(
                "Tracker: hidden_s and lost_s (seconds unseen before a model is reported "
                "hidden, then lost) must be finite with 0 <= hidden_s <= lost_s, got "
                f"hidden_s={hidden_s}, lost_s={lost_s}"
            )
        self.deadband_in = deadband_in
        self.still_in = still_in
        self.settle_s = settle_s
        self.smoothing = smoothing
        self.hidden_s = hidden_s
        self.lost_s = lost_s
        self.tracks: dict[int, Track] = {}

    def update(self, t: float, sightings: Iterable[Sighting]) -> tuple[Tracked, ...]:
        """Feed one frame taken at ``t`` seconds; every track, in the order first seen,
        with what this frame says about it."""
        seen: set[int] = set()
        moved: dict[int, Moved] = {}
        for s in sightings:
            if s.id in seen:
                continue  # a marker seen twice in one frame: keep the first sighting
            seen.add(s.id)
            track = self.tracks.get(s.id)
            if track is None:
                track = Track(s.id, s.pose, s.sigma_in, last_seen=t)
                self.tracks[s.id] = track
            event = self._observe(track, t, s)
            if event is not None:
                moved[s.id] = event
        for track in self.tracks.values():
            if track.id not in seen and track.state is not TrackState.HIDDEN:
                track.state = TrackState.HIDDEN
                track.recent.clear()
        return tuple(self._news(track, t, moved.get(track.id)) for track in self.tracks.values())

    def _news(self, track: Track, t: float, move: Moved | None) -> Tracked:
        """The track as this frame leaves it, with its news."""
        news: list[TrackNews] = []
        unseen = t - track.last_seen
        if move is not None:
            news.append("moved")
            track.told_placed = True
        if track.state is TrackState.HIDDEN:
            if unseen >= self.hidden_s - 1e-9 and not track.told_hidden:
                track.told_hidden = True
                news.append("hidden")
            if unseen > self.lost_s and not track.told_lost:
                track.told_lost = True
                news.append("lost")
        else:
            track.told_hidden = track.told_lost = False
            if track.state is TrackState.SETTLED and not track.told_placed:
                track.told_placed = True
                news.append("first_seen")
        return Tracked(
            track.id,
            track.pose,
            track.sigma_in,
            track.state,
            tuple(news),
            move,
            unseen if "lost" in news else 0.0,
        )

    def _observe(self, track: Track, t: float, s: Sighting) -> Moved | None:
        # A settled track is held to where it settled, so that a slow slide (each frame's
        # step inside the deadband) still counts as a move.
        now, was = s.pose, track.pose
        ref = track.settled if track.state is TrackState.SETTLED and track.settled else was
        jump = math.dist(ref.xy, now.xy)
        if jump > self.deadband_in or track.state is TrackState.HIDDEN:
            # A real move (or a reappearance): follow it at once.
            track.pose = now
            if jump > self.deadband_in:
                track.state = TrackState.MOVING
                track.recent.clear()
            elif track.state is TrackState.HIDDEN:
                track.state = TrackState.SETTLED if track.settled else TrackState.MOVING
        else:
            a = self.smoothing
            turn = (now.heading - was.heading + 180.0) % 360.0 - 180.0
            track.pose = Pose(
                was.x + a * (now.x - was.x),
                was.y + a * (now.y - was.y),
                (was.heading + a * turn) % 360.0,
                now.z,
            )
        track.sigma_in, track.last_seen = s.sigma_in, t
        track.recent.append((t, now.x, now.y, now.heading))
        # Keep the newest sighting at least ``settle_s`` old, and all after it: the window
        # then spans the settling time at any frame rate, with any timing jitter.
        while len(track.recent) >= 2 and track.recent[1][0] <= t - self.settle_s + 1e-9:
            track.recent.popleft()
        if track.state is TrackState.MOVING and self._still(track, t):
            return self._settle(track, t)
        return None

    def _still(self, track: Track, t: float) -> bool:
        """Seen for ``settle_s`` seconds, every sighting within ``still_in`` of the mean."""
        if not track.recent or track.recent[0][0] > t - self.settle_s + 1e-9:
            return False
        mx = sum(r[1] for r in track.recent) / len(track.recent)
        my = sum(r[2] for r in track.recent) / len(track.recent)
        return all(math.dist((r[1], r[2]), (mx, my)) <= self.still_in for r in track.recent)

    def _settle(self, track: Track, t: float) -> Moved | None:
        n = len(track.recent)
        track.pose = Pose(
            sum(r[1] for r in track.recent) / n,
            sum(r[2] for r in track.recent) / n,
            _angle_mean(r[3] for r in track.recent),
            track.pose.z,
        )
        track.state = TrackState.SETTLED
        before, track.settled = track.settled, track.pose
        if before is None or math.dist(before.xy, track.pose.xy) <= self.deadband_in:
            return None  # first seen here, or back where it was
        return Moved(track.id, t, before, track.pose, track.sigma_in / math.sqrt(n))
