"""A ghost's timeline (server/core/ghosts.py): one entry per command of the move log, and a long game thinned
to what a frame and a kept deal may hold, every change of its cards up kept while they fit."""

from __future__ import annotations

from itertools import pairwise

from protocol import messages as m
from server.core.ghosts import MAX_TIMELINE, thinned, timeline
from server.engine import Game, deal, find_variant, format_position

SETTINGS = m.Settings("classic", False, 1, 0, True, "full", False)


def test_a_long_game_is_thinned_to_its_changes_of_cards_and_spaced_moves() -> None:
    variant = find_variant("classic")
    game = Game(deal("7", variant), variant, autoplay=True, undo="full")
    log = [(command, 10 * i) for i, command in enumerate(["s", "u"] * 700, 1)]  # 1400 commands: draw, undo
    points = timeline(format_position(game.position), SETTINGS, log)
    assert len(points) == MAX_TIMELINE and points[0] == (0, 0, game.position.foundation_cards)
    assert points[-1] == (14_000, 1_400, game.position.foundation_cards)  # an undo counts as a move
    assert [p[0] for p in points] == sorted({p[0] for p in points})  # in order, none twice

    cards = [(i, i, i // 10) for i in range(5_000)]  # a card up every 10th entry: 500 changes
    kept = thinned(cards, 800)
    assert len(kept) == 800 and kept[0] == cards[0] and kept[-1] == cards[-1]
    assert {p for p in cards if p[0] % 10 == 0} <= set(kept)  # every change kept
    flips = [(i, i, i % 2) for i in range(3_000)]  # more changes than room: spread evenly, the ends kept
    spread = thinned(flips, 100)
    assert len(spread) == 100 and spread[0] == flips[0] and spread[-1] == flips[-1]
    assert max(b[0] - a[0] for a, b in pairwise(spread)) <= 31
    assert thinned(cards[:10], 800) == cards[:10]
