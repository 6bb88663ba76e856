"""Bots as the match core sees them: their bounds, their names and their pace. Pure: no clock, no I/O.

A bot is a player of a match that the server plays (:mod:`server.match.bots`) with the player-view planner
(:func:`server.engine.planner.plan`) at one of its :data:`~server.engine.planner.LEVELS`. Its name is its
level's, ``"strong bot"``, numbered from the second of a level on (``"strong bot 2"``); the bots take their
names when the match is created, so no person of the match can join under one (``name_taken``).

Its pace is ``moves_per_min`` commands a minute on average, never faster: the pause before each command is
drawn from a random generator seeded by the match, the bot and the command's number (the same match gives
the same pauses, whichever process plays it), about the mean pause, longer to read the deal before the
first command, after a command that turned a card face up, and when nothing is left to do but draw or
redeal; a little shorter otherwise, so the average holds (:data:`PAUSE_FACTORS`).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from ..engine import Game
from ..engine.rng import DealRandom

MAX_BOTS_PER_MATCH = 3
"""Most bots one match may have (and always fewer than its seats: one at least is a person's)."""

MIN_MOVES_PER_MIN = 1
"""The slowest pace a bot may have (commands a minute)."""
MAX_MOVES_PER_MIN = 600
"""The fastest pace a bot may have (commands a minute): a mean pause of 100 ms."""
DEFAULT_MOVES_PER_MIN = 30
"""A bot's pace when ``POST /matches`` gives none."""


class PauseKind(StrEnum):
    """What a bot is about to do, as far as its pause is concerned (:func:`pause_kind`)."""

    FIRST = "first"
    """Its first command: the deal is read first."""
    REVEAL = "reveal"
    """The command before turned a card face up: a new card to take in."""
    DRAW = "draw"
    """No command but a draw or a redeal is left: the bot hesitates before giving up the tableau."""
    PLAIN = "plain"
    """Any other command."""


PAUSE_FACTORS: dict[PauseKind, float] = {
    PauseKind.FIRST: 2.5, PauseKind.REVEAL: 1.5, PauseKind.DRAW: 1.3, PauseKind.PLAIN: 0.85,
}
"""The mean pause of each kind, as a multiple of ``60 / moves_per_min`` seconds."""

JITTER = (0.6, 1.4)
"""The pause of one command is its kind's mean times a factor drawn evenly from this range."""


def bot_names(levels: Sequence[str]) -> list[str]:
    """The names of bots of ``levels`` (in order): ``"LEVEL bot"``, the second of a level ``"LEVEL bot 2"``."""
    seen: dict[str, int] = {}
    names = []
    for level in levels:
        seen[level] = seen.get(level, 0) + 1
        names.append(f"{level} bot" if seen[level] == 1 else f"{level} bot {seen[level]}")
    return names


def pause_kind(game: Game) -> PauseKind:
    """The :class:`PauseKind` of the command a bot plays next in ``game`` (an engine game, not changed)."""
    if game.moves == 0 and not game.history:
        return PauseKind.FIRST
    if all(move.command.kind in ("draw", "redeal", "undo") for move in game.legal_moves()):
        return PauseKind.DRAW
    history = game.history
    if history and history[-1].revealed:
        return PauseKind.REVEAL
    return PauseKind.PLAIN


def pause_ms(key: str, moves_per_min: int, kind: PauseKind) -> int:
    """The pause in ms before the command of ``key`` (``"CODE/NAME/SEQ"``: one per command of one bot) at
    ``moves_per_min`` (1..600) for a command of ``kind``; at least half the mean pause. Raises ``ValueError``
    for a pace outside 1..600."""
    if not MIN_MOVES_PER_MIN <= moves_per_min <= MAX_MOVES_PER_MIN:
        raise ValueError(f"moves_per_min must be {MIN_MOVES_PER_MIN}..{MAX_MOVES_PER_MIN}")
    low, high = JITTER
    spread = DealRandom(f"{key}/pace").below(1001) / 1000
    mean_ms = 60_000 / moves_per_min
    return int(mean_ms * PAUSE_FACTORS[kind] * (low + (high - low) * spread))


__all__ = ["DEFAULT_MOVES_PER_MIN", "JITTER", "MAX_BOTS_PER_MATCH", "MAX_MOVES_PER_MIN", "MIN_MOVES_PER_MIN",
           "PAUSE_FACTORS", "PauseKind", "bot_names", "pause_kind", "pause_ms"]
