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


@lru_cache(maxsize=4096)
def _legal_message(command: Command, cards: int) -> LegalMoveMsg:
    return LegalMoveMsg(str(command), cards)


def view_message(position: Position) -> View:
    """The :class:`protocol.messages.View` of ``position`` (redacted)."""
    view = redact(position)
    return View(
        tableau=[_cards_text(column) for column in view.tableau],
        hidden=list(view.hidden),
        foundations=[format_foundation(t) for t in view.foundations],
        stock=view.stock_count,
        waste=_cards_text(view.waste),
        redeals_left=view.redeals_left,
    )


def legal_message(legal: list[LegalMove]) -> list[LegalMoveMsg]:
    """Legal moves as ``[command, cards]`` pairs (each pair built once, then reused: they are frozen)."""
    return [_legal_message(m.command, m.cards) for m in legal]
