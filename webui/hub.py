"""The hub's page and API (``tablesight hub``): a thin Flask layer over a
:class:`~tablesight.tournament.hub.Hub`, with the guards, the strict JSON and the one error shape
of the game's app (:func:`tablesight.webui.app.guarded_app`).

The routes:

- ``GET /``: the page (``hub.html``, ``hub.js``);
- ``GET /api/tables``: ``{"tables": [...], "hub": {...}, "now"}``, the tables needing a
  judge first (:meth:`Hub.tables`): each ``{"name", "status": "online"|"offline",
  "since", "game", "title", "turn", "phase", "side", "events", "violations", "flags",
  "last_event", "url", "reachable", ...}``; ``hub``: its broker, whether it is connected
  and the messages that did not fit; ``now``: the hub's clock (Unix s), for the ages
  shown;
- ``GET /api/tables/<name>``: one table, with its ``last_events`` and the ``commands``
  sent to it and their answers (a 404 naming ``table`` for a table never heard from);
- ``GET /api/stream``: server-sent events, a ``tables`` message each time the list
  changes, at most ``STREAM_HZ`` a second: ``/api/tables``'s object with its
  ``version``, ``order`` (every table's name, those needing a judge first) and, in
  ``tables``, the rows of the tables that changed since the stream's last message (all
  of them in the first, which says ``"full": true``): a hall of tables each sending
  events costs a page only the tables that moved;
- ``POST /api/tables/<name>/decide`` ``{"flag", "decision": "accept"|"dismiss", "by",
  "note"?}``: the judge's decision sent to the table; ``{"command": id}``.

Every refusal is ``{"error": {"status", "field", "message"}}``: a 400 naming the field,
a 404 naming ``table``. Listening beyond this machine, a POST needs the token the hub
printed (``X-TableSight-Token``), as the table's own page does; and what the hub made of
the tables' own pages (``url``, ``reachable``, ``unchecked``) is shown only to a viewer
who gives the token (the header, or ``?token=`` for the stream): to any other, each is
``null``, so that no one on the venue's network learns through the hub what answers at an
address a table named.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify

from tablesight.tournament.hub import Hub, UnknownTable
from tablesight.webui.app import guarded_app
from tablesight.webui.bodies import fields
from tablesight.webui.errors import ApiError
from tablesight.webui.guard import StreamLimits, carries_token
from tablesight.webui.jsonio import dumps
from tablesight.webui.pages import render_page
from tablesight.webui.serve import Server
from tablesight.webui.stream import KEEPALIVE_S, held

#: Where the app keeps the hub, and whether its server stops.
HUB = "tablesight.hub"
STOPPING = "tablesight.hub.stopping"
TOKEN = "tablesight.hub.token"
#: What a table's row says of its own page, shown only to a viewer with the token.
PAGE_KEYS = ("url", "reachable", "unchecked")
#: Most list messages per second on one stream.
STREAM_HZ = 5.0
#: How often a waiting stream looks whether its server stops (s).
STOP_POLL_S = 0.5

views = Blueprint("hub", __name__)


def create_hub_app(
    hub: Hub,
    token: str | None = None,
    hosts: frozenset[str] | None = None,
    limits: StreamLimits | None = None,
) -> Flask:
    """The hub's app: ``token`` guards the decisions when set; ``hosts``: the ``Host``
    headers answered (``None``: any); ``limits``: the caps on open streams."""
    app = guarded_app(token, hosts, limits)
    app.extensions[HUB] = hub
    app.extensions[STOPPING] = threading.Event()
    app.extensions[TOKEN] = token
    app.register_blueprint(views)
    return app


class HubServer(Server):
    """The hub's server: its streams end when it closes (the hub may go on)."""

    def close(self) -> None:
        self.app.extensions[STOPPING].set()
        super().close()


def hub_server(hub: Hub, host: str = "127.0.0.1", port: int = 5080) -> Server:
    """The hub's page served on ``host:port`` (not started)."""
    return HubServer(
        None,
        host,
        port,
        app=lambda token, hosts, limits: create_hub_app(hub, token, hosts, limits),
    )


def _hub() -> Hub:
    shown: Hub = current_app.extensions[HUB]
    return shown


def _trusted() -> bool:
    """Whether this request's viewer may see what the hub made of the tables' pages: the
    server has no token (it serves this machine only), or the request gives it."""
    return carries_token(current_app.extensions[TOKEN])


def _shown(row: dict[str, Any], trusted: bool) -> dict[str, Any]:
    """A table's row as this viewer sees it: without its page's keys' values unless
    ``trusted``."""
    return row if trusted else {**row, **dict.fromkeys(PAGE_KEYS)}


def _listing(hub: Hub, since: int = -1, *, trusted: bool) -> tuple[int, str]:
    """The version now and ``/api/tables``'s object as JSON text: with ``since``, only
    the rows changed after that version (and every table's name in ``order``)."""
    version, order, rows = hub.changes(since)
    listing = {
        "version": version,
        "now": time.time(),
        "hub": hub.state(),
        "full": since < 0,
        "order": order,
        "tables": [_shown(r, trusted) for r in rows],
    }
    return version, dumps(listing, separators=(",", ":"))


# -- the page ------------------------------------------------------------------------------


@views.get("/")
def page() -> str:
    return render_page("hub.html", "hub")


@views.get("/favicon.ico")
def favicon() -> Response:
    return Response(status=204)


# -- the API -------------------------------------------------------------------------------


@views.get("/api/tables")
def tables() -> Response:
    return Response(_listing(_hub(), trusted=_trusted())[1], mimetype="application/json")


@views.get("/api/tables/<name>")
def table(name: str) -> Response:
    try:
        return jsonify(_shown(_hub().table(name), _trusted()))
    except UnknownTable as exc:
        raise ApiError(404, str(exc), "table") from None


@views.post("/api/tables/<name>/decide")
def decide(name: str) -> Response:
    given = fields("flag", "decision", "by", "note", required=("flag", "decision", "by"))
    try:
        command = _hub().decide(
            name, given["flag"], given["decision"], given["by"], given.get("note")
        )
    except UnknownTable as exc:
        raise ApiError(404, str(exc), "table") from None
    return jsonify(command=command)


# -- the stream ----------------------------------------------------------------------------


@views.get("/api/stream")
def stream() -> Response:
    return held(
        _stream(_hub(), current_app.extensions[STOPPING], _trusted()),
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


def _stream(hub: Hub, stopping: threading.Event, trusted: bool) -> Iterator[str]:
    """The list each time it changes (the rows changed since the last message), at most
    ``STREAM_HZ`` a second, a comment line when nothing has for ``KEEPALIVE_S``; until
    the hub or its server closes (or the client goes: the write fails)."""
    yield "retry: 1000\n\n"
    seen, last_sent, quiet_since = -1, 0.0, time.monotonic()
    while not hub.closing and not stopping.is_set():
        version = hub.wait_for_change(seen, STOP_POLL_S)
        now = time.monotonic()
        if version == seen:
            if now - quiet_since >= KEEPALIVE_S:
                quiet_since = now
                yield ": keepalive\n\n"
            continue
        due = 1.0 / STREAM_HZ - (now - last_sent)
        if due > 0 and stopping.wait(due):
            return
        seen, text = _listing(hub, seen, trusted=trusted)
        last_sent = quiet_since = time.monotonic()
        yield f"event: tables\ndata: {text}\n\n"
