"""``forty-thieves-server [--host H] [--port P]``: run the race server (settings: server/settings.py)."""

from __future__ import annotations

import argparse
import logging
import os
import sys

import uvicorn

from .connections import protocol_classes
from .embedded_redis import DataFolderInUse, NoRedisServer, claim_data_folder, find_redis_server
from .logs import configure_logging, logging_config
from .settings import Settings

WS_PING_S = 20.0
"""The server pings every WebSocket this often, and closes one whose pong is this late (1011)."""


def start_line(host: str, port: int, public_url: str) -> str:
    """What the server says at start: where it listens, who can reach it, and the address friends are told
    (README "Hosting a race for friends")."""
    where = f"listening on {host}:{port}"
    if host in ("127.0.0.1", "localhost", "::1"):
        where += (" (this machine only; for friends on your network: --host 0.0.0.0, for the internet: behind a "
                  "TLS proxy, clients then use https://)")
    told = public_url or "the address each client came to (set FTR_PUBLIC_URL to the one friends reach)"
    return f"{where}; join lines name {told}"


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run uvicorn with the app: WebSocket frames capped, no deflate, the
    connection limits of :mod:`server.connections`, keep-alive pings, and forwarded headers trusted only
    from ``FTR_FORWARDED_ALLOW_IPS`` (uvicorn alone trusts them from 127.0.0.1, so on a machine with no
    proxy anyone could claim any address)."""
    defaults = Settings.from_environ()
    parser = argparse.ArgumentParser(prog="forty-thieves-server", description="Forty Thieves Race server")
    parser.add_argument("--host", default=defaults.host)
    parser.add_argument("--port", type=int, default=defaults.port)
    args = parser.parse_args(argv)
    os.environ["FTR_HOST"], os.environ["FTR_PORT"] = args.host, str(args.port)
    settings = Settings.from_environ()
    configure_logging(settings.log_level, settings.log_format)  # server/logs.py: uvicorn's lines alike
    if settings.redis_url is None:
        # Before uvicorn starts, so a folder another server owns is one clear line and exit status 1, not a
        # traceback from the app's startup; the app's EmbeddedRedis then finds the folder claimed by this process.
        # The same for a machine with no Redis program to embed: one line saying what to install, exit status 2.
        try:
            claim_data_folder(settings.data_dir)
            find_redis_server()
        except DataFolderInUse as error:
            sys.exit(f"forty-thieves-server: {error}")
        except NoRedisServer as error:
            print(f"forty-thieves-server: {error}", file=sys.stderr)
            sys.exit(2)
    http, ws = protocol_classes(settings)
    logging.getLogger("forty_thieves.server").info("%s", start_line(args.host, args.port, settings.public_url))
    uvicorn.run(
        "server.app:create_app", factory=True, host=args.host, port=args.port,
        http=http, ws=ws, ws_max_size=64 * 1024, ws_per_message_deflate=False,
        ws_ping_interval=WS_PING_S, ws_ping_timeout=WS_PING_S, timeout_keep_alive=settings.keepalive_s,
        proxy_headers=bool(settings.forwarded_allow_ips), forwarded_allow_ips=settings.forwarded_allow_ips or "",
        timeout_graceful_shutdown=2, log_config=logging_config(settings.log_level, settings.log_format),
        log_level=settings.log_level,
    )


if __name__ == "__main__":
    main()
