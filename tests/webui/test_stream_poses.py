"""The stream's ``poses`` message comes with every frame, each its own frame's, and is
never held up behind the full state: while a state is being worked out (held here until
the test lets it go), the frames processed meanwhile still have their poses sent.

The game: ``played_game`` (the ganger moved from (10, 10) to (17, 10), frames 0-23); the
frames processed here put it back and forth between the two, so that each frame's
message holds the ganger's new place. The stream is read through Flask's test client, on a
thread of its own, into a queue.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tablesight.vision.sources import Frame
from tablesight.webui.app import create_app

#: Long enough for any machine to send a message; a stream that never sends it fails.
WAIT_S = 20.0


class Reader:
    """The messages of one ``/api/stream``, parsed, as they come: ``(kind, data)``."""

    def __init__(self, game: Any) -> None:
        response = create_app(game).test_client().get("/api/stream", buffered=False)
        assert response.mimetype == "text/event-stream"
        self._response = response
        self.messages: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._thread = threading.Thread(target=self._read, args=(response.response,))
        self._thread.start()

    def _read(self, chunks: Iterator[bytes | str]) -> None:
        for chunk in chunks:
            text = chunk.decode() if isinstance(chunk, bytes) else chunk
            for block in text.split("\n\n"):
                lines = [line for line in block.split("\n") if not line.startswith(":")]
                fields = dict(line.split(": ", 1) for line in lines if ": " in line)
                if "event" in fields:
                    self.messages.put((fields["event"], json.loads(fields["data"])))

    def next(self, kind: str, skipped: list[str] | None = None) -> Any:
        """The next message of ``kind`` (those of other kinds before it noted in
        ``skipped``)."""
        while True:
            try:
                got, data = self.messages.get(timeout=WAIT_S)
            except queue.Empty:
                pytest.fail(f"no {kind} message came")
            if got == kind:
                return data
            if skipped is not None:
                skipped.append(got)

    def close(self, game: Any) -> None:
        game.stop()  # the stream ends
        self._thread.join(timeout=WAIT_S)
        self._response.close()
        assert not self._thread.is_alive()


def ganger(poses: dict[str, Any]) -> list[Any]:
    return next(m for m in poses["models"] if m[0] == "ganger")


def test_every_frame_has_its_poses_message(played_game, footage, monkeypatch):
    monkeypatch.setattr("tablesight.webui.stream.STATE_HZ", 1 / 60)  # the first state only
    _, pics = footage
    reader = Reader(played_game)
    try:
        first = reader.next("poses")
        assert first["frame"] == 23 and len(first["models"]) == 2  # all models, at first
        assert reader.next("state")["live"]["frame"] == 23
        frames, gangers = [], []
        for k in range(24, 34):
            played_game.process(Frame(pics["start" if k % 2 == 0 else "moved"], k / 30, k))
            poses = reader.next("poses")
            frames.append(poses["frame"])
            gangers.append(round(ganger(poses)[1]))
        assert frames == list(range(24, 34))
        assert gangers == [10, 17] * 5
    finally:
        reader.close(played_game)
    # one message a frame, no more
    assert [kind for kind, _ in list(reader.messages.queue)] == []


def test_poses_go_on_while_the_full_state_is_worked_out(played_game, footage, monkeypatch):
    _, pics = footage
    let_go, asked = threading.Event(), threading.Event()
    cache = played_game._state  # the game's one cache of its state
    worked_out = cache.get

    def held_get(key: Any, take: Any) -> Any:
        asked.set()
        assert let_go.wait(WAIT_S)
        return worked_out(key, take)

    monkeypatch.setattr(cache, "get", held_get)
    reader = Reader(played_game)
    try:
        assert reader.next("poses")["frame"] == 23
        assert asked.wait(WAIT_S)  # the stream's state is being worked out ...
        skipped: list[str] = []
        for k in range(24, 29):  # ... and each frame's poses still go out
            played_game.process(Frame(pics["start" if k % 2 == 0 else "moved"], k / 30, k))
            poses = reader.next("poses", skipped)
            assert poses["frame"] == k
            assert round(ganger(poses)[1]) == (10 if k % 2 == 0 else 17)
        assert skipped == []  # no state, no event before the state is ready
        let_go.set()
        skipped = []
        state = reader.next("state", skipped)
        # worked out once let go, so of the newest frame; the events it holds come before
        # it (the phase started, the move, the violation, and any the frames here made)
        assert state["live"]["frame"] == 28
        assert skipped.count("event") == state["live"]["events"] >= 3
    finally:
        let_go.set()
        reader.close(played_game)
