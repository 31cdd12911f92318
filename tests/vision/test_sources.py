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
from tablesight.vision.sources import FileSource, LiveSource, SourceError, open_source


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
