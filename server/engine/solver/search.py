"""Best-first search for a winning command list (RULES.md section 9).

See :func:`solve`. The search works on :mod:`.state` tuples; it knows the
whole deal, stock order included, as section 9 allows. A stage
(:func:`_search`) runs in the optional C extension (``_csolver.c``) when
:func:`implementation` says so: the same nodes in the same order, about 20
times as many per second (README.md); this module stays the reference.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from ..game import Game
from ..position import Position
from ..rules import move_limit, run_length
from ..variants import BuildRule, MoveRule, Variant
from .dominance import dominated, inert
from .lock import locked, waste_top_stuck
from .state import Rules, State, accepts, autoplay, from_position, key, place, take
from .stubborn import reduce as stubborn_reduce

Outcome = Literal["solved", "unsolvable", "unknown"]

try:  # the optional C accelerator of one search stage (_csolver.c; pyproject.toml builds it when a compiler is there)
    from ._csolver import search as _csolver_search
except ImportError:  # pragma: no cover - depends on the build
    _csolver_search = None

Link: TypeAlias = "tuple[tuple[str, tuple[str, ...]], Link] | None"
"""A path of the search from its last step back: ``((command, its auto-play moves), the path before)``."""


@dataclass(frozen=True, slots=True)
class Budget:
    """How much a search may spend.

    ``nodes``: states expanded (reproducible: the same input and node
    budget always give the same answer). ``seconds``: an optional
    wall-clock cap, measured with the ``clock`` the caller passes to
    :func:`solve` (the engine reads no clock itself; the C search, which
    runs only when that clock is ``time.monotonic`` or none, turns the
    seconds it is given into a deadline on the same monotonic clock). ``states``:
    the most states kept in the transposition table (the memory bound;
    about 1 KB each in the pure search, about 110 bytes in the C search, table included).
    """

    nodes: int = 200_000
    seconds: float | None = None
    states: int = 2_000_000


@dataclass(frozen=True, slots=True)
class Result:
    """A solver answer.

    ``result``: ``solved`` (``moves`` is a winning command list in the
    pinned notation, replayed through the engine before being returned),
    ``unsolvable`` (every reachable state was searched: a proof) or
    ``unknown`` (the budget ran out). ``nodes``: states expanded;
    ``states``: distinct states seen; ``autoplay``: the auto-play setting
    the moves are for; ``solver``: which implementation searched, ``"c"``
    (the optional extension) or ``"python"`` (the pure reference), see
    :func:`implementation`.
    """

    result: Outcome
    moves: tuple[str, ...] = ()
    nodes: int = 0
    states: int = 0
    autoplay: bool = True
    reason: str = ""
    extra: dict[str, object] = field(default_factory=dict)
    solver: str = "python"


RULE_CODES = {MoveRule.SINGLE: 0, MoveRule.SUPERMOVE: 1, MoveRule.SEQUENCE: 2}
"""A move rule as _csolver.c's ``rule`` argument (its search and its prover take the same codes)."""


def implementation(position: Position, variant: Variant, *, pure: bool = False) -> str:
    """Which search :func:`solve` and :func:`find_solution` run for this input: ``"c"`` or ``"python"``.

    ``"c"`` when the extension ``_csolver`` is built, ``pure`` is false
    (true forces the pure reference: the caller's configuration, e.g. the
    server's ``FTR_SOLVER=python``, read by its settings, not here), and the input is within what the C search supports: 2 decks,
    build in suit (RULES.md section 7), no face-down card in the position, no
    cards down from the foundations, at most 16 columns of at most 19 cards
    and 104 stock and waste cards, 0-255 redeals left. Everything else runs the pure search,
    which is the reference: the C search repeats it node for node
    (README.md, tests/engine/solver/test_csolver.py).
    """
    if _csolver_search is None or pure:
        return "python"
    if (variant.decks != 2 or variant.build_rule is not BuildRule.SAME_SUIT or variant.foundation_to_column
            or any(position.hidden) or not 1 <= len(position.tableau) <= 16
            or any(len(column) > 19 for column in position.tableau)
            or len(position.stock) + len(position.waste) > 104 or not 0 <= position.redeals_left <= 255):
        return "python"
    return "c"


