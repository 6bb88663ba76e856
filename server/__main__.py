"""``forty-thieves-server [--host H] [--port P]``: run the race server (settings: server/settings.py).

The start, in order: the settings are read and checked (a bad one is one line naming its variable, exit
status 2), the embedded Redis starts when ``REDIS_URL`` is unset (its failure is one line, exit status 1; no
Redis program to run here: one line saying what to install, exit status 2),
the listening socket is bound (a port in use is one line naming ``--port`` and ``FTR_PORT``, exit status 2),
the app starts (it waits for Redis in the background: :func:`server.app.create_app`), and only then the
listening line is logged. A failure to start after that is logged and ends the server: a Redis that refuses
the server (a wrong password, user or database number) with one line naming ``REDIS_URL`` and exit status 2, as
a bad setting; a bug with its traceback and exit status 3.
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import signal
import socket
import sys
from typing import NoReturn

import uvicorn

from .about import c_paths, describe_c_paths, version, version_line
from .logs import configure_logging, logging_config
from .settings import DECLARATIONS, PORT, SettingError, Settings, help_text

PROGRAM = "forty-thieves-server"

WS_PING_S = 20.0
"""The server pings every WebSocket this often, and closes one whose pong is this late (1011)."""

log = logging.getLogger("forty_thieves.server")


def start_line(host: str, port: int, public_url: str) -> str:
    """What the server says at start: where it listens, who can reach it, and the address friends are told
    (server/README.md, "Hosting a race for friends"). An IPv6 address is written in brackets (``[::]:8000``, RFC 3986), so
    its port is not read as a part of it."""
    where = f"listening on [{host}]:{port}" if ":" in host else f"listening on {host}:{port}"
    if host in ("127.0.0.1", "localhost", "::1"):
        where += (" (this machine only; for friends on your network: --host 0.0.0.0, for the internet: behind a "
                  "TLS proxy, clients then use https://)")
    told = public_url or "the address each client came to (set FTR_PUBLIC_URL to the one friends reach)"
    return f"{where}; join lines name {told}"


def _fail(message: str, status: int = 2) -> NoReturn:
    """One line on stderr, then exit with ``status``."""
    print(f"{PROGRAM}: {message}", file=sys.stderr)
    sys.exit(status)


def _port(text: str) -> int:
    try:
        return PORT(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _pure_solver() -> bool:
    """``FTR_SOLVER`` as the settings read it, for ``--version`` (parsed before the settings are checked: a bad
    value reads as unset here, and the start then refuses it)."""
    try:
        return bool(DECLARATIONS["pure_solver"].parse(os.environ.get("FTR_SOLVER", "")))
    except ValueError:
        return False


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    """The command line: ``--host``, ``--port``, ``--version``; ``--help`` lists every setting."""
    parser = argparse.ArgumentParser(prog=PROGRAM, description="Forty Thieves Race server",
                                     epilog=help_text(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", help=f"address to listen on (default: FTR_HOST, else {DECLARATIONS['host'].shown}; "
                                       "0.0.0.0 for every interface)")
    parser.add_argument("--port", type=_port, help=f"port to listen on (default: FTR_PORT, else "
                                                   f"{DECLARATIONS['port'].shown})")
    parser.add_argument("--version", action="version", version=version_line(PROGRAM, _pure_solver()))
    return parser.parse_args(argv)


def bind(host: str, port: int) -> socket.socket:
    """The server's listening socket, bound to ``host``:``port`` (not yet listening: uvicorn does that) as
    uvicorn's own bind makes it: IPv6 for an address with a colon, else IPv4 (a host name such as
    ``localhost`` too, wherever the resolver lists its ``::1`` first).

    Raises ``OSError`` as the system does (``EADDRINUSE``: another process listens there; ``socket.gaierror``:
    a name that does not resolve)."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        # As uvicorn's: a restart may take the port while the last run's connections sit in TIME_WAIT (on Linux
        # this never lets two servers listen on one port).
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _bind_or_fail(host: str, port: int) -> socket.socket:
    try:
        return bind(host, port)
    except socket.gaierror as error:
        _fail(f"cannot listen on {host}: the address is not known ({error.strerror}): choose another with --host "
              "or FTR_HOST")
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            _fail(f"port {port} on {host} is in use (another server?): choose another with --port or FTR_PORT")
        if error.errno == errno.EADDRNOTAVAIL:
            _fail(f"cannot listen on {host}: no interface of this machine has that address: choose another with "
                  "--host or FTR_HOST")
        _fail(f"cannot listen on {host}:{port} ({error.strerror}): choose another with --port or FTR_PORT")


