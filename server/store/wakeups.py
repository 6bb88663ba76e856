"""The wake-ups of the hub's reads on a Redis Cluster: which followed streams have a new entry.

On one Redis the hub waits for entries in one blocking XREAD of every followed stream. On a Redis Cluster a
blocking XREAD may name keys of one slot only, so instead every script that adds to an event stream publishes
the new entry's id on the shard channel named as the stream's key (``SPUBLISH``, same slot: see
:mod:`server.store.scripts`), and :class:`WakeUps` listens to the channels of the streams the hub follows,
with redis-py's asyncio :class:`~redis.asyncio.cluster.ClusterPubSub` (one connection per master serving a
followed stream; it moves a channel to the slot's new master after a failover or a slot migration). The hub
then reads only the woken streams.

Pub/sub is at most once, so a wake-up only says *when* to read; the stream ids stay the truth. Each
subscription Redis confirms wakes its stream, so does, for every stream of a node, the answer to a PING sent
down that node's subscribed connection after a failure of it (Redis answers it after the subscriptions made
again before it), and the hub reads every followed stream now and then (:data:`server.hub.SAFETY_POLL_MS`):
a lost wake-up delays an entry, never loses it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection

from redis.asyncio.client import PubSub
from redis.asyncio.cluster import ClusterNode, ClusterPubSub, RedisCluster
from redis.backoff import ExponentialBackoff
from redis.exceptions import RedisError
from redis.utils import str_if_bytes

from ..metrics import REDIS_FAILURES, Metrics, default_metrics

log = logging.getLogger("forty_thieves.store")

Woken = Callable[[str, str | None], None]
"""Called with ``(stream key, entry id)`` for each wake-up; the id is None when the stream's subscription was
(re)confirmed, so an entry may have come unannounced before it."""

LISTEN_S = 5.0
"""How long one wait for a message on a node's connection lasts before the listener looks again at what it
should listen to (seconds)."""

RETRY_S = 0.5
"""The longest pause after a failed subscription or a failed read of a wake-up (the master gone, the slot moved),
before the cluster's layout is read again and the subscriptions are made again (seconds)."""

BACKOFF = ExponentialBackoff(cap=RETRY_S, base=0.005)
"""The pause after the n-th failure in a row (n >= 1) is ``BACKOFF.compute(n - 1)`` seconds: 5 ms after a
first one, doubling up to :data:`RETRY_S`. A killed connection is a single failure: redis-py has already
connected again and sent the subscriptions when it raises, so the confirmations (and the wake-ups after them)
wait unread in that connection until the listener reads again; a dead master fails again and again, and is
then asked no more than every :data:`RETRY_S`."""


WAKE_UPS = "wake-ups"
"""The ``source`` label of the listener's Redis failures and reconnects (:mod:`server.metrics`)."""


