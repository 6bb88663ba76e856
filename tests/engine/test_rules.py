"""Rule-by-rule unit tests of the engine against RULES.md (sections 2-8 and 10).

Every test names the RULES.md section it checks and starts from a hand-built
position written as position text (section 10). Most cards sit on the
foundations (a slot with top card 5H holds AH..5H) so that only the few cards
that matter are in play. Expected results are worked out by hand from
RULES.md and written out literally, never computed with the engine.

Unless a test is about auto-play, games are built with ``autoplay=False``
so that the position after a command is exactly what the command did.
"""

from __future__ import annotations

import dataclasses

import pytest

from protocol.cards import parse_card
from protocol.commands import parse_command
from server.engine import (
    EMPTY_SLOT,
    PRESETS,
    IllegalCommandError,
    NotationError,
    Verdict,
    apply,
    autoplay,
    can_finish,
    deal,
    find_variant,
    format_view,
    is_dead,
    legal_moves,
    redact,
)
from server.engine.variants import CLASSIC


def cards(text: str) -> tuple[int, ...]:
    """Card codes of space-separated card notation, e.g. ``cards("AC AD")``."""
    return tuple(parse_card(t) for t in text.split())


def legal(position, variant) -> set[str]:
    """The canonical notation of every command ``legal_moves`` lists."""
    return {str(m.command) for m in legal_moves(position, variant)}


# ---------------------------------------------------------------------------
# Section 2: moves and building
# ---------------------------------------------------------------------------

# Hearts: one copy up to 8H, 9H..KH of the other copy in column 1.
# Spades: both copies up to 6S; 7S..KS twice in columns 2-6. Columns 7-10 empty.
BUILD = """
Foundations: KC KC KD KD 8H KH 6S 6S
Stock:
Waste:
Redeals left: 0
1: KH QH JH TH 9H
2: KS QS JS TS 9S
3: KS QS JS TS 9S
4: 8S
5: 8S 7S
6: 7S
7:
8:
9:
10:
"""


def test_s2_card_builds_on_same_suit_one_rank_higher(make_game, assert_position):
    """RULES.md section 2: 8S may be placed on 9S."""
    game = make_game(BUILD, autoplay=False)
    outcome = game.play("4-2")
    assert outcome.cards == 1
    assert_position(game.position, """
        Foundations: KC KC KD KD 8H KH 6S 6S
        Stock:
        Waste:
        Redeals left: 0
        1: KH QH JH TH 9H
        2: KS QS JS TS 9S 8S
        3: KS QS JS TS 9S
        4:
        5: 8S 7S
        6: 7S
        7:
        8:
        9:
        10:
    """)


def test_s2_card_never_builds_on_another_suit(make_game, assert_refused):
    """RULES.md section 2: 8S on 9S, never on 9H."""
    game = make_game(BUILD, autoplay=False)
    assert_refused(game, "4-1", match="9H")


@pytest.mark.parametrize(
    "command, why",
    [
        ("6-2", "7S is two ranks below 9S"),
        ("2-4", "building goes down: no card of the run KS..9S is one rank below 8S"),
    ],
)
def test_s2_card_must_be_exactly_one_rank_lower(make_game, assert_refused, command, why):
    """RULES.md section 2: exactly one rank higher, in suit."""
    game = make_game(BUILD, autoplay=False)
    assert_refused(game, command)


# Spades of one copy: AS, KS and 2S alone in columns 1-3, QS..3S (a run) in column 4.
ACE_KING = """
Foundations: KC KC KD KD KH KH - KS
Stock:
Waste:
Redeals left: 0
1: AS
2: KS
3: 2S
4: QS JS TS 9S 8S 7S 6S 5S 4S 3S
5:
6:
7:
8:
9:
10:
"""


def test_s2_king_never_builds_on_ace(make_game, assert_refused):
    """RULES.md section 2: ace and king are not connected (no K on A)."""
    game = make_game(ACE_KING, autoplay=False)
    assert_refused(game, "2-1", match="AS")


def test_s2_ace_builds_on_two_of_its_suit(make_game, assert_position):
    """RULES.md section 2: an ace is one rank below a 2 of its suit, so AS goes on 2S."""
    game = make_game(ACE_KING, autoplay=False)
    game.play("1-3")
    assert_position(game.position, """
        Foundations: KC KC KD KD KH KH - KS
        Stock:
        Waste:
        Redeals left: 0
        1:
        2: KS
        3: 2S AS
        4: QS JS TS 9S 8S 7S 6S 5S 4S 3S
        5:
        6:
        7:
        8:
        9:
        10:
    """)


def test_s2_two_never_builds_on_ace(make_game, assert_refused):
    """RULES.md section 2: building goes down; 2S may not be placed on AS."""
    game = make_game(ACE_KING, autoplay=False)
    assert_refused(game, "3-1")


@pytest.mark.parametrize(
    "command, column_1, column_7",
    [
        ("1-7", "KH QH JH TH", "9H"),  # one card (the default count into an empty column)
        ("1-7x5", "", "KH QH JH TH 9H"),  # the whole run, king at the bottom
    ],
)
def test_s2_empty_column_takes_any_card_or_run(make_game, assert_position, command, column_1, column_7):
    """RULES.md section 2: an empty column takes any card (or any movable run, section 3).

    Four empty columns, the target not counted: at most 2^3 = 8 cards may move.
    """
    game = make_game(BUILD, autoplay=False)
    game.play(command)
    assert_position(game.position, f"""
        Foundations: KC KC KD KD 8H KH 6S 6S
        Stock:
        Waste:
        Redeals left: 0
        1: {column_1}
        2: KS QS JS TS 9S
        3: KS QS JS TS 9S
        4: 8S
        5: 8S 7S
        6: 7S
        7: {column_7}
        8:
        9:
        10:
    """)


# Waste KH on top of 8S; 8S would fit on column 1's 9S, KH fits nowhere but an empty column.
WASTE = """
Foundations: KC KC KD KD KH QH 7S 7S
Stock:
Waste: 8S KH
Redeals left: 0
1: KS QS JS TS 9S
2: KS QS JS TS 9S
3: 8S
4:
5:
6:
7:
8:
9:
10:
"""


def test_s2_only_the_waste_top_is_playable(make_game, assert_refused, assert_position):
    """RULES.md section 2: only the waste's top card is playable; older waste cards
    become playable again when everything above them is gone."""
    game = make_game(WASTE, autoplay=False)
    assert_refused(game, "w-1", match="KH")  # KH is the top, 8S under it may not jump out
    game.play("w-4")
    game.play("w-1")
    assert_position(game.position, """
        Foundations: KC KC KD KD KH QH 7S 7S
        Stock:
        Waste:
        Redeals left: 0
        1: KS QS JS TS 9S 8S
        2: KS QS JS TS 9S
        3: 8S
        4: KH
        5:
        6:
        7:
        8:
        9:
        10:
    """)


DRAW = """
Foundations: KC KC KD KD KH KH JS JS
Stock: QS KS
Waste: KS
Redeals left: 0
1: QS
2:
3:
4:
5:
6:
7:
8:
9:
10:
"""


def test_s2_draw_moves_the_first_stock_card_onto_the_waste_top(make_game, assert_position):
    """RULES.md sections 2 and 10: draw turns the top stock card (written first) onto
    the waste (written bottom to top: the last card is the top)."""
    game = make_game(DRAW, autoplay=False)
    outcome = game.play("s")
    assert outcome.cards == 1
    assert_position(game.position, """
        Foundations: KC KC KD KD KH KH JS JS
        Stock: KS
        Waste: KS QS
        Redeals left: 0
        1: QS
        2:
        3:
        4:
        5:
        6:
        7:
        8:
        9:
        10:
    """)


