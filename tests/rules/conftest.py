"""Helpers for the hand-checked referee scenarios (tests/rules/test_judge_*.py).

Scenarios are written as the JSON a user would give ``tablesight check`` and judged through
``tablesight.rules.scenario.Scenario.from_json``. Bases default to 25.4 mm round bases: 1" across,
radius 0.5", so edge-to-edge gaps are centre distances minus 1" and hand arithmetic stays
simple. The helpers come as one fixture, ``kit``, because test modules cannot import
a conftest under ``--import-mode=importlib``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from shapely.geometry import MultiPoint

from tablesight.rules.referee import Referee
from tablesight.rules.scenario import Scenario
from tablesight.rules.verdict import Finding, Verdict

#: A 25.4 mm round base: 1" across, radius 0.5".
INCH_BASE = {"shape": "round", "diameter_mm": 25.4}


def pose(p: Sequence[float]) -> dict[str, float]:
    """``(x, y)``, ``(x, y, z)`` or ``(x, y, z, heading)`` as a scenario pose."""
    out = {"x": float(p[0]), "y": float(p[1])}
    if len(p) > 2:
        out["z"] = float(p[2])
    if len(p) > 3:
        out["heading"] = float(p[3])
    return out


def model(
    id: str,
    side: str,
    start: Sequence[float],
    end: Sequence[float] | None = None,
    *,
    movement: float = 6.0,
    keywords: Iterable[str] = (),
    status: Iterable[str] = (),
    base: dict[str, Any] | None = None,
    **declared: Any,
) -> dict[str, Any]:
    """One model as scenario JSON; ``declared`` takes action, target, roll, unit."""
    out: dict[str, Any] = {
        "id": id,
        "side": side,
        "base": base or INCH_BASE,
        "movement": movement,
        "keywords": list(keywords),
        "status": list(status),
        "start": pose(start),
    }
    if end is not None:
        out["end"] = pose(end)
    out.update(declared)
    return out


OVAL_60X35 = {"shape": "oval", "length_mm": 60, "width_mm": 35}

# Detours worked out by hand that several games' tests measure: a 1 in round mover from
# (10,10) to (16,10) round a model at (13,10), or from (2,13) to (9,13) round a wall.

#: Round a 1" base at (13,10): the centre keeps 0.5+0.5 = 1" from the blocker's centre.
#: Tangent from 3" away: sqrt(9-1) = 2.82843 each side; arc of radius 1 turning
#: 2*asin(1/3) = 0.67967 rad. 2*2.82843 + 0.67967 = 6.33653.
ROUND_BASE_DETOUR = 2 * math.sqrt(8) + 2 * math.asin(1 / 3)
#: Round the 1" zone of an enemy at (13,10). The 0.05 in tolerance applies while passing
#: a zone as at the end of a move, so the centre keeps R = 0.5 + (1 - 0.05) + 0.5 = 1.95 in
#: from the enemy's. Tangents sqrt(3^2 - R^2) = 2.27981 each; arc of radius R turning
#: 2*asin(R/3) = 1.41516 rad = 2.75955 in. Total 4.55962 + 2.75955 = 7.31917.
ZONE_R = 1.95
ZONE_DETOUR = 2 * math.sqrt(9 - ZONE_R**2) + 2 * ZONE_R * math.asin(ZONE_R / 3)
#: (2,13) -> (9,13) round an impassable wall x 5..6, y 10..16, over its top. The centre
#: keeps 0.5" off the wall: arcs of radius 0.5 round the corners (5,16) and (6,16).
#: Tangent to the corner arc at (5,16): sqrt(3^2 + 3^2 - 0.5^2) = sqrt(17.75) = 4.21307;
#: the arc turns 45 deg + asin(0.5/sqrt(18)) = 0.90353 rad at radius 0.5: 0.45177; 1"
#: along the top; then the mirror image. 2*(4.21307 + 0.45177) + 1 = 10.32967.
WALL_DETOUR = 2 * (math.sqrt(17.75) + 0.5 * (math.pi / 4 + math.asin(0.5 / math.sqrt(18)))) + 1


def oval_detour(
    start: Sequence[float],
    end: Sequence[float],
    centre: Sequence[float],
    grow_in: float,
    length_mm: float = 60.0,
    width_mm: float = 35.0,
    samples: int = 8192,
) -> float:
    """The true shortest way past an oval base (long axis along y) grown by ``grow_in``,
    for a start and end placed symmetrically either side of it: half the perimeter of
    the convex hull of start, end and the grown outline sampled at 8192 points. An
    independent method: no code of the referee is used."""
    a, b = length_mm / 25.4 / 2, width_mm / 25.4 / 2
    t = np.linspace(0.0, 2.0 * math.pi, samples, endpoint=False)
    # long axis along y: x = b cos t, y = a sin t; outward normal (a cos t, b sin t)
    nx, ny = a * np.cos(t), b * np.sin(t)
    norm = np.hypot(nx, ny)
    px = centre[0] + b * np.cos(t) + grow_in * nx / norm
    py = centre[1] + a * np.sin(t) + grow_in * ny / norm
    hull = MultiPoint([*zip(px, py, strict=True), tuple(start), tuple(end)]).convex_hull
    return float(hull.length / 2.0)


def box(
    id: str, x0: float, y0: float, x1: float, y1: float, *keywords: str, height: float = 0.0
) -> dict[str, Any]:
    """An axis-aligned rectangular terrain piece."""
    corners = [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]
    return {"id": id, "polygon": corners, "height": height, "keywords": list(keywords)}


def judge(
    game: str,
    models: Iterable[dict[str, Any]],
    terrain: Iterable[dict[str, Any]] = (),
    *,
    table: tuple[float, float] = (48.0, 24.0),
    tolerance: float = 0.05,
) -> Verdict:
    """Judge every move of the scenario, as ``tablesight check`` would."""
    scenario = {
        "game": game,
        "table": {"width": table[0], "depth": table[1]},
        "terrain": list(terrain),
        "tolerance": tolerance,
        "models": list(models),
    }
    loaded = Scenario.from_json(json.dumps(scenario))
    return Referee(loaded.scene, loaded.ruleset).judge()


def one(findings: Iterable[Finding], rule: str) -> Finding:
    """The single finding under ``rule`` (fails when there are none or several)."""
    found = [f for f in findings if f.rule == rule]
    assert len(found) == 1, f"expected exactly one {rule!r}, got {found}"
    return found[0]


def advisories(verdict: Verdict) -> list[str]:
    return [f.rule for f in verdict.advisories]


def assert_path(verdict: Verdict, model_id: str, hand: float, *, width: float = 0.02) -> None:
    """The shortest legal path of ``model_id`` is ``hand`` (inches, worked out by hand).

    The hand value must lie inside the reported bracket, the bracket must be narrower than
    ``width``, and the reported length must be within 0.02" of the hand value.
    """
    move = verdict.moves[model_id]
    assert move.shortest_path is not None and move.shortest_path_bounds is not None
    lower, upper = move.shortest_path_bounds
    assert lower - 1e-6 <= hand <= upper + 1e-6, (lower, hand, upper)
    assert upper - lower < width, (lower, upper)
    assert move.shortest_path == pytest.approx(hand, abs=0.02)


@pytest.fixture
def kit() -> SimpleNamespace:
    """The scenario helpers: model, box, judge, one, advisories, assert_path, oval_detour;
    the oval base; and the detours worked out by hand: round_base_detour, zone_detour,
    wall_detour."""
    return SimpleNamespace(
        model=model,
        box=box,
        judge=judge,
        one=one,
        advisories=advisories,
        assert_path=assert_path,
        oval_detour=oval_detour,
        oval=OVAL_60X35,
        round_base_detour=ROUND_BASE_DETOUR,
        zone_detour=ZONE_DETOUR,
        wall_detour=WALL_DETOUR,
    )
