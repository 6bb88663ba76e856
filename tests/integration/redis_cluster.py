"""A real Redis Cluster on loopback for the cluster tests: 3 masters, 3 replicas, Debian's ``redis-server``.

``python -m tests.integration.redis_cluster start DIR`` starts one and prints its ``REDIS_CLUSTER_URL``
(``.ci/run`` does that); ``stop DIR`` stops it. The fixtures of tests/integration/conftest.py use
:class:`LocalCluster` directly when ``REDIS_CLUSTER_URL`` is unset.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import redis

NODE_TIMEOUT_MS = 2000
"""``cluster-node-timeout``: a master unreachable this long is failed over to its replica (Redis's default,
15 s, would make the failover test wait that long)."""


def free_ports(count: int) -> list[int]:
    """``count`` ports free on loopback, each with its cluster bus port (the port + 10000) free too, drawn at
    random (test runs at the same time do not collide) from 10000-22767: both the port and its bus port then lie
    below Linux's ephemeral range (32768-60999), where an outgoing connection could take one between this check
    and the node's start."""
    import random

    found: list[int] = []
    while len(found) < count:
        port = random.randrange(10000, 22768)
        if port in found or port + 10000 in found or port - 10000 in found:
            continue
        try:
            for candidate in (port, port + 10000):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", candidate))
        except OSError:
            continue
        found.append(port)
    return found


def _binary(name: str) -> str:
    # Debian's first, the Redis the suite is written against, before any other on the PATH (an activated venv's
    # bin comes first there; a Redis older than 7 knows no --enable-debug-command).
    debian = Path(f"/usr/bin/{name}")
    found = str(debian) if debian.exists() else (shutil.which(name) or str(debian))
    if not Path(found).exists():
        raise RuntimeError(f"{name} is not installed (Debian: apt-get install redis-server)")
    return found


def node_client(port: int) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=2)


def cluster_info(port: int) -> dict[str, str]:
    info = node_client(port).execute_command("CLUSTER INFO")  # redis-py parses it into a dict
    return {k: v.decode() if isinstance(v, bytes) else str(v) for k, v in info.items()}



class NoMaster(RuntimeError):
    """No master serves a slot now: while a failed master's replica is not yet promoted, ``CLUSTER SLOTS`` may
    leave its slots out."""

