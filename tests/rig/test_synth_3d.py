"""The synthetic camera in 3D: standing figures and terrain prisms hide what is behind them,
markers on a tower's top land where the camera projects them, a carried model smears
while the shutter is open, the exposure drifts, and H.264 footage still detects.

Every expectation comes from geometry worked out here (segments from a marker's corners to
the camera centre against the solid, ``camera.project`` of true 3D corners, the hand's
travel projected from the storyboard's true poses), not from the renderer's own code.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from tablesight.calibration.table import MM_PER_IN
from tablesight.rig.bodies import Figure, Prism, render_scene
from tablesight.rig.footage import Storyboard, frames, write_video
from tablesight.rig.storyboard_file import load_storyboard
from tablesight.rig.synth import CLEAN_SHOT, PinholeCamera, PlacedMarker, Shot, render_table
from tablesight.rig.webcam import exposure_gain, pictures
from tablesight.rules.errors import InputError
from tablesight.vision.observe import Observer

DICT = cv2.aruco.DICT_4X4_50
#: Looking across the table at an angle (from the front right, 26 in up).
CAMERA = PinholeCamera.looking_at((30, -12, 26), (22, 14, 0), 1280, 720)


def _detect(img: np.ndarray) -> dict[int, np.ndarray]:
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    detector = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(DICT), params)
    corners, ids, _ = detector.detectMarkers(img)
    if ids is None:
        return {}
    return {int(i): c.reshape(4, 2) for i, c in zip(ids.ravel(), corners, strict=True)}


def _sight_blocked(point: np.ndarray, camera: PinholeCamera, inside) -> bool:
    """Does the segment from ``point`` to the camera centre pass through a solid?
    (``inside(x, y, z)`` says which of 2000 points along it are in the solid.)"""
    s = np.linspace(0.002, 1.0, 2000)[:, None]
    pts = point + s * (camera.position_in - point)
    return bool(inside(pts[:, 0], pts[:, 1], pts[:, 2]).any())


def _in_cylinder(cx: float, cy: float, r: float, z0: float, z1: float):
    return lambda x, y, z: ((x - cx) ** 2 + (y - cy) ** 2 <= r * r) & (z >= z0) & (z <= z1)


def _in_box(x0: float, y0: float, x1: float, y1: float, z1: float):
    return lambda x, y, z: (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1) & (z >= 0) & (z <= z1)


# ------------------------------------------------------------------------------------------
# Figures


def test_a_figure_in_front_hides_another_models_marker_that_shows_without_it() -> None:
    """A 45 mm figure on its base 1.2 in in front of another model's marker, seen at an
    angle: every ray from that marker's corners to the camera passes through the figure
    (worked out here), and the marker is found in none of 4 shots, while in all 4 shots of
    the same layout with no figures."""
    target = PlacedMarker(6, 20.0, 24.0, 14.0, 4 / MM_PER_IN, heading_deg=10.0)
    # the figure stands on the line from the marker toward the camera, 1.2 in out
    toward = (CAMERA.position_in - np.array([24.0, 14.0, 0.0]))[:2]
    toward /= np.linalg.norm(toward)
    fx, fy = np.array([24.0, 14.0]) + 1.2 * toward
    figure = Figure(height_mm=45, width_mm=25)
    solid = figure.prism(fx, fy, 0.0)
    # the figure's own marker is on a tab in front of it (toward the camera): seen
    own = PlacedMarker(7, 15.0, fx + 0.9 * toward[0], fy + 0.9 * toward[1], 4 / MM_PER_IN)
    r = 12.5 / MM_PER_IN
    blocked = _in_cylinder(fx, fy, r * math.cos(math.pi / 20), solid.z0, solid.z1)
    assert all(_sight_blocked(c, CAMERA, blocked) for c in target.corners_in())
    assert not any(_sight_blocked(c, CAMERA, blocked) for c in own.corners_in())
    with_figure, without = 0, 0
    for seed in range(4):
        shot = Shot(seed=seed)
        plain = render_table(CAMERA, markers=[target, own], shot=shot)
        hidden, coverage = render_scene(CAMERA, markers=[target, own], solids=[solid], shot=shot)
        without += 6 in _detect(plain)
        with_figure += 6 in _detect(hidden)
        assert 7 in _detect(hidden)  # the model's own marker, on the rim, is not hidden
        assert coverage.sum() > 400  # the figure is ~20 x 45 px from here
    assert (without, with_figure) == (4, 0)


def test_no_solids_render_exactly_as_before() -> None:
    markers = [PlacedMarker(3, 25.0, 20.0, 10.0, 0.1, 30.0), PlacedMarker(4, 25.0, 26, 12)]
    img, coverage = render_scene(CAMERA, markers=markers, decoys=5, shot=Shot(seed=3))
    assert np.array_equal(img, render_table(CAMERA, markers=markers, decoys=5, shot=Shot(seed=3)))
    assert not coverage.any()


# ------------------------------------------------------------------------------------------
# Terrain


TOWER = Prism(np.array([[17, 8], [25, 8], [25, 12], [17, 12]], dtype=float), 0.0, 5.0)


@pytest.mark.parametrize("heading", [20.0, 75.0])
def test_a_marker_on_a_5_in_tower_top_is_where_the_camera_projects_it(heading: float) -> None:
    """cornerSubPix biases single corners by 0.1-0.4 px (see test_synth); centres agree
    to ~0.1 px, as they do for a marker on the table."""
    top = PlacedMarker(4, 40.0, 21.0, 10.0, 5.0, heading_deg=heading)
    for seed in range(2):
        img, _ = render_scene(CAMERA, markers=[top], solids=[TOWER], shot=Shot(seed=seed))
        found = _detect(img)
        truth = CAMERA.project(top.corners_in())
        err = np.linalg.norm(found[4] - truth, axis=1)
        assert err.max() < 0.45, err
        assert np.linalg.norm(found[4].mean(axis=0) - truth.mean(axis=0)) < 0.15


def test_a_tower_hides_a_ground_marker_behind_it() -> None:
    behind = PlacedMarker(8, 25.0, 20.0, 14.5, 0.0, heading_deg=0.0)
    beside = PlacedMarker(9, 25.0, 11.0, 10.0, 0.0)
    blocked = _in_box(17, 8, 25, 12, 5.0)
    assert all(_sight_blocked(c, CAMERA, blocked) for c in behind.corners_in())
    assert not any(_sight_blocked(c, CAMERA, blocked) for c in beside.corners_in())
    plain = _detect(render_table(CAMERA, markers=[behind, beside], shot=Shot(seed=1)))
    img, _ = render_scene(CAMERA, markers=[behind, beside], solids=[TOWER], shot=Shot(seed=1))
    assert sorted(plain) == [8, 9]
    assert sorted(_detect(img)) == [9]
    # the tower's faces: its top (lit from above) is lighter than the side facing the camera
    top_px = CAMERA.project(np.array([[21.0, 10.0, 5.0]]))[0].round().astype(int)
    side_px = CAMERA.project(np.array([[21.0, 8.0, 2.5]]))[0].round().astype(int)
    clean, _ = render_scene(CAMERA, solids=[TOWER], shot=CLEAN_SHOT)
    assert clean[top_px[1], top_px[0]].mean() > clean[side_px[1], side_px[0]].mean() + 10


# ------------------------------------------------------------------------------------------
# Storyboards: figures, towers, heights, motion blur, exposure, H.264

STORY = """
duration_s = {duration}
fps = 30
motion_hz = 30
solid_terrain = true
[shot]
seed = 2
{shot}
[webcam]
{webcam}
[table]
width_in = 30
depth_in = 22
dictionary = "4x4_50"
[[anchors]]
id = 0
x_in = 1.5
y_in = 1.5
size_mm = 40
[[anchors]]
id = 1
x_in = 28.5
y_in = 1.5
size_mm = 40
[[anchors]]
id = 2
x_in = 28.5
y_in = 20.5
size_mm = 40
[[anchors]]
id = 3
x_in = 1.5
y_in = 20.5
size_mm = 40
[camera]
position = [15, -8, 28]
look_at = [15, 10, 0]
size = [1280, 720]
[[models]]
id = "climber"
side = "a"
base = {{ shape = "round", diameter_mm = 40 }}
movement = 6
marker = 10
marker_size_mm = 20
marker_offset_mm = [-9, 0]
{figure}
start = [{start}]
[[models]]
id = "runner"
side = "a"
base = {{ shape = "round", diameter_mm = 40 }}
movement = 6
marker = 11
marker_size_mm = 20
marker_offset_mm = [-9, 0]
figure = {{ height_mm = 40, width_mm = 16, offset_mm = [12.5, 0] }}
start = [6, 6, 90]
[[terrain]]
id = "tower"
marker = 20
marker_size_mm = 30
marker_height_mm = 127
height = 5
polygon = [[-2.5, -1.5], [1.5, -1.5], [1.5, 1.5], [-2.5, 1.5]]
at = [21.5, 12, 0]
{actions}
"""


def _story(
    tmp_path: Path,
    *,
    duration: float = 1.0,
    shot: str = "",
    webcam: str = "",
    figure: str = "figure = { height_mm = 45, width_mm = 16, offset_mm = [12.5, 0] }",
    start: str = "19.9, 12, 90, 5",
    actions: str = "",
) -> Storyboard:
    path = tmp_path / "story.toml"
    path.write_text(
        STORY.format(
            duration=duration,
            shot=shot,
            webcam=webcam,
            figure=figure,
            start=start,
            actions=actions,
        )
    )
    return load_storyboard(path)


def test_a_model_standing_on_a_tower_is_rendered_at_its_height(tmp_path: Path) -> None:
    """start = [x, y, heading, z]: the climber's marker at 5 in + 4 mm on the tower's top
    (a figure 12.5 mm behind it),
    the tower's own marker at 127 mm: both found where their true corners project."""
    story = _story(tmp_path)
    picture = next(frames(story)).image
    found = _detect(picture)
    # the climber: centre (20, 12) heading 90, marker 9 mm behind the centre
    climber = PlacedMarker(10, 20.0, 19.9, 12.0 - 9 / MM_PER_IN, 5.0 + 4 / MM_PER_IN, 90.0)
    tower = PlacedMarker(20, 30.0, 21.5, 12.0, 5.0, 0.0)
    for marker in (climber, tower):
        truth = story.camera.project(marker.corners_in())
        assert np.linalg.norm(found[marker.id].mean(axis=0) - truth.mean(axis=0)) < 0.2
        # the climber's 20 mm marker is 17 px tall here: cornerSubPix pulls its corners
        # ~0.5 px inward (symmetrically: the centre stays)
        assert np.linalg.norm(found[marker.id] - truth, axis=1).max() < 0.8
    assert {0, 1, 2, 3, 11} <= set(found)
    assert story.pose_at("climber", 0.0).z == 5.0


