"""The integration tests that matter, run again with the server on a real Redis Cluster (3 masters, 3 replicas).

Each test here calls the single-node test of the same name with server processes whose ``REDIS_URL`` names a
node of the cluster (``cluster_server``, ``make_cluster_server``, ``cluster_url``): the same assertions, so a
script on keys of two slots, a key read from the wrong node or a command the cluster client cannot route fails
them.
"""

from __future__ import annotations

import asyncio
import collections
from typing import TYPE_CHECKING, Self

import pytest
from redis.crc import key_slot

from . import test_no_leaks, test_race, test_resilience, test_spectating
from .conftest import ServerProcess, redis_at
from .wsclient import create_match

if TYPE_CHECKING:
    from server.hub import Subscription

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_the_server_uses_the_cluster_client_on_a_cluster(cluster_server: ServerProcess, cluster_url: str) -> None:
    """The match's keys land on the masters the cluster assigns them (not all on the node of REDIS_URL)."""
    codes = [create_match(cluster_server.url, variant="relaxed", seed=f"s{i}", players=2)["code"] for i in range(12)]
    with redis_at(cluster_url) as client:  # closed: an unclosed client's sockets warn when collected
        masters = {client.get_node_from_key(f"{{m:{code}}}:meta").name for code in codes}
        assert all(client.hget(f"{{m:{code}}}:meta", "state") == b"lobby" for code in codes)
    assert len(masters) >= 2, masters  # 12 random codes on one master of three: (1/3)^11, not by chance


@pytest.mark.skipif("not config.getoption('loadgroup', False)",
                    reason="not run by an xdist worker under --dist loadgroup: no groups to send")
def test_the_cluster_tests_are_grouped_on_one_worker(cluster_url: str, request: pytest.FixtureRequest) -> None:
    """Under ``--dist loadgroup`` (the suite's default) pytest-xdist sends a grouped test with its group's name
    after an ``@`` in its id; without it the cluster tests are spread over the workers, each waiting on the
    cluster's lock in turn (tests/integration/conftest.py) instead of running one after the other on one."""
    assert request.node.nodeid.endswith("@cluster"), request.node.nodeid


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

    from server.store.client import WaitingRedisCluster

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


async def test_the_cluster_client_asks_no_command_table_after_its_first(cluster_url: str) -> None:
    """redis-py's cluster client asks the default node for ``COMMAND`` at every reading of the layout and for
    ``COMMAND GETKEYS`` before each XREAD (so a dead default node stalls every node's commands); the server's
    client asks for neither once it has the table: the nodes count no such call across readings and XREADs."""
    import redis.asyncio as aioredis
    from redis.asyncio.cluster import RedisCluster

    from server.store import redis_client

    key = "{command-table-test}:events"

    async def asked(client: RedisCluster) -> int:
        """``COMMAND`` and ``COMMAND GETKEYS`` calls counted by every node of the cluster so far."""
        total = 0
        for node in client.get_nodes():
            with_node = aioredis.Redis(host=node.host, port=node.port)
            try:
                stats = await with_node.info("commandstats")
            finally:
                await with_node.aclose()
            total += sum(int(stats.get(name, {}).get("calls", 0)) for name in ("cmdstat_command",
                                                                              "cmdstat_command|getkeys"))
        return total

    async def calls(client: RedisCluster) -> int:
        await client.initialize()
        await client.xread({key: "0-0"}, count=1)
        before = await asked(client)
        for _ in range(3):
            client._initialize = True  # as after a connection error: the layout is read again
            await client.initialize()
            await client.xread({key: "0-0"}, count=1)
        return await asked(client) - before

    plain = RedisCluster.from_url(cluster_url)
    try:
        assert await calls(plain) >= 3  # the failure mode: the table read again, GETKEYS before each XREAD
    finally:
        await plain.aclose()
    server_client = redis_client(cluster_url, cluster=True)
    assert isinstance(server_client, RedisCluster)
    try:
        assert await calls(server_client) == 0
    finally:
        await server_client.aclose()


