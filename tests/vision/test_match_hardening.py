"""The match file under attack and accident: a recording that fails mid-game (a full disk, a
deleted folder) never stops the referee; an export never writes over its input or through
a link; a crafted match file is refused in one line, never trusted to name a file; CSV
cells never run as spreadsheet formulas."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import cv2
import pytest

from rules.session import Event
from vision.game import Game
from vision.match.reader import Match
from vision.match.replay import Replay
from vision.match.writer import MatchWriter
from vision.script import Script
from vision.setup import Setup
from vision.sources import FileSource, Frame

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples" / "necromunda"
CLIP = SAMPLE / "match.mp4"
SETUP_FILES = ("table.toml", "roster.toml", "terrain.toml", "camera.toml")
KEY = ("kind", "rule", "model", "other")


def tablesight_exe() -> list[str]:
    exe = Path(sys.executable).with_name("tablesight")
    return [str(exe)] if exe.exists() else [sys.executable, str(REPO / "tablesight.py")]


def sample_setup() -> Setup:
    table, roster, terrain, camera = (SAMPLE / n for n in SETUP_FILES)
    return Setup.load("necromunda", table, roster, terrain, camera)


# -- 1. a recording that fails does not stop the referee ------------------------------------


def drive(folder: Path, wreck: str) -> dict[str, Any]:
    """The sample clip refereed by a Game (as ``analyze --script`` does) while it records
    into ``folder``; ``wreck`` = ``delete``: the folder is deleted at frame 50; ``full``:
    the folder is a small file system that the video fills. What happened, as JSON."""
    setup = sample_setup()
    path = folder / "match.db"
    recorder = MatchWriter(path, setup, source=str(CLIP), min_free_bytes=0)
    script = Script.from_toml(SAMPLE / "session.toml")
    game = Game(setup, FileSource(str(CLIP)), script=script, recorder=recorder)
    told: list[Event] = []
    game.listen(told.append)

    def progress(frame: Frame) -> None:
        if wreck == "delete" and frame.index == 50:
            shutil.rmtree(folder)
            deadline = time.monotonic() + 10
            while recorder.error is None and time.monotonic() < deadline:
                time.sleep(0.01)

    game.run(progress)
    game.close_recorder()
    stopped = [e for e in told if e.kind == "recording_stopped"]
    out: dict[str, Any] = {
        "status": game.status,
        "recorder": game.recorder is not None,
        "failure": game.record_failure,
        "stopped": [(e.id, e.t, e.message) for e in stopped],
        "refereed": [[getattr(e, k) for k in KEY] for e in told if e.kind != "recording_stopped"],
        "after": sum(1 for e in told if stopped and e.id > stopped[0].id),
        "ids": [e.id for e in told],
    }
    if path.exists():
        with Match(path) as match:
            out["integrity"] = match.integrity()
            frames = match.frames()
            out["frames"] = len(frames)
            out["last_t"] = frames[-1].t if frames else None
            out["file_events"] = [[e[k] for k in KEY] for e in match.events(0)]
            out["closed"] = "closed" in match.meta
        with Replay(path) as replay:
            replay.seek(replay.end_t)
            out["replayed_events"] = len(replay.events_since(0))
    return out


def expected_sample_events() -> list[list[Any]]:
    expected = json.loads((SAMPLE / "expected-events.json").read_text())
    return [[e[k] for k in KEY] for e in expected["events"]]


@pytest.mark.slow
def test_deleting_the_folder_mid_game_stops_the_record_once_and_refereeing_goes_on(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "record"
    folder.mkdir()
    got = drive(folder, "delete")
    assert got["status"] == "ended"
    assert got["recorder"] is False
    assert len(got["stopped"]) == 1, got["stopped"]
    _event_id, t, message = got["stopped"][0]
    assert 5.0 <= t < 6.0  # frame 50 of a 10 fps clip, noticed at the next commit
    assert message == (
        f"recording stopped: {folder / 'match.db'}: the match file was deleted or moved "
        "while it was recorded; refereeing goes on without it"
    )
    assert got["failure"] in message
    # every event the referee owes the clip, after the record stopped too, numbered in order
    assert got["refereed"] == expected_sample_events()
    assert got["after"] >= 10
    assert got["ids"] == list(range(len(got["ids"])))
    assert not folder.exists()


def in_mount_namespace(
    tmp_path: Path, mount: str, command: list[str], timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``command`` run in a mount namespace of its own with a tmpfs (options ``mount``) on
    ``tmp_path/disk`` (its first argument is that folder); skips without unshare(1)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1) to mount a small file system with")
    disk = tmp_path / "disk"
    disk.mkdir()
    script = 'mount -t tmpfs -o "$1" tmpfs "$2" || exit 77; shift 2; exec "$@"'
    result = subprocess.run(
        [
            unshare,
            "--mount",
            "--map-root-user",
            "sh",
            "-c",
            script,
            "sh",
            mount,
            str(disk),
            *command,
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if result.returncode == 77 or result.stderr.startswith("unshare:"):
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip()[-200:]}")
    return result


@pytest.mark.slow
def test_a_full_disk_stops_the_record_once_and_what_was_written_stays_valid(
    tmp_path: Path,
) -> None:
    code = (
        "import json, sys\nimport runpy\nfrom pathlib import Path\n"
        "ns = runpy.run_path(sys.argv[1])\n"
        "print(json.dumps(ns['drive'](Path(sys.argv[2]), 'full')))\n"
    )
    disk = tmp_path / "disk"
    result = in_mount_namespace(
        tmp_path, "size=2m", [sys.executable, "-c", code, __file__, str(disk)]
    )
    assert result.returncode == 0, result.stderr[-3000:]
    got = json.loads(result.stdout.strip().splitlines()[-1])
    assert got["status"] == "ended"
    assert len(got["stopped"]) == 1, got["stopped"]
    _event_id, t, message = got["stopped"][0]
    assert message.startswith(f"recording stopped: {disk / 'match.db'}: ")
    assert "full" in message, message  # SQLite's "database or disk is full"
    assert message.endswith("; refereeing goes on without it")
    assert "Traceback" not in result.stderr
    # refereeing unaffected: every event the clip owes, most of them after the disk filled
    assert got["refereed"] == expected_sample_events()
    assert got["after"] >= 10
    # what was written is a sound, replayable match, up to the moment it stopped
    assert got["integrity"] == "ok"
    assert got["closed"] is False
    assert got["frames"] > 0 and got["last_t"] <= t
    assert got["file_events"] == got["refereed"][: len(got["file_events"])]
    assert got["replayed_events"] == len(got["file_events"])


def short_clip(path: Path, frames: int) -> Path:
    """The sample clip's first ``frames`` frames (10 fps), as a video of its own."""
    capture = cv2.VideoCapture(str(CLIP))
    writer = None
    for _ in range(frames):
        ok, image = capture.read()
        assert ok
        if writer is None:
            size = (image.shape[1], image.shape[0])
            writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"mp4v"), 10.0, size)
        writer.write(image)
    assert writer is not None
    writer.release()
    capture.release()
    return path


