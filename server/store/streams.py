"""The event streams: what an entry holds (:class:`StreamEntry`), the feeds the hub follows (:class:`Feed`), and
the store's part that writes and reads them (:class:`Streams`).

A match's stream (:func:`match_feed`) carries internal entries too (``start``, ``takeover``), which only the
players' callback sees; a day's stream (:func:`day_feed`) carries public attempt events only. Nothing outside
:mod:`server.store` reads an entry's Redis fields: the store hands out :class:`StreamEntry` values.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from typing import Any, Literal, NamedTuple

import msgspec
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.crc import key_slot
from redis.exceptions import ClusterDownError, RedisClusterException, RedisError, SlotNotCoveredError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .backend import Backend
from .client import node_name
from .keys import day_key, events_key
from .scripts import EVENTS_MAXLEN
from .wakeups import WakeUps

log = logging.getLogger("forty_thieves.store")

FRAME = b"m"
"""The field of a match stream's entry that holds its frame (msgpack), as the scripts write it."""
DAY_FRAME = b"d"
"""The field of a day stream's entry that holds its frame (JSON)."""
KIND = b"k"
"""The field of an entry's kind (``public`` when absent)."""
PLAYER = b"n"
"""The field of the player an entry comes from or is about."""
STATUS = b"s"
"""The field of the status an ``ended`` entry gave the player's game."""
FIELDS = (FRAME, DAY_FRAME, KIND, PLAYER, STATUS)
"""Every field the store writes in a stream entry (the layout test keeps them inside :mod:`server.store`)."""

SPECTATOR_KINDS = ("public", "ended", "board")
"""Entry kinds spectators receive: public events, games the server ended, and (open-boards matches only)
players' redacted boards. ``start`` and ``takeover`` are internal."""

READ_COUNT = 200
"""The most entries one read takes of one stream (XREAD ``COUNT``): a stream that gave that many may hold more."""

READ_RETRIES = 20
"""Tries again of a failed read of the hub's streams (:meth:`Streams.read`) before its error is raised: with
:data:`READ_BACKOFF` about 15 s, longer than a Redis Cluster failover or a Redis restart."""

READ_BACKOFF = ExponentialWithJitterBackoff(base=0.05, cap=1.0)
"""Delays between those tries (and a fence's): jittered, doubling from 50 ms up to 1 s; stateless, shared."""

READ_ERRORS: tuple[type[Exception], ...] = (RedisConnectionError, RedisTimeoutError, ClusterDownError, TryAgainError,
                                            SlotNotCoveredError)
"""What a failover or a restart raises: the node gone or slow, the slot not served yet, or not known yet."""


class StreamEntry(NamedTuple):
    """One entry of an event stream: its ``id`` (``MS-SEQ``), its ``frame`` (the encoded message), its ``kind``
    (``public``, ``ended``, ``board``, ``start``, ``takeover``), the ``player`` it comes from or is about
    (``""``: none) and, for ``ended``, the ``status`` the game ended with."""

    id: str
    frame: bytes
    kind: str = "public"
    player: str = ""
    status: str = ""

    @classmethod
    def decode(cls, entry_id: bytes | str, fields: dict[bytes, bytes]) -> StreamEntry:
        """The entry of ``fields`` (raw, as XREAD and XRANGE return them) with id ``entry_id``."""
        frame = fields.get(FRAME)
        return cls(entry_id.decode() if isinstance(entry_id, bytes) else entry_id,
                   frame if frame is not None else fields.get(DAY_FRAME, b""),
                   fields.get(KIND, b"public").decode(), fields.get(PLAYER, b"").decode(),
                   fields.get(STATUS, b"").decode())


class Feed(msgspec.Struct, frozen=True):
    """One event stream and its spectators' view of it: ``key`` (its Redis key), ``of`` (``match`` or ``daily``,
    the label of the ``ftr_spectators`` metric), ``kinds`` (the entry kinds a spectator gets; None: every entry)."""

    key: str
    of: Literal["match", "daily"]
    kinds: tuple[str, ...] | None = SPECTATOR_KINDS

    def frame(self, entry: StreamEntry) -> bytes | None:
        """The frame a spectator gets of ``entry``, or None when spectators do not get that entry."""
        if self.kinds is not None and entry.kind not in self.kinds:
            return None
        return entry.frame


def match_feed(code: str) -> Feed:
    """The stream of match ``code`` (``{m:CODE}:events``): spectators get :data:`SPECTATOR_KINDS` entries."""
    return Feed(events_key(code), "match")


def day_feed(date: str, variant: str) -> Feed:
    """The stream of a day's attempt events (``{d:DATE:VARIANT}:events``): every entry."""
    return Feed(day_key(date, variant, "events"), "daily", kinds=None)


