"""The hub under a hall's load: many simulated tables publishing recorded event streams
into one real broker, one ``tablesight hub`` reading them, and a page's stream watched.

Each simulated table replays what the referee really said about one of the sample matches
(``tablesight analyze --json`` on the clip with its script, recorded once), faster than
real time, over and over (each pass a new game), publishing exactly what ``run --broker``
publishes (``tablesight.tournament.messages``): its retained status and flags, and every event
with the wall-clock time it was sent. Measured:

* the delay from an event's publication to the moment the hub's page stream
  (``/api/stream``) first shows it, beside the same events' delay to a bare MQTT
  subscriber on the same broker (the baseline: what the broker and this machine cost);
* every event shown once (the hub's count against what was published);
* the hub process's resident memory, sampled every ``sample_s``.

::

    result = run(tables=50, speed=10.0, minutes=10.0)
    print(report(result))
"""

from __future__ import annotations

import heapq
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

from tablesight.rig.mosquitto import Mosquitto
from tablesight.tournament import messages
from tablesight.tournament.link import BrokerLink

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
GAMES = ("necromunda", "trench-crusade", "cosmic-combat", "cosmic-combat-revised", "battlestations")
TITLES = {
    "necromunda": "Necromunda",
    "trench-crusade": "Trench Crusade",
    "cosmic-combat": "Cosmic Combat",
    "cosmic-combat-revised": "Cosmic Combat (revised)",
    "battlestations": "Battlestations",
}
FLAG_KINDS = ("violation", "advisory", "close_call")
#: Seconds between a table's game and its next.
NEXT_GAME_S = 1.0
HUB_URL = re.compile(r"the page: (http://127\.0\.0\.1:\d+/)")


def command() -> list[str]:
    return [sys.executable, "-m", "tablesight"]


def record_stream(game: str, cache: Path) -> list[dict[str, Any]]:
    """The events the referee reports on the sample match of ``game``, as ``analyze
    --json`` prints them (recorded once into ``cache``)."""
    path = cache / f"{game}.json"
    if not path.exists():
        folder = SAMPLES / game
        args = [*command(), "analyze", str(folder / "match.mp4"), "--game", game, "--json"]
        for name in ("table", "roster", "terrain", "camera"):
            if (folder / f"{name}.toml").exists():
                args += [f"--{name}", str(folder / f"{name}.toml")]
        args += ["--script", str(folder / "session.toml")]
        out = subprocess.run(args, capture_output=True, text=True, check=True)
        path.write_text(out.stdout)
    events: list[dict[str, Any]] = json.loads(path.read_text())["events"]
    return events


@dataclass
class _Table:
    """One simulated table: a paho client and the state of the game it is replaying."""

    name: str
    game: str
    events: list[dict[str, Any]]
    client: mqtt.Client
    game_id: str = ""
    passes: int = 0
    turn: int = 1
    phase: str = "between phases"
    side: str | None = None
    flags: dict[tuple[str, str, str | None], dict[str, Any]] = field(default_factory=dict)
    published: int = 0


