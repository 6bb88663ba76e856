"""A master of the Redis Cluster dies mid-race (SIGKILL of its redis-server): its replica is promoted, the server
processes find it by themselves and the players finish; acknowledged moves lost in the failover are counted,
without ``FTR_REDIS_WAIT_REPLICAS`` and with it (then none).

The race is played through the real client: two ``forty-thieves join CODE --script FILE --json`` subprocesses,
each player on a server process of their own, both processes on a 3+3 cluster. Acknowledged means what a client
printed: a ``position`` line is the server's acknowledgement of that ``seq``.

Redis replicates asynchronously: a move is lost in a failover when its master acknowledged it and died before its
replica had it. On loopback the replica is a fraction of a millisecond behind, so the test opens that window the
way a network fault does: the replica's link to its master is cut (``CLIENT KILL TYPE replica`` on the master,
and a wrong ``masterauth`` on the replica so it cannot reconnect) while both players play on, then the master is
killed. Each test starts a cluster of its own (it kills one of its nodes).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from protocol import messages as m
from protocol.codes import new_code
from server.core.player import Stored
from server.store import Store, keys, redis_client

from .conftest import ROOT, ServerProcess, redis_at, stored_public_ids
from .redis_cluster import NODE_TIMEOUT_MS, LocalCluster, node_client
from .test_race import SEED, VARIANT, solution
from .test_resilience import started_pair
from .test_spectating import read_events
from .wsclient import Player

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

PLAYERS = ("alice", "bob")
BEFORE_CUT = 20
"""Moves each player has acknowledged before the replica's link is cut."""
CUT_S = 1.0
"""How long the players play on with the link cut before the master is killed (at the clients' 36 moves/s,
about 35 moves each without the setting)."""


class Client:
    """One ``forty-thieves join CODE --name NAME --script FILE --json`` subprocess, its JSON lines read as they
    come (by a thread), so that the test can count what it has acknowledged at any moment."""

    def __init__(self, server: str, code: str, name: str, script: Path, env: dict[str, str]) -> None:
        self.name = name
        self.process = subprocess.Popen(
            [sys.executable, "-m", "client_cli", "--server", server, "join", code, "--name", name, "--script",
             str(script), "--json"], cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL)
        self.events: list[dict] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.strip():
                self.events.append(json.loads(line))

    def acknowledged(self) -> int:
        """The highest seq of the ``position`` lines printed so far (0: none)."""
        return max((e["seq"] for e in list(self.events) if e["type"] == "position"), default=0)

    def wait_acknowledged(self, count: int, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while self.acknowledged() < count:
            assert self.process.poll() is None and time.monotonic() < deadline, self.events[-3:]
            time.sleep(0.02)

    def finish(self, timeout: float = 60.0) -> int:
        """Wait for the client to end; its exit status."""
        code = self.process.wait(timeout)
        self._reader.join(5)
        return code

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)
        self._reader.join(5)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


@pytest.fixture
def own_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    cluster = LocalCluster(str(tmp_path / "cluster"))
    yield cluster
    cluster.stop()


def cut_replica_link(cluster: LocalCluster, master: int, replica: int) -> None:
    node_client(replica).config_set("masterauth", "not-the-password")  # its reconnections are refused
    node_client(master).execute_command("CLIENT", "KILL", "TYPE", "replica")
    cluster._wait(lambda: node_client(master).info("replication")["connected_slaves"] == 0,
                  "the replica stayed connected")


def create(server: str, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "client_cli", "--server", server, "create", "--json", "--variant",
                           VARIANT, "--seed", SEED, "--players", "2"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=30, check=True)
    return str(json.loads(done.stdout)["code"])


