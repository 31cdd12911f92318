"""Rendered frames through the whole pipeline: a move, a violation, a hand, a bump."""

from __future__ import annotations

import numpy as np
import pytest

from tablesight.vision.sources import Frame


def test_a_match_in_frames(footage, two_model_referee):
    _, pics = footage
    session, observer = two_model_referee.session, two_model_referee.observer
    script = ["start"] * 15 + ["hand"] * 15 + ["start"] * 15 + ["moved"] * 15 + ["bumped"] * 15
    events = []
    for k, name in enumerate(script):
        if k == 14:
            events += session.start_phase(k / 30, k)
        events += session.observe(observer.observe(Frame(pics[name], k / 30, k)))
    got = [(e.kind, e.rule, e.model) for e in events]
    # the hand: hidden for 0.5 s, under HIDDEN_S (1.0 s): not news, and nothing when it is
    # seen where it was; the move: one model_moved and its violation; the bump:
    # camera_bumped and nothing else
    assert got == [
        ("phase_started", None, None),
        ("model_moved", None, "ganger"),
        ("violation", "movement", "ganger"),
        ("camera_bumped", None, None),
    ]
    moved = events[1]
    assert moved.measured == pytest.approx(7.0, abs=0.02)
    assert events[2].measured == pytest.approx(7.0, abs=0.02) and events[2].limit == 6.0


def test_centre_uncertainty_from_pose_fit_and_marker_size():
    from tablesight.vision.observe import centre_sigma_in

    # a 25.4 mm (1 in) marker 40 px wide; a pose fit of 0.8 px: 0.8 / 40 / 2 = 0.01 in
    square = np.array([[0, 0], [40, 0], [40, 40], [0, 40]], dtype=float)
    assert centre_sigma_in(square, 25.4, 0.8) == pytest.approx(0.01)
    # a perfect fit still counts 0.1 px per corner: 0.1 / 40 / 2
    assert centre_sigma_in(square, 25.4, 0.0) == pytest.approx(0.00125)


@pytest.mark.slow
def test_analyze_a_video(match_files, tablesight, tmp_path):
    import json

    video, args = match_files
    result = tablesight("analyze", str(video), *args, "--json")
    assert result.returncode == 0, result.stderr
    events = json.loads(result.stdout)["events"]
    assert [(e["kind"], e["rule"], e["model"]) for e in events] == [
        ("phase_started", None, None),  # the first frame that shows the anchors
        ("model_moved", None, "ganger"),
        ("violation", "movement", "ganger"),
    ]
    assert events[2]["measured"] == pytest.approx(7.0, abs=0.02)
    assert [e["id"] for e in events] == [0, 1, 2]
    assert set(events[0]) == {
        "t",
        "frame",
        "kind",
        "rule",
        "model",
        "other",
        "measured",
        "limit",
        "uncertainty",
        "message",
        "id",
    }
    # a bad script is one line naming it
    (tmp_path / "bad.toml").write_text('[[step]]\nt = 0\nphase = "combat"\n')
    bad = tablesight("analyze", str(video), *args, "--script", str(tmp_path / "bad.toml"))
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith(f"tablesight: {tmp_path / 'bad.toml'}: step[0].phase:")


@pytest.mark.slow
def test_run_plays_a_file_like_a_camera_with_the_same_events(match_files, tablesight):

    video, args = match_files
    analyzed = tablesight("analyze", str(video), *args)
    ran = tablesight("run", "--source", str(video), *args, "--port", "0")
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0] == f"refereeing Necromunda from {video}"
    assert lines[1:] == analyzed.stdout.splitlines()
    assert [line.split()[2] for line in lines[1:]] == ["phase_started", "model_moved", "violation"]


@pytest.mark.slow
def test_analyze_records_a_match_that_replays_to_the_same_events(match_files, tablesight, tmp_path):
    import json

    from tablesight.calibration.setup import Setup
    from tablesight.match.reader import Match
    from tablesight.rules.session import Event

    video, args = match_files
    db = tmp_path / "match.db"
    result = tablesight("analyze", str(video), *args, "-o", str(db), "--json")
    assert result.returncode == 0, result.stderr
    live = json.loads(result.stdout)["events"]
    with Match(db) as match:
        stored = match.events(revision=0)
        assert [{k: e[k] for k in live[0]} for e in stored] == live
        assert len(match.frames()) == 30  # every frame of the clip
        # the session rebuilt from its journal alone says the same, ids and numbers
        setup = match.setup()
        assert isinstance(setup, Setup) and setup.game == "necromunda"
        session = setup.session()
        replayed = [e.to_dict() for e in session.replay(match.inputs())]
        assert replayed == live
        assert all(isinstance(e, Event) for e in session.events)
    # exports other tools can read
    out = tablesight("export", str(db), "--format", "json", "-o", str(tmp_path / "m.json"))
    assert out.returncode == 0, out.stderr
    exported = json.loads((tmp_path / "m.json").read_text())
    assert [e["kind"] for e in exported["events"]] == ["phase_started", "model_moved", "violation"]
    assert len(exported["tracks"]["ganger"]) == 30
    csv_out = tablesight("export", str(db), "--format", "csv", "-o", str(tmp_path / "m"))
    assert csv_out.returncode == 0, csv_out.stderr
    rows = (tmp_path / "m-events.csv").read_text().splitlines()
    assert len(rows) == 1 + 3  # a header and three events
    missing = tablesight("export", str(tmp_path / "none.db"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
