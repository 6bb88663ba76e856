"""Reproduce PySolFC's numbered deals for the Forty Thieves family.

PySolFC (https://github.com/shlomif/PySolFC) numbers every deal; typing the
same number in PySolFC's "Select new game number" dialog for the same game
gives the same layout.  This module re-implements, with the standard library
only, exactly what PySolFC does for a game number N, so that our server can
offer ``deal --pysol N`` and anyone can cross-check the deal in PySolFC.
The engine does its own dealing: nothing here imports ``pysol_cards`` (the
PyPI package PySolFC takes its generators from); ``pysol_cards`` is used only
by the tests, as the oracle.

Sources (PySolFC master unless noted; pysol-cards 0.24.0):

* ``pysollib/pysolrandom.py``, ``construct_random(s)``: a game number
  ``0 <= N < 32000`` gets ``pysol_cards.random.LCRandom31(N)``, every other
  number gets ``pysol_cards.random.MTRandom(N)``.  (The "msN" string form,
  which forces LCRandom31, is not covered here.)
* ``pysol_cards/random.py`` and ``pysol_cards/random_base.py``: the two
  generators and the shuffle (described below).
* ``pysollib/game/__init__.py``: ``Game.createCards`` (unshuffled order),
  ``Game.shuffle`` (generator reset, ``ms_rearrange`` for LCRandom31 on a
  52-card deck only, shuffle, ``_shuffleHook``, cards appended to the Talon
  in list order), ``Game._startAndDealRowAndCards`` (one ``dealRow`` then
  ``talon.dealCards()``).
* ``pysollib/stack.py``: ``DealRow_StackMethods.dealToStacks`` (one card to
  each row, ``s.rows[0]`` first, always from the top of the Talon, i.e. the
  *last* element of ``talon.cards``), ``WasteTalonStack.dealCards`` (moves
  the Talon's top card face up onto the Waste).
* ``pysollib/games/fortythieves.py``: ``FortyThieves.startGame`` and the
  per-game ``rows`` / ``DEAL`` settings; ``pysollib/util.py``: suits
  ``CLUB=0, SPADE=1, HEART=2, DIAMOND=3``, ranks ``ACE=0 .. KING=12``.

Generators
----------
``LCRandom31`` (Microsoft FreeCell's ``rand()``; used for ``1 <= N < 32000``)::

    seedx = N                      # N < 2**32 here
    draw:   seedx = (seedx * 214013 + 2531011) & (2**33 - 1)
            r = (seedx >> 16) & 0x7fff          # | 0x8000 if N >= 2**31
    randint(0, n) = r % (n + 1)

``MTRandom`` (used for ``N >= 32000``): Python's Mersenne Twister seeded with
the integer N (``random.Random(N)``; the seed is ``abs(N)`` split into 32-bit
words for ``init_by_array``; PySolFC's ``random2`` back-port and Python 3's
``random`` agree for integer seeds), and::

    randint(0, n) = int(random() * (n + 1))     # random() = 53-bit double

PySolFC's ``MTRandom`` inherits ``randint``/``shuffle`` from
``pysol_cards.random_base.RandomBase``, not from ``random.Random``, so
``random.Random.shuffle``/``randint`` are *not* what it uses (Python 3's
versions draw differently).  Python guarantees ``random()`` reproduces the
same sequence for the same integer seed across versions.

Shuffle (``RandomBase.shuffle``)
--------------------------------
Fisher-Yates from the end of the list::

    for n in range(len(seq) - 1, 0, -1):
        j = randint(0, n)
        seq[n], seq[j] = seq[j], seq[n]

With LCRandom31 and exactly 52 cards PySolFC first applies ``ms_rearrange``
(re-orders C S H D into Microsoft's A-of-each-suit order) so that numbers
below 32000 equal the Microsoft FreeCell deals; with 104 or 156 cards
``ms_rearrange`` returns the list unchanged.

Unshuffled order and dealing
----------------------------
``createCards``: for each deck, for suit C, S, H, D, for rank A..K (card id
0, 1, 2, ...).  After the shuffle the list is added to the Talon in order,
so the **last** element of the shuffled list is the top of the Talon and is
dealt first.  ``dealRow`` puts one card on each row from left (``rows[0]``)
to right; repeated ``dealRow`` calls build the columns bottom card first.
Forty Thieves' ``startGame``: ``DEAL[0]`` face-down rows, then
``DEAL[1] - 1`` face-up rows, then one more face-up row and
``talon.dealCards()``, which turns the next Talon card onto the Waste.

Our conventions: a card is rank+suit (ranks ``A23456789TJQK``, suits
``CDHS``), face-down cards are written ``"(QS)"``, columns are listed bottom
to top, the stock is listed in draw order.  Our deal leaves the first stock
card on the stock, so our stock is PySolFC's Waste card followed by PySolFC's
Talon from the top down.  Equivalently, with ``d`` the shuffled list
reversed, the columns take ``d`` row by row and the stock is the rest of
``d`` in order.

PySolFC calls ``autoPlay()`` after the deal; with its default options
(auto-drop off) that moves nothing in these games, so the layout here is the
one PySolFC shows.
"""

