"""Seeded deals (RULES.md sections 1 and 7): the same seed gives the same deal forever.

Algorithm, version :data:`~server.engine.rng.DEAL_VERSION` (1):

1. The deck in order: for each deck, suits C D H S, ranks A..K. Where the
   variant deals aces to the foundations (lucas), every ace is taken out
   first and put on slots 1..K in the order AC AD AH AS AC AD AH AS.
2. Shuffle the deck with :func:`server.engine.rng.shuffle` driven by
   :class:`server.engine.rng.DealRandom` (SHA-256 of the seed string).
3. Deal row by row: cards 1..N of the shuffled deck form row 1 (the bottom
   row), one per column left to right, and so on; the last row dealt is the
   top row, the exposed cards. The variant's first ``face_down`` rows are
   face down.
4. The rest is the stock, in deck order: the next card of the shuffled deck
   is the first card drawn.

A seed is any string; game numbers are decimal strings ("1", "2", ...).
The same seed deals the same order for every variant with the same number
of decks, so classic and relaxed share a game number's cards.
"""

from __future__ import annotations

from protocol.cards import card

from .position import EMPTY_SLOT, Position
from .rng import DealRandom, shuffle
from .variants import Variant


def ordered_deck(variant: Variant) -> list[int]:
    """Card codes of the unshuffled deck: per deck, suits C D H S, ranks A..K."""
    return [code for _ in range(variant.decks) for code in range(52)]


def layout(cards: list[int], variant: Variant, foundations: tuple[int, ...] | None = None) -> Position:
    """Lay out an already ordered card list: rows of the tableau first, the rest is the stock.

    ``cards`` holds the cards not on the foundations (the first one is dealt
    to column 1 of the bottom row); ``foundations`` defaults to all slots
    empty. Raises :class:`ValueError` if there are too few cards.
    """
    n, rows = variant.columns, variant.cards_per_column
    if len(cards) < n * rows:
        raise ValueError(f"{len(cards)} cards cannot fill {n} columns of {rows}")
    tableau = tuple(tuple(cards[row * n + col] for row in range(rows)) for col in range(n))
    return Position(
        tableau=tableau,
        hidden=(variant.face_down,) * n,
        foundations=foundations if foundations is not None else (EMPTY_SLOT,) * variant.slots,
        stock=tuple(cards[n * rows :]),
        waste=(),
        redeals_left=variant.redeals,
    )


def deal(seed: str, variant: Variant) -> Position:
    """The deal of ``seed`` (any string) for ``variant`` (see the module docstring).

    Raises :class:`TypeError` when ``seed`` is not a string.
    """
    if not isinstance(seed, str):
        raise TypeError(f"a seed is a string, not {type(seed).__name__}")
    deck = ordered_deck(variant)
    foundations = None
    if variant.aces_on_foundations:
        aces = [card(1, suit) for _ in range(variant.decks) for suit in range(4)]
        deck = [c for c in deck if c % 13 != 0]
        foundations = tuple(aces)
    shuffle(deck, DealRandom(seed))
    return layout(deck, variant, foundations)
