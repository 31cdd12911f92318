"""The web UI: a thin Flask layer over a :class:`~vision.live.Game`.

Views translate HTTP to calls on the game and back; the table's shapes and numbers come
from the game (:mod:`rules.board`), never from here or from the browser's JavaScript.

Pages: ``/`` (the table view with controls), ``/broadcast`` and ``/overlay`` (for OBS).
API: ``GET /api/state``, ``GET /api/events?since=``, ``GET /api/models/<id>``,
``GET /api/measure?a=&b=`` (or ``&x=&y=``), ``POST /api/phase``, ``POST /api/declare``,
``POST /api/flags/<id>``, ``GET /api/stream`` (server-sent events: state and events, one
stream per page) and ``GET /video.mjpg`` (the camera picture, newest frame only).

For a replay (``create_app(replay, replay=replay)`` with a :class:`~vision.match.replay.Replay`,
which answers the API as a game does for the moment it shows), also: ``GET /replay`` (the
page; ``/`` leads there), ``GET /api/replay`` (the footage, revisions and every event of
the revision shown), ``POST /api/replay/seek`` (``{"t": seconds}``: the moment to show; its
position and state) and ``GET /replay/frame.jpg?t=`` (the picture at that time).

Every error is ``{"error": {"status", "field", "message"}}``. When a ``token`` is set (the
server listens beyond this machine), the POST routes need it in ``X-TableSight-Token``
(or ``?token=``); watching needs none.
"""

from __future__ import annotations

import hmac
import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from flask import Flask, Response, jsonify, redirect, render_template, request
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from werkzeug.exceptions import HTTPException

from rules.board import measure, neighbours
from rules.errors import InputError
from vision.game import Game

if TYPE_CHECKING:
    from vision.match.replay import Replay

#: Most state messages per second on one stream (events go with the next one).
STATE_HZ = 5.0
#: A comment line this often keeps a quiet stream open and finds closed clients.
KEEPALIVE_S = 10.0


