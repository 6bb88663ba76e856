"""The solver's compact state and its unchecked fast path (RULES.md sections 2-5).

The checked path for player input is :mod:`server.engine.rules`; this
module is the trusted fast path for search, kept apart from it (STYLE.md
habit 3). Every solution it finds is replayed through the checked path
before it is returned (:mod:`server.engine.solver.search`).

A state is a plain tuple ``(columns, hidden, foundations, stock, waste,
redeals_left)``:

- ``columns``: tuple of ``bytes``, one per column, card codes bottom to top;
- ``hidden``: tuple of face-down counts per column;
- ``foundations``: ``bytes`` of slot heights (cards on the slot, 0..13)
  grouped by suit: suit s owns ``decks`` entries starting at ``s * decks``,
  kept sorted. Every suit ends up with exactly ``decks`` slots (one per
  ace), so this is exact, and slots of one suit are interchangeable;
- ``stock`` and ``waste``: ``bytes`` (next draw first; bottom to top);
- ``redeals_left``.

The transposition key sorts the columns (positions equal up to the order
of columns are one state) and, through the height encoding, ignores the
order of foundation slots and which copy of a card lies where.
"""

from __future__ import annotations

from protocol.cards import rank_of, suit_of

from ..position import EMPTY_SLOT, Position
from ..variants import BuildRule, MoveRule, Variant

State = tuple[tuple[bytes, ...], tuple[int, ...], bytes, bytes, bytes, int]


class Rules:
    """Per-variant tables for the fast path (built once per solve)."""

    def __init__(self, variant: Variant, *, autoplay_on: bool = True) -> None:
        self.variant = variant
        self.decks = variant.decks
        self.columns = variant.columns
        self.builds_on = variant.builds_on
        self.builds_on_reverse = variant.builds_on_reverse
        self.face_down = variant.face_down > 0
        rule = variant.move_rule
        self.single = rule is MoveRule.SINGLE
        self.sequence = rule is MoveRule.SEQUENCE
        # Suits whose cards could be built on a card of suit s (for the safe-card rule).
        if variant.build_rule is BuildRule.SAME_SUIT:
            self.builder_suits: tuple[tuple[int, ...], ...] = tuple((s,) for s in range(4))
        elif variant.build_rule is BuildRule.ALTERNATE_COLOUR:
            self.builder_suits = ((1, 2), (0, 3), (0, 3), (1, 2))
        else:
            self.builder_suits = tuple(tuple(t for t in range(4) if t != s) for s in range(4))
        # With auto-play off, auto-play is the search's own dominance (a safe card going up never loses the game),
        # which needs every copy of the card's own predecessor up too: else, with two decks, a safe card can take
        # the one slot its twin needs (tests/engine/solver/test_solver.py TWO_KINGS). In suit the rule asks it
        # already; with auto-play on, auto-play is the game's rule (RULES.md section 5) and stays as it is.
        if not autoplay_on and variant.decks > 1:
            self.builder_suits = tuple(tuple(sorted({s, *suits})) for s, suits in enumerate(self.builder_suits))
        self.safe_dominates = variant.decks == 1 or all(s in suits for s, suits in enumerate(self.builder_suits))
        """Whether a safe card going up never loses the game (what the stubborn sets assume of auto-play)."""

        self._targets: dict[bytes, tuple[frozenset[int], frozenset[int]]] = {}

    def targets(self, foundations: bytes) -> tuple[frozenset[int], frozenset[int]]:
        """(cards some slot takes now, those of them that are safe), cached per foundation state."""
        cached = self._targets.get(foundations)
        if cached is None:
            d = self.decks
            wanted = frozenset(
                (i // d) * 13 + height for i, height in enumerate(foundations) if height < 13
            )
            safe = frozenset(card for card in wanted if is_safe(self, foundations, card))
            cached = self._targets[foundations] = (wanted, safe)
        return cached


def from_position(position: Position, variant: Variant) -> State:
    """Encode an engine position as a solver state."""
    d = variant.decks
    heights: list[list[int]] = [[] for _ in range(4)]
    for top in position.foundations:
        if top != EMPTY_SLOT:
            heights[suit_of(top)].append(rank_of(top))
    for s in range(4):
        heights[s] += [0] * (d - len(heights[s]))
        heights[s].sort()
    return (
        tuple(bytes(column) for column in position.tableau),
        tuple(position.hidden),
        bytes(h for s in range(4) for h in heights[s]),
        bytes(position.stock),
        bytes(position.waste),
        position.redeals_left,
    )


def key(state: State, face_down: bool) -> tuple[object, ...]:
    """Transposition key: the state up to the order of columns (and of slots, by encoding)."""
    columns, hidden, foundations, stock, waste, redeals = state
    if face_down:
        cols: tuple[object, ...] = tuple(sorted(zip(columns, hidden)))
    else:
        cols = tuple(sorted(columns))
    return (cols, foundations, stock, waste, redeals)


def accepts(foundations: bytes, decks: int, card: int) -> int:
    """Index in ``foundations`` of a slot of the card's suit at height rank-1, or -1."""
    base = (card // 13) * decks
    return foundations.find(card % 13, base, base + decks)


def place(foundations: bytes, decks: int, index: int) -> bytes:
    """``foundations`` with the slot at ``index`` one card higher, its suit kept sorted."""
    base = (index // decks) * decks
    segment = sorted(foundations[base:index] + bytes((foundations[index] + 1,)) + foundations[index + 1 : base + decks])
    return foundations[:base] + bytes(segment) + foundations[base + decks :]


def is_safe(rules: Rules, foundations: bytes, card: int) -> bool:
    """The safe-card rule of RULES.md section 5 on the height encoding.

    Aces and twos always; otherwise every copy of rank r-1 of each suit
    that could build on the card is up: the lowest slot of each such suit
    is at least r-1 high.
    """
    needed = card % 13  # r - 1
    if needed <= 1:
        return True
    d = rules.decks
    for suit in rules.builder_suits[card // 13]:
        if foundations[suit * d] < needed:
            return False
    return True


def take(columns: tuple[bytes, ...], hidden: tuple[int, ...], index: int, count: int) -> tuple[tuple[bytes, ...], tuple[int, ...], bool]:
    """Remove ``count`` top cards of column ``index``; flip a newly exposed face-down card."""
    column = columns[index][:-count]
    columns = columns[:index] + (column,) + columns[index + 1 :]
    if column and hidden[index] == len(column):
        return columns, hidden[:index] + (hidden[index] - 1,) + hidden[index + 1 :], True
    return columns, hidden, False


def autoplay(rules: Rules, state: State) -> tuple[State, list[str]]:
    """Move safe cards up in the engine's exact order (RULES.md section 5).

    Returns the new state and the moves as command notation (``w-f``,
    ``3-f``), for a game whose auto-play is off.
    """
    columns, hidden, foundations, stock, waste, redeals = state
    d = rules.decks
    moved: list[str] = []
    while True:
        safe = rules.targets(foundations)[1]
        if waste and waste[-1] in safe:
            foundations = place(foundations, d, accepts(foundations, d, waste[-1]))
            waste = waste[:-1]
            moved.append("w-f")
            continue
        for index, column in enumerate(columns):
            if column and column[-1] in safe:
                foundations = place(foundations, d, accepts(foundations, d, column[-1]))
                columns, hidden, _ = take(columns, hidden, index, 1)
                moved.append(f"{index + 1}-f")
                break
        else:
            break
    if not moved:
        return state, moved
    return (columns, hidden, foundations, stock, waste, redeals), moved
