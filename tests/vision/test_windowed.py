"""The windowed detector finds what a search of the whole frame finds.

On rendered footage of the Necromunda storyboard (``necromunda_match.toml``: hands carry
models across the table and put them down, a hand hovers over two models, the tripod is
knocked), every frame is searched both ways: the same markers, except a marker that
appears (put down, uncovered) is found by the scan within ``BANDS`` frames; corners within
0.05 px of the whole frame's.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from vision.aruco import MarkerDetector
from vision.rig.footage import frames
from vision.rig.storyboard_file import load_storyboard
from vision.windowed import BANDS, Box, WindowedDetector, merged

STORYBOARD = Path(__file__).with_name("necromunda_match.toml")
CORNER_PX = 0.05


def compare(duration_s: float | None = None) -> tuple[int, float, int, int]:
    """Frames compared, the largest corner difference, the longest run of frames a marker
    the whole frame shows was missing from the windowed search, frames with a marker the
    windowed search found that the whole frame did not."""
    story = load_storyboard(STORYBOARD)
    if duration_s is not None:
        story = dataclasses.replace(story, duration_s=duration_s)
    dictionary = story.table.table.dictionary
    full, windowed = MarkerDetector(dictionary), WindowedDetector(dictionary)
    worst, extra, count = 0.0, 0, 0
    missing: dict[int, int] = {}
    longest = 0
    for frame in frames(story):
        a, b = full.detect(frame.image), windowed.detect(frame.image)
        seen, found = set(a.ids.tolist()), set(b.ids.tolist())
        extra += bool(found - seen)
        missing = {i: missing.get(i, 0) + 1 for i in seen - found}
        longest = max([longest, *missing.values()])
        by_id = b.by_id()
        for i, corners in a.by_id().items():
            if i in by_id:
                worst = max(worst, float(np.abs(by_id[i] - corners).max()))
        count += 1
    return count, worst, longest, extra


def test_boxes_merge_only_when_it_saves_work() -> None:
    a, b = Box(0, 0, 100, 100), Box(50, 0, 150, 100)
    assert merged([a, b]) == [Box(0, 0, 150, 100)]
    far = Box(90, 90, 300, 300)  # overlaps a, but their union is larger than both
    assert sorted(merged([a, far]), key=lambda x: x.x0) == [a, far]


def test_a_new_frame_size_is_searched_whole() -> None:
    story = load_storyboard(STORYBOARD)
    image = next(iter(frames(story))).image
    windowed = WindowedDetector(story.table.table.dictionary, (640, 480))
    full = MarkerDetector(story.table.table.dictionary)
    assert sorted(windowed.detect(image).ids.tolist()) == sorted(full.detect(image).ids.tolist())
    assert windowed.image_size == (image.shape[1], image.shape[0])


def test_a_carry_and_a_put_down_as_the_whole_frame_sees_them() -> None:
    # 3 s: krotos carried from 0.8 s to 1.8 s and put down, brakk picked up at 2.6 s
    count, worst, longest, extra = compare(3.0)
    assert count == 90
    assert worst < CORNER_PX
    assert longest <= BANDS - 1
    assert extra == 0


@pytest.mark.slow
def test_the_whole_storyboard_as_the_whole_frame_sees_it() -> None:
    # 11 s: four carries, a hand hovering over two models, the tripod knocked at 10 s
    count, worst, longest, extra = compare()
    assert count == 330
    assert worst < CORNER_PX
    assert longest <= BANDS - 1  # 3 frames: 0.1 s at 30 fps
    assert extra == 0