def _real_clock(clock: Callable[[], float] | None) -> bool:
    """True for no clock or ``time.monotonic`` (told by name: the engine imports no clock module), the clock
    the C search keeps time on itself."""
    return clock is None or (getattr(clock, "__module__", None) == "time" and getattr(clock, "__name__", None) == "monotonic")


class _Expander:
    """Move generation and scoring for one solve, with per-column caches.

    A column's run length and its count of breaks (face-up cards not lying
    on a card they could be built on, plus face-down cards) depend only on
    the column's bytes and face-down count, so they are cached by those.
    """

    def __init__(self, rules: Rules, params: tuple[int, ...] = (20, 16, 5, 12, 0), whole_runs: bool = False) -> None:
        self.rules = rules
        self.whole_runs = whole_runs
        self.params = params
        self.depth_cache: dict[bytes, dict[int, int]] = {}
        self.info: dict[object, tuple[int, int]] = {}

    def column_info(self, column: bytes, h: int) -> tuple[int, int]:
        """(run length, breaks) of a non-empty column."""
        k: object = column if not h else (column, h)
        got = self.info.get(k)
        if got is None:
            table = self.rules.builds_on
            n = len(column)
            run = run_length(column, h, self.rules.variant)
            breaks = h
            for j in range(max(h, 1), n):
                if column[j] not in table[column[j - 1]]:
                    breaks += 1
            got = self.info[k] = (run, breaks)
        return got

    def score(self, state: State) -> int:
        """Heuristic value of a state, higher is better (see the module docstring)."""
        columns, hidden, foundations, stock, waste, _ = state
        empty = 0
        breaks = 0
        info = self.column_info
        for index, column in enumerate(columns):
            if column:
                breaks += info(column, hidden[index])[1]
            else:
                empty += 1
        a, b, c, w, e = self.params
        value = a * sum(foundations) + b * empty - c * breaks - w * len(waste)
        if e:
            buried = 0
            depths = self.depths
            for card in self.rules.targets(foundations)[0]:
                best = 99
                i = waste.rfind(card)
                if i >= 0:
                    best = len(waste) - 1 - i
                i = stock.find(card)
                if i >= 0 and i + 1 < best:
                    best = i + 1
                for column in columns:
                    if column:
                        got = depths(column).get(card)
                        if got is not None and got < best:
                            best = got
                buried += best
            value -= e * buried
        return value

    def depths(self, column: bytes) -> dict[int, int]:
        """Card -> cards above its topmost copy in ``column`` (cached)."""
        got = self.depth_cache.get(column)
        if got is None:
            got = {}
            n = len(column)
            for i, card in enumerate(column):
                got[card] = n - 1 - i
            self.depth_cache[column] = got
        return got

    def moves(self, state: State) -> list[tuple[str, State, int]]:
        """Every command from ``state`` (before auto-play), as (notation, next state, exposed).

        Exact: nothing that could matter is left out, so an exhausted search
        is a proof. Moving a whole column into an empty one is skipped (the
        same state up to column order), and of several empty columns only
        the first is a target (the others give the same state up to column
        order).

        ``exposed`` tells the search where auto-play could find a safe card
        (see :func:`_search`): ``FULL`` after a foundation move (the safe set
        changed), else the one card the command newly exposes (a column's
        new top, face-down or not, or the waste's new top), or ``NONE``.
        """
        rules = self.rules
        columns, hidden, foundations, stock, waste, redeals = state
        d = rules.decks
        result: list[tuple[str, State, int]] = []
        wanted = rules.targets(foundations)[0]
        # To the foundations.
        if waste and waste[-1] in wanted:
            slot = accepts(foundations, d, waste[-1])
            result.append(("w-f", (columns, hidden, place(foundations, d, slot), stock, waste[:-1], redeals), FULL))
        for i, column in enumerate(columns):
            if column and column[-1] in wanted:
                slot = accepts(foundations, d, column[-1])
                cols, hid, _ = take(columns, hidden, i, 1)
                result.append((f"{i + 1}-f", (cols, hid, place(foundations, d, slot), stock, waste, redeals), FULL))
        under: dict[int, list[int]] = {}
        empty: list[int] = []
        for j, column in enumerate(columns):
            if column:
                under.setdefault(column[-1], []).append(j)
            else:
                empty.append(j)
        onto_limit = move_limit(rules.variant, len(empty), False)
        empty_limit = move_limit(rules.variant, len(empty), True) if empty else 0
        reverse = rules.builds_on_reverse
        info = self.column_info
        # Column to column.
        for i, column in enumerate(columns):
            if not column:
                continue
            h = hidden[i]
            run = info(column, h)[0]
            first = run if self.whole_runs else 1
            n = len(column)
            for k in range(first, min(run, onto_limit) + 1):
                for top in reverse[column[-k]]:
                    for j in under.get(top, ()):
                        if j != i:
                            cols, hid, _ = take(columns, hidden, i, k)
                            cols = cols[:j] + (cols[j] + column[-k:],) + cols[j + 1 :]
                            result.append((f"{i + 1}-{j + 1}", (cols, hid, foundations, stock, waste, redeals),
                                           column[n - k - 1] if k < n else NONE))
            if empty:
                j = empty[0]
                for k in range(first, min(run, empty_limit) + 1):
                    if k == n and h == 0:
                        break  # the whole column: same state up to column order
                    cols, hid, _ = take(columns, hidden, i, k)
                    cols = cols[:j] + (column[-k:],) + cols[j + 1 :]
                    text = f"{i + 1}-{j + 1}" if k == 1 else f"{i + 1}-{j + 1}x{k}"
                    result.append((text, (cols, hid, foundations, stock, waste, redeals),
                                   column[n - k - 1] if k < n else NONE))
        # Waste to column.
        if waste:
            card = waste[-1]
            targets = [j for top in reverse[card] for j in under.get(top, ())]
            if empty:
                targets.append(empty[0])
            rest = waste[:-1]
            exposed = rest[-1] if rest else NONE
            for j in targets:
                cols = columns[:j] + (columns[j] + waste[-1:],) + columns[j + 1 :]
                result.append((f"w-{j + 1}", (cols, hidden, foundations, stock, rest, redeals), exposed))
        # Stock.
        if stock:
            result.append(("s", (columns, hidden, foundations, stock[1:], waste + stock[:1], redeals), stock[0]))
        elif waste and redeals > 0:
            result.append(("r", (columns, hidden, foundations, waste, b"", redeals - 1), NONE))
        return result


