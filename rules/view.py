"""The table as the players see it: shapes and numbers in table inches, for any view to draw.

The web pages, the broadcast overlay and the replay all draw the same picture: each base's
outline, the zones the moving side must keep out of, each unit's coherency links, how far
each moved model went against its allowance, the terrain, and every open flag. This module
works all of it out from a :class:`~tablesight.rules.session.Session`, so no view does rules work;
views only map inches to pixels.

Everything is plain JSON values: points are ``[x, y]`` in inches.
"""

from __future__ import annotations

import math
from typing import Any

import shapely.ops
from shapely.geometry import Point

from tablesight.rules.coherency import in_coherency, rise_between, spanning_tree
from tablesight.rules.geometry import Base, Pose, centre_to_base, edge_distance
from tablesight.rules.levels import Climb
from tablesight.rules.measure import Measure
from tablesight.rules.scene import Model, Scene
from tablesight.rules.session import Session

#: Points on a drawn circle or oval outline.
OUTLINE_POINTS = 48

#: How far around a model the hover card lists its neighbours, edge to edge (inches).
NEAR_IN = 6.0


def _ring(poly: Any) -> list[list[float]]:
    return [[round(x, 4), round(y, 4)] for x, y in list(poly.exterior.coords)[:-1]]


def outline(model: Model, pose: Pose | None = None) -> list[list[float]]:
    """A model's base outline at ``pose`` (default: where it stands)."""
    return _ring(model.base.footprint(pose or model.pose, "inner", OUTLINE_POINTS))


def describe(session: Session) -> dict[str, Any]:
    """Everything a view draws, in table inches (see the module's docstring)."""
    scene = session.scene()
    rules = session.ruleset
    return {
        "game": {"name": rules.name, "title": rules.title},
        "session": {
            "turn": session.turn,
            "side": session.side,
            "in_phase": session.in_phase,
            "sides": list(dict.fromkeys(m.side for m in session.models.values())),
            "actions": sorted(rules.actions),
            "headline": phase_headline(session),
        },
        "table": {"width_in": session.table.width_in, "depth_in": session.table.depth_in},
        "terrain": [
            {
                "id": t.id,
                "polygon": _ring(t.polygon),
                "height_in": t.height_in,
                "keywords": sorted(t.keywords),
            }
            for t in scene.terrain
        ],
        "models": [_model(session, m, scene) for m in scene.models],
        "zones": zones(session, scene),
        "links": links(session, scene),
        "flags": flags(session),
    }


def phase_headline(session: Session) -> str:
    """What the phase is, for a broadcast: "turn 2: escher moving" (or "turn 2: movement"
    with no side named; "turn 2: no phase" between phases)."""
    if not session.in_phase:
        return f"turn {session.turn}: no phase"
    return f"turn {session.turn}: " + (f"{session.side} moving" if session.side else "movement")


def _model(session: Session, m: Model, scene: Scene) -> dict[str, Any]:
    report = session.reports.get(m.id) if session.in_phase else None
    declared = session.declarations.get(m.id)
    return {
        "id": m.id,
        "side": m.side,
        "unit": m.unit,
        "base": {
            "shape": m.base.shape,
            "length_mm": m.base.length_mm,
            "width_mm": m.base.width_mm,
            "text": base_text(m.base.shape, m.base.length_mm, m.base.width_mm),
        },
        "movement_in": m.movement_in,
        "keywords": sorted(m.keywords),
        "status": sorted(m.status),
        "x": round(m.pose.x, 4),
        "y": round(m.pose.y, 4),
        "heading": round(m.pose.heading, 2),
        "z": round(m.pose.z, 3),
        "stands": stands_text(m, scene),
        "sigma_in": round(m.sigma_in, 4),
        "outline": outline(m),
        "moved": m.end is not None,
        "start": [round(m.start.x, 4), round(m.start.y, 4)] if m.end is not None else None,
        "start_outline": outline(m, m.start) if m.end is not None else None,
        "declared": None
        if declared is None
        else {"action": declared.action, "target": declared.target, "roll": declared.roll},
        "move": None
        if report is None
        else {
            "action": report.action,
            "allowance_in": round(report.allowance, 3),
            "straight_in": round(report.straight, 3),
            "shortest_in": None if report.shortest_path is None else round(report.shortest_path, 3),
            "route": [[round(float(x), 4), round(float(y), 4)] for x, y in report.route],
            "climbs": [climb_view(c) for c in report.climbs],
        },
    }


