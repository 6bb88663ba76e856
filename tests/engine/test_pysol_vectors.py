"""Check server.engine.pysol against PySolFC's own dealing code.

The oracle is the ``pysol-cards`` package (``pip install pysol-cards``;
written against 0.24.0), which is where PySolFC takes its generators from:
``pysol_cards.random.LCRandom31`` / ``MTRandom``, their ``shuffle`` /
``randint``, ``pysol_cards.cards.createCards`` / ``ms_rearrange``, and the
``pysol_cards.deal_game.Game`` dealing helpers (``cyclical_deal``,
``add_all_to_talon``, ``Card.flip``, ``CardRenderer``).

pysol-cards has no Forty Thieves dealer, so ``_PySolFCFortyThieves`` below
supplies the only hand-written part, the row/talon bookkeeping of PySolFC's
``FortyThieves.startGame`` (``pysollib/games/fortythieves.py``): ``DEAL[0]``
face-down rows, then face-up rows, one card per row left to right from the top
of the Talon (``cyclical_deal``), the rest staying in the Talon top first
(``add_all_to_talon``; its first card is the one PySolFC turns onto the
Waste, which our deal leaves on the stock).

The generator is picked as PySolFC's ``construct_random``
(``pysollib/pysolrandom.py``) does: ``LCRandom31`` for ``N < 32000``, else
``MTRandom``.  pysol-cards' convenience ``pysol_cards.random.shuffle()``
tests ``N <= 32000`` instead; see ``test_pysol_cards_shuffle_helper``.
"""

from __future__ import annotations

import os
import sys
from collections import Counter

import pytest

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

from server.engine.pysol import (
    PYSOL_GAMES,
    PYSOL_MAX_NUMBER,
    LCRandom31,
    MTRandom,
    pysol_create_cards,
    pysol_layout,
    pysol_random,
    pysol_shuffle,
)

pc_cards = pytest.importorskip("pysol_cards.cards")
pc_random = pytest.importorskip("pysol_cards.random")
pc_deal = pytest.importorskip("pysol_cards.deal_game")
from pysol_cards.random_base import RandomBase

NUMBERS = [
    1,
    2,
    617,
    1000,
    31999,  # last LCRandom31 number
    32000,  # first MTRandom number in PySolFC
    32001,
    100000,
    123456789,
    2 ** 31,
    2 ** 32 + 5,
    12345678901234567,  # 17 digits, like PySolFC's random game numbers
    PYSOL_MAX_NUMBER,
]


# --------------------------------------------------------------------------
# Oracle built from pysol-cards
# --------------------------------------------------------------------------

def _pysolfc_generator(number):
    """PySolFC's construct_random(str(number)), with pysol-cards' classes."""
    if number < 32000:
        return pc_random.LCRandom31(number)
    return pc_random.MTRandom(number)


def _pysolfc_shuffled(decks, number):
    """PySolFC's Game.shuffle with pysol-cards' cards, generator, shuffle."""
    cards = pc_cards.createCards(decks)
    rng = _pysolfc_generator(number)
    if isinstance(rng, pc_random.LCRandom31):
        cards = pc_cards.ms_rearrange(cards)
    rng.reset()
    return rng.shuffle(cards)


class _PySolFCFortyThieves(pc_deal.Game):
    """pysol-cards Game with a Forty Thieves dealer (see module docstring)."""

    def __init__(self, number, spec, use_shuffle_helper=False):
        # Game.__init__ only accepts the games pysol-cards knows; set the
        # same attributes by hand.
        self.game_id = "forty_thieves"
        self.game_num = number
        self.which_deals = RandomBase.DEALS_PYSOLFC
        self.max_rank = 13
        self.spec = spec
        self.use_shuffle_helper = use_shuffle_helper

    def get_num_decks(self):
        return self.spec.decks

    def deal(self):
        if self.use_shuffle_helper:
            return pc_deal.Game.deal(self)  # pysol_cards.random.shuffle()
        cards = _pysolfc_shuffled(self.spec.decks, self.game_num)
        cards.reverse()  # top of the Talon first
        self.new_cards(cards)

    def forty_thieves(self):
        n = self.spec.columns
        self.board = pc_deal.Board(n, with_talon=True)
        self.cyclical_deal(n * self.spec.down_rows, n, flipped=True)
        self.cyclical_deal(n * self.spec.up_rows, n)
        self.add_all_to_talon()

    def layout(self):
        self.deal()
        self.forty_thieves()
        r = pc_cards.CardRenderer(True)

        def s(card):
            t = r.to_s(card)
            return f"({t[1:-1]})" if t.startswith("<") else t

        columns = [[s(c) for c in col] for col in self.board.columns.cols]
        return columns, [s(c) for c in self.board.talon], []


