"""The fan-out hub: one stream reader per process, one registry of subscribers, catch-up then live.

encode/broadcaster's shape (a backend interface, :class:`StreamSource`; a bounded queue per subscriber; one
listener task, :meth:`Hub.run`; subscriptions as async context managers), but carrying entries with their
stream ids, so a spectator resumes after the last id it saw with nothing lost or repeated.

Each event stream is a :class:`~server.store.Feed`, followed from its newest id while it has a subscriber:

- a queue (:meth:`Hub.subscribe`, spectators): the feed's spectator frames, at most ``limit`` behind; past
  that the subscriber is dropped (:class:`TooSlow`) and slows nobody else;
- a callback (:meth:`Hub.listen`, this process's players): every entry (a :class:`~server.store.StreamEntry`),
  in order, in the reader's task; the hub knows nothing of matches.

Each entry is delivered once, in stream order, across the reader's restarts (the positions are the hub's).
Reads are grouped by :meth:`StreamSource.group`: on one Redis one blocking XREAD; on a Redis Cluster,
where a blocking XREAD names one slot only, non-blocking reads driven by wake-ups (:mod:`server.store.wakeups`)
and a safety poll of every stream each :data:`SAFETY_POLL_MS`. :meth:`Hub.end` ends a feed's subscriptions
for a reason (:class:`Ended`). Catch-up then live (:meth:`Subscription.batches`): registered first, so live
entries queue while the stored ones are read; a live entry already sent is skipped by its id.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Mapping
from types import TracebackType
from typing import Protocol, Self

from .core.errors import ServiceError
from .store import READ_COUNT, Feed, StreamEntry
from .store.wakeups import WakeUps

log = logging.getLogger("forty_thieves.hub")

QUEUE_LIMIT = 1024
"""Default queue limit of a subscriber: entries it may fall behind by before it is dropped
(``Settings.watcher_queue``, ``FTR_WATCHER_QUEUE``)."""

BLOCK_MS = 100
"""How long one blocking XREAD (one Redis) waits for an entry (ms): a feed followed meanwhile in a group whose
read is in flight is read from the next read on (its start id is fixed when it is followed, so nothing is
lost)."""

SAFETY_POLL_MS = 1000
"""With wake-ups (a Redis Cluster): every followed stream is read at least this often (ms), woken or not, so a
lost wake-up (pub/sub is at most once: a subscription's connection killed, a failover, a slot moved) delays an
entry by this much at most and loses none. Each such round is one XREAD per followed slot; the read groups are
made again then too (a failover changes which node serves a slot)."""

Entry = tuple[str, bytes]
"""``(stream id, frame)``: what a queue subscriber gets."""

Callback = Callable[[StreamEntry], Awaitable[None]]
"""A callback subscriber: awaited with every entry of its stream, in order."""


class StreamSource(Protocol):
    """What the hub needs of the store (:class:`server.store.streams.Streams` implements it)."""

    def group(self, key: str) -> Hashable:
        """The read group of stream ``key``: one XREAD covers the streams of one group."""
        ...

    async def read(self, positions: dict[str, str], block_ms: int) -> list[tuple[str, StreamEntry]]:
        """New ``(key, entry)`` pairs after each stream's position, waiting up to ``block_ms`` ms (0: not
        at all; keys of several hash slots are never waited for)."""
        ...

    def after(self, key: str, after: str, page: int = 500) -> AsyncIterator[list[StreamEntry]]:
        """The stored entries after ``after`` (exclusive), in pages, to the end."""
        ...

    async def last_id(self, key: str) -> str:
        """The newest id of stream ``key`` (``0-0`` when it is empty)."""
        ...

    def wake_ups(self) -> WakeUps | None:
        """A listener of the streams' wake-ups when reads must not wait (a Redis Cluster), else None."""
        ...


class HubFull(Exception):
    """A feed already has its ``max_subscribers`` queue subscribers in this process (nothing was registered)."""


class Ended(Exception):
    """Raised by a subscription's generator once the server ended its feed (:meth:`Hub.end`): ``reason`` is the
    refusal its subscribers are to be told (a :class:`~server.core.errors.ServiceError`: the match is gone)."""

    def __init__(self, reason: ServiceError) -> None:
        super().__init__(reason.message)
        self.reason = reason


