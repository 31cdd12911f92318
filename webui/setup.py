"""The set-up page's web app (``tablesight setup``): a thin Flask layer over a
:class:`~tablesight.setup.session.TableSetup`, with the guards, the strict JSON and the one
error shape of the game's app (:func:`tablesight.webui.app.create_app`).

The routes:

- ``GET /`` (leads to ``/setup``), ``GET /setup`` (the page, ``setup.html``);
- ``GET /api/setup/state``: everything the page shows (:meth:`TableSetup.state`);
- ``GET /setup/video.mjpg`` (the newest picture each time there is one) and
  ``GET /api/setup/frame.jpg`` (the newest picture once; ``X-Frame``: its number, as
  ``state.frame``; a 404 before there is one);
- ``POST /api/setup/source`` ``{"spec"}``, ``POST /api/setup/calibration``
  ``{"on", "reset"?}``, ``POST /api/setup/camera`` ``{"path"}`` (a saved camera.toml):
  each answers the state;
- ``GET /api/setup/board.pdf?paper=a4|letter``: the ChArUco board to print;
- ``POST /api/setup/table`` ``{"width_in", "depth_in", "dictionary", "corners_px",
  "anchor_size_mm"?, "anchor_ids"?, "tape"?}``: the anchors proposed;
- ``POST /api/setup/game`` ``{"game"}``: what its rules ask of the models;
- ``POST /api/setup/models`` ``{"models", "terrain"?}``: the entries as they will be
  written;
- ``GET /api/setup/markers.pdf?paper=``: the models' and pieces' markers to print;
- ``POST /api/setup/write`` ``{"folder", "start"?, "replace"?}``: the files written (in
  the set-up's folder or one under it), and the game started on them (``run``: the game,
  its address and status); files already there are replaced only with ``replace`` (the
  old kept beside), else a 409 on ``replace``; while another request writes or starts,
  a 409 on ``start``.

Every refusal is a 400 ``{"error": {"status", "field", "message"}}`` naming the field
(``models[2].marker``, ``folder``), or a 409 for a conflict.

With a token (served beyond this machine), those without it may watch but never read a
token: the state they get has the game's address without its token, and no text in it
holds the credentials of a source's URL (a camera's stream)
(:meth:`~tablesight.setup.session.TableSetup.state` for a viewer).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify, redirect, request
from jinja2 import TemplateNotFound
from werkzeug.wrappers import Response as BaseResponse

from tablesight.setup.files import SetupConflict
from tablesight.setup.session import TableSetup
from tablesight.webui.app import guarded_app
from tablesight.webui.bodies import fields
from tablesight.webui.errors import ApiError
from tablesight.webui.guard import StreamLimits, carries_token
from tablesight.webui.pages import render_page
from tablesight.webui.serve import Server
from tablesight.webui.stream import KEEPALIVE_S, held, newest_pictures

#: Where the app keeps the set-up and its stream slots (``app.extensions``).
SETUP = "tablesight.setup"
#: Where the app keeps the token its controls need (``app.extensions``).
TOKEN = "tablesight.setup.token"

#: Until the page's template is there: a page that says where the API is.
PLACEHOLDER = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>TableSight set-up</title></head>
<body><h1>TableSight set-up</h1>
<p>The set-up page is not installed; its API is at <a href="/api/setup/state">/api/setup/state</a>
and the camera's picture at <a href="/setup/video.mjpg">/setup/video.mjpg</a>.</p>
</body></html>
"""

views = Blueprint("setup", __name__)


def create_setup_app(
    setup: TableSetup,
    token: str | None = None,
    hosts: frozenset[str] | None = None,
    limits: StreamLimits | None = None,
) -> Flask:
    """The set-up page's app for ``setup``: ``token`` guards the controls when set;
    ``hosts`` are the ``Host`` headers answered (``None``: any); ``limits`` cap the
    picture streams."""
    app = guarded_app(token, hosts, limits)
    app.extensions[SETUP] = setup
    app.extensions[TOKEN] = token
    app.register_blueprint(views)
    return app


def setup_server(setup: TableSetup, host: str = "127.0.0.1", port: int = 5000) -> Server:
    """The set-up page served on ``host:port`` (not started)."""
    return Server(
        None,
        host,
        port,
        app=lambda token, hosts, limits: create_setup_app(setup, token, hosts, limits),
    )


