"""The CLI's race panel with a ghost: its row follows the recorded timeline against the match clock, and the
gap at my cards up is on the screen, in the plain layout and in the results."""

from __future__ import annotations

import re

from client_cli.ghost import Gap, at, gap, gap_words
from client_cli.render import plain, screen, to_ansi
from client_cli.state import RaceState
from protocol import messages as m
from server.engine import Game, deal, find_variant
from server.views import legal_message, view_message

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
START = 1_000_000
GHOST = m.Ghost("ann", "ann's best", 6_000, 3, 4, "resigned", [(0, 0, 1), (500, 1, 1), (2_000, 2, 2), (5_000, 3, 4)])


def ghost_race() -> tuple[RaceState, Game]:
    variant = find_variant("relaxed")
    game = Game(deal("4", variant), variant)
    state = RaceState(server="http://localhost:8000", code="abcDEF1234", name="rider", connected=True)
    state.apply(m.Joined("abcDEF1234", "rider", "secret"))
    state.apply(m.Lobby("abcDEF1234", "lobby", [m.PlayerInfo("rider", True, True)],
                        m.Settings("relaxed", False, 1, 0, True, "full", False), "c" * 64))
    state.apply(m.Started(START, 0, view_message(game.position), legal_message(game.legal_moves()), 0, 0))
    state.apply(GHOST)
    return state, game


def test_the_ghost_is_where_its_timeline_says_at_each_instant() -> None:
    assert at(GHOST, 0) == ("ann's best", 0, 1, "playing")
    assert at(GHOST, 1_999) == ("ann's best", 1, 1, "playing")
    assert at(GHOST, 2_000) == ("ann's best", 2, 2, "playing")
    assert at(GHOST, 6_000) == ("ann's best", 3, 4, "resigned")


def test_the_race_panel_shows_the_ghost_and_the_gap() -> None:
    state, game = ghost_race()
    for command in ("s", "s", "w-3", "7-3", "s", "s"):  # the 6th command puts a second card up (seed 4)
        game.play(command)
    assert game.position.foundation_cards == 2
    state.apply(m.PositionReply(6, "s", view_message(game.position), legal_message(game.legal_moves()), 6, 0, 2,
                                "playing", 3_200))
    assert gap(state) == Gap(1_200)  # at 2 cards up: 3.2 s for me, 2.0 s for the ghost
    text = ANSI.sub("", to_ansi(screen(state, 80, 24, now=START + 2_500), 80))
    assert "ann's best ghost" in text and "  2/104   2m" in text and "1.2 s behind" in text
    assert "ghost ann's best: 2 cards, 2 moves, playing, 1.2 s behind ann's best" in plain(state, now=START + 2_500)
    later = ANSI.sub("", to_ansi(screen(state, 80, 24, now=START + 7_000), 80))
    assert "ann's best gave up" in later and "  4/104   3m" in later
    state.apply(m.Results("abcDEF1234", [m.ResultRow(1, "rider", "resigned", 3_500, 6, 0, 0, 2)], "4", "c" * 64))
    done = ANSI.sub("", to_ansi(screen(state, 80, 24, now=START + 9_000), 80))
    assert "Against ann's best (0:06.0, resigned): 1.2 s behind ann's best" in done


def test_the_gap_words() -> None:
    assert gap_words(GHOST, Gap(-4_000)) == "4.0 s ahead of ann's best"
    assert gap_words(GHOST, Gap(None, 3)) == "3 cards more than ann's best"
    assert gap_words(GHOST, Gap(700), short=True) == "0.7 s behind"
    assert gap_words(GHOST, None) == ""
    assert gap_words(GHOST, Gap(-40)) == "level with ann's best" == gap_words(GHOST, Gap(0))
    # Halves of a tenth round up, in whole numbers (as the page's ghost.js): not Python's half to even.
    assert [gap_words(GHOST, Gap(ms), short=True) for ms in (1250, -1450, 50, -49, 250)] == [
        "1.3 s behind", "1.5 s ahead", "0.1 s behind", "level", "0.3 s behind"]


def test_a_stuck_ghost_is_marked_as_a_stuck_player_is() -> None:
    state, _ = ghost_race()
    state.ghost = m.Ghost("ann", "ann's best", 6_000, 3, 4, "dead", GHOST.timeline)
    text = ANSI.sub("", to_ansi(screen(state, 80, 24, now=START + 7_000), 80))
    assert "ann's best stuck" in text, text
    state.apply(m.Results("abcDEF1234", [m.ResultRow(1, "rider", "resigned", 3_500, 0, 0, 0, 1)], "4", "c" * 64))
    assert "Against ann's best (0:06.0, stuck): no card up since the deal" in plain(state, now=START + 9_000)
