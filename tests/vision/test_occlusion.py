"""A slice of the occlusion study (``tablesight bench occlusion``): at the recommended
set-up every model standing under its figure is located within 0.05 in, and at a low
angle the figures hide markers lying on the bases that are all found without them.

Every number is measured against the rendered ground truth (where each model was placed),
through the real pipeline (detect, table pose, locate).
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from tablesight.calibration.table import MM_PER_IN
from tablesight.rig.occlusion import (
    GOOD_IN,
    PLACEMENTS,
    _figure_job,
    camera_for,
    head_marker_mm,
    layout,
    measure_camera,
    overhead_camera,
)
from tablesight.rig.synth import PinholeCamera

UHD = (3840, 2160)


def test_layouts_stand_as_players_stand_them_with_room_for_every_marker() -> None:
    models = layout(0)
    assert len(models) == 36
    assert {m.base_mm for m in models} <= {25.0, 28.0, 32.0, 40.0}
    assert all(30.0 <= m.figure.height_mm <= 60.0 for m in models)
    shapes = [m.footprint() for m in models]
    for i, a in enumerate(shapes):  # bases and tabs never overlap
        assert all(a.distance(b) >= 0.1 for b in shapes[i + 1 :])
    # most models stand in units: within 2.5 in (centre to centre) of another
    close = sum(
        any(math.dist((m.x, m.y), (n.x, n.y)) < 2.5 for n in models if n is not m) for m in models
    )
    assert close >= 24
    for m in models:
        figure = m.figure
        back = -figure.offset_mm[0] + figure.width_mm / 2
        assert back <= m.base_mm / 2  # the figure stands on its base
        rim, _, forward = m.marker_at("rim")
        card = rim * 8 / 6
        assert forward - card / 2 >= figure.offset_mm[0] + figure.width_mm / 2  # clear of it
        assert math.hypot(forward + card / 2, card / 2) <= m.base_mm / 2  # on the base
        assert 5.0 <= rim <= 11.0
        assert m.marker_at("head")[1] == pytest.approx(4.0 + figure.height_mm)


def test_the_camera_sees_the_whole_table_with_a_70_degree_lens_or_the_narrowest_wider() -> None:
    assert math.degrees(2 * math.atan(960 / camera_for(42, 35).fx)) == pytest.approx(70.0)
    wide = camera_for(30, 0)  # 30 in straight down: a 70 degree lens sees 22 in of depth
    hfov = math.degrees(2 * math.atan(960 / wide.fx))
    assert 80.0 < hfov < 82.0
    assert wide.position_in == pytest.approx((22.0, 15.0, 30.0))
    tilted = camera_for(42, 35)
    assert tilted.position_in == pytest.approx((22.0, 15.0 - 42 * math.tan(math.radians(35)), 42))


@pytest.mark.slow
def test_at_the_recommended_set_up_every_model_is_located_within_0_05_in() -> None:
    """4K, 42 in up, tilted 35 degrees (the recommendation's highest and most tilted
    corner), markers on the figures' heads: measured 72 of 72 located, median 0.001 in,
    the worst 0.006 in (on 288 more models, ``bench occlusion``: 288 of 288, the worst
    0.009 in)."""
    [cell] = measure_camera(42, 35, UHD, seeds=(0, 1), placements=("head",))
    assert cell.models == 72
    assert cell.within >= 0.99
    assert cell.median_in < 0.005
    assert max(cell.errors_in) < GOOD_IN


@pytest.mark.slow
def test_at_a_low_angle_figures_hide_the_markers_on_their_bases() -> None:
    """30 in up, tilted 50 degrees, 4K: tab markers (15 mm, 29 px) are all found with no
    figures standing, but only 25 of 36 (69 %) with them; measured 15 of 18 found when the
    model faces the camera and 10 of 18 when it faces away (its own figure between). Head
    markers are found 36 of 36 either way. Rim markers (5-10.5 mm, 13 px) are too small to
    tell: 10 and 11 of 36."""
    with_figures = {c.placement: c for c in measure_camera(30, 50, UHD, seeds=(0,))}
    bare = {c.placement: c for c in measure_camera(30, 50, UHD, seeds=(0,), figures=False)}
    assert set(with_figures) == set(PLACEMENTS)
    assert bare["tab"].detection == 1.0
    assert with_figures["tab"].detection <= 0.8
    assert with_figures["tab"].located_facing(False) < with_figures["tab"].located_facing(True)
    assert with_figures["head"].detection == bare["head"].detection == 1.0
    assert with_figures["rim"].detection <= bare["rim"].detection
    # the markers located are still where they belong: hiding loses models, never moves them
    assert max(with_figures["tab"].errors_in) < GOOD_IN
    assert MM_PER_IN * max(with_figures["head"].errors_in) < 0.5


def test_the_head_marker_is_three_quarters_of_the_narrowest_figure_a_base_carries() -> None:
    # figures are half to three fifths of their base wide; 0.75 x 0.5 x base, to 0.5 mm
    # below: 25 mm -> 9.375 -> 9; 28 -> 10.5; 32 -> 12; 40 -> 15; 50 -> 18.75 -> 18.5
    assert [head_marker_mm(b) for b in (25.0, 28.0, 32.0, 40.0, 50.0)] == [
        9.0,
        10.5,
        12.0,
        15.0,
        18.5,
    ]
    for m in layout(3, table_in=(30.0, 22.0), bases=(25.0,), head_mm=head_marker_mm(25.0)):
        assert m.marker_at("head")[0] == 9.0
        assert m.figure.width_mm >= 9.0 * 8 / 6  # its card (one-cell border) on the head


@pytest.mark.parametrize("table_in", [(30.0, 22.0), (44.0, 30.0), (72.0, 48.0)])
def test_the_overhead_camera_is_as_low_as_sees_the_table_with_an_inch_to_spare(
    table_in: tuple[float, float],
) -> None:
    w, d = table_in
    camera = overhead_camera(table_in, (1920, 1080))
    x, y, z = camera.position_in
    assert (x, y) == pytest.approx((w / 2, d / 2))
    # a pinhole 70 degree lens straight down sees depth d + 2 at z = (d/2 + 1) /
    # (tan 35 x 1080/1920); the lens's barrel distortion sees a little more, so lower
    pinhole = max((w / 2 + 1) / math.tan(math.radians(35)), (d / 2 + 1) / (0.7002 * 0.5625))
    assert 0.9 * pinhole < z <= pinhole
    edge = np.array([[-1.0, -1.0, 0], [w + 1, -1.0, 0], [w + 1, d + 1, 0], [-1.0, d + 1, 0]])

    def outermost_px(cam: PinholeCamera) -> float:  # OpenCV's projection, not the rig's
        rvec, tvec = np.array(cam.rvec), np.array(cam.tvec)
        px, _ = cv2.projectPoints(edge, rvec, tvec, cam.camera_matrix, cam.dist_coeffs)
        px = px.reshape(-1, 2)
        return float(max((-px).max(), (px - [1919, 1079]).max()))

    assert -0.5 <= outermost_px(camera) <= 0.0  # inside the picture, on its very edge
    lower = PinholeCamera.looking_at((x, y, z - 0.5), (x, y, 0.0), 1920, 1080)
    assert outermost_px(lower) > 0.0  # half an inch lower loses the spare inch's edge


@pytest.mark.slow
def test_with_figures_standing_32_mm_bases_on_a_44_by_30_table_need_4k() -> None:
    """The README's lead table, one cell: 36 models on 32 mm bases under their figures,
    12 mm head markers, the overhead camera. Measured: at 1080p (16-17 px) 34 of 36
    located; at 4K (33 px) 36 of 36 within 0.05 in."""
    job = ((44.0, 30.0), 32.0)
    hd = _figure_job((*job, (1920, 1080), (200,), 36))
    uhd = _figure_job((*job, (3840, 2160), (200,), 36))
    assert hd.models == uhd.models == 36
    assert hd.located < 36
    assert sorted(hd.sides_px)[0] < 18.0
    assert uhd.within == 1.0
    assert max(uhd.errors_in) < GOOD_IN
