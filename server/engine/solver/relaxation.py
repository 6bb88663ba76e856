"""Proofs of unsolvability from a relaxed model of the deal, handed to a constraint solver (RULES.md sections 1-5).

After Dang, Gent, Nightingale, Ulrich-Oltean and Waller, "Constraint Models
for Klondike" (CP 2025): the deal is modelled as a schedule of events with
precedences between them, relaxed so that every real winning play is one
of its solutions. When the model has no solution, the deal is unsolvable:
a proof, independent of any search. A solution of the model claims nothing.

The model (:func:`relax`) asks OR-Tools CP-SAT, an optional dependency
(``pip install 'forty-thieves-race[solver]'``), imported here only when a
model is solved (the solver workers), so without it everything else runs as
before and :func:`available` says ``False``.

**Events.** Number the elementary steps of a play 1, 2, 3, ...: a draw, a
run moved from one column to another (all its cards at the same step), a
waste card moved to a column, one card moved to a foundation (auto-play and
``finish`` move cards up one step each). Step 0 is the position itself.
For every card instance c still off the foundations the model has

- ``F[c]``: the step c goes to a foundation (a winning play puts every
  card up);
- ``L[c]``: the step c first leaves the place it has in the position (its
  column, or the waste; for a stock card, the step it leaves the waste it
  was drawn to);
- ``D[k]``: the step the stock's k-th card is drawn (waste cards: 0).

Only the order of these numbers matters to the constraints below (each is
``<``, ``<=`` or ``=`` between them, or an "or" of such), so a play's
numbers can be renumbered without changing which constraints hold: the
m-th draw becomes step ``m * gap`` and the other values between two draws
become consecutive steps after it, in their order. Between two draws a
play has at most 2n such values (``F`` and ``L`` of n cards; 3n with the
``M`` of group 6), so ``gap = 2n + 1`` (``3n + 1``) loses no play, and the
draws are constants: the waste's "before j is drawn" becomes a bound.

**Constraints, and why every winning play satisfies each one.** Take any
winning play and set the variables to its steps as defined above.

1. ``foundation`` (two slots per suit, each built ace to king): for each
   suit and rank r, the k-th card of rank r to go up (in time, counting
   cards already up as step 0) goes up after the k-th card of rank r-1
   (``min`` and ``max`` of the two copies' ``F``). Why: with slots of
   heights h1, h2 the number of rank-(r-1) cards up is the number of slots
   with height >= r-1 and that of rank-r cards the number with height >= r;
   a rank-r card fits a slot only if one has height exactly r-1, that is
   when strictly more rank-(r-1) cards than rank-r cards are up. So when the
   k-th rank-r card goes up, at least k rank-(r-1) cards are already up.
   Also ``L[c] <= F[c]``: a card leaves its place at the latest when it goes
   up.
2. ``column`` (a card leaves its column only after the cards above it):
   for c with d lying directly on it in the position, ``L[d] < L[c]``, or
   ``L[d] <= L[c]`` when d may be built on c (and c is face up). Why: until
   d leaves, d lies directly on c (nothing gets between two cards of a
   column), so c can move only as part of a run that holds d too (the same
   step, and then d is built on c) or after d has left.
3. ``target`` (a card goes onto a column only where the target is exposed):
   at step ``L[c]`` one of these holds: (a) c goes up, ``L[c] = F[c]``;
   (b) c moves as part of a run whose card under it is b, the card that
   lies under c in the position, ``L[c] = L[b]`` (c may be built on b);
   (c) c lands on a copy p of a card it may be built on that is a column
   top at that step: ``A[p] < L[c] < F[p]``, where ``A[p]`` is ``L`` of
   the card lying on p in the position (0 if p is a top now), or ``L[p]``
   when p is in the stock or waste; (d) c lands in an empty column:
   ``E < L[c]``, with ``E`` the first step at which some column is empty
   (0 if one is empty now; else the smallest ``L`` of a column's bottom
   card). Why: at its first departure c either goes up (a), or moves onto
   a column top. If c is not the lowest card of the moved run, the card
   under it is still b (c never left b) and b moves in the same step (b).
   Otherwise it lands on a top p or an empty column. p is not up yet
   (``L[c] < F[p]``); p is a top, so every card that lay on p in the
   position has gone, in an earlier step (``A[p] < L[c]``): if p never
   moved, the card on it left; if p moved, it left its place before
   (``L[p] < L[c]``), after the card on it; a stock or waste card reaches
   the columns only by leaving the waste (``L[p] < L[c]``). An empty column
   at step ``L[c]`` was emptied earlier, and until some column is emptied
   for the first time every column still holds its bottom card of the
   position, so the first emptying is the first departure of a bottom
   card: ``E < L[c]``. The relaxation is monotone: once available, a top
   or an empty column stays available (a card put on p later, a column
   filled again, are forgotten), which only admits more.
4. ``waste`` (last in, first out): for i drawn before j (positions in
   waste-then-stock order), ``L[i] < D[j]`` or ``L[j] < L[i]``. Why: once j
   is drawn it lies above i until j leaves; i (the waste top only) cannot
   leave in between. Initial waste cards count as drawn at step 0 in their
   order.
5. ``stock`` (the stock in its exact order): ``D[k] < D[k+1]`` and
   ``D[k] < L[k]`` (a stock card is drawn before it leaves the waste).
   Draws come from the top in order, one per step. With a redeal left,
   the draw order of a second pass differs from the first and a card may
   leave the waste in either pass, so with ``redeals_left > 0`` the
   ``waste`` and ``stock`` constraints are left out entirely (the
   "relaxed" stock: any stock or waste card may leave at any step >= 1),
   which admits every play.

6. ``cover`` (optional, not in :data:`DEFAULT_PARTS`): a card keeps down
   what it lands on, and columns are a resource. ``M[c]``, with
   ``L[c] <= M[c] <= F[c]``, is the step c stops lying where its first
   departure put it (``M = F`` if it went up then). If it landed on a card
   p (3b with b, or 3c), p stays down until then: ``M[c] < F[p]``. At
   ``M[c]`` c goes up, onto an exposed top q (as in 3c) or, unless it lay
   at the bottom of an empty column, into an empty column. The columns in
   use at any step are at most the tableau's column count: each original
   column until its bottom card's first departure, each empty column a
   card landed in at its first departure from then until its ``M``
   (a cumulative of intervals). Why: take a winning play and first drop
   every move of a whole column into an empty column (the positions after
   it are the same up to the order of columns, so the rest of the play
   still wins, renamed); in what is left, a card lying on p leaves p only
   by moving as the lowest card of a move or going up, and p cannot go up
   (nor move without it) while it lies there; a card at the bottom of a
   column leaves it only onto a top or up (a move into an empty column
   would move the whole column); a column holds one bottom card at a time,
   so the intervals of distinct columns overlap at most column-count deep.

7. ``bottoms`` (optional, not in :data:`DEFAULT_PARTS`; the part of 6
   about empty columns alone, without 6's ``M`` for cards that land on a
   card): a card whose first departure puts it into an empty column is
   that column's bottom until ``M[c]`` (``L[c] < M[c] <= F[c]``), when it
   goes up (``M = F``) or its run lands on an exposed copy p of a card it
   may be built on (``A[p] < M[c] < F[p]``, as in 3c); an original bottom
   card never lands in an empty column; each original column is in use
   until its bottom card's first departure, each such landing from
   ``L[c]`` to ``M[c]``, and at most the column count are in use at once (a
   cumulative). Why: normalise the winning play as in 6 (drop every move of
   a whole column into an empty column). Then an original bottom card never
   moves into an empty column (any move that takes it takes its whole
   column); a card lying at a column's bottom leaves it only as the lowest
   card of a move, onto an exposed top (the move into an empty column was
   dropped), or by going up; each column has one bottom at a time, and a
   column whose original bottom has not left is not empty, so the counted
   intervals of two cards overlap only in distinct columns. Later landings
   in empty columns (after a card's first departure) are not counted, which
   only admits more. ``M`` is 6's ``M`` for these cards, so ``gap`` is
   ``3n + 1`` with this group too. It is here because the monotone empty
   column of 3d is the model's hole on classic deals (README.md); CP-SAT
   finishes it rarely, so it is off by default. Given with ``cover``, the
   group is not built: ``cover``'s cumulative counts the same landings.

Every constraint holds in every winning play, so the conjunction does: no
solution means no winning play. Nothing above depends on how many cards a
command may move (single, supermove, sequence) or whether auto-play is on,
so the model holds for every move rule and with or without auto-play.

**Which variants it judges**: two decks (the foundation constraint counts
two slots per suit), cards never down from the foundations (else a card
could go up twice). So classic, relaxed, josephine, lucas, maria, streets,
indian, emperor, number_ten and rank_and_file; not sixty_thieves (three
decks) nor any variant with ``foundation_to_column`` (:func:`judges`).
Face-down cards do not matter: solvable means solvable knowing the whole
deal (RULES.md section 9); a face-down card is not part of a run (2, 3b).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from protocol.cards import rank_of, suit_of

from ..position import EMPTY_SLOT, Position
from ..variants import Variant

PARTS = frozenset({"foundation", "column", "target", "waste", "stock", "cover", "bottoms"})
"""The constraint groups of the module docstring; :func:`relax` can leave any of them out (tests of each alone)."""

DEFAULT_PARTS = PARTS - {"cover", "bottoms"}
"""What :func:`relax` uses unless told: ``cover`` and ``bottoms`` made the solver slower and proved no more deals
(README.md)."""

Verdict = Literal["unsat", "sat", "unknown"]


@dataclass(frozen=True, slots=True)
class Relaxed:
    """The answer of :func:`relax`.

    ``verdict``: ``unsat`` (the model has no solution: the position is
    unsolvable, a proof), ``sat`` (a solution exists: no claim) or
    ``unknown`` (not judged, or the solver's time ran out). ``seconds``: the
    solver's own wall time; ``reason``: a sentence for people.
    """

    verdict: Verdict
    seconds: float = 0.0
    reason: str = ""


def available() -> bool:
    """True when the optional constraint solver (OR-Tools CP-SAT) can be imported."""
    try:
        from ortools.sat.python import cp_model  # noqa: F401
    except ImportError:
        return False
    return True


def judges(variant: Variant) -> bool:
    """True for the variants the model holds for (module docstring): two decks, no cards down from a foundation."""
    return variant.decks == 2 and not variant.foundation_to_column


def relax(position: Position, variant: Variant, *, seconds: float = 10.0, parts: frozenset[str] = DEFAULT_PARTS,
          workers: int = 1) -> Relaxed:
    """Solve the relaxed model of ``position`` (module docstring) with CP-SAT.

    ``seconds``: the solver's wall-clock cap; ``parts``: the constraint groups
    to include (a subset of :data:`PARTS`; fewer parts only admit more, so an
    ``unsat`` is a proof with any subset); ``workers``: CP-SAT's search
    threads. Returns a :class:`Relaxed`; raises :class:`ImportError` when
    OR-Tools is not installed (see :func:`available`) and ``ValueError`` for
    an unknown part.
    """
    if not parts <= PARTS:
        raise ValueError(f"unknown constraint groups: {sorted(parts - PARTS)}")
    if not judges(variant):
        return Relaxed("unknown", reason=f"the relaxation does not judge {variant.name} (three decks or cards down"
                                         " from the foundations)")
    from ortools.sat.python import cp_model

    model, ok = _build(cp_model, position, variant, parts)
    if not ok:
        return Relaxed("unsat", reason="the position's foundations admit no order of the remaining cards")
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(seconds, 0.01)
    solver.parameters.num_workers = workers
    status = solver.solve(model)
    elapsed = solver.wall_time
    if status == cp_model.INFEASIBLE:
        return Relaxed("unsat", elapsed, "the relaxed model has no solution: no play wins")
    if status in (cp_model.FEASIBLE, cp_model.OPTIMAL):
        return Relaxed("sat", elapsed, "the relaxed model has a solution (no claim)")
    return Relaxed("unknown", elapsed, "the constraint solver's time ran out")


def _build(cp_model, position: Position, variant: Variant, parts: frozenset[str]):  # type: ignore[no-untyped-def]
    """The CP-SAT model of the module docstring; (model, False) if the foundations already contradict it.

    ``model.variables`` holds the step variables by name (``F``, ``L``, ``M`` per card instance, columns
    first, column by column bottom up, then the waste bottom up and the stock from the next draw; ``D`` the
    draws, constants, by the same pile index; ``gap``), for the tests that set them from a real play.
    """
    model = cp_model.CpModel()
    decks = variant.decks
    # Card instances off the foundations: (card, where) with where = ("col", column, depth) or ("pile", index) in
    # waste-then-stock order (index < len(waste): waste, bottom first; then the stock, next draw first).
    cards: list[int] = []
    where: list[tuple[Any, ...]] = []
    at: dict[tuple[Any, ...], int] = {}
    for ci, column in enumerate(position.tableau):
        for depth, card in enumerate(column):
            at[("col", ci, depth)] = len(cards)
            cards.append(card)
            where.append(("col", ci, depth))
    pile = tuple(position.waste) + tuple(position.stock)
    for index, card in enumerate(pile):
        at[("pile", index)] = len(cards)
        cards.append(card)
        where.append(("pile", index))
    n = len(cards)
    waste_len = len(position.waste)
    # Steps: the draws sit at fixed steps gap, 2*gap, ...; between two draws a play has at most 2n other values
    # (F and L of n cards), so renumbering any play this way keeps every relation (module docstring).
    cover = "cover" in parts and "target" in parts
    bottoms = "bottoms" in parts and "target" in parts and not cover  # cover holds bottoms' cumulative already
    gap = (3 if cover or bottoms else 2) * n + 1  # F, L (and M) of n cards
    horizon = gap * (len(position.stock) + 1)
    F = [model.new_int_var(1, horizon, f"F{i}") for i in range(n)]
    L = [model.new_int_var(1, horizon, f"L{i}") for i in range(n)]
    for i in range(n):
        model.add(L[i] <= F[i])

    # 1. foundation: the k-th card of rank r up after the k-th of rank r-1 (cards already up: step 0).
    up = [[0] * 13 for _ in range(4)]  # per suit and rank index: copies already up
    for top in position.foundations:
        if top != EMPTY_SLOT:
            for r in range(rank_of(top)):
                up[suit_of(top)][r] += 1
    by_type: dict[int, list[int]] = {}
    for i, card in enumerate(cards):
        by_type.setdefault(card, []).append(i)
    if "foundation" in parts:
        for suit in range(4):
            previous: list[Any] = []  # the sorted steps of the rank below (ints for cards up, expressions otherwise)
            for r in range(13):
                mine = by_type.get(suit * 13 + r, [])
                if up[suit][r] + len(mine) != decks:
                    raise ValueError("the position does not hold every card exactly once per deck")
                order: list[Any] = [0] * up[suit][r]
                if len(mine) == 1:
                    order.append(F[mine[0]])
                elif len(mine) == 2:
                    low = model.new_int_var(1, horizon, f"lo{suit}_{r}")
                    high = model.new_int_var(1, horizon, f"hi{suit}_{r}")
                    model.add_min_equality(low, [F[j] for j in mine])
                    model.add_max_equality(high, [F[j] for j in mine])
                    order += [low, high]
                elif mine:
                    raise ValueError("the relaxation models two decks")
                if r:
                    for k in range(decks):
                        below, above = previous[k], order[k]
                        if isinstance(above, int):
                            if not isinstance(below, int):
                                return model, False  # a card up above a card that is not: not a valid position
                        elif isinstance(below, int):
                            pass  # already up: step 0 < any step
                        else:
                            model.add(below < above)
                previous = order

    # A[p]: the step from which p is a column top (column cards: the card on it leaves; pile cards: it leaves).
    def exposed_from(p: int):  # type: ignore[no-untyped-def]
        w = where[p]
        if w[0] == "pile":
            return L[p]
        above = at.get(("col", w[1], w[2] + 1))
        return 0 if above is None else L[above]

    # 2. column precedences.
    if "column" in parts:
        for ci, column in enumerate(position.tableau):
            hidden = position.hidden[ci]
            for depth in range(len(column) - 1):
                c, d = at[("col", ci, depth)], at[("col", ci, depth + 1)]
                if depth >= hidden and column[depth + 1] in variant.builds_on[column[depth]]:
                    model.add(L[d] <= L[c])
                else:
                    model.add(L[d] < L[c])

    # 3. targets at the first departure; 6. what lies under a card until its second departure.
    bottom_cards = [at[("col", ci, 0)] for ci, column in enumerate(position.tableau) if column]
    bottom_set = set(bottom_cards)
    first_empty = None  # E; None when a column is empty now (E = 0)
    if len(bottom_cards) == len(position.tableau):
        first_empty = model.new_int_var(1, horizon, "E")
        model.add_min_equality(first_empty, [L[b] for b in bottom_cards])
    M = [model.new_int_var(1, horizon, f"M{i}") for i in range(n)] if cover or bottoms else []
    occupied = []  # intervals of column use (6, 7): original columns until their bottom leaves, then landings
    if cover or bottoms:
        for b in bottom_cards:
            occupied.append(model.new_interval_var(0, L[b], L[b], f"col{b}"))

    def tops(i: int, step, name: str) -> list[Any]:  # type: ignore[no-untyped-def]
        """Literals for "at ``step`` card i lands on an exposed copy of a card it may be built on"."""
        found = []
        for parent in variant.builds_on_reverse[cards[i]]:
            for p in by_type.get(parent, ()):
                if p == i:
                    continue
                onto = model.new_bool_var(f"{name}{i}_{p}")
                a = exposed_from(p)
                if not isinstance(a, int):
                    model.add(a < step).only_enforce_if(onto)
                model.add(step < F[p]).only_enforce_if(onto)
                found.append((onto, p))
        return found

    def into_empty(step, name: str):  # type: ignore[no-untyped-def]
        if first_empty is None:
            return model.new_constant(1)
        empty = model.new_bool_var(name)
        model.add(first_empty < step).only_enforce_if(empty)
        return empty

    if "target" in parts:
        for i in range(n):
            goes_up = model.new_bool_var(f"up{i}")
            model.add(L[i] == F[i]).only_enforce_if(goes_up)
            supports: list[Any] = []  # (literal, card now under i or None for an empty column)
            w = where[i]
            if w[0] == "col" and w[2] > 0 and w[2] - 1 >= position.hidden[w[1]]:
                b = at[("col", w[1], w[2] - 1)]
                if cards[i] in variant.builds_on[cards[b]]:
                    with_run = model.new_bool_var(f"run{i}")
                    model.add(L[i] == L[b]).only_enforce_if(with_run)
                    supports.append((with_run, b))
            supports += tops(i, L[i], "on")
            empty = into_empty(L[i], f"empty{i}")
            supports.append((empty, None))
            model.add_bool_or([goes_up] + [literal for literal, _ in supports])
            if bottoms and first_empty is not None:
                if i in bottom_set:
                    model.add(empty == 0)  # an original bottom into an empty column moves its whole column
                else:
                    # From L[i] the card is a column's bottom until M[i], when it goes up or its run lands on
                    # an exposed copy of a card it may be built on (7).
                    model.add(L[i] + 1 <= M[i]).only_enforce_if(empty)
                    model.add(M[i] <= F[i])
                    again_up = model.new_bool_var(f"mup{i}")
                    model.add(M[i] == F[i]).only_enforce_if(again_up)
                    onward = [again_up] + [literal for literal, _ in tops(i, M[i], "mon")]
                    model.add_bool_or(onward).only_enforce_if(empty)
                    size = model.new_int_var(0, horizon, f"stay{i}")
                    model.add(size == M[i] - L[i])
                    occupied.append(model.new_optional_interval_var(L[i], size, M[i], empty, f"in{i}"))
            if not cover:
                continue
            model.add(L[i] <= M[i])
            model.add(M[i] <= F[i])
            model.add(M[i] == F[i]).only_enforce_if(goes_up)
            for literal, under in supports:
                if under is not None:
                    model.add(M[i] + 1 <= F[under]).only_enforce_if(literal)  # the card under i stays down
                elif first_empty is not None:
                    size = model.new_int_var(0, horizon, f"stay{i}")
                    model.add(size == M[i] - L[i])
                    occupied.append(model.new_optional_interval_var(L[i], size, M[i], empty, f"in{i}"))
            # The second departure: up, onto an exposed top, or (not from an empty column) into an empty column.
            again_up = model.new_bool_var(f"mup{i}")
            model.add(M[i] == F[i]).only_enforce_if(again_up)
            onward = [again_up, goes_up] + [literal for literal, _ in tops(i, M[i], "mon")]
            if first_empty is not None:
                onward.append(into_empty(M[i], f"mempty{i}"))
                model.add_implication(empty, onward[-1].negated())
                model.add(L[i] + 1 <= M[i]).only_enforce_if(empty)
            model.add_bool_or(onward)
        if (cover or bottoms) and first_empty is not None:
            model.add_cumulative(occupied, [1] * len(occupied), len(position.tableau))

    # 4, 5: the waste and the stock, exact only without redeals (module docstring).
    draw: list[Any] = []
    if position.redeals_left == 0:
        draw = [0] * waste_len  # waste cards: drawn at step 0
        for k in range(waste_len, len(pile)):
            # The m-th draw at the fixed step m * gap (module docstring); without "stock" anywhere.
            m = k - waste_len + 1
            draw.append(m * gap if "stock" in parts else model.new_int_var(1, horizon, f"D{k}"))
        if "stock" in parts:
            for k in range(waste_len, len(pile)):
                model.add(L[at[("pile", k)]] > draw[k])
        if "waste" in parts:
            for i in range(len(pile)):
                li = L[at[("pile", i)]]
                for j in range(i + 1, len(pile)):
                    lj = L[at[("pile", j)]]
                    if j < waste_len:
                        model.add(lj < li)  # both in the waste now: j lies above i
                        continue
                    before = model.new_bool_var(f"w{i}_{j}")
                    # i leaves before j is drawn, or after j leaves.
                    model.add(li + 1 <= draw[j]).only_enforce_if(before)
                    model.add(lj < li).only_enforce_if(before.negated())
    model.add_all_different(F)  # redundant, true of every play: each step moves at most one card up
    model.variables = {"F": F, "L": L, "M": M, "D": draw, "gap": gap}
    return model, True