class Hall:
    """``tables`` simulated tables on one broker, replaying their streams at ``speed``."""

    def __init__(
        self, link: BrokerLink, streams: dict[str, list[dict[str, Any]]], tables: int, speed: float
    ) -> None:
        self.link = link
        self.speed = speed
        self.tables: list[_Table] = []
        #: (table, game_id, event id) -> sent_ms, of every event published.
        self.sent: dict[tuple[str, str, int], float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        games = list(streams)
        for k in range(tables):
            game = games[k % len(games)]
            name = f"table-{k + 1:03d}"
            client = link.client(f"tablesight-table-{name}")
            will = {"table": name, "online": False, "reason": "connection lost"}
            client.will_set(
                messages.topic(name, messages.STATUS), messages.encode(will), qos=1, retain=True
            )
            self.tables.append(_Table(name, game, streams[game], client))
        self._thread = threading.Thread(target=self._play, name="hall", daemon=True)

    def start(self) -> Hall:
        for table in self.tables:
            self.link.connect(table.client)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        for table in self.tables:
            table.client.disconnect()
            table.client.loop_stop()

    @property
    def published(self) -> int:
        return sum(t.published for t in self.tables)

    def _play(self) -> None:
        """One thread for every table: each event sent at its time (over ``speed``), each
        table's first pass started a little after the one before (tables are not in step)."""
        began = time.monotonic()
        stagger = 3.0 / max(1, len(self.tables))
        queue: list[tuple[float, int, int]] = []  # (due, table, event index)
        for k, table in enumerate(self.tables):
            self._new_game(table)
            heapq.heappush(queue, (began + k * stagger, k, 0))
        while queue and not self._stop.is_set():
            due, k, i = heapq.heappop(queue)
            self._stop.wait(max(0.0, due - time.monotonic()))
            table = self.tables[k]
            if i < 0:
                self._new_game(table)
                heapq.heappush(queue, (due, k, 0))
                continue
            self._publish(table, table.events[i])
            if i + 1 < len(table.events):
                gap = (table.events[i + 1]["t"] - table.events[i]["t"]) / self.speed
                heapq.heappush(queue, (due + gap, k, i + 1))
            else:  # the next pass: a new game, after a pause (the page shows the last
                # events of a game before the next game replaces it)
                heapq.heappush(queue, (due + NEXT_GAME_S, k, -1))

    def _new_game(self, table: _Table) -> None:
        table.passes += 1
        table.game_id = f"{uuid.uuid4().hex[:8]}-{table.passes}"
        table.turn, table.phase, table.side, table.flags = 1, "between phases", None, {}
        self._status(table)
        self._flags(table)

    def _status(self, table: _Table) -> None:
        status = {
            "table": table.name,
            "online": True,
            "since": time.time(),
            "game": table.game,
            "title": TITLES[table.game],
            "game_id": table.game_id,
            "turn": table.turn,
            "phase": table.phase,
            "side": table.side,
            "sides": [],
            "state": "playing",
            "url": None,
            "events": table.published,
        }
        topic = messages.topic(table.name, messages.STATUS)
        table.client.publish(topic, messages.encode(status), qos=1, retain=True)

    def _flags(self, table: _Table) -> None:
        payload = {
            "table": table.name,
            "game_id": table.game_id,
            "flags": list(table.flags.values()),
        }
        topic = messages.topic(table.name, messages.FLAGS)
        table.client.publish(topic, messages.encode(payload), qos=1, retain=True)

    def _publish(self, table: _Table, event: dict[str, Any]) -> None:
        sent_ms = time.time() * 1000.0
        message = {
            "table": table.name,
            "game_id": table.game_id,
            "sent_ms": sent_ms,
            "event": event,
        }
        with self._lock:
            self.sent[(table.name, table.game_id, int(event["id"]))] = sent_ms
        topic = messages.topic(table.name, messages.EVENTS)
        table.client.publish(topic, messages.encode(message), qos=1)
        table.published += 1
        kind, key = event["kind"], (event["rule"] or "", event["model"] or "", event["other"])
        if kind == "phase_started":
            table.phase = "movement"
            self._status(table)
        elif kind == "phase_ended":
            table.phase = "between phases"
            self._status(table)
        elif kind in FLAG_KINDS:
            table.flags[key] = {
                **{k: event[k] for k in ("id", "kind", "rule", "model", "other", "message")},
                **{k: event[k] for k in ("measured", "limit", "uncertainty")},
                "label": f"{event['rule']}: {event['measured']} / {event['limit']}",
                "headline": event["message"],
                "decision": None,
            }
            self._flags(table)
        elif kind == "resolved" and table.flags.pop(key, None) is not None:
            self._flags(table)


class Baseline:
    """A bare MQTT subscriber to every table's events: the delay the broker alone adds."""

    def __init__(self, link: BrokerLink) -> None:
        self.delays_ms: list[float] = []
        self.client = link.client(f"tablesight-baseline-{os.getpid()}")
        self.client.on_connect = lambda c, *_: c.subscribe(f"{messages.ROOT}/+/events", qos=1)
        self.client.on_message = self._message
        link.connect(self.client)

    def _message(self, _client: mqtt.Client, _data: object, message: mqtt.MQTTMessage) -> None:
        now = time.time() * 1000.0
        sent = json.loads(message.payload).get("sent_ms")
        if sent is not None:
            self.delays_ms.append(now - float(sent))

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def sse(url: str, stop: threading.Event) -> Iterator[tuple[float, dict[str, Any]]]:
    """Each JSON message of a server-sent event stream, with the wall time it arrived."""
    with urllib.request.urlopen(url, timeout=30) as response:
        data: list[str] = []
        for raw in response:
            if stop.is_set():
                return
            line = raw.decode("utf-8").rstrip("\r\n")
            if line.startswith("data:"):
                data.append(line[5:].lstrip())
            elif not line and data:
                arrived = time.time() * 1000.0
                try:
                    message = json.loads("\n".join(data))
                except json.JSONDecodeError:
                    message = None
                data = []
                if isinstance(message, dict):
                    yield arrived, message


class PageWatcher:
    """The hub's page stream, read as the page reads it: when each event is first shown."""

    def __init__(self, url: str, hall: Hall) -> None:
        self.url = url
        self.hall = hall
        self.delays_ms: list[float] = []
        #: Events of a game that a table's next game replaced on the page before a page
        #: update showed them (the page shows a table's current game).
        self.superseded = 0
        self.messages = 0
        self._shown: dict[str, tuple[str, int]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name="page", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            try:
                for arrived, message in sse(self.url + "api/stream", self._stop):
                    self._message(arrived, message)
            except OSError:
                time.sleep(0.2)

    def _message(self, arrived: float, message: dict[str, Any]) -> None:
        tables = message.get("tables")
        if not isinstance(tables, list):
            return
        self.messages += 1
        for table in tables:
            last = table.get("last_event") or {}
            game_id, event_id = last.get("game_id"), last.get("id")
            if game_id is None or event_id is None:
                continue
            name = table["name"]
            before_game, before_id = self._shown.get(name, ("", -1))
            first = before_id + 1 if before_game == game_id else 0
            if before_game and before_game != game_id:
                k = before_id + 1
                while (name, before_game, k) in self.hall.sent:
                    self.superseded += 1
                    k += 1
            for k in range(first, int(event_id) + 1):
                sent = self.hall.sent.get((name, game_id, k))
                if sent is not None:
                    self.delays_ms.append(arrived - sent)
            self._shown[name] = (game_id, int(event_id))

    def close(self) -> None:
        self._stop.set()


def rss_mb(pid: int) -> float:
    """A process's resident memory (``VmRSS``), MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


@dataclass
class Result:
    tables: int
    speed: float
    seconds: float
    published: int
    #: Events the hub counted, over every table's current game, and the sum of the same
    #: tables' events published in those games.
    counted: int
    expected: int
    page_delays_ms: list[float]
    broker_delays_ms: list[float]
    page_messages: int
    #: Events a table's next game replaced before a page update showed them.
    superseded: int
    #: (seconds since the start, hub RSS MB)
    memory: list[tuple[float, float]]


def run(
    tables: int = 50,
    speed: float = 10.0,
    minutes: float = 10.0,
    sample_s: float = 10.0,
    cache: Path | None = None,
    say: Any = print,
    games: tuple[str, ...] = GAMES,
) -> Result:
    """The load: a broker, a hub, ``tables`` simulated tables for ``minutes``."""
    with tempfile.TemporaryDirectory(prefix="hubload-") as tmp:
        folder = Path(tmp)
        cache = cache or folder
        cache.mkdir(parents=True, exist_ok=True)
        say(f"recording the sample matches' event streams ({len(games)} x about 6 s)")
        streams = {game: record_stream(game, cache) for game in games}
        with Mosquitto(folder / "broker") as broker:
            link = BrokerLink.parse(broker.url)
            hub = subprocess.Popen(
                [*command(), "hub", "--broker", broker.url, "--port", "0"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                url = _hub_url(hub)
                baseline = Baseline(link)
                hall = Hall(link, streams, tables, speed).start()
                watcher = PageWatcher(url, hall)
                began = time.monotonic()
                memory: list[tuple[float, float]] = []
                end = began + minutes * 60.0
                while time.monotonic() < end:
                    memory.append((round(time.monotonic() - began, 1), rss_mb(hub.pid)))
                    say(
                        f"  {memory[-1][0]:6.0f} s: {hall.published} events published, hub "
                        f"{memory[-1][1]:.1f} MB, {len(watcher.delays_ms)} shown on the page"
                    )
                    time.sleep(min(sample_s, max(0.0, end - time.monotonic())))
                hall.close()
                time.sleep(2.0)  # the last events reach the page
                seconds = time.monotonic() - began
                memory.append((round(seconds, 1), rss_mb(hub.pid)))
                watcher.close()
                baseline.close()
                counted, expected = _counts(url, hall)
                return Result(
                    tables,
                    speed,
                    seconds,
                    hall.published,
                    counted,
                    expected,
                    watcher.delays_ms,
                    baseline.delays_ms,
                    watcher.messages,
                    watcher.superseded,
                    memory,
                )
            finally:
                hub.terminate()
                try:
                    hub.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    hub.kill()
                    hub.wait()
                for thread in threading.enumerate():
                    if thread.name == "hub-stderr":
                        thread.join(timeout=5)
                if hub.stderr is not None:
                    hub.stderr.close()


def _hub_url(hub: subprocess.Popen[str], wait_s: float = 30.0) -> str:
    assert hub.stderr is not None
    end = time.monotonic() + wait_s
    lines = []
    for line in hub.stderr:
        lines.append(line)
        found = HUB_URL.search(line)
        if found:
            threading.Thread(target=_drain, args=(hub,), name="hub-stderr", daemon=True).start()
            return found.group(1)
        if time.monotonic() > end:
            break
    raise RuntimeError("tablesight hub printed no page address: " + "".join(lines))


def _drain(process: subprocess.Popen[str]) -> None:
    """Keep reading what the hub prints, so that it never blocks on a full pipe."""
    for _ in process.stderr or ():
        pass


def _counts(url: str, hall: Hall) -> tuple[int, int]:
    """The hub's event counts for every table's current game, and what was published in
    those games."""
    with urllib.request.urlopen(url + "api/tables", timeout=10) as response:
        listed = {t["name"]: t for t in json.loads(response.read())["tables"]}
    counted = expected = 0
    for table in hall.tables:
        shown = listed.get(table.name)
        if shown is None:
            continue
        game_id = (shown.get("last_event") or {}).get("game_id")
        counted += int(shown["events"])
        expected += sum(1 for (name, g, _) in hall.sent if name == table.name and g == game_id)
    return counted, expected


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(result: Result) -> str:
    page, broker = result.page_delays_ms, result.broker_delays_ms
    med_page, med_broker = (
        statistics.median(page or [float("nan")]),
        statistics.median(broker or [float("nan")]),
    )
    first = [mb for s, mb in result.memory if s >= 60.0][:1] or [result.memory[0][1]]
    minutes = [(s / 60.0, mb) for s, mb in result.memory if s >= 120.0]
    slope = _slope(minutes)
    lines = [
        f"{result.tables} tables at {result.speed:g}x for {result.seconds / 60:.1f} min: "
        f"{result.published} events published ({result.published / result.seconds:.0f}/s), "
        f"{result.page_messages} page updates",
        "| delay, publish to ... | events | median ms | p95 ms | max ms |",
        "|---|---|---|---|---|",
        f"| the hub's page stream | {len(page)} | {med_page:.0f} | "
        f"{_percentile(page, 0.95):.0f} | {max(page, default=float('nan')):.0f} |",
        f"| a bare MQTT subscriber (baseline) | {len(broker)} | {med_broker:.0f} | "
        f"{_percentile(broker, 0.95):.0f} | {max(broker, default=float('nan')):.0f} |",
        f"shown on the page: {len(page)} of {result.published}; replaced by the table's next "
        f"game before a page update: {result.superseded}",
        f"page / baseline, median: {med_page / med_broker:.1f}x"
        if med_broker > 0
        else "page / baseline: no baseline",
        f"counted by the hub: {result.counted} of the {result.expected} events published in "
        "the tables' current games",
        f"hub memory: {result.memory[0][1]:.1f} MB at the start, {first[0]:.1f} MB after a "
        f"minute, {result.memory[-1][1]:.1f} MB at the end; slope from minute 2: "
        f"{slope:+.2f} MB/min",
    ]
    return "\n".join(lines)


def _slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (minutes, MB)."""
    if len(points) < 2:
        return float("nan")
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in points) / den if den else float("nan")
