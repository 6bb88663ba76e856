"""The integration tests that matter, run again with the server on a real Redis Cluster (3 masters, 3 replicas).

Each test here calls the single-node test of the same name with server processes whose ``REDIS_URL`` names a
node of the cluster (``cluster_server``, ``make_cluster_server``, ``cluster_url``): the same assertions, so a
script on keys of two slots, a key read from the wrong node or a command the cluster client cannot route fails
them.
"""

from __future__ import annotations

import asyncio

import pytest
from redis.crc import key_slot

from . import test_no_leaks, test_race, test_resilience, test_spectating
from .conftest import ServerProcess, redis_at
from .wsclient import create_match

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_the_server_uses_the_cluster_client_on_a_cluster(cluster_server: ServerProcess, cluster_url: str) -> None:
    """The match's keys land on the masters the cluster assigns them (not all on the node of REDIS_URL)."""
    codes = [create_match(cluster_server.url, variant="relaxed", seed=f"s{i}", players=2)["code"] for i in range(12)]
    client = redis_at(cluster_url)
    masters = {client.get_node_from_key(f"{{m:{code}}}:meta").name for code in codes}
    assert all(client.hget(f"{{m:{code}}}:meta", "state") == b"lobby" for code in codes)
    assert len(masters) >= 2, masters  # 12 random codes on one master of three: (1/3)^11, not by chance


async def test_a_race_to_ranked_results_on_a_cluster(cluster_server: ServerProcess) -> None:
    await test_race.test_two_players_race_to_ranked_results(cluster_server)


async def test_two_server_processes_serve_one_match_on_a_cluster(make_cluster_server) -> None:  # type: ignore[no-untyped-def]
    await test_resilience.test_two_server_processes_serve_one_match(make_cluster_server)


async def test_killing_a_server_process_mid_match_loses_nothing_on_a_cluster(make_cluster_server) -> None:  # type: ignore[no-untyped-def]
    await test_resilience.test_killing_the_server_mid_match_loses_nothing(make_cluster_server)


async def test_spectating_with_resume_on_a_cluster(cluster_server: ServerProcess, cluster_url: str) -> None:
    await test_spectating.test_events_stream_progress_and_resume_without_loss_or_repeat(cluster_server, cluster_url)


async def test_no_leak_on_a_cluster(cluster_server: ServerProcess) -> None:
    await test_no_leaks.test_frames_do_not_depend_on_the_undrawn_stock_face_down_cards_or_the_seed(cluster_server,
                                                                                            "emperor")


async def test_two_matches_on_one_process_on_a_cluster(cluster_server: ServerProcess) -> None:
    """One process following two matches at once: their streams are on two slots (most likely two nodes), and each
    match's players still see each other's progress (the hub reads each slot's streams in an XREAD of their own)."""
    first = await test_race.lobby_of_two(cluster_server)
    second = await test_race.lobby_of_two(cluster_server)
    for _created, alice, bob in (first, second):
        await alice.expect(test_race.m.Started)
        await bob.expect(test_race.m.Started)
    for _created, alice, bob in (first, second):
        await alice.play("s")
        progress = await bob.expect(test_race.m.Progress)
        assert isinstance(progress, test_race.m.Progress) and progress.name == "alice", progress
    for _created, alice, bob in (first, second):
        await alice.close()
        await bob.close()


async def test_a_burst_of_commands_waits_for_connections_instead_of_failing(cluster_url: str) -> None:
    """redis-py's cluster pool raises MaxConnectionsError past ``max_connections`` connections to a node (a burst
    of players resigning at once, each arming a timer on the timers' node, did); the server's cluster client waits
    for room instead: every command of the burst, single or pipelined, is done."""
    from redis.asyncio.cluster import RedisCluster
    from redis.exceptions import MaxConnectionsError

    from server.store.match_store import WaitingRedisCluster

    key = "{burst-test}:counter"

    async def burst(client: RedisCluster) -> list[object]:
        async def pipelined() -> list[object]:
            async with client.pipeline(transaction=False) as pipe:
                pipe.incr(key)
                pipe.incr(key)
                return await pipe.execute()

        return await asyncio.gather(*(client.incr(key) for _ in range(40)), *(pipelined() for _ in range(10)),
                                    return_exceptions=True)

    plain = RedisCluster.from_url(cluster_url, max_connections=4)
    try:
        await plain.delete(key)
        assert any(isinstance(result, MaxConnectionsError) for result in await burst(plain))  # the failure mode
    finally:
        await plain.aclose()
    waiting = WaitingRedisCluster.from_url(cluster_url, max_connections=4)
    try:
        await waiting.delete(key)
        results = await burst(waiting)
        assert not [r for r in results if isinstance(r, BaseException)], results
        assert int(await waiting.get(key)) == 40 + 2 * 10
        node = waiting.get_node_from_key(key)
        assert len(node._connections) <= 4
        await waiting.delete(key)
    finally:
        await waiting.aclose()


