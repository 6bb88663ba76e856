"""Lock detection: a cheap, exact proof that a state can never be won (RULES.md sections 2-5).

:func:`locked` computes, by a monotone fixpoint, an over-approximation of
what could ever happen from the state, assuming no column is ever empty
(the first column that could be emptied ends the check with no claim):

- a card *could be exposed* when every card now above it (in its column,
  or in the waste) could leave its place; stock cards always (each is the
  waste top once, when drawn); with a redeal left, waste cards too;
- copies could *go up*, counted per card type: an exposed type's count
  rises to that of its foundation predecessor (rank r-1, same suit; aces
  to the number of decks); an exposed card could go up when more copies of
  its predecessor could be up than its own type has up now. With two decks
  the count matters: with slots at 2 and 5 high, the 3 of that suit goes up
  only after the second 2;
- an exposed card could *move* when a card it may be built on could be a
  column top some day; it could *leave* when it could go up or move;
- a card type could be a column top when a copy of it in a column could be
  exposed, or a copy could move;
- a column could be emptied when every card in it could leave.

Whether a card could go up or move depends only on its type, so the sets
are kept per card type, and every type seen exposed is looked at again
until nothing changes.

Soundness (why ``True`` is a proof): take any play from the state and
induct over its commands. Every card that goes up was exposed at that
moment, so every card once above it had left its place before (by a
foundation or a tableau move, each already in the sets by induction),
and it went up as at least the (n+1)-th copy of its type, n the copies up
in the state (none comes down), which needs n+1 copies of its predecessor
up before: the slots of a suit hold one copy of each rank below their
height, so the k-th copy of rank r to go up finds a slot at r-1 only if k
copies of rank r-1 are up (the two-slot argument of relaxation.py's
``foundation`` group); so no type goes up more often than its count
says, by induction up the ranks; every card that moves onto
another card found a copy of that card on a column top; every column
that becomes empty lost its cards before, so the first one would be
found by the fixpoint. So whatever a play does is in the sets. If no
column could ever be emptied (in classic, with no empty column the
supermove limit is one card: RULES.md section 3, so runs do not move as a
unit), every column keeps a card that could never leave, so never go up:
no play wins.

The answer ``False`` claims nothing. Variants where runs move as a unit
without an empty column (move rule ``sequence``) or cards come down from
the foundations are not judged (always ``False``).
"""

from __future__ import annotations

from collections.abc import Callable

from .state import Rules, State


def locked(rules: Rules, state: State) -> bool:
    """True only when ``state`` can provably never be won (see the module docstring); cheap (no search).

    At the fixpoint every column either could be emptied (then no claim) or
    has a card that could never leave it, and so never go up: the state is
    locked exactly when every column has one.
    """
    if rules.sequence or rules.variant.foundation_to_column:
        return False
    columns, _, foundations, stock, waste, redeals = state
    if not all(columns):
        return False  # an empty column: anything may move
    drawn = stock if not redeals else stock + waste
    return _fixpoint(rules, columns, foundations, drawn, [] if redeals else list(waste)) is not None


