"""One move rule everywhere: the move limit and the run length (RULES.md section 3).

:func:`server.engine.rules.move_limit` and :func:`server.engine.rules.run_length`
are the only Python definitions; the checked path, the legal-move list and the
solver's move generator call them, and the C search keeps its own copy. These
tests check the definitions against the rules text, and that all paths allow
exactly the same moves on positions built to stress the rule: long runs, up to
four empty columns, every move rule and build rule.
"""

from __future__ import annotations

import random

import pytest

from protocol.commands import FINISH
from server.engine import Position, apply, find_variant, legal_moves
from server.engine.errors import IllegalCommandError
from server.engine.position import EMPTY_SLOT
from server.engine.rules import UNLIMITED, move_limit, run_length
from server.engine.solver import Budget
from server.engine.solver.search import _Expander
from server.engine.solver.state import Rules, from_position, key
from server.engine.variants import PRESETS, BuildRule, MoveRule, Variant

CLASSIC = find_variant("classic")
RELAXED = find_variant("relaxed")
SINGLE = Variant("single_in_suit", move_rule=MoveRule.SINGLE)
"""Build in suit, one card at a time: the single rule on input the C search supports."""


@pytest.mark.parametrize(("empty", "onto", "into"), [(0, 1, None), (1, 2, 1), (2, 4, 2), (3, 8, 4), (4, 16, 8)])
def test_the_supermove_limit_is_two_to_the_empty_columns_not_counting_the_target(empty: int, onto: int,
                                                                                  into: int | None) -> None:
    """RULES.md section 3: onto a card 2^(empty columns), into an empty column 2^(empty columns - 1)."""
    assert move_limit(CLASSIC, empty, into_empty=False) == onto
    if into is None:
        with pytest.raises(ValueError):
            move_limit(CLASSIC, empty, into_empty=True)
    else:
        assert move_limit(CLASSIC, empty, into_empty=True) == into


@pytest.mark.parametrize("empty", range(4))
def test_single_moves_one_card_and_sequence_any_run(empty: int) -> None:
    assert move_limit(SINGLE, empty, into_empty=False) == 1
    assert move_limit(RELAXED, empty, into_empty=False) == UNLIMITED
    if empty:
        assert move_limit(SINGLE, empty, into_empty=True) == 1
        assert move_limit(RELAXED, empty, into_empty=True) == UNLIMITED
    assert UNLIMITED > CLASSIC.card_total


def test_a_run_stops_at_a_face_down_card_and_at_a_card_that_does_not_build() -> None:
    """9S 8S 7S on KD is a run of 3 (the worked example of section 3); face-down cards never belong to one."""
    kd, s9, s8, s7 = 12 + 13, 8 + 39, 7 + 39, 6 + 39
    assert run_length((kd, s9, s8, s7), 0, CLASSIC) == 3
    assert run_length(bytes((kd, s9, s8, s7)), 0, CLASSIC) == 3  # the solver's encoding
    assert run_length((s9, s8, s7), 1, CLASSIC) == 2
    assert run_length((s9, s8, s7), 2, CLASSIC) == 1
    assert run_length((), 0, CLASSIC) == 0
    h8 = 7 + 26
    assert run_length((s9, h8, s7), 0, CLASSIC) == 1  # 8H does not build on 9S in suit
    maria = find_variant("maria")  # alternate colour: 8H on 9S and 7S on 8H build, 7S on 8S does not
    assert run_length((s9, h8, s7), 0, maria) == 3
    assert run_length((s9, s8, s7), 0, maria) == 1


def _runs_down(rng: random.Random, variant: Variant, length: int) -> list[int]:
    """``length`` cards, each buildable on the one before it (a run, bottom to top), from a random top card."""
    card = rng.randrange(52)
    cards = [card]
    while len(cards) < length:
        options = sorted(variant.builds_on[cards[-1]])
        if not options:
            break
        cards.append(rng.choice(options))
    return cards


