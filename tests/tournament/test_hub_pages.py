"""The tables' pages as the hub tries them (``tablesight.tournament.hub``: ``page_target``,
``reachable``), on a real Mosquitto and real HTTP servers that count what they are asked:
only ``http://ADDRESS:PORT/`` at a private network's or loopback address, from port 1024
up, is tried; with ``GET /`` and no more, following no redirect; at most once per table
per interval, however many statuses a table sends. What was not tried is said as such
(``reachable`` ``None``, and why in ``unchecked``)."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest

from tablesight.tournament import messages
from tablesight.tournament.hub import LOWEST_PAGE_PORT, Hub, page_target

WAIT_S = 10.0


class Counting(http.server.ThreadingHTTPServer):
    """A page that answers ``status`` (with ``location``, for a redirect) and keeps every
    request's path and Host."""

    def __init__(self, address: str, port: int, status: int, location: str | None) -> None:
        self.status, self.location = status, location
        self.asked: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        super().__init__((address, port), _Handler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def count(self) -> int:
        with self.lock:
            return len(self.asked)


class _Handler(http.server.BaseHTTPRequestHandler):
    server: Counting

    def do_GET(self) -> None:
        with self.server.lock:
            self.server.asked.append((self.path, self.headers.get("Host", "")))
        self.send_response(self.server.status)
        if self.server.location:
            self.send_header("Location", self.server.location)
        self.send_header("Content-Length", "10")
        self.end_headers()
        self.wfile.write(b"table view")

    def log_message(self, *_args: Any) -> None:
        pass


@contextmanager
def page(
    status: int = 200, location: str | None = None, address: str = "127.0.0.1", port: int = 0
) -> Iterator[Counting]:
    server = Counting(address, port, status, location)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def row(hub: Hub, name: str) -> dict[str, Any]:
    return next((t for t in hub.tables() if t["name"] == name), {})


def until_tried(hub: Hub, name: str) -> dict[str, Any]:
    """The table's row once its page was tried (``reachable`` says true or false). The
    hub tries every table due in one round and shows the answers together, so each table
    heard of before ``name`` has been looked at by then."""
    version = -1
    for _ in range(int(WAIT_S / 0.2)):
        shown = row(hub, name)
        if shown.get("reachable") is not None:
            return shown
        version = hub.wait_for_change(version, 0.2)
    pytest.fail(f"{name}'s page was never tried: {row(hub, name)}")


# -- which addresses -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "target"),
    [
        ("http://192.168.1.37:5000/", ("192.168.1.37", 5000)),
        ("http://10.0.0.7:5001/", ("10.0.0.7", 5001)),
        ("http://172.16.0.5:1024/", ("172.16.0.5", 1024)),
        ("http://172.31.255.254:65535/", ("172.31.255.254", 65535)),
        ("http://127.0.0.1:5000/", ("127.0.0.1", 5000)),
        ("http://[::1]:5000/", ("::1", 5000)),
        ("http://[fd12:3456::5]:5000/", ("fd12:3456::5", 5000)),
        # not an address of a private network or this machine
        ("http://8.8.8.8:5000/", "not a private network's address"),
        ("http://192.0.2.2:5000/", "not a private network's address"),  # documentation
        ("http://172.32.0.1:5000/", "not a private network's address"),
        ("http://100.64.0.1:5000/", "not a private network's address"),  # carrier NAT
        ("http://169.254.169.254:80/", "not a private network's address"),  # metadata
        ("http://169.254.169.254:5000/", "not a private network's address"),
        ("http://[fe80::1]:5000/", "not a private network's address"),
        ("http://0.0.0.0:5000/", "not a private network's address"),
        ("http://[::]:5000/", "not a private network's address"),
        ("http://224.0.0.1:5000/", "not a private network's address"),
        ("http://255.255.255.255:5000/", "not a private network's address"),
        ("http://[::ffff:127.0.0.1]:5000/", "not a private network's address"),
        ("http://[2001:db8::1]:5000/", "not a private network's address"),
        # a name, or an address spelled as only a resolver reads it
        ("http://localhost:5000/", "a name, not an IP address"),
        ("http://table-7.local:5000/", "a name, not an IP address"),
        ("http://127.1:5000/", "a name, not an IP address"),
        ("http://2130706433:5000/", "a name, not an IP address"),
        ("http://0x7f000001:5000/", "a name, not an IP address"),
        ("http://127.000.000.001:5000/", "a name, not an IP address"),
        # a port of the system's services, or none
        ("http://192.168.1.1:80/", f"no port from {LOWEST_PAGE_PORT} up"),
        ("http://192.168.1.1:22/", f"no port from {LOWEST_PAGE_PORT} up"),
        ("http://192.168.1.1:1023/", f"no port from {LOWEST_PAGE_PORT} up"),
        ("http://192.168.1.1/", f"no port from {LOWEST_PAGE_PORT} up"),
        ("http://192.168.1.1:99999/", "not an address"),
        # anything but / at the address
        ("http://192.168.1.1:5000", "a path other than /"),
        ("http://192.168.1.1:5000/admin", "a path other than /"),
        ("http://192.168.1.1:5000/api/decide?flag=3", "a path other than /"),
        ("http://192.168.1.1:5000/?token=x", "a path other than /"),
        ("http://192.168.1.1:5000/?", "a path other than /"),
        ("http://192.168.1.1:5000/#x", "a path other than /"),
        ("http://192.168.1.1:5000//", "a path other than /"),
        ("http://user@192.168.1.1:5000/", "a user name in it"),
        ("http://user:pw@192.168.1.1:5000/", "a user name in it"),
        ("https://192.168.1.1:5000/", "not http://"),
        ("ftp://192.168.1.1:5000/", "not http://"),
        ("http://[::1:5000/", "not an address"),
        ("", "no address"),
        (None, "no address"),
    ],
)
def test_only_a_private_address_and_port_with_the_path_slash_is_tried(
    url: str | None, target: tuple[str, int] | str
) -> None:
    assert page_target(url) == target


