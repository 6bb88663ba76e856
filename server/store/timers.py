"""The matches' timers (one sorted set, :data:`~server.store.keys.TIMERS`: due instants in ms on the shared
clock) and the leases that let one process at a time act on a timer or a sweep."""

from __future__ import annotations

from typing import Any

from . import scripts
from .backend import Backend
from .keys import TIMERS, lease_key, parse_timer_member, timer_lease, timer_member
from .records import Timer


class Timers:
    """The store's part for timers and leases (see the module docstring)."""

    def __init__(self, store: Backend) -> None:
        self.redis: Any = store.redis  # bytes replies: redis-py types each one bytes | str
        self._done_if_due = store.register(scripts.DONE_IF_DUE)

    async def add(self, code: str, kind: str, due_ms: int) -> None:
        """Set the match's timer ``kind`` due at ``due_ms``, replacing its instant."""
        await self.redis.zadd(TIMERS, {timer_member(code, kind): due_ms})

    async def add_missing(self, code: str, due_ms: dict[str, int]) -> None:
        """Add the match's timers ``{kind: due ms}`` that are not set (ZADD NX: a set one keeps its instant), so
        any process may repeat it."""
        if due_ms:
            await self.redis.zadd(TIMERS, {timer_member(code, kind): due for kind, due in due_ms.items()}, nx=True)

    async def due(self, now_ms: int, limit: int = 50) -> list[Timer]:
        """The timers due by ``now_ms``, at most ``limit``, soonest first."""
        members = await self.redis.zrangebyscore(TIMERS, "-inf", now_ms, start=0, num=limit)
        return [Timer(*parse_timer_member(member)) for member in members]

    async def next_ms(self) -> int | None:
        """When the soonest timer of any match is due; None when none is set."""
        first = await self.redis.zrange(TIMERS, 0, 0, withscores=True)
        return int(first[0][1]) if first else None

    async def done(self, code: str, kind: str) -> None:
        """Remove the match's timer ``kind`` and release its lease."""
        await self.redis.zrem(TIMERS, timer_member(code, kind))
        await self.redis.delete(lease_key(timer_lease(code, kind)))

    async def done_if_due(self, code: str, kind: str, now_ms: int) -> None:
        """Remove the timer unless it was set again for after ``now_ms`` meanwhile; release its lease."""
        await self._done_if_due(keys=[TIMERS], args=[timer_member(code, kind), now_ms])
        await self.redis.delete(lease_key(timer_lease(code, kind)))

    async def lease(self, name: str, holder: str, ms: int) -> bool:
        """Take lease ``name`` for ``holder`` for ``ms`` ms (SET NX PX); False when another holds it."""
        return bool(await self.redis.set(lease_key(name), holder, nx=True, px=ms))

    async def release(self, name: str) -> None:
        """Give up lease ``name`` (:meth:`lease`) before it expires."""
        await self.redis.delete(lease_key(name))
