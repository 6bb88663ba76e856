"""Bots: players of a match that the server plays, through the same validation and commit path as a person's.

A bot joins its match at creation (:meth:`server.match.creation.Creation.seat_bots`), ready at once, its
token thrown away: no client can speak for it. Once the match plays, each of its commands is the player-view
planner's choice (:func:`server.engine.planner.plan` at the bot's level, from the bot's own views only: it
cannot learn the stock's order nor a face-down card) and is played by :meth:`Playing.play
<server.match.playing.Playing.play>` on a server-side :class:`BotSession` whose frames go nowhere, under the
same clock, deadline, dead-game checks and commit scripts as a person's command.

The bots of a match are driven by its ``bot`` timer (:class:`~server.core.lifecycle.TimerKind`), set for the
start when the countdown begins: leased like every timer, so any process plays the next command and the bots
go on when a process dies. Each firing is one :meth:`Bots.turn`: for a few seconds (:data:`TURN_MS`) each
bot's commands are decided and played as they come due, each bot at its own pace, then the timer is set for
the next due one. A bot's next instant comes from its move log in Redis and its seeded pace
(:func:`server.core.bots.pause_ms`), so whichever process plays it keeps the same pace. The planner thinks in the last part of the pause (at most the level's time per decision), in the
solver's worker processes through the bounded solver queue (owner ``bot:CODE``); a decision whose worker did
not come in time is tried again :data:`RETRY_MS` later (a bot under load plays slower, never weaker). With no
solver workers (``FTR_SOLVER_WORKERS=0``) every level plays the one-look hint (cheap: the hint's fallback).
A planner that finds nothing to play (every command leads back to a position seen) resigns the bot.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..bots import decide_bot
from ..core.bots import pause_kind, pause_ms
from ..core.errors import ServiceError
from ..core.lifecycle import LOBBY_STATES, State, TimerKind
from ..core.player import PlayerStatus
from ..engine import Game
from ..engine.planner import LEVELS, Level, find_level, plan
from ..hints import seen_views
from ..scheduler import MIN_START_S, DeadlinePassed, QueueFull
from ..store import BotSeat, MatchMeta
from .session import Session

if TYPE_CHECKING:
    from .context import MatchContext

log = logging.getLogger("forty_thieves.bots")

RETRY_MS = 500
"""Ms after which a decision that could not run (no worker free in time, the queue full) is tried again."""

COUNTDOWN_RETRY_MS = 200
"""Ms after which a turn that found the countdown over but the match not playing yet looks again."""

NEAR_MS = 250
"""A bot whose next command is due within this many ms waits for it in this turn (no timer round trip)."""

TURN_MS = 3000
"""How long one turn goes on starting each bot's commands as they come due: a bot is not held up by another
that thinks longer in the same turn, and the turn still ends within the timer's lease (10 s): a command
started last may wait for a worker and think 2 s each (a strong bot), and the lease is never renewed."""

FAILED_RETRY_MS = 1000
"""Ms after which a bot whose command failed unexpectedly (Redis lost ...) is tried again."""

THINK_SHARE = 0.8
"""The share of a pause the planner may think in (at most the level's time per decision)."""

MAX_SESSIONS = 3000
"""Bots' sessions kept between turns at most (a turn rebuilds a session it does not find from Redis)."""

LOOK = Level("look", 0, 0, 0.0)
"""The one-look hint as a level: what every bot plays with no solver workers."""


def level_list() -> list[dict[str, str]]:
    """``GET /bots``: each planner level, weakest first, as ``{"level", "label", "about"}``."""
    return [{"level": level.name, "label": level.name.capitalize(), "about": level.description} for level in LEVELS]


class BotSession(Session):
    """A bot's connection in the server: a :class:`~server.match.session.Session` whose frames go nowhere."""

    def push(self, frame: bytes) -> bool:
        """Drop ``frame``: no one reads a bot's replies (its commands' outcomes are in its session's game)."""
        return True


@dataclass(frozen=True, slots=True)
class Due:
    """A bot's next command: number ``seq``, seeded by ``key``; thought of from ``think_from_ms`` for
    ``think_s`` seconds, played at ``play_at_ms`` (epoch ms), after its pause from the command before."""

    seq: int
    key: str
    think_from_ms: int
    think_s: float
    play_at_ms: int


def next_command(session: Session, bot: BotSeat, start_at_ms: int) -> Due | None:
    """When bot ``bot`` (its game in ``session``; the match started at ``start_at_ms``) plays its next
    command, from its move log and its seeded pace (:func:`server.core.bots.pause_ms`); ``None`` once its
    game has ended."""
    player = session.player
    if player is None or player.status != PlayerStatus.PLAYING:
        return None
    seq = player.last_seq + 1
    key = f"{session.code}/{bot.name}/{seq}"
    last_ms = player.commands[-1][1] if len(player.commands) else 0
    pause = pause_ms(key, bot.moves_per_min, pause_kind(player.game))
    play_at = start_at_ms + last_ms + pause
    think_s = min(find_level(bot.level).seconds, pause * THINK_SHARE / 1000)
    return Due(seq, key, play_at - int(think_s * 1000), think_s, play_at)


async def _sleep_until(now_ms: int, at_ms: int) -> None:
    if at_ms > now_ms:
        await asyncio.sleep((at_ms - now_ms) / 1000)


class _Defer:
    """The decision could not run now: the turn comes again :data:`RETRY_MS` later."""


DEFER = _Defer()
"""What :meth:`Bots._decide` answers when the decision could not run now."""


class Bots:
    """The bots of every match this process plays a turn of (see the module docstring)."""

    def __init__(self, service: MatchContext) -> None:
        self.service = service
        self.store = service.store
        self.sessions: dict[tuple[str, str], BotSession] = {}
        """The bots' sessions, kept between turns (a dead-game check follows the game it checks); checked
        against Redis each turn, since another process may have played a command meanwhile."""

    async def turn(self, code: str) -> int | None:
        """One firing of match ``code``'s ``bot`` timer: every bot whose command is due plays it. Returns the
        instant (ms) the timer is due again, or ``None`` when no bot of the match plays any more (its places
        among ``FTR_MAX_BOTS`` are then given back)."""
        meta = await self.store.matches.meta(code)
        now = self.service.clock.now_ms()
        if meta is not None and meta.state is State.COUNTDOWN:
            return meta.start_at_ms if now < meta.start_at_ms else now + COUNTDOWN_RETRY_MS
        if meta is not None and meta.state in LOBBY_STATES:
            return None  # a countdown that was not written after its timers: the next one sets this timer again
        if meta is None or meta.state is not State.PLAYING or not meta.bots:
            await self._done(code, meta)
            return None
        if not await self._people_playing(code, meta):
            await self._stop(code, meta)
            return None
        until = now + TURN_MS
        dues = await asyncio.gather(*(self._moves(code, meta, bot, until) for bot in meta.bots),
                                    return_exceptions=True)
        pending = []
        for bot, due in zip(meta.bots, dues, strict=True):
            if isinstance(due, asyncio.CancelledError):
                raise due
            if isinstance(due, BaseException):  # this bot alone waits: the others' commands stand
                log.error("a command of bot %s of %s failed", bot.name, code, exc_info=due)
                pending.append(self.service.clock.now_ms() + FAILED_RETRY_MS)
            elif due is not None:
                pending.append(due)
        if not pending:
            await self._done(code, meta)
            return None
        return min(pending)

    async def _people_playing(self, code: str, meta: MatchMeta) -> bool:
        """Whether a person (a player of match ``code`` who is no bot) still plays: a game stuck with an undo
        left, or of a person away, still plays."""
        bots = {bot.name for bot in meta.bots}
        return any(p.status == PlayerStatus.PLAYING and p.name not in bots for p in await self.store.players.all(code))

    async def _stop(self, code: str, meta: MatchMeta) -> None:
        """Every person's game has ended: each bot still playing resigns now, through the same path as a
        person's resign, so the results come at once rather than after the bots' games (hours at 1 move a
        minute, untimed), and the bots' places and worker time are given back."""
        for bot in meta.bots:
            session = await self._session(code, meta, bot.name)
            if session is None or session.status != PlayerStatus.PLAYING:
                continue
            try:
                await self.service.playing.resign(session)
            except ServiceError as error:  # ended meanwhile (the deadline), or Redis failed: the deadline ends it
                log.info("bot %s of %s could not resign: %s", bot.name, code, error.message)
        await self._done(code, meta)

    async def stop(self, code: str) -> None:
        """Every bot of match ``code`` still playing resigns now (a ``restart`` of the game of its one person:
        the next round needs this one's results)."""
        meta = await self.store.matches.meta(code)
        if meta is not None and meta.bots and meta.state is State.PLAYING:
            await self._stop(code, meta)

    async def people_ended(self, code: str) -> None:
        """A person's game in match ``code`` ended while others play: when only bots play on, their timer is
        due now (:meth:`turn` resigns them), not at their next command (a minute away at 1 move a minute)."""
        meta = await self.store.matches.meta(code)
        if meta is not None and meta.bots and not await self._people_playing(code, meta):
            await self.store.timers.add(code, TimerKind.BOT, self.service.clock.now_ms())

    async def _done(self, code: str, meta: MatchMeta | None) -> None:
        """No bot of match ``code`` plays any more: forget their sessions, give back their places."""
        for key in [key for key in self.sessions if key[0] == code]:
            del self.sessions[key]
        if meta is not None and meta.bots:
            await self.store.bots.free(code, len(meta.bots))

    async def _session(self, code: str, meta: MatchMeta, name: str) -> BotSession | None:
        """Bot ``name``'s session, its game as Redis holds it; ``None`` when Redis has no such player."""
        record = await self.store.players.get(code, name)
        if record is None:
            return None
        session = self.sessions.get((code, name))
        if (session is None or session.unsure or (session.last_seq, session.epoch) != (record.seq, record.epoch)
                or session.status != record.status):  # another process played it, or its game ended meanwhile
            if len(self.sessions) >= MAX_SESSIONS:  # those of matches another process finished: rebuilt if needed
                self.sessions.clear()
            session = BotSession(code=code, name=name, epoch=record.epoch)
            await self.service.playing.open_game(session, meta)
            self.sessions[(code, name)] = session
        return session

    async def _moves(self, code: str, meta: MatchMeta, bot: BotSeat, until_ms: int) -> int | None:
        """Bot ``bot``'s commands that come due before ``until_ms`` (:meth:`_move` each): the instant its turn
        comes again, ``None`` once its game ended. Each bot goes on at its own pace while the turn lasts, so a
        fast bot never waits for a slower one's thinking (the turn's end is the last of them)."""
        while True:
            due = await self._move(code, meta, bot)
            if due is None or due > until_ms:
                return due
            await _sleep_until(self.service.clock.now_ms(), due - NEAR_MS)

    async def _move(self, code: str, meta: MatchMeta, bot: BotSeat) -> int | None:
        """Bot ``bot``'s next command if it is due (within :data:`NEAR_MS`): the instant its turn comes again,
        ``None`` once its game ended."""
        session = await self._session(code, meta, bot.name)
        if session is None:
            return None
        clock = self.service.clock
        due = next_command(session, bot, meta.start_at_ms)
        if due is None or due.think_from_ms > clock.now_ms() + NEAR_MS:
            return None if due is None else due.think_from_ms
        await _sleep_until(clock.now_ms(), due.think_from_ms)
        assert session.player is not None
        command = await self._decide(code, bot, session.player.game, due.key, due.think_s)
        if command is DEFER:
            return clock.now_ms() + RETRY_MS
        await _sleep_until(clock.now_ms(), due.play_at_ms)  # thought faster than the pace: the command waits
        try:
            if command is None:
                log.info("bot %s of %s finds nothing to play: it resigns", bot.name, code)
                await self.service.playing.resign(session)
            else:
                await self.service.playing.play(session, due.seq, str(command))
        except ServiceError as error:  # the time limit is over, the game ended meanwhile, Redis failed ...
            log.info("bot %s of %s could not play %s: %s", bot.name, code, command, error.message)
            return clock.now_ms() + RETRY_MS
        if session.last_seq < due.seq and not session.unsure:  # refused: a planner's bug, not to be repeated
            log.warning("bot %s of %s had %s refused: it resigns", bot.name, code, command)
            await self.service.playing.resign(session)
        after = next_command(session, bot, meta.start_at_ms)
        return None if after is None else after.think_from_ms

    async def _decide(self, code: str, bot: BotSeat, game: Game, key: str, think_s: float) -> str | None | _Defer:
        """The planner's command for ``game`` (a bot's, never changed here) at ``bot``'s level, seeded by
        ``key``: in a solver worker within ``think_s`` seconds (its wait included, at least twice
        :data:`~server.scheduler.MIN_START_S`), or :data:`DEFER` when it could not run; ``None``: nothing
        to play."""
        solver = self.service.solver
        seen = seen_views(game)
        if solver.executor is None:  # no workers: the one-look hint, as a hint's fallback is
            return plan(seen[-1], game.variant, seen=seen, level=LOOK, seed=key, autoplay_on=game.autoplay).command
        settings = self.service.settings
        args: tuple[Any, ...] = (seen[-1], game.variant.name, seen, bot.level, key, game.autoplay, settings.pure_solver,
                                 think_s)
        with self.service.metrics.solver_job("bot") as timing:
            try:
                command = await solver.run(f"bot:{code}", decide_bot, *args,
                                           within_s=max(think_s, 2 * MIN_START_S))
            except (DeadlinePassed, QueueFull, BrokenProcessPool, RuntimeError) as error:
                timing.result = None
                log.info("bot %s of %s waits: the planner could not run (%s)", bot.name, code, error)
                return DEFER
            timing.result = "found" if command else "none"
        return command


__all__ = ["COUNTDOWN_RETRY_MS", "DEFER", "FAILED_RETRY_MS", "LOOK", "MAX_SESSIONS", "NEAR_MS", "RETRY_MS",
           "THINK_SHARE", "TURN_MS", "BotSession", "Bots", "Due", "level_list", "next_command"]
