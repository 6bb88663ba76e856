"""Hints from what the player can see (RULES.md section 8: "Hints, where a match
allows them, use only what the player can see").

:func:`hint` takes a :class:`~server.engine.view.View`, never a position:
it cannot know the stock's order or a face-down card, so a hint can reveal
nothing. It suggests, in order of preference: a card to the foundations;
a move that turns a face-down card up or empties a column; a move that
uncovers a card the foundations take (into an empty column if need be); a
move that builds a card onto a column from the waste or from under another
card; a draw; a redeal; otherwise nothing.
"""

from __future__ import annotations

from .position import Position
from .rules import legal_moves, slot_for
from .variants import Variant
from .view import View

_PLACEHOLDER = 0  # stands for every card the player cannot see; no rule reads its value


def _visible_position(view: View) -> Position:
    """A position that agrees with ``view`` on everything visible (for legal moves only)."""
    tableau = tuple((_PLACEHOLDER,) * hidden + column for column, hidden in zip(view.tableau, view.hidden))
    return Position(tableau, view.hidden, view.foundations, (_PLACEHOLDER,) * view.stock_count, view.waste,
                    view.redeals_left)


def hint(view: View, variant: Variant) -> str | None:
    """A suggested command in the pinned notation, or ``None`` when nothing is left to do."""
    ranking = ranked(view, variant)
    return ranking[0][1] if ranking else None


def ranked(view: View, variant: Variant) -> list[tuple[int, str]]:
    """Every legal command the one look finds useful, as ``(score, command)``, best first (ties in the order of
    :func:`~server.engine.rules.legal_moves`); :func:`hint` is the first. Scores: 100 finish, 90 a card to the
    foundations, 80 a move that turns a face-down card up or empties a column, 70 a whole column onto a card,
    60 a move that uncovers a card the foundations take, 50 a build from under another card, 40 the waste onto
    a card, 20 the waste into an empty column, 10 a draw, 5 a redeal. Commands scored 0 are left out."""
    position = _visible_position(view)
    scored: list[tuple[int, int, str]] = []
    for index, legal in enumerate(legal_moves(position, variant)):
        command = legal.command
        score = 0
        if command.kind == "finish":
            score = 100
        elif command.kind == "move" and command.target is not None and command.source is not None:
            if command.target.kind == "foundation":
                score = 90
            elif command.source.kind == "column":
                column = view.tableau[command.source.index - 1]
                hidden = view.hidden[command.source.index - 1]
                target_empty = not view.tableau[command.target.index - 1] and not view.hidden[command.target.index - 1]
                if legal.cards == len(column):
                    score = 80 if hidden else (0 if target_empty else 70)
                elif slot_for(position, column[-legal.cards - 1]) >= 0:
                    score = 60  # uncovers a card that goes up next (into an empty column if need be)
                elif not target_empty:
                    below = column[-legal.cards - 1]
                    score = 0 if column[-legal.cards] in variant.builds_on[below] else 50
            elif command.source.kind == "waste":
                score = 40 if view.tableau[command.target.index - 1] else 20
        elif command.kind == "draw":
            score = 10
        elif command.kind == "redeal":
            score = 5
        if score:
            scored.append((-score, index, str(command)))
    scored.sort()
    return [(-score, command) for score, _, command in scored]