def test_a_move_lifts_a_model_onto_the_tower(tmp_path: Path) -> None:
    actions = '[[actions]]\nkind = "move"\nmodel = "climber"\nto = [19.9, 12, 90, 5]\nat = 0.4\n'
    story = _story(tmp_path, start="12, 12, 90", actions=actions + "seconds = 1.0")
    assert story.pose_at("climber", 0.9).z == pytest.approx(2.5)
    assert story.pose_at("climber", 1.5).z == 5.0
    story = _story(tmp_path, duration=2.0, start="12, 12, 90", actions=actions + "seconds = 1.0")
    last = list(frames(story))[-1].image
    truth = story.camera.project(
        PlacedMarker(10, 20.0, 19.9, 12.0 - 9 / MM_PER_IN, 5.0 + 4 / MM_PER_IN, 90).corners_in()
    )
    assert np.linalg.norm(_detect(last)[10].mean(axis=0) - truth.mean(axis=0)) < 0.2


def test_a_model_lifted_onto_the_tower_over_its_marker_is_located_on_its_top(
    tmp_path: Path,
) -> None:
    """The climber is carried from the ground onto the tower's top at (22.8, 12) facing
    +x, its card and figure over the tower's marker: the referee's detector does not find
    that marker in the last frames, yet the observer, which placed the tower from the
    first frames, puts the climber on it: at exactly 5 in, where the storyboard put it to
    within 0.1 in (measured: 0.004 in; with the tower known only from the frame itself,
    0.06 in off at 4.93 in)."""
    actions = (
        '[[actions]]\nkind = "move"\nmodel = "climber"\nto = [22.8, 12, 0, 5]\n'
        "at = 0.4\nseconds = 1.0\n"
    )
    story = _story(tmp_path, duration=2.2, start="12, 12, 90", actions=actions)
    observer = Observer(story.table, list(story.roster), story.camera.calibrated(), story.terrain)
    seen = []
    for frame in frames(story):
        observation = observer.observe(frame)
        seen.append(set(observation.detections.ids.tolist()))
    assert 20 in seen[0] and 20 not in seen[-1] and 10 in seen[-1]
    truth = story.pose_at("climber", observation.t)
    assert (truth.x, truth.y, truth.z) == (22.8, 12.0, 5.0)
    [climber] = [m for m in observation.models if m.id == "climber"]
    assert climber.pose.z == 5.0
    assert math.dist(climber.pose.xy, (truth.x, truth.y)) < 0.1