class LocalCluster:
    """Six ``redis-server`` processes with ``cluster-enabled yes`` joined by ``redis-cli --cluster create``.

    :meth:`kill_master_of` SIGKILLs the master serving a key and waits until its replica is promoted;
    :meth:`stop` ends every process it started. Raises :class:`RuntimeError` when the cluster does not
    reach ``cluster_state:ok`` in time.
    """

    def __init__(self, folder: str, masters: int = 3) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.processes: dict[int, subprocess.Popen[bytes]] = {}
        for attempt in range(3):  # a port taken between free_ports and the node's bind: start again on others
            self.ports = free_ports(masters * 2)
            try:
                self._start()
                return
            except RuntimeError:
                self.stop()
                self.processes = {}
                if attempt == 2:
                    raise
            except BaseException:
                self.stop()
                raise

    def _spawn(self, port: int) -> None:
        # --repl-diskless-sync-delay 0: a master starts a replica's full sync at once instead of waiting 5 s
        # (Redis's default) for other replicas to share the transfer; each master here has one replica, so that
        # wait bought nothing and cost 5 s at each cluster's start and each restarted node's rejoin.
        node_dir = self.folder / str(port)
        node_dir.mkdir(exist_ok=True)
        self.processes[port] = subprocess.Popen(
            [_binary("redis-server"), "--port", str(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
             "--cluster-config-file", str(node_dir / "nodes.conf"), "--cluster-node-timeout",
             str(NODE_TIMEOUT_MS), "--save", "", "--appendonly", "no", "--dir", str(node_dir),
             "--enable-debug-command", "local", "--repl-diskless-sync-delay", "0",
             "--logfile", str(node_dir / "redis.log")],  # why a node did not start, should one not
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def _start(self) -> None:
        for port in self.ports:
            self._spawn(port)
        for port in self.ports:
            self._wait(lambda p=port: node_client(p).ping(), f"node {port} did not start")
        subprocess.run([_binary("redis-cli"), "--cluster", "create", *(f"127.0.0.1:{p}" for p in self.ports),
                        "--cluster-replicas", "1", "--cluster-yes"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.STDOUT, timeout=60)
        self.wait_ok()

    @property
    def url(self) -> str:
        """The URL of a live node (the first one started while it lives)."""
        return f"redis://127.0.0.1:{(self.alive() or self.ports)[0]}/0"

    def alive(self) -> list[int]:
        return [port for port, process in self.processes.items() if process.poll() is None]

    def _wait(self, check: Callable[[], object], message: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if check():
                    return
            except (redis.RedisError, NoMaster):  # not yet: a node down, or a slot without a master meanwhile
                pass
            time.sleep(0.05)
        raise RuntimeError(message)

    def wait_ok(self, timeout: float = 30.0) -> None:
        """Until every live node says ``cluster_state:ok`` and every live replica's link to its master is up
        (so a master killed next has a replica holding what it acknowledged)."""
        def ok() -> bool:
            for port in self.alive():
                if cluster_info(port)["cluster_state"] != "ok":
                    return False
                info = node_client(port).info("replication")
                if info["role"] == "slave" and info.get("master_link_status") != "up":
                    return False
            return True

        self._wait(ok, "the cluster did not reach cluster_state:ok", timeout)

    def master_of(self, key: str) -> int:
        """The port of the master serving ``key``'s slot now."""
        slot = int(node_client(self.alive()[0]).execute_command("CLUSTER KEYSLOT", key))
        for start, end, master, *_ in node_client(self.alive()[0]).execute_command("CLUSTER SLOTS"):
            if int(start) <= slot <= int(end):
                return int(master[1])
        raise NoMaster(f"no master serves slot {slot}")

    def another_master(self, port: int) -> int:
        """The port of a live master other than the one on ``port``."""
        return next(other for other in self.alive()
                    if other != port and node_client(other).info("replication")["role"] == "master")

    def replica_of(self, master: int) -> int:
        """The port of the (first) replica connected to the master on port ``master``."""
        info = node_client(master).info("replication")
        return int(info["slave0"]["port"])

    def wait_replicated(self, master: int) -> None:
        """Until the replica of the master on port ``master`` has everything the master has written (their
        replication offsets equal), so that killing the master next loses nothing."""
        def caught_up() -> bool:
            info = node_client(master).info("replication")
            replica = info.get("slave0")
            return bool(replica) and int(replica["offset"]) == int(info["master_repl_offset"])

        self._wait(caught_up, f"the replica of {master} did not catch up")

    def kill(self, port: int) -> None:
        """SIGKILL the node on ``port`` (a crash: nothing it has not sent yet reaches anyone)."""
        process = self.processes[port]
        process.send_signal(signal.SIGKILL)
        process.wait(5)

    def wait_promoted(self, key: str, dead: int) -> int:
        """Until a node other than ``dead`` serves ``key``'s slot and the cluster is ok; that node's port."""
        self._wait(lambda: self.master_of(key) != dead and cluster_info(self.master_of(key))["cluster_state"] == "ok",
                   f"no replica took over from {dead}", timeout=30)
        return self.master_of(key)

    def restart(self, port: int) -> None:
        """Start the node on ``port`` again with its cluster config: it rejoins, as a replica once failed over;
        waits until the cluster is ok with it."""
        self._spawn(port)
        self._wait(lambda: node_client(port).ping(), f"node {port} did not restart")
        self.wait_ok()

    def kill_master_of(self, key: str) -> int:
        """SIGKILL the master of ``key``'s slot, wait until a replica serves it; the port killed."""
        port = self.master_of(key)
        self.kill(port)
        self.wait_promoted(key, port)
        return port

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)


def main(argv: list[str]) -> int:
    command, folder = argv[1], argv[2]
    pids = Path(folder) / "pids"
    if command == "start":
        cluster = LocalCluster(folder)
        pids.write_text(" ".join(str(p.pid) for p in cluster.processes.values()))
        print(cluster.url)
        # The processes outlive this one: .ci/run stops them with "stop".
        return 0
    if command == "stop":
        for pid in pids.read_text().split():
            try:
                os.kill(int(pid), signal.SIGTERM)
            except ProcessLookupError:
                pass
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
