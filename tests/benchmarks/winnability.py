"""The solvable share of random deals, in two phases, kept in one results file that grows run by run.

Phase 1: the solver's schedule (``solve``, 10 s a deal by default, the C search where it is built) on random deals:
``solved`` (a replayed win), ``unsolvable`` (an exhausted search) or ``unknown`` (open). Phase 2: a random sample of
the deals phase 1 left open, each given first ``--search-s`` seconds (default 60) of the same schedule, which finds
the wins the prover would meet only in its last layers, then to the layered exact prover
(server/engine/solver/prover.py; its C implementation, proof_file.prove, where the extension is built),
``--budget-s`` seconds a run, which stops and resumes from its own file (``--proof-dir``), so a deal can be
decided over several runs. Every verdict of either is exact: a win replayed
through the engine, a loss by an exhausted search.

**The seeds** (decimal strings below 10^9): the draws of ``random.Random(2026).randrange(1, 10**9)``, in order.
Classic deal i is draw i for i <= 500 and draw 500 + i beyond; relaxed deal i is draw 500 + i (i <= 500). So the
first 500 of each are the seeds of ``solver_bench.py --random --random-seed 2026 --classic 500 --relaxed 500``
(tests/benchmarks/results/solver-random-500-10s.tsv), which ``--import-bench`` copies in as phase-1 rows marked
with their source.

**The phase-2 sample**: the open deals ordered by ``sha256("phase2:" + seed)``, a key that does not depend on any
verdict, so the first n of them are a simple random sample of the open deals.

**The estimator** (stratified by the phase-1 outcome): with N deals in phase 1, S solved, L proven lost and O open,
and among n phase-2 deals s solved, l lost and u undecided,

    p = S/N + (O/N) * s/(s + l),

and the 95 % interval is the 2.5 and 97.5 percentiles of p drawn from the Jeffreys posteriors of the two
phases (the phase-1 shares ~ Dirichlet(S + 1/2, O + 1/2, L + 1/2), the open deals' solvable share ~
Beta(s + 1/2, l + 1/2); the finite-population correction of phase 2 left out, which only widens it). An
undecided phase-2 deal counts both ways: the lower end is computed with it lost, the upper end with it solved.
Until phase 2 has decided a deal, s/(s + l) is replaced by the mean of its Jeffreys posterior Beta(s + 1/2,
l + 1/2), which is then 1/2: the point estimate is S/N + O/(2N), the middle of the honest bounds (every open deal
lost, every one solved). It is a placeholder that tells nothing about the open deals; the interval says what is
known. Without any phase-2 deal the interval counts the open share both ways (the Jeffreys intervals of those
honest bounds). tests/engine/solver/test_winnability.py checks the coverage on simulated studies.

**The results file** (``--results``, default tests/benchmarks/results/winnability.tsv): one tab-separated line per
decided (or given up) deal and phase, appended and flushed at once, so a stopped run loses only the deal in hand:
variant, index, seed, phase, verdict, nodes, seconds, and a note (the build that ran it, the solver, the
prover's largest layer and states per second). A phase-2 deal left undecided and resumed later gets a new line;
the last line of a deal and phase counts.

Run in pieces: ``python tests/benchmarks/winnability.py --phase1 --count K [--variant classic] [--seconds 10]``,
``--phase2 --count K --budget-s S [--search-s 60] [--proof-dir DIR] [--new-only | --deal I] [--max-rss-mb M]``,
``--import-bench FILE``, ``--report`` (from the file alone).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import os
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from server.engine.solver.prover import LayeredProof

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "tests" / "benchmarks" / "results" / "winnability.tsv"
FIELDS = ("variant", "index", "seed", "phase", "verdict", "nodes", "seconds", "note")
SEED_RNG = 2026
BENCH_FILE = "solver-random-500-10s.tsv"
BENCH_COMMIT = "eb36bdf"


def seed_of(variant: str, index: int) -> str:
    """The seed of deal ``index`` (1-based) of ``variant`` by the rule of the module docstring."""
    if variant == "classic":
        draw = index if index <= 500 else 500 + index
    elif variant == "relaxed":
        if not 1 <= index <= 500:
            raise ValueError("relaxed deals are numbered 1-500")
        draw = 500 + index
    else:
        raise ValueError(f"no seed rule for {variant!r}")
    return _draws(draw)[draw - 1]


_DRAWS: list[str] = []


def _draws(count: int) -> list[str]:
    if len(_DRAWS) < count:
        rng = random.Random(SEED_RNG)
        _DRAWS[:] = [str(rng.randrange(1, 10**9)) for _ in range(max(count, 2 * len(_DRAWS), 2000))]
    return _DRAWS


def phase2_key(seed: str) -> str:
    """The order in which open deals enter phase 2 (independent of every verdict)."""
    return hashlib.sha256(f"phase2:{seed}".encode()).hexdigest()


# The estimator.

@dataclass(frozen=True)
class Counts:
    """Phase 1: ``solved``, ``lost``, ``open`` deals; phase 2 (a sample of the open ones): ``solved2``, ``lost2``,
    ``undecided2``."""

    solved: int
    lost: int
    open: int
    solved2: int = 0
    lost2: int = 0
    undecided2: int = 0

    @property
    def deals(self) -> int:
        return self.solved + self.lost + self.open


def point_estimate(c: Counts) -> float:
    """S/N + (O/N) * s/(s + l) as a share; with no decided phase-2 deal s/(s + l) is its Jeffreys posterior mean
    1/2, so S/N + O/(2N) (module docstring). Raises ValueError for a study of no deals."""
    if c.deals == 0:
        raise ValueError("no deals: no estimate")
    decided = c.solved2 + c.lost2
    open_solvable = c.solved2 / decided if decided else 0.5
    return (c.solved + c.open * open_solvable) / c.deals


def _quantile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, max(0, int(q * len(ordered))))]


def _draw_share(rng: random.Random, solved: int, lost: int, open_: int, solved2: int, lost2: int) -> float:
    a = rng.gammavariate(solved + 0.5, 1.0)
    o = rng.gammavariate(open_ + 0.5, 1.0)
    b = rng.gammavariate(lost + 0.5, 1.0)
    r = rng.betavariate(solved2 + 0.5, lost2 + 0.5)
    return (a + o * r) / (a + o + b)


def interval(c: Counts, *, draws: int = 20_000, seed: int = 1, level: float = 0.95) -> tuple[float, float]:
    """The 95 % interval of the module docstring: (low, high) as shares; reproducible for the same ``seed``.

    With no phase-2 deal at all the open share is counted both ways: the low end as if every open deal were lost,
    the high end as if every one were solved (Jeffreys intervals of those honest bounds)."""
    if c.deals == 0:
        return 0.0, 1.0
    rng = random.Random(seed)
    tail = (1 - level) / 2
    if c.open and c.solved2 + c.lost2 + c.undecided2 == 0:
        low = sorted(rng.betavariate(c.solved + 0.5, c.lost + c.open + 0.5) for _ in range(draws))
        high = sorted(rng.betavariate(c.solved + c.open + 0.5, c.lost + 0.5) for _ in range(draws))
        return _quantile(low, tail), _quantile(high, 1 - tail)
    low = sorted(_draw_share(rng, c.solved, c.lost, c.open, c.solved2, c.lost2 + c.undecided2) for _ in range(draws))
    if c.undecided2:
        rng = random.Random(seed)  # the same draws as for the low end: with none undecided both ends are one sample
        high = sorted(_draw_share(rng, c.solved, c.lost, c.open, c.solved2 + c.undecided2, c.lost2)
                      for _ in range(draws))
    else:
        high = low
    return _quantile(low, tail), _quantile(high, 1 - tail)


# The results file.

def rows(path: Path) -> list[dict[str, str]]:
    """Every line of the results file (none if it does not exist)."""
    if not path.exists():
        return []
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def append(path: Path, row: dict[str, object]) -> None:
    """Append one line and flush it to disk (a stopped run keeps every line written)."""
    new = not path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8", newline="") as handle:
        if new:
            handle.write("\t".join(FIELDS) + "\n")
        handle.write("\t".join(str(row[name]).replace("\t", " ") for name in FIELDS) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def latest(table: list[dict[str, str]], variant: str, phase: str) -> dict[int, dict[str, str]]:
    """The last line per deal index of ``variant`` in ``phase``."""
    out: dict[int, dict[str, str]] = {}
    for row in table:
        if row["variant"] == variant and row["phase"] == phase:
            out[int(row["index"])] = row
    return out


def counts_of(table: list[dict[str, str]], variant: str) -> Counts:
    """The estimator's counts from the file's lines of ``variant``."""
    first = latest(table, variant, "1")
    second = latest(table, variant, "2")
    verdicts = [row["verdict"] for row in first.values()]
    open_ = {index for index, row in first.items() if row["verdict"] == "unknown"}
    sampled = [row["verdict"] for index, row in second.items() if index in open_]
    return Counts(verdicts.count("solved"), verdicts.count("unsolvable"), verdicts.count("unknown"),
                  sampled.count("solved"), sampled.count("unsolvable"), sampled.count("unknown"))


def report(path: Path) -> list[str]:
    """One line per variant in the file, from the file alone: ``VARIANT: solvable share X % (95 % interval A-B %),
    N deals, n decided exactly in phase 2, u undecided`` (X by :func:`point_estimate`, A-B by :func:`interval`)."""
    table = rows(path)
    lines = []
    for variant in sorted({row["variant"] for row in table}):
        c = counts_of(table, variant)
        low, high = interval(c)
        lines.append(f"{variant}: solvable share {100 * point_estimate(c):.1f} % "
                     f"(95 % interval {100 * low:.1f}-{100 * high:.1f} %), "
                     f"{c.deals} deals, {c.solved2 + c.lost2} decided exactly in phase 2, {c.undecided2} undecided")
    return lines


# The phases.

def build() -> str:
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def import_bench(path: Path, source: Path) -> int:
    """Copy the lines of solver_bench.py's random run (``source``) in as phase-1 lines, checking each seed
    against the rule; returns how many were added (deals already in the file are skipped)."""
    table = rows(path)
    added = 0
    index = {"classic": 0, "relaxed": 0}
    have = {(row["variant"], row["index"]) for row in table if row["phase"] == "1"}
    for row in rows(source):
        variant = row["variant"]
        index[variant] += 1
        if seed_of(variant, index[variant]) != row["seed"]:
            raise SystemExit(f"{source}: {variant} line {index[variant]} has seed {row['seed']}, not the rule's")
        if (variant, str(index[variant])) in have:
            continue
        append(path, {"variant": variant, "index": index[variant], "seed": row["seed"], "phase": 1,
                      "verdict": row["result"], "nodes": row["nodes"], "seconds": row["seconds"],
                      "note": f"from {source.name} (build {BENCH_COMMIT}, 2 workers)"})
        added += 1
    return added


def phase1(path: Path, variant_name: str, count: int, seconds: float, states: int) -> None:
    """Run the schedule on the next ``count`` deals of ``variant_name`` not yet in the file."""
    from server.engine import deal, find_variant
    from server.engine.solver import Budget, solve

    variant = find_variant(variant_name)
    done = latest(rows(path), variant_name, "1")
    commit = build()
    index = 0
    ran = 0
    while ran < count:
        index += 1
        if index in done:
            continue
        seed = seed_of(variant_name, index)
        started = time.monotonic()
        result = solve(deal(seed, variant), variant, Budget(nodes=10**10, seconds=seconds, states=states),
                       clock=time.monotonic)
        elapsed = time.monotonic() - started
        load = os.getloadavg()[0]
        append(path, {"variant": variant_name, "index": index, "seed": seed, "phase": 1, "verdict": result.result,
                      "nodes": result.nodes, "seconds": f"{elapsed:.3f}",
                      "note": f"build {commit}, {result.solver}, {seconds:g} s cap, load {load:.1f}"})
        print(f"{variant_name} {index} {seed}: {result.result} {result.nodes} nodes {elapsed:.1f} s", flush=True)
        ran += 1


def phase2_candidates(table: list[dict[str, str]], variant: str, *, resume: bool = True) -> Iterator[tuple[int, str]]:
    """The deals phase 2 takes next: first those it left undecided (to resume; skipped with ``resume`` false),
    then the open deals it has not taken yet, each group in :func:`phase2_key` order. Which deals enter depends
    on the seeds' keys and on phase 1 alone, never on a phase-2 verdict."""
    first = latest(table, variant, "1")
    second = latest(table, variant, "2")
    open_ = sorted(((index, row["seed"]) for index, row in first.items() if row["verdict"] == "unknown"),
                   key=lambda pair: phase2_key(pair[1]))
    if resume:
        yield from ((index, seed) for index, seed in open_
                    if index in second and second[index]["verdict"] == "unknown")
    yield from ((index, seed) for index, seed in open_ if index not in second)