def _fixpoint(rules: Rules, columns: tuple[bytes, ...], foundations: bytes, drawn: bytes,
              pile: list[int]) -> Callable[[int], bool] | None:
    """The fixpoint of the module docstring: ``drawn`` cards are each exposed once, ``pile`` is the waste
    (bottom to top) whose cards are exposed from the top while they could leave. None as soon as some column
    could be emptied; otherwise the final "could leave" test of a card type (the sets no longer change)."""
    parents = rules.builds_on_reverse  # card -> the cards it may be built on
    now = _on_foundations(rules, foundations)  # copies of each card type up in the state
    up = bytearray(now)  # copies of each card type up or that could go up (at most one per deck)
    decks = rules.decks
    top = bytearray(52)  # card types some copy of which could be a column top
    exposed = bytearray(52)  # card types some copy of which could be exposed (a column or waste top, or drawn)
    pool: list[int] = []  # exposed types whose ``up`` or ``top`` is not settled yet
    reach = [len(column) for column in columns]  # per column: cards above this index could all leave
    for card in drawn:  # each is exposed once (when drawn), whatever happens
        if not exposed[card]:
            exposed[card] = 1
            pool.append(card)

    def could_leave(card: int) -> bool:
        """A card can leave its pile when it could go up, or onto a card type that could be a column top."""
        return card % 13 == 0 or up[card - 1] > now[card] or any(top[parent] for parent in parents[card])

    changed = True
    while changed:
        changed = False
        pool.sort()  # foundation chains run up the ranks, tops down (a card's parent is a rank higher)
        for card in pool:
            most = decks if card % 13 == 0 else up[card - 1]
            if up[card] < most:
                up[card] = most
                changed = True
        for card in reversed(pool):
            if not top[card]:
                for parent in parents[card]:
                    if top[parent]:
                        top[card] = 1
                        changed = True
                        break
        pool = [card for card in pool if not (up[card] == decks and top[card])]
        while pile:  # the waste, top down, while its top could leave
            card = pile[-1]
            if not exposed[card]:
                exposed[card] = 1
                pool.append(card)
                changed = True
            if not could_leave(card):
                break  # could not leave (yet)
            pile.pop()
        for i, column in enumerate(columns):
            r = reach[i]
            while r:
                card = column[r - 1]
                if not top[card]:
                    top[card] = 1
                    changed = True
                if not exposed[card]:
                    exposed[card] = 1
                    pool.append(card)
                    changed = True
                if not could_leave(card):
                    break  # this card could never leave: the column stays blocked (for now)
                r -= 1
            if not r:
                return None  # the column could be emptied: no claim
            reach[i] = r
    return could_leave


def _on_foundations(rules: Rules, foundations: bytes) -> bytes:
    """Per card type, how many copies are on the foundations (cached per foundation state)."""
    cache: dict[bytes, bytes] = rules.__dict__.setdefault("_lock_up", {})
    got = cache.get(foundations)
    if got is None:
        d = rules.decks
        up = bytearray(52)
        for index, height in enumerate(foundations):
            base = (index // d) * 13
            for rank in range(height):
                up[base + rank] += 1
        got = cache[foundations] = bytes(up)
    return got


def _types(rules: Rules, cards: bytes) -> list[int]:
    """The distinct card types in ``cards``, in code order (cached)."""
    cache: dict[bytes, list[int]] = rules.__dict__.setdefault("_lock_types", {})
    got = cache.get(cards)
    if got is None:
        got = cache[cards] = sorted(set(cards))
    return got


def waste_top_stuck(rules: Rules, state: State) -> bool:
    """True only when no play without a draw can ever move the waste's top card (RULES.md sections 2-5).

    The same fixpoint as :func:`locked`, over the columns alone: no card is
    drawn, so the stock exposes nothing, and the waste's top is the card in
    question (the cards under it stay covered until it leaves). The first
    column that could be emptied ends the check with ``False`` (an empty
    column takes any card). At the fixpoint the top is stuck when it could
    not go up (its foundation predecessor could never go up) and no card it
    may be built on could ever be a column top. Soundness: the induction of
    the module docstring over any play of column moves from the state; the
    first waste move of such a play would need its top's predecessor up, a
    parent on a column top or an empty column, all of which the sets hold.

    Why it matters (server/engine/solver/README.md): when the top is stuck and
    the stock is not empty, every winning play starts with column moves and
    then a draw; the column moves neither touch the stock and the waste nor
    depend on them, so the draw can come first. The complete search then
    expands only the draw from such a state (exact: a win is reachable from
    the state exactly when it is reachable after the draw), where auto-play
    never loses the game (``Rules.safe_dominates``): the drawn card may be
    auto-played at once, and a safe card that can take its twin's slot could
    spoil the column moves moved after it. Not judged (always
    ``False``) where runs move as a unit without an empty column (move rule
    ``sequence``) or cards come down from the foundations.
    """
    if rules.sequence or rules.variant.foundation_to_column:
        return False
    columns, _, foundations, _, waste, _ = state
    if not waste or not all(columns):
        return False
    could_leave = _fixpoint(rules, columns, foundations, b"", [])  # no draw: nothing from stock or waste
    return could_leave is not None and not could_leave(waste[-1])