FULL = -2
"""``exposed`` of a foundation move: every top must be looked at again."""
NONE = -1
"""``exposed`` of a command that exposes no card."""


def _won(state: State) -> bool:
    return not state[3] and not state[4] and not any(state[0])


def _search(
    position: Position,
    variant: Variant,
    budget: Budget = Budget(),
    *,
    autoplay_on: bool = True,
    clock: Callable[[], float] | None = None,
    weight: int = 0,
    lifo: bool = False,
    params: tuple[int, ...] = (),
    incomplete: bool = False,
    locks: bool = False,
    lock_every_state: bool = True,
    dominance: bool = False,
    draw_inert: bool = False,
    pure: bool = False,
    reduction: str = "",
) -> Result:
    """One best-first search (a stage of :func:`solve`).

    ``weight`` (depth weight, weighted A*), ``lifo`` (tie order) and
    ``params`` (score weights: foundation cards, empty columns, breaks,
    waste cards, buried needed cards) are tuning knobs; the defaults are
    the measured best (README.md).
    ``autoplay_on`` is the game's auto-play setting: with it on, safe cards
    go up after every command exactly as the engine does it; with it off,
    the same safe moves are made by the solver (a dominance: a safe card is
    never needed in the tableau) and written out as commands. ``clock``
    (e.g. ``time.monotonic``) enables ``budget.seconds``. ``locks``: new
    states that :func:`.lock.locked` proves lost are not expanded (checked on
    every one, or with ``lock_every_state`` false after draws only, the
    rule of the layered prover of prover.py), and a state whose
    waste top :func:`.lock.waste_top_stuck` proves unmovable before the next
    draw expands only the draw (both exact). ``dominance``: a new state
    that :func:`.dominance.dominated` finds dominated by a state already
    seen is not expanded (exact for an exhausted search, see that module);
    ``Result.extra["dominated"]`` counts them. ``draw_inert``: a state
    whose next stock card is inert (:func:`.dominance.inert`) expands only
    the draw, whose child dominates it (exact, same module);
    ``Result.extra["draw_only"]`` counts them. ``pure``: run the pure search
    even where the C search could (:func:`implementation`). ``reduction``:
    ``"stubborn"`` expands, in a state no draw-only rule applies to, only
    the commands of a strong stubborn set (:func:`.stubborn.reduce`; exact,
    see that module; the pure search only); ``Result.extra["stubborn_cut"]``
    counts the commands left out, ``["stubborn_states"]`` the states where
    some were.

    Greedy best-first search on a heuristic (foundation cards, empty columns,
    breaks in the columns, waste size) over a transposition table of canonical
    keys. Exhausting the reachable states proves the deal unsolvable.
    Returns a :class:`Result`; a ``solved`` result's moves have been
    replayed to a win by :class:`server.engine.game.Game`.
    Raises :class:`AssertionError` only if a found solution fails that
    check (a solver bug, never a player's).
    """
    if variant.foundation_to_column:
        return Result("unknown", nodes=0, autoplay=autoplay_on,
                      reason="the solver does not search variants whose cards come down from the foundations")
    # The C search keeps time on CLOCK_MONOTONIC itself: it runs when no clock is given (no time cap) or the
    # clock is that one; with any other clock (a test's) the pure search runs, so the caller's clock governs.
    buried = params[4] if params is not None and len(params) > 4 else 0  # the C search has no buried-card term
    if reduction not in ("", "stubborn"):
        raise ValueError(f"unknown reduction {reduction!r}: 'stubborn' exists")
    if reduction:
        pure = True  # the C search has no stubborn sets
    if weight == 0 and buried == 0 and _real_clock(clock) and implementation(position, variant, pure=pure) == "c":
        return _c_search(position, variant, budget, autoplay_on=autoplay_on, clock=clock, lifo=lifo,
                         params=params or (20, 16, 5, 12, 0), incomplete=incomplete, locks=locks,
                         lock_every_state=lock_every_state,
                         dominance=dominance, draw_inert=draw_inert)
    rules = Rules(variant, autoplay_on=autoplay_on)
    expander = _Expander(rules, params or (20, 16, 5, 12, 0), whole_runs=incomplete)
    face_down = rules.face_down
    start = from_position(position, variant)
    start, initial = autoplay(rules, start)
    prefix = tuple(initial) if not autoplay_on else ()
    deadline = None
    if budget.seconds is not None and clock is not None:
        deadline = clock() + budget.seconds
    seen = {key(start, face_down)}
    nodes = 0
    pruned = 0  # new states dominated by a seen one (dominance)
    draw_only = 0  # states expanded by their draw alone (draw_inert)
    cut = reduced = 0  # commands left out by the stubborn sets, states where some were
    # The draw-only rules and the dominance take the search's auto-play for a dominance (lock.waste_top_stuck:
    # the draw moved first; .dominance): not so where the game's auto-play can lose it (Rules.safe_dominates).
    dominance = dominance and not face_down and rules.safe_dominates
    draw_inert = draw_inert and not face_down and rules.safe_dominates
    stuck = locks and rules.safe_dominates
    if _won(start):
        return _verified(position, variant, prefix, autoplay_on, nodes, len(seen))
    if locks and locked(rules, start):
        return _exhausted(incomplete, nodes, len(seen), autoplay_on)
    score = expander.score
    moves = expander.moves
    targets = rules.targets
    # Heap entries: (priority, tiebreak, depth, state, path). Lower priority first.
    heap: list[tuple[int, int, int, State, Link]] = [(-score(start), 0, 0, start, None)]
    counter = 0
    sign = -1 if lifo else 1
    while heap:
        if nodes >= budget.nodes:
            return Result("unknown", nodes=nodes, states=len(seen), autoplay=autoplay_on, reason="node budget spent",
                          extra=_extra(pruned, draw_only, reduction, cut, reduced))
        if deadline is not None and nodes % 256 == 0 and clock is not None and clock() > deadline:
            return Result("unknown", nodes=nodes, states=len(seen), autoplay=autoplay_on, reason="time limit reached",
                          extra=_extra(pruned, draw_only, reduction, cut, reduced))
        if len(seen) > budget.states:
            return Result("unknown", nodes=nodes, states=len(seen), autoplay=autoplay_on,
                          reason="state memory bound reached", extra=_extra(pruned, draw_only, reduction, cut, reduced))
        _, _, depth, state, path = heapq.heappop(heap)
        nodes += 1
        depth += 1
        safe = targets(state[2])[1]
        children = moves(state)
        if draw_inert and state[3] and inert(rules, state[2], state[3][0]):
            children = children[-1:]  # only the draw, whose child dominates the state (exact: see .dominance)
            draw_only += 1
        elif stuck and state[3] and waste_top_stuck(rules, state):
            children = children[-1:]  # only the draw (the last command generated): exact, see lock.waste_top_stuck
        elif reduction:
            kept = stubborn_reduce(rules, state, children)  # exact: see .stubborn
            if len(kept) < len(children):
                cut += len(children) - len(kept)
                reduced += 1
                children = kept
        for text, nxt, exposed in children:
            # Every state in the search is past auto-play (no safe card on a top), so only a
            # foundation move (new safe set) or a newly exposed safe card can start it again.
            if exposed == FULL or (exposed >= 0 and exposed in safe):
                nxt, auto = autoplay(rules, nxt)
            else:
                auto = []
            k = key(nxt, face_down)
            if k in seen:
                continue
            seen.add(k)
            step = (text, tuple(auto)) if not autoplay_on else (text, ())
            link = (step, path)
            if _won(nxt):
                won = _verified(position, variant, prefix + _unwind(link), autoplay_on, nodes, len(seen))
                if reduction:
                    won.extra.update(_extra(pruned, draw_only, reduction, cut, reduced))
                return won
            if locks and (lock_every_state or text == "s") and locked(rules, nxt):
                continue  # provably lost: nothing below it needs searching
            if dominance and dominated(rules, nxt, seen):
                pruned += 1
                continue  # a seen state is at least as good (exact for exhaustion: see .dominance)
            counter += 1
            heapq.heappush(heap, (weight * depth - score(nxt), sign * counter, depth, nxt, link))
    return _exhausted(incomplete, nodes, len(seen), autoplay_on, extra=_extra(pruned, draw_only, reduction, cut, reduced))