class MemoryCap(Exception):
    """The process's peak memory passed the cap given to :func:`phase2` (checked after each layer)."""


def _maxrss_mb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def _progress(seed: str, before: int, started: float, max_rss_mb: int | None = None) -> Callable[[LayeredProof], None]:
    """A report after each layer that prints the proof's figures at most once a minute and raises
    :class:`MemoryCap` once the peak memory passes ``max_rss_mb`` (MB)."""
    last = [started]

    def progress(p: LayeredProof) -> None:
        now = time.monotonic()
        if now - last[0] >= 60:
            last[0] = now
            print(f"  {seed}: layer {p.next_layer()}, {p.counts.nodes} nodes, largest layer "
                  f"{p.counts.largest_layer} {p.counts.largest_key}, seeds {p.seeds}, "
                  f"{(p.counts.nodes - before) / (now - started):.0f} states/s, "
                  f"maxrss {_maxrss_mb()} MB", flush=True)
        if max_rss_mb is not None and _maxrss_mb() > max_rss_mb:
            raise MemoryCap(f"maxrss {_maxrss_mb()} MB past the cap of {max_rss_mb} MB")

    return progress


def phase2(path: Path, variant_name: str, count: int, budget: float, proof_dir: Path, states: int | None,
           search_s: float, resume: bool = True, max_rss_mb: int | None = None, only: int | None = None,
           pure: bool = False) -> None:
    """Give the next ``count`` phase-2 deals ``budget`` seconds each of the prover (resuming where a run left;
    with ``resume`` false only deals new to phase 2), a deal new to phase 2 first ``search_s`` seconds of the
    schedule (a win or a loss it proves is exact too). A run stopped by ``states`` (one layer's bound) or by
    ``max_rss_mb`` (the peak memory after a layer, MB) writes no checkpoint (the file keeps its last one, the work
    since is lost) and gets an ``unknown`` line saying so: the deal stays in the sample, undecided. ``only``:
    resume that deal alone, which must be one phase 2 left undecided (a deal enters the sample only in its turn);
    raises ``SystemExit`` otherwise. The C prover (proof_file.prove) runs where it is built (``max_rss_mb`` then
    caps its storage); ``pure`` runs the pure one (prover.py) instead."""
    from server.engine import deal, find_variant
    from server.engine.solver import Budget, solve
    from server.engine.solver.proof_file import ProofFile, fast_available
    from server.engine.solver.prover import Stopped, run

    variant = find_variant(variant_name)
    commit = build()
    candidates = list(phase2_candidates(rows(path), variant_name, resume=resume))[:count]
    if only is not None:
        second = latest(rows(path), variant_name, "2")
        if only not in second or second[only]["verdict"] != "unknown":
            raise SystemExit(f"{variant_name} deal {only} is no phase-2 deal left undecided")
        candidates = [(only, second[only]["seed"])]
    taken = latest(rows(path), variant_name, "2")
    if states is not None and not pure and candidates and fast_available(deal(candidates[0][1], variant), variant):
        raise SystemExit("--layer-states bounds the pure prover's layers; the C prover's memory is bounded by "
                         "--max-rss-mb (or give --pure)")
    for index, seed in candidates:
        store = ProofFile(proof_dir, f"{variant_name}-{seed}")
        if search_s > 0 and index not in taken and not store.path.exists():
            # A longer run of the schedule first: the prover meets a win only in the last layers (README.md).
            started = time.monotonic()
            result = solve(deal(seed, variant), variant, Budget(nodes=10**10, seconds=search_s, states=30_000_000),
                           clock=time.monotonic)
            elapsed = time.monotonic() - started
            print(f"{variant_name} {index} {seed}: the schedule at {search_s:g} s: {result.result}", flush=True)
            if result.result != "unknown":
                append(path, {"variant": variant_name, "index": index, "seed": seed, "phase": 2,
                              "verdict": result.result, "nodes": result.nodes, "seconds": f"{elapsed:.1f}",
                              "note": f"build {commit}, the schedule at {search_s:g} s ({result.solver}) before "
                                      f"the prover, load {os.getloadavg()[0]:.1f}"})
                continue
        if fast_available(deal(seed, variant), variant) and not pure:
            _phase2_c(path, variant_name, index, seed, proof_dir, budget, max_rss_mb, commit)
            continue
        proof = store.open(deal(seed, variant), variant)
        before = proof.counts.nodes
        started = time.monotonic()
        progress = _progress(seed, before, started, max_rss_mb)
        stopped = ""
        try:
            verdict = run(proof, store, seconds=budget, clock=time.monotonic, checkpoint_seconds=300.0,
                          states=states, report=progress)
        except (Stopped, MemoryCap) as error:
            verdict = "unknown"
            stopped = f"stopped ({error or 'the layer bound'}), the work since the last checkpoint lost, "
        elapsed = time.monotonic() - started
        c = proof.counts
        rate = (c.nodes - before) / max(elapsed, 1e-9)
        append(path, {"variant": variant_name, "index": index, "seed": seed, "phase": 2, "verdict": verdict,
                      "nodes": c.nodes, "seconds": f"{elapsed:.1f}",
                      "note": f"build {commit}, prover, {stopped}{c.layers} layers, largest layer {c.largest_layer} "
                              f"{tuple(c.largest_key)}, most seeds {c.most_seeds}, {rate:.0f} states/s, "
                              f"maxrss {_maxrss_mb()} MB"})
        print(f"{variant_name} {index} {seed}: {verdict} after {c.nodes} nodes ({elapsed:.0f} s this run)",
              flush=True)


