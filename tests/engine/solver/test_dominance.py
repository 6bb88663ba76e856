"""Dominance pruning (server/engine/solver/dominance.py): exact, and the same in both searches.

The two rules ("draw": a state whose next stock card is inert expands only
the draw; "waste": a new state is skipped when taking an inert card below
its waste top up gives a state already seen) may never turn a winnable
position into ``unsolvable``. Checked against the exhaustive brute force over
the engine's own moves (test_solver.py) on random small positions, on deals
with a replayed solution, and on deals the plain search proves unsolvable;
the C search must prune exactly the states the pure reference prunes.
"""

from __future__ import annotations

import random

import pytest

from server.engine import deal, find_variant
from server.engine.solver import Budget, solve
from server.engine.solver import search as search_module
from server.engine.solver.dominance import inert, teleports
from server.engine.solver.state import Rules

from .test_solver import SMALL, TINY, brute_force, crowded, position

CLASSIC = find_variant("classic")
RELAXED = find_variant("relaxed")
RULES = {"draw_inert": True, "dominance": True}

# Lost (the brute force over the engine's moves agrees, below): the two-column classic variant. The
# waste rule skips one state here that the plain search expands.
LOST_TWO_COLUMNS = """\
Foundations: JC TC JD JD JH JH TS KS
Stock: QD KS
Waste: QS QH
Redeals left: 0
1: KD KH QH JC JS KC
2: QC QD KC QC KD KH
"""


def run(start, variant, pure: bool, rules: bool, **kwargs):  # type: ignore[no-untyped-def]
    """The complete stage of solve (lock pruning on), with or without both dominance rules."""
    return search_module._search(start, variant, locks=True, pure=pure, **(RULES if rules else {}), **kwargs)


def test_inert_needs_every_card_that_could_lie_on_it_up() -> None:
    rules = Rules(CLASSIC)
    heights = bytes([4, 5, 0, 0, 0, 0, 0, 0])  # clubs: slots holding
    assert inert(rules, heights, 4)  # 5C: both 4C up, and a slot at 4 takes it
    assert not inert(rules, heights, 5)  # 6C: one 5C is still out, it could lie on this 6C
    assert inert(rules, heights, 13)  # AD: nothing builds on an ace, an empty diamond slot takes it
    assert not inert(rules, bytes([13, 13, 1, 1, 0, 0, 0, 0]), 13)  # AD with both diamond aces up: no slot


def test_teleports_take_one_inert_waste_card_up_and_auto_play() -> None:
    """A bare solver state (card code suit * 13 + rank index, suits C D H S): waste 5C 9H, 6C to draw."""
    rules = Rules(CLASSIC)
    state = ((bytes([51]),) + (b"",) * 9, (0,) * 10, bytes([4, 5, 0, 0, 0, 0, 0, 0]), bytes([5]), bytes([4, 34]), 0)
    (only,) = list(teleports(rules, state))  # 5C below the top is inert; the 9H on top is not buried
    assert only == (state[0], state[1], bytes([5, 5, 0, 0, 0, 0, 0, 0]), bytes([5]), bytes([34]), 0)
    # With a club slot at 3 a 4C is still out and could lie on the 5C: not inert, nothing is tried.
    assert list(teleports(rules, state[:2] + (bytes([3, 5, 0, 0, 0, 0, 0, 0]),) + state[3:])) == []


def test_a_lost_position_is_pruned_and_still_proven_lost() -> None:
    variant = TINY["classic"]
    start = position(LOST_TWO_COLUMNS, variant)
    assert brute_force(start, variant, autoplay_on=True) is False
    for pure in (True, False):
        # the lock after draws only: on every state it ends the dominated state first, and the rule never fires
        plain = run(start, variant, pure, rules=False, budget=Budget(10_000), lock_every_state=False)
        pruned = run(start, variant, pure, rules=True, budget=Budget(10_000), lock_every_state=False)
        assert (plain.result, pruned.result) == ("unsolvable", "unsolvable")
        assert (pruned.extra["dominated"], plain.extra["dominated"], plain.extra["draw_only"]) == (1, 0, 0)
        assert pruned.nodes < plain.nodes and pruned.states <= plain.states  # the lock check ends the rest


