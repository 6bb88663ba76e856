"""The lifecycle table drives the match service: every transition the service carries out runs the effects of
its row of :data:`server.core.lifecycle.TRANSITIONS`, in the row's order, with the row's store script changing the
state in Redis from the row's source to its target at the one scripted effect.

A real match service in this process over a real Redis, its timers fired by hand (no background loops, so nothing
runs between the steps). The dispatcher's effects and scripts are wrapped to record what ran and what Redis held
just before and after each script; the I/O effects are checked in Redis as they run (the start timer set while the
match is still in its lobby, the results kept while it still plays, the keys expiring once it finished)."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import msgspec
import pytest
import redis.asyncio as aioredis

from server.core.lifecycle import SCRIPTED, TRANSITIONS, Effect, Event, State, TimerKind, Transition
from server.match.creation import CreateMatch
from server.match.step import Step
from server.matches import MatchService, Session
from server.settings import Settings
from server.store import Store
from server.store.keys import TIMERS, meta_key, timer_member

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

DB = 11

Run = tuple[Transition, list[Effect], bool]


class Recorder:
    """Wraps a service's dispatcher: each run's row, the effects seen in order, whether its script wrote; and for
    each script, the state Redis held before and after it."""

    def __init__(self, service: MatchService, client: aioredis.Redis) -> None:
        self.service, self.client = service, client
        self.runs: list[Run] = []
        self.states: list[tuple[Transition, State | None, State | None]] = []
        self.problems: list[str] = []
        self._seen: contextvars.ContextVar[list[Effect]] = contextvars.ContextVar("seen")
        effects = service.effects
        run = effects.run

        async def recorded_run(step: Step) -> bool:
            seen: list[Effect] = []
            token = self._seen.set(seen)
            try:
                wrote = await run(step)
            finally:
                self._seen.reset(token)
            self.runs.append((step.transition, seen, wrote))
            return wrote

        effects.run = recorded_run  # type: ignore[method-assign]
        for effect, handler in list(effects.handlers.items()):
            effects.handlers[effect] = self._handler(effect, handler)
        for script, write in list(effects.writes.items()):
            effects.writes[script] = self._write(write)

    async def state(self, code: str) -> State | None:
        meta = await self.service.store.matches.meta(code)
        return None if meta is None else meta.state

    def _handler(self, effect: Effect, handler: Any) -> Any:
        async def recorded(step: Step) -> None:
            self._seen.get().append(effect)
            await handler(step)
            await self._check(effect, step)
        return recorded

    def _write(self, write: Any) -> Any:
        async def recorded(step: Step) -> bool:
            (scripted,) = [e for e in step.transition.effects if e in SCRIPTED]
            self._seen.get().append(scripted)
            before = await self.state(step.code)
            wrote = await write(step)
            if wrote:
                self.states.append((step.transition, before, await self.state(step.code)))
            return bool(wrote)
        return recorded

    async def _check(self, effect: Effect, step: Step) -> None:
        """What Redis holds once an I/O effect has run, against what the effect says it does."""
        code, state = step.code, await self.state(step.code)
        if effect is Effect.ARM_START:
            due = await self.client.zscore(TIMERS, timer_member(code, TimerKind.START))
            if state is not State.LOBBY or step.plan is None or due != step.plan.start_at_ms:
                self.problems.append(f"ARM_START of {code}: state {state}, start timer {due}")
        elif effect is Effect.KEEP_RESULTS:
            if state is not State.PLAYING or await self.service.store.matches.results(code) != step.frame:
                self.problems.append(f"KEEP_RESULTS of {code}: state {state}")
        elif effect is Effect.EXPIRE:
            if state is not State.FINISHED or await self.client.ttl(meta_key(code)) <= 0:
                self.problems.append(f"EXPIRE of {code}: state {state}")
        elif effect is Effect.ARM_FINALIZE:
            due = await self.client.zscore(TIMERS, timer_member(code, TimerKind.FINALIZE))
            ends = bool(step.ends) or bool(getattr(step.write, "ends", False))
            if (due is not None) != ends:
                self.problems.append(f"ARM_FINALIZE of {code}: timer {due}, ends {ends}")
            await self.client.zrem(TIMERS, timer_member(code, TimerKind.FINALIZE))  # seen: the next one starts clean


async def scenario(redis_url: str) -> Recorder:
    client = aioredis.Redis.from_url(redis_url.rsplit("/", 1)[0] + f"/{DB}")
    await client.flushdb()
    service = MatchService(Store(client, 3600), Settings(countdown_s=0.0, rematch_window_s=30.0), None)
    recorder = Recorder(service, client)
    store, timers = service.store, service.timers

    async def fire(code: str, kind: TimerKind) -> None:
        now = service.clock.now_ms()
        meta = await store.matches.meta(code)
        assert meta is not None
        kept = {TimerKind.START: meta.start_at_ms, TimerKind.DEADLINE: meta.deadline_ms}.get(kind, now)
        await timers.fire(code, kind, max(now, kept))

    async def joined(code: str, name: str) -> Session:
        session = Session()
        await service.lobby.join(session, code, name)
        return session

    try:
        # A race to its results: joins, readies, the start check, the start, plays, a stuck mark, resigns.
        race = (await service.creation.create(CreateMatch(seed="7", solvable_only=False, undo="full")))["code"]
        ann, bob = await joined(race, "ann"), await joined(race, "bob")
        await service.lobby.ready(ann)
        await service.lobby.ready(bob)  # all ready: the countdown
        await fire(race, TimerKind.START)
        assert await recorder.state(race) is State.PLAYING
        meta = await store.matches.meta(race)
        assert meta is not None
        for session in (ann, bob):  # what each process does on the start event (no stream reader runs here)
            await service.playing.open_game(session, meta)
        assert ann.player is not None
        first = str(ann.player.game.legal_moves()[0].command)
        await service.playing.play(ann, 1, first)
        assert ann.player is not None
        await service.playing.end_dead(ann, ann.player.game, ann.player.game.moves)  # an undo left: stuck
        await service.playing.resign(ann, 2)
        assert bob.player is not None
        await service.playing.end_dead(bob, bob.player.game, 0)  # nothing to undo: the game ends, the match too
        assert await recorder.state(race) is State.FINISHED
        # The rematch, its window's end with one player in and ready: the start check starts it.
        await service.rounds.rematch(ann)
        round_2 = ann.next_round
        await fire(round_2, TimerKind.WINDOW)
        assert await recorder.state(round_2) is State.COUNTDOWN

        # A solvable-only race's next round waits for its deal from the (empty) pool when its window ends.
        await store.pool.push("classic", msgspec.msgpack.encode(["10", []]))
        pooled = (await service.creation.create(CreateMatch(variant="classic", solvable_only=True)))["code"]
        eve, fay = await joined(pooled, "eve"), await joined(pooled, "fay")
        await service.lobby.ready(eve)
        await service.lobby.ready(fay)
        await fire(pooled, TimerKind.START)
        meta = await store.matches.meta(pooled)
        assert meta is not None
        for session in (eve, fay):
            await service.playing.open_game(session, meta)
            await service.playing.resign(session, 1)
        await service.rounds.rematch(eve)
        assert await recorder.state(eve.next_round) is State.PREPARING
        await fire(eve.next_round, TimerKind.WINDOW)

        # The host's start and the deadline.
        created = await service.creation.create(CreateMatch(seed="8", solvable_only=False, players=3, time_limit_s=60))
        timed = created["code"]
        cleo = await joined(timed, "cleo")
        await service.lobby.host_start(cleo, created["host_token"])
        await fire(timed, TimerKind.START)
        await fire(timed, TimerKind.DEADLINE)
        assert await recorder.state(timed) is State.FINISHED

        # A match whose deal is awaited: a join and a ready while it prepares, its deal, its lobby closed.
        waiting = (await service.creation.create(CreateMatch(variant="classic", solvable_only=True)))["code"]
        assert await recorder.state(waiting) is State.PREPARING
        dan = await joined(waiting, "dan")
        await service.lobby.ready(dan)
        await store.pool.push("classic", msgspec.msgpack.encode(["9", []]))
        await fire(waiting, TimerKind.PREPARE)
        assert await recorder.state(waiting) is State.LOBBY
        await fire(waiting, TimerKind.CLOSE)
        unprepared = (await service.creation.create(CreateMatch(variant="classic", solvable_only=True)))["code"]
        await fire(unprepared, TimerKind.CLOSE)
        assert {await recorder.state(waiting), await recorder.state(unprepared)} == {State.CLOSED}
        # An event that finds its match moved on runs nothing.
        before = len(recorder.runs)
        assert not await service.effects.close(waiting, "closed again", 60)
        assert len(recorder.runs) == before
    finally:
        await service.stop_background()
        await client.flushdb()
        await client.aclose()
    return recorder


def test_every_transition_runs_its_rows_effects_in_order_with_its_script_at_the_scripted_one(redis_url: str) -> None:
    recorder = asyncio.run(scenario(redis_url))
    assert recorder.problems == []
    # One handler for each effect that is not a script, one store call for each script a row names.
    effects = recorder.service.effects
    assert set(effects.handlers) == set(Effect) - SCRIPTED
    assert set(effects.writes) == {t.script for t in TRANSITIONS}
    # Every row of the table was carried out, and only through the dispatcher's rows.
    assert {(t.source, t.event) for t, _, wrote in recorder.runs if wrote} == {(t.source, t.event) for t in TRANSITIONS}
    for row, seen, wrote in recorder.runs:
        if wrote:
            assert seen == list(row.effects), row
        else:  # the script found the match moved on: nothing after it ran
            (scripted,) = [e for e in row.effects if e in SCRIPTED]
            assert seen == list(row.effects[: row.effects.index(scripted) + 1]), row
    for row, before, after in recorder.states:
        assert (before, after) == (row.source, row.target), row
    # ann's play and resign, eve's and fay's resigns: each armed the finalize timer only if it ended the game
    # (checked in Redis as it ran).
    commits = [seen for row, seen, wrote in recorder.runs if row.event is Event.COMMIT and wrote]
    assert commits == [[Effect.ARM_FINALIZE, Effect.PUBLISH_PROGRESS]] * 4
