"""The position: where every card of a game lies (RULES.md section 1).

A :class:`Position` is an immutable value (a named tuple, cheap to build on
the engine's hot path): applying a command returns a new
one, so a refused command cannot change anything and undo is a return to an
earlier value. Cards are ``int`` codes (:mod:`protocol.cards`).

The canonical full text of a position (:func:`format_position`, RULES.md
section 10) lives here so that ``str(position)`` needs nothing above this
module; :mod:`server.engine.text` parses that text and re-exports the
formatter.
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from protocol.cards import format_card, suit_of

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
        return format_position(self)


def _line(label: str, items: list[str]) -> str:
    return f"{label}: {' '.join(items)}" if items else f"{label}:"


def format_position(position: Position) -> str:
    """Canonical full position text of ``position`` (RULES.md section 10; no trailing newline)."""
    lines = [
        _line("Foundations", [format_card(t) if t != EMPTY_SLOT else "-" for t in position.foundations]),
        _line("Stock", [format_card(c) for c in position.stock]),
        _line("Waste", [format_card(c) for c in position.waste]),
        f"Redeals left: {position.redeals_left}",
    ]
    for number, (column, hidden) in enumerate(zip(position.tableau, position.hidden), 1):
        cards = [f"({format_card(c)})" if i < hidden else format_card(c) for i, c in enumerate(column)]
        lines.append(_line(str(number), cards))
    return "\n".join(lines)
