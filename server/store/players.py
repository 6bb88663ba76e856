"""The players of a match in the store: seats (join), tokens (resume, a new token), records, games ended or stuck,
move logs. Keys: :mod:`.keys`; scripts: :mod:`.scripts`."""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import Any, NamedTuple

from ..core.lifecycle import State
from . import scripts
from .backend import Backend
from .keys import events_key, log_key, meta_key, player_key, player_prefix, roster_key, tokens_key
from .records import PlayerRecord, plain


def token_hash(token: str) -> str:
    """A token as it is stored: its SHA-256 (hex)."""
    return hashlib.sha256(token.encode()).hexdigest()


class JoinStatus(StrEnum):
    """What :meth:`Players.join` made of a join (the script's reply, but ``SEATS_KEPT``)."""

    OK = "ok"
    NO_MATCH = "no_match"
    CLOSED = "closed"
    ALREADY_STARTED = "already_started"
    NAME_TAKEN = "name_taken"
    MATCH_FULL = "match_full"
    SEATS_KEPT = "seats_kept"
    """Full but for the seats kept for the round before's players (the client is told ``match_full``)."""


class Joined(NamedTuple):
    """:meth:`Players.join`'s answer: ``status`` and, when ``OK``, the ``players`` in the match now (else 0)."""

    status: JoinStatus
    players: int = 0


class Resumed(NamedTuple):
    """:meth:`Players.resume`'s answer: the player's ``name`` and the connection's new ``epoch``."""

    name: str
    epoch: int


class EndStatus(StrEnum):
    """What :meth:`Players.end` did: ``OK`` (ended now) or ``GAME_OVER`` (it had ended: nothing written)."""

    OK = "ok"
    GAME_OVER = "game_over"


class PlayerEnded(NamedTuple):
    """:meth:`Players.end`'s answer: ``status`` and, when ``OK``, the players still playing (else -1)."""

    status: EndStatus
    active: int


class StuckStatus(StrEnum):
    """What :meth:`Players.mark_stuck` did: ``OK``, or why nothing was written."""

    OK = "ok"
    GONE = "gone"
    """The player's or the match's keys are not in Redis."""
    STALE = "stale"
    """Another connection's epoch is stored."""
    MOVED = "moved"
    """The player's last accepted command is another one."""
    GAME_OVER = "game_over"
    """The game or the match is not playing."""


