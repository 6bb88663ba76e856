"""The deal pool in the store: verified solvable deals per variant, oldest first (key ``pool:VARIANT``)."""

from __future__ import annotations

from typing import Any

from .backend import Backend
from .keys import pool_key


class DealPool:
    """The store's part for the deal pool; an item is the pool's encoded deal (:mod:`server.dealpool`)."""

    def __init__(self, store: Backend) -> None:
        self.redis: Any = store.redis  # bytes replies: redis-py types each one bytes | str

    async def size(self, variant: str) -> int:
        """How many deals of ``variant`` the pool holds."""
        return int(await self.redis.llen(pool_key(variant)))

    async def push(self, variant: str, item: bytes) -> None:
        """Add ``item`` to the end of ``variant``'s pool."""
        await self.redis.rpush(pool_key(variant), item)

    async def pop(self, variant: str) -> bytes | None:
        """Take the oldest deal of ``variant``'s pool; None when it is empty."""
        return await self.redis.lpop(pool_key(variant))
