"""The streak rule (server/core/streaks.py): consecutive UTC days played, freezes earned and spent."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.core.streaks import Streak, StreakRule, streak_of

START = dt.date(2026, 11, 1)


def days(*offsets: int) -> list[str]:
    """The dates ``START + offset`` days."""
    return [(START + dt.timedelta(days=o)).isoformat() for o in offsets]


def day(offset: int) -> str:
    return days(offset)[0]


def test_a_streak_grows_day_by_day_and_today_unplayed_breaks_nothing() -> None:
    assert streak_of([], day(0)) == Streak(0, 0, 0)
    assert streak_of(days(0, 1, 2), day(2)) == Streak(3, 3, 0)
    assert streak_of(days(0, 1, 2), day(3)) == Streak(3, 3, 0)  # today is still going
    assert streak_of(days(0, 1, 2), day(4)) == Streak(0, 3, 0)  # yesterday missed, no freeze


def test_a_freeze_is_earned_per_seven_days_played_and_bridges_one_missed_day() -> None:
    week = list(range(7))
    assert streak_of(days(*week), day(6)) == Streak(7, 7, 1)
    assert streak_of(days(*week, 8), day(8)) == Streak(8, 8, 0)  # day 7 missed: the freeze spent, streak kept
    assert streak_of(days(*week), day(9)) == Streak(0, 7, 0)  # two missed, one freeze: broken
    assert streak_of(days(*week, 9), day(9)) == Streak(1, 7, 0)  # and begun again today


def test_at_most_two_freezes_are_held_and_the_rule_is_a_setting() -> None:
    assert streak_of(days(*range(28)), day(27)) == Streak(28, 28, 2)
    assert streak_of(days(*range(28), 30, 31), day(31)) == Streak(30, 30, 0)
    assert streak_of(days(0, 1, 3), day(3), StreakRule(freeze_every=2, max_freezes=1)) == Streak(3, 3, 0)
    assert streak_of(days(0, 1, 3), day(3), StreakRule(freeze_every=2, max_freezes=0)) == Streak(1, 2, 0)
    with pytest.raises(ValueError):
        streak_of(days(0), day(0), StreakRule(freeze_every=0))
    with pytest.raises(ValueError):
        streak_of(["2026-W48-1"], day(0))


def plain_run(played: set[int], today: int) -> int:
    """The streak without freezes, counted back from today (or yesterday, today not played yet)."""
    at = today if today in played else today - 1
    run = 0
    while at in played:
        run, at = run + 1, at - 1
    return run


offsets = st.sets(st.integers(0, 60), max_size=45)


@given(offsets, st.integers(0, 70))
def test_without_freezes_the_streak_is_the_run_of_days_up_to_today(played: set[int], today: int) -> None:
    got = streak_of(days(*played), day(today), StreakRule(freeze_every=1000, max_freezes=2))
    assert got.freezes == 0 and got.streak == plain_run(played, today)


@given(offsets, st.integers(0, 70), st.integers(1, 10), st.integers(0, 3))
def test_bounds_hold_and_only_the_given_date_counts(played: set[int], today: int, every: int, most: int) -> None:
    rule = StreakRule(every, most)
    got = streak_of(days(*played), day(today), rule)
    past = {o for o in played if o <= today}
    earned = len(past) // every
    assert 0 <= got.freezes <= most and got.streak <= got.best_streak <= len(past) + earned
    # A streak never exceeds the days played in its span plus the freezes that bridged the rest.
    assert got.streak <= len(past) + earned
    assert got.streak >= plain_run(past, today)  # freezes only ever help
    assert streak_of(days(*played, 200, 300), day(today), rule) == got  # days after today are left out
    assert streak_of(list(reversed(days(*played))) * 2, day(today), rule) == got  # order and repeats do not matter
    if today not in played:  # playing today adds one day to the streak, whatever came before
        assert streak_of(days(*played, today), day(today), rule).streak == got.streak + 1