from __future__ import annotations

import random as _stdlib_random
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from .position import Position
    from .variants import Variant

T = TypeVar("T")
"""Any item type: a shuffle or rearrangement keeps the items as they are."""

__all__ = [
    "PYSOL_GAMES",
    "PYSOL_LC_LIMIT",
    "PYSOL_MAX_NUMBER",
    "PYSOL_MIN_NUMBER",
    "LCRandom31",
    "MTRandom",
    "PySolGame",
    "ms_rearrange",
    "pysol_create_cards",
    "pysol_layout",
    "pysol_random",
    "pysol_shuffle",
]

#: Smallest valid game number.  Current PySolFC hands 0 to pysol-cards'
#: ``LCRandom31``, whose ``setSeed`` (checked in pysol-cards 0.24.0) requires
#: ``1 <= seed``, so 0 is not a valid game there (older PySolFC releases,
#: with their own LCRandom31, accepted 0 as Microsoft-style deal 0).
PYSOL_MIN_NUMBER = 1
#: Largest game number: ``RandomBase.MAX_SEED`` (10**20); PySolFC's random
#: numbers are drawn below it and "Next number" wraps after it.
PYSOL_MAX_NUMBER = 10 ** 20
#: Numbers below this use ``LCRandom31``; this and above use ``MTRandom``
#: (``construct_random``: ``if 0 <= seed < 32000``).  Note that
#: ``pysol_cards.random.shuffle()`` tests ``game_num <= 32000`` instead, so
#: that helper disagrees with PySolFC for the single number 32000; PySolFC
#: itself (what players see) uses the Mersenne Twister for 32000.
PYSOL_LC_LIMIT = 32000

#: PySolFC's suit order (``pysollib/util.py``) and rank order.
PYSOL_SUITS = "CSHD"
PYSOL_RANKS = "A23456789TJQK"


class _PySolRandomBase:
    """Common ``randint``/``shuffle`` of ``pysol_cards.random_base.RandomBase``."""

    def random(self) -> float:  # pragma: no cover - overridden
        raise NotImplementedError

    def randint(self, a: int, b: int) -> int:
        """Integer in ``[a, b]``: ``a + int(random() * (b + 1 - a))``."""
        return a + int(self.random() * (b + 1 - a))

    def shuffle(self, seq: list[T]) -> list[T]:
        """Shuffle ``seq`` in place (Fisher-Yates from the end) and return it.

        ``for n in range(len(seq) - 1, 0, -1): j = randint(0, n); swap(n, j)``
        """
        for n in range(len(seq) - 1, 0, -1):
            j = self.randint(0, n)
            seq[n], seq[j] = seq[j], seq[n]
        return seq


class LCRandom31(_PySolRandomBase):
    """PySolFC's ``LCRandom31`` (``pysol_cards.random.LCRandom31``).

    Microsoft's ``rand()`` linear congruential generator, used by PySolFC for
    game numbers ``1 <= N < 32000`` (where it reproduces Microsoft FreeCell's
    deals).  Seeds up to ``2**33 - 1`` are accepted as pysol-cards does (its
    "ms" extended deals), though only ``N < 32000`` reach it from a plain
    game number.
    """

    MAX_SEED = (1 << 33) - 1

    def __init__(self, seed: int) -> None:
        if not 1 <= seed <= self.MAX_SEED:
            raise ValueError(f"LCRandom31 seed out of range: {seed!r}")
        self.seed = seed
        self.seedx = seed if seed < 0x100000000 else seed - 0x100000000

    def _next(self, mask: int) -> int:
        self.seedx = (self.seedx * 214013 + 2531011) & self.MAX_SEED
        return (self.seedx >> 16) & mask

    def random(self) -> int:
        """Next raw draw (an int, as in pysol-cards, not a float).

        ``(seedx >> 16) & 0x7fff`` for seeds below ``2**32`` (``| 0x8000``
        for seeds of ``2**31`` and more); ``((seedx >> 16) & 0xffff) + 1``
        above ``2**32``.
        """
        if self.seed < 0x100000000:
            ret = self._next(0x7FFF)
            return ret if self.seed < 0x80000000 else (ret | 0x8000)
        return self._next(0xFFFF) + 1

    def randint(self, a: int, b: int) -> int:
        """Integer in ``[a, b]``: ``a + random() % (b + 1 - a)``."""
        return a + self.random() % (b + 1 - a)


