"""The two-phase estimate of tests/benchmarks/winnability.py: its interval on simulated studies, its seed rule, the
report from the results file alone.

The coverage check simulates whole studies with a known true share (phase 1: each deal solved, lost or open with
fixed probabilities; phase 2: a sample of the open ones, each solvable with a fixed probability) and counts how
often the stated 95 % interval holds the true share. Pure arithmetic: no deal is played.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.benchmarks import winnability as w


def simulated(rng: random.Random, deals: int, shares: tuple[float, float, float], open_solvable: float,
              sample: int) -> w.Counts:
    """One study: phase-1 outcomes drawn with ``shares`` (solved, lost, open), then ``sample`` open deals (all
    of them if fewer) each solvable with probability ``open_solvable``."""
    outcomes = rng.choices(("solved", "lost", "open"), weights=shares, k=deals)
    open_ = outcomes.count("open")
    n = min(sample, open_)
    solved2 = sum(rng.random() < open_solvable for _ in range(n))
    return w.Counts(outcomes.count("solved"), outcomes.count("lost"), open_, solved2, n - solved2)


@pytest.mark.parametrize(("deals", "shares", "open_solvable", "sample"), [
    (500, (0.5, 0.05, 0.45), 0.1, 40),  # near the classic figures: the open deals mostly lost
    (300, (0.4, 0.2, 0.4), 0.5, 20),
    (1000, (0.5, 0.05, 0.45), 0.02, 60),  # a share near 0 in phase 2
])
def test_the_interval_covers_the_true_share_at_about_its_stated_rate(
        deals: int, shares: tuple[float, float, float], open_solvable: float, sample: int) -> None:
    rng = random.Random(11)
    truth = shares[0] + shares[2] * open_solvable
    studies = 200
    covered = 0
    for study in range(studies):
        low, high = w.interval(simulated(rng, deals, shares, open_solvable, sample), draws=1_000, seed=study)
        covered += low <= truth <= high
    # 95 % stated; 200 studies give a standard error of 1.5 points, so 0.90-0.995 is about three of them.
    assert 0.90 * studies <= covered <= 0.995 * studies, covered


def test_the_point_estimate_is_the_stratified_share() -> None:
    c = w.Counts(solved=50, lost=10, open=40, solved2=1, lost2=3)
    assert w.point_estimate(c) == pytest.approx((50 + 40 * 1 / 4) / 100)
    low, high = w.interval(c)
    assert low < w.point_estimate(c) < high
    # No phase-2 deal decided yet: the open deals' share is the Jeffreys posterior mean 1/2.
    assert w.point_estimate(w.Counts(50, 10, 40)) == pytest.approx((50 + 40 / 2) / 100)
    assert w.point_estimate(w.Counts(50, 10, 40, undecided2=3)) == pytest.approx(0.7)
    with pytest.raises(ValueError):
        w.point_estimate(w.Counts(0, 0, 0))
    assert w.point_estimate(w.Counts(50, 10, 0)) == pytest.approx(50 / 60)


def test_an_undecided_phase2_deal_counts_both_ways() -> None:
    undecided = w.interval(w.Counts(50, 10, 40, solved2=1, lost2=3, undecided2=2), seed=3)
    as_lost = w.interval(w.Counts(50, 10, 40, solved2=1, lost2=5), seed=3)
    as_solved = w.interval(w.Counts(50, 10, 40, solved2=3, lost2=3), seed=3)
    assert undecided[0] == pytest.approx(as_lost[0])
    assert undecided[1] == pytest.approx(as_solved[1])
    assert undecided[0] < as_solved[0] and undecided[1] > as_lost[1]


def test_without_phase2_the_open_deals_count_both_ways() -> None:
    low, high = w.interval(w.Counts(solved=252, lost=26, open=222))
    assert low < 252 / 500 < 474 / 500 < high
    assert 0.44 < low and high < 0.98


def test_the_seed_rule() -> None:
    rng = random.Random(2026)
    draws = [str(rng.randrange(1, 10**9)) for _ in range(1_200)]
    assert [w.seed_of("classic", i) for i in (1, 2, 500)] == [draws[0], draws[1], draws[499]]
    assert w.seed_of("classic", 501) == draws[1000]
    assert [w.seed_of("relaxed", i) for i in (1, 500)] == [draws[500], draws[999]]
    with pytest.raises(ValueError):
        w.seed_of("relaxed", 501)


def test_the_report_reads_the_file_alone_and_the_last_line_of_a_deal_counts(tmp_path: Path) -> None:
    path = tmp_path / "results.tsv"
    lines = [("classic", 1, "solved", "1"), ("classic", 2, "unknown", "1"), ("classic", 3, "unknown", "1"),
             ("classic", 4, "unsolvable", "1"), ("classic", 2, "unknown", "2"), ("classic", 2, "unsolvable", "2"),
             ("classic", 3, "unknown", "2"), ("relaxed", 1, "solved", "1")]
    for variant, index, verdict, phase in lines:
        w.append(path, {"variant": variant, "index": index, "seed": f"s{index}", "phase": phase, "verdict": verdict,
                        "nodes": 10, "seconds": 1.0, "note": "test"})
    c = w.counts_of(w.rows(path), "classic")
    assert c == w.Counts(solved=1, lost=1, open=2, solved2=0, lost2=1, undecided2=1)
    report = w.report(path)
    low, high = w.interval(c)
    assert report[0] == (f"classic: solvable share {100 * (1 + 2 * 0) / 4:.1f} % (95 % interval {100 * low:.1f}-"
                         f"{100 * high:.1f} %), 4 deals, 1 decided exactly in phase 2, 1 undecided")
    assert report[1].startswith("relaxed: solvable share 100.0 % (95 % interval ")
    # The phase-2 order skips deals phase 2 decided and keeps undecided ones for resuming.
    assert [index for index, _ in w.phase2_candidates(w.rows(path), "classic")] == [3]
    assert list(w.phase2_candidates(w.rows(path), "classic", resume=False)) == []


def test_the_report_gives_a_share_before_phase2_decides_a_deal(tmp_path: Path) -> None:
    path = tmp_path / "results.tsv"
    lines = [(1, "solved", "1"), (2, "unknown", "1"), (3, "unknown", "1"), (4, "unsolvable", "1"),
             (5, "solved", "1"), (2, "unknown", "2")]
    for index, verdict, phase in lines:
        w.append(path, {"variant": "classic", "index": index, "seed": f"s{index}", "phase": phase, "verdict": verdict,
                        "nodes": 10, "seconds": 1.0, "note": "test"})
    # 2 of 5 solved, 2 open counted as half solved: (2 + 2 / 2) / 5 = 60 %.
    low, high = w.interval(w.Counts(solved=2, lost=1, open=2, undecided2=1))
    assert low < 0.6 < high
    line = (f"classic: solvable share 60.0 % (95 % interval {100 * low:.1f}-{100 * high:.1f} %), "
            "5 deals, 0 decided exactly in phase 2, 1 undecided")
    assert w.report(path) == [line]


@pytest.mark.parametrize("pure", [True, False], ids=["pure", "c"])
def test_a_prover_run_past_the_memory_cap_leaves_the_deal_in_the_sample_undecided(tmp_path: Path, pure: bool) -> None:
    if not pure:
        pytest.importorskip("server.engine.solver._csolver")
    path = tmp_path / "results.tsv"
    seed = w.seed_of("classic", 872)
    w.append(path, {"variant": "classic", "index": 872, "seed": seed, "phase": 1, "verdict": "unknown",
                    "nodes": 10, "seconds": 10.0, "note": "test"})
    # Any process is past 1 MB, and the C prover passes 1 MiB of storage in its first layers: the run stops.
    w.phase2(path, "classic", 1, 30.0, tmp_path / "proofs", None, 0.0, max_rss_mb=1, pure=pure)
    last = w.rows(path)[-1]
    assert (last["index"], last["phase"], last["verdict"]) == ("872", "2", "unknown")
    assert ("past the cap of 1 MB" if pure else "past the cap of 1 MiB") in last["note"]
    assert w.counts_of(w.rows(path), "classic") == w.Counts(solved=0, lost=0, open=1, undecided2=1)
    assert [index for index, _ in w.phase2_candidates(w.rows(path), "classic")] == [872]
    with pytest.raises(SystemExit):  # a deal enters phase 2 only in its turn
        w.phase2(path, "classic", 1, 30.0, tmp_path / "proofs", None, 0.0, only=16)
