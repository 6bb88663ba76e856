"""The match service of one process: its parts, its connections, and the delivery of match streams.

One :class:`MatchService` per server process. Redis (:mod:`server.store`) is the truth of every match, so any
process can serve any player. The endpoints call the part that does the work:

- :attr:`~MatchService.creation` (:mod:`server.match.creation`): ``POST /matches``, the deal of a match no one chose;
- :attr:`~MatchService.public` (:mod:`server.match.public`): ``GET /matches/{code}``, the lobby frame;
- :attr:`~MatchService.lobby` (:mod:`server.match.lobby`): join, resume, ready, the host's start, the countdown;
- :attr:`~MatchService.playing` (:mod:`server.match.playing`): play, hint, resign;
- :attr:`~MatchService.ending` (:mod:`server.match.ending`): finalize, the deadline, the results;
- :attr:`~MatchService.timers` (:mod:`server.match.timers`): the leased loop over the timers;
- :attr:`~MatchService.effects` (:mod:`server.match.effects`): the lifecycle table's dispatcher, every transition runs through it;
- :attr:`~MatchService.rounds` (:mod:`server.match.rounds`): rematch, restart and the series of rounds;
- :attr:`~MatchService.daily_link` (:mod:`server.match.daily_link`): what the daily challenge asks of matches.

The parts see the service through :class:`server.match.context.MatchContext`. The service itself owns the
background tasks, this process's connections (a :class:`~server.match.session.Session` each) and the delivery of
each match's stream to them and to its spectators, through the process's hub (:mod:`server.hub`).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import uuid
from collections import OrderedDict
from concurrent.futures import Executor
from functools import partial
from typing import Any

import msgspec

from protocol import messages as m
from protocol.codec import encode

from .core.errors import ServiceError
from .core.player import MATCH_GONE, MATCH_GONE_CLOSE, REPLACED, MatchGone
from .hub import Hub, HubFull, Subscription
from .match.bots import Bots
from .match.clock import Clock
from .match.creation import Creation
from .match.daily_link import DailyHooks, DailyLink
from .match.effects import Effects
from .match.ending import Ending
from .match.lobby import Lobby
from .match.playing import Playing
from .match.public import PublicView
from .match.rounds import Rounds
from .match.session import Session
from .match.timers import Timers
from .metrics import default_metrics
from .profiles import ProfileService
from .scheduler import SolverScheduler
from .settings import Settings
from .store import REDIS_UNAVAILABLE, Outage, Store, StreamEntry, match_feed
from .store.keys import parse_match_key

log = logging.getLogger("forty_thieves.matches")

READER_PAUSE_S = 0.010
"""Pause of the stream reader after a read that returned events (seconds): other players' progress
reaches a player up to this much later, a player's own reply not at all (fewer XREAD calls a move)."""

BUG_BACKOFF_BASE_S = 0.5
"""A supervised loop that failed for a bug (not Redis) starts again after this (seconds), doubling with each
failure in a row up to :data:`BUG_BACKOFF_CAP_S`."""

BUG_BACKOFF_CAP_S = 30.0

LOST_MATCH_CHECK_S = 5.0
"""How often the server asks Redis whether the matches its players are in, or its spectators watch, are still
there (seconds): a player who sends nothing, or a spectator, learns within about this that Redis lost the match
(one EXISTS a match)."""


LOST_KEPT = 10_000
"""How many codes of matches Redis lost a process remembers (the oldest forgotten first): it logs each once, and
a ``join`` by such a code is told the match is gone, not that no match has the code."""


LIVE_SWEEP_S = 60.0
"""Seconds between two sweeps of the live counts of matches (``ftr_matches``), of all processes together."""

LIVE_SWEEP_LEASE = "live counts"
"""The lease (:meth:`server.store.timers.Timers.lease`) one process takes for each sweep."""


