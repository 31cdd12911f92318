"""Where the broker is and how to log in (``tablesight.tournament.link``): the ``--broker`` URL, its
mistakes each said in one line naming the option to fix, table names as topic levels, the
command line refusing bad broker input with status 2 and no traceback; and on a real
Mosquitto, the clients ``BrokerLink`` makes: over TLS checked against the given
certificate authority (made here with ``openssl``), connecting without waiting and
reconnecting until the broker is there, and a client that dies said by its last will, at
once when its process is killed, 1.5 keep-alives later (16-22 s with Mosquitto 2.0) when it
just goes silent."""

from __future__ import annotations

import contextlib
import gc
import shutil
import signal
import ssl
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest

from tablesight.rig.mosquitto import EXECUTABLE, Mosquitto, free_port
from tablesight.rules.errors import InputError
from tablesight.tournament import messages
from tablesight.tournament.link import KEEPALIVE_S, RECONNECT_MAX_S, BrokerLink, check_name

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples" / "mosquitto"
WAIT_S = 10.0

# -- the URL -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "host", "port", "tls"),
    [
        ("mqtt://broker.local", "broker.local", 1883, False),
        ("mqtts://broker.local", "broker.local", 8883, True),
        ("mqtt://192.168.1.20:1884", "192.168.1.20", 1884, False),
        ("mqtts://hub.example.org:443/", "hub.example.org", 443, True),
        ("mqtt://[fd00::7]:1883", "fd00::7", 1883, False),
        ("MQTT://Broker:65535", "broker", 65535, False),
    ],
)
def test_a_broker_url_gives_host_port_and_tls(url: str, host: str, port: int, tls: bool) -> None:
    link = BrokerLink.parse(url)

    assert (link.host, link.port, link.tls) == (host, port, tls)
    assert (link.user, link.password, link.ca_file) == (None, None, None)
    assert BrokerLink.parse(link.url) == link  # the address said reads back


