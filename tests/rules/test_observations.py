"""Heights reach the judge through the live session: a scenario told as observations.

``tablesight check`` judges a scenario's models from their start and end poses, z
included. The live session hears of the same table one observation at a time (terrain
placed, each model first seen where it starts, then moved where it ends). Both must give
the same judgement with the same numbers, worked out by hand from text 004 (revised Cosmic
Combat: climbs up to 1" are free, higher ones cost double; coherency: within 1" across
and 6" up).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from tablesight.rules.observation import LocatedModel, LocatedTerrain
from tablesight.rules.referee import referee_for
from tablesight.rules.scenario import Scenario
from tablesight.rules.session import Event, Session

GAME = "cosmic-combat-revised"
INCH_BASE = {"shape": "round", "diameter_mm": 25.4}


@dataclasses.dataclass(frozen=True)
class Seen:
    """An observation as the camera side hands it over (the session's part of it)."""

    t: float
    frame: int
    models: tuple[LocatedModel, ...] = ()
    terrain: tuple[LocatedTerrain, ...] = ()
    table_seen: bool = True
    pose_problem: str = ""
    camera_shift_in: float | None = None
    bump_message: str = ""
    bump_limit_in: float = 0.25


def scenario(models: list[dict[str, Any]], terrain: list[dict[str, Any]]) -> Scenario:
    text = {
        "game": GAME,
        "table": {"width": 24, "depth": 24},
        "terrain": terrain,
        "models": models,
    }
    return Scenario.from_json(json.dumps(text))


def model(id: str, start: tuple[float, ...], end: tuple[float, ...] | None = None, **kw: Any):
    out = {"id": id, "side": "red", "base": INCH_BASE, "movement": 8, **kw}
    out["start"] = dict(zip(("x", "y", "z"), start, strict=False))
    if end is not None:
        out["end"] = dict(zip(("x", "y", "z"), end, strict=False))
    return out


def tower(id: str, x0: float, y0: float, x1: float, y1: float, height: float) -> dict[str, Any]:
    corners = [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]
    return {"id": id, "polygon": corners, "height": height, "keywords": ["climbable"]}


def live(told: Scenario) -> tuple[Session, list[Event]]:
    """The scenario told to a live session as the camera side would tell it."""
    scene = told.scene
    profiles = {m.id: dataclasses.replace(m, end=None) for m in scene.models}
    session = Session(told.ruleset, scene.table, profiles)
    terrain = tuple(
        LocatedTerrain(
            t.id,
            tuple(t.polygon.exterior.coords[:-1]),
            t.height_in,
            tuple(sorted(t.keywords)),
        )
        for t in scene.terrain
    )

    first = tuple(
        LocatedModel(m.id, m.start, 0.0, "settled", ("first_seen",)) for m in scene.models
    )
    events = session.observe(Seen(0.0, 0, first, terrain))
    events += session.start_phase(0.1, 1)
    moved = tuple(
        LocatedModel(m.id, m.end, 0.0, "settled", ("moved",))
        for m in scene.models
        if m.end is not None
    )
    events += session.observe(Seen(1.0, 30, moved))
    return session, events


def flags(events: list[Event]) -> list[tuple[str, str | None, str | None, float | None]]:
    return [
        (e.kind, e.rule, e.model, None if e.measured is None else round(e.measured, 2))
        for e in events
        if e.kind in ("violation", "advisory")
    ]


@pytest.mark.parametrize(
    ("end", "expected"),
    [
        # Straight up the 4" building: 2 * 4 = 8 <= 8: "he can only climb the 4" building".
        ((5, 5, 4), []),
        # Up the 5" one: 2 * 5 = 10 > 8.
        ((5, 19, 5), [("violation", "movement", "assassin", 10.0)]),
    ],
)
def test_a_climb_is_judged_live_as_check_judges_it(end, expected):
    start = (end[0], end[1], 0)
    told = scenario(
        [model("assassin", start, end)],
        [tower("b4", 5, 0, 10, 10, 4), tower("b5", 5, 14, 10, 24, 5)],
    )
    session, events = live(told)
    assert flags(events) == expected
    # the same numbers as the referee gives the scenario itself
    verdict = referee_for(told.scene, told.ruleset).judge()
    assert [(f.rule, f.model, round(f.measured or 0, 2)) for f in verdict.violations] == [
        (rule, who, measured) for _, rule, who, measured in expected
    ]
    assert session.poses["assassin"].z == end[2]


def test_vertical_coherency_is_judged_live():
    # u1 and u3 stand 7" up on a tower; u2 walks to its foot: 1 - 1 = 0" across from u1,
    # but 7" below it (7 > 6): out of coherency (an advisory in this game). The 0" across
    # is within range, so the finding measures the 7" height (against the 6" limit).
    told = scenario(
        [
            model("u2", (7, 10, 0), (9.5, 10, 0), unit="u"),
            model("u1", (10.5, 10, 7), unit="u"),
            model("u3", (11.5, 10, 7), unit="u"),
        ],
        [tower("tower", 10, 8, 14, 12, 7)],
    )
    _, events = live(told)
    assert flags(events) == [("advisory", "coherency", "u2", 7.0)]


def test_on_the_ground_the_same_walk_is_coherent():
    # The same walk with u1 and u3 on the ground beside the tower: 0" across, 0" up.
    told = scenario(
        [
            model("u2", (7, 14, 0), (9.5, 14, 0), unit="u"),
            model("u1", (10.5, 14, 0), unit="u"),
            model("u3", (11.5, 14, 0), unit="u"),
        ],
        [tower("tower", 10, 8, 14, 12, 7)],
    )
    _, events = live(told)
    assert flags(events) == []
