"""The typed seam between matches and the daily challenge (:mod:`server.daily`).

A daily attempt is a one-player match. The daily challenge asks the match service through
:class:`DailyMatches`, which :class:`DailyLink` implements. The match service tells the daily challenge of an
attempt's start and end through :class:`DailyHooks`, declared in :mod:`server.match.context`. Neither reaches
into the other's internals or Redis keys.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Coroutine
from contextvars import Context
from typing import Any, Protocol, TypeVar

from protocol import messages as m
from protocol.codes import new_code

from ..core.lifecycle import State, TimerKind
from ..core.player import PlayerStatus
from ..core.ranking import Standing
from ..hub import Hub
from ..scheduler import DAILY
from ..settings import Settings
from ..store import JoinStatus, Store, token_hash
from ..store.keys import day_member
from .context import DailyHooks, Day, Log, MatchContext
from .ending import standing

T = TypeVar("T")

# DailyHooks, Day and Log are declared in .context, below the parts that tell the daily challenge (no circle
# through them); named here too, as the seam's.
__all__ = ["DailyHooks", "DailyLink", "DailyMatches", "Day", "Log", "attempt_settings"]


def attempt_settings(variant: str) -> m.Settings:
    """The settings a daily attempt of ``variant`` is played under: solvable deal, one player, no time limit
    (the day's end is its deadline), auto-play on, safe undo, no hints."""
    return m.Settings(variant, True, 1, 0, True, "safe", False)


class DailyMatches(Protocol):
    """What the daily challenge may ask of the match service (see the module docstring)."""

    store: Store
    """The process's Redis store (for the daily's own store, leases and the retention period)."""
    hub: Hub
    """The process's fan-out (the daily's stream to its spectators)."""
    settings: Settings
    process_id: str

    def now_ms(self) -> int:
        """Now on the shared clock (ms since the epoch)."""

    async def run_solver(self, func: Callable[..., T], *args: Any) -> T:
        """``func(*args)`` in the solver's worker pool (never in the event loop), in the daily's turn."""

    def spawn(self, coro: Coroutine[Any, Any, T], context: Context) -> asyncio.Task[T]:
        """Run ``coro`` as a task of the service's own, in ``context``: cancelled and waited for when the
        service stops (a task that outlived it, waiting on a closed Redis client, hung the process's exit)."""

    async def create_attempt(self, day: Day, name: str, deal: str, solution: str, commitment: str,
                             ends_at_ms: int) -> str:
        """A new one-player match for ``name``'s attempt at ``day``: the day's ``deal`` (position text), its
        ``solution`` and ``commitment``, no seed, ending at ``ends_at_ms``; the player is in it, in its lobby.
        Returns its code."""

    async def create_practice(self, day: Day, name: str, seed: str, deal: str, commitment: str,
                              ghost: bytes = b"") -> str:
        """A new one-player match for ``name``'s practice on the revealed ``day``: its ``seed`` (public now),
        ``deal`` and ``commitment`` (SHA-256 of the seed, so the match's check holds with an empty nonce); the
        player is in it, in its lobby (ready starts it; unstarted it closes after ``FTR_LOBBY_TIMEOUT_S``).
        Its meta field ``practice`` (``"DATE VARIANT"``) keeps it off the day's board. ``ghost``: the encoded
        :class:`protocol.messages.Ghost` frame it races (meta field ``ghost``, :mod:`server.ghosts`), or empty
        for none. Returns its code."""

    async def attempt_open(self, code: str, name: str) -> bool:
        """Whether ``name``'s attempt ``code`` may still be played (not finished, the game not ended)."""

    async def issue_token(self, code: str, name: str) -> str:
        """A new player token for ``name`` in attempt ``code`` (the one before stays valid until it is used)."""

    async def attempt_state(self, code: str) -> State | None:
        """The state of attempt ``code`` (``None``: its keys are gone)."""

    async def close_unstarted(self, code: str, message: str) -> bool:
        """Close attempt ``code`` if it never started (its player hears ``error`` ``closed`` with ``message``;
        its keys expire after the retention period); False when it had started."""

    async def ended_attempt(self, code: str) -> list[tuple[Standing, Log]]:
        """The standings and move logs of attempt ``code``'s players (it has finished)."""


class DailyLink:
    """:class:`DailyMatches` over the match service (:class:`~server.match.context.MatchContext`)."""

    def __init__(self, service: MatchContext) -> None:
        self._service = service
        self.store = service.store
        self.hub = service.hub
        self.settings = service.settings
        self.process_id = service.process_id

    def now_ms(self) -> int:
        return self._service.clock.now_ms()

    async def run_solver(self, func: Callable[..., T], *args: Any) -> T:
        return await self._service.solver.run(DAILY, func, *args)

    def spawn(self, coro: Coroutine[Any, Any, T], context: Context) -> asyncio.Task[T]:
        return self._service.spawn(coro, context=context)

    async def create_attempt(self, day: Day, name: str, deal: str, solution: str, commitment: str,
                             ends_at_ms: int) -> str:
        settings = attempt_settings(day[1])
        now = self.now_ms()
        while True:
            code = new_code()
            fields: dict[str, Any] = {
                "state": State.LOBBY.value, "settings": settings, "host": token_hash(secrets.token_urlsafe(24)),
                "created_ms": now, "active": 0, "solution": solution, "nonce": "", "seed": "",
                "commitment": commitment, "deal": deal, "daily": day_member(*day), "deadline_at_ms": ends_at_ms,
            }
            if await self.store.matches.create(code, fields):
                break
        status, _ = await self.store.players.join(code, name, token_hash(secrets.token_urlsafe(24)), 1, now)
        assert status is JoinStatus.OK, status
        return code

    async def create_practice(self, day: Day, name: str, seed: str, deal: str, commitment: str,
                              ghost: bytes = b"") -> str:
        # A chosen deal (everyone may know it), no proof kept (the day's solution is dropped at its close), so
        # a rematch draws any deal; no "daily" field: the match service records it on no board.
        settings = m.Settings(day[1], False, 1, 0, True, "safe", False, False, True)
        now = self.now_ms()
        while True:
            code = new_code()
            fields: dict[str, Any] = {
                "state": State.LOBBY.value, "settings": settings, "host": token_hash(secrets.token_urlsafe(24)),
                "created_ms": now, "active": 0, "solution": "", "nonce": "", "seed": seed,
                "commitment": commitment, "deal": deal, "practice": day_member(*day),
            }
            if ghost:
                fields["ghost"] = ghost  # sent as it is to the player after ``started`` (server/ghosts.py)
            if await self.store.matches.create(code, fields):
                break
        await self.store.timers.add(code, TimerKind.CLOSE, now + self.settings.lobby_timeout_s * 1000)
        status, _ = await self.store.players.join(code, name, token_hash(secrets.token_urlsafe(24)), 1, now)
        assert status is JoinStatus.OK, status
        return code

    async def attempt_open(self, code: str, name: str) -> bool:
        meta = await self.store.matches.meta(code)
        player = await self.store.players.get(code, name)
        return meta is not None and player is not None and meta.state != State.FINISHED \
            and player.status in (PlayerStatus.LOBBY, PlayerStatus.PLAYING)

    async def issue_token(self, code: str, name: str) -> str:
        token = secrets.token_urlsafe(24)
        await self.store.players.issue_token(code, name, token_hash(token))
        return token

    async def attempt_state(self, code: str) -> State | None:
        meta = await self.store.matches.meta(code)
        return None if meta is None else meta.state

    async def close_unstarted(self, code: str, message: str) -> bool:
        return await self._service.effects.close(code, message, self.store.retention_s)

    async def ended_attempt(self, code: str) -> list[tuple[Standing, Log]]:
        return [(standing(p), await self.store.players.log(code, p.name)) for p in await self.store.players.all(code)]
