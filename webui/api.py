"""The JSON API: what the table shows, and the players' controls.

``GET /api/state``, ``GET /api/events?since=``, ``GET /api/models/<id>``,
``GET /api/measure?a=&b=`` (or ``&x=&y=``), ``POST /api/phase``, ``POST /api/declare`` and
``POST /api/flags/<id>``. A refusal is :mod:`webui.errors`' one shape; the game's own
(an :class:`~rules.errors.InputError`) names the field at fault.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import Blueprint, Response, jsonify, request

from webui.bodies import DeclareBody, FlagBody, PhaseBody, body
from webui.errors import ApiError
from webui.protocol import Refereed, game

if TYPE_CHECKING:
    from rules.session import Event

api = Blueprint("api", __name__, url_prefix="/api")

# -- reading ------------------------------------------------------------------------------


@api.get("/state")
def state() -> Response:
    return jsonify(game().state())


@api.get("/events")
def events() -> Response:
    since = request.args.get("since", "0")
    if not since.isdigit():
        raise ApiError(400, f"since: expected an event id (0 or more), got {since!r}", "since")
    return jsonify(events=[e.to_dict() for e in game().events_since(int(since))])


@api.get("/models/<model_id>")
def model(model_id: str) -> Response:
    try:
        return jsonify(game().neighbours(model_id))
    except KeyError:
        raise ApiError(404, f"model: no model {model_id!r} on the table", "model") from None


@api.get("/measure")
def measure() -> Response:
    a, b = request.args.get("a"), request.args.get("b")
    if not a:
        raise ApiError(400, "a: the model to measure from is required", "a")
    point = None if b is not None else _point()
    try:
        return jsonify(game().measure(a, b, point))
    except KeyError as exc:
        field = "a" if exc.args[0] == a else "b"
        raise ApiError(400, f"{field}: no model {exc.args[0]!r}", field) from None


def _point() -> tuple[float, float]:
    try:
        return float(request.args["x"]), float(request.args["y"])
    except (KeyError, ValueError):
        raise ApiError(400, "b: give a model b, or a table point x and y", "b") from None


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
