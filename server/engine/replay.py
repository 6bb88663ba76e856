"""Replay of a game record (RULES.md section 10): every position reproduced exactly.

Each move is applied in turn; a move that is unparsable or illegal is
reported with its reason and skipped (the position does not change and it
is not counted). The final status is ``won``, ``dead`` (by
:func:`server.engine.dead.is_dead`) or ``playing``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from protocol.errors import NotationError

from .dead import DEFAULT_BUDGET, Verdict, is_dead
from .errors import IllegalCommandError
from .game import Game
from .position import Position
from .record import GameRecord
from .text import format_position

Status = Literal["playing", "won", "dead"]


@dataclass(frozen=True, slots=True)
class MoveResult:
    """Verdict on move ``i`` of a record: accepted, or refused with ``reason``."""

    i: int
    move: str
    ok: bool
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"i", "move", "ok"}`` plus ``"reason"`` when refused."""
        data: dict[str, Any] = {"i": self.i, "move": self.move, "ok": self.ok}
        if self.reason is not None:
            data["reason"] = self.reason
        return data


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """What a replay gives: per-move verdicts, the final position, the moves
    counted (accepted commands) and the status."""

    results: tuple[MoveResult, ...]
    final: Position
    moves_counted: int
    status: Status

    @property
    def all_legal(self) -> bool:
        """True when every move of the record was accepted."""
        return all(r.ok for r in self.results)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``replay --json``."""
        return {
            "results": [r.to_json() for r in self.results],
            "final": format_position(self.final),
            "moves_counted": self.moves_counted,
            "status": self.status,
        }


def game_status(game: Game, budget: int = DEFAULT_BUDGET) -> Status:
    """``won``, ``dead`` (the dead-game check answered DEAD within ``budget``) or ``playing``."""
    if game.is_won:
        return "won"
    if is_dead(game.position, game.variant, budget) is Verdict.DEAD:
        return "dead"
    return "playing"


def replay(record: GameRecord, dead_budget: int = DEFAULT_BUDGET) -> ReplayResult:
    """Replay ``record`` from its deal; see the module docstring."""
    game = Game(record.deal, record.variant, autoplay=record.autoplay, undo=record.undo)
    results = []
    for i, move in enumerate(record.moves):
        try:
            game.play(move)
        except (NotationError, IllegalCommandError) as error:
            results.append(MoveResult(i, move, False, str(error)))
        else:
            results.append(MoveResult(i, move, True))
    return ReplayResult(tuple(results), game.position, game.moves, game_status(game, dead_budget))