class TooSlow(Exception):
    """Raised by a subscription's generator once the subscriber fell ``limit`` entries behind and was dropped:
    it may subscribe again and resume after the last id it got."""


def order(entry_id: str) -> tuple[int, int]:
    """A stream id ``MS-SEQ`` as a pair that sorts as Redis orders ids."""
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def group_streams(positions: Mapping[str, str],
                  group_of: Callable[[str], Hashable]) -> dict[Hashable, dict[str, str]]:
    """The followed streams ``positions`` (key -> last id) split by ``group_of(key)``: one dict per group,
    each one XREAD's argument. Groups and their keys keep the order of ``positions``."""
    groups: dict[Hashable, dict[str, str]] = {}
    for key, last in positions.items():
        groups.setdefault(group_of(key), {})[key] = last
    return groups


class Subscription:
    """One subscriber of one feed, made by :meth:`Hub.subscribe` or :meth:`Hub.listen`.

    Opened (registered, the feed followed) by :meth:`open` or on entering ``async with``; closed by
    :meth:`close` or on leaving it, however it is left: then its slot is released, the feed is no longer
    followed once nobody subscribes to it, and a generator waiting on the queue ends. Not reusable.
    """

    def __init__(self, hub: Hub, feed: Feed, limit: int, max_subscribers: int | None,
                 callback: Callback | None) -> None:
        self.hub = hub
        self.feed = feed
        self.limit = max(1, limit)
        self.max_subscribers = max_subscribers
        self.callback = callback
        self.opened = False
        self.closed = False
        self.dropped = False
        """True once the subscriber fell :attr:`limit` entries behind: nothing more is queued."""
        self.ended: ServiceError | None = None
        """Why the server ended the subscription (:meth:`end`), or None."""
        self._queue: asyncio.Queue[Entry | None] = asyncio.Queue(maxsize=self.limit + 1)

    async def open(self) -> None:
        """Register and have the reader follow the feed (nothing when open already). Raises :class:`HubFull`
        (nothing registered) and what the store raises reading the stream's newest id (then closed)."""
        if self.opened:
            return
        if self.closed:
            raise RuntimeError("a closed subscription cannot be opened again")
        self.hub._register(self)
        self.opened = True
        try:
            await self.hub._follow(self.feed.key)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Release the slot and end the generator (once; later calls do nothing). Entries still queued are
        discarded: the subscriber is gone."""
        if self.closed:
            return
        self.closed = True
        if self.opened:
            self.hub._release(self)
        while not self._queue.empty():
            self._queue.get_nowait()
        self._queue.put_nowait(None)

    def end(self, reason: ServiceError) -> None:
        """Close the subscription for ``reason`` (once; nothing when closed already): its generator raises
        :class:`Ended` with it instead of ending quietly."""
        if self.closed:
            return
        self.ended = reason
        self.close()

    def _stop(self) -> None:
        """Raises :class:`Ended` when the subscription was ended for a reason (:meth:`end`)."""
        if self.ended is not None:
            raise Ended(self.ended)

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        self.close()

    async def _deliver(self, entry: StreamEntry) -> None:
        """One entry from the reader: to the callback, or queued as its spectator frame (past :attr:`limit`
        queued the subscriber is dropped instead)."""
        if self.callback is not None:
            await self.callback(entry)
            return
        if self.dropped or self.closed:
            return
        frame = self.feed.frame(entry)
        if frame is None:
            return
        if self._queue.qsize() >= self.limit:
            self.dropped = True
            self._queue.put_nowait(None)
            return
        self._queue.put_nowait((entry.id, frame))

    async def batches(self, after: str = "0-0", *, page: int = 500, pace_s: float = 0.0) -> AsyncIterator[list[Entry]]:
        """The feed's spectator frames after stream id ``after`` (exclusive): what the stream holds (a batch per
        page of ``page`` entries read), then the live entries as they come (a batch of what queued meanwhile,
        then a pause of ``pace_s`` seconds so that the next batch gathers several), each entry once, in stream
        order. Opens the subscription if needed; ends when it is closed (raising :class:`Ended` when it was ended
        for a reason: :meth:`end`); raises :class:`TooSlow` once it was dropped (after the batch queued before the
        drop) and what the store raises reading the stream."""
        if self.callback is not None:
            raise TypeError("a callback subscription has no queue to read")
        self._stop()  # ended before its first read
        await self.open()
        sent = order(after)
        async for entries in self.hub.source.after(self.feed.key, after, page):
            if self.closed:
                self._stop()
                return
            sent = max(sent, order(entries[-1].id))
            chosen = [(entry.id, frame) for entry in entries if (frame := self.feed.frame(entry)) is not None]
            if chosen:
                yield chosen
        while not self.closed:
            items = [await self._queue.get()]
            while not self._queue.empty():
                items.append(self._queue.get_nowait())
            batch, ended = [], False
            for item in items:
                if item is None:
                    ended = True
                    break
                if order(item[0]) > sent:  # not sent by the catch-up already
                    sent = order(item[0])
                    batch.append(item)
            if self.closed:
                self._stop()
                return
            if batch:
                yield batch
            if ended:
                raise TooSlow(f"fell {self.limit} events behind on {self.feed.key}")
            if pace_s:
                await asyncio.sleep(pace_s)
        self._stop()

    async def events(self, after: str = "0-0", *, page: int = 500) -> AsyncIterator[Entry]:
        """:meth:`batches` one ``(stream id, frame)`` at a time (no pause)."""
        async for batch in self.batches(after, page=page):
            for entry in batch:
                yield entry


class Hub:
    """The fan-out of one process (see the module docstring): ``source`` is the store; ``queue_limit`` the default
    queue limit of a subscriber; after a read that returned entries, the group's next read waits ``pause_s``
    seconds so that it gathers several (fewer XREADs under load, woken or blocking); one blocking read waits
    ``block_ms`` ms at most."""

    def __init__(self, source: StreamSource, *, queue_limit: int = QUEUE_LIMIT, pause_s: float = 0.0,
                 block_ms: int = BLOCK_MS) -> None:
        self.source = source
        self.queue_limit = queue_limit
        self.pause_s = pause_s
        self.block_ms = block_ms
        self.positions: dict[str, str] = {}
        """Each followed stream's key -> the id of the last entry delivered (or its newest when followed)."""
        self._subscribers: dict[str, dict[Subscription, None]] = {}
        """Each followed stream's subscribers, in the order they opened (a dict as an ordered set)."""
        self._wakeup = asyncio.Event()
        self.wake_ups = source.wake_ups()
        """The wake-up listener on a Redis Cluster (reads do not wait there), None on one Redis."""
        self._woken: dict[str, str | None] = {}
        """With wake-ups: each stream woken since its last read began -> the newest id a wake-up named (None: an
        entry may have come unnamed, a subscription was made again)."""
        self._groups: dict[Hashable, list[str]] | None = None
        """The followed streams' keys by read group (:meth:`_grouped`); None once they must be grouped again."""
        self._group_of: dict[str, Hashable] = {}
        """Each followed stream's read group, as :attr:`_groups` has it."""

    # ------------------------------------------------------------ subscribing

    def subscribe(self, feed: Feed, *, limit: int | None = None, max_subscribers: int | None = None) -> Subscription:
        """A queue subscription of ``feed`` (not open yet: ``async with`` it, or :meth:`Subscription.open`).
        ``limit``: the entries it may fall behind by (default :attr:`queue_limit`); ``max_subscribers``: opening
        raises :class:`HubFull` when the feed has that many queue subscribers in this process already."""
        return Subscription(self, feed, self.queue_limit if limit is None else limit, max_subscribers, None)

    def listen(self, feed: Feed, callback: Callback) -> Subscription:
        """A callback subscription of ``feed`` (not open yet): ``callback`` is awaited with every entry
        (:class:`~server.store.StreamEntry`), in order, by the reader; what it raises restarts the reader, which
        then delivers that entry again to every subscriber of the feed (a queue subscriber's generator skips it by
        its id)."""
        return Subscription(self, feed, 1, None, callback)

    async def events(self, feed: Feed, after: str = "0-0", **options: int | None) -> AsyncIterator[Entry]:
        """Catch-up then live on a subscription of its own (``options``: :meth:`subscribe`'s), released when the
        generator ends or is closed: ``async for entry_id, frame in hub.events(feed, after=...)``."""
        async with self.subscribe(feed, **options) as subscription:
            async for entry in subscription.events(after):
                yield entry

    def spectated(self, of: str) -> list[Feed]:
        """The feeds of ``of`` (``match`` or ``daily``) that queue subscribers of this process follow, each once."""
        return [next(iter(subscribers)).feed for subscribers in self._subscribers.values()
                if any(s.callback is None and s.feed.of == of for s in subscribers)]

    def end(self, feed: Feed, reason: ServiceError) -> int:
        """End every queue subscription of ``feed`` in this process for ``reason`` (:meth:`Subscription.end`: each
        generator raises :class:`Ended`); the callback subscribers are their owners' to close. Returns how many
        were ended."""
        ended = [s for s in self._subscribers.get(feed.key, ()) if s.callback is None]
        for subscription in ended:
            subscription.end(reason)
        return len(ended)

    def spectators(self, of: str) -> int:
        """Queue subscribers open in this process on feeds of ``of`` (``match`` or ``daily``)."""
        return sum(1 for subscribers in self._subscribers.values() for s in subscribers
                   if s.callback is None and s.feed.of == of)

    def _register(self, subscription: Subscription) -> None:
        key = subscription.feed.key
        subscribers = self._subscribers.get(key, {})
        limit = subscription.max_subscribers
        if limit is not None and sum(1 for s in subscribers if s.callback is None) >= limit:
            raise HubFull(f"{key} has {limit} subscribers in this process")
        self._subscribers.setdefault(key, {})[subscription] = None

    async def _follow(self, key: str) -> None:
        """Follow stream ``key`` from its newest id, unless it is followed already (then from where the reader
        is: what comes after that reaches every subscriber registered now)."""
        if key in self.positions:
            return
        last = await self.source.last_id(key)
        if key not in self.positions and self._subscribers.get(key):  # not followed meanwhile, nor left
            self.positions[key] = last
            self._followed_changed()

    def _release(self, subscription: Subscription) -> None:
        key = subscription.feed.key
        subscribers = self._subscribers.get(key)
        if subscribers is None:
            return
        subscribers.pop(subscription, None)
        if not subscribers:
            del self._subscribers[key]
            self.positions.pop(key, None)
            self._woken.pop(key, None)
            self._followed_changed()

    # ------------------------------------------------------------ the reader

    def _followed_changed(self) -> None:
        """The followed streams changed: group them again, and listen to the wake-ups of these."""
        self._groups = None
        if self.wake_ups is not None:
            self.wake_ups.want(self.positions)
        self._wakeup.set()

    def _woken_by(self, key: str, entry_id: str | None) -> None:
        """A wake-up of stream ``key`` (:class:`~server.store.wakeups.WakeUps`): it has entry ``entry_id`` (None:
        it may have entries). Read it next unless it is delivered that far already."""
        last = self.positions.get(key)
        if last is None or (entry_id is not None and order(entry_id) <= order(last)):
            return
        known = self._woken.get(key, "")
        if entry_id is None or known is None:
            self._woken[key] = None
        elif not known or order(entry_id) > order(known):
            self._woken[key] = entry_id
        self._wakeup.set()

    def _grouped(self) -> dict[Hashable, list[str]]:
        """The followed streams' keys by read group (:func:`group_streams`), made again only once the follows
        changed or, with wake-ups, at each safety poll."""
        if self._groups is None:
            self._groups = {group: list(keys) for group, keys in
                            group_streams(self.positions, self.source.group).items()}
            self._group_of = {key: group for group, keys in self._groups.items() for key in keys}
        return self._groups

    def _due(self, busy: Mapping[Hashable, object]) -> dict[Hashable, list[str]]:
        """With wake-ups: the woken streams to read now, by group (not of the groups ``busy``, whose read is in
        flight: they stay woken), those delivered that far already left out; they are no longer woken then.
        Walks the woken streams only, not every followed one."""
        self._grouped()
        due: dict[Hashable, list[str]] = {}
        for key, woken in list(self._woken.items()):
            group = self._group_of.get(key)
            if group is None or group in busy:
                continue
            del self._woken[key]
            last = self.positions.get(key)
            if last is not None and (woken is None or order(woken) > order(last)):
                due.setdefault(group, []).append(key)
        return due

    async def run(self) -> None:
        """The process's one reader: reads every group of followed streams (one read in flight per group) and
        delivers each entry to the stream's subscribers. Runs until cancelled; raises what a read or a
        callback raises (a supervisor restarts it: the positions are kept, so it resumes by id).

        On one Redis each group's read is a blocking XREAD, started again as soon as the last one returns. With
        wake-ups (a Redis Cluster) a group is read, without waiting, when a stream of it is woken (only the woken
        streams then), and every :data:`SAFETY_POLL_MS` (all of them)."""
        reads: dict[Hashable, asyncio.Task[list[tuple[str, StreamEntry]]]] = {}
        delays: dict[Hashable, float] = {}
        loop = asyncio.get_running_loop()
        listening = None
        if self.wake_ups is not None:
            self.wake_ups.want(self.positions)
            listening = asyncio.ensure_future(self.wake_ups.run(self._woken_by))
        polled: set[Hashable] = set()
        next_poll = loop.time()
        try:
            while True:
                timeout = 0.5
                if listening is not None:
                    if listening.done():
                        listening.result()  # it never ends but by a bug: say so
                    if loop.time() >= next_poll:
                        self._groups = None  # the layout may have changed
                        polled = set(self._grouped())
                        next_poll = loop.time() + SAFETY_POLL_MS / 1000
                    timeout = min(timeout, max(0.0, next_poll - loop.time()))
                self._wakeup.clear()
                if listening is None:
                    for group, keys in self._grouped().items():
                        if group not in reads:
                            reads[group] = asyncio.ensure_future(self._read(keys, self.block_ms,
                                                                            delays.pop(group, 0.0)))
                else:
                    due = self._due(reads)
                    for group in [g for g in polled if g not in reads]:  # a safety poll: every stream of it
                        polled.discard(group)
                        due[group] = self._grouped().get(group, [])
                    for group, keys in due.items():
                        if keys:
                            reads[group] = asyncio.ensure_future(self._read(keys, 0, delays.pop(group, 0.0)))
                waker = asyncio.ensure_future(self._wakeup.wait())
                try:
                    done, _ = await asyncio.wait([*reads.values(), waker], timeout=timeout,
                                                 return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waker.cancel()
                for group, task in list(reads.items()):
                    if task in done:
                        del reads[group]
                        entries = task.result()
                        await self._deliver(entries)
                        if entries and self.pause_s:
                            delays[group] = self.pause_s
                        if listening is not None:
                            self._read_again(entries)
        finally:
            for task in reads.values():
                task.cancel()
            if listening is not None:
                listening.cancel()
                await asyncio.gather(listening, return_exceptions=True)

    def _read_again(self, entries: list[tuple[str, StreamEntry]]) -> None:
        """A stream that gave a read its most entries (:data:`~server.store.READ_COUNT`) may hold
        more: it counts as woken again."""
        for key, count in Counter(key for key, _ in entries).items():
            if count >= READ_COUNT:
                self._woken_by(key, None)

    async def _read(self, keys: list[str], block_ms: int, delay: float) -> list[tuple[str, StreamEntry]]:
        """One read of the streams ``keys`` (of one group) at their positions then (after ``delay`` seconds),
        waiting up to ``block_ms`` ms for an entry (0: not at all)."""
        if delay:
            await asyncio.sleep(delay)
        positions = self.positions
        return await self.source.read({key: positions[key] for key in keys if key in positions}, block_ms)

    async def _deliver(self, entries: list[tuple[str, StreamEntry]]) -> None:
        """Entries of one read, in order, to their streams' subscribers; an entry at or before its stream's
        position (read for a stream left and followed again meanwhile) or of a stream no longer followed is
        skipped. The position moves on once every subscriber has it."""
        for key, entry in entries:
            last = self.positions.get(key)
            if last is None or order(entry.id) <= order(last):
                continue
            for subscription in list(self._subscribers.get(key, ())):
                await subscription._deliver(entry)
            last = self.positions.get(key)  # a callback may have awaited: the stream may have been left since
            if last is not None and order(entry.id) > order(last):
                self.positions[key] = entry.id
