"""A slice of the occlusion study (``tablesight bench occlusion``): at the recommended
set-up every model standing under its figure is located within 0.05 in, and at a low
angle the figures hide markers lying on the bases that are all found without them.

Every number is measured against the rendered ground truth (where each model was placed),
through the real pipeline (detect, table pose, locate).
"""

from __future__ import annotations

import math

import pytest

from tablesight.calibration.table import MM_PER_IN
from tablesight.rig.occlusion import GOOD_IN, PLACEMENTS, camera_for, layout, measure_camera

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