def climb_view(climb: Climb) -> dict[str, Any]:
    """One change of level along a measured route, for a view to mark where it happens:
    ``at`` (the route's point, in inches), from and to which height, the rise (up is
    positive), what it cost the move, and its ``label`` (:func:`climb_label`)."""
    return {
        "at": [round(climb.at[0], 4), round(climb.at[1], 4)],
        "from_in": round(climb.from_in, 3),
        "to_in": round(climb.to_in, 3),
        "rise_in": round(climb.rise_in, 3),
        "cost_in": round(climb.cost_in, 3),
        "label": climb_label(climb.rise_in, climb.cost_in),
    }


def _inches1(value: float) -> str:
    """Inches as a tape reads them, to a tenth or, where it matters, a hundredth, with
    the inch mark: 2.0 is '2.0"', 1.25 is '1.25"'."""
    text = f"{value:.2f}"
    return (text[:-1] if text.endswith("0") else text) + '"'


def climb_label(rise_in: float, cost_in: float) -> str:
    """A climb's mark as players read it: the rise, signed ('+2.0"' up, '-2.0"' down), and
    what it cost where that is not the height: '+1.0" free', '+4.0" costs 8.0"'.

    >>> climb_label(2.0, 2.0), climb_label(-2.0, 2.0), climb_label(1.0, 0.0)
    ('+2.0"', '-2.0"', '+1.0" free')
    >>> climb_label(4.0, 8.0), climb_label(-1.25, 0.0)
    ('+4.0" costs 8.0"', '-1.25" free')
    """
    rise = ("+" if rise_in > 0 else "-") + _inches1(abs(rise_in))
    if abs(cost_in - abs(rise_in)) < 0.005:
        return rise
    if abs(cost_in) < 0.005:
        return f"{rise} free"
    return f"{rise} costs {_inches1(cost_in)}"


def stands_text(model: Model, scene: Scene) -> str:
    """What a model stands on, for people: "on the table", "on tower5, 5.00 in" (the piece
    under its centre whose top is at its height, give or take the tolerance), or
    "3.20 in up, on no piece" when no piece's top is there."""
    z = model.pose.z
    if abs(z) <= max(scene.tolerance_in, 1e-9):
        return "on the table"
    centre = Point(model.pose.x, model.pose.y)
    for piece in scene.terrain:
        if abs(piece.height_in - z) <= max(scene.tolerance_in, 1e-9) and piece.polygon.covers(
            centre
        ):
            return f"on {piece.id}, {z:.2f} in"
    return f"{z:.2f} in up, on no piece"


def zones(session: Session, scene: Scene) -> list[dict[str, Any]]:
    """The zones the side with priority must keep out of (all sides' when none has it)."""
    zone = session.ruleset.zone
    if zone is None or session.ruleset.grid is not None or not scene.models:
        return []
    measure = Measure(scene, session.ruleset)
    movers = [m for m in scene.models if session.side in (None, m.side)]
    sources: dict[str, Model] = {}
    for mover in movers:
        for source in measure.zone_sources(mover):
            sources.setdefault(source.id, source)
    return [
        {
            "model": s.id,
            "side": s.side,
            "range_in": zone.range_in,
            "outline": _ring(s.base.inflated(s.pose, zone.range_in, "inner")),
        }
        for s in sources.values()
    ]


def links(session: Session, scene: Scene) -> list[dict[str, Any]]:
    """Each unit's coherency links: the shortest links that join the unit (a minimum
    spanning tree), each marked ``ok`` when in coherency (:mod:`tablesight.rules.coherency`)."""
    coherency = session.ruleset.coherency
    if coherency is None:
        return []
    units: dict[tuple[str, str], list[Model]] = {}
    for m in scene.models:
        units.setdefault((m.side, m.unit), []).append(m)
    out = []
    for members in units.values():
        for a, b, gap in spanning_tree(members):
            ok = in_coherency(gap, rise_between(a, b), coherency, scene.tolerance_in)
            out.append(
                {
                    "a": a.id,
                    "b": b.id,
                    "distance_in": round(gap, 3),
                    "range_in": coherency.range_in,
                    "ok": ok,
                    "points": [[a.pose.x, a.pose.y], [b.pose.x, b.pose.y]],
                }
            )
    return out


