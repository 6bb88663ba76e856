"""The optional C search (server/engine/solver/_csolver.c) against the pure reference.

The pure search in search.py is the reference. The C search claims to
expand the same nodes in the same order, so on the same input and node
budget both must give the same outcome, node count and state count; that
checks its moves, auto-play, canonical key, score, tie order and lock check
at once. Outcome classes are also checked against the exhaustive brute force
over the engine's own legal_moves/apply (test_solver.py), every C solution
is replayed to a win through the engine here, and the fallback to the pure
search is exercised. Skipped only when the extension is not built (no C
compiler at install time); CI builds it.
"""

from __future__ import annotations

import os
import random
import time

import pytest
from hypothesis import given, settings

from server.engine import Game, Position, deal, find_variant
from server.engine.solver import Budget, find_solution, solve
from server.engine.solver import search as search_module
from server.engine.solver.search import implementation

from .test_solver import LOCKED, LOOSENED, SMALL, TINY, brute_force, crowded, endgames, position, replay_wins

_csolver = pytest.importorskip("server.engine.solver._csolver", reason="the C extension is not built")

CLASSIC = find_variant("classic")
RELAXED = find_variant("relaxed")


def both(start: Position, variant, **kwargs):  # type: ignore[no-untyped-def]
    """One search stage run by the pure search and by the C search: (pure result, C result)."""
    pure = search_module._search(start, variant, pure=True, **kwargs)
    fast = search_module._search(start, variant, **kwargs)
    assert (pure.solver, fast.solver) == ("python", "c")
    return pure, fast


STAGES = [
    {"budget": Budget(2_000), "locks": True},  # the complete stage of solve
    {"budget": Budget(1_500), "params": (20, 8, 5, 6, 0), "incomplete": True},  # find_solution's stage
    {"budget": Budget(1_500), "params": (30, 16, 5, 12, 0), "lifo": True, "incomplete": True, "autoplay_on": False},
]


@pytest.mark.parametrize("stage", range(len(STAGES)))
@pytest.mark.parametrize(("name", "seed"), [("classic", "1"), ("classic", "5"), ("classic", "124"), ("relaxed", "1"),
                                            ("relaxed", "3"), ("relaxed", "9")])
def test_c_expands_the_same_nodes_as_the_pure_search_on_deals(name: str, seed: str,
                                                              stage: int) -> None:
    variant = find_variant(name)
    start = deal(seed, variant)
    pure, fast = both(start, variant, **STAGES[stage])
    assert (fast.result, fast.nodes, fast.states, fast.reason) == (pure.result, pure.nodes, pure.states, pure.reason)
    assert fast.moves == pure.moves  # the same solution, command for command (the daily's solution depends on it)
    if fast.result == "solved":
        assert replay_wins(start, variant, fast.moves, STAGES[stage].get("autoplay_on", True))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(endgames())
def test_c_agrees_with_the_brute_force_and_the_pure_search_on_small_endgames(case) -> None:  # type: ignore[no-untyped-def]
    """Both move rules, auto-play on and off: the outcome class is the brute force's (so every C
    ``unsolvable`` is confirmed exhaustively), the nodes and states are the pure search's, and every C
    solution wins when replayed through the engine."""
    start, variant = case
    for autoplay_on in (True, False):
        expected = brute_force(start, variant, autoplay_on)
        pure, fast = both(start, variant, budget=Budget(200_000), autoplay_on=autoplay_on, locks=True)
        assert fast.result == ("solved" if expected else "unsolvable")
        assert (fast.result, fast.nodes, fast.states, fast.moves) == (pure.result, pure.nodes, pure.states, pure.moves)
        if expected:
            assert replay_wins(start, variant, fast.moves, autoplay_on)


