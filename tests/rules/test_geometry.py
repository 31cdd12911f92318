"""Bases, footprints and edge distances (rules.geometry) against independent arithmetic.

Every expected number is worked out here from first principles (hypot, cos, sin), never
with the function under test. Curved bases are measured as N-gons whose vertices lie on the
true curve (N = FINE_SEGMENTS), so a distance involving one may exceed the truth by the
polygon's sagitta, at most ``a * (1 - cos(pi / N))`` for an ellipse of half length ``a``
(the polygon is the affine image of a regular N-gon inscribed in the unit circle).
Round-round distances are exact.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely.geometry import Polygon

from tablesight.rules.geometry import (
    CIRCLE_SEGMENTS,
    FINE_SEGMENTS,
    MM_PER_IN,
    Base,
    Pose,
    edge_distance,
    gap_lower_bound,
    inflate,
    overlap_depth,
)

#: Relative nudge that puts a sample point strictly on one side of a curve.
NUDGE = 1e-9

FAST = settings(max_examples=60, deadline=None)

coord = st.floats(-20.0, 20.0, allow_nan=False, allow_infinity=False)
heading = st.floats(0.0, 360.0, allow_nan=False, allow_infinity=False, exclude_max=True)
poses = st.builds(Pose, coord, coord, heading)
round_bases = st.builds(Base.round, st.floats(20.0, 120.0))


@st.composite
def oval_bases(draw: st.DrawFn) -> Base:
    length = draw(st.floats(30.0, 170.0))
    width = draw(st.floats(20.0, length))
    return Base("oval", length, width)


rect_bases = st.builds(
    lambda length, width: Base("rect", length, width),
    st.floats(10.0, 200.0),
    st.floats(10.0, 200.0),
)
curved_bases = st.one_of(round_bases, oval_bases())
any_bases = st.one_of(round_bases, oval_bases(), rect_bases)


def half_axes(base: Base) -> tuple[float, float]:
    """(half length, half width) in inches, straight from the millimetres."""
    return base.length_mm / 25.4 / 2.0, base.width_mm / 25.4 / 2.0


def sagitta(*bases: Base) -> float:
    """Most the N-gons of ``bases`` can add to a distance: a (1 - cos(pi/N)) per curved base."""
    total = 1e-9
    for base in bases:
        if base.shape != "rect":
            total += max(half_axes(base)) * (1.0 - math.cos(math.pi / FINE_SEGMENTS))
    return total


def to_table(pose: Pose, local: np.ndarray) -> np.ndarray:
    """Base-local points (x along the heading) turned by the heading and moved to the centre."""
    c, s = math.cos(math.radians(pose.heading)), math.sin(math.radians(pose.heading))
    rot = np.array([[c, -s], [s, c]])
    return np.asarray(local @ rot.T + np.array([pose.x, pose.y]))


def contains(polygon: Polygon, pts: np.ndarray) -> np.ndarray:
    return np.asarray(shapely.contains_xy(polygon, pts[:, 0], pts[:, 1]))


def sample_angles(offset: float, n: int = 720) -> np.ndarray:
    """Dense curve parameters, plus every vertex and mid-edge of fine and coarse polygons."""
    fine = np.arange(2 * FINE_SEGMENTS) * math.pi / FINE_SEGMENTS
    coarse = np.arange(2 * CIRCLE_SEGMENTS) * math.pi / CIRCLE_SEGMENTS
    dense = offset + np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
    return np.concatenate([dense, fine, coarse])


def ellipse_and_normals(a: float, b: float, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points (a cos t, b sin t) of an ellipse and their unit outward normals."""
    pts = np.column_stack([a * np.cos(t), b * np.sin(t)])
    # the gradient of x^2/a^2 + y^2/b^2 points along (cos t / a, sin t / b)
    n = np.column_stack([np.cos(t) / a, np.sin(t) / b])
    return pts, n / np.hypot(n[:, 0], n[:, 1])[:, None]