def flags(session: Session) -> list[dict[str, Any]]:
    """The findings open now, with the numbers as they stand and the players' decision;
    ``of_move`` marks those found of the model's move this phase (not its unit's, nor an
    earlier phase's), whose measured route the views draw."""
    unit = "sq" if session.ruleset.grid is not None else "in"
    out = []
    for event, f in session.flags():
        caption = flag_caption(
            f.rule, f.measured, f.limit, f.uncertainty, f.other, unit, message=f.message
        )
        if caption is None:  # no numbers: the finding's own sentence, less the model's name
            headline = f.message
            caption = f.message.removeprefix(f.model).lstrip(" ") or f.message
        elif caption.startswith("'s "):
            headline, caption = f.model + caption, caption[3:]
        else:
            headline = f"{f.model} {caption}"
        out.append(
            {
                "id": event.id,
                "kind": event.kind,
                "rule": f.rule,
                "model": f.model,
                "other": f.other,
                "measured": None if f.measured is None else round(f.measured, 3),
                "limit": None if f.limit is None else round(f.limit, 3),
                "uncertainty": None if f.uncertainty is None else round(f.uncertainty, 3),
                "message": f.message,
                "label": flag_label(f.rule, f.measured, f.limit, f.uncertainty, unit),
                "caption": caption,
                "headline": headline,
                "decision": session.decisions.get(event.id),
                # a finding of the model's move this phase: the views draw that move's route
                "of_move": any(f is g for g in session.open_findings.get(f.model, ())),
            }
        )
    return out


def _n(value: float) -> str:
    """A number as a commentator says it: 5.00 is "5", 5.50 is "5.5", 7.083 is "7.08"."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def flag_label(
    rule: str, measured: float | None, limit: float | None, uncertainty: float | None, unit: str
) -> str:
    """The flag written on its model for the players: "movement: 7.08 in / 5.00", or
    "close call: 0.97 in +/- 0.04 / 1.00"; the rule alone when it has no numbers."""
    name = rule.replace("_", " ")
    if measured is None:
        return name
    pm = f" +/- {uncertainty:.2f}" if uncertainty else ""
    bound = "-" if limit is None else f"{limit:.2f}"
    return f"{name}: {measured:.2f} {unit}{pm} / {bound}"


def flag_caption(
    rule: str,
    measured: float | None,
    limit: float | None,
    uncertainty: float | None,
    other: str | None,
    unit: str = "in",
    *,
    message: str = "",
) -> str | None:
    """What a flag says to viewers, after its model's name (a broadcast's words, no
    slashes): "moved 7.08 in, allowed 5". A caption that starts "'s " is possessive
    ("'s charge ended 0.50 in from krotos, must stop 1 away"). None without numbers.

    A rule whose findings say different things with the same numbers (a charge: too far,
    stopped short of its full distance, away from its target, the long way round) is told
    apart by the finding's ``message``, which names the text it holds the move to."""
    if measured is None or limit is None:
        return None
    m, lim = f"{measured:.2f} {unit}", _n(limit)
    them = other or "another model"
    about = f"about {m}" if uncertainty else m
    match rule:
        case "movement" if _BEYOND_THE_SEARCH in message:
            return f"needs over {m}, allowed {lim}"
        case "movement":
            return f"moved {about}, allowed {lim}"
        case "charge":
            return _charge_caption(measured, limit, about, them, unit, message)
        case "control_zone":
            return f"ended {about} from {them}, inside its {lim} {unit} zone"
        case "close_call":
            return f"is too close to call: {about} against {lim}"
        case "coherency":
            return f"is {about} from {them}, coherency allows {lim}"
        case "off_table":
            return f"is {about} off the table"
        case "base_overlap":
            return f"overlaps {them} by {about}"
        case "terrain":
            return f"stands {about} inside terrain"
        case "ramming":
            return f"ended {about} from friendly {them}: both roll"
        case "retreat":
            return f"is {about} from {them}, must be over {lim}"
        case "engaged":
            return f"started {about} from {them}, within {lim}: only a retreat may move it"
        case "action":
            return f"was {about} from {them}, the most is {lim}"
        case _:
            return f"{rule.replace('_', ' ')}: {about}, allowed {lim}"


#: How each charge finding of :mod:`tablesight.rules.checks` and
#: :mod:`tablesight.rules.movement` says what it holds the move to (its message's words),
#: by what it is: away from its target, the long way round, stopped before its full
#: distance, too far, no route within the search, closer than it must stop.
_TOWARD = "a charge moves toward its target"
_SHORTEST_ROUTE = "a charge should take the shortest route possible"
_FULL_DISTANCE = "a failed charge must still move the full distance"
_BY_THE_SHORTEST_PATH = "by the shortest legal path; its"
_BEYOND_THE_SEARCH = "shortest legal path is longer than"
_STOP_SHORT = "made no base contact"


