"""When the process's cyclic garbage collector scans the long-lived objects: rarely, on a schedule.

CPython's full collection (generation 2) walks every tracked object the process holds. A server with many
players holds many (each player's game, its positions and undo steps, each connection's protocol objects:
about 250,000 with 1,000 players) and keeps promoting the game values that each command replaces into
generation 2, so full collections came every few seconds and each held the event loop for 115-190 ms (measured
on the 2-core benchmark machine): the 1,000-player round trip's p99 was those pauses, not the work.

:func:`pace_collections` freezes (:func:`gc.freeze`, constant time: the generations are moved to the
permanent one, which no automatic collection scans) every :data:`FREEZE_EVERY_S`, so an automatic
collection scans only what was allocated since; and every :data:`FULL_EVERY_S` it unfreezes and collects
everything once, so cyclic garbage frozen meanwhile is freed after at most that long. Objects are still freed
by their reference counts as soon as they are unused, frozen or not: only reference cycles wait.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time

log = logging.getLogger("forty_thieves.gc")

FREEZE_EVERY_S = 1.0
"""Seconds between two freezes: an automatic collection scans at most this long's survivors."""

FULL_EVERY_S = 600.0
"""Seconds between two full collections of everything (cycles frozen meanwhile are freed then)."""


async def pace_collections(freeze_every_s: float = FREEZE_EVERY_S, full_every_s: float = FULL_EVERY_S) -> None:
    """Run until cancelled (see the module docstring); the frozen objects are unfrozen when it ends, so that
    later collections see them again."""
    last_full = time.monotonic()
    gc.freeze()
    try:
        while True:
            await asyncio.sleep(freeze_every_s)
            if time.monotonic() - last_full >= full_every_s:
                started = time.perf_counter()
                gc.unfreeze()
                found = gc.collect()
                last_full = time.monotonic()
                log.info("full collection: %d unreachable objects, %.0f ms", found,
                         1000 * (time.perf_counter() - started))
            gc.freeze()
    finally:
        gc.unfreeze()
