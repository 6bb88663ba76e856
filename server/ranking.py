"""Ranking of a match's results (DESIGN.md "Ranking"). Pure: no I/O, no clock.

Winners first, by time, then by moves. Then the rest by cards on the
foundations (more is better), then by the time of their last foundation
card (earlier is better), then by moves. Equal keys share a rank
(competition ranking: 1, 2, 2, 4).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Standing:
    """One player's end of game. Times are ms from the match's start instant."""

    name: str
    status: str
    time_ms: int
    moves: int
    undos: int
    hints: int
    foundation: int
    last_foundation_ms: int


def _key(s: Standing) -> tuple[int, ...]:
    if s.status == "won":
        return (0, s.time_ms, s.moves)
    return (1, -s.foundation, s.last_foundation_ms, s.moves)


def rank(standings: list[Standing]) -> list[tuple[int, Standing]]:
    """Return ``(rank, standing)`` pairs, best first (ties ordered by name)."""
    ordered = sorted(standings, key=lambda s: (_key(s), s.name))
    ranked: list[tuple[int, Standing]] = []
    for index, standing in enumerate(ordered):
        if index and _key(standing) == _key(ordered[index - 1]):
            ranked.append((ranked[-1][0], standing))
        else:
            ranked.append((index + 1, standing))
    return ranked
