"""Ranking of a match's results (DESIGN.md "Ranking"). Pure: no I/O, no clock.

Winners first, by time, then by moves. Then the rest by cards on the
foundations (more is better), then by the time of their last foundation
card (earlier is better), then by moves. Equal keys share a rank
(competition ranking: 1, 2, 2, 4).

A series of rounds (a match and its rematches) has standings of its own:
:func:`series_standings` (rounds won, then foundation cards, then time).
"""

from __future__ import annotations

from dataclasses import dataclass

from .player import PlayerStatus


@dataclass(frozen=True, slots=True)
class Standing:
    """One player's end of game. Times are ms from the match's start instant."""

    name: str
    status: PlayerStatus
    time_ms: int
    moves: int
    undos: int
    hints: int
    foundation: int
    last_foundation_ms: int


def _key(s: Standing) -> tuple[int, ...]:
    if s.status == PlayerStatus.WON:
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


@dataclass(frozen=True, slots=True)
class RoundResult:
    """One player's line in one round's ranked results (a ``ResultRow``'s fields the series needs)."""

    name: str
    rank: int
    status: PlayerStatus
    foundation: int
    time_ms: int


@dataclass(frozen=True, slots=True)
class SeriesStanding:
    """A player's totals over the rounds of a series: rounds won, foundation cards, time (ms)."""

    name: str
    rounds_won: int
    foundation: int
    time_ms: int


def series_standings(rounds: list[list[RoundResult]]) -> list[SeriesStanding]:
    """Totals per player over the ended ``rounds`` of a series, best first.

    A round is won by the player ranked first in it with status ``won``
    (two winners tied at rank 1 both win it; a round nobody won counts for
    nobody). ``foundation`` and ``time_ms`` add up every round the player
    played. Order: more rounds won, then more foundation cards, then less
    time, then name (so the order is total).
    """
    won: dict[str, int] = {}
    cards: dict[str, int] = {}
    time: dict[str, int] = {}
    for results in rounds:
        for row in results:
            won.setdefault(row.name, 0)
            if row.rank == 1 and row.status == PlayerStatus.WON:
                won[row.name] += 1
            cards[row.name] = cards.get(row.name, 0) + row.foundation
            time[row.name] = time.get(row.name, 0) + row.time_ms
    totals = [SeriesStanding(name, won[name], cards[name], time[name]) for name in won]
    return sorted(totals, key=lambda s: (-s.rounds_won, -s.foundation, s.time_ms, s.name))
