"""Heights judged live: a rendered clip of towers, analysed end to end (Cosmic Combat, revised).

The clip (the synthetic camera 42" up, 12" in front of the near edge; towers drawn as
opaque prisms) shows three things happen, one after the other:

* ``climber`` (Movement 8) is lifted from the ground at (20, 16) onto the 5" tower's top
  at (20, 19.5). Text 004: a climb of 5" costs double, 10", and covers the step onto the
  roof (1", the base's depth, while it straddles the edge at y = 18); the other
  3.5 - 1 = 2.5" count as usual: 12.5" of its 8". A movement violation.
* ``low`` walks 3" on the ground, from (33, 14) to (33, 17.2), in front of the 7" tower
  where its unit-mate ``high`` stands at (33, 18.8): edges 1.6 - 2 * 0.49 = 0.62" apart
  across, within 1", but 7" apart vertically, over the 6" the revised text allows. A
  coherency finding; the 3.2" walk itself is legal.
* ``walker`` walks 5" on the ground, (8, 10) to (13, 10): neither.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tablesight.rig.footage import write_video
from tablesight.rig.storyboard_file import load_storyboard

pytestmark = pytest.mark.slow

ANCHORS = "".join(
    f"\n[[anchors]]\nid = {i}\nx_in = {x}\ny_in = {y}\nsize_mm = 40\n"
    for i, x, y in [(0, 1.5, 1.5), (1, 42.5, 1.5), (2, 42.5, 28.5), (3, 1.5, 28.5)]
)
TABLE = '[table]\nwidth_in = 44\ndepth_in = 30\ndictionary = "4x4_50"\n' + ANCHORS
BASE = '{ shape = "round", diameter_mm = 25 }'
#: id, unit, marker, start [x, y, heading, z]
MODELS = [
    ("climber", "climber", 10, [20.0, 16.0, 90.0, 0.0]),
    ("high", "squad", 11, [33.0, 18.8, 90.0, 7.0]),
    ("low", "squad", 12, [33.0, 14.0, 90.0, 0.0]),
    ("walker", "walker", 13, [8.0, 10.0, 0.0, 0.0]),
]
#: id, marker, height; each a 6 x 6 in prism, its marker at the middle of its top.
TOWERS = [("tower5", 20, 5.0, (22.0, 21.0)), ("tower7", 21, 7.0, (33.0, 21.0))]
ACTIONS = """
[[actions]]
kind = "move"
model = "climber"
to = [20.0, 19.5, 90.0, 5.0]
at = 0.8
seconds = 1.2

[[actions]]
kind = "move"
model = "low"
to = [33.0, 17.2, 90.0, 0.0]
at = 2.8
seconds = 1.0

[[actions]]
kind = "move"
model = "walker"
to = [13.0, 10.0, 0.0, 0.0]
at = 4.6
seconds = 1.0
"""


def roster(with_start: bool) -> str:
    out = ""
    for mid, unit, marker, start in MODELS:
        out += (
            f'[[models]]\nid = "{mid}"\nside = "red"\nunit = "{unit}"\nbase = {BASE}\n'
            f"movement = 8\nmarker = {marker}\nmarker_size_mm = 25\nmarker_height_mm = 4\n"
        )
        out += f"start = {start}\n\n" if with_start else "\n"
    return out


def terrain(with_at: bool) -> str:
    out = ""
    for pid, marker, height, (x, y) in TOWERS:
        out += (
            f'[[terrain]]\nid = "{pid}"\nmarker = {marker}\nmarker_size_mm = 30\n'
            f"marker_height_mm = {height * 25.4}\nheight = {height}\n"
            'polygon = [[-3, -3], [3, -3], [3, 3], [-3, 3]]\nkeywords = ["climbable"]\n'
        )
        out += f"at = [{x}, {y}, 0.0]\n\n" if with_at else "\n"
    return out


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    d = tmp_path_factory.mktemp("heights-clip")
    storyboard = (
        "duration_s = 6.4\nsolid_terrain = true\n[shot]\nseed = 3\n"
        "[camera]\nposition = [22.0, -12.0, 42.0]\nlook_at = [22.0, 15.0, 0.0]\n"
        "size = [1920, 1080]\n" + TABLE + "\n" + roster(True) + terrain(True) + ACTIONS
    )
    (d / "storyboard.toml").write_text(storyboard)
    story = load_storyboard(d / "storyboard.toml")
    video = d / "clip.avi"
    write_video(story, video)
    (d / "table.toml").write_text(TABLE)
    (d / "roster.toml").write_text(roster(False))
    (d / "terrain.toml").write_text(terrain(False))
    cam = story.camera
    (d / "camera.toml").write_text(cam.calibrated().to_toml())
    args = ["--game", "cosmic-combat-revised"]
    for name in ("table", "roster", "terrain", "camera"):
        args += [f"--{name}", str(d / f"{name}.toml")]
    return video, args


def test_a_climb_onto_a_tower_and_a_vertical_gap_are_judged_live(clip, tablesight):
    video, args = clip
    done = tablesight("analyze", str(video), *args, "--json")
    assert done.returncode == 0, done.stderr
    events = json.loads(done.stdout)["events"]
    moved = [e["model"] for e in events if e["kind"] == "model_moved"]
    assert moved == ["climber", "low", "walker"]
    flags = [(e["kind"], e["rule"], e["model"]) for e in events if e["kind"] == "violation"]
    assert ("violation", "movement", "climber") in flags
    climb = next(e for e in events if e["kind"] == "violation" and e["rule"] == "movement")
    # 2.5 on the ground + 2 * 5 up (the 1 in step is part of the climb)
    assert climb["measured"] == pytest.approx(12.5, abs=0.1) and climb["limit"] == 8
    # the unit's two models are each out of coherency, 7 in apart vertically (limit 6)
    coherency = [e for e in events if e["rule"] == "coherency" and e["kind"] != "resolved"]
    assert sorted(e["model"] for e in coherency) == ["high", "low"], coherency
    for finding in coherency:
        assert finding["t"] == pytest.approx(
            next(e["t"] for e in events if e["model"] == "low" and e["kind"] == "model_moved")
        )
        assert "vertical limit 6.00" in finding["message"]
        assert finding["measured"] == pytest.approx(7.0, abs=0.5) and finding["limit"] == 6
    # the walk on the ground: nothing against it
    assert not [e for e in events if e["model"] == "walker" and e["kind"] == "violation"]
    assert not [e for e in events if e["model"] == "low" and e["rule"] == "movement"]
