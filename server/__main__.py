"""``forty-thieves-server [--host H] [--port P]``: run the race server (settings: server/settings.py)."""

from __future__ import annotations

import argparse
import logging
import os

import uvicorn

from .settings import Settings


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run uvicorn with the app (WebSocket frames capped, no deflate)."""
    defaults = Settings.from_environ()
    parser = argparse.ArgumentParser(prog="forty-thieves-server", description="Forty Thieves Race server")
    parser.add_argument("--host", default=defaults.host)
    parser.add_argument("--port", type=int, default=defaults.port)
    args = parser.parse_args(argv)
    os.environ["FTR_HOST"], os.environ["FTR_PORT"] = args.host, str(args.port)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    uvicorn.run(
        "server.app:create_app", factory=True, host=args.host, port=args.port,
        ws_max_size=64 * 1024, ws_per_message_deflate=False, timeout_graceful_shutdown=2, log_level="info",
    )


if __name__ == "__main__":
    main()
