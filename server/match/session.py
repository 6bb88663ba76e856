"""A live player connection in this process: its outbox (the socket's bounded queue) and the player it speaks for.

The registry of these connections is the match service's (:class:`server.matches.MatchService`); the
WebSocket adapter that drains an outbox is :mod:`server.play`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Generator
from dataclasses import dataclass, field
from typing import Any

from ..core.player import PlayerGame, PlayerStatus
from ..engine import Game

log = logging.getLogger("forty_thieves.play")


class Outbox:
    """A socket's outbox: the bounded queue its one writer drains (:func:`server.play._writer`), and how the
    socket is to be closed once what is queued has gone.

    While the writer is idle, :meth:`push` runs the socket's send itself (:meth:`bind_send`) up to its first
    wait. A send that has to wait, behind a client that does not read, is queued first for the writer to
    finish: one send at a time, in order, within the queue's bound.
    """

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes | _Unfinished | None] = asyncio.Queue(maxsize=512)
        self.close_with: tuple[int, str] = (1000, "")
        self.closing = False
        self._send: Callable[[bytes], Coroutine[Any, Any, None]] | None = None
        self._gone: tuple[type[BaseException], ...] = ()
        self._idle = False

    def bind_send(self, send: Callable[[bytes], Coroutine[Any, Any, None]], gone: tuple[type[BaseException], ...]) -> None:
        """Let :meth:`push` send frames with ``send`` while the writer is idle; ``gone``: the errors ``send``
        raises when the peer went away (the frame is dropped, as the writer drops it, and pushes queue again)."""
        self._send, self._gone = send, gone

    async def next_frame(self) -> bytes | _Unfinished | None:
        """The writer's next item: a frame, an unfinished send to finish, or ``None`` (close the socket)."""
        if not self.queue.empty():
            return self.queue.get_nowait()
        self._idle = True  # pushes may send directly until the writer wakes
        try:
            return await self.queue.get()
        finally:
            self._idle = False

    def push(self, frame: bytes) -> bool:
        """Send or queue a frame for the writer; False when the queue is full (a stuck reader)."""
        if self._idle and self._send is not None and not self.closing and self.queue.empty():
            step = self._send(frame)
            try:
                waiting = step.send(None)
            except StopIteration:
                return True  # sent: the transport took it
            except self._gone:
                self._send = None  # the peer went away: the writer finds out with its next frame
                return True
            except Exception:  # a bug in the send: the frame is lost, as it would be by the writer
                self._send = None
                log.exception("sending a frame failed")
                return True
            self.queue.put_nowait(_Unfinished(step, waiting))  # the queue is empty: it goes first
            return True
        try:
            self.queue.put_nowait(frame)
            return True
        except asyncio.QueueFull:
            return False

    def close(self, code: int, reason: str) -> None:
        """Have the writer close the socket with ``code`` after what is queued (or at once when full).

        The first close wins: a later one (the endpoint's own goodbye) does not change the code.
        """
        if self.closing:
            return
        self.closing = True
        self.close_with = (code, reason)
        try:
            self.queue.put_nowait(None)
        except asyncio.QueueFull:
            while not self.queue.empty():
                item = self.queue.get_nowait()
                if isinstance(item, _Unfinished):
                    item.step.close()
            self.queue.put_nowait(None)


class _Unfinished:
    """A send :meth:`Outbox.push` began that waits (on ``waiting``, what its coroutine ``step`` yielded):
    awaiting this finishes it, as ``await`` on the coroutine itself would have from that point on."""

    __slots__ = ("step", "waiting")

    def __init__(self, step: Coroutine[Any, Any, None], waiting: Any) -> None:
        self.step, self.waiting = step, waiting

    def __await__(self) -> Generator[Any, Any, None]:
        step, waiting = self.step, self.waiting
        while True:
            try:
                sent = yield waiting
            except GeneratorExit:
                step.close()
                raise
            except BaseException as error:  # noqa: BLE001 - a cancellation, handed on to the send
                try:
                    waiting = step.throw(error)
                except StopIteration:
                    return
            else:
                try:
                    waiting = step.send(sent)
                except StopIteration:
                    return


@dataclass(eq=False)
class Session(Outbox):
    """One live player connection in this process: its :class:`Outbox`, the player it speaks for (match
    ``code``, ``name``, the connection's ``epoch``) and that player's game (:attr:`player`, a
    :class:`~server.core.player.PlayerGame` value, replaced whole by each stored command)."""

    code: str = ""
    name: str = ""
    epoch: int = -1
    player: PlayerGame | None = None
    """The player's game from the deal on (``None`` before it: lobby, countdown)."""
    next_round: str = ""
    """The code of the next round a ``rematch`` put this player in: ``resume`` may go there on this connection."""
    last_seq: int = 0
    """The last ``play``/``resign`` seq Redis holds, known before the deal too (a resume in the lobby)."""
    unsure: bool = False
    """A commit's outcome could not be learnt from Redis: the game here may differ from Redis's, so the next
    numbered frame first reloads it (:meth:`server.match.playing.Playing.resolve`)."""
    fence: str = ""
    """The nonce of this connection's unanswered ``FENCE`` (``""``: none)."""
    dead_check: asyncio.Task[Any] | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    address: str = ""
    """The client's address (its claims of names are counted per address)."""

    def __post_init__(self) -> None:
        Outbox.__init__(self)

    @property
    def game(self) -> Game | None:
        """The engine's game of :attr:`player` (``None`` before the deal)."""
        return None if self.player is None else self.player.game

    @property
    def status(self) -> PlayerStatus:
        """The player's status: ``lobby`` before the deal, then ``playing`` or how the game ended."""
        return PlayerStatus.LOBBY if self.player is None else self.player.status

    def adopt(self, player: PlayerGame) -> None:
        """Take ``player`` as the player's game: a proposal Redis has stored, or what Redis holds."""
        self.player = player
        self.last_seq = player.last_seq

    def leave(self) -> None:
        """Forget the match (the connection resumes the next round): as a new connection, outbox kept."""
        self.code, self.name, self.epoch, self.player, self.next_round = "", "", -1, None, ""
        self.last_seq, self.unsure, self.fence, self.dead_check = 0, False, "", None
