"""A player's game as a value, and the commands that propose its next value (RULES.md sections 5 and 8).

:class:`PlayerGame` is everything the server knows of one player's game: the engine's
:class:`~server.engine.Game`, its status, the numbers of the last accepted ``play``/``resign`` and
``hint``, the move log as Redis holds it, and the match's instants. It is never changed: a command
*proposes* its result (:class:`Proposal`: the next value, what to write, the reply) and changes nothing;
the adapter writes it to Redis and, once Redis has stored it, *adopts* ``proposal.next``. A write that
failed or was refused leaves the value it had, so nothing needs to be rolled back.

Every function here is pure: ``now_ms`` is an argument (ms since the epoch on the server's clock). The values
are frozen :class:`msgspec.Struct` types: immutable like frozen dataclasses, and made in a fraction of their
time (a command makes several, on every move's path).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import Enum
from itertools import islice

import msgspec

from protocol import messages as m
from protocol.codec import decode_server, encode
from protocol.errors import NotationError

from ..engine import Game, IllegalCommandError, find_variant, parse_position
from ..engine.hint import hint
from ..engine.rules import LegalMove, stock_exhausted
from ..engine.view import redact
from ..views import legal_message, position_frame, view_message
from .errors import ServiceError

PLAYING = "playing"
ENDED = ("won", "resigned", "dead", "timeout")
"""How a player's game ends (player record ``status``); ``lobby`` before the start, ``playing`` during it."""


def new_game(deal: str, settings: m.Settings) -> Game:
    """A match's game before any command: its deal (position text, meta ``deal``) after the auto-play that
    comes with it. Raises what :func:`~server.engine.parse_position` raises for a deal that is no position."""
    variant = find_variant(settings.variant)
    return Game(parse_position(deal, variant), variant, autoplay=settings.autoplay, undo=settings.undo)


def replayed(deal: str, settings: m.Settings, commands: Iterable[tuple[str, int]]) -> Game:
    """A player's game rebuilt from the match's ``deal`` and the player's move log ``(command, ms)``."""
    game = new_game(deal, settings)
    for command, _ in commands:
        game.play(command)
    return game


def needs_dead_check(game: Game, legal: list[LegalMove]) -> bool:
    """Whether the solver must say if ``game`` is dead (RULES.md section 5): the stock is exhausted, some
    command is legal (none at all is dead by itself), no card can go up now (that is alive), and every
    card is face up (a verdict that depended on face-down cards would reveal them). ``legal``: the game's
    :meth:`~server.engine.Game.legal_moves`, in their order."""
    if not legal or not stock_exhausted(game.position, game.variant) or any(game.position.hidden):
        return False
    # ``legal`` is Game.legal_moves' list, in rules.legal_moves' order: the moves to a foundation come first, so
    # the first tells. A legal finish needs no look of its own: its first card is a column top a slot takes now,
    # which is listed as that column's move to a foundation.
    first = legal[0].command
    return not (first.target is not None and first.target.kind == "foundation")


def is_retry(seq: int, last: int, sequence: str) -> bool:
    """Check a frame's ``seq`` against ``last``, the last number accepted in its sequence (``sequence`` names it
    for the message: ``"play or resign"``, or ``"hint"``; each sequence counts 1, 2, 3, ... with no gap).

    Returns True for a retry (``seq <= last``: that frame was accepted, so it is acknowledged again and never
    applied twice) and False for the next frame (``seq == last + 1``). Raises :class:`ServiceError`
    ``malformed`` for ``seq < 1`` and ``seq_gap`` for ``seq > last + 1`` (a number was skipped: the frame is
    not applied, does not use up its number, and the message names the one expected).
    """
    if seq < 1:
        raise ServiceError("malformed", "seq numbers a player's commands from 1")
    if seq > last + 1:
        raise seq_gap(seq, last, sequence)
    return seq <= last


def seq_gap(seq: int, last: int, sequence: str) -> ServiceError:
    """The ``seq_gap`` refusal of frame ``seq`` when ``last`` was the last number accepted (see :func:`is_retry`)."""
    return ServiceError("seq_gap", f"seq {seq} skips ahead: the next {sequence} must be seq {last + 1} (the last "
                                   f"accepted was {last}); nothing was applied")


REPLACED = "another connection with your token took over this game"

MATCH_GONE = ("the server lost this match: its data is gone (its Redis restarted without its saved data, or was "
              "emptied), so the game cannot go on; create or join another match")
