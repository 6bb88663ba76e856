"""Conversions from engine values to protocol messages (the server's side of redaction).

The only way a position reaches a client is :func:`view_message`, which
starts from :func:`server.engine.view.redact`: the stock as a count, no
face-down card. With the engine's optional C hot path built, the same
redaction and the texts are done in one call (``view_texts`` of
``server/engine/_cengine.c``), and so is the whole encoded ``position``
reply (:func:`position_frame`); the Python here is the reference, and
tests/engine/test_fast_path.py checks both give the same view and frame.
"""

from __future__ import annotations

from functools import lru_cache

from protocol.cards import format_card
from protocol.codec import encode
from protocol.commands import Command
from protocol.messages import PositionReply, WireLegalMove, WireView

from .engine.position import Position
from .engine.rules import LegalMove
from .engine.text import format_foundation
from .engine.view import redact

try:  # the optional C hot path (server/engine/_cengine.c; pyproject.toml builds it when a compiler is there)
    from .engine._cengine import position_frame as _c_position_frame
    from .engine._cengine import view_texts as _c_view_texts
except ImportError:  # no compiler at install time: the Python alone
    _c_position_frame = _c_view_texts = None

_CARD_TEXTS = tuple(format_card(code) for code in range(52))
"""The text of each card code, for the C view (items shared by every view: str is immutable)."""

_SLOT_TEXTS = tuple(format_foundation(top) for top in range(-1, 52))
"""The text of a foundation slot by its top + 1 (``EMPTY_SLOT`` -1 is item 0), for the C view."""

_CARD_FRAMES = tuple(encode(text) for text in _CARD_TEXTS)  # type: ignore[arg-type]
_SLOT_FRAMES = tuple(encode(text) for text in _SLOT_TEXTS)  # type: ignore[arg-type]
"""The texts as msgpack strings (msgspec's bytes), which the C reply copies into the frame."""


@lru_cache(maxsize=65536)
def _cards_text(cards: tuple[int, ...]) -> list[str]:
    # Columns rarely change between two replies: their text is kept (read-only by the encoder).
    return [format_card(c) for c in cards]


@lru_cache(maxsize=65536)
def _foundations_text(tops: tuple[int, ...]) -> list[str]:
    # One cached call for all slots (a slot changes a few times a game): eight calls of format_foundation per
    # reply cost more than the rest of the view.
    return [format_foundation(t) for t in tops]


_PAIRS: dict[tuple[int, int], tuple[Command, WireLegalMove]] = {}
"""``(id(command), cards)`` -> ``(command, its wire pair)``. Keyed by identity, not value: hashing a
:class:`~protocol.commands.Command` field by field costs more than building the pair. The entry holds the command,
so its id cannot be reused while the entry exists; the engine's legal lists reuse one interned object per command,
so the table stays small; it is emptied past :data:`_PAIRS_MAX`."""

_PAIRS_MAX = 8192

_COMMAND_FRAMES: dict[int, tuple[Command, bytes]] = {}
"""``id(command)`` -> ``(command, its text encoded)``, for the C reply frame (which looks commands up by id, as
:data:`_PAIRS` does and for the same reason); emptied past :data:`_PAIRS_MAX`."""


def view_message(position: Position, *, pure: bool = False) -> WireView:
    """The :class:`protocol.messages.WireView` of ``position`` (redacted).

    Redacted and written by the C hot path when it is built, unless ``pure`` (then, and for anything the C
    declines, :func:`~server.engine.view.redact` and the texts here: the reference)."""
    if _c_view_texts is not None and not pure:
        texts = _c_view_texts(position.tableau, position.hidden, position.foundations, position.waste,
                              _CARD_TEXTS, _SLOT_TEXTS)
        if texts is not None:
            tableau, hidden, foundations, waste = texts
            return WireView(tableau=tableau, hidden=hidden, foundations=foundations, stock=len(position.stock),
                            waste=waste, redeals_left=position.redeals_left)
    view = redact(position, pure=pure)
    return WireView(
        tableau=[_cards_text(column) for column in view.tableau],
        hidden=list(view.hidden),
        foundations=_foundations_text(view.foundations),
        stock=view.stock_count,
        waste=_cards_text(view.waste),
        redeals_left=view.redeals_left,
    )


def legal_message(legal: list[LegalMove]) -> list[WireLegalMove]:
    """Legal moves as ``[command, cards]`` pairs (each pair built once, then reused: they are frozen)."""
    pairs, get = [], _PAIRS.get
    for command, cards in legal:
        hit = get((id(command), cards))
        if hit is None:
            if len(_PAIRS) >= _PAIRS_MAX:
                _PAIRS.clear()
            hit = _PAIRS[id(command), cards] = (command, WireLegalMove(str(command), cards))
        pairs.append(hit[1])
    return pairs


def position_frame(seq: int, command: str, position: Position, legal: list[LegalMove], moves: int, undos: int,
                   found: int, status: str, time_ms: int, *, pure: bool = False) -> bytes:
    """The encoded ``position`` reply: exactly ``encode(PositionReply(seq, command, view_message(position),
    legal_message(legal), moves, undos, found, status, time_ms))``.

    Written in one call by the C hot path when it is built, unless ``pure`` (then, and for anything the C
    declines, the message is built and encoded here: the reference). The C reads the position as
    :func:`view_message` redacts it (face-up cards, face-down counts, the stock's length only)."""
    if _c_position_frame is not None and not pure:
        for _ in range(2):  # again once the commands it had not met are added
            frame = _c_position_frame(seq, command, position.tableau, position.hidden, position.foundations,
                                      len(position.stock), position.waste, position.redeals_left, legal,
                                      _COMMAND_FRAMES, moves, undos, found, status, time_ms, _CARD_FRAMES,
                                      _SLOT_FRAMES)
            if frame is not None:
                return frame
            if len(_COMMAND_FRAMES) + len(legal) > _PAIRS_MAX:
                _COMMAND_FRAMES.clear()
            for legal_command, _ in legal:
                if id(legal_command) not in _COMMAND_FRAMES:
                    _COMMAND_FRAMES[id(legal_command)] = (legal_command, encode(str(legal_command)))  # type: ignore[arg-type]
    return encode(PositionReply(seq, command, view_message(position, pure=pure), legal_message(legal), moves, undos,
                                found, status, time_ms))