class ApiError(Exception):
    """A request the API refuses: the status, the field at fault and why."""

    def __init__(self, status: int, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.field = status, message, field


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class PhaseBody(_Body):
    action: str = Field(pattern="^(start|end|next_turn|side)$")
    side: str | None = None
    turn: int | None = Field(None, ge=1)


class DeclareBody(_Body):
    model: str
    action: str | None = None
    target: str | None = None
    roll: int | None = None


class FlagBody(_Body):
    decision: str = Field(pattern="^(accept|dismiss)$")


class SeekBody(_Body):
    t: float = Field(strict=True)


T = TypeVar("T", bound=_Body)


def _body(kind: type[T]) -> T:
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise ApiError(400, "expected a JSON object", "body")
    try:
        return kind.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "body"
        allowed = ""
        if field in kind.model_fields and kind.model_fields[field].metadata:
            pattern = str(getattr(kind.model_fields[field].metadata[0], "pattern", "") or "")
            if pattern:
                allowed = "; allowed: " + ", ".join(pattern.strip("^$()").split("|"))
        raise ApiError(400, f"{field}: {err['msg']}{allowed}", field) from None


def _input_error(exc: InputError) -> ApiError:
    text = str(exc)
    field = text.split(":", 1)[0] if ":" in text else None
    return ApiError(400, text, field)


def create_app(
    game: Game | Replay, token: str | None = None, replay: Replay | None = None
) -> Flask:
    """The Flask app for ``game``; ``token`` guards the controls when set; ``replay`` (the
    same object as ``game``) adds the replay viewer's routes."""
    app = Flask(__name__)
    app.config["JSON_SORT_KEYS"] = False

    @app.errorhandler(ApiError)
    def api_error(exc: ApiError) -> tuple[Response, int]:
        body = {"status": exc.status, "field": exc.field, "message": exc.message}
        return jsonify(error=body), exc.status

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> tuple[Response, int]:
        status = exc.code or 500
        body = {"status": status, "field": None, "message": exc.description}
        return jsonify(error=body), status

    @app.errorhandler(Exception)
    def server_error(exc: Exception) -> tuple[Response, int]:
        app.logger.exception("request failed")
        body = {"status": 500, "field": None, "message": "internal error; see the server log"}
        return jsonify(error=body), 500

    @app.before_request
    def guard() -> None:
        if token is None or request.method != "POST":
            return
        given = request.headers.get("X-TableSight-Token") or request.args.get("token") or ""
        if not hmac.compare_digest(given, token):
            raise ApiError(403, "this server needs the token it printed at start-up", "token")

    # -- pages --------------------------------------------------------------------------

    @app.get("/")
    def table_view() -> Any:
        if replay is not None:
            return redirect("/replay")
        return render_template("table.html", page="table")

    @app.get("/broadcast")
    def broadcast() -> str:
        return render_template("broadcast.html", page="broadcast")

    @app.get("/overlay")
    def overlay() -> str:
        return render_template("broadcast.html", page="overlay")

    @app.get("/favicon.ico")
    def favicon() -> Response:
        return Response(status=204)

    # -- reading ------------------------------------------------------------------------

    @app.get("/api/state")
    def state() -> Response:
        return jsonify(game.state())

    @app.get("/api/events")
    def events() -> Response:
        since = request.args.get("since", "0")
        if not since.isdigit():
            raise ApiError(400, f"since: expected an event id (0 or more), got {since!r}", "since")
        return jsonify(events=[e.to_dict() for e in game.events_since(int(since))])

    @app.get("/api/models/<model_id>")
    def model(model_id: str) -> Response:
        with game.lock:
            try:
                return jsonify(neighbours(game.session, model_id))
            except KeyError:
                raise ApiError(404, f"model: no model {model_id!r} on the table", "model") from None

    @app.get("/api/measure")
    def measure_view() -> Response:
        a, b = request.args.get("a"), request.args.get("b")
        if not a:
            raise ApiError(400, "a: the model to measure from is required", "a")
        point = None
        if b is None:
            try:
                point = (float(request.args["x"]), float(request.args["y"]))
            except (KeyError, ValueError):
                raise ApiError(400, "b: give a model b, or a table point x and y", "b") from None
        with game.lock:
            try:
                return jsonify(measure(game.session, a, b, point))
            except KeyError as exc:
                field = "a" if exc.args[0] == a else "b"
                raise ApiError(400, f"{field}: no model {exc.args[0]!r}", field) from None

    # -- controls -----------------------------------------------------------------------

    @app.post("/api/phase")
    def phase() -> Response:
        body = _body(PhaseBody)
        try:
            if body.side is not None:
                game.set_side(body.side)
            if body.action == "side":
                if body.side is None:
                    raise ApiError(400, "side: required with action side", "side")
                done = []
            elif body.action == "start":
                done = game.start_phase(turn=body.turn)
            elif body.action == "end":
                done = game.end_phase()
            else:
                done = game.next_turn()
        except InputError as exc:
            raise _input_error(exc) from None
        return jsonify(events=[e.to_dict() for e in done], session=game.state()["session"])

    @app.post("/api/declare")
    def declare() -> Response:
        body = _body(DeclareBody)
        try:
            done = game.declare(body.model, body.action, body.target, body.roll)
        except InputError as exc:
            raise _input_error(exc) from None
        return jsonify(events=[e.to_dict() for e in done])

    @app.post("/api/flags/<int:flag_id>")
    def flag(flag_id: int) -> Response:
        body = _body(FlagBody)
        try:
            game.decide(flag_id, body.decision)
        except InputError as exc:
            raise _input_error(exc) from None
        return jsonify(id=flag_id, decision=body.decision)

    # -- streams ------------------------------------------------------------------------

    @app.get("/api/stream")
    def stream() -> Response:
        since = request.args.get("since", request.headers.get("Last-Event-ID", "0"))
        first = int(since) if since.isdigit() else 0
        return Response(
            _stream(game, first),
            mimetype="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    @app.get("/video.mjpg")
    def video() -> Response:
        return Response(
            _mjpeg(game),
            mimetype="multipart/x-mixed-replace; boundary=frame",
            headers={"Cache-Control": "no-store"},
        )

    if replay is not None:
        _replay_routes(app, replay)
    return app


def _replay_routes(app: Flask, replay: Replay) -> None:
    """The replay viewer: its page, the match, seeking, and the picture at a time."""

    @app.get("/replay")
    def replay_view() -> str:
        return render_template("replay.html", page="replay")

    @app.get("/api/replay")
    def replay_info() -> Response:
        return jsonify(replay.info())

    @app.post("/api/replay/seek")
    def replay_seek() -> Response:
        body = _body(SeekBody)
        try:
            position = replay.seek(body.t)
        except InputError as exc:
            raise _input_error(exc) from None
        return jsonify(position=position, state=replay.state())

    @app.get("/replay/frame.jpg")
    def replay_frame() -> Response:
        try:
            picture = replay.picture(replay.parse_t(request.args.get("t")))
        except InputError as exc:
            raise _input_error(exc) from None
        if picture is None:
            raise ApiError(404, "t: no picture was recorded for this moment", "t")
        return Response(picture, mimetype="image/jpeg", headers={"Cache-Control": "no-store"})


def _closing(game: Game | Replay) -> bool:
    """The game (or replay) is stopping: its streams end."""
    return game.closing


def _sse(kind: str, data: Any, event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def _stream(game: Game | Replay, next_id: int) -> Iterator[str]:
    """State (at most ``STATE_HZ`` a second) and every event, for one page.

    The pipeline never waits for a client: this generator runs on the client's own server
    thread, wakes on the game's changes and reads what it has not sent yet; a slow client
    skips states but gets every event. It ends when the client goes (the write fails).
    """
    seen_version, generation = -1, game.generation
    last_state = 0.0
    yield "retry: 1000\n\n"
    while not _closing(game):
        with game.changed:
            game.changed.wait_for(
                lambda v=seen_version: game.version != v or _closing(game), timeout=KEEPALIVE_S
            )
            changed = game.version != seen_version
        if not changed:
            yield ": keepalive\n\n"
            continue
        wait = 1.0 / STATE_HZ - (time.monotonic() - last_state)
        if wait > 0:
            time.sleep(wait)
        # what is read from here on is at least as new as this version
        seen_version = game.version
        if game.generation != generation:
            generation, next_id = game.generation, 0
            yield _sse("reset", {"generation": generation})
        for e in game.events_since(next_id):
            next_id = e.id + 1
            yield _sse("event", e.to_dict(), e.id)
        last_state = time.monotonic()
        yield _sse("state", game.state())


def _mjpeg(game: Game | Replay) -> Iterator[bytes]:
    """The newest frame each time there is a new one; frames a slow client misses are
    skipped, never queued."""
    sent = -1
    # Each picture is followed by the next part's boundary and headers: a browser shows a
    # part only once the next one has begun.
    head = b"--frame\r\nContent-Type: image/jpeg\r\n\r\n"
    yield head
    while not _closing(game):
        with game.changed:
            game.changed.wait_for(
                lambda s=sent: _closing(game) or (game.frame is not None and game.frame.index != s),
                timeout=KEEPALIVE_S,
            )
        picture = game.jpeg()
        if picture is None or picture[0] == sent:
            continue
        sent, data = picture
        yield data + b"\r\n" + head