def _extra(pruned: int, draw_only: int, reduction: str, cut: int, reduced: int) -> dict[str, object]:
    extra: dict[str, object] = {"dominated": pruned, "draw_only": draw_only}
    if reduction:
        extra.update(stubborn_cut=cut, stubborn_states=reduced)
    return extra


def _exhausted(incomplete: bool, nodes: int, states: int, autoplay_on: bool, solver: str = "python",
               extra: dict[str, object] | None = None) -> Result:
    """The result of a search that ran out of states: ``unknown`` for the incomplete search, else a proof of
    ``unsolvable``; ``extra``: its counts (``dominated``, ``draw_only``, ...: none pruned when not given)."""
    extra = extra if extra is not None else {"dominated": 0, "draw_only": 0}
    if incomplete:
        return Result("unknown", nodes=nodes, states=states, autoplay=autoplay_on,
                      reason="the incomplete search (whole runs only) found nothing", solver=solver, extra=extra)
    return Result("unsolvable", nodes=nodes, states=states, autoplay=autoplay_on,
                  reason="every reachable state was searched or proven lost", solver=solver, extra=extra)


_C_REASONS = {
    "nodes": "node budget spent",
    "time": "time limit reached",
    "states": "state memory bound reached",
    "memory": "the C search ran out of memory",
    "capacity": "a column outgrew the C search's fixed capacity",
}