def test_c_lock_pruning_agrees_with_the_pure_one_on_crowded_positions() -> None:
    """Positions where the lock check makes claims (test_solver.py): the C port prunes exactly the same
    states (same nodes and states), and its ``unsolvable`` answers are confirmed by the brute force."""
    proofs = 0
    names = sorted(SMALL)
    for n in range(300):
        rng = random.Random(n)
        variant = SMALL[names[n % len(names)]]
        start = crowded(rng, variant.columns)
        pure, fast = both(start, variant, budget=Budget(20_000), autoplay_on=n % 2 == 0, locks=True)
        assert (fast.result, fast.nodes, fast.states, fast.moves) == (pure.result, pure.nodes, pure.states, pure.moves)
        if fast.result == "unsolvable" and fast.nodes < 50:
            proofs += 1
            assert brute_force(start, variant, autoplay_on=n % 2 == 0, limit=300_000) is False
    assert proofs >= 10


@pytest.mark.parametrize("autoplay_on", [True, False])
def test_hand_built_positions_through_solve(autoplay_on: bool) -> None:
    locked = solve(position(LOCKED), CLASSIC, Budget(nodes=100_000), autoplay_on=autoplay_on)
    assert (locked.result, locked.solver) == ("unsolvable", "c")  # the lock test_solver.py confirms by brute force
    start = position(LOOSENED)
    loosened = solve(start, CLASSIC, Budget(nodes=100_000), autoplay_on=autoplay_on)
    assert (loosened.result, loosened.solver) == ("solved", "c")
    assert replay_wins(start, CLASSIC, loosened.moves, autoplay_on)


def test_same_budget_twice_gives_the_same_answer() -> None:
    for seed in ("2", "3", "7"):
        start = deal(seed, CLASSIC)
        first = solve(start, CLASSIC, Budget(nodes=60_000))
        second = solve(start, CLASSIC, Budget(nodes=60_000))
        assert first.solver == "c"
        assert first == second


def test_the_pure_search_runs_when_forced_or_unsupported() -> None:
    start = deal("7", CLASSIC)
    forced = solve(start, CLASSIC, Budget(nodes=30_000), pure=True)
    assert (forced.result, forced.solver) == ("solved", "python")
    assert find_solution(start, CLASSIC, pure=True).solver == "python"
    assert implementation(start, CLASSIC, pure=True) == "python"
    assert implementation(start, CLASSIC) == "c"
    fast = solve(start, CLASSIC, Budget(nodes=30_000))
    assert (fast.result, fast.solver, fast.nodes) == ("solved", "c", forced.nodes)
    maria = find_variant("maria")  # builds in alternate colour: not in the C search
    assert implementation(deal("7", maria), maria) == "python"
    assert solve(deal("7", maria), maria, Budget(nodes=200)).solver == "python"
    long_column = Position((tuple(range(20)),) + ((),) * 9, (0,) * 10, (-1,) * 8, (), (), 0)
    assert implementation(long_column, CLASSIC) == "python"  # beyond the C search's column capacity


def test_the_wall_clock_cap_stops_the_c_search() -> None:
    """On the real clock the C search stops at the cap (after real work); any other clock (a test's) makes the
    pure search run, so that clock governs."""
    started = time.monotonic()
    result = solve(deal("3", CLASSIC), CLASSIC, Budget(nodes=10**9, seconds=0.3, states=10**9), clock=time.monotonic)
    assert (result.result, result.reason, result.solver) == ("unknown", "time limit reached", "c")
    assert result.nodes > 1_000 and time.monotonic() - started < 5  # about 0.3 s; a generous bound for busy machines
    # A cap already spent (solve passes 0 s to a stage then): the time cap's answer, not a memory failure, though
    # the search's very first table is refused its growth.
    result = solve(deal("3", CLASSIC), CLASSIC, Budget(nodes=10**9, seconds=0.0, states=10**9), clock=time.monotonic)
    assert (result.result, result.reason, result.solver) == ("unknown", "time limit reached", "c")
    ticks = iter(range(0, 10**6, 100))
    result = solve(deal("3", CLASSIC), CLASSIC, Budget(nodes=10**9, seconds=1.0), clock=lambda: next(ticks))
    assert (result.result, result.reason, result.solver) == ("unknown", "time limit reached", "python")


