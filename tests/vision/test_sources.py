"""Frame sources: image folders and globs, video files, and a live HTTP MJPEG stream."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import cv2
import numpy as np
import pytest

from tablesight.rig.mjpeg import send_mjpeg
from tablesight.vision.decodepool import NewestDecoder
from tablesight.vision.sources import (
    BurstWait,
    FileSource,
    LiveSource,
    SourceError,
    StreamClock,
    open_source,
)


def picture(number: int, size: tuple[int, int] = (320, 240)) -> np.ndarray:
    """A frame whose brightness encodes its number (readable back after JPEG)."""
    image = np.zeros((size[1], size[0], 3), np.uint8)
    image[:, :] = (number * 10) % 250
    return image


def number_of(image: np.ndarray) -> int:
    return round(float(image.mean()) / 10)


def test_folder_and_glob_in_order(tmp_path: Path):
    for k in (2, 0, 1):
        cv2.imwrite(str(tmp_path / f"shot{k}.png"), picture(k))
    (tmp_path / "notes.txt").write_text("not an image")
    for spec in (str(tmp_path), str(tmp_path / "shot*.png")):
        frames = list(open_source(spec).frames())
        assert [number_of(f.image) for f in frames] == [0, 1, 2]
        assert [f.index for f in frames] == [0, 1, 2]


def test_video_file_every_frame_with_times(tmp_path: Path):
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"FFV1"), 10.0, (320, 240))
    for k in range(12):
        writer.write(picture(k))
    writer.release()
    frames = list(open_source(str(path)).frames())
    assert [number_of(f.image) for f in frames] == list(range(12))
    assert [round(f.t, 3) for f in frames[:3]] == [0.0, 0.1, 0.2]


@pytest.mark.parametrize(
    ("spec", "message"),
    [("nothing-here.mp4", "no such file or folder"), ("*.nomatch", "no files match")],
)
def test_bad_sources(tmp_path: Path, spec: str, message: str):
    with pytest.raises(SourceError, match=message):
        FileSource(str(tmp_path / spec))


def _jpeg(image: np.ndarray) -> bytes:
    ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])
    assert ok
    return jpeg.tobytes()


class _Stream(BaseHTTPRequestHandler):
    frames = 60

    def do_GET(self) -> None:
        send_mjpeg(self, (_jpeg(picture(k)) for k in range(self.frames)), fps=30)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def mjpeg_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/video.mjpg"
    server.shutdown()
    server.server_close()


@pytest.mark.slow
def test_http_mjpeg_stream_newest_frames_only(mjpeg_server: str):
    source = open_source(mjpeg_server)
    assert isinstance(source, LiveSource)
    try:
        seen = []
        for frame in source.frames(timeout_s=5.0):
            seen.append(number_of(frame.image))
            assert frame.image.shape == (240, 320, 3)
            time.sleep(0.1)  # a slow consumer: the source must skip, not queue
            if len(seen) == 5:
                break
        assert source.status == "live"
        assert source.granted is not None and source.granted[:2] == (320, 240)
        # newest frame each time: numbers increase, skipping what a slow reader missed
        assert seen == sorted(seen) and seen[-1] - seen[0] >= 8
        # the stream ends after 60 frames: the source says so and keeps trying
        deadline = time.monotonic() + 10
        while source.status != "camera lost, retrying" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert source.status == "camera lost, retrying"
    finally:
        source.close()


@pytest.mark.slow
def test_a_game_that_starts_reading_late_still_gets_the_first_frames(mjpeg_server: str):
    """The camera's first pictures arrive while the game is still starting; they wait as
    the camera sent them (JPEG, up to eight), not decoded to two pictures of which the
    older is dropped: a 4K camera lost its first two to four frames so."""
    source = open_source(mjpeg_server)
    assert isinstance(source, LiveSource)
    try:
        assert source.delivered.wait(5.0)
        time.sleep(0.1)  # the game starting: three or four frames at 30 fps
        first = next(iter(source.frames(timeout_s=5.0, decode=False)))
        assert number_of(first.image) == 0
        assert source.dropped == 0
    finally:
        source.close()


def test_a_streams_own_times_keep_a_bursts_frames_apart() -> None:
    """FFmpeg encoding the 10 fps sample live sends its first 4 s in 0.6 s (x264's
    look-ahead emptying, measured: frames 0-39 arrived 0.05-0.60 s after opening, each
    100 ms later in the stream's own time); the frames keep the stream's spacing, 99% of
    it, from where the first arrived."""
    clock = StreamClock()
    arrived = [0.05 + 0.55 * k / 39 for k in range(40)]
    times = [clock.time(a, 100.0 * k) for k, a in enumerate(arrived)]
    assert times == pytest.approx([0.05 + 0.099 * k for k in range(40)])
    # then frames arrive at the stream's rate, 100 ms apart: the lead over the arrivals
    # (3.911 - 0.60 = 3.311 s) is given back by 1 ms a frame, and gone after 3,311 frames
    t = times[-1]
    for k in range(1, 4001):
        t = clock.time(0.6 + 0.1 * k, 3900.0 + 100.0 * k)
        if k == 1000:
            assert t - (0.6 + 0.1 * k) == pytest.approx(3.311 - 1.0)
    assert t == pytest.approx(0.6 + 0.1 * 4000)  # on the arrivals again


def test_a_stream_without_times_or_with_a_stalled_or_slow_clock_follows_its_arrivals() -> None:
    arrivals = [0.1 * k for k in range(50)]
    for times in (
        [None] * 50,  # Motion JPEG over HTTP: no times
        [0.0] * 50,  # a clock that never moves (a webcam OpenCV gets no times from)
        [99.5 * k for k in range(50)],  # a clock 0.5% slow
        [100.5 * k for k in range(50)],  # 0.5% fast: 99% of its step is still less
        [float("nan")] * 25 + [-40.0] * 25,  # no number, or below zero
    ):
        clock = StreamClock()
        assert [clock.time(a, ms) for a, ms in zip(arrivals, times, strict=True)] == (
            pytest.approx(arrivals)
        )


def test_a_step_back_or_a_new_connection_moves_on_from_the_arrivals() -> None:
    clock = StreamClock()
    # an RTSP stream's first frames say 0, -100, -66.7, 0, 33.3 ms (measured): from the
    # arrivals until its clock steps forward (the last: 1.021 + 0.99 x 0.0333)
    steps = [(1.0, 0.0), (1.01, -100.0), (1.02, -66.7), (1.021, 0.0), (1.03, 33.3)]
    assert [clock.time(a, ms) for a, ms in steps] == pytest.approx(
        [1.0, 1.01, 1.02, 1.021, 1.05397], abs=1e-5
    )
    # a frame a little back (a decoder's concealed frame) follows the last at once
    assert clock.time(1.035, 0.0) == pytest.approx(1.05397, abs=1e-5)
    # a new connection whose first frame arrives before the last time given (a burst had
    # put the times ahead): 99% of the arrivals' step on (0.1 s), then the stream's steps
    clock = StreamClock()
    clock.time(0.0, 0.0)
    assert clock.time(0.5, 3500.0) == pytest.approx(0.99, abs=1e-9)  # at most 1 s a step
    clock.reconnected()
    assert clock.time(0.6, 40.0) == pytest.approx(1.089, abs=1e-9)
    assert clock.time(0.65, 140.0) == pytest.approx(1.188, abs=1e-9)
    # times only go forward
    assert clock.time(0.66, None) > 1.188


def test_frames_without_times_after_a_burst_keep_the_arrivals_spacing() -> None:
    """A stream put 3 s ahead by a burst, then lost, comes back without times (its first
    frames say none): its frames are 99 ms apart as they arrive 100 ms apart, not a
    microsecond apart until the arrivals catch up with the times."""
    clock = StreamClock()
    for k in range(31):  # 3 s of stream in 0.3 s
        t = clock.time(0.01 * k, 100.0 * k)
    assert t == pytest.approx(2.97)
    clock.reconnected()
    times = [clock.time(1.0 + 0.1 * k, None) for k in range(5)]
    # the first: 99% of the 0.7 s the arrivals moved on; then 99 ms a frame
    assert times == pytest.approx([2.97 + 0.693 + 0.099 * k for k in range(5)], abs=1e-9)


class _Counted(NewestDecoder):
    """A decoder that notes how long each wait for room was allowed."""

    def __init__(self) -> None:
        super().__init__(workers=1)
        self.waits: list[float] = []

    def wait_room(self, timeout_s: float) -> bool:
        self.waits.append(timeout_s)
        return super().wait_room(timeout_s)


def test_a_burst_waits_for_a_busy_referee_three_times_then_no_more() -> None:
    """Nobody takes the one frame in the decoder: a frame 0.15 s ahead of its arrival
    waits its 0.15 s; after three such waits while the referee takes frames (it is slower
    than the stream), no frame waits again on that connection. A frame 0.1 s ahead or
    less (a network's jitter) never waits."""
    decoder = _Counted()
    try:
        decoder.submit(0, 0.0, np.zeros((8, 8, 3), np.uint8))
        burst = BurstWait()
        burst.wait(decoder, 0.1, asked=True)
        for _ in range(5):
            burst.wait(decoder, 0.15, asked=True)
        assert decoder.waits == [0.15, 0.15, 0.15]
    finally:
        decoder.close()


def test_before_the_referee_asks_a_burst_waits_two_seconds_in_all() -> None:
    """While the game is still starting (not asking for frames), frames wait their own
    leads however often there is no room, until 2 s have gone on the connection."""
    decoder = _Counted()
    try:
        decoder.submit(0, 0.0, np.zeros((8, 8, 3), np.uint8))
        burst = BurstWait()
        for _ in range(8):
            burst.wait(decoder, 0.5, asked=False)
        # three of 0.5 s, then what is left of the 2 s (a little under 0.5), then none
        assert decoder.waits[:3] == [0.5, 0.5, 0.5] and 0.4 < decoder.waits[3] <= 0.5
        assert len(decoder.waits) <= 5 and sum(decoder.waits) <= 2.0 + 1e-9
        assert burst.waited_s >= 2.0
    finally:
        decoder.close()
