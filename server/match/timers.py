"""The timers of matches: one leased loop over the due timers, a handler per kind.

A timer is ``(code, kind)`` in the sorted set of timers, due at its score in ms on the shared clock. Any process
may run a due timer under the timer's lease, so one process runs it at a time and another takes over when that
one dies. The kind's handler says whether the timer is then removed or set again for later
(a :class:`~server.core.lifecycle.Wait`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from enum import Enum
from typing import TYPE_CHECKING

from protocol.codec import encode

from ..core.lifecycle import (
    PREPARE_RETRY_MS,
    TIMER_INSTANTS,
    Event,
    TimerKind,
    Transition,
    Wait,
    decide,
    fired_early,
    start_event,
)
from ..core.player import new_game
from ..store.keys import timer_lease
from .step import Step

if TYPE_CHECKING:
    from .context import MatchContext

log = logging.getLogger("forty_thieves.matches")

LEASE_MS = 10_000
"""How long a process holds a timer it runs before another may take it over (ms)."""

CLOSED_KEEP_S = 600
"""Seconds the keys of a match closed unstarted are kept (its players, resuming, hear why)."""


class Keep(Enum):
    """A handler's answer: the timer is done, or kept when it was set again for later meanwhile."""

    DONE = "done"
    IF_RESET = "if_reset"
    """Remove the timer only if it is still due (a game's end may just have set it again, for later)."""
    OWNED = "owned"
    """A task the handler started holds the timer's lease and sets the timer again when it is done."""


Outcome = Keep | Wait
Handler = Callable[[str, int], Awaitable[Outcome]]


class Timers:
    """The timer loop of one process (see the module docstring)."""

    def __init__(self, service: MatchContext) -> None:
        self.service = service
        self.store = service.store
        self.handlers: dict[str, Handler] = {
            TimerKind.PREPARE: self._prepare, TimerKind.START: self._start, TimerKind.DEADLINE: self._deadline,
            TimerKind.FINALIZE: self._finalize, TimerKind.WINDOW: self._window, TimerKind.CLOSE: self._close,
            TimerKind.BOT: self._bot,
        }

    async def run(self) -> None:
        """Run due timers for ever: each under its lease, then sleep until the next is due (at most 0.1 s)."""
        clock = self.service.clock
        while True:
            now = clock.now_ms()
            for code, kind in await self.store.timers.due(now):
                await self.fire(code, kind, now)
            due = await self.store.timers.next_ms()
            wait = 0.1 if due is None else min(0.1, max(0.0, (due - clock.now_ms()) / 1000))
            await asyncio.sleep(wait)

    async def fire(self, code: str, kind: str, now: int) -> None:
        """Run timer ``kind`` of match ``code``, due at or before ``now``, if this process gets its lease."""
        lease = timer_lease(code, kind)
        if not await self.store.timers.lease(lease, self.service.process_id, LEASE_MS):
            return
        if await self._early(code, kind, now):
            return
        handler = self.handlers.get(kind)
        outcome = Keep.DONE if handler is None else await handler(code, now)
        if isinstance(outcome, Wait):
            await self.store.timers.add(code, kind, outcome.at_ms)
            await self.store.timers.release(lease)
        elif outcome is Keep.IF_RESET:
            await self.store.timers.done_if_due(code, kind, now)
        elif outcome is Keep.OWNED:
            return
        else:
            await self.store.timers.done(code, kind)

    async def _early(self, code: str, kind: str, now: int) -> bool:
        """True (and the timer set again to the kept instant) when a ``start`` or ``deadline`` timer fired
        before the instant the match keeps (a concurrent countdown's timer overwrote it)."""
        if kind not in TIMER_INSTANTS:
            return False
        meta = await self.store.matches.meta(code)
        kept = 0 if meta is None else meta.start_at_ms if kind == TimerKind.START else meta.deadline_ms
        if not fired_early(TimerKind(kind), now, kept):
            return False
        await self.store.timers.add(code, kind, kept)
        await self.store.timers.release(timer_lease(code, kind))
        return True

    # ------------------------------------------------------------ a handler per kind

    async def _prepare(self, code: str, now: int) -> Outcome:
        """A preparing match's deal from the pool; tried again while the pool is empty."""
        if await self.service.creation.prepare(code):
            return Keep.DONE
        return Wait(now + PREPARE_RETRY_MS)

    async def _start(self, code: str, now: int) -> Outcome:
        """The countdown is over: the match plays (``START``: every player ``playing``, the start event), and
        an open-boards match shows spectators every board's redacted deal."""
        meta = await self.store.matches.meta(code)
        row = None if meta is None else decide(meta.state, Event.START)
        if meta is None or not isinstance(row, Transition):
            return Keep.DONE
        found = new_game(meta.deal, meta.settings).position.foundation_cards
        await self.service.effects.run(Step(code, row, meta=meta, frame=encode(start_event(code, meta.settings)),
                                            foundation=found))
        return Keep.DONE

    async def _deadline(self, code: str, now: int) -> Outcome:
        """The time limit (:meth:`server.match.ending.Ending.deadline`); again soon while still counting down
        (the start timer is due too and runs elsewhere), or the deadline would be lost."""
        return await self.service.ending.deadline(code, now) or Keep.DONE

    async def _finalize(self, code: str, now: int) -> Outcome:
        """The safety net of a game's end: the results, once no game plays (a game still playing sets this
        timer again at its own end)."""
        return Keep.DONE if await self.service.ending.finalize_if_ended(code) else Keep.IF_RESET

    async def _window(self, code: str, now: int) -> Outcome:
        """A round's rematch window is over (:meth:`server.match.rounds.Rounds.window_over`)."""
        await self.service.rounds.window_over(code)
        return Keep.DONE

    async def _close(self, code: str, now: int) -> Outcome:
        """The lobby timed out: a match that never started is closed (``CLOSE``); its players hear why, and
        its bots' places are given back."""
        timeout = self.service.settings.lobby_timeout_s
        if await self.service.effects.close(code, f"the match did not start within {timeout} s and was closed",
                                            CLOSED_KEEP_S):
            meta = await self.store.matches.meta(code)
            if meta is not None and meta.bots:
                await self.store.bots.free(code, len(meta.bots))
        return Keep.DONE

    async def _bot(self, code: str, now: int) -> Outcome:
        """The match's bots play (:meth:`server.match.bots.Bots.turn`) in a task of their own, so that a bot's
        thinking holds up no other timer. The task holds the lease; the timer is first set :data:`LEASE_MS`
        ahead, so that if this process dies during the turn another one plays it once the lease is over."""
        await self.store.timers.add(code, TimerKind.BOT, now + LEASE_MS)
        self.service.spawn(self._bot_turn(code))
        return Keep.OWNED

    async def _bot_turn(self, code: str) -> None:
        """One bot turn of match ``code``, then its timer set for the next one (or removed), its lease released.
        A turn that failed is tried again a second later."""
        try:
            due = await self.service.bots.turn(code)
        except asyncio.CancelledError:
            raise  # the service stops: the timer set ahead is another process's to run
        except Exception:
            log.exception("a bot turn of %s failed", code)
            due = self.service.clock.now_ms() + 1000
        if due is None:
            await self.store.timers.done(code, TimerKind.BOT)
        else:
            await self.store.timers.add(code, TimerKind.BOT, due)
            await self.store.timers.release(timer_lease(code, TimerKind.BOT))