def _setup() -> TableSetup:
    shown: TableSetup = current_app.extensions[SETUP]
    return shown


# -- the page and the pictures -------------------------------------------------------------


@views.get("/")
def home() -> BaseResponse:
    query = request.query_string.decode("latin-1")
    return redirect("/setup" + (f"?{query}" if query else ""))


@views.get("/setup")
def page() -> str:
    try:
        return render_page("setup.html", "setup")
    except TemplateNotFound:
        return PLACEHOLDER


@views.get("/favicon.ico")
def favicon() -> Response:
    return Response(status=204)


@views.get("/api/setup/frame.jpg")
def frame() -> Response:
    picture = _setup().jpeg()
    if picture is None:
        raise ApiError(404, "source: no picture yet; choose a camera or a video", "source")
    count, data = picture
    headers = {"Cache-Control": "no-store", "X-Frame": str(count)}
    return Response(data, mimetype="image/jpeg", headers=headers)


@views.get("/setup/video.mjpg")
def video() -> Response:
    return held(
        _mjpeg(_setup()),
        mimetype="multipart/x-mixed-replace; boundary=frame",
        headers={"Cache-Control": "no-store"},
    )


def _mjpeg(setup: TableSetup) -> Iterator[bytes]:
    """The newest picture each time there is a new one (0: none yet)."""
    return newest_pictures(
        lambda: setup.closing,
        lambda seen: setup.wait_for_frame(seen, KEEPALIVE_S),
        setup.jpeg,
        first=0,
    )


# -- the steps -----------------------------------------------------------------------------


@views.get("/api/setup/state")
def state() -> Response:
    return jsonify(_shown())


def _shown() -> dict[str, Any]:
    """The state, as whoever asks may see it: whole with the token, else as a viewer's."""
    return _setup().state(viewer=not carries_token(current_app.extensions[TOKEN]))


@views.post("/api/setup/source")
def source() -> Response:
    _setup().use_source(fields("spec", required=("spec",))["spec"])
    return jsonify(_setup().state())


@views.post("/api/setup/calibration")
def calibration() -> Response:
    given = fields("on", "reset", required=("on",))
    _setup().set_calibration(given["on"], given.get("reset", False))
    return jsonify(_setup().state())


@views.post("/api/setup/camera")
def camera() -> Response:
    _setup().load_camera(fields("path", required=("path",))["path"])
    return jsonify(_setup().state())


@views.get("/api/setup/board.pdf")
def board() -> Response:
    data = _setup().board_pdf(request.args.get("paper", "a4"))
    return _pdf(data, "charuco-board.pdf")


@views.post("/api/setup/table")
def table() -> Response:
    given = fields(
        "width_in",
        "depth_in",
        "dictionary",
        "corners_px",
        "anchor_size_mm",
        "anchor_ids",
        "tape",
        required=("width_in", "depth_in", "dictionary", "corners_px"),
    )
    return jsonify(_setup().set_table(**given).to_dict())


@views.post("/api/setup/game")
def game() -> Response:
    return jsonify(_setup().set_game(fields("game", required=("game",))["game"]).to_dict())


@views.post("/api/setup/models")
def models() -> Response:
    given = fields("models", "terrain", required=("models",))
    _setup().set_models(given["models"], given.get("terrain", []))
    shown = _setup().state()
    return jsonify(models=shown["models"], terrain=shown["terrain"])


@views.get("/api/setup/markers.pdf")
def markers() -> Response:
    return _pdf(_setup().markers_pdf(request.args.get("paper", "a4")), "markers.pdf")


@views.post("/api/setup/write")
def write() -> Response:
    given = fields("folder", "start", "replace", required=("folder",))
    try:
        _setup().write(given["folder"], given.get("start", False), given.get("replace", False))
    except SetupConflict as exc:
        raise ApiError(409, str(exc), exc.field) from None
    shown = _setup().state()
    return jsonify(written=shown["written"], run=shown["run"])


def _pdf(data: bytes, name: str) -> Response:
    headers = {"Cache-Control": "no-store", "Content-Disposition": f'inline; filename="{name}"'}
    return Response(data, mimetype="application/pdf", headers=headers)