def _phase2_c(path: Path, variant_name: str, index: int, seed: str, proof_dir: Path, budget: float,
              max_mb: int | None, commit: str) -> None:
    """One run of the C prover (proof_file.prove) on phase-2 deal ``index``, resumed from
    ``proof_dir/VARIANT-SEED.cproof`` when it is there, and its results line. ``max_mb`` caps the prover's
    storage (default 16,000 MiB); a run stopped by it keeps the file's last checkpoint."""
    from server.engine import deal, find_variant
    from server.engine.solver.proof_file import prove

    variant = find_variant(variant_name)
    proof_dir.mkdir(parents=True, exist_ok=True)
    file = proof_dir / f"{variant_name}-{seed}.cproof"
    cap = max_mb or 16_000
    started = time.monotonic()
    got = prove(deal(seed, variant), variant, file, seconds=budget, max_mb=cap,
                checkpoint_seconds=300.0, report_seconds=60.0, lock_every_state=True)
    elapsed = time.monotonic() - started
    c = got.counts
    rate = int(c["run_nodes"]) / max(elapsed, 1e-9)
    stopped = {"memory": f"stopped (storage past the cap of {cap} MiB), the work since the last checkpoint lost, ",
               "time": "stopped (time), ",
               "capacity": "stopped (a move outgrew the C search's state), the work since the last checkpoint lost, ",
               "io": "stopped (a checkpoint could not be written; the last whole one kept), "}.get(got.reason, "")
    append(path, {"variant": variant_name, "index": index, "seed": seed, "phase": 2, "verdict": got.verdict,
                  "nodes": c["nodes"], "seconds": f"{elapsed:.1f}",
                  "note": f"build {commit}, C prover (lock on every state), {stopped}{c['layers']} layers, largest layer "
                          f"{c['largest_layer']} {tuple(c['largest_key'])}, most pending {c['most_pending']}, "
                          f"{c['states']} states kept, {rate:.0f} states/s, peak {c['peak_mb']} MiB, "
                          f"load {os.getloadavg()[0]:.1f}"})
    print(f"{variant_name} {index} {seed}: {got.verdict} after {c['nodes']} nodes ({elapsed:.0f} s this run)",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--phase1", action="store_true", help="the schedule on the next --count deals")
    what.add_argument("--phase2", action="store_true", help="the prover on the next --count open deals")
    what.add_argument("--import-bench", type=Path, help=f"copy {BENCH_FILE} in as phase-1 lines")
    what.add_argument("--report", action="store_true", help="print the estimate from the results file")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--variant", default="classic", choices=("classic", "relaxed"))
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=10.0, help="phase 1: the schedule's cap per deal")
    parser.add_argument("--states", type=int, default=30_000_000, help="phase 1: the state bound per deal")
    parser.add_argument("--budget-s", type=float, default=600.0, help="phase 2: the prover's seconds per deal")
    parser.add_argument("--search-s", type=float, default=60.0,
                        help="phase 2: seconds of the schedule on a deal new to phase 2 before the prover (0: none)")
    parser.add_argument("--new-only", action="store_true",
                        help="phase 2: skip the deals left undecided (a resumed proof needs the memory it had)")
    parser.add_argument("--deal", type=int, default=None,
                        help="phase 2: resume this deal alone (one phase 2 left undecided)")
    parser.add_argument("--max-rss-mb", type=int, default=None,
                        help="phase 2: stop a deal (undecided, no checkpoint) once the peak memory passes this")
    parser.add_argument("--layer-states", type=int, default=None, help="phase 2: the most states of one layer")
    parser.add_argument("--pure", action="store_true", help="phase 2: the pure prover even where the C one is built")
    parser.add_argument("--proof-dir", type=Path,
                        default=Path(os.path.expanduser("~/.cache/forty-thieves-race/proofs")),
                        help="phase 2: where the prover keeps its resumable files")
    args = parser.parse_args()
    if args.report:
        print("\n".join(report(args.results)))
    elif args.import_bench:
        print(f"{import_bench(args.results, args.import_bench)} lines added")
    elif args.phase1:
        phase1(args.results, args.variant, args.count, args.seconds, args.states)
    else:
        phase2(args.results, args.variant, args.count, args.budget_s, args.proof_dir, args.layer_states,
               args.search_s, resume=not args.new_only, max_rss_mb=args.max_rss_mb,
               only=args.deal, pure=args.pure)


if __name__ == "__main__":
    main()
