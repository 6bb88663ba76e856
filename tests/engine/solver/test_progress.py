"""The dead-game check on the solver's fast path (RULES.md section 5).

:func:`can_progress` (which :func:`server.engine.is_dead` delegates to)
must agree with the independent implementation's dead-game search
(tests/reference/ref_rules.py) wherever both decide; the positions are
random, with an exhausted stock.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from server.engine import Position, find_variant, format_position, is_dead, parse_position
from server.engine.position import EMPTY_SLOT
from server.engine.solver import can_progress
from tests.reference import ref_rules

VARIANTS = [find_variant(name) for name in ("classic", "relaxed", "josephine", "maria", "indian", "emperor", "lucas")]


@st.composite
def exhausted(draw: st.DrawFn) -> tuple[Position, object]:
    """A random valid position with an empty stock and no redeal left."""
    variant = draw(st.sampled_from(VARIANTS))
    rng = random.Random(draw(st.integers(0, 10**9)))
    d = variant.decks
    slots = 4 * d
    # Low foundations and no empty column make dead games common; high ones give short searches.
    low = draw(st.integers(0, 9))
    heights = [rng.randint(low, low + 2) for _ in range(slots)]
    cards: list[int] = []
    for slot, h in enumerate(heights):
        suit = slot % 4
        cards += [suit * 13 + r for r in range(h, 13)]
    rng.shuffle(cards)
    columns: list[list[int]] = [[] for _ in range(variant.columns)]
    waste: list[int] = []
    spread = variant.columns - draw(st.integers(0, 2))
    for card in cards:
        if rng.random() < 0.3:
            waste.append(card)
        else:
            columns[rng.randrange(spread)].append(card)
    hidden = tuple(min(rng.randint(0, variant.face_down), max(len(c) - 1, 0)) for c in columns)
    foundations = tuple((slot % 4) * 13 + h - 1 if h else EMPTY_SLOT for slot, h in enumerate(heights))
    return Position(tuple(map(tuple, columns)), hidden, foundations, (), tuple(waste), 0), variant


@settings(max_examples=500, deadline=None, derandomize=True)
@given(exhausted())
def test_can_progress_agrees_with_the_independent_dead_game_search(case: tuple[Position, object]) -> None:
    position, variant = case
    ref_variant = ref_rules.get_variant(variant.name)  # type: ignore[attr-defined]
    theirs = ref_rules.is_dead(ref_rules.parse_position(format_position(position), ref_variant), ref_variant, 3_000)
    ours = can_progress(position, variant, budget=3_000)  # type: ignore[arg-type]
    assert is_dead(position, variant, budget=3_000).value == ours  # type: ignore[arg-type]
    if theirs != "unknown" and ours != "unknown":
        assert ours == theirs


def test_a_hand_built_dead_position() -> None:
    """Every top is a J or K whose predecessor lies under a J or K; nothing fits anywhere."""
    text = """\
Foundations: KC KC JD JD 9H 9H 9S 9S
Stock:
Waste:
Redeals left: 0
1: TS JS
2: TS JS
3: TH JH
4: TH JH
5: QS KH
6: QS KH
7: QH KS
8: QH KS
9: QD KD
10: QD KD
"""
    variant = find_variant("classic")
    position = parse_position(text, variant)
    assert can_progress(position, variant) == "dead"
    assert can_progress(parse_position(text.replace("2: TS JS", "2: JS TS"), variant), variant) == "alive"
    # A QS on top of column 5 takes the JS of column 1, which frees a TS: alive, two moves deep.
    opened = text.replace("5: QS KH", "5: KH QS")
    assert can_progress(parse_position(opened, variant), variant) == "alive"
    # The stock still holds cards: alive whatever the tableau.
    assert can_progress(parse_position(text.replace("Foundations: KC KC", "Foundations: QC KC").replace(
        "Stock:", "Stock: KC"), variant), variant) == "alive"
