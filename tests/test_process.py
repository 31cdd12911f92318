"""A TableSight process keeps malloc to two arenas: eight threads passing megabyte
buffers about (as a served game's stream threads pass pictures) leave glibc with an
arena each otherwise, each holding memory freed but not returned. Counted by glibc's
own ``malloc_info`` (one ``<heap nr=...>`` an arena), never by the code under test."""

from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCENARIO = Path(__file__).resolve().parents[1] / "samples" / "scenarios"

#: What the child process does before the threads: nothing, the call itself, or a
#: command of the CLI (whose group applies it).
BEFORE = {
    "nothing": "",
    "call": "from tablesight.process import few_arenas; assert few_arenas()",
    "call, whatever it says": "from tablesight.process import few_arenas; few_arenas()",
    "cli": (
        "from tablesight.cli import main\n"
        f"main(['check', {str(SCENARIO / 'necromunda-charge.json')!r}], standalone_mode=False)"
    ),
}

THREADS = """
import ctypes, ctypes.util, threading
import numpy as np
libc = ctypes.CDLL(ctypes.util.find_library("c"))
barrier = threading.Barrier(8)
def work():
    barrier.wait()  # all eight at once, as a game's viewers
    for _ in range(50):
        buffer = np.ones(300_000)  # 2.4 MB, freed at the next
        del buffer
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
text, size = ctypes.c_char_p(), ctypes.c_size_t()
libc.open_memstream.restype = ctypes.c_void_p
f = ctypes.c_void_p(libc.open_memstream(ctypes.byref(text), ctypes.byref(size)))
libc.malloc_info(0, f)
libc.fclose(f)
print(text.value.decode().count("<heap nr="))
"""

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or ctypes.util.find_library("c") is None,
    reason="malloc arenas are glibc's (Linux)",
)


def _arenas(before: str, env: dict[str, str] | None = None) -> int:
    child = subprocess.run(
        [sys.executable, "-c", BEFORE[before] + "\n" + THREADS],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    assert child.returncode == 0, child.stderr
    return int(child.stdout.split()[-1])


@pytest.mark.parametrize(("before", "arenas"), [("nothing", 9), ("call", 2), ("cli", 2)])
def test_eight_threads_share_two_arenas(before: str, arenas: int) -> None:
    """Without it, the main thread's arena and one for each of the eight threads."""
    assert _arenas(before) == arenas


def test_a_users_malloc_arena_max_is_left_as_it_is() -> None:
    assert _arenas("call, whatever it says", {"MALLOC_ARENA_MAX": "3"}) == 3
