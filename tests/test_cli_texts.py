"""What the command line prints for a person: counts with proper singular and plural,
``detect``'s table of models, terrain and pose health, and no files left behind by
``export`` or a replay beside the match file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "samples" / "necromunda"


def test_check_counts_in_words(tablesight) -> None:
    done = tablesight("check", str(REPO / "samples" / "scenarios" / "necromunda-wall-detour.json"))
    assert done.returncode == 0, done.stderr
    head = done.stdout.splitlines()[0]
    assert head == "Necromunda: 1 move judged: ILLEGAL (1 violation, 0 advisories)", head
    assert "(s)" not in done.stdout and "(ies)" not in done.stdout


def test_the_verdicts_counts_read_in_the_plural() -> None:
    from tablesight.rules.verdict import _count

    assert [_count(n, "move", "moves") for n in (0, 1, 2)] == ["0 moves", "1 move", "2 moves"]
    assert _count(1, "advisory", "advisories") == "1 advisory"


@pytest.mark.slow
def test_detect_lists_models_then_terrain_then_the_pose(tablesight, tmp_path: Path) -> None:
    import cv2

    capture = cv2.VideoCapture(str(SAMPLE / "match.mp4"))
    ok, image = capture.read()
    capture.release()
    assert ok
    photo = tmp_path / "table.png"
    cv2.imwrite(str(photo), image)
    files = [f"--{name}={SAMPLE / name}.toml" for name in ("table", "roster", "terrain", "camera")]
    done = tablesight("detect", str(photo), *files)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "models (12):"
    model = re.compile(
        r"  (\S+) +x +[\d.]+ in  y +[\d.]+ in  heading +[\d.-]+ deg  on the table  \(marker \d+\)"
    )
    assert [m.group(1) for m in map(model.fullmatch, lines[1:13]) if m][:2] == ["krotos", "brakk"]
    assert lines[13] == "terrain (3):"
    assert lines[14].split()[0] == "bulkhead"
    assert re.fullmatch(
        r"table seen from 4 anchors \(0, 1, 2, 3\), reprojection error [\d.]+ px;"
        r" heights corrected \([\d.]+ in on the table; anchors' centres within [\d.]+ in"
        r" of table.toml\)",
        lines[-1],
    ), lines[-1]
    assert "{" not in done.stdout and "[ WARN" not in done.stdout + done.stderr


@pytest.mark.slow
def test_export_and_replay_leave_no_files_beside_the_match(
    tablesight, match_files, tmp_path: Path
) -> None:
    from tablesight.match.replay import Replay

    video, args = match_files
    db = tmp_path / "match.db"
    done = tablesight("analyze", str(video), *args, "-o", str(db))
    assert done.returncode == 0, done.stderr
    beside = {p.name for p in tmp_path.iterdir()}
    assert beside == {"match.db"}, beside
    for fmt in ("json", "csv"):
        done = tablesight("export", str(db), "--format", fmt, "-o", str(tmp_path / "out"))
        assert done.returncode == 0, done.stderr
    assert not list(tmp_path.glob("match.db-*"))
    with Replay(db) as replay:
        replay.seek(0.5)
        assert replay.jpeg() is None  # analyze keeps no pictures
    assert not list(tmp_path.glob("match.db-*"))
