"""The fan-out hub against a real Redis: catch-up then live with no gap or repeat at the seam while entries are
written, resume by id (a subscriber's and the reader's own), a slow subscriber dropped without slowing the
others, every slot released however a subscription ends, and the reader's groups (one read per hash slot)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError

from protocol.codes import new_code
from server.hub import Hub, HubFull, Subscription, TooSlow
from server.store import DailyStore, Store, StreamEntry, day_feed, match_feed

from .conftest import free_port


async def run(redis_url: str, body: Callable[[Store, Hub], Awaitable[None]], *, clustered: bool = False,
              pause_s: float = 0.0, queue_limit: int = 1024) -> None:
    """Run ``body(store, hub)`` with the hub's reader running (``clustered``: reads grouped by hash slot, as on a
    Redis Cluster, on this one node)."""
    client = aioredis.Redis.from_url(redis_url)
    store = Store(client, 600)
    store.clustered = clustered
    hub = Hub(store.streams, queue_limit=queue_limit, pause_s=pause_s)
    reader = asyncio.create_task(hub.run())
    try:
        await asyncio.wait_for(body(store, hub), 60)
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        await client.aclose()


async def write(store: Store, code: str, count: int, written: list[tuple[str, bytes]], gap_s: float = 0.0,
                kind: str = "public") -> None:
    """Append ``count`` events to match ``code``'s stream, recording ``(id Redis gave, frame)`` of each."""
    for i in range(count):
        frame = f"{code} {kind} {len(written)}".encode()
        written.append((await store.streams.add_event(code, frame, kind=kind), frame))
        if gap_s:
            await asyncio.sleep(gap_s)


async def collect(subscription: Subscription, after: str, until: int, got: list[tuple[str, bytes]]) -> None:
    async for entry in subscription.events(after):
        got.append(entry)
        if len(got) >= until:
            return


async def follow(hub: Hub, codes: list[str], until: int) -> tuple[list[Subscription], dict[str, list[tuple[str, bytes]]],
                                                                 list[asyncio.Task[None]]]:
    """Subscribe to the streams of matches ``codes`` and collect each one's entries from its start until it holds
    ``until``: the open subscriptions, the entries got by code (filled as they come) and the collecting tasks."""
    got: dict[str, list[tuple[str, bytes]]] = {c: [] for c in codes}
    subscriptions = [hub.subscribe(match_feed(c)) for c in codes]
    for subscription in subscriptions:
        await subscription.open()
    readers = [asyncio.create_task(collect(s, "0-0", until, got[c])) for c, s in zip(codes, subscriptions)]
    return subscriptions, got, readers


def idle(hub: Hub) -> bool:
    """Nothing registered and nothing followed."""
    return not hub._subscribers and not hub.positions and hub.spectators("match") == hub.spectators("daily") == 0