def _c_search(position: Position, variant: Variant, budget: Budget, *, autoplay_on: bool,
              clock: Callable[[], float] | None, lifo: bool, params: tuple[int, ...], incomplete: bool,
              locks: bool, lock_every_state: bool = True, dominance: bool = False,
              draw_inert: bool = False) -> Result:
    """:func:`_search` (depth weight 0) run by the C extension: the same nodes in the same order.

    The C search converts the wall-clock cap into a deadline on its own
    monotonic clock (``clock`` only tells whether a cap applies: the
    caller passes the stage's seconds). A ``solved`` answer is replayed through
    the engine here, as for the pure search.
    """
    start = from_position(position, variant)
    a, b, c, w, e = params
    if e:
        raise ValueError("the C search has no buried-card term")
    seconds = budget.seconds if budget.seconds is not None and clock is not None else -1.0
    # _csolver.c's bits: LOCKS_ALL or LOCKS_DRAWS, | LOCKS_STUCK, LOCKS_DOMINANCE, LOCKS_INERT
    flags = ((6 if lock_every_state else 5) if locks else 0) | (8 if dominance else 0) | (16 if draw_inert else 0)
    outcome, moves, nodes, states, pruned, draw_only = _csolver_search(
        start[0], start[2], start[3], start[4], start[5], RULE_CODES[variant.move_rule], (a, b, c, w), lifo,
        incomplete, flags, autoplay_on, budget.nodes, budget.states, max(seconds, 0.0) if seconds >= 0 else -1.0)
    if outcome == "solved":
        return _verified(position, variant, tuple(moves), autoplay_on, nodes, states, solver="c")
    if outcome == "exhausted":
        return _exhausted(incomplete, nodes, states, autoplay_on, solver="c",
                          extra={"dominated": pruned, "draw_only": draw_only})
    return Result("unknown", nodes=nodes, states=states, autoplay=autoplay_on, reason=_C_REASONS[outcome], solver="c",
                  extra={"dominated": pruned, "draw_only": draw_only})


