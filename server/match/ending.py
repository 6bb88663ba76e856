"""The end of games and matches: the finalize timer armed before a game's end, the deadline, the results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol import messages as m
from protocol.codec import encode

from ..core.lifecycle import FINALIZE_GRACE_MS, Event, TimerKind, Transition, Wait, decide
from ..core.player import PlayerStatus
from ..core.ranking import Standing, rank
from ..store import PlayerRecord
from .step import GameEnd, Step

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
        """Set the ``finalize`` timer of match ``code`` before writing a command that may end a player's game
        (:attr:`~server.core.lifecycle.Effect.ARM_FINALIZE`), so that whichever process dies, the last game's
        end is followed by the results (:meth:`finalize_if_ended`). It cannot be one script with the commit:
        the timers are global keys, and on a Redis Cluster a script touches one slot."""
        await self.store.timers.add(code, TimerKind.FINALIZE, self.service.clock.now_ms() + FINALIZE_GRACE_MS)

    async def end_match(self, code: str) -> None:
        """Every player has ended: finalize now; the timer :meth:`arm_finalize` set is the safety net (under a
        lease it finalizes if this process fails or dies midway), then removed."""
        await self.finalize(code)
        await self.store.timers.done(code, TimerKind.FINALIZE)

    async def finalize_if_ended(self, code: str) -> bool:
        """Finalize a playing match none of whose players is still playing (whoever ended the last game, and
        whether or not its process lived to finalize); False (nothing done) while a game still plays."""
        meta = await self.store.matches.meta(code)
        if meta is None or decide(meta.state, Event.ALL_ENDED) is None:
            return True
        if any(p.status == PlayerStatus.PLAYING for p in await self.store.players.all(code)):
            return False
        await self.finalize(code)
        return True

    async def finalize(self, code: str) -> None:
        """Every player has ended: rank, reveal the seed, publish the results (once). A daily attempt goes on
        the day's leaderboard first (:meth:`server.match.daily_link.DailyHooks.record`); the places of the
        match's bots are given back (``FTR_MAX_BOTS``)."""
        meta = await self.store.matches.meta(code)
        row = None if meta is None else decide(meta.state, Event.ALL_ENDED)
        if meta is None or not isinstance(row, Transition):
            return
        standings = [standing(p) for p in await self.store.players.all(code)]
        rows = [m.ResultRow(r, s.name, s.status, s.time_ms, s.moves, s.undos, s.hints, s.foundation,
                            meta.bot(s.name) is not None)
                for r, s in rank(standings)]
        frame = encode(m.Results(code, rows, meta.seed, meta.commitment, meta.nonce))
        if meta.bots:  # every game has ended: the bots' places are free before anyone hears the results
            await self.store.bots.free(code, len(meta.bots))
        await self.service.effects.run(Step(code, row, meta=meta, frame=frame, standings=standings,
                                            fields={"finished_ms": self.service.clock.now_ms()}))

    async def deadline(self, code: str, now_ms: int) -> Wait | None:
        """The time limit is over: every game still playing ends as ``timeout``, then the results. A
        :class:`~server.core.lifecycle.Wait` (nothing done) while the match is still in its countdown: its
        start timer has not run yet."""
        meta = await self.store.matches.meta(code)
        row = decide(None if meta is None else meta.state, Event.DEADLINE, now_ms)
        if not isinstance(row, Transition):
            return row
        assert meta is not None
        limit_ms = meta.deadline_ms - meta.start_at_ms
        timeout = PlayerStatus.TIMEOUT
        ends = [GameEnd(p.name, timeout, limit_ms, encode(m.Finished(p.name, timeout.value, limit_ms, p.moves,
                                                                     p.foundation)))
                for p in await self.store.players.all(code) if p.status == PlayerStatus.PLAYING]
        await self.service.effects.run(Step(code, row, meta=meta, ends=ends))
        return None
