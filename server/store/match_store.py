"""The store of matches: every Redis command of a race, its timers, its streams and the deal pool.

Keys: :mod:`server.store.keys`; scripts: :mod:`server.store.scripts`; what is read comes back as the
records of :mod:`server.store.records`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import AsyncIterator, Hashable
from contextvars import Context, ContextVar
from typing import Any

import msgspec
import redis.asyncio as aioredis
from redis._parsers.commands import AsyncCommandsParser
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff, NoBackoff
from redis.connection import HiredisRespSerializer
from redis.crc import key_slot
from redis.exceptions import (
    ClusterDownError,
    NoScriptError,
    RedisClusterException,
    RedisError,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.maint_notifications import MaintNotificationsConfig
from redis.utils import HIREDIS_AVAILABLE

from protocol import messages as m

from ..core.lifecycle import LIVE_STATES
from ..metrics import REDIS_FAILURES, default_metrics
from . import scripts
from .keys import (
    LIVE_COUNTS,
    LIVE_MATCHES,
    TIMERS,
    events_key,
    lease_key,
    log_key,
    meta_key,
    parse_timer_member,
    player_key,
    player_prefix,
    pool_key,
    results_key,
    roster_key,
    series_key,
    timer_lease,
    timer_member,
    tokens_key,
)
from .outages import REDIS_UNAVAILABLE
from .records import MatchKeysGone, MatchMeta, PlayerRecord, Timer, plain
from .scripts import EVENTS_MAXLEN
from .wakeups import WakeUps

log = logging.getLogger("forty_thieves.store")

_LIVE_ORDER = [state.value for state in LIVE_STATES]
"""The live states in the order a match goes through them (:data:`~server.store.scripts.LIVE_STATE`'s ARGV)."""


def token_hash(token: str) -> str:
    """Tokens are stored only as their SHA-256 (hex)."""
    return hashlib.sha256(token.encode()).hexdigest()


RedisClient = aioredis.Redis | RedisCluster
"""What the store runs on: one Redis node, or redis-py's cluster client (any node of a Redis Cluster)."""

CLUSTER_MAX_CONNECTIONS = 64
"""Connections per cluster node, and commands (or pipelines) in flight at once (:class:`WaitingRedisCluster`):
more room than the single node's waiting pool of 16, as one command may wait on one node while another is
free; commits of one event-loop turn still share one round trip per node."""

_HOLDING_ROOM: ContextVar[bool] = ContextVar("holding_room", default=False)
"""Set while a task runs a command of :class:`WaitingRedisCluster`: a command it issues inside (and the tasks it
starts, which copy the context) takes no second place, so no command waits on a place its own caller holds."""


class WaitingRedisCluster(RedisCluster):
    """redis-py's asyncio cluster client whose commands wait for room instead of failing.

    redis-py's cluster pool does not wait for a free connection: past ``max_connections`` connections to one
    node a command raises ``MaxConnectionsError`` (a burst of players resigning at once, each arming a timer on
    the node of the timers' key, did). Here every command and every pipeline first takes one of
    ``max_connections`` places (an :class:`asyncio.Semaphore`), and each uses at most one connection of a
    node, so no node is asked for more than ``max_connections``: a burst waits, as on the single node's
    blocking pool."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.room = asyncio.Semaphore(int(kwargs.get("max_connections") or CLUSTER_MAX_CONNECTIONS))
        self.commands_parser = CommandTableOnce()

    async def aclose(self) -> None:
        """redis-py's, except when redis-py calls it itself inside a command (in one of :attr:`room`'s places).

        redis-py 8.1 closes the whole client when a pipeline fails on a node (a connection error, ``CLUSTERDOWN``)
        and when a command meets ``CLUSTERDOWN``, only to read the layout again on the next try: that disconnects
        the connections other tasks are using on healthy masters, whose commands then fail too ("'NoneType' object
        has no attribute 'writelines'", a lost connection) and close the client again at their own retry. Inside a
        command this only asks for the layout to be read again, as redis-py's own path for a command's connection
        error does; reading it marks every node's connections for a reconnect anyway (``NodesManager.set_nodes``).
        Closing the client (the server's shutdown, a test) is outside any command: redis-py's."""
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
        return WaitingClusterPipeline(self, transaction)


class CommandTableOnce(AsyncCommandsParser):
    """redis-py's table of the commands' key positions (``COMMAND``), read once per client, and XREAD's keys found
    without asking Redis.

    redis-py 8.1 reads ``COMMAND`` again from the default node at every reading of the layout, and while that node
    is a master just killed (it stays a master in ``CLUSTER SLOTS`` until its replica is promoted) the reading
    fails, so every command of the client fails or waits, the healthy masters' too, until the promotion. The
    table is the same on every node of a cluster of one Redis version and does not change with a failover; an
    unknown command still reads it again (redis-py's ``get_keys``). XREAD is a command with "movable keys", for
    which redis-py asks the default node ``COMMAND GETKEYS`` before each one (a round trip per XREAD, and a failed
    XREAD on any master while that node is dead): its keys are the first half of what follows ``STREAMS``, as
    for every XREAD the client builds (``COUNT`` and ``BLOCK`` take integers)."""

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
    """The pipeline of :class:`WaitingRedisCluster`: it runs in one place of the client's room (a place per
    pipeline, not per command: it uses one connection per node)."""

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


READ_RETRIES = 20
"""Tries again of a failed read of the hub's event streams (:meth:`Store.read_streams`) before its error is
raised: with :data:`READ_BACKOFF` about 15 s, longer than a Redis Cluster failover (the master's
``cluster-node-timeout`` and the replica's election) or a Redis restart. A spectator's catch-up
(:meth:`Store.stream_after`) fails at once instead: the spectator resumes by id."""

READ_BACKOFF = ExponentialWithJitterBackoff(base=0.05, cap=1.0)
"""Delays between those tries, and between a fence's (:meth:`Store.fence`): jittered, doubling from 50 ms up to
1 s (the object keeps no state: one serves every retry)."""

READ_COUNT = 200
"""The most entries one read takes of one stream (XREAD ``COUNT``): a stream that gave that many may hold more."""

READ_ERRORS = (RedisConnectionError, RedisTimeoutError, ClusterDownError, TryAgainError, SlotNotCoveredError)
"""What a failover or a restart raises: the node gone (connection refused or lost, the pool out of connections,
no answer in time), the cluster not serving the slot yet (``CLUSTERDOWN``, ``TRYAGAIN``), or the client not
knowing the slot's node while it reads the layout again (redis-py's ``SlotNotCoveredError``)."""


class HiredisPackedConnection(aioredis.Connection):
    """redis-py's asyncio TCP connection with its commands packed by hiredis (``hiredis.pack_command``, through
    redis-py's own :class:`~redis.connection.HiredisRespSerializer`, as redis-py's synchronous client does;
    its asyncio client packs in Python). The same bytes on the wire, made in C: the hub's XREAD of the
    streams of 100 matches is packed in 45 us instead of 155 (of 500 matches: 205 instead of 763)."""

    _serializer = HiredisRespSerializer()

    def pack_command(self, *args: Any) -> list[bytes]:
        return self._serializer.pack(*args)


def redis_client(url: str, cluster: bool = False) -> RedisClient:
    """The server's Redis client for ``url`` (``redis://host:port/db``): a few connections shared by every player.

    Single node (``cluster`` False): commands wait up to 10 s for a free connection instead of failing
    (DESIGN.md: a pool of 32 made p99 three times worse than a few); the stream reader's blocking XREAD holds
    one of them at a time. A socket read or write waits at most 5 s (then redis-py raises ``TimeoutError``).
    A ``redis://`` URL's connections pack commands with hiredis when it is installed
    (:class:`HiredisPackedConnection`). The load benchmark's floor baseline uses this same client.

    ``cluster`` True: redis-py's asyncio :class:`~redis.asyncio.cluster.RedisCluster` (as
    :class:`WaitingRedisCluster`: a burst waits for connections instead of failing), ``url`` any node of
    the cluster (it reads the others from it). Each command goes to the master of its key's slot (a script
    to the slot of its keys, which :mod:`server.store.scripts` keeps to one hash tag); on a connection error
    or a failover it reads the cluster's layout again and retries (redis-py's default: a few tries, at once
    after a connection error, 0.25 s apart after ``CLUSTERDOWN``), so a promoted replica is found without a
    restart; what outlasts those tries is the store's to ride out (a commit's outcome is resolved with
    backoff, :meth:`Store.fence`; the hub's reads try again, :meth:`Store.read_streams`). While one master
    is dead the others' commands go on (:class:`CommandTableOnce`, :meth:`WaitingRedisCluster.aclose`). Same
    socket timeouts.
    """
    if cluster:
        return WaitingRedisCluster.from_url(url, max_connections=CLUSTER_MAX_CONNECTIONS, socket_timeout=5,
                                            health_check_interval=30)
    options: dict[str, Any] = {}
    if HIREDIS_AVAILABLE and url.startswith("redis://"):  # not rediss:// or unix://: their own classes
        options["connection_class"] = HiredisPackedConnection
    # Maintenance notifications off (a Redis Enterprise feature; its RESP3 pushes are never asked for here):
    # redis-py 8.1's pool skips its check of a pooled connection for a closed socket whenever they are on or
    # "auto", its default, so after a Redis restart every connection pooled before it failed one command
    # ("Connection closed by server"), commits and reads alike. Off, the pool reconnects such a connection.
    pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=16, timeout=10,
                                                    socket_timeout=5, health_check_interval=30,
                                                    maint_notifications_config=MaintNotificationsConfig(enabled=False),
                                                    **options)
    return aioredis.Redis(connection_pool=pool)


def probe_client(url: str, timeout_s: float) -> aioredis.Redis:
    """A small client of its own for the readiness probe (``/readyz``): a few connections apart from the
    server's pool, each read, write and connect waiting at most ``timeout_s`` seconds, no retries, so a probe
    answers within about that even while Redis stalls, and a probe cut short cannot leave an unread answer on
    a connection a player's command then takes. A PING to the node at ``url`` (of a cluster too)."""
    pool = aioredis.BlockingConnectionPool.from_url(
        url, max_connections=4, timeout=timeout_s, socket_timeout=timeout_s, socket_connect_timeout=timeout_s,
        retry=Retry(NoBackoff(), 0), maint_notifications_config=MaintNotificationsConfig(enabled=False))
    return aioredis.Redis(connection_pool=pool)