def _oracle_layout(number, game, use_shuffle_helper=False):
    return _PySolFCFortyThieves(number, PYSOL_GAMES[game], use_shuffle_helper).layout()


# --------------------------------------------------------------------------
# Generators and shuffle against pysol-cards
# --------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [1, 2, 24, 617, 31999, 2 ** 31 + 7, 2 ** 32 + 3])
def test_lcrandom31_matches_pysol_cards(seed):
    ours, theirs = LCRandom31(seed), pc_random.LCRandom31(seed)
    for n in list(range(103, 0, -1)) + [7, 1000, 65535]:
        assert ours.randint(0, n) == theirs.randint(0, n)


@pytest.mark.parametrize("seed", [32000, 100000, 123456789, 2 ** 64 + 1, PYSOL_MAX_NUMBER])
def test_mtrandom_matches_pysol_cards(seed):
    ours, theirs = MTRandom(seed), pc_random.MTRandom(seed)
    for n in list(range(155, 0, -1)) + [10 ** 9]:
        assert ours.randint(0, n) == theirs.randint(0, n)


@pytest.mark.parametrize("number", NUMBERS)
@pytest.mark.parametrize("decks", [1, 2, 3])
def test_shuffle_matches_pysolfc(number, decks):
    theirs = [r.to_s(c) for r in [pc_cards.CardRenderer(True)]
              for c in _pysolfc_shuffled(decks, number)]
    assert pysol_shuffle(pysol_create_cards(decks), number) == theirs


def test_generator_switch_boundary():
    assert isinstance(pysol_random(1), LCRandom31)
    assert isinstance(pysol_random(31999), LCRandom31)
    assert isinstance(pysol_random(32000), MTRandom)
    assert isinstance(pysol_random(PYSOL_MAX_NUMBER), MTRandom)


# --------------------------------------------------------------------------
# Layouts against the pysol-cards based oracle
# --------------------------------------------------------------------------

@pytest.mark.parametrize("number", NUMBERS)
def test_classic_layout_matches_pysolfc(number):
    assert pysol_layout(number, "classic") == _oracle_layout(number, "classic")


@pytest.mark.parametrize("game", sorted(PYSOL_GAMES))
@pytest.mark.parametrize("number", [1, 31999, 32000, 100000, 123456789, PYSOL_MAX_NUMBER])
def test_every_preset_matches_pysolfc(game, number):
    assert pysol_layout(number, game) == _oracle_layout(number, game)


@pytest.mark.parametrize("number", [n for n in NUMBERS if n != 32000])
def test_pysol_cards_shuffle_helper(number):
    """pysol_cards.random.shuffle() (used by its Game.deal) agrees too...

    ...for every number except 32000: the helper switches generators at
    ``game_num <= 32000`` while PySolFC's construct_random uses ``< 32000``.
    """
    for game in ("classic", "sixty_thieves"):
        assert pysol_layout(number, game) == _oracle_layout(number, game, True)


def test_pysol_cards_shuffle_helper_at_32000():
    """Document the one disagreement: PySolFC deals 32000 with MTRandom."""
    helper = _oracle_layout(32000, "classic", use_shuffle_helper=True)
    ours = pysol_layout(32000, "classic")
    if helper != ours:  # pysol-cards 0.24.0: its helper used LCRandom31
        cards = pysol_create_cards(2)
        lc = LCRandom31(32000).shuffle(list(cards))[::-1]
        assert [col[0] for col in helper[0]] == lc[:10]  # first row dealt


# --------------------------------------------------------------------------
# Structure and errors
# --------------------------------------------------------------------------