def test_s2_draw_with_an_empty_stock_is_refused(make_game, assert_refused):
    """RULES.md sections 2 and 4: nothing to draw once the stock is gone."""
    game = make_game(DRAW, autoplay=False)
    game.play("s")
    game.play("s")
    assert game.position.stock == ()
    assert_refused(game, "s", match="stock")


@pytest.mark.parametrize("command", ["w-7", "w-f", "w-f1"])
def test_s2_waste_moves_with_an_empty_waste_are_refused(make_game, assert_refused, command):
    """RULES.md section 2: a waste move needs a waste top card."""
    game = make_game(BUILD, autoplay=False)
    assert_refused(game, command, match="waste")


# ---------------------------------------------------------------------------
# Section 3: how many cards may move at once
# ---------------------------------------------------------------------------

# The German page's worked example: column 3 ends KD 9S 8S 7S, column 6 ends TS.
WORKED_ONE_EMPTY = """
Foundations: KC KC QD KD KH KH 5S 5S
Stock:
Waste:
Redeals left: 0
1: 6S KS
2: 6S QS
3: KD 9S 8S 7S
4: JS
5: TS
6: KS QS JS TS
7: 9S
8: 8S
9: 7S
10:
"""

WORKED_TWO_EMPTY = """
Foundations: KC KC QD KD KH KH 5S 5S
Stock:
Waste:
Redeals left: 0
1: 6S KS
2: 6S QS
3: KD 9S 8S 7S
4: JS
5: TS
6: KS QS JS TS
7: 9S
8: 8S 7S
9:
10:
"""


def test_s3_worked_example_one_empty_column_refuses_three_cards(make_game, assert_refused):
    """RULES.md section 3: 9S 8S 7S onto TS with one empty column: 3 > 2^1, refused."""
    game = make_game(WORKED_ONE_EMPTY, autoplay=False)
    assert_refused(game, "3-6", match="at most 2")


def test_s3_worked_example_two_empty_columns_move_the_run(make_game, assert_position):
    """RULES.md section 3: with a second empty column the limit is 4, the run moves,
    and the move counter rises by one."""
    game = make_game(WORKED_TWO_EMPTY, autoplay=False)
    outcome = game.play("3-6")
    assert outcome.cards == 3
    assert game.moves == 1
    assert_position(game.position, """
        Foundations: KC KC QD KD KH KH 5S 5S
        Stock:
        Waste:
        Redeals left: 0
        1: 6S KS
        2: 6S QS
        3: KD
        4: JS
        5: TS
        6: KS QS JS TS 9S 8S 7S
        7: 9S
        8: 8S 7S
        9:
        10:
    """)


# Column 1 ends in the 5-card run 8S 7S 6S 5S 4S; columns 9 and 10 are empty.
SUPERMOVE = """
Foundations: KC KC KD KD KH KH 3S 3S
Stock:
Waste:
Redeals left: 0
1: KS 8S 7S 6S 5S 4S
2: QS JS TS 9S
3: TS 9S 8S
4: KS
5: QS
6: JS
7: 4S 5S
8: 6S 7S
9:
10:
"""


def test_s3_supermove_onto_a_card_at_the_limit(make_game, assert_position):
    """RULES.md section 3: two empty columns, onto a card: 2^2 = 4 cards may move."""
    game = make_game(SUPERMOVE, autoplay=False)
    outcome = game.play("1-3")  # 7S 6S 5S 4S onto 8S
    assert outcome.cards == 4
    assert_position(game.position, """
        Foundations: KC KC KD KD KH KH 3S 3S
        Stock:
        Waste:
        Redeals left: 0
        1: KS 8S
        2: QS JS TS 9S
        3: TS 9S 8S 7S 6S 5S 4S
        4: KS
        5: QS
        6: JS
        7: 4S 5S
        8: 6S 7S
        9:
        10:
    """)


def test_s3_supermove_onto_a_card_one_past_the_limit(make_game, assert_refused):
    """RULES.md section 3: two empty columns, onto a card: 5 cards are one too many."""
    game = make_game(SUPERMOVE, autoplay=False)
    assert_refused(game, "1-2", match="at most 4")  # 8S 7S 6S 5S 4S onto 9S


def test_s3_supermove_into_an_empty_column_at_the_limit(make_game, assert_position):
    """RULES.md section 3: two empty columns, into one of them: 2^(2-1) = 2 cards."""
    game = make_game(SUPERMOVE, autoplay=False)
    game.play("1-9x2")
    assert_position(game.position, """
        Foundations: KC KC KD KD KH KH 3S 3S
        Stock:
        Waste:
        Redeals left: 0
        1: KS 8S 7S 6S
        2: QS JS TS 9S
        3: TS 9S 8S
        4: KS
        5: QS
        6: JS
        7: 4S 5S
        8: 6S 7S
        9: 5S 4S
        10:
    """)


def test_s3_supermove_into_an_empty_column_one_past_the_limit(make_game, assert_refused):
    """RULES.md section 3: two empty columns, into one of them: 3 cards are one too many."""
    game = make_game(SUPERMOVE, autoplay=False)
    assert_refused(game, "1-9x3", match="at most 2")


def test_s3_legal_moves_respect_the_supermove_limits(make_position):
    """RULES.md section 3: legal_moves lists the moves at the limits and none past them."""
    moves = legal(make_position(SUPERMOVE), CLASSIC)
    assert {"1-3", "1-9", "1-9x2", "1-10", "1-10x2"} <= moves
    assert not {"1-2", "1-9x3", "1-10x3"} & moves


# Column 1 is exactly the run 7S 6S 5S; column 4 exactly the run JS TS; column 10 empty.
SOURCE_EMPTIES = """
Foundations: KC KC KD KD KH KH 4S 4S
Stock:
Waste:
Redeals left: 0
1: 7S 6S 5S
2: KS QS JS TS 9S 8S
3: KS QS
4: JS TS
5: 9S
6: 8S
7: 7S
8: 6S
9: 5S
10:
"""


def test_s3_source_column_emptied_by_the_move_onto_a_card_does_not_count(make_game, assert_refused):
    """RULES.md section 3: the source column does not count as empty during the move,
    even if the move empties it: one empty column, 3 cards onto 8S is refused."""
    game = make_game(SOURCE_EMPTIES, autoplay=False)
    assert_refused(game, "1-2", match="at most 2")


def test_s3_source_column_emptied_by_the_move_into_an_empty_column_does_not_count(make_game, assert_refused):
    """RULES.md section 3: into the only empty column at most 2^0 = 1 card moves,
    even though the move would empty the source column."""
    game = make_game(SOURCE_EMPTIES, autoplay=False)
    assert_refused(game, "4-10x2", match="at most 1")
    game.play("4-10")
    assert game.position.tableau[3] == cards("JS")
    assert game.position.tableau[9] == cards("TS")


# Indian (any suit but its own): column 1's JS QH KS is a run of three there.
INDIAN_SINGLE = """
Foundations: KC JC KD KD TH KH 9S KS
Stock:
Waste:
Redeals left: 0
1: KS QH JS
2: QC KC
3: JH
4: KH
5: TS
6: QS
7:
8:
9:
10:
"""


def test_s3_single_move_rule_refuses_a_run_onto_a_card(make_game, assert_refused):
    """RULES.md sections 3 and 7: indian moves one card at a time (QH JS would fit on KC)."""
    game = make_game(INDIAN_SINGLE, "indian", autoplay=False)
    assert_refused(game, "1-2", match="at most 1")
    assert_refused(game, "1-2x2", match="at most 1")