class _Server(uvicorn.Server):
    """uvicorn's server, which logs :func:`start_line` once it serves (after the app's startup), not before,
    after uvicorn's own "Uvicorn running on ..." (which uvicorn leaves out when it is handed the socket)."""

    def __init__(self, config: uvicorn.Config, line: str) -> None:
        super().__init__(config)
        self._line = line

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._log_started_message(sockets or [])  # uvicorn's, not public API (the pinned 0.54)
            log.info("%s", self._line)


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, check every setting, bind the port, and run uvicorn with the app: WebSocket
    frames capped, no deflate, the connection limits of :mod:`server.connection_limits`, keep-alive pings, and
    forwarded headers trusted only from ``FTR_FORWARDED_ALLOW_IPS`` (uvicorn alone trusts them from
    127.0.0.1, so on a machine with no proxy anyone could claim any address)."""
    args = parse_arguments(argv)
    if args.host is not None:
        os.environ["FTR_HOST"] = args.host
    if args.port is not None:
        os.environ["FTR_PORT"] = str(args.port)
    try:
        settings = Settings.from_environ()
    except SettingError as error:
        _fail(str(error))
    configure_logging(settings.log_level, settings.log_format)  # server/logs.py: uvicorn's lines alike
    # Late: the app's imports (Starlette, redis-py, the engine) are not needed for --help, --version or a bad
    # setting.
    from .app import create_app
    from .connection_limits import protocol_classes
    from .embedded_redis import EmbeddedRedis
    from .redis_program import NoRedisServer

    embedded = None
    terminated: list[int] = []
    if settings.redis_url is None:
        # Before uvicorn starts, so a failure (a folder another server owns, a Redis that cannot start) is one
        # clear line and exit status 1, not a traceback from the app's startup.
        try:
            embedded = EmbeddedRedis(settings.data_dir)
        except NoRedisServer as error:  # nothing to run here: what to install (server/README.md, "The embedded Redis")
            _fail(str(error))
        except Exception as error:  # noqa: BLE001 - whatever stops it, the server cannot run: one line
            _fail(f"the embedded Redis did not start: {error}", status=1)
    try:
        sock = _bind_or_fail(settings.host, settings.port)
        log.info("%s %s (%s)", PROGRAM, version(), describe_c_paths(c_paths(settings.pure_solver)))
        http, ws = protocol_classes(settings)
        app = create_app(settings, redis_url=embedded.url if embedded is not None else None)
        config = uvicorn.Config(
            app, host=settings.host, port=settings.port,
            http=http, ws=ws, ws_max_size=64 * 1024, ws_per_message_deflate=False,
            ws_ping_interval=WS_PING_S, ws_ping_timeout=WS_PING_S, timeout_keep_alive=settings.keepalive_s,
            proxy_headers=bool(settings.forwarded_allow_ips), forwarded_allow_ips=settings.forwarded_allow_ips or "",
            timeout_graceful_shutdown=2, log_config=logging_config(settings.log_level, settings.log_format),
            log_level=settings.log_level,
        )
        server = _Server(config, start_line(settings.host, sock.getsockname()[1], settings.public_url))
        # uvicorn raises the signal that stopped it again once it has shut down, under the handler there was
        # before it ran: this one notes a SIGTERM, so that the embedded Redis is stopped (below) before the
        # process ends of it, as uvicorn meant.
        signal.signal(signal.SIGTERM, lambda number, frame: terminated.append(number))
        try:
            server.run(sockets=[sock])
        except KeyboardInterrupt:  # the Ctrl-C raised again: nothing left to do
            pass
        if not server.started or app.state.failed:  # the app could not start (uvicorn or the app logged why)
            sys.exit(app.state.failed or 3)
    finally:
        if embedded is not None:
            embedded.close()
    if terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.raise_signal(signal.SIGTERM)


if __name__ == "__main__":
    main()
