"""The relaxed model (server/engine/solver/relaxation.py) never calls a winnable position lost.

Soundness is checked three ways, none of which trusts the model's own answers:

- on real winning plays: the search's solutions (replayed through the engine first) are turned into the
  model's step numbers by an interpreter written here, which follows every card instance through the
  commands; the model with those numbers fixed must be satisfiable (each constraint holds on the play);
- on small positions against an exhaustive search over the engine's own moves (``brute_force``): ``unsat``
  only where no play wins;
- each constraint group alone on a lost position (confirmed lost by the brute force) that it must catch:
  ``unsat`` with it, ``sat`` without it.
"""

from __future__ import annotations

import random

import pytest

from server.engine import Position, Variant, deal, find_variant
from server.engine.solver import Budget, find_solution, relaxation, solve
from server.engine.solver.search import solve as search

from .test_solver import NEAR_WIN, SMALL, brute_force, crowded, position, replay_wins

pytest.importorskip("ortools.sat.python.cp_model",
                    reason="the optional constraint solver is not installed (pip install -e '.[solver]')")
from ortools.sat.python import cp_model

# CP-SAT keeps a core busy for seconds on end: beside it, the bots' pace test (tests/integration/test_bots.py)
# measures the machine, not the bots, so the two share one xdist worker and never run at once.
pytestmark = pytest.mark.xdist_group("cpu_bound")

CLASSIC = find_variant("classic")
RELAXED = find_variant("relaxed")


def steps_of_play(start: Position, variant: Variant, moves: tuple[str, ...]) -> dict[str, dict[int, int]]:
    """Follow every card instance through ``moves`` (a play with auto-play off: each command one step).

    Instances are numbered as the model numbers them: the columns' cards column by column from the bottom,
    then the waste from the bottom, then the stock from the next draw. Returns per instance ``F`` (step it
    went up), ``L`` (first step it moved: with a run, or alone, or off the waste), ``M`` (the first later
    step it moved as the lowest card of a move or went up: it stopped lying where its first move put it)
    and per pile index ``D`` (the step it was first drawn).
    """
    columns: list[list[int]] = []
    cards: list[int] = []
    for column in start.tableau:
        columns.append(list(range(len(cards), len(cards) + len(column))))
        cards.extend(column)
    waste = list(range(len(cards), len(cards) + len(start.waste)))
    cards.extend(start.waste)
    stock = list(range(len(cards), len(cards) + len(start.stock)))
    cards.extend(start.stock)
    pile_base = len(cards) - len(start.waste) - len(start.stock)
    up: dict[int, int] = {}
    first: dict[int, int] = {}
    second: dict[int, int] = {}
    drawn: dict[int, int] = {}

    def leaves(instance: int, step: int, lowest: bool) -> None:
        if instance not in first:
            first[instance] = step
        elif lowest and instance not in second:
            second[instance] = step

    for step, text in enumerate(moves, start=1):
        if text == "s":
            card = stock.pop(0)
            drawn.setdefault(card - pile_base, step)
            waste.append(card)
        elif text == "r":
            stock, waste = waste, []
        else:
            source, target = text.split("-")
            count = None
            if "x" in target:
                target, k = target.split("x")
                count = int(k)
            if source == "w":
                moving = [waste.pop()]
            else:
                column = columns[int(source) - 1]
                if target == "f":
                    count = 1
                elif count is None:
                    onto = columns[int(target) - 1]
                    if not onto:
                        count = 1
                    else:
                        count = next(k for k in range(1, len(column) + 1)
                                     if cards[column[-k]] in variant.builds_on[cards[onto[-1]]])
                moving = column[-count:]
                del column[-count:]
            for index, instance in enumerate(moving):
                leaves(instance, step, index == 0)
            if target == "f":
                assert len(moving) == 1
                up[moving[0]] = step
                second.setdefault(moving[0], step)
            else:
                columns[int(target) - 1].extend(moving)
    assert len(up) == len(cards), "the play does not win"
    for instance, step in up.items():
        second.setdefault(instance, step)
    return {"F": up, "L": first, "M": second, "D": drawn}


def renumbered(play: dict[str, dict[int, int]], gap: int) -> dict[str, dict[int, int]]:
    """The play's steps renumbered as the model's argument does: the m-th draw at m * gap, the other values
    in order within each stretch between draws (the order of all values kept)."""
    draws = sorted(play["D"].values())
    values = sorted({v for name in ("F", "L", "M") for v in play[name].values()})
    mapping: dict[int, int] = {}
    for m, draw in enumerate(draws, start=1):
        mapping[draw] = m * gap
    stretch, used = 0, 0
    for value in values:
        m = sum(1 for d in draws if d < value)
        if m != stretch:
            stretch, used = m, 0
        used += 1
        assert used < gap
        mapping[value] = stretch * gap + used
    return {name: {k: mapping[v] for k, v in table.items()} for name, table in play.items()}