# -- what is tried, on real servers -----------------------------------------------------


def test_a_page_elsewhere_than_an_address_port_and_slash_is_not_fetched(started, tables):
    """Tables announcing, each, the same live page by another path, a query, a user, a
    name, an address only a resolver reads, https, or a system port: none is asked
    anything. The one table announcing the page as a table does is tried, once."""
    with ExitStack() as stack:
        live = stack.enter_context(page())
        p = live.port
        announced = {
            "path": (f"http://127.0.0.1:{p}/admin", "a path other than /"),
            "query": (f"http://127.0.0.1:{p}/?delete=all", "a path other than /"),
            "no-slash": (f"http://127.0.0.1:{p}", "a path other than /"),
            "user": (f"http://judge:pw@127.0.0.1:{p}/", "a user name in it"),
            "name": (f"http://localhost:{p}/", "a name, not an IP address"),
            "short": (f"http://127.1:{p}/", "a name, not an IP address"),
            "integer": (f"http://2130706433:{p}/", "a name, not an IP address"),
            "hex": (f"http://0x7f000001:{p}/", "a name, not an IP address"),
            "mapped": (f"http://[::ffff:127.0.0.1]:{p}/", "not a private network's address"),
            "tls": (f"https://127.0.0.1:{p}/", "not http://"),
        }
        low: Counting | None = None
        port = _low_port()
        if port is not None:  # (a user who may not bind one: the unit test above covers it)
            low = stack.enter_context(page(port=port))
            announced["system"] = (f"http://127.0.0.1:{port}/", "no port from 1024 up")
        hub = started("pages", check_every_s=3600.0)
        for name, (url, _) in announced.items():
            tables.status(name, "g", url=url)
        tables.status("own", "g", url=f"http://127.0.0.1:{p}/")
        own = until_tried(hub, "own")

        assert (own["url"], own["reachable"], own["unchecked"]) == (
            f"http://127.0.0.1:{p}/",
            True,
            None,
        )
        assert live.asked == [("/", f"127.0.0.1:{p}")]  # the own table's, once
        assert low is None or low.count() == 0
        shown = {t["name"]: t for t in hub.tables()}
        assert len(shown) == len(announced) + 1
        for name, (url, why) in announced.items():
            assert (shown[name]["url"], shown[name]["reachable"]) == (url, None), name
            assert shown[name]["unchecked"] == why, name


def _low_port() -> int | None:
    """A port under 1024 this user may bind, if any."""
    for port in range(1023, 900, -1):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    return None


def test_a_redirect_is_not_followed(started, tables):
    """A table's address answering 302 to another page: the other page is asked
    nothing, and the table's is not reachable (it is not the table's page)."""
    with page() as elsewhere, page(302, f"http://127.0.0.1:{elsewhere.port}/") as redirecting:
        hub = started("pages", check_every_s=3600.0)
        tables.status("alpha", "g", url=f"http://127.0.0.1:{redirecting.port}/")
        alpha = until_tried(hub, "alpha")

        assert alpha["reachable"] is False
        assert redirecting.asked == [("/", f"127.0.0.1:{redirecting.port}")]
        assert elsewhere.count() == 0


def test_a_flood_of_statuses_makes_one_fetch_an_interval(started, tables, mosquitto):
    """alpha's page tried once; then 60 statuses of alpha, by turns naming that page,
    another (live) page, and none (alpha cleared from the list and heard from again):
    neither page is asked again within the interval. bravo, heard from after them all,
    is tried: the round that tried it looked at alpha as the flood left it."""
    with page() as first, page() as second, page() as sync:
        hub = started("pages", check_every_s=3600.0)
        tables.status("alpha", "g", url=f"http://127.0.0.1:{first.port}/")
        assert until_tried(hub, "alpha")["reachable"] is True
        urls = [f"http://127.0.0.1:{first.port}/", f"http://127.0.0.1:{second.port}/"]
        for n in range(60):
            if n % 3 == 2:  # cleared: alpha is off the list until its next status
                tables.raw(messages.topic("alpha", messages.STATUS), b"", retain=True)
            else:
                tables.status("alpha", f"g{n}", url=urls[n % 3], turn=n)
        tables.status("alpha", "last", url=urls[1])
        tables.status("bravo", "g", url=f"http://127.0.0.1:{sync.port}/")
        assert until_tried(hub, "bravo")["reachable"] is True

        assert (first.count(), second.count(), sync.count()) == (1, 0, 1)
        alpha = row(hub, "alpha")
        # its page now is the second, not tried: nothing said of it
        assert (alpha["url"], alpha["reachable"], alpha["unchecked"]) == (urls[1], None, None)
        assert alpha["game_id"] == "last"
