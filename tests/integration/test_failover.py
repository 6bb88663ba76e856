"""A master of the Redis Cluster dies mid-race (SIGKILL of its redis-server): its replica is promoted, the server
processes find it by themselves and the players continue; acknowledged moves lost in the failover are counted,
without ``FTR_REDIS_WAIT_REPLICAS`` and with it (then none).

Redis replicates asynchronously: a move is lost in a failover when its master acknowledged it and died before its
replica had it. On loopback the replica is a fraction of a millisecond behind, so the test opens that window the
way a network fault does: the replica's link to its master is cut (``CLIENT KILL TYPE replica`` on the master,
and a wrong ``masterauth`` on the replica so it cannot reconnect) while Alice plays on, then the master is killed.
Each test starts a cluster of its own (it kills one of its nodes).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from protocol import messages as m
from server.store import keys

from .conftest import ServerProcess, redis_at
from .redis_cluster import LocalCluster, node_client
from .test_race import solution
from .test_resilience import started_pair

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

PLAYED_BEFORE = 10
"""Moves Alice plays, all replicated, before the replica's link is cut."""
PLAYED_DURING = 20
"""Moves Alice tries while the link is cut (each acknowledged at once without the setting, none with it)."""


@pytest.fixture
def own_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    cluster = LocalCluster(str(tmp_path / "cluster"))
    yield cluster
    cluster.stop()


async def play_on(player, commands: list[str], acked: list[int], tries: int = 40) -> None:  # type: ignore[no-untyped-def]
    """Play ``commands`` in order; a command answered with an error (Redis failing over) is sent again with the
    same seq, up to ``tries`` times; each acknowledged seq goes to ``acked``."""
    for command in commands:
        for _ in range(tries):
            seq = player.seq + 1
            await player.send(m.Play(seq, command))
            reply = await player.expect((m.Position, m.Rejected), timeout=60)  # a failover takes seconds
            while isinstance(reply, m.Position | m.Rejected) and reply.seq != seq:
                reply = await player.expect((m.Position, m.Rejected), timeout=60)
            if isinstance(reply, m.Position):
                player.seq = reply.seq
                acked.append(reply.seq)
                break
            assert isinstance(reply, m.Error) and reply.code in ("internal", "unknown_outcome"), reply
            await asyncio.sleep(0.2)
        else:
            raise AssertionError(f"{command} never acknowledged")


def cut_replica_link(cluster: LocalCluster, master: int, replica: int) -> None:
    node_client(replica).config_set("masterauth", "not-the-password")  # its reconnections are refused
    node_client(master).execute_command("CLIENT", "KILL", "TYPE", "replica")
    cluster._wait(lambda: node_client(master).info("replication")["connected_slaves"] == 0,
                  "the replica stayed connected")


def race_through_failover(cluster: LocalCluster, wait_replicas: int) -> dict[str, int]:
    """The race; returns what was counted: ``acked`` (Alice's moves acknowledged when her master died),
    ``stored`` (her moves the promoted replica holds), ``lost``, and on success the final ``moves``."""
    moves = solution()
    env = {"FTR_REDIS_WAIT_REPLICAS": str(wait_replicas), "FTR_REDIS_WAIT_MS": "10000"}
    a, b = ServerProcess(cluster.url, **env), ServerProcess(cluster.url, **env)
    counted: dict[str, int] = {}

    async def run() -> None:
        code, alice, bob = await started_pair(a.url, a.ws_url, b.ws_url)  # Alice on one process, Bob on the other
        player_key = keys.player_key(code, "alice")
        master = cluster.master_of(player_key)
        replica = cluster.replica_of(master)
        acked: list[int] = []
        await play_on(alice, moves[:PLAYED_BEFORE], acked)
        await bob.play("s")
        cut_replica_link(cluster, master, replica)
        playing = asyncio.create_task(play_on(alice, moves[PLAYED_BEFORE:PLAYED_BEFORE + PLAYED_DURING], acked))
        await asyncio.sleep(1.0)  # without the setting every one is acknowledged by now; with it none
        counted["acked"] = max(acked)
        cluster.kill(master)
        node_client(replica).config_set("masterauth", "")
        promoted = await asyncio.to_thread(cluster.wait_promoted, player_key, master)
        assert promoted == replica
        counted["stored"] = int(redis_at(cluster.url).hget(player_key, "seq") or 0)
        counted["lost"] = max(0, counted["acked"] - counted["stored"])
        await asyncio.to_thread(cluster.restart, master)  # back as the new master's replica
        if wait_replicas == 0:
            playing.cancel()
            await alice.close()
            await bob.close()
            return
        # Players continue: every acknowledged move is kept, the race ends with all of Alice's moves.
        await asyncio.wait_for(playing, 60)
        await play_on(alice, moves[PLAYED_BEFORE + PLAYED_DURING:], acked)
        assert acked == list(range(1, len(moves) + 1))
        await bob.resign()
        results = await alice.expect(m.Results, timeout=30)
        assert isinstance(results, m.Results), results
        assert [(r.name, r.status, r.moves) for r in results.ranking] == [("alice", "won", len(moves)),
                                                                          ("bob", "resigned", 1)]
        counted["moves"] = results.ranking[0].moves
        await alice.close()
        await bob.close()

    try:
        asyncio.run(run())
    finally:
        a.stop()
        b.stop()
    report = os.environ.get("FTR_FAILOVER_REPORT")
    if report:
        with open(report, "a") as out:
            out.write(json.dumps({"wait_replicas": wait_replicas, **counted}) + "\n")
    return counted


def test_a_failover_without_waiting_for_replicas_loses_acknowledged_moves(own_cluster: LocalCluster) -> None:
    """Without the setting, the moves the master acknowledged while its replica was cut off are lost: the count
    is what the test reports (here every one of them, as the replica never got any)."""
    counted = race_through_failover(own_cluster, wait_replicas=0)
    assert counted["stored"] == PLAYED_BEFORE  # the promoted replica holds what it had before the cut
    assert counted["acked"] == PLAYED_BEFORE + PLAYED_DURING
    assert counted["lost"] == PLAYED_DURING


def test_with_ftr_redis_wait_replicas_1_a_failover_loses_no_acknowledged_move(own_cluster: LocalCluster) -> None:
    counted = race_through_failover(own_cluster, wait_replicas=1)
    assert counted["acked"] == PLAYED_BEFORE  # nothing was acknowledged while no replica confirmed it
    assert counted["lost"] == 0
    assert counted["moves"] == len(solution())
