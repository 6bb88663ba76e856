"""The server's places for bots (:data:`~server.store.keys.LIVE_BOTS`): how many bots unfinished matches
have, on every process, bounded by ``FTR_MAX_BOTS``."""

from __future__ import annotations

from typing import Any

from .backend import Backend
from .keys import LIVE_BOTS


class BotPlaces:
    """The store's part for bots' places (see the module docstring)."""

    def __init__(self, store: Backend) -> None:
        self.redis: Any = store.redis

    async def take(self, code: str, count: int, until_ms: int, now_ms: int, most: int) -> bool:
        """Take ``count`` places for the bots of match ``code``, held until it ends (:meth:`free`) or at the
        latest until ``until_ms``; False (nothing taken) when that would make more than ``most`` bots in
        unfinished matches at ``now_ms``. The places are added before they are counted, so two matches taking
        the last places at once are never both let in past ``most`` (both may be refused: each sees the
        other's places before giving its own back); no transaction is needed, on a Redis Cluster neither."""
        members = {f"{code}/{n}": until_ms for n in range(count)}
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zremrangebyscore(LIVE_BOTS, "-inf", now_ms)
            pipe.zadd(LIVE_BOTS, members)
            pipe.zcard(LIVE_BOTS)
            *_, held = await pipe.execute()
        if int(held) <= most:
            return True
        await self.redis.zrem(LIVE_BOTS, *members)
        return False

    async def free(self, code: str, count: int) -> None:
        """Give back the places of match ``code``'s ``count`` bots (again: nothing happens)."""
        if count:
            await self.redis.zrem(LIVE_BOTS, *(f"{code}/{n}" for n in range(count)))

    async def held(self, now_ms: int) -> int:
        """How many places are held at ``now_ms``."""
        return int(await self.redis.zcount(LIVE_BOTS, f"({now_ms}", "+inf"))
