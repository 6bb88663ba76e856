"""Position text: the one-line-per-pile notation of RULES.md section 10.

Full text (the truth, for records and tests)::

    Foundations: AS 2H - - - - - -
    Stock: 7H 2C ...          next card to be drawn first
    Waste: 4D KC              bottom to top
    Redeals left: 0
    1: (QS) KD 9S 8S 7S        bottom to top; face-down cards in parentheses
    ...
    10:

Redacted text (what a player sees, :mod:`server.engine.view`) writes the
stock as a count (``Stock: 64``) and face-down cards as ``??``.

Formatting is canonical (single spaces, no trailing space; the formatter
is :func:`server.engine.position.format_position`, re-exported here); the parser
ignores blank lines and lines starting with ``#``, accepts runs of spaces,
and raises :class:`~protocol.errors.NotationError` with the line and what
was expected.
"""

from __future__ import annotations

from collections.abc import Sequence

from protocol.cards import UNKNOWN, format_card, parse_card, suit_of
from protocol.errors import NotationError

from .position import EMPTY_SLOT, Position, format_position
from .variants import Variant

__all__ = ["format_foundation", "format_position", "parse_position"]


def _content_lines(text: str) -> list[tuple[int, str]]:
    if not isinstance(text, str):
        raise NotationError(f"position text must be a string, not {type(text).__name__}")
    lines = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line and not line.startswith("#"):
            lines.append((number, line))
    return lines


def _expect(lines: list[tuple[int, str]], index: int, label: str) -> tuple[int, list[str]]:
    if index >= len(lines):
        raise NotationError(f"position text ends early: expected a line '{label}: ...'")
    number, line = lines[index]
    head, sep, rest = line.partition(":")
    if not sep or head != label:
        raise NotationError(f"line {number}: expected '{label}: ...', found {line[:40]!r}")
    return number, rest.split()


def _card_at(number: int, text: str) -> int:
    try:
        return parse_card(text)
    except NotationError:
        raise NotationError(
            f"line {number}: {text!r} is not a card (write rank A 2-9 T J Q K then suit C D H S, "
            "e.g. 'TD'; face down as '(TD)')"
        ) from None


class _Parsed:
    """Fields read from position text before validation; cards as codes, None for ??."""

    foundations: list[int]
    stock: list[int] | int
    waste: list[int]
    redeals_left: int
    tableau: list[list[int | None]]
    hidden: list[int]


def _parse(text: str, variant: Variant, redacted: bool) -> _Parsed:
    lines = _content_lines(text)
    parsed = _Parsed()
    number, items = _expect(lines, 0, "Foundations")
    if len(items) != variant.slots:
        raise NotationError(
            f"line {number}: {len(items)} foundation slots given, the {variant.name} variant has "
            f"{variant.slots} (write '-' for an empty slot)"
        )
    parsed.foundations = [EMPTY_SLOT if item == "-" else _card_at(number, item) for item in items]
    number, items = _expect(lines, 1, "Stock")
    if len(items) == 1 and items[0].isdigit() and redacted:
        parsed.stock = int(items[0])
    else:
        parsed.stock = [_card_at(number, item) for item in items]
    number, items = _expect(lines, 2, "Waste")
    parsed.waste = [_card_at(number, item) for item in items]
    number, items = _expect(lines, 3, "Redeals left")
    if len(items) != 1 or not items[0].isdigit() or len(items[0]) > 3:
        raise NotationError(f"line {number}: 'Redeals left:' takes one number, e.g. 'Redeals left: 0'")
    parsed.redeals_left = int(items[0])
    parsed.tableau, parsed.hidden = [], []
    for column in range(1, variant.columns + 1):
        number, items = _expect(lines, 3 + column, str(column))
        cards: list[int | None] = []
        hidden = 0
        for item in items:
            if item == UNKNOWN and redacted:
                card: int | None = None
                down = True
            elif len(item) > 2 and item[0] == "(" and item[-1] == ")":
                card, down = _card_at(number, item[1:-1]), True
            else:
                card, down = _card_at(number, item), False
            if down:
                if hidden != len(cards):
                    raise NotationError(
                        f"line {number}: face-down card {item} above a face-up card "
                        "(face-down cards lie at the bottom of a column)"
                    )
                hidden += 1
            cards.append(card)
        if cards and hidden == len(cards):
            raise NotationError(
                f"line {number}: the top card of column {column} is face down (an exposed card is face up)"
            )
        parsed.tableau.append(cards)
        parsed.hidden.append(hidden)
    if len(lines) > 4 + variant.columns:
        number, line = lines[4 + variant.columns]
        raise NotationError(
            f"line {number}: unexpected {line[:40]!r}: the {variant.name} variant has {variant.columns} columns"
        )
    if parsed.redeals_left > variant.redeals:
        raise NotationError(
            f"{parsed.redeals_left} redeals left, but the {variant.name} variant grants {variant.redeals}"
        )
    return parsed


def _check_counts(counts: dict[int, int], variant: Variant, exact: bool) -> None:
    for code in range(52):
        have = counts.get(code, 0)
        if have > variant.decks or (exact and have != variant.decks):
            raise NotationError(
                f"{format_card(code)} appears {have} times; with {variant.decks} decks every card "
                f"appears exactly {variant.decks} times"
            )


def _foundation_counts(foundations: list[int]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for top in foundations:
        if top != EMPTY_SLOT:
            for code in range(suit_of(top) * 13, top + 1):
                counts[code] = counts.get(code, 0) + 1
    return counts


def parse_position(text: str, variant: Variant) -> Position:
    """Parse full position text (as :func:`format_position` writes it) for ``variant``.

    The position must be valid (RULES.md section 10): the variant's numbers
    of columns and slots, every card exactly ``variant.decks`` times, no
    face-down card above a face-up one or exposed on top, no more redeals
    left than the variant grants. Raises
    :class:`~protocol.errors.NotationError` naming the line and the problem.
    """
    parsed = _parse(text, variant, redacted=False)
    assert isinstance(parsed.stock, list)
    counts = _foundation_counts(parsed.foundations)
    piles: tuple[Sequence[int | None], ...] = (parsed.stock, parsed.waste, *parsed.tableau)
    for pile in piles:
        for code in pile:
            assert code is not None
            counts[code] = counts.get(code, 0) + 1
    _check_counts(counts, variant, exact=True)
    return Position(
        tableau=tuple(tuple(c for c in column if c is not None) for column in parsed.tableau),
        hidden=tuple(parsed.hidden),
        foundations=tuple(parsed.foundations),
        stock=tuple(parsed.stock),
        waste=tuple(parsed.waste),
        redeals_left=parsed.redeals_left,
    )


_FOUNDATION_TEXT = {EMPTY_SLOT: "-", **{code: format_card(code) for code in range(52)}}
"""Text of a foundation slot by its top (every view shows each slot's, so they are looked up, not built)."""


def format_foundation(top: int) -> str:
    """Text of a foundation slot: its top card, or ``-`` when empty.

    Raises :class:`IndexError` (:func:`~protocol.cards.format_card`) for a top that is no card code."""
    text = _FOUNDATION_TEXT.get(top)
    return text if text is not None else format_card(top)
