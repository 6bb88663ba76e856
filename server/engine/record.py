"""Game records: the JSON replay format of RULES.md section 10.

::

    {"format": 1, "variant": "classic", "autoplay": true, "undo": "safe",
     "deal": "<position text of the deal>", "seed": "<seed, once revealed>",
     "moves": ["s", "3-7", ...], "times_ms": [...]}

``format``, ``variant``, ``autoplay``, ``undo``, ``deal`` and ``moves`` are
required; ``seed`` (a string or null) and ``times_ms`` (one non-negative
integer per move: milliseconds from the start) are optional. Other keys
are ignored (example records carry an ``expected`` key). Moves are kept as
the strings written: an unparsable move is the replay's business, not a
malformed record.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from protocol.errors import NotationError

from .game import UndoPolicy
from .position import Position
from .text import format_position, parse_position
from .variants import Variant, find_variant

RECORD_FORMAT = 1


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A parsed game record (see the module docstring)."""

    variant: Variant
    autoplay: bool
    undo: UndoPolicy
    deal: Position
    moves: tuple[str, ...]
    seed: str | None = None
    times_ms: tuple[int, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON-ready dict in the canonical key order."""
        data: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "variant": self.variant.name,
            "autoplay": self.autoplay,
            "undo": self.undo.value,
            "deal": format_position(self.deal),
        }
        if self.seed is not None:
            data["seed"] = self.seed
        data["moves"] = list(self.moves)
        if self.times_ms is not None:
            data["times_ms"] = list(self.times_ms)
        return data


def format_record(record: GameRecord) -> str:
    """Canonical JSON text of ``record`` (indented, key order fixed)."""
    return json.dumps(record.to_json(), indent=1, ensure_ascii=False)


def _require(data: dict[str, Any], key: str, kind: type | tuple[type, ...], what: str) -> Any:
    if key not in data:
        raise NotationError(f"game record has no {key!r} field ({what})")
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise NotationError(f"game record field {key!r} must be {what}, not {type(value).__name__}")
    return value


def parse_record(source: str | bytes | dict[str, Any]) -> GameRecord:
    """Parse a game record from JSON text or an already decoded dict.

    Raises :class:`~protocol.errors.NotationError` naming the field that is
    missing or wrong (including an invalid deal position).
    """
    if isinstance(source, (str, bytes)):
        try:
            data = json.loads(source)
        except (ValueError, RecursionError) as error:
            raise NotationError(f"game record is not valid JSON: {error}") from None
    else:
        data = source
    if not isinstance(data, dict):
        raise NotationError("a game record is a JSON object")
    if _require(data, "format", int, "the integer 1") != RECORD_FORMAT:
        raise NotationError(f"game record format {data['format']!r} is not supported (this engine reads format 1)")
    variant = find_variant(_require(data, "variant", str, "a variant name such as 'classic'"))
    autoplay = _require(data, "autoplay", bool, "true or false")
    undo_name = _require(data, "undo", str, "one of 'none', 'safe', 'full'")
    try:
        undo = UndoPolicy(undo_name)
    except ValueError:
        raise NotationError(f"game record field 'undo' is {undo_name!r}; use 'none', 'safe' or 'full'") from None
    deal_text = _require(data, "deal", str, "position text")
    try:
        deal = parse_position(deal_text, variant)
    except NotationError as error:
        raise NotationError(f"game record 'deal' is not a valid {variant.name} position: {error}") from None
    moves = _require(data, "moves", list, "a list of command strings")
    for i, move in enumerate(moves):
        if not isinstance(move, str):
            raise NotationError(f"game record move {i} must be a string, not {type(move).__name__}")
    seed = data.get("seed")
    if seed is not None and not isinstance(seed, str):
        raise NotationError("game record field 'seed' must be a string or null")
    times = data.get("times_ms")
    if times is not None:
        if not isinstance(times, list) or not all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in times):
            raise NotationError("game record field 'times_ms' must be a list of non-negative integers (ms)")
        if len(times) != len(moves):
            raise NotationError(f"game record has {len(moves)} moves but {len(times)} times_ms entries")
        times = tuple(times)
    return GameRecord(variant, autoplay, undo, deal, tuple(moves), seed, times)
