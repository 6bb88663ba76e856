"""The daily challenge's service: one verified deal a day per variant, one attempt per name.

An attempt is a one-player match of the match service, reached through
:class:`server.match.daily_link.DailyMatches` only: it gets the day's deal but never its seed (its commitment is
the daily one), starts as its player connects and ends at the latest when the UTC day ends. When it ends the
match service calls :meth:`DailyService.record`, which puts the entry on the leaderboard and keeps the game for
the replay. The day, seed and score rules are :mod:`server.core.daily`; the Redis keys and scripts are the
store's (:class:`server.store.DailyStore`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from contextvars import Context
from typing import Any

from protocol.errors import NotationError

from .core.daily import (
    DAILY_NODES,
    MAX_INDEX,
    day_bounds,
    day_of,
    find_daily_deal,
    next_day,
    pack_score,
    parse_date,
    seed_commitment,
)
from .core.errors import DailyError
from .core.lifecycle import State
from .core.ranking import Standing
from .daily_days import DailyDays, board_row
from .engine import deal, find_variant, format_position
from .hub import HubFull, Subscription
from .match.daily_link import DailyMatches, Day, Log
from .profiles import Entered, ProfileError, ProfileService
from .store import AttemptStatus, DayDeal, day_feed
from .store.keys import day_lease
from .store.records import DailyEntry, DailyReplay

log = logging.getLogger("forty_thieves.daily")


class DailyService:
    """The daily challenge of one server process (see the module docstring).

    ``now_ms``: the clock (Unix epoch ms); default the match service's
    clock (Redis ``TIME`` plus ``FTR_CLOCK_OFFSET_MS``); tests inject one.
    """

    def __init__(self, matches: DailyMatches, variants: tuple[str, ...], secret: str | None = None,
                 now_ms: Callable[[], int] | None = None, nodes: int = DAILY_NODES,
                 profiles: ProfileService | None = None) -> None:
        self.matches = matches
        self.store = matches.store.daily
        self.variants = tuple(find_variant(v).name for v in variants)
        self.configured_secret = secret
        self.now_ms = now_ms or matches.now_ms
        self.profiles = profiles or ProfileService(matches.store, matches.settings, self.now_ms)
        """Named players: an attempt's name is claimed, or checked against its key."""
        self.nodes = nodes
        self._preparing: dict[tuple[str, str], asyncio.Future[DayDeal]] = {}
        self.days = DailyDays(self)
        """A name's place on a day's board, the days' pages, practice (:mod:`server.daily_days`)."""

    # ------------------------------------------------------------ variants and dates

    def variant_of(self, text: str) -> str:
        """The daily variant named ``text``; raises :class:`DailyError` 404 ``no_variant``."""
        try:
            name = find_variant(text).name
        except NotationError:
            name = ""
        if name not in self.variants:
            raise DailyError(404, "no_variant", f"no daily challenge for variant {text!r}: "
                                                f"the daily variants are {', '.join(self.variants)}")
        return name

    def date_of(self, text: str) -> str:
        """A requested date: 400 ``malformed`` when not ``YYYY-MM-DD``, 404 ``no_day`` when after today."""
        try:
            date = parse_date(text)
        except ValueError:
            raise DailyError(400, "malformed", f"{text[:20]!r} is not a date: write YYYY-MM-DD") from None
        if date > day_of(self.now_ms()):
            raise DailyError(404, "no_day", f"no daily challenge for {date} yet")
        return date

    # ------------------------------------------------------------ deals

    async def deal_of_day(self, date: str, variant: str) -> DayDeal:
        """The day's deal record (prepared now if it was not: in the solver pool, under a lease)."""
        found = await self.store.deal(date, variant)
        if found is not None:
            return found
        key = (date, variant)
        future = self._preparing.get(key)
        if future is None:
            # A context of its own: the task serves every caller waiting for the day, so its lines must not
            # carry the match and connection of whichever connection asked first (server/logs.py).
            future = self.matches.spawn(self._prepare(date, variant), Context())
            self._preparing[key] = future
            future.add_done_callback(lambda _: self._preparing.pop(key, None))
            # Its callers may all be gone (the daily loop cancelled at a stop, whose solver worker is then
            # terminated): the failure is theirs to see, never "Task exception was never retrieved" on stderr.
            future.add_done_callback(lambda done: done.cancelled() or done.exception())
        return await asyncio.shield(future)

    async def _prepare(self, date: str, variant: str) -> DayDeal:
        lease = day_lease(date, variant)
        while True:
            found = await self.store.deal(date, variant)
            if found is not None:
                return found
            if await self.matches.store.timers.lease(lease, self.matches.process_id, 120_000):
                break
            await asyncio.sleep(0.2)  # another process prepares it
        try:
            secret = await self.store.secret(self.configured_secret)
            with self.matches.store.metrics.solver_job("daily_deal") as timing:  # its wait for a worker included
                index, seed, moves = await self.matches.run_solver(find_daily_deal, secret, date, variant, self.nodes,
                                                                   MAX_INDEX, self.matches.settings.pure_solver)
                timing.result = "found"
            fields = {"seed": seed, "commitment": seed_commitment(seed), "attempt_index": index,
                      "deal": format_position(deal(seed, find_variant(variant))), "solution": json.dumps(moves), "closed": 0}
            await self.store.set_deal(date, variant, fields, day_bounds(date)[1])
            log.info("daily %s %s: attempt index %d is solvable", date, variant, index)
        finally:
            await self.matches.store.timers.release(lease)
        found = await self.store.deal(date, variant)
        assert found is not None
        return found

    # ------------------------------------------------------------ attempts

    async def attempt(self, variant_text: str, name: str, token: str | None, player_key: str | None = None,
                      address: str = "?") -> dict[str, Any]:
        """Start (or resume) today's attempt of ``name``: the match to play and a player token for ``resume``.

        ``name`` is a named player's (:mod:`server.profiles`): ``player_key`` is its key (``token``, the
        daily's older name for it, is taken too); a free name is claimed now. Returns ``{"date", "variant",
        "name", "match", "player_token", "commitment", "ends_at_ms"}``, plus ``"player_key"``,
        ``"recovery_code"`` and ``"name_token"`` (the key again, for older clients) when this call claimed the
        name (keep the key: the name needs it from now on), or ``"recovery_code"`` alone when a daily token
        from before became the name's player key now; and ``"streak"``, ``"best_streak"``, ``"freezes"``: the
        name's daily streak as the server holds it (:meth:`server.history.History.streak`; today counts once an
        attempt of today has ended). Raises :class:`DailyError`: 404 ``no_variant``, 400
        ``malformed`` (name), 403 ``bad_token`` (the name is claimed and the key is missing or wrong), 409
        ``name_taken`` (a name that looks like a claimed one: same :func:`server.names.name_key`, other
        spelling), 409 ``already_played`` (the name's attempt of today has ended), 429 ``rate_limited`` (claims
        of ``address`` past ``FTR_NAMES_PER_HOUR``).
        """
        variant = self.variant_of(variant_text)
        entered = await self.enter(name, player_key or token, address)
        try:
            result = await self._open_attempt(variant, name)
        except BaseException:
            await self.profiles.release(entered)  # claimed by this call, but its key never reaches anyone
            raise
        if entered.player_key:
            result["player_key"] = result["name_token"] = entered.player_key
        if entered.recovery_code:
            result["recovery_code"] = entered.recovery_code
        result.update((await self.profiles.history.streak(name))._asdict())
        return result

    async def enter(self, name: str, key: str | None, address: str) -> Entered:
        """The named player an attempt or a practice is played as (:meth:`server.profiles.ProfileService.enter`:
        claimed now when free), its refusals raised as :class:`DailyError` with the same status and code."""
        try:
            return await self.profiles.enter(name, key, address)
        except ProfileError as error:
            raise DailyError(error.status, error.code, error.message) from None

    async def _open_attempt(self, variant: str, name: str) -> dict[str, Any]:
        """Today's attempt of ``name`` (made now, or the open one) with a new player token; see :meth:`attempt`."""
        now = self.now_ms()
        date = day_of(now)
        record = await self.deal_of_day(date, variant)
        code = await self.store.attempt_code(date, variant, name)
        if code is None:
            created = await self._create_match(date, variant, name, record)
            try:
                status, code = await self.store.new_attempt(date, variant, name, created)
            except BaseException:  # not recorded as anyone's attempt: close it, or its keys stay for ever
                await asyncio.shield(self.close_unstarted(created, date))
                raise
            if status is not AttemptStatus.NEW:  # the day closed meanwhile, or a concurrent call made the attempt first
                await self.close_unstarted(created, date)
            if status is AttemptStatus.CLOSED:
                raise DailyError(409, "day_over", f"the daily challenge of {date} is over")
        if not await self.matches.attempt_open(code, name):
            raise DailyError(409, "already_played", f"{name!r} has played the {variant} daily challenge of {date}: "
                                                    "one attempt a day; see the leaderboard")
        player_token = await self.matches.issue_token(code, name)
        result: dict[str, Any] = {"date": date, "variant": variant, "name": name, "match": code,
                                  "player_token": player_token, "commitment": record.commitment,
                                  "ends_at_ms": day_bounds(date)[1]}
        return result

    async def _create_match(self, date: str, variant: str, name: str, record: DayDeal) -> str:
        """A one-player match with the day's deal and no seed, the player already in it (lobby)."""
        return await self.matches.create_attempt((date, variant), name, record.deal, record.solution,
                                                 record.commitment, day_bounds(date)[1])

    async def started(self, code: str, day: Day, name: str, start_at_ms: int, foundation: int) -> None:
        """Attempt ``code`` started (the match service's :class:`~server.match.daily_link.DailyHooks`): the public
        ``attempt`` event, with the ``foundation`` cards the deal's auto-play put up before the first command."""
        date, variant = day
        await self.store.add_event(date, variant, {"name": name, "status": "playing", "moves": 0,
                                                   "foundation": foundation, "time_ms": 0})

    async def record(self, code: str, day: Day, standing: Standing, commands: Log) -> None:
        """Attempt ``code`` ended (the match service's hook, before its results): board, entry, replay of the
        move log ``commands``. Idempotent (the match's finalize may run again after a failure)."""
        date, variant = day
        entry = DailyEntry(standing.status, standing.time_ms, standing.moves, standing.foundation, standing.undos,
                           standing.hints, standing.last_foundation_ms, code)
        replay = DailyReplay([c for c, _ in commands], [t for _, t in commands])
        event = {"name": standing.name, "status": standing.status, "moves": standing.moves,
                 "foundation": standing.foundation, "time_ms": standing.time_ms}
        await self.store.record(date, variant, standing.name, pack_score(standing), entry, replay, event)

    # ------------------------------------------------------------ reading

    async def today(self) -> dict[str, Any]:
        """``GET /daily``: today's date, clock, end, and per variant its commitment and attempt counts."""
        now = self.now_ms()
        date = day_of(now)
        variants = []
        for variant in self.variants:
            record = await self.deal_of_day(date, variant)
            made, ended = await self.store.counts(date, variant)
            variants.append({"variant": variant, "commitment": record.commitment, "attempts": made,
                             "finished": ended})
        return {"date": date, "now_ms": now, "ends_at_ms": day_bounds(date)[1], "variants": variants}

    async def known_day(self, date_text: str, variant_text: str) -> tuple[str, str, DayDeal]:
        """``(date, variant, deal record)`` of a day with a challenge; :class:`DailyError` 400 or 404 otherwise."""
        variant = self.variant_of(variant_text)
        date = self.date_of(date_text)
        record = await self.store.deal(date, variant)
        if record is None:
            if date == day_of(self.now_ms()):
                record = await self.deal_of_day(date, variant)
            else:
                raise DailyError(404, "no_day", f"there was no {variant} daily challenge on {date}")
        return date, variant, record

    def revealed(self, date: str, record: DayDeal) -> bool:
        """After the day, once every attempt has ended (DESIGN.md: the seed is secret while anyone can play)."""
        return self.now_ms() >= day_bounds(date)[1] and record.closed

    async def leaderboard(self, date_text: str, variant_text: str, offset: int, limit: int, name: str | None = None,
                          base_url: str = "") -> dict[str, Any]:
        """``GET /daily/{date}/{variant}/leaderboard``: ended attempts, ranked (attempts in play are left out).

        With ``name``: ``"entry"`` is that name's place (:meth:`server.daily_days.DailyDays.entry`), or None while
        it has no ended attempt that day; ``base_url`` is the server's public address, for the share line's link.
        """
        date, variant, record = await self.known_day(date_text, variant_text)
        _, total = await self.store.counts(date, variant)
        rows = await self.store.board(date, variant, offset, limit)
        entries = [board_row(rank, name, e) for rank, name, e in rows]
        final = self.revealed(date, record)
        result = {"date": date, "variant": variant, "total": total, "offset": offset, "limit": limit,
                  "final": final, "entries": entries}
        if name is not None:
            result["entry"] = await self.days.entry(date, variant, name, final, base_url)
        return result

    async def reveal(self, date_text: str, variant_text: str) -> dict[str, Any]:
        """``GET /daily/{date}/{variant}/reveal``: the seed once the day is over; 409 ``not_revealed`` before."""
        date, variant, record = await self.known_day(date_text, variant_text)
        if not self.revealed(date, record):
            raise DailyError(409, "not_revealed", f"the seed of {date} is revealed once the day is over (UTC) "
                                                  "and every attempt has ended")
        return {"date": date, "variant": variant, "seed": record.seed, "commitment": record.commitment,
                "attempt_index": record.attempt_index, "deal": record.deal}

    async def replay(self, date_text: str, variant_text: str, name: str) -> dict[str, Any]:
        """An ended attempt's game record (RULES.md section 10), once the day is revealed."""
        date, variant, record = await self.known_day(date_text, variant_text)
        if not self.revealed(date, record):
            raise DailyError(409, "not_revealed", "replays are public once the day is over")
        moves = await self.store.replay(date, variant, name)
        if moves is None:
            raise DailyError(404, "no_attempt", f"{name[:24]!r} has no ended attempt on {date}")
        return {"format": 1, "variant": variant, "autoplay": True, "undo": "safe", "deal": record.deal,
                "seed": record.seed, "moves": moves.moves, "times_ms": moves.times_ms}

    # ------------------------------------------------------------ background: prepare ahead, close days

    async def run(self) -> None:
        """Every second: today's and tomorrow's deals ready; ended days closed. Runs until cancelled."""
        while True:
            await self.close_days()  # first: a day's close (and reveal) never waits for a deal being prepared
            date = day_of(self.now_ms())
            for day in (date, next_day(date)):
                for variant in self.variants:
                    await self.deal_of_day(day, variant)
            await asyncio.sleep(1.0)

    async def close_unstarted(self, code: str, date: str) -> bool:
        """Close a daily match that never started (state ``closed``; its player, connected or resuming later,
        gets ``error`` ``closed``; its keys expire after the retention period); False when it had started."""
        return await self.matches.close_unstarted(code, f"the daily challenge of {date} is over: this attempt never "
                                                        "started")

    async def close_days(self) -> None:
        """Close ended days: attempts never started are closed and dropped, finished ones not on the board yet
        (finalized by a process running no daily challenge) are recorded; the day closes once none is open."""
        for date, variant in await self.store.days_ended(self.now_ms()):
            for name, code in (await self.store.open_attempts(date, variant)).items():
                state = await self.matches.attempt_state(code)
                if state is None or state is State.CLOSED:
                    await self.store.drop_open(date, variant, name)
                elif state is State.LOBBY and await self.close_unstarted(code, date):
                    await self.store.drop_open(date, variant, name)  # never got the deal: no entry
                elif state is State.FINISHED:  # finalized by a process without this service: no entry yet
                    for standing, commands in await self.matches.ended_attempt(code):
                        await self.record(code, (date, variant), standing, commands)
            if await self.store.close(date, variant, self.matches.store.retention_s):
                log.info("daily %s %s closed: the seed is revealed", date, variant)

    # ------------------------------------------------------------ live events

    async def watch(self, date: str, variant: str) -> Subscription:
        """An open subscription of the day's attempt events on the match service's hub (:meth:`Subscription.events
        <server.hub.Subscription.events>`: what the stream holds, then live; a queue of ``FTR_WATCHER_QUEUE``);
        close it when the watcher leaves. Raises :class:`DailyError` 503 ``too_many_watchers`` past
        ``FTR_MAX_WATCHERS`` spectators of the day in this process, and what redis-py raises."""
        limit = self.matches.settings.max_watchers
        subscription = self.matches.hub.subscribe(day_feed(date, variant), max_subscribers=limit)
        try:
            await subscription.open()
        except HubFull:
            raise DailyError(503, "too_many_watchers", f"this server already streams this day to {limit} "
                                                       "spectators: try again later") from None
        return subscription


__all__ = ["DailyError", "DailyService"]
