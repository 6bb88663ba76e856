"""The bots' names and pace (server/core/bots.py)."""

from __future__ import annotations

import statistics

import pytest

from server.core.bots import JITTER, PAUSE_FACTORS, PauseKind, bot_names, pause_kind, pause_ms
from server.engine import Game, deal, find_variant


def test_bots_are_named_by_their_level_and_numbered_from_the_second() -> None:
    assert bot_names(["strong", "casual", "strong", "strong"]) == ["strong bot", "casual bot", "strong bot 2",
                                                                   "strong bot 3"]
    assert bot_names([]) == []


@pytest.mark.parametrize("pace", [1, 30, 600])
@pytest.mark.parametrize("kind", list(PauseKind))
def test_a_pause_is_about_its_kinds_mean_never_under_half_the_mean(pace: int, kind: PauseKind) -> None:
    mean_ms = 60_000 / pace
    pauses = [pause_ms(f"ABCD/strong bot/{seq}", pace, kind) for seq in range(1, 401)]
    low, high = (mean_ms * PAUSE_FACTORS[kind] * bound for bound in JITTER)
    assert all(low - 1 <= p <= high for p in pauses)
    assert min(pauses) >= mean_ms / 2
    assert statistics.mean(pauses) == pytest.approx(mean_ms * PAUSE_FACTORS[kind], rel=0.05)


def test_a_pause_is_the_same_for_the_same_command_of_the_same_bot() -> None:
    assert pause_ms("ABCD/club bot/7", 30, PauseKind.PLAIN) == pause_ms("ABCD/club bot/7", 30, PauseKind.PLAIN)
    assert len({pause_ms(f"ABCD/club bot/{seq}", 30, PauseKind.PLAIN) for seq in range(50)}) > 20


@pytest.mark.parametrize("pace", [0, 601, -5])
def test_a_pace_outside_1_to_600_is_refused(pace: int) -> None:
    with pytest.raises(ValueError, match="moves_per_min"):
        pause_ms("x", pace, PauseKind.PLAIN)


def test_the_kind_of_pause_reads_the_game() -> None:
    classic = find_variant("classic")
    game = Game(deal("bots-pace-1", classic), classic, autoplay=True, undo="safe")
    assert pause_kind(game) is PauseKind.FIRST
    game.play("s")
    kinds = {PauseKind.PLAIN, PauseKind.DRAW}
    assert pause_kind(game) in kinds
    only_draws = all(move.command.kind in ("draw", "redeal", "undo") for move in game.legal_moves())
    assert pause_kind(game) is (PauseKind.DRAW if only_draws else PauseKind.PLAIN)
    emperor = find_variant("emperor")  # face-down cards: a command that turns one up is followed by a long pause
    game = Game(deal("bots-pace-2", emperor), emperor, autoplay=True, undo="safe")
    for _ in range(200):
        moves = [move for move in game.legal_moves() if move.command.kind == "move"]
        if not moves:
            game.play("s")
            continue
        game.play(str(moves[0].command))
        if game.history[-1].revealed:
            break
    assert game.history[-1].revealed
    assert pause_kind(game) in (PauseKind.REVEAL, PauseKind.DRAW)
