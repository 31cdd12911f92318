"""What views draw, worked out once per change and shared by every caller.

The live game and the replay both answer ``state()`` many times a second (one stream per
page, and the API); the table changes less often than that, and working its state out
takes tens of milliseconds. A :class:`StateCache` keeps the newest state by the source's
change counter and works it out again only when that has moved on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from contextlib import AbstractContextManager
from typing import Any

State = dict[str, Any]
#: Run under the source's lock: copies what the state is worked out from, and returns the
#: work (run outside that lock).
Take = Callable[[], Callable[[], State]]


class StateCache:
    """The newest state by its key (a game's ``(generation, version)``, say).

    :meth:`get` reads the key under ``lock`` (the source's, which its changes hold); if
    the state for that key is held it is the answer, else ``take()`` copies what is needed
    (still under ``lock``) and the work it returns runs outside ``lock``: the source never
    waits for it. One caller works a state out at a time; those who ask meanwhile wait for
    it and take its result.
    """

    def __init__(self, lock: AbstractContextManager[Any]) -> None:
        self._lock = lock
        self._working = threading.Lock()
        self._held: tuple[Hashable, State] | None = None

    def get(self, key: Callable[[], Hashable], take: Take) -> State:
        with self._working:
            with self._lock:
                now = key()
                if self._held is not None and self._held[0] == now:
                    return self._held[1]
                work = take()
            state = work()
            self._held = (now, state)
            return state
