"""The named players' store on a real Redis: a recording is idempotent, every list it grows is bounded, and a
daily attempt's seed is shown only once its day is revealed."""

from __future__ import annotations

import redis.asyncio as aioredis

from protocol import messages as m
from server.core.daily import day_bounds
from server.core.lifecycle import State
from server.history import History
from server.settings import Settings
from server.store import MatchMeta, Store
from server.store.keys import name_hash, profile_key
from server.store.profiles import Rival

DB = 14


def entry(code: str, deal: str, time_ms: int, moves: int, foundation: int = 104) -> dict[str, object]:
    return {"match": code, "variant": "relaxed", "deal": deal, "time_ms": time_ms, "moves": moves,
            "foundation": foundation}


async def test_a_recording_is_kept_once_and_the_history_stays_bounded(redis_url: str) -> None:
    client = aioredis.Redis.from_url(redis_url.rsplit("/", 1)[0] + f"/{DB}")
    await client.flushdb()
    try:
        store = Store(client, 3600)
        ann, bob = name_hash("ann"), name_hash("bob")
        assert await store.profiles.claim(ann, "ann", "k" * 64, "r" * 64, 1000) is None
        assert await store.profiles.claim(ann, "ANN", "x" * 64, "y" * 64, 1001) == "ann"  # taken: unchanged
        assert await store.profiles.record(bob, "M0", entry("M0", "seed 1", 10, 10), True, 2000, 1500, [], 3,
                                           2) is None  # no such player: nothing kept
        assert await client.exists(profile_key(bob, "games")) == 0
        rival = [Rival(bob, "bob", "w", 1000)]
        outcomes = []
        for i in range(5):  # five games on three deals, each faster than the one before
            outcomes.append(await store.profiles.record(ann, f"M{i}", entry(f"M{i}", f"seed {i % 3}", 1000 - i,
                                                                            100 - i), True, 2000 + i, 1500,
                                                        rival, 3, 2))
        again = await store.profiles.record(ann, "M4", entry("M4", "seed 1", 1, 1), True, 9999, 1500, rival, 3, 2)
        assert again == outcomes[4]  # recorded before: the same answer, nothing counted twice
        assert outcomes[0] is not None and sorted(outcomes[0].records) == sorted([
            ["time", "seed 0", 1000, -1], ["moves", "seed 0", 100, -1], ["time", "", 1000, -1]])
        # Two deals kept: seed 0's records went when seed 2 was played, seed 1's when seed 0 came back, so each
        # next win there is a first again.
        assert outcomes[3] is not None and sorted(outcomes[3].records) == sorted([
            ["time", "seed 0", 997, -1], ["moves", "seed 0", 97, -1], ["time", "", 997, 998]])
        assert outcomes[4] is not None and sorted(outcomes[4].records) == sorted([
            ["time", "seed 1", 996, -1], ["moves", "seed 1", 96, -1], ["time", "", 996, 997]])
        assert outcomes[4] is not None and outcomes[4].rivals == {
            bob: {"name": "bob", "races": 5, "wins": 5, "losses": 0, "draws": 0}}
        profile = await store.profiles.get(ann)
        assert profile is not None and (profile.games, profile.wins) == (5, 5)
        assert profile.variants == {"relaxed": {"games": 5, "wins": 5, "best_ms": 996, "best_match": "M4",
                                                "cards": 104}}
        assert [g["match"] for g in await store.profiles.games(ann, 10)] == ["M4", "M3", "M2"]  # 3 kept
        assert sorted(await client.hkeys(profile_key(ann, "done"))) == [b"M2", b"M3", b"M4"]  # trimmed with them
        assert [d for d, _ in await store.profiles.deals(ann, 10)] == ["relaxed|seed 1", "relaxed|seed 0"]
        assert await client.hlen(profile_key(ann, "deals")) == 2  # the least recently played deal dropped
        # A name claimed after a match's start is someone else's: that match is not theirs to keep.
        assert await store.profiles.record(ann, "M9", entry("M9", "seed 1", 5, 5), True, 3000, 999, [], 3,
                                           2) is None
    finally:
        await client.flushdb()
        await client.aclose()


async def test_a_daily_attempts_seed_is_shown_once_its_day_is_revealed(redis_url: str) -> None:
    """The entry never holds the seed; the page fills it in from the day's reveal: after the day, once closed."""
    client = aioredis.Redis.from_url(redis_url.rsplit("/", 1)[0] + f"/{DB}")
    await client.flushdb()
    try:
        store = Store(client, 3600)
        date, end = "2026-12-01", day_bounds("2026-12-01")[1]
        now = end - 1000
        history = History(store, Settings(), lambda: now)
        await store.daily.set_deal(date, "relaxed", {"seed": "98765432123", "commitment": "c", "attempt_index": 0,
                                                     "deal": "d", "solution": "[]", "closed": 0}, end)
        hashed = name_hash("dana")
        await store.profiles.claim(hashed, "dana", "k" * 64, "r" * 64, 1)
        meta = MatchMeta(code="DAILY1", state=State.PLAYING, daily=f"{date} relaxed", start_at_ms=end - 60_000,
                         settings=m.Settings("relaxed", True, 1, 0, True, "safe", False))
        rows = [m.ResultRow(1, "dana", "resigned", 5000, 3, 0, 0, 12)]
        await history.record_match(meta, m.Results("DAILY1", rows, "", "c"), end - 50_000)
        assert (await history.recent(hashed, 5))[0]["seed"] is None  # the day is not over
        now = end + 1000
        assert (await history.recent(hashed, 5))[0]["seed"] is None  # over, but an attempt may still be open
        await client.hset(f"{{d:{date}:relaxed}}:deal", "closed", "1")
        assert (await history.recent(hashed, 5))[0]["seed"] == "98765432123"  # revealed
        assert b"98765432123" not in await client.lindex(profile_key(hashed, "games"), 0)
    finally:
        await client.flushdb()
        await client.aclose()
