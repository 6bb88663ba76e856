"""A game in play: a deal, its commands, undo, move counting (RULES.md sections 5 and 8).

:class:`Game` is the checked path for untrusted player input: every
command is parsed and checked, and a refused one raises and changes
nothing. The position itself is an immutable value; the game keeps the
history of accepted commands so undo can return to an earlier value.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import NamedTuple

from protocol.commands import UNDO, Command, parse_command

from .errors import IllegalCommandError
from .position import Position
from .rules import LegalMove, apply, autoplay, legal_moves, play_listed, play_op
from .text import format_position, parse_position
from .variants import Variant


class UndoPolicy(Enum):
    """Which commands an undo may take back (RULES.md section 8)."""

    NONE = "none"
    """No undo at all."""
    SAFE = "safe"
    """Never a draw, a redeal, or a command that turned a face-down card up
    (with the auto-play that followed it): what was revealed stays revealed."""
    FULL = "full"
    """Anything."""


class Step(NamedTuple):
    """One accepted command that undo could take back.

    ``before`` is the position the command was applied to, ``after`` the
    position after it and its auto-play, ``cards`` how many cards the
    command itself moved, ``autoplayed`` how many cards auto-play moved up,
    ``revealed`` whether the command or its auto-play turned a card face up.
    A named tuple, as :class:`~server.engine.position.Position`: one is made on every command, and a frozen
    dataclass's ``__init__`` (a checked ``object.__setattr__`` per field) cost more than the rest of the step.
    """

    command: Command
    before: Position
    after: Position
    cards: int
    autoplayed: int
    revealed: bool


class Outcome(NamedTuple):
    """The answer to an accepted command: the command, the new position,
    the cards it moved (for undo: the cards that went back), the cards
    auto-play moved up, and whether the game is now won (a named tuple, like :class:`Step`)."""

    command: Command
    position: Position
    cards: int
    autoplayed: int
    won: bool


_Link = tuple[Step, "_Link | None"]
"""One step of the undo history on the link below it (``None``: the first step)."""

_UNDO_REFUSALS: dict[str, Callable[[], IllegalCommandError]] = {
    "won": lambda: IllegalCommandError("the game is won: no more commands", "game_over"),
    "off": lambda: IllegalCommandError("undo is off in this match", "undo_refused"),
    "nothing": lambda: IllegalCommandError("nothing to undo", "undo_refused"),
    "draw": lambda: IllegalCommandError("undo cannot take back a draw", "undo_refused"),
    "redeal": lambda: IllegalCommandError("undo cannot take back a redeal", "undo_refused"),
    "revealed": lambda: IllegalCommandError("undo cannot take back a command that turned a card face up",
                                            "undo_refused"),
}
"""Why an undo is refused (:meth:`Game._undo_block`'s keys) -> the error saying so (RULES.md section 8)."""

_tuple_new = tuple.__new__
"""``_tuple_new(Step, (fields...))``: a named tuple made without its class's ``__new__`` (the same value)."""


class Game:
    """One player's game: the deal, the accepted commands, the current position.

    ``autoplay`` (default on) moves safe cards up once on the fresh deal and
    after every accepted command except undo (RULES.md section 5).
    ``undo`` is an :class:`UndoPolicy` or its name. ``moves`` counts every
    accepted command, undo included; auto-play is not counted.
    """

    def __init__(
        self,
        deal: Position,
        variant: Variant,
        *,
        autoplay: bool = True,
        undo: UndoPolicy | str = UndoPolicy.SAFE,
    ) -> None:
        _check_fits(deal, variant)
        self.variant = variant
        self.deal = deal
        self.autoplay = autoplay
        self.undo_policy = UndoPolicy(undo)
        self.moves = 0
        self.undos = 0
        self._top: _Link | None = None
        """The undo history, newest step first, as a chain of links that copies share (see :meth:`copy`)."""
        self.position = _autoplay(deal, variant) if autoplay else deal

    @property
    def history(self) -> list[Step]:
        """The steps undo could take back, oldest first (a new list, in time linear in its length)."""
        steps = []
        link = self._top
        while link is not None:
            steps.append(link[0])
            link = link[1]
        steps.reverse()
        return steps

    @property
    def is_won(self) -> bool:
        """True when every card is on the foundations."""
        return self.position.is_won

    def undo_refusal(self) -> IllegalCommandError | None:
        """Why an undo would be refused now, or ``None`` when it would be accepted."""
        reason = self._undo_block()
        return None if reason is None else _UNDO_REFUSALS[reason]()

    def _undo_block(self) -> str | None:
        """Why an undo would be refused now, as a key of :data:`_UNDO_REFUSALS`, or ``None``: the check without
        building the error (every move's path asks)."""
        if self.position.is_won:
            return "won"
        if self.undo_policy is UndoPolicy.NONE:
            return "off"
        if self._top is None:
            return "nothing"
        if self.undo_policy is UndoPolicy.SAFE:
            last = self._top[0]
            if last.command.kind == "draw":
                return "draw"
            if last.command.kind == "redeal":
                return "redeal"
            if last.revealed:
                return "revealed"
        return None

    def play(self, command: str | Command) -> Outcome:
        """Apply one command (canonical notation or a :class:`Command`).

        Raises :class:`~protocol.errors.NotationError` for malformed text
        and :class:`~server.engine.errors.IllegalCommandError` for a command
        the rules or the undo policy refuse; either way nothing changes.
        """
        if not isinstance(command, Command):
            command = parse_command(command)
        if command.kind == "undo":
            refusal = self.undo_refusal()
            if refusal is not None:
                raise refusal
            assert self._top is not None
            step, self._top = self._top
            self.position = step.before
            self.moves += 1
            self.undos += 1
            return Outcome(UNDO, self.position, step.cards, 0, False)
        if self.position.is_won:
            raise IllegalCommandError("the game is won: no more commands", "game_over")
        before = self.position
        applied = apply(before, self.variant, command)
        after, revealed, autoplayed = applied.position, applied.revealed, 0
        if self.autoplay:
            auto = autoplay(after, self.variant)
            after, autoplayed = auto.position, len(auto.moves)
            revealed = revealed or auto.revealed
        self._top = (Step(command, before, after, applied.cards, autoplayed, revealed), self._top)
        self.position = after
        self.moves += 1
        return Outcome(command, after, applied.cards, autoplayed, after.is_won)

    def play_listed(self, command: str) -> tuple[Outcome, list[LegalMove]]:
        """:meth:`play` of ``command`` (canonical notation), then :meth:`legal_moves`: the same outcome, position,
        history and list, with the apply, the auto-play and the listing done in one call of the engine's optional
        C hot path (:func:`~server.engine.rules.play_listed`) for the commands it applies. Raises as :meth:`play`,
        and nothing changes then."""
        op = play_op(command)
        if op is not None:  # the C declines every command on a won position (no card left to move): play raises
            fast = play_listed(self.position, self.variant, op, self.autoplay)
            if fast is not None:
                after, cards, autoplayed, revealed, legal = fast
                # Built as tuples (a named tuple's own __new__ is a Python function): this is every move's path.
                self._top = (_tuple_new(Step, (op[0], self.position, after, cards, autoplayed, revealed)), self._top)
                self.position = after
                self.moves += 1
                if legal is None:
                    legal = legal_moves(after, self.variant)
                if self._undo_block() is None:
                    legal.append(_tuple_new(LegalMove, (UNDO, cards)))
                return _tuple_new(Outcome, (op[0], after, cards, autoplayed, after.is_won)), legal
        return self.play(command), self.legal_moves()

    def copy(self) -> Game:
        """An independent game in the same state: :meth:`play` on either leaves the other as it was.

        In constant time: the history is a chain of immutable links (each step on the one before it),
        which both games share and neither changes (a command adds a link on top, an undo steps down).
        The server plays a command on a copy and keeps it only once the command is stored, so a command
        that could not be stored needs no way back.
        """
        other = object.__new__(Game)
        other.variant, other.deal, other.autoplay, other.undo_policy = (
            self.variant, self.deal, self.autoplay, self.undo_policy)
        other.moves, other.undos, other.position = self.moves, self.undos, self.position
        other._top = self._top
        return other

    def legal_moves(self) -> list[LegalMove]:
        """Every command that :meth:`play` would accept now, each once.

        The position's legal moves (:func:`server.engine.rules.legal_moves`,
        same order) followed by ``u`` when an undo would be accepted.
        """
        result = legal_moves(self.position, self.variant)
        if self._undo_block() is None:
            assert self._top is not None
            result.append(LegalMove(UNDO, self._top[0].cards))
        return result


def _check_fits(position: Position, variant: Variant) -> None:
    """Raise :class:`ValueError` unless ``position`` is a valid position of ``variant``."""
    if len(position.tableau) != variant.columns or len(position.hidden) != variant.columns:
        raise ValueError(f"the position has {len(position.tableau)} columns, the {variant.name} variant {variant.columns}")
    if len(position.foundations) != variant.slots:
        raise ValueError(f"the position has {len(position.foundations)} foundation slots, the {variant.name} variant {variant.slots}")
    parse_position(format_position(position), variant)  # raises NotationError (a ValueError) when invalid


def _autoplay(position: Position, variant: Variant) -> Position:
    return autoplay(position, variant).position