async def test_the_hub_reads_a_node_s_streams_of_many_slots_in_one_pipeline(cluster_url: str) -> None:
    """On the cluster the hub's reads are grouped by node: the streams of 24 matches (several slots on each of the
    three masters) are read with one read in flight per node, a pipeline of one XREAD per slot, and each
    subscriber gets its match's stream whole and in order while all of them are written at once."""
    from protocol.codes import new_code
    from server.hub import Hub
    from server.store import Store, match_feed, redis_client

    from .test_hub import follow, idle, write

    client = redis_client(cluster_url, cluster=True)
    await client.initialize()  # the cluster's layout (the server's first commands read it)
    store = Store(client, 600)
    hub = Hub(store.streams, pause_s=0.005)
    reader = asyncio.create_task(hub.run())
    try:
        codes: list[str] = []
        slots: set[int] = set()
        while len(codes) < 24:  # 24 slots: 24 random codes share a slot about once in 60 runs
            code = new_code()
            slot = key_slot(match_feed(code).key.encode())
            if slot not in slots:
                codes.append(code)
                slots.add(slot)
        keys_of = [match_feed(code).key for code in codes]
        nodes = {store.streams.group(key) for key in keys_of}
        assert len(nodes) == 3 and len({key_slot(key.encode()) for key in keys_of}) == len(codes)
        written: dict[str, list[tuple[str, bytes]]] = {c: [] for c in codes}
        subscriptions, got, readers = await follow(hub, codes, 40)
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


class ClusterHub:
    """A hub reading streams on the test cluster (``async with``: its reader runs), with the masters' XREAD
    counts at hand."""

    def __init__(self, cluster_url: str) -> None:
        from server.hub import Hub
        from server.store import Store, redis_client

        self.client = redis_client(cluster_url, cluster=True)
        self.store = Store(self.client, 600)
        self.hub = Hub(self.store.streams, pause_s=0.005)

    async def __aenter__(self) -> Self:
        await self.client.initialize()  # the cluster's layout (the server's first commands read it)
        self.reader = asyncio.create_task(self.hub.run())
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.reader.cancel()
        await asyncio.gather(self.reader, return_exceptions=True)
        await self.client.aclose()

    def masters(self) -> list:  # type: ignore[type-arg]
        return [node for node in self.client.get_nodes() if node.server_type == "primary"]

    async def xreads(self) -> int:
        """XREAD calls the masters have served so far (INFO commandstats)."""
        total = 0
        for node in self.masters():
            stats = await self.client.info("commandstats", target_nodes=node)
            total += int(stats.get("cmdstat_xread", {}).get("calls", 0))
        return total


def state(test: ClusterHub, got: dict[str, list[tuple[str, bytes]]]) -> str:
    """What a failed wait for entries shows: the entries got by code, and the reader's and the listener's state."""
    wake_ups = test.hub.wake_ups
    assert wake_ups is not None
    reader = ("running" if not test.reader.done() else "cancelled" if test.reader.cancelled()
              else repr(test.reader.exception()))
    awaiting = []  # the hub's reads and the listener's tasks in flight, each with the line it waits on
    for task in asyncio.all_tasks():
        name = getattr(task.get_coro(), "__qualname__", "")
        if name.startswith(("Hub.", "WakeUps.")):
            chain, awaited = [], task.get_coro()
            while awaited is not None and len(chain) < 12:  # down the awaits to where it waits
                frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
                if frame is not None:
                    chain.append(f"{frame.f_code.co_name}:{frame.f_lineno}")
                awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
            awaiting.append(f"{name} > {' > '.join(chain[1:])}")
    return (f"got {({code: len(entries) for code, entries in got.items()})}; reader {reader}; woken {test.hub._woken}; "
            f"subscribed {len(wake_ups.subscribed())}; failures {wake_ups._failures}; unsure {wake_ups._unsure}; "
            f"tasks {sorted(awaiting)}")


async def first_entry(subscription: Subscription) -> tuple[float, tuple[str, bytes]]:
    """The loop's time when the subscription's first live entry arrives, and that entry."""
    async for entry in subscription.events():
        return asyncio.get_running_loop().time(), entry
    raise AssertionError("the subscription ended")


