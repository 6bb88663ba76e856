"""The dead-game check (RULES.md section 5).

A game is dead when the stock is exhausted (empty, and no redeal can
refill it) and no sequence of legal moves can put one more card on a
foundation. :func:`is_dead` has the solver search the positions reachable
without a foundation move and answers :class:`Verdict` ``DEAD``, ``ALIVE``
or, when its node budget runs out first, ``UNKNOWN``. It knows every card,
face-down ones included (the engine does; players do not).
"""

from __future__ import annotations

from enum import Enum

from .position import Position
from .solver.progress import DEFAULT_BUDGET, can_progress
from .variants import Variant

__all__ = ["DEFAULT_BUDGET", "Verdict", "is_dead"]
"""``DEFAULT_BUDGET`` (the search's, :mod:`server.engine.solver.progress`) is re-exported: it is the default of
:func:`is_dead`'s budget, and callers ask this module the dead-game question."""


class Verdict(Enum):
    """Answer of :func:`is_dead`."""

    DEAD = "dead"
    ALIVE = "alive"
    UNKNOWN = "unknown"


def is_dead(position: Position, variant: Variant, budget: int = DEFAULT_BUDGET) -> Verdict:
    """Decide whether the game in ``position`` is dead (RULES.md section 5).

    The solver answers it (:func:`server.engine.solver.can_progress`, on its
    fast path: positions equal up to column order are searched once).
    ``budget`` bounds the positions expanded (a node count, so the answer
    is reproducible). A won game, or one whose stock can still be drawn or
    redealt, is ``ALIVE``. The search changes nothing.
    """
    return Verdict(can_progress(position, variant, budget))