def test_random_small_positions_agree_with_the_brute_force_in_both_searches() -> None:
    """Complete searches with both rules on 2- and 3-column positions: the answer class is the brute force's,
    the C search prunes exactly what the pure one prunes (same nodes, states, count), and the rules fire."""
    names = sorted(SMALL)
    fired = checked = changed = proofs = 0
    for n in range(400):
        rng = random.Random(10_000 + n)
        variant = SMALL[names[n % len(names)]]
        start = crowded(rng, variant.columns)
        autoplay_on = n % 2 == 0
        try:
            expected = brute_force(start, variant, autoplay_on=autoplay_on, limit=100_000)
        except RuntimeError:
            continue  # too big to check here
        pure = run(start, variant, True, rules=True, budget=Budget(50_000), autoplay_on=autoplay_on)
        plain = run(start, variant, True, rules=False, budget=Budget(50_000), autoplay_on=autoplay_on)
        assert pure.result == plain.result == ("solved" if expected else "unsolvable")
        fast = run(start, variant, False, rules=True, budget=Budget(50_000), autoplay_on=autoplay_on)
        assert (fast.result, fast.nodes, fast.states, fast.moves, fast.extra) == (
            pure.result, pure.nodes, pure.states, pure.moves, pure.extra)
        fired += pure.extra.get("dominated", 0) > 0
        changed += pure.nodes != plain.nodes
        checked += 1
        proofs += not expected
    assert checked >= 300 and proofs >= 100 and fired >= 5 and changed >= 50, (checked, proofs, fired, changed)


@pytest.mark.parametrize(("name", "seed"), [("classic", "7"), ("classic", "8"), ("classic", "12"), ("classic", "18"),
                                            ("relaxed", "1"), ("relaxed", "2"), ("relaxed", "3")])
def test_deals_with_a_replayed_solution_are_never_called_unsolvable(name: str, seed: str) -> None:
    variant = find_variant(name)
    start = deal(seed, variant)
    assert solve(start, variant, Budget(nodes=30_000)).result == "solved"  # replayed through the engine
    assert run(start, variant, False, rules=True, budget=Budget(60_000)).result != "unsolvable"


@pytest.mark.parametrize("seed", ["124", "80", "35", "105", "40"])
def test_deals_the_plain_search_proves_lost_stay_lost_in_fewer_states(seed: str) -> None:
    start = deal(seed, CLASSIC)
    plain = run(start, CLASSIC, False, rules=False, budget=Budget(200_000))
    pruned = run(start, CLASSIC, False, rules=True, budget=Budget(200_000))
    assert (plain.result, pruned.result) == ("unsolvable", "unsolvable")
    assert pruned.states <= plain.states
    if seed in ("40", "105"):
        assert pruned.extra["draw_only"] > 0 and pruned.nodes < plain.nodes
    if seed == "40":  # the waste rule halves this proof (README.md)
        assert pruned.extra["dominated"] > 0 and pruned.nodes < 0.6 * plain.nodes


def test_the_pure_and_the_c_search_prune_the_same_states_on_deals() -> None:
    for name, seed, nodes in (("classic", "35", 5_000), ("classic", "3", 3_000), ("relaxed", "2", 3_000)):
        variant = find_variant(name)
        start = deal(seed, variant)
        pure = run(start, variant, True, rules=True, budget=Budget(nodes))
        fast = run(start, variant, False, rules=True, budget=Budget(nodes))
        assert (fast.result, fast.nodes, fast.states, fast.extra) == (pure.result, pure.nodes, pure.states, pure.extra)


def test_solve_names_its_rules_and_refuses_unknown_ones() -> None:
    start = deal("35", CLASSIC)
    assert solve(start, CLASSIC, Budget(nodes=50_000), dominance=()).result == "unsolvable"
    with pytest.raises(ValueError, match="unknown dominance rules"):
        solve(start, CLASSIC, Budget(nodes=50_000), dominance=("columns",))
