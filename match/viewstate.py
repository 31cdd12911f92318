"""What views draw, worked out once per change and shared by every caller.

The live game and the replay both answer ``state()`` many times a second (one stream per
page, and the API); the table changes less often than that, and working its state out
takes tens of milliseconds. A :class:`StateCache` keeps the newest state by the source's
change counter and works it out again only when that has moved on; a page's stream asks
for it without waiting (:meth:`StateCache.ask`) and takes its text, serialised once for
every stream (:meth:`Worked.text`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

State = dict[str, Any]
#: What a state is worked out at: the source's ``(generation, version)``.
Key = tuple[int, int]
#: Run under the source's lock: copies what the state is worked out from, and returns the
#: work (run outside that lock).
Take = Callable[[], Callable[[], State]]


class Worked:
    """A state worked out, the source's ``(generation, version)`` it was worked out at,
    and its text, made once, by the first who asks (:meth:`text`)."""

    def __init__(self, key: Key, state: State) -> None:
        self.key = key
        self.state = state
        self._lock = threading.Lock()
        self._text: str | None = None

    def text(self, serialise: Callable[[State], str]) -> str:
        """The state as ``serialise`` writes it, written once: every caller passes the same
        ``serialise`` (a page's stream, say) and shares its text."""
        with self._lock:
            if self._text is None:
                self._text = serialise(self.state)
            return self._text


class StateCache:
    """The newest state by its key (:data:`Key`: a game's ``(generation, version)``).

    :meth:`get` reads the key under ``lock`` (the source's, which its changes hold); if
    the state for that key is held it is the answer, else ``take()`` copies what is needed
    (still under ``lock``) and the work it returns runs outside ``lock``: the source never
    waits for it. One caller works a state out at a time; those who ask meanwhile wait for
    it and take its result. :meth:`ask` does not wait: it answers the state held if it is
    new enough, else ``None`` while the newest is worked out on a thread of its own.
    """

    def __init__(self, lock: AbstractContextManager[Any]) -> None:
        self._lock = lock
        self._working = threading.Lock()
        self._held: Worked | None = None
        #: :meth:`ask`'s thread: whether one runs, and what it failed with.
        self._asked = threading.Lock()
        self._running = False
        self._failed: Exception | None = None

    def get(self, key: Callable[[], Key], take: Take) -> Worked:
        with self._working:
            with self._lock:
                now = key()
                held = self._held
                if held is not None and held.key == now:
                    return held
                work = take()
            worked = Worked(now, work())
            self._held = worked
            return worked

    def ask(self, at_least: Key, key: Callable[[], Key], take: Take) -> Worked | None:
        """The state held if it is of the generation ``at_least`` names and at least its
        version; else ``None``, and the newest is worked out (as :meth:`get` does) on a
        thread of its own, one at a time. An error working it out is raised to the caller
        that asks next."""
        with self._asked:
            held = self._held
            if held is not None and held.key[0] == at_least[0] and held.key[1] >= at_least[1]:
                return held
            if self._failed is not None and not self._running:
                failed, self._failed = self._failed, None
                raise failed
            if not self._running:
                self._running = True
                threading.Thread(
                    target=self._work, args=(key, take), name="state", daemon=True
                ).start()
        return None

    def _work(self, key: Callable[[], Key], take: Take) -> None:
        try:
            self.get(key, take)
        except Exception as exc:  # raised to the caller that asks next
            with self._asked:
                self._failed = exc
        finally:
            with self._asked:
                self._running = False
