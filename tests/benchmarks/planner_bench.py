"""Benchmark of the player-view planner (server/engine/planner.py): prints figures, asserts nothing.

For each policy (today's one-look hint, then each planner level, weakest first) it follows that policy from
the deal to the end on the same solvable classic deals, with auto-play on and no undo, and prints one line
per policy, starting with its name: the share of deals won with a 95 % Wilson interval, the median time per
decision and how many decisions there were. A game ends won; lost when the policy has no command, when the
stock is exhausted and the game is dead (``can_progress``), when a policy returns to a position already seen
(only the one-look hint can: it keeps no history, so it would loop for ever) or after ``--max-moves``.

**The deals** (the seed rule): classic seeds "1", "2", "3", ... in order, kept when the solver proves the
deal solvable with the full deal known (``solve`` with ``--solve-nodes`` nodes, default 200 000, no time cap:
reproducible), until ``--deals`` are kept. Deals the solver proves only with more nodes are not in the
sample, so these are the easier solvable deals.

``--decision-s S`` caps every level's time per decision (the levels' own budgets are in planner.LEVELS).
``--workers`` (default 2) games run at once, each in its own process: a decision's time is its wall time
there, so load from elsewhere lengthens it. Run it under ``nice -n 10`` on a shared machine.

    python tests/benchmarks/planner_bench.py --deals 200 [--decision-s S] [--workers 2] [--levels a,b]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))

from solver_bench import wilson

from server.engine import Game, deal, find_variant, redact
from server.engine.hint import hint
from server.engine.planner import LEVELS, Level, find_level, plan
from server.engine.rules import stock_exhausted
from server.engine.solver import Budget, can_progress, find_solution, solve

HINT = "hint"
"""The name of today's one-look hint policy in the printout."""


def solvable_seeds(count: int, nodes: int) -> list[str]:
    """The first ``count`` classic seeds "1", "2", ... whose deal ``solve`` proves solvable within ``nodes``."""
    classic = find_variant("classic")
    kept: list[str] = []
    number = 0
    while len(kept) < count:
        number += 1
        seed = str(number)
        position = deal(seed, classic)
        if find_solution(position, classic).result == "solved" or solve(position, classic,
                                                                         Budget(nodes)).result == "solved":
            kept.append(seed)
    return kept


def level_of(entry: str) -> Level:
    """A level by name, or a trial one written ``name=samples/nodes[/complete]``."""
    if "=" not in entry:
        return find_level(entry)
    name, _, spec = entry.partition("=")
    parts = spec.split("/")
    return Level(name, int(parts[0]), int(parts[1]), 3600.0, complete=len(parts) > 2 and parts[2] == "complete")


def play(policy: str, seed: str, decision_s: float | None, max_moves: int) -> tuple[str, str, bool, int, list[float]]:
    """Follow ``policy`` on classic deal ``seed`` to the end: (policy, seed, won, moves, seconds per decision)."""
    classic = find_variant("classic")
    game = Game(deal(seed, classic), classic, autoplay=True, undo="none")
    seen = [redact(game.position)]
    times: list[float] = []
    while not game.is_won and game.moves < max_moves:
        if stock_exhausted(game.position, classic) and can_progress(game.position, classic) == "dead":
            break
        view = seen[-1]
        started = time.monotonic()
        if policy == HINT:
            command = hint(view, classic)
        else:
            command = plan(view, classic, seen=seen, level=level_of(policy), seed=f"{seed}/{game.moves}",
                           seconds=decision_s, clock=time.monotonic).command
        times.append(time.monotonic() - started)
        if command is None:
            break
        game.play(command)
        after = redact(game.position)
        if policy == HINT and after in seen:
            break  # the one-look hint is a function of the view: it would go round this loop for ever
        seen.append(after)
    return policy, seed, game.is_won, game.moves, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--decision-s", type=float, default=None, help="cap on every level's time per decision")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--levels", default=",".join(level.name for level in LEVELS),
                        help="the planner levels to run, comma-separated (default: all); a trial level: "
                        "name=samples/nodes[/complete]")
    parser.add_argument("--solve-nodes", type=int, default=200_000)
    parser.add_argument("--max-moves", type=int, default=600)
    args = parser.parse_args()
    policies = [HINT, *[name for name in args.levels.split(",") if name]]
    for policy in policies[1:]:
        level_of(policy)  # an unknown name fails here, before any deal is searched
    with open("/proc/loadavg", encoding="ascii") as file:
        print(f"load average at the start: {file.read().split()[:3]}", flush=True)
    started = time.monotonic()
    seeds = solvable_seeds(args.deals, args.solve_nodes)
    print(f"{len(seeds)} solvable classic deals: seeds {','.join(seeds)} ({time.monotonic() - started:.1f} s)",
          flush=True)
    results: dict[str, list[tuple[bool, int, list[float]]]] = {policy: [] for policy in policies}
    with ProcessPoolExecutor(max_workers=max(1, args.workers)) as pool:
        futures = [pool.submit(play, policy, seed, args.decision_s, args.max_moves)
                   for seed in seeds for policy in policies]  # deal by deal: a stopped run has every policy's first
        for index, future in enumerate(futures, 1):
            policy, _, won, moves, times = future.result()
            results[policy].append((won, moves, times))
            if index % (10 * len(policies)) == 0:  # progress on stderr: wins so far on the first deals
                wins = ", ".join(f"{p.partition('=')[0]} {sum(w for w, _, _ in results[p])}" for p in policies)
                print(f"{index // len(policies)} deals: {wins} ({time.monotonic() - started:.0f} s)", file=sys.stderr,
                      flush=True)
    cap = "the levels' own" if args.decision_s is None else f"{args.decision_s:g} s"
    print(f"decision time cap: {cap}; wall time {time.monotonic() - started:.1f} s")
    for policy in policies:
        games = results[policy]
        won = sum(1 for w, _, _ in games if w)
        low, high = wilson(won, len(games))
        low, high = max(0.0, low), min(1.0, high)  # no "-0.0" from rounding
        times = [t for _, _, ts in games for t in ts]
        median = statistics.median(times) if times else 0.0
        moves = statistics.median([m for _, m, _ in games]) if games else 0
        print(f"{policy.partition('=')[0]:<8} won {won}/{len(games)} = {100 * won / max(1, len(games)):.1f} % "
              f"(95 % Wilson {100 * low:.1f}-{100 * high:.1f} %), median decision {median:.3f} s "
              f"over {len(times)} decisions, median moves {moves}", flush=True)
    with open("/proc/loadavg", encoding="ascii") as file:
        print(f"load average at the end: {file.read().split()[:3]}")


if __name__ == "__main__":
    main()