class Players:
    """The store's part for players (see the module docstring)."""

    def __init__(self, store: Backend) -> None:
        self.store = store
        self.redis: Any = store.redis  # bytes replies: redis-py types each one bytes | str
        self._join = store.register(scripts.JOIN)
        self._resume = store.register(scripts.RESUME)
        self._issue = store.register(scripts.ISSUE)
        self._end = store.register(scripts.END_PLAYER)
        self._stuck = store.register(scripts.STUCK)
        self._ready = store.register(scripts.READY)
        self._set = store.register(scripts.SET_PLAYER)

    async def join(self, code: str, name: str, token_digest: str, max_players: int, now_ms: int,
                   name_key: str | None = None) -> Joined:
        """Add player ``name`` to match ``code`` in its lobby, holding the token of SHA-256 ``token_digest``
        (:data:`~server.store.scripts.JOIN`). ``NAME_TAKEN`` also when another player's name has the same
        ``name_key`` (default ``name``)."""
        result = await self._join(
            keys=[meta_key(code), roster_key(code), tokens_key(code), player_key(code, name)],
            args=[name, token_digest, max_players, now_ms, name if name_key is None else name_key])
        status = JoinStatus(result[0].decode())
        if status is JoinStatus.MATCH_FULL and len(result) > 1 and result[1] == b"kept":
            return Joined(JoinStatus.SEATS_KEPT)
        return Joined(status, int(result[1]) if status is JoinStatus.OK else 0)

    async def resume(self, code: str, old_digest: str, new_digest: str) -> Resumed | None:
        """Rotate a player's token and open a new connection epoch (:data:`~server.store.scripts.RESUME`);
        ``old_digest`` is the newest token's SHA-256, or the one before while the newest is unused. None: no
        player of ``code`` holds it."""
        result = await self._resume(keys=[tokens_key(code), player_prefix(code)], args=[old_digest, new_digest])
        if result[0] != b"ok":
            return None
        return Resumed(result[1].decode(), int(result[2]))

    async def issue_token(self, code: str, name: str, digest: str) -> None:
        """Make ``digest`` (a token's SHA-256) the player's newest token (:data:`~server.store.scripts.ISSUE`)."""
        await self._issue(keys=[tokens_key(code), player_key(code, name)], args=[digest, name])

    async def set_ready(self, code: str, name: str) -> State | None:
        """Mark the player ready if the match is in its lobby (``lobby``, ``preparing``): the match's state
        (None: no such match)."""
        state = (await self._ready(keys=[meta_key(code), player_key(code, name)])).decode()
        return State(state) if state else None

    async def roster(self, code: str) -> list[str]:
        """The match's player names in join order (``[]``: no such match, or no player yet)."""
        return [n.decode() for n in await self.redis.lrange(roster_key(code), 0, -1)]

    async def all(self, code: str) -> list[PlayerRecord]:
        """Every player's record, in join order."""
        names = await self.roster(code)
        if not names:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.hgetall(player_key(code, name))
            rows = await pipe.execute()
        return [PlayerRecord.from_hash(row) for row in rows if row]

    async def get(self, code: str, name: str) -> PlayerRecord | None:
        """The record of player ``name`` of match ``code``, or None when there is none."""
        row = await self.redis.hgetall(player_key(code, name))
        return PlayerRecord.from_hash(row) if row else None

    async def update(self, code: str, name: str, **fields: Any) -> bool:
        """Set fields of a player's record (``connected``, ``hints`` ...; values as :func:`plain` writes them);
        moves go through :meth:`server.store.commits.Commits.commit`. False, nothing written, when the record
        is not in Redis (:data:`~server.store.scripts.SET_PLAYER`)."""
        args: list[Any] = []
        for k, v in fields.items():
            args += [k, plain(v)]
        return bool(await self._set(keys=[player_key(code, name)], args=args))

    async def end(self, code: str, name: str, status: str, time_ms: int, event: bytes) -> PlayerEnded:
        """End a player's game with ``status`` at ``time_ms`` (ms from the start; a timeout, a dead game) and add
        ``event`` to the stream as kind ``ended``, unless the game ended already
        (:data:`~server.store.scripts.END_PLAYER`)."""
        result = await self._end(keys=[player_key(code, name), events_key(code), meta_key(code)],
                                 args=[status, time_ms, event])
        return PlayerEnded(EndStatus(result[0].decode()), int(result[1]))

    async def mark_stuck(self, code: str, name: str, epoch: int, seq: int, event: bytes) -> StuckStatus:
        """Mark player ``name`` stuck at ``seq`` (their last accepted command) on connection ``epoch`` and add
        ``event`` to the stream (:data:`~server.store.scripts.STUCK`)."""
        result = await self._stuck(keys=[player_key(code, name), events_key(code), meta_key(code)],
                                   args=[str(epoch), str(seq), event])
        return StuckStatus(result.decode())

    async def log(self, code: str, name: str) -> list[tuple[str, int]]:
        """A player's accepted commands with their times: ``(command, ms from the start)``."""
        return log_entries(await self.redis.lrange(log_key(code, name), 0, -1))


def log_entries(entries: list[bytes]) -> list[tuple[str, int]]:
    """A move log's entries (``b"cmd ms"``) as ``(command, ms from the start)`` pairs."""
    result = []
    for entry in entries:
        command, _, ms = entry.decode().partition(" ")
        result.append((command, int(ms or 0)))
    return result
