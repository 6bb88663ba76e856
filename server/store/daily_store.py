"""The store of the daily challenge: its keys (:mod:`server.store.keys`, hash tag ``{d:DATE:VARIANT}``)
and scripts (:mod:`server.store.scripts`), read back as :mod:`server.store.records`.

When a day closes its ``solution`` is deleted and ``attempts`` and ``events`` expire after
``FTR_RETENTION_S``; the rest stays (names, deal, board, entries, replays).
"""

from __future__ import annotations

import secrets
from enum import StrEnum
from typing import Any, NamedTuple

import msgspec

from ..names import legacy_name_key, name_key
from . import scripts
from .backend import Backend
from .keys import DAILY_DAYS, DAILY_NAMES, DAILY_SECRET, day_key, day_member, parse_day_member
from .records import DailyEntry, DailyReplay, DayDeal, NameClaim, plain
from .streams import DAY_FRAME, append


class AttemptStatus(StrEnum):
    """What :meth:`DailyStore.new_attempt` found: ``NEW`` (made now), ``EXISTS`` (the name has one) or ``CLOSED``
    (the day is closed)."""

    NEW = "new"
    EXISTS = "exists"
    CLOSED = "closed"


class Attempt(NamedTuple):
    """:meth:`DailyStore.new_attempt`'s answer: ``status`` and the attempt's match ``code`` (``""`` when closed)."""

    status: AttemptStatus
    code: str


class Place(NamedTuple):
    """:meth:`DailyStore.place`'s answer: the ``name`` as it played, its competition ``rank`` (1 + the attempts
    ranked strictly above), the day's ``total`` of ended attempts, how many rank strictly ``below``, its entry."""

    name: str
    rank: int
    total: int
    below: int
    entry: DailyEntry


