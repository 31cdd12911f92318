"""The web UI: a thin Flask layer over a game (:class:`~webui.protocol.Refereed`: the live
:class:`~vision.game.Game`, or a :class:`~vision.match.replay.Replay`).

Views translate HTTP to calls on the game and back; the table's shapes and numbers come
from the game (:mod:`rules.view`), never from here or from the browser's JavaScript.
The routes, by blueprint:

- :mod:`webui.pages`: ``/`` (the table view with controls), ``/broadcast`` and
  ``/overlay`` (for OBS);
- :mod:`webui.api`: ``GET /api/state``, ``GET /api/events?since=``,
  ``GET /api/models/<id>``, ``GET /api/measure?a=&b=`` (or ``&x=&y=``),
  ``POST /api/phase``, ``POST /api/declare``, ``POST /api/flags/<id>``;
- :mod:`webui.stream`: ``GET /api/stream`` (server-sent events: state and events, one
  stream per page) and ``GET /video.mjpg`` (the camera picture, newest frame only);
- :mod:`webui.replay`, for a replay (``create_app(replay, replay=replay)``): ``/replay``
  (``/`` leads there), ``GET /api/replay``, ``POST /api/replay/seek`` and
  ``GET /replay/frame.jpg?t=``.

Every error is ``{"error": {"status", "field", "message"}}`` (:mod:`webui.errors`). When a
``token`` is set (the server listens beyond this machine), the POST routes need it in
``X-TableSight-Token`` (or ``?token=``); watching needs none.
"""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING

from flask import Flask, request

from webui import errors
from webui.api import api
from webui.errors import ApiError
from webui.pages import pages
from webui.protocol import GAME, REPLAY, Refereed
from webui.replay import replays
from webui.stream import streams

if TYPE_CHECKING:
    from vision.match.replay import Replay


def create_app(game: Refereed, token: str | None = None, replay: Replay | None = None) -> Flask:
    """The Flask app for ``game``; ``token`` guards the controls when set; ``replay`` (the
    same object as ``game``) adds the replay viewer's routes."""
    app = Flask(__name__)
    app.config["JSON_SORT_KEYS"] = False
    app.extensions[GAME] = game
    errors.register(app)
    if token is not None:
        app.before_request(lambda: _check_token(token))
    for blueprint in (pages, api, streams):
        app.register_blueprint(blueprint)
    if replay is not None:
        app.extensions[REPLAY] = replay
        app.register_blueprint(replays)
    return app


def _check_token(token: str) -> None:
    """The controls (every POST) need the token the server printed at start-up."""
    if request.method != "POST":
        return
    given = request.headers.get("X-TableSight-Token") or request.args.get("token") or ""
    if not hmac.compare_digest(given, token):
        raise ApiError(403, "this server needs the token it printed at start-up", "token")
