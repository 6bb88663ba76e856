"""The ghosts' store on a real Redis: ``RECORD_GAME`` keeps each deal's best game (won fastest, then fewest moves;
else most cards up, then fewest moves; a tie keeps the one before), and a damaged kept value stops neither the
recording nor a match's creation."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import redis.asyncio as aioredis

from server.core.errors import ServiceError
from server.ghosts import GhostRequest, find_ghost
from server.store import Store
from server.store.keys import MAX_GHOSTS, name_hash, profile_key

DB = 13
DEAL = "seed 7"


def game(code: str, won: bool, time_ms: int, moves: int, foundation: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A history entry and its ghost (a two-entry timeline that ends where the game did)."""
    entry = {"match": code, "variant": "classic", "deal": DEAL, "time_ms": time_ms, "moves": moves,
             "foundation": foundation}
    ghost = {"match": code, "status": "won" if won else "resigned", "time_ms": time_ms, "moves": moves,
             "foundation": foundation, "timeline": [[0, 0, 0], [time_ms, moves, foundation]]}
    return entry, ghost


@asynccontextmanager
async def ann_store(redis_url: str) -> AsyncIterator[tuple[aioredis.Redis, Store, str]]:
    """A Redis database of its own with ann claimed: ``(client, store, ann's H)``; emptied after."""
    client = aioredis.Redis.from_url(redis_url.rsplit("/", 1)[0] + f"/{DB}")
    await client.flushdb()
    try:
        store = Store(client, 3600)
        ann = name_hash("ann")
        assert await store.profiles.claim(ann, "ann", "k" * 64, "r" * 64, 1000) is None
        yield client, store, ann
    finally:
        await client.flushdb()
        await client.aclose()


async def test_the_best_game_of_a_deal_is_its_ghost_and_a_damaged_one_is_replaced(redis_url: str) -> None:
    async with ann_store(redis_url) as (client, store, ann):
        # (won, time, moves, cards, kept as the ghost after it?)
        games = [(False, 9000, 50, 20, True), (False, 8000, 60, 20, False), (False, 9500, 40, 20, True),
                 (False, 9900, 99, 30, True), (False, 1000, 10, 29, False), (True, 5000, 200, 104, True),
                 (False, 100, 5, 90, False), (True, 5000, 190, 104, True), (True, 5000, 190, 104, False),
                 (True, 6000, 100, 104, False), (True, 4000, 300, 104, True)]
        best = None
        for i, (won, time_ms, moves, cards, better) in enumerate(games):
            entry, ghost = game(f"M{i}", won, time_ms, moves, cards)
            assert await store.profiles.record(ann, f"M{i}", entry, won, 2000 + i, 1500, [], 50, 10, ghost)
            best = ghost if better else best
            assert await store.profiles.ghost(ann, "classic", DEAL) == best, i
        field = f"classic|{DEAL}"
        for damaged in ("not json", '{"status": "won", "time_ms": "fast"}', "[1, 2]"):
            await client.hset(profile_key(ann, "ghosts"), field, damaged)
            with pytest.raises(ServiceError) as refused:  # a no_ghost refusal, not a server error
                await find_ghost(store, GhostRequest("ann"), "classic", DEAL, "")
            assert refused.value.code == "no_ghost"
            code = f"D{len(damaged)}"
            entry, ghost = game(code, False, 100, 3, 1)  # the worst game yet replaces what is no ghost
            assert await store.profiles.record(ann, code, entry, False, 3000, 1500, [], 50, 10, ghost)
            assert await store.profiles.ghost(ann, "classic", DEAL) == ghost
            assert await client.hexists(profile_key(ann, "done"), code)  # recorded to its end
        found = await find_ghost(store, GhostRequest("ANN"), "classic", DEAL, "")
        assert (found.name, found.label, found.status, found.timeline) == ("ann", "ann's best", "resigned",
                                                                           [(0, 0, 0), (100, 3, 1)])
        profile = await store.profiles.get(ann)
        assert profile is not None and profile.games == len(games) + 3


async def test_ghosts_are_kept_for_the_deals_last_played_only(redis_url: str) -> None:
    async with ann_store(redis_url) as (client, store, ann):
        deals = MAX_GHOSTS + 5
        for i in range(deals):  # one game on each of more deals than keep a ghost, the history keeping them all
            entry, ghost = game(f"M{i}", False, 100, 3, 1)
            entry["deal"] = f"seed {i}"
            assert await store.profiles.record(ann, f"M{i}", entry, False, 2000 + i, 1500, [], 1000, 1000, ghost)
        kept = {field.decode() for field in await client.hkeys(profile_key(ann, "ghosts"))}
        assert kept == {f"classic|seed {i}" for i in range(5, deals)}
        assert await client.hlen(profile_key(ann, "deals")) == deals
        # Seed 0 played again: its ghost is back, and the deal now last played MAX_GHOSTS + 1-th loses its own.
        entry, ghost = game("again", False, 100, 3, 1)
        entry["deal"] = "seed 0"
        assert await store.profiles.record(ann, "again", entry, False, 9000, 1500, [], 1000, 1000, ghost)
        kept = {field.decode() for field in await client.hkeys(profile_key(ann, "ghosts"))}
        assert kept == {f"classic|seed {i}" for i in [0, *range(6, deals)]}
