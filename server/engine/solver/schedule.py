"""The solver's schedule: a short search, then the relaxation, then a longer search (RULES.md section 9).

:func:`solve` is what callers of :mod:`server.engine.solver` get: with a
wall-clock cap of at least :data:`RELAX_FROM_SECONDS` it splits the time between the search
(:func:`server.engine.solver.search.solve`: the portfolio and the complete
search) and the relaxed model (:mod:`.relaxation`, when OR-Tools is
installed and the variant is one it judges); without such a cap, or
without OR-Tools, it is the search alone, node for node. The shares were chosen by
measurement (README.md): most solvable deals are solved within the first
fraction of a second, the relaxation answers within a few seconds when it
answers at all, and the deals the long search still decides are the deep
ones next to the time cap.

``Result.reason`` says which part decided: the search's own words (``every
reachable state was searched or proven lost``, ``time limit reached``, ...)
or, when the relaxation proved the deal lost, a sentence starting
``relaxation:``; ``Result.extra`` carries ``decided_by`` (``"search"``,
``"relaxation"`` or ``""`` when undecided) and, when it ran,
``relaxation`` (its verdict) and ``relaxation_seconds``.
"""

from __future__ import annotations

from collections.abc import Callable

from ..position import Position
from ..variants import Variant
from . import relaxation
from .search import DOMINANCE, Budget, Result
from .search import solve as search

SHORT_SHARE = 0.1
"""Share of the time cap the first, short search gets."""

RELAX_SHARE = 0.25
"""Share of the time cap the relaxation may take at most (the long search gets the rest, and any unused part)."""

_DEFAULT_BUDGET = Budget()

RELAX_FROM_SECONDS = 30.0
"""The relaxation runs only in solves with at least this time cap: with 8-10 s it proved only deals the search
proves sooner (README.md), so shorter solves give all their time to the search."""


def solve(
    position: Position,
    variant: Variant,
    budget: Budget = _DEFAULT_BUDGET,
    *,
    autoplay_on: bool = True,
    clock: Callable[[], float] | None = None,
    portfolio: bool = True,
    relax: bool = True,
    dominance: tuple[str, ...] = DOMINANCE,
    pure: bool = False,
    reduction: str = "",
    lock_every_state: bool = True,
) -> Result:
    """Decide ``position``: ``solved`` (moves replayed to a win), ``unsolvable`` (a proof) or ``unknown``.

    ``budget``, ``autoplay_on``, ``clock``, ``portfolio``, ``dominance``, ``pure``, ``reduction`` and
    ``lock_every_state`` as for
    :func:`server.engine.solver.search.solve`; ``budget.nodes`` counts the
    nodes of both searches together. With a time cap (``budget.seconds``
    and a ``clock``) of at least :data:`RELAX_FROM_SECONDS` and ``relax``
    (the default) the schedule of the module docstring runs; the
    relaxation's time counts against the cap. An
    ``unsolvable`` answer is a proof either way: an exhausted complete
    search, or a relaxed model with no solution (:mod:`.relaxation`, whose
    docstring argues each constraint).
    """
    timed = budget.seconds is not None and clock is not None and budget.seconds >= RELAX_FROM_SECONDS
    if not (timed and relax and relaxation.judges(variant) and relaxation.available()):
        result = search(position, variant, budget, autoplay_on=autoplay_on, clock=clock, portfolio=portfolio,
                        dominance=dominance, pure=pure, reduction=reduction,
                        lock_every_state=lock_every_state)
        return _tagged(result, "search" if result.result != "unknown" else "", {})
    assert clock is not None and budget.seconds is not None
    started = clock()
    total = budget.seconds
    first = search(position, variant, Budget(budget.nodes, total * SHORT_SHARE, budget.states),
                   autoplay_on=autoplay_on, clock=clock, portfolio=portfolio, dominance=dominance, pure=pure, reduction=reduction,
                        lock_every_state=lock_every_state)
    if first.result != "unknown":
        return _tagged(first, "search", {})
    left = total - (clock() - started)
    extra: dict[str, object] = {}
    if left > 0:
        relaxed = relaxation.relax(position, variant, seconds=min(left, total * RELAX_SHARE))
        extra = {"relaxation": relaxed.verdict, "relaxation_seconds": round(relaxed.seconds, 3)}
        if relaxed.verdict == "unsat":
            return Result("unsolvable", nodes=first.nodes, states=first.states, autoplay=autoplay_on,
                          reason=f"relaxation: {relaxed.reason}", extra={"decided_by": "relaxation", **extra},
                          solver=first.solver)
    left = total - (clock() - started)
    if left <= 0 or first.reason != "time limit reached":
        return _tagged(first, "", extra)  # a node or state bound would end the longer search the same way
    second = search(position, variant, Budget(max(budget.nodes - first.nodes, 0), left, budget.states),
                    autoplay_on=autoplay_on, clock=clock, portfolio=False, dominance=dominance, pure=pure, reduction=reduction,
                        lock_every_state=lock_every_state)
    merged = Result(second.result, second.moves, first.nodes + second.nodes, second.states, autoplay_on,
                    second.reason, extra=second.extra, solver=second.solver)
    return _tagged(merged, "search" if merged.result != "unknown" else "", extra)


def _tagged(result: Result, decided_by: str, extra: dict[str, object]) -> Result:
    return Result(result.result, result.moves, result.nodes, result.states, result.autoplay, result.reason,
                  {**result.extra, "decided_by": decided_by, **extra}, result.solver)
