"""Short forms of the player's input, resolved against the legal list the server sent."""

from __future__ import annotations

import pytest

from client_cli.commands import completions, moves_from, resolve, table_moves
from protocol.messages import WireLegalMove, WireView

LEGAL = [WireLegalMove(c, n) for c, n in [("w-3", 1), ("3-7", 1), ("3-f", 1), ("2-4", 1), ("2-4x2", 2), ("5-4", 1),
                                          ("5-6", 1), ("8-f", 1), ("9-4", 1), ("9-10", 1), ("s", 1), ("u", 1)]]
# columns 4 and 10 are empty; the rest hold a card
VIEW = WireView(tableau=[["KD"], ["QS", "JS"], ["5H"], [], ["9C"], ["TC"], ["6H"], ["2S"], ["7D"], []],
                hidden=[0] * 10, foundations=["AS"] + ["-"] * 7, stock=3, waste=["4H"], redeals_left=0)


@pytest.mark.parametrize("typed, sent", [
    ("3-7", "3-7"), ("3 7", "3-7"), ("37", "3-7"), ("3,7", "3-7"), ("3>7", "3-7"),
    ("3 7 2", "3-7x2"), ("3 7x2", "3-7x2"), ("3-7 x2", "3-7x2"), ("3-7x2", "3-7x2"),
    ("w 3", "w-3"), ("w3", "w-3"), ("W-3", "w-3"), ("wf", "w-f"), ("w f2", "w-f2"), ("3f", "3-f"), ("3 f2", "3-f2"),
    ("f3 5", "f3-5"), ("f35", "f3-5"), ("S", "s"), ("d", "s"), ("draw", "s"), ("undo", "u"), ("redeal", "r"),
    ("finish", "finish"), ("110", "1-10"), ("101", "10-1"),
])
def test_short_forms_become_the_canonical_notation(typed: str, sent: str) -> None:
    assert resolve(typed, LEGAL, VIEW).action == "play"
    assert resolve(typed, LEGAL, VIEW).command == sent


def test_a_canonical_command_is_sent_even_when_not_legal_so_the_server_says_why() -> None:
    assert resolve("6-1", LEGAL, VIEW).command == "6-1"


def test_a_column_alone_plays_its_one_move_onto_a_card_or_a_foundation() -> None:
    assert resolve("5", LEGAL, VIEW).command == "5-6"  # 5-4 goes to an empty column: not a "best" target
    assert resolve("8", LEGAL, VIEW).command == "8-f"
    assert resolve("w", LEGAL, VIEW).command == "w-3"


def test_a_column_alone_with_several_or_no_targets_lists_them_and_sends_nothing() -> None:
    several = resolve("3", LEGAL, VIEW)
    assert several.action == "error" and "3-7" in several.message and "3-f" in several.message
    assert resolve("1", LEGAL, VIEW).action == "error"
    empty_only = resolve("2", LEGAL, VIEW)
    assert empty_only.action == "error" and "empty column" in empty_only.message and "2-4" in empty_only.message


def test_moves_into_empty_columns_are_collapsed_and_counts_left_out() -> None:
    assert moves_from("9", LEGAL, VIEW) == ["9-4"]
    assert moves_from("2", LEGAL, VIEW) == ["2-4"]


def test_digits_split_only_where_unambiguous() -> None:
    lucas = WireView(tableau=[["KD"]] * 13, hidden=[0] * 13, foundations=["-"] * 8, stock=0, waste=[], redeals_left=0)
    assert resolve("112", [WireLegalMove("11-2", 1)], lucas).command == "11-2"
    assert resolve("112", [WireLegalMove("1-12", 1)], lucas).command == "1-12"
    ambiguous = resolve("112", [], lucas)
    assert ambiguous.action == "error" and "1-12" in ambiguous.message and "11-2" in ambiguous.message
    assert resolve("99", LEGAL, VIEW).action == "error"  # 9-9: the same column


@pytest.mark.parametrize("typed, action", [("?", "help"), ("help", "help"), ("hint", "hint"), ("resign", "resign"),
                                           ("ready", "ready"), ("start", "start"), ("q", "quit"), ("", "none")])
def test_client_words(typed: str, action: str) -> None:
    assert resolve(typed, LEGAL, VIEW).action == action


@pytest.mark.parametrize("typed", ["hello", "03-7", "3-", "x", "w-w"])
def test_nonsense_is_explained_and_not_sent(typed: str) -> None:
    resolved = resolve(typed, LEGAL, VIEW)
    assert resolved.action == "error" and resolved.message


def test_completion_offers_the_legal_moves_in_the_servers_order() -> None:
    assert completions("3", LEGAL) == ["3-7", "3-f"]
    assert completions("", LEGAL, ["hint"])[-1] == "hint"
    assert completions("", LEGAL)[:2] == ["w-3", "3-7"]


def test_table_moves_count_what_is_not_draw_redeal_undo_or_finish() -> None:
    assert table_moves(LEGAL) == 10
    assert table_moves([WireLegalMove("s", 1), WireLegalMove("u", 1)]) == 0


def test_the_help_fits_80_columns() -> None:
    """``?`` draws the help on the race screen, which is 80 columns wide at the least: no line wraps."""
    from client_cli.commands import HELP

    assert [line for line in HELP.splitlines() if len(line) > 80] == []
