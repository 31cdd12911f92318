"""What the commands share: one-line refusals, the broker's options and the table
published there, and the web UI served on a port (a taken one refused with a free one to
give instead)."""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

if TYPE_CHECKING:
    from collections.abc import Callable

    from tablesight.match.game import Game
    from tablesight.tournament.link import BrokerLink
    from tablesight.tournament.publisher import TablePublisher
    from tablesight.webui.serve import Server

#: Exit status for bad input.
EXIT_USAGE = 2


def fail(message: str) -> NoReturn:
    """Print one line to stderr and exit with status 2 (bad input, never a traceback)."""
    click.echo(f"tablesight: {message}", err=True)
    sys.exit(EXIT_USAGE)


class FilePath(click.Path):
    """A file or folder the user names (``click.Path``), refused in one line and exit
    status 2 as every other bad input is, never click's usage text: a name the system
    cannot take (too long, in all or in one part), a folder where a file is asked for."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        found = _stat_name(os.fspath(value), _label(param))
        if found is not None:
            self.check(os.fspath(value), found.st_mode, param, ctx)
        return super().convert(value, param, ctx)

    def check(
        self, text: str, mode: int, param: click.Parameter | None, ctx: click.Context | None
    ) -> None:
        """What is there by that name (its ``st_mode``) is what the parameter takes."""
        from tablesight.rules.errors import shown

        if not self.dir_okay and stat.S_ISDIR(mode):
            self.fail(f"{shown(text)}: is a folder, expected a file", param, ctx)

    def fail(
        self, message: str, param: click.Parameter | None = None, ctx: click.Context | None = None
    ) -> NoReturn:
        fail(f"{_label(param)}: {message}")


class OutputPath(FilePath):
    """A file the command writes: one that exists must be a regular file (a device, a pipe
    or a socket there is refused, never written into or replaced by the file)."""

    def check(
        self, text: str, mode: int, param: click.Parameter | None, ctx: click.Context | None
    ) -> None:
        from tablesight.rules.errors import shown, special

        super().check(text, mode, param, ctx)
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            self.fail(f"{shown(text)}: is {special(mode)}, not a regular file to write", param, ctx)


class Source(click.ParamType):
    """A camera's number, a video file, a folder or glob of pictures, or a stream's URL: a
    file name the system cannot take is refused as :class:`FilePath` refuses one."""

    name = "source"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if "://" not in value:
            _stat_name(value, _label(param))
        return value


def _stat_name(text: str, label: str) -> os.stat_result | None:
    """What is there by the name ``text`` (``None``: nothing, or nothing to be had: the
    command says why); a name the system cannot take (too long, in all or in one part; a
    NUL in it) is refused in one line naming the option (``label``)."""
    from tablesight.rules.errors import name_too_long, shown

    try:
        return os.stat(text)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            fail(f"{label}: {shown(text)}: {name_too_long(text)}")
        return None
    except ValueError:
        fail(f"{label}: {shown(text)}: not a file name (it holds a NUL character)")


class Host(click.ParamType):
    """``--host``: an address this computer can listen on, refused in one line otherwise
    (before a camera or a broker is opened)."""

    name = "host"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        import socket

        from tablesight.rules.values import cut

        try:
            found = bool(value) and bool(
                socket.getaddrinfo(value, None, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
            )
        except (OSError, UnicodeError, ValueError):  # no such name; a label over 63 characters
            found = False
        if not found:
            fail(
                f"{_label(param)}: expected an address of this computer to listen on "
                f"(127.0.0.1; 0.0.0.0 or :: for the LAN too; ::1), got {cut(value)}"
            )
        return value


def check_certificates(ca_file: Path) -> None:
    """``--broker-ca``: a regular file of PEM certificates TLS can load, read as the broker's
    link will read it; else one line (never the TLS library's traceback as it connects)."""
    import ssl

    from tablesight.rules.errors import TEXT_LIMIT, InputError, check_regular, shown

    try:  # a regular file, not too big: OpenSSL reads it to its end
        check_regular(ca_file, "a certificate authority (a PEM file)", TEXT_LIMIT)
    except InputError as exc:
        fail(f"--broker-ca: {exc}")
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cafile=str(ca_file))
    except (ssl.SSLError, OSError, ValueError):
        fail(
            f"--broker-ca: {shown(ca_file)}: not a certificate authority's PEM file "
            "(expected -----BEGIN CERTIFICATE----- blocks)"
        )


def _label(param: click.Parameter | None) -> str:
    """How the command line names a parameter: ``--table``, or ``SCENARIO``."""
    if param is None:
        return "a path"
    if isinstance(param, click.Option) and param.opts:
        return max(param.opts, key=len)
    return param.human_readable_name