def race_through_failover(cluster: LocalCluster, folder: Path, wait_replicas: int) -> dict[str, dict]:
    """Both players play the solved deal's moves; the link is cut once each has :data:`BEFORE_CUT`
    acknowledged, the master killed :data:`CUT_S` later. Returns per player: ``cut`` (acknowledged when the cut
    began and when it was done), ``acked`` (when the master died), ``stored`` (the seq the promoted replica
    holds), ``lost``; with the setting, once the race ran to its results, ``events`` (each client's JSON lines)
    and ``logs`` (each player's stored move log)."""
    moves = solution()
    # 40 messages/s (the client keeps to 90 % of it): 215 moves take 6 s, so the kill lands mid-race.
    server_env = {"FTR_REDIS_WAIT_REPLICAS": str(wait_replicas), "FTR_REDIS_WAIT_MS": "10000",
                  "FTR_RATE": "40", "FTR_BURST": "40"}
    servers = [ServerProcess(cluster.url, **server_env), ServerProcess(cluster.url, **server_env)]
    client_env = {**os.environ, "FTR_CLIENT_DATA": str(folder / "client"), "PYTHONUNBUFFERED": "1"}
    client_env.pop("FTR_SERVER", None)
    script = folder / "solution.txt"
    script.write_text("\n".join(moves) + "\n")
    clients: list[Client] = []
    counted: dict[str, dict] = {}
    try:
        code = create(servers[0].url, client_env)
        clients = [Client(server.url, code, name, script, client_env) for server, name in zip(servers, PLAYERS)]
        player_keys = [keys.player_key(code, name) for name in PLAYERS]
        master = cluster.master_of(player_keys[0])  # one match, one slot: both players' keys
        replica = cluster.replica_of(master)
        for client in clients:
            client.wait_acknowledged(BEFORE_CUT)
        began = {client.name: client.acknowledged() for client in clients}
        cut_replica_link(cluster, master, replica)
        counted["cut"] = {client.name: (began[client.name], client.acknowledged()) for client in clients}
        time.sleep(CUT_S)
        counted["acked"] = {client.name: client.acknowledged() for client in clients}
        cluster.kill(master)
        node_client(replica).config_set("masterauth", "")
        assert cluster.wait_promoted(player_keys[0], master) == replica
        store = redis_at(cluster.url)
        counted["stored"] = {name: int(store.hget(key, "seq") or 0) for name, key in zip(PLAYERS, player_keys)}
        counted["lost"] = {n: max(0, counted["acked"][n] - counted["stored"][n]) for n in PLAYERS}
        report = os.environ.get("FTR_FAILOVER_REPORT")
        if report:
            with open(report, "a") as out:
                out.write(json.dumps({"wait_replicas": wait_replicas, **counted}) + "\n")
        if wait_replicas == 0:
            return counted
        cluster.restart(master)  # back as the promoted master's replica: WAIT 1 is answered again
        for client in clients:
            assert client.finish() == 0, client.events[-3:]
        counted["events"] = {client.name: client.events for client in clients}
        counted["logs"] = {name: [entry.decode().partition(" ")[0] for entry in
                                  store.lrange(keys.log_key(code, name), 0, -1)] for name in PLAYERS}
        return counted
    finally:
        for client in clients:
            client.stop()
        for server in servers:
            server.stop()


def test_a_failover_without_waiting_for_replicas_loses_acknowledged_moves(own_cluster: LocalCluster,
                                                                         tmp_path: Path) -> None:
    """Without the setting, what the master acknowledged while its replica was cut off is lost: the promoted
    replica holds what each player had when the link was cut, the clients were told of many moves more."""
    counted = race_through_failover(own_cluster, tmp_path, wait_replicas=0)
    for name in PLAYERS:
        began, done = counted["cut"][name]
        assert began <= counted["stored"][name] <= done
        assert counted["acked"][name] > done + 10  # the players played on during the cut ...
        assert counted["lost"][name] == counted["acked"][name] - counted["stored"][name] > 10  # ... and lost it