def test_s3_single_move_rule_refuses_a_run_into_an_empty_column(make_game, assert_refused):
    """RULES.md section 3: single: one card even with four empty columns."""
    game = make_game(INDIAN_SINGLE, "indian", autoplay=False)
    assert_refused(game, "1-7x2", match="at most 1")


def test_s3_single_move_rule_moves_one_card(make_game, assert_position):
    """RULES.md section 3: single: one card at a time is fine."""
    game = make_game(INDIAN_SINGLE, "indian", autoplay=False)
    game.play("1-7")
    game.play("5-3")  # TS on JH: another suit, one rank lower
    assert_position(game.position, """
        Foundations: KC JC KD KD TH KH 9S KS
        Stock:
        Waste:
        Redeals left: 0
        1: KS QH
        2: QC KC
        3: JH TS
        4: KH
        5:
        6: QS
        7: JS
        8:
        9:
        10:
    """)


# No empty column: classic may move one card; a sequence variant the whole run.
NO_EMPTY = """
Foundations: KC KC KD KD KH KH 3S 3S
Stock:
Waste:
Redeals left: 0
1: KS 8S 7S 6S 5S 4S
2: QS JS TS 9S
3: KS QS
4: JS TS
5: 9S
6: 8S
7: 7S
8: 6S
9: 5S
10: 4S
"""


@pytest.mark.parametrize("variant", ["relaxed", "josephine"])
def test_s3_sequence_move_rule_moves_any_run(make_game, assert_position, variant):
    """RULES.md sections 3 and 7: sequence (relaxed, josephine): any run moves as a unit."""
    game = make_game(NO_EMPTY, variant, autoplay=False)
    outcome = game.play("1-2")
    assert outcome.cards == 5
    assert_position(game.position, """
        Foundations: KC KC KD KD KH KH 3S 3S
        Stock:
        Waste:
        Redeals left: 0
        1: KS
        2: QS JS TS 9S 8S 7S 6S 5S 4S
        3: KS QS
        4: JS TS
        5: 9S
        6: 8S
        7: 7S
        8: 6S
        9: 5S
        10: 4S
    """)


def test_s3_supermove_without_empty_columns_moves_one_card(make_game, assert_refused):
    """RULES.md section 3: classic with no empty column: 2^0 = 1 card (the same run
    that relaxed moves is refused)."""
    game = make_game(NO_EMPTY, autoplay=False)
    assert_refused(game, "1-2", match="at most 1")


def test_s3_explicit_count_must_be_a_run(make_game, assert_refused):
    """RULES.md sections 3 and 10: 7-9x2 names 4S 5S, which is not a run (5S is above 4S)."""
    game = make_game(SUPERMOVE, autoplay=False)
    assert_refused(game, "7-9x2", match="not a run")


def test_s3_explicit_count_larger_than_the_column_is_refused(make_game, assert_refused):
    """RULES.md section 10: the count names top cards of the source column."""
    game = make_game(SUPERMOVE, autoplay=False)
    assert_refused(game, "7-9x3")


@pytest.mark.parametrize(
    "command, column_1, target, target_after",
    [
        ("1-8", "KS 8S 7S", 8, "6S 7S 6S 5S 4S"),  # 6S of the run fits 7S: three cards
        ("1-7", "KS 8S 7S 6S 5S", 7, "4S 5S 4S"),  # 4S fits 5S: one card
    ],
)
def test_s3_default_count_is_the_card_of_the_run_that_fits(
    make_game, assert_position, command, column_1, target, target_after
):
    """RULES.md section 10: without xK the count makes a card of the run fit the target."""
    game = make_game(SUPERMOVE, autoplay=False)
    game.play(command)
    expected = {1: column_1, 2: "QS JS TS 9S", 3: "TS 9S 8S", 4: "KS", 5: "QS", 6: "JS", 7: "4S 5S", 8: "6S 7S"}
    expected[target] = target_after
    assert_position(game.position, "\n".join(
        ["Foundations: KC KC KD KD KH KH 3S 3S", "Stock:", "Waste:", "Redeals left: 0"]
        + [f"{n}: {expected.get(n, '')}" for n in range(1, 11)]
    ))


def test_s3_default_count_refused_when_no_card_of_the_run_fits(make_game, assert_refused):
    """RULES.md section 10: refused if no card of the run fits (nothing of 8S..4S fits JS)."""
    game = make_game(SUPERMOVE, autoplay=False)
    assert_refused(game, "1-6", match="no card")


def test_s3_move_onto_the_same_column_is_refused(make_game, assert_refused):
    """RULES.md section 2: a move takes cards from one column onto another."""
    game = make_game(SUPERMOVE, autoplay=False)
    assert_refused(game, "3-3")


@pytest.mark.parametrize("command", ["11-3", "3-11", "w-11"])
def test_s3_column_beyond_the_tableau_is_refused_by_name(make_game, assert_refused, command):
    """RULES.md section 10: columns are 1..N; column 11 of a 10-column tableau is refused
    with a message naming it."""
    game = make_game(WASTE, autoplay=False)
    assert_refused(game, command, match="column 11")


# ---------------------------------------------------------------------------
# Sections 4 and 6: stock and redeals
# ---------------------------------------------------------------------------

CLASSIC_WASTE_ONLY = """
Foundations: KC KC KD KD KH KH JS JS
Stock:
Waste: QS KS
Redeals left: 0
1: KS
2: QS
3:
4:
5:
6:
7:
8:
9:
10:
"""


def test_s4_classic_has_no_redeal(make_game, assert_refused):
    """RULES.md sections 4 and 6: classic: one pass, no redeal (stock empty, waste not)."""
    game = make_game(CLASSIC_WASTE_ONLY, autoplay=False)
    assert_refused(game, "r", match="redeal")


# Relaxed, all four outside cards in the stock, in an order that is neither
# sorted nor a palindrome (a reversed redeal would show).
RELAXED_STOCK = """
Foundations: KC KC KD KD JH KH JS KS
Stock: KS QH QS KH
Waste:
Redeals left: 1
1:
2:
3:
4:
5:
6:
7:
8:
9:
10:
"""


def test_s6_relaxed_redeal_refused_while_the_stock_is_not_empty(make_game, assert_refused):
    """RULES.md section 2 (redeal): only when the stock is empty and the waste is not."""
    game = make_game(RELAXED_STOCK, "relaxed", autoplay=False)
    assert_refused(game, "r", match="stock")
    game.play("s")
    assert_refused(game, "r", match="stock")


def test_s6_relaxed_redeal_refused_when_the_waste_is_empty(make_game, assert_refused):
    """RULES.md section 2 (redeal): an empty waste has nothing to turn over."""
    text = """
        Foundations: KC KC KD KD JH KH JS KS
        Stock:
        Waste:
        Redeals left: 1
        1: KS
        2: QH
        3: QS
        4: KH
        5:
        6:
        7:
        8:
        9:
        10:
    """
    game = make_game(text, "relaxed", autoplay=False)
    assert_refused(game, "r", match="waste")


def test_s6_relaxed_redeal_keeps_the_order_of_the_first_pass(make_game, assert_position):
    """RULES.md sections 2 and 6: the waste becomes the stock again in the same order as
    the first pass (the card drawn first comes first again); redeals left counts down."""
    game = make_game(RELAXED_STOCK, "relaxed", autoplay=False)
    for _ in range(4):
        game.play("s")
    assert game.position.waste == cards("KS QH QS KH")
    outcome = game.play("r")
    assert outcome.cards == 4
    assert_position(game.position, """
        Foundations: KC KC KD KD JH KH JS KS
        Stock: KS QH QS KH
        Waste:
        Redeals left: 0
        1:
        2:
        3:
        4:
        5:
        6:
        7:
        8:
        9:
        10:
    """)
    game.play("s")
    assert game.position.waste == cards("KS")


