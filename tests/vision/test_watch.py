"""The watcher reads markers where the picture changed, and gives what a whole-picture
search gives there: checked against ``detectMarkers`` on the same pictures, with markers
drawn by OpenCV's own generator at places set by hand."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from tablesight.vision.frame import Frame
from tablesight.vision.sight import detector
from tablesight.vision.watch import Watcher

DICTIONARY = "4x4_50"
#: Markers of 48 px (a 30 mm marker seen at about 1.6 px/mm), by id, top-left corners.
PLACES = {3: (200, 150), 7: (900, 300), 12: (1500, 700), 20: (400, 800)}
SIDE = 48


def _picture(places: dict[int, tuple[int, int]], seed: int, offset: int = 0) -> np.ndarray:
    """A 1920 x 1080 grey table with a grain of its own (blobs of about 16 px, sd 40), each marker
    printed in ink of grey 40 on paper of 220 (with a quiet zone), and camera noise of sd 2
    grey levels that differs with ``seed``; ``offset`` moves the whole picture right."""
    blobs = np.random.default_rng(99).normal(0, 40, (68, 136)).astype(np.float32)
    grain = cv2.resize(blobs, (1920 + 256, 1080), interpolation=cv2.INTER_CUBIC)
    table = 120.0 + grain[:, 128 - offset : 128 - offset + 1920]
    table += np.random.default_rng(seed).normal(0, 2, (1080, 1920))
    aruco = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    for marker, (x, y) in places.items():
        x += offset
        card = SIDE + 16
        table[y - 8 : y - 8 + card, x - 8 : x - 8 + card] = 220
        ink = cv2.aruco.generateImageMarker(aruco, marker, SIDE).astype(float)
        table[y : y + SIDE, x : x + SIDE] = 40 + ink * (180 / 255)
    return np.clip(table, 0, 255).astype(np.uint8)


def _jpeg(gray: np.ndarray) -> np.ndarray:
    ok, data = cv2.imencode(".jpg", gray, [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    return data.reshape(-1)


def _frame(k: int, picture: np.ndarray, fps: float = 30.0) -> Frame:
    return Frame(None, k / fps, k, jpeg=_jpeg(picture))


def _whole(frame: Frame) -> dict[int, np.ndarray]:
    return detector(DICTIONARY).detect(frame.gray).by_id()


def test_a_still_table_is_searched_once_then_rests() -> None:
    watcher = Watcher(DICTIONARY, sweep_s=1.0, check_s=0.1)
    reads, decoded = [], []
    for k in range(31):  # one second at 30 fps, the same table with fresh noise each frame
        frame = _frame(k, _picture(PLACES, seed=k))
        look = watcher.look(frame)
        reads.append(look.read)
        decoded.append(frame.decoded)
        assert sorted(look.detections.ids.tolist()) == sorted(PLACES)
    # a sweep at 0 s and at 1 s; a look (the JPEG decoded at 1/8, compared) every 0.1 s
    # between; only the sweeps decode the whole picture, and the rest nothing at all
    assert reads[0] == reads[30] == "sweep"
    assert [k for k, r in enumerate(reads) if r == "none"] == [3, 6, 9, 12, 15, 18, 21, 24, 27]
    assert reads.count("rest") == 31 - 2 - 9
    assert decoded == [r == "sweep" for r in reads]


def test_a_marker_taken_away_is_gone_at_the_next_look_and_the_others_stand() -> None:
    watcher = Watcher(DICTIONARY, sweep_s=10.0, check_s=0.1)
    first = watcher.look(_frame(0, _picture(PLACES, seed=0)))
    kept = first.detections.by_id()
    gone = {m: p for m, p in PLACES.items() if m != 7}
    looks = [watcher.look(_frame(k, _picture(gone, seed=k))) for k in range(1, 5)]
    # frames 1 and 2 rest (0.033 and 0.067 s); frame 3 (0.1 s) looks and reads a window
    assert [look.read for look in looks] == ["rest", "rest", "windows", "none"]
    look = looks[2]
    assert sorted(look.detections.ids.tolist()) == [3, 12, 20]
    (window,) = look.windows_px
    x, y, w, h = window
    # the window holds the marker's old place and little else: under a tenth of the picture
    assert x <= PLACES[7][0] and x + w >= PLACES[7][0] + SIDE
    assert y <= PLACES[7][1] and y + h >= PLACES[7][1] + SIDE
    assert w * h < 1920 * 1080 / 10
    for marker in (3, 12, 20):  # read at frame 0, standing exactly as read
        assert np.array_equal(look.detections.by_id()[marker], kept[marker])


def test_a_marker_put_down_is_read_as_a_whole_search_reads_it() -> None:
    start = {m: p for m, p in PLACES.items() if m != 20}
    watcher = Watcher(DICTIONARY, sweep_s=10.0, check_s=0.1)
    watcher.look(_frame(0, _picture(start, seed=0)))
    frame = _frame(3, _picture(PLACES, seed=3))  # put down by 0.1 s
    look = watcher.look(frame)
    assert look.read == "windows" and 20 in look.detections.by_id()
    whole = _whole(frame)
    # the window's corners are the whole picture's, to a hundredth of a pixel
    assert np.abs(look.detections.by_id()[20] - whole[20]).max() < 0.01


def test_a_bump_searches_the_whole_picture() -> None:
    watcher = Watcher(DICTIONARY, sweep_s=10.0, check_s=0.1)
    watcher.look(_frame(0, _picture(PLACES, seed=0)))
    # the camera knocked: everything (the table's grain too) 30 px to the right
    bumped = _frame(3, _picture(PLACES, seed=3, offset=30))
    look = watcher.look(bumped)
    assert look.read == "sweep" and look.busy
    assert look.changed_share > 0.5
    for marker, corners in look.detections.by_id().items():
        assert np.array_equal(corners, _whole(bumped)[marker])


def test_a_slow_drift_adds_up_until_it_is_read() -> None:
    """The light creeping 4% brighter a look (auto-exposure): against the previous frame
    it never changes by much, against the picture as last read it passes a factor of
    e^0.5 (65%) at the 13th look (1.04^13 = 1.67). The markers' own detail never changes."""
    watcher = Watcher(DICTIONARY, sweep_s=100.0, check_s=0.1)
    base = _picture(PLACES, seed=0).astype(float) * 0.6  # room to brighten
    reads = []
    for look_number in range(16):
        k = 3 * look_number  # one look each 0.1 s
        lit = np.clip(base * 1.04**look_number, 0, 255).astype(np.uint8)
        reads.append(watcher.look(_frame(k, lit)).read)
    assert reads[0] == "sweep"
    first_read = next(k for k, r in enumerate(reads) if r != "none" and k > 0)
    # e^0.5 = 1.649: 1.04^12 = 1.60 is under it, 1.04^13 = 1.67 over (JPEG may round it
    # one look either way)
    assert 12 <= first_read <= 14
    assert all(r == "none" for r in reads[1:first_read])


