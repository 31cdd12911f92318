"""What the server refuses before a view runs, and the headers every answer carries.

- ``Host``: only the names the server is reached by (``127.0.0.1:PORT``,
  ``localhost:PORT``, or whatever the server was bound to; any host when it listens on
  every address, ``--host 0.0.0.0``), so that a web page whose name was rebound to this
  machine (DNS rebinding) cannot drive the controls: 400.
- The controls (every POST): with a ``token`` set, it must be given
  (``X-TableSight-Token``): 403; a POST sent by another site's page (``Origin`` not this
  server, or ``Sec-Fetch-Site: cross-site``) is refused whatever it carries: 403.
- Streams (``/api/stream``, ``/video.mjpg``) each hold a server thread for as long as they
  are open: at most ``per_client`` from one address and ``total`` in all, beyond which a
  stream is answered 503 with ``Retry-After`` at once. The server has threads for every
  stream and ``API_THREADS`` more, so the API and the controls never wait behind streams.
- Every answer: a Content-Security-Policy that runs only the server's own script files
  (``script-src 'self'``: no inline script, no ``eval``), no plugins, no ``<base>``, and
  no framing by any site (``frame-ancestors 'none'``) except for the OBS pages
  (``/broadcast``, ``/overlay``), which a streaming tool may lay into a scene.
"""

from __future__ import annotations

import hmac
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from flask import Response, request

from tablesight.webui.errors import ApiError

#: What every page may load and run; framing is added per page.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'"
)
#: The pages a streaming tool (OBS's browser source) shows, which may be framed.
FRAMEABLE = ("/broadcast", "/overlay")
#: Threads kept for everything that is not a stream (pages, the API, the controls).
API_THREADS = 16


def allowed_hosts(host: str, port: int) -> frozenset[str] | None:
    """The ``Host`` headers a server bound to ``host:port`` answers; ``None``: any (it
    listens on every address, so it is reached by names it cannot know)."""
    if host in ("0.0.0.0", "::", ""):
        return None
    names = {host}
    if host in ("127.0.0.1", "localhost"):
        names |= {"127.0.0.1", "localhost"}
    elif host == "::1":
        names |= {"localhost"}
    named = {f"[{n}]" if ":" in n else n for n in names}
    # a browser leaves the port out of Host when it is HTTP's own
    return frozenset({f"{n}:{port}" for n in named} | (named if port == 80 else set()))


def check_host(hosts: frozenset[str]) -> None:
    """Refuse a request naming a host the server is not (DNS rebinding)."""
    given = request.headers.get("Host", "").lower()
    if given not in hosts:
        raise ApiError(400, "Host: this server answers only to its own address", "Host")


def check_control(token: str | None) -> None:
    """A control (POST) must come from this server's own pages (or a tool that sends no
    ``Origin``) and, with a ``token``, carry it."""
    if request.method != "POST":
        return
    origin = request.headers.get("Origin")
    if origin is not None and urlsplit(origin).netloc.lower() != request.host.lower():
        raise ApiError(403, "Origin: controls are taken only from this server's pages", "Origin")
    if request.headers.get("Sec-Fetch-Site") == "cross-site":
        raise ApiError(403, "Origin: controls are taken only from this server's pages", "Origin")
    if not carries_token(token):
        raise ApiError(403, "this server needs the token it printed at start-up", "token")


def carries_token(token: str | None) -> bool:
    """Whether the request carries ``token`` (``X-TableSight-Token`` or ``?token=``), as
    the controls need it; any request does when there is no token."""
    if token is None:
        return True
    given = request.headers.get("X-TableSight-Token") or request.args.get("token") or ""
    # compared as bytes: any text (non-ASCII included) is a wrong token, never a fault
    return hmac.compare_digest(given.encode("utf-8", "replace"), token.encode())


def secure_headers(response: Response) -> Response:
    """The policy headers on every answer (see the module's description)."""
    framing = "" if request.path in FRAMEABLE else "; frame-ancestors 'none'"
    response.headers["Content-Security-Policy"] = CSP + framing
    if request.path not in FRAMEABLE:
        response.headers["X-Frame-Options"] = "DENY"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


@dataclass(frozen=True)
class StreamLimits:
    """At most ``per_client`` open streams from one address, ``total`` in all."""

    per_client: int = 16
    total: int = 64


class StreamSlots:
    """Counts the open streams by client address; a stream takes a slot before it starts
    and gives it back when it ends (its client went, or the game closed)."""

    def __init__(self, limits: StreamLimits) -> None:
        self.limits = limits
        self._lock = threading.Lock()
        self._open: Counter[str] = Counter()

    @property
    def open(self) -> int:
        with self._lock:
            return sum(self._open.values())

    def take(self, client: str) -> Callable[[], None]:
        """A slot for ``client``, and the function that gives it back (once); an
        :class:`ApiError` 503 when ``client`` or the server has no slot left."""
        with self._lock:
            if self._open[client] >= self.limits.per_client:
                raise busy(f"at most {self.limits.per_client} streams from one address")
            if sum(self._open.values()) >= self.limits.total:
                raise busy(f"at most {self.limits.total} streams in all")
            self._open[client] += 1
        given = threading.Event()

        def give() -> None:
            if given.is_set():
                return
            given.set()
            with self._lock:
                self._open[client] -= 1
                if self._open[client] <= 0:
                    del self._open[client]

        return give


class Busy(ApiError):
    """A 503 that tells the client when to come back."""

    retry_after_s = 5

    def headers(self) -> Iterable[tuple[str, str]]:
        return (("Retry-After", str(self.retry_after_s)),)


def busy(why: str) -> Busy:
    return Busy(503, f"stream: too many open streams ({why}); try again later", "stream")
