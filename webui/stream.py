"""What a page keeps open: ``GET /api/stream`` (server-sent events: the state, at most
``STATE_HZ`` a second, every event, in order, and the models' poses with every frame) and
``GET /video.mjpg`` (the camera picture, newest frame only).

The poses (``poses`` messages) are the light part: each frame's id, x, y, heading, z and
track state of every model whose entry changed since the stream last sent it (all of them
in the first), the frame's number and its arrival time (``arrived_ms``, wall clock), so
that the overlay follows a model slid across the table at the camera's rate while the
full state, tens of kilobytes, comes a few times a second.

The game never waits for a client: each stream runs on its client's own server thread,
waits for the game's next change and reads what it has not sent yet; a slow client skips
states and pictures but gets every event. A stream ends when its client goes (the write
fails) or the game closes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from flask import Blueprint, Response, current_app, request

from webui.api import since
from webui.guard import StreamSlots
from webui.jsonio import dumps
from webui.protocol import Refereed, game

#: Most state messages per second on one stream (events go with the next one).
STATE_HZ = 5.0
#: A comment line this often keeps a quiet stream open and finds closed clients.
KEEPALIVE_S = 10.0
#: Each picture is followed by the next part's boundary and headers: a browser shows a
#: part only once the next one has begun.
PART = b"--frame\r\nContent-Type: image/jpeg\r\n\r\n"

#: Where the app keeps its :class:`~webui.guard.StreamSlots` (``app.extensions``).
SLOTS = "tablesight.streams"

streams = Blueprint("streams", __name__)


@streams.get("/api/stream")
def stream() -> Response:
    first = since()
    return _held(
        _stream(game(), first),
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


@streams.get("/video.mjpg")
def video() -> Response:
    return _held(
        _mjpeg(game()),
        mimetype="multipart/x-mixed-replace; boundary=frame",
        headers={"Cache-Control": "no-store"},
    )


def _held(body: Iterator[Any], **options: Any) -> Response:
    """A stream's response, holding one of the client's stream slots until it ends (a 503
    when there is none left: :class:`~webui.guard.StreamSlots`)."""
    slots: StreamSlots = current_app.extensions[SLOTS]
    give_back = slots.take(request.remote_addr or "")
    try:
        response = Response(body, **options)
    except BaseException:
        give_back()
        raise
    response.call_on_close(give_back)
    return response


def _sse(kind: str, data: Any, event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {dumps(data, separators=(',', ':'))}\n\n"


@runtime_checkable
class Posed(Protocol):
    """A game that has its models' poses frame by frame (the live game; a replay has not)."""

    def poses(self) -> dict[str, Any] | None:
        """The newest frame's light message (:meth:`vision.game.Game.poses`)."""

    def wait_for_news(self, version: int, frame: tuple[int, int] | None, timeout: float) -> int:
        """Until the version or the newest poses move on (``Game.wait_for_news``)."""


def _stream(shown: Refereed, next_id: int) -> Iterator[str]:
    """State (at most ``STATE_HZ`` a second) and every event from ``next_id``, for one
    page, and each frame's poses as it comes; a ``reset`` when the game starts over (its
    event ids with it)."""
    seen_version, generation = -1, shown.generation
    last_state = 0.0
    owed = False  # a change not yet sent as state
    posed = shown if isinstance(shown, Posed) else None
    sent_frame: tuple[int, int] | None = None
    sent: dict[str, list[Any]] = {}  # each model's entry as this stream last sent it
    yield "retry: 1000\n\n"
    while not shown.closing:
        due = 1.0 / STATE_HZ - (time.monotonic() - last_state)
        timeout = max(0.0, due) if owed else KEEPALIVE_S
        if posed is not None:
            version = posed.wait_for_news(seen_version, sent_frame, timeout)
        else:
            version = shown.wait_for_change(seen_version, timeout)
        if version != seen_version:
            # what is read from here on is at least as new as this version
            owed, seen_version = True, version
        if shown.generation != generation:
            generation, next_id, sent = shown.generation, 0, {}
            yield _sse("reset", {"generation": generation})
        poses = posed.poses() if posed is not None else None
        if poses is not None and (poses["generation"], poses["frame"]) != sent_frame:
            sent_frame = (poses["generation"], poses["frame"])
            changed = [m for m in poses["models"] if sent.get(m[0]) != m]
            sent.update((m[0], m) for m in changed)
            yield _sse("poses", {**poses, "models": changed})
        elif not owed:
            yield ": keepalive\n\n"
            continue
        if not owed or time.monotonic() - last_state < 1.0 / STATE_HZ:
            continue  # the state waits for its turn; the poses did not
        for e in shown.events_since(next_id):
            next_id = e.id + 1
            yield _sse("event", e.to_dict(), e.id)
        last_state, owed = time.monotonic(), False
        yield _sse("state", shown.state())


def _mjpeg(shown: Refereed) -> Iterator[bytes]:
    """The newest frame each time there is a new one; frames a slow client misses are
    skipped, never queued."""
    sent, seen_version = -1, -1
    yield PART
    while not shown.closing:
        seen_version = shown.wait_for_change(seen_version, KEEPALIVE_S)
        picture = shown.jpeg()
        if picture is None or picture[0] == sent:
            continue
        sent, data = picture
        yield data + b"\r\n" + PART
