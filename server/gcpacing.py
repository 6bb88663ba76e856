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

While it runs, a young collection waits for :data:`YOUNG_THRESHOLD` new objects instead of CPython's 700.
Playing makes no reference cycles (the collector, counted on the load benchmark, found none while 200 bots
played; the cycles it found came with the connections and matches set up), yet at saturation the young and
middle collections took 8-10 % of the server's CPU: every collection walks what is alive at that moment (the
commits in flight, their pipelines and replies) and finds nothing. With the higher threshold they took 1.5-3
%; at a human pace (200 players) the freeze came before that many new objects: none ran between two freezes.
So that the higher threshold does not freeze the cycles of each second (a client that opens and closes
connections fast makes some), each freeze is preceded by one young collection: it walks what the second
allocated and kept (at most about :data:`YOUNG_THRESHOLD` objects), and a cycle made and dropped within it is
freed then, not at the next full collection. Only a cycle whose objects were frozen before it was dropped waits
for the full collection.
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

YOUNG_THRESHOLD = 10_000
"""New objects (allocations less deallocations) between two young collections while the pacing runs
(CPython's default: 700): one such collection walks at most about this many objects, a few ms."""


async def pace_collections(freeze_every_s: float = FREEZE_EVERY_S, full_every_s: float = FULL_EVERY_S) -> None:
    """Run until cancelled (see the module docstring); the frozen objects are unfrozen and the collector's
    thresholds are what they were when it ends, so that later collections see them again as before."""
    last_full = time.monotonic()
    thresholds = gc.get_threshold()
    if thresholds[0]:  # 0: automatic collection is switched off, and stays so
        gc.set_threshold(max(thresholds[0], YOUNG_THRESHOLD), *thresholds[1:])
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
            elif thresholds[0]:
                gc.collect(0)
            gc.freeze()
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
