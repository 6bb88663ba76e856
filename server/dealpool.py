"""The pool of verified solvable deals (RULES.md section 9).

Solver worker processes (never the event loop) look for seeds whose deal
the solver proves solvable; each process's filler task keeps
``pool:VARIANT`` in Redis topped up to ``FTR_POOL_TARGET`` for the
variants races offer first (classic, relaxed). The solution stays in
Redis with the match (server side only) as the proof. The filler's jobs
and the hosts' own deals share the workers by :mod:`server.scheduler`'s
turns.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time

import msgspec

from .engine import deal, find_variant, parse_position
from .engine.solver import Budget, find_solution, solve
from .scheduler import POOL, DeadlinePassed, SolverScheduler
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


HOST_DEAL_SECONDS = 6.0
"""How long match creation lets the solver decide a deal the host chose with solvable-only asked, its wait for
a worker included (within a request's patience; with this cap :func:`server.engine.solver.solve` runs the search alone, the relaxation
only from ``schedule.RELAX_FROM_SECONDS``)."""


def decide_deal(variant_name: str, seed: str | None, deal_text: str | None,
                seconds: float = HOST_DEAL_SECONDS, pure: bool = False) -> tuple[str, list[str], str]:
    """Decide a host's own seed or position text (runs in a worker process): ``(result, moves, reason)``.

    ``result`` is ``solved`` (``moves`` wins, replayed through the engine),
    ``unsolvable`` (a proof: the search exhausted, or the relaxed model has
    no solution) or ``unknown`` (neither within ``seconds``); ``reason``
    says which part decided, or why not. Raises
    :class:`server.engine.errors.NotationError` for a deal text that does
    not parse (creation parses it first).
    """
    variant = find_variant(variant_name)
    position = parse_position(deal_text, variant) if deal_text is not None else deal(seed or "", variant)
    result = solve(position, variant, Budget(nodes=10**9, seconds=seconds), clock=time.monotonic, pure=pure)
    return result.result, list(result.moves), result.reason


async def check_host_deal(solver: SolverScheduler, owner: str, variant_name: str, seed: str | None,
                          deal_text: str | None, *, pure: bool = False) -> tuple[str, list[str], str]:
    """:func:`decide_deal` in a solver worker, for ``owner`` (the host's address) in its turn
    (:mod:`server.scheduler`): its wait for a worker counts in its :data:`HOST_DEAL_SECONDS`, and the search
    gets the time left. ``("unknown", [], why)`` when that time went by before a worker was free, or when the
    server runs no solver workers (the event loop never searches). Raises
    :class:`server.scheduler.QueueFull` when ``owner`` has its bound of deals waiting already."""
    if solver.executor is None:
        return "unknown", [], "this server runs no solver workers"
    try:
        return await solver.run(owner, decide_deal, variant_name, seed, deal_text, within_s=HOST_DEAL_SECONDS,
                                pure=pure)
    except DeadlinePassed as passed:
        return "unknown", [], (f"not searched: the solver workers were busy with other deals for "
                               f"{passed.waited_s:.1f} s")


FILL_CHUNK_S = 3.0
"""The longest job of the pool's filler (:func:`find_solvable`'s ``total_seconds``): short, so that the filler
and the hosts' deals take turns on the workers (:mod:`server.scheduler`); a round that finds no deal is
simply followed by another."""


async def fill_pool(store: Store, solver: SolverScheduler, variants: tuple[str, ...], target: int,
                    seconds_per_seed: float, pure: bool = False) -> None:
    """Keep each variant's pool at ``target`` deals; runs until cancelled.

    Each round works for the variant with the fewest deals ready (ties: the
    order of ``variants``): one :func:`find_solvable` job of at most
    :data:`FILL_CHUNK_S` seconds, as the owner :data:`server.scheduler.POOL`,
    so that it keeps its turn however many hosts' deals wait. Run one of
    these loops per solver worker. ``pure`` forces the solver's pure search
    (``FTR_SOLVER=python``).
    """
    while True:
        sizes = [(await store.pool.size(variant), index, variant) for index, variant in enumerate(variants)]
        for ready, _, name in sizes:
            store.metrics.pool_deals.labels(name).set(ready)
        size, _, variant = min(sizes)
        if size >= target:
            await asyncio.sleep(1.0)
            continue
        with store.metrics.solver_job("pool_find") as timing:
            found = await solver.run(POOL, find_solvable, variant, min(seconds_per_seed, FILL_CHUNK_S), FILL_CHUNK_S,
                                     pure)
            timing.result = "none" if found is None else "found"
        if found is not None:
            await store.pool.push(variant, msgspec.msgpack.encode(found))
            log.info("deal pool: one more solvable %s deal", variant)