PORTFOLIO: tuple[tuple[tuple[int, ...], bool, int], ...] = (
    ((10, 8, 5, 30, 0), False, 150_000),
    ((20, 8, 10, 12, 0), False, 150_000),
    ((20, 8, 5, 6, 0), False, 150_000),
    ((30, 16, 5, 12, 0), True, 150_000),
    ((20, 16, 10, 20, 0), False, 150_000),
    ((6, 23, 17, 64, 0), True, 100_000),
    ((26, 18, 7, 48, 0), True, 100_000),
    ((40, 8, 3, 31, 0), True, 100_000),
    ((17, 27, 5, 18, 0), False, 100_000),
    ((9, 11, 17, 27, 0), True, 100_000),
)
"""The incomplete stages tried first: (score weights, LIFO ties, most nodes), each on whole runs only. The first
five were chosen on classic deals 1-40 and the open deals of 1-200, the last five greedily from 80 random weight
sets on the deals the first five and the complete search left open in 10 s, then checked on deals 201-400
(README.md)."""

PORTFOLIO_SHARE = 25
"""An incomplete stage gets the node budget divided by this, at most its own cap in :data:`PORTFOLIO` (8 000 of
the default 200 000), so a small budget gives three fifths to the complete search."""

PORTFOLIO_TIME = 0.5
"""The share of a time cap the incomplete stages may take together. Each gets the part of what is left of it
that its cap in :data:`PORTFOLIO` is of the caps of the stages still to run, so half the time is left for the
complete search even where nodes go slower (the pure search)."""

DOMINANCE: tuple[str, ...] = ("draw",)
"""The dominance rules of :mod:`.dominance` the complete search of :func:`solve` uses (README.md)."""