@pytest.mark.parametrize("game", sorted(PYSOL_GAMES))
def test_layout_shape(game):
    spec = PYSOL_GAMES[game]
    columns, stock, foundations = pysol_layout(4242, game)
    rows = spec.down_rows + spec.up_rows
    assert len(columns) == spec.columns
    for col in columns:
        assert len(col) == rows
        assert all(c.startswith("(") for c in col[:spec.down_rows])
        assert not any(c.startswith("(") for c in col[spec.down_rows:])
    assert foundations == []
    assert len(stock) == 52 * spec.decks - spec.columns * rows
    seen = Counter(c.strip("()") for col in columns for c in col) + Counter(stock)
    assert seen == Counter(pysol_create_cards(spec.decks))


def test_relaxed_uses_classic_deal():
    assert pysol_layout(77777, "relaxed") == pysol_layout(77777, "classic")


def test_lucas_refused():
    with pytest.raises(ValueError, match="13 columns of 4"):
        pysol_layout(1, "lucas")


@pytest.mark.parametrize("number", [0, -1, PYSOL_MAX_NUMBER + 1])
def test_number_out_of_range(number):
    with pytest.raises(ValueError):
        pysol_layout(number, "classic")


def test_unknown_preset_and_bad_type():
    with pytest.raises(ValueError):
        pysol_layout(1, "spider")
    with pytest.raises(TypeError):
        pysol_layout("1", "classic")
    with pytest.raises(TypeError):
        pysol_layout(True, "classic")


# --------------------------------------------------------------------------
# Literal vectors
# --------------------------------------------------------------------------

def _freecell_columns(number):
    """FreeCell's deal (8 columns, dealt like Forty Thieves' rows)."""
    deal_order = pysol_shuffle(pysol_create_cards(1), number)[::-1]
    return [" ".join(deal_order[i::8]) for i in range(8)]


# Independent sources: Microsoft FreeCell deals #1 and #24 (PySolFC numbers
# below 32000 are the Microsoft deals; #24 is the vector in fc-solve's
# t/t/board-gen-lib.py, #1 is the well-known first Microsoft deal), and
# PySolFC deal #100000 (MTRandom) as printed in the README of
# theodorepringle/PySolFC-deals ("make_pysol_freecell_board.py -F -t 100000
# freecell").  They pin the generators, the shuffle, the C-S-H-D creation
# order and "deal from the end of the shuffled list".
@pytest.mark.parametrize("number, expected", [
    (1, ["JD KD 2S 4C 3S 6D 6S", "2D KC KS 5C TD 8S 9C",
         "9H 9S 9D TS 4S 8D 2H", "JC 5S QD QH TH QS 6H",
         "5D AD JS 4H 8H 6C", "7H QC AS AC 2C 3D",
         "7C KH AH 4D JH 8C", "5H 3H 3C 7S 7D TC"]),
    (24, ["4C 2C 9C 8C QS 4S 2H", "5H QH 3C AC 3H 4H QD",
          "QC 9S 6H 9H 3S KS 3D", "5D 2S JC 5C JH 6D AS",
          "2D KD TH TC TD 8D", "7H JS KH TS KC 7C",
          "AH 5S 6S AD 8H JD", "7S 6C 7D 4D 8S 9D"]),
    (100000, ["5C 5S JD 7H QC 3S 3H", "2D 2H 8H 8S AH 9D 3C",
              "9H 6S 5H 7C 9C 7D 3D", "6D 4D QS JH 7S KS AC",
              "TH JS 2C 6H KH AS", "4S 9S 5D 2S JC 6C",
              "TD QD 4C AD TC QH", "4H TS 8C KC 8D KD"]),
])
def test_freecell_literal_vectors(number, expected):
    assert _freecell_columns(number) == expected


# Forty Thieves regression vectors: bottom card of each column (the first
# row dealt) and the first three stock cards.  Computed with this module and
# cross-checked against the pysol-cards oracle above (no independent Forty
# Thieves dump was found).
@pytest.mark.parametrize("number, bottom_row, stock_head", [
    (1, "3D 5H JC KH 5S 5H KC KC 8D JD", "3S 9C 7D"),
    (32000, "KH 9H TD 6D 3D 9C TH JS JS 6C", "5H JD 4S"),
    (123456789, "2S 4C JD 8H 4H AD AD KD KH 8H", "3S 5D 9S"),
])
def test_forty_thieves_literal_vectors(number, bottom_row, stock_head):
    columns, stock, _ = pysol_layout(number, "classic")
    assert (columns, stock, []) == _oracle_layout(number, "classic")
    assert " ".join(col[0] for col in columns) == bottom_row
    assert " ".join(stock[:3]) == stock_head
