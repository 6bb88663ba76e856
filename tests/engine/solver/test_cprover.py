"""The C prover (proof_file.prove, _csolver.c's prove) against the pure layered prover and the complete search.

The pure prover (server/engine/solver/prover.py) is the reference: the C one searches the same layers in the same
order, so on every input both exhaust they must give the same verdict and the same counts, and a win the same
moves; the complete search of ``solve`` (pure) is the independent answer for the verdict and a loss's nodes.
Wins are replayed through the engine here.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tests.engine.solver.test_solver as base
from server.engine import Position, Variant, deal, find_variant
from server.engine.solver import Budget, solve
from server.engine.solver.proof_file import Proved, fast_available, prove, waiting
from server.engine.solver.prover import LayeredProof, MemoryStore, canonical, run

_csolver = pytest.importorskip("server.engine.solver._csolver")

CLASSIC = find_variant("classic")
RELAXED = find_variant("relaxed")
SAME = ("nodes", "locked", "draw_only", "layers", "largest_layer", "largest_key")
"""The counts both provers keep the same way (``states``, ``most_pending`` and ``peak_mb`` are the C one's)."""


def pure(start: Position, variant: Variant, autoplay_on: bool = True) -> LayeredProof:
    proof = LayeredProof.start(start, variant, autoplay_on=autoplay_on)
    run(proof, MemoryStore())
    return proof


def same_counts(fast: Proved, reference: LayeredProof) -> None:
    mine = {name: fast.counts[name] for name in SAME}
    theirs = {name: value for name, value in reference.counts.as_dict().items() if name in SAME}
    assert mine == {**theirs, "largest_key": tuple(reference.counts.largest_key)}


@pytest.mark.parametrize("seed", ["124", "80", "35", "105"])
def test_lost_deals_get_the_pure_provers_counts_and_the_complete_searchs_nodes(seed: str) -> None:
    start = deal(seed, CLASSIC)
    complete = solve(start, CLASSIC, Budget(nodes=1_000_000), portfolio=False, pure=True,
                     lock_every_state=False)  # the lock after draws: the layered provers' rule
    assert complete.result == "unsolvable"
    fast = prove(start, CLASSIC, None)
    assert fast.verdict == "unsolvable"
    assert fast.counts["nodes"] == complete.nodes
    same_counts(fast, pure(start, CLASSIC))
    every = solve(start, CLASSIC, Budget(nodes=1_000_000), portfolio=False, pure=True)  # the lock on every state
    assert prove(start, CLASSIC, None, lock_every_state=True).counts["nodes"] == every.nodes <= complete.nodes


@settings(max_examples=150, deadline=None, derandomize=True)
@given(base.endgames(), st.booleans())
def test_small_endgames_get_the_pure_provers_verdict_counts_and_moves(case: tuple[Position, Variant],
                                                                     autoplay_on: bool) -> None:
    start, variant = case
    assume(fast_available(start, variant))
    complete = solve(start, variant, Budget(nodes=200_000), autoplay_on=autoplay_on, portfolio=False, pure=True,
                     lock_every_state=False)  # the lock after draws: the layered provers' rule
    reference = pure(start, variant, autoplay_on)
    fast = prove(start, variant, None, autoplay_on=autoplay_on)
    assert fast.verdict == complete.result == reference.verdict
    assert fast.moves == reference.moves
    if fast.verdict == "solved":
        assert base.replay_wins(start, variant, fast.moves, autoplay_on)
    else:
        assert fast.counts["nodes"] == complete.nodes
        same_counts(fast, reference)


def test_the_hand_built_positions_get_their_hand_worked_verdicts() -> None:
    assert prove(base.position(base.LOCKED), CLASSIC, None).verdict == "unsolvable"
    for text in (base.LOOSENED, base.NEAR_WIN):
        for autoplay_on in (True, False):
            fast = prove(base.position(text), CLASSIC, None, autoplay_on=autoplay_on)
            assert fast.verdict == "solved"
            assert fast.moves == pure(base.position(text), CLASSIC, autoplay_on).moves
            assert base.replay_wins(base.position(text), CLASSIC, fast.moves, autoplay_on)


def test_a_stopped_and_resumed_loss_reaches_the_same_verdict_and_counts(tmp_path: Path) -> None:
    start = deal("105", CLASSIC)
    whole = prove(start, CLASSIC, None)
    path = tmp_path / "105"
    first = prove(start, CLASSIC, path, nodes=3_000)
    assert (first.verdict, first.reason) == ("unknown", "nodes")
    assert 3_000 <= int(first.counts["nodes"]) < int(whole.counts["nodes"])
    second = prove(start, CLASSIC, path, nodes=2_000)
    assert second.verdict == "unknown"
    assert int(second.counts["nodes"]) >= int(first.counts["nodes"]) + 2_000
    assert second.counts["run_nodes"] == int(second.counts["nodes"]) - int(first.counts["nodes"])
    final = prove(start, CLASSIC, path)
    assert final.verdict == "unsolvable"
    per_run = ("peak_mb", "run_nodes")
    assert {k: v for k, v in final.counts.items() if k not in per_run} == \
        {k: v for k, v in whole.counts.items() if k not in per_run}
    again = prove(start, CLASSIC, path, nodes=1)  # a decided proof answers from its file
    assert again.verdict == "unsolvable" and again.counts["nodes"] == whole.counts["nodes"]


def checkpointed(tmp_path: Path, nodes: int) -> tuple[Position, Proved, Path, bytes]:
    """Classic 105 (lost): its whole proof, and a proof file checkpointed after ``nodes`` nodes with its bytes."""
    start = deal("105", CLASSIC)
    whole = prove(start, CLASSIC, None)
    path = tmp_path / "105"
    prove(start, CLASSIC, path, nodes=nodes)
    return start, whole, path, path.read_bytes()


def test_a_run_stopped_by_its_memory_cap_resumes_from_the_last_checkpoint(tmp_path: Path) -> None:
    start, whole, path, saved = checkpointed(tmp_path, 4_000)
    capped = prove(start, CLASSIC, path, max_mb=1)  # passed at about 8,800 of the 12,278 nodes
    assert (capped.verdict, capped.reason) == ("unknown", "memory")
    assert path.read_bytes() == saved
    final = prove(start, CLASSIC, path)
    assert final.verdict == "unsolvable" and final.counts["nodes"] == whole.counts["nodes"]


@pytest.mark.parametrize("autoplay_on", [True, False])
def test_a_resumed_win_is_traced_back_through_the_links_and_replays(tmp_path: Path, autoplay_on: bool) -> None:
    start = base.position(base.LOOSENED)
    whole = prove(start, CLASSIC, None, autoplay_on=autoplay_on)
    path = tmp_path / "loosened"
    assert prove(start, CLASSIC, path, nodes=1, autoplay_on=autoplay_on).verdict == "unknown"
    resumed = prove(start, CLASSIC, path, autoplay_on=autoplay_on)
    assert resumed.verdict == "solved"
    assert resumed.moves == whole.moves
    assert base.replay_wins(start, CLASSIC, resumed.moves, autoplay_on)
    assert prove(start, CLASSIC, path, autoplay_on=autoplay_on).moves == whole.moves  # again, from the file


def test_a_proof_file_of_another_input_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "x"
    prove(deal("35", CLASSIC), CLASSIC, path, nodes=100)
    saved = path.read_bytes()
    with pytest.raises(ValueError, match="another input"):
        prove(deal("80", CLASSIC), CLASSIC, path)
    with pytest.raises(ValueError, match="another input"):
        prove(deal("35", CLASSIC), CLASSIC, path, autoplay_on=False)
    assert path.read_bytes() == saved


def test_inputs_outside_the_c_search_are_refused() -> None:
    variant = Variant("down", foundation_to_column=True)
    assert not fast_available(deal("1", variant), variant)
    with pytest.raises(ValueError, match="foundations"):
        prove(deal("1", variant), variant, None)


def test_relaxed_deals_with_redeals_get_the_pure_provers_answer() -> None:
    """Redeals: the layer restarts its draws (module docstring of prover.py); a small relaxed endgame."""
    for seed in ("3", "8"):
        start = deal(seed, RELAXED)
        fast = prove(start, RELAXED, None, nodes=5_000)
        reference = LayeredProof.start(start, RELAXED)
        run(reference, MemoryStore(), nodes=5_000)
        assert fast.counts["nodes"] == reference.counts.nodes
        assert fast.counts["layers"] == reference.counts.layers


def test_the_waiting_states_of_a_stopped_proof_are_the_pure_provers_seeds(tmp_path: Path) -> None:
    start = deal("105", CLASSIC)
    path = tmp_path / "105"
    fast = prove(start, CLASSIC, path, nodes=3_000)
    reference = LayeredProof.start(start, CLASSIC)
    run(reference, MemoryStore(), nodes=3_000)  # both stop at the first layer boundary past 3,000 nodes
    assert fast.counts["nodes"] == reference.counts.nodes
    seeds = {key for layer in reference.pending.values() for key, seed in layer.items() if seed is not None}
    mine = [canonical(state) for state in waiting(path, start, CLASSIC)]
    assert len(mine) == len(set(mine)) == len(seeds) > 0
    assert set(mine) == seeds
    with pytest.raises(ValueError, match="not of this deal"):
        list(waiting(path, deal("80", CLASSIC), CLASSIC))


@pytest.mark.parametrize("damage", ["fewer records", "huge length", "a flipped byte", "a byte more"])
def test_a_damaged_proof_file_is_refused_and_left_alone(tmp_path: Path, damage: str) -> None:
    """A checkpoint whose length field, records or size were damaged: refused before any search (a length of 9
    bytes used to read as an exhausted proof, 'unsolvable', written over the file; 2**63 used to hang)."""
    start = deal("105", CLASSIC)
    path = tmp_path / "105"
    prove(start, CLASSIC, path, nodes=3_000)
    data = bytearray(path.read_bytes())
    head = _csolver.PROOF_HEAD_SIZE
    used_at = head - 8  # the header's last field: the records' length
    if damage == "fewer records":
        struct.pack_into("<Q", data, used_at, 16)
        data = data[:head + 16]
    elif damage == "huge length":
        struct.pack_into("<Q", data, used_at, 2**63 + 8)
    elif damage == "a flipped byte":
        data[head + len(data) // 2 // 8 * 8 + 9] ^= 0x40
    else:
        data += b"\0"
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="damaged"):
        prove(start, CLASSIC, path)
    assert path.read_bytes() == bytes(data)


def test_a_links_file_shorter_than_its_proof_is_refused(tmp_path: Path) -> None:
    """The links a win is traced through were cut: refused (they used to be extended with zeros, and the solved
    proof then ended 'io' on every run)."""
    start = base.position(base.LOOSENED)
    path = tmp_path / "loosened"
    assert prove(start, CLASSIC, path).verdict == "solved"
    links = Path(f"{path}.links")
    with links.open("r+b") as f:
        f.truncate(16)
    with pytest.raises(ValueError, match="links file"):
        prove(start, CLASSIC, path)
    assert links.stat().st_size == 16
    links.unlink()
    with pytest.raises(FileNotFoundError):
        prove(start, CLASSIC, path)


def test_a_negative_budget_is_refused_not_taken_for_no_cap() -> None:
    """The extension reads -1 as 'no cap': a negative budget used to run the whole proof (105: all 12,278 nodes)."""
    start = deal("105", CLASSIC)
    with pytest.raises(ValueError, match="budgets"):
        prove(start, CLASSIC, None, nodes=-5)
    with pytest.raises(ValueError, match="budgets"):
        prove(start, CLASSIC, None, max_mb=-1)
    assert prove(start, CLASSIC, None, nodes=0).counts["nodes"] == 0  # stopped at the first layer boundary


def test_a_checkpoint_that_cannot_be_written_keeps_the_last_one_and_no_temporary_file(tmp_path: Path) -> None:
    start, whole, path, saved = checkpointed(tmp_path, 3_000)
    temporary = Path(f"{path}.tmp")
    temporary.symlink_to("/dev/full")  # every write through it fails with ENOSPC, as on a full disk
    failed = prove(start, CLASSIC, path, nodes=2_000)
    assert (failed.verdict, failed.reason) == ("unknown", "io")
    assert not temporary.is_symlink() and not temporary.exists()
    assert path.read_bytes() == saved
    final = prove(start, CLASSIC, path)
    assert final.verdict == "unsolvable" and final.counts["nodes"] == whole.counts["nodes"]


def test_a_proof_run_by_another_process_is_refused_and_left_alone(tmp_path: Path) -> None:
    import subprocess
    import sys

    start = deal("35", CLASSIC)
    path = tmp_path / "35"
    prove(start, CLASSIC, path, nodes=100)
    saved = path.read_bytes()
    holder = subprocess.Popen(  # another process holding the proof's lock, as a running prove would
        [sys.executable, "-c", ("import fcntl, sys; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); "
                                "print('held', flush=True); sys.stdin.read()"), f"{path}.lock"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(BlockingIOError, match="another process is running this proof"):
            prove(start, CLASSIC, path)
        assert path.read_bytes() == saved
    finally:
        holder.communicate("")
    assert prove(start, CLASSIC, path).verdict == prove(start, CLASSIC, None).verdict  # free again once it ends
