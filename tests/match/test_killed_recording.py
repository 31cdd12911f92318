"""``run --record`` stopped mid-match, by SIGTERM (a service manager, ``kill``) or by
SIGKILL (nothing to clean up with): the match file is whole, and the replay shows, at
each moment, the very picture that was recorded then.

The recorded source is the Necromunda sample clip, so the picture recorded for a frame
is known: the clip's own frame at that ``source_index``. Each replayed picture must be
close to it, and closer to it than to the clip's frames before and after (the moments
chosen are ones where those differ, a hand or a model moving).
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from tablesight.match.replay import Replay
from tablesight.rig.webcam import pictures

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "necromunda"
#: Seconds of the clip to record before the program is stopped.
RECORD_S = 9.0


def _clip_frames(count: int) -> list[np.ndarray]:
    return pictures(SAMPLE / "match.mp4", count)


def _mad(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean(cv2.absdiff(a, b)))


def _record_and_stop(
    command: list[str], options: list[str], folder: Path, sig: int
) -> tuple[Path, str]:
    """``run --record`` on the sample clip, stopped with ``sig`` once RECORD_S seconds of
    it have been refereed; the match file and what the program printed."""
    db = folder / "match.db"
    proc = subprocess.Popen(
        [
            *command,
            "run",
            "--source",
            str(SAMPLE / "match.mp4"),
            *options,
            "--record",
            str(db),
            "--port",
            "0",
        ],
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            # the events print as they happen: the one at 8.4 s says the clip is that far on
            if any(line.lstrip().startswith("8.40s") for line in list(lines)):
                break
            assert proc.poll() is None, "".join(lines)
            time.sleep(0.1)
        else:
            pytest.fail("run did not reach 8.4 s of the clip in a minute:\n" + "".join(lines))
        time.sleep(RECORD_S - 8.4)
        proc.send_signal(sig)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(timeout=5)
    if proc.stdout is not None:
        proc.stdout.close()
    return db, "".join(lines)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_stopped_recording_replays_the_pictures_recorded(
    tablesight_command: list[str], sample_options: Any, tmp_path: Path, sig: int
) -> None:
    options = sample_options("necromunda")
    db, output = _record_and_stop(tablesight_command, options, tmp_path, sig)
    assert "[ WARN" not in output

    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = conn.execute(
            "SELECT t, source_index, video_frame FROM frames WHERE video_frame IS NOT NULL"
            " ORDER BY id"
        ).fetchall()
        closed = conn.execute("SELECT value FROM meta WHERE key = 'closed'").fetchone()
    conn.close()
    # SIGTERM finishes the file as Ctrl-C does; SIGKILL loses at most the last second
    assert (closed is not None) == (sig == signal.SIGTERM), output
    assert rows and rows[-1][0] >= RECORD_S - 2.0, (rows[-1:], output)

    clip = _clip_frames(rows[-1][1] + 2)
    # moments where the clip's picture differs from both its neighbours
    moving = [
        (t, i)
        for t, i, _ in rows
        if 0 < i < len(clip) - 1
        and min(_mad(clip[i], clip[i - 1]), _mad(clip[i], clip[i + 1])) > 0.3
    ]
    assert len(moving) >= 10
    picks = [moving[k * (len(moving) - 1) // 7] for k in range(8)]
    replay = Replay(db)
    try:
        figures = []
        for t, i in picks:
            replay.seek(t)
            shown = replay.jpeg()
            assert shown is not None and shown[0] == i, (t, i, shown and shown[0])
            image = cv2.imdecode(np.frombuffer(shown[1], np.uint8), cv2.IMREAD_COLOR)
            same, before, after = (_mad(image, clip[j]) for j in (i, i - 1, i + 1))
            figures.append((round(t, 2), i, round(same, 2), round(before, 2), round(after, 2)))
            assert same < 3.0 and same < before and same < after, figures
    finally:
        replay.close()
    print(signal.Signals(sig).name, "t, frame, mad same/before/after:", figures)
