"""Serving the web UI with waitress, a production-grade threaded WSGI server.

Each page holds one stream (``/api/stream``) and maybe the picture (``/video.mjpg``) open,
each on a server thread of its own. The streams are capped (:class:`StreamLimits`: per
client address and in all, a 503 beyond) and the pool has a thread for every stream the
caps allow and ``API_THREADS`` more, so the pages, the API and the controls never wait
behind streams, however many are asked for.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

from waitress import wasyncore
from waitress.server import create_server

from tablesight.match.game import Game
from tablesight.match.replay import Replay
from tablesight.webui.app import create_app
from tablesight.webui.guard import API_THREADS, StreamLimits, allowed_hosts
from tablesight.webui.jsonio import MAX_BODY

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment
    from flask import Flask

#: Makes the app a server answers, given its token, the ``Host`` headers it answers
#: (:func:`tablesight.webui.guard.allowed_hosts`) and its stream caps.
AppFactory = Callable[[str | None, frozenset[str] | None, StreamLimits], "Flask"]


class Closes(Protocol):
    def close(self) -> None: ...


#: Connections waitress keeps open at once (streams, idle keep-alive connections, and
#: requests being read): four times the streams the caps allow, so that a request is
#: always accepted; beyond, a connection waits to be accepted. Each holds at most
#: ``MAX_HEADER`` + ``MAX_BODY`` bytes of a request, in memory: 32 MiB in all.
CONNECTION_LIMIT = 256
#: What waitress queues for a client before the stream writing to it waits (bytes): a
#: picture or two of a 1080p camera. A client that never reads costs this and the
#: picture being written, not every picture since (16 such clients cost about 96 MiB
#: with waitress's 16 MiB).
QUEUED_OUT = 256 * 1024
#: The most of a request's head (its line and headers) waitress reads: many times a
#: browser's (a few KiB), a quarter of waitress's own 256 KiB.
MAX_HEADER = 64 * 1024
#: A request's body is held in memory up to this, never spilled to a temporary file: twice
#: the most the server reads (a chunked body's framing counts too).
IN_MEMORY = 2 * MAX_BODY


class Server:
    """The web UI for ``game`` on ``host:port`` (port 0: any free port), on a thread; or,
    with ``app``, the app it makes (the set-up page's, say) instead."""

    def __init__(
        self,
        game: Game | Replay | None,
        host: str = "127.0.0.1",
        port: int = 5000,
        replay: bool = False,
        limits: StreamLimits | None = None,
        token: str | None = None,
        app: AppFactory | None = None,
        setup_url: str | None = None,
    ) -> None:
        #: Listening beyond this machine: the controls need this token (made up here
        #: unless given).
        local = host in ("127.0.0.1", "localhost", "::1")
        self.token = token if token is not None or local else secrets.token_urlsafe(12)
        self.limits = limits or StreamLimits()
        self._server = create_server(
            self._answer,
            host=host,
            port=port,
            threads=self.limits.total + API_THREADS,
            connection_limit=CONNECTION_LIMIT,
            max_request_header_size=MAX_HEADER,
            # a body over the apps' limit (guarded_app's) is refused (413) as it comes,
            # before any of it is stored: by its Content-Length at once, a chunked one
            # once past it (waitress refuses from this size on)
            max_request_body_size=MAX_BODY + 1,
            inbuf_overflow=IN_MEMORY,
            # a stream to a client that does not read waits once this much is queued
            # for it (its next picture is then the newest), in memory, never on disk
            outbuf_high_watermark=QUEUED_OUT,
            outbuf_overflow=2 * QUEUED_OUT,
            ident="TableSight",
        )
        self.host = host
        self.port = int(self._server.effective_port)  # type: ignore[union-attr]
        hosts = allowed_hosts(host, self.port)
        if app is not None:
            self.app = app(self.token, hosts, self.limits)
        elif game is None:
            raise ValueError("Server: give a game, or the app to serve")
        elif replay:
            assert not isinstance(game, Game)
            self.app = create_app(game, self.token, game, hosts, self.limits)
        else:
            self.app = create_app(game, self.token, None, hosts, self.limits, setup_url)
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="web", daemon=True)

    def _answer(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        """The app, made once the port is known (its ``Host`` check names it)."""
        return self.app(environ, start_response)

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host
        query = f"?token={self.token}" if self.token else ""
        return f"http://{host}:{self.port}/{query}"

    def running(self) -> bool:
        return self._thread.is_alive()

    def start(self) -> Server:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self._server.run()
        except OSError:
            # Closing the sockets from another thread pulls them from under the loop's
            # select: expected while closing, a fault otherwise.
            if not self._closing:
                raise

    def close(self) -> None:
        """Stop listening and wait (briefly) for the request threads to finish, so that
        none is still encoding a picture as the program exits. Stop the game first: its
        streams end then."""
        self._closing = True
        # the request threads first: one that ends wakes the loop through the server's
        # trigger, which closing the server closes
        self._server.task_dispatcher.shutdown(timeout=3)  # type: ignore[union-attr]
        self._server.close()
        wasyncore.close_all(self._server._map)  # type: ignore[union-attr]
        self._thread.join(timeout=5)


def stop_on_terminate(stop: Callable[[], object], ctrl_c: bool = False) -> None:
    """SIGTERM (and SIGHUP, the terminal closed; with ``ctrl_c``, Ctrl-C too) ends the
    program as Ctrl-C does: ``stop`` is called, and the command finishes its files on its
    way out. With ``ctrl_c`` a second Ctrl-C interrupts at once, should the first's
    finishing hang."""
    import signal

    asked: list[int] = []

    def handler(signum: int, _frame: object) -> None:
        asked.append(signum)
        if ctrl_c and signum == signal.SIGINT and asked.count(signum) > 1:
            raise KeyboardInterrupt
        stop()

    names = ("SIGTERM", "SIGHUP", "SIGINT") if ctrl_c else ("SIGTERM", "SIGHUP")
    for name in names:
        number = getattr(signal, name, None)
        if number is not None:
            signal.signal(number, handler)


def referee_until_stopped(referee: Game, server: Server, publisher: Closes | None = None) -> None:
    """Run the game until its source ends, Ctrl-C or a SIGTERM (a service manager, kill);
    then stop it, the web server (whose streams end with the game), the broker's link (the
    table said offline) and the match file, in that order."""

    def stopping() -> None:
        # on a thread of its own, never in the signal's handler: the signal may have come
        # while this thread held the game's lock, which stopping takes
        threading.Thread(target=referee.stop, name="stopping", daemon=True).start()

    stop_on_terminate(stopping, ctrl_c=True)
    try:
        referee.run()
    except KeyboardInterrupt:
        pass
    finally:
        referee.stop()
        server.close()
        if publisher is not None:  # the broker's last acknowledgements reach the file
            publisher.close()
        referee.close_recorder()  # a failure to finish it is one event line, not an exit


def serve_until_interrupted(server: Server) -> None:
    """Wait while ``server`` serves, until Ctrl-C or a SIGTERM; the caller closes it."""
    import time

    def interrupt() -> None:
        raise KeyboardInterrupt

    stop_on_terminate(interrupt)
    try:
        while server.running():
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