def fixed_model_is_satisfiable(start: Position, variant: Variant, moves: tuple[str, ...],
                               parts: frozenset[str]) -> bool:
    model, ok = relaxation._build(cp_model, start, variant, parts)
    assert ok
    v = model.variables
    play = renumbered(steps_of_play(start, variant, moves), v["gap"])
    waste_len = len(start.waste)
    for name in ("F", "L", "M"):
        for instance, value in play[name].items():
            if v[name]:
                model.add(v[name][instance] == value)
    for pile_index, value in play["D"].items():
        draw = v["D"][pile_index] if v["D"] else None
        if draw is not None and not isinstance(draw, int):
            model.add(draw == value)
        elif isinstance(draw, int):
            assert draw == value and pile_index >= waste_len
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = 20
    solver.parameters.num_workers = 1
    return solver.solve(model) in (cp_model.OPTIMAL, cp_model.FEASIBLE)


def solved_deals(variant: Variant, count: int) -> list[tuple[Position, tuple[str, ...]]]:
    """``count`` deals the search solved (seeds tried in turn), with the winning play (auto-play off)."""
    found = []
    seed = 0
    while len(found) < count:
        seed += 1
        start = deal(str(seed), variant)
        result = find_solution(start, variant, nodes=3_000, autoplay_on=False)
        if result.result == "solved":
            assert replay_wins(start, variant, result.moves, autoplay_on=False)
            found.append((start, result.moves))
    return found


@pytest.mark.parametrize("variant", [CLASSIC, RELAXED], ids=["classic", "relaxed"])
def test_every_deal_the_search_solved_satisfies_the_model_on_its_own_winning_play(variant: Variant) -> None:
    """20 solved deals per variant: the model, with its step variables set from the real winning play, has a
    solution (so it could never be unsat there); with and without the ``cover`` group, and with ``bottoms``."""
    for start, moves in solved_deals(variant, 20):
        for extra in ((), ("cover",), ("bottoms",)):
            parts = relaxation.DEFAULT_PARTS | set(extra)
            assert fixed_model_is_satisfiable(start, variant, moves, parts), (start, parts)


def test_the_fixed_model_refuses_numbers_that_break_a_column() -> None:
    """The check above can fail: a real play's numbers with a column's bottom card and the card on it swapped
    in time (the bottom card leaving first) have no solution."""
    start, moves = solved_deals(CLASSIC, 1)[0]
    model, _ = relaxation._build(cp_model, start, CLASSIC, relaxation.DEFAULT_PARTS)
    v = model.variables
    play = renumbered(steps_of_play(start, CLASSIC, moves), v["gap"])
    bottom, above = 0, 1  # column 1, bottom up
    assert play["L"][above] < play["L"][bottom]
    play["L"][bottom], play["L"][above] = play["L"][above], play["L"][bottom]
    for name in ("F", "L"):
        for k, value in play[name].items():
            model.add(v[name][k] == value)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = 20
    assert solver.solve(model) == cp_model.INFEASIBLE


def test_the_relaxation_finds_a_solution_of_a_near_win_by_itself() -> None:
    """End to end, nothing fixed: a position two cards from a win (test_solver.NEAR_WIN) answers sat."""
    assert relaxation.relax(position(NEAR_WIN), CLASSIC, seconds=20).verdict == "sat"


def test_the_relaxation_is_never_unsat_where_the_brute_force_wins() -> None:
    """300 random small positions (2 or 3 columns, 10-18 cards, stock and waste): every ``unsat`` is checked
    lost by the exhaustive search over the engine's moves; enough of them are judged for the check to bite."""
    rng = random.Random(17)
    claims = wins = 0
    for _ in range(300):
        name = rng.choice(sorted(SMALL))
        variant = SMALL[name]
        start = crowded(rng, variant.columns)
        won = brute_force(start, variant, autoplay_on=False)
        verdict = relaxation.relax(start, variant, seconds=10).verdict
        assert verdict != "unknown", start
        if verdict == "unsat":
            claims += 1
            assert not won, start
        wins += won
    assert claims >= 30 and wins >= 30, (claims, wins)


# Lost, because two columns block each other: QH needs JH (under QS) or KH on a column, QS needs JS (under QH)
# or KS on a column; both kings are in the stock and can only go to an empty column, and neither column can be
# emptied. Caught by "column" (else JH could leave from under QS), by "target" (else QH could leave to nowhere)
# and by "foundation" (else QH could go up before JH).
CROSSED = """\
Foundations: KC KC KD KD KH TH KS TS
Stock: KS KH
Waste:
Redeals left: 0
1: JS QH
2: JH QS
"""

# Lost by the waste's order: QS lies on JS in the waste and can go nowhere but up (after JS), onto the KS (the
# bottom of column 1, under the KH that needs the QH low in the waste) or into an empty column (column 2's KD
# needs the QD at the waste's bottom). Without "waste" the JS could leave from under the QS.
WASTE_ORDER = """\
Foundations: KC KC KD JD JH KH KS TS
Stock:
Waste: QD QH JS QS
Redeals left: 0
1: KS KH
2: KD
"""