class WakeUps:
    """The wake-up listener of one hub on a Redis Cluster (see the module docstring).

    ``client`` is the store's cluster client: the listener opens a cluster client of its own on the same nodes
    (a subscribed connection is held for good, and the store's client counts each of its connections as room
    for a command). :meth:`want` says which streams to listen to (the hub calls it when its follows change);
    :meth:`run` keeps the subscriptions and calls ``woken`` for each wake-up, until cancelled.
    """

    def __init__(self, client: RedisCluster, metrics: Metrics | None = None) -> None:
        self.client = client
        self.metrics = metrics or default_metrics()
        """Where failures and reconnects are counted (source ``wake-ups``)."""
        self.wanted: frozenset[str] = frozenset()
        self._changed = asyncio.Event()
        self._own: RedisCluster | None = None
        self.pubsub: ClusterPubSub | None = None
        self._dropped: set[str] = set()
        """Wanted streams whose subscription Redis dropped (their slot left the node) and not confirmed since."""
        self._unsure: dict[str, PubSub | None] = {}
        """Nodes whose reads failed since their last fence was answered (see :meth:`_listen`) -> the node's
        connection (redis-py's per-node :class:`~redis.asyncio.client.PubSub`) that fence was sent on, None while
        it is not sent: wake-ups may have been lost there, and the confirmations of the subscriptions made again
        are not enough to tell when every stream of the node is live again. A connection redis-py made anew under
        the same name (its old one closed) gets a fence of its own."""
        self._failures: dict[str, int] = {}
        """Failures in a row by what failed (``subscribe``, or a node's name for its reads), none since a success:
        the length of the next pause (:data:`BACKOFF`)."""

    def want(self, keys: Collection[str]) -> None:
        """Listen to the wake-ups of the streams ``keys`` from now on (subscribed to, or dropped, by :meth:`run`)."""
        wanted = frozenset(keys)
        if wanted != self.wanted:
            self.wanted = wanted
            self._changed.set()

    def subscribed(self) -> set[str]:
        """The streams whose wake-ups are subscribed to now, or being subscribed to (on a connection being made
        again, say)."""
        if self.pubsub is None:
            return set()
        return {str_if_bytes(channel)
                for node in list(self.pubsub.node_pubsub_mapping.values()) for channel in node.shard_channels}

    async def run(self, woken: Woken) -> None:
        """Keep the subscriptions to :attr:`wanted` and call ``woken`` for each wake-up, until cancelled. Never
        raises otherwise: a Redis failure is logged and tried again after :data:`RETRY_S` (meanwhile the
        hub's safety poll reads the streams)."""
        listeners: dict[str, asyncio.Task[None]] = {}
        try:
            while True:
                _raise_if_cancelled()  # a cancel redis-py swallowed (see _failed) still stops the listener
                self._changed.clear()
                try:
                    await self._subscribe()
                except REDIS_FAILURES as error:
                    await self._failed("subscribe", "subscribing to wake-ups", error)
                    continue
                self._recovered("subscribe", "subscribing to wake-ups")
                assert self.pubsub is not None
                for name, task in list(listeners.items()):
                    if task.done():  # its node's connection is gone, or failed (after a pause): listen again
                        del listeners[name]
                        task.result()  # a Redis failure ends it quietly: anything else is a bug to raise
                for name in set(self._unsure) - set(self.pubsub.node_pubsub_mapping):
                    del self._unsure[name]  # its channels moved to another node's connection, subscribed anew
                for name in list(self.pubsub.node_pubsub_mapping):
                    if name not in listeners:
                        listeners[name] = asyncio.create_task(self._listen(name, woken))
                changed = asyncio.ensure_future(self._changed.wait())
                try:
                    await asyncio.wait([changed, *listeners.values()], timeout=1.0,
                                       return_when=asyncio.FIRST_COMPLETED)
                finally:
                    changed.cancel()
        finally:
            for task in listeners.values():
                task.cancel()
            await asyncio.gather(*listeners.values(), return_exceptions=True)
            await self._close()

    async def _subscribe(self) -> None:
        """Subscribe to the wanted streams not subscribed to, drop the others (each its own command: shard
        channels of several slots cannot share one)."""
        if self._own is None:
            known = self.client.get_nodes() or list(self.client.nodes_manager.startup_nodes.values())
            nodes = [ClusterNode(node.host, node.port) for node in known]
            own = RedisCluster(startup_nodes=nodes, socket_timeout=5, health_check_interval=30)
            try:
                await own.initialize()
            except BaseException:
                await own.aclose()
                raise
            self._own, self.pubsub = own, own.pubsub()
        assert self.pubsub is not None
        self._dropped &= self.wanted
        if self._dropped:
            # Redis dropped them as their slot moved, but redis-py still counts them as subscribed where they were:
            # read the layout again and have redis-py move each channel to its slot's master now (again each
            # round until Redis confirms the new subscription: the layout may not show the move at once).
            await self._own.nodes_manager.initialize()
            await self.pubsub.reinitialize_shard_subscriptions()
        have = self.subscribed()
        wanted = self.wanted
        for key in wanted - have:
            await self.pubsub.ssubscribe(key)
        gone = have - wanted
        if gone:
            await self.pubsub.sunsubscribe(*gone)

    async def _listen(self, name: str, woken: Woken) -> None:
        """The messages of node ``name``'s subscribed connection, while it has one: a message is a wake-up of
        its stream, a subscription confirmed a wake-up without an id. Ends on a failure (the master gone, the
        slot moved: :meth:`run` makes the subscriptions again)."""
        assert self.pubsub is not None and self._own is not None
        while name in self.pubsub.node_pubsub_mapping:
            _raise_if_cancelled()
            node = self._own.get_node(node_name=name)
            if node is None:  # gone from the layout: redis-py moves its channels; look again after a pause
                await asyncio.sleep(RETRY_S)
                return
            try:
                if name in self._unsure:  # only then: this runs for every wake-up read
                    connection = self.pubsub.node_pubsub_mapping.get(name)
                    if connection is not None and self._unsure[name] is not connection:
                        # The fence: a PING down the node's subscribed connection. Redis answers it after every
                        # SSUBSCRIBE sent before it (redis-py sends them again as it connects again), so once its
                        # pong is read every stream subscribed there is live, and reading them all then finds
                        # what came while they were not, whichever confirmations were read or lost on the way.
                        self._unsure[name] = connection
                        await connection.ping()
                message = await self.pubsub.get_sharded_message(target_node=node, timeout=LISTEN_S)
            except REDIS_FAILURES + (RuntimeError,) as error:
                if isinstance(error, RuntimeError) and not _transport_closed(error):
                    raise
                self._unsure[name] = None
                await self._failed(name, f"reading wake-ups from {name}", error)
                return
            if name in self._failures:
                self._recovered(name, f"reading wake-ups from {name}")
            if message is None:
                continue
            kind, channel = message["type"], message["channel"]
            if kind == "pong":
                fenced = self._unsure.get(name)
                if fenced is not None and fenced is self.pubsub.node_pubsub_mapping.get(name) and not message["data"]:
                    # the fence's answer (a health check's has data)
                    del self._unsure[name]
                    for key in self._channels_of(name):
                        woken(key, None)
                continue
            key = str(str_if_bytes(channel))
            if kind == "smessage":
                data = message["data"]
                woken(key, str(str_if_bytes(data)))
            elif kind == "ssubscribe":
                self._dropped.discard(key)
                woken(key, None)
            elif kind == "sunsubscribe" and key in self.wanted:  # not ours: the slot left this node
                self._dropped.add(key)
                self._changed.set()

    def _channels_of(self, name: str) -> list[str]:
        """The wanted streams subscribed to on node ``name``'s connection."""
        assert self.pubsub is not None
        node = self.pubsub.node_pubsub_mapping.get(name)
        if node is None:
            return []
        return [key for key in map(str, map(str_if_bytes, node.shard_channels)) if key in self.wanted]

    async def _failed(self, source: str, what: str, error: BaseException) -> None:
        """Log a failure of ``source`` (``subscribe`` or a node's name), wait as :data:`BACKOFF` says for its
        failures in a row, and read the cluster's layout again (redis-py then moves each channel to its slot's
        master now), so that the next round subscribes where the streams are. Raises
        :class:`asyncio.CancelledError` when the task was cancelled meanwhile: a cancel that lands while redis-py
        reconnects to a dead node may come back as a ``ConnectionError`` or not at all (after a SIGKILLed master
        the hub's reader, which awaits this listener when it stops, never stopped), and a listener that went on
        would try again for ever."""
        _raise_if_cancelled()
        self.metrics.redis_failed(WAKE_UPS, error)
        failures = self._failures[source] = self._failures.get(source, 0) + 1
        if failures == 1:  # once for a run of failures, not for each try (an outage of seconds wrote hundreds)
            log.info("%s failed (%s: %s): the safety poll reads the streams meanwhile; trying again", what,
                     type(error).__name__, error)
        await asyncio.sleep(BACKOFF.compute(min(failures, 16) - 1))  # capped: 2**n overflows a float past 1023
        self._changed.set()
        if self._own is not None:
            try:
                await self._own.nodes_manager.initialize()
            except REDIS_FAILURES as again:
                _raise_if_cancelled()
                if failures == 1:
                    log.info("reading the cluster's layout failed (%s: %s)", type(again).__name__, again)

    def _recovered(self, source: str, what: str) -> None:
        """``source`` (``subscribe`` or a node's name) worked: a run of its failures ends, logged once with how
        many there were (a reconnect, counted)."""
        failures = self._failures.pop(source, 0)
        if failures:
            log.info("%s works again after %d failures", what, failures)
            self.metrics.redis_reached(WAKE_UPS)

    async def _close(self) -> None:
        """Close the subscriptions and the listener's own client."""
        if self.pubsub is not None:
            try:
                await self.pubsub.aclose()
            except (RedisError, OSError):
                pass
        if self._own is not None:
            try:
                await self._own.aclose()
            except (RedisError, OSError):
                pass
        self.pubsub, self._own = None, None


def _raise_if_cancelled() -> None:
    """Raise :class:`asyncio.CancelledError` when the running task has been asked to stop (a cancel that the
    awaited call turned into another exception)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


def _transport_closed(error: RuntimeError) -> bool:
    """Whether ``error`` is uvloop's answer to a write on a connection closed under redis-py (``unable to perform
    operation on <TCPTransport closed=True ...>; the handler is closed``): redis-py's reconnect of a subscribed
    connection whose master was killed raises it from its retry instead of a ``ConnectionError``. It is that
    connection's failure, not a bug: taken for one, it would end the hub's reader (a restart of it, logged)."""
    return "handler is closed" in str(error) or "TCPTransport closed=True" in str(error)
