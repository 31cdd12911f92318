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

Nor does a stream wait for the full state: working one out takes tens of milliseconds
(over a hundred when the machine is busy), so the game works it out on a thread of its own
(``newest_state``: the game's one cache of its state,
:class:`~tablesight.match.viewstate.StateCache`), once per version, and it is serialised
once for every stream of the game, while each stream goes on sending the frames' poses as
they come; the state goes out when it is ready, with the events it holds before it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol, runtime_checkable

from flask import Blueprint, Response, current_app, request

from tablesight.webui.api import since
from tablesight.webui.guard import StreamSlots
from tablesight.webui.jsonio import dumps
from tablesight.webui.protocol import Refereed, game

#: Most state messages per second on one stream (events go with the next one).
STATE_HZ = 5.0
#: A comment line this often keeps a quiet stream open and finds closed clients.
KEEPALIVE_S = 10.0
#: While the state it is due is worked out, a stream looks for it this often (a frame's
#: poses wake it sooner).
STATE_POLL_S = 0.01
#: Each picture is followed by the next part's boundary and headers: a browser shows a
#: part only once the next one has begun.
PART = b"--frame\r\nContent-Type: image/jpeg\r\n\r\n"

#: Where the app keeps its :class:`~tablesight.webui.guard.StreamSlots` (``app.extensions``).
SLOTS = "tablesight.streams"

streams = Blueprint("streams", __name__)


@streams.get("/api/stream")
def stream() -> Response:
    first = since()
    return held(
        _stream(game(), first),
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


@streams.get("/video.mjpg")
def video() -> Response:
    return held(
        _mjpeg(game()),
        mimetype="multipart/x-mixed-replace; boundary=frame",
        headers={"Cache-Control": "no-store"},
    )


def held(body: Iterator[Any], **options: Any) -> Response:
    """A stream's response, holding one of the client's stream slots until it ends (a 503
    when there is none left: :class:`~tablesight.webui.guard.StreamSlots`)."""
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
        """The newest frame's light message (:meth:`tablesight.match.game.Game.poses`)."""

    def wait_for_news(self, version: int, frame: tuple[int, int] | None, timeout: float) -> int:
        """Until the version or the newest poses move on (``Game.wait_for_news``)."""


def _state_message(state: dict[str, Any]) -> str:
    """A full state as its SSE message (made once per state, for every stream)."""
    return _sse("state", state)


def _stream(shown: Refereed, next_id: int) -> Iterator[str]:
    """State (at most ``STATE_HZ`` a second) and every event from ``next_id``, for one
    page, and each frame's poses as it comes; a ``reset`` when the game starts over (its
    event ids with it)."""
    seen_version, generation = -1, shown.generation
    last_state = 0.0
    owed = False  # a change not yet sent as state
    wanted: int | None = None  # the version the state due must be at least as new as
    posed = shown if isinstance(shown, Posed) else None
    sent_frame: tuple[int, int] | None = None
    sent: dict[str, list[Any]] = {}  # each model's entry as this stream last sent it
    yield "retry: 1000\n\n"
    while not shown.closing:
        due = 1.0 / STATE_HZ - (time.monotonic() - last_state)
        if not owed:
            timeout = KEEPALIVE_S
        elif wanted is None:
            timeout = max(0.0, due)
        else:
            timeout = STATE_POLL_S  # its state is being worked out
        if posed is not None:
            version = posed.wait_for_news(seen_version, sent_frame, timeout)
        else:
            version = shown.wait_for_change(seen_version, timeout)
        if version != seen_version:
            # what is read from here on is at least as new as this version
            owed, seen_version = True, version
        if shown.generation != generation:
            generation, next_id, sent, wanted = shown.generation, 0, {}, None
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
        if wanted is None:
            wanted = seen_version  # newer changes go with the next state
        worked = shown.newest_state(generation, wanted)
        if worked is None:
            continue  # being worked out: the poses go on meanwhile
        made = worked.key[1]  # the version it was worked out at
        # how many of the game's events it holds (None: not said)
        events: int | None = (worked.state.get("live") or {}).get("events")
        # the events the state holds, before it (those after it go with the next one)
        if events is None or events > next_id:
            for e in shown.events_since(next_id):
                if events is not None and e.id >= events:
                    break
                next_id = e.id + 1
                yield _sse("event", e.to_dict(), e.id)
        # what it holds needs no other state; what came after it does
        seen_version = max(seen_version, made)
        last_state, owed, wanted = time.monotonic(), made < seen_version, None
        yield worked.text(_state_message)


def _mjpeg(shown: Refereed) -> Iterator[bytes]:
    """The game's newest frame each time there is a new one."""
    return newest_pictures(
        lambda: shown.closing, lambda seen: shown.wait_for_change(seen, KEEPALIVE_S), shown.jpeg
    )


def newest_pictures(
    closing: Callable[[], bool],
    wait: Callable[[int], int],
    picture: Callable[[], tuple[int, bytes] | None],
    first: int = -1,
) -> Iterator[bytes]:
    """A multipart JPEG stream: ``picture()`` (its number and bytes) each time ``wait``
    (given the last change seen, from ``first``, returning the newest) says something
    changed, until ``closing()``; pictures a slow client misses are skipped, never
    queued."""
    sent, seen = first, first
    yield PART
    while not closing():
        seen = wait(seen)
        newest = picture()
        if newest is None or newest[0] == sent:
            continue
        sent, data = newest
        yield data + b"\r\n" + PART
