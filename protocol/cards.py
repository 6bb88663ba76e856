"""Cards and their notation (RULES.md sections 1 and 10).

A card is an ``int`` code in ``0..51``: ``suit * 13 + (rank - 1)`` with suits
in the order C D H S and ranks 1 (ace) .. 13 (king). The two copies of a card
in a two-deck game have the same code: copies are indistinguishable
(RULES.md section 1), so no deck tag exists anywhere.

Notation: rank ``A 2 3 4 5 6 7 8 9 T J Q K`` (the parser also accepts ``10``)
followed by suit ``C D H S``, e.g. ``AS``, ``TD``, ``QH``. An unknown card
(face down, seen by a player) is written ``??``.
"""

from __future__ import annotations

from .errors import NotationError

RANKS = "A23456789TJQK"
"""Rank letters, index ``rank - 1``."""
SUITS = "CDHS"
"""Suit letters, index = suit number (0 clubs, 1 diamonds, 2 hearts, 3 spades)."""
SUIT_SYMBOLS = "♣♦♥♠"
"""Suit symbols in the order of :data:`SUITS`, for display."""
UNKNOWN = "??"
"""Notation of a card the reader may not see."""

ACE = 1
KING = 13
CARD_COUNT = 52
"""Distinct cards in one deck (codes ``0..51``)."""

_TEXT = tuple(RANKS[code % 13] + SUITS[code // 13] for code in range(CARD_COUNT))
_PARSE = {text: code for code, text in enumerate(_TEXT)}
_PARSE.update({"10" + text[1]: code for code, text in enumerate(_TEXT) if text[0] == "T"})


def card(rank: int, suit: int) -> int:
    """Return the code of the card of ``rank`` (1..13) and ``suit`` (0..3).

    Raises :class:`ValueError` for a rank or suit out of range.
    """
    if not (ACE <= rank <= KING and 0 <= suit <= 3):
        raise ValueError(f"no card of rank {rank} and suit {suit}")
    return suit * 13 + rank - 1


def rank_of(code: int) -> int:
    """Rank of a card code: 1 (ace) .. 13 (king)."""
    return code % 13 + 1


def suit_of(code: int) -> int:
    """Suit number of a card code: 0 C, 1 D, 2 H, 3 S."""
    return code // 13


def format_card(code: int) -> str:
    """Canonical text of a card code, e.g. ``"TD"``.

    Raises :class:`IndexError` for a code outside ``0..51``.
    """
    if code < 0:
        raise IndexError(f"no card code {code}")
    return _TEXT[code]


def parse_card(text: str) -> int:
    """Parse ``"QS"`` (or ``"10S"``) into a card code.

    Raises :class:`~protocol.errors.NotationError` naming the bad text and
    the expected form.
    """
    try:
        return _PARSE[text]
    except (KeyError, TypeError):
        raise NotationError(
            f"{text!r} is not a card: write rank A 2-9 T J Q K then suit C D H S, e.g. 'TD'"
        ) from None