async def test_the_hub_reads_a_node_s_streams_of_many_slots_in_one_pipeline(cluster_url: str) -> None:
    """On the cluster the hub's reads are grouped by node: the streams of 24 matches (several slots on each of the
    three masters) are read with one read in flight per node, a pipeline of one XREAD per slot, and each
    subscriber gets its match's stream whole and in order while all of them are written at once."""
    from protocol.codes import new_code
    from server.hub import Hub
    from server.store import Store, match_feed, redis_client

    from .test_hub import collect, idle, write

    client = redis_client(cluster_url, cluster=True)
    await client.initialize()  # the cluster's layout (the server's first commands read it)
    store = Store(client, 600)
    hub = Hub(store, pause_s=0.005)
    reader = asyncio.create_task(hub.run())
    try:
        codes = [new_code() for _ in range(24)]
        keys_of = [match_feed(code).key for code in codes]
        nodes = {store.stream_group(key) for key in keys_of}
        assert len(nodes) == 3 and len({key_slot(key.encode()) for key in keys_of}) == len(codes)
        written: dict[str, list[tuple[str, bytes]]] = {c: [] for c in codes}
        got: dict[str, list[tuple[str, bytes]]] = {c: [] for c in codes}
        subscriptions = [hub.subscribe(match_feed(c)) for c in codes]
        for subscription in subscriptions:
            await subscription.open()
        readers = [asyncio.create_task(collect(s, "0-0", 40, got[c])) for c, s in zip(codes, subscriptions)]
        await asyncio.sleep(0.05)
        await asyncio.wait_for(asyncio.gather(*(write(store, c, 40, written[c], gap_s=0.002) for c in codes)), 60)
        await asyncio.wait_for(asyncio.gather(*readers), 30)
        for subscription in subscriptions:
            subscription.close()
        assert got == written
        assert idle(hub)
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        await client.aclose()


async def test_the_hub_reads_a_quiet_node_rarely_and_a_new_entry_still_arrives(cluster_url: str) -> None:
    """A node whose followed streams stay quiet is read every ``POLL_MAX_MS`` once its pause has grown, not every
    ``POLL_MS`` (each read is one XREAD per followed slot, so a fixed 20 ms kept a process with quiet matches
    busy): the masters' XREAD counts over a quiet second say so; and the first entry after the quiet spell still
    reaches its subscriber within about that pause."""
    from protocol.codes import new_code
    from server.hub import Hub
    from server.store import Store, match_feed, redis_client
    from server.store.match_store import POLL_MAX_MS, POLL_MS

    from .test_hub import write

    client = redis_client(cluster_url, cluster=True)
    await client.initialize()
    store = Store(client, 600)
    hub = Hub(store, pause_s=0.005)
    reader = asyncio.create_task(hub.run())
    masters = [node for node in client.get_nodes() if node.server_type == "primary"]

    async def xreads() -> int:
        total = 0
        for node in masters:
            stats = await client.info("commandstats", target_nodes=node)
            total += int(stats.get("cmdstat_xread", {}).get("calls", 0))
        return total

    try:
        codes = [new_code() for _ in range(24)]
        slots = len({key_slot(match_feed(code).key.encode()) for code in codes})
        subscriptions = [hub.subscribe(match_feed(c)) for c in codes]
        for subscription in subscriptions:
            await subscription.open()
        await asyncio.sleep(2 * POLL_MAX_MS / 1000 + 0.5)  # the pauses have grown to their longest
        before = await xreads()
        await asyncio.sleep(1.0)
        calls = await xreads() - before
        # At the longest pause each slot is read about 1000 / POLL_MAX_MS times a second; at POLL_MS, 1000 / 20.
        assert calls <= slots * (1000 / POLL_MAX_MS) * 2 < slots * (1000 / POLL_MS) / 3, (calls, slots)
        got: list[tuple[str, bytes]] = []
        arrived = asyncio.get_running_loop().create_future()

        async def first() -> None:
            async for entry in subscriptions[0].events():
                got.append(entry)
                arrived.set_result(asyncio.get_running_loop().time())
                return

        waiting = asyncio.create_task(first())
        written: list[tuple[str, bytes]] = []
        sent = asyncio.get_running_loop().time()
        await write(store, codes[0], 1, written)
        late = await asyncio.wait_for(arrived, 10) - sent
        await waiting
        assert [entry_id for entry_id, _ in got] == [entry_id for entry_id, _ in written]
        assert late < POLL_MAX_MS / 1000 + 0.25, late
        for subscription in subscriptions:
            subscription.close()
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        await client.aclose()
