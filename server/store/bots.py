"""The server's places for bots (:data:`~server.store.keys.LIVE_BOTS`): how many bots unfinished matches
have, on every process, bounded by ``FTR_MAX_BOTS``."""

from __future__ import annotations

from typing import Any

from .backend import Backend
from .keys import LIVE_BOTS


def owner_key(owner: str) -> str:
    """The sorted set of the places taken by the client whose address hashes to ``owner`` (members and scores
    as :data:`LIVE_BOTS`'s; in the same slot)."""
    return f"{LIVE_BOTS}:by:{owner}"


class BotPlaces:
    """The store's part for bots' places (see the module docstring)."""

    def __init__(self, store: Backend) -> None:
        self.redis: Any = store.redis

    async def take(self, code: str, count: int, until_ms: int, now_ms: int, most: int, owner: str = "",
                   owner_most: int = 0) -> str | None:
        """Take ``count`` places for the bots of match ``code``, held until it ends (:meth:`free`) or at the
        latest until ``until_ms``; ``None`` when taken. Refused (nothing taken): ``"server"`` when that would
        make more than ``most`` bots in unfinished matches at ``now_ms``, ``"owner"`` when ``owner`` (a hash of
        the creating client's address; empty: not counted) would hold more than ``owner_most``. The places are
        added before they are counted, so two matches taking the last places at once are never both let in past
        a bound (both may be refused: each sees the other's places before giving its own back); no transaction
        is needed, on a Redis Cluster neither (every key is in the ``{live}`` slot). An owner's set is pruned
        here of the places :meth:`free` gave back, so :meth:`free` needs no owner."""
        members = {f"{code}/{n}": until_ms for n in range(count)}
        own = owner_key(owner) if owner else None
        if own is not None:
            listed = await self.redis.zrange(own, 0, -1)
            if listed:
                scores = await self.redis.zmscore(LIVE_BOTS, listed)
                gone = [member for member, score in zip(listed, scores, strict=True) if score is None]
                if gone:
                    await self.redis.zrem(own, *gone)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zremrangebyscore(LIVE_BOTS, "-inf", now_ms)
            pipe.zadd(LIVE_BOTS, members)
            pipe.zcard(LIVE_BOTS)
            if own is not None:
                pipe.zremrangebyscore(own, "-inf", now_ms)
                pipe.zadd(own, members)
                pipe.zcard(own)
                pipe.pexpire(own, max(1, until_ms - now_ms))
            answers = await pipe.execute()
        refused = "server" if int(answers[2]) > most else "owner" if own is not None and int(answers[5]) > owner_most \
            else None
        if refused is not None:
            await self.redis.zrem(LIVE_BOTS, *members)
            if own is not None:
                await self.redis.zrem(own, *members)
        return refused

    async def free(self, code: str, count: int) -> None:
        """Give back the places of match ``code``'s ``count`` bots (again: nothing happens)."""
        if count:
            await self.redis.zrem(LIVE_BOTS, *(f"{code}/{n}" for n in range(count)))

    async def held(self, now_ms: int) -> int:
        """How many places are held at ``now_ms``."""
        return int(await self.redis.zcount(LIVE_BOTS, f"({now_ms}", "+inf"))
