"""``tablesight demo`` left running: every loop of its clip is refereed as the first was.

The demo plays the Necromunda sample clip (36 s) over and over, each loop a new game with
the scripted session (``samples/necromunda/session.toml``). Here it plays three times as
fast as real time, watched through the page's own stream (``/api/stream``) for three whole
loops: each loop must raise the same flags (kinds, rules, models, measured values), and
the phase the page shows at any moment must be the one the script gives for that time of
the game.
"""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import threading
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "necromunda"
LOOPS = 3
SPEED = 3.0
#: How far from a scripted step's time a state may still show the phase before it (the
#: page's state is sampled at most five times a second, so it may lag a few frames).
EDGE_S = 0.35
FLAGS = ("violation", "advisory", "close_call")


def _sse(response: http.client.HTTPResponse) -> Iterator[tuple[str, Any]]:
    kind, data = "", ""
    for raw in response:
        line = raw.decode().rstrip("\n")
        if not line:
            if kind:
                yield kind, json.loads(data)
            kind, data = "", ""
        elif line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            data = line[6:]


def _expected_phase(script: list[dict[str, Any]], t: float) -> tuple[int, str, bool] | None:
    """(turn, side, in a phase) the script gives at time ``t`` of the game; ``None``
    within EDGE_S of a step."""
    turn, side, in_phase = 1, None, False
    for step in script:
        if abs(t - step["t"]) < EDGE_S and step.get("phase"):
            return None
        if step["t"] <= t:
            turn = step.get("turn", turn)
            side = step.get("side", side)
            if step.get("phase") == "movement":
                in_phase = True
            elif step.get("phase") == "end":
                in_phase = False
    return turn, side, in_phase  # type: ignore[return-value]


@pytest.mark.slow
def test_the_demo_referees_every_loop_alike(tablesight_command: list[str]) -> None:
    script = tomllib.loads((SAMPLE / "session.toml").read_text())["step"]
    proc = subprocess.Popen(
        [*tablesight_command, "demo", "--no-browser", "--port", "0", "--speed", str(SPEED)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    flags: dict[int, list[dict[str, Any]]] = {}
    states: list[tuple[int, float, int, str, bool]] = []
    errors: list[str] = []
    reader: threading.Thread | None = None
    try:
        assert proc.stderr is not None
        url = None
        for line in proc.stderr:
            errors.append(line)
            found = re.search(r"table view: http://127\.0\.0\.1:(\d+)/", line)
            if found:
                url = int(found.group(1))
                break
        assert url is not None, "".join(errors)
        reader = threading.Thread(target=lambda: errors.extend(proc.stderr or ()), daemon=True)
        reader.start()

        conn = http.client.HTTPConnection("127.0.0.1", url, timeout=30)
        conn.request("GET", "/api/stream")
        response = conn.getresponse()
        assert response.status == 200
        generation = None
        deadline = time.monotonic() + 36.0 * (LOOPS + 1) / SPEED + 120
        for kind, data in _sse(response):
            assert time.monotonic() < deadline, "the demo did not play three loops in time"
            if kind == "reset":
                generation = data["generation"]
            elif kind == "state":
                live, session = data["live"], data["session"]
                generation = live["generation"]
                if live["t"] is not None:
                    states.append(
                        (
                            generation,
                            live["t"],
                            session["turn"],
                            session["side"],
                            session["in_phase"],
                        )
                    )
            elif kind == "event" and data["kind"] in FLAGS and generation is not None:
                flags.setdefault(generation, []).append(data)
            if generation is not None and generation >= LOOPS:
                break
        conn.close()
    finally:
        proc.terminate()
        code = proc.wait(timeout=30)
        if reader is not None:
            reader.join(timeout=10)  # the pipe ends with the program
        if proc.stderr is not None:
            proc.stderr.close()
    assert code == 0, "".join(errors)
    assert not any("[ WARN" in line for line in errors)

    def key(e: dict[str, Any]) -> tuple[str, str | None, str | None]:
        return (e["kind"], e["rule"], e["model"])

    per_loop = [flags.get(g, []) for g in range(LOOPS)]
    print("flags per loop:", [len(f) for f in per_loop])
    for g, found in enumerate(per_loop):
        print(f"loop {g}:", [(e["t"], *key(e), e["measured"]) for e in found])
    first = per_loop[0]
    assert len(first) >= 4, first
    for found in per_loop[1:]:
        assert [key(e) for e in found] == [key(e) for e in first]
        for a, b in zip(found, first, strict=True):
            assert abs(a["measured"] - b["measured"]) <= 0.02, (a, b)
            assert abs(a["t"] - b["t"]) <= 0.5, (a, b)

    checked = 0
    for g, t, turn, side, in_phase in states:
        if g >= LOOPS:
            continue
        expected = _expected_phase(script, t)
        if expected is None:
            continue
        assert (turn, side, in_phase) == expected, (g, t, turn, side, in_phase)
        checked += 1
    by_loop = [sum(1 for s in states if s[0] == g) for g in range(LOOPS)]
    print("states checked:", checked, "per loop:", by_loop)
    assert min(by_loop) >= 20
