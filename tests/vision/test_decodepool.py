"""The decode pool: every frame of a file in order, as cv2.VideoCapture decodes it; a live
camera's frames decoded as they arrive, the newest kept; markers detected ahead."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from tablesight.rig.poolbench import packets as read_packets
from tablesight.rig.webcam import timed_pictures
from tablesight.vision.aruco import MarkerDetections, MarkerDetector
from tablesight.vision.decodepool import NewestDecoder, read_ahead
from tablesight.vision.sight import detect
from tablesight.vision.sources import FileSource


def _clip(path: Path, n: int = 20, fourcc: str = "MJPG") -> Path:
    """``n`` 320 x 240 frames, each with its number drawn large and an ArUco marker."""
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_250)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*fourcc), 30.0, (320, 240))
    assert writer.isOpened()
    for k in range(n):
        image = np.full((240, 320, 3), 255, np.uint8)
        marker = cv2.aruco.generateImageMarker(dictionary, 7, 80)
        image[20 + k : 100 + k, 200:280] = marker[:, :, None]
        cv2.putText(image, str(k), (20, 200), cv2.FONT_HERSHEY_SIMPLEX, 3, (0, 0, 255), 6)
        writer.write(image)
    writer.release()
    return path


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_every_frame_in_order_with_the_pixels_videocapture_gives(tmp_path, workers):
    clip = _clip(tmp_path / "clip.avi")
    expected = timed_pictures(clip)
    packets = read_packets(clip)
    got = list(read_ahead(str(clip), workers=workers))
    assert [d.index for d in got] == list(range(len(expected))) and len(got) == 20
    for d, (t, image) in zip(got, expected, strict=True):
        assert d.t == pytest.approx(t, abs=1e-6)
        # libjpeg and FFmpeg's decoder upsample colour a little differently (at the edges
        # of red on white, by tens of levels); brightness, what markers are found on, by
        # a few levels on a few pixels
        # Frames come decoded to grey; the colour picture is decoded from the packet when
        # something asks for it (and never before)
        frame = d.frame()
        assert d.image is None and frame._image is None
        diff = np.abs(frame.image.astype(int) - image.astype(int))
        assert diff.mean() < 1.0
        # the grey decode is the JPEG's own brightness; converted from colour, it is a level
        # or so apart (white 255 against 254), more only at the edges of strong colour
        grey = [d.gray.astype(int), cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(int)]
        apart = np.abs(grey[0] - grey[1])
        assert apart.mean() < 1.5 and np.percentile(apart, 99) <= 3
        assert np.array_equal(d.packet.reshape(-1), packets[d.index].reshape(-1))


def test_markers_found_ahead_come_with_the_frame_and_are_those_of_videocapture_frames(tmp_path):
    clip = _clip(tmp_path / "clip.avi", 8)
    detector = MarkerDetector("4x4_250", (320, 240))
    found_on: list[str] = []

    def markers(picture: np.ndarray) -> MarkerDetections:
        found_on.append(threading.current_thread().name)
        return detect(picture, "4x4_250")

    frames = list(FileSource(str(clip)).frames(detect=markers))
    for frame, (_, image) in zip(frames, timed_pictures(clip), strict=True):
        assert frame.detections is not None
        direct = detector.detect(image)
        assert list(frame.detections.ids) == list(direct.ids) == [7]
        assert np.abs(frame.detections.corners_px - direct.corners_px).max() < 0.05
    # on the decode threads, one picture each
    assert len(found_on) == 8 and all(name.startswith("decode") for name in found_on)
    # nobody asked: nobody looked
    assert all(f.detections is None for f in FileSource(str(clip)).frames())


def test_a_video_that_is_not_mjpg_is_read_in_order(tmp_path):
    clip = _clip(tmp_path / "clip.avi", 10, fourcc="XVID")
    expected = timed_pictures(clip)
    if not expected:
        pytest.skip("no XVID encoder in this OpenCV")
    got = list(read_ahead(str(clip), workers=2))
    assert [d.index for d in got] == list(range(len(expected)))
    for d, (_, image) in zip(got, expected, strict=True):
        assert d.packet is None and np.array_equal(d.image, image)
        assert np.array_equal(d.gray, cv2.cvtColor(image, cv2.COLOR_BGR2GRAY))


def test_a_stop_mid_file_closes_the_pool(tmp_path):
    clip = _clip(tmp_path / "clip.avi")
    before = threading.active_count()
    frames = read_ahead(str(clip), workers=2)
    assert next(frames).index == 0
    frames.close()
    assert threading.active_count() <= before


def test_live_frames_all_decoded_in_order_when_the_referee_keeps_up(tmp_path):
    packets = read_packets(_clip(tmp_path / "clip.avi"))
    decoder = NewestDecoder(workers=2)
    taken = []
    try:
        for k, packet in enumerate(packets):
            decoder.submit(k, k / 30.0, packet)
            while True:  # the referee takes every frame before the next arrives
                d = decoder.take(timeout_s=5.0)
                assert d is not None
                taken.append(d.index)
                if decoder.idle:
                    break
    finally:
        decoder.close()
    assert taken == list(range(len(packets))) and decoder.dropped == 0


def test_a_frame_cut_short_is_dropped_not_fatal(tmp_path):
    """A camera that hiccups sends a frame cut short (or garbage after a JPEG start): it is
    counted as dropped, and the frames after it come as before."""
    packets = read_packets(_clip(tmp_path / "clip.avi"))[:3]
    start = packets[1].reshape(-1)[:2]  # the JPEG start marker, then noise
    garbage = np.concatenate([start, np.full(500, 7, np.uint8)]).reshape(1, -1)
    taken, dropped = _one_by_one([packets[0], garbage, packets[2]], decode=True)
    assert cv2.imdecode(garbage, cv2.IMREAD_COLOR) is None  # truly not a picture
    assert taken == [0, 2] and dropped == 1


def test_a_frame_cut_short_is_dropped_even_when_it_waits_undecoded(tmp_path):
    """A camera's JPEGs wait undecoded until a game asks (the set-up page and the doctor
    decode them at once): one cut short, which libjpeg would fill out with grey, is
    dropped and counted all the same; one with padding after its end is kept."""
    packets = read_packets(_clip(tmp_path / "clip.avi"))[:3]
    whole = packets[1].reshape(-1)
    cut = whole[: len(whole) * 2 // 3].reshape(1, -1)
    padded = np.concatenate([packets[2].reshape(-1), np.zeros(6, np.uint8)]).reshape(1, -1)
    taken, dropped = _one_by_one([packets[0], cut, padded], decode=False)
    assert taken == [0, 2] and dropped == 1


def _one_by_one(packets: list[np.ndarray], decode: bool) -> tuple[list[int], int]:
    """``packets`` handed to a one-worker decoder one at a time, each taken before the
    next: the indexes that came out, and how many were dropped."""
    decoder = NewestDecoder(workers=1)
    taken = []
    try:
        for k, packet in enumerate(packets):
            decoder.submit(k, k / 30.0, packet, decode=decode)
            while not decoder.idle:
                d = decoder.take(timeout_s=5.0)
                if d is not None:
                    taken.append(d.index)
    finally:
        decoder.close()
    return taken, decoder.dropped


def test_live_frames_a_slow_referee_gets_newer_frames_never_older(tmp_path):
    packets = read_packets(_clip(tmp_path / "clip.avi"))
    decoder = NewestDecoder(workers=2)
    try:
        for k, packet in enumerate(packets):  # all arrive at once: the referee is slow
            decoder.submit(k, k / 30.0, packet)
        taken = []
        while (d := decoder.take(timeout_s=1.0)) is not None:
            taken.append(d.index)
            assert d.gray.shape == (240, 320) and d.frame().image.shape == (240, 320, 3)
            if d.index == len(packets) - 1:
                break
    finally:
        decoder.close()
    assert taken == sorted(taken) and taken[-1] == len(packets) - 1
    assert decoder.arrived == len(packets)
    assert len(taken) + decoder.dropped == len(packets) and decoder.dropped > 0


def test_a_closed_decoder_ends_the_wait(tmp_path):
    decoder = NewestDecoder(workers=2)
    threading.Timer(0.1, decoder.close).start()
    t0 = time.monotonic()
    assert decoder.take(timeout_s=5.0) is None
    assert time.monotonic() - t0 < 2.0


@pytest.mark.parametrize("waits", [True, False])
def test_a_burst_that_waits_for_room_loses_no_frame(waits: bool) -> None:
    """Twenty pictures arrive at once (a stream's burst as it opens) for a referee that
    takes one every 20 ms: each waiting for room (``wait_room``, as a live source does
    for a frame ahead of its time) all twenty are taken, in order; handed over as they
    come, all but the first and the last few are dropped."""
    pictures = [np.full((48, 64, 3), k, np.uint8) for k in range(20)]
    decoder = NewestDecoder(workers=1)
    taken: list[int] = []

    def referee() -> None:
        while (d := decoder.take(timeout_s=2.0)) is not None:
            taken.append(int(d.frame().image[0, 0, 0]))  # the picture's own number
            time.sleep(0.02)
            if taken[-1] == 19:
                return

    thread = threading.Thread(target=referee)
    thread.start()
    try:
        for k, picture in enumerate(pictures):
            if waits:
                decoder.wait_room(5.0)
            decoder.submit(k, k / 10.0, picture)
        thread.join(timeout=10.0)
    finally:
        decoder.close()
    assert taken == sorted(taken) and taken[-1] == 19
    if waits:
        assert taken == list(range(20)) and decoder.dropped == 0
    else:
        assert len(taken) <= 4 and decoder.dropped == 20 - len(taken)


def test_waiting_for_room_ends_at_its_time_or_when_closed() -> None:
    """Nobody takes: a frame waits its time out and is then handed over (dropping the one
    before it, as any frame the referee cannot keep up with); a closed decoder ends the
    wait at once."""
    decoder = NewestDecoder(workers=1)
    picture = np.zeros((8, 8, 3), np.uint8)
    for k in range(3):
        decoder.wait_room(0.05)
        decoder.submit(k, k / 10.0, picture)
    taken = []
    while (d := decoder.take(timeout_s=0.5)) is not None:
        taken.append(d.index)
    assert decoder.arrived == 3 and taken[-1] == 2  # each handed over, the newest taken
    assert len(taken) + decoder.dropped == 3 and decoder.dropped >= 1
    threading.Timer(0.1, decoder.close).start()
    done = threading.Event()
    waiter = threading.Thread(target=lambda: (decoder.wait_room(60.0), done.set()))
    waiter.start()
    waiter.join(timeout=10.0)
    assert done.is_set()
