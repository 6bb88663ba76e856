"""The schedule of ``solve`` (server/engine/solver/schedule.py): when the relaxation is asked, with how much
time, and what the answer says. The relaxation itself is replaced by a recorder here (its own tests are
test_relaxation.py), so these run without OR-Tools and in no time; a test clock governs the search."""

from __future__ import annotations

import pytest

from server.engine import deal, find_variant
from server.engine.solver import Budget, schedule, solve
from server.engine.solver.relaxation import Relaxed

CLASSIC = find_variant("classic")


class Clock:
    """A clock that advances one second per reading (the searches read it every 256 nodes)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


class Recorder:
    """Stands in for relaxation.relax: records the seconds it is given, answers ``verdict``."""

    def __init__(self) -> None:
        self.calls: list[float] = []
        self.verdict = "unsat"

    def __call__(self, position, variant, *, seconds, **_):  # type: ignore[no-untyped-def]
        self.calls.append(seconds)
        return Relaxed(self.verdict, 0.0, "the relaxed model has no solution: no play wins")


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recorder = Recorder()
    monkeypatch.setattr(schedule.relaxation, "relax", recorder)
    monkeypatch.setattr(schedule.relaxation, "available", lambda: True)
    return recorder


def test_a_long_cap_asks_the_relaxation_after_the_short_search(asked: Recorder) -> None:
    result = solve(deal("3", CLASSIC), CLASSIC, Budget(nodes=10**9, seconds=40), clock=Clock())
    assert len(asked.calls) == 1 and 0 < asked.calls[0] <= 40 * schedule.RELAX_SHARE
    assert (result.result, result.extra["decided_by"], result.extra["relaxation"]) == (
        "unsolvable", "relaxation", "unsat")
    assert result.reason.startswith("relaxation:") and result.moves == ()


def test_a_relaxation_with_a_solution_leaves_the_rest_to_the_search(asked: Recorder) -> None:
    asked.verdict = "sat"
    result = solve(deal("3", CLASSIC), CLASSIC, Budget(nodes=10**9, seconds=40), clock=Clock())
    assert len(asked.calls) == 1
    assert (result.result, result.reason, result.extra["decided_by"], result.extra["relaxation"]) == (
        "unknown", "time limit reached", "", "sat")


def test_short_caps_and_no_cap_never_ask_it(asked: Recorder) -> None:
    start = deal("3", CLASSIC)
    below = solve(start, CLASSIC, Budget(nodes=10**9, seconds=schedule.RELAX_FROM_SECONDS - 1), clock=Clock())
    untimed = solve(start, CLASSIC, Budget(nodes=3_000))
    assert asked.calls == [] and below.result == untimed.result == "unknown"
    assert "relaxation" not in below.extra and below.extra["decided_by"] == ""


def test_without_or_tools_the_search_runs_alone(asked: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schedule.relaxation, "available", lambda: False)
    result = solve(deal("3", CLASSIC), CLASSIC, Budget(nodes=10**9, seconds=40), clock=Clock())
    assert asked.calls == [] and (result.result, result.reason) == ("unknown", "time limit reached")


def test_a_deal_the_short_search_solves_is_answered_by_the_search(asked: Recorder) -> None:
    result = solve(deal("7", CLASSIC), CLASSIC, Budget(nodes=10**9, seconds=10**6), clock=Clock())
    assert asked.calls == [] and (result.result, result.extra["decided_by"]) == ("solved", "search")
