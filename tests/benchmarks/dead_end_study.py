"""Where do the states a proof waits on die, and would a cheap exact dead-end test see it sooner?

A measurement for the research on dead-end learning (server/engine/solver/README.md, "Learning from dead ends:
the states a proof waits on"). From a C proof file (tests/benchmarks/winnability.py ``--phase2`` leaves them
under ``--proof-dir``) it samples waiting states of the deepest layer, keeps those the complete C search proves
lost within ``--budget`` nodes, and walks each one's whole reachable set under the complete search's exact rules
(auto-play, the lock check on every state, the stuck-waste rule): the states per cards drawn, where the lock
check ends them, how many have an empty column. Then the same walk again with each candidate test below also
cutting the states it claims: the walk's size with and without it.

    python tests/benchmarks/dead_end_study.py --seed 37069719 --file PROOF --sample 80 --budget 2000
    python tests/benchmarks/dead_end_study.py --small 3000   # the candidates on small positions, brute-forced

The candidates (each sound by the argument in its docstring; ``--small`` checks every claim the lock check does
not also make against the brute force of tests/engine/solver/test_solver.py):

- :func:`run_cover`: the cards above a waste card that cannot go up before it leaves must wait in the columns,
  where they lie in descending runs of one suit, one run per column at most.

A second candidate, the lock check with the stock drawn card by card onto what is left of the talon, was measured
the same way and dropped (it cut nothing); it was a copy of lock.py's fixpoint run in stages, so it is not kept
here: ``git show e65fe62:tests/benchmarks/dead_end_study.py`` has it.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from server.engine.solver.lock import locked, waste_top_stuck
from server.engine.solver.state import Rules, State, autoplay, key


def run_cover(state: State, columns: int, decks: int = 2) -> bool:
    """True when some waste card can provably never leave the waste (classic: built down in suit, no redeal).

    Take waste card ``w[i]`` (bottom to top) and any play that gets it out. When it leaves, every card above it
    has left; one that cannot have gone up by then (its foundation needs a rank of its suit whose every copy
    not up lies in ``w[:i+1]``) is in a column. A column holds, above the cards it has now, at most one
    descending run of one suit (a card lands only on its builder's parent or in an empty column), so those
    cards lie in runs, at most one per column. Within a suit, two of them share a run only with the ranks
    between them there too, impossible across a rank whose copies are all up or under ``w[i]``; two copies of a
    rank never share one. So they need at least the sum, over the suits, of the most copies of one rank in each
    stretch between such ranks: more runs than columns, and ``w[i]`` never leaves.
    """
    _, _, foundations, _, waste, redeals = state
    if redeals:
        return False
    up = [sum(1 for h in foundations[(c // 13) * decks:(c // 13 + 1) * decks] if h > c % 13) for c in range(52)]
    under = [0] * 52
    for i, card in enumerate(waste):
        under[card] += 1

        def free(c: int) -> bool:
            return decks - up[c] - under[c] > 0  # some copy neither up nor under w[i]

        waiting = Counter[int]()
        for above in waste[i + 1:]:
            suit, rank = divmod(above, 13)
            slots = foundations[suit * decks:(suit + 1) * decks]
            if not any(h <= rank and all(free(suit * 13 + q) for q in range(h, rank)) for h in slots):
                waiting[above] += 1
        runs = 0
        for suit in range(4):
            stretch = 0
            for rank in range(12, -1, -1):
                c = suit * 13 + rank
                if waiting[c]:
                    stretch = max(stretch, waiting[c])
                elif not free(c):
                    runs, stretch = runs + stretch, 0
            runs += stretch
        if runs > columns:
            return True
    return False


def walk(rules: Rules, expander: Any, start: State, stock: int, cut: Callable[[State], bool] | None,
         limit: int = 500_000) -> Counter[str]:
    """The reachable set of ``start`` under the complete search's exact rules, each state once; ``cut``: a
    candidate test whose claimed states are not expanded. Counts ``states``, ``locked``, ``cut`` and, per cards
    drawn d of the deal's ``stock``, ``d:D`` (states) and ``locked:D``; ``empty`` the expanded states with an
    empty column."""
    from server.engine.solver.search import FULL

    seen = {key(start, False)}
    todo = [start]
    counts = Counter[str]()
    while todo and counts["states"] < limit:
        state = todo.pop()
        counts["states"] += 1
        drawn = stock - len(state[3])
        counts[f"d:{drawn}"] += 1
        if locked(rules, state):
            counts["locked"] += 1
            counts[f"locked:{drawn}"] += 1
            continue
        if cut is not None and cut(state):
            counts["cut"] += 1
            continue
        counts["empty"] += not all(state[0])
        children = expander.moves(state)
        if state[3] and waste_top_stuck(rules, state):
            children = children[-1:]
        safe = rules.targets(state[2])[1]
        for _, child, exposed in children:
            if exposed == FULL or (exposed >= 0 and exposed in safe):
                child, _ = autoplay(rules, child)
            k = key(child, False)
            if k not in seen:
                seen.add(k)
                todo.append(child)
    return counts


def study_proof(args: argparse.Namespace) -> None:
    """The proof-file study (module docstring)."""
    from server.engine.solver._csolver import search

    from server.engine import deal, find_variant
    from server.engine.solver.proof_file import waiting
    from server.engine.solver.search import RULE_CODES, _Expander

    variant = find_variant(args.variant)
    start = deal(args.seed, variant)
    rules = Rules(variant)
    expander = _Expander(rules, (20, 16, 5, 12, 0))
    rng = random.Random(args.random_seed)
    sample: list[State] = []
    seen_deepest, deepest = 0, -1
    for state in waiting(args.file, start, variant):  # a reservoir sample of the deepest layer's draw count
        drawn = len(start.stock) - len(state[3])
        if drawn > deepest:
            sample, seen_deepest, deepest = [], 0, drawn
        if drawn == deepest:
            seen_deepest += 1
            if len(sample) < args.sample:
                sample.append(state)
            elif (j := rng.randrange(seen_deepest)) < args.sample:
                sample[j] = state
    print(f"{seen_deepest} waiting states at {deepest} cards drawn, {len(sample)} sampled")
    candidates: dict[str, Callable[[State], bool]] = {"run_cover": lambda s: run_cover(s, variant.columns)}
    totals: Counter[str] = Counter()
    lost = 0
    started = time.monotonic()
    for state in sample:
        columns, _, foundations, stock, waste, redeals = state
        verdict = search(columns, foundations, stock, waste, redeals, RULE_CODES[variant.move_rule],
                         (20, 16, 5, 12), False, False, 21, True, args.budget, 10**8, -1.0)[0]
        if verdict != "exhausted":
            continue
        lost += 1
        plain = walk(rules, expander, state, len(start.stock), None)
        totals.update({k: v for k, v in plain.items()})
        for name, test in candidates.items():
            totals[f"with {name}"] += walk(rules, expander, state, len(start.stock), test)["states"]
    print(f"{lost} proven lost within {args.budget} nodes; their reachable sets ({time.monotonic() - started:.0f} s):")
    per_draw = sorted((int(k[2:]), v) for k, v in totals.items() if k.startswith("d:"))
    print("  states by cards drawn:", ", ".join(f"{d}: {v}" for d, v in per_draw))
    locked_at = sorted((int(k[7:]), v) for k, v in totals.items() if k.startswith("locked:"))
    print("  ended by the lock check at:", ", ".join(f"{d}: {v}" for d, v in locked_at))
    print(f"  {totals['states']} states, {totals['locked']} locked, {totals['empty']} of the expanded ones with an "
          f"empty column")
    for name in candidates:
        print(f"  with {name}: {totals[f'with {name}']} states")


def study_small(count: int) -> None:
    """The candidates on ``count`` random small positions (2-3 columns) of tests/engine/solver/test_solver.py:
    the claims the lock check does not make, each checked by its brute force."""
    from server.engine.solver.state import from_position
    from tests.engine.solver.test_solver import SMALL, brute_force, crowded

    names = ["classic2", "classic3", "single2"]
    claims: Counter[str] = Counter()
    for n in range(count):
        rng = random.Random(n)
        variant = SMALL[names[n % len(names)]]
        start = crowded(rng, variant.columns)
        rules, state = Rules(variant), from_position(start, variant)
        lock = locked(rules, state)
        claims["lock"] += lock
        claim = run_cover(state, variant.columns)
        claims["run_cover (all)"] += claim
        if claim and not lock:
            claims["run_cover"] += 1
            try:
                if brute_force(start, variant, autoplay_on=True, limit=300_000):
                    claims["run_cover wrong"] += 1
            except RuntimeError:
                claims["run_cover unchecked"] += 1
    print(f"{count} small positions: {dict(claims)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed")
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--file", type=Path)
    parser.add_argument("--sample", type=int, default=80)
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--random-seed", type=int, default=1)
    parser.add_argument("--small", type=int, default=0, help="the candidates on this many small positions")
    args = parser.parse_args()
    if args.small:
        study_small(args.small)
    if args.file:
        study_proof(args)


if __name__ == "__main__":
    main()
