"""Benchmark of the solver: prints figures, asserts nothing.

- deals "1".."200" of classic and "1".."100" of relaxed, each with a
  wall-clock cap (``--seconds``, default 10) and a large node budget, in
  ``--workers`` processes (default 2): counts of solved, unsolvable and
  unknown; median and 95th-percentile time; states expanded per second;
  peak memory of the workers (``resource.getrusage`` maxrss); the share of
  solvable deals among the decided ones with a 95 % Wilson interval, and
  the honest bounds on it (solved/total at least, (total - unsolvable)/total
  at most, each with its Wilson margin);
- which implementation ran (``Result.solver``: the C extension or the pure
  search; ``--solver python`` forces the pure one, passed as ``pure``),
  and with ``--compare N`` the states expanded per second of both on classic
  deals 1..N (``--compare-seconds`` each), with their ratio;
- the time to find one verified solvable classic deal from random seeds
  (seeds tried in turn with :func:`find_solution` until one is solved, as
  server/dealpool.py does),
  repeated ``--finds`` times: median and spread.

- which part of the schedule decided each deal (``Result.extra["decided_by"]``:
  the search or the relaxation, server/engine/solver/schedule.py);
  ``--no-relax`` runs the search alone;
- ``--complete-stage`` (with ``--seeds``, ``--nodes``, ``--reduction``):
  the complete search of :func:`solve` alone, pure, one deal at a time in
  one process, with and without the stubborn-set reduction: answer, nodes,
  states, CPU seconds and states per second per deal (node and state counts
  are reproducible; seconds depend on the load, printed before and after);
- ``--random`` (with ``--random-seed S``) takes random seeds (decimal
  strings below 10^9) instead of "1".."N", for an unbiased sample;
  ``--out FILE`` writes one tab-separated line per deal (variant, seed,
  result, nodes, seconds, decided by, relaxation verdict).

Run: ``python tests/benchmarks/solver_bench.py [--seconds 10] [--classic 200]
[--relaxed 100] [--workers 2] [--states N] [--solver auto|c|python] [--compare N]
[--compare-seconds 5] [--finds 15] [--find-nodes N] [--find-seconds 1] [--no-relax]
[--random] [--random-seed S] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import resource
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from server.engine import deal, find_variant
from server.engine.solver import Budget, find_solution, search, solve
from server.engine.solver.search import DOMINANCE


def complete_stage(seeds: list[str], nodes: int, states: int, reductions: list[str]) -> None:
    """The complete search alone (lock pruning, the draw rule; pure), per deal and reduction; prints a table."""
    variant = find_variant("classic")
    print("seed\treduction\tresult\tnodes\tstates\tcpu_s\tstates_per_s\tcommands_cut\tstates_reduced")
    for seed in seeds:
        for reduction in reductions:
            started = time.process_time()
            result = search._search(deal(seed, variant), variant, Budget(nodes=nodes, states=states), locks=True,
                                    draw_inert=True, pure=True, reduction="" if reduction == "none" else reduction)
            cpu = time.process_time() - started
            print(f"{seed}\t{reduction}\t{result.result}\t{result.nodes}\t{result.states}\t{cpu:.2f}\t"
                  f"{result.states / max(cpu, 1e-9):.0f}\t{result.extra.get('stubborn_cut', 0)}\t"
                  f"{result.extra.get('stubborn_states', 0)}", flush=True)


def run_deal(job: tuple) -> tuple:
    variant_name, seed, seconds, nodes, states, solver, *rest = job
    relax = rest[0] if rest else True
    rules = rest[1] if len(rest) > 1 else DOMINANCE
    variant = find_variant(variant_name)
    started = time.monotonic()
    result = solve(deal(seed, variant), variant, Budget(nodes=nodes, seconds=seconds, states=states), clock=time.monotonic,
                   pure=solver == "python", relax=relax, dominance=rules)
    elapsed = time.monotonic() - started
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return (variant_name, seed, result.result, result.nodes, elapsed, maxrss, result.solver, result.reason,
            str(result.extra.get("decided_by", "")), str(result.extra.get("relaxation", "")), "+".join(rules) or "none",
            result.extra.get("dominated", 0))


def find_one(job: tuple[int, float, int | None, str]) -> tuple[float, int, str]:
    """Try random seeds with a small budget until one is solved; returns (seconds, tries, seed)."""
    rng_seed, seconds, nodes, solver = job
    rng = random.Random(rng_seed)
    variant = find_variant("classic")
    started = time.monotonic()
    tries = 0
    while True:
        tries += 1
        seed = str(rng.randrange(1, 10**9))
        result = find_solution(deal(seed, variant), variant, nodes=nodes, seconds=seconds, clock=time.monotonic,
                               pure=solver == "python")
        if result.result == "solved":
            return time.monotonic() - started, tries, seed


def wilson(successes: int, total: int, z: float = 1.96) -> tuple[float, float]:
    if total == 0:
        return (0.0, 1.0)
    p = successes / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return centre - half, centre + half


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))
    return ordered[index]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="wall-clock cap per deal (default 10)")
    parser.add_argument("--nodes", type=int, default=10**9, help="node budget per deal (default: unbounded)")
    parser.add_argument("--classic", type=int, default=200, help="classic deals 1..N (default 200)")
    parser.add_argument("--relaxed", type=int, default=100, help="relaxed deals 1..N (default 100)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--states", type=int, default=Budget().states,
                        help=f"state bound per deal (memory; default {Budget().states})")
    parser.add_argument("--solver", choices=("auto", "c", "python"), default="auto",
                        help="auto: the C extension where built and supported; python: the pure search")
    parser.add_argument("--compare", type=int, default=0,
                        help="also run classic deals 1..N with both implementations and compare states/s")
    parser.add_argument("--compare-seconds", type=float, default=5.0)
    parser.add_argument("--finds", type=int, default=15, help="repeats of the find-a-solvable-deal timing")
    parser.add_argument("--find-seconds", type=float, default=1.0, help="per-seed time cap when finding a deal")
    parser.add_argument("--find-nodes", type=int, default=None,
                        help="per-seed node budget of find_solution when finding a deal (default: its own,"
                             " the measured best, README.md)")
    parser.add_argument("--no-relax", action="store_true", help="the search alone (no relaxation in the schedule)")
    parser.add_argument("--random", action="store_true",
                        help="random seeds (below 10^9, from --random-seed) instead of 1..N for --classic N and --relaxed N")
    parser.add_argument("--random-seed", type=int, default=2026)
    parser.add_argument("--out", default="", help="write one tab-separated line per deal")
    parser.add_argument("--seeds", default="", help="comma-separated classic seeds instead of --classic/--relaxed")
    parser.add_argument("--dominance", default="+".join(DOMINANCE),
                        help="dominance rules of the complete search, 'draw+waste', 'draw' or 'none'; several"
                             " configurations separated by commas run interleaved in the same run (default: %(default)s)")
    parser.add_argument("--complete-stage", action="store_true",
                        help="the complete search alone on --seeds, pure, with each of --reduction (a table)")
    parser.add_argument("--reduction", default="none,stubborn", help="with --complete-stage: 'none', 'stubborn'")
    args = parser.parse_args()
    if args.complete_stage:
        print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; node budget {args.nodes}")
        complete_stage(args.seeds.split(","), args.nodes, args.states, args.reduction.split(","))
        print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return

    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; cpus: {os.cpu_count()}")
    print(f"cap {args.seconds} s per deal, {args.workers} workers")
    print(f"state bound {args.states} per deal; solver {args.solver}")
    print(f"relaxation: {'off' if args.no_relax else 'on'}; seeds: "
          f"{args.seeds if args.seeds else f'random (random seed {args.random_seed})' if args.random else '1..N'}")
    rng = random.Random(args.random_seed)

    def seeds(count: int) -> list[str]:
        return [str(rng.randrange(1, 10**9)) for _ in range(count)] if args.random else [str(s) for s in range(1, count + 1)]

    relax = not args.no_relax
    configs = [tuple(r for r in c.split("+") if r != "none") for c in args.dominance.split(",")]
    print(f"dominance rules: {args.dominance}")
    if args.seeds:
        pairs = [("classic", s) for s in args.seeds.split(",")]
    else:
        pairs = [("classic", s) for s in seeds(args.classic)] + [("relaxed", s) for s in seeds(args.relaxed)]
    jobs = [(v, s, args.seconds, args.nodes, args.states, args.solver, relax, c) for v, s in pairs for c in configs]
    started = time.monotonic()
    with ProcessPoolExecutor(args.workers) as pool:
        results = list(pool.map(run_deal, jobs, chunksize=1))
        wall = time.monotonic() - started
        if args.out:
            with open(args.out, "w", encoding="utf-8") as out:
                out.write("variant\tseed\tresult\tnodes\tseconds\tdecided_by\trelaxation\tdominance\n")
                out.writelines(f"{r[0]}\t{r[1]}\t{r[2]}\t{r[3]}\t{r[4]:.3f}\t{r[8]}\t{r[9]}\t{r[10]}\n" for r in results)
        peak = max((r[5] for r in results), default=0)
        groups = [(name, c) for name in ("classic", "relaxed") for c in sorted({r[10] for r in results})]
        for name, config in groups:
            rows = [r for r in results if r[0] == name and r[10] == config]
            if not rows:
                continue
            if len(configs) > 1:
                print(f"\n[dominance rules: {config}; states pruned by the waste rule: {sum(r[11] for r in rows)}]")
            counts = {k: sum(1 for r in rows if r[2] == k) for k in ("solved", "unsolvable", "unknown")}
            times = [r[4] for r in rows]
            nodes = sum(r[3] for r in rows)
            decided = counts["solved"] + counts["unsolvable"]
            low, high = wilson(counts["solved"], decided)
            ran = {r[6]: sum(1 for x in rows if x[6] == r[6]) for r in rows}
            print(f"\n{name}: {len(rows)} deals (implementation: {', '.join(f'{k} {v}' for k, v in sorted(ran.items()))})")
            reasons = {r[7]: sum(1 for x in rows if x[7] == r[7]) for r in rows if r[2] == "unknown"}
            if reasons:
                print(f"  unknown because: {'; '.join(f'{k} ({v})' for k, v in sorted(reasons.items()))}")
            by = {(r[2], r[8]): sum(1 for x in rows if (x[2], x[8]) == (r[2], r[8])) for r in rows if r[2] != "unknown"}
            print(f"  decided by: {'; '.join(f'{k[0]} by the {k[1]} {v}' for k, v in sorted(by.items()))}")
            verdicts = {r[9]: sum(1 for x in rows if x[9] == r[9]) for r in rows if r[9]}
            if verdicts:
                print(f"  relaxation verdicts where it ran: {verdicts}")
            print(f"  solved {counts['solved']}, unsolvable {counts['unsolvable']}, unknown {counts['unknown']}"
                  f" (decided {decided / len(rows):.0%})")
            print(f"  time per deal: median {statistics.median(times):.2f} s, 95th percentile {percentile(times, 0.95):.2f} s")
            solved_times = [r[4] for r in rows if r[2] == "solved"]
            if solved_times:
                print(f"  time per solved deal: median {statistics.median(solved_times):.2f} s, "
                      f"95th percentile {percentile(solved_times, 0.95):.2f} s")
            print(f"  states expanded per second (per worker): {nodes / sum(times):.0f}")
            if decided:
                print(f"  solvable among decided: {counts['solved']}/{decided} = {counts['solved'] / decided:.0%}"
                      f" (95% Wilson {low:.0%}..{high:.0%}; biased if solvable deals are easier to decide)")
            # Honest bounds on the share of solvable deals: every unknown deal counted unsolvable, then solvable.
            total = len(rows)
            lower = wilson(counts["solved"], total)[0]
            upper = wilson(total - counts["unsolvable"], total)[1]
            print(f"  share of solvable deals: at least {counts['solved']}/{total} = {counts['solved'] / total:.0%},"
                  f" at most {total - counts['unsolvable']}/{total} = {(total - counts['unsolvable']) / total:.0%}"
                  f" (with 95% Wilson margins: {lower:.0%}..{upper:.0%})")
            proven = [r[1] for r in rows if r[2] == "unsolvable"]
            print(f"  unsolvable seeds: {' '.join(proven)}")
            unknown = [r[1] for r in rows if r[2] == "unknown"]
            print(f"  unknown seeds: {' '.join(unknown[:40])}{' ...' if len(unknown) > 40 else ''}")
        print(f"\npeak memory of a worker (maxrss): {peak / 1024:.0f} MB; wall time {wall:.0f} s")

        if args.compare:
            runs = {}
            for solver in ("python", "c"):
                runs[solver] = list(pool.map(run_deal, [("classic", str(s), args.compare_seconds, args.nodes, args.states,
                                                         solver) for s in range(1, args.compare + 1)]))
            # States/s over the deals both ran to the time cap (no replay of a solution in the figure).
            capped = [i for i in range(args.compare)
                      if all(runs[k][i][7] == "time limit reached" for k in runs)]
            rates = {k: sum(runs[k][i][3] for i in capped) / max(sum(runs[k][i][4] for i in capped), 1e-9) for k in runs}
            for solver, rows in runs.items():
                print(f"\ncompare: classic 1..{args.compare}, {args.compare_seconds} s each, {solver}"
                      f" (ran: {sorted({r[6] for r in rows})}): solved {sum(r[2] == 'solved' for r in rows)},"
                      f" unsolvable {sum(r[2] == 'unsolvable' for r in rows)}; {rates[solver]:.0f} states expanded"
                      f" per second over the {len(capped)} deals both ran to the cap")
            if capped:
                print(f"  ratio c / python: {rates['c'] / max(rates['python'], 1e-9):.1f}")

        if args.finds:
            found = list(pool.map(find_one, [(i, args.find_seconds, args.find_nodes, args.solver) for i in range(args.finds)]))
            seconds = [f[0] for f in found]
            tries = [f[1] for f in found]
            print(f"\nfind a solvable classic deal from random seeds with find_solution ({args.finds} repeats,"
                  f" {args.find_nodes or 'default'} nodes / {args.find_seconds} s per seed):")
            print(f"  median {statistics.median(seconds):.2f} s, min {min(seconds):.2f} s, max {max(seconds):.2f} s;"
                  f" seeds tried: median {statistics.median(tries)}, max {max(tries)}")
    print(f"\nload average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
