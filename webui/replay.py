"""The replay viewer's routes, served with a :class:`~tablesight.match.replay.Replay`
(which answers the rest of the API as a game does, for the moment it shows).

``GET /replay`` (the page), ``GET /api/replay`` (the footage, revisions and every event of
the revision shown), ``POST /api/replay/seek`` (``{"t": seconds}``: the moment to show; its
position and state) and ``GET /replay/frame.jpg?t=`` (the picture at that time).
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify, request

from tablesight.webui import keys
from tablesight.webui.bodies import SeekBody, body
from tablesight.webui.errors import ApiError
from tablesight.webui.pages import render_page
from tablesight.webui.protocol import replay

replays = Blueprint("replay", __name__)


@replays.get("/replay")
def page() -> str:
    return render_page("replay.html", "replay", keys.REPLAY)


@replays.get("/api/replay")
def info() -> Response:
    return jsonify(replay().info())


@replays.post("/api/replay/seek")
def seek() -> Response:
    position = replay().seek(body(SeekBody).t)
    return jsonify(position=position, state=replay().state())


@replays.get("/replay/frame.jpg")
def frame() -> Response:
    shown = replay()
    picture = shown.picture(shown.parse_t(request.args.get("t")))
    if picture is None:
        raise ApiError(404, "t: no picture was recorded for this moment", "t")
    return Response(picture, mimetype="image/jpeg", headers={"Cache-Control": "no-store"})
