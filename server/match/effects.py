"""The one dispatcher of the lifecycle table: each :class:`~server.core.lifecycle.Effect` to the code that
carries it out, run in the order a row of :data:`~server.core.lifecycle.TRANSITIONS` lists them.

A part that decided a transition (:func:`~server.core.lifecycle.decide`) fills a
:class:`~server.match.step.Step` with what the row's effects need and calls :meth:`Effects.run`. The effect in :data:`~server.core.lifecycle.SCRIPTED` is the
row's store script, picked by ``Transition.script`` from :attr:`Effects.writes`; the effects after it run only
when the script wrote the change.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import cached_property
from typing import TYPE_CHECKING

import msgspec

from protocol import messages as m
from protocol.codec import decode_server, encode

from ..core.errors import ServiceError
from ..core.lifecycle import SCRIPTED, Effect, Event, State, TimerKind, Transition, decide, refusal
from ..core.player import Commit, CommitStatus, PlayerStatus, StuckWrite, new_game
from ..names import name_key
from ..store import REDIS_UNAVAILABLE, ClaimStatus, EndStatus, StuckStatus
from ..views import view_message
from .step import Step

if TYPE_CHECKING:
    from .context import MatchContext

log = logging.getLogger("forty_thieves.matches")


Handler = Callable[[Step], Awaitable[None]]
Write = Callable[[Step], Awaitable[bool]]


class Effects:
    """The dispatcher of one match service (see the module docstring)."""

    def __init__(self, service: MatchContext) -> None:
        self.service = service
        self.store = service.store

    async def run(self, step: Step) -> bool:
        """Carry out ``step.transition``'s effects in their order; returns whether its script wrote the change
        (False: the match moved on meanwhile, and the effects after the script did not run). Raises the
        :class:`~server.core.errors.ServiceError` a script's refusal is answered with, and what redis-py
        raises."""
        handlers, writes = self.handlers, self.writes
        for effect in step.transition.effects:
            if effect in SCRIPTED:
                if not await writes[step.transition.script](step):
                    return False
            else:
                await handlers[effect](step)
        return True

    async def close(self, code: str, message: str, keep_s: int) -> bool:
        """Close match ``code`` if it never started (event ``close``): its players hear ``error`` ``closed``
        with ``message``; its keys expire in ``keep_s`` seconds. False when it had started or is gone."""
        meta = await self.store.matches.meta(code)
        row = None if meta is None else decide(meta.state, Event.CLOSE)
        if not isinstance(row, Transition):
            return False
        return await self.run(Step(code, row, meta=meta, frame=encode(m.Error("closed", message)), keep_s=keep_s))

    @cached_property
    def handlers(self) -> dict[Effect, Handler]:
        """The code of each effect that is not a store script (the parts exist once the service is made)."""
        service = self.service
        return {
            Effect.PUBLISH_LOBBY: lambda step: service.public.publish_lobby(step.code),
            Effect.CHECK_START: lambda step: service.lobby.start_if_all_ready(step.code),
            Effect.ARM_START: self._arm_start,
            Effect.DAILY_STARTED: self._daily_started,
            Effect.PUBLISH_BOARDS: self._publish_boards,
            Effect.ARM_FINALIZE: self._arm_finalize,
            Effect.FINALIZE: lambda step: service.ending.finalize(step.code),
            Effect.DAILY_RECORD: self._daily_record,
            Effect.RECORD_HISTORY: self._record_history,
            Effect.KEEP_RESULTS: lambda step: self.store.matches.store_results(step.code, step.frame),
            Effect.EXPIRE: self._expire,
        }

    @cached_property
    def writes(self) -> dict[str, Write]:
        """The store call of each script a row names (``Transition.script``); True when it wrote the change."""
        return {
            "JOIN": self.service.lobby.take_seat,
            "READY": self.service.lobby.mark_ready,
            "TRANSITION": self._transition,
            "WINDOW_OVER": self._window_over,
            "CLOSE_MATCH": self._close,
            "START": self._start,
            "COMMIT": self._commit,
            "STUCK": self._stuck,
            "END_PLAYER": self._end_player,
            "CLAIM_NEXT": self._claim_next,
        }

    # ------------------------------------------------------------ effects around the scripts

    async def _arm_start(self, step: Step) -> None:
        # Before the transition: a process dying in between leaves a timer that finds the match still in its
        # lobby, never a countdown without a timer.
        plan = step.plan
        assert plan is not None
        await self.store.timers.add(step.code, TimerKind.START, plan.start_at_ms)
        if plan.deadline_ms:
            await self.store.timers.add(step.code, TimerKind.DEADLINE, plan.deadline_ms)
        if step.meta is not None and step.meta.bots:  # the bots' first turn comes with the deal
            await self.store.timers.add(step.code, TimerKind.BOT, plan.start_at_ms)

    async def _daily_started(self, step: Step) -> None:
        meta, daily, plan = step.meta, self.service.daily, step.plan
        assert meta is not None and plan is not None
        day = meta.day
        if day is None or daily is None:
            return
        foundation = new_game(meta.deal, meta.settings).position.foundation_cards
        for name in await self.store.players.roster(step.code):
            await daily.started(step.code, day, name, plan.start_at_ms, foundation)

    async def _publish_boards(self, step: Step) -> None:
        meta = step.meta
        assert meta is not None
        if not meta.settings.open_boards:
            return
        view = view_message(new_game(meta.deal, meta.settings).position)
        for name in await self.store.players.roster(step.code):
            board = m.Board(name, 0, step.foundation, PlayerStatus.PLAYING.value, 0, view)
            await self.store.streams.add_event(step.code, encode(board), kind="board")

    async def _arm_finalize(self, step: Step) -> None:
        # Only a write that may end a player's game: a play that did not win needs no timer.
        if step.ends or (isinstance(step.write, Commit) and step.write.ends):
            await self.service.ending.arm_finalize(step.code)

    async def _daily_record(self, step: Step) -> None:
        meta, daily = step.meta, self.service.daily
        assert meta is not None
        day = meta.day
        if day is None or daily is None:
            return
        for one in step.standings:
            await daily.record(step.code, day, one, await self.store.players.log(step.code, one.name))

    async def _record_history(self, step: Step) -> None:
        # Before the frame is kept: the results carry what the history answered (the same on a second run).
        meta = step.meta
        assert meta is not None
        results = decode_server(step.frame)
        assert isinstance(results, m.Results)
        finished_ms = step.fields.get("finished_ms") or self.service.clock.now_ms()
        history = self.service.profiles.history
        try:
            records, rivalries = await history.record_match(meta, results, finished_ms)
            # A daily attempt's player's streak, read after the day is recorded (so it counts) and as of the
            # attempt's day: a second finalize, even days later, answers the same figures.
            streak = (await history.streak(results.ranking[0].name, today=meta.day[0])
                      if meta.day is not None and results.ranking else None)
        except REDIS_UNAVAILABLE:
            raise  # the finalize is tried again (its timer), and a game recorded already answers the same
        except Exception:  # a bug of the history's must not keep the match from its results
            log.exception("recording the history of match %s failed", step.code)
            return
        if records or rivalries or streak is not None:
            step.frame = encode(msgspec.structs.replace(results, records=records, head_to_head=rivalries,
                                                        **(streak._asdict() if streak is not None else {})))

    async def _expire(self, step: Step) -> None:
        await self.store.timers.done(step.code, TimerKind.DEADLINE)
        await self.store.matches.expire(step.code)

    # ------------------------------------------------------------ the scripts

    async def _transition(self, step: Step) -> bool:
        row = step.transition
        return await self.store.matches.transition(step.code, row.source, row.target, step.frame, **step.fields)

    async def _window_over(self, step: Step) -> bool:
        assert step.meta is not None
        expected = step.meta.expected or []
        return await self.store.rounds.window_over(step.code, {name: name_key(name) for name in expected})

    async def _close(self, step: Step) -> bool:
        return await self.store.matches.close_unstarted(step.code, step.frame, step.keep_s)

    async def _start(self, step: Step) -> bool:
        return await self.store.matches.start(step.code, step.frame, step.foundation)

    async def _commit(self, step: Step) -> bool:
        session, write = step.session, step.write
        assert session is not None and isinstance(write, Commit)
        step.answer = result, _ = await self.store.commits.commit(
            step.code, session.name, session.epoch, write.seq, write.entry, write.record, write.ends,
            [encode(event) for event in write.events], [encode(board) for board in write.boards])
        return result is CommitStatus.OK

    async def _stuck(self, step: Step) -> bool:
        session, write = step.session, step.write
        assert session is not None and isinstance(write, StuckWrite)
        return await self.store.players.mark_stuck(step.code, session.name, session.epoch, write.seq,
                                                   encode(write.event)) is StuckStatus.OK

    async def _end_player(self, step: Step) -> bool:
        ok = True
        for end in step.ends:
            step.answer = status, _ = await self.store.players.end(step.code, end.name, end.status, end.time_ms,
                                                                   end.event)
            ok = status is EndStatus.OK
        # A player's own end stops when it was not written (it ended otherwise); the deadline's goes on to the
        # results whatever each end answered (a game that ended meanwhile was ended by its player).
        return ok or step.session is None

    async def _claim_next(self, step: Step) -> bool:
        session = step.session
        assert session is not None
        status, code, claimed, names = await self.store.rounds.claim_next(step.code, session.name, step.candidate,
                                                                          step.same_deal)
        if status is ClaimStatus.NOT_FINISHED or status is ClaimStatus.NO_MATCH:  # the lifecycle's refusal (any
            # state but finished alike)
            raise refusal(Event.REMATCH, None if status is ClaimStatus.NO_MATCH else State.PLAYING, step.code)
        if status is not ClaimStatus.OK:  # no_player: the player's record is gone
            raise ServiceError("not_joined", "you are not a player of this match: join or resume it first")
        step.answer = (code, claimed, names)
        return True