class MatchService:
    """Everything a process does for matches (see the module docstring).

    The parts share this service's store, settings, clock and connections; the methods here are the background
    tasks, the registry of this process's connections and the delivery of match streams.
    """

    def __init__(self, store: Store, settings: Settings, executor: Executor | None,
                 dead_executor: Executor | None = None) -> None:
        self.store = store
        self.settings = settings
        self.executor = executor
        self.solver = SolverScheduler(executor, getattr(executor, "workers", 1))
        """The solver workers' turns (:mod:`server.scheduler`): every job for ``executor`` goes through it."""
        self.dead_executor = dead_executor or executor
        self.clock = Clock(settings.clock_offset_ms)
        self.metrics = default_metrics()
        """The app's metrics (:mod:`server.metrics`): the app sets its own; until then the process's shared
        :func:`~server.metrics.default_metrics`."""
        self.daily: DailyHooks | None = None
        """The daily challenge (:class:`server.daily.DailyService`) when it runs: told of starts and ends."""
        self.process_id = uuid.uuid4().hex[:12]
        self.local: dict[str, set[Session]] = {}
        self.hub = Hub(store.streams, queue_limit=settings.watcher_queue, pause_s=READER_PAUSE_S)
        """This process's fan-out (:mod:`server.hub`): its players' and spectators' event streams."""
        self._lost: OrderedDict[str, None] = OrderedDict()
        """The codes of matches Redis lost, as this process found them (:meth:`noted_lost`), oldest first."""
        self._listening: dict[str, Subscription] = {}
        """The hub's callback subscription of each match with players in this process (:meth:`_dispatch`)."""
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stopping = False
        """True once :meth:`stop_background` has begun: supervised loops are not restarted any more."""
        self._lobby_locks: dict[str, asyncio.Lock] = {}
        self.creation = Creation(self)
        self.public = PublicView(self)
        self.lobby = Lobby(self)
        self.playing = Playing(self)
        self.ending = Ending(self)
        self.timers = Timers(self)
        self.effects = Effects(self)
        """The lifecycle table's dispatcher (:mod:`server.match.effects`): every transition runs through it."""
        self.rounds = Rounds(self)
        self.bots = Bots(self)
        self.daily_link = DailyLink(self)
        """What the daily challenge may ask of matches (:class:`server.match.daily_link.DailyMatches`)."""
        self.profiles = ProfileService(store, settings, self.clock.now_ms)
        """Named players (:mod:`server.profiles`): claims and keys at a join, history at the end."""

    # ------------------------------------------------------------ background tasks

    def spawn(self, coro: Any, *, context: contextvars.Context | None = None) -> asyncio.Task[Any]:
        """Run ``coro`` as a background task of the service, in ``context`` (default: a copy of the current
        one); :meth:`stop_background` cancels it and waits for its end."""
        task = asyncio.create_task(coro, context=context)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def run_forever(self, coro_factory: Any, name: str) -> None:
        """Supervise a loop (``name`` in the log): start it again whenever it fails, until
        :meth:`stop_background` has begun.

        A Redis failure (:data:`~server.store.REDIS_UNAVAILABLE`) is logged once per outage, and the loop starts
        again once a PING answers; any other exception is a bug, logged with its traceback, and the loop starts
        again after a capped, jittered backoff (:data:`BUG_BACKOFF_BASE_S` doubling up to :data:`BUG_BACKOFF_CAP_S`).
        """
        outage = Outage(name, log)
        bugs = Outage(name, log, cap_s=BUG_BACKOFF_CAP_S, base_s=BUG_BACKOFF_BASE_S)
        loop = asyncio.get_running_loop()
        while not self._stopping:
            began = loop.time()
            try:
                await coro_factory()
            except asyncio.CancelledError:
                raise
            except REDIS_UNAVAILABLE as error:
                if self._stopping:  # a cancellation that surfaced as another error (a Redis read's timeout)
                    return
                self.metrics.redis_failed(name, error)
                outage.failed(error)
                if await outage.until_reached(self.store.redis.ping, lambda: self._stopping):
                    self.metrics.redis_reached(name)
            except Exception:
                if self._stopping:
                    return
                if loop.time() - began > BUG_BACKOFF_CAP_S:
                    bugs.failures = 0
                bugs.failures += 1
                delay = bugs.delay()
                log.exception("%s failed; restarting in %.1f s", name, delay)
                await asyncio.sleep(delay)

    async def start_background(self) -> None:
        await self.clock.sync(self.store)
        self.spawn(self.run_forever(self.hub.run, "event reader"))
        self.spawn(self.run_forever(self.timers.run, "timers"))
        self.spawn(self.run_forever(self._clock_sync, "clock sync"))
        self.spawn(self.run_forever(self._notice_lost_matches, "lost matches"))
        self.spawn(self.run_forever(self._sweep_live, "live counts"))

    async def stop_background(self) -> None:
        """Cancel the background tasks and wait until they have ended.

        Cancelled again every second: a cancellation can be swallowed on the way (it surfaced as a Redis
        timeout error, the supervisor restarted the loop, and a one-shot cancel left the stop waiting for ever).
        """
        self._stopping = True
        while self._tasks:
            for task in list(self._tasks):
                task.cancel()
            await asyncio.wait(list(self._tasks), timeout=1.0)

    async def _sweep_live(self) -> None:
        """Every :data:`LIVE_SWEEP_S`, in one process of all (a lease as long), the live counts are made true
        again (:meth:`server.store.matches.LiveCounts.sweep`), and any correction logged."""
        while True:
            await asyncio.sleep(LIVE_SWEEP_S)
            if await self.store.timers.lease(LIVE_SWEEP_LEASE, self.process_id, int(LIVE_SWEEP_S * 1000)):
                corrected = await self.store.live.sweep()
                if corrected:
                    log.warning("the live counts of matches held %d that had left their state: corrected", corrected)

    async def _clock_sync(self) -> None:
        while True:
            await asyncio.sleep(30)
            await self.clock.sync(self.store)

    # ------------------------------------------------------------ this process's connections

    async def attach(self, session: Session, code: str, name: str, epoch: int) -> None:
        """The connection now speaks for player ``name`` of ``code`` (connection ``epoch``): an older
        connection of the player in this process is replaced, the stream followed, the player marked here."""
        for other in list(self.local.get(code, ())):
            if other.name == name and other is not session:
                await self._replace(other)
        session.code, session.name, session.epoch = code, name, epoch
        self.local.setdefault(code, set()).add(session)
        await self._follow(code)
        await self.store.players.update(code, name, connected=1)

    async def _notice_lost_matches(self) -> None:
        """Every :data:`LOST_MATCH_CHECK_S`, ask Redis whether the matches this process's players are in and its
        spectators watch are still there (:meth:`server.store.matches.Matches.lost`), so that a player who sends nothing
        (in the lobby, thinking) learns the match is gone too, not only at the next command (which the stored
        scripts answer so), and a spectator learns it at all (:meth:`match_lost`)."""
        while True:
            await asyncio.sleep(LOST_MATCH_CHECK_S)
            codes = dict.fromkeys(code for code, sessions in self.local.items() if sessions)
            codes.update(dict.fromkeys(parse_match_key(feed.key)[0] for feed in self.hub.spectated("match")))
            for code in codes:
                if await self.store.matches.lost(code):
                    self.noted_lost(code)
                    self.match_lost(code)

    def noted_lost(self, code: str) -> None:
        """This process found that Redis lost match ``code`` (a command answered
        :class:`~server.core.player.MatchGone`, or the check): logged once per match and process, however many
        commands meet it, and remembered (:meth:`known_lost`; the last :data:`LOST_KEPT` codes)."""
        if not code or code in self._lost:
            return
        log.warning("match %s: its keys are gone from Redis (it restarted without its saved data, or was emptied); "
                    "its players and spectators are told the server lost it", code)
        self._lost[code] = None
        if len(self._lost) > LOST_KEPT:
            self._lost.popitem(last=False)

    def known_lost(self, code: str) -> bool:
        """Whether this process found that Redis lost match ``code`` (:meth:`noted_lost`). Redis itself cannot
        tell a lost match from a code that never existed: both have no key."""
        return code in self._lost

    def match_lost(self, code: str) -> None:
        """Tell this process's players and spectators of ``code`` that Redis lost the match: a player gets
        ``no_match`` (:data:`~server.core.player.MATCH_GONE`) and its connection is closed with 4004, as a command
        of theirs would have been answered; a spectator's subscription ends with that refusal
        (:meth:`server.hub.Hub.end`), which the watch endpoints send as they refuse an unknown match."""
        for session in list(self.local.get(code, ())):
            self.detach(session)
            session.push(encode(m.Error("no_match", MATCH_GONE)))
            session.close(MATCH_GONE_CLOSE, "the server lost this match")
        self.hub.end(match_feed(code), MatchGone(code))

    async def _replace(self, old: Session) -> None:
        self.detach(old)
        old.push(encode(m.Error("replaced", REPLACED)))
        old.close(4000, "replaced by a newer connection with the same token")

    def detach(self, session: Session) -> None:
        """Stop delivering the match's events to ``session`` (it is closing, or was replaced)."""
        sessions = self.local.get(session.code)
        if sessions is not None:
            sessions.discard(session)
            self._unfollow_if_idle(session.code)

    async def disconnected(self, session: Session) -> None:
        """The socket closed: forget it; mark the player away unless a newer connection took over."""
        if not session.code:
            return
        self.detach(session)
        record = await self.store.players.get(session.code, session.name)
        if record is not None and record.epoch == session.epoch:
            await self.store.players.update(session.code, session.name, connected=0)

    def lobby_lock(self, code: str) -> asyncio.Lock:
        """Serialises this process's lobby changes and start decisions of one match (the order of the lobby
        events across processes is Redis's: :meth:`server.match.public.PublicView.publish_lobby`)."""
        lock = self._lobby_locks.get(code)
        if lock is None:
            lock = self._lobby_locks[code] = asyncio.Lock()
        return lock

    # ------------------------------------------------------------ fan-out

    async def _follow(self, code: str) -> None:
        """Have the hub deliver the match's stream to this process's players of it (:meth:`_dispatch`) from now on."""
        if code in self._listening:
            return
        listening = self._listening[code] = self.hub.listen(match_feed(code), partial(self._dispatch, code))
        try:
            await listening.open()
        except BaseException:
            if self._listening.get(code) is listening:
                del self._listening[code]
            raise

    def _unfollow_if_idle(self, code: str) -> None:
        if not self.local.get(code):
            self.local.pop(code, None)
            listening = self._listening.pop(code, None)
            if listening is not None:
                listening.close()
            self._lobby_locks.pop(code, None)

    async def watch(self, code: str) -> Subscription:
        """An open subscription of the match's spectator events (:meth:`Subscription.batches
        <server.hub.Subscription.batches>`: what the stream holds, then live); close it (or leave its
        ``async with``) when the spectator leaves.

        Raises :class:`ServiceError` ``too_many_watchers`` when this process already serves
        ``FTR_MAX_WATCHERS`` spectators of the match (DESIGN.md "Limits": watchers per match), and what redis-py
        raises.
        """
        subscription = self.hub.subscribe(match_feed(code), max_subscribers=self.settings.max_watchers)
        try:
            await subscription.open()
        except HubFull:
            raise ServiceError("too_many_watchers", f"this server already streams this match to "
                                                    f"{self.settings.max_watchers} spectators: try again later") from None
        return subscription

    async def _dispatch(self, code: str, entry: StreamEntry) -> None:
        """One entry of the match's stream (the hub's callback): what each of this process's players of the match
        gets of it, by its kind: ``public`` to all but the player it came from, ``ended`` (the server ended a
        game) to all, ``start`` opens their games, ``takeover`` replaces an older connection of the player."""
        kind, frame = entry.kind, entry.frame
        sessions = list(self.local.get(code, ()))
        if kind == "public":
            for session in sessions:
                if session.name != entry.player and not session.push(frame):
                    await self._drop_slow(session)
        elif kind == "ended":  # the server ended a player's game (time limit, dead game): everyone hears it
            for session in sessions:
                if session.name == entry.player and session.player is not None:
                    session.adopt(session.player.ended(entry.status))
                if not session.push(frame):
                    await self._drop_slow(session)
        elif kind == "start":
            meta = await self.store.matches.meta(code)
            if meta is not None:
                for session in sessions:
                    if session.player is None:
                        self.spawn(self.playing.open_game_logged(session, meta))
        elif kind == "takeover":
            name, epoch = msgspec.msgpack.decode(frame)
            for session in sessions:
                if session.name == name and session.epoch < epoch:
                    await self._replace(session)

    async def _drop_slow(self, session: Session) -> None:
        """A connection whose queue is full is dropped; it can resume and catch up."""
        self.detach(session)
        session.close(4002, "too slow: the connection fell behind; resume to catch up")


__all__ = ["READER_PAUSE_S", "MatchService"]
