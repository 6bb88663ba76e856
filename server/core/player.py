"""A player's game as a value, and the commands that propose its next value (RULES.md sections 5 and 8).

:class:`PlayerGame` is what the server knows of one player's game. It is never changed: a command proposes
its result (:class:`Proposal`: the next value, what to write, the reply); the adapter writes it to Redis and,
once stored, adopts ``proposal.next``. A failed or refused write leaves the old value: nothing to roll back.

Pure: ``now_ms`` is an argument, in ms since the epoch on the server's clock. The values are frozen
:class:`msgspec.Struct` types, which are cheap to make on every move's path.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import Enum, StrEnum
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


class PlayerStatus(StrEnum):
    """A player's status (player record ``status``): ``lobby`` before the start, ``playing``, then how the
    game ended."""

    LOBBY = "lobby"
    PLAYING = "playing"
    WON = "won"
    RESIGNED = "resigned"
    DEAD = "dead"
    TIMEOUT = "timeout"


PLAYING = PlayerStatus.PLAYING
ENDED = frozenset({PlayerStatus.WON, PlayerStatus.RESIGNED, PlayerStatus.DEAD, PlayerStatus.TIMEOUT})
"""The statuses of an ended game."""


def shown_status(status: PlayerStatus, stuck: bool) -> PlayerStatus:
    """The status everyone is shown of a game in ``status``: ``dead`` while it plays and is ``stuck`` (the
    solver found it dead with an undo left), else ``status``."""
    return PlayerStatus.DEAD if stuck and status == PlayerStatus.PLAYING else status


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
    """Whether the solver must say if ``game`` is dead (RULES.md section 5). ``legal`` is the game's
    :meth:`~server.engine.Game.legal_moves`, in their order. True when the stock is exhausted, some command
    is legal, no card can go up now, and every card is face up: a verdict on face-down cards would reveal
    them."""
    if not legal or not stock_exhausted(game.position, game.variant) or any(game.position.hidden):
        return False
    # ``legal`` is Game.legal_moves' list, in rules.legal_moves' order: the moves to a foundation come first, so
    # the first tells. A legal finish needs no look of its own: its first card is a column top a slot takes now,
    # which is listed as that column's move to a foundation.
    first = legal[0].command
    return not (first.target is not None and first.target.kind == "foundation")


def is_retry(seq: int, last: int, sequence: str) -> bool:
    """Check a frame's ``seq`` against ``last``, the last number accepted in its sequence; ``sequence`` names
    the sequence for the message (``"play or resign"`` or ``"hint"``). Each sequence counts 1, 2, 3, ...

    Returns True for a retry, ``seq <= last``: it is acknowledged again, never applied twice. Returns False
    for the next frame, ``seq == last + 1``. Raises :class:`ServiceError` ``malformed`` for ``seq < 1`` and
    ``seq_gap`` for ``seq > last + 1``: that frame is not applied and does not use up its number.
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

    :meth:`appended` takes amortized constant time: logs made from one another share one list, each seeing
    its first ``len(log)`` entries. A log made from an older one copies the shared part first.
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


class CommitStatus(StrEnum):
    """What :meth:`server.store.commits.Commits.commit` (the store's ``COMMIT``) made
    of a :class:`Commit`: ``OK`` (written), or why nothing was written."""

    OK = "ok"
    STALE = "stale"
    """Another connection's epoch is newer."""
    GONE = "gone"
    """The player's or the match's keys are not in Redis (it lost them)."""
    DUP = "dup"
    """The command's seq was accepted already."""
    SEQ_GAP = "seq_gap"
    """The seq skips a number (it is not the stored one plus 1)."""
    GAME_OVER = "game_over"
    NOT_PLAYING = "not_playing"
    """The match is not playing."""


