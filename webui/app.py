"""The web UI: a thin Flask layer over a game (:class:`~tablesight.webui.protocol.Refereed`: the
live
:class:`~tablesight.match.game.Game`, or a :class:`~tablesight.match.replay.Replay`).

Views translate HTTP to calls on the game and back; the table's shapes and numbers come
from the game (:mod:`tablesight.rules.view`), never from here or from the browser's JavaScript.
The routes, by blueprint:

- :mod:`tablesight.webui.pages`: ``/`` (the table view with controls), ``/broadcast`` and
  ``/overlay`` (for OBS);
- :mod:`tablesight.webui.api`: ``GET /api/state``, ``GET /api/events?since=``,
  ``GET /api/models/<id>``, ``GET /api/measure?a=&b=`` (or ``&x=&y=``),
  ``POST /api/phase``, ``POST /api/declare``, ``POST /api/flags/<id>``;
- :mod:`tablesight.webui.reach`: ``GET /api/reach?model=&action=&from=`` (or ``?side=``) and
  ``GET /api/threat?model=``: where a model may legally end a move, and an enemy's charge;
- :mod:`tablesight.webui.stream`: ``GET /api/stream`` (server-sent events: state and events, one
  stream per page) and ``GET /video.mjpg`` (the camera picture, newest frame only);
- :mod:`tablesight.webui.replay`, for a replay (``create_app(replay, replay=replay)``): ``/replay``
  (``/`` leads there), ``GET /api/replay``, ``POST /api/replay/seek`` and
  ``GET /replay/frame.jpg?t=``.

Every error is ``{"error": {"status", "field", "message"}}`` (:mod:`tablesight.webui.errors`). When
a
``token`` is set (the server listens beyond this machine), the POST routes need it in
``X-TableSight-Token`` (or ``?token=``); watching needs none. What is refused before a view
runs (a foreign ``Host``, a control from another site, a stream beyond the caps) and the
headers every answer carries (the Content-Security-Policy) are :mod:`tablesight.webui.guard`'s.

JSON in and out is strict (:mod:`tablesight.webui.jsonio`), and a body over ``MAX_BODY`` bytes is
refused (413).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import Flask

from tablesight.webui import errors, guard
from tablesight.webui.api import api
from tablesight.webui.guard import StreamLimits, StreamSlots
from tablesight.webui.jsonio import MAX_BODY, StrictJSON
from tablesight.webui.pages import SETUP_URL, pages
from tablesight.webui.protocol import GAME, REPLAY, Refereed
from tablesight.webui.reach import REACHES, Reaches, reaches
from tablesight.webui.replay import replays
from tablesight.webui.stream import SLOTS, streams

if TYPE_CHECKING:
    from tablesight.match.replay import Replay


def guarded_app(
    token: str | None = None,
    hosts: frozenset[str] | None = None,
    limits: StreamLimits | None = None,
) -> Flask:
    """A Flask app with the pages' strict JSON, body limit and one error shape, the
    ``Host`` and control guards (``token``, ``hosts``: as :func:`create_app`'s), the
    security headers and the caps on open streams; its routes are the caller's."""
    app = Flask(__name__)
    app.json = StrictJSON(app)
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY
    app.extensions[SLOTS] = StreamSlots(limits or StreamLimits())
    errors.register(app)
    if hosts is not None:
        app.before_request(lambda: guard.check_host(hosts))
    app.before_request(lambda: guard.check_control(token))
    app.after_request(guard.secure_headers)
    return app


def create_app(
    game: Refereed,
    token: str | None = None,
    replay: Replay | None = None,
    hosts: frozenset[str] | None = None,
    limits: StreamLimits | None = None,
    setup_url: str | None = None,
) -> Flask:
    """The Flask app for ``game``; ``setup_url``: the set-up page that started the game,
    which the table view links back to; ``token`` guards the controls when set; ``replay`` (the
    same object as ``game``) adds the replay viewer's routes; ``hosts``: the ``Host``
    headers answered (``None``: any; :func:`tablesight.webui.guard.allowed_hosts`); ``limits``: the
    caps on open streams."""
    app = guarded_app(token, hosts, limits)
    app.extensions[GAME] = game
    app.extensions[REACHES] = Reaches()
    app.config[SETUP_URL] = setup_url
    for blueprint in (pages, api, reaches, streams):
        app.register_blueprint(blueprint)
    if replay is not None:
        app.extensions[REPLAY] = replay
        app.register_blueprint(replays)
    return app