def _charge_caption(
    measured: float, limit: float, about: str, them: str, unit: str, message: str
) -> str:
    """A charge finding's caption (see :func:`flag_caption`): each kind in its own words,
    told by its message; without one, by its numbers (nearer than its limit: it had to
    stop short; else it fell short)."""
    m, lim = f"{measured:.2f} {unit}", _n(limit)
    if _TOWARD in message:  # measured: to base contact where it ended; limit: where it began
        further = measured - limit
        if round(further, 2) > 0:
            return f"'s charge ended {further:.2f} {unit} further from {them} than it started"
        return f"'s charge ended no nearer {them} than it started, {about} from contact"
    if _SHORTEST_ROUTE in message:  # measured: the way it took; limit: the shortest route
        return f"'s charge took {about} to reach {them}, the shortest route is {lim}"
    if _FULL_DISTANCE in message:  # measured: how far it went; limit: its allowance
        return f"'s failed charge stopped after {about}, it must go all {lim}"
    if _BEYOND_THE_SEARCH in message:
        return f"'s charge needs over {m}, allowed {lim}"
    if _BY_THE_SHORTEST_PATH in message:  # its shortest legal path against its allowance
        return f"'s charge moved {about}, allowed {lim}"
    if _STOP_SHORT in message or (not message and measured < limit):
        return f"'s charge ended {about} from {them}, must stop {lim} away"
    return f"'s charge fell short: {about} from {them}, needed {lim}"


def neighbours(session: Session, model_id: str, within_in: float = NEAR_IN) -> dict[str, Any]:
    """One model's profile and its edge-to-edge distances to the models near it."""
    scene = session.scene()
    me = scene.get(model_id)
    if me is None:
        raise KeyError(model_id)
    near: list[dict[str, Any]] = []
    for other in scene.models:
        if other.id == model_id:
            continue
        gap = edge_distance(me.base, me.pose, other.base, other.pose)
        if gap <= within_in:
            near.append(
                {
                    "model": other.id,
                    "side": other.side,
                    "distance_in": round(gap, 3),
                    "uncertainty_in": round(math.hypot(me.sigma_in, other.sigma_in), 3),
                }
            )
    near.sort(key=lambda n: n["distance_in"])
    return {"model": _model(session, me, scene), "near": near}


def measure(
    session: Session, a: str, b: str | None = None, point: tuple[float, float] | None = None
) -> dict[str, Any]:
    """Edge-to-edge distance from model ``a`` to model ``b``, or to a table ``point``."""
    scene = session.scene()
    first = scene.get(a)
    if first is None:
        raise KeyError(a)
    if b is not None:
        second = scene.get(b)
        if second is None:
            raise KeyError(b)
        gap = edge_distance(first.base, first.pose, second.base, second.pose)
        sigma = math.hypot(first.sigma_in, second.sigma_in)
        return {
            "from": a,
            "to": b,
            "distance_in": round(gap, 3),
            "uncertainty_in": round(sigma, 3),
            "points": closest_points(first.base, first.pose, second.base, second.pose),
        }
    assert point is not None
    gap = centre_to_base(first.base, first.pose, point)
    return {
        "from": a,
        "to": [point[0], point[1]],
        "distance_in": round(gap, 3),
        "uncertainty_in": round(first.sigma_in, 3),
        "points": [_nearest_on(first.base, first.pose, point), [point[0], point[1]]],
    }


def _nearest_on(base: Base, pose: Pose, xy: tuple[float, float]) -> list[float]:
    """The point of the base's edge nearest ``xy`` (``xy`` itself inside the base)."""
    if base.shape == "round":
        d = math.dist(xy, pose.xy)
        if d <= base.radius_in:
            return [xy[0], xy[1]]
        k = base.radius_in / d
        return [round(pose.x + (xy[0] - pose.x) * k, 4), round(pose.y + (xy[1] - pose.y) * k, 4)]
    near, _ = shapely.ops.nearest_points(base.footprint(pose), Point(xy))
    return [round(near.x, 4), round(near.y, 4)]


def closest_points(a: Base, pose_a: Pose, b: Base, pose_b: Pose) -> list[list[float]]:
    """The two points, one on each base's edge, between which ``edge_distance`` is measured
    (for a view to draw the measured line); the two centres when the bases overlap."""
    if a.shape == "round" and b.shape == "round":
        return [_nearest_on(a, pose_a, pose_b.xy), _nearest_on(b, pose_b, pose_a.xy)]
    fa, fb = a.footprint(pose_a), b.footprint(pose_b)
    if fa.intersects(fb):
        return [[pose_a.x, pose_a.y], [pose_b.x, pose_b.y]]
    pa, pb = shapely.ops.nearest_points(fa, fb)
    return [[round(pa.x, 4), round(pa.y, 4)], [round(pb.x, 4), round(pb.y, 4)]]


def base_text(shape: str, length_mm: float, width_mm: float) -> str:
    """A base as players name it: "32 mm round", "60 x 35 mm oval", "100 x 50 mm rect".

    >>> base_text("round", 32.0, 32.0), base_text("oval", 60.0, 35.0)
    ('32 mm round', '60 x 35 mm oval')
    """
    if shape == "round" and length_mm == width_mm:
        return f"{length_mm:g} mm round"
    return f"{length_mm:g} x {width_mm:g} mm {shape}"
