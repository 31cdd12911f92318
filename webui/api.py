"""The JSON API: what the table shows, and the players' controls.

``GET /api/state``, ``GET /api/events?since=``, ``GET /api/models/<id>``,
``GET /api/measure?a=&b=`` (or ``&x=&y=``), ``POST /api/phase``, ``POST /api/declare`` and
``POST /api/flags/<id>``. A refusal is :mod:`tablesight.webui.errors`' one shape; the game's own
(an :class:`~tablesight.rules.errors.InputError`) names the field at fault.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from flask import Blueprint, Response, jsonify, request

from tablesight.rules.values import MAX_COORDINATE_IN, cut
from tablesight.webui.bodies import DeclareBody, FlagBody, PhaseBody, body
from tablesight.webui.errors import ApiError
from tablesight.webui.protocol import Refereed, game

if TYPE_CHECKING:
    from tablesight.rules.session import Event

api = Blueprint("api", __name__, url_prefix="/api")

# -- reading ------------------------------------------------------------------------------


@api.get("/state")
def state() -> Response:
    return jsonify(game().state())


#: The most digits of an event id.
MAX_ID_DIGITS = 18


def since() -> int:
    """The first event id a request asks for: ``?since=``, else the ``Last-Event-ID``
    header (which a browser's stream sends when it reconnects), else 0; a 400 naming the
    one given when it is not 0-9 digits (at most ``MAX_ID_DIGITS``)."""
    field, given = "since", request.args.get("since")
    if given is None:
        field, given = "Last-Event-ID", request.headers.get("Last-Event-ID", "0")
    digits = given.strip()
    if not (digits.isascii() and digits.isdigit() and len(digits) <= MAX_ID_DIGITS):
        raise ApiError(400, f"{field}: expected an event id (0 or more), got {cut(given)}", field)
    return int(digits)


@api.get("/events")
def events() -> Response:
    return jsonify(events=[e.to_dict() for e in game().events_since(since())])


@api.get("/models/<model_id>")
def model(model_id: str) -> Response:
    try:
        return jsonify(game().neighbours(model_id))
    except KeyError:
        raise ApiError(404, f"model: no model {cut(model_id)} on the table", "model") from None


@api.get("/measure")
def measure() -> Response:
    a, b = request.args.get("a"), request.args.get("b")
    if not a:
        raise ApiError(400, "a: the model to measure from is required", "a")
    if b is not None and b == a:
        raise ApiError(400, "b: measure between two different models", "b")
    point = None if b is not None else (_coordinate("x"), _coordinate("y"))
    try:
        return jsonify(game().measure(a, b, point))
    except KeyError as exc:
        field = "a" if exc.args[0] == a else "b"
        raise ApiError(400, f"{field}: no model {cut(exc.args[0])}", field) from None


def _coordinate(name: str) -> float:
    """A table point's ``x`` or ``y``: a finite number of inches within
    ``MAX_COORDINATE_IN`` of the table's origin."""
    given = request.args.get(name)
    if given is None:
        raise ApiError(400, "b: give a model b, or a table point x and y", "b")
    try:
        value = float(given) if given.isascii() and len(given) <= 32 else math.nan
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and abs(value) <= MAX_COORDINATE_IN):
        raise ApiError(
            400,
            f"{name}: expected inches from -{MAX_COORDINATE_IN:g} to {MAX_COORDINATE_IN:g}, "
            f"got {cut(given)}",
            name,
        )
    return value


# -- controls -----------------------------------------------------------------------------


@api.post("/phase")
def phase() -> Response:
    asked = body(PhaseBody)
    if asked.side is not None:
        game().set_side(asked.side)
    elif asked.action == "side":
        raise ApiError(400, "side: required with action side", "side")
    done = _phase(game(), asked.action, asked.turn)
    return jsonify(events=[e.to_dict() for e in done], session=game().state()["session"])


def _phase(shown: Refereed, action: str, turn: int | None) -> list[Event]:
    if action == "start":
        return shown.start_phase(turn=turn)
    if action == "end":
        return shown.end_phase()
    if action == "next_turn":
        return shown.next_turn()
    return []  # "side": the side is set


@api.post("/declare")
def declare() -> Response:
    asked = body(DeclareBody)
    done = game().declare(asked.model, asked.action, asked.target, asked.roll)
    return jsonify(events=[e.to_dict() for e in done])


@api.post("/flags/<int:flag_id>")
def flag(flag_id: int) -> Response:
    asked = body(FlagBody)
    game().decide(flag_id, asked.decision)
    return jsonify(id=flag_id, decision=asked.decision)
