"""The position: where every card of a game lies (RULES.md section 1).

A :class:`Position` is an immutable value (a named tuple, cheap to build on
the engine's hot path): applying a command returns a new
one, so a refused command cannot change anything and undo is a return to an
earlier value. Cards are ``int`` codes (:mod:`protocol.cards`).
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from protocol.cards import suit_of

EMPTY_SLOT = -1
"""Value of an empty foundation slot in :attr:`Position.foundations`."""

_CARDS_UP_TO: dict[int, int] = {EMPTY_SLOT: 0, **{code: code % 13 + 1 for code in range(52)}}
"""Cards on a foundation slot whose top is the key (a card code 0-51, or EMPTY_SLOT): the top's rank."""


class Position(NamedTuple):
    """Every card of one game, and the redeals left.

    - ``tableau``: one tuple per column (1..N), bottom to top: the last card
      is the exposed one.
    - ``hidden``: per column, how many of its bottom cards are face down
      (face-down cards are always the bottom ones; RULES.md section 7).
    - ``foundations``: per slot (1..K), the code of its top card or
      :data:`EMPTY_SLOT`; a slot with top card of rank r holds the r cards
      A..r of that suit.
    - ``stock``: face-down cards, the next card to be drawn first.
    - ``waste``: face-up cards, bottom to top: the last one is playable.
    - ``redeals_left``: how many more times the waste may become the stock.
    """

    tableau: tuple[tuple[int, ...], ...]
    hidden: tuple[int, ...]
    foundations: tuple[int, ...]
    stock: tuple[int, ...]
    waste: tuple[int, ...]
    redeals_left: int

    @property
    def foundation_cards(self) -> int:
        """Number of cards on the foundations."""
        return sum(map(_CARDS_UP_TO.__getitem__, self.foundations))

    @property
    def is_won(self) -> bool:
        """True when every card is on the foundations (RULES.md section 1)."""
        return not self.stock and not self.waste and not any(self.tableau)

    def card_counts(self) -> Counter[int]:
        """How many copies of each card code the position holds, wherever they lie."""
        counts: Counter[int] = Counter(self.stock)
        counts.update(self.waste)
        for column in self.tableau:
            counts.update(column)
        for top in self.foundations:
            if top != EMPTY_SLOT:
                base = suit_of(top) * 13
                counts.update(range(base, top + 1))
        return counts

    def __str__(self) -> str:
        from .text import format_position

        return format_position(self)