def test_with_ftr_redis_wait_replicas_1_a_failover_loses_no_acknowledged_move(own_cluster: LocalCluster,
                                                                            tmp_path: Path) -> None:
    """With ``FTR_REDIS_WAIT_REPLICAS=1`` nothing is acknowledged while no replica confirms it; the master's death
    loses nothing; the servers find the promoted replica, the clients send again what failed, and both players
    finish: every seq acknowledged once in the clients' lines, the same moves in the stored logs and the results."""
    moves = solution()
    counted = race_through_failover(own_cluster, tmp_path, wait_replicas=1)
    for name in PLAYERS:
        assert counted["acked"][name] <= counted["cut"][name][1] + 1  # stalled at the cut (one commit in flight)
        assert counted["lost"][name] == 0
        events = counted["events"][name]
        positions: dict[int, str] = {}
        for event in events:
            if event["type"] == "position":
                assert positions.setdefault(event["seq"], event["command"]) == event["command"]
        assert sorted(positions) == list(range(1, len(moves) + 1))  # every seq acknowledged, none skipped
        assert [positions[seq] for seq in sorted(positions)] == moves
        assert counted["logs"][name] == moves
        results = events[-1]
        assert results["type"] == "results"
        assert sorted((r["name"], r["status"], r["moves"]) for r in results["ranking"]) == [
            ("alice", "won", len(moves)), ("bob", "won", len(moves))]


async def play_through(player: Player, commands: list[str]) -> None:
    """Play ``commands`` in order; one answered ``internal`` or ``unknown_outcome`` (Redis failing over) is sent
    again with the same seq, as the protocol says, for up to a minute."""
    for command in commands:
        deadline = time.monotonic() + 60
        while True:
            seq = player.seq + 1
            await player.send(m.Play(seq, command))
            reply = await player.expect((m.PositionReply, m.Rejected), timeout=60)  # a failover takes seconds
            while isinstance(reply, m.PositionReply | m.Rejected) and reply.seq != seq:
                reply = await player.expect((m.PositionReply, m.Rejected), timeout=60)
            if isinstance(reply, m.PositionReply):
                player.seq = reply.seq
                break
            assert isinstance(reply, m.Error) and reply.code in ("internal", "unknown_outcome"), reply
            assert time.monotonic() < deadline, f"{command} never acknowledged"
            await asyncio.sleep(0.2)


async def test_a_spectator_stream_keeps_its_guarantees_across_a_failover(own_cluster: LocalCluster) -> None:
    """A spectator's Server-Sent Events of a match whose master is SIGKILLed mid-race: the process's stream reader
    rides out the failover by itself (no restart of it logged), and the spectator gets every public event the
    promoted replica holds, in order, none repeated; a resume by id from before the kill gets exactly the rest."""
    moves = solution()
    server = ServerProcess(own_cluster.url, FTR_REDIS_WAIT_REPLICAS="1", FTR_REDIS_WAIT_MS="10000")
    try:
        code, alice, bob = await started_pair(server.url, server.ws_url, server.ws_url)
        events_key = keys.events_key(code)
        async with httpx.AsyncClient(base_url=server.url, timeout=90) as http:
            async with http.stream("GET", f"/matches/{code}/events") as response:
                assert response.status_code == 200
                watching = asyncio.ensure_future(read_events(response, stop_type="results"))
                await play_through(alice, moves[:20])
                before = own_cluster.master_of(events_key)
                await asyncio.to_thread(own_cluster.kill, before)  # nothing in flight: all of it replicated
                playing = asyncio.ensure_future(play_through(alice, moves[20:40]))  # while it fails over
                await asyncio.to_thread(own_cluster.wait_promoted, events_key, before)
                await asyncio.to_thread(own_cluster.restart, before)  # a replica again: WAIT 1 is answered
                await asyncio.wait_for(playing, 90)
                await play_through(alice, moves[40:])
                await bob.resign()
                seen = await asyncio.wait_for(watching, 60)
            public = stored_public_ids(own_cluster.url, code)
            ids = [event["id"] for event in seen]
            assert ids == public  # every public event, in order, none lost, none repeated
            progress = [json.loads(e["data"]) for e in seen if e["event"] == "progress"]
            assert [p["moves"] for p in progress if p["name"] == "alice"] == list(range(1, len(moves) + 1))
            resume_from = next(e["id"] for e in seen if e["event"] == "progress")  # alice's first move, pre-kill
            async with http.stream("GET", f"/matches/{code}/events",
                                   headers={"Last-Event-ID": resume_from}) as response:
                resumed = await asyncio.wait_for(read_events(response, stop_type="results"), 30)
            assert [e["id"] for e in resumed] == public[public.index(resume_from) + 1:]
        await alice.close()
        await bob.close()
    finally:
        server.stop()
    assert reader_failures_not_from_redis(server.logs()) == []


