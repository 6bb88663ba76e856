"""When the process's cyclic garbage collector scans the long-lived objects: rarely, on a schedule.

A full collection (generation 2) walks every tracked object, and a server with many players holds many; each
such pause holds the event loop. :func:`pace_collections` therefore freezes (:func:`gc.freeze`) every
:data:`FREEZE_EVERY_S`, so an automatic collection scans only what was allocated since, and every
:data:`FULL_EVERY_S` unfreezes and collects everything once, so cyclic garbage frozen meanwhile is freed after at
most that long. Reference counting still frees every object as soon as it is unused: only cycles wait.

While it runs, a young collection waits for :data:`YOUNG_THRESHOLD` new objects instead of CPython's 700
(playing makes no cycles, and each collection walks what is alive at that moment to find nothing), and one young
collection runs before each freeze, so a cycle made and dropped within a second is freed then, not at the next
full collection. Measurements that chose these: tests/benchmarks/README.md, "Garbage collection pauses".
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
