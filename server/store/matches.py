"""A match in the store: its meta hash, its state changes (each counted live), its lobby events, its results
and its expiry; and the live counts of every process's matches (:class:`LiveCounts`)."""

from __future__ import annotations

import logging
from enum import StrEnum
from typing import Any

from ..core.lifecycle import LIVE_STATES
from ..metrics import REDIS_FAILURES
from . import scripts
from .backend import Backend
from .keys import (
    LIVE_COUNTS,
    LIVE_MATCHES,
    events_key,
    log_key,
    meta_key,
    player_key,
    player_prefix,
    results_key,
    roster_key,
    tokens_key,
)
from .outages import REDIS_UNAVAILABLE
from .records import MatchMeta, PlayerRecord, plain

log = logging.getLogger("forty_thieves.store")

_LIVE_ORDER = [state.value for state in LIVE_STATES]
"""The live states in the order a match goes through them (:data:`~server.store.scripts.LIVE_STATE`'s ARGV)."""


class LobbyWrite(StrEnum):
    """What :meth:`Matches.add_lobby_event` did."""

    OK = "ok"
    CHANGED = "changed"
    """The lobby changed since it was read: read it again and retry."""
    NOT_LOBBY = "not_lobby"
    """The match has left its lobby: no lobby event any more."""


class Matches:
    """The store's part for matches (see the module docstring)."""

    def __init__(self, store: Backend, live: LiveCounts) -> None:
        self.store = store
        self.live = live
        self.redis: Any = store.redis  # bytes replies: redis-py types each one bytes | str
        self._create = store.register(scripts.CREATE)
        self._transition = store.register(scripts.TRANSITION)
        self._start = store.register(scripts.START)
        self._close = store.register(scripts.CLOSE_MATCH)
        self._lobby_event = store.register(scripts.LOBBY_EVENT)

    async def create(self, code: str, fields: dict[str, Any]) -> bool:
        """Create match ``code``'s meta hash of ``fields`` (values as :func:`plain` writes them) in one step;
        False when the code exists already."""
        args: list[Any] = ["code", code]
        for k, v in fields.items():
            args += [k, plain(v)]
        return await self._entered(code, bool(await self._create(keys=[meta_key(code)], args=args)),
                                   str(fields.get("state", "")))

    async def _entered(self, code: str, moved: bool, state: str) -> bool:
        """``moved``; when true, match ``code`` has entered ``state``: counted in the metrics and the live counts."""
        if moved:
            self.store.metrics.entered(state)
            await self.live.count(code, state)
        return moved

    async def meta(self, code: str) -> MatchMeta | None:
        """The match's meta record, or None for an unknown match."""
        data = await self.redis.hgetall(meta_key(code))
        return MatchMeta.from_hash(code, data) if data else None

    async def ghost(self, code: str) -> bytes | None:
        """The encoded ``ghost`` frame match ``code`` races against (meta field ``ghost``), or None for none."""
        return await self.redis.hget(meta_key(code), "ghost") or None

    async def set_meta(self, code: str, **fields: Any) -> None:
        """Set fields of the match's meta hash (values as :func:`plain` writes them); no state check: state
        changes go through :meth:`transition` and the scripts."""
        await self.redis.hset(meta_key(code), mapping={k: plain(v) for k, v in fields.items()})

    async def transition(self, code: str, old: str, new: str, event: bytes = b"", **fields: Any) -> bool:
        """Move match ``code`` from state ``old`` to ``new`` atomically, setting ``fields`` and adding ``event``
        (``b""``: none) to its stream; False when it was not in ``old``."""
        args: list[Any] = [old, new, event]
        for k, v in fields.items():
            args += [k, plain(v)]
        moved = await self._transition(keys=[meta_key(code), events_key(code)], args=args)
        return await self._entered(code, bool(moved), new)

    async def start(self, code: str, event: bytes, foundation: int = 0) -> bool:
        """The countdown is over: the match plays, every player's status ``playing`` with the ``foundation``
        cards the deal put up, ``event`` to the stream as kind ``start``; False when it was not counting down."""
        started = await self._start(keys=[meta_key(code), roster_key(code), events_key(code), player_prefix(code)],
                                    args=[event, foundation])
        return await self._entered(code, bool(started), "playing")

    async def close_unstarted(self, code: str, event: bytes, keep_s: int) -> bool:
        """Close a match still in ``lobby`` or ``preparing`` (state ``closed``, ``event`` to its stream, keys
        expiring in ``keep_s`` seconds); False when it had started (or is gone)."""
        keys = [meta_key(code), roster_key(code), tokens_key(code), events_key(code), player_prefix(code)]
        return await self._entered(code, bool(await self._close(keys=keys, args=[event, keep_s])), "closed")

    async def add_lobby_event(self, code: str, frame: bytes, state: str, commitment: str,
                              players: list[PlayerRecord]) -> LobbyWrite:
        """Append lobby ``frame``, built from ``state``, ``commitment`` and ``players`` (join order), unless the
        lobby has changed since they were read (:data:`~server.store.scripts.LOBBY_EVENT`)."""
        args: list[Any] = [frame, state, commitment]
        for p in players:
            args += [p.name, 1 if p.ready else 0, 1 if p.connected else 0]
        keys = [meta_key(code), roster_key(code), events_key(code), player_prefix(code)]
        return LobbyWrite((await self._lobby_event(keys=keys, args=args)).decode())

    async def lost(self, code: str) -> bool:
        """Whether Redis lost match ``code``: no meta hash and no results (a finished match's results outlive
        its other keys), as after a restart without its data or a FLUSHALL."""
        if await self.redis.exists(meta_key(code)):
            return False
        return not await self.redis.exists(results_key(code))

    async def store_results(self, code: str, frame: bytes) -> None:
        """Keep the encoded ``results`` frame of an ended match (it outlives the match's other keys)."""
        await self.redis.set(results_key(code), frame)

    async def results(self, code: str) -> bytes | None:
        """The encoded ``results`` frame of an ended match, or None before its end (or after it expired)."""
        return await self.redis.get(results_key(code))

    async def expire(self, code: str) -> None:
        """Have an ended match's keys expire after the retention period (its results stay)."""
        names = [n.decode() for n in await self.redis.lrange(roster_key(code), 0, -1)]
        keys = [meta_key(code), roster_key(code), tokens_key(code), events_key(code)]
        keys += [player_key(code, n) for n in names] + [log_key(code, n) for n in names]
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.expire(key, self.store.retention_s)
            await pipe.execute()