def test_s6_relaxed_redeal_keeps_the_order_of_the_cards_left(make_game, assert_position):
    """RULES.md section 2 (redeal): cards played off the waste are gone; the rest keep
    their first-pass order."""
    game = make_game(RELAXED_STOCK, "relaxed", autoplay=False)
    for _ in range(4):
        game.play("s")
    game.play("w-1")  # KH, the last card drawn, into an empty column
    game.play("r")
    assert_position(game.position, """
        Foundations: KC KC KD KD JH KH JS KS
        Stock: KS QH QS
        Waste:
        Redeals left: 0
        1: KH
        2:
        3:
        4:
        5:
        6:
        7:
        8:
        9:
        10:
    """)


def test_s6_relaxed_grants_only_one_redeal(make_game, assert_refused):
    """RULES.md section 6: relaxed: one redeal; the second is refused."""
    game = make_game(RELAXED_STOCK, "relaxed", autoplay=False)
    for command in ["s", "s", "s", "s", "r", "s", "s", "s", "s"]:
        game.play(command)
    assert game.position.redeals_left == 0
    assert_refused(game, "r", match="redeal")


# ---------------------------------------------------------------------------
# Section 5: counting, auto-play, finish, dead games
# ---------------------------------------------------------------------------

COUNTING = """
Foundations: KC KC KD KD KH KH JS JS
Stock: QS
Waste: KS
Redeals left: 1
1: KS
2: QS
3:
4:
5:
6:
7:
8:
9:
10:
"""


def test_s5_every_accepted_command_counts_one_move(make_game, assert_refused):
    """RULES.md section 5: draw, redeal, a move of any size, finish, undo: one move each;
    refused commands are not counted."""
    game = make_game(COUNTING, "relaxed", autoplay=False, undo="full")
    steps = [
        ("s", 1),  # draw
        ("r", 2),  # redeal: stock KS QS
        ("s", 3),
        ("s", 4),  # waste KS QS
        ("w-f", 5),  # QS up
        ("w-f", 6),  # KS up
        ("2-1", 7),  # QS onto KS
        ("u", 8),  # undo
        ("finish", 9),  # QS, KS up: won
    ]
    for command, moves in steps:
        if command == "finish":
            assert_refused(game, "r")  # refused commands do not count
        outcome = game.play(command)
        assert game.moves == moves, command
    assert outcome.won and game.is_won


# Classic: 4S on slot 7, the other 4S buried under KS in column 2, so neither 5S is safe.
ONE_FOUR_UP = """
Foundations: KC KC KD KD KH KH 4S 3S
Stock:
Waste:
Redeals left: 0
1: KS QS JS TS 9S 8S 7S 6S 5S
2: 4S KS
3: QS JS TS 9S 8S 7S 6S 5S
4:
5:
6:
7:
8:
9:
10:
"""


def test_s5_card_is_not_safe_while_a_copy_one_rank_lower_is_out(make_game, assert_position):
    """RULES.md section 5: 5S fits slot 7 (4S) but is not safe while the other 4S is not
    on a foundation: auto-play leaves it."""
    game = make_game(ONE_FOUR_UP, autoplay=True)
    assert_position(game.position, ONE_FOUR_UP)
    assert game.moves == 0


def test_s5_autoplay_moves_are_not_counted(make_game):
    """RULES.md section 5: freeing the second 4S lets auto-play take every spade up
    (4S, then both runs and the KS); the player's command counts once, auto-play not."""
    game = make_game(ONE_FOUR_UP, autoplay=True)
    outcome = game.play("2-4")  # KS into an empty column exposes 4S
    assert outcome.cards == 1
    assert outcome.autoplayed == 19
    assert game.moves == 1
    assert outcome.won and game.is_won


# Streets (alternate colour): 5H fits slot 5 (4H); 4C is still out (under column 2).
STREETS_FIVE = """
Foundations: KC 3C KD KD 4H KH KS KS
Stock:
Waste:
Redeals left: 0
1: 5H
2: 4C KH QH JH TH 9H 8H 7H 6H
3: KC QC JC TC 9C 8C 7C 6C 5C
4:
5:
6:
7:
8:
9:
10:
"""


def test_s5_alternate_colour_card_not_safe_while_a_black_card_below_is_out(make_position):
    """RULES.md section 5: in streets 4C and 4S could be built on 5H; 4C is still out,
    so 5H is not safe and auto-play moves nothing."""
    result = autoplay(make_position(STREETS_FIVE, "streets"), find_variant("streets"))
    assert result.moves == ()


def test_s5_same_card_is_safe_in_classic(make_position):
    """RULES.md section 5: in classic only 4H builds on 5H and both 4H are up, so 5H goes
    first (column 1 to slot 5); then everything follows."""
    result = autoplay(make_position(STREETS_FIVE, "classic"), CLASSIC)
    assert result.moves[0] == (1, 5)
    assert result.position.is_won


# One AH on slot 5, the other buried under KH; one 2H in column 1, the rest in the stock.
ACE_TWO = """
Foundations: KC KC KD KD AH - KS KS
Stock: 3H 4H 5H 6H 7H 8H 9H TH JH QH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH
Waste:
Redeals left: 0
1: 2H
2: AH KH
3:
4:
5:
6:
7:
8:
9:
10:
"""

ACE_TWO_AFTER_FIRST_AUTOPLAY = """
Foundations: KC KC KD KD 2H - KS KS
Stock: 3H 4H 5H 6H 7H 8H 9H TH JH QH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH
Waste:
Redeals left: 0
1:
2: AH KH
3:
4:
5:
6:
7:
8:
9:
10:
"""


def test_s5_autoplay_runs_on_the_fresh_deal(make_game, assert_position):
    """RULES.md section 5: auto-play runs once on the fresh deal, before the first
    command, and is not counted. 2H is safe although the other AH is still out."""
    game = make_game(ACE_TWO, autoplay=True)
    assert game.moves == 0
    assert_position(game.position, ACE_TWO_AFTER_FIRST_AUTOPLAY)


def test_s5_no_autoplay_when_switched_off(make_game, assert_position):
    """RULES.md section 5: auto-play is a match setting; off, nothing moves by itself."""
    game = make_game(ACE_TWO, autoplay=False)
    assert_position(game.position, ACE_TWO)


def test_s5_autoplay_runs_after_a_command_and_aces_are_always_safe(make_game, assert_position):
    """RULES.md section 5: after a command auto-play moves the freed AH to the first
    empty slot."""
    game = make_game(ACE_TWO, autoplay=True)
    outcome = game.play("2-3")
    assert outcome.autoplayed == 1
    assert game.moves == 1
    assert_position(game.position, """
        Foundations: KC KC KD KD 2H AH KS KS
        Stock: 3H 4H 5H 6H 7H 8H 9H TH JH QH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH
        Waste:
        Redeals left: 0
        1:
        2:
        3: KH
        4:
        5:
        6:
        7:
        8:
        9:
        10:
    """)


# Waste 2S AH (AH on top), 2H in column 1, AS in column 2; slots 6 and 7 empty.
AUTOPLAY_ORDER = """
Foundations: KC KC KD KD KH - - KS
Stock: 3H 4H 5H 6H 7H 8H 9H TH JH QH KH 3S 4S 5S 6S 7S 8S 9S TS JS QS KS
Waste: 2S AH
Redeals left: 0
1: 2H
2: AS
3:
4:
5:
6:
7:
8:
9:
10:
"""


