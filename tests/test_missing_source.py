"""``run`` with a source that is not there: one line and exit status 2, soon, and none of
OpenCV's own ``[ WARN ...]`` lines."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "necromunda"
FILES = (
    "--game",
    "necromunda",
    "--table",
    str(SAMPLE / "table.toml"),
    "--roster",
    str(SAMPLE / "roster.toml"),
    "--port",
    "0",
)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("7", "camera 7: no such camera answers on this machine"),
        ("rtsp://127.0.0.1:9/table", "the stream cannot be opened"),
        ("/dev/null", "/dev/null: a device or special file, not a video file"),
    ],
)
def test_a_source_that_is_not_there_is_one_line(tablesight, source: str, says: str) -> None:
    began = time.monotonic()
    done = tablesight("run", "--source", source, *FILES)
    took = time.monotonic() - began
    print(f"run --source {source}: exit {done.returncode} after {took:.1f} s")
    assert done.returncode == 2, done.stderr
    assert took < 10.0
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and says in lines[0], done.stderr
    assert "[ WARN" not in done.stderr
    if "://" in source:  # a network camera's advice, not a webcam's
        assert "is the address right" in lines[0] and "plugged in" not in lines[0]
    elif source.isdigit():
        assert "is it plugged in" in lines[0]


def test_opencv_warnings_are_silenced_at_import() -> None:
    import cv2

    import tablesight.vision.sources  # noqa: F401  (sets the level as it is imported)

    assert cv2.utils.logging.getLogLevel() <= cv2.utils.logging.LOG_LEVEL_ERROR
