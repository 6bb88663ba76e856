"""The live counts of matches (``ftr_matches``; server/store/keys.py ``{live}:matches``, ``{live}:counts``) against
a real Redis: counting again is harmless, a change counted late never undoes a later one, and the sweep makes
the counts true again after a change that was not counted or keys Redis lost."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from protocol import messages as m
from protocol.codes import new_code
from server.store import Store
from server.store.keys import LIVE_MATCHES, meta_key

DB = 15
"""A database of this test's own: the counts are global keys, which every other test's matches move."""

SETTINGS = m.Settings("classic", False, 2, 60, True, "safe", True)


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[Store]:
    client = aioredis.Redis.from_url(redis_url.rsplit("/", 1)[0] + f"/{DB}")
    await client.flushdb()
    yield Store(client, 600)
    await client.flushdb()
    await client.aclose()


async def tally(store: Store) -> dict[str, int]:
    """The live counts as the matches counted say they should be (a count of their states)."""
    counted = await store.redis.hgetall(LIVE_MATCHES)
    by_state = Counter(state.decode() for state in counted.values())
    return {state: by_state.get(state, 0) for state in ("preparing", "lobby", "countdown", "playing")}


async def created(store: Store, state: str = "lobby") -> str:
    code = new_code()
    assert await store.matches.create(code, {"state": state, "settings": SETTINGS})
    return code


async def test_each_change_moves_the_match_between_counts_and_a_repeat_or_a_late_step_back_changes_nothing(
        store: Store) -> None:
    first, second, third = await created(store), await created(store), await created(store, "preparing")
    assert await store.live.counts() == {"preparing": 1, "lobby": 2, "countdown": 0, "playing": 0}
    assert await store.matches.transition(first, "lobby", "countdown", b"")
    await store.live.count(first, "countdown")  # counted again (a retry): no second count
    assert await store.live.counts() == {"preparing": 1, "lobby": 1, "countdown": 1, "playing": 0}
    assert await store.matches.start(first, b"start")
    await store.live.count(first, "countdown")  # another process's count of the step before, arriving late
    assert await store.live.counts() == {"preparing": 1, "lobby": 1, "countdown": 0, "playing": 1}
    assert await store.matches.close_unstarted(second, b"closed", 60)
    assert await store.matches.transition(first, "playing", "finished", b"")
    assert await store.matches.transition(third, "preparing", "lobby")
    assert await store.live.counts() == {"preparing": 0, "lobby": 1, "countdown": 0, "playing": 0}
    assert await store.live.counts() == await tally(store)
    assert not await store.matches.transition(second, "lobby", "countdown", b"")  # closed: refused, and not counted
    assert await store.live.counts() == {"preparing": 0, "lobby": 1, "countdown": 0, "playing": 0}


async def test_the_sweep_corrects_a_change_not_counted_and_a_match_redis_lost(store: Store) -> None:
    moved, lost, kept = await created(store), await created(store), await created(store)
    # A process killed between a change and its count: the match plays, counted in its lobby still.
    await store.redis.hset(meta_key(moved), "state", "playing")
    # Keys Redis lost (or a match whose end was not counted and whose keys then expired).
    await store.redis.delete(meta_key(lost))
    assert await store.live.counts() == {"preparing": 0, "lobby": 3, "countdown": 0, "playing": 0}
    assert await store.live.sweep(page=1) == 2
    assert await store.live.counts() == {"preparing": 0, "lobby": 1, "countdown": 0, "playing": 1}
    assert await store.live.counts() == await tally(store)
    assert await store.live.sweep() == 0
    assert (await store.redis.hgetall(LIVE_MATCHES)).keys() == {moved.encode(), kept.encode()}


async def test_the_counts_and_the_sweep_work_on_a_cluster(cluster_url: str) -> None:
    """On a Redis Cluster the counts are on the slot of ``{live}`` and each match on its own: the store's count is
    a command of its own, and the sweep reads the states of matches of many slots in one pipeline."""
    from server.store import open_redis
    from server.store.keys import LIVE_COUNTS

    client = await open_redis(cluster_url)
    store = Store(client, 60)
    await client.delete(LIVE_MATCHES)
    await client.delete(LIVE_COUNTS)
    codes: list[str] = []
    try:
        codes += [await created(store) for _ in range(6)]
        assert await store.matches.transition(codes[0], "lobby", "countdown", b"")
        await client.delete(meta_key(codes[1]))
        await client.hset(meta_key(codes[2]), "state", "finished")
        assert await store.live.sweep(page=2) == 2
        assert await store.live.counts() == {"preparing": 0, "lobby": 3, "countdown": 1, "playing": 0}
        assert await store.live.counts() == await tally(store)
    finally:
        for key in [LIVE_MATCHES, LIVE_COUNTS, *map(meta_key, codes)]:
            await client.delete(key)  # one key a command: the keys are on many slots
        await client.aclose()
