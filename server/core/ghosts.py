"""Ghosts, pure: a recorded game's progress timeline, and which of two games of one deal is the better ghost.

A ghost is a recorded game raced again: never a player and never a card, only its progress (moves, foundation
cards, status) on its own timing. Its timeline is ``[[ms, moves, foundation], ...]``: first the deal
(``[0, 0, cards up at the deal]``, after the auto-play that comes with it), then one entry per accepted command
of the move log, with the ms from the start the command was accepted at and the moves and foundation cards
after it (its auto-play included), as the player's ``position`` replies said them.
"""

from __future__ import annotations

from collections.abc import Iterable

from protocol import messages as m

from .player import PlayerStatus, new_game

Timeline = list[tuple[int, int, int]]
"""``[(ms, moves, foundation), ...]`` (see the module docstring)."""


def timeline(deal: str, settings: m.Settings, commands: Iterable[tuple[str, int]]) -> Timeline:
    """The progress timeline of a game from the match's ``deal`` (position text) and ``settings`` and the
    player's move log ``(command, ms from the start)``. The log is the server's own, so every command is legal:
    raises the engine's errors otherwise (a corrupt log)."""
    game = new_game(deal, settings)
    points = [(0, 0, game.position.foundation_cards)]
    for command, ms in commands:
        game.play(command)
        points.append((ms, game.moves, game.position.foundation_cards))
    return points


def ghost_rank(status: str, time_ms: int, foundation: int, moves: int) -> tuple[int, ...]:
    """The sort key of a game as a ghost, smaller is better: a won game first, by time then moves; else the
    most foundation cards, then the fewest moves. (The history's store script orders kept ghosts the same way.)"""
    if status == PlayerStatus.WON:
        return (0, time_ms, moves)
    return (1, -foundation, moves)


def ghost_label(name: str, match: str = "") -> str:
    """How a ghost is shown: ``"ann's best"`` for a player's best game on the deal, ``"ann in match CODE"``
    for the game of a finished match."""
    return f"{name} in match {match}" if match else f"{name}'s best"


__all__ = ["Timeline", "ghost_label", "ghost_rank", "timeline"]
