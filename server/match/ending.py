"""The end of games and matches: the finalize timer armed before a game's end, the deadline, the results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol import messages as m
from protocol.codec import encode

from ..core.lifecycle import FINALIZE_GRACE_MS, Event, State, TimerKind, Transition, Wait, decide, state_of
from ..core.ranking import Standing, rank
from ..store import PlayerRecord

if TYPE_CHECKING:
    from .context import MatchContext


def standing(record: PlayerRecord) -> Standing:
    """A player's end of game as the ranking reads it."""
    return Standing(record.name, record.status, record.time_ms, record.moves, record.undos, record.hints,
                    record.foundation, record.last_found_ms)


class Ending:
    """How games and matches end (see the module docstring)."""

    def __init__(self, service: MatchContext) -> None:
        self.service = service
        self.store = service.store

    async def arm_finalize(self, code: str) -> None:
        """Set the ``finalize`` timer before writing a command that may end a player's game.

        Written before the commit, not after it: whenever a process dies, once every player has ended
        there is a timer that makes any process finalize (:meth:`finalize_if_ended`), well before the
        deadline. A timer that finds a game still playing is dropped, and the next game's end sets it again.
        (The timer set and the commit cannot be one script: the timers are global keys, a match's keys
        share its hash tag, and on a Redis Cluster every script touches one slot.)
        """
        await self.store.add_timer(code, TimerKind.FINALIZE, self.service.clock.now_ms() + FINALIZE_GRACE_MS)

    async def end_match(self, code: str) -> None:
        """Every player has ended: finalize now; the timer :meth:`arm_finalize` set is the safety net (under a
        lease it finalizes if this process fails or dies midway), then removed."""
        await self.finalize(code)
        await self.store.done_timer(code, TimerKind.FINALIZE)

    async def finalize_if_ended(self, code: str) -> bool:
        """Finalize a playing match none of whose players is still playing (whoever ended the last game, and
        whether or not its process lived to finalize); False (nothing done) while a game still plays."""
        meta = await self.store.meta(code)
        if meta is None or decide(state_of(meta.state), Event.ALL_ENDED) is None:
            return True
        if any(p.status == "playing" for p in await self.store.players(code)):
            return False
        await self.finalize(code)
        return True

    async def finalize(self, code: str) -> None:
        """Every player has ended: rank, reveal the seed, publish the results (once). A daily attempt goes on
        the day's leaderboard first (:meth:`server.match.daily_link.DailyHooks.record`)."""
        meta = await self.store.meta(code)
        if meta is None or decide(state_of(meta.state), Event.ALL_ENDED) is None:
            return
        standings = [standing(p) for p in await self.store.players(code)]
        day, daily = meta.day, self.service.daily
        if day is not None and daily is not None:
            for one in standings:
                await daily.record(code, day, one, await self.store.log(code, one.name))
        rows = [m.ResultRow(r, s.name, s.status, s.time_ms, s.moves, s.undos, s.hints, s.foundation)
                for r, s in rank(standings)]
        frame = encode(m.Results(code, rows, meta.seed, meta.commitment, meta.nonce))
        await self.store.store_results(code, frame)
        if await self.store.transition(code, State.PLAYING, State.FINISHED, frame,
                                       finished_ms=self.service.clock.now_ms()):
            await self.store.done_timer(code, TimerKind.DEADLINE)
            await self.store.expire_match(code)

    async def deadline(self, code: str, now_ms: int) -> Wait | None:
        """The time limit is over: every game still playing ends as ``timeout``, then the results. A
        :class:`~server.core.lifecycle.Wait` (nothing done) while the match is still in its countdown: its
        start timer has not run yet."""
        meta = await self.store.meta(code)
        step = decide(None if meta is None else State(meta.state), Event.DEADLINE, now_ms)
        if not isinstance(step, Transition):
            return step
        assert meta is not None
        limit_ms = meta.deadline_ms - meta.start_at_ms
        for record in await self.store.players(code):
            if record.status == "playing":
                frame = encode(m.Finished(record.name, "timeout", limit_ms, record.moves, record.foundation))
                await self.store.end_player(code, record.name, "timeout", limit_ms, frame)
        await self.finalize(code)  # every game has ended now, whoever ended it
        return None