def reader_failures_not_from_redis(logs: str) -> list[str]:
    """The exceptions that ended the event reader, by the last line of each logged traceback, that are not redis-py's
    own. A failover that outlasts the client's retries under load may end the reader with a Redis error, and its
    restart (matches.py, after 0.5 s) is the designed recovery, whose guarantees the test checks by the events; any
    other exception there is a bug. redis-py's own are its ``redis.*`` errors and those raised in its code: a write
    on a connection the kill just closed can leak a transport's ``AttributeError`` or ``TypeError`` from inside
    redis-py instead of its ``ConnectionError`` (redis/redis-py#4287)."""
    found: list[str] = []
    for block in logs.split("event reader failed; restarting")[1:]:
        # The traceback runs to the next log record (a line starting with its date); its exception lines are the
        # ones at the margin, the last one the exception that ended the reader.
        traceback = re.split(r"\n(?=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z )", block, maxsplit=1)[0].splitlines()[1:]
        ends = [line for line in traceback if line and not line.startswith((" ", "Traceback", "During handling",
                                                                            "The above exception"))]
        last = ends[-1] if ends else block[:200]
        # the innermost frame outside asyncio's own modules (which redis-py writes through)
        frames = [line for line in traceback if line.lstrip().startswith('File "')
                  and ("/asyncio/" not in line or "/redis/asyncio/" in line)]
        raised_in_redis = bool(frames) and "/site-packages/redis/" in frames[-1]
        if not (last.startswith("redis.") or raised_in_redis):
            found.append(last)
    return found


def move_slot(cluster: LocalCluster, key: str, to: int) -> None:
    """Migrate ``key``'s slot, with its keys, from the master serving it to the master on port ``to`` (Redis's own
    resharding steps: IMPORTING on the target, MIGRATING on the source, MIGRATE the keys, SETSLOT NODE on every
    master); clients that knew the old layout get MOVED on their next command of the slot."""
    source = cluster.master_of(key)
    slot = int(node_client(source).execute_command("CLUSTER KEYSLOT", key))
    source_id = node_client(source).execute_command("CLUSTER MYID").decode()
    target_id = node_client(to).execute_command("CLUSTER MYID").decode()
    node_client(to).execute_command("CLUSTER SETSLOT", slot, "IMPORTING", source_id)
    node_client(source).execute_command("CLUSTER SETSLOT", slot, "MIGRATING", target_id)
    while names := node_client(source).execute_command("CLUSTER GETKEYSINSLOT", slot, 100):
        node_client(source).execute_command("MIGRATE", "127.0.0.1", to, "", 0, 5000, "KEYS", *names)
    masters = {int(master[1]) for _start, _end, master, *_ in node_client(to).execute_command("CLUSTER SLOTS")}
    for port in (to, source, *(masters - {to, source})):
        node_client(port).execute_command("CLUSTER SETSLOT", slot, "NODE", target_id)
    cluster._wait(lambda: cluster.master_of(key) == to, "the slot did not move")