# Lost (found among random small positions; the test checks it lost with the brute force): the relaxation
# without "stock", whose draws may come in any order, has a solution; with the stock's order it has none.
STOCK_ORDER = """\
Foundations: KC TC JD 7D KH QH KS JS
Stock: KC KD QS
Waste: 8D QD KS
Redeals left: 0
1: QC QD
2: JC KD TD KH 9D JD
"""


# Lost (found like STOCK_ORDER): the optional "cover" group (a card lying on another keeps it down until it
# leaves again; columns are a resource of two here) has no solution; without it the model has one.
COVERED = """\
Foundations: KC QC TD JD QH JH 9S KS
Stock: QD
Waste: JS
Redeals left: 0
1: KD KH JD KC QH
2: KH KS QD TS KD QS
"""


@pytest.mark.parametrize(("text", "part"), [(CROSSED, "column"), (CROSSED, "target"), (CROSSED, "foundation"),
                                            (WASTE_ORDER, "waste"), (STOCK_ORDER, "stock"), (COVERED, "cover")],
                         ids=["column", "target", "foundation", "waste", "stock", "cover"])
def test_each_constraint_alone_catches_a_lost_position(text: str, part: str) -> None:
    variant = SMALL["classic2"]
    start = position(text, variant)
    full = relaxation.DEFAULT_PARTS | {"cover"} if part == "cover" else relaxation.DEFAULT_PARTS
    assert not brute_force(start, variant, autoplay_on=False)
    assert relaxation.relax(start, variant, seconds=10, parts=full).verdict == "unsat"
    assert relaxation.relax(start, variant, seconds=10, parts=full - {part}).verdict == "sat"


# Lost (found among random small positions, checked lost by the brute force): three columns, none empty, and
# more kings and stranded diamonds than bottoms to hold them at once. Without "bottoms" the model's empty column,
# once there, takes every card that has nowhere else to go, for ever, and the model has a solution.
BOTTOMED = """\
Foundations: JC QC 6D JD QH JH JS QS
Stock:
Waste:
Redeals left: 0
1: QH QS TD 9D KD KH QC
2: KC QD JD KC KS 8D KD
3: KH 7D QD KS
"""


def test_the_bottoms_group_catches_a_lost_position_the_default_model_admits() -> None:
    variant = SMALL["classic3"]
    start = position(BOTTOMED, variant)
    assert not brute_force(start, variant, autoplay_on=False)
    assert relaxation.relax(start, variant, seconds=10).verdict == "sat"
    assert relaxation.relax(start, variant, seconds=10, parts=relaxation.DEFAULT_PARTS | {"bottoms"}).verdict == "unsat"


def test_the_bottoms_group_is_never_unsat_where_the_brute_force_wins() -> None:
    """150 random small positions (another sample than the test above): every ``unsat`` of the model with
    ``bottoms`` is checked lost by the exhaustive search; enough claims and wins for the check to bite."""
    rng = random.Random(29)
    claims = wins = 0
    parts = relaxation.DEFAULT_PARTS | {"bottoms"}
    for _ in range(150):
        variant = SMALL[rng.choice(sorted(SMALL))]
        start = crowded(rng, variant.columns)
        won = brute_force(start, variant, autoplay_on=False)
        verdict = relaxation.relax(start, variant, seconds=10, parts=parts).verdict
        assert verdict != "unknown", start
        if verdict == "unsat":
            claims += 1
            assert not won, start
        wins += won
    assert claims >= 20 and wins >= 20, (claims, wins)


def test_solve_reports_the_relaxation_as_what_decided() -> None:
    """With a time cap the schedule asks the relaxation after the short search. Classic deal 35 (proven
    unsolvable by the search after its portfolio and about 1 600 nodes of the complete search) with 1 200 nodes:
    the search alone answers unknown, the schedule proves it by the relaxation and says so."""
    import time

    start = deal("35", CLASSIC)
    alone = search(start, CLASSIC, Budget(nodes=1_200))
    assert alone.result == "unknown"
    result = solve(start, CLASSIC, Budget(nodes=1_200, seconds=100), clock=time.monotonic)
    assert (result.result, result.extra["decided_by"], result.extra["relaxation"]) == (
        "unsolvable", "relaxation", "unsat")
    assert result.reason.startswith("relaxation:") and result.moves == ()


def test_without_a_time_cap_solve_is_the_search_node_for_node() -> None:
    start = deal("7", CLASSIC)
    ours = solve(start, CLASSIC, Budget(nodes=20_000))
    theirs = search(start, CLASSIC, Budget(nodes=20_000))
    assert (ours.result, ours.moves, ours.nodes, ours.states) == (theirs.result, theirs.moves, theirs.nodes,
                                                                 theirs.states)
    assert ours.extra["decided_by"] == ("search" if ours.result != "unknown" else "")


def test_variants_the_model_does_not_hold_for_are_not_judged() -> None:
    sixty = find_variant("sixty_thieves")
    assert not relaxation.judges(sixty)
    assert relaxation.relax(deal("1", sixty), sixty).verdict == "unknown"
    assert all(relaxation.judges(find_variant(name)) for name in ("classic", "relaxed", "josephine", "maria"))
