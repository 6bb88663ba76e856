"""What a player types, turned into what the client sends.

Pure: no I/O. The client knows no rules: every decision here is taken
from the legal-move list the server sent (``[command, cards]`` pairs,
:class:`protocol.messages.WireLegalMove`) and, for naming empty columns, from
the view it sent. The canonical notation (RULES.md section 10) is
:mod:`protocol.commands`; anything that parses there is sent as typed, and
the server answers with its reason when it is not legal now.

Short forms accepted on top of the canonical notation:

==============  =======================  =====================================
typed           sent                     note
==============  =======================  =====================================
``3 7``         ``3-7``                  any blank, comma or ``>`` separates
``37``          ``3-7``                  digits only, when one split is meant
``3 7 2``       ``3-7x2``                ``3 7x2`` and ``3-7 x2`` too
``w7 / w 7``    ``w-7``
``wf / 3f``     ``w-f / 3-f``            ``3 f2`` -> ``3-f2``
``f3 5``        ``f3-5``
``3``           the one move of col. 3   when its top card or run has
                                         exactly one target (a card or a
                                         foundation); else the choices
``w``           the one move of the      likewise
                waste
``d / draw``    ``s``                    ``redeal`` -> ``r``, ``undo`` -> ``u``
==============  =======================  =====================================

``37`` is read as every split of the digits into two column numbers of
the variant (no leading zeros, two different columns); with one split it
is that one, with several the one the legal list holds, if exactly one
does (``112`` in a 13-column game: ``1-12`` or ``11-2``).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from protocol.commands import parse_command
from protocol.errors import NotationError
from protocol.messages import WireLegalMove, WireView

Action = Literal["play", "help", "hint", "resign", "ready", "start", "rematch", "restart", "quit", "error", "none"]

LOCAL_WORDS: dict[str, Action] = {
    "?": "help", "help": "help", "h": "help",
    "hint": "hint",
    "resign": "resign", "give up": "resign",
    "ready": "ready",
    "start": "start",
    "rematch": "rematch",
    "restart": "restart",
    "quit": "quit", "exit": "quit", "q": "quit",
}
"""Words the client handles itself (``q`` quits the client; the game goes on until resigned or timed out)."""

ALIASES = {"d": "s", "draw": "s", "stock": "s", "redeal": "r", "undo": "u", "fin": "finish"}
"""Words that stand for a canonical keyword command."""

HELP = """\
Commands (RULES.md notation; short forms in brackets):
  s            draw a stock card onto the waste [d, draw]
  r            redeal: the waste becomes the stock again (where allowed)
  3-7          column 3 onto column 7 [3 7, 37]
  3-7x2        the top 2 cards of column 3 onto column 7 [3 7 2]
  w-2  w-f     the waste's top card onto column 2 / a foundation [w2, wf]
  5-f  5-f2    column 5's top card onto a foundation / slot 2 [5f]
  3            column 3 alone: its top card or run to its one target
  finish       everything up at once, when stock and waste are empty
  u            undo (where the match allows it)
  hint         a suggestion (where the match allows hints)
  ready        (lobby) you are ready; start: (host) start now
  rematch      (results) the next round: same players and settings, a new deal
  restart      (a game alone) this deal again from the start, as the next round
  resign       give up (asks first); q quits (the game goes on: join again)
