"""The rules engine of Forty Thieves Race: pure, no I/O; its specification is RULES.md, in this folder.

Imports nothing from asyncio, Redis, Starlette or the clock; only
:mod:`protocol`. The main entry points:

- :func:`find_variant`, :data:`PRESETS`: variants (RULES.md section 7);
- :func:`deal`: the seeded deal; :func:`parse_position` / :func:`format_position`;
- :class:`Game`: a game in play (checked commands, undo, counting);
- :func:`legal_moves`, :func:`apply`, :func:`autoplay`, :func:`can_finish`;
- :func:`is_dead`: the dead-game check;
- :func:`redact`: what a player may see;
- :func:`parse_record`, :func:`replay`: game records.
"""

from .dead import Verdict, is_dead
from .deal import deal
from .errors import IllegalCommandError, NotationError
from .game import Game, Outcome, UndoPolicy
from .position import EMPTY_SLOT, Position
from .record import GameRecord, format_record, parse_record
from .replay import ReplayResult, replay
from .rules import LegalMove, apply, autoplay, can_finish, legal_moves
from .text import format_position, parse_position
from .variants import PRESETS, BuildRule, MoveRule, Variant, find_variant
from .view import View, format_view, parse_view, redact

__all__ = [
    "EMPTY_SLOT", "PRESETS", "BuildRule", "Game", "GameRecord", "IllegalCommandError", "LegalMove",
    "MoveRule", "NotationError", "Outcome", "Position", "ReplayResult", "UndoPolicy", "Variant", "Verdict",
    "View", "apply", "autoplay", "can_finish", "deal", "find_variant", "format_position", "format_record",
    "format_view", "is_dead", "legal_moves", "parse_position", "parse_record", "parse_view", "redact", "replay",
]
