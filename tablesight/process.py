"""How a TableSight process keeps its memory: few malloc arenas.

A served game runs a web server thread for every viewer's stream besides the referee's
and the camera's; glibc's malloc gives each new thread an arena of its own (up to eight
a core), and the pictures and JPEGs those threads pass back and forth (megabytes each)
leave every arena holding memory freed but not returned. Measured with
``tablesight bench soak --speed 4`` (the demo with four viewers), quarter-hour medians
after ten minutes: 499, 485, 516, 525, 570 MiB with an arena a thread (+94 MiB an hour);
261, 262, 264, 266, 265 MiB with two (+10), for the same CPU.
"""

from __future__ import annotations

import ctypes
import os

#: glibc's ``mallopt`` parameter for the most arenas (malloc.h: ``M_ARENA_MAX``).
M_ARENA_MAX = -8
#: Arenas a process keeps: one for the referee's thread and one shared by the rest.
ARENAS = 2


def few_arenas(arenas: int = ARENAS) -> bool:
    """Keep malloc to ``arenas`` arenas (as ``MALLOC_ARENA_MAX`` would), before the
    threads start; whether it was done: only glibc has ``mallopt`` (not macOS, Windows
    or musl), and ``MALLOC_ARENA_MAX`` set by the user is left as it is."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library the process already holds
    except (OSError, AttributeError, TypeError):  # no mallopt; Windows loads no None
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, arenas))
