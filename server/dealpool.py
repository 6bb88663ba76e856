"""The pool of verified solvable deals (RULES.md section 9).

Solver worker processes (never the event loop) look for seeds whose deal
the solver proves solvable; each process's filler task keeps
``pool:VARIANT`` in Redis topped up to ``FTR_POOL_TARGET`` for the
variants races offer first (classic, relaxed). The solution stays in
Redis with the match (server side only) as the proof.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from concurrent.futures import Executor

import msgspec

from .engine import deal, find_variant
from .engine.solver import find_solution
from .store import Store

log = logging.getLogger("forty_thieves.dealpool")


def find_solvable(variant_name: str, seconds_per_seed: float, total_seconds: float,
                  pure: bool = False) -> tuple[str, list[str]] | None:
    """Try random seeds until the solver proves one solvable (runs in a worker process).

    Each seed gets the solver's short finding search
    (:func:`server.engine.solver.find_solution`: a small node budget, also
    capped at ``seconds_per_seed``); moving on to the next seed finds a
    solvable deal about 3.6 times sooner than deciding each seed
    (server/engine/solver/README.md). Returns ``(seed, winning commands)``
    or ``None`` after ``total_seconds``. ``pure`` forces the solver's pure
    search (``FTR_SOLVER=python``).
    """
    variant = find_variant(variant_name)
    stop = time.monotonic() + total_seconds
    while time.monotonic() < stop:
        seed = secrets.token_hex(16)
        result = find_solution(deal(seed, variant), variant, seconds=seconds_per_seed, clock=time.monotonic,
                               pure=pure)
        if result.result == "solved":
            return seed, list(result.moves)
    return None


async def fill_pool(store: Store, executor: Executor, variants: tuple[str, ...], target: int,
                    seconds_per_seed: float, pure: bool = False) -> None:
    """Keep each variant's pool at ``target`` deals; runs until cancelled.

    Each round works for the variant with the fewest deals ready (ties: the
    order of ``variants``). Run one of these loops per solver worker.
    ``pure`` forces the solver's pure search (``FTR_SOLVER=python``).
    """
    loop = asyncio.get_running_loop()
    while True:
        sizes = [(await store.pool_size(variant), index, variant) for index, variant in enumerate(variants)]
        size, _, variant = min(sizes)
        if size >= target:
            await asyncio.sleep(1.0)
            continue
        found = await loop.run_in_executor(executor, find_solvable, variant, seconds_per_seed, 30.0, pure)
        if found is not None:
            await store.pool_push(variant, msgspec.msgpack.encode(found))
            log.info("deal pool: one more solvable %s deal", variant)
