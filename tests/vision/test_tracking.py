"""The tracker on sequences of sightings with known truth (30 frames a second)."""

from __future__ import annotations

import math
import random

import pytest

from tablesight.rules.geometry import Pose
from tablesight.vision.tracking import Moved, Sighting, Tracked, Tracker, TrackState

FPS = 30.0


def sighting(marker: int, x: float, y: float, heading: float = 0.0, z: float = 0.0) -> Sighting:
    """A sighting of ``marker`` at that pose, with the default uncertainty."""
    return Sighting(marker, Pose(x, y, heading, z))


def moves(tracked: tuple[Tracked, ...]) -> list[Moved]:
    """The moves that finished in a frame, from ``Tracker.update``'s answer."""
    return [track.moved for track in tracked if track.moved is not None]


def run(frames: list[list[Sighting]], tracker: Tracker | None = None):
    tracker = tracker or Tracker()
    events = []
    for k, sightings in enumerate(frames):
        events += moves(tracker.update(k / FPS, sightings))
    return tracker, events


def noisy(rng: random.Random, marker: int, x: float, y: float, sigma: float = 0.01) -> Sighting:
    return sighting(marker, rng.gauss(x, sigma), rng.gauss(y, sigma), rng.gauss(90.0, 0.3))


def test_noise_never_moves_a_still_model():
    # 10 s of a still model seen with 0.01 in of noise: no move, and it settles at the truth
    rng = random.Random(1)
    tracker, events = run([[noisy(rng, 3, 12.0, 7.0)] for _ in range(300)])
    assert events == []
    track = tracker.tracks[3]
    assert track.state is TrackState.SETTLED
    assert math.dist(track.pose.xy, (12.0, 7.0)) < 0.01


def test_a_real_move_is_one_event_with_its_numbers():
    # still at (5, 5) for 1 s, slides 3 in along x over 1 s, still at (8, 5) for 1 s
    rng = random.Random(2)
    frames = [[noisy(rng, 1, 5.0, 5.0)] for _ in range(30)]
    frames += [[noisy(rng, 1, 5.0 + 3.0 * k / 30, 5.0)] for k in range(1, 31)]
    frames += [[noisy(rng, 1, 8.0, 5.0)] for _ in range(30)]
    _, events = run(frames)
    assert len(events) == 1
    move = events[0]
    assert math.dist(move.from_pose.xy, (5.0, 5.0)) < 0.01
    assert math.dist(move.to_pose.xy, (8.0, 5.0)) < 0.01
    assert move.distance_in == pytest.approx(3.0, abs=0.02)
    # it stops at frame 59 (t = 59/30 s) and has settled 0.3 s (settle_s) later
    assert move.t == pytest.approx(59 / FPS + 0.3, abs=1.01 / FPS)
    assert move.sigma_in < 0.01  # averaged over the settling window


def test_a_move_is_followed_without_lag():
    # during a 4 in/s slide the track stays on the latest sighting
    tracker = Tracker()
    for k in range(20):
        tracker.update(k / FPS, [sighting(1, 2.0 + 4.0 * k / FPS, 3.0)])
        if k > 1:
            assert tracker.tracks[1].pose.x == pytest.approx(2.0 + 4.0 * k / FPS)


def test_a_slow_slide_is_a_move_too():
    # 0.02 in a frame (inside the 0.05 deadband) for 3 s: 1.8 in, then still
    frames = [[sighting(4, 10.0, 10.0)] for _ in range(15)]
    frames += [[sighting(4, 10.0 + 0.02 * k, 10.0)] for k in range(1, 91)]
    frames += [[sighting(4, 11.8, 10.0)] for _ in range(15)]
    _, events = run(frames)
    assert len(events) == 1
    assert events[0].distance_in == pytest.approx(1.8, abs=0.01)


def test_a_hand_over_the_table_is_no_move():
    # seen 1 s, hidden 1 s, seen again where it was: nothing happened
    rng = random.Random(3)
    frames = [[noisy(rng, 2, 20.0, 15.0)] for _ in range(30)]
    frames += [[] for _ in range(30)]
    frames += [[noisy(rng, 2, 20.0, 15.0)] for _ in range(30)]
    tracker, events = run(frames[:45])
    assert tracker.tracks[2].state is TrackState.HIDDEN
    assert tracker.tracks[2].pose.xy == pytest.approx((20.0, 15.0), abs=0.01)  # keeps its pose
    _, events = run(frames)
    assert events == []


def test_hidden_then_seen_elsewhere_has_moved():
    # the hand picks the model up and puts it down 4 in away
    frames = [[sighting(2, 20.0, 15.0)] for _ in range(30)]
    frames += [[] for _ in range(30)]
    frames += [[sighting(2, 24.0, 15.0)] for _ in range(30)]
    _, events = run(frames)
    assert [(e.from_pose, e.to_pose) for e in events] == [(Pose(20.0, 15.0), Pose(24.0, 15.0))]


def test_a_marker_first_seen_is_not_a_move():
    _, events = run([[sighting(9, 1.0, 1.0)] for _ in range(30)])
    assert events == []


