"""A player's accepted commands in the store: the commits of one turn of the event loop batched into one round
trip, the replicas waited for (``FTR_REDIS_WAIT_REPLICAS``), and the fence that settles a commit whose answer
was lost."""

from __future__ import annotations

import asyncio
import logging
from contextvars import Context
from enum import Enum
from typing import Any, NamedTuple

import msgspec
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError

from protocol import messages as m

from ..core.player import CommitStatus, Stored
from . import scripts
from .backend import Backend
from .client import node_name
from .keys import events_key, log_key, meta_key, player_key
from .players import log_entries
from .records import MatchKeysGone, PlayerRecord
from .streams import READ_BACKOFF

log = logging.getLogger("forty_thieves.store")

Pending = tuple[list[str], list[Any], "asyncio.Future[Any]"]
"""A commit waiting for its batch: its keys, its arguments, and the future its answer settles."""


class Committed(NamedTuple):
    """:meth:`Commits.commit`'s answer: ``status`` and, when ``OK``, the players still playing when the command
    ended a game (else -1)."""

    status: CommitStatus
    active: int


class CommitOutcome(Enum):
    """What became of a proposal's write, as the match service tells it after :meth:`Commits.commit`."""

    STORED = "stored"
    REFUSED = "refused"
    """Redis refused it (answered already: a ``dup`` acknowledged again, or an error raised)."""
    LOST = "lost"
    """Redis's answer was lost; what it holds was learnt from it (:meth:`Commits.fence`)."""


class Fenced(NamedTuple):
    """What :meth:`Commits.fence` read: the player's ``record`` (with its new epoch), its ``log`` as
    :meth:`server.store.players.Players.log` gives it, and the match's ``deal`` and ``settings``."""

    record: PlayerRecord
    log: list[tuple[str, int]]
    deal: str
    settings: m.Settings


class Commits:
    """The store's part for commits (see the module docstring). ``wait_replicas`` > 0: each batch is followed,
    on the same connection to the same master, by ``WAIT wait_replicas wait_ms``, and no commit of it is answered
    before; fewer replicas within ``wait_ms`` are logged as a warning, the commits answered anyway."""

    def __init__(self, store: Backend, wait_replicas: int = 0, wait_ms: int = 1000) -> None:
        self.store = store
        self.redis: Any = store.redis  # bytes replies: redis-py types each one bytes | str
        self.wait_replicas = wait_replicas
        self.wait_ms = wait_ms
        self._commit = store.register(scripts.COMMIT)
        self._fence = store.register(scripts.FENCE)
        self._pending: list[Pending] = []
        self._flushes: set[asyncio.Task[None]] = set()

    async def commit(self, code: str, name: str, epoch: int, seq: int, entry: str, record: Stored, ends: bool,
                     events: list[bytes], boards: list[bytes] | None = None) -> Committed:
        """Write one accepted command atomically (:data:`~server.store.scripts.COMMIT`): log ``entry`` (``""``:
        none), the player's ``record``, ``events`` to the stream as public events and ``boards`` as kind ``board``
        (spectators only); ``ends``: the command ended the player's game.

        The commits of one turn of the event loop share one pipeline (one round trip). Raises what redis-py
        raises when Redis fails (the outcome is then unknown: :meth:`fence`)."""
        keys = [player_key(code, name), log_key(code, name), events_key(code), meta_key(code)]
        args = [msgspec.msgpack.encode([
            str(epoch), str(seq), entry, str(record.moves), str(record.undos), str(record.hints),
            str(record.foundation), record.status, str(record.time_ms), str(record.last_found_ms),
            1 if ends else 0, len(events)]), *events, *(boards or ())]
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append((keys, args, future))
        if len(self._pending) == 1:
            # The flush's first step runs after what is ready now (this turn's other commands): one batch. Its own
            # context: its log lines are no one committer's, and it takes its own place on a cluster client's room.
            task = loop.create_task(self._flush_pending(), context=Context())
            self._flushes.add(task)
            task.add_done_callback(self._flushes.discard)
        result = await future
        status = CommitStatus(result[0].decode())
        return Committed(status, int(result[2]) if status is CommitStatus.OK else -1)

    async def fence(self, code: str, name: str, epoch: int, nonce: str, within_s: float) -> Fenced | None:
        """After a :meth:`commit` whose answer was lost: void connection ``epoch`` (a new one is stored) and read
        what Redis holds, in one step (:data:`~server.store.scripts.FENCE`), so nothing of the lost commit can
        land later. ``nonce`` makes a repeated call harmless.

        None when another connection has taken over. Raises :class:`~server.store.records.MatchKeysGone` when the
        player's or the match's keys are not in Redis; tries again on connection errors and timeouts for at most
        ``within_s`` seconds, then raises :class:`TimeoutError`; raises what redis-py raises for other failures."""
        keys = [player_key(code, name), log_key(code, name), meta_key(code)]
        retry = Retry(READ_BACKOFF, retries=-1)  # bounded by within_s

        async def attempt() -> Any:
            if not self.wait_replicas:
                return await self._fence(keys=keys, args=[epoch, nonce])
            # What FENCE reads is acknowledged to the player: waited for as a commit is, on the same connection.
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
        return Fenced(record, log_entries(reply[2]), deal.decode(), msgspec.json.decode(settings, type=m.Settings))

    async def _flush_pending(self) -> None:
        batch, self._pending = self._pending, []
        await self._flush(batch)

    def _wait_targets(self, batch: list[Pending]) -> list[Any]:
        """Where each commit's WAIT goes: None on one Redis, else the cluster node of the commit's keys."""
        if not isinstance(self.redis, RedisCluster):
            return [None] * len(batch)
        return [self.redis.get_node_from_key(keys[0]) for keys, _, _ in batch]

    async def _flush(self, batch: list[Pending]) -> None:
        """Write ``batch``'s commits and settle their futures; on a Redis Cluster one pipeline per master, at once,
        so a dead master's retries do not hold the healthy masters' commits."""
        if not isinstance(self.redis, RedisCluster) or len(batch) == 1:
            await self._flush_node(batch)
            return
        nodes: dict[str | None, list[Pending]] = {}
        for commit in batch:
            nodes.setdefault(node_name(self.redis, commit[0][0]), []).append(commit)
        await asyncio.gather(*(self._flush_node(part) for part in nodes.values()))

    async def _flush_node(self, batch: list[Pending]) -> None:
        """:meth:`_flush` of commits all on one node (as the client knows it)."""
        if len(batch) == 1 and not self.wait_replicas:
            # Alone in its turn (a human's pace): one EVALSHA; redis-py's Script loads it again on NOSCRIPT.
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
            elif target is not None and node_name(self.redis, batch[index][0][0]) != target.name:
                # Redirected (MOVED): the commit ran on a node this WAIT did not ask, and a WAIT counts only what
                # its own connection wrote. Resolved like a lost answer (the fence waits on the slot's node).
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

    async def _commit_waited(self, keys: list[str], args: list[Any]) -> Any:
        """One commit as EVAL and WAIT on one connection; raises as :meth:`_flush` resolves a failed WAIT."""
        result, replicas = await self._eval_waited(self._commit.script, keys, args)
        self._warn_short(replicas)
        return result

    async def _eval_waited(self, lua: str, keys: list[str], args: list[Any]) -> tuple[Any, Any]:
        """``(reply, replicas)`` of EVAL of ``lua`` (the text: the node may not hold the script, as after NOSCRIPT
        or on a promoted replica) then WAIT, pipelined on one connection to the node of ``keys``' slot."""
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
