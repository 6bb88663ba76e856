"""The collector's pacing (server/gcpacing.py): frozen between full collections, cycles freed by the full one."""

from __future__ import annotations

import asyncio
import gc
import weakref

from server.gcpacing import YOUNG_THRESHOLD, pace_collections


class Node:
    """An object that can sit in a reference cycle and be watched by a weak reference."""

    def __init__(self) -> None:
        self.other: Node | None = None


def cycle() -> weakref.ref[Node]:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


async def test_objects_are_frozen_while_it_runs_and_unfrozen_when_it_ends() -> None:
    assert gc.get_freeze_count() == 0
    task = asyncio.create_task(pace_collections(freeze_every_s=0.01, full_every_s=3600))
    await asyncio.sleep(0.05)
    assert gc.get_freeze_count() > 0
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert gc.get_freeze_count() == 0


async def test_young_collections_wait_for_more_objects_while_it_runs_and_as_before_after() -> None:
    before = gc.get_threshold()
    task = asyncio.create_task(pace_collections(freeze_every_s=0.01, full_every_s=3600))
    await asyncio.sleep(0.02)
    assert gc.get_threshold() == (max(before[0], YOUNG_THRESHOLD), *before[1:])
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert gc.get_threshold() == before


async def test_a_cycle_dropped_after_it_was_frozen_waits_for_the_full_collection() -> None:
    task = asyncio.create_task(pace_collections(freeze_every_s=0.01, full_every_s=3600))
    try:
        await asyncio.sleep(0.02)
        a, b = Node(), Node()
        a.other, b.other = b, a
        watched = weakref.ref(a)
        await asyncio.sleep(0.03)  # frozen now, while still in use
        del a, b
        await asyncio.sleep(0.03)
        gc.collect()  # no collection, automatic or asked for, sees a frozen object
        assert watched() is not None
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    gc.collect()  # unfrozen once the pacing ended: collectable again
    assert watched() is None


async def test_cycles_made_and_dropped_between_two_freezes_are_freed_at_the_next_one() -> None:
    # Fewer new objects than the young threshold: no automatic young collection runs before the freeze.
    task = asyncio.create_task(pace_collections(freeze_every_s=0.05, full_every_s=3600))
    try:
        await asyncio.sleep(0.01)
        watched = [cycle() for _ in range(YOUNG_THRESHOLD // 10)]
        await asyncio.sleep(0.15)  # at least one freeze since
        assert sum(ref() is not None for ref in watched) == 0
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_the_full_collection_frees_frozen_cycles() -> None:
    task = asyncio.create_task(pace_collections(freeze_every_s=0.01, full_every_s=0.1))
    try:
        await asyncio.sleep(0.02)
        watched = cycle()
        for _ in range(50):
            if watched() is None:
                break
            await asyncio.sleep(0.01)
        assert watched() is None
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_automatic_collections_switched_off_stay_off_while_it_runs() -> None:
    # A threshold0 of 0 is how automatic collection is switched off (the gc module's documentation): the
    # pacing raises a threshold to hold young collections back, it does not switch them on.
    before = gc.get_threshold()
    gc.set_threshold(0, *before[1:])
    try:
        task = asyncio.create_task(pace_collections(freeze_every_s=0.01, full_every_s=3600))
        await asyncio.sleep(0.02)
        assert gc.get_threshold() == (0, *before[1:])
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert gc.get_threshold() == (0, *before[1:])
    finally:
        gc.set_threshold(*before)
