"""The ghost a race runs against (the server's ``ghost`` frame: a recorded game's progress, never a card), read
against the match clock; pure, no I/O (``server/static/ghost.js`` does the same for the page).

The timeline is ``[(ms, moves, foundation), ...]``: the deal first, then one entry per accepted command of the
recorded game, ms from its start. The gap is taken at the player's cards up: how much later than the ghost the
player first had that many cards up (negative: earlier); a win against a win compares the two times.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import NamedTuple

from protocol import messages as m

from .state import RaceState


class GhostAt(NamedTuple):
    """The ghost at one instant of the match clock: its ``label``, ``moves``, ``foundation`` cards up and
    ``status`` (``playing`` until its recorded end, then how it ended)."""

    label: str
    moves: int
    foundation: int
    status: str


class Gap(NamedTuple):
    """The player against the ghost: ``ms`` later than it (negative: earlier; None when the ghost never had as
    many cards up, ``more`` being how many more the player has)."""

    ms: int | None
    more: int = 0


def at(ghost: m.Ghost, ms: float) -> GhostAt:
    """The ghost at ``ms`` of the match clock (the last timeline entry at or before it)."""
    index = max(0, bisect_right([point[0] for point in ghost.timeline], ms) - 1)
    _, moves, foundation = ghost.timeline[index] if ghost.timeline else (0, 0, 0)
    return GhostAt(ghost.label, moves, foundation, ghost.status if ms >= ghost.time_ms else "playing")


def ghost_now(state: RaceState, now_ms: int) -> GhostAt | None:
    """The ghost of ``state``'s match at ``now_ms`` (local clock), or None without one or before the start;
    once the match has its results, at its end."""
    ghost = state.ghost
    if ghost is None or state.phase not in ("playing", "finished") or not state.start_at_ms:
        return None
    if state.phase == "finished":
        return at(ghost, float("inf"))
    return at(ghost, now_ms + state.clock_offset_ms - state.start_at_ms)


def gap(state: RaceState) -> Gap | None:
    """The player of ``state`` against its ghost (see the module docstring); None without a ghost, before a
    card up since the deal, or when the time of the player's cards up is not known (a resumed game, until
    its next card up)."""
    ghost = state.ghost
    if ghost is None:
        return None
    if state.status == "won" and ghost.status == "won":
        return Gap(state.time_ms - ghost.time_ms)
    cards, mine = state.ghost_reached
    start = ghost.timeline[0][2] if ghost.timeline else 0
    if mine is None or cards <= start:
        return None
    theirs = next((point[0] for point in ghost.timeline if point[2] >= cards), None)
    if theirs is None:
        return Gap(None, cards - ghost.foundation)
    return Gap(mine - theirs)


def gap_words(ghost: m.Ghost, found: Gap | None, short: bool = False) -> str:
    """``"12.3 s behind ann's best"`` / ``"4.0 s ahead of ann's best"`` / ``"level with ann's best"`` (within
    50 ms) / ``"3 cards more than ann's best"`` (``short``: without the ghost's label); ``""`` for no gap."""
    if found is None:
        return ""
    whom = "" if short else f" {ghost.label}"
    if found.ms is None:
        return f"{found.more} card{'' if found.more == 1 else 's'} more" + (f" than{whom}" if whom else "")
    tenths = (abs(found.ms) + 50) // 100  # half up in whole numbers, as the page (ghost.js): 1250 ms is 1.3 s
    seconds = f"{tenths // 10}.{tenths % 10} s"
    if not tenths:  # within 50 ms: the tenths shown are equal
        return "level" + (f" with{whom}" if whom else "")
    if found.ms < 0:
        return f"{seconds} ahead" + (f" of{whom}" if whom else "")
    return f"{seconds} behind{whom}"


__all__ = ["Gap", "GhostAt", "at", "gap", "gap_words", "ghost_now"]
