"""Where can it go? ``GET /api/reach`` and ``GET /api/threat``: a model's legal reach and
an enemy's threat, worked out by the rules core (:mod:`tablesight.rules.reach`) on the
table the game shows, live or at the moment a replay shows.

- ``GET /api/reach?model=ID[&action=A][&from=here|start]``: where the model may legally
  end a move by ``action`` (its declared one by default; ``move`` when nothing is
  declared). ``from=here`` (the default): from where it stands now, every other model
  where it stands now (the question before a move). ``from=start``: from where its move
  in this phase started, the others where they stand at the moment shown (the reach the
  referee judged its move against: what the replay shows for a flagged move).
- ``GET /api/reach?side=S[&action=A][&from=...]``: the same for every model of a side on
  the table, in one answer (``{"side", "reaches": [...]}``).
- ``GET /api/threat?model=ID[&from=...]``: where the model's charge could end at most
  (the best roll of its die) and ``threatened``: the models of the other sides it could
  reach.

Each answer: ``model``, ``side``, ``action``, ``from``, ``start`` (where it is worked out
from, table inches), ``allowance_in``, ``area_sq_in``, ``limits`` (``[{"by", "share"}]``:
what bounds the region, each with its share of the region's edge), ``explain`` (one line)
and ``geometry``: the region as a GeoJSON MultiPolygon in table inches (x along the width,
y along the depth; each polygon its outer ring, then its holes).

An unknown model or side, an action the game does not have, or a game played on squares
is a 400 naming the field (``model``, ``side``, ``action``, ``game``). Nothing here changes
the game: like the other readings, these need no token.

Nothing is worked out per frame: each app keeps one
:class:`~tablesight.rules.reach.ReachCache`, which works a reach out again only when the
model, something within its allowance, or the terrain has moved.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from flask import Blueprint, Response, current_app, jsonify, request

from tablesight.rules.reach import Reach, ReachCache, standing_now
from tablesight.webui.errors import ApiError
from tablesight.webui.protocol import Refereed, game

if TYPE_CHECKING:
    from tablesight.rules.ruleset import Ruleset
    from tablesight.rules.scene import Scene

reaches = Blueprint("reach", __name__, url_prefix="/api")

#: Where the app keeps its :class:`Reaches` (``app.extensions``).
REACHES = "tablesight.reaches"
#: The places a reach may be worked out from.
FROM = ("here", "start")
#: Digits kept of each coordinate (inches): a thousandth, well inside the 0.05 in the
#: region is exact to.
DIGITS = 3
#: The longest query value read (a model's id, an action's name, a side).
MAX_VALUE = 200


@runtime_checkable
class Tabled(Protocol):
    """A game whose table reach is worked out on: the live game and the replay (the
    moment shown)."""

    def table(self) -> tuple[Scene, Ruleset]: ...


class Reaches:
    """One game's reach cache, safe to ask from any server thread (one answer is worked
    out at a time: two pages asking for the same reach get it worked out once)."""

    def __init__(self) -> None:
        self._cache = ReachCache()
        self._lock = threading.Lock()

    def reach(self, scene: Scene, ruleset: Ruleset, model_id: str, action: str | None) -> Reach:
        with self._lock:
            return self._cache.reach(scene, ruleset, model_id, action)

    def threat(self, scene: Scene, ruleset: Ruleset, model_id: str) -> tuple[Reach, list[str]]:
        with self._lock:
            return self._cache.threat(scene, ruleset, model_id)


def _reaches() -> Reaches:
    found = current_app.extensions.get(REACHES)
    if not isinstance(found, Reaches):
        raise ApiError(500, "reach: this server keeps no reach cache")
    return found


def _table(shown: Refereed, start: bool) -> tuple[Scene, Ruleset]:
    """The table the game shows now, every model starting where it stands unless
    ``start`` (the game reads it under its own lock)."""
    if not isinstance(shown, Tabled):
        raise ApiError(404, "reach: this game does not show a table to reach across", "model")
    scene, ruleset = shown.table()
    return (scene if start else standing_now(scene)), ruleset


def _arg(name: str, required: bool = False) -> str | None:
    """A query value: ``None`` when not given (or empty); a 400 naming it when required
    and missing, or too long to be a name."""
    value = request.args.get(name, "").strip()
    if not value:
        if required:
            raise ApiError(400, f"{name}: required", name)
        return None
    if len(value) > MAX_VALUE:
        raise ApiError(400, f"{name}: at most {MAX_VALUE} characters", name)
    return value


def _from() -> bool:
    """Whether ``from=start`` was asked for (else ``here``)."""
    given = request.args.get("from", "here")
    if given not in FROM:
        shown = given if len(given) <= 40 else given[:37] + "..."
        raise ApiError(400, f"from: expected here or start, got {shown!r}", "from")
    return given == "start"


def _rings(found: Reach) -> list[list[list[list[float]]]]:
    """The region's polygons, each its outer ring then its holes, each ring closed."""

    def ring(coords: Any) -> list[list[float]]:
        return [[round(x, DIGITS), round(y, DIGITS)] for x, y in coords]

    return [
        [ring(p.exterior.coords), *(ring(h.coords) for h in p.interiors)] for p in found.polygons()
    ]


def answer(found: Reach, scene: Scene, start: bool) -> dict[str, Any]:
    """A reach as the API answers it (see the module's description)."""
    mover = scene.get(found.model)
    at = mover.start if mover is not None else None
    return {
        "model": found.model,
        "side": mover.side if mover is not None else None,
        "action": found.action,
        "from": "start" if start else "here",
        "start": None if at is None else [round(at.x, DIGITS), round(at.y, DIGITS)],
        "allowance_in": round(found.allowance_in, DIGITS),
        "area_sq_in": round(found.area_sq_in, 2),
        "limits": [{"by": what, "share": round(share, 3)} for what, share in found.limits],
        "explain": found.explain(),
        "geometry": {"type": "MultiPolygon", "coordinates": _rings(found)},
    }


@reaches.get("/reach")
def reach() -> Response:
    model, side, action = _arg("model"), _arg("side"), _arg("action")
    start = _from()
    if model is None and side is None:
        raise ApiError(400, "model: give a model (or a side)", "model")
    if model is not None and side is not None:
        raise ApiError(400, "side: give a model or a side, not both", "side")
    scene, ruleset = _table(game(), start)
    kept = _reaches()
    if model is not None:
        return jsonify(answer(kept.reach(scene, ruleset, model, action), scene, start))
    sides = list(dict.fromkeys(m.side for m in scene.models))
    if side not in sides:
        known = ", ".join(sides) or "none on the table"
        raise ApiError(400, f"side: no side {side!r} on the table; the sides are {known}", "side")
    found = [
        answer(kept.reach(scene, ruleset, m.id, action), scene, start)
        for m in scene.models
        if m.side == side
    ]
    return jsonify(side=side, reaches=found)


@reaches.get("/threat")
def threat() -> Response:
    model = _arg("model", required=True)
    assert model is not None
    start = _from()
    scene, ruleset = _table(game(), start)
    found, threatened = _reaches().threat(scene, ruleset, model)
    return jsonify({**answer(found, scene, start), "threatened": threatened})
