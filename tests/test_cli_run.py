"""``run`` and ``demo`` as a person starts them: a port another program holds is one line
naming a free one to give instead (exit status 2, no traceback); ``run`` says what its
camera or stream gives in words (its picture size and codec), and where Python has no
``termios`` (Windows) it referees without key controls, saying so in one line."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

from tablesight.cli import NO_KEYS, _source_line

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "samples" / "necromunda"
#: Any free port for the table view.
PORT_0 = ("--port", "0")


# -- the port taken ----------------------------------------------------------------------


def _listening(port: int) -> socket.socket | None:
    """A socket listening on 127.0.0.1:``port`` (as another program's server), or ``None``
    when the port cannot be had."""
    taken = socket.socket()
    try:
        taken.bind(("127.0.0.1", port))
    except OSError:
        taken.close()
        return None
    taken.listen()
    return taken


@contextlib.contextmanager
def two_ports_taken() -> Iterator[int]:
    """Two neighbouring ports of 127.0.0.1 held by listening sockets; the first's number."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port >= 65000:
            continue
        first = _listening(port)
        second = _listening(port + 1) if first is not None else None
        if first is not None and second is not None:
            try:
                yield port
            finally:
                first.close()
                second.close()
            return
        for held in (first, second):
            if held is not None:
                held.close()
    pytest.fail("no two neighbouring free ports on 127.0.0.1")


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize("command", ["demo", "run"])
def test_a_port_another_program_holds_is_one_line_naming_a_free_one(
    command: str,
    tablesight: Callable[..., subprocess.CompletedProcess[str]],
    sample_options: Callable[[str], list[str]],
) -> None:
    if command == "demo":
        args = ["demo", "--no-browser"]
    else:
        args = ["run", "--source", str(SAMPLE / "match.mp4"), *sample_options("necromunda")]
    with two_ports_taken() as port:
        done = tablesight(*args, "--port", str(port))
        # the first port after the two taken that is free now (as the command looked)
        free = next(p for p in range(port + 2, port + 100) if _bindable(p))

    expected = (
        f"tablesight: --port: 127.0.0.1:{port} is taken (another program, or another "
        f"TableSight, listens there); give another, e.g. --port {free}"
    )
    if command == "demo":
        expected += f' (make demo ARGS="--port {free}")'
    assert _refused(done) == expected


def _refused(done: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused command said, checked: exit status 2, no traceback."""
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.slow
def test_run_on_a_taken_port_with_a_live_camera_ends_with_one_line_every_time(
    tablesight: Callable[..., subprocess.CompletedProcess[str]],
    sample_options: Callable[[str], list[str]],
    tmp_path: Path,
) -> None:
    """The port is found taken before the camera is opened or the match file written:
    one line, exit 2, every time (a camera's thread still reading once aborted the exit),
    nothing said of refereeing and no match file left behind."""
    with mjpeg_camera(320, 240) as url, socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for k in range(10):
            record = tmp_path / f"match-{k}.db"
            done = tablesight(
                "run",
                "--source",
                url,
                *sample_options("necromunda"),
                "--port",
                str(port),
                "--record",
                str(record),
            )
            assert done.stdout == "", done
            assert _refused(done).startswith(f"tablesight: --port: 127.0.0.1:{port} is taken ")
            assert not record.exists()


# -- the source said in words ------------------------------------------------------------


@pytest.mark.parametrize(
    ("granted", "said"),
    [
        ((1920, 1080, "MJPG"), "refereeing Necromunda from 0: 1920x1080 pictures, Motion JPEG"),
        ((1280, 720, "h264"), "refereeing Necromunda from 0: 1280x720 pictures, H.264"),
        ((640, 480, "YUYV"), "refereeing Necromunda from 0: 640x480 pictures, uncompressed (YUYV)"),
        ((3840, 2160, "VP80"), "refereeing Necromunda from 0: 3840x2160 pictures, VP80"),
        ((0, 0, "MJPG"), "refereeing Necromunda from 0: Motion JPEG"),
        ((0, 0, ""), "refereeing Necromunda from 0"),
        (None, "refereeing Necromunda from 0"),
    ],
)
def test_the_source_is_said_in_words(granted: tuple[int, int, str] | None, said: str) -> None:
    assert _source_line("Necromunda", "0", granted) == said


def _picture(width: int, height: int) -> bytes:
    image = np.full((height, width, 3), 90, np.uint8)
    cv2.rectangle(image, (20, 20), (width // 2, height // 2), (240, 240, 240), -1)
    ok, jpeg = cv2.imencode(".jpg", image)
    assert ok
    return jpeg.tobytes()


def mjpeg_camera(width: int, height: int) -> contextlib.AbstractContextManager[str]:
    """A network camera on 127.0.0.1 sending Motion JPEG of ``width`` x ``height``; its URL."""
    from tablesight.rig.mjpeg import steady_camera

    return steady_camera(_picture(width, height))


@pytest.mark.slow
def test_run_says_what_a_stream_gives_in_words(
    tablesight_command: list[str], sample_options: Callable[[str], list[str]]
) -> None:
    with mjpeg_camera(320, 240) as url:
        process = subprocess.Popen(
            [*tablesight_command, "run", "--source", url, *sample_options("necromunda"), *PORT_0],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            first = process.stdout.readline()
        finally:
            process.send_signal(signal.SIGINT)
            try:
                _, err = process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                _, err = process.communicate()
    assert first == f"refereeing Necromunda from {url}: 320x240 pictures, Motion JPEG\n", err
    assert process.returncode == 0, err


# -- no termios ---------------------------------------------------------------------------

#: ``tablesight`` in a Python whose ``import termios`` fails, as on Windows.
WITHOUT_TERMIOS = (
    "import sys; sys.modules['termios'] = None; "
    "from tablesight.cli import main; sys.argv[0] = 'tablesight'; main()"
)


def _read_until(leader: int, seen: list[bytes], text: bytes, within_s: float) -> bool:
    """Reads the terminal into ``seen`` until ``text`` shows (or ``within_s`` passed)."""
    end = time.monotonic() + within_s
    while text not in b"".join(seen) and time.monotonic() < end:
        if select.select([leader], [], [], 0.1)[0]:
            try:
                seen.append(os.read(leader, 4096))
            except OSError:
                break
    return text in b"".join(seen)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="the terminal is a POSIX pty here")
def test_run_without_termios_referees_without_keys_and_says_so(
    sample_options: Callable[[str], list[str]],
) -> None:
    import pty

    args = ["run", "--source", str(SAMPLE / "match.mp4"), *sample_options("necromunda")]
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-c", WITHOUT_TERMIOS, *args, "--port", "0"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        cwd=REPO,
    )
    os.close(follower)
    seen: list[bytes] = []
    try:
        # the game goes on: the first phase starts when the table is seen
        assert _read_until(leader, seen, b"phase_started", 60), b"".join(seen).decode()
        assert _read_until(leader, seen, b"Ctrl-C stops", 10), b"".join(seen).decode()
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
        _read_until(leader, seen, b"\x00", 1)  # what is left to read
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(leader)
    said = b"".join(seen).decode(errors="replace").replace("\r\n", "\n")
    assert said.count(NO_KEYS + "\n") == 1, said
    assert "keys: m start a movement phase" not in said
    assert "Traceback" not in said