async def test_the_hub_reads_a_woken_stream_at_once_and_quiet_streams_once_a_safety_poll(
        cluster_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the safety poll set to a minute, so that only a wake-up can bring an entry in time: the first entry
    after a quiet spell, added by a plain XADD (``add_event``) or by a script (``TRANSITION``), reaches its
    subscriber within tens of ms. Then, with the safety poll back at its second, the masters' XREAD count over
    two quiet seconds is about one per followed slot per second (polling each node every 20-250 ms would read
    each slot 4 to 50 times a second)."""
    from protocol.codes import new_code
    from server import hub as hub_module
    from server.hub import SAFETY_POLL_MS
    from server.store import match_feed

    from .test_hub import write

    monkeypatch.setattr(hub_module, "SAFETY_POLL_MS", 60_000)
    async with ClusterHub(cluster_url) as test:
        codes = [new_code() for _ in range(24)]
        slots = len({key_slot(match_feed(code).key.encode()) for code in codes})
        subscriptions = [test.hub.subscribe(match_feed(c)) for c in codes]
        for subscription in subscriptions:
            await subscription.open()
        for code in codes[:2]:
            assert await test.store.matches.create(code, {"state": "lobby"})
        await asyncio.sleep(1.0)  # quiet: the subscriptions are made and the reads they woke are done
        loop = asyncio.get_running_loop()
        for i, code in enumerate(codes[:6]):
            waiting = asyncio.create_task(first_entry(subscriptions[i]))
            await asyncio.sleep(0.05)
            sent = loop.time()
            if i < 2:  # a script's XADD
                assert await test.store.matches.transition(code, "lobby", "closed", f"{code} closed".encode())
                expected = (await test.client.xrange(match_feed(code).key))[-1][0].decode()
            else:
                written: list[tuple[str, bytes]] = []
                await write(test.store, code, 1, written)
                expected = written[0][0]
            arrived, (entry_id, _frame) = await asyncio.wait_for(waiting, 10)
            assert entry_id == expected
            assert arrived - sent < 0.05, (code, arrived - sent)
        monkeypatch.setattr(hub_module, "SAFETY_POLL_MS", SAFETY_POLL_MS)
        await asyncio.sleep(2.5)  # the reader's next round (at most 0.5 s away) plans the polls a second apart
        before = await test.xreads()
        await asyncio.sleep(2.0)
        calls = await test.xreads() - before
        # Two safety polls, three at a boundary, of one XREAD per slot; polling would read each slot >= 8 times.
        assert calls <= 3 * slots, (calls, slots)
        for subscription in subscriptions:
            subscription.close()


async def test_entries_arrive_once_in_order_when_the_wake_up_connections_are_killed(
        cluster_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """CLIENT KILL TYPE pubsub on every master, twice, while six matches' streams are written: the wake-ups
    published while the listener subscribes again are lost, yet each subscriber gets its stream whole, once, in
    order, within the design's bound (a safety poll, :data:`~server.hub.SAFETY_POLL_MS`, after the last write);
    then, with the safety poll set to a minute, the wake-ups alone bring the next entries: redis-py connects a
    killed connection again before it raises, so the listener reads on after a pause of a few ms, not of
    :data:`~server.store.wakeups.RETRY_S`.

    (With the safety poll at a minute from the start, a stream's last entry was now and then still missing a
    second after the kills, with no wake-up pending and every node's fence answered; its cause was not found,
    and the design's bound is what the safety poll is for. The cluster tests then ran on both xdist workers at
    once, beside one that empties the cluster: a later failure of this test found its streams shorter than
    written, 26 entries of 40.)"""
    from protocol.codes import new_code
    from server import hub as hub_module
    from server.hub import SAFETY_POLL_MS
    from server.store import match_feed

    from .test_hub import follow, write

    async with ClusterHub(cluster_url) as test:
        codes = [new_code() for _ in range(6)]
        written: dict[str, list[tuple[str, bytes]]] = {c: [] for c in codes}
        subscriptions, got, readers = await follow(test.hub, codes, 60)
        await asyncio.sleep(0.5)
        writing = asyncio.gather(*(write(test.store, c, 40, written[c], gap_s=0.005) for c in codes))
        killed = 0
        for _ in range(2):
            await asyncio.sleep(0.1)
            for node in test.masters():
                killed += int(await test.client.execute_command("CLIENT KILL", "TYPE", "pubsub", target_nodes=node))
        await asyncio.wait_for(writing, 30)
        assert killed >= 2, killed  # the hub's subscribed connections were killed
        loop = asyncio.get_running_loop()
        bound = loop.time() + SAFETY_POLL_MS / 1000 + 1.0
        while not all(len(got[c]) == 40 for c in codes) and loop.time() < bound:
            await asyncio.sleep(0.05)
        if not all(len(got[c]) == 40 for c in codes):
            lengths = {c: await test.client.xlen(match_feed(c).key) for c in codes}
            late = {c: (written[c][-1][0], test.hub.positions.get(match_feed(c).key)) for c in codes
                    if len(got[c]) < 40}
            raise AssertionError(f"{state(test, got)}; xlen {lengths}; (last written, position) {late}")
        monkeypatch.setattr(hub_module, "SAFETY_POLL_MS", 60_000)
        await asyncio.sleep(SAFETY_POLL_MS / 1000)  # the reader's next poll is planned a minute away
        sent = loop.time()
        await asyncio.gather(*(write(test.store, c, 20, written[c]) for c in codes))
        await asyncio.wait_for(asyncio.gather(*readers), 10)
        assert loop.time() - sent < 5.0  # by wake-ups: the safety poll would take a minute
        assert got == written
        for subscription in subscriptions:
            subscription.close()


async def test_a_killed_wake_up_connection_is_fenced_by_a_ping_whose_answer_wakes_its_streams(
        cluster_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries added without a wake-up (a plain XADD: as if their wake-ups were lost) stay unread with the safety
    poll at a minute; then CLIENT KILL TYPE pubsub on every master, with the confirmations of the subscriptions
    made again ignored: the listener sends one PING down each node's new connection, and its answer alone has
    every stream followed there read, so the entries arrive and no node is left unfenced."""
    from redis.asyncio.client import PubSub

    from protocol.codes import new_code
    from server import hub as hub_module
    from server.store import match_feed

    from .test_hub import follow

    monkeypatch.setattr(hub_module, "SAFETY_POLL_MS", 60_000)
    pings: list[PubSub] = []
    ping, handle_message = PubSub.ping, PubSub.handle_message

    def counted(self: PubSub, message: object = None) -> object:
        pings.append(self)
        return ping(self, message)

    async def without_confirmations(self: PubSub, response: object, ignore_subscribe_messages: bool = False) -> object:
        message = await handle_message(self, response, ignore_subscribe_messages)
        return None if isinstance(message, dict) and message["type"] in ("ssubscribe", b"ssubscribe") else message

    async with ClusterHub(cluster_url) as test:
        codes: list[str] = []
        per_node: collections.Counter[object] = collections.Counter()
        while len(codes) < 6:  # two on each master
            code = new_code()
            node = test.store.streams.group(match_feed(code).key)
            if per_node[node] < 2:
                per_node[node] += 1
                codes.append(code)
        subscriptions, got, readers = await follow(test.hub, codes, 1)
        await asyncio.sleep(0.5)  # subscribed, the first reads done
        monkeypatch.setattr(PubSub, "ping", counted)
        monkeypatch.setattr(PubSub, "handle_message", without_confirmations)
        written: dict[str, list[tuple[str, bytes]]] = {}
        for c in codes:  # written past the store: no wake-up is published
            frame = f"{c} quiet".encode()
            entry_id = await test.client.xadd(match_feed(c).key, {"m": frame, "k": "public"})
            written[c] = [(entry_id.decode(), frame)]
        await asyncio.sleep(0.3)
        assert not any(got.values()), got  # no wake-up, no poll: unread
        wake_ups = test.hub.wake_ups
        assert wake_ups is not None and wake_ups.pubsub is not None
        nodes = set(wake_ups.pubsub.node_pubsub_mapping)
        assert not pings and len(nodes) == 3, nodes
        for node in test.masters():
            await test.client.execute_command("CLIENT KILL", "TYPE", "pubsub", target_nodes=node)
        await asyncio.wait_for(asyncio.gather(*readers), 5)
        assert got == written
        for _ in range(50):
            if not wake_ups._unsure:
                break
            await asyncio.sleep(0.1)
        assert not wake_ups._unsure, wake_ups._unsure
        assert {id(p) for p in pings} == {id(wake_ups.pubsub.node_pubsub_mapping[n]) for n in nodes}, (pings, nodes)
        for subscription in subscriptions:
            subscription.close()