def convex_polygon_and_normals(xy: np.ndarray, k: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Points along a counterclockwise convex polygon with outward normals, and at each
    corner the whole fan of normals between its two sides (its rounded corner once grown)."""
    pts, normals = [], []
    u = np.linspace(0.0, 1.0, k)
    n = len(xy)
    for i in range(n):
        p, q = xy[i], xy[(i + 1) % n]
        edge = q - p
        normal = np.array([edge[1], -edge[0]]) / math.hypot(*edge)
        pts.append(p + u[:, None] * edge)
        normals.append(np.tile(normal, (k, 1)))
        prev = xy[i] - xy[i - 1]
        prev_normal = np.array([prev[1], -prev[0]]) / math.hypot(*prev)
        a0 = math.atan2(prev_normal[1], prev_normal[0])
        turn = (math.atan2(normal[1], normal[0]) - a0) % (2 * math.pi)
        fan = a0 + u * turn
        pts.append(np.tile(p, (k, 1)))
        normals.append(np.column_stack([np.cos(fan), np.sin(fan)]))
    return np.concatenate(pts), np.concatenate(normals)


# -- edge_distance: symmetry and bounds -------------------------------------------------


@FAST
@given(round_bases, poses, round_bases, poses)
def test_edge_distance_symmetric_round(a: Base, pa: Pose, b: Base, pb: Pose) -> None:
    assert edge_distance(a, pa, b, pb) == pytest.approx(edge_distance(b, pb, a, pa), abs=1e-6)


@FAST
@given(any_bases, poses, any_bases, poses)
def test_edge_distance_symmetric_any_shape(a: Base, pa: Pose, b: Base, pb: Pose) -> None:
    assert edge_distance(a, pa, b, pb) == pytest.approx(edge_distance(b, pb, a, pa), abs=1e-3)


@FAST
@given(any_bases, poses, any_bases, st.floats(0.0, 3.0), st.floats(-math.pi, math.pi))
def test_edge_distance_symmetric_when_close(
    a: Base, pa: Pose, b: Base, d: float, angle: float
) -> None:
    # Random poses are mostly far apart; here b stands within 3 in of a, often overlapping
    # it, so the overlap branch is exercised too.
    pb = Pose(pa.x + d * math.cos(angle), pa.y + d * math.sin(angle), (pa.heading + 37.0) % 360)
    assert edge_distance(a, pa, b, pb) == pytest.approx(edge_distance(b, pb, a, pa), abs=1e-3)


@FAST
@given(st.floats(1.0, 200.0), poses, st.floats(1.0, 200.0), poses)
def test_edge_distance_round_round_is_centre_distance_minus_radii(
    da: float, pa: Pose, db: float, pb: Pose
) -> None:
    # radius in inches = diameter / 25.4 / 2 = diameter / 50.8
    expected = math.sqrt((pa.x - pb.x) ** 2 + (pa.y - pb.y) ** 2) - da / 50.8 - db / 50.8
    got = edge_distance(Base.round(da), pa, Base.round(db), pb)
    assert got == pytest.approx(expected, abs=1e-12)


@FAST
@given(curved_bases, poses, curved_bases, st.floats(0.0, 8.0), st.floats(-math.pi, math.pi))
def test_edge_distance_curved_bracketed_by_half_lengths_and_half_widths(
    a: Base, pa: Pose, b: Base, d: float, angle: float
) -> None:
    # Each base lies inside the disc of its half length and contains the disc of its half
    # width, so when apart its gap lies between the gaps of those discs. (Overlaps: see
    # test_overlap_depth_of_deeply_overlapping_discs.)
    pb = Pose(pa.x + d * math.cos(angle), pa.y + d * math.sin(angle), (pa.heading + 71.0) % 360)
    (la, wa), (lb, wb) = half_axes(a), half_axes(b)
    got = edge_distance(a, pa, b, pb)
    if got > 0.0:
        assert d - la - lb - 1e-9 <= got <= d - wa - wb + sagitta(a, b)
    else:
        assert d <= la + lb + 1e-9  # overlapping bases: their half-length discs overlap


@FAST
@given(curved_bases, poses, curved_bases, st.floats(0.0, 8.0), st.floats(-math.pi, math.pi))
def test_gap_lower_bound_below_edge_distance_curved(
    a: Base, pa: Pose, b: Base, d: float, angle: float
) -> None:
    pb = Pose(pa.x + d * math.cos(angle), pa.y + d * math.sin(angle), (pa.heading + 71.0) % 360)
    # centre distance minus both half lengths: d - la - lb
    (la, _), (lb, _) = half_axes(a), half_axes(b)
    bound = gap_lower_bound(a, pa, b, pb)
    assert bound == pytest.approx(d - la - lb, abs=1e-9)
    got = edge_distance(a, pa, b, pb)
    if got > 0.0:  # overlaps: see test_overlap_depth_of_deeply_overlapping_discs
        assert bound <= got + 1e-9


@pytest.mark.parametrize(
    ("pose_b", "heading"),
    [
        # corners (1, 0.5) and (2 - 1, 1 - 0.5) meet: gap 0; bound hypot(2, 1) - 1 - 1
        (Pose(2, 1), 0.0),
        # 2 in squares turned 45 deg, corners at +-sqrt(2) on the x axis, centres 2.5 apart:
        # they overlap, while the bound says 2.5 - 1 - 1 = +0.5
        (Pose(2.5, 0, 45), 45.0),
    ],
    ids=["rects corner to corner", "diamonds overlapping"],
)
def test_gap_lower_bound_below_edge_distance_rect(pose_b: Pose, heading: float) -> None:
    rect = Base("rect", 50.8, 25.4) if heading == 0.0 else Base("rect", 50.8, 50.8)
    pa = Pose(0, 0, heading)
    got = edge_distance(rect, pa, rect, pose_b)
    assert got <= 1e-9  # touching or overlapping
    assert gap_lower_bound(rect, pa, rect, pose_b) <= got + 1e-9


@FAST
@given(rect_bases, poses, rect_bases, st.floats(0.0, 10.0), st.floats(-math.pi, math.pi))
def test_half_diagonal_bound_below_edge_distance_rect(
    a: Base, pa: Pose, b: Base, d: float, angle: float
) -> None:
    # What a lower bound for rects must use: each rect lies in the disc of its half
    # diagonal, hypot(length, width) / 2, so the gap is at least d minus both.
    pb = Pose(pa.x + d * math.cos(angle), pa.y + d * math.sin(angle), (pa.heading + 23.0) % 360)
    reach_a, reach_b = math.hypot(*half_axes(a)), math.hypot(*half_axes(b))
    got = edge_distance(a, pa, b, pb)
    if got > 0.0:
        assert got >= d - reach_a - reach_b - 1e-9


# -- edge_distance: exact table ----------------------------------------------------------

OVAL = Base("oval", 60.0, 35.0)
R32 = 32.0 / 25.4 / 2.0  # 0.6299... in
OVAL_L, OVAL_W = 30.0 / 25.4, 17.5 / 25.4  # half axes of the 60 x 35 mm oval, in inches
C30, S30 = math.cos(math.radians(30.0)), math.sin(math.radians(30.0))
SQUARE = Base("rect", 50.8, 50.8)  # 2 x 2 in

EXACT_CASES = [
    # 32 mm bases 3 in apart: 3 - 2 * 16/25.4 = 3 - 32/25.4 = 1.7401574803...
    ("32mm 3in apart", Base.round(32), Pose(0, 0), Base.round(32), Pose(3, 0), 3 - 32 / 25.4),
    # 1 in bases, centres a 3-4-5 triangle apart: 5 - 0.5 - 0.5 = 4
    ("25.4mm 3-4-5", Base.round(25.4), Pose(0, 0), Base.round(25.4), Pose(3, 4), 4.0),
    # 25 and 40 mm bases on a diagonal: sqrt(2^2 + 2^2) - 12.5/25.4 - 20/25.4
    (
        "25mm-40mm diagonal",
        Base.round(25),
        Pose(1, 1),
        Base.round(40),
        Pose(3, 3),
        math.sqrt(8) - 12.5 / 25.4 - 20 / 25.4,
    ),
    # base to base contact: centres exactly one diameter apart
    ("32mm touching", Base.round(32), Pose(0, 0), Base.round(32), Pose(32 / 25.4, 0), 0.0),
    # 32 mm bases pressed 0.25 in together: centres 32/25.4 - 0.25 apart
    (
        "32mm overlapping",
        Base.round(32),
        Pose(0, 0),
        Base.round(32),
        Pose(0, 32 / 25.4 - 0.25),
        -0.25,
    ),
    # 60x35 oval, round 32 mm 4 in along the length axis: 4 - 30/25.4 - 16/25.4
    ("oval length axis", OVAL, Pose(0, 0), Base.round(32), Pose(4, 0), 4 - OVAL_L - R32),
    ("oval length axis -x", OVAL, Pose(0, 0), Base.round(32), Pose(-4, 0), 4 - OVAL_L - R32),
    # ... 4 in along the width axis: 4 - 17.5/25.4 - 16/25.4
    ("oval width axis", OVAL, Pose(0, 0), Base.round(32), Pose(0, 4), 4 - OVAL_W - R32),
    ("oval width axis -y", OVAL, Pose(0, 0), Base.round(32), Pose(0, -4), 4 - OVAL_W - R32),
    # turned 90 degrees the length axis points along +y: 4 - 30/25.4 - 16/25.4
    ("oval turned 90", OVAL, Pose(0, 0, 90), Base.round(32), Pose(0, 4), 4 - OVAL_L - R32),
    # turned 30 degrees, round 5 in along (cos 30, sin 30) from (2, -1): 5 - 30/25.4 - 16/25.4
    (
        "oval turned 30 length axis",
        OVAL,
        Pose(2, -1, 30),
        Base.round(32),
        Pose(2 + 5 * C30, -1 + 5 * S30),
        5 - OVAL_L - R32,
    ),
    # ... and 5 in along the width axis (-sin 30, cos 30): 5 - 17.5/25.4 - 16/25.4
    (
        "oval turned 30 width axis",
        OVAL,
        Pose(2, -1, 30),
        Base.round(32),
        Pose(2 - 5 * S30, -1 + 5 * C30),
        5 - OVAL_W - R32,
    ),
    # two ovals nose to nose along x: 6 - 30/25.4 - 30/25.4
    ("oval nose to nose", OVAL, Pose(0, 0), OVAL, Pose(6, 0), 6 - 2 * OVAL_L),
    # two ovals side by side: 3 - 17.5/25.4 - 17.5/25.4
    ("oval side by side", OVAL, Pose(0, 0), OVAL, Pose(0, 3), 3 - 2 * OVAL_W),
    # oval and round pressed together along the length axis: 1.5 - 30/25.4 - 16/25.4 < 0
    ("oval overlap", OVAL, Pose(0, 0), Base.round(32), Pose(1.5, 0), 1.5 - OVAL_L - R32),
    # 50 x 25 mm rects end to end, 4 in apart: 4 - 25/25.4 - 25/25.4
    (
        "rect end to end",
        Base("rect", 50, 25),
        Pose(0, 0),
        Base("rect", 50, 25),
        Pose(4, 0),
        4 - 50 / 25.4,
    ),
    # the second turned 90 degrees, 3 in up: 3 - 12.5/25.4 - 25/25.4
    (
        "rect turned",
        Base("rect", 50, 25),
        Pose(0, 0),
        Base("rect", 50, 25),
        Pose(0, 3, 90),
        3 - 12.5 / 25.4 - 25 / 25.4,
    ),
    # a 2 in square turned 45 degrees has a corner sqrt(2) along +x: 3 - sqrt(2) - 0.5
    ("square corner", SQUARE, Pose(0, 0, 45), Base.round(25.4), Pose(3, 0), 3 - math.sqrt(2) - 0.5),
    # 2 x 1 in rects: corner (1, 0.5) to corner (5 - 1, 5 - 0.5), offset (3, 4): 5
    (
        "rect corner to corner",
        Base("rect", 50.8, 25.4),
        Pose(0, 0),
        Base("rect", 50.8, 25.4),
        Pose(5, 5),
        5.0,
    ),
]


@pytest.mark.parametrize(
    ("a", "pa", "b", "pb", "expected"),
    [case[1:] for case in EXACT_CASES],
    ids=[case[0] for case in EXACT_CASES],
)
def test_edge_distance_exact_cases(a: Base, pa: Pose, b: Base, pb: Pose, expected: float) -> None:
    if a.shape == b.shape == "round":
        tol = 1e-12  # exact arithmetic
    elif expected < 0.0:
        tol = 1e-3  # an overlap, measured on the polygons' intersection
    else:
        tol = sagitta(a, b)
    assert edge_distance(a, pa, b, pb) == pytest.approx(expected, abs=tol)
    assert edge_distance(b, pb, a, pa) == pytest.approx(expected, abs=tol)


def test_documented_32mm_value() -> None:
    # 3 - 32/25.4 = 3 - 1.2598425196850394 = 1.7401574803149606
    got = edge_distance(Base.round(32), Pose(0, 0), Base.round(32), Pose(3, 0))
    assert got == pytest.approx(1.7401574803149606, abs=1e-12)


def test_edge_distance_documented_error_holds_for_large_round_base() -> None:
    big = Base.round(130)  # r = 130 / 50.8 = 2.5590... in
    theta = math.pi / FINE_SEGMENTS  # the direction of a mid-edge of the round's polygon
    # a 1 in square 5 in away in that direction, its flat face turned square to it:
    # true gap = 5 - 130/50.8 - 0.5
    other = Pose(5 * math.cos(theta), 5 * math.sin(theta), math.degrees(theta))
    got = edge_distance(big, Pose(0, 0), Base("rect", 25.4, 25.4), other)
    assert got == pytest.approx(5 - 130 / 50.8 - 0.5, abs=0.0005)


@pytest.mark.parametrize(
    ("pose", "expected"),
    [
        # apart: 3 - 1 - 0.25
        (Pose(3, 0), 1.75),
        # shallow overlap, depth along the line of centres: 1 + 0.25 - 1.1 = 0.15
        (Pose(0, 1.1), -0.15),
        # half the small disc across the rim: 1 + 0.25 - 1 = 0.25
        (Pose(-1.0, 0), -0.25),
        pytest.param(
            Pose(0.25, 0),
            # small disc wholly inside the big one: 0.25 - 1 - 0.25 = -1.0 for two round
            # bases; an oval with equal axes is that same disc but measures about -0.5
            -1.0,
        ),
    ],
    ids=["apart", "shallow overlap", "rim", "contained"],
)
def test_equal_axis_oval_measures_like_round(pose: Pose, expected: float) -> None:
    # An oval whose length equals its width is a circle, so it must agree with Base.round.
    small = Base.round(12.7)  # r = 0.25 in
    assert edge_distance(Base.round(50.8), Pose(0, 0), small, pose) == pytest.approx(expected)
    circle_oval = Base("oval", 50.8, 50.8)  # r = 1 in
    assert edge_distance(circle_oval, Pose(0, 0), small, pose) == pytest.approx(expected, abs=1e-3)


# -- footprints ---------------------------------------------------------------------------


@FAST
@given(
    curved_bases,
    poses,
    st.sampled_from([8, 16, CIRCLE_SEGMENTS, 64, FINE_SEGMENTS]),
    st.floats(0.0, 1.0),
)
def test_footprint_brackets_true_curve(
    base: Base, pose: Pose, segments: int, offset: float
) -> None:
    inner = base.footprint(pose, "inner", segments)
    outer = base.footprint(pose, "outer", segments)
    assert inner.is_valid and outer.is_valid
    assert inner.within(outer)
    a, b = half_axes(base)
    # pi a b is the ellipse's area: strictly between the two polygons'
    assert inner.area < math.pi * a * b < outer.area
    # The true ellipse x = a cos t, y = b sin t in base coordinates, turned and moved.
    local = np.column_stack([a * np.cos(t := sample_angles(offset)), b * np.sin(t)])
    # Pulled towards the centre, curve points are strictly inside the curve: inside outer.
    assert contains(outer, to_table(pose, local * (1.0 - NUDGE))).all()
    # Pushed outwards they are strictly outside the curve: never inside inner.
    assert not contains(inner, to_table(pose, local * (1.0 + NUDGE))).any()


@FAST
@given(rect_bases, poses)
def test_rect_footprint_is_exact(base: Base, pose: Pose) -> None:
    a, b = half_axes(base)
    corners = to_table(pose, np.array([[-a, -b], [a, -b], [a, b], [-a, b]]))
    for variant in ("inner", "outer"):
        poly = base.footprint(pose, variant)
        assert poly.area == pytest.approx(4 * a * b, rel=1e-9)
        got = np.asarray(poly.exterior.coords)[:-1]
        for corner in corners:  # each true corner is a vertex of the footprint
            assert np.hypot(*(got - corner).T).min() < 1e-9


# -- inflated: Minkowski sum brackets -----------------------------------------------------


@FAST
@given(st.floats(10.0, 160.0), poses, st.floats(0.0, 3.0), st.floats(0.0, 1.0))
def test_inflated_round_brackets_minkowski_sum(
    diameter: float, pose: Pose, grow: float, offset: float
) -> None:
    base = Base.round(diameter)
    inner = base.inflated(pose, grow, "inner")
    outer = base.inflated(pose, grow, "outer")
    assert inner.within(outer)
    # The true grown disc has radius diameter/25.4/2 + grow.
    radius = diameter / 25.4 / 2.0 + grow
    t = sample_angles(offset)
    ring = np.column_stack([np.cos(t), np.sin(t)])
    centre = np.array([pose.x, pose.y])
    assert contains(outer, centre + ring * radius * (1.0 - NUDGE)).all()
    assert not contains(inner, centre + ring * radius * (1.0 + NUDGE)).any()


def check_minkowski_bracket(
    inner: Polygon, outer: Polygon, pts: np.ndarray, normals: np.ndarray, grow: float
) -> None:
    """The true grown boundary is every outline point pushed out by ``grow`` along its
    normal: a hair less is inside the true shape (so inside outer), a hair more is outside
    it (so outside inner)."""
    eps = NUDGE * max(grow, 1.0)
    assert contains(outer, pts + normals * (grow - eps)).all()
    assert not contains(inner, pts + normals * (grow + eps)).any()


@FAST
@given(rect_bases, poses, st.floats(0.01, 2.0))
def test_inflated_rect_brackets_minkowski_sum(base: Base, pose: Pose, grow: float) -> None:
    a, b = half_axes(base)
    local, local_n = convex_polygon_and_normals(np.array([[-a, -b], [a, -b], [a, b], [-a, b]]))
    pts = to_table(pose, local)
    normals = to_table(Pose(0, 0, pose.heading), local_n)
    inner, outer = base.inflated(pose, grow, "inner"), base.inflated(pose, grow, "outer")
    assert inner.within(outer)
    check_minkowski_bracket(inner, outer, pts, normals, grow)


@FAST
@given(oval_bases(), poses, st.floats(0.01, 2.0), st.floats(0.0, 1.0))
def test_inflated_oval_inner_inside_minkowski_sum(
    base: Base, pose: Pose, grow: float, offset: float
) -> None:
    local, local_n = ellipse_and_normals(*half_axes(base), sample_angles(offset, n=360))
    pts = to_table(pose, local + local_n * (grow + NUDGE * max(grow, 1.0)))
    inner, outer = base.inflated(pose, grow, "inner"), base.inflated(pose, grow, "outer")
    assert inner.within(outer)
    assert not contains(inner, pts).any()


@pytest.mark.parametrize(
    ("base", "grow"),
    [
        # 30 x 20 mm oval grown by 1 in: the tip of the true grown shape is
        # 15/25.4 + 1 = 1.5906 in along +x; the outer polygon stops at 1.5875
        (Base("oval", 30, 20), 1.0),
        # 40 x 20 mm oval grown for a 40 mm mover (0.79 in): 0.0004 in short
        (Base("oval", 40, 20), 40 / 50.8),
    ],
    ids=["oval 30x20 grown 1in", "oval 40x20 grown for 40mm mover"],
)
def test_inflated_oval_outer_contains_minkowski_sum(base: Base, grow: float) -> None:
    pose = Pose(1.0, -2.0, 0.0)
    local, local_n = ellipse_and_normals(*half_axes(base), sample_angles(0.0, n=360))
    inner, outer = base.inflated(pose, grow, "inner"), base.inflated(pose, grow, "outer")
    check_minkowski_bracket(inner, outer, to_table(pose, local), local_n, grow)


@FAST
@given(st.integers(3, 12), st.floats(0.5, 5.0), st.floats(0.01, 2.0), st.floats(0.0, 1.0))
def test_inflate_inner_inside_minkowski_sum_of_regular_polygon(
    n: int, size: float, grow: float, phase: float
) -> None:
    angles = phase + np.arange(n) * 2 * math.pi / n
    xy = np.column_stack([size * np.cos(angles), size * np.sin(angles)])
    poly = Polygon(xy)
    pts, normals = convex_polygon_and_normals(xy)
    inner, outer = inflate(poly, grow, "inner"), inflate(poly, grow, "outer")
    assert inner.within(outer)
    assert not contains(inner, pts + normals * (grow + NUDGE * max(grow, 1.0))).any()


@pytest.mark.parametrize("n", [4, 8])
def test_inflate_outer_contains_minkowski_sum_of_square_cornered_polygon(n: int) -> None:
    # exterior angles of 90 and 45 deg are whole numbers of 11.25 deg chords
    angles = 0.3 + np.arange(n) * 2 * math.pi / n
    xy = np.column_stack([3 * np.cos(angles), 3 * np.sin(angles)])
    pts, normals = convex_polygon_and_normals(xy)
    poly = Polygon(xy)
    check_minkowski_bracket(
        inflate(poly, 0.8, "inner"), inflate(poly, 0.8, "outer"), pts, normals, 0.8
    )


def test_inflate_outer_contains_minkowski_sum_of_24_gon() -> None:
    angles = np.arange(24) * 2 * math.pi / 24
    xy = np.column_stack([3 * np.cos(angles), 3 * np.sin(angles)])
    pts, normals = convex_polygon_and_normals(xy)
    poly = Polygon(xy)
    check_minkowski_bracket(
        inflate(poly, 1.0, "inner"), inflate(poly, 1.0, "outer"), pts, normals, 1.0
    )


# -- overlap_depth ------------------------------------------------------------------------


@FAST
@given(
    st.floats(10.0, 150.0),
    st.floats(10.0, 150.0),
    st.floats(0.01, 0.4),
    st.floats(-math.pi, math.pi),
    poses,
)
def test_overlap_depth_of_overlapping_discs(
    da: float, db: float, frac: float, angle: float, pa: Pose
) -> None:
    # Pressed together by ``frac`` (up to 40%) of the smaller diameter:
    # depth = frac * 2 * min(r1, r2), centre distance d = r1 + r2 - depth.
    r1, r2 = da / 50.8, db / 50.8
    depth = frac * 2 * min(r1, r2)
    d = r1 + r2 - depth
    pb = Pose(pa.x + d * math.cos(angle), pa.y + d * math.sin(angle))
    got = overlap_depth(Base.round(da).footprint(pa), Base.round(db).footprint(pb))
    # the footprints are N-gons inside the discs: shallower by up to both sagittas
    assert got == pytest.approx(depth, abs=max(1e-3, sagitta(Base.round(da), Base.round(db))))


def test_overlap_depth_apart_is_zero() -> None:
    # 1 in discs 2.5 in apart: no intersection at all
    a = Base.round(25.4).footprint(Pose(0, 0))
    b = Base.round(25.4).footprint(Pose(2.5, 0))
    assert overlap_depth(a, b) == 0.0


@pytest.mark.parametrize(
    ("d1", "d2", "centre_distance", "expected"),
    [
        # two 2 in discs 1 in apart: 1 + 1 - 1 = 1.0 (measured 1.275: a rectangle turned 45 deg)
        (50.8, 50.8, 1.0, 1.0),
        # two 2 in discs 0.5 in apart: 1 + 1 - 0.5 = 1.5 (measured 1.637)
        (50.8, 50.8, 0.5, 1.5),
        # 0.5 in disc 0.25 in off the centre of a 2 in disc: 1 + 0.25 - 0.25 = 1.0
        # (measured 0.4998, the small disc's diameter)
        (50.8, 12.7, 0.25, 1.0),
    ],
    ids=["equal 1in apart", "equal 0.5in apart", "contained"],
)
def test_overlap_depth_of_deeply_overlapping_discs(
    d1: float, d2: float, centre_distance: float, expected: float
) -> None:
    big = Base.round(d1).footprint(Pose(0, 0))
    other = Base.round(d2).footprint(Pose(centre_distance, 0))
    assert overlap_depth(big, other) == pytest.approx(expected, abs=1e-3)


def test_edge_distance_of_overlap_not_below_half_length_discs() -> None:
    # The round base's centre 1 in from the oval's at 1 rad, the oval turned 71 degrees.
    # Discs of radius 27/50.8 and 48/50.8 overlap by at most 0.5315 + 0.9449 - 1 = 0.4764,
    # and the bases lie inside them, so they cannot overlap by more.
    round_base, oval = Base.round(27), Base("oval", 48, 30)
    pb = Pose(math.cos(1.0), math.sin(1.0), 71.0)
    got = edge_distance(round_base, Pose(0, 0), oval, pb)
    assert got >= 1 - 27 / 50.8 - 48 / 50.8 - 1e-9


def test_base_dimensions() -> None:
    assert MM_PER_IN == 25.4
    # 32 mm: 32 / 25.4 / 2 = 0.6299212598425197 in
    assert Base.round(32).radius_in == pytest.approx(0.6299212598425197, abs=1e-15)
    # 60 x 35 mm oval: turns within 35 mm, reaches out 30 mm
    assert OVAL.radius_in == pytest.approx(17.5 / 25.4, abs=1e-15)
    assert OVAL.reach_in == pytest.approx(30 / 25.4, abs=1e-15)