@pytest.mark.slow
def test_run_record_on_a_disk_that_fills_up_goes_on_serving_and_exits_0(tmp_path: Path) -> None:
    """The real command on a 120 MB tmpfs (over the 100 MB a match needs to start), filled
    up two seconds into the game."""
    clip = short_clip(tmp_path / "clip.mp4", 150)
    out, err, keep = tmp_path / "out.txt", tmp_path / "err.txt", tmp_path / "kept"
    keep.mkdir()
    setup_args = [f"--{n.removesuffix('.toml')}={SAMPLE / n}" for n in SETUP_FILES]
    run = [
        *tablesight_exe(),
        "run",
        f"--source={clip}",
        "--game=necromunda",
        *setup_args,
        "--port=0",
    ]
    # the record starts, then a file takes every byte left; at the end the record is
    # copied out of the namespace for a look
    script = (
        "disk=$1; out=$2; err=$3; keep=$4; shift 4\n"
        '"$@" --record="$disk/match.db" >"$out" 2>"$err" </dev/null &\n'
        "pid=$!\n"
        'i=0; while [ ! -s "$disk/match.avi" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done\n'
        "sleep 2\n"
        'dd if=/dev/zero of="$disk/fill" bs=1M 2>/dev/null\n'
        'wait $pid; status=$?\nrm -f "$disk/fill"\ncp -a "$disk/." "$keep/"\nexit $status\n'
    )
    disk = tmp_path / "disk"
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1) to mount a small file system with")
    disk.mkdir()
    mount = 'mount -t tmpfs -o size=120m tmpfs "$2" || exit 77; exec sh -c "$1" "$@"'
    process = subprocess.Popen(
        [
            unshare,
            "--mount",
            "--map-root-user",
            "sh",
            "-c",
            mount,
            "sh",
            script,
            str(disk),
            str(out),
            str(err),
            str(keep),
            *run,
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    # while it runs: once the record has stopped, the table view still answers
    answered = None
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        if answered is None and out.exists() and "recording_stopped" in out.read_text():
            url = re.search(r"table view: (\S+)", err.read_text())
            assert url is not None
            with urllib.request.urlopen(url.group(1), timeout=10) as page:
                answered = page.status
        time.sleep(0.2)
    status = process.wait(timeout=60)
    if status == 77:
        pytest.skip("cannot mount a tmpfs here")
    stdout, stderr = out.read_text(), err.read_text()
    assert status == 0, stderr[-3000:]
    assert "Traceback" not in stderr
    assert answered == 200
    lines = stdout.splitlines()
    stopped = [line for line in lines if "recording stopped" in line]
    assert len(stopped) == 1, stdout
    assert "recording stopped" not in stderr
    assert re.search(
        rf"recording_stopped recording stopped: {re.escape(str(disk))}/match\.db: .*full",
        stopped[0],
    ), stopped[0]
    assert "recorded " not in stderr  # no claim that the whole match was recorded
    # the events went on after it
    assert lines.index(stopped[0]) < len(lines) - 1, stdout
    # what was written is a sound match
    conn = sqlite3.connect(f"file:{keep / 'match.db'}?mode=ro", uri=True)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert conn.execute("SELECT count(*) FROM frames").fetchone()[0] > 0
    conn.close()