async def is_cluster(url: str) -> bool:
    """Whether the Redis at ``url`` is a node of a Redis Cluster (``INFO cluster`` says ``cluster_enabled:1``).

    Asked once, when the server starts, on a connection of its own; raises what redis-py raises when the
    Redis cannot be reached.
    """
    probe = aioredis.Redis.from_url(url, socket_timeout=5)
    try:
        info = await probe.info("cluster")
    finally:
        await probe.aclose()
    return bool(int(info.get("cluster_enabled", 0)))


async def open_redis(url: str) -> RedisClient:
    """The client :func:`redis_client` builds for ``url``, a cluster's when :func:`is_cluster` says so."""
    return redis_client(url, cluster=await is_cluster(url))


class Store:
    """The server's one owner of Redis access (opened in the app's lifespan)."""

    def __init__(self, client: RedisClient, retention_s: int, wait_replicas: int = 0, wait_ms: int = 1000) -> None:
        """``wait_replicas`` > 0 (``FTR_REDIS_WAIT_REPLICAS``): each batch of commits is followed, on the same
        connection to the same master, by Redis ``WAIT wait_replicas wait_ms``, and no commit of it is answered
        before that WAIT returns: a move acknowledged to its player is on that many replicas too, so the
        failover of its master loses it not. When fewer replicas confirm within ``wait_ms`` (none is left
        after a failover, say) the commits are answered anyway and a warning is logged: the setting protects
        against losing a master, not against losing a master and all of its replicas' links at once."""
        self.redis = client
        self.retention_s = retention_s
        self.wait_replicas = wait_replicas
        self.wait_ms = wait_ms
        self.metrics = default_metrics()
        """Where the store counts Redis failures and match state changes (:mod:`server.metrics`): the app sets its
        own; until then the process's shared :func:`~server.metrics.default_metrics`."""
        cluster = isinstance(client, RedisCluster)
        self.clustered = cluster
        self.wakes = cluster
        """Whether the scripts publish wake-ups (:mod:`server.store.scripts`): on a Redis Cluster, where the hub reads
        the streams it is woken for (:meth:`wake_ups`) instead of blocking in one XREAD."""
        self._join = self.register(scripts.JOIN)
        self._resume = self.register(scripts.RESUME)
        self._issue = self.register(scripts.ISSUE)
        self._commit = self.register(scripts.COMMIT)
        self._fence = self.register(scripts.FENCE)
        self._transition = self.register(scripts.TRANSITION)
        self._start = self.register(scripts.START)
        self._create = self.register(scripts.CREATE)
        self._pending: list[tuple[list[str], list[Any], asyncio.Future[Any]]] = []
        self._flushes: set[asyncio.Task[None]] = set()
        self._end_player = self.register(scripts.END_PLAYER)
        self._stuck = self.register(scripts.STUCK)
        self._close = self.register(scripts.CLOSE_MATCH)
        self._claim_next = self.register(scripts.CLAIM_NEXT)
        self._round_join = self.register(scripts.ROUND_JOIN)
        self._window_over = self.register(scripts.WINDOW_OVER)
        self._next_made = self.register(scripts.NEXT_MADE)
        self._series_add = self.register(scripts.SERIES_ADD)
        self._lobby_event = self.register(scripts.LOBBY_EVENT)
        self._ready = self.register(scripts.READY)
        self._set_player = self.register(scripts.SET_PLAYER)
        self._done_if_due = self.register(scripts.DONE_IF_DUE)
        self._live_state = self.register(scripts.LIVE_STATE)

    def register(self, script: scripts.Script) -> Any:
        """``script`` registered with the client in the text this Redis runs (its ``wake`` by :attr:`wakes`):
        an ``AsyncScript`` to await with ``keys`` and ``args``."""
        return self.redis.register_script(script.source(self.wakes))

    async def time_ms(self) -> int:
        """Redis ``TIME`` in ms: the one clock all processes share."""
        seconds, micros = await self.redis.time()
        return int(seconds) * 1000 + int(micros) // 1000

    # ------------------------------------------------------------ matches

    async def create_match(self, code: str, fields: dict[str, Any]) -> bool:
        """Create a match's meta hash in one step; False if the code exists already."""
        args: list[Any] = ["code", code]
        for k, v in fields.items():
            args += [k, plain(v)]
        return await self._entered(code, bool(await self._create(keys=[meta_key(code)], args=args)),
                                   str(fields.get("state", "")))

    async def _entered(self, code: str, moved: bool, state: str) -> bool:
        """``moved``; when true, match ``code`` has entered ``state``: counted in ``ftr_match_transitions_total``
        and in the live counts (:meth:`count_live`)."""
        if moved:
            self.metrics.entered(state)
            await self.count_live(code, state)
        return moved

    async def lost(self, code: str) -> bool:
        """Whether Redis lost match ``code``: its meta hash is gone and it has no results (a finished match's
        keys expire after the retention period, its results stay), as after a restart without its saved data
        or a FLUSHALL."""
        if await self.redis.exists(meta_key(code)):
            return False
        return not await self.redis.exists(results_key(code))

    async def count_live(self, code: str, state: str) -> None:
        """Count match ``code`` in ``state`` in :data:`~server.store.keys.LIVE_COUNTS` (and out of the state it
        was counted in), or in none when ``state`` is not live (``finished``, ``closed``):
        :data:`~server.store.scripts.LIVE_STATE`, safe to repeat.

        A command of its own after the script that changed the state (on a Redis Cluster the two are on two
        slots), so a process killed between them, or a Redis failure then, leaves the match counted in the
        state before: a failure here is logged, not raised (the change itself is made), and either the match's
        next change or :meth:`sweep_live` makes it good."""
        live = state if state in LIVE_STATES else ""
        try:
            await self._live_state(keys=[LIVE_MATCHES, LIVE_COUNTS], args=[code, live, *_LIVE_ORDER])
        except REDIS_UNAVAILABLE as error:
            self.metrics.redis_failed("live counts", error, retries=False)
            log.warning("counting match %s as %s failed (%s: %s): the sweep of the live counts corrects it", code,
                        state, type(error).__name__, error)
        except REDIS_FAILURES as error:  # the script refused (a bug): its traceback, but the change stays made
            self.metrics.redis_failed("live counts", error, retries=False)
            log.exception("counting match %s as %s failed: the sweep of the live counts corrects it", code, state)

    async def live_counts(self) -> dict[str, int]:
        """How many matches are in each live state (:data:`server.core.lifecycle.LIVE_STATES`, every one of them
        a key; one HGETALL), across every server process on this Redis."""
        counts = await self.redis.hgetall(LIVE_COUNTS)
        found = {key.decode(): int(value) for key, value in counts.items()}
        return {state.value: max(found.get(state.value, 0), 0) for state in LIVE_STATES}

    async def sweep_live(self, page: int = 500) -> int:
        """Make the live counts true again: each match counted in a state it is no longer in (its change was not
        counted, its keys are gone: Redis lost them) is counted in the state its meta holds, or in none. The
        matches counted are read in pages of ``page`` (HSCAN, then one pipeline of their states); a match whose
        count changed between the two reads is left alone (its change counted it). Returns how many were
        corrected. A match whose count was missed at its creation is not found here: it is counted at its next
        change."""
        corrected, cursor = 0, 0
        while True:
            cursor, counted = await self.redis.hscan(LIVE_MATCHES, cursor, count=page)
            codes = [key.decode() for key in counted]
            if codes:
                async with self.redis.pipeline(transaction=False) as pipe:
                    for code in codes:
                        pipe.hget(meta_key(code), "state")
                    states = await pipe.execute()
                for code, was, now in zip(codes, counted.values(), states):
                    state = now.decode() if now is not None else ""
                    state = state if state in LIVE_STATES else ""
                    if state != was.decode():
                        corrected += int(await self._live_state(keys=[LIVE_MATCHES, LIVE_COUNTS],
                                                                args=[code, state, "=", was]))
            if not cursor:
                return corrected

    async def meta(self, code: str) -> MatchMeta | None:
        """The match's meta record, or None for an unknown match."""
        data = await self.redis.hgetall(meta_key(code))
        return MatchMeta.from_hash(code, data) if data else None

    async def set_meta(self, code: str, **fields: Any) -> None:
        """Set fields of the match's meta hash (values as :func:`plain` writes them); no state check: state
        changes go through :meth:`transition` and the scripts."""
        await self.redis.hset(meta_key(code), mapping={k: plain(v) for k, v in fields.items()})

    async def transition(self, code: str, old: str, new: str, event: bytes = b"", **fields: Any) -> bool:
        """Atomically move a match from state ``old`` to ``new`` (setting fields, adding an event)."""
        args: list[Any] = [old, new, event]
        for k, v in fields.items():
            args += [k, plain(v)]
        return await self._entered(code, bool(await self._transition(keys=[meta_key(code), events_key(code)],
                                                                     args=args)), new)

    async def start(self, code: str, event: bytes, foundation: int = 0) -> bool:
        """Countdown over: the match plays, every player's status becomes ``playing`` with the ``foundation``
        cards the deal (and its auto-play) put up before the first command."""
        started = await self._start(keys=[meta_key(code), roster_key(code), events_key(code), player_prefix(code)],
                                    args=[event, foundation])
        return await self._entered(code, bool(started), "playing")

    async def close_unstarted(self, code: str, event: bytes, keep_s: int) -> bool:
        """Close a match still in ``lobby`` or ``preparing`` (state ``closed``, ``event`` to its stream, keys
        expiring in ``keep_s`` seconds); False when it had started (or is gone)."""
        keys = [meta_key(code), roster_key(code), tokens_key(code), events_key(code), player_prefix(code)]
        return await self._entered(code, bool(await self._close(keys=keys, args=[event, keep_s])), "closed")

    async def end_player(self, code: str, name: str, status: str, time_ms: int, event: bytes) -> tuple[str, int]:
        """End a player's game (timeout, dead) unless it ended already: (status, players left)."""
        result = await self._end_player(keys=[player_key(code, name), events_key(code), meta_key(code)],
                                        args=[status, time_ms, event])
        return result[0].decode(), int(result[1])

    async def mark_stuck(self, code: str, name: str, epoch: int, seq: int, event: bytes) -> str:
        """Mark player ``name`` stuck at ``seq`` (their last accepted command) and add ``event`` to the match's
        stream (:data:`~server.store.scripts.STUCK`): ``ok``, or ``gone``, ``stale``, ``moved``, ``game_over``
        (nothing written)."""
        result = await self._stuck(keys=[player_key(code, name), events_key(code), meta_key(code)],
                                   args=[str(epoch), str(seq), event])
        return result.decode()

    async def add_lobby_event(self, code: str, frame: bytes, state: str, commitment: str,
                              players: list[PlayerRecord]) -> str:
        """Append lobby ``frame``, built from ``state``, ``commitment`` and ``players`` (join order), unless the
        lobby has changed since they were read (see :data:`~server.store.scripts.LOBBY_EVENT`): ``ok``, ``changed`` (read again and
        retry) or ``not_lobby`` (the match has left its lobby: no lobby event any more)."""
        args: list[Any] = [frame, state, commitment]
        for p in players:
            args += [p.name, 1 if p.ready else 0, 1 if p.connected else 0]
        keys = [meta_key(code), roster_key(code), events_key(code), player_prefix(code)]
        return (await self._lobby_event(keys=keys, args=args)).decode()

    async def set_ready(self, code: str, name: str) -> str:
        """Mark the player ready if the match is still in its lobby (``lobby`` or ``preparing``); returns the
        match's state (``""``: no such match)."""
        return (await self._ready(keys=[meta_key(code), player_key(code, name)])).decode()

    async def roster(self, code: str) -> list[str]:
        """The match's player names in join order (``[]``: no such match, or no player yet)."""
        return [n.decode() for n in await self.redis.lrange(roster_key(code), 0, -1)]

    async def players(self, code: str) -> list[PlayerRecord]:
        """Every player's record, in join order."""
        names = await self.roster(code)
        if not names:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.hgetall(player_key(code, name))
            rows = await pipe.execute()
        return [PlayerRecord.from_hash(row) for row in rows if row]

    async def player(self, code: str, name: str) -> PlayerRecord | None:
        """The record of player ``name`` in match ``code``, or None when there is none."""
        row = await self.redis.hgetall(player_key(code, name))
        return PlayerRecord.from_hash(row) if row else None

    async def set_player(self, code: str, name: str, **fields: Any) -> bool:
        """Set fields of a player's record (``connected``, ``hints`` ...); moves go through :meth:`commit`.
        False, and nothing written, when the record is not in Redis (:data:`~server.store.scripts.SET_PLAYER`:
        the match's keys expired, or Redis lost them)."""
        args: list[Any] = []
        for k, v in fields.items():
            args += [k, plain(v)]
        return bool(await self._set_player(keys=[player_key(code, name)], args=args))

    async def join(self, code: str, name: str, token_digest: str, max_players: int, now_ms: int,
                   name_key: str | None = None) -> tuple[str, int]:
        """Add a player in the lobby: ``("ok", count)`` or an error code (``name_taken`` also when another
        player's name has the same ``name_key``, default ``name``; ``seats_kept``: full but for seats kept for
        the players of the round before, sent to the client as ``match_full``)."""
        result = await self._join(
            keys=[meta_key(code), roster_key(code), tokens_key(code), player_key(code, name)],
            args=[name, token_digest, max_players, now_ms, name if name_key is None else name_key],
        )
        status = result[0].decode()
        if status == "match_full" and len(result) > 1 and result[1] == b"kept":
            return "seats_kept", 0
        return status, int(result[1]) if status == "ok" else 0

    async def resume(self, code: str, old_digest: str, new_digest: str) -> tuple[str, str, int]:
        """Rotate a player's token and open a new connection epoch: ``("ok", name, epoch)``.

        ``old_digest`` may be the newest token or the one before it while the newest has not been used
        (see :data:`~server.store.scripts.RESUME`); ``("bad_token", "", 0)`` for any other.
        """
        result = await self._resume(keys=[tokens_key(code), player_prefix(code)], args=[old_digest, new_digest])
        status = result[0].decode()
        if status != "ok":
            return status, "", 0
        return status, result[1].decode(), int(result[2])

    async def issue_token(self, code: str, name: str, digest: str) -> None:
        """Make ``digest`` (a token's SHA-256) the player's newest token (see :data:`~server.store.scripts.ISSUE`)."""
        await self._issue(keys=[tokens_key(code), player_key(code, name)], args=[digest, name])

    async def log(self, code: str, name: str) -> list[tuple[str, int]]:
        """A player's accepted commands with their times (ms from the start)."""
        return _log_entries(await self.redis.lrange(log_key(code, name), 0, -1))

    async def commit(self, code: str, name: str, epoch: int, seq: int, entry: str, record: dict[str, Any],
                     ends: bool, events: list[bytes], boards: list[bytes] | None = None) -> tuple[str, int]:
        """Write one accepted command atomically; returns (status, players still playing or -1).

        Status ``ok``, or why nothing was written: ``stale`` (another connection's ``epoch`` is newer),
        ``gone`` (the player's or the match's keys are not in Redis: it lost them, say restarted without its data),
        ``dup`` (``seq`` was accepted already), ``seq_gap`` (``seq`` skips a number: it is not the stored
        one plus 1), ``game_over`` (the player's game has ended), ``not_playing`` (the match is not playing).

        ``events`` go to the match's stream as public events (players and
        spectators), ``boards`` as kind ``board`` (spectators only; an
        open-boards match's redacted views, :data:`SPECTATOR_KINDS`).

        Commits made during one turn of the event loop go to Redis together,
        one pipeline of :data:`~server.store.scripts.COMMIT` scripts (each still atomic on its
        own): one round trip for many players (DESIGN.md: fewer, larger
        round trips win). Raises what redis-py raises when Redis fails.
        """
        keys = [player_key(code, name), log_key(code, name), events_key(code), meta_key(code)]
        args = [msgspec.msgpack.encode([
            str(epoch), str(seq), entry, str(record["moves"]), str(record["undos"]), str(record["hints"]),
            str(record["foundation"]), record["status"], str(record["time_ms"]), str(record["last_found_ms"]),
            1 if ends else 0, len(events)]), *events, *(boards or ())]
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append((keys, args, future))
        if len(self._pending) == 1:
            # The flush's task takes the batch in its first step, which the loop runs after what is ready now
            # (the other commands of this turn of the loop): the same batch a callback creating the task then
            # would take, written one turn of the loop sooner and without that callback.
            # A context of its own: the batch is every committer's, so its lines must not carry the match and
            # connection of the first (server/logs.py), and it takes its own place on a cluster client's room.
            task = loop.create_task(self._flush_pending(), context=Context())
            self._flushes.add(task)
            task.add_done_callback(self._flushes.discard)
        result = await future
        status = result[0].decode()
        return status, int(result[2]) if status == "ok" else -1

    async def fence(self, code: str, name: str, epoch: int, nonce: str,
                    within_s: float) -> tuple[PlayerRecord, list[tuple[str, int]], str, m.Settings] | None:
        """After a :meth:`commit` whose answer was lost: void the connection's ``epoch`` (a new one is stored, see
        :data:`~server.store.scripts.FENCE`) and read what Redis holds, in one step, so that nothing of the lost commit can land later.

        Returns the player's record (with its new epoch), its log as :meth:`log` gives it, and the match's deal
        and settings; None when another connection has taken over (``epoch`` is not the stored one). Raises
        :class:`~server.store.records.MatchKeysGone` when the player's or the match's keys are not in Redis.
        Tried again (redis-py's :class:`~redis.asyncio.retry.Retry`, jittered exponential backoff, on connection
        errors and timeouts) for at most ``within_s`` seconds, then raises :class:`TimeoutError`; raises what
        redis-py raises for other failures. ``nonce`` makes a repeated call, its first answer lost, harmless.
        """
        keys = [player_key(code, name), log_key(code, name), meta_key(code)]
        retry = Retry(READ_BACKOFF, retries=-1)  # bounded by within_s

        async def attempt() -> Any:
            if not self.wait_replicas:
                return await self._fence(keys=keys, args=[epoch, nonce])
            # What FENCE reads is acknowledged to the player: it waits for the replicas as a commit does, on
            # the same connection (EVAL, not EVALSHA: a promoted replica may not hold the script yet).
            reply, _replicas = await self._eval_waited(self._fence.script, keys, [epoch, nonce])
            return reply

        async def failed(_error: Exception) -> None:
            return None  # redis-py has dropped the failed connection already

        async with asyncio.timeout(within_s):
            reply = await retry.call_with_retry(attempt, failed)
        if reply[0] == b"gone":
            raise MatchKeysGone(code)
        if reply[0] != b"ok":
            return None
        flat = reply[1]
        record = PlayerRecord.from_hash(dict(zip(flat[::2], flat[1::2])))
        deal, settings = reply[3]
        return record, _log_entries(reply[2]), deal.decode(), msgspec.json.decode(settings, type=m.Settings)

    async def _flush_pending(self) -> None:
        batch, self._pending = self._pending, []
        await self._flush(batch)

    def _wait_targets(self, batch: list[tuple[list[str], list[Any], asyncio.Future[Any]]]) -> list[Any]:
        """Where the WAIT of each commit of ``batch`` goes: ``None`` on one Redis (the pipeline's one
        connection), else the cluster node of the commit's keys (the node's commands of a cluster pipeline go
        on one connection, in order, so its WAIT follows its commits)."""
        if not isinstance(self.redis, RedisCluster):
            return [None] * len(batch)
        return [self.redis.get_node_from_key(keys[0]) for keys, _, _ in batch]

    async def _flush(self, batch: list[tuple[list[str], list[Any], asyncio.Future[Any]]]) -> None:
        """Write ``batch``'s commits and settle their futures: on a Redis Cluster one pipeline per master, at once
        (:meth:`_flush_node`). A pipeline to a master that died is retried by redis-py for seconds and then raises
        for all its commands, so commits of healthy masters batched with one of the dead master's would wait and
        fail with it (and be resolved as lost answers); apart, they are answered in one round trip as usual."""
        if not isinstance(self.redis, RedisCluster) or len(batch) == 1:
            await self._flush_node(batch)
            return
        nodes: dict[str | None, list[tuple[list[str], list[Any], asyncio.Future[Any]]]] = {}
        for commit in batch:
            nodes.setdefault(self._node_name(commit[0][0]), []).append(commit)
        await asyncio.gather(*(self._flush_node(part) for part in nodes.values()))

    async def _flush_node(self, batch: list[tuple[list[str], list[Any], asyncio.Future[Any]]]) -> None:
        """:meth:`_flush` of commits all on one node (a Redis, or one master of a cluster as the client knows it)."""
        if len(batch) == 1 and not self.wait_replicas:
            # Alone in its turn of the loop (a human's pace): one EVALSHA without a pipeline's machinery;
            # redis-py's Script loads the script again on NOSCRIPT.
            keys, args, future = batch[0]
            try:
                result = await self._commit(keys=keys, args=args)
            except Exception as error:  # noqa: BLE001 - the waiting command gets the failure
                if not future.done():
                    future.set_exception(error)
                return
            if not future.done():
                future.set_result(result)
            return
        targets = self._wait_targets(batch) if self.wait_replicas else []
        waits: list[Any] = []  # one WAIT per distinct target, after that target's commits
        for target in targets:
            if all(target is not other for other in waits):
                waits.append(target)
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                for keys, args, _ in batch:
                    # execute_command: redis-py's cluster pipeline blocks its evalsha method, not the command
                    # (routed by its keys, which share one slot)
                    pipe.execute_command("EVALSHA", self._commit.sha, len(keys), *keys, *args)
                for target in waits:
                    route = {} if target is None else {"target_nodes": target}
                    pipe.execute_command("WAIT", self.wait_replicas, self.wait_ms, **route)
                results = await pipe.execute(raise_on_error=False)
        except Exception as error:  # noqa: BLE001 - every waiting command gets the failure
            for _, _, future in batch:
                if not future.done():
                    future.set_exception(error)
            return
        results, waited = results[:len(batch)], dict(zip(map(id, waits), results[len(batch):]))
        for index, target in enumerate(targets):
            replicas = waited[id(target)]
            if isinstance(replicas, Exception):  # the commit's own outcome is unknown: resolved like a lost answer
                results[index] = replicas
            elif isinstance(results[index], Exception):
                pass
            elif target is not None and self._node_name(batch[index][0][0]) != target.name:
                # Redirected (MOVED: its slot went to another node meanwhile): the commit ran on a node this WAIT
                # did not ask, and a WAIT counts only what its own connection wrote. Resolved like a lost answer:
                # the fence is a write on the slot's node followed by a WAIT on that same connection.
                results[index] = RedisConnectionError("the commit was redirected to another node: not waited for")
            else:
                self._warn_short(replicas)
        for (keys, args, future), result in zip(batch, results):
            if isinstance(result, NoScriptError):  # Redis restarted or flushed its scripts: load and retry
                try:
                    result = await (self._commit_waited(keys, args) if self.wait_replicas
                                    else self._commit(keys=keys, args=args))
                except Exception as error:  # noqa: BLE001
                    result = error
            if future.done():
                continue
            if isinstance(result, Exception):
                future.set_exception(result)
            else:
                future.set_result(result)

    def _node_name(self, key: str) -> str | None:
        """The name of the cluster node serving ``key``'s slot as the client knows it now (None: none known)."""
        try:
            return str(self.redis.get_node_from_key(key).name)
        except RedisClusterException:
            return None

    async def _commit_waited(self, keys: list[str], args: list[Any]) -> Any:
        """One commit as a pipeline of EVAL (the script's text: the node may not hold it, as after NOSCRIPT)
        and WAIT on the same connection; raises as :meth:`_flush` resolves a failed WAIT (the commit's outcome
        is unknown) and logs a short count of replicas as it does."""
        result, replicas = await self._eval_waited(self._commit.script, keys, args)
        self._warn_short(replicas)
        return result

    async def _eval_waited(self, lua: str, keys: list[str], args: list[Any]) -> tuple[Any, Any]:
        """``(reply, replicas)`` of a pipeline of EVAL of ``lua`` (the text, not EVALSHA: the node may not hold
        the script, as after NOSCRIPT or on a promoted replica) and WAIT on the same connection, to the node of
        ``keys``' slot: what the script wrote is on that many replicas once it returns."""
        route = {} if not isinstance(self.redis, RedisCluster) else \
            {"target_nodes": self.redis.get_node_from_key(keys[0])}
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.execute_command("EVAL", lua, len(keys), *keys, *args)
            pipe.execute_command("WAIT", self.wait_replicas, self.wait_ms, **route)
            reply, replicas = await pipe.execute()
        return reply, replicas

    def _warn_short(self, replicas: Any) -> None:
        """Log a commit acknowledged on fewer replicas than ``FTR_REDIS_WAIT_REPLICAS`` (answered anyway)."""
        if int(replicas) < self.wait_replicas:
            log.warning("a commit is acknowledged on %s of %d replicas (FTR_REDIS_WAIT_REPLICAS) after %d ms",
                        replicas, self.wait_replicas, self.wait_ms)

    async def add_event(self, code: str, frame: bytes, kind: str = "public") -> str:
        """Append an event to the match's stream: ``kind`` public, or internal (start, takeover)."""
        return (await self.add_entry(events_key(code), {"m": frame, "k": kind})).decode()

    async def add_entry(self, key: str, fields: dict[str, Any]) -> bytes:
        """XADD ``fields`` to event stream ``key`` (trimmed to about :data:`EVENTS_MAXLEN`) outside any script, and
        on a cluster its wake-up as the scripts' ``wake`` sends it (a command of its own, so not atomic with the
        XADD: a lost one is the hub's safety poll's); the new entry's id."""
        entry: bytes = await self.redis.xadd(key, fields, maxlen=EVENTS_MAXLEN, approximate=True)
        if self.wakes:
            try:
                await self.redis.spublish(key, entry)
            except (RedisError, RedisClusterException) as error:
                # The entry is stored: raising would have the caller add it again. A lost wake-up only delays
                # the entry until the hub's safety poll (its master failing over between the two commands).
                log.warning("the wake-up of %s failed (%s: %s): the safety poll reads it", key,
                            type(error).__name__, error)
        return entry

    async def store_results(self, code: str, frame: bytes) -> None:
        """Keep the encoded ``results`` frame of an ended match (it outlives the match's other keys)."""
        await self.redis.set(results_key(code), frame)

    async def results(self, code: str) -> bytes | None:
        """The encoded ``results`` frame of an ended match, or None before its end (or after it expired)."""
        return await self.redis.get(results_key(code))

    async def expire_match(self, code: str) -> None:
        """Finished matches expire after the retention period; their results stay."""
        names = await self.roster(code)
        keys = [meta_key(code), roster_key(code), tokens_key(code), events_key(code)]
        keys += [player_key(code, n) for n in names] + [log_key(code, n) for n in names]
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.expire(key, self.retention_s)
            await pipe.execute()

    # ------------------------------------------------------------ rounds

    async def claim_next(self, code: str, name: str, candidate: str,
                         same_deal: bool = False) -> tuple[str, str, bool, list[str]]:
        """Player ``name`` of ended match ``code`` asks for the next round (:data:`~server.store.scripts.CLAIM_NEXT`):
        ``("ok", next code, whether this call set it to ``candidate``, names who asked)``, or an error status
        (``no_match``, ``not_finished``, ``no_player``) with empty fields. ``same_deal``: the round this call
        sets (if it sets it) is dealt the ended match's deal again (meta ``next_same``)."""
        result = await self._claim_next(keys=[meta_key(code), player_prefix(code)],
                                        args=[name, candidate, "1" if same_deal else "0"])
        status = result[0].decode()
        if status != "ok":
            return status, "", False, []
        return status, result[1].decode(), int(result[2]) == 1, json.loads(result[3])

    async def round_join(self, code: str, name: str, token_digest: str, max_players: int, now_ms: int,
                         name_key: str, via: str, host_digest: str) -> tuple[str, bool]:
        """Put player ``name`` of round ``via`` into round ``code`` as ready (:data:`~server.store.scripts.ROUND_JOIN`):
        ``(status, hosts)``. Status ``ok``, ``again`` (in already: a new token), or why not (``name_taken``,
        ``match_full``, ``already_started``, ``closed``, ``no_match``); ``hosts``: the player hosts the round
        and ``host_digest`` (a new host token's SHA-256) is now its host token."""
        result = await self._round_join(
            keys=[meta_key(code), roster_key(code), tokens_key(code), player_key(code, name)],
            args=[name, token_digest, max_players, now_ms, name_key, via, host_digest])
        return result[0].decode(), int(result[1]) == 1

    async def round_window_over(self, code: str, names: dict[str, str]) -> bool:
        """Round ``code``'s rematch window is over (:data:`~server.store.scripts.WINDOW_OVER`); ``names`` maps each player of the
        round before to its name key. False (nothing changed) when the round has left its lobby."""
        args = [item for pair in names.items() for item in pair]
        return bool(await self._window_over(keys=[meta_key(code), player_prefix(code)], args=args))

    async def next_made(self, code: str) -> None:
        """Mark ended match ``code``'s next round as made (:data:`~server.store.scripts.NEXT_MADE`): once its keys expire, a rematch
        is refused instead of making it again."""
        await self._next_made(keys=[meta_key(code)])

    async def series_add(self, first: str, code: str) -> list[str]:
        """Append round ``code`` to the series of round ``first`` (once); the series' codes in order."""
        codes = await self._series_add(keys=[series_key(first)], args=[first, code, 2 * self.retention_s])
        return [c.decode() for c in codes]

    async def series(self, first: str) -> list[str]:
        """The codes of the series whose first round is ``first`` (``[]``: it has one round only)."""
        return [c.decode() for c in await self.redis.lrange(series_key(first), 0, -1)]

    # ------------------------------------------------------------ timers

    async def add_timer(self, code: str, kind: str, due_ms: int) -> None:
        """Set the match's timer ``kind`` due at ``due_ms`` (ms on the shared clock), replacing its instant."""
        await self.redis.zadd(TIMERS, {timer_member(code, kind): due_ms})

    async def add_missing_timers(self, code: str, due_ms: dict[str, int]) -> None:
        """Add the match's timers ``{kind: due ms}`` that are not set (ZADD NX: a timer set already keeps
        its instant), so any process may repeat it."""
        if due_ms:
            await self.redis.zadd(TIMERS, {timer_member(code, kind): due for kind, due in due_ms.items()}, nx=True)

    async def due_timers(self, now_ms: int, limit: int = 50) -> list[Timer]:
        """The timers due by ``now_ms`` (at most ``limit``, soonest first)."""
        members = await self.redis.zrangebyscore(TIMERS, "-inf", now_ms, start=0, num=limit)
        return [Timer(*parse_timer_member(member)) for member in members]

    async def next_timer_ms(self) -> int | None:
        """When the soonest timer of any match is due (ms on the shared clock); None when none is set."""
        first = await self.redis.zrange(TIMERS, 0, 0, withscores=True)
        return int(first[0][1]) if first else None

    async def lease(self, name: str, holder: str, ms: int) -> bool:
        """Take a lease (SET NX PX); another process takes over when it expires."""
        return bool(await self.redis.set(lease_key(name), holder, nx=True, px=ms))

    async def release(self, name: str) -> None:
        """Give up the lease ``name`` (:meth:`lease`) before it expires."""
        await self.redis.delete(lease_key(name))

    async def done_timer(self, code: str, kind: str) -> None:
        """Remove the match's timer ``kind`` and release its lease."""
        await self.redis.zrem(TIMERS, timer_member(code, kind))
        await self.redis.delete(lease_key(timer_lease(code, kind)))

    async def done_timer_if_due(self, code: str, kind: str, now_ms: int) -> None:
        """Remove the timer unless it was set again for after ``now_ms`` meanwhile; release its lease."""
        await self._done_if_due(keys=[TIMERS], args=[timer_member(code, kind), now_ms])
        await self.redis.delete(lease_key(timer_lease(code, kind)))

    # ------------------------------------------------------------ events

    async def _read(self, what: str, read: Any) -> Any:
        """``await read()`` (a read-only Redis call, safe to repeat), tried again on :data:`READ_ERRORS` with
        redis-py's :class:`~redis.asyncio.retry.Retry` (:data:`READ_RETRIES`, :data:`READ_BACKOFF`): the
        cluster client reads the cluster's layout again after a connection error, so a retry finds the promoted
        replica. The first failure of a run is logged as a warning, the read that worked again after it as info (good
        news). Raises the last error once the tries are
        spent."""
        failures = 0

        async def failed(error: Exception) -> None:
            nonlocal failures
            failures += 1
            self.metrics.redis_failed("event streams", error)
            if failures == 1:
                log.warning("reading %s failed (%s: %s): trying again", what, type(error).__name__, error)

        retry = Retry(READ_BACKOFF, READ_RETRIES, supported_errors=READ_ERRORS)
        result = await retry.call_with_retry(read, failed)
        if failures:
            self.metrics.redis_reached("event streams")
            log.info("reading %s worked again after %d failure%s", what, failures, "" if failures == 1 else "s")
        return result

    def stream_group(self, key: str) -> Hashable:
        """The group of stream ``key`` for the hub's reads (:func:`server.hub.group_streams`): one
        :meth:`read_streams` reads the streams of one group. On one Redis every stream is in group 0 (one XREAD
        for all). On a Redis Cluster the group is the node serving the key's slot now (its name; the key's slot
        while the client does not know the slot's node, during a failover): one read in flight per node, so the
        hub holds one connection per node however many matches it follows. (``clustered`` set on a single
        node's store, as the hub's tests do: the key's slot.)"""
        if isinstance(self.redis, RedisCluster):
            # No node known for the slot (a failover): the slot, until the layout is read again.
            return self._node_name(key) or key_slot(key.encode())
        return key_slot(key.encode()) if self.clustered else 0

    async def read_streams(self, positions: dict[str, str],
                           block_ms: int) -> list[tuple[str, str, dict[bytes, bytes]]]:
        """New entries of the streams ``positions`` (key -> the last id seen; keys of one :meth:`stream_group`):
        ``(key, id, fields)`` triples, oldest first per stream, at most :data:`READ_COUNT` per stream.

        Keys of one hash slot (every key on one Redis): one XREAD, waiting up to ``block_ms`` ms for an entry (0:
        not at all). Keys of several slots (a cluster node's): a multi-key command must touch one slot, so one
        XREAD per slot, all in one pipeline (one round trip on one connection), never waiting: on a cluster the
        hub reads a stream when a wake-up says it has a new entry (:meth:`wake_ups`), not by waiting in a read.

        A failover or a restart of Redis is ridden out here (:meth:`_read`), so the hub's reader does not fail
        for it; the positions are the caller's, so nothing is lost or repeated."""
        if not positions:
            return []
        slots: dict[int, dict[str, str]] = {}
        if self.clustered:
            for key, last in positions.items():
                slots.setdefault(key_slot(key.encode()), {})[key] = last
        if len(slots) <= 1:
            block = block_ms or None  # XREAD's BLOCK 0 would wait for ever
            reply = await self._read("the event streams", lambda: self.redis.xread(positions, block=block, count=READ_COUNT))
            return _stream_entries(reply)
        return await self._read("the event streams", lambda: self._read_slots(list(slots.values())))

    async def _read_slots(self, slots: list[dict[str, str]]) -> list[tuple[str, str, dict[bytes, bytes]]]:
        """:meth:`read_streams` of keys of several slots: a pipeline of one non-blocking XREAD per slot (the dicts
        of ``slots``)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for part in slots:
                pipe.xread(part, count=READ_COUNT)
            replies = await pipe.execute()
        return [entry for reply in replies for entry in _stream_entries(reply)]

    def wake_ups(self) -> WakeUps | None:
        """A listener of the wake-ups the scripts publish (:class:`~server.store.wakeups.WakeUps`, on its own
        connections) on a Redis Cluster; None on one Redis, whose blocking XREAD needs none."""
        if not self.wakes or not isinstance(self.redis, RedisCluster):
            return None
        return WakeUps(self.redis, self.metrics)

    async def stream_after(self, key: str, after: str,
                           page: int = 500) -> AsyncIterator[list[tuple[str, dict[bytes, bytes]]]]:
        """The entries of stream ``key`` after id ``after`` (exclusive), oldest first, to the stream's end as it
        is when the last page is read: pages of ``(id, fields)`` (one XRANGE of ``page`` entries each)."""
        while True:
            entries = await self.redis.xrange(key, min=f"({after}", max="+", count=page)
            if not entries:
                return
            after = entries[-1][0].decode()
            yield [(entry_id.decode(), fields) for entry_id, fields in entries]
            if len(entries) < page:
                return

    async def last_id(self, key: str) -> str:
        """The id of stream ``key``'s newest entry (``0-0`` for an empty or missing stream)."""
        last = await self.redis.xrevrange(key, count=1)
        return last[0][0].decode() if last else "0-0"

    # ------------------------------------------------------------ deal pool

    async def pool_size(self, variant: str) -> int:
        """How many verified solvable deals of ``variant`` the pool holds."""
        return int(await self.redis.llen(pool_key(variant)))

    async def pool_push(self, variant: str, item: bytes) -> None:
        """Add a verified solvable deal (the pool's encoded item) to the end of ``variant``'s pool."""
        await self.redis.rpush(pool_key(variant), item)

    async def pool_pop(self, variant: str) -> bytes | None:
        """Take the oldest deal of ``variant``'s pool; None when it is empty."""
        return await self.redis.lpop(pool_key(variant))


def _stream_entries(reply: Any) -> list[tuple[str, str, dict[bytes, bytes]]]:
    """An XREAD reply (``[[key, [[id, fields], ...]], ...]``, or None) as ``(key, id, fields)`` triples."""
    return [(key.decode(), entry_id.decode(), fields) for key, entries in reply or [] for entry_id, fields in entries]


def _log_entries(entries: list[bytes]) -> list[tuple[str, int]]:
    """A move log's entries (``b"cmd ms"``) as (command, ms from the start) pairs."""
    result = []
    for entry in entries:
        command, _, ms = entry.decode().partition(" ")
        result.append((command, int(ms or 0)))
    return result
