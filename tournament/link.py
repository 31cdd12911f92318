"""Where the broker is and how to log in to it, and the paho-mqtt client made from that.

``mqtt://HOST:PORT`` is plain MQTT (port 1883 when left out); ``mqtts://HOST:PORT`` is MQTT
over TLS (port 8883), checked against the system's certificate authorities or ``ca_file``.
A user name and password, when given, are sent on connecting; who may write which topic
is the broker's business (``samples/mosquitto/``).
"""

from __future__ import annotations

import re
import socket
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from tablesight.rules.errors import InputError

#: Seconds between the pings that tell the broker a client is alive: a table whose
#: laptop dies (no TCP close) is marked offline by its last will 1.5 keep-alives later.
KEEPALIVE_S = 10
#: Reconnecting after the broker went away: first after this many seconds, then twice as
#: long each time up to ``RECONNECT_MAX_S``.
RECONNECT_MIN_S = 0.5
RECONNECT_MAX_S = 4.0

SCHEMES = {"mqtt": 1883, "mqtts": 8883}

#: What the broker says to a login it refuses (MQTT 3.1.1's codes 4 and 5, as paho names
#: them): the table's and the hub's lines then say what to check.
LOGIN_REFUSALS = ("Not authorized", "Bad user name or password")
LOGIN_HINT = "check --broker-user and the password, TABLESIGHT_BROKER_PASSWORD"

#: A table's name: it is a level of the topic tree, so no ``/``, ``+`` or ``#``.
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def check_name(name: str, what: str = "--table-name") -> str:
    """A table (or hub) name as a topic level takes it, else :class:`InputError`."""
    if not NAME_RE.fullmatch(name):
        raise InputError(
            f"{what}: expected 1-64 letters, digits, '_', '-' or '.', starting with a letter "
            f"or digit, got {name!r}"
        )
    return name


@dataclass(frozen=True)
class BrokerLink:
    """A broker's address and the credentials to use there."""

    host: str
    port: int
    tls: bool = False
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    #: The certificate authority to check the broker's certificate against (TLS only);
    #: ``None``: the system's.
    ca_file: Path | None = None

    @classmethod
    def parse(
        cls,
        url: str,
        user: str | None = None,
        password: str | None = None,
        ca_file: Path | None = None,
    ) -> BrokerLink:
        """``mqtt://HOST[:PORT]`` or ``mqtts://HOST[:PORT]``; :class:`InputError` naming
        ``--broker`` (or the other option) otherwise."""
        try:  # a bad IPv6 address in brackets, "[::1" or "[zz::1]", is refused by urlsplit
            parts = urlsplit(url)
            hostname = parts.hostname
        except ValueError:
            hostname = None
        if not hostname or parts.scheme not in SCHEMES:
            raise InputError(
                f"--broker: expected mqtt://HOST:PORT or mqtts://HOST:PORT, got {url!r}"
            )
        if parts.path not in ("", "/") or parts.query or parts.fragment:
            raise InputError(f"--broker: expected no path or query after the port, got {url!r}")
        try:
            given = parts.port
        except ValueError:
            raise InputError(f"--broker: the port must be 1-65535, got {url!r}") from None
        port = SCHEMES[parts.scheme] if given is None else given
        if port == 0:
            raise InputError(f"--broker: the port must be 1-65535, got {url!r}")
        if parts.username or parts.password:
            raise InputError("--broker: give the user and password with --broker-user")
        tls = parts.scheme == "mqtts"
        if ca_file is not None:
            if not tls:
                raise InputError("--broker-ca: a certificate authority needs an mqtts:// broker")
            if not ca_file.is_file():
                raise InputError(f"--broker-ca: {ca_file}: no such file")
        if password is not None and user is None:
            raise InputError("--broker-password: give --broker-user too")
        return cls(hostname, port, tls, user, password, ca_file)

    def refused(self, reason: object) -> str:
        """Why the broker would not take a client, in one line with what to check."""
        said = str(reason)
        hint = f" ({LOGIN_HINT})" if said in LOGIN_REFUSALS else ""
        return f"the broker {self.url} refused it: {said}{hint}"

    def unreachable(self) -> str:
        """A client's try to connect failed before the broker could answer (no broker at
        that host and port, a name that does not resolve, TLS refused), in one line."""
        tls = ", and --broker-ca" if self.tls else ""
        return (
            f"cannot connect to the broker {self.url} (check the host and port in --broker"
            f"{tls}, and that the broker runs)"
        )

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'mqtts' if self.tls else 'mqtt'}://{host}:{self.port}"

    def local_address(self) -> str | None:
        """This machine's address on the way to the broker (the one the tables on the
        same network reach it by), found without sending anything; ``None`` when the
        broker cannot be routed to (or is this machine: a loopback address says nothing)."""
        try:
            family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
            with socket.socket(family, socket.SOCK_DGRAM) as probe:
                probe.connect((self.host, self.port))
                address = str(probe.getsockname()[0])
        except OSError:
            return None
        return None if address.startswith("127.") or address == "::1" else address

    def client(self, client_id: str, *, clean_session: bool = True) -> mqtt.Client:
        """A paho-mqtt client (MQTT 3.1.1) set up for this broker, not yet connected:
        credentials, TLS, and reconnecting by itself after the broker went away. A
        ``clean_session=False`` client keeps its subscriptions and the QoS 1 messages sent
        to it while it was away, kept by the broker under ``client_id``."""
        client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id,
            clean_session=clean_session,
            protocol=mqtt.MQTTv311,
        )
        if self.user is not None:
            client.username_pw_set(self.user, self.password)
        if self.tls:
            client.tls_set(
                ca_certs=str(self.ca_file) if self.ca_file else None,
                cert_reqs=ssl.CERT_REQUIRED,
                tls_version=ssl.PROTOCOL_TLS_CLIENT,
            )
        client.reconnect_delay_set(RECONNECT_MIN_S, RECONNECT_MAX_S)  # type: ignore[arg-type]
        client.max_queued_messages_set(0)  # no cap: nothing is dropped while away
        return client

    def connect(self, client: mqtt.Client) -> None:
        """Start connecting (and reconnecting, for as long as the client runs) on the
        client's own thread: never waits for the broker."""
        client.connect_async(self.host, self.port, keepalive=KEEPALIVE_S)
        client.loop_start()