"""The message of ``no_match`` to a player whose match's keys vanished while it played (never ``replaced``:
no other connection took over)."""


MATCH_GONE_CLOSE = 4004
"""Close code of a player's connection after ``no_match`` for a match Redis lost (README "Protocol"): the
clients do not reconnect after it."""


class MatchGone(ServiceError):
    """``no_match`` with :data:`MATCH_GONE`: the player's match is gone from Redis. The connection is closed
    after it (close 4004): nothing it sends can succeed. ``match``: the match's code, where the connection has
    none yet (a ``resume`` or ``join`` of it); ``""`` for the connection's own match."""

    def __init__(self, match: str = "") -> None:
        super().__init__("no_match", MATCH_GONE)
        self.match = match


class MoveLog:
    """A player's move log as Redis holds it: ``(command, ms from the start)`` per accepted ``play``; immutable.

    :meth:`appended` makes the log with one entry more in constant time (amortized): the logs made from one
    another share one list, each seeing only its first ``len(log)`` entries, so a log that is never adopted
    (its command was not stored) costs nothing and changes no other; the next log made from an older one
    copies the shared part first.
    """

    __slots__ = ("_entries", "_length")

    def __init__(self, entries: Iterable[tuple[str, int]] = ()) -> None:
        self._entries = list(entries)
        self._length = len(self._entries)

    def appended(self, entry: tuple[str, int]) -> MoveLog:
        """This log with ``entry`` after its last."""
        entries = self._entries
        if len(entries) != self._length:  # a longer log was made from this one already: do not see its entry
            entries = entries[: self._length]
        entries.append(entry)
        log = MoveLog.__new__(MoveLog)
        log._entries, log._length = entries, self._length + 1
        return log

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> tuple[str, int]:
        """Entry ``index`` (``seq - 1`` for the command of ``seq``); negative from the end. Raises ``IndexError``."""
        if not -self._length <= index < self._length:
            raise IndexError("move log index out of range")
        return self._entries[index % self._length]

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return islice(self._entries, self._length)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MoveLog | tuple | list):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"MoveLog({list(self)!r})"


def commit_refusal(result: str, seq: int, last_seq: int) -> ServiceError | None:
    """The error for a commit of ``seq`` that Redis refused with ``result`` (``stale``, ``gone``, ``dup``,
    ``seq_gap``, ``game_over``, ``not_playing``), ``last_seq`` being what Redis holds; ``None`` for ``dup``
    (stored already: acknowledged again)."""
    if result == "dup":
        return None
    if result == "stale":
        return ServiceError("replaced", REPLACED)
    if result == "gone":
        return MatchGone()
    if result == "seq_gap":
        return seq_gap(seq, last_seq, "play or resign")
    return ServiceError("game_over", "your game has ended")


class Stored(msgspec.Struct, frozen=True):
    """What a player's record becomes with a command (store ``COMMIT``; times in ms from the start)."""

    moves: int
    undos: int
    hints: int
    foundation: int
    status: str
    time_ms: int
    last_found_ms: int

    def fields(self) -> dict[str, int | str]:
        """The record's fields by name, as the store writes them."""
        return {"moves": self.moves, "undos": self.undos, "hints": self.hints, "foundation": self.foundation,
                "status": self.status, "time_ms": self.time_ms, "last_found_ms": self.last_found_ms}


class FollowUp(Enum):
    """What the adapter does once a proposal is stored (and adopted)."""

    NONE = "none"
    END_MATCH_IF_LAST = "end_match_if_last"
    """The player's game ended: when no game plays any more (the store's count), the results."""
    END_DEAD = "end_dead"
    """No command at all is legal, undo included: the game is dead by RULES.md section 5, decided from what the
    player sees (so it reveals nothing): it ends now (:meth:`PlayerGame.propose_dead_end`)."""
    CHECK_DEAD = "check_dead"
    """The stock is exhausted and no card can go up: the solver is asked, in a worker, whether it is dead."""


class Commit(msgspec.Struct, frozen=True):
    """Write a ``play`` or ``resign`` (store ``COMMIT``): the log ``entry`` (``"command ms"``; ``""`` for a
    resign), the player's ``record``, whether it ``ends`` the game, public ``events``, spectators' ``boards``."""

    seq: int
    entry: str
    record: Stored
    ends: bool
    events: tuple[m.Progress | m.Finished, ...]
    boards: tuple[m.Board, ...] = ()