def stressed(rng: random.Random, variant: Variant) -> Position:
    """A position with up to four empty columns and long runs (often split by a break or a face-down card).

    The move generators do not look at card counts, so the cards need not form whole decks.
    """
    empty = set(rng.sample(range(variant.columns), rng.randrange(0, min(5, variant.columns))))
    tableau: list[tuple[int, ...]] = []
    hidden: list[int] = []
    for index in range(variant.columns):
        if index in empty:
            tableau.append(())
            hidden.append(0)
            continue
        down = rng.randrange(0, 3) if variant.face_down else 0
        column = [rng.randrange(52) for _ in range(down)]
        for _ in range(rng.randrange(1, 3)):
            column += _runs_down(rng, variant, rng.randrange(1, 9))
        tableau.append(tuple(column))
        hidden.append(down)
    slots = [EMPTY_SLOT] * variant.slots
    for slot in range(variant.slots // 2):
        if rng.random() < 0.5:
            slots[slot] = (slot % 4) * 13 + rng.randrange(0, 4)
    stock = tuple(rng.randrange(52) for _ in range(rng.randrange(0, 4)))
    waste = tuple(rng.randrange(52) for _ in range(rng.randrange(0, 4)))
    return Position(tuple(tableau), tuple(hidden), tuple(slots), stock, waste, rng.randrange(0, variant.redeals + 1))


VARIANTS = [v for v in PRESETS.values() if not v.foundation_to_column] + [SINGLE]


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_legal_moves_the_checked_path_and_the_solver_allow_the_same_moves(variant: Variant) -> None:
    """From each stressed position, the positions the legal-move list reaches through the checked path
    equal (up to the order of columns) those the solver's move generator reaches, and a column move of one
    more card than the limit, or of more than the run, is refused by the checked path."""
    rng = random.Random(variant.name)
    expander = _Expander(Rules(variant))
    face_down = variant.face_down > 0
    refused = 0
    for _ in range(150):
        position = stressed(rng, variant)
        start = key(from_position(position, variant), face_down)
        engine = set()
        for legal in legal_moves(position, variant):
            if legal.command is FINISH:
                continue  # the solver reaches the won state through the foundation moves instead
            engine.add(key(from_position(apply(position, variant, legal.command).position, variant), face_down))
        solver = {key(state, face_down) for _, state, _ in expander.moves(from_position(position, variant))}
        # The solver leaves out a whole column moved into an empty one: the same position up to column order.
        assert engine - {start} == solver - {start}
        empty = sum(1 for column in position.tableau if not column)
        for i, column in enumerate(position.tableau):
            run = run_length(column, position.hidden[i], variant)
            for j, onto in enumerate(position.tableau):
                if i == j or not column or onto:
                    continue
                limit = move_limit(variant, empty, into_empty=True)
                too_many = min(run, limit) + 1
                if too_many <= len(column):
                    with pytest.raises(IllegalCommandError):
                        apply(position, variant, _move(i, j, too_many))
                    refused += 1
    assert refused > 20


def _move(source: int, target: int, count: int):  # type: ignore[no-untyped-def]
    from protocol.commands import parse_command

    return parse_command(f"{source + 1}-{target + 1}x{count}")


@pytest.mark.parametrize("variant", [CLASSIC, RELAXED, SINGLE], ids=lambda v: v.name)
def test_the_c_search_allows_the_same_moves(variant: Variant) -> None:
    """The C search's copy of the rule (``run_length`` and the limits in ``gen_moves``, _csolver.c): on
    stressed positions it expands the same nodes as the pure search, which uses the engine's functions, so
    it generates the same moves (a move more or less changes the states seen)."""
    pytest.importorskip("server.engine.solver._csolver", reason="the C extension is not built")
    from .solver.test_csolver import both

    assert variant.build_rule is BuildRule.SAME_SUIT and not variant.face_down
    rng = random.Random(f"c {variant.name}")
    for _ in range(40):
        position = stressed(rng, variant)
        pure, fast = both(position, variant, budget=Budget(200))
        assert (fast.result, fast.nodes, fast.states, fast.moves) == (pure.result, pure.nodes, pure.states,
                                                                      pure.moves)
