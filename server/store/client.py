"""The server's Redis clients: redis-py's, with the few adaptations the server needs of it.

Each adaptation names the redis-py version it was written against and the test that fails without it.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from typing import Any

import redis.asyncio as aioredis
from redis._parsers.commands import AsyncCommandsParser
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.connection import HiredisRespSerializer
from redis.exceptions import RedisClusterException
from redis.maint_notifications import MaintNotificationsConfig
from redis.utils import HIREDIS_AVAILABLE

RedisClient = aioredis.Redis | RedisCluster
"""What the store runs on: one Redis node, or redis-py's cluster client (any node of a Redis Cluster)."""

CLUSTER_MAX_CONNECTIONS = 64
"""Connections per cluster node, and commands (or pipelines) in flight at once (:class:`WaitingRedisCluster`)."""

_HOLDING_ROOM: ContextVar[bool] = ContextVar("holding_room", default=False)
"""Set while a task runs a command of :class:`WaitingRedisCluster`: a command it issues inside (and the tasks it
starts, which copy the context) takes no second place, so no command waits on a place its own caller holds."""


class WaitingRedisCluster(RedisCluster):
    """redis-py's asyncio cluster client whose commands and pipelines wait for one of ``max_connections`` places
    instead of raising ``MaxConnectionsError``.

    Why: redis-py 8.1's cluster pool raises past ``max_connections`` connections to a node instead of waiting.
    Test: ``tests/integration/test_cluster.py::test_a_burst_of_commands_waits_for_connections_instead_of_failing``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.room = asyncio.Semaphore(int(kwargs.get("max_connections") or CLUSTER_MAX_CONNECTIONS))
        self.commands_parser = CommandTableOnce()

    async def aclose(self) -> None:
        """redis-py's, except when redis-py calls it itself inside a command: then the layout is only read again
        at the next command (as for a command's connection error).

        Why: redis-py 8.1 closes the whole client when a pipeline or command meets a dead node or ``CLUSTERDOWN``,
        failing the other tasks' commands on healthy masters. Test:
        ``tests/integration/test_failover.py::test_the_other_masters_serve_the_store_on_while_one_is_failed_over``.
        """
        if _HOLDING_ROOM.get():
            self._initialize = True
            return
        await super().aclose()

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        """redis-py's, in one of :attr:`room`'s places."""
        if _HOLDING_ROOM.get():
            return await super().execute_command(*args, **kwargs)
        async with self.room:
            holding = _HOLDING_ROOM.set(True)
            try:
                return await super().execute_command(*args, **kwargs)
            finally:
                _HOLDING_ROOM.reset(holding)

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> WaitingClusterPipeline:
        """redis-py's cluster pipeline, executed in one of :attr:`room`'s places."""
        if shard_hint:
            raise RedisClusterException("shard_hint is deprecated in cluster mode")
        # redis-py's RedisCluster.pipeline makes the same call; its stubs mark the class abstract.
        return WaitingClusterPipeline(self, transaction)  # type: ignore[abstract]


class CommandTableOnce(AsyncCommandsParser):
    """redis-py's table of the commands' key positions (``COMMAND``), read once per client; XREAD's keys found
    without asking Redis (the first half of what follows ``STREAMS``).

    Why: redis-py 8.1 reads ``COMMAND`` again from the default node at every reading of the layout, and asks it
    ``COMMAND GETKEYS`` before each XREAD, so one dead master stalls every node's commands. Test:
    ``tests/integration/test_cluster.py::test_the_cluster_client_asks_no_command_table_after_its_first``.
    """

    async def initialize(self, node: Any = None) -> None:
        """Keep ``node`` for ``COMMAND GETKEYS``; read the table only when none is held yet."""
        if node is not None:
            self.node = node
            if self.commands:
                return
        await super().initialize()

    async def get_keys(self, *args: Any) -> Any:
        """The keys of command ``args``: XREAD's parsed here, any other's as redis-py finds them."""
        if str(args[0]).upper() == "XREAD":
            for index, arg in enumerate(args):
                if (arg.decode() if isinstance(arg, bytes) else str(arg)).upper() == "STREAMS":
                    rest = args[index + 1:]
                    return list(rest[:len(rest) // 2])
        return await super().get_keys(*args)


class WaitingClusterPipeline(ClusterPipeline):
    """The pipeline of :class:`WaitingRedisCluster`: one place of the client's room per pipeline (it uses one
    connection per node).

    Why: redis-py 8.1's pipelines raise ``MaxConnectionsError`` as its commands do. Test:
    ``tests/integration/test_cluster.py::test_a_burst_of_commands_waits_for_connections_instead_of_failing``.
    """

    async def execute(self, raise_on_error: bool = True, allow_redirections: bool = True) -> list[Any]:
        client = self.cluster_client
        assert isinstance(client, WaitingRedisCluster)
        if _HOLDING_ROOM.get():
            return await super().execute(raise_on_error, allow_redirections)
        async with client.room:
            holding = _HOLDING_ROOM.set(True)
            try:
                return await super().execute(raise_on_error, allow_redirections)
            finally:
                _HOLDING_ROOM.reset(holding)


class HiredisPackedConnection(aioredis.Connection):
    """redis-py's asyncio TCP connection with its commands packed by hiredis (redis-py's own
    :class:`~redis.connection.HiredisRespSerializer`): the same bytes on the wire, made in C.

    Why: redis-py 8.1's asyncio client packs in Python (its synchronous client uses hiredis). Test:
    ``tests/integration/test_store_client.py::test_a_single_node_client_packs_its_commands_with_hiredis``.
    """

    _serializer = HiredisRespSerializer()

    def pack_command(self, *args: Any) -> list[bytes]:
        return self._serializer.pack(*args)


def redis_client(url: str, cluster: bool = False) -> RedisClient:
    """The server's Redis client for ``url`` (``redis://host:port/db``; of a cluster: any node).

    One node: a blocking pool of 16 connections (a command waits up to 10 s for one; a few beat many, DESIGN.md),
    socket reads and writes of at most 5 s (then ``TimeoutError``), commands packed by hiredis on ``redis://``;
    its ``aclose()`` disconnects the pool's connections.
    ``cluster``: a :class:`WaitingRedisCluster` of :data:`CLUSTER_MAX_CONNECTIONS` per node, same timeouts; it
    reads the layout again and retries after a connection error or a failover (redis-py's default tries).
    """
    if cluster:
        return WaitingRedisCluster.from_url(url, max_connections=CLUSTER_MAX_CONNECTIONS, socket_timeout=5,
                                            health_check_interval=30)
    options: dict[str, Any] = {}
    if HIREDIS_AVAILABLE and url.startswith("redis://"):  # not rediss:// or unix://: their own classes
        options["connection_class"] = HiredisPackedConnection
    # Maintenance notifications off. Why: redis-py 8.1's pool skips its closed-socket check while they are on
    # ("auto" by default), so after a Redis restart each pooled connection failed one command. Test:
    # tests/integration/test_store_client.py::test_a_single_node_client_reconnects_after_a_redis_restart.
    pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=16, timeout=10,
                                                    socket_timeout=5, health_check_interval=30,
                                                    maint_notifications_config=MaintNotificationsConfig(enabled=False),
                                                    **options)
    # from_pool: the client owns its pool, so aclose() disconnects the pool's connections too (a pool passed as
    # connection_pool= is left open, as if another client shared it).
    return aioredis.Redis.from_pool(pool)


def probe_client(url: str, timeout_s: float) -> aioredis.Redis:
    """A client of its own for the readiness probe (``/readyz``): 4 connections apart from the server's pool,
    each connect, read and write waiting at most ``timeout_s`` seconds, no retries (a probe cut short leaves no
    unread answer on a player's connection)."""
    pool = aioredis.BlockingConnectionPool.from_url(
        url, max_connections=4, timeout=timeout_s, socket_timeout=timeout_s, socket_connect_timeout=timeout_s,
        retry=Retry(NoBackoff(), 0), maint_notifications_config=MaintNotificationsConfig(enabled=False))
    return aioredis.Redis.from_pool(pool)  # closed with the client, as redis_client's


async def is_cluster(url: str) -> bool:
    """Whether the Redis at ``url`` is a node of a Redis Cluster (``INFO cluster``: ``cluster_enabled:1``), asked
    on a connection of its own; raises what redis-py raises when it cannot be reached."""
    probe = aioredis.Redis.from_url(url, socket_timeout=5)
    try:
        info = await probe.info("cluster")
    finally:
        await probe.aclose()
    return bool(int(info.get("cluster_enabled", 0)))


async def open_redis(url: str) -> RedisClient:
    """The client :func:`redis_client` builds for ``url``, a cluster's when :func:`is_cluster` says so."""
    return redis_client(url, cluster=await is_cluster(url))


def node_name(client: RedisClient, key: str) -> str | None:
    """The name of the cluster node serving ``key``'s slot as ``client`` knows it now (None: none known)."""
    if not isinstance(client, RedisCluster):
        return None
    try:
        node = client.get_node_from_key(key)
    except RedisClusterException:
        return None
    return str(node.name) if node is not None else None
