"""Redaction: the position a player or spectator may see (RULES.md section 8).

:func:`redact` is the one function that decides what leaves the engine
about a position. A :class:`View` holds no stock order and no face-down
card: the stock is a count, a face-down card is only counted per column.
Review this module whenever anything about hidden information changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.cards import UNKNOWN, format_card
from protocol.errors import NotationError

from .position import EMPTY_SLOT, Position, _line
from .text import _check_counts, _foundation_counts, _parse, format_foundation
from .variants import Variant

try:  # the optional C hot path (server/engine/_cengine.c; pyproject.toml builds it when a compiler is there)
    from ._cengine import visible_columns as _c_visible_columns
except ImportError:  # no compiler at install time: the Python alone
    _c_visible_columns = None


@dataclass(frozen=True, slots=True)
class View:
    """What a player sees of a position.

    - ``tableau``: per column, its face-up cards, bottom to top;
    - ``hidden``: per column, how many face-down cards lie under them;
    - ``foundations``: per slot, its top card code or ``EMPTY_SLOT``;
    - ``stock_count``: cards left in the stock (never their order);
    - ``waste``: the whole waste, bottom to top (the Swedish page allows
      spreading it; RULES.md section 8);
    - ``redeals_left``.
    """

    tableau: tuple[tuple[int, ...], ...]
    hidden: tuple[int, ...]
    foundations: tuple[int, ...]
    stock_count: int
    waste: tuple[int, ...]
    redeals_left: int

    def __str__(self) -> str:
        return format_view(self)


def redact(position: Position, *, pure: bool = False) -> View:
    """The :class:`View` of ``position``: drop the stock order and face-down cards.

    The face-up part of each column is cut by the optional C extension ``_cengine``
    (``server/engine/_cengine.c``) when it is built, unless ``pure``; this Python is the reference, and
    tests/engine/test_fast_path.py checks both give the same view."""
    tableau, hidden = position.tableau, position.hidden
    if any(hidden):  # each column from its first face-up card on (the C copy first: this runs after every command)
        visible = _c_visible_columns(tableau, hidden) if _c_visible_columns is not None and not pure else None
        tableau = visible if visible is not None else tuple([c[h:] if h else c for c, h in zip(tableau, hidden)])
    return View(tableau, hidden, position.foundations, len(position.stock), position.waste, position.redeals_left)


def format_view(view: View) -> str:
    """Redacted position text: ``Stock: 64`` and ``??`` for face-down cards (RULES.md section 10)."""
    lines = [
        _line("Foundations", [format_foundation(t) for t in view.foundations]),
        f"Stock: {view.stock_count}",
        _line("Waste", [format_card(c) for c in view.waste]),
        f"Redeals left: {view.redeals_left}",
    ]
    for number, (column, hidden) in enumerate(zip(view.tableau, view.hidden), 1):
        lines.append(_line(str(number), [UNKNOWN] * hidden + [format_card(c) for c in column]))
    return "\n".join(lines)


def parse_view(text: str, variant: Variant) -> View:
    """Parse redacted position text (or full text, which is then redacted).

    Raises :class:`~protocol.errors.NotationError` for malformed text or a
    visible card shown more often than there are decks.
    """
    parsed = _parse(text, variant, redacted=True)
    counts = _foundation_counts(parsed.foundations)
    for code in parsed.waste:
        counts[code] = counts.get(code, 0) + 1
    tableau = []
    for column, hidden in zip(parsed.tableau, parsed.hidden):
        up = column[hidden:]
        for card in up:
            assert card is not None
            counts[card] = counts.get(card, 0) + 1
        tableau.append(tuple(c for c in up if c is not None))
    _check_counts(counts, variant, exact=False)
    stock = parsed.stock if isinstance(parsed.stock, int) else len(parsed.stock)
    seen = sum(counts.values()) + stock + sum(parsed.hidden)
    if seen != variant.card_total:
        raise NotationError(f"the view accounts for {seen} cards; the {variant.name} variant has {variant.card_total}")
    return View(tuple(tableau), tuple(parsed.hidden), tuple(parsed.foundations), stock, tuple(parsed.waste), parsed.redeals_left)


__all__ = ["EMPTY_SLOT", "View", "format_view", "parse_view", "redact"]
