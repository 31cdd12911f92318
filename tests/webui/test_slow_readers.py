"""Viewers that open the picture stream and never read it cost the table a bounded amount
of memory: ``tablesight run`` refereeing the Necromunda clip, and 16 clients (the most one
address may hold) asking for ``/video.mjpg`` with their receive buffers shrunk, reading
nothing. Its memory is read from /proc, against a quiet start."""

from __future__ import annotations

import re
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

#: The slow clients: as many streams as one address may hold.
CLIENTS = 16
#: What each may cost at most (MiB): the 256 KiB waitress queues before the stream waits,
#: the picture being written (a 1080p picture is about 0.3 MiB) and its thread, with room;
#: with waitress's 16 MiB watermark it was about 6 MiB each (96 MiB for 16).
EACH_MIB = 2.5


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    raise AssertionError(f"no VmRSS for {pid}")


def test_clients_that_never_read_the_pictures_cost_bounded_memory(
    tablesight_command: list[str], sample_options: Callable[[str], list[str]]
) -> None:
    clip = Path(__file__).resolve().parents[2] / "samples" / "necromunda" / "match.mp4"
    options = [*sample_options("necromunda"), "--port", "0"]
    run = subprocess.Popen(
        [*tablesight_command, "run", "--source", str(clip), *options],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert run.stderr is not None
    clients: list[socket.socket] = []
    try:
        port = 0
        for line in run.stderr:
            found = re.search(r"table view: http://127\.0\.0\.1:(\d+)/", line)
            if found:
                port = int(found.group(1))
                break
        assert port, "run did not say where its table view is"
        time.sleep(3.0)  # the game under way
        quiet = _rss_mib(run.pid)
        for _ in range(CLIENTS):
            client = socket.socket()
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            client.connect(("127.0.0.1", port))
            client.sendall(f"GET /video.mjpg HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            clients.append(client)
        grown = []
        for _ in range(5):  # 25 s: 250 pictures, about 75 MB offered to each
            time.sleep(5.0)
            assert run.poll() is None, "run ended"
            grown.append(_rss_mib(run.pid) - quiet)
        print(f"\nmemory grown with {CLIENTS} clients not reading (MiB): {grown}")
        assert max(grown) <= CLIENTS * EACH_MIB, grown
    finally:
        for client in clients:
            client.close()
        run.terminate()
        run.wait(timeout=30)
        run.stderr.close()