class LiveCounts:
    """How many matches are in each live state, across every server process on this Redis
    (:data:`~server.store.keys.LIVE_COUNTS`)."""

    def __init__(self, store: Backend) -> None:
        self.store = store
        self.redis: Any = store.redis  # bytes replies: redis-py types each one bytes | str
        self._live_state = store.register(scripts.LIVE_STATE)

    async def count(self, code: str, state: str) -> None:
        """Count match ``code`` in ``state`` (and out of the one it was counted in), or in none when ``state`` is
        not live (:data:`~server.store.scripts.LIVE_STATE`, safe to repeat).

        A command of its own after the state change (on a cluster another slot): a failure is logged, not raised;
        the match's next change or :meth:`sweep` makes it good."""
        live = state if state in LIVE_STATES else ""
        metrics = self.store.metrics
        try:
            await self._live_state(keys=[LIVE_MATCHES, LIVE_COUNTS], args=[code, live, *_LIVE_ORDER])
        except REDIS_UNAVAILABLE as error:
            metrics.redis_failed("live counts", error, retries=False)
            log.warning("counting match %s as %s failed (%s: %s): the sweep of the live counts corrects it", code,
                        state, type(error).__name__, error)
        except REDIS_FAILURES as error:  # the script refused (a bug): its traceback, but the change stays made
            metrics.redis_failed("live counts", error, retries=False)
            log.exception("counting match %s as %s failed: the sweep of the live counts corrects it", code, state)

    async def counts(self) -> dict[str, int]:
        """Live state -> matches in it, every one of :data:`server.core.lifecycle.LIVE_STATES` (one HGETALL)."""
        counts = await self.redis.hgetall(LIVE_COUNTS)
        found = {key.decode(): int(value) for key, value in counts.items()}
        return {state.value: max(found.get(state.value, 0), 0) for state in LIVE_STATES}

    async def sweep(self, page: int = 500) -> int:
        """Count each match counted in a state it is no longer in (its change not counted, its keys lost) in the
        state its meta holds, or in none; read in pages of ``page`` (HSCAN, then a pipeline of their states). A
        match whose count changed between the two reads is left alone. Returns how many were corrected."""
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