def test_bad_settings_say_how_to_fix_them():
    with pytest.raises(ValueError, match="smoothing must be in \\(0, 1\\], got 0"):
        Tracker(smoothing=0)


@pytest.mark.parametrize("fps", [10.0, 15.0, 24.0, 25.0, 29.97, 30.0, 60.0])
def test_a_still_model_settles_at_any_frame_rate_and_with_jitter(fps):
    # Timestamps of a live camera: 2 ms of jitter on each frame. A model put down at
    # (12, 7) after a move from (5, 7) settles once it has been still for 0.3 s: the first
    # frame at least 0.3 s after it was put down, and the move is 7 in.
    rng = random.Random(4)
    tracker = Tracker()
    times = [k / fps + rng.uniform(-0.002, 0.002) for k in range(int(3 * fps))]
    put_down = next(k for k, t in enumerate(times) if t >= 1.0)
    events = []
    for k, t in enumerate(times):
        x = 5.0 if k < put_down else 12.0
        events += [(k, e) for e in moves(tracker.update(t, [sighting(1, x, 7.0, 90.0)]))]
    [(k, move)] = events  # settling where first seen is no move; then the move

    assert move.distance_in == pytest.approx(7.0)
    assert times[k] - times[put_down] >= 0.3 - 1e-9
    assert times[k - 1] - times[put_down] < 0.3  # not a frame later than it could be
    assert tracker.tracks[1].state is TrackState.SETTLED


def test_a_move_up_onto_a_tower_keeps_its_height():
    # on the table at (5, 5) for 1 s, lifted onto a 5 in tower at (9, 5) and left there 1 s
    frames = [[sighting(2, 5.0, 5.0, 0.0, 0.0)] for _ in range(30)]
    frames += [[sighting(2, 9.0, 5.0, 0.0, 5.0)] for _ in range(30)]
    tracker, events = run(frames)
    assert len(events) == 1
    assert events[0].to_pose.xy == pytest.approx((9.0, 5.0)) and events[0].to_pose.z == 5.0
    assert tracker.tracks[2].pose.z == 5.0


def test_the_news_of_a_track_from_what_update_returns():
    # Frames every 1/8 s (times exact in binary); settles after 0.25 s still, reported
    # hidden after 1 s unseen, lost after more than 2 s.
    tracker = Tracker(settle_s=0.25, hidden_s=1.0, lost_s=2.0)
    at_start, moved_to = sighting(5, 10.0, 10.0), sighting(5, 14.0, 10.0)
    seen = {k: [at_start] for k in range(5)}  # t 0 .. 0.5: still at (10, 10)
    seen |= {k: [moved_to] for k in range(5, 8)}  # t 0.625 .. 0.875: put down at (14, 10)
    seen |= {30: [moved_to]}  # t 3.75: seen again where it was left
    said: dict[int, tuple[str, ...]] = {}
    states: list[str] = []
    answers: dict[int, Tracked] = {}
    for k in range(40):
        [track] = tracker.update(k / 8, seen.get(k, []))
        states.append(track.state.value)
        answers[k] = track
        if track.news:
            said[k] = track.news
    assert said == {
        2: ("first_seen",),  # t 0.25: seen since t 0, every sighting the same
        7: ("moved",),  # t 0.875: still at (14, 10) since t 0.625
        15: ("hidden",),  # t 1.875: last seen at 0.875, 1 s ago
        24: ("lost",),  # t 3.0: unseen 2.125 s (at 2.875 it was 2.0, not more)
        38: ("hidden",),  # t 4.75: seen again at 3.75 (no news), then unseen for 1 s
    }
    assert states[:2] == ["moving"] * 2 and states[2:5] == ["settled"] * 3
    assert states[5:7] == ["moving"] * 2 and states[7] == "settled"
    assert states[8:30] == ["hidden"] * 22 and states[30] == "settled"
    assert states[31:] == ["hidden"] * 9
    move = answers[7].moved
    assert move is not None
    assert (move.from_pose, move.to_pose, move.t) == (Pose(10.0, 10.0), Pose(14.0, 10.0), 0.875)
    # the settled mean of 3 sightings (t 0.625, 0.75, 0.875), each 0.01 in
    assert move.sigma_in == pytest.approx(0.01 / math.sqrt(3))
    assert answers[24].unseen_s == 2.125 and answers[15].unseen_s == 0.0
    assert answers[15].pose == Pose(14.0, 10.0)  # hidden, it keeps its pose
    assert all(answers[k].moved is None for k in answers if k != 7)


@pytest.mark.parametrize(
    ("hidden_s", "lost_s"),
    [(-1.0, 10.0), (2.0, 1.0), (1.0, math.inf), (math.nan, 10.0)],
)
def test_hold_times_that_make_no_sense_are_refused(hidden_s, lost_s):
    with pytest.raises(ValueError, match="0 <= hidden_s <= lost_s, got hidden_s="):
        Tracker(hidden_s=hidden_s, lost_s=lost_s)
