"""The camera lost, as the pages show it, in a real browser (Debian's Chromium through
Playwright): a network camera (Motion JPEG over HTTP, served by the test) that the test
switches off and on again, refereed by a real game on its own thread, served by waitress.

While the camera is lost the table view, ``/broadcast`` and ``/overlay`` say so over the
frozen picture, with the wall clock of the last picture the camera sent and how far into
the game it came; once the camera sends again it is gone. The times are the camera's
own: when the test's server wrote its last picture.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import cv2
import pytest

from tablesight.match.game import Game
from tablesight.rig.mjpeg import send_mjpeg
from tablesight.vision.sources import LiveSource
from tablesight.webui.serve import Server

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

#: "Camera lost since 14:02:11 (12.3 s into the game): ..."
LOST = re.compile(r"^Camera lost since (\d\d):(\d\d):(\d\d) \((\d+\.\d) s into the game\)")


class Camera:
    """A network camera the test switches off (its stream ends, and it answers 503) and
    on; it notes when it wrote each picture (wall clock and monotonic)."""

    def __init__(self, jpeg: bytes) -> None:
        self.on = threading.Event()
        self.on.set()
        self.sent: list[tuple[float, float]] = []
        camera = self

        def pictures() -> Iterator[bytes]:
            while camera.on.is_set():
                camera.sent.append((time.time(), time.monotonic()))
                yield jpeg

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if not camera.on.is_set():
                    self.send_error(503)
                    return
                send_mjpeg(self, pictures(), fps=30)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/video"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.on.clear()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def refereed(setup, footage):
    """The camera, the game refereeing it (started when the source is made) and its
    server; and when the source began (monotonic: frame times count from it)."""
    _, pics = footage
    ok, jpeg = cv2.imencode(".jpg", pics["start"], [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    camera = Camera(jpeg.tobytes())
    began = time.monotonic()
    source = LiveSource(camera.url, retry_s=(0.05, 0.1))
    game = Game(setup, source)
    game.start()
    web = Server(game, "127.0.0.1", 0).start()
    yield camera, game, web, began
    game.stop()
    web.close()
    camera.close()


def seconds_of_day(wall: float) -> int:
    t = datetime.fromtimestamp(wall)
    return t.hour * 3600 + t.minute * 60 + t.second


def test_the_pages_say_the_camera_is_lost_and_clear_it_when_it_is_back(refereed, pages):
    camera, game, web, began = refereed
    # the stream and the picture are cut when the game stops before the pages close
    allow = ("ERR_CONNECTION_REFUSED", "ERR_CONNECTION_RESET", "ERR_INCOMPLETE_CHUNKED")
    shown = {
        path: pages(web.url + path, 1280, 720, allow=allow) for path in ("", "broadcast", "overlay")
    }
    table = shown[""]
    # live: the model drawn, nothing said of the camera
    expect(table.locator("svg#overlay path.base")).to_have_count(2)
    for page in shown.values():
        expect(page.locator("#camera-lost")).to_be_hidden()
    expect(table.locator("#connection")).to_have_text("connected")

    camera.on.clear()  # the camera goes: its stream ends, and it answers no more
    for page in shown.values():
        expect(page.locator("#camera-lost")).to_be_visible()
    last_wall, last_mono = camera.sent[-1]
    for path, page in shown.items():
        text = page.locator("#camera-lost").text_content()
        found = LOST.match(text)
        assert found, (path, text)
        hh, mm, ss, t = found.groups()
        said = int(hh) * 3600 + int(mm) * 60 + int(ss)
        # the clock of the last picture the camera sent (to the second; a picture still
        # on its way may be the one the game saw last)
        assert (seconds_of_day(last_wall) - said) % 86400 <= 1, (path, text, last_wall)
        # its time in the game: seconds since the source began, when it was sent
        assert float(t) == pytest.approx(last_mono - began, abs=0.6), (path, text)
        print(f"\n/{path}: {text}")
    # the table view's line says it too, and the picture is dimmed
    expect(table.locator("#connection")).to_have_text("connected; camera lost")
    expect(table.locator(".picture")).to_have_class(re.compile(r"\blost\b"))
    table.screenshot(path="/tmp/tablesight-camera-lost-table.png")
    shown["broadcast"].screenshot(path="/tmp/tablesight-camera-lost-broadcast.png")

    camera.on.set()  # back: the game's retries find it
    for page in shown.values():
        expect(page.locator("#camera-lost")).to_be_hidden()
    expect(table.locator("#connection")).to_have_text("connected")
    expect(table.locator(".picture")).not_to_have_class(re.compile(r"\blost\b"))
    kinds = [e.kind for e in game.session.events if e.kind.startswith("camera_")]
    assert kinds == ["camera_lost", "camera_back"]
