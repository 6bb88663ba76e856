"""Ranking (DESIGN.md "Ranking"): winners by time then moves; the rest by foundation
cards, then the time of the last foundation card, then moves."""

from __future__ import annotations

from server.core.ranking import Standing, rank


def s(name: str, status: str, time_ms: int, moves: int, foundation: int, last: int = 0) -> Standing:
    return Standing(name, status, time_ms, moves, 0, 0, foundation, last)


def test_winners_first_by_time_then_moves() -> None:
    ranked = rank([s("slow", "won", 9000, 100, 104), s("fast", "won", 5000, 300, 104),
                   s("fast-fewer", "won", 5000, 200, 104), s("loser", "resigned", 1000, 10, 100, 900)])
    assert [(r, x.name) for r, x in ranked] == [(1, "fast-fewer"), (2, "fast"), (3, "slow"), (4, "loser")]


def test_the_rest_by_foundation_then_last_foundation_time_then_moves() -> None:
    ranked = rank([s("a", "resigned", 100, 50, 30, 800), s("b", "timeout", 100, 40, 31, 900),
                   s("c", "dead", 100, 60, 30, 700), s("d", "resigned", 100, 70, 30, 700)])
    assert [x.name for _, x in ranked] == ["b", "c", "d", "a"]


def test_equal_results_share_a_rank() -> None:
    ranked = rank([s("x", "won", 10, 5, 104), s("y", "won", 10, 5, 104), s("z", "resigned", 10, 5, 0)])
    assert [r for r, _ in ranked] == [1, 1, 3]
