"""Helpers for the hand-checked referee scenarios (tests/rules/test_judge_*.py).

Scenarios are written as the JSON a user would give ``tablesight check`` and judged through
``rules.scenario.Scenario.from_json``. Bases default to 25.4 mm round bases: 1" across,
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

from rules.referee import Referee
from rules.scenario import Scenario
from rules.verdict import Finding, Verdict

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
    """The scenario helpers: model, box, judge, one, advisories, assert_path."""
    return SimpleNamespace(
        model=model,
        box=box,
        judge=judge,
        one=one,
        advisories=advisories,
        assert_path=assert_path,
        oval_detour=oval_detour,
        oval=OVAL_60X35,
    )
