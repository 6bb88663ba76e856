"""A live player connection in this process: its outbox (the socket's bounded queue) and the player it speaks for.

The registry of these connections is the match service's (:class:`server.matches.MatchService`); the
WebSocket adapter that drains an outbox is :mod:`server.play`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from ..core.player import PlayerGame
from ..engine import Game


class Outbox:
    """A socket's outbox: the bounded queue its one writer drains (:func:`server.play._writer`), and how the
    socket is to be closed once what is queued has gone."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=512)
        self.close_with: tuple[int, str] = (1000, "")
        self.closing = False

    def push(self, frame: bytes) -> bool:
        """Queue a frame for the writer; False when the queue is full (a stuck reader)."""
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
        if not self.push(None):  # type: ignore[arg-type]
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(None)


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

    def __post_init__(self) -> None:
        Outbox.__init__(self)

    @property
    def game(self) -> Game | None:
        """The engine's game of :attr:`player` (``None`` before the deal)."""
        return None if self.player is None else self.player.game

    @property
    def status(self) -> str:
        """The player's status: ``lobby`` before the deal, then ``playing`` or how the game ended."""
        return "lobby" if self.player is None else self.player.status

    def adopt(self, player: PlayerGame) -> None:
        """Take ``player`` as the player's game: a proposal Redis has stored, or what Redis holds."""
        self.player = player
        self.last_seq = player.last_seq

    def leave(self) -> None:
        """Forget the match (the connection resumes the next round): as a new connection, outbox kept."""
        self.code, self.name, self.epoch, self.player, self.next_round = "", "", -1, None, ""
        self.last_seq, self.unsure, self.fence, self.dead_check = 0, False, "", None