def solve(
    position: Position,
    variant: Variant,
    budget: Budget = Budget(),
    *,
    autoplay_on: bool = True,
    clock: Callable[[], float] | None = None,
    portfolio: bool = True,
    dominance: tuple[str, ...] = DOMINANCE,
    pure: bool = False,
    reduction: str = "",
    lock_every_state: bool = True,
) -> Result:
    """Search for a win from ``position`` (the whole deal is known: RULES.md section 9).

    Answers ``solved`` (the moves, replayed to a win through
    :class:`server.engine.game.Game` before being returned), ``unsolvable``
    (the complete search exhausted every reachable state: a proof) or
    ``unknown`` (the budget ran out). ``budget.nodes`` counts expanded
    states over all stages (reproducible); ``budget.seconds`` is a
    wall-clock cap measured with ``clock`` (e.g. ``time.monotonic``; the
    engine reads no clock itself). ``autoplay_on`` is the game's auto-play
    setting the moves are for.

    With ``portfolio`` (the default) ten short incomplete searches with
    different score weights come first (:data:`PORTFOLIO`; they move whole
    runs only, so they can never claim ``unsolvable``), each with a
    25th of the node budget, at most its own cap (100 000-150 000 nodes;
    with fewer than 25 nodes none runs), and under a time cap together
    at most half of it (:data:`PORTFOLIO_TIME`), each the part of what is
    left of that half that its cap is of the caps of the stages still to
    run;
    the rest goes to the complete search, whose exhaustion is the
    only source of ``unsolvable``. The complete search does not expand a
    state that :func:`.lock.locked` proves lost (exact; checked on every
    new state, or with ``lock_every_state`` false after each draw only, the
    rule of the layered prover of prover.py: README.md). ``dominance`` names the dominance rules of
    :mod:`.dominance` the complete search uses (default :data:`DOMINANCE`):
    ``"draw"`` (a state whose next stock card is inert expands only the
    draw) and ``"waste"`` (a new state is skipped when taking an inert card
    below its waste top up gives a state already seen); both exact.
    ``reduction="stubborn"`` makes the complete search expand strong
    stubborn sets (:mod:`.stubborn`, exact; off by default: measured in
    README.md); that stage then runs the pure search.

    Each stage runs in the C extension when :func:`implementation` answers
    ``"c"`` (``Result.solver`` tells which ran; ``pure`` forces the pure
    search); node counts, states and answers are the same as the pure
    search's for the same node budget, only faster, so a wall-clock cap lets
    the C search go further.
    """
    unknown_rules = set(dominance) - {"draw", "waste"}
    if unknown_rules:
        raise ValueError(f"unknown dominance rules {sorted(unknown_rules)}: 'draw' and 'waste' exist")
    deadline: float | None = None  # clock readings: the cap's end and the stages' (:data:`PORTFOLIO_TIME`)
    portfolio_end: float | None = None
    if budget.seconds is not None and clock is not None:
        start = clock()
        deadline, portfolio_end = start + budget.seconds, start + budget.seconds * PORTFOLIO_TIME

    def left(end: float | None) -> float | None:
        """Seconds until ``end`` (a clock reading), at least 0; None without a time cap."""
        return None if end is None or clock is None else max(end - clock(), 0.0)

    spent = 0
    if portfolio and not variant.foundation_to_column:
        share = budget.nodes // PORTFOLIO_SHARE  # 0 below PORTFOLIO_SHARE nodes: all the complete search's
        # The stages' share of the time cap, like their share of the nodes: the caps are sized for the C search,
        # and the pure one would otherwise spend the whole cap in the stages, leaving no time for the complete
        # search, the only one that proves a deal lost. What a stage leaves of its part passes on to the ones after.
        caps_left = sum(cap for _, _, cap in PORTFOLIO)
        for params, lifo, cap in PORTFOLIO if share > 0 else ():
            seconds = left(portfolio_end)
            if seconds is not None:
                seconds *= cap / caps_left
                if seconds == 0.0:
                    break  # the stages' part is spent: the rest is the complete search's
            caps_left -= cap
            stage = _search(position, variant, Budget(min(cap, share), seconds, budget.states), autoplay_on=autoplay_on,
                            clock=clock, params=params, lifo=lifo, incomplete=True, pure=pure)
            spent += stage.nodes
            if stage.result == "solved":
                return Result(stage.result, stage.moves, spent, stage.states, autoplay_on, stage.reason,
                              solver=stage.solver)
            if left(deadline) == 0.0:
                return Result("unknown", (), spent, stage.states, autoplay_on, "time limit reached",
                              solver=stage.solver)
    final = _search(position, variant, Budget(budget.nodes - spent, left(deadline), budget.states), autoplay_on=autoplay_on,
                    clock=clock, locks=True, lock_every_state=lock_every_state, draw_inert="draw" in dominance,
                    dominance="waste" in dominance, pure=pure, reduction=reduction)
    return Result(final.result, final.moves, spent + final.nodes, final.states, autoplay_on, final.reason,
                  extra=final.extra, solver=final.solver)


FIND_STAGE: tuple[tuple[int, ...], bool, int] = ((20, 8, 5, 6, 0), False, 1_000)
"""The one incomplete stage of :func:`find_solution`: (score weights, LIFO ties, nodes) (README.md)."""