def test_ctrl_c_ends_a_long_c_search_at_once() -> None:
    """The C search runs without the GIL; it checks for signals every 65,536 nodes (before, SIGINT waited for
    the end of the search: here the state bound, about 4 s after the signal)."""
    import signal
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "FTR_SOLVER"}
    # As from a terminal: a job that a non-interactive shell starts in the background inherits SIGINT ignored,
    # and Python keeps it so; the search's own handling is tested here, not how pytest was started.
    as_from_a_terminal = ("import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
                          "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); "
                          "runpy.run_module('server.engine', run_name='__main__', alter_sys=True)")
    with subprocess.Popen([sys.executable, "-c", as_from_a_terminal, "solve", "--seed", "9", "--nodes", "3000000"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as process:
        # Into the search (about 3 s of CPU to its state bound), however loaded the machine: a SIGINT that came
        # before Python set its handler would end the process without a word.
        while cpu_seconds(process.pid) < 1.5 and process.poll() is None:
            time.sleep(0.05)
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
        waited = time.monotonic() - sent
    assert "KeyboardInterrupt" in err and "_csolver" in err, err[-500:]
    assert waited < 2.0, waited


def cpu_seconds(pid: int) -> float:
    """The CPU time process ``pid`` has used (user and system, seconds; Linux's /proc), 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime: fields 14 and 15


def test_the_state_bound_stops_the_c_search() -> None:
    result = search_module._search(deal("3", CLASSIC), CLASSIC, Budget(nodes=10**9, states=5_000), locks=True)
    assert (result.result, result.reason) == ("unknown", "state memory bound reached")
    assert 5_000 < result.states < 5_000 + 200  # checked before each expansion, as in the pure search


def test_the_extension_refuses_what_it_does_not_support() -> None:
    """Called directly with input outside its limits it raises ValueError, never reads out of bounds."""
    args = (b"", b"", 0, 1, (20, 16, 5, 12), False, False, 1, True, 10, 10, -1.0)
    with pytest.raises(ValueError):
        _csolver.search((bytes(range(20)),), bytes(8), *args)  # a column of 20 cards
    with pytest.raises(ValueError):
        _csolver.search((bytes([52]),), bytes(8), *args)  # no such card
    with pytest.raises(ValueError):
        _csolver.search((b"",) * 17, bytes(8), *args)  # 17 columns
    with pytest.raises(ValueError):
        _csolver.search((b"",), bytes(12), *args)  # 3 decks
    with pytest.raises(ValueError):
        _csolver.search((b"",), bytes([14] + [0] * 7), *args)  # a slot above a king


def test_tiny_variants_are_supported() -> None:
    for variant in TINY.values():
        start = Position(((), ()), (0, 0), (-1,) * 8, (), (), 0)
        assert implementation(start, variant) == "c"
    game = Game(deal("1", CLASSIC), CLASSIC)
    assert implementation(game.position, CLASSIC) == "c"


def test_c_and_pure_agree_on_positions_from_random_play() -> None:
    """Mid-game positions the engine produces (random legal commands from random deals of classic and
    relaxed: partly built foundations, long wastes, empty columns, a redeal used): the same outcome,
    nodes and states from both, for the complete stage and find_solution's stage."""
    checked = 0
    for n in range(60):
        rng = random.Random(n)
        variant = RELAXED if n % 3 == 0 else CLASSIC
        game = Game(deal(str(rng.randrange(1, 10**6)), variant), variant, autoplay=True, undo="none")
        for _ in range(rng.randrange(0, 150)):
            options = game.legal_moves()
            if not options or game.is_won:
                break
            game.play(rng.choice(options).command)
        start = game.position
        for kwargs in ({"budget": Budget(300), "locks": True},
                       {"budget": Budget(300), "params": (20, 8, 5, 6, 0), "incomplete": True}):
            pure, fast = both(start, variant, autoplay_on=n % 2 == 0, **kwargs)
            assert (fast.result, fast.nodes, fast.states, fast.moves) == (pure.result, pure.nodes, pure.states, pure.moves)
            checked += 1
    assert checked == 120
