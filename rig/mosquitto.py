"""A real Mosquitto broker on 127.0.0.1 for tests and benchmarks: its own folder, config,
a free port, persistence on (it keeps retained messages, persistent sessions and their
queued QoS 1 messages over a restart, as a venue's broker does), started, stopped and
started again on the same port.

::

    with Mosquitto(tmp_path) as broker:
        ... broker.url ...            # mqtt://127.0.0.1:PORT
        broker.stop(); broker.start() # the broker away for a while
"""

from __future__ import annotations

import getpass
import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

#: Where Debian's package puts it.
EXECUTABLE = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Mosquitto:
    """``mosquitto -c <folder>/mosquitto.conf`` on a free port of 127.0.0.1.

    ``passwords`` and ``acl``: a password file and an ACL file (the sample's in
    ``samples/mosquitto/``): without them anyone may connect and write anything.
    ``extra``: more lines for the config (a TLS listener's, say)."""

    def __init__(
        self,
        folder: Path,
        *,
        passwords: Path | None = None,
        acl: Path | None = None,
        extra: str = "",
        port: int | None = None,
    ) -> None:
        if not Path(EXECUTABLE).exists():
            raise FileNotFoundError(f"{EXECUTABLE}: install Debian's mosquitto package")
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        lines = [
            # run as root, mosquitto would change to the user "mosquitto", who cannot
            # write this folder: it stays who started it
            f"user {getpass.getuser()}",
            f"listener {self.port} 127.0.0.1",
            "persistence true",
            f"persistence_location {folder}/",
            "autosave_interval 1",
            f"log_dest file {folder}/mosquitto.log",
            "log_type error",
            "log_type warning",
            "log_type notice",
            "max_queued_messages 100000",
        ]
        if passwords is not None:
            lines += ["allow_anonymous false", f"password_file {passwords}"]
        else:
            lines += ["allow_anonymous true"]
        if acl is not None:
            lines += [f"acl_file {acl}"]
        self.config = folder / "mosquitto.conf"
        self.config.write_text("\n".join(lines) + "\n" + extra)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self, wait_s: float = 10.0) -> Mosquitto:
        self.process = subprocess.Popen(
            [EXECUTABLE, "-c", str(self.config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        end = time.monotonic() + wait_s
        while time.monotonic() < end:
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"mosquitto exited {self.process.returncode}: {err}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"mosquitto did not listen on {self.port} in {wait_s} s")

    def stop(self) -> None:
        """As a service manager stops it (SIGTERM): it saves its persistence file."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None and self.process.stderr is not None:
            self.process.stderr.close()
        self.process = None

    def log(self) -> str:
        path = self.folder / "mosquitto.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def __enter__(self) -> Mosquitto:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
