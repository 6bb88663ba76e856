"""The layered prover (server/engine/solver/prover.py) against the complete search, and its stop and resume.

The complete search of ``solve`` (``portfolio=False``, the pure reference) is the independent answer: both use the
same exact reductions, so on every input both exhaust they must agree on the verdict and, for a loss, on the
node count (an exhausted search expands the same states whatever its order). Wins are replayed through the
engine here. The monotone layer key is checked on random plays through the engine's own moves.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tests.engine.solver.test_solver as base
from server.engine import Position, Variant, apply, autoplay, deal, find_variant, legal_moves
from server.engine.solver import Budget, solve
from server.engine.solver.proof_file import ProofFile
from server.engine.solver.prover import LayeredProof, MemoryStore, run
from server.engine.solver.state import from_position

CLASSIC = find_variant("classic")
RELAXED = find_variant("relaxed")


def proved(start: Position, variant: Variant, autoplay_on: bool = True) -> LayeredProof:
    proof = LayeredProof.start(start, variant, autoplay_on=autoplay_on)
    run(proof, MemoryStore())
    return proof


@pytest.mark.parametrize("seed", ["124", "80", "35", "105"])
def test_lost_deals_are_proven_in_exactly_the_complete_searchs_nodes(seed: str) -> None:
    start = deal(seed, CLASSIC)
    complete = solve(start, CLASSIC, Budget(nodes=1_000_000), portfolio=False, pure=True,
                     lock_every_state=False)  # the lock after draws: the layered provers' rule
    assert complete.result == "unsolvable"
    proof = proved(start, CLASSIC)
    assert proof.verdict == "unsolvable"
    assert proof.counts.nodes == complete.nodes
    assert 0 < proof.counts.largest_layer <= proof.counts.nodes


@settings(max_examples=150, deadline=None, derandomize=True)
@given(base.endgames(), st.booleans())
def test_small_endgames_get_the_complete_searchs_verdict(case: tuple[Position, Variant], autoplay_on: bool) -> None:
    start, variant = case
    complete = solve(start, variant, Budget(nodes=200_000), autoplay_on=autoplay_on, portfolio=False, pure=True,
                     lock_every_state=False)  # the lock after draws: the layered provers' rule
    proof = proved(start, variant, autoplay_on)
    assert proof.verdict == complete.result
    if proof.verdict == "solved":
        assert base.replay_wins(start, variant, proof.moves, autoplay_on)
    else:
        assert proof.counts.nodes == complete.nodes


def test_the_hand_built_positions_get_their_hand_worked_verdicts() -> None:
    assert proved(base.position(base.LOCKED), CLASSIC).verdict == "unsolvable"
    for text in (base.LOOSENED, base.NEAR_WIN):
        for autoplay_on in (True, False):
            proof = proved(base.position(text), CLASSIC, autoplay_on)
            assert proof.verdict == "solved"
            assert base.replay_wins(base.position(text), CLASSIC, proof.moves, autoplay_on)


def test_a_stopped_and_resumed_loss_reaches_the_same_verdict_and_counts(tmp_path: Path) -> None:
    start = deal("105", CLASSIC)
    whole = proved(start, CLASSIC)
    store = ProofFile(tmp_path, "105")
    first = store.open(start, CLASSIC)
    assert run(first, store, nodes=3_000) == "unknown"
    stopped_at = first.counts.nodes
    assert 3_000 <= stopped_at < whole.counts.nodes
    again = ProofFile(tmp_path, "105")  # a new process would start here
    resumed = again.open(start, CLASSIC)
    assert resumed.counts.nodes == stopped_at
    assert run(resumed, again, nodes=2_000) == "unknown"
    last = ProofFile(tmp_path, "105")
    final = last.open(start, CLASSIC)
    assert run(final, last) == "unsolvable"
    assert final.counts == whole.counts


def test_work_after_the_last_checkpoint_is_done_again_not_counted_twice(tmp_path: Path) -> None:
    start = deal("35", CLASSIC)
    whole = proved(start, CLASSIC)
    store = ProofFile(tmp_path, "35")
    proof = store.open(start, CLASSIC)
    run(proof, store, nodes=300)
    for _ in range(5):  # layers searched but never checkpointed: a stop before the next checkpoint
        proof.step(store)
    again = ProofFile(tmp_path, "35")
    resumed = again.open(start, CLASSIC)
    assert run(resumed, again) == "unsolvable"
    assert resumed.counts == whole.counts


@pytest.mark.parametrize("autoplay_on", [True, False])
def test_a_resumed_win_is_traced_back_through_the_file_and_replays(tmp_path: Path, autoplay_on: bool) -> None:
    start = base.position(base.LOOSENED)
    whole = proved(start, CLASSIC, autoplay_on)
    store = ProofFile(tmp_path, "loosened")
    proof = store.open(start, CLASSIC, autoplay_on=autoplay_on)
    assert run(proof, store, nodes=1) == "unknown"
    again = ProofFile(tmp_path, "loosened")
    resumed = again.open(start, CLASSIC, autoplay_on=autoplay_on)
    assert run(resumed, again) == "solved"
    assert resumed.moves == whole.moves
    assert base.replay_wins(start, CLASSIC, resumed.moves, autoplay_on)


def test_a_saved_proof_of_another_deal_is_refused_and_left_alone(tmp_path: Path) -> None:
    store = ProofFile(tmp_path, "x")
    proof = store.open(deal("35", CLASSIC), CLASSIC)
    run(proof, store, nodes=100)
    saved = store.path.read_bytes()
    with pytest.raises(ValueError, match="deal"):
        ProofFile(tmp_path, "x").open(deal("80", CLASSIC), CLASSIC)
    with pytest.raises(ValueError, match="autoplay"):
        ProofFile(tmp_path, "x").open(deal("35", CLASSIC), CLASSIC, autoplay_on=False)
    assert store.path.read_bytes() == saved


def test_a_variant_whose_cards_come_down_has_no_layers() -> None:
    variant = Variant("down", foundation_to_column=True)
    with pytest.raises(ValueError, match="foundation"):
        LayeredProof.start(deal("1", variant), variant)


@pytest.mark.parametrize("variant", [CLASSIC, RELAXED], ids=lambda v: v.name)
def test_no_command_of_the_engine_lowers_the_layer(variant: Variant) -> None:
    """The docstring's monotonicity, on random plays through the engine's own legal moves and auto-play."""
    rng = random.Random(7)
    checked = 0
    for game in range(12):
        start = deal(str(game + 1), variant)
        reference = LayeredProof.start(start, variant)  # the layers are counted from the deal's stock and redeals
        current = autoplay(start, variant).position
        for _ in range(250):
            options = legal_moves(current, variant)
            if not options:
                break
            nxt = autoplay(apply(current, variant, rng.choice(options).command).position, variant).position
            before = reference.layer(from_position(current, variant))
            after = reference.layer(from_position(nxt, variant))
            assert after >= before, (current, nxt)
            checked += 1
            current = nxt
    assert checked > 1_000