async def test_a_commit_redirected_by_moved_waits_on_the_node_that_took_it(own_cluster: LocalCluster) -> None:
    """A move whose slot was moved to another master meanwhile (resharding): redis-py's pipeline follows the MOVED
    and the commit runs on the new master, but a WAIT counts only what its own connection wrote on its own node,
    so the WAIT sent to the old master said nothing about it. The move must be acknowledged only once the new
    master's replica has it: with that replica cut off, not before FTR_REDIS_WAIT_MS."""
    server = ServerProcess(own_cluster.url, FTR_REDIS_WAIT_REPLICAS="1", FTR_REDIS_WAIT_MS="1500")
    try:
        code, alice, bob = await started_pair(server.url, server.ws_url, server.ws_url)
        moves = solution()
        await play_through(alice, moves[:3])
        player_key = keys.player_key(code, "alice")
        source = own_cluster.master_of(player_key)
        target = own_cluster.another_master(source)
        move_slot(own_cluster, player_key, target)
        cut_replica_link(own_cluster, target, own_cluster.replica_of(target))
        began = time.monotonic()
        await play_through(alice, moves[3:4])
        took = time.monotonic() - began
        assert took >= 1.4, took  # waited for the new master's replica (in vain: it is cut off) ...
        assert int(redis_at(own_cluster.url).hget(player_key, "seq") or 0) == 4  # ... and stored there once
        await alice.close()
        await bob.close()
    finally:
        server.stop()
    # The server's stream reader reads the match's slot every 100 ms, so its client had learnt the new layout
    # before that commit; a store whose first command of the slot after the move is a commit meets the MOVED
    # inside the commit's pipeline: it must not answer on the old master's WAIT.
    client = redis_client(own_cluster.url, cluster=True)
    store = Store(client, 60, wait_replicas=1, wait_ms=1500)
    try:
        code = next(c for c in (new_code() for _ in range(100))
                    if own_cluster.master_of(keys.player_key(c, "x")) not in (target, source))
        await client.get(keys.meta_key(code))  # the client knows the slot's master
        move_slot(own_cluster, keys.player_key(code, "x"), target)
        record = Stored(1, 0, 0, 0, "playing", 1, 0)
        with pytest.raises(RedisConnectionError, match="redirected"):  # resolved as a lost answer by its caller
            await store.commits.commit(code, "x", 1, 1, "s 1", record, False, [])
    finally:
        await client.aclose()


