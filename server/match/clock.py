"""The shared clock of a deployment: Redis's ``TIME``, read locally with a measured offset."""

from __future__ import annotations

import time

from ..store import Store


class Clock:
    """Milliseconds on Redis's clock (``TIME``), read locally with a measured offset.

    ``shift_ms`` (``FTR_CLOCK_OFFSET_MS``, tests and demos only) moves the
    whole server's clock, e.g. to just before midnight UTC for the daily
    challenge; every process of one deployment must use the same value.
    """

    def __init__(self, shift_ms: int = 0) -> None:
        self.offset_ms = float(shift_ms)
        self.shift_ms = shift_ms

    async def sync(self, store: Store) -> None:
        before = time.time() * 1000
        redis_ms = await store.time_ms()
        after = time.time() * 1000
        self.offset_ms = redis_ms - (before + after) / 2 + self.shift_ms

    def now_ms(self) -> int:
        """Now on the shared clock (Redis ``TIME`` plus ``FTR_CLOCK_OFFSET_MS``), in ms since the epoch."""
        return int(time.time() * 1000 + self.offset_ms)
