"""The rules of play: move checks, legal moves, auto-play and finish.

Everything here is a pure function of a :class:`~server.engine.position.Position`
and a :class:`~server.engine.variants.Variant` (RULES.md sections 2-7).
:func:`apply` is the checked path for untrusted commands: it either returns
a new position or raises :class:`~server.engine.errors.IllegalCommandError`.
Game-level matters (undo, move counting, the won state) live in
:mod:`server.engine.game`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple, cast

from protocol.cards import format_card
from protocol.commands import ANY_SLOT, DRAW, FINISH, REDEAL, WASTE, Command, Pile, parse_command

from .errors import IllegalCommandError
from .position import EMPTY_SLOT, Position
from .variants import _BUILDS_ON, BuildRule, MoveRule, Variant


def fits(card: int, onto: int, rule: BuildRule) -> bool:
    """True when ``card`` may be placed on a column whose top card is ``onto``.

    Exactly one rank lower, in the suit relation of ``rule``; an ace never
    fits on a king (they are not connected; RULES.md section 2).
    """
    return card in _BUILDS_ON[rule][onto]


def run_length(column: Sequence[int], hidden: int, variant: Variant) -> int:
    """Number of top cards of ``column`` that form a run (RULES.md section 3).

    A run is a group of face-up top cards in which each card could be built
    on the card beneath it (the variant's build rule, section 2).
    ``column`` holds card codes bottom to top (a tuple in a position, bytes
    in a solver state), ``hidden`` is its count of face-down cards. 0 for an
    empty column, else at least 1.

    The one definition of a run: the checked path (:func:`apply`),
    :func:`legal_moves` and the solver's move generator
    (``server.engine.solver.search``) call it. The C search keeps its own
    copy, ``run_length`` in ``server/engine/solver/_csolver.c`` (build in
    suit, no face-down cards: all it supports); tests/engine/test_move_rule.py
    checks that every path, the C one included, moves the same runs. The
    engine's C hot path keeps another, the run loop of ``list_prefix`` and
    of ``apply_core`` in ``server/engine/_cengine.c`` (every build rule,
    face-down cards; ``column_moves``, ``apply_move`` and ``play_listed``
    use them); tests/engine/test_fast_path.py checks they list and apply the
    same moves.
    """
    n = len(column)
    if n == 0:
        return 0
    table = variant.builds_on
    i = n - 1
    while i > hidden and column[i] in table[column[i - 1]]:
        i -= 1
    return n - i


UNLIMITED = 1 << 30
"""The move limit of the ``sequence`` rule: more cards than any column can hold."""


def move_limit(variant: Variant, empty_columns: int, into_empty: bool) -> int:
    """Most cards one column-to-column command may move (RULES.md section 3).

    ``empty_columns`` counts the empty columns of the position before the
    move, the target included when it is empty; ``into_empty`` tells
    whether the target is one of them. The source column never counts as
    empty, even if the move empties it (it is not empty before the move).
    single: 1. sequence: unlimited (:data:`UNLIMITED`). supermove: 2**e,
    where e is the number of empty columns not counting the target: onto a
    card 2**empty_columns, into an empty column 2**(empty_columns - 1).
    Raises ``ValueError`` for a move into an empty column when
    ``empty_columns`` is 0.

    The one definition of the limit: the checked path (:func:`apply`),
    :func:`legal_moves` and the solver's move generator
    (``server.engine.solver.search``) call it. The C search keeps its own
    copy, the ``onto``/``into`` limits in ``gen_moves`` of
    ``server/engine/solver/_csolver.c``; tests/engine/test_move_rule.py
    checks that every path, the C one included, allows the same moves.
    The engine's C hot path (``server/engine/_cengine.c``) has no copy: its
    listing and its apply are given both limits from here.
    """
    if into_empty and empty_columns < 1:
        raise ValueError("a move into an empty column needs an empty column")
    rule = variant.move_rule
    if rule is MoveRule.SINGLE:
        return 1
    if rule is MoveRule.SEQUENCE:
        return UNLIMITED
    return 1 << (empty_columns - 1 if into_empty else empty_columns)


def stock_exhausted(position: Position, variant: Variant) -> bool:
    """True when no draw and no redeal is possible any more (RULES.md sections 4 and 5)."""
    if position.stock:
        return False
    return not (position.waste and position.redeals_left > 0 and variant.redeals > 0)


def slot_for(position: Position, card: int) -> int:
    """Index (0-based) of the lowest-numbered foundation slot that takes ``card``, or -1.

    An ace goes to an empty slot; any other card onto the slot whose top is
    the same suit, one rank lower (RULES.md sections 1 and 5).
    """
    if card % 13 == 0:
        try:
            return position.foundations.index(EMPTY_SLOT)
        except ValueError:
            return -1
    try:
        return position.foundations.index(card - 1)
    except ValueError:
        return -1


def is_safe(position: Position, variant: Variant, card: int) -> bool:
    """True when nothing could ever need ``card`` in the tableau (RULES.md section 5).

    Aces and twos always; otherwise every copy of every card that could be
    built on it (rank r-1, of the suits the build rule allows) is already
    on a foundation.
    """
    rank = card % 13 + 1
    if rank <= 2:
        return True
    needed = variant.decks
    for builder in variant.builds_on[card]:
        copies = 0
        for top in position.foundations:
            if top >= builder and top // 13 == builder // 13:
                copies += 1
        if copies < needed:
            return False
    return True


def _with_column(tableau: tuple[tuple[int, ...], ...], index: int, column: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    return tableau[:index] + (column,) + tableau[index + 1 :]


def _with_slot(foundations: tuple[int, ...], index: int, top: int) -> tuple[int, ...]:
    return foundations[:index] + (top,) + foundations[index + 1 :]


def _take(position: Position, index: int, count: int) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...], bool]:
    """Remove ``count`` top cards of column ``index``; flip a newly exposed face-down card.

    Returns the new tableau, the new hidden counts and whether a card was turned face up.
    """
    column = position.tableau[index][:-count]
    tableau = _with_column(position.tableau, index, column)
    hidden = position.hidden
    if column and hidden[index] == len(column):
        hidden = hidden[:index] + (hidden[index] - 1,) + hidden[index + 1 :]
        return tableau, hidden, True
    return tableau, hidden, False


class Applied(NamedTuple):
    """Result of one command applied by :func:`apply` (before auto-play).

    ``position`` is the new position, ``cards`` how many cards the command
    moved, ``revealed`` whether it turned a face-down card up.
    """

    position: Position
    cards: int
    revealed: bool


def _column_number(variant: Variant, pile: Pile) -> int:
    if not 1 <= pile.index <= variant.columns:
        raise IllegalCommandError(
            f"column {pile.index} does not exist in a {variant.columns}-column tableau (columns are 1..{variant.columns})"
        )
    return pile.index - 1


def _slot_number(variant: Variant, pile: Pile) -> int:
    if not 1 <= pile.index <= variant.slots:
        raise IllegalCommandError(f"no foundation slot {pile.index} (slots are 1..{variant.slots})")
    return pile.index - 1


def _to_foundation(position: Position, variant: Variant, card: int, target: Pile) -> int:
    if target.index == 0:
        slot = slot_for(position, card)
        if slot < 0:
            raise IllegalCommandError(f"no foundation slot takes {format_card(card)}")
        return slot
    slot = _slot_number(variant, target)
    top = position.foundations[slot]
    if not ((top == EMPTY_SLOT and card % 13 == 0) or (top != EMPTY_SLOT and top == card - 1 and card % 13 != 0)):
        shown = "empty" if top == EMPTY_SLOT else format_card(top)
        raise IllegalCommandError(f"foundation slot {slot + 1} ({shown}) does not take {format_card(card)}")
    return slot


def _check_fit(card: int, onto: tuple[int, ...], variant: Variant) -> None:
    if onto and card not in variant.builds_on[onto[-1]]:
        raise IllegalCommandError(f"{format_card(card)} does not fit on {format_card(onto[-1])}")


def apply(position: Position, variant: Variant, command: Command, *, pure: bool = False) -> Applied:
    """Apply one well-formed command to ``position``, checking every rule.

    Handles draw, redeal, finish and moves (RULES.md sections 2-5); undo is
    the game's business (:class:`server.engine.game.Game`). No auto-play
    here (:func:`autoplay`). Raises
    :class:`~server.engine.errors.IllegalCommandError` with the reason when
    the rules refuse it; ``position`` is never changed.

    Moves from a column or the waste and draws are applied by the optional C extension (``apply_move`` of
    ``server/engine/_cengine.c``) when it is built, unless ``pure``; it declines every command the rules
    refuse, and the Python here, the reference, then raises the refusal (tests/engine/test_fast_path.py
    checks both give the same results).
    """
    if _c_apply_move is not None and not pure:
        applied = _c_apply(position, variant, command)
        if applied is not None:
            return applied
    kind = command.kind
    if kind == "move":
        source, target = command.source, command.target
        assert source is not None and target is not None
        if source.kind == "column":
            return _from_column(position, variant, source, target, command.count)
        if source.kind == "waste":
            return _from_waste(position, variant, target)
        return _from_foundation(position, variant, source, target)
    if kind == "draw":
        if not position.stock:
            if position.waste and position.redeals_left > 0 and variant.redeals > 0:
                raise IllegalCommandError("the stock is empty (r turns the waste over into a new stock)")
            raise IllegalCommandError("the stock is empty")
        new = Position(
            position.tableau,
            position.hidden,
            position.foundations,
            position.stock[1:],
            position.waste + position.stock[:1],
            position.redeals_left,
        )
        return Applied(new, 1, False)
    if kind == "redeal":
        if variant.redeals == 0:
            raise IllegalCommandError("no redeals in this variant")
        if position.redeals_left == 0:
            raise IllegalCommandError("no redeals left")
        if position.stock:
            raise IllegalCommandError("the stock is not empty: a redeal comes after the last draw")
        if not position.waste:
            raise IllegalCommandError("the waste is empty: nothing to redeal")
        new = Position(position.tableau, position.hidden, position.foundations, position.waste, (), position.redeals_left - 1)
        return Applied(new, len(position.waste), False)
    if kind == "finish":
        return _finish(position, variant)
    raise IllegalCommandError(f"{command} is not a command on a position (undo is the game's)")


_C_OPS = {("column", "column"): 0, ("column", "foundation"): 1, ("waste", "column"): 2, ("waste", "foundation"): 3}
"""``(source kind, target kind)`` -> the C's ``op`` (the enum before ``apply_move`` in ``_cengine.c``)."""

_C_DRAW = 4
"""The C's ``op`` of a draw (``DRAW`` in that enum)."""


def _c_apply(position: Position, variant: Variant, command: Command) -> Applied | None:
    """:func:`apply` by the C extension, or ``None`` (a command it does not apply, or one the rules refuse)."""
    if command.kind == "draw":
        op, source, target, count = _C_DRAW, 0, 0, -1
    elif command.kind == "move":
        assert command.source is not None and command.target is not None
        op = _C_OPS.get((command.source.kind, command.target.kind), -1)
        if op < 0:
            return None
        source, target = command.source.index, command.target.index
        count = -1 if command.count is None else command.count
    else:
        return None
    onto_limit = into_limit = 0
    if op == 0:  # the limits come from move_limit, their one definition
        onto_limit, into_limit = _limits(variant, len(position.tableau))[position.tableau.count(())]
    applied = _c_apply_move(Position, Applied, position.tableau, position.hidden, position.foundations, position.stock,
                            position.waste, position.redeals_left, op, source, target, count, _fits(variant),
                            variant.columns, onto_limit, into_limit)
    return cast("Applied | None", applied)


def _from_column(position: Position, variant: Variant, source: Pile, target: Pile, count: int | None) -> Applied:
    src = _column_number(variant, source)
    column = position.tableau[src]
    if target.kind == "foundation":
        if not column:
            raise IllegalCommandError(f"column {src + 1} is empty")
        card = column[-1]
        slot = _to_foundation(position, variant, card, target)
        tableau, hidden, revealed = _take(position, src, 1)
        new = Position(tableau, hidden, _with_slot(position.foundations, slot, card), position.stock, position.waste, position.redeals_left)
        return Applied(new, 1, revealed)
    dst = _column_number(variant, target)
    if dst == src:
        raise IllegalCommandError("source and target are the same column")
    if not column:
        raise IllegalCommandError(f"column {src + 1} is empty")
    onto = position.tableau[dst]
    run = run_length(column, position.hidden[src], variant)
    if count is None:
        if not onto:
            count = 1
        else:
            allowed = variant.builds_on[onto[-1]]
            for k in range(1, run + 1):
                if column[-k] in allowed:
                    count = k
                    break
            else:
                raise IllegalCommandError(f"no card of the run on column {src + 1} fits on {format_card(onto[-1])}")
    else:
        if count > len(column):
            raise IllegalCommandError(f"column {src + 1} has only {len(column)} cards")
        if count > run:
            raise IllegalCommandError(f"the top {count} cards of column {src + 1} are not a run")
        _check_fit(column[-count], onto, variant)
    limit = move_limit(variant, position.tableau.count(()), not onto)
    if count > limit:
        raise IllegalCommandError(f"{count} cards at once, at most {limit} may move")
    # Both columns change in one copy of the tableau (the commonest command: building it once matters).
    left = column[:-count]
    columns = list(position.tableau)
    columns[src], columns[dst] = left, onto + column[-count:]
    hidden = position.hidden
    revealed = bool(left) and hidden[src] == len(left)  # the newly exposed card turns face up (as _take)
    if revealed:
        hidden = hidden[:src] + (hidden[src] - 1,) + hidden[src + 1 :]
    new = Position(tuple(columns), hidden, position.foundations, position.stock, position.waste, position.redeals_left)
    return Applied(new, count, revealed)


def _from_waste(position: Position, variant: Variant, target: Pile) -> Applied:
    if not position.waste:
        raise IllegalCommandError("the waste is empty")
    card = position.waste[-1]
    if target.kind == "foundation":
        slot = _to_foundation(position, variant, card, target)
        new = Position(
            position.tableau, position.hidden, _with_slot(position.foundations, slot, card),
            position.stock, position.waste[:-1], position.redeals_left,
        )
        return Applied(new, 1, False)
    dst = _column_number(variant, target)
    onto = position.tableau[dst]
    _check_fit(card, onto, variant)
    new = Position(
        _with_column(position.tableau, dst, onto + (card,)), position.hidden, position.foundations,
        position.stock, position.waste[:-1], position.redeals_left,
    )
    return Applied(new, 1, False)


def _from_foundation(position: Position, variant: Variant, source: Pile, target: Pile) -> Applied:
    if not variant.foundation_to_column:
        raise IllegalCommandError("cards may not come down from the foundations")
    slot = _slot_number(variant, source)
    top = position.foundations[slot]
    if top == EMPTY_SLOT:
        raise IllegalCommandError(f"foundation slot {slot + 1} is empty")
    dst = _column_number(variant, target)
    onto = position.tableau[dst]
    _check_fit(top, onto, variant)
    below = EMPTY_SLOT if top % 13 == 0 else top - 1
    new = Position(
        _with_column(position.tableau, dst, onto + (top,)), position.hidden,
        _with_slot(position.foundations, slot, below), position.stock, position.waste, position.redeals_left,
    )
    return Applied(new, 1, False)


def finish_order(position: Position) -> list[int] | None:
    """Column indexes (0-based) whose top cards, moved up in this order, clear the tableau.

    ``None`` when no order works (RULES.md section 5, finish: "with two
    copies of a card the order can matter; the engine finds one"). The
    order auto-play uses is taken when it clears the tableau (it decides
    which slot each ace starts, so the final text is the natural one);
    otherwise a search finds an order. In the search, a move
    is made without trying alternatives only when every copy of that card
    still in the tableau lies on top and a slot waits for each: nothing
    else could use those slots. Otherwise each possible move is tried in
    turn (a copy moved up now may take the slot that a copy buried
    elsewhere needed, over the card a second slot needs first), with a memo
    of positions known to fail.
    """
    greedy = _finish_in_autoplay_order(position)
    if greedy is not None:
        return greedy
    columns = position.tableau
    failed: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
    copies: dict[int, int] = {}
    for column in columns:
        for card in column:
            copies[card] = copies.get(card, 0) + 1

    def search(heights: list[int], tops: list[int], left: dict[int, int], order: list[int]) -> list[int] | None:
        while True:
            available: dict[int, list[int]] = {}
            for index, height in enumerate(heights):
                if height:
                    card = columns[index][height - 1]
                    if (EMPTY_SLOT if card % 13 == 0 else card - 1) in tops:
                        available.setdefault(card, []).append(index)
            if not available:
                return order if not any(heights) else None
            for card, where in available.items():
                wanted = EMPTY_SLOT if card % 13 == 0 else card - 1
                if len(where) == left[card] and len(where) <= tops.count(wanted):
                    for index in where:
                        tops[tops.index(wanted)] = card
                        heights[index] -= 1
                        order.append(index)
                    left[card] = 0
                    break
            else:
                break
        state = (tuple(heights), tuple(sorted(tops)))
        if state in failed:
            return None
        for card, where in available.items():
            wanted = EMPTY_SLOT if card % 13 == 0 else card - 1
            for index in where:
                next_tops, next_heights, next_left = tops.copy(), heights.copy(), dict(left)
                next_tops[next_tops.index(wanted)] = card
                next_heights[index] -= 1
                next_left[card] -= 1
                found = search(next_heights, next_tops, next_left, order + [index])
                if found is not None:
                    return found
        failed.add(state)
        return None

    return search([len(column) for column in columns], list(position.foundations), copies, [])


def _finish_in_autoplay_order(position: Position) -> list[int] | None:
    """The order auto-play would use (columns 1..N, first card a slot takes, lowest slot, repeat),
    if it clears the tableau; the usual case, and the order finish prefers."""
    tops = list(position.foundations)
    heights = [len(column) for column in position.tableau]
    order: list[int] = []
    while True:
        for index, column in enumerate(position.tableau):
            if heights[index]:
                card = column[heights[index] - 1]
                wanted = EMPTY_SLOT if card % 13 == 0 else card - 1
                if wanted in tops:
                    tops[tops.index(wanted)] = card
                    heights[index] -= 1
                    order.append(index)
                    break
        else:
            return order if not any(heights) else None


def can_finish(position: Position) -> bool:
    """True when ``finish`` applies: stock and waste empty, no face-down card,
    and some order of top cards clears the tableau (RULES.md section 5)."""
    return not position.stock and not position.waste and not any(position.hidden) and finish_order(position) is not None


def _finish(position: Position, variant: Variant) -> Applied:
    if position.stock or position.waste:
        raise IllegalCommandError("stock and waste must be empty to finish")
    if any(position.hidden):
        raise IllegalCommandError("face-down cards are left: finish needs every card face up")
    order = finish_order(position)
    if order is None:
        raise IllegalCommandError("the cards left cannot all go up directly")
    if not order:
        raise IllegalCommandError("nothing left to finish")
    current = position
    for index in order:
        card = current.tableau[index][-1]
        slot = slot_for(current, card)
        tableau, hidden, _ = _take(current, index, 1)
        current = Position(tableau, hidden, _with_slot(current.foundations, slot, card), (), (), current.redeals_left)
    return Applied(current, len(order), False)


class AutoPlayed(NamedTuple):
    """Result of :func:`autoplay`: the new position, the cards moved up in
    order (as ``(source, slot)`` pairs: source 0 for the waste or a column
    number, slot 1-based), and whether a face-down card turned up."""

    position: Position
    moves: tuple[tuple[int, int], ...]
    revealed: bool


@lru_cache(maxsize=4096)
def _wanted(foundations: tuple[int, ...]) -> frozenset[int]:
    """Card codes some foundation slot would take now.

    Kept per foundation row: the foundations change on a few commands only, and auto-play asks after
    every command (building the set each time was a tenth of a command's cost)."""
    wanted = {top + 1 for top in foundations if top != EMPTY_SLOT and top % 13 != 12}
    if EMPTY_SLOT in foundations:
        wanted.update(_ACES)
    return frozenset(wanted)


_ACES = (0, 13, 26, 39)


def autoplay(position: Position, variant: Variant, *, pure: bool = False) -> AutoPlayed:
    """Move safe cards to the foundations until none is left (RULES.md section 5).

    Order, so replays are deterministic: look at the waste top, then the
    tops of columns 1..N; move the first safe card that a slot accepts
    (the lowest-numbered such slot); repeat. These moves are not counted.

    Which card goes up next is found by the optional C extension (``autoplay_next`` of
    ``server/engine/_cengine.c``) when it is built, unless ``pure``; the Python search here is the
    reference, and tests/engine/test_fast_path.py checks both give the same result.
    """
    moves: list[tuple[int, int]] = []
    revealed = False
    current = position
    if _c_autoplay_next is not None and not pure:
        fits, decks = _fits(variant), variant.decks
        while True:
            found = _c_autoplay_next(current.tableau, current.foundations, current.waste, fits, decks)
            if found is None:
                break  # outside what the C handles: the Python search goes on from here
            if found < 0:
                return AutoPlayed(current, tuple(moves), revealed)
            source, slot = divmod(found, 64)
            current, flipped = _up(current, source, slot)
            revealed = revealed or flipped
            moves.append((source, slot + 1))
    while True:
        wanted = _wanted(current.foundations)
        waste = current.waste
        if waste and waste[-1] in wanted and is_safe(current, variant, waste[-1]):
            source, slot = 0, slot_for(current, waste[-1])
        else:
            for index, column in enumerate(current.tableau):
                if column and column[-1] in wanted and is_safe(current, variant, column[-1]):
                    source, slot = index + 1, slot_for(current, column[-1])
                    break
            else:
                return AutoPlayed(current, tuple(moves), revealed)
        current, flipped = _up(current, source, slot)
        revealed = revealed or flipped
        moves.append((source, slot + 1))


def _up(position: Position, source: int, slot: int) -> tuple[Position, bool]:
    """``position`` with one card moved up by auto-play: the waste top (``source`` 0) or column ``source``'s top
    card (1-based), onto foundation slot ``slot`` (0-based); and whether a face-down card turned face up."""
    if source == 0:
        return Position(position.tableau, position.hidden, _with_slot(position.foundations, slot, position.waste[-1]),
                        position.stock, position.waste[:-1], position.redeals_left), False
    card = position.tableau[source - 1][-1]
    tableau, hidden, flipped = _take(position, source - 1, 1)
    return Position(tableau, hidden, _with_slot(position.foundations, slot, card), position.stock, position.waste,
                    position.redeals_left), flipped


class LegalMove(NamedTuple):
    """One legal command and how many cards it moves (the command's own cards, not auto-play)."""

    command: Command
    cards: int


_COMMANDS: dict[tuple[Pile, Pile, int | None], Command] = {}

_DRAW_MOVE = LegalMove(DRAW, 1)


def _cmd(source: Pile, target: Pile, count: int | None = None) -> Command:
    key = (source, target, count)
    command = _COMMANDS.get(key)
    if command is None:
        command = _COMMANDS[key] = Command("move", source, target, count)
    return command


_COLUMN_PILES = tuple(Pile("column", i) for i in range(1, 64))
_SLOT_PILES = tuple(Pile("foundation", i) for i in range(1, 64))


def legal_moves(position: Position, variant: Variant, *, pure: bool = False) -> list[LegalMove]:
    """Every legal command in ``position`` except undo, in a fixed order, each once.

    Order: waste to foundation, columns to foundation (1..N), waste to
    columns, column to column (by source, then target, then count),
    foundation to columns (where allowed), draw, redeal, finish. Moves to a
    foundation are listed as ``X-f`` (the lowest slot that takes the card;
    naming another slot that takes it gives an equivalent position). Moves
    onto a card are listed without a count (only one count fits); moves
    into an empty column as ``A-B`` for one card and ``A-BxK`` for K cards.
    Empty when the game is won.

    The moves up to the column-to-column ones are listed by the optional C
    extension ``_cengine`` (``server/engine/_cengine.c``) when it is built,
    unless ``pure``; this Python listing is the reference, and
    tests/engine/test_fast_path.py checks both give the same list.
    """
    tableau = position.tableau
    if not position.stock and not position.waste and not any(tableau):
        return []
    if _c_column_moves is not None and not pure:
        onto_limit, into_limit = _limits(variant, len(tableau))[tableau.count(())]
        listed = _c_column_moves(tableau, position.hidden, position.foundations, position.waste, _fits(variant),
                                 onto_limit, into_limit, _c_table(len(tableau)))
        if listed is not None:
            return _later_moves(position, variant, listed)
    result: list[LegalMove] = []
    wanted = _wanted(position.foundations)
    waste_top = position.waste[-1] if position.waste else -1
    if waste_top in wanted:
        result.append(LegalMove(_cmd(WASTE, ANY_SLOT), 1))
    for i, column in enumerate(tableau):
        if column and column[-1] in wanted:
            result.append(LegalMove(_cmd(_COLUMN_PILES[i], ANY_SLOT), 1))
    # Columns by their top card; empty ones apart.
    under: dict[int, list[int]] = {}
    empty: list[int] = []
    for j, onto in enumerate(tableau):
        if onto:
            under.setdefault(onto[-1], []).append(j)
        else:
            empty.append(j)
    if waste_top >= 0:
        targets = sorted(empty + [j for top in variant.builds_on_reverse[waste_top] for j in under.get(top, ())])
        for j in targets:
            result.append(LegalMove(_cmd(WASTE, _COLUMN_PILES[j]), 1))
    onto_card_limit = move_limit(variant, len(empty), False)
    into_empty_limit = move_limit(variant, len(empty), True) if empty else 0
    reverse = variant.builds_on_reverse
    hidden = position.hidden
    for i, column in enumerate(tableau):
        if not column:
            continue
        run = run_length(column, hidden[i], variant)
        source = _COLUMN_PILES[i]
        found: list[tuple[int, int]] = []
        for k in range(1, min(run, onto_card_limit) + 1):
            for top in reverse[column[-k]]:
                for j in under.get(top, ()):
                    if j != i:
                        found.append((j, k))
        for j in empty:
            found.append((j, 0))
        found.sort()
        for j, k in found:
            if k:
                result.append(LegalMove(_cmd(source, _COLUMN_PILES[j]), k))
            else:
                target = _COLUMN_PILES[j]
                result.append(LegalMove(_cmd(source, target), 1))
                for count in range(2, min(run, into_empty_limit) + 1):
                    result.append(LegalMove(_cmd(source, target, count), count))
    return _later_moves(position, variant, result)


def _later_moves(position: Position, variant: Variant, result: list[LegalMove]) -> list[LegalMove]:
    """Append to ``result`` the legal moves listed after the column-to-column ones (foundation to
    columns, draw, redeal, finish; :func:`legal_moves`' order) and return it."""
    tableau, hidden, table = position.tableau, position.hidden, variant.builds_on
    if variant.foundation_to_column:
        for s, top in enumerate(position.foundations):
            if top == EMPTY_SLOT:
                continue
            for j, onto in enumerate(tableau):
                if not onto or top in table[onto[-1]]:
                    result.append(LegalMove(_cmd(_SLOT_PILES[s], _COLUMN_PILES[j]), 1))
    if position.stock:
        result.append(_DRAW_MOVE)
    elif position.waste and position.redeals_left > 0 and variant.redeals > 0:
        result.append(LegalMove(REDEAL, len(position.waste)))
    if not position.stock and not position.waste and not any(hidden):
        order = finish_order(position)
        if order:
            result.append(LegalMove(FINISH, len(order)))
    return result


_MAX_RUN = 13
"""Longest run: each card one rank below the one beneath it, king down to ace (RULES.md section 3)."""

_C_TABLES: dict[int, list[LegalMove | None]] = {}
_FITS: dict[BuildRule, bytes] = {}


def _c_table(columns: int) -> list[LegalMove | None]:
    """The moves the C listing may name for a ``columns``-column tableau, at the indexes
    ``server/engine/_cengine.c`` documents: the same values the Python listing builds (``None`` where no
    move exists: a column onto itself, a count below 2). Built once per column count."""
    table = _C_TABLES.get(columns)
    if table is None:
        table = [LegalMove(_cmd(WASTE, ANY_SLOT), 1)]
        table += [LegalMove(_cmd(_COLUMN_PILES[i], ANY_SLOT), 1) for i in range(columns)]
        table += [LegalMove(_cmd(WASTE, _COLUMN_PILES[j]), 1) for j in range(columns)]
        pairs = [(i, j) for i in range(columns) for j in range(columns)]
        table += [LegalMove(_cmd(_COLUMN_PILES[i], _COLUMN_PILES[j]), k) if i != j else None
                  for i, j in pairs for k in range(1, _MAX_RUN + 1)]
        table += [LegalMove(_cmd(_COLUMN_PILES[i], _COLUMN_PILES[j], c), c) if i != j and c >= 2 else None
                  for i, j in pairs for c in range(1, _MAX_RUN + 1)]
        _C_TABLES[columns] = table
    return table


_LIMITS: dict[MoveRule, list[tuple[int, int]]] = {}


def _limits(variant: Variant, columns: int) -> list[tuple[int, int]]:
    """By the count of empty columns (0..``columns`` at least): :func:`move_limit` onto a card and into an empty
    column (0 without one), as the C takes them. Kept per move rule, the only part of the variant the limit reads."""
    limits = _LIMITS.get(variant.move_rule)
    if limits is None or len(limits) <= columns:
        limits = _LIMITS[variant.move_rule] = [(move_limit(variant, empties, False),
                                                move_limit(variant, empties, True) if empties else 0)
                                               for empties in range(max(64, columns + 1))]
    return limits


def _fits(variant: Variant) -> bytes:
    """``variant.builds_on`` as the C listing reads it: byte ``onto * 52 + card`` is 1 when ``card``
    may be placed on ``onto``."""
    fits = _FITS.get(variant.build_rule)
    if fits is None:
        fits = _FITS[variant.build_rule] = bytes(card in variant.builds_on[onto]
                                                 for onto in range(52) for card in range(52))
    return fits


_CONTEXTS: dict[int, tuple[Variant, bytes]] = {}
"""``id(variant)`` -> ``(variant, its C context)``: keyed by identity, not by the variant's value (a dataclass's
hash, computed in Python field by field, cost more than the rest of the call); the entry holds the variant, so
its id cannot be reused meanwhile. The games of a server share a few variants."""

_CONTEXTS_MAX = 1024

_LIMIT_CAP = 255
"""A move limit as the C context holds it (one byte): no run is longer than 13 cards, so a cap above that changes
no answer."""


def _c_context(variant: Variant) -> bytes:
    """The variant's constants as ``play_listed`` of ``_cengine.c`` reads them (its ``CTX_`` offsets): the
    ``_fits`` table, the move limits onto a card and into an empty column by the count of empty columns 0..63
    (``_limits``, capped at :data:`_LIMIT_CAP`), the decks, flags (bit 0 redeals, bit 1 cards down from the
    foundations) and the column count. Built once per variant object."""
    entry = _CONTEXTS.get(id(variant))
    if entry is not None:
        return entry[1]
    limits = _limits(variant, 63)[:64]
    context = (_fits(variant) + bytes(min(onto, _LIMIT_CAP) for onto, _ in limits)
               + bytes(min(into, _LIMIT_CAP) for _, into in limits)
               + bytes((variant.decks, (variant.redeals > 0) | variant.foundation_to_column << 1,
                        min(variant.columns, 255))))
    if len(_CONTEXTS) >= _CONTEXTS_MAX:
        _CONTEXTS.clear()
    _CONTEXTS[id(variant)] = (variant, context)
    return context


PlayOp = tuple[Command, int, int, int, int]
"""A command as ``play_listed`` takes it: the command, the C's ``op``, its source and target numbers, its count
(-1 when none is written)."""

_PLAY_OPS: dict[str, PlayOp | None] = {}

_PLAY_OPS_MAX = 8192
"""Texts kept in :data:`_PLAY_OPS`; emptied past it (a client may send any of the many commands of a wide tableau)."""


def play_op(text: str) -> PlayOp | None:
    """The command written ``text`` as the C's fused play takes it, or ``None`` when the C does not apply it
    (undo, redeal, finish, a move from a foundation) or ``text`` is no command (then the caller's parse raises).
    Kept per text: a player's commands repeat."""
    try:
        return _PLAY_OPS[text]
    except KeyError:
        pass
    try:
        command = parse_command(text)
    except ValueError:
        return None
    op: PlayOp | None = None
    if command.kind == "draw":
        op = (command, _C_DRAW, 0, 0, -1)
    elif command.kind == "move":
        assert command.source is not None and command.target is not None
        code = _C_OPS.get((command.source.kind, command.target.kind), -1)
        if code >= 0:
            op = (command, code, command.source.index, command.target.index,
                  -1 if command.count is None else command.count)
    if len(_PLAY_OPS) >= _PLAY_OPS_MAX:
        _PLAY_OPS.clear()
    _PLAY_OPS[text] = op
    return op


def play_listed(position: Position, variant: Variant, op: PlayOp,
                autoplay_on: bool) -> tuple[Position, int, int, bool, list[LegalMove] | None] | None:
    """:func:`apply` of ``op``'s command, then :func:`autoplay` when ``autoplay_on``, then :func:`legal_moves` of
    the result, in one call of the C hot path (``play_listed`` of ``_cengine.c``): ``(position, cards moved by the
    command, cards auto-play moved up, whether a card turned face up, the legal list)``. The list is ``None``
    where the C leaves it to :func:`legal_moves` (a redeal or a finish may be legal, or cards may come down from
    the foundations). ``None`` as a whole when the C is not built, declines the position, or the rules refuse
    the command: the caller then plays it in Python, the reference (which raises the refusal).
    tests/engine/test_fast_path.py checks both give the same results."""
    if _c_play_listed is None:
        return None
    played = _c_play_listed(Position, position.tableau, position.hidden, position.foundations, position.stock,
                            position.waste, position.redeals_left, op[1], op[2], op[3], op[4], _c_context(variant),
                            autoplay_on, _c_table(len(position.tableau)), _DRAW_MOVE)
    return cast("tuple[Position, int, int, bool, list[LegalMove] | None] | None", played)


try:  # the optional C listing (server/engine/_cengine.c; pyproject.toml builds it when a compiler is there)
    from ._cengine import apply_move as _c_apply_move
    from ._cengine import autoplay_next as _c_autoplay_next
    from ._cengine import column_moves as _c_column_moves
    from ._cengine import play_listed as _c_play_listed
except ImportError:  # no compiler at install time: the Python listing alone
    _c_apply_move = _c_autoplay_next = _c_column_moves = _c_play_listed = None
