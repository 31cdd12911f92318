"""Serving the web UI with waitress, a production-grade threaded WSGI server.

Each page holds one stream (``/api/stream``) and maybe the picture (``/video.mjpg``) open,
each on a server thread of its own, so the pool is sized for a room full of viewers.
"""

from __future__ import annotations

import secrets
import threading

from waitress import wasyncore
from waitress.server import create_server

from vision.game import Game
from vision.match.replay import Replay
from webui.app import create_app

#: Server threads: each open stream holds one.
THREADS = 48


class Server:
    """The web UI for ``game`` on ``host:port`` (port 0: any free port), on a thread."""

    def __init__(
        self,
        game: Game | Replay,
        host: str = "127.0.0.1",
        port: int = 5000,
        replay: bool = False,
    ) -> None:
        #: Listening beyond this machine: the controls need this token.
        self.token = (
            None if host in ("127.0.0.1", "localhost", "::1") else secrets.token_urlsafe(12)
        )
        if replay:
            assert not isinstance(game, Game)
            self.app = create_app(game, self.token, replay=game)
        else:
            self.app = create_app(game, self.token)
        self._server = create_server(
            self.app, host=host, port=port, threads=THREADS, ident="TableSight"
        )
        self.host = host
        self.port = int(self._server.effective_port)  # type: ignore[union-attr]
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="web", daemon=True)

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
        self._server.close()
        wasyncore.close_all(self._server._map)  # type: ignore[union-attr]
        self._thread.join(timeout=5)
        self._server.task_dispatcher.shutdown(timeout=3)  # type: ignore[union-attr]
