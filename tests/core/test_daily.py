"""The daily challenge's pure parts: days, seeds, commitments, the leaderboard score."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.core.daily import (
    daily_seed,
    day_bounds,
    day_of,
    find_daily_deal,
    next_day,
    pack_score,
    parse_date,
    seed_commitment,
)
from server.core.ranking import Standing, rank
from server.engine import deal, find_variant
from server.engine.solver import Budget, solve
from server.names import name_key, valid_name


def ms(text: str) -> int:
    """``YYYY-MM-DDTHH:MM:SS.fff`` UTC as epoch ms (computed with datetime, independently of server.core.daily)."""
    return int(dt.datetime.fromisoformat(text + "+00:00").timestamp() * 1000)


def test_day_boundaries_are_exact() -> None:
    assert day_of(ms("2026-11-30T23:59:59.999")) == "2026-11-30"
    assert day_of(ms("2026-12-01T00:00:00.000")) == "2026-12-01"
    assert day_of(ms("2026-11-30T00:00:00.000")) == "2026-11-30"
    assert day_bounds("2026-11-30") == (ms("2026-11-30T00:00:00.000"), ms("2026-12-01T00:00:00.000"))
    assert next_day("2026-12-31") == "2027-01-01"
    assert next_day("2028-02-28") == "2028-02-29"


def test_dates_are_parsed_strictly() -> None:
    assert parse_date("2026-11-30") == "2026-11-30"
    for bad in ("2026-13-01", "2026-11-31", "20261130", "2026-1-30", "2026-11-30T00", "yesterday", ""):
        with pytest.raises(ValueError):
            parse_date(bad)


def test_seed_is_the_documented_hmac() -> None:
    expected = hmac.new(b"k", b"2026-11-30|classic|3", hashlib.sha256).hexdigest()
    assert daily_seed("k", "2026-11-30", "classic", 3) == expected
    seeds = {daily_seed("k", d, v, i) for d in ("2026-11-30", "2026-12-01") for v in ("classic", "relaxed")
             for i in range(3)}
    assert len(seeds) == 12  # every day, variant and index its own seed
    assert daily_seed("other", "2026-11-30", "classic", 3) != expected
    assert seed_commitment("abc") == hashlib.sha256(b"abc").hexdigest()


@pytest.mark.parametrize("variant", ["classic", "relaxed"])
def test_deal_of_the_day_is_the_first_index_the_solver_proves(variant: str) -> None:
    index, seed, moves = find_daily_deal("test secret", "2026-11-30", variant, nodes=5000)
    v = find_variant(variant)
    assert seed == daily_seed("test secret", "2026-11-30", variant, index)
    for earlier in range(index):  # every earlier index failed with the same node budget
        assert solve(deal(daily_seed("test secret", "2026-11-30", variant, earlier), v),
                     v, Budget(nodes=5000)).result != "solved"
    from server.engine import Game

    game = Game(deal(seed, v), v, autoplay=True, undo="safe")
    for command in moves:
        game.play(command)
    assert game.is_won
    assert find_daily_deal("test secret", "2026-11-30", variant, nodes=5000) == (index, seed, moves)  # deterministic


def test_names() -> None:
    assert valid_name("alice") and valid_name("Anna Lena") and valid_name("x" * 24)
    for bad in ("", " alice", "alice ", "a\tb", "a\nb", "x" * 25, "a\u200bb"):
        assert not valid_name(bad)
    # One script per name (a Cyrillic or Greek capital A among Latin letters); Japanese mixes kana and kanji.
    assert not valid_name("\u0410nn") and not valid_name("\u0391nn") and not valid_name("yo\u0443")
    assert valid_name("Łukasz-2") and valid_name("Иван") and valid_name("山田 たろう") and valid_name("ｙｏｕ")
    assert name_key("Ann") == name_key("ANN") == name_key("Ａｎｎ") == name_key("ann") == "ann"
    assert name_key("Stra\u00dfe") == name_key("STRASSE") and name_key("ﬁ") == name_key("fi") == name_key("FI")


statuses = st.sampled_from(["won", "resigned", "dead", "timeout"])
standings = st.builds(
    Standing, name=st.text(alphabet="abcdefgh", min_size=1, max_size=4), status=statuses,
    time_ms=st.integers(0, 86_400_000), moves=st.integers(0, 2000), undos=st.just(0), hints=st.just(0),
    foundation=st.integers(0, 104), last_foundation_ms=st.integers(0, 86_400_000),
)


@given(st.lists(standings, min_size=1, max_size=12, unique_by=lambda s: s.name))
def test_score_orders_as_the_ranking(entries: list[Standing]) -> None:
    """Sorting by (score, name), as a Redis sorted set does, gives server.core.ranking's order and ties."""
    by_score = sorted(entries, key=lambda s: (pack_score(s), s.name))
    ranked = rank(entries)
    assert [s.name for s in by_score] == [s.name for _, s in ranked]
    for (rank_a, a), (rank_b, b) in itertools.pairwise(ranked):
        assert (rank_a == rank_b) == (pack_score(a) == pack_score(b))
    for s in entries:
        assert 0 <= pack_score(s) < 2**53 and float(pack_score(s)) == pack_score(s)


def test_score_ties_and_extremes() -> None:
    won_fast = Standing("a", "won", 1000, 300, 0, 0, 104, 900)
    won_fewer = Standing("b", "won", 1000, 200, 0, 0, 104, 900)
    won_slow = Standing("c", "won", 86_399_999, 1, 0, 0, 104, 0)
    best_loser = Standing("d", "resigned", 5, 1, 0, 0, 103, 86_399_999)
    loser_tie_1 = Standing("e", "dead", 50, 9, 0, 0, 20, 700)
    loser_tie_2 = Standing("f", "timeout", 86_400_000, 9, 0, 0, 20, 700)  # time of the end does not matter
    nothing = Standing("g", "resigned", 0, 0, 0, 0, 0, 0)
    ordered = [won_fewer, won_fast, won_slow, best_loser, loser_tie_1, loser_tie_2, nothing]
    assert sorted(ordered, key=lambda s: (pack_score(s), s.name)) == ordered
    assert pack_score(loser_tie_1) == pack_score(loser_tie_2)
    assert max(pack_score(s) for s in ordered) < 2**53