def test_s5_autoplay_order_waste_first_then_columns_then_repeat(make_position, assert_position):
    """RULES.md section 5: look at the waste top, then columns 1..N, move the first safe
    card a slot accepts, repeat. AH (waste) takes slot 6 before AS (column 2) takes
    slot 7; 2S goes from the waste as soon as AS is up."""
    result = autoplay(make_position(AUTOPLAY_ORDER), CLASSIC)
    assert result.moves == ((0, 6), (1, 6), (2, 7), (0, 7))
    assert_position(result.position, """
        Foundations: KC KC KD KD KH 2H 2S KS
        Stock: 3H 4H 5H 6H 7H 8H 9H TH JH QH KH 3S 4S 5S 6S 7S 8S 9S TS JS QS KS
        Waste:
        Redeals left: 0
        1:
        2:
        3:
        4:
        5:
        6:
        7:
        8:
        9:
        10:
    """)


# Hearts: slot 5 at JH, slot 6 at TH: QH waits until the other JH (column 2) is up.
# Column 1's QH lies on a face-down KS; slot 8 (QS) takes KS.
REVEAL_BY_AUTOPLAY = """
Foundations: KC KC KD TD JH TH KS QS
Stock:
Waste:
Redeals left: 0
1: (KS) QH
2: JH KH
3:
4: KH QH
5: JD KD QD
6:
7:
8:
9:
10:
"""

REVEAL_BY_AUTOPLAY_AFTER = """
Foundations: KC KC KD TD KH KH KS KS
Stock:
Waste:
Redeals left: 0
1:
2:
3:
4:
5: JD KD QD
6:
7:
8:
9:
10:
"""


def test_s5_autoplay_order_restarts_after_each_card(make_position, assert_position):
    """RULES.md section 5: after each card the scan starts again from the waste and
    column 1: JH (column 2) makes column 1's QH safe, which goes before column 4's QH;
    two slots at JH: QH takes the lower, slot 5. The face-down KS turns up and goes too."""
    position = make_position("""
        Foundations: KC KC KD TD JH TH KS QS
        Stock:
        Waste:
        Redeals left: 0
        1: (KS) QH
        2: JH
        3: KH
        4: KH QH
        5: JD KD QD
        6:
        7:
        8:
        9:
        10:
    """)
    result = autoplay(position, CLASSIC)
    assert result.moves == ((2, 6), (1, 5), (1, 8), (4, 6), (3, 5), (4, 6))
    assert result.revealed
    assert_position(result.position, REVEAL_BY_AUTOPLAY_AFTER)


# Two slots at 4H (slots 3 and 6); 5H on top of column 1.
TWO_SLOTS = """
Foundations: KC KC 4H KD KD 4H KS KS
Stock:
Waste:
Redeals left: 0
1: 5H
2: KH QH JH TH 9H 8H 7H 6H
3: 5H KH QH JH TH 9H 8H 7H 6H
4:
5:
6:
7:
8:
9:
10:
"""


def test_s5_foundation_slot_choice_is_the_lower_numbered_slot(make_game):
    """RULES.md sections 5 and 10: f is the slot that accepts the card, the lower-numbered
    one when two do."""
    game = make_game(TWO_SLOTS, autoplay=False)
    game.play("1-f")
    assert game.position.foundations == cards("KC KC 5H KD KD 4H KS KS")


def test_s5_a_named_slot_that_accepts_the_card_may_be_chosen(make_game, assert_refused):
    """RULES.md section 10: f1..f8 name a slot as a target; it must accept the card."""
    game = make_game(TWO_SLOTS, autoplay=False)
    assert_refused(game, "1-f4", match="slot 4")
    game.play("1-f6")
    assert game.position.foundations == cards("KC KC 4H KD KD 5H KS KS")


def test_s5_autoplay_uses_the_lower_numbered_slot(make_position):
    """RULES.md section 5: auto-play too puts a card that fits two slots on the lower one."""
    result = autoplay(make_position(TWO_SLOTS), CLASSIC)
    assert result.moves[0] == (1, 3)


# Both heart slots at JH. Column 1's KH waits for column 2's QH, which needs a second
# pass over the columns; any order that works wins.
FINISH_LATER_COLUMN_FIRST = """
Foundations: KC KC KD KD JH JH KS KS
Stock:
Waste:
Redeals left: 0
1: KH
2: KH QH
3: QH
4:
5:
6:
7:
8:
9:
10:
"""

# Two copies where the choice between them matters: after column 2's QH goes up (slot 5),
# both exposed KH fit slot 5, but only column 1's KH may take it: it covers column 1's
# QH, the card slot 6 needs before the other KH. Taking the other KH first is a dead end.
FINISH_TWO_COPIES = {
    "KH beside": """
        Foundations: KC KC KD KD JH JH KS KS
        Stock:
        Waste:
        Redeals left: 0
        1: QH KH
        2: QH
        3: KH
        4:
        5:
        6:
        7:
        8:
        9:
        10:
    """,
    "KH below": """
        Foundations: KC KC KD KD JH JH KS KS
        Stock:
        Waste:
        Redeals left: 0
        1: QH KH
        2: KH QH
        3:
        4:
        5:
        6:
        7:
        8:
        9:
        10:
    """,
}

WON = """
Foundations: KC KC KD KD KH KH KS KS
Stock:
Waste:
Redeals left: 0
1:
2:
3:
4:
5:
6:
7:
8:
9:
10:
"""


def test_s5_finish_wins_in_one_counted_move(make_game, assert_position):
    """RULES.md section 5: finish when stock and waste are empty, nothing is face down
    and some order of top cards clears the tableau: everything goes up in one move."""
    game = make_game(FINISH_LATER_COLUMN_FIRST, autoplay=False)
    assert can_finish(game.position)
    assert "finish" in legal(game.position, CLASSIC)
    outcome = game.play("finish")
    assert outcome.cards == 4
    assert outcome.won and game.is_won
    assert game.moves == 1
    assert_position(game.position, WON)


@pytest.mark.parametrize("case", sorted(FINISH_TWO_COPIES))
def test_s5_finish_finds_the_order_that_two_copies_need(make_game, assert_position, case):
    """RULES.md section 5: "with two copies of a card the order can matter; the engine
    finds one". Order that clears: column 2's QH, column 1's KH (slot 5), column 1's QH,
    the other KH (slot 6)."""
    game = make_game(FINISH_TWO_COPIES[case], autoplay=False)
    assert can_finish(game.position)
    outcome = game.play("finish")
    assert outcome.won and game.moves == 1
    assert_position(game.position, WON)


def test_s5_finish_with_autoplay_on_takes_cards_that_are_not_safe(make_game, assert_position):
    """RULES.md section 5: auto-play leaves the 5S (one 4S still out), finish takes
    everything up: 5S, 6S, then the buried 4S, and so on."""
    text = """
        Foundations: KC KC KD KD KH KH 4S 3S
        Stock:
        Waste:
        Redeals left: 0
        1: 5S
        2: 4S 6S
        3: KS QS JS TS 9S 8S 7S
        4: KS QS JS TS 9S 8S 7S 6S 5S
        5:
        6:
        7:
        8:
        9:
        10:
    """
    game = make_game(text, autoplay=True)
    assert_position(game.position, text)
    outcome = game.play("finish")
    assert outcome.won and game.moves == 1
    assert_position(game.position, WON)


def test_s5_finish_refused_when_no_order_clears_the_tableau(make_game, assert_refused):
    """RULES.md section 5: both QH lie under a KH and no slot takes a KH: no order of
    top cards clears the tableau."""
    text = FINISH_LATER_COLUMN_FIRST.replace("1: KH\n2: KH QH\n3: QH", "1: QH KH\n2: QH KH\n3:")
    game = make_game(text, autoplay=False)
    assert not can_finish(game.position)
    assert_refused(game, "finish")


