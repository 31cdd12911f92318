"""Base contact between every pair of base shapes, from every side, in every game that
moves into contact.

A base that boards, engages or charges another and ends touching it (or 0.01" short, well
within the 0.05" tolerance) made a legal move: its straight route is measured as such and
no rule is broken. Where the two bases touch is found here independently of the referee:
both outlines as 720-gons with their vertices on the true curves (an ellipse's 720-gon is
within ``a * (1 - cos(pi / 720)) < 2e-5`` in of it), slid together along the line of
approach by bisection on shapely's distance between the polygons. The mover starts 3"
further out along the same line, which leads straight away from the (convex) target, so
its shortest legal route is that straight 3".
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from shapely.geometry import Polygon

MM_PER_IN = 25.4
#: Where the target stands, mid-table on the 48 x 24 in table of the scenarios.
TARGET_XY = (24.0, 12.0)
#: How far the mover comes from, along the line of approach (inches).
RUN_IN = 3.0

#: A game, the action that moves into base contact, and what else that action needs.
CONTACT_ACTIONS = [
    ("cosmic-combat", "board", {}),
    ("trench-crusade", "charge", {"roll": 3}),
    ("necromunda", "charge", {"roll": 2}),
]


@st.composite
def bases(draw: st.DrawFn) -> dict[str, object]:
    shape = draw(st.sampled_from(["round", "oval", "rect"]))
    if shape == "round":
        return {"shape": "round", "diameter_mm": draw(st.floats(20.0, 80.0))}
    length = draw(st.floats(25.0, 120.0))
    width = draw(st.floats(20.0, length))
    return {"shape": shape, "length_mm": length, "width_mm": width}


def outline(base: dict[str, object], xy: tuple[float, float], heading: float) -> Polygon:
    """The base's true outline (a 720-gon on a curve), in inches."""
    if base["shape"] == "round":
        half_l = half_w = float(base["diameter_mm"]) / MM_PER_IN / 2.0
    else:
        half_l = float(base["length_mm"]) / MM_PER_IN / 2.0
        half_w = float(base["width_mm"]) / MM_PER_IN / 2.0
    if base["shape"] == "rect":
        corners = [(-half_l, -half_w), (half_l, -half_w), (half_l, half_w), (-half_l, half_w)]
        local = np.array(corners)
    else:
        t = np.linspace(0.0, 2.0 * math.pi, 720, endpoint=False)
        local = np.column_stack([half_l * np.cos(t), half_w * np.sin(t)])
    a = math.radians(heading)
    turn = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    return Polygon(local @ turn.T + np.asarray(xy))


def contact_centre(
    mover: dict[str, object],
    mover_heading: float,
    target: dict[str, object],
    target_heading: float,
    approach: float,
    gap_in: float,
) -> tuple[float, float]:
    """Where the mover's centre stands ``gap_in`` from the target along ``approach``."""
    fixed = outline(target, TARGET_XY, target_heading)
    ux, uy = math.cos(math.radians(approach)), math.sin(math.radians(approach))
    near, far = 0.0, 8.0
    for _ in range(48):  # 8 / 2^48: far below a millionth of an inch
        mid = (near + far) / 2.0
        at = (TARGET_XY[0] + ux * mid, TARGET_XY[1] + uy * mid)
        moving = outline(mover, at, mover_heading)
        if fixed.intersects(moving) or fixed.distance(moving) < gap_in:
            near = mid
        else:
            far = mid
    return TARGET_XY[0] + ux * far, TARGET_XY[1] + uy * far


@pytest.mark.parametrize(("game", "action", "declared"), CONTACT_ACTIONS)
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    mover=bases(),
    target=bases(),
    mover_heading=st.floats(0.0, 360.0, exclude_max=True),
    target_heading=st.floats(0.0, 360.0, exclude_max=True),
    approach=st.floats(0.0, 360.0, exclude_max=True),
    gap_in=st.sampled_from([0.0, 0.01]),
)
# Touching the tip of a small oval head on: the tip of the polygon around its curve stands
# 0.49 * (1/cos(pi/32) - 1) = 0.0024 in beyond the oval's half length.
@example(
    mover={"shape": "round", "diameter_mm": 20.0},
    target={"shape": "oval", "length_mm": 25.0, "width_mm": 20.0},
    mover_heading=0.0,
    target_heading=0.0,
    approach=0.0,
    gap_in=0.0,
)
def test_moving_into_base_contact_is_legal_for_every_shape_and_angle(
    kit, game, action, declared, mover, target, mover_heading, target_heading, approach, gap_in
):
    x, y = contact_centre(mover, mover_heading, target, target_heading, approach, gap_in)
    ux, uy = math.cos(math.radians(approach)), math.sin(math.radians(approach))
    start = (x + RUN_IN * ux, y + RUN_IN * uy, 0.0, mover_heading)
    models = [
        kit.model(
            "m",
            "red",
            start,
            (x, y, 0.0, mover_heading),
            movement=8,
            base=mover,
            action=action,
            target="t",
            **declared,
        ),
        kit.model("t", "blue", (*TARGET_XY, 0.0, target_heading), base=target),
    ]
    verdict = kit.judge(game, models)
    assert verdict.rules() == [], [f.message for f in verdict.violations]
    # touching (or 0.01 short, within the 0.05 tolerance): no failed charge, no close call
    assert [f.rule for f in verdict.advisories if f.rule in ("charge", "close_call")] == []
    kit.assert_path(verdict, "m", RUN_IN)


@pytest.mark.parametrize(("game", "action", "declared"), CONTACT_ACTIONS)
@pytest.mark.parametrize("gap_in", [0.0, 0.01])
@pytest.mark.parametrize("approach", [0.0, 37.0, 90.0, 128.0, 180.0, 301.0])
def test_a_round_base_reaches_a_100mm_oval_from_any_side(
    kit, game, action, declared, gap_in, approach
):
    # The 100 x 60 mm oval's polygon around its curve stands up to 1.97 * (1/cos(pi/32) - 1)
    # = 0.0095 in proud of it: a 25 mm base touching the curve must not be inside that.
    mover = {"shape": "round", "diameter_mm": 25.0}
    target = {"shape": "oval", "length_mm": 100.0, "width_mm": 60.0}
    x, y = contact_centre(mover, 0.0, target, 31.0, approach, gap_in)
    ux, uy = math.cos(math.radians(approach)), math.sin(math.radians(approach))
    models = [
        kit.model(
            "m",
            "red",
            (x + RUN_IN * ux, y + RUN_IN * uy),
            (x, y),
            movement=8,
            base=mover,
            action=action,
            target="t",
            **declared,
        ),
        kit.model("t", "blue", (*TARGET_XY, 0.0, 31.0), base=target),
    ]
    verdict = kit.judge(game, models)
    assert verdict.rules() == [], [f.message for f in verdict.violations]
    kit.assert_path(verdict, "m", RUN_IN)
