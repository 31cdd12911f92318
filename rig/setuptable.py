"""The table the set-up's tests lay out, said once: a 44 x 30 in table with its four 40 mm
anchors as glued (one a quarter turn, one 3 degrees off), a model's and a terrain piece's
entries as the set-up page sends them, and a wait for the set-up's own threads."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

TABLE_IN = (44.0, 30.0)
#: The anchors as glued: (id, x, y, heading).
ANCHORS = [(0, 1.5, 1.5, 0.0), (1, 42.4, 1.6, 90.0), (2, 42.5, 28.5, 0.0), (3, 1.7, 28.3, 3.0)]
#: The table's corners (in, on the table's plane), in the order the page asks for them.
CORNERS_IN = np.array([[0.0, 0.0, 0.0], [44.0, 0.0, 0.0], [44.0, 30.0, 0.0], [0.0, 30.0, 0.0]])
#: A Goliath on a 32 mm base, marker 10 of 16 mm (with its white border, at most 16.9 mm
#: fits the base).
MODEL = {
    "id": "krotos",
    "side": "goliath",
    "base": {"shape": "round", "diameter_mm": 32},
    "movement": 4,
    "marker": 10,
    "marker_size_mm": 16,
}
#: A 4 x 1 in wall, marker 40.
WALL = {"id": "wall", "marker": 40, "polygon": [[-2, -0.5], [2, -0.5], [2, 0.5], [-2, 0.5]]}


def wait_for(check: Callable[[], bool], timeout_s: float = 30.0) -> None:
    """Until ``check()`` holds, looking every 20 ms; an AssertionError after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)
