"""Benchmark of the relaxed model alone (server/engine/solver/relaxation.py): prints figures, asserts nothing.

For each deal "1".."N" of a variant, :func:`relax` with a time cap; one line per deal
``variant seed verdict seconds`` (tab-separated, also written to ``--out``), then the counts and the
times of the ``unsat`` answers (median, 90th percentile, max). Run:
``python tests/benchmarks/relaxation_bench.py [--variant classic] [--first 1] [--deals 200] [--seconds 8]
[--workers 2] [--parts foundation,column,...] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from server.engine import deal, find_variant
from server.engine.solver.relaxation import DEFAULT_PARTS, relax


def run(job: tuple[str, str, float, frozenset[str]]) -> tuple[str, str, str, float]:
    name, seed, seconds, parts = job
    variant = find_variant(name)
    started = time.monotonic()
    answer = relax(deal(seed, variant), variant, seconds=seconds, parts=parts)
    return name, seed, answer.verdict, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--first", type=int, default=1)
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--parts", default=",".join(sorted(DEFAULT_PARTS)))
    parser.add_argument("--seeds", default="", help="comma-separated seeds instead of --first/--deals")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    parts = frozenset(p for p in args.parts.split(",") if p)
    seeds = args.seeds.split(",") if args.seeds else [str(s) for s in range(args.first, args.first + args.deals)]
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; parts {sorted(parts)}",
          flush=True)
    rows = []
    lines = []
    with ProcessPoolExecutor(args.workers) as pool:
        for row in pool.map(run, [(args.variant, s, args.seconds, parts) for s in seeds]):
            rows.append(row)
            lines.append(f"{row[0]}\t{row[1]}\t{row[2]}\t{row[3]:.2f}")
            print(lines[-1], flush=True)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            out.write("".join(line + "\n" for line in lines))
    counts = {k: sum(r[2] == k for r in rows) for k in ("unsat", "sat", "unknown")}
    print(f"{args.variant} {len(rows)} deals, {args.seconds} s each: {counts}")
    times = sorted(r[3] for r in rows if r[2] == "unsat")
    if times:
        print(f"unsat in: median {statistics.median(times):.2f} s, 90th percentile "
              f"{times[min(len(times) - 1, int(0.9 * len(times)))]:.2f} s, max {times[-1]:.2f} s")
    print(f"unsat seeds: {' '.join(r[1] for r in rows if r[2] == 'unsat')}")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
