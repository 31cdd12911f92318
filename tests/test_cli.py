"""The ``tablesight`` entry point, run as a user would: as a subprocess."""

from __future__ import annotations

import shutil
import subprocess
import sys

SUBCOMMANDS = [
    "demo",
    "run",
    "analyze",
    "replay",
    "export",
    "detect",
    "check",
    "calibrate",
    "markers",
    "bench",
]


def tablesight(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("tablesight")
    cmd = [exe] if exe else [sys.executable, "-m", "tablesight"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=60)


def test_help_lists_every_subcommand() -> None:
    result = tablesight("--help")
    assert result.returncode == 0, result.stderr
    listed = [
        line.split()[0]
        for line in result.stdout.split("Commands:")[1].splitlines()
        if line.startswith("  ") and not line.startswith("   ")
    ]
    assert sorted(listed) == sorted(SUBCOMMANDS)


def test_unknown_subcommand_is_usage_error() -> None:
    result = tablesight("fly")
    assert result.returncode == 2
    assert "No such command 'fly'" in result.stderr
