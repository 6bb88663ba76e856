"""The wire forms of legal lists and views (server/views.py), checked against values built here directly."""

from __future__ import annotations

import random

from protocol.cards import format_card
from protocol.commands import Command, Pile
from protocol.messages import WireLegalMove
from server import views
from server.engine import legal_moves, redact
from server.engine.rules import LegalMove
from server.engine.text import format_foundation
from tests.engine.test_fast_path import VARIANTS, random_position


def test_legal_pairs_and_views_match_their_definition_on_random_positions() -> None:
    rng = random.Random(15)
    for variant in VARIANTS:
        for _ in range(150):
            position = random_position(variant, rng)
            legal = legal_moves(position, variant)
            assert views.legal_message(legal) == [WireLegalMove(str(move.command), move.cards) for move in legal]
            view, seen = views.view_message(position), redact(position)
            assert view.tableau == [[format_card(c) for c in column] for column in seen.tableau]
            assert view.foundations == [format_foundation(top) for top in seen.foundations]
            assert view.waste == [format_card(c) for c in seen.waste]
            assert (view.hidden, view.stock, view.redeals_left) == (list(seen.hidden), seen.stock_count,
                                                                    seen.redeals_left)


def test_a_command_object_freed_after_its_pair_was_built_never_lends_its_text_to_another() -> None:
    # The pairs are cached by the command object's id: each new command here is made and dropped at once, so
    # CPython would hand the next one the same address if the cache did not keep the old one alive.
    columns = 10
    for i in range(3 * views._PAIRS_MAX // 2):  # past the table's bound too: it is emptied, then refilled
        source, target = i % columns + 1, (i + 1) % columns + 1
        count = i // columns % 5 + 1
        command = Command("move", Pile("column", source), Pile("column", target), count)
        assert views.legal_message([LegalMove(command, count)]) == [
            WireLegalMove(f"{source}-{target}x{count}", count)]
        del command