Tab completes the legal moves; Up/Down browse the history."""


@dataclass(frozen=True, slots=True)
class Resolved:
    """What to do with a typed line: ``action`` and, for ``play``, the canonical ``command``;
    ``message`` explains an ``error`` (or lists the choices)."""

    action: Action
    command: str = ""
    message: str = ""


_SEPARATORS = re.compile(r"[\s,>]+")
_PILE = re.compile(r"^(?:w|f[0-9]*|[0-9]+)$")


def _canonical(text: str) -> str | None:
    try:
        return str(parse_command(text))
    except NotationError:
        return None


def _columns(view: WireView | None, legal: Sequence[WireLegalMove]) -> int:
    if view is not None:
        return len(view.tableau)
    return 10


def _digit_splits(digits: str, columns: int) -> list[str]:
    found = []
    for cut in range(1, len(digits)):
        a, b = digits[:cut], digits[cut:]
        if a[0] == "0" or b[0] == "0":
            continue
        if 1 <= int(a) <= columns and 1 <= int(b) <= columns and a != b:
            found.append(f"{a}-{b}")
    return found


def _source_of(command: str) -> str:
    return command.split("-", 1)[0] if "-" in command else ""


def _target_of(command: str) -> str:
    return command.split("-", 1)[1].split("x", 1)[0] if "-" in command else ""


def moves_from(source: str, legal: Sequence[WireLegalMove], view: WireView | None) -> list[str]:
    """The distinct targets of ``source`` (``"3"`` or ``"w"``) in the legal list, as commands.

    Explicit counts (``3-7x2``) are left out: the plain form is the move a
    player means by naming the source. Moves into empty columns (seen in
    the view) are collapsed into the lowest-numbered empty column.
    """
    empty = {str(i + 1) for i, column in enumerate(view.tableau) if not column and not view.hidden[i]} if view else set()
    result: list[str] = []
    seen_empty = False
    for move in legal:
        command = move.command
        if _source_of(command) != source or "x" in command:
            continue
        if _target_of(command) in empty:
            if seen_empty:
                continue
            seen_empty = True
        result.append(command)
    return result


def best_move(source: str, legal: Sequence[WireLegalMove], view: WireView | None) -> Resolved:
    """Naming a column (or the waste) alone: its one move onto a card or a foundation, or the choices."""
    choices = moves_from(source, legal, view)
    empty = {str(i + 1) for i, column in enumerate(view.tableau) if not column and not view.hidden[i]} if view else set()
    onto_cards = [c for c in choices if _target_of(c) not in empty]
    where = "the waste" if source == "w" else f"column {source}"
    if len(onto_cards) == 1:
        return Resolved("play", onto_cards[0])
    if not choices:
        return Resolved("error", message=f"{where} has no legal move now")
    if not onto_cards:
        return Resolved("error", message=f"{where} can only go to an empty column: type it, e.g. {choices[0]}")
    return Resolved("error", message=f"{where} has several targets: {', '.join(choices)}")


def resolve(text: str, legal: Sequence[WireLegalMove] = (), view: WireView | None = None) -> Resolved:
    """Turn one typed line into an action (see the module docstring for the forms)."""
    line = text.strip()
    if not line:
        return Resolved("none")
    lowered = line.lower()
    if lowered in LOCAL_WORDS:
        return Resolved(LOCAL_WORDS[lowered])
    if lowered in ALIASES:
        return Resolved("play", ALIASES[lowered])
    canonical = _canonical(line) or _canonical(lowered)
    if canonical is not None:
        return Resolved("play", canonical)
    legal_commands = {move.command for move in legal}
    columns = _columns(view, legal)
    parts = [p for p in _SEPARATORS.split(lowered.replace("-", " ")) if p]
    # "3 7x2" / "3-7 x2" / "3 7 2": a trailing count
    count = ""
    if len(parts) >= 2 and re.fullmatch(r"x?[0-9]+", parts[-1]) and len(parts) == 3:
        count = parts.pop().lstrip("x")
    elif len(parts) == 2 and re.fullmatch(r"[0-9]+x[0-9]+", parts[1]):
        parts[1], count = parts[1].split("x")
    if len(parts) == 1:
        word = parts[0]
        m = re.fullmatch(r"(w|f[0-9]+|[0-9]+)(f[0-9]*|w)?", word)
        if word == "w" or re.fullmatch(r"[0-9]+", word) and int(word) <= columns and word[0] != "0":
            return best_move(word, legal, view)
        if re.fullmatch(r"[0-9]+", word):
            splits = _digit_splits(word, columns)
            if len(splits) > 1:
                splits = [s for s in splits if s in legal_commands] or splits
            if len(splits) == 1:
                return Resolved("play", splits[0])
            if splits:
                return Resolved("error", message=f"{word!r} is ambiguous: {' or '.join(splits)}?")
            return Resolved("error", message=f"{word!r}: no such column")
        if m and m.group(2) and m.group(2) != "w":
            parts = [m.group(1), m.group(2)]
        else:
            m2 = re.fullmatch(r"(w|f[0-9]+)([0-9]+)", word)
            if m2:
                parts = [m2.group(1), m2.group(2)]
    if len(parts) == 2 and all(_PILE.fullmatch(p) for p in parts):
        command = f"{parts[0]}-{parts[1]}" + (f"x{count}" if count else "")
        canonical = _canonical(command)
        if canonical is not None:
            return Resolved("play", canonical)
    return Resolved("error", message=f"{line!r} is not a command: type ? for help")


def completions(prefix: str, legal: Sequence[WireLegalMove], extra: Sequence[str] = ()) -> list[str]:
    """Legal commands (then ``extra`` words) starting with ``prefix``, in the server's order."""
    words = [move.command for move in legal] + [w for w in extra if w not in {m.command for m in legal}]
    return [w for w in words if w.startswith(prefix.strip())]


def table_moves(legal: Sequence[WireLegalMove]) -> int:
    """How many legal commands play a card of the table (not draw, redeal, undo or finish).

    Shown on the stock like the German page's "there are still moves on
    the table": a reminder, never a refusal.
    """
    return sum(1 for move in legal if move.command not in ("s", "r", "u", "finish"))


BOT_PACE = (1, 600)
"""The commands a minute a bot may play (the server's bounds: ``POST /matches`` ``bots``)."""


def parse_bot(text: str) -> dict[str, Any]:
    """``--bot LEVEL[:MOVES_PER_MIN]`` as ``POST /matches`` takes one bot: ``{"level"[, "moves_per_min"]}``
    (the level as typed, lower-cased: the server names the levels it has, ``GET /bots``, and refuses others).
    Raises ``ValueError`` for an empty level or a pace that is not a whole number in :data:`BOT_PACE`."""
    level, _, pace = text.strip().partition(":")
    level = level.strip().lower()
    if not level or not level.isalpha():
        raise ValueError(f"{text!r}: give a bot as LEVEL or LEVEL:MOVES_PER_MIN, e.g. strong or club:40")
    if not pace:
        return {"level": level}
    low, high = BOT_PACE
    if not pace.strip().isdigit() or not low <= int(pace) <= high:
        raise ValueError(f"{text!r}: a bot's moves per minute is a whole number {low}..{high}")
    return {"level": level, "moves_per_min": int(pace)}


def bot_option(text: str) -> dict[str, Any]:
    """``--bot`` of ``create`` and ``practice``: :func:`parse_bot`, its refusal as argparse's
    (:class:`argparse.ArgumentTypeError`)."""
    try:
        return parse_bot(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