class HintWrite(msgspec.Struct, frozen=True):
    """Write a hint's count and answer to the player's record (kept for a retried hint)."""

    hints: int
    last_hint: str


class EndWrite(msgspec.Struct, frozen=True):
    """End the player's game as ``status`` at ``time_ms`` (store ``END_PLAYER``), announcing ``event``."""

    status: str
    time_ms: int
    event: m.Finished


class StuckWrite(msgspec.Struct, frozen=True):
    """Mark the player stuck (store ``STUCK``): their game is dead at ``seq``, their last accepted ``play``,
    and an undo is left, so it goes on; ``event`` (a ``progress`` with status ``dead``) tells everyone. The
    next accepted command (store ``COMMIT``) clears the mark, its own ``progress`` saying ``playing``."""

    seq: int
    event: m.Progress


class Proposal(msgspec.Struct, frozen=True):
    """The result of a command, not yet stored: ``write`` it, and once stored adopt ``next``, send ``frame``
    (the reply, encoded: every move's reply is written in one call, :func:`~server.views.position_frame`),
    then do ``follow_up``."""

    next: PlayerGame
    write: Commit | HintWrite | EndWrite | StuckWrite
    frame: bytes
    follow_up: FollowUp = FollowUp.NONE

    @property
    def reply(self) -> m.PositionReply | m.Suggestion:
        """The reply ``frame`` carries, as a message (decoded)."""
        reply = decode_server(self.frame)
        assert isinstance(reply, m.PositionReply | m.Suggestion)
        return reply


class Reply(msgspec.Struct, frozen=True):
    """A command that needs no write: only this answer (a retry acknowledged again, a refused move)."""

    message: m.PositionReply | m.Rejected | m.Suggestion