async def test_catch_up_then_live_has_no_gap_or_repeat_at_the_seam_while_entries_are_written(redis_url: str) -> None:
    """Subscribers open at random points of a burst of writes (and from ids in the middle of the stream); each gets
    exactly the stream's entries after its ``after``, in order, once: the ids XADD returned are the truth."""
    async def body(store: Store, hub: Hub) -> None:
        code = new_code()
        written: list[tuple[str, bytes]] = []
        await write(store, code, 30, written)
        writer = asyncio.create_task(write(store, code, 400, written, gap_s=0.0005))
        readers = []
        for i in range(12):
            await asyncio.sleep(0.01 * (i % 4))
            after = "0-0" if i % 3 == 0 else written[len(written) // 2][0]
            start = 0 if after == "0-0" else [e for e, _ in written].index(after) + 1
            subscription = hub.subscribe(match_feed(code))
            await subscription.open()
            got: list[tuple[str, bytes]] = []
            readers.append((start, got, asyncio.create_task(collect(subscription, after, 430 - start, got)),
                            subscription))
        await writer
        for start, got, task, subscription in readers:
            await task
            subscription.close()
            assert got == written[start:], (start, len(got))
        assert idle(hub)

    await run(redis_url, body)


async def test_the_seam_holds_when_the_stream_is_followed_already_and_reads_are_paused(redis_url: str) -> None:
    """A spectator joining a stream the reader follows (for a player's callback), with the reader's pause between
    reads: the catch-up and the queued live entries meet without a gap or a repeat."""
    async def body(store: Store, hub: Hub) -> None:
        code = new_code()
        written: list[tuple[str, bytes]] = []
        heard: list[str] = []

        async def player(entry: StreamEntry) -> None:
            heard.append(entry.id)

        async with hub.listen(match_feed(code), player):
            writer = asyncio.create_task(write(store, code, 300, written, gap_s=0.0003))
            await asyncio.sleep(0.05)
            got: list[tuple[str, bytes]] = []
            async with hub.subscribe(match_feed(code)) as subscription:
                await collect(subscription, "0-0", 300, got)
            await writer
            assert got == written
            while len(heard) < len(written):
                await asyncio.sleep(0.01)
            assert heard == [entry_id for entry_id, _ in written]  # the player's callback: every entry, once
        assert idle(hub)

    await run(redis_url, body, pause_s=0.01)


async def test_spectators_get_public_entries_and_the_callback_every_entry(redis_url: str) -> None:
    """A match's internal entries (start, takeover) reach the players' callback only; a day's feed gives its JSON."""
    async def body(store: Store, hub: Hub) -> None:
        code = new_code()
        written: list[tuple[str, bytes]] = []
        heard: list[tuple[str, str]] = []

        async def player(entry: StreamEntry) -> None:
            heard.append((entry.id, entry.kind))

        async with hub.listen(match_feed(code), player), hub.subscribe(match_feed(code)) as spectator:
            for kind in ("public", "start", "ended", "takeover", "board", "public"):
                await write(store, code, 1, written, kind=kind)
            got: list[tuple[str, bytes]] = []
            await collect(spectator, "0-0", 4, got)
            assert [frame.split()[1] for _, frame in got] == [b"public", b"ended", b"board", b"public"]
            while len(heard) < 6:
                await asyncio.sleep(0.01)
            assert [k for _, k in heard] == ["public", "start", "ended", "takeover", "board", "public"]
            assert [i for i, _ in heard] == [i for i, _ in written]

        daily = DailyStore(store)
        async with hub.subscribe(day_feed("2026-11-30", "hub")) as watcher:
            assert hub.spectators("daily") == 1 and hub.spectators("match") == 0
            await daily.add_event("2026-11-30", "hub", {"name": "ann"})
            async for _, data in watcher.events():
                assert data == b'{"name":"ann"}'
                break
        assert idle(hub)

    await run(redis_url, body)


async def test_resume_by_id_gets_the_rest_and_the_reader_resumes_by_id_after_a_restart(redis_url: str) -> None:
    """A spectator that left resumes after its last id with the rest, nothing repeated; the reader itself,
    stopped and started again mid-stream (as its supervisor does after a Redis failure), hands a player's
    callback every entry once."""
    async def scenario() -> None:
        client = aioredis.Redis.from_url(redis_url)
        store = Store(client, 600)
        hub = Hub(store.streams)
        reader = asyncio.create_task(hub.run())
        code = new_code()
        written: list[tuple[str, bytes]] = []
        heard: list[str] = []

        async def player(entry: StreamEntry) -> None:
            heard.append(entry.id)

        try:
            async with hub.listen(match_feed(code), player):
                writer = asyncio.create_task(write(store, code, 300, written, gap_s=0.0005))
                first: list[tuple[str, bytes]] = []
                async with hub.subscribe(match_feed(code)) as subscription:
                    await collect(subscription, "0-0", 50, first)
                for _ in range(3):  # restart the reader mid-stream
                    await asyncio.sleep(0.03)
                    reader.cancel()
                    await asyncio.gather(reader, return_exceptions=True)
                    await asyncio.sleep(0.02)
                    reader = asyncio.create_task(hub.run())
                await writer
                rest: list[tuple[str, bytes]] = []
                async with hub.subscribe(match_feed(code)) as again:
                    await collect(again, first[-1][0], 300 - 50, rest)
                assert first + rest == written
                while len(heard) < len(written):
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.1)
                assert heard == [i for i, _ in written]
        finally:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
            await client.aclose()

    await scenario()


