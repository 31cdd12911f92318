"""A network camera's Motion JPEG stream over HTTP, as the tests serve it: multipart JPEG
pictures at a camera's rate (what phone camera apps and IP cameras send)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler


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
