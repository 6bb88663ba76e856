"""Commands and their canonical notation (RULES.md sections 2 and 10).

A command is what a player proposes; it counts as one move when accepted.

=========  ==========================================================
notation   meaning
=========  ==========================================================
``s``      draw: the top stock card onto the waste
``r``      redeal: the waste becomes the stock again (where granted)
``u``      undo the last accepted command (RULES.md section 8)
``finish`` every remaining card up to the foundations at once
``3-7``    column 3 onto column 7 (count chosen by the rule below)
``3-7x3``  the top 3 cards of column 3 onto column 7
``w-2``    the waste's top card onto column 2
``5-f``    column 5's top card onto the foundation slot that takes it
``w-f2``   the waste's top card onto foundation slot 2
``f3-5``   foundation slot 3's top card down onto column 5
=========  ==========================================================

Without ``xK`` the count is the one that makes a card of the source's run fit
a non-empty target, and 1 into an empty column; the engine decides it.
Commands are case-sensitive, with no spaces and no leading zeros: ``S``,
``03-7`` and ``"finish "`` raise :class:`~protocol.errors.NotationError`.
Numbers are 1-based (0 is malformed) and not checked against a variant here (column 11 is
well formed; the engine refuses it in a 10-column tableau).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from .errors import NotationError

PileKind = Literal["column", "waste", "foundation"]
CommandKind = Literal["draw", "redeal", "undo", "finish", "move"]


@dataclass(frozen=True, slots=True)
class Pile:
    """A source or target of a move.

    ``kind`` is ``"column"`` (``index`` 1..N), ``"waste"`` (``index`` 0) or
    ``"foundation"`` (``index`` = slot 1..K, or 0 for "the slot that takes
    the card", written ``f``).
    """

    kind: PileKind
    index: int = 0

    def __str__(self) -> str:
        if self.kind == "column":
            return str(self.index)
        if self.kind == "waste":
            return "w"
        return f"f{self.index}" if self.index else "f"


WASTE = Pile("waste")
ANY_SLOT = Pile("foundation", 0)


@dataclass(frozen=True, slots=True)
class Command:
    """One player command; ``str(command)`` is its canonical notation.

    ``kind`` is ``"draw"``, ``"redeal"``, ``"undo"``, ``"finish"`` or
    ``"move"``. Only moves have a ``source``, a ``target`` and possibly an
    explicit ``count`` (column-to-column moves only; ``None`` means the
    engine picks the count).
    """

    kind: CommandKind
    source: Pile | None = None
    target: Pile | None = None
    count: int | None = None

    def __str__(self) -> str:
        if self.kind == "move":
            text = f"{self.source}-{self.target}"
            return text if self.count is None else f"{text}x{self.count}"
        return _KEYWORD_OF[self.kind]


DRAW = Command("draw")
REDEAL = Command("redeal")
UNDO = Command("undo")
FINISH = Command("finish")

_KEYWORD_OF = {"draw": "s", "redeal": "r", "undo": "u", "finish": "finish"}
_KEYWORDS = {"s": DRAW, "r": REDEAL, "u": UNDO, "finish": FINISH}
_MOVE = re.compile(r"(?:([0-9]+)|(w)|f([0-9]+))-(?:([0-9]+)|f([0-9]*))(?:x([0-9]+))?")


def move(source: Pile, target: Pile, count: int | None = None) -> Command:
    """Build a move command (no validation beyond the notation's own)."""
    return Command("move", source, target, count)


def _number(text: str) -> int:
    if text == "0":
        raise NotationError("columns, foundation slots and counts are numbered from 1, not 0")
    if text[0] == "0":
        raise NotationError(f"malformed number {text!r}: numbers have no leading zeros")
    if len(text) > 4:
        raise NotationError(f"number {text!r} is too large: columns, slots and counts are below 10000")
    return int(text)


def parse_command(text: str) -> Command:
    """Parse canonical command notation into a :class:`Command`.

    Raises :class:`~protocol.errors.NotationError` for anything that is not
    canonical (unknown words, wrong case, spaces, leading zeros, a count
    of 0, a count on a move that is not column to column, a move between
    foundation slots).
    """
    if not isinstance(text, str):
        raise NotationError(f"a command is a string, not {type(text).__name__}")
    return _parse(text)


@lru_cache(maxsize=8192)
def _parse(text: str) -> Command:
    keyword = _KEYWORDS.get(text)
    if keyword is not None:
        return keyword
    m = _MOVE.fullmatch(text)
    if m is None:
        raise NotationError(
            f"unknown command {text!r}: use s, r, u, finish, or a move such as "
            "3-7, 3-7x2, w-2, 5-f, w-f2, f3-5"
        )
    src_col, src_waste, src_slot, dst_col, dst_slot, count_text = m.groups()
    if src_col is not None:
        source = Pile("column", _number(src_col))
    elif src_waste is not None:
        source = WASTE
    else:
        source = Pile("foundation", _number(src_slot))
    if dst_col is not None:
        target = Pile("column", _number(dst_col))
    else:
        target = Pile("foundation", _number(dst_slot)) if dst_slot else ANY_SLOT
    count = None
    if count_text is not None:
        if count_text == "0":
            raise NotationError("the count must be at least 1 (write 3-7x2 for two cards)")
        count = _number(count_text)
        if source.kind != "column" or target.kind != "column":
            raise NotationError(f"unknown command {text!r}: a count xK is only for column-to-column moves")
    if source.kind == "foundation" and target.kind == "foundation":
        raise NotationError(f"unknown command {text!r}: cards never move between foundation slots")
    return Command("move", source, target, count)
