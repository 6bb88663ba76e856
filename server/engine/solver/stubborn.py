"""Strong stubborn sets: expand only the commands of one closed set of places (partial-order reduction).

After Alkhazraji, Wehrle, Mattmueller and Helmert, "A Stubborn Set Algorithm
for Optimal Planning" (ECAI 2012) and Wehrle and Helmert, "Efficient
Stubborn Sets" (ICAPS 2014): a state expands only the commands of a set
``T`` such that some shortest winning play, if any exists, starts with a
command of ``T``. Here ``T`` is built from *places* rather than from single
commands, which makes the interference relation easy to state exactly for
this game; the price is that it is coarser than a per-command closure.

**The game the argument is about.** Commands without auto-play (the
search's own commands: every legal command but those that give the same
state up to column order), on states whose every card is face up, in a
variant without cards down from the foundations. ``d(x)``: the fewest
commands of a winning play from ``x`` (as in :mod:`.dominance`). The search
plays auto-play after each command; that is the dominance :mod:`.dominance`
states (a safe card going up never raises ``d``), so a search child
``autoplay(x.m)`` has ``d <= d(x.m)``.

**Places.** ``C_i`` (column ``i``: its cards), ``TAL`` (stock, waste and
redeals), ``F_s`` (the slots of suit ``s``), ``E`` (which columns are empty).
A command at a state *touches*: ``i-j`` onto a card: ``C_i, C_j`` (and ``E``
when it empties ``i``); ``i-f``: ``C_i`` and ``F_s`` of the card (and ``E``
when it empties ``i``); ``w-j``: ``TAL, C_j``; ``w-f``: ``TAL`` and ``F_s``
of the card; ``s`` and ``r``: ``TAL``; a command into an empty column:
``E`` and its source (never needed here: the reduction runs only on states
without an empty column). Whether a command applies and what it does
depends on the contents of the places it touches and, for a supermove onto
a card, on the number of empty columns (which no command of the argument
below changes). Foundation commands read only their suit's slots.

**Commutation lemma.** Two commands that apply at ``u`` and touch disjoint
places both apply after the other, in either order give the same state,
and still touch the same places (each reads and writes only its places).

**Theorem.** Let ``L`` be a set of places such that
(A) every winning play from ``s`` contains a command touching ``L`` (true for
any ``L`` holding a non-empty column or a non-empty talon: it must empty), and
(B) at every state ``u`` reached from ``s`` by commands none of which touches
``L``, every command that applies at ``u`` and touches ``L`` touches only
places of ``L``.
Let ``T`` be the commands applicable at ``s`` that touch ``L``. Then every
winning play from ``s`` of ``n`` commands can be reordered into one of ``n``
commands starting with a command of ``T``. Proof: let ``m`` be its first
command touching ``L`` (by A) and ``u`` the state before it. The commands
before ``m`` leave every place of ``L`` as it is at ``s``; by B ``m`` touches
only places of ``L``, so it applies at ``s`` with the same effect and
touches the same places there (``m`` is in ``T``), and by the lemma it
commutes with each earlier command in turn, from the last back to the
first. If ``T`` is empty the state cannot be won.

So ``d(s.m) = d(s) - 1`` for some ``m`` in ``T``, and a search expanding only
``T`` keeps exhaustion a proof, together with the lock fixpoint, the
stuck-waste rule and the dominance rules: in the theorem of
:mod:`.dominance` (take a seen winnable state ``x`` of least ``d``) a state
expanded by ``T`` alone has a seen child with smaller ``d``, one more case
of the same contradiction. Duplicate detection is covered by the same
argument (a child's key stands for every state equal up to column order,
all of the same ``d``).

**How ``L`` is closed (B), conservatively.** A card is *frozen* when it lies
in a place of ``L`` (no command before ``m`` moves it), *up* when it is on a
foundation (it never comes down), *free* otherwise. Starting from a seed
place, add places until:

1. ``C_i`` in ``L`` (top ``t``): ``F_s`` of ``t`` unless ``t`` can never be
   wanted before ``m`` (below); every place holding a free copy of a card
   that one of the cards movable from ``i`` onto a card (limit with no empty
   column) could be built on (``i-j`` onto a column outside ``L``); every
   place holding a free copy of a card that could be built on ``t``
   (``j-i`` or ``w-i`` from outside ``L``); and ``E``.
2. ``TAL`` in ``L`` with a waste top ``w``: ``F_s`` of ``w`` unless it can never
   be wanted; every place holding a free copy of a card ``w`` could be built
   on; and ``E``. (With an empty waste the talon's only command is the
   draw, which touches nothing else: ``L = {TAL}``, ``T = {s}``.)
3. ``F_s`` in ``L``: every place holding a free copy of a card of suit ``s``
   some slot takes now (its slots do not change before ``m``).
4. ``E`` in ``L``: every column outside ``L`` that could be emptied before
   ``m``. None could when the lock fixpoint (:mod:`.lock`) over the columns
   outside ``L`` (and the talon, when it is outside) finds no column that
   could be emptied: it over-approximates every play of commands touching
   no place of ``L``. Otherwise, column by column, one could when its bottom
   card ``b`` could be wanted, or some copy of a card ``b`` could be built on
   is free or a column top (frozen copies below a top or in the talon never
   get exposed before ``m``). Then no command before
   ``m`` empties a column (no column is empty at ``s``), so none fills one
   and the supermove limits do not change.

A card ``c`` *can never be wanted before m* when no slot of its suit is at
its rank index ``k`` and either ``F_s`` is in ``L`` (frozen) or for every
slot at a height ``h < k`` some rank ``h..k-1`` of the suit has no free copy
(only free cards go up before ``m``).

Each seed (each column, the talon) gives an ``L``; the state expands the
smallest ``T`` found. Variants with face-down cards, cards down from the
foundations or an empty column in the state are expanded in full, and so is
every state where auto-play can lose the game (a build rule other than in
suit with auto-play on: RULES.md section 5's safe card can take the slot
its twin needs, so the dominance above fails; ``Rules.safe_dominates``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..rules import move_limit, run_length
from .lock import _fixpoint
from .state import Rules, State

Child = tuple[str, State, int]


def _places(state: State) -> dict[int, list[tuple[int, bool]]]:
    """Card -> (place, exposed) of each copy off the foundations; columns are places 0..n-1, the talon n."""
    columns, _, _, stock, waste, _ = state
    places: dict[int, list[tuple[int, bool]]] = {}
    for x, column in enumerate(columns):
        last = len(column) - 1
        for i, card in enumerate(column):
            places.setdefault(card, []).append((x, i == last))
    talon = len(columns)
    for card in stock:
        places.setdefault(card, []).append((talon, False))
    for i, card in enumerate(waste):
        places.setdefault(card, []).append((talon, i == len(waste) - 1))
    return places


def closure(rules: Rules, state: State, seed: int, places: dict[int, list[tuple[int, bool]]]) -> tuple[set[int], bool]:
    """The places ``L`` closed from ``seed`` (rules 1-4 of the module docstring) and whether ``E`` is in it.

    Places: columns ``0..n-1``, the talon ``n``, the foundations of suit
    ``s`` ``n + 1 + s``. ``state``: no empty column, every card face up.
    """
    columns, _, foundations, _, waste, _ = state
    n = len(columns)
    talon = n
    d = rules.decks
    parents = rules.builds_on_reverse
    children = rules.builds_on
    limit = move_limit(rules.variant, 0, False)
    lam: set[int] = set()
    e_flag = False
    work = [seed]

    def free(card: int) -> list[int]:
        return [place for place, _ in places.get(card, ()) if place not in lam]

    def could_be_wanted(card: int) -> bool:
        suit, k = divmod(card, 13)
        heights = foundations[suit * d : suit * d + d]
        if k in heights:
            return True
        if n + 1 + suit in lam:
            return False
        return any(h < k and all(free(suit * 13 + r) for r in range(h, k)) for h in set(heights))

    while True:
        while work:
            place = work.pop()
            if place in lam:
                continue
            lam.add(place)
            if place < n:
                column = columns[place]
                top = column[-1]
                e_flag = True
                if could_be_wanted(top):
                    work.append(n + 1 + top // 13)
                run = min(run_length(column, 0, rules.variant), limit)
                for k in range(1, run + 1):
                    for parent in parents[column[-k]]:
                        work.extend(free(parent))
                for child in children[top]:
                    work.extend(free(child))
            elif place == talon:
                if waste:
                    top = waste[-1]
                    e_flag = True
                    if could_be_wanted(top):
                        work.append(n + 1 + top // 13)
                    for parent in parents[top]:
                        work.extend(free(parent))
            else:
                suit = place - n - 1
                for h in set(foundations[suit * d : suit * d + d]):
                    if h < 13:
                        work.extend(free(suit * 13 + h))
        if e_flag:
            outside = [z for z in range(n) if z not in lam]
            if outside and not never_emptied(rules, state, outside, talon in lam):
                for z in outside:
                    if could_empty(rules, columns[z][0], lam, places, talon, could_be_wanted):
                        work.append(z)
        if not work:
            return lam, e_flag


def never_emptied(rules: Rules, state: State, outside: list[int], talon_frozen: bool) -> bool:
    """Rule 4 for all columns ``outside`` L at once: True when no play of commands touching no place of L could
    empty any of them (the lock fixpoint of :mod:`.lock` over those columns alone, with the talon only when it is
    outside L). Sound because such a play moves cards only among those columns, the talon outside L and the
    foundations, which is what the fixpoint over-approximates (no column top of L is a target: a command onto it
    touches L). Not judged (False) with move rule ``sequence``, where the fixpoint does not apply."""
    if rules.sequence:
        return False
    columns, _, foundations, stock, waste, redeals = state
    if talon_frozen:
        drawn, pile = b"", []
    else:
        drawn, pile = (stock if not redeals else stock + waste), ([] if redeals else list(waste))
    return _fixpoint(rules, tuple(columns[z] for z in outside), foundations, drawn, pile) is not None


def could_empty(rules: Rules, bottom: int, lam: set[int], places: dict[int, list[tuple[int, bool]]], talon: int,
                could_be_wanted: Callable[[int], bool]) -> bool:
    """Rule 4 for a column outside ``lam`` whose bottom card is ``bottom``: could commands that touch no place of
    ``lam`` empty it? Yes when ``bottom`` could be wanted, or a copy of a card it could be built on is free or a
    column top (so it could be exposed where ``bottom`` could land)."""
    return could_be_wanted(bottom) or any(
        where not in lam or (exposed and where != talon)
        for parent in rules.builds_on_reverse[bottom] for where, exposed in places.get(parent, ()))


def touches(state: State, text: str, nxt: State) -> tuple[int, ...]:
    """The places (numbered as in :func:`closure`, ``E`` as ``-1``) the command ``text`` touches at ``state``.

    ``text`` is a command of the search's move generator; ``nxt`` the state
    it gives before auto-play (to see whether it empties its source).
    """
    columns, _, _, _, waste, _ = state
    n = len(columns)
    if text in ("s", "r"):
        return (n,)
    source, target = text.split("-")
    if source == "w":
        src = n
        card = waste[-1]
    else:
        src = int(source) - 1
        card = columns[src][-1]
    empties = src < n and not nxt[0][src]
    if target == "f":
        got = (src, n + 1 + card // 13)
    else:
        got = (src, int(target.split("x")[0]) - 1)
    return got + (-1,) if empties else got


def reduce(rules: Rules, state: State, children: Sequence[Child]) -> list[Child]:
    """The commands of the smallest ``T`` over every seed (the module docstring), in the generator's order.

    ``children``: every command of ``state`` as the search generates them
    (text, state before auto-play, exposed card). Returns them all when the
    state is out of scope (face-down cards, cards down from the
    foundations, an empty column, an auto-play that can lose the game:
    ``Rules.safe_dominates`` false) or no seed gives fewer. An empty list
    means the state cannot be won (every winning play would start in ``T``).
    """
    columns = state[0]
    if (len(children) <= 1 or rules.face_down or rules.variant.foundation_to_column or not all(columns)
            or not rules.safe_dominates):  # the argument takes auto-play for a dominance (module docstring)
        return list(children)
    places = _places(state)
    located = [touches(state, text, nxt) for text, nxt, _ in children]
    best = list(children)
    seeds = list(range(len(columns)))
    if state[3] or state[4]:
        seeds.append(len(columns))
    for seed in seeds:
        lam, e_flag = closure(rules, state, seed, places)
        if e_flag:
            lam = lam | {-1}
        chosen = [child for child, where in zip(children, located) if any(p in lam for p in where)]
        if len(chosen) < len(best):
            best = chosen
            if len(best) <= 1:
                break
    return best
