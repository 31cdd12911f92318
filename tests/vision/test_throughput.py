"""The throughput loops on a small rendered clip: what they do, never how fast."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablesight.match.reader import Match
from tablesight.rig.synth import PinholeCamera
from tablesight.rig.throughput import (
    ANALYZE,
    ANALYZE_UNRECORDED,
    BASELINE,
    BASELINE_THREADED,
    DECODE,
    DECODE_POOL,
    LIVE,
    PIPELINE,
    PIPELINE_THREADED,
    make_footage,
    measure,
    report,
)

#: Each test here renders footage and times the pipeline on it.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list:
    # 640 x 360 from straight above, markers big enough for OpenCV's default parameters
    camera = PinholeCamera.looking_at((22, 15, 40), (22, 15, 0), 640, 360)
    footage = make_footage(
        Path(tmp_path_factory.mktemp("clip")),
        (640, 360),
        distinct=4,
        hold=12,
        movers=2,
        marker_mm=(50.0,),
        anchor_mm=60.0,
        camera=camera,
    )
    assert footage.markers == 44 and len(footage.roster) == 40 and footage.length == 24
    recorded: list[int] = []
    folder = Path(tmp_path_factory.mktemp("records"))
    got = measure(
        footage,
        frames=48,
        rounds=2,
        live_frames=12,
        record=lambda frame, events: recorded.append(frame.index),
        recording=folder,
    )
    # the hook saw every frame of the four pipeline loops and of the live run's taken
    live = next(r for r in got if r.loop == LIVE)
    assert len(recorded) == 4 * 48 + live.frames
    # and each pipeline's match file holds every frame it processed, with its picture
    files = sorted(folder.glob("*.db"))
    assert len(files) == 4
    counts = []
    for path in files:
        with Match(path) as match:
            frames = match.frames()
            assert match.meta.get("closed")
            assert all(f.video_frame is not None for f in frames)
            counts.append(len(frames))
    assert sorted(counts) == sorted([48, 48, 48, live.frames])
    return got


def test_both_loops_see_the_same_frames(rows):
    by_loop = {r.loop: r for r in rows if r.loop != LIVE}
    assert set(by_loop) == {
        BASELINE,
        BASELINE_THREADED,
        DECODE,
        DECODE_POOL,
        PIPELINE,
        PIPELINE_THREADED,
        ANALYZE,
        ANALYZE_UNRECORDED,
    }
    assert {r.frames for r in by_loop.values()} == {48}


def test_baseline_finds_every_marker_on_every_frame(rows):
    for r in rows:
        if r.loop in (BASELINE, BASELINE_THREADED, PIPELINE):
            assert r.markers == (44, 44), r.loop


def test_every_pipeline_session_sees_all_models_and_judges_the_moves(rows):
    for r in rows:
        if r.loop in (PIPELINE, PIPELINE_THREADED, ANALYZE, ANALYZE_UNRECORDED):
            assert r.models_seen == 40
            # two movers, there and back in each of two clips per round: some judged
            assert r.moves_judged >= 2
            assert r.latency_ms is None or r.latency_ms[0] > 0
    live = next(r for r in rows if r.loop == LIVE)
    assert live.frames + live.dropped == 12


def test_report_lists_every_loop(rows):
    text = report(rows)
    for name in (BASELINE, BASELINE_THREADED, DECODE, DECODE_POOL, ANALYZE, LIVE):
        assert name in text
    assert "recording: ON in every pipeline row" in text
