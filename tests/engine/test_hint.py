"""Hints (RULES.md section 8): legal, and computed from the view only."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from server.engine import Game, redact
from server.engine.hint import hint

from .strategies import played_games
from .test_properties import _hide_differently


@settings(max_examples=60, deadline=None)
@given(played_games(), st.randoms(use_true_random=False))
def test_a_hint_is_legal_and_blind_to_hidden_cards(case: tuple[Game, list[str]], rng: random.Random) -> None:
    game, _ = case
    suggestion = hint(redact(game.position), game.variant)
    legal = [str(m.command) for m in game.legal_moves()]
    if suggestion is None:  # nothing useful: no draw, no redeal, nothing to the foundations
        assert not [c for c in legal if c in ("s", "r", "finish") or "-f" in c]
    else:
        assert suggestion in legal
    other = _hide_differently(game.position, rng)
    assert hint(redact(other), game.variant) == suggestion


def test_a_hint_moves_a_run_into_an_empty_column_to_free_a_card_for_the_foundations() -> None:
    """Seen in a relaxed race: stock and waste gone, 9H under the run KH..TH, eight empty columns. The only
    way on is to move the run aside; the hint said there was nothing useful to suggest."""
    from server.engine import find_variant, parse_view

    variant = find_variant("relaxed")
    view = parse_view("Foundations: KC KD KS KH KD 4C KS 8H\nStock: 0\nWaste:\nRedeals left: 0\n1:\n"
                      "2: KC QC JC TC 9C 8C 7C 6C\n3:\n4:\n5: 5C 9H KH QH JH TH\n6:\n7:\n8:\n9:\n10:\n", variant)
    suggestion = hint(view, variant)
    assert suggestion is not None and suggestion.startswith("5-") and suggestion.endswith("x4"), suggestion