def commit_refusal(result: CommitStatus, seq: int, last_seq: int) -> ServiceError | None:
    """The error for a commit of ``seq`` that Redis refused with ``result`` (``stale``, ``gone``, ``dup``,
    ``seq_gap``, ``game_over``, ``not_playing``), ``last_seq`` being what Redis holds; ``None`` for ``dup``
    (stored already: acknowledged again)."""
    if result is CommitStatus.DUP:
        return None
    if result is CommitStatus.STALE:
        return ServiceError("replaced", REPLACED)
    if result is CommitStatus.GONE:
        return MatchGone()
    if result is CommitStatus.SEQ_GAP:
        return seq_gap(seq, last_seq, "play or resign")
    return ServiceError("game_over", "your game has ended")


class Stored(msgspec.Struct, frozen=True):
    """What a player's record becomes with a command (store ``COMMIT``; times in ms from the start)."""

    moves: int
    undos: int
    hints: int
    foundation: int
    status: PlayerStatus
    time_ms: int
    last_found_ms: int


class FollowUp(Enum):
    """What the adapter does once a proposal is stored (and adopted)."""

    NONE = "none"
    END_MATCH_IF_LAST = "end_match_if_last"
    """The player's game ended: when no game plays any more (the store's count), the results."""
    END_DEAD = "end_dead"
    """No command at all is legal, undo included: the game is dead by RULES.md section 5, and that reveals
    nothing; the adapter ends it (:meth:`PlayerGame.propose_dead_end`)."""
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

    status: PlayerStatus
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
    """One player's game as the server knows it; never changed: a command proposes the next value.

    - ``game``: the engine's game, never played on once in a value; proposals play on a copy.
    - ``status``: a :class:`PlayerStatus`.
    - ``last_seq``: the last ``play``/``resign`` number accepted.
    - ``commands``: the move log; ``commands[seq - 1]`` is the command of ``seq``, a ``resign`` the seq after.
    - ``hints``: hints answered, which is the last ``hint`` number accepted; ``last_hint``: the answer to it.
    - ``last_found_ms``: ms from the start when a card last went up.
    - ``start_at_ms``, ``deadline_ms``: the match's instants, in ms since the epoch; deadline 0: none.
    - ``hints_allowed``, ``open_boards``: from the match's settings.
    - ``stuck``: dead with an undo left; the game goes on, shown ``dead`` (:attr:`shown_status`).
    """

    name: str
    game: Game
    status: PlayerStatus
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
                 status: PlayerStatus, seq: int, start_at_ms: int, deadline_ms: int, hints: int = 0, last_hint: str = "",
                 last_found_ms: int = 0, stuck: bool = False) -> PlayerGame:
        """The player's game as Redis holds it: the match's ``deal`` and ``settings`` replayed with the move log
        ``commands``, and the player record's ``status``, ``seq``, ``hints``, ``last_hint``, ``last_found_ms``,
        ``stuck``."""
        return cls(name, replayed(deal, settings, commands), PlayerStatus(status), seq, MoveLog(commands), start_at_ms, deadline_ms,
                   hints, last_hint, last_found_ms, settings.hints, settings.open_boards, stuck)

    # ------------------------------------------------------------ answers

    @property
    def shown_status(self) -> PlayerStatus:
        """The status every frame about this game gives (:func:`shown_status`)."""
        return shown_status(self.status, self.stuck)

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

    def ended(self, status: PlayerStatus | str) -> PlayerGame:
        """This game as the server ended it, ``timeout`` or ``dead``, read from an ``ended`` event of the match's
        stream. Raises ``ValueError`` for a ``status`` that is no :class:`PlayerStatus`."""
        return msgspec.structs.replace(self, status=PlayerStatus(status))

    # ------------------------------------------------------------ proposals

    def _require_playing(self) -> None:
        if self.status != PLAYING:
            raise ServiceError("game_over", f"your game has ended ({self.status})")

    def propose_play(self, seq: int, command: str, now_ms: int) -> Proposal | Reply:
        """Command ``seq`` (notation ``command``) at ``now_ms``: a :class:`Proposal` to store it, or a
        :class:`Reply`: a retry acknowledged again, or ``rejected`` for a malformed or illegal command, which
        does not use up ``seq``. Raises :class:`ServiceError` as :func:`is_retry`, and ``game_over`` once the
        time limit is over or the game has ended."""
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
        status = PlayerStatus.WON if outcome.won else PLAYING
        ends = status == PlayerStatus.WON
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
        resigned = PlayerStatus.RESIGNED
        record = Stored(game.moves, game.undos, self.hints, found, resigned, time_ms, self.last_found_ms)
        nxt = msgspec.structs.replace(self, status=resigned, last_seq=seq)
        events = (m.Finished(self.name, resigned.value, time_ms, game.moves, found),)
        return Proposal(nxt, Commit(seq, "", record, True, events), encode(nxt.position(seq, "resign", time_ms)),
                        FollowUp.END_MATCH_IF_LAST)

    def needs_hint(self, seq: int) -> bool:
        """Whether hint ``seq`` is a new one to answer (False: a retry, answered again as it was). Raises as
        :meth:`propose_hint`."""
        if not self.hints_allowed:
            raise ServiceError("no_hints", "this match does not allow hints")
        self._require_playing()
        return not is_retry(seq, self.hints, "hint")

    def propose_hint(self, seq: int, suggestion: str | None = None) -> Proposal | Reply:
        """Hint ``seq`` (hints are numbered on their own): a suggestion from the player's redacted view only
        (RULES.md section 8), counted; a retried hint gets the same answer again, not counted again.
        ``suggestion``: the planner's command for this game's position (``""``: nothing to do), computed by the
        caller from the view; ``None``: the one-look hint (:func:`server.engine.hint.hint`). Raises
        :class:`ServiceError` ``no_hints`` (the match allows none), ``game_over``, and as :func:`is_retry`."""
        if not self.needs_hint(seq):
            return Reply(m.Suggestion(seq, self.last_hint, self.hints))
        if suggestion is None:
            suggestion = hint(redact(self.game.position), self.game.variant) or ""
        nxt = msgspec.structs.replace(self, hints=self.hints + 1, last_hint=suggestion)
        return Proposal(nxt, HintWrite(nxt.hints, suggestion), encode(m.Suggestion(seq, suggestion, nxt.hints)))

    def propose_dead_end(self, moves: int, now_ms: int) -> Proposal | None:
        """The game is dead at ``moves`` moves. With an undo left, a :class:`StuckWrite`: the player is stuck,
        everyone sees status ``dead``, the game goes on. With none, an :class:`EndWrite`: the game ends as
        ``dead``. ``None`` when the player moved on, the game has ended, or it is marked stuck already."""
        game = self.game
        if game.moves != moves or self.status != PLAYING or self.stuck:
            return None
        time_ms = self.time_ms(now_ms)
        found = game.position.foundation_cards
        if game.undo_refusal() is None:
            stuck = msgspec.structs.replace(self, stuck=True)
            event = m.Progress(self.name, game.moves, found, PlayerStatus.DEAD.value, time_ms, game.undos)
            return Proposal(stuck, StuckWrite(self.last_seq, event), encode(stuck.position(self.last_seq, "", time_ms)))
        dead = PlayerStatus.DEAD
        nxt = msgspec.structs.replace(self, status=dead)
        return Proposal(nxt, EndWrite(dead, time_ms, m.Finished(self.name, dead.value, time_ms, game.moves, found)),
                        encode(nxt.position(self.last_seq, "", time_ms)), FollowUp.END_MATCH_IF_LAST)


def _after_play(game: Game, status: PlayerStatus, legal: list[LegalMove]) -> FollowUp:
    """What follows a stored ``play``: the results when it won the last game, a dead game's end or check when
    the stock is exhausted (RULES.md section 5)."""
    if status != PLAYING:
        return FollowUp.END_MATCH_IF_LAST
    if not stock_exhausted(game.position, game.variant):
        return FollowUp.NONE
    if not legal:
        return FollowUp.END_DEAD
    return FollowUp.CHECK_DEAD if needs_dead_check(game, legal) else FollowUp.NONE
