"""Conversions from engine values to protocol messages (the server's side of redaction).

The only way a position reaches a client is :func:`view_message`, which
starts from :func:`server.engine.view.redact`: the stock as a count, no
face-down card.
"""

from __future__ import annotations

from protocol.cards import format_card
from protocol.messages import LegalMove as LegalMoveMsg
from protocol.messages import View

from .engine.position import Position
from .engine.rules import LegalMove
from .engine.text import format_foundation
from .engine.view import redact


def view_message(position: Position) -> View:
    """The :class:`protocol.messages.View` of ``position`` (redacted)."""
    view = redact(position)
    return View(
        tableau=[[format_card(c) for c in column] for column in view.tableau],
        hidden=list(view.hidden),
        foundations=[format_foundation(t) for t in view.foundations],
        stock=view.stock_count,
        waste=[format_card(c) for c in view.waste],
        redeals_left=view.redeals_left,
    )


def legal_message(legal: list[LegalMove]) -> list[LegalMoveMsg]:
    """Legal moves as ``[command, cards]`` pairs."""
    return [LegalMoveMsg(str(m.command), m.cards) for m in legal]
