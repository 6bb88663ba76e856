"""Ghosts, pure: a recorded game's progress timeline, and which of two games of one deal is the better ghost.

A ghost is a recorded game raced again: never a player and never a card, only its progress (moves, foundation
cards, status) on its own timing. Its timeline is ``[[ms, moves, foundation], ...]``: first the deal
(``[0, 0, cards up at the deal]``, after the auto-play that comes with it), then one entry per accepted command
of the move log, with the ms from the start the command was accepted at and the moves and foundation cards
after it (its auto-play included), as the player's ``position`` replies said them. A game of more than
:data:`MAX_TIMELINE` commands is thinned (:func:`thinned`), so that what is kept and sent stays small.
"""

from __future__ import annotations

from collections.abc import Iterable

from protocol import messages as m

from .player import new_game

Timeline = list[tuple[int, int, int]]
"""``[(ms, moves, foundation), ...]`` (see the module docstring)."""

MAX_TIMELINE = 1000
"""Most entries a timeline keeps: a won classic game takes 200 to 400 commands; a game is not bounded (undo),
and a ghost's frame and each kept deal's ghost must be (1000 entries: about 11 KB of msgpack, 18 KB of JSON)."""


def thinned(points: Timeline, most: int = MAX_TIMELINE) -> Timeline:
    """``points`` when it has at most ``most`` entries (``most`` >= 2); else ``most`` of them, in order: the
    first and the last, every entry where the cards up changed (what the gap is read at), evenly spaced among
    themselves when they are too many, and evenly spaced others to fill up."""
    if len(points) <= most:
        return list(points)
    last = len(points) - 1
    changed = [0] + [i for i in range(1, last) if points[i][2] != points[i - 1][2]] + [last]
    if len(changed) >= most:
        keep = {changed[round(k * (len(changed) - 1) / (most - 1))] for k in range(most)}
    else:
        others = sorted(set(range(len(points))) - set(changed))
        room = most - len(changed)
        keep = set(changed) | {others[(k * len(others)) // room] for k in range(room)}
    return [points[i] for i in sorted(keep)]


def timeline(deal: str, settings: m.Settings, commands: Iterable[tuple[str, int]]) -> Timeline:
    """The progress timeline of a game from the match's ``deal`` (position text) and ``settings`` and the
    player's move log ``(command, ms from the start)``, :func:`thinned`. The log is the server's own, so every
    command is legal: raises the engine's errors otherwise (a corrupt log)."""
    game = new_game(deal, settings)
    points = [(0, 0, game.position.foundation_cards)]
    for command, ms in commands:
        game.play(command)
        points.append((ms, game.moves, game.position.foundation_cards))
    return thinned(points)


def ghost_label(name: str, match: str = "", daily: bool = False) -> str:
    """How a ghost is shown: ``"ann's best"`` for a player's best game on the deal, ``"ann's game"`` for her
    game of a finished match ``match`` (short: the race panels give a name 14 columns; the match is chosen
    by whoever asked for it), ``"ann's daily"`` for a daily attempt (raced in a practice of its day,
    which names the day)."""
    if daily:
        return f"{name}'s daily"
    return f"{name}'s game" if match else f"{name}'s best"


__all__ = ["MAX_TIMELINE", "Timeline", "ghost_label", "thinned", "timeline"]
