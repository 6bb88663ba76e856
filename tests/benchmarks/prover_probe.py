"""How soon do the states a proof still waits on die? A sample of a C proof file's waiting states, each given the
complete C search (the lock check, the draw rule) with growing node budgets.

A measurement for the research on dead-end learning (server/engine/solver/README.md, "The layered prover in C"):
a waiting state the complete search proves lost in a few thousand nodes died for a reason near it, the kind a
learned reason could cover in many other states. Run on a file the prover left (tests/benchmarks/winnability.py
``--phase2`` writes them under ``--proof-dir``):

    python tests/benchmarks/prover_probe.py --seed 37069719 --file PROOF --sample 300 --budgets 1000,10000,100000

Prints the layers sampled and, per budget, how many were proven lost (``exhausted``), won (``solved``) or left
open (``nodes``); a state decided at a budget is not tried at the larger ones.

``--pairs DRAWN,UP``: does a quick death carry over to the other column arrangements? In that layer, the waiting
states are grouped by their foundations and waste; for up to 40 groups of at least 5 whose randomly chosen
member is proven lost within the first budget, up to 10 other members each get 100 times that budget.

``--components N``: how far would merging mutually reachable states shrink what a proof waits on? In each of the
three largest layers, N waiting states sampled at random each get their reversible component: the states reached
by column-to-column commands (auto-play after, the layer unchanged) whose one command back leads to the state
they came from. States that reach each other are won or lost together, so a proof could keep one state per
component; the study prints the components' sizes, how many of the layer's waiting states each holds, and the
estimated number of distinct components among them (the layer's count times the mean of 1 / that number).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main() -> None:
    from server.engine.solver._csolver import search

    from server.engine import deal, find_variant
    from server.engine.solver.proof_file import waiting
    from server.engine.solver.search import RULE_CODES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", required=True)
    parser.add_argument("--variant", default="classic")
    parser.add_argument("--file", type=Path, required=True)
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--budgets", default="1000,10000,100000")
    parser.add_argument("--random-seed", type=int, default=1)
    parser.add_argument("--pairs", default=None, help="DRAWN,UP: the same-foundations-and-waste study of a layer")
    parser.add_argument("--components", type=int, default=0, help="N: the reversible-component study")
    args = parser.parse_args()
    variant = find_variant(args.variant)
    start = deal(args.seed, variant)
    budgets = [int(b) for b in args.budgets.split(",")]
    rng = random.Random(args.random_seed)

    def decide(state: tuple[object, ...], budget: int) -> str:
        columns, _, foundations, stock, waste, redeals = state
        # _csolver.search's arguments: the complete stage's weights, FIFO, every move, locks 21 (the lock check
        # after draws, the stuck waste, the draw rule), auto-play on
        result = search(columns, foundations, stock, waste, redeals, RULE_CODES[variant.move_rule],
                        (20, 16, 5, 12), False, False, 21, True, budget, 10**8, -1.0)
        return str(result[0])

    if args.pairs:
        pairs(args, start, variant, budgets[0], rng, decide)
        return
    if args.components:
        components(args, start, variant, rng)
        return
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
    for state in sample:
        for budget in budgets:
            answer = decide(state, budget)
            outcome[budget][answer] += 1
            if answer in ("solved", "exhausted"):
                break
    print(f"{time.monotonic() - started:.0f} s of searches")
    for budget in budgets:
        print(f"  {budget} nodes: {dict(outcome[budget])}")


def pairs(args: argparse.Namespace, start: Any, variant: Any, budget: int, rng: random.Random,
          decide: Callable[[tuple[object, ...], int], str]) -> None:
    """The ``--pairs`` study (module docstring)."""
    from server.engine.solver.proof_file import waiting

    drawn, up = (int(part) for part in args.pairs.split(","))
    groups: dict[tuple[bytes, bytes], list[tuple[object, ...]]] = defaultdict(list)
    for state in waiting(args.file, start, variant):
        if (len(start.stock) - len(state[3]), sum(state[2])) == (drawn, up):
            groups[(state[2], state[4])].append(state)
    print(f"layer ({drawn}, {up}): {sum(len(g) for g in groups.values())} waiting states, "
          f"{len(groups)} pairs of foundations and waste")
    keys = [key for key, group in groups.items() if len(group) >= 5]
    rng.shuffle(keys)
    tested, outcome = 0, Counter[str]()
    for key in keys:
        group = groups[key]
        first = rng.choice(group)
        if decide(first, budget) != "exhausted":
            continue
        tested += 1
        for other in rng.sample([state for state in group if state is not first], min(10, len(group) - 1)):
            outcome[decide(other, 100 * budget)] += 1
        if tested == 40:
            break
    print(f"{tested} pairs whose chosen state was proven lost within {budget} nodes; their other states at "
          f"{100 * budget} nodes: {dict(outcome)}")


def components(args: argparse.Namespace, start: Any, variant: Any, rng: random.Random) -> None:
    """The ``--components`` study (module docstring)."""
    from server.engine.solver.proof_file import waiting
    from server.engine.solver.search import _Expander
    from server.engine.solver.state import Rules, State, autoplay, key

    rules = Rules(variant, autoplay_on=True)
    expander = _Expander(rules)
    drawn = len(start.stock)

    def layer(state: State) -> tuple[int, int]:
        return drawn - len(state[3]), sum(state[2])

    def sideways(state: State) -> list[State]:
        """The column-to-column children that stay in the state's layer (after auto-play)."""
        out = []
        for text, child, _ in expander.moves(state):
            if text[0] in "wsr" or text.endswith("f"):
                continue
            child, _ = autoplay(rules, child)
            if layer(child) == layer(state):
                out.append(child)
        return out

    def component(state: State) -> set[tuple[object, ...]]:
        seen = {key(state, False)}
        queue = [state]
        for here in queue:
            back = key(here, False)
            for child in sideways(here):
                k = key(child, False)
                if k not in seen and any(key(x, False) == back for x in sideways(child)):
                    seen.add(k)
                    queue.append(child)
        return seen

    sizes_of: Counter[tuple[int, int]] = Counter(layer(state) for state in waiting(args.file, start, variant))
    largest = [name for name, _ in sizes_of.most_common(3)]
    print(f"{sum(sizes_of.values())} waiting states in {len(sizes_of)} layers")
    # A second pass keeps the three layers' keys as hashes (tens of millions of whole keys would not fit) and a
    # reservoir sample of each; a collision of 64-bit hashes would only merge two counts.
    held_keys: dict[tuple[int, int], set[int]] = {name: set() for name in largest}
    samples: dict[tuple[int, int], list[State]] = {name: [] for name in largest}
    counted: Counter[tuple[int, int]] = Counter()
    for state in waiting(args.file, start, variant):
        name = layer(state)
        if name not in held_keys:
            continue
        held_keys[name].add(hash(key(state, False)))
        counted[name] += 1
        sample = samples[name]
        if len(sample) < args.components:
            sample.append(state)
        elif (j := rng.randrange(counted[name])) < args.components:
            sample[j] = state
    for name in largest:
        sizes, held = [], []
        for state in samples[name]:
            members = component(state)
            sizes.append(len(members))
            held.append(sum(hash(k) in held_keys[name] for k in members))
        sizes.sort()
        held.sort()
        mean_inverse = sum(1 / h for h in held) / len(held)
        print(f"layer (drawn {name[0]}, up {name[1]}): {sizes_of[name]} waiting, {len(held)} sampled; component size "
              f"median {sizes[len(sizes) // 2]}, largest {sizes[-1]}; waiting states in one: median "
              f"{held[len(held) // 2]}, mean {sum(held) / len(held):.1f}; about {sizes_of[name] * mean_inverse:,.0f} "
              f"components, {1 / mean_inverse:.2f} waiting states each")


if __name__ == "__main__":
    main()
