"""Dominance pruning: a state with a buried inert card is no better than the state with that card up.

A card ``c`` (rank index ``k``: 0 for an ace) is *inert* when every slot of
its own suit and of every suit whose cards could be built on it (RULES.md
section 2; in classic its own suit) holds at least ``k`` cards: then every
copy of every card that could ever lie on ``c`` is up, so nothing can ever
be built on ``c`` again (the foundations only grow: variants with cards down
from the foundations are not searched). For such a card somewhere in a state
``s``, let ``t`` be ``s`` with that one card taken out and put up (a slot of
its suit at height ``k`` accepts it: see below), then auto-played as the
search does. Two rules of the complete search rest on the lemma below:

- **draw** (:func:`inert` on the next stock card): when the next stock card
  is inert, its ``t`` is exactly the state after the draw (the drawn card is
  safe and auto-play takes it up), so the state expands only the draw;
- **waste** (:func:`dominated`): a new state is not expanded when the ``t``
  of an inert card below its waste top (:func:`teleports`) was already seen.

The lemma holds as well for inert cards below a column's top and anywhere in
the stock, but those never gave a seen state in the measurements
(server/engine/solver/README.md), so they are not tried.

Why the condition: with a copy of a rank ``k - 1`` card still out, ``c`` may
be the only place that copy can ever lie, and taking ``c`` up can lose a
winnable position; and two states that differ only in their foundations
cannot both hold all the cards, so "the same columns with lower
foundations" relates no two states.

**Lemma** (``t`` is at least as good as ``s``). Let ``d(x)`` be the fewest
commands that win from ``x`` in the game without auto-play (every foundation
move a command). If ``s`` can be won, so can ``t``, with ``d(t) <= d(s) - 1``.
Proof: follow any winning play of ``s`` and keep the relation "``t`` is
``s`` without ``c`` in its place (column, waste or stock), with one more card
of ``c``'s suit and rank on a slot of height ``k``, and at least as many
redeals left" until ``c`` goes up in ``s``; map each command of ``s``:

- a command moving ``c`` (only as the top card of a column, the waste top
  or the next draw: nothing lies on ``c`` in order) is dropped, or, when a
  group of cards moves with ``c`` on top, the same command with one card
  fewer moves the rest; the supermove limit (RULES.md section 3) does not
  drop, because every column empty in ``s`` is empty in ``t`` and the
  source is not empty in either;
- a command onto a card never targets ``c`` (nothing may be built on it),
  so its target is a column top of ``t`` too; an empty target is empty in
  ``t`` too;
- a foundation command of a card ``x`` other than ``c``: every slot of the
  suit is at least ``k`` high and at most ``decks - 1`` rank-``k`` cards other
  than ``c`` are up, so while ``c`` is not up at least one slot is at exactly
  ``k``; ``t``'s slots are ``s``'s with one slot at ``k`` raised to ``k + 1``,
  so every slot that takes ``x`` in ``s`` has a twin in ``t`` (for a copy of
  ``c`` itself two slots are at ``k`` in ``s``, as two rank-``k`` cards are
  still out) and the relation holds after it;
- draws and redeals: ``t``'s talon is ``s``'s without ``c``; a redeal of ``s``
  whose waste is ``c`` alone is dropped (``t`` keeps one more redeal).

When ``c`` goes up in ``s`` (it must: ``s`` is won), ``s`` and ``t`` have the
same columns, talon and foundations and ``t`` at least the redeals, and the
rest of the play wins ``t`` as well. At least that one command was dropped.
Auto-play afterwards: each auto-played card is safe (RULES.md section 5) and
a safe top going up never raises ``d`` (for an inert card by the same
mapping; for a two whose other ace is still out, by replacing "that ace onto
the two" with "that ace up", the slot it needs being empty). That needs every
slot of the card's suit at its rank index too, which RULES.md's safe card
asks only in suit: elsewhere, with auto-play on, a safe card can take the
slot its twin needs, so the searches use these rules only where
``Rules.safe_dominates`` (with auto-play off the solver's own auto-play asks
it, :class:`.state.Rules`).

**Theorem** (both rules keep an exhausted search a proof). Suppose the
search skips every new state ``s`` for which the ``t`` of some inert card
below its waste top was already seen (whatever became of ``t``: expanded,
pruned by the lock check or by this rule), expands only the draw where the
next stock card is inert, and exhausts its frontier. Then the start cannot
be won. Proof: otherwise take, among the seen states that can be won, one
``x`` with the least ``d(x)``. If ``x`` was expanded with all its commands,
the child by the first command of a shortest win (or by a command giving the
same state up to column order, or, where the waste top is stuck, by the draw
the README's reordering moves first) has a smaller ``d`` and was seen; if
``x`` expanded only its draw, that child is its ``t`` and ``d(t) < d(x)``; if
``x`` was skipped by the waste rule, its seen ``t`` has ``d(t) < d(x)``; the
lock check skips only states that cannot be won. Each case contradicts the
choice of ``x``. So no refutation needs to be waited for: a seen dominator is
enough, and the rules learn nothing that could be wrong later.

The rules are only used where every card is face up (the search's face-down
variants would need the flip rule in the mapping) and only in the complete
search: they change which states are expanded, not what a solution is (every
solution is a real play, replayed through the engine as before).
"""

from __future__ import annotations

from collections.abc import Container, Iterator

from .state import Rules, State, accepts, autoplay, key, place


def inert(rules: Rules, foundations: bytes, card: int) -> bool:
    """True when nothing can ever be built on ``card`` again and a slot of its suit accepts it.

    ``foundations``: the height encoding of :mod:`.state`. Every slot of the
    card's suit and of each suit that builds on it holds at least the card's
    rank index (0 for an ace) cards, and ``accepts`` finds a slot at exactly
    that height (always, while the card itself is not up: see the module).
    """
    k = card % 13
    d = rules.decks
    suit = card // 13
    if foundations[suit * d] < k:
        return False
    for builder in rules.builder_suits[suit]:
        if foundations[builder * d] < k:
            return False
    return accepts(foundations, d, card) >= 0


def teleports(rules: Rules, state: State) -> Iterator[State]:
    """Each state that takes one inert card below the waste top of ``state`` up, auto-played (the module's ``t``).

    (The waste top itself is never inert in a searched state: it would be
    safe, and auto-play has taken it.) ``state``: a solver state of
    :mod:`.state` with no face-down card. Yields states in waste order,
    bottom first.
    """
    columns, hidden, foundations, stock, waste, redeals = state
    d = rules.decks
    for j in range(len(waste) - 1):
        card = waste[j]
        if inert(rules, foundations, card):
            up = place(foundations, d, accepts(foundations, d, card))
            yield autoplay(rules, (columns, hidden, up, stock, waste[:j] + waste[j + 1 :], redeals))[0]


def dominated(rules: Rules, state: State, seen: Container[object]) -> bool:
    """True when some state of :func:`teleports` has its key (:func:`.state.key`) in ``seen``.

    ``state``: past auto-play, every card face up. Cost: one auto-play and
    one key per buried inert card until the first hit.
    """
    return any(key(t, False) in seen for t in teleports(rules, state))