def test_the_light_turning_is_no_change_but_a_marker_is() -> None:
    """The bench's light (a ramp of +-12.5% across the picture, turned another way) on the
    same table is not a change; a marker painted out under it is."""
    watcher = Watcher(DICTIONARY, sweep_s=100.0, check_s=0.1)
    base = _picture(PLACES, seed=0).astype(float)
    xs = np.linspace(-1, 1, 1920)[None, :]
    ys = np.linspace(-1, 1, 1080)[:, None]
    watcher.look(_frame(0, np.clip(base * (1 + 0.125 * xs), 0, 255).astype(np.uint8)))
    turned = np.clip(base * (1 + 0.125 * ys), 0, 255).astype(np.uint8)
    assert watcher.look(_frame(3, turned)).read == "none"
    gone = {m: p for m, p in PLACES.items() if m != 12}
    turned_gone = np.clip(_picture(gone, seed=1) * (1 + 0.125 * ys), 0, 255).astype(np.uint8)
    look = watcher.look(_frame(6, turned_gone))
    assert look.read == "windows" and 12 not in look.detections.by_id()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"check_s": 0.0}, "need 0 < check_s <= sweep_s"),
        ({"check_s": 2.0, "sweep_s": 1.0}, "need 0 < check_s <= sweep_s"),
        ({"level": 0.0}, "need level > 0"),
        ({"busy_share": 1.5}, "0 < busy_share <= 1"),
    ],
)
def test_settings_that_cannot_work_are_refused(options: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Watcher(DICTIONARY, **options)


def test_a_camera_carried_round_is_searched_whole_at_every_frame() -> None:
    watcher = Watcher(DICTIONARY, sweep_s=10.0, check_s=0.1)
    watcher.look(_frame(0, _picture(PLACES, seed=0)))
    # frames 3, 4, 5, 6: the picture 30 px further right at each; then it stops
    moved = [
        watcher.look(_frame(k, _picture(PLACES, seed=k, offset=30 * (k - 2)))) for k in (3, 4, 5, 6)
    ]
    assert [look.read for look in moved] == ["sweep"] * 4
    assert all(look.busy for look in moved)
    still = [watcher.look(_frame(k, _picture(PLACES, seed=k, offset=120))) for k in (7, 8, 9)]
    # looked at once more (nothing changed), then it rests
    assert [look.read for look in still] == ["none", "rest", "rest"]


def test_a_resting_frame_tells_its_size_without_being_decoded() -> None:
    """The recorder and the views ask every frame its size; a frame the watcher rests on
    answers from its JPEG header (as OpenCV's decode would: checked), still undecoded."""
    frames = [_frame(k, _picture(PLACES, seed=k)) for k in range(3)]
    watcher = Watcher(DICTIONARY, sweep_s=10.0, check_s=0.1)
    looks = [watcher.look(f) for f in frames]
    assert [look.read for look in looks] == ["sweep", "rest", "rest"]
    assert frames[1].size == (1920, 1080) and not frames[1].decoded
    decoded = cv2.imdecode(frames[1].jpeg, cv2.IMREAD_GRAYSCALE)
    assert frames[1].size == (decoded.shape[1], decoded.shape[0])


def test_a_picture_cut_short_is_broken_not_fatal() -> None:
    watcher = Watcher(DICTIONARY, sweep_s=10.0, check_s=0.1)
    first = watcher.look(_frame(0, _picture(PLACES, seed=0)))
    cut = _jpeg(_picture(PLACES, seed=3))[:300]  # the header and a little: no picture
    look = watcher.look(Frame(None, 0.1, 3, jpeg=cut))
    assert look.read == "broken" and look.detections is first.detections
    with pytest.raises(ValueError, match="frame 3: not a picture"):
        Frame(None, 0.1, 3, jpeg=cut[:10]).size  # noqa: B018 (the property raises)
