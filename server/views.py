"""Conversions from engine values to protocol messages (the server's side of redaction).

The only way a position reaches a client is :func:`view_message`, which
starts from :func:`server.engine.view.redact`: the stock as a count, no
face-down card.
"""

from __future__ import annotations

from functools import lru_cache

from protocol.cards import format_card
from protocol.commands import Command
from protocol.messages import LegalMove as LegalMoveMsg
from protocol.messages import View

from .engine.position import Position
from .engine.rules import LegalMove
from .engine.text import format_foundation
from .engine.view import redact


@lru_cache(maxsize=65536)
def _cards_text(cards: tuple[int, ...]) -> list[str]:
    # Columns rarely change between two replies: their text is kept (read-only by the encoder).
    return [format_card(c) for c in cards]


@lru_cache(maxsize=65536)
def _foundations_text(tops: tuple[int, ...]) -> list[str]:
    # One cached call for all slots (a slot changes a few times a game): eight calls of format_foundation per
    # reply cost more than the rest of the view.
    return [format_foundation(t) for t in tops]


_PAIRS: dict[tuple[int, int], tuple[Command, LegalMoveMsg]] = {}
"""``(id(command), cards)`` -> ``(command, its wire pair)``. Keyed by identity, not by the command's value: a
:class:`~protocol.commands.Command` is a dataclass whose hash is computed in Python field by field (with its
piles'), which cost more than building the pair. The entry holds the command itself, so its id cannot be
reused by another object while the entry exists; the engine's legal lists reuse one interned object per
command (``server.engine.rules._cmd``), so the table stays small; it is emptied past :data:`_PAIRS_MAX`."""

_PAIRS_MAX = 8192


def view_message(position: Position) -> View:
    """The :class:`protocol.messages.View` of ``position`` (redacted)."""
    view = redact(position)
    return View(
        tableau=[_cards_text(column) for column in view.tableau],
        hidden=list(view.hidden),
        foundations=_foundations_text(view.foundations),
        stock=view.stock_count,
        waste=_cards_text(view.waste),
        redeals_left=view.redeals_left,
    )


def legal_message(legal: list[LegalMove]) -> list[LegalMoveMsg]:
    """Legal moves as ``[command, cards]`` pairs (each pair built once, then reused: they are frozen)."""
    pairs, get = [], _PAIRS.get
    for command, cards in legal:
        hit = get((id(command), cards))
        if hit is None:
            if len(_PAIRS) >= _PAIRS_MAX:
                _PAIRS.clear()
            hit = _PAIRS[id(command), cards] = (command, LegalMoveMsg(str(command), cards))
        pairs.append(hit[1])
    return pairs
