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