class Streams:
    """The store's event streams: entries added outside the scripts, and the hub's reads
    (:class:`server.hub.StreamSource`)."""

    def __init__(self, store: Backend) -> None:
        self.store = store
        self.redis: Any = store.redis  # bytes replies: redis-py types each one bytes | str

    async def add_event(self, code: str, frame: bytes, kind: str = "public") -> str:
        """Append ``frame`` to match ``code``'s stream as ``kind`` (``public``, ``board``, or internal:
        ``start``, ``takeover``); the new entry's id."""
        return (await append(self.store, events_key(code), {FRAME: frame, KIND: kind})).decode()

    def group(self, key: str) -> Hashable:
        """The read group of stream ``key`` (:func:`server.hub.group_streams`): one :meth:`read` reads one group.
        One Redis: 0 (one XREAD for all), or the key's slot when :attr:`Store.clustered` is set; a Redis
        Cluster: the name of the node serving the key's slot (the slot while none is known)."""
        if isinstance(self.redis, RedisCluster):
            return node_name(self.redis, key) or key_slot(key.encode())
        return key_slot(key.encode()) if self.store.clustered else 0

    async def read(self, positions: dict[str, str], block_ms: int) -> list[tuple[str, StreamEntry]]:
        """New entries of the streams ``positions`` (key -> last id seen; keys of one :meth:`group`):
        ``(key, entry)`` pairs, oldest first per stream, at most :data:`READ_COUNT` per stream.

        Keys of one slot: one XREAD waiting up to ``block_ms`` ms (0: not at all). Keys of several slots: one
        non-blocking XREAD per slot in one pipeline. A failover or restart is ridden out (:meth:`_retried`)."""
        if not positions:
            return []
        slots: dict[int, dict[str, str]] = {}
        if self.store.clustered:
            for key, last in positions.items():
                slots.setdefault(key_slot(key.encode()), {})[key] = last
        if len(slots) <= 1:
            block = block_ms or None  # XREAD's BLOCK 0 would wait for ever

            async def one() -> Any:
                return await self.redis.xread(positions, block=block, count=READ_COUNT)

            return _entries(await self._retried("the event streams", one))

        async def pipelined() -> list[Any]:
            async with self.redis.pipeline(transaction=False) as pipe:
                for part in slots.values():
                    pipe.xread(part, count=READ_COUNT)
                return await pipe.execute()

        replies = await self._retried("the event streams", pipelined)
        return [pair for reply in replies for pair in _entries(reply)]

    async def _retried(self, what: str, read: Callable[[], Awaitable[Any]]) -> Any:
        """``await read()`` (read-only, safe to repeat), tried again on :data:`READ_ERRORS`
        (:data:`READ_RETRIES`, :data:`READ_BACKOFF`); the first failure of a run is logged as a warning, the
        read that worked after it as info. Raises the last error once the tries are spent."""
        failures = 0

        async def failed(error: Exception) -> None:
            nonlocal failures
            failures += 1
            self.store.metrics.redis_failed("event streams", error)
            if failures == 1:
                log.warning("reading %s failed (%s: %s): trying again", what, type(error).__name__, error)

        # SlotNotCoveredError is no RedisError, which redis-py's annotation asks for; Retry catches any exception.
        retry = Retry(READ_BACKOFF, READ_RETRIES, supported_errors=READ_ERRORS)  # type: ignore[arg-type]
        result = await retry.call_with_retry(read, failed)
        if failures:
            self.store.metrics.redis_reached("event streams")
            log.info("reading %s worked again after %d failure%s", what, failures, "" if failures == 1 else "s")
        return result

    def wake_ups(self) -> WakeUps | None:
        """A listener of the scripts' wake-ups (on its own connections) on a Redis Cluster; None on one Redis."""
        if not self.store.wakes or not isinstance(self.redis, RedisCluster):
            return None
        return WakeUps(self.redis, self.store.metrics)

    async def after(self, key: str, after: str, page: int = 500) -> AsyncIterator[list[StreamEntry]]:
        """The entries of stream ``key`` after id ``after`` (exclusive), oldest first, to its end as it is when the
        last page is read: pages of at most ``page`` entries (one XRANGE each). Not retried."""
        while True:
            entries = await self.redis.xrange(key, min=f"({after}", max="+", count=page)
            if not entries:
                return
            after = entries[-1][0].decode()
            yield [StreamEntry.decode(entry_id, fields) for entry_id, fields in entries]
            if len(entries) < page:
                return

    async def last_id(self, key: str) -> str:
        """The id of stream ``key``'s newest entry (``0-0`` for an empty or missing stream)."""
        last = await self.redis.xrevrange(key, count=1)
        return last[0][0].decode() if last else "0-0"


async def append(store: Backend, key: str, fields: dict[bytes, Any]) -> bytes:
    """XADD ``fields`` to stream ``key`` (trimmed to about :data:`EVENTS_MAXLEN`) outside any script, then on a
    cluster its wake-up as the scripts send it (not atomic with the XADD: a lost one is the hub's safety poll's);
    the new entry's id."""
    redis: Any = store.redis
    entry: bytes = await redis.xadd(key, fields, maxlen=EVENTS_MAXLEN, approximate=True)
    if store.wakes:
        try:
            await redis.spublish(key, entry)
        except (RedisError, RedisClusterException) as error:
            # The entry is stored: raising would have the caller add it again.
            log.warning("the wake-up of %s failed (%s: %s): the safety poll reads it", key, type(error).__name__,
                        error)
    return entry


def _entries(reply: Any) -> list[tuple[str, StreamEntry]]:
    """An XREAD reply (``[[key, [[id, fields], ...]], ...]``, or None) as ``(key, entry)`` pairs."""
    return [(key.decode(), StreamEntry.decode(entry_id, fields))
            for key, entries in reply or [] for entry_id, fields in entries]
