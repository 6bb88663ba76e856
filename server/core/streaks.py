"""The daily challenge's streak rule, pure: from the days a player played to ``(streak, best_streak, freezes)``.

A day counts when the player has an ended attempt that started on it (the server's UTC date, any daily
variant). The streak is the run of consecutive days counted up to today; today not played yet breaks
nothing (the day is still going). A missed day is bridged by a freeze when one is held: the streak is kept,
not grown, and the freeze is spent; without one the streak is 0 again. Freezes are earned, one per
:attr:`StreakRule.freeze_every` days played (all days played, counted from the first), and at most
:attr:`StreakRule.max_freezes` are held (one earned beyond that is lost).

No clock: today comes in as a date. The server's side is :meth:`server.history.History.streak`: the days a
named player played come from its keys (``{n:H}:days``), the rule's two numbers from ``FTR_FREEZE_EVERY_DAYS``
and ``FTR_FREEZES_MAX``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import NamedTuple

from .daily import parse_date


class StreakRule(NamedTuple):
    """The freezes' rule: one earned per ``freeze_every`` days played (>= 1), at most ``max_freezes`` held (>= 0)."""

    freeze_every: int = 7
    max_freezes: int = 2


DEFAULT_RULE = StreakRule()
"""One freeze per seven days played, two held at most."""


class Streak(NamedTuple):
    """A player's streak as of a day: the current ``streak`` (days), the ``best_streak`` ever, ``freezes`` held."""

    streak: int
    best_streak: int
    freezes: int


def streak_of(played: Iterable[str], today: str, rule: StreakRule = DEFAULT_RULE) -> Streak:
    """The streak of a player who played on the UTC dates ``played`` (``YYYY-MM-DD``; any order, repeats
    allowed), as of ``today``: see the module docstring. Days after ``today`` are left out. Raises
    ``ValueError`` for a date that is not ``YYYY-MM-DD`` or a rule out of range."""
    if rule.freeze_every < 1 or rule.max_freezes < 0:
        raise ValueError("a streak rule earns a freeze every 1 or more days played and holds 0 or more")
    end = dt.date.fromisoformat(parse_date(today))
    days = sorted({d for d in (dt.date.fromisoformat(parse_date(text)) for text in played) if d <= end})
    if not days:
        return Streak(0, 0, 0)
    played_set = set(days)
    streak = best = freezes = count = 0
    day = days[0]
    one = dt.timedelta(days=1)
    while day <= end:
        if day in played_set:
            streak += 1
            count += 1
            best = max(best, streak)
            if count % rule.freeze_every == 0:
                freezes = min(rule.max_freezes, freezes + 1)
        elif day != end:  # a missed day (today is still going: it breaks nothing yet)
            if streak and freezes:
                freezes -= 1
            else:
                streak = 0
        day += one
    return Streak(streak, best, freezes)


__all__ = ["DEFAULT_RULE", "Streak", "StreakRule", "streak_of"]