def test_the_login_and_certificate_authority_are_kept(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")

    link = BrokerLink.parse("mqtts://broker:8883", "table-7", "s3cret", ca)

    assert (link.user, link.password, link.ca_file, link.tls) == ("table-7", "s3cret", ca, True)
    assert "s3cret" not in repr(link.url)
    assert BrokerLink.parse("mqtt://broker", "hub").password is None


@pytest.mark.parametrize(
    ("url", "option", "says"),
    [
        ("http://broker:1883", "--broker", "expected mqtt://HOST:PORT or mqtts://HOST:PORT"),
        ("broker:1883", "--broker", "expected mqtt://HOST:PORT"),
        ("broker", "--broker", "expected mqtt://HOST:PORT"),
        ("", "--broker", "expected mqtt://HOST:PORT"),
        ("mqtt://", "--broker", "expected mqtt://HOST:PORT"),
        ("mqtt://:1883", "--broker", "expected mqtt://HOST:PORT"),
        ("mqtt://broker:0", "--broker", "the port must be 1-65535"),
        ("mqtt://broker:65536", "--broker", "the port must be 1-65535"),
        ("mqtt://broker:port", "--broker", "the port must be 1-65535"),
        ("mqtt://broker:1883/tablesight", "--broker", "no path or query"),
        ("mqtt://broker:1883?tls=1", "--broker", "no path or query"),
        ("mqtt://broker:1883#x", "--broker", "no path or query"),
        ("mqtt://table-7:hunter2@broker", "--broker", "with --broker-user"),
        ("mqtt://table-7@broker", "--broker", "with --broker-user"),
    ],
)
def test_a_wrong_broker_url_is_one_line_naming_broker(url: str, option: str, says: str) -> None:
    with pytest.raises(InputError) as refused:
        BrokerLink.parse(url)

    line = str(refused.value)
    assert line.startswith(f"{option}: ") and says in line
    assert "\n" not in line
    assert "hunter2" not in line  # a password in the URL is not repeated


def test_the_other_broker_options_mistakes_name_their_option(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("")
    cases = [
        (("mqtt://broker", None, None, ca), "--broker-ca: a certificate authority needs"),
        (("mqtts://broker", None, None, tmp_path / "no.pem"), "--broker-ca: "),
        (("mqtts://broker", None, None, tmp_path), "--broker-ca: "),  # a folder
        (("mqtt://broker", None, "s3cret", None), "--broker-password: give --broker-user"),
    ]
    for args, says in cases:
        with pytest.raises(InputError) as refused:
            BrokerLink.parse(*args)
        line = str(refused.value)
        assert line.startswith(says), (args, line)
        assert "\n" not in line and "s3cret" not in line


# -- names -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["table-7", "T7", "7", "judges.table_1", "a" * 64, "hub"])
def test_a_name_that_is_one_topic_level_is_taken(name: str) -> None:
    assert check_name(name) == name


@pytest.mark.parametrize(
    "name",
    [
        *("", "a/b", "table+", "#", "-table", ".table", "_table", "table 7", "tablé", "a" * 65),
        "t\n",
    ],
)
def test_a_name_that_is_not_one_topic_level_is_refused(name: str) -> None:
    with pytest.raises(InputError) as refused:
        check_name(name)
    assert str(refused.value).startswith("--table-name: expected 1-64 letters")
    with pytest.raises(InputError) as named:
        check_name(name, "--name")
    assert str(named.value).startswith("--name: ")


# -- the command line --------------------------------------------------------------------


#: ``run`` with files that do not exist: the broker's options are checked before them.
RUN = ["run", "--source", "0", "--game", "necromunda", "--table", "t.toml", "--roster", "r.toml"]
#: Bad broker input on the command line, and what the one line it gets says: a case for
#: each way the options are checked (every mistake of the URL is checked above).
BAD_INPUT = [
    (["demo", "--broker", "http://x"], "--broker: expected mqtt://HOST:PORT"),
    (["demo", "--broker", "mqtt://127.0.0.1:1", "--table-name", "a/b"], "--table-name: "),
    (["demo", "--table-name", "table-7"], "give --broker too"),
    (["demo", "--broker", "mqtt://x", "--broker-ca", "ca.pem"], "--broker-ca: "),
    (["hub"], "--broker: the hub reads the tables from a broker"),
    (["hub", "--broker", "mqtt://x", "--name", "hub/1"], "--name: "),
    ([*RUN, "--broker", "mqtts://x", "--table-name", "#"], "--table-name: "),
]


@pytest.mark.slow
def test_bad_broker_input_exits_2_with_one_line(
    tablesight: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    with ThreadPoolExecutor(4) as pool:  # new processes, a few at a time
        done = list(pool.map(lambda case: tablesight(*case[0]), BAD_INPUT))

    wrong = [
        f"{' '.join(args)}: {run.returncode} {run.stderr!r}"
        for (args, says), run in zip(BAD_INPUT, done, strict=True)
        if run.returncode != 2
        or run.stderr.count("\n") != 1
        or not run.stderr.startswith("tablesight: ")
        or says not in run.stderr
        or "Traceback" in run.stderr + run.stdout
    ]
    assert wrong == []


# -- on a real broker --------------------------------------------------------------------


@pytest.fixture
def clients() -> Iterator[list[mqtt.Client]]:
    """The clients a test makes, their loops stopped at its end."""
    made: list[mqtt.Client] = []
    yield made
    for client in made:
        client.disconnect()
        client.loop_stop()


def connecting(link: BrokerLink, made: list[mqtt.Client]) -> tuple[mqtt.Client, threading.Event]:
    """A client of ``link`` started connecting (``link.connect``), and the event set when
    the broker has accepted it."""
    client = link.client(f"test-{uuid.uuid4().hex[:8]}")
    accepted = threading.Event()

    def on_connect(_c: Any, _d: Any, _f: Any, reason: Any, _p: Any) -> None:
        if not reason.is_failure:
            accepted.set()

    client.on_connect = on_connect
    made.append(client)
    link.connect(client)
    return client, accepted


def listening(client: mqtt.Client, topic: str) -> list[tuple[bytes, float]]:
    """What ``client`` (connected) receives on ``topic`` from now on, with when
    (monotonic s)."""
    got: list[tuple[bytes, float]] = []
    subscribed = threading.Event()
    client.on_message = lambda _c, _d, m: got.append((bytes(m.payload), time.monotonic()))
    client.on_subscribe = lambda *_: subscribed.set()
    client.subscribe(topic, qos=1)
    assert subscribed.wait(WAIT_S)
    return got


def wait_until(check: Callable[[], bool], timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.02)
    return check()


def openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=30)


def make_ca(folder: Path, name: str) -> tuple[Path, Path]:
    """A throwaway certificate authority: its key and certificate."""
    key, pem = folder / f"{name}.key", folder / f"{name}.pem"
    openssl(
        *("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"),
        *("-nodes", "-keyout", str(key), "-out", str(pem), "-days", "2"),
        *("-subj", f"/CN={name}", "-addext", "basicConstraints=critical,CA:TRUE"),
        *("-addext", "keyUsage=critical,keyCertSign,cRLSign"),
    )
    return key, pem


def make_server(folder: Path, ca: tuple[Path, Path]) -> tuple[Path, Path]:
    """The broker's key and certificate, for the address 127.0.0.1, signed by ``ca``."""
    key, request, pem = folder / "broker.key", folder / "broker.csr", folder / "broker.pem"
    openssl(
        *("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"),
        *("-keyout", str(key), "-out", str(request), "-subj", "/CN=127.0.0.1"),
    )
    extensions = folder / "broker.ext"
    extensions.write_text(
        "subjectAltName = IP:127.0.0.1\nbasicConstraints = critical,CA:FALSE\n"
        "keyUsage = critical,digitalSignature\nextendedKeyUsage = serverAuth\n"
        "subjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid\n"
    )
    openssl(
        *("x509", "-req", "-in", str(request), "-CA", str(ca[1]), "-CAkey", str(ca[0])),
        *("-CAcreateserial", "-out", str(pem), "-days", "2", "-extfile", str(extensions)),
    )
    return key, pem


def need_mosquitto() -> None:
    if not Path(EXECUTABLE).exists():
        pytest.fail(f"{EXECUTABLE} is missing: .ci/run installs Debian's mosquitto")


# paho-mqtt 2.2 leaves the socket of a refused TLS handshake for the collector to close
@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_tls_checks_the_broker_against_the_given_authority(
    tmp_path: Path, clients: list[mqtt.Client]
) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed: it makes the test's certificates")
    need_mosquitto()
    ca = make_ca(tmp_path, "venue-ca")
    _, stranger = make_ca(tmp_path, "another-ca")
    key, pem = make_server(tmp_path, ca)
    port = free_port()
    extra = f"listener {port} 127.0.0.1\ncafile {ca[1]}\ncertfile {pem}\nkeyfile {key}\n"
    url = f"mqtts://127.0.0.1:{port}"
    with Mosquitto(
        tmp_path / "broker", passwords=SAMPLE / "passwords", acl=SAMPLE / "acl", extra=extra
    ):
        hub_link = BrokerLink.parse(url, "hub", "replace-me-hub", ca_file=ca[1])
        table_link = BrokerLink.parse(url, "table-1", "replace-me-table-1", ca_file=ca[1])
        hub, hub_in = connecting(hub_link, clients)
        table, table_in = connecting(table_link, clients)
        assert hub_in.wait(WAIT_S) and table_in.wait(WAIT_S)
        topic = messages.topic("table-1", messages.STATUS)
        got = listening(hub, topic)
        payload = messages.encode({"table": "table-1", "online": True, "state": "playing"})

        table.publish(topic, payload, qos=1).wait_for_publish(WAIT_S)

        assert wait_until(lambda: [p for p, _ in got] == [payload], WAIT_S), got

        # another authority's broker is not this one: refused, and never connected
        wrong = BrokerLink.parse(url, "table-1", "replace-me-table-1", ca_file=stranger)
        _, wrong_in = connecting(wrong, clients)
        with pytest.raises(ssl.SSLCertVerificationError, match="certificate verify failed"):
            wrong.client("once").connect(wrong.host, wrong.port)
        # nor is a broker whose certificate is for another name than the one dialled
        other_name = BrokerLink.parse(f"mqtts://localhost:{port}", ca_file=ca[1])
        with pytest.raises(ssl.SSLCertVerificationError, match="match"):
            other_name.client("once").connect(other_name.host, other_name.port)
        assert not wrong_in.wait(2.0)
    gc.collect()


def test_connect_never_waits_and_reconnects_once_the_broker_is_there(
    tmp_path: Path, clients: list[mqtt.Client]
) -> None:
    need_mosquitto()
    broker = Mosquitto(tmp_path / "broker")  # its port chosen, not yet listening
    link = BrokerLink.parse(broker.url)

    began = time.monotonic()
    _, accepted = connecting(link, clients)
    assert time.monotonic() - began < 0.5

    time.sleep(1.0)  # refused meanwhile, trying again
    assert not accepted.is_set()
    with broker:
        up = time.monotonic()
        assert accepted.wait(WAIT_S)
        # the longest wait between two tries, and a margin for this machine
        assert time.monotonic() - up < RECONNECT_MAX_S + 1.0


def will(table: str) -> bytes:
    return messages.encode({"table": table, "online": False, "reason": "connection lost"})


#: A table's process as far as the broker sees it: a client with its last will, connected,
#: then killed (or silenced) by the test.
TABLE_PROCESS = textwrap.dedent(
    """
    import sys, threading, time
    from tablesight.tournament.link import BrokerLink
    link = BrokerLink.parse(sys.argv[1])
    table, will, how = sys.argv[2:]
    client = link.client(table)
    client.will_set(f"tablesight/{table}/status", will.encode(), qos=1, retain=True)
    up = threading.Event()
    client.on_connect = lambda *_: up.set()
    link.connect(client)
    up.wait(10)
    print("connected", flush=True)
    if how == "silent":
        client.loop_stop()  # no more pings, the socket left open: Wi-Fi gone, laptop dead
    time.sleep(120)
    """
)


@contextlib.contextmanager
def table_process(url: str, table: str, how: str) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [sys.executable, "-c", TABLE_PROCESS, url, table, will(table).decode(), how],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdout.readline() == "connected\n"
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


@pytest.mark.slow
def test_a_table_that_dies_is_said_by_its_last_will(
    tmp_path: Path, clients: list[mqtt.Client]
) -> None:
    need_mosquitto()
    with Mosquitto(tmp_path / "broker") as broker:
        link = BrokerLink.parse(broker.url)
        hub, accepted = connecting(link, clients)
        assert accepted.wait(WAIT_S)
        got: dict[str, tuple[bytes, float]] = {}
        subscribed = threading.Event()
        hub.on_message = lambda _c, _d, m: got.setdefault(
            m.topic, (bytes(m.payload), time.monotonic())
        )
        hub.on_subscribe = lambda *_: subscribed.set()
        hub.subscribe("tablesight/+/status", qos=1)
        assert subscribed.wait(WAIT_S)

        # silent (a laptop whose Wi-Fi or power went): 1.5 keep-alives later
        with table_process(broker.url, "table-8", "silent"):
            silent = time.monotonic()
            # meanwhile, killed: its system closes the connection, the will goes at once
            with table_process(broker.url, "table-9", "killed") as process:
                process.send_signal(signal.SIGKILL)
                killed = time.monotonic()
                assert wait_until(lambda: "tablesight/table-9/status" in got, WAIT_S)
            assert got["tablesight/table-9/status"][0] == will("table-9")
            assert got["tablesight/table-9/status"][1] - killed < 1.0

            assert wait_until(lambda: "tablesight/table-8/status" in got, 1.5 * KEEPALIVE_S + 12.0)
        assert got["tablesight/table-8/status"][0] == will("table-8")
        # Mosquitto 2.0 drops a client silent for over 1.5 keep-alives (whole seconds:
        # 16 s), looking every 6 s: 16-22 s after the last packet it had
        waited = got["tablesight/table-8/status"][1] - silent
        assert 1.5 * KEEPALIVE_S - 1.0 < waited < 1.5 * KEEPALIVE_S + 8.0, waited
