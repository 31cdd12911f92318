"""A network camera's Motion JPEG stream over HTTP, as the tests serve it: multipart JPEG
pictures at a camera's rate (what phone camera apps and IP cameras send)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def send_mjpeg(handler: BaseHTTPRequestHandler, pictures: Iterable[bytes], fps: float) -> None:
    """Answer ``handler``'s request with ``pictures`` (JPEG bytes), one each ``1 / fps``
    seconds; a client that hangs up ends it."""
    handler.send_response(200)
    handler.send_header("Content-Type", "multipart/x-mixed-replace; boundary=frame")
    handler.end_headers()
    try:
        for jpeg in pictures:
            handler.wfile.write(b"--frame\r\nContent-Type: image/jpeg\r\n")
            handler.wfile.write(f"Content-Length: {len(jpeg)}\r\n\r\n".encode())
            handler.wfile.write(jpeg + b"\r\n")
            time.sleep(1 / fps)
    except (BrokenPipeError, ConnectionResetError):
        pass


def dropping_camera(jpeg: bytes, connections: int, away_s: float = 3.0) -> ThreadingHTTPServer:
    """A camera on 127.0.0.1 (serving on a thread of its own; ``shutdown`` and
    ``server_close`` it) that sends half a second of ``jpeg`` (15 pictures at 30 fps) on
    each connection and then drops it; from the second connection on it is away for
    ``away_s`` first (over the 2 s that make a loss), and after ``connections`` it refuses
    for good (503)."""
    served: list[float] = []

    class Camera(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.append(time.monotonic())
            if len(served) > connections:
                self.send_error(503)
                return
            if len(served) > 1:
                time.sleep(away_s)
            send_mjpeg(self, [jpeg] * 15, fps=30)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Camera)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@contextlib.contextmanager
def steady_camera(jpeg: bytes, fps: float = 15.0) -> Iterator[str]:
    """A camera on 127.0.0.1 sending ``jpeg`` at ``fps`` to every client until the block
    ends; its URL."""
    stop = threading.Event()

    def pictures() -> Iterator[bytes]:
        while not stop.is_set():
            yield jpeg

    class Camera(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            send_mjpeg(self, pictures(), fps=fps)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Camera)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/video"
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