def broker_options(command: Callable[..., None]) -> Callable[..., None]:
    """``--broker`` and what goes with it, for ``run``, ``demo`` and ``hub``."""
    options = [
        click.option("--broker", help="The MQTT broker: mqtt://HOST:PORT, or mqtts:// for TLS."),
        click.option("--broker-user", help="The user name to log in to the broker with."),
        click.option(
            "--broker-password",
            envvar="TABLESIGHT_BROKER_PASSWORD",
            help="Its password (better: the TABLESIGHT_BROKER_PASSWORD variable).",
        ),
        click.option(
            "--broker-ca",
            type=FilePath(dir_okay=False, path_type=Path),
            help="mqtts://: the certificate authority to check the broker against.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def table_options(command: Callable[..., None]) -> Callable[..., None]:
    """The broker's options and the table's name there."""
    command = click.option(
        "--table-name",
        help="This table's name at the broker and on the hub [default: this computer's name].",
    )(command)
    return broker_options(command)


def broker_link(broker: str, user: str | None, password: str | None, ca: Path | None) -> BrokerLink:
    from tablesight.rules.errors import InputError
    from tablesight.tournament.link import BrokerLink

    if ca is not None and broker.startswith("mqtts://"):
        check_certificates(ca)
    try:
        return BrokerLink.parse(broker, user, password, ca)
    except InputError as exc:
        fail(str(exc))


def login_of(options: dict[str, Any]) -> tuple[str | None, str | None, Path | None]:
    return options["broker_user"], options["broker_password"], options["broker_ca"]


def broker_target(
    table_name: str | None, broker: str | None, options: dict[str, Any]
) -> tuple[BrokerLink, str] | None:
    """The broker to publish to and this table's name there (``--broker``), checked before
    anything starts; ``None`` without ``--broker``."""
    login = login_of(options)
    if broker is None:
        # (a password in TABLESIGHT_BROKER_PASSWORD, left in the shell, is no mistake)
        user, _, ca = login
        if table_name is not None or user is not None or ca is not None:
            fail("--table-name, --broker-user, --broker-ca: give --broker too")
        return None
    import socket

    from tablesight.rules.errors import InputError
    from tablesight.tournament.link import check_name

    link = broker_link(broker, *login)
    try:
        return link, check_name(table_name or socket.gethostname().split(".")[0])
    except InputError as exc:
        fail(f"{exc}{'' if table_name else '; name this table with --table-name'}")


def publish_table(
    referee: Game, server: Server, target: tuple[BrokerLink, str] | None
) -> TablePublisher | None:
    """The table published to the broker, on threads of its own; never waits for it."""
    if target is None:
        return None
    from tablesight.tournament.publisher import TablePublisher

    link, name = target
    publisher = TablePublisher(
        referee, link, name, server.host, server.port, say=click.echo
    ).start()
    click.echo(f"publishing as table {name!r} to {link.url}", err=True)
    return publisher


#: ``OSError.errno`` of an address in use: POSIX's, and Windows' (WSAEADDRINUSE).
ADDRESS_IN_USE = {errno.EADDRINUSE, 10048}
#: How many ports after a taken one are tried for one to suggest.
PORTS_TRIED = 100


def _refused(host: str, port: int) -> OSError | None:
    """Why ``host`` cannot listen on ``port`` now, or ``None`` where it can: each address
    the name stands for, bound as waitress binds it (a port in TIME_WAIT is free, an IPv6
    socket is IPv6 only). A name that stands for nothing is left to the server to say."""
    import socket

    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError):
        return None
    for family, kind, proto, _, address in found:
        with socket.socket(family, kind, proto) as probe:
            if os.name != "nt":
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                return exc
    return None


def free_port_after(host: str, port: int) -> int | None:
    """The first port after ``port`` that ``host`` can listen on now, or ``None``."""
    for candidate in range(port + 1, min(port + 1 + PORTS_TRIED, 65536)):
        if _refused(host, candidate) is None:
            return candidate
    return None


def check_port(host: str, port: int) -> None:
    """``--port`` refused in one line now, before anything is opened or written, when
    another program listens there (the server binds it later, as it starts)."""
    refused = _refused(host, port) if port else None
    if refused is not None:
        cannot_listen(host, port, refused)


def cannot_listen(host: str, port: int, exc: OSError, make_target: str | None = None) -> NoReturn:
    """``--port`` refused in one line: a port taken says so and names a free one to give
    instead (and how to give it to ``make_target``, the Makefile's command running this)."""
    if exc.errno not in ADDRESS_IN_USE:
        fail(f"--port: cannot listen on {host}:{port}: {exc.strerror}")
    line = f"--port: {host}:{port} is taken (another program, or another TableSight, listens there)"
    free = free_port_after(host, port)
    if free is not None:
        line += f"; give another, e.g. --port {free}"
        if make_target is not None:
            line += f' (make {make_target} ARGS="--port {free}")'
    fail(line)


def serve(
    referee: Game,
    host: str,
    port: int,
    setup_url: str | None = None,
    make_target: str | None = None,
) -> Server:
    """The web UI on a thread of its own; prints where to open it."""
    from tablesight.webui.serve import Server

    try:
        server = Server(referee, host, port, setup_url=setup_url).start()
    except ValueError:  # waitress: an address it cannot listen on
        fail(f"--host: cannot listen on {host!r}")
    except OSError as exc:
        cannot_listen(host, port, exc, make_target)
    click.echo(f"table view: {server.url}", err=True)
    if server.token:
        click.echo(
            "  (controls need the token in that URL; viewers without it can only watch)", err=True
        )
    return server