def test_bad_figure_is_one_line_naming_the_file_and_field(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"story\.toml: models\[0\]\.figure\.height_mm: "):
        _story(tmp_path, figure="figure = { height_mm = -4 }")
    with pytest.raises(InputError, match=r"story\.toml: models\[0\]\.figure\.hat: "):
        _story(tmp_path, figure="figure = { hat = 1 }")
    with pytest.raises(InputError, match=r"story\.toml: webcam\.codec: "):
        _story(tmp_path, webcam='codec = "divx"')


def _mid_carry(tmp_path: Path, blur: float, runner: bool = True) -> np.ndarray:
    """Frame 15 (0.5 s) of the runner carried 8 in along +x in 1 s, the arm from below;
    no noise, blur or JPEG, so any change is the hand's.  Without the runner: the table
    under the hand (the runner is off it all along)."""
    actions = (
        '[[actions]]\nkind = "move"\nmodel = "runner"\nto = [14, 6, 90]\n'
        'at = 0.1\nseconds = 1.0\narm = "bottom"'
    )
    story = _story(tmp_path, webcam=f"motion_blur_s = {blur}", actions=actions)
    story = dataclasses.replace(story, shot=CLEAN_SHOT)
    if not runner:
        story = dataclasses.replace(
            story,
            roster=[m for m in story.roster if m.id != "runner"],
            start={k: v for k, v in story.start.items() if k != "runner"},
            actions=[],
            figures={"climber": story.figures["climber"]},
        )
    return [f.image for f in frames(story)][15]


