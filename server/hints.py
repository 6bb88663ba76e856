"""Hints from the player-view planner (server/engine/planner.py), in the solver's worker processes.

A hint is the planner's choice for the player's view at the level ``FTR_HINT_LEVEL``, given the views of the
game so far (so it never suggests undoing the command before, nor going back to a position seen), within
``FTR_HINT_SECONDS``: the wait for a worker counts (:mod:`server.scheduler`), and the planner is given the
time left. When every solver worker is busy, the time runs out before a worker is free, the server runs no
solver workers, the worker fails, or ``FTR_HINT_LEVEL`` is ``look``, :func:`planned_hint` answers ``None`` and
the caller gives today's one-look hint (:func:`server.engine.hint.hint`). The planner only ever gets views: it cannot reveal what the
player does not see (RULES.md section 8).
"""

from __future__ import annotations

import logging
import time
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING

from .engine import Game, find_variant, redact
from .engine.planner import plan
from .engine.view import View
from .scheduler import DeadlinePassed, QueueFull

if TYPE_CHECKING:
    from .match.context import MatchContext

log = logging.getLogger("forty_thieves.hints")


def seen_views(game: Game) -> list[View]:
    """The views of ``game``'s positions from the deal on, oldest first, the current one last (the positions
    its undo history still holds: an undone command's position is no longer among them)."""
    history = game.history
    if not history:
        return [redact(game.position)]
    return [redact(history[0].before), *(redact(step.after) for step in history)]


def decide_hint(view: View, variant_name: str, seen: list[View], level: str, seed: str, autoplay_on: bool,
                pure: bool, *, seconds: float) -> str | None:
    """The worker's side: the planner's command for ``view`` within ``seconds`` (wall clock), or ``None``."""
    return plan(view, find_variant(variant_name), seen=seen, level=level, seed=seed, autoplay_on=autoplay_on,
                seconds=seconds, clock=time.monotonic, pure=pure).command


async def planned_hint(service: MatchContext, owner: str, game: Game, seed: str) -> str | None:
    """The planner's hint for ``game`` (a player's game, never changed here) run for ``owner`` (the client's
    address) in a solver worker, or ``None`` when it could not run in time (see the module docstring); ``""``
    when the planner finds nothing to do."""
    solver = service.solver
    if service.settings.hint_level == "look":
        return None  # the server is set to give the one-look hint alone
    if solver.executor is None or sum(solver.running.values()) >= solver.workers:
        return None  # no workers, or all busy (a deal search can hold one for seconds): the one-look hint now
    settings = service.settings
    seen = seen_views(game)
    with service.metrics.solver_job("hint") as timing:
        try:
            command = await solver.run(owner, decide_hint, seen[-1], game.variant.name, seen, settings.hint_level,
                                       seed, game.autoplay, settings.pure_solver, within_s=settings.hint_seconds)
        except (DeadlinePassed, QueueFull, BrokenProcessPool, RuntimeError) as error:
            timing.result = None
            log.info("hint from the one look: the planner could not run (%s)", error)
            return None
        timing.result = "found" if command else "none"
    return command or ""


__all__ = ["decide_hint", "planned_hint", "seen_views"]
