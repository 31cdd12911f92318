"""The ``tablesight`` entry point, run as a user would: as a subprocess (the
``tablesight`` and ``tablesight_command`` fixtures of tests/conftest.py)."""

from __future__ import annotations

import subprocess

import pytest

SUBCOMMANDS = [
    "demo",
    "run",
    "analyze",
    "replay",
    "export",
    "detect",
    "doctor",
    "check",
    "calibrate",
    "markers",
    "bench",
]


def test_help_lists_every_subcommand(tablesight) -> None:
    result = tablesight("--help")
    assert result.returncode == 0, result.stderr
    listed = [
        line.split()[0]
        for line in result.stdout.split("Commands:")[1].splitlines()
        if line.startswith("  ") and not line.startswith("   ")
    ]
    assert sorted(listed) == sorted(SUBCOMMANDS)


def test_unknown_subcommand_is_usage_error(tablesight) -> None:
    result = tablesight("fly")
    assert result.returncode == 2
    assert "No such command 'fly'" in result.stderr


@pytest.mark.slow
def test_run_in_a_terminal_answers_its_keys(tmp_path, tablesight_command) -> None:
    """``run`` on a sample clip in a real terminal (a pty): ``?`` lists the keys from
    webui/keys.py again, ``m`` ends the phase that started by itself and starts another,
    ``q`` quits with status 0."""
    import os
    import pty
    import select
    import time
    from pathlib import Path

    sample = Path(__file__).resolve().parent.parent / "samples" / "necromunda"
    args = ["run", "--source", str(sample / "match.mp4"), "--game", "necromunda"]
    for name in ("table", "roster", "terrain", "camera"):
        args += [f"--{name}", str(sample / f"{name}.toml")]
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [*tablesight_command, *args, "--port", "0"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
    )
    os.close(follower)
    seen = b""

    def read_until(text: bytes, within_s: float, times: int = 1) -> bool:
        nonlocal seen
        end = time.monotonic() + within_s
        while seen.count(text) < times and time.monotonic() < end:
            if select.select([leader], [], [], 0.1)[0]:
                try:
                    seen += os.read(leader, 4096)
                except OSError:
                    break
        return seen.count(text) >= times

    try:
        assert read_until(b"phase_started", 30), seen.decode(errors="replace")
        assert b"m start a movement phase" in seen and seen.count(b"q quit") == 1
        time.sleep(1.5)  # a person reads the help, then presses a key
        os.write(leader, b"?")
        assert read_until(b"q quit", 5, times=2)
        assert b"phase_ended" not in seen
        os.write(leader, b"m")
        assert read_until(b"phase_ended", 10), seen.decode(errors="replace")
        assert read_until(b"phase_started", 10, times=2)
        os.write(leader, b"q")
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