@pytest.mark.slow
def test_motion_blur_smears_the_carried_model_along_its_motion(tmp_path: Path) -> None:
    """The runner moves 8 in/s along +x; with the shutter open 1/15 s the hand (and the
    figure it carries) smears back along its path by the distance its marker point
    travels in the picture in that time (projected here from the true poses), while its
    extent across the motion (the fingertips' edge) stays put."""
    shutter = 1 / 15
    table = _mid_carry(tmp_path, 0.0, runner=False)
    sharp = _mid_carry(tmp_path, 0.0)
    blurred = _mid_carry(tmp_path, shutter)
    story = _story(tmp_path)
    t = 0.5
    mark = (-9 / MM_PER_IN, 4 / MM_PER_IN)
    path = [[6 + 8 * (when - 0.1), 6 + mark[0], mark[1]] for when in (t - shutter, t)]
    ends = story.camera.project(np.array(path))
    travel = ends[1] - ends[0]
    assert abs(travel[1]) < 0.1 * abs(travel[0])  # along the picture's x
    extents = {}
    for name, img in (("sharp", sharp), ("blurred", blurred)):
        changed = np.abs(img.astype(int) - table.astype(int)).sum(axis=2) > 3
        ys, xs = np.nonzero(changed)
        extents[name] = (xs.min(), xs.max(), ys.min())
    grown_back = extents["sharp"][0] - extents["blurred"][0]
    assert 0.85 * travel[0] < grown_back < travel[0] + 1.5, (grown_back, travel)
    # the leading edge is where the hand is now (its faint antialiased rim, 1/n as
    # strong once averaged over n instants, drops under the threshold)
    assert abs(extents["sharp"][1] - extents["blurred"][1]) <= 2
    assert abs(extents["sharp"][2] - extents["blurred"][2]) <= 1  # across: no smear


def test_exposure_drift_scales_the_picture_by_the_gain(tmp_path: Path) -> None:
    story = _story(
        tmp_path,
        duration=4.0,
        shot="noise_sigma = 0\njpeg_quality = 95\n",
        webcam="exposure_drift = 0.2\nexposure_period_s = 3.0\nseed = 4",
    )
    pictures = {f.index: f.image for f in frames(story) if f.index % 15 == 0}
    gains = [exposure_gain(i / 30, 0.2, 3.0, 4) for i in pictures]
    assert max(gains) - min(gains) > 0.2  # it does drift, by up to +-20 %
    first = pictures[0].astype(float)
    ratios = []
    for img in pictures.values():
        unclipped = (first < 200) & (img < 250)
        ratios.append(img[unclipped].sum() / first[unclipped].sum())
    np.testing.assert_allclose(ratios, np.array(gains) / gains[0], rtol=0.005)
    for img in pictures.values():
        assert {0, 1, 2, 3, 10, 11, 20} <= set(_detect(img))


def test_h264_at_3_mbit_decodes_with_opencv_and_markers_detect(tmp_path: Path) -> None:
    """Real H.264 (libx264 through PyAV) at 3000 kbit/s: OpenCV reads it back as h264, the
    stream is within 30 % of the asked bitrate, and every marker is found in every frame."""
    story = _story(
        tmp_path,
        duration=3.0,
        webcam='codec = "h264"\nbitrate_kbps = 3000\nexposure_drift = 0.1',
        actions=(
            '[[actions]]\nkind = "move"\nmodel = "runner"\nto = [12, 6, 90]\n'
            "at = 0.5\nseconds = 1.5"
        ),
    )
    info = write_video(story, tmp_path / "clip.mp4")
    cap = cv2.VideoCapture(str(info.path))
    fourcc = int(cap.get(cv2.CAP_PROP_FOURCC)).to_bytes(4, "little").decode()
    cap.release()
    assert fourcc.lower() in ("h264", "avc1")
    decoded = pictures(info.path)
    assert len(decoded) == info.frames == 90
    kbps = info.bytes * 8 / info.seconds / 1000
    assert 0.7 * 3000 < kbps < 1.3 * 3000, kbps
    fixed = {0, 1, 2, 3, 10, 20}  # anchors, the climber on the tower, the tower
    rate = np.mean([fixed <= set(_detect(img)) for img in decoded])
    assert rate == 1.0
