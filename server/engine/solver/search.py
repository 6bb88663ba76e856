"""Best-first search for a winning command list (RULES.md section 9).

See :func:`solve`. The search works on :mod:`.state` tuples; it knows the
whole deal, stock order included, as section 9 allows.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from ..game import Game
from ..position import Position
from ..variants import Variant
from .state import Rules, State, accepts, autoplay, from_position, key, place, run_length, take

Outcome = Literal["solved", "unsolvable", "unknown"]


@dataclass(frozen=True, slots=True)
class Budget:
    """How much a search may spend.

    ``nodes``: states expanded (reproducible: the same input and node
    budget always give the same answer). ``seconds``: an optional
    wall-clock cap, measured with the ``clock`` the caller passes to
    :func:`solve` (the engine reads no clock itself). ``states``: the most
    states kept in the transposition table (the memory bound; about 1 KB
    each).
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
    the moves are for.
    """

    result: Outcome
    moves: tuple[str, ...] = ()
    nodes: int = 0
    states: int = 0
    autoplay: bool = True
    reason: str = ""
    extra: dict[str, object] = field(default_factory=dict)


def _score(state: State, rules: Rules) -> int:
    """Heuristic value of a state, higher is better (see the module README)."""
    columns, hidden, foundations, stock, waste, _ = state
    table = rules.builds_on
    up = sum(foundations)
    empty = 0
    breaks = 0
    for index, column in enumerate(columns):
        n = len(column)
        if not n:
            empty += 1
            continue
        h = hidden[index]
        breaks += h
        for i in range(max(h, 1), n):
            if column[i] not in table[column[i - 1]]:
                breaks += 1
    return 20 * up + 8 * empty - 5 * breaks - len(waste) // 4


def _moves(rules: Rules, state: State) -> list[tuple[str, State]]:
    """Every command from ``state`` (before auto-play), as (notation, next state).

    Exact: nothing that could matter is left out, so an exhausted search
    is a proof. Moving a whole column into an empty one is skipped (the
    same state up to column order).
    """
    columns, hidden, foundations, stock, waste, redeals = state
    d = rules.decks
    result: list[tuple[str, State]] = []
    # To the foundations.
    if waste:
        slot = accepts(foundations, d, waste[-1])
        if slot >= 0:
            result.append(("w-f", (columns, hidden, place(foundations, d, slot), stock, waste[:-1], redeals)))
    for i, column in enumerate(columns):
        if column:
            slot = accepts(foundations, d, column[-1])
            if slot >= 0:
                cols, hid, _ = take(columns, hidden, i, 1)
                result.append((f"{i + 1}-f", (cols, hid, place(foundations, d, slot), stock, waste, redeals)))
    under: dict[int, list[int]] = {}
    empty: list[int] = []
    for j, column in enumerate(columns):
        if column:
            under.setdefault(column[-1], []).append(j)
        else:
            empty.append(j)
    onto_limit, empty_limit = rules.limits(len(empty))
    reverse = rules.builds_on_reverse
    # Column to column.
    for i, column in enumerate(columns):
        if not column:
            continue
        h = hidden[i]
        run = run_length(rules, column, h)
        for k in range(1, min(run, onto_limit) + 1):
            card = column[-k]
            for top in reverse[card]:
                for j in under.get(top, ()):
                    if j != i:
                        cols, hid, _ = take(columns, hidden, i, k)
                        cols = cols[:j] + (cols[j] + column[-k:],) + cols[j + 1 :]
                        result.append((f"{i + 1}-{j + 1}", (cols, hid, foundations, stock, waste, redeals)))
        if empty:
            j = empty[0]  # empty columns are interchangeable: one target is enough
            for k in range(1, min(run, empty_limit) + 1):
                if k == len(column) and h == 0:
                    break  # the whole column: same state up to column order
                cols, hid, _ = take(columns, hidden, i, k)
                cols = cols[:j] + (column[-k:],) + cols[j + 1 :]
                text = f"{i + 1}-{j + 1}" if k == 1 else f"{i + 1}-{j + 1}x{k}"
                result.append((text, (cols, hid, foundations, stock, waste, redeals)))
    # Waste to column.
    if waste:
        card = waste[-1]
        targets = [j for top in reverse[card] for j in under.get(top, ())]
        if empty:
            targets.append(empty[0])
        for j in targets:
            cols = columns[:j] + (columns[j] + waste[-1:],) + columns[j + 1 :]
            result.append((f"w-{j + 1}", (cols, hidden, foundations, stock, waste[:-1], redeals)))
    # Foundation to column, where the variant allows it.
    if rules.variant.foundation_to_column:
        table = rules.builds_on
        for index, height in enumerate(foundations):
            if not height:
                continue
            suit = index // d
            card = suit * 13 + height - 1
            lowered = bytearray(foundations)
            lowered[index] -= 1
            base = suit * d
            lowered[base : base + d] = bytes(sorted(lowered[base : base + d]))
            slot_number = _engine_slot(state, rules, index)
            for j, column in enumerate(columns):
                if not column or card in table[column[-1]]:
                    cols = columns[:j] + (column + bytes((card,)),) + columns[j + 1 :]
                    result.append((f"f{slot_number}-{j + 1}", (cols, hidden, bytes(lowered), stock, waste, redeals)))
    # Stock.
    if stock:
        result.append(("s", (columns, hidden, foundations, stock[1:], waste + stock[:1], redeals)))
    elif waste and redeals > 0:
        result.append(("r", (columns, hidden, foundations, waste, b"", redeals - 1)))
    return result


def _engine_slot(state: State, rules: Rules, index: int) -> int:
    """Placeholder for foundation-to-column notation: resolved against the engine at replay."""
    return -1


def _won(state: State) -> bool:
    return not state[3] and not state[4] and not any(state[0])


def solve(
    position: Position,
    variant: Variant,
    budget: Budget = Budget(),
    *,
    autoplay_on: bool = True,
    clock: Callable[[], float] | None = None,
) -> Result:
    """Search for a win from ``position`` (the whole deal is known: RULES.md section 9).

    ``autoplay_on`` is the game's auto-play setting: with it on, safe cards
    go up after every command exactly as the engine does it; with it off,
    the same safe moves are made by the solver (a dominance: a safe card is
    never needed in the tableau) and written out as commands. ``clock``
    (e.g. ``time.monotonic``) enables ``budget.seconds``.

    Best-first search on a heuristic (foundation cards, empty columns, and
    breaks in the columns' order) over a transposition table of canonical
    keys. Exhausting the reachable states proves the deal unsolvable.
    Returns a :class:`Result`; a ``solved`` result's moves have been
    replayed to a win by :class:`server.engine.game.Game`.
    Raises :class:`AssertionError` only if a found solution fails that
    check (a solver bug, never a player's).
    """
    if variant.foundation_to_column:
        return Result("unknown", nodes=0, autoplay=autoplay_on,
                      reason="the solver does not search variants whose cards come down from the foundations")
    rules = Rules(variant)
    face_down = rules.face_down
    start = from_position(position, variant)
    start, initial = autoplay(rules, start)
    prefix = tuple(initial) if not autoplay_on else ()
    deadline = None
    if budget.seconds is not None and clock is not None:
        deadline = clock() + budget.seconds
    seen = {key(start, face_down)}
    heap: list[tuple[int, int, State, object]] = [(-_score(start, rules), 0, start, None)]
    counter = 1
    nodes = 0
    if _won(start):
        return _verified(position, variant, prefix, autoplay_on, nodes, len(seen))
    while heap:
        if nodes >= budget.nodes:
            return Result("unknown", nodes=nodes, states=len(seen), autoplay=autoplay_on, reason="node budget spent")
        if deadline is not None and nodes % 256 == 0 and clock is not None and clock() > deadline:
            return Result("unknown", nodes=nodes, states=len(seen), autoplay=autoplay_on, reason="time limit reached")
        if len(seen) > budget.states:
            return Result("unknown", nodes=nodes, states=len(seen), autoplay=autoplay_on, reason="state memory bound reached")
        _, _, state, path = heapq.heappop(heap)
        nodes += 1
        for text, nxt in _moves(rules, state):
            nxt, auto = autoplay(rules, nxt)
            k = key(nxt, face_down)
            if k in seen:
                continue
            seen.add(k)
            step = (text, tuple(auto)) if not autoplay_on else (text, ())
            link = (step, path)
            if _won(nxt):
                return _verified(position, variant, prefix + _unwind(link), autoplay_on, nodes, len(seen))
            heapq.heappush(heap, (-_score(nxt, rules), counter, nxt, link))
            counter += 1
    return Result("unsolvable", nodes=nodes, states=len(seen), autoplay=autoplay_on,
                  reason="every reachable state was searched")


def _unwind(link: object) -> tuple[str, ...]:
    steps: list[str] = []
    while link is not None:
        (text, auto), link = link  # type: ignore[misc]
        steps.extend(reversed((text, *auto)))
    steps.reverse()
    return tuple(steps)


def _verified(position: Position, variant: Variant, moves: tuple[str, ...], autoplay_on: bool, nodes: int,
              states: int) -> Result:
    game = Game(position, variant, autoplay=autoplay_on, undo="none")
    for text in moves:
        game.play(text)
    if not game.is_won:
        raise AssertionError("solver bug: the solution does not win when replayed through the engine")
    return Result("solved", moves, nodes=nodes, states=states, autoplay=autoplay_on)
