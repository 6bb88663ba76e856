"""The series standings rule (server.core.ranking.series_standings): totals worked out by hand here."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from server.core.ranking import RoundResult, SeriesStanding, series_standings


def row(name: str, rank: int, status: str, foundation: int, time_ms: int) -> RoundResult:
    return RoundResult(name, rank, status, foundation, time_ms)


def test_rounds_won_count_only_a_first_place_with_status_won() -> None:
    rounds = [
        [row("ann", 1, "won", 104, 60_000), row("bo", 2, "resigned", 30, 20_000)],
        [row("bo", 1, "won", 104, 50_000), row("ann", 2, "timeout", 80, 90_000)],
        # nobody won round 3: bo ranks first on cards, which wins him no round
        [row("bo", 1, "resigned", 40, 10_000), row("ann", 2, "dead", 12, 5_000)],
    ]
    # one round won each: ann's 196 cards beat bo's 174, though she took longer
    assert series_standings(rounds) == [
        SeriesStanding("ann", 1, 104 + 80 + 12, 60_000 + 90_000 + 5_000),
        SeriesStanding("bo", 1, 104 + 30 + 40, 50_000 + 20_000 + 10_000),
    ]


def test_order_rounds_won_then_cards_then_less_time_then_name() -> None:
    rounds = [
        [row("cy", 1, "won", 104, 9_000), row("ann", 2, "resigned", 50, 1_000), row("bo", 2, "resigned", 50, 1_000),
         row("di", 4, "resigned", 50, 2_000)],
    ]
    # cy won a round; ann, bo and di have 50 cards each; di took longer; ann and bo tie and go by name.
    assert [s.name for s in series_standings(rounds)] == ["cy", "ann", "bo", "di"]


def test_two_winners_tied_at_rank_one_both_win_the_round() -> None:
    rounds = [[row("ann", 1, "won", 104, 7_000), row("bo", 1, "won", 104, 7_000)]]
    assert [(s.name, s.rounds_won) for s in series_standings(rounds)] == [("ann", 1), ("bo", 1)]


def test_a_player_of_some_rounds_only_counts_those() -> None:
    rounds = [[row("ann", 1, "won", 104, 1_000)], [row("ann", 2, "resigned", 10, 3_000), row("late", 1, "won", 104, 2_000)]]
    assert series_standings(rounds) == [SeriesStanding("ann", 1, 114, 4_000), SeriesStanding("late", 1, 104, 2_000)]
    assert series_standings([]) == []


names = st.sampled_from(["ann", "bo", "cy"])
rows = st.builds(RoundResult, names, st.integers(1, 3), st.sampled_from(["won", "resigned", "timeout"]),
                 st.integers(0, 104), st.integers(0, 10**6))
rounds_strategy = st.lists(st.lists(rows, max_size=3, unique_by=lambda r: r.name), max_size=5)


@given(rounds_strategy)
def test_totals_do_not_depend_on_the_order_of_the_rounds(rounds: list[list[RoundResult]]) -> None:
    standings = series_standings(rounds)
    assert standings == series_standings(list(reversed(rounds)))
    assert sum(s.foundation for s in standings) == sum(r.foundation for rs in rounds for r in rs)
    assert sum(s.rounds_won for s in standings) == sum(r.rank == 1 and r.status == "won" for rs in rounds for r in rs)
    keys = [(-s.rounds_won, -s.foundation, s.time_ms, s.name) for s in standings]
    assert keys == sorted(keys)