class DailyStore:
    """The daily challenge's Redis keys (see :mod:`server.store.keys`), on the client of ``store``.

    A daily name is claimed under its :func:`~server.names.name_key` (names that look alike: one claim).
    """

    def __init__(self, store: Backend) -> None:
        self.store = store
        self.redis: Any = store.redis  # bytes replies: redis-py types each one bytes | str
        self._new_attempt = store.register(scripts.NEW_ATTEMPT)
        self._record = store.register(scripts.RECORD)
        self._close = store.register(scripts.CLOSE_DAY)
        self._unclaim = store.register(scripts.UNCLAIM)

    async def secret(self, configured: str | None) -> str:
        """The configured secret, else the one kept in Redis (made at first use)."""
        if configured:
            return configured
        await self.redis.set(DAILY_SECRET, secrets.token_hex(32), nx=True)
        value = await self.redis.get(DAILY_SECRET)
        return value.decode()

    async def deal(self, date: str, variant: str) -> DayDeal | None:
        """The day's deal record; None when not made."""
        data = await self.redis.hgetall(day_key(date, variant, "deal"))
        return DayDeal.from_hash(data) if data else None

    async def set_deal(self, date: str, variant: str, fields: dict[str, Any], end_ms: int) -> None:
        """Store the day's deal record (fields of :class:`DayDeal`) and list the day to close at ``end_ms``
        (epoch ms)."""
        await self.redis.hset(day_key(date, variant, "deal"), mapping={k: plain(v) for k, v in fields.items()})
        await self.redis.zadd(DAILY_DAYS, {day_member(date, variant): end_ms})

    async def claim(self, name: str, digest: str) -> bool:
        """Claim ``name`` (its :func:`~server.names.name_key`) for the token with SHA-256 ``digest``; False when
        the key is claimed already."""
        return bool(await self.redis.hsetnx(DAILY_NAMES, name_key(name), f"{digest} {name}"))

    async def unclaim(self, name: str, digest: str) -> None:
        """Free ``name``'s key if the token with SHA-256 ``digest`` holds it (a claim whose token was lost)."""
        await self._unclaim(keys=[DAILY_NAMES], args=[name_key(name), f"{digest} {name}"])

    async def drop_name_claim(self, name: str) -> None:
        """Forget any daily claim of ``name`` (under its key or its key from before): its player deleted it."""
        await self.redis.hdel(DAILY_NAMES, name_key(name), legacy_name_key(name))

    async def name_claim(self, name: str) -> NameClaim | None:
        """The claim on ``name``'s key (token digest, display name as claimed); None when unclaimed."""
        value = await self.redis.hget(DAILY_NAMES, name_key(name))
        if value is None:  # claimed before names were keyed by their confusable skeleton
            value = await self.redis.hget(DAILY_NAMES, legacy_name_key(name))
        if value is None:
            return None
        digest, _, claimed = value.decode().partition(" ")
        return NameClaim(digest, claimed)

    async def new_attempt(self, date: str, variant: str, name: str, code: str) -> Attempt:
        """``name``'s attempt of the day, made with match ``code`` unless it has one
        (:data:`~server.store.scripts.NEW_ATTEMPT`)."""
        keys = [day_key(date, variant, "deal"), day_key(date, variant, "attempts"), day_key(date, variant, "open")]
        result = await self._new_attempt(keys=keys, args=[name, code])
        return Attempt(AttemptStatus(result[0].decode()), result[1].decode() if len(result) > 1 else "")

    async def attempt_code(self, date: str, variant: str, name: str) -> str | None:
        """The match code of ``name``'s attempt of the day; None when it has none."""
        value = await self.redis.hget(day_key(date, variant, "attempts"), name)
        return value.decode() if value is not None else None

    async def counts(self, date: str, variant: str) -> tuple[int, int]:
        """(attempts made, attempts ended)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hlen(day_key(date, variant, "attempts"))
            pipe.zcard(day_key(date, variant, "board"))
            made, ended = await pipe.execute()
        return int(made), int(ended)

    async def open_attempts(self, date: str, variant: str) -> dict[str, str]:
        """Name -> match code of the day's attempts that have not ended."""
        data = await self.redis.hgetall(day_key(date, variant, "open"))
        return {k.decode(): v.decode() for k, v in data.items()}

    async def drop_open(self, date: str, variant: str, name: str) -> None:
        """Forget ``name``'s open attempt (it never started, or its match is gone): no entry on the board."""
        await self.redis.hdel(day_key(date, variant, "open"), name)

    async def record(self, date: str, variant: str, name: str, score: int, entry: DailyEntry,
                     replay: DailyReplay, event: dict[str, Any]) -> bool:
        """Put an ended attempt on the board (once, :data:`~server.store.scripts.RECORD`); False when it was
        there already."""
        keys = [day_key(date, variant, part) for part in ("open", "board", "entries", "replays", "events", "names")]
        args = [name, score, msgspec.json.encode(entry), msgspec.json.encode(replay), msgspec.json.encode(event),
                name_key(name)]
        return bool(await self._record(keys=keys, args=args))

    async def close(self, date: str, variant: str, keep_s: int) -> bool:
        """Mark the day closed when no attempt is open; True when it is (now). The solution is dropped, the
        attempts hash and the event stream expire after ``keep_s`` seconds
        (:data:`~server.store.scripts.CLOSE_DAY`)."""
        keys = [day_key(date, variant, "deal"), day_key(date, variant, "open"), day_key(date, variant, "attempts"),
                day_key(date, variant, "events")]
        closed = bool(await self._close(keys=keys, args=[keep_s]))
        if closed:
            await self.redis.zrem(DAILY_DAYS, day_member(date, variant))
        return closed

    async def days_ended(self, now_ms: int) -> list[tuple[str, str]]:
        """``(date, variant)`` of the days with a deal that ended by ``now_ms`` and are not closed yet."""
        members = await self.redis.zrangebyscore(DAILY_DAYS, "-inf", now_ms)
        return [parse_day_member(member) for member in members]

    async def board(self, date: str, variant: str, offset: int, limit: int) -> list[tuple[int, str, DailyEntry]]:
        """``(rank, name, entry)`` for board positions ``offset .. offset + limit - 1`` (competition ranks)."""
        board = day_key(date, variant, "board")
        rows = await self.redis.zrange(board, offset, offset + limit - 1, withscores=True)
        if not rows:
            return []
        names = [name.decode() for name, _ in rows]
        entries = await self.redis.hmget(day_key(date, variant, "entries"), names)
        first_score = int(rows[0][1])
        rank = int(await self.redis.zcount(board, "-inf", f"({first_score}")) + 1
        result = []
        for index, ((_, score), name, entry) in enumerate(zip(rows, names, entries)):
            if index and int(score) != int(rows[index - 1][1]):
                rank = offset + index + 1
            result.append((rank, name, msgspec.json.decode(entry, type=DailyEntry) if entry else DailyEntry()))
        return result

    async def place(self, date: str, variant: str, name: str) -> Place | None:
        """Where ``name``'s ended attempt of the day stands on its board (a look-alike of the name finds it: the
        same :func:`~server.names.name_key`); None when the name has no ended attempt that day."""
        board = day_key(date, variant, "board")
        score = await self.redis.zscore(board, name)
        if score is None:
            played = await self.redis.hget(day_key(date, variant, "names"), name_key(name))
            if played is None:
                return None
            name = played.decode()
            score = await self.redis.zscore(board, name)
            if score is None:
                return None
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zcount(board, "-inf", f"({int(score)}")
            pipe.zcount(board, f"({int(score)}", "+inf")
            pipe.zcard(board)
            pipe.hget(day_key(date, variant, "entries"), name)
            above, below, total, entry = await pipe.execute()
        found = msgspec.json.decode(entry, type=DailyEntry) if entry else DailyEntry()
        return Place(name, int(above) + 1, int(total), int(below), found)

    async def replay(self, date: str, variant: str, name: str) -> DailyReplay | None:
        """``name``'s ended attempt's commands and times; None when it has none."""
        value = await self.redis.hget(day_key(date, variant, "replays"), name)
        return msgspec.json.decode(value, type=DailyReplay) if value is not None else None

    async def add_event(self, date: str, variant: str, event: dict[str, Any]) -> None:
        """Append a public attempt event (``{"name", "status", "moves", "foundation", "time_ms"}``)."""
        await append(self.store, day_key(date, variant, "events"), {DAY_FRAME: msgspec.json.encode(event)})