@pytest.mark.parametrize(
    "piles, reason",
    [
        ("Stock: KH\nWaste:\nRedeals left: 0\n1: QH\n2: QH KH\n3:", "stock"),
        ("Stock:\nWaste: KH\nRedeals left: 0\n1: QH\n2: QH KH\n3:", "waste"),
        ("Stock:\nWaste:\nRedeals left: 0\n1: (QH) KH\n2: QH\n3: KH", "face-down"),
    ],
)
def test_s5_finish_refused_with_stock_waste_or_face_down_cards(make_game, assert_refused, piles, reason):
    """RULES.md section 5: finish needs stock and waste empty and no face-down card."""
    text = "Foundations: KC KC KD KD JH JH KS KS\n" + piles + "\n" + "\n".join(f"{n}:" for n in range(4, 11))
    game = make_game(text, autoplay=False)
    assert not can_finish(game.position)
    assert_refused(game, "finish", match=reason)


@pytest.mark.parametrize("command", ["s", "r", "u", "finish", "1-2", "w-f"])
def test_s8_once_won_every_command_is_refused(make_game, assert_refused, command):
    """RULES.md section 8: once a game is won, every command is refused."""
    game = make_game(FINISH_LATER_COLUMN_FIRST, autoplay=False, undo="full")
    game.play("finish")
    assert_refused(game, command, code="game_over")


# Stock empty, no empty column, no top card fits another or a slot (6S and QH are wanted,
# both buried): no legal move at all.
DEAD_NO_MOVES = """
Foundations: KC KC KD KD JH JH 5S 5S
Stock:
Waste:
Redeals left: 0
1: 6S KS
2: 6S KS
3: QH KH
4: QH KH
5: 8S 9S
6: 8S JS
7: TS 7S
8: TS JS
9: QS 7S
10: QS 9S
"""

# The only move is QS between the two KS (1-2, then 2-1 back); the runs JS TS and
# QS JS TS fit on QS / KS but may not move as units without an empty column.
DEAD_SHUTTLE = """
Foundations: JC JC JD JD JH JH 8S 8S
Stock:
Waste:
Redeals left: 0
1: 9S KS QS
2: 9S KS
3: QC KC
4: QC KC
5: QD KD
6: QD KD
7: QH KH
8: QH KH
9: JS TS
10: QS JS TS
"""

# JS (column 2) onto QS uncovers TS; 9S (column 1) onto TS uncovers 6S, which goes up.
ALIVE_IN_TWO = """
Foundations: KC KC KD KD JH JH 5S 5S
Stock:
Waste:
Redeals left: 0
1: 6S 9S
2: TS JS
3: KS QS
4: 6S 7S
5: 8S KH
6: QH 7S
7: QH 9S
8: TS KH
9: KS JS
10: 8S QS
"""


def test_s5_dead_game_without_any_move(make_position):
    """RULES.md section 5: stock exhausted and nothing can ever reach a foundation: dead."""
    position = make_position(DEAD_NO_MOVES)
    assert legal(position, CLASSIC) == set()
    assert is_dead(position, CLASSIC) is Verdict.DEAD


def test_s5_dead_game_with_moves_that_lead_nowhere(make_position):
    """RULES.md section 5: legal moves exist (QS back and forth) but none leads to a
    foundation move: dead."""
    position = make_position(DEAD_SHUTTLE)
    assert legal(position, CLASSIC) == {"1-2"}
    assert is_dead(position, CLASSIC) is Verdict.DEAD


def test_s5_game_alive_when_two_tableau_moves_free_a_card(make_position, make_game):
    """RULES.md section 5: no card can go up now, but 2-3 then 1-2 frees 6S: alive."""
    position = make_position(ALIVE_IN_TWO)
    assert legal(position, CLASSIC) == {"2-3", "2-10", "9-3", "9-10"}
    assert is_dead(position, CLASSIC) is Verdict.ALIVE
    game = make_game(ALIVE_IN_TWO, autoplay=False)
    for command in ["2-3", "1-2", "1-f"]:
        game.play(command)
    assert game.position.foundations == cards("KC KC KD KD JH JH 6S 5S")


def test_s5_dead_check_with_a_tiny_budget_is_unknown(make_position):
    """RULES.md section 5: a bounded search answers unknown when its budget runs out."""
    position = make_position(ALIVE_IN_TWO)
    assert is_dead(position, CLASSIC, budget=1) is Verdict.UNKNOWN


def test_s5_game_with_stock_left_is_alive(make_position):
    """RULES.md section 5: dead needs the stock exhausted; the tableau of DEAD_NO_MOVES
    with one card (KD) in the stock is alive."""
    text = DEAD_NO_MOVES.replace("KC KC KD KD", "KC KC KD QD").replace("Stock:", "Stock: KD")
    assert is_dead(make_position(text), CLASSIC) is Verdict.ALIVE


@pytest.mark.parametrize("redeals, verdict", [(1, Verdict.ALIVE), (0, Verdict.DEAD)])
def test_s5_stock_is_exhausted_only_without_redeals_left(make_position, redeals, verdict):
    """RULES.md section 5: exhausted means no redeals left either (relaxed, stock empty,
    waste QD KD: KD fits nowhere; a redeal would bring QD up)."""
    text = (
        DEAD_NO_MOVES.replace("KC KC KD KD", "KC KC KD JD")
        .replace("Waste:", "Waste: QD KD")
        .replace("Redeals left: 0", f"Redeals left: {redeals}")
    )
    position = make_position(text, "relaxed")
    assert is_dead(position, find_variant("relaxed")) is verdict


def test_s5_dead_check_changes_nothing(make_game):
    """RULES.md section 5: the engine reports a dead game and changes nothing else:
    commands stay legal as before."""
    game = make_game(DEAD_SHUTTLE, autoplay=False)
    before = game.position
    assert is_dead(game.position, CLASSIC) is Verdict.DEAD
    assert game.position == before
    game.play("1-2")
    assert game.moves == 1


# ---------------------------------------------------------------------------
# Section 7: variants
# ---------------------------------------------------------------------------

# Alternate colour: column 1 is KD QH face down under 9S; 9S fits TH (column 2).
FACE_DOWN = """
Foundations: KC KC QD KD 9H KH 8S KS
Stock:
Waste:
Redeals left: 0
1: (KD) (QH) 9S
2: TH
3: KS
4: QS
5: JS
6: TS
7: KH
8: JH
9:
10:
"""


@pytest.mark.parametrize("variant", ["emperor", "number_ten", "rank_and_file"])
def test_s7_face_down_card_turns_up_within_the_exposing_command(make_game, assert_position, variant):
    """RULES.md section 7: a face-down card turns face up within the command that exposes
    it (auto-play off: the command itself does it)."""
    game = make_game(FACE_DOWN, variant, autoplay=False)
    outcome = game.play("1-2")
    assert outcome.position == game.position
    assert_position(outcome.position, """
        Foundations: KC KC QD KD 9H KH 8S KS
        Stock:
        Waste:
        Redeals left: 0
        1: (KD) QH
        2: TH 9S
        3: KS
        4: QS
        5: JS
        6: TS
        7: KH
        8: JH
        9:
        10:
    """)
    game.play("1-9")
    assert game.position.tableau[0] == cards("KD")
    assert game.position.hidden[0] == 0