def find_solution(
    position: Position,
    variant: Variant,
    *,
    nodes: int | None = None,
    seconds: float | None = None,
    autoplay_on: bool = True,
    clock: Callable[[], float] | None = None,
    pure: bool = False,
) -> Result:
    """A short incomplete search tuned for finding solvable deals among random seeds (RULES.md section 9).

    Answers ``solved`` (moves replayed to a win through the engine, as in
    :func:`solve`) or ``unknown``, never ``unsolvable``: it moves whole runs
    only and stops after ``nodes`` expanded states (default: the measured
    best of :data:`FIND_STAGE`, README.md). Spending little on each seed and
    moving on finds a solvable deal sooner than deciding each seed.
    ``seconds`` is a wall-clock cap measured with ``clock`` (e.g.
    ``time.monotonic``). Reproducible for the same input and ``nodes``.
    ``pure`` forces the pure search (:func:`implementation`).
    """
    params, lifo, default_nodes = FIND_STAGE
    budget = Budget(nodes=default_nodes if nodes is None else nodes, seconds=seconds)
    result = _search(position, variant, budget, autoplay_on=autoplay_on, clock=clock, params=params, lifo=lifo,
                     incomplete=True, pure=pure)
    if result.result == "solved":
        return result
    return Result("unknown", nodes=result.nodes, states=result.states, autoplay=autoplay_on, reason=result.reason,
                  solver=result.solver)


PLAYOUT_STAGE: tuple[tuple[int, ...], bool] = ((20, 8, 5, 6, 0), False)
"""The score weights and tie order of :func:`verdict`'s incomplete search: :data:`FIND_STAGE`'s, the stage that
finds wins in the fewest nodes (README.md)."""


def verdict(position: Position, variant: Variant, nodes: int, *, autoplay_on: bool = True,
            complete: bool = False, pure: bool = False) -> Outcome:
    """Whether ``position`` can be won, within ``nodes`` expanded states, without the proof: ``solved``,
    ``unsolvable`` (only with ``complete``) or ``unknown``. For callers that ask thousands of small questions
    (the player-view planner, :mod:`server.engine.planner`): a ``solved`` answer of the C search is not replayed
    through the engine (that replay costs more than a small search), so it rests on the C search's tests.

    ``complete`` false: one incomplete greedy stage (:data:`PLAYOUT_STAGE`, whole runs); true: the complete
    search of :func:`solve` (lock checks, the draw dominance rule), whose exhaustion is a proof. Reproducible
    for the same input and ``nodes``; reads no clock."""
    if variant.foundation_to_column or nodes <= 0:
        return "unknown"
    params, lifo = PLAYOUT_STAGE if not complete else ((20, 16, 5, 12, 0), False)
    if implementation(position, variant, pure=pure) == "c":
        start = from_position(position, variant)
        flags = (6 | 16) if complete else 0  # _csolver.c's bits: LOCKS_ALL | LOCKS_STUCK, LOCKS_INERT
        outcome = _csolver_search(
            start[0], start[2], start[3], start[4], start[5], RULE_CODES[variant.move_rule], params[:4], lifo,
            not complete, flags, autoplay_on, nodes, Budget().states, -1.0)[0]
        if outcome == "solved":
            return "solved"
        return "unsolvable" if outcome == "exhausted" and complete else "unknown"
    result = _search(position, variant, Budget(nodes), autoplay_on=autoplay_on, params=params, lifo=lifo,
                     incomplete=not complete, locks=complete, draw_inert=complete, pure=True)
    return result.result if complete or result.result == "solved" else "unknown"


def _unwind(link: Link) -> tuple[str, ...]:
    steps: list[str] = []
    while link is not None:
        (text, auto), link = link
        steps.extend(reversed((text, *auto)))
    steps.reverse()
    return tuple(steps)


def _verified(position: Position, variant: Variant, moves: tuple[str, ...], autoplay_on: bool, nodes: int,
              states: int, solver: str = "python") -> Result:
    game = Game(position, variant, autoplay=autoplay_on, undo="none")
    for text in moves:
        game.play(text)
    if not game.is_won:
        raise AssertionError("solver bug: the solution does not win when replayed through the engine")
    return Result("solved", moves, nodes=nodes, states=states, autoplay=autoplay_on, solver=solver)