async def test_the_wake_ups_of_a_stream_follow_its_slot_to_another_master(own_cluster: LocalCluster,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A followed stream's slot moves to another master (resharding): Redis drops the old master's subscription
    of its wake-ups, the hub's listener subscribes again on the new master, and the next entries, written after
    the move, still reach the subscriber within tens of ms each (the safety poll set to a minute: only a wake-up
    can bring them in time), once each and in order, after those written before the move."""
    from server import hub as hub_module
    from server.hub import Hub
    from server.store import match_feed

    from .test_hub import write

    monkeypatch.setattr(hub_module, "SAFETY_POLL_MS", 60_000)
    client = redis_client(own_cluster.url, cluster=True)
    await client.initialize()
    store = Store(client, 600)
    hub = Hub(store.streams, pause_s=0.005)
    reader = asyncio.create_task(hub.run())
    try:
        code = new_code()
        key = match_feed(code).key
        written: list[tuple[str, bytes]] = []
        got: list[tuple[str, bytes]] = []
        async with hub.subscribe(match_feed(code)) as subscription:
            await asyncio.sleep(0.5)
            await write(store, code, 3, written)
            source = own_cluster.master_of(key)
            target = own_cluster.another_master(source)
            await asyncio.to_thread(move_slot, own_cluster, key, target)
            await asyncio.sleep(1.5)  # the listener subscribes on the new master
            loop = asyncio.get_running_loop()
            late = []
            events = subscription.events()
            for i in range(6):
                if i >= 3:
                    sent = loop.time()
                    await write(store, code, 1, written)
                got.append(await asyncio.wait_for(events.__anext__(), 10))
                if i >= 3:
                    late.append(loop.time() - sent)
            await events.aclose()
        assert got == written
        assert max(late) < 0.05, late
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        await client.aclose()


async def test_the_wake_ups_of_a_killed_master_s_streams_resume_on_its_promoted_replica(
        own_cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """The master serving followed streams is SIGKILLed; its replica is promoted. With the safety poll set to a
    minute (only a wake-up can bring an entry in time), entries then added on the killed master's slots, by a
    plain XADD (``add_event``) and by a script (``TRANSITION``), each reach the subscriber within
    :data:`WOKEN_WITHIN_S` of being written, once each and in order after those written before the kill; the
    streams on the other masters keep arriving all through the failover, none lost or repeated, late by no more
    than Redis's own ``CLUSTERDOWN`` lasts (see the comment at that assertion).

    The bound: a wake-up arrives in about a millisecond on loopback; the slowest case is an entry written at the
    moment the promotion shows, before the listener has subscribed on the promoted replica. It subscribes at its
    next try, at most :data:`~server.store.wakeups.RETRY_S` after its last failed one, and that confirmed
    subscription reads the stream; twice that leaves room for a loaded 2-core machine, and is sixty times less
    than the safety poll."""
    from server import hub as hub_module
    from server.hub import Hub
    from server.store import match_feed

    from .test_hub import write

    monkeypatch.setattr(hub_module, "SAFETY_POLL_MS", 60_000)
    client = redis_client(own_cluster.url, cluster=True)
    await client.initialize()
    # The client's default node dies: the worst case for the other masters (see the comment on their bound).
    doomed = client.get_default_node().port
    codes = [new_code() for _ in range(60)]
    on_doomed = [c for c in codes if own_cluster.master_of(match_feed(c).key) == doomed][:3]
    elsewhere = [c for c in codes if own_cluster.master_of(match_feed(c).key) != doomed][:4]
    assert len(on_doomed) == 3 and len(elsewhere) == 4
    store = Store(client, 600)
    hub = Hub(store.streams, pause_s=0.005)
    reader = asyncio.create_task(hub.run())
    loop = asyncio.get_running_loop()
    written: dict[str, list[tuple[str, bytes]]] = {c: [] for c in codes}
    sent_at: dict[tuple[str, str], float] = {}
    """Each entry's (code, id) -> the loop's time its write returned (ids repeat across streams)."""
    got: dict[str, list[tuple[str, bytes]]] = {c: [] for c in codes}
    arrived_at: dict[tuple[str, str], float] = {}

    async def collect(subscription: hub_module.Subscription, code: str) -> None:
        async for entry in subscription.events():
            arrived_at.setdefault((code, entry[0]), loop.time())
            got[code].append(entry)

    async def add(code: str, script: bool) -> tuple[str, str]:
        """One entry on ``code``'s stream, by a script or a plain XADD; ``(code, its id)``, its write's time
        noted."""
        if script:
            assert await store.matches.transition(code, "lobby", "closed", f"{code} closed".encode())
            entry_id = (await client.xrevrange(match_feed(code).key, count=1))[0][0].decode()
            written[code].append((entry_id, f"{code} closed".encode()))
        else:
            await write(store, code, 1, written[code])
            entry_id = written[code][-1][0]
        sent_at[code, entry_id] = loop.time()
        return code, entry_id

    async def arrival(entry_id: tuple[str, str], within: float = 3.0) -> None:
        deadline = loop.time() + within
        while entry_id not in arrived_at and loop.time() < deadline:
            await asyncio.sleep(0.002)

    async def keep_writing(code: str, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                entry_id = await add(code, script=False)
            except RedisError:  # the writer's own client during the failover: the stream is the truth below
                await asyncio.sleep(0.05)
                continue
            await arrival(entry_id)
            await asyncio.sleep(0.05)

    subscriptions = [hub.subscribe(match_feed(c)) for c in on_doomed + elsewhere]
    collectors = []
    try:
        for code, subscription in zip(on_doomed + elsewhere, subscriptions):
            await subscription.open()
            collectors.append(asyncio.create_task(collect(subscription, code)))
        for code in on_doomed:
            assert await store.matches.create(code, {"state": "lobby"})
        await asyncio.sleep(0.5)  # the wake-ups are subscribed to
        for code in on_doomed + elsewhere:
            await arrival(await add(code, script=False))
        await asyncio.to_thread(own_cluster.wait_replicated, doomed)  # the kill loses none of it
        stop = asyncio.Event()
        writers = [asyncio.create_task(keep_writing(code, stop)) for code in elsewhere]
        await asyncio.sleep(0.3)
        await asyncio.to_thread(own_cluster.kill, doomed)
        killed_at = loop.time()
        await asyncio.to_thread(own_cluster.wait_promoted, match_feed(on_doomed[0]).key, doomed)
        promoted_at = loop.time()

        async def after_promotion(i: int, code: str) -> list[tuple[str, str]]:
            # A script's add first on one stream, a plain one first on the others: each kind meets the case of
            # the listener not subscribed again yet.
            ids = []
            for script in ((True, False, False, False) if i == 0 else (False, True, False, False)):
                ids.append(await add(code, script=script))
                await arrival(ids[-1])
                await asyncio.sleep(0.1)
            return ids

        late_ids = await asyncio.wait_for(asyncio.gather(*(after_promotion(i, c) for i, c in enumerate(on_doomed))),
                                          60)
        await asyncio.sleep(1.0)  # the other masters' writers go on a while after the failover too
        stop.set()
        await asyncio.wait_for(asyncio.gather(*writers), 30)
        await asyncio.sleep(0.2)
        late = {entry_id: round(arrived_at.get(entry_id, float("inf")) - sent_at[entry_id], 3)
                for ids in late_ids for entry_id in ids}
        assert max(late.values()) < WOKEN_WITHIN_S, late
        during = [round(arrived_at.get((code, entry_id), float("inf")) - sent, 3) for code in elsewhere
                  for entry_id, _ in written[code] if (sent := sent_at[code, entry_id]) >= killed_at - 0.3]
        after_kill = [sum(1 for entry_id, _ in written[code] if sent_at[code, entry_id] >= killed_at) for code in elsewhere]
        assert min(after_kill) >= 3, after_kill  # each of them written on through the failover and after it
        # Not within WOKEN_WITHIN_S alone: with Redis's default cluster-require-full-coverage (this cluster's)
        # every master answers CLUSTERDOWN from the moment the dead one is flagged failed, a node timeout after
        # the kill at the soonest, until the promotion, so an entry written just before that window may be read
        # only after it. Measured: 12-13 ms in most runs, 0.79 s once (a promotion of 4.3 s). Before the store's
        # client kept the other masters going (WaitingRedisCluster, CommandTableOnce), they were late by the
        # whole failover (4.4-5.3 s for a promotion of 3.7-4.5 s), which this bound fails.
        clusterdown_s = promoted_at - killed_at - NODE_TIMEOUT_MS / 1000
        assert max(during) < clusterdown_s + WOKEN_WITHIN_S, (during, promoted_at - killed_at)
        for code in on_doomed + elsewhere:
            stored = [(entry_id.decode(), fields[b"m"]) for entry_id, fields in
                      await client.xrange(match_feed(code).key)]
            assert got[code] == stored, code  # once each, in order, none lost ...
            assert set(written[code]) <= set(stored), code  # ... and every write acknowledged is there
    finally:
        for subscription in subscriptions:
            subscription.close()
        await asyncio.gather(*collectors, return_exceptions=True)
        reader.cancel()
        # Bounded: a reader that cannot be stopped after a failover would hang the server's shutdown.
        await asyncio.wait_for(asyncio.gather(reader, return_exceptions=True), 10)
        await client.aclose()


WOKEN_WITHIN_S = 1.0
"""The bound of :func:`test_the_wake_ups_of_a_killed_master_s_streams_resume_on_its_promoted_replica` (seconds):
twice the listener's :data:`~server.store.wakeups.RETRY_S`."""


@pytest.mark.parametrize("wait_replicas", [0, 1])
async def test_the_other_masters_serve_the_store_on_while_one_is_failed_over(own_cluster: LocalCluster,
                                                                             wait_replicas: int) -> None:
    """The master that is the store's client's default node is SIGKILLed (the worst case: redis-py asks that node
    ``COMMAND`` when it reads the layout again, and ``COMMAND GETKEYS`` before each XREAD). On each of the other
    masters the store goes on all through the failover: its batched commits (one batch each 10 ms with a commit
    on every master, the dead one's too), its plain writes (``add_event``) and the hub's read of several slots
    (``read_streams``, a pipeline of XREADs) each answer with no gap longer than :data:`HEALTHY_GAP_S`, and none
    fails; the dead master's own commands fail or wait until its replica is promoted.

    The cluster's nodes are set to ``cluster-require-full-coverage no`` (server/README.md, Redis Cluster): with Redis's
    default every master answers ``CLUSTERDOWN`` from the moment the dead one is flagged failed until the
    promotion (0.7-1.4 s on this cluster), whatever the client does. Measured with that setting: gaps of
    50-100 ms (the 10 ms pace on a loaded 2-core machine). Without the client's fixes (:class:`WaitingRedisCluster`'s
    ``aclose``, :class:`CommandTableOnce`, the per-master batches of ``Commits._flush``) the healthy masters
    stopped for the whole failover (3.7-4.4 s for promotions of 3.9-4.3 s), hundreds of their commands failing
    with the dead master's ``ConnectionError``; without any one of them this test failed too (the batches at both
    settings of ``wait_replicas``; the other two with 1, where every batch is a pipeline: redis-py's pipelines,
    unlike its single commands, do not move a failed node out of the default's place)."""

    from server.store import match_feed

    for port in own_cluster.alive():
        node_client(port).config_set("cluster-require-full-coverage", "no")
    client = redis_client(own_cluster.url, cluster=True)
    await client.initialize()
    store = Store(client, 600, wait_replicas=wait_replicas)
    doomed = client.get_default_node().port
    masters = [node.port for node in client.get_primaries()]
    codes: dict[int, list[str]] = {port: [] for port in masters}
    while min(len(found) for found in codes.values()) < 2:  # two streams (two slots) on each master
        code = new_code()
        codes[own_cluster.master_of(match_feed(code).key)].append(code)
    healthy = [port for port in masters if port != doomed]
    loop = asyncio.get_running_loop()
    done: dict[tuple[str, int], list[float]] = {}
    """(kind, master) -> the loop's times its commands answered."""
    failed: dict[tuple[str, int], list[str]] = {}
    stop = asyncio.Event()
    record = Stored(1, 0, 0, 0, "playing", 0, 0)

    async def timed(kind: str, port: int, command: Any) -> None:
        try:
            await command
        except RedisError as error:
            failed.setdefault((kind, port), []).append(f"{type(error).__name__}: {error}")
        else:
            done.setdefault((kind, port), []).append(loop.time())

    async def commits() -> None:
        # Tasks started in one turn of the loop commit in the next one together: one batch with a commit on
        # every master whose last commit has answered (the dead master's wait while redis-py tries again).
        running: dict[int, asyncio.Task[None]] = {}
        while not stop.is_set():
            for port in masters:
                if port not in running or running[port].done():
                    # No such player: the script answers 'stale', a commit's round trip all the same.
                    commit = store.commits.commit(codes[port][0], "nobody", 1, 1, "", record, False, [])
                    running[port] = asyncio.create_task(timed("commit", port, commit))
            await asyncio.sleep(0.01)
        await asyncio.gather(*running.values())

    async def writes(port: int) -> None:
        while not stop.is_set():
            await timed("add_event", port, store.streams.add_event(codes[port][0], b"x"))
            await asyncio.sleep(0.01)

    async def reads(port: int) -> None:
        positions = {match_feed(code).key: "0-0" for code in codes[port][:2]}
        while not stop.is_set():
            await timed("read_streams", port, store.streams.read(positions, 0))
            await asyncio.sleep(0.01)

    tasks = [asyncio.create_task(commits())]
    tasks += [asyncio.create_task(job(port)) for port in healthy for job in (writes, reads)]
    try:
        await asyncio.sleep(0.5)
        killed_at = loop.time()
        await asyncio.to_thread(own_cluster.kill, doomed)
        await asyncio.to_thread(own_cluster.wait_promoted, match_feed(codes[doomed][0]).key, doomed)
        promoted_at = loop.time()
        await asyncio.sleep(1.0)
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), 30)
        await client.aclose()
    gaps = {}
    for (kind, port), times in done.items():
        if port in healthy:
            during = [t for t in times if t >= killed_at - 0.05]
            gaps[kind, port] = round(max(b - a for a, b in itertools.pairwise(during)), 3)
    assert len(gaps) == 3 * len(healthy), (gaps, failed)
    assert not {kind_port: errors for kind_port, errors in failed.items() if kind_port[1] in healthy}, failed
    assert max(gaps.values()) < HEALTHY_GAP_S, (gaps, promoted_at - killed_at)
    assert promoted_at - killed_at > 2 * HEALTHY_GAP_S  # the bound is well below the failover's length


HEALTHY_GAP_S = 0.5
"""The bound of :func:`test_the_other_masters_serve_the_store_on_while_one_is_failed_over` (seconds): more than
ten times the gaps measured, less than a fifth of the failover (the cluster's ``cluster-node-timeout`` is 2 s)."""