@pytest.mark.parametrize("seed", ["1", "2", "daily-2024-01-01"])
def test_s7_lucas_deal_starts_with_the_aces_on_the_slots(seed):
    """RULES.md section 7: lucas deals its eight aces to the slots in the order
    AC AD AH AS AC AD AH AS, then 13 columns of 3 from the other 96 cards."""
    lucas = find_variant("lucas")
    position = deal(seed, lucas)
    assert position.foundations == cards("AC AD AH AS AC AD AH AS")
    assert str(position).splitlines()[0] == "Foundations: AC AD AH AS AC AD AH AS"
    assert [len(column) for column in position.tableau] == [3] * 13
    assert len(position.stock) == 104 - 8 - 39
    dealt = [c for column in position.tableau for c in column] + list(position.stock)
    assert not [c for c in dealt if c % 13 == 0], "an ace was dealt outside the foundations"


# 9H 9S 9D 9C on columns 1-4; 8S and 8H to place on columns 5 and 6.
BUILD_RULES = {
    "foundations": "8C KC 8D KD 7H KH 7S KS",
    "columns": {1: "KH QH JH TH 9H", 2: "KS QS JS TS 9S", 3: "KD QD JD TD 9D", 4: "KC QC JC TC 9C",
                5: "8S", 6: "8H"},
}
ON = {"1": "9H", "2": "9S", "3": "9D", "4": "9C"}
BUILD_CASES = {
    # variant: the moves of 8S (column 5) and 8H (column 6) onto 9H 9S 9D 9C that fit
    "classic": {"5-2", "6-1"},
    "streets": {"5-1", "5-3", "6-2", "6-4"},
    "maria": {"5-1", "5-3", "6-2", "6-4"},
    "indian": {"5-1", "5-3", "5-4", "6-2", "6-3", "6-4"},
}


@pytest.mark.parametrize(
    "variant, command",
    [(v, f"{s}-{t}") for v in BUILD_CASES for s in "56" for t in "1234"],
)
def test_s7_build_rules(make_game, position_text, assert_refused, variant, command):
    """RULES.md sections 2 and 7: classic builds in suit; maria and streets in alternate
    colour; indian on any suit but the card's own. Always one rank lower."""
    text = position_text(BUILD_RULES["foundations"], BUILD_RULES["columns"], variant=variant)
    game = make_game(text, variant, autoplay=False)
    source, target = command.split("-")
    mover = BUILD_RULES["columns"][int(source)]
    if command in BUILD_CASES[variant]:
        game.play(command)
        assert game.position.tableau[int(target) - 1][-2:] == cards(f"{ON[target]} {mover}")
        assert game.position.tableau[int(source) - 1] == ()
    else:
        assert_refused(game, command, match=f"fits? on {ON[target]}")


def test_s7_sixty_thieves_has_twelve_columns_and_twelve_slots():
    """RULES.md section 7: sixty_thieves: 3 decks (156 cards), 12 columns of 5, 12 slots."""
    sixty = find_variant("sixty_thieves")
    assert (sixty.decks, sixty.columns, sixty.cards_per_column, sixty.slots) == (3, 12, 5, 12)
    position = deal("1", sixty)
    assert [len(column) for column in position.tableau] == [5] * 12
    assert position.foundations == (EMPTY_SLOT,) * 12
    assert len(position.stock) == 156 - 60


def test_s5_sixty_thieves_safety_needs_all_three_copies(make_position, position_text):
    """RULES.md section 5: "every copy" means three in sixty_thieves: with two 4S up and
    the third buried, no 5S is safe, so auto-play moves nothing."""
    text = position_text(
        "KC KC KC KD KD KD KH KH KH 4S 4S 3S",
        {1: "KS QS JS TS 9S 8S 7S 6S 5S", 2: "KS QS JS TS 9S 8S 7S 6S 5S", 3: "4S KS QS JS TS 9S 8S 7S 6S 5S"},
        variant="sixty_thieves",
    )
    position = make_position(text, "sixty_thieves")
    assert autoplay(position, find_variant("sixty_thieves")).moves == ()


def test_s7_sixty_thieves_plays_on_column_twelve(make_game, position_text, assert_refused):
    """RULES.md sections 7 and 10: columns 1..12 exist in sixty_thieves, 13 does not."""
    text = position_text("KC KC KC KD KD KD KH KH KH KS KS QS", {12: "KS"}, variant="sixty_thieves")
    game = make_game(text, "sixty_thieves", autoplay=False)
    assert_refused(game, "12-13", match="column 13")
    game.play("12-1")
    assert game.position.tableau[0] == cards("KS")
    assert game.position.tableau[11] == ()


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_s6_cards_may_not_come_down_in_any_preset(make_game, position_text, assert_refused, name):
    """RULES.md sections 6 and 7: foundation to column is off in every preset; f3-5 is
    refused although slot 3's king would fit the empty column 5."""
    variant = find_variant(name)
    decks = variant.decks
    foundations = " ".join(["KC"] * decks + ["KD"] * decks + ["KH"] * decks + ["KS"] * (decks - 1) + ["QS"])
    text = position_text(foundations, {1: "KS"}, variant=variant)
    game = make_game(text, variant, autoplay=False)
    assert_refused(game, "f3-5", match="come down")
    assert "f3-5" not in legal(game.position, variant)


CUSTOM_DOWN = dataclasses.replace(CLASSIC, name="custom", foundation_to_column=True)


def test_s6_cards_come_down_where_the_variant_allows_it(make_game, assert_position, assert_refused):
    """RULES.md sections 6 and 7: a variant switch lets slot 3's top card come down
    onto a column where it fits (KD into an empty column; never onto KS)."""
    text = """
        Foundations: KC KC KD KD KH KH KS QS
        Stock:
        Waste:
        Redeals left: 0
        1: KS
        2:
        3:
        4:
        5:
        6:
        7:
        8:
        9:
        10:
    """
    game = make_game(text, CUSTOM_DOWN, autoplay=False)
    assert "f3-5" in legal(game.position, CUSTOM_DOWN)
    assert_refused(game, "f3-1", match="KD does not fit on KS")
    outcome = game.play("f3-5")
    assert outcome.cards == 1 and game.moves == 1
    assert_position(game.position, """
        Foundations: KC KC QD KD KH KH KS QS
        Stock:
        Waste:
        Redeals left: 0
        1: KS
        2:
        3:
        4:
        5: KD
        6:
        7:
        8:
        9:
        10:
    """)


# ---------------------------------------------------------------------------
# Section 8: undo and hidden information
# ---------------------------------------------------------------------------


def test_s8_undo_policy_none_refuses_undo(make_game, assert_refused):
    """RULES.md section 8: undo policy none: no undo at all."""
    game = make_game(BUILD, autoplay=False, undo="none")
    game.play("4-2")
    assert_refused(game, "u", code="undo_refused")


@pytest.mark.parametrize("policy", ["none", "safe", "full"])
def test_s8_nothing_to_undo_is_refused(make_game, assert_refused, policy):
    """RULES.md section 8: an undo takes back the last accepted command; before the
    first one there is none."""
    game = make_game(BUILD, autoplay=False, undo=policy)
    assert_refused(game, "u", code="undo_refused")


def test_s8_safe_undo_refuses_a_draw(make_game, assert_refused):
    """RULES.md section 8: safe: an undo cannot take back a draw."""
    game = make_game(DRAW, autoplay=False, undo="safe")
    game.play("s")
    assert_refused(game, "u", match="draw", code="undo_refused")


def test_s8_safe_undo_refuses_a_redeal(make_game, assert_refused):
    """RULES.md section 8: safe: an undo cannot take back a redeal."""
    game = make_game(RELAXED_STOCK, "relaxed", autoplay=False, undo="safe")
    for command in ["s", "s", "s", "s", "r"]:
        game.play(command)
    assert_refused(game, "u", match="redeal", code="undo_refused")