async def test_a_slow_subscriber_is_dropped_and_never_slows_the_others(redis_url: str) -> None:
    """A subscriber that reads nothing falls ``limit`` entries behind: it gets what was queued before, then
    :class:`TooSlow`; a reading one meanwhile gets every entry, and the feed stays followed for it."""
    async def body(store: Store, hub: Hub) -> None:
        code = new_code()
        written: list[tuple[str, bytes]] = []
        async with hub.subscribe(match_feed(code), limit=5) as slow, hub.subscribe(match_feed(code)) as fast:
            await write(store, code, 40, written)
            got: list[tuple[str, bytes]] = []
            await collect(fast, written[0][0], 39, got)
            assert got == written[1:]
            assert slow.dropped
            queued: list[tuple[str, bytes]] = []
            with pytest.raises(TooSlow):
                async for batch in slow.batches(written[-1][0]):  # nothing to catch up: only what queued
                    queued.extend(batch)
            assert queued == []  # all queued entries are at or before its after: skipped, none repeated
            assert fast.feed.key in hub.positions
            await write(store, code, 3, written)
            more: list[tuple[str, bytes]] = []
            await collect(fast, got[-1][0], 3, more)
            assert more == written[-3:]
        assert idle(hub)

    await run(redis_url, body, queue_limit=1024)


async def test_a_dropped_subscriber_gets_what_queued_before_the_drop_then_too_slow(redis_url: str) -> None:
    """A consumer that stalls in the live phase: the ``limit`` entries queued before the drop come as one batch,
    then :class:`TooSlow`; the entries after the drop it resumes from its last id."""
    async def body(store: Store, hub: Hub) -> None:
        code = new_code()
        written: list[tuple[str, bytes]] = []
        async with hub.subscribe(match_feed(code), limit=5) as slow:
            batches = slow.batches()
            first = asyncio.create_task(anext(batches))
            await asyncio.sleep(0.05)  # the catch-up found nothing: it waits for live entries
            await write(store, code, 1, written)
            assert await first == written[:1]
            await write(store, code, 12, written)  # the consumer is stalled meanwhile
            while not slow.dropped:
                await asyncio.sleep(0.01)
            assert await anext(batches) == written[1:6]
            with pytest.raises(TooSlow):
                await anext(batches)
        assert idle(hub)
        rest: list[tuple[str, bytes]] = []
        await collect(hub.subscribe(match_feed(code)), written[5][0], 7, rest)
        assert rest == written[6:]
        for subscription in list(hub._subscribers.get(match_feed(code).key, ())):
            subscription.close()
        assert idle(hub)

    await run(redis_url, body)


