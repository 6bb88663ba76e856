"""The dead-game question on the solver's fast path (RULES.md section 5).

A game is dead when the stock is exhausted (empty, and no redeal can
refill it) and no sequence of legal moves can put one more card on a
foundation. :func:`can_progress` answers it with the solver's move
generator and canonical transposition key: it searches the states
reachable without a foundation move (tableau moves, waste to tableau and,
where the variant allows it, foundation to tableau) and answers ``alive``
as soon as one of them has a card that a foundation slot takes on a column
top or the waste top, ``dead`` when every such state was searched, and
``unknown`` when the node budget ran out first.

:func:`server.engine.dead.is_dead` delegates to it; the tests compare it
with the independent implementation's dead-game search on random
positions (tests/engine/solver/test_progress.py).
"""

from __future__ import annotations

from typing import Literal

from ..position import Position
from ..rules import stock_exhausted
from ..variants import Variant
from .search import _Expander
from .state import Rules, State, from_position, key

Progress = Literal["alive", "dead", "unknown"]

DEFAULT_BUDGET = 20_000
"""Positions the dead-game search may expand before answering ``unknown``."""


def can_progress(position: Position, variant: Variant, budget: int = DEFAULT_BUDGET) -> Progress:
    """``alive``, ``dead`` or ``unknown``: can one more card reach a foundation? (RULES.md section 5)

    A won game, or one whose stock can still be drawn or redealt, is
    ``alive`` (the question is only asked of an exhausted stock).
    ``budget`` bounds the states expanded (a count, so the answer is
    reproducible). Pure: changes nothing, reads no clock.
    """
    if position.is_won or not stock_exhausted(position, variant):
        return "alive"
    rules = Rules(variant)
    expander = _Expander(rules)
    face_down = rules.face_down
    lower = variant.foundation_to_column
    start = from_position(position, variant)
    seen = {key(start, face_down)}
    frontier = [start]
    expanded = 0
    while frontier:
        state = frontier.pop()
        columns, _, foundations, _, waste, _ = state
        wanted = rules.targets(foundations)[0]
        if (waste and waste[-1] in wanted) or any(column and column[-1] in wanted for column in columns):
            return "alive"
        if expanded >= budget:
            return "unknown"
        expanded += 1
        successors = expander.moves(state)
        if lower:
            successors += _lowered(rules, state)
        for text, nxt, *_ in successors:
            if text.endswith("-f") or text in ("s", "r"):
                continue  # foundation moves are checked above; no stock is left
            k = key(nxt, face_down)
            if k not in seen:
                seen.add(k)
                frontier.append(nxt)
    return "dead"


def _lowered(rules: Rules, state: State) -> list[tuple[str, State, int]]:
    """Foundation-to-column moves (variants that allow them), as (placeholder, next state)."""
    columns, hidden, foundations, stock, waste, redeals = state
    d = rules.decks
    table = rules.builds_on
    result: list[tuple[str, State, int]] = []
    for index, height in enumerate(foundations):
        if not height or (index % d and foundations[index - 1] == height):
            continue  # an empty slot, or the same top card as the slot before it
        suit = index // d
        card = suit * 13 + height - 1
        lowered = bytearray(foundations)
        lowered[index] -= 1
        base = suit * d
        lowered[base : base + d] = bytes(sorted(lowered[base : base + d]))
        for j, column in enumerate(columns):
            if not column or card in table[column[-1]]:
                cols = columns[:j] + (column + bytes((card,)),) + columns[j + 1 :]
                result.append(("f-", (cols, hidden, bytes(lowered), stock, waste, redeals), -2))
    return result
