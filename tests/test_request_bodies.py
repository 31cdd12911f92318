"""A request's body over the apps' limit (64 KiB) is refused by the web server as it comes,
before any of it is stored: neither the temporary folder nor the server's memory grows by
more than a few MB when 100 MB are sent, with a Content-Length or chunked.

Every command serves through :class:`tablesight.webui.serve.Server` (run, demo, replay,
setup, hub); the set-up (``tablesight setup``, no camera needed) is started here as a user
starts it, its temporary folder (``TMPDIR``, where waitress spills big bodies) one of the
test's own, and watched from outside: its open files there (a spilled body is an unlinked
file, seen only through ``/proc/PID/fd``) and its peak memory (``VmHWM``)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tablesight.webui.jsonio import MAX_BODY
from tablesight.webui.serve import CONNECTION_LIMIT

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="watches the server through /proc"
)

#: What is sent: 100 MB.
BIG = 100_000_000
#: Sent a MiB at a time.
BLOCK = 1024 * 1024
#: How much the server may grow (its peak memory, its files in the temporary folder).
FEW_MB = 5 * 1024 * 1024

SETUP_URL = re.compile(r"set-up page: http://127\.0\.0\.1:(\d+)/")


@dataclass
class Served:
    process: subprocess.Popen[str]
    port: int
    temp: Path


@pytest.fixture
def setup_page(tmp_path: Path, tablesight_command: list[str]) -> Iterator[Served]:
    """``tablesight setup`` on a free port, its temporary folder ``tmp_path/temp``."""
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    command = [*tablesight_command, "setup", "--port", "0", "--folder", str(tmp_path)]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    drain: threading.Thread | None = None
    try:
        assert process.stderr is not None
        port = None
        for line in process.stderr:  # the first line says where the page is
            found = SETUP_URL.search(line)
            if found:
                port = int(found.group(1))
                break
        assert port is not None, "the set-up never said where its page is"
        drain = threading.Thread(target=process.stderr.read, daemon=True)  # kept drained
        drain.start()
        yield Served(process, port, temp)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if drain is not None:
            drain.join(timeout=10)
        if process.stderr is not None:
            process.stderr.close()


def peak_memory(pid: int) -> int:
    """The process's peak resident memory so far (bytes)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc status")


def stored_in(pid: int, folder: Path) -> int:
    """Bytes in the files ``pid`` has open in ``folder`` (deleted ones too) and in the
    files listed there."""
    total = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    fds = Path(f"/proc/{pid}/fd")
    for fd in fds.iterdir():
        try:
            if os.readlink(fd).startswith(str(folder)):
                total += os.stat(fd).st_size
        except OSError:  # closed meanwhile
            continue
    return total


class Watch:
    """The most the server stores in its temporary folder while a request is sent."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self.most = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._done.is_set():
            stored = stored_in(self.served.process.pid, self.served.temp)
            self.most = max(self.most, stored)
            self._done.wait(0.002)

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        self.most = max(self.most, stored_in(self.served.process.pid, self.served.temp))


def send(port: int, head: bytes, body: Iterable[bytes]) -> tuple[bytes, int]:
    """``head`` then ``body`` on a new connection, for as long as the server takes it; its
    answer (``b""``: it closed the connection without one) and the body's bytes sent."""
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(head)
        try:
            for block in body:
                s.sendall(block)
                sent += len(block)
        except OSError:  # the server closed the connection: refused
            pass
        answer = b""
        try:
            while b"\r\n" not in answer:
                got = s.recv(4096)
                if not got:
                    break
                answer += got
        except OSError:
            pass
    return answer, sent


def request(port: int, length: int | None) -> bytes:
    framing = f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    return (
        f"POST /api/setup/table HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\n{framing}\r\n\r\n"
    ).encode()


def plain(size: int) -> Iterator[bytes]:
    for start in range(0, size, BLOCK):
        yield b" " * min(BLOCK, size - start)


def chunked(size: int) -> Iterator[bytes]:
    for block in plain(size):
        yield f"{len(block):x}\r\n".encode() + block + b"\r\n"
    yield b"0\r\n\r\n"


def status(answer: bytes) -> int | None:
    found = re.match(rb"HTTP/1\.[01] (\d{3}) ", answer)
    return int(found.group(1)) if found else None


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_a_100_mb_body_is_refused_before_it_is_stored(setup_page: Served, framing: str) -> None:
    pid, port = setup_page.process.pid, setup_page.port
    before = peak_memory(pid)
    with Watch(setup_page) as watched:
        if framing == "content-length":
            answer, sent = send(port, request(port, BIG), plain(BIG))
        else:
            answer, sent = send(port, request(port, None), chunked(BIG))
    grown = peak_memory(pid) - before

    assert status(answer) in (413, None), answer[:200]  # refused, or the connection closed
    assert watched.most <= FEW_MB, f"{watched.most} bytes stored in the temporary folder"
    assert grown <= FEW_MB, f"the server's peak memory grew by {grown} bytes"
    assert setup_page.process.poll() is None  # still serving
    print(f"{framing}: sent {sent} bytes; stored {watched.most}; peak memory +{grown}")


def test_the_limit_is_the_apps_own(setup_page: Served) -> None:
    """A body of exactly 64 KiB reaches the app (it answers for itself: this route takes
    no such body); one byte more is refused by the server at once."""
    port = setup_page.port
    answer, _ = send(port, request(port, MAX_BODY), plain(MAX_BODY))
    assert status(answer) not in (413, None), answer[:200]
    assert b"application/json" in answer or status(answer) == 400, answer[:300]

    answer, sent = send(port, request(port, MAX_BODY + 1), [])
    assert status(answer) == 413, answer[:200]
    assert sent == 0


def test_connections_are_capped_at_a_few_times_the_streams() -> None:
    from tablesight.webui.guard import StreamLimits

    assert StreamLimits().total < CONNECTION_LIMIT <= 4 * StreamLimits().total