async def test_every_way_a_subscription_ends_releases_its_slot(redis_url: str) -> None:
    """Left normally, left by an exception, its generator closed early, its consumer cancelled while waiting,
    a full feed refused, an opening whose Redis read failed: each time nothing stays registered or followed."""
    async def body(store: Store, hub: Hub) -> None:
        code = new_code()
        feed = match_feed(code)
        await store.streams.add_event(code, b"one")

        async with hub.subscribe(feed, max_subscribers=1):
            assert hub.spectators("match") == 1 and feed.key in hub.positions
        assert idle(hub)

        with pytest.raises(ZeroDivisionError):
            async with hub.subscribe(feed):
                1 / 0  # noqa: B018
        assert idle(hub)

        subscription = hub.subscribe(feed)
        async for _ in subscription.events():
            break  # the generator is closed early; the subscription is the caller's to close
        assert not idle(hub)
        subscription.close()
        assert idle(hub)

        async def consume(subscription: Subscription) -> None:
            async with subscription:
                async for _ in subscription.events():
                    pass

        task = asyncio.create_task(consume(hub.subscribe(feed)))
        await asyncio.sleep(0.1)  # now waiting for live entries
        assert hub.spectators("match") == 1
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert idle(hub)

        generator = hub.events(feed)  # the hub's own: a subscription for the generator's life
        assert (await anext(generator))[1] == b"one"
        assert hub.spectators("match") == 1
        await generator.aclose()
        assert idle(hub)

        async with hub.subscribe(feed, max_subscribers=1) as first:
            full = hub.subscribe(feed, max_subscribers=1)
            with pytest.raises(HubFull):
                await full.open()
            assert hub.spectators("match") == 1 and not full.opened
            waiter = asyncio.create_task(consume(first))
            await asyncio.sleep(0.05)
        await asyncio.wait_for(waiter, 2)  # closing ends a generator waiting for live entries
        assert idle(hub)

        dead = aioredis.Redis(port=free_port(), socket_connect_timeout=0.5)
        broken = Hub(Store(dead, 60).streams)
        failing = broken.subscribe(feed)
        with pytest.raises(RedisConnectionError):
            await failing.open()
        assert failing.closed and idle(broken)
        await dead.aclose()

    await run(redis_url, body)


async def test_reads_grouped_by_hash_slot_deliver_every_stream(redis_url: str) -> None:
    """Grouped as on a Redis Cluster (one XREAD per hash slot, one read in flight per group), streams of many
    matches written at once each reach their subscriber whole and in order."""
    async def body(store: Store, hub: Hub) -> None:
        codes = [new_code() for _ in range(12)]
        assert len({store.streams.group(match_feed(c).key) for c in codes}) > 1
        written: dict[str, list[tuple[str, bytes]]] = {c: [] for c in codes}
        subscriptions, got, readers = await follow(hub, codes, 60)
        await asyncio.sleep(0.05)  # the catch-ups found nothing: what comes is live
        await asyncio.gather(*(write(store, c, 60, written[c], gap_s=0.001) for c in codes))
        await asyncio.gather(*readers)
        for s in subscriptions:
            s.close()
        assert got == written
        assert idle(hub)

    await run(redis_url, body, clustered=True, pause_s=0.005)



async def test_the_streams_are_grouped_once_per_change_of_the_follows_not_per_read(redis_url: str) -> None:
    """The reader groups the followed streams (``stream_group`` of each key) when the follows change, not for
    every read: 12 matches followed, then 40 entries each written and read, ask for about one grouping per
    follow (each of the 12 keys, 12 times at most), however many reads it took; every entry arrives."""
    async def body(store: Store, hub: Hub) -> None:
        asked: list[str] = []
        group_of = store.streams.group

        def counted(key: str) -> object:
            asked.append(key)
            return group_of(key)

        store.streams.group = counted  # type: ignore[method-assign]
        codes = [new_code() for _ in range(12)]
        written: dict[str, list[tuple[str, bytes]]] = {c: [] for c in codes}
        subscriptions, got, readers = await follow(hub, codes, 40)
        await asyncio.sleep(0.05)
        before = len(asked)
        for _ in range(40):  # one entry per match at a time: at least 40 reads
            await asyncio.gather(*(write(store, c, 1, written[c]) for c in codes))
            await asyncio.sleep(0.003)
        await asyncio.gather(*readers)
        assert got == written
        assert len(asked) - before == 0, len(asked) - before  # no follow changed meanwhile: no grouping
        assert len(asked) <= 12 * 12, len(asked)  # each follow grouped the streams followed then, once
        for s in subscriptions:
            s.close()

    await run(redis_url, body, clustered=True, pause_s=0.002)
