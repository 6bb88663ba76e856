"""How soon do the states a proof still waits on die? A sample of a C proof file's waiting states, each given the
complete C search (the lock check, the draw rule) with growing node budgets.

A measurement for the research on dead-end learning (server/engine/solver/README.md, "The layered prover in C"):
a waiting state the complete search proves lost in a few thousand nodes died for a reason near it, the kind a
learned reason could cover in many other states. Run on a file the prover left (tests/benchmarks/winnability.py
``--phase2`` writes them under ``--proof-dir``):

    python tests/benchmarks/prover_probe.py --seed 37069719 --file PROOF --sample 300 --budgets 1000,10000,100000

Prints the layers sampled and, per budget, how many were proven lost (``exhausted``), won (``solved``) or left
open (``nodes``); a state decided at a budget is not tried at the larger ones.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main() -> None:
    from server.engine.solver._csolver import search

    from server.engine import deal, find_variant
    from server.engine.solver.proof_file import waiting
    from server.engine.solver.search import _RULE_CODES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", required=True)
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--file", type=Path, required=True)
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--budgets", default="1000,10000,100000")
    parser.add_argument("--random-seed", type=int, default=1)
    args = parser.parse_args()
    variant = find_variant(args.variant)
    start = deal(args.seed, variant)
    budgets = [int(b) for b in args.budgets.split(",")]
    rng = random.Random(args.random_seed)
    sample: list[tuple[object, ...]] = []
    seen = 0
    for state in waiting(args.file, start, variant):  # reservoir sampling: the file may hold tens of millions
        seen += 1
        if len(sample) < args.sample:
            sample.append(state)
        elif (j := rng.randrange(seen)) < args.sample:
            sample[j] = state
    drawn = len(start.stock)
    layers = Counter((drawn - len(state[3]), sum(state[2])) for state in sample)  # type: ignore[arg-type]
    print(f"{seen} waiting states, {len(sample)} sampled; layers (drawn, up): {sorted(layers.items())}")
    started = time.monotonic()
    outcome: dict[int, Counter[str]] = {b: Counter() for b in budgets}
    for columns, _, foundations, stock, waste, redeals in sample:  # type: ignore[misc]
        for budget in budgets:
            # _csolver.search's arguments: the complete stage's weights, FIFO, every move, locks 21 (the lock
            # check after draws, the stuck waste, the draw rule), auto-play on
            result = search(columns, foundations, stock, waste, redeals, _RULE_CODES[variant.move_rule],
                            (20, 16, 5, 12), False, False, 21, True, budget, 10**8, -1.0)
            outcome[budget][result[0]] += 1
            if result[0] in ("solved", "exhausted"):
                break
    print(f"{time.monotonic() - started:.0f} s of searches")
    for budget in budgets:
        print(f"  {budget} nodes: {dict(outcome[budget])}")


if __name__ == "__main__":
    main()