class PlayerGame(msgspec.Struct, frozen=True):
    """One player's game as the server knows it; never changed (a command proposes the next value).

    ``game`` is the engine's game and is never played on once it is in a value (proposals play on a copy).
    ``status``: ``lobby``, ``playing`` or how it ended; ``last_seq``: the last ``play``/``resign`` number
    accepted; ``commands``: the move log as Redis holds it, ``(command, ms from the start)`` per accepted
    ``play``, so ``commands[seq - 1]`` is the command of ``seq`` (a ``resign`` is the one seq after them);
    ``hints``: hints answered, which is the last ``hint`` number accepted, ``last_hint`` the answer to it;
    ``last_found_ms``: when a card last went up; ``start_at_ms``/``deadline_ms``: the match's instants (ms
    since the epoch; deadline 0: none); ``hints_allowed`` and ``open_boards`` from the match's settings;
    ``stuck``: the solver found the game dead while an undo is left (it still plays, but every frame about it
    says ``dead`` until the player's next accepted command: :attr:`shown_status`).
    """

    name: str
    game: Game
    status: str
    last_seq: int
    commands: MoveLog
    start_at_ms: int
    deadline_ms: int
    hints: int = 0
    last_hint: str = ""
    last_found_ms: int = 0
    hints_allowed: bool = False
    open_boards: bool = False
    stuck: bool = False

    @classmethod
    def restored(cls, name: str, deal: str, settings: m.Settings, commands: list[tuple[str, int]],
                 status: str, seq: int, start_at_ms: int, deadline_ms: int, hints: int = 0, last_hint: str = "",
                 last_found_ms: int = 0, stuck: bool = False) -> PlayerGame:
        """The player's game as Redis holds it: the match's ``deal`` and ``settings`` replayed with the move log
        ``commands``, and the player record's ``status``, ``seq``, ``hints``, ``last_hint``, ``last_found_ms``,
        ``stuck``."""
        return cls(name, replayed(deal, settings, commands), status, seq, MoveLog(commands), start_at_ms, deadline_ms,
                   hints, last_hint, last_found_ms, settings.hints, settings.open_boards, stuck)

    # ------------------------------------------------------------ answers

    @property
    def shown_status(self) -> str:
        """The status every frame about this game gives: ``dead`` while :attr:`stuck`, else :attr:`status`."""
        return "dead" if self.stuck and self.status == PLAYING else self.status

    def time_ms(self, now_ms: int) -> int:
        """Ms from the start to ``now_ms`` (0 before the start)."""
        return max(0, now_ms - self.start_at_ms)

    def legal(self) -> list[LegalMove]:
        """The commands the player may send now (none once the game has ended)."""
        return self.game.legal_moves() if self.status == PLAYING else []

    def started(self, undos: int) -> m.Started:
        """The ``started`` frame: the redacted deal as it stands, legal moves, counters (``undos`` as stored)."""
        return m.Started(self.start_at_ms, self.deadline_ms, view_message(self.game.position),
                         legal_message(self.legal()), self.game.moves, self.last_seq, self.shown_status, self.hints,
                         undos)

    def position(self, seq: int, command: str, time_ms: int) -> m.PositionReply:
        """The ``position`` reply: the redacted view, legal moves, counters, the time in ms since the start and
        the status (:attr:`shown_status`). A ``play``'s reply is written straight to its frame instead
        (:func:`~server.views.position_frame`, the same bytes)."""
        game = self.game
        return m.PositionReply(seq, command, view_message(game.position), legal_message(self.legal()), game.moves,
                               game.undos, game.position.foundation_cards, self.shown_status, time_ms)

    def acknowledged(self, seq: int, now_ms: int) -> m.PositionReply:
        """The answer to a ``seq`` accepted already: the position right after the command Redis holds as ``seq``,
        naming it. The last one accepted: the game's position now, with its legal moves; an older one: the
        position it made, its time, and no legal moves (it is not the game's position any more)."""
        if seq > len(self.commands):  # the resign that ended the game, after the last logged command
            return self.position(seq, "resign", self.time_ms(now_ms))
        command, time_ms = self.commands[seq - 1]
        if seq == self.last_seq:
            return self.position(seq, command, time_ms)
        game = self.game
        then = Game(game.deal, game.variant, autoplay=game.autoplay, undo=game.undo_policy)
        for earlier, _ in islice(self.commands, seq):
            then.play(earlier)
        return m.PositionReply(seq, command, view_message(then.position), [], then.moves, then.undos,
                               then.position.foundation_cards, PLAYING, time_ms)

    def ended(self, status: str) -> PlayerGame:
        """This game as the server ended it (``timeout``, ``dead``: an ``ended`` event of the match's stream)."""
        return msgspec.structs.replace(self, status=status)

    # ------------------------------------------------------------ proposals

    def _require_playing(self) -> None:
        if self.status != PLAYING:
            raise ServiceError("game_over", f"your game has ended ({self.status})")

    def propose_play(self, seq: int, command: str, now_ms: int) -> Proposal | Reply:
        """Command ``seq`` (notation ``command``) at ``now_ms``: a :class:`Proposal` to store it, or a
        :class:`Reply` (a retry acknowledged again; ``rejected`` for a malformed or illegal command: nothing
        changes and ``seq`` is not used up). Raises :class:`ServiceError` ``malformed`` / ``seq_gap``
        (:func:`is_retry`) and ``game_over`` (the time limit is over, or the game has ended)."""
        if is_retry(seq, self.last_seq, "play or resign"):  # acknowledged again, never applied twice
            return Reply(self.acknowledged(seq, now_ms))
        if self.deadline_ms and now_ms >= self.deadline_ms:
            raise ServiceError("game_over", "the time limit is over")
        self._require_playing()
        time_ms = self.time_ms(now_ms)
        game = self.game.copy()
        try:
            outcome, legal = game.play_listed(command)
        except (NotationError, IllegalCommandError) as error:
            code = getattr(error, "code", "illegal")
            return Reply(m.Rejected(seq, command, code, str(error)))
        found = game.position.foundation_cards
        # The same foundations tuple (most commands pass it on untouched) holds the same cards: no second count.
        went_up = (game.position.foundations is not self.game.position.foundations
                   and found > self.game.position.foundation_cards)
        last_found_ms = time_ms if went_up else self.last_found_ms
        status = "won" if outcome.won else PLAYING
        ends = status == "won"
        events: tuple[m.Progress | m.Finished, ...] = (m.Progress(self.name, game.moves, found, status, time_ms,
                                                                  game.undos),)
        if ends:
            events += (m.Finished(self.name, status, time_ms, game.moves, found),)
        boards = ((m.Board(self.name, game.moves, found, status, time_ms, view_message(game.position)),)
                  if self.open_boards else ())
        # Built directly: this is every move's path.
        nxt = PlayerGame(self.name, game, status, seq, self.commands.appended((command, time_ms)), self.start_at_ms,
                         self.deadline_ms, self.hints, self.last_hint, last_found_ms, self.hints_allowed,
                         self.open_boards)
        if status != PLAYING:  # nxt.legal(): none once the game has ended
            legal = []
        record = Stored(game.moves, game.undos, self.hints, found, status, time_ms, last_found_ms)
        # The reply is encoded here in one call (this is every move's path), not built as a message first.
        frame = position_frame(seq, command, game.position, legal, game.moves, game.undos, found, status, time_ms)
        return Proposal(nxt, Commit(seq, f"{command} {time_ms}", record, ends, events, boards), frame,
                        _after_play(game, status, legal))

    def propose_resign(self, seq: int, now_ms: int) -> Proposal | Reply:
        """Resign as ``seq`` (numbered like ``play``): a :class:`Proposal` ending the game as ``resigned``, or a
        retry acknowledged again. Raises as :meth:`propose_play` (but a resign is taken after the time limit
        too, until the deadline timer has ended the game)."""
        if is_retry(seq, self.last_seq, "play or resign"):
            return Reply(self.acknowledged(seq, now_ms))
        self._require_playing()
        time_ms = self.time_ms(now_ms)
        game = self.game
        found = game.position.foundation_cards
        record = Stored(game.moves, game.undos, self.hints, found, "resigned", time_ms, self.last_found_ms)
        nxt = msgspec.structs.replace(self, status="resigned", last_seq=seq)
        events = (m.Finished(self.name, "resigned", time_ms, game.moves, found),)
        return Proposal(nxt, Commit(seq, "", record, True, events), encode(nxt.position(seq, "resign", time_ms)),
                        FollowUp.END_MATCH_IF_LAST)

    def propose_hint(self, seq: int) -> Proposal | Reply:
        """Hint ``seq`` (hints are numbered on their own): a suggestion from the player's redacted view only
        (RULES.md section 8), counted; a retried hint gets the same answer again, not counted again. Raises
        :class:`ServiceError` ``no_hints`` (the match allows none), ``game_over``, and as :func:`is_retry`."""
        if not self.hints_allowed:
            raise ServiceError("no_hints", "this match does not allow hints")
        self._require_playing()
        if is_retry(seq, self.hints, "hint"):
            return Reply(m.Suggestion(seq, self.last_hint, self.hints))
        suggestion = hint(redact(self.game.position), self.game.variant) or ""
        nxt = msgspec.structs.replace(self, hints=self.hints + 1, last_hint=suggestion)
        return Proposal(nxt, HintWrite(nxt.hints, suggestion), encode(m.Suggestion(seq, suggestion, nxt.hints)))

    def propose_dead_end(self, moves: int, now_ms: int) -> Proposal | None:
        """The solver (or the empty legal list) found the game dead at ``moves`` moves: with an undo left the
        player is stuck (:class:`StuckWrite`: a ``progress`` with status ``dead`` to everyone, the reply a
        ``position`` with status ``dead``; the game goes on); with none the game ends as ``dead``
        (:class:`EndWrite`). ``None`` when the player moved on meanwhile, the game has ended, or it is marked
        stuck already."""
        game = self.game
        if game.moves != moves or self.status != PLAYING or self.stuck:
            return None
        time_ms = self.time_ms(now_ms)
        found = game.position.foundation_cards
        if game.undo_refusal() is None:
            stuck = msgspec.structs.replace(self, stuck=True)
            event = m.Progress(self.name, game.moves, found, "dead", time_ms, game.undos)
            return Proposal(stuck, StuckWrite(self.last_seq, event), encode(stuck.position(self.last_seq, "", time_ms)))
        nxt = msgspec.structs.replace(self, status="dead")
        return Proposal(nxt, EndWrite("dead", time_ms, m.Finished(self.name, "dead", time_ms, game.moves, found)),
                        encode(nxt.position(self.last_seq, "", time_ms)), FollowUp.END_MATCH_IF_LAST)


def _after_play(game: Game, status: str, legal: list[LegalMove]) -> FollowUp:
    """What follows a stored ``play``: the results when it won the last game, a dead game's end or check when
    the stock is exhausted (RULES.md section 5)."""
    if status != PLAYING:
        return FollowUp.END_MATCH_IF_LAST
    if not stock_exhausted(game.position, game.variant):
        return FollowUp.NONE
    if not legal:
        return FollowUp.END_DEAD
    return FollowUp.CHECK_DEAD if needs_dead_check(game, legal) else FollowUp.NONE