def test_s8_safe_undo_refuses_a_command_that_turned_a_card_up(make_game, assert_refused):
    """RULES.md section 8: safe: what was revealed stays revealed (1-2 uncovers QH)."""
    game = make_game(FACE_DOWN, "emperor", autoplay=False, undo="safe")
    game.play("1-2")
    assert_refused(game, "u", code="undo_refused")


def test_s8_safe_undo_refuses_when_the_autoplay_after_the_command_turned_a_card_up(make_game, assert_refused):
    """RULES.md section 8: an undo takes back a command with its auto-play, so a command
    whose auto-play turned a card up is not undoable under safe (2-3 frees JH; auto-play
    then takes QH off the face-down KS)."""
    game = make_game(REVEAL_BY_AUTOPLAY, autoplay=True, undo="safe")
    assert game.position.hidden[0] == 1  # nothing moved on the fresh deal
    outcome = game.play("2-3")
    assert outcome.autoplayed == 6
    assert game.position.hidden == (0,) * 10
    assert_refused(game, "u", match="face up", code="undo_refused")


def test_s8_full_undo_takes_back_a_reveal_with_its_autoplay(make_game, assert_position):
    """RULES.md section 8: full: anything; the undo restores the exact earlier position,
    face-down card included, and counts as a move."""
    game = make_game(REVEAL_BY_AUTOPLAY, autoplay=True, undo="full")
    game.play("2-3")
    assert_position(game.position, REVEAL_BY_AUTOPLAY_AFTER)
    outcome = game.play("u")
    assert outcome.autoplayed == 0
    assert game.moves == 2
    assert_position(game.position, REVEAL_BY_AUTOPLAY)


def test_s8_full_undo_takes_back_a_draw_exactly(make_game, assert_position):
    """RULES.md section 8: full: an undo takes back a draw; the card goes back on top of
    the stock and the position is exactly the one before."""
    game = make_game(DRAW, autoplay=False, undo="full")
    game.play("s")
    outcome = game.play("u")
    assert outcome.cards == 1
    assert_position(game.position, DRAW)
    game.play("s")
    assert game.position.waste == cards("KS QS")


def test_s8_undo_takes_back_the_command_with_its_autoplay(make_game, assert_position):
    """RULES.md section 8: an undo takes back the last command together with the
    auto-play that followed it (2-3 and the AH it freed); no auto-play after the undo."""
    game = make_game(ACE_TWO, autoplay=True, undo="safe")
    game.play("2-3")
    assert game.position.foundations == cards("KC KC KD KD 2H AH KS KS")
    outcome = game.play("u")
    assert outcome.autoplayed == 0
    assert game.moves == 2
    assert_position(game.position, ACE_TWO_AFTER_FIRST_AUTOPLAY)


def test_s8_repeated_undos_go_further_back(make_game, assert_position):
    """RULES.md section 8: repeated undos go further back, one command each; every
    undo counts as a move."""
    game = make_game(BUILD, autoplay=False, undo="full")
    positions = [game.position]
    for command in ["4-2", "5-3", "1-7"]:
        game.play(command)
        positions.append(game.position)
    for back in range(1, 4):
        game.play("u")
        assert game.position == positions[-1 - back]
        assert game.moves == 3 + back
    assert_position(game.position, BUILD)


def test_s8_an_undo_is_never_itself_undone(make_game, assert_position, assert_refused):
    """RULES.md section 8: u, u goes back two commands (the second u does not undo the
    first one)."""
    game = make_game(BUILD, autoplay=False, undo="full")
    game.play("4-2")
    game.play("1-7")
    after_two = game.position
    game.play("u")
    game.play("u")
    assert game.position != after_two
    assert_position(game.position, BUILD)
    assert game.moves == 4
    assert_refused(game, "u", code="undo_refused")


def test_s8_safe_undo_accepts_a_plain_move(make_game, assert_position):
    """RULES.md section 8: safe refuses only draws, redeals and reveals."""
    game = make_game(BUILD, autoplay=False, undo="safe")
    game.play("4-2")
    game.play("u")
    assert_position(game.position, BUILD)


VIEW = """
Foundations: KC KC QD KD 9H KH 8S KS
Stock: JS KH
Waste:
Redeals left: 0
1: (KD) (QH) 9S
2: TH
3: KS
4: QS
5: TS
6: JH
7:
8:
9:
10:
"""


def test_s8_redacted_view_hides_the_stock_and_face_down_cards(make_position):
    """RULES.md sections 8 and 10: a player sees the stock as a count and face-down
    cards as ??; never the stock's cards or a face-down card."""
    position = make_position(VIEW, "emperor")
    view = redact(position)
    text = format_view(view)
    assert text == (
        "Foundations: KC KC QD KD 9H KH 8S KS\n"
        "Stock: 2\n"
        "Waste:\n"
        "Redeals left: 0\n"
        "1: ?? ?? 9S\n"
        "2: TH\n"
        "3: KS\n"
        "4: QS\n"
        "5: TS\n"
        "6: JH\n"
        "7:\n"
        "8:\n"
        "9:\n"
        "10:"
    )
    assert "JS" not in text and "QH" not in text
    assert view.stock_count == 2
    assert not hasattr(view, "stock")


# ---------------------------------------------------------------------------
# Section 10: notation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["S", "03-7", "finish ", " s", "U", "3-07", "3-7x02", "3-7x0", "w-2x1", "3 - 7"])
def test_s10_non_canonical_commands_are_malformed(make_game, assert_refused, command):
    """RULES.md section 10: commands are case-sensitive, no spaces, no leading zeros;
    anything else is refused as malformed (NotationError), and nothing changes."""
    game = make_game(SUPERMOVE, autoplay=False)
    assert_refused(game, command, code="malformed", error=NotationError)


SLOT_ZERO = """
Foundations: KC KC KD KD KH KH JS JS
Stock:
Waste: QS
Redeals left: 0
1: KS
2: QS
3: KS
4:
5:
6:
7:
8:
9:
10:
"""


@pytest.mark.parametrize("command", ["w-f0", "2-f0"])
def test_s10_slot_zero_is_not_canonical(make_game, assert_refused, command):
    """RULES.md section 10: slots are named f1..f8 (and f for "the slot that accepts
    the card"); 'f0' is not canonical and must be refused as malformed, not played as f."""
    game = make_game(SLOT_ZERO, autoplay=False)
    assert_refused(game, command, code="malformed", error=NotationError)


def test_s10_unknown_variant_name_is_refused():
    """RULES.md sections 7 and 10: only the presets (and their aliases) exist."""
    with pytest.raises(NotationError, match="unknown variant"):
        find_variant("klondike")


@pytest.mark.parametrize(
    "alias, name",
    [("Forty Thieves", "classic"), ("Napoleon at St Helena", "classic"), ("Dress Parade", "rank_and_file"),
     ("locker", "relaxed")],
)
def test_s7_preset_aliases(alias, name):
    """RULES.md section 7: the presets' aliases name the same variant."""
    assert find_variant(alias) is PRESETS[name]


def test_s10_commands_parse_to_their_canonical_form():
    """RULES.md section 10: the canonical forms round-trip."""
    for text in ["s", "r", "u", "finish", "3-7", "3-7x3", "w-2", "5-f", "w-f", "w-f2", "3-f2", "f3-5", "10-1"]:
        assert str(parse_command(text)) == text


def test_s2_apply_never_changes_the_position(make_position):
    """RULES.md section 2 (positions are values): apply returns a new position and a
    refused command leaves the old one as it was."""
    position = make_position(BUILD)
    text = str(position)
    with pytest.raises(IllegalCommandError):
        apply(position, CLASSIC, parse_command("4-1"))
    applied = apply(position, CLASSIC, parse_command("4-2"))
    assert str(position) == text
    assert applied.position != position
