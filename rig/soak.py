"""The demo left running, as a streamer leaves it: ``tablesight demo`` with viewers on its
event stream and picture stream, its memory read every interval. Memory that grows at
first (caches, the first loops) and then stays flat is a plateau; one that keeps growing
is a leak.

    .venv/bin/tablesight bench soak --minutes 60
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: The demo as the soak starts it.
DEMO = [sys.executable, "-m", "tablesight", "demo", "--no-browser", "--port", "0"]
#: Where the demo says its table view is.
DEMO_URL = re.compile(r"table view: (http://127\.0\.0\.1:\d+/)")


def rss_mib(pid: int) -> float:
    """The process's resident memory (MiB), from /proc."""
    return _status(pid, "VmRSS") / 1024.0


def _status(pid: int, key: str) -> int:
    """A number from /proc/PID/status (kB for sizes)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    raise ValueError(f"no {key} for process {pid}")


def handles(pid: int) -> tuple[int, int]:
    """The process's threads and open file descriptors (sockets, files, pipes)."""
    return _status(pid, "Threads"), len(list(Path(f"/proc/{pid}/fd").iterdir()))


@dataclass
class Soak:
    """Minutes since the start and the demo's memory then (MiB), and what the viewers read."""

    samples: list[tuple[float, float]] = field(default_factory=list)
    read_bytes: list[int] = field(default_factory=list)
    #: Threads and open file descriptors at each reading.
    handles: list[tuple[int, int]] = field(default_factory=list)

    def report(self, warm_up_min: float) -> str:
        rows = ["| minutes | memory (MiB) | threads | open files |", "|---|---|---|---|"]
        rows += [
            f"| {m:.1f} | {mib:.0f} | {t} | {f} |"
            for (m, mib), (t, f) in zip(self.samples, self.handles, strict=True)
        ]
        after = [(m, mib) for m, mib in self.samples if m >= warm_up_min]
        if len(after) >= 3:
            xs, ys = np.array(after).T
            slope = float(np.polyfit(xs, ys, 1)[0]) * 60.0
            quarters = [
                float(np.median(ys[(xs >= lo) & (xs < lo + 15.0)]))
                for lo in np.arange(warm_up_min, xs.max(), 15.0)
                if ((xs >= lo) & (xs < lo + 15.0)).any()
            ]
            rows.append(
                f"\nafter {warm_up_min:g} min of warm-up: {ys.min():.0f}-{ys.max():.0f} MiB, "
                f"median {np.median(ys):.0f}; the median of each quarter hour "
                + ", ".join(f"{q:.0f}" for q in quarters)
                + f" MiB; fitted {slope:+.0f} MiB an hour; viewers read "
                f"{sum(self.read_bytes) / 1e6:.0f} MB; threads "
                f"{min(t for t, _ in self.handles)}-{max(t for t, _ in self.handles)}, "
                f"open files {min(f for _, f in self.handles)}-"
                f"{max(f for _, f in self.handles)}"
            )
        return "\n".join(rows)


def _viewer(url: str, stop: threading.Event, read: list[int], k: int) -> None:
    """A client reading a stream to its end, or until ``stop``; reconnects if cut off."""
    while not stop.is_set():
        try:
            with urllib.request.urlopen(url, timeout=30) as answer:
                while not stop.is_set():
                    chunk = answer.read(65536)
                    if not chunk:
                        break
                    read[k] += len(chunk)
        except OSError:
            time.sleep(1.0)


def run(
    minutes: float,
    every_s: float = 60.0,
    viewers: int = 2,
    say: Callable[[str], None] = print,
    speed: float = 1.0,
) -> Soak:
    """The demo for ``minutes`` (its clip played ``speed`` times as fast: more games and
    pictures a minute), with ``viewers`` clients on ``/api/stream`` and as many on
    ``/video.mjpg``, its memory read every ``every_s``."""
    demo = subprocess.Popen(
        [*DEMO, "--speed", f"{speed:g}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert demo.stderr is not None
    stop = threading.Event()
    soak = Soak(read_bytes=[0] * (2 * viewers))
    threads: list[threading.Thread] = []
    try:
        url = ""
        for line in demo.stderr:
            found = DEMO_URL.search(line)
            if found:
                url = found.group(1)
                break
        if not url:
            raise RuntimeError("the demo did not start")
        threading.Thread(target=lambda: [None for _ in demo.stderr], daemon=True).start()
        for k in range(2 * viewers):
            path = "api/stream" if k < viewers else "video.mjpg"
            t = threading.Thread(
                target=_viewer, args=(url + path, stop, soak.read_bytes, k), daemon=True
            )
            t.start()
            threads.append(t)
        start = time.monotonic()
        while True:
            elapsed = (time.monotonic() - start) / 60.0
            mib = rss_mib(demo.pid)
            soak.samples.append((elapsed, mib))
            soak.handles.append(handles(demo.pid))
            threads, files = soak.handles[-1]
            say(f"{elapsed:5.1f} min: {mib:.0f} MiB, {threads} threads, {files} open files")
            if elapsed >= minutes or demo.poll() is not None:
                break
            time.sleep(every_s)
    finally:
        stop.set()
        demo.terminate()
        demo.wait(timeout=30)
    return soak