class MTRandom(_PySolRandomBase):
    """PySolFC's ``MTRandom`` (``pysol_cards.random.MTRandom``).

    The Mersenne Twister MT19937 seeded with the game number, as Python's
    ``random.Random(N)`` does; used for game numbers ``N >= 32000``.  Only
    ``random()`` comes from the Twister: ``randint`` and ``shuffle`` are
    PySolFC's own (see :class:`_PySolRandomBase`).
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._mt = _stdlib_random.Random(seed)

    def random(self) -> float:
        """Next double in ``[0, 1)`` (MT19937 ``genrand_res53``)."""
        return self._mt.random()


def pysol_random(number: int) -> _PySolRandomBase:
    """Return the generator PySolFC builds for game number ``number``.

    Mirrors ``construct_random`` in ``pysollib/pysolrandom.py``:
    ``LCRandom31`` below :data:`PYSOL_LC_LIMIT` (32000), else ``MTRandom``.
    Raises ``ValueError`` outside ``[PYSOL_MIN_NUMBER, PYSOL_MAX_NUMBER]``.
    """
    _check_number(number)
    if number < PYSOL_LC_LIMIT:
        return LCRandom31(number)
    return MTRandom(number)


def pysol_create_cards(decks: int) -> list[str]:
    """PySolFC's unshuffled cards (``Game.createCards``), in our notation.

    For each deck, suits in PySolFC order C, S, H, D, ranks A..K.  Multiple
    decks are simply concatenated (identical cards are interchangeable).
    """
    return [r + s for _ in range(decks) for s in PYSOL_SUITS for r in PYSOL_RANKS]


def ms_rearrange(cards: list[T]) -> list[T]:
    """``pysol_cards.cards.ms_rearrange``: Microsoft order for 52 cards.

    Returns ``cards`` unchanged unless it has exactly 52 cards; otherwise
    the order AC AD AH AS 2C 2D ... (index ``i + j`` for rank ``i`` and
    ``j`` in 0, 39, 26, 13, i.e. suits C, D, H, S from PySolFC's C S H D).
    """
    if len(cards) != 52:
        return cards
    return [cards[i + j] for i in range(13) for j in (0, 39, 26, 13)]


def pysol_shuffle(cards: list[T], number: int) -> list[T]:
    """Shuffle a copy of ``cards`` the way PySolFC does for game ``number``.

    ``cards`` must be in PySolFC's creation order (see
    :func:`pysol_create_cards`).  Mirrors ``Game.shuffle``: pick the
    generator (:func:`pysol_random`), apply :func:`ms_rearrange` if it is
    ``LCRandom31`` (a no-op unless there are 52 cards), then Fisher-Yates
    from the end.  No ``_shuffleHook`` is applied (none of the games served
    here has one).  The result is the Talon bottom-to-top: its **last**
    element is the first card dealt.
    """
    gen = pysol_random(number)
    seq = list(cards)
    if isinstance(gen, LCRandom31):
        seq = ms_rearrange(seq)
    return gen.shuffle(seq)


@dataclass(frozen=True)
class PySolGame:
    """How PySolFC deals one of our presets.

    ``down_rows`` and ``up_rows`` are ``FortyThieves.DEAL``: face-down rows
    dealt first, then face-up rows (the last of which is followed by one card
    turned from the Talon onto the Waste).
    """

    pysol_id: int
    pysol_name: str
    decks: int
    columns: int
    down_rows: int
    up_rows: int


#: Our presets whose layout PySolFC deals identically
#: (``pysollib/games/fortythieves.py``: class, ``rows=``, ``DEAL``,
#: ``registerGame(GameInfo(id, ..., decks, ...))``).
PYSOL_GAMES: dict[str, PySolGame] = {
    # FortyThieves: rows=10, DEAL=(0, 4)
    "classic": PySolGame(13, "Forty Thieves", 2, 10, 0, 4),
    # Josephine(FortyThieves): only ROW_MAX_MOVE differs
    "josephine": PySolGame(462, "Josephine", 2, 10, 0, 4),
    # Maria(Streets): rows=9
    "maria": PySolGame(73, "Maria", 2, 9, 0, 4),
    # Indian: DEAL=(1, 2) -> 1 face-down row + 2 face-up rows
    "indian": PySolGame(69, "Indian", 2, 10, 1, 2),
    # Streets(FortyThieves): AC_RowStack, same deal
    "streets": PySolGame(76, "Streets", 2, 10, 0, 4),
    # NumberTen: DEAL=(2, 2)
    "number_ten": PySolGame(70, "Number Ten", 2, 10, 2, 2),
    # RankAndFile: DEAL=(3, 1)
    "rank_and_file": PySolGame(71, "Rank and File", 2, 10, 3, 1),
    # Emperor: DEAL=(3, 1)
    "emperor": PySolGame(310, "Emperor", 2, 10, 3, 1),
    # SixtyThieves: rows=12, DEAL=(0, 5), 3 decks
    "sixty_thieves": PySolGame(775, "Sixty Thieves", 3, 12, 0, 5),
}

#: Presets that play on another preset's deal.
_ALIASES = {"relaxed": "classic"}

#: Presets PySolFC cannot deal for us, with the reason.
_REFUSED = {
    "lucas": (
        "PySolFC's Lucas (game 125) keeps the aces in the deck and deals 13 "
        "columns of 4 with no _shuffleHook, while our lucas starts with the "
        "eight aces on the foundations and deals 13 columns of 3; no PySolFC "
        "game number reproduces our lucas layout"
    ),
}


def _check_number(number: int) -> None:
    if isinstance(number, bool) or not isinstance(number, int):
        raise TypeError(f"PySolFC game number must be an int, not {number!r}")
    if not PYSOL_MIN_NUMBER <= number <= PYSOL_MAX_NUMBER:
        raise ValueError(
            f"PySolFC game number must be between {PYSOL_MIN_NUMBER:d} and {PYSOL_MAX_NUMBER:d}, got {number:d}"
        )


def pysol_layout(number: int, game: str) -> tuple[list[list[str]], list[str], list[str]]:
    """Return (columns, stock, foundations) for PySolFC deal `number` of `game`.

    ``game`` is one of our preset names (``classic``, ``relaxed`` which uses
    classic's deal, ``josephine``, ``maria``, ``indian``, ``streets``,
    ``number_ten``, ``rank_and_file``, ``emperor``, ``sixty_thieves``).

    * ``columns``: one list per column, bottom card first, cards as ``"QS"``;
      face-down cards as ``"(QS)"``.
    * ``stock``: the remaining cards in draw order (first = next drawn);
      it starts with the card PySolFC turns onto its Waste.
    * ``foundations``: cards pre-dealt to the foundation slots, in slot
      order; always empty for the presets served here.

    The deal: ``d = reversed(pysol_shuffle(pysol_create_cards(decks), N))``;
    ``d`` is dealt one row at a time, left to right, ``down_rows`` rows face
    down then ``up_rows`` rows face up; the stock is the rest of ``d``.

    Raises ``ValueError`` for an unknown preset, for a preset whose PySolFC
    layout differs from ours (``lucas``), and for a number outside
    ``[1, 10**20]``; ``TypeError`` if ``number`` is not an int.
    """
    key = _ALIASES.get(game, game)
    if key in _REFUSED:
        raise ValueError(f"cannot deal {game!r} from a PySolFC game number: {_REFUSED[key]}")
    spec = PYSOL_GAMES.get(key)
    if spec is None:
        known = sorted(set(PYSOL_GAMES) | set(_ALIASES) | set(_REFUSED))
        raise ValueError(f"unknown preset {game!r} (known: {', '.join(known)})")
    _check_number(number)

    talon = pysol_shuffle(pysol_create_cards(spec.decks), number)
    deal_order = talon[::-1]  # top of the Talon first
    columns: list[list[str]] = [[] for _ in range(spec.columns)]
    k = 0
    for row in range(spec.down_rows + spec.up_rows):
        face_down = row < spec.down_rows
        for col in columns:
            card = deal_order[k]
            col.append(f"({card})" if face_down else card)
            k += 1
    stock = deal_order[k:]
    return columns, stock, []


def pysol_position(number: int, variant: Variant) -> Position:
    """PySolFC's deal ``number`` for ``variant`` as an engine :class:`~server.engine.position.Position`.

    PySolFC turns the first stock card onto the waste at the start; ours
    leaves it on the stock (it is the first card drawn). Raises
    :class:`ValueError` as :func:`pysol_layout` does.
    """
    from .text import parse_position

    columns, stock, foundations = pysol_layout(number, variant.name)
    lines = [
        "Foundations: " + " ".join(foundations + ["-"] * (variant.slots - len(foundations))),
        "Stock: " + " ".join(stock),
        "Waste:",
        f"Redeals left: {variant.redeals}",
    ]
    lines += [f"{i}: {' '.join(column)}" for i, column in enumerate(columns, 1)]
    return parse_position("\n".join(lines), variant)
