"""The bots' thinking in the solver's worker processes: one planner decision (server/match/bots.py plays it).

Kept apart from :mod:`server.match.bots` so that a worker unpickling the job imports the planner and the hints
only, not the match service (Redis, sessions).
"""

from __future__ import annotations

from .engine.view import View
from .hints import decide_hint


def decide_bot(view: View, variant_name: str, seen: list[View], level: str, seed: str, autoplay_on: bool,
               pure: bool, think_s: float, *, seconds: float) -> str | None:
    """The planner's command (notation) for a bot that sees ``view`` (``seen``: its views so far, ``level``,
    ``seed`` and ``autoplay_on`` as :func:`server.engine.planner.plan` takes them), thinking at most ``think_s``
    seconds (its share of the pause) and ``seconds`` (what the solver queue left of its time); ``None`` when
    no command leads to a position not seen before."""
    return decide_hint(view, variant_name, seen, level, seed, autoplay_on, pure, seconds=min(think_s, seconds))


__all__ = ["decide_bot"]
