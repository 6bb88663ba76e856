"""The match service as its parts see it: what :mod:`server.match` and :mod:`server.match.rounds` use of it.

Each part (creation, public, lobby, playing, ending, timers, effects, daily link, rounds) is given its
service as a :class:`MatchContext`, which :class:`server.matches.MatchService` satisfies. What one part calls
of another is that part's small protocol here (:class:`LobbySteps`, ...), so no part imports another's module
to be typed. :class:`DailyHooks` is the daily challenge's side of its seam with matches
(:mod:`server.match.daily_link` is the rest).
"""

from __future__ import annotations

import asyncio
import contextvars
from concurrent.futures import Executor
from typing import Any, Protocol

from protocol import messages as m

from ..core.lifecycle import Wait
from ..core.ranking import Standing
from ..hub import Hub
from ..metrics import Metrics
from ..profiles import ProfileService
from ..scheduler import SolverScheduler
from ..settings import Settings
from ..store import BotSeat, MatchMeta, Store
from .clock import Clock
from .session import Session
from .step import Step

Day = tuple[str, str]
"""A daily challenge's ``(date, variant)``."""

Log = list[tuple[str, int]]
"""A player's move log: ``(command, ms from the start)`` per accepted ``play``."""


class DailyHooks(Protocol):
    """What the match service tells the daily challenge (implemented by :class:`server.daily.DailyService`)."""

    async def started(self, code: str, day: Day, name: str, start_at_ms: int, foundation: int) -> None:
        """Attempt ``code`` of ``day`` started for ``name`` at ``start_at_ms``, ``foundation`` cards up (auto-play)."""

    async def record(self, code: str, day: Day, standing: Standing, commands: Log) -> None:
        """Attempt ``code`` of ``day`` ended as ``standing`` with the move log ``commands`` (before its results;
        may be told again: idempotent)."""


class EffectsSteps(Protocol):
    """What the other parts call of :class:`server.match.effects.Effects`, the lifecycle table's dispatcher."""

    async def run(self, step: Step) -> bool:
        """Carry out the effects of ``step``'s row in order; whether its store script wrote the change."""

    async def close(self, code: str, message: str, keep_s: int) -> bool:
        """Close match ``code`` if it never started; its players hear ``closed`` with ``message``."""


class CreationSteps(Protocol):
    """What the other parts call of :class:`server.match.creation.Creation`."""

    async def prepare(self, code: str) -> bool:
        """The ``prepare`` timer of match ``code``: a solvable deal from the pool and its lobby opened; False
        when the pool had none yet (the timer stays)."""

    async def draw_deal(self, variant: str, solvable_only: bool) -> tuple[str | None, str, bytes | None]:
        """The deal of a match no one chose: ``(seed, solution, pool_item)``, ``(None, "", None)`` while a
        solvable-only pool is empty."""


    async def take_bot_places(self, code: str, count: int, time_limit_s: int, now_ms: int,
                              address: str = "") -> str | None:
        """Places for ``count`` bots of new match ``code`` among ``FTR_MAX_BOTS`` (and ``address``'s); ``None``:
        taken, else the bound that refused."""

    async def seat_bots(self, code: str, bots: list[BotSeat], players: int) -> None:
        """Join the ``bots`` of new match ``code`` (``players`` seats), each ready."""


class PublicSteps(Protocol):
    """What the other parts call of :class:`server.match.public.PublicView`."""

    async def lobby_message(self, code: str) -> m.Lobby:
        """The ``lobby`` frame of match ``code`` as Redis holds it."""

    async def publish_lobby(self, code: str) -> None:
        """Publish the lobby of match ``code`` to its stream."""


class LobbySteps(Protocol):
    """What the other parts call of :class:`server.match.lobby.Lobby`."""

    async def take_seat(self, step: Step) -> bool:
        """The ``JOIN`` script of ``step``: the player is in and told ``joined``; raises the join's refusals."""

    async def mark_ready(self, step: Step) -> bool:
        """The ``READY`` script of ``step``: the player is ready; raises the ready's refusals."""

    async def start_if_all_ready(self, code: str) -> None:
        """The start check of match ``code``: the countdown starts when every expected player is in and ready."""


class PlayingSteps(Protocol):
    """What the other parts call of :class:`server.match.playing.Playing`."""

    async def open_game(self, session: Session, meta: MatchMeta) -> None:
        """Rebuild the player's game of ``session`` from the deal of ``meta`` and the move log; send ``started``."""

    async def play(self, session: Session, seq: int, command: str) -> None:
        """Validate and apply command ``seq`` of ``session``'s player; answer ``position`` or ``rejected``."""

    async def resign(self, session: Session, seq: int | None = None) -> None:
        """End the game of ``session``'s player as ``resigned`` (``seq`` None: the next number)."""


class EndingSteps(Protocol):
    """What the other parts call of :class:`server.match.ending.Ending`."""

    async def arm_finalize(self, code: str) -> None:
        """Set the ``finalize`` timer of match ``code`` before a command that may end a player's game."""

    async def finalize(self, code: str) -> None:
        """Rank, reveal the seed and publish the results of match ``code`` (once)."""

    async def finalize_if_ended(self, code: str) -> bool:
        """Finalize match ``code`` if none of its players still plays; False (nothing done) while one does."""

    async def deadline(self, code: str, now_ms: int) -> Wait | None:
        """The time limit of match ``code`` is over at ``now_ms``: games still playing end as ``timeout``,
        then the results; a :class:`~server.core.lifecycle.Wait` (nothing done) during the countdown."""

    async def end_match(self, code: str) -> None:
        """Every player of match ``code`` has ended: finalize now, then drop its ``finalize`` timer."""


class RoundsSteps(Protocol):
    """What the other parts call of :class:`server.match.rounds.Rounds`."""

    async def joinable(self, code: str, meta: MatchMeta) -> tuple[str, MatchMeta]:
        """The match (code and meta) a ``join`` naming ``code`` joins: an ended match's next round in its lobby,
        else ``code`` itself."""

    async def leave_for_next_round(self, session: Session) -> None:
        """The player of ``session`` leaves the ended match to resume its next round on this connection."""

    async def public(self, code: str, meta: MatchMeta) -> dict[str, Any]:
        """What ``GET /matches/{code}`` says of rounds: ``round``, ``next_round``, ``rematch``, ``series``."""

    async def window_over(self, code: str) -> None:
        """The ``window`` timer of round ``code``: its rematch window is over."""


class BotsSteps(Protocol):
    """What the other parts call of :class:`server.match.bots.Bots`."""

    async def turn(self, code: str) -> int | None:
        """Match ``code``'s bots play their due commands; the instant (ms) of the next turn, ``None``: no more."""

    async def people_ended(self, code: str) -> None:
        """A person's game in match ``code`` ended while others play: the bots stop once only they play."""

    async def stop(self, code: str) -> None:
        """Every bot of match ``code`` still playing resigns now."""


class MatchContext(Protocol):
    """What the parts of the match service use of it (:class:`server.matches.MatchService` is one).

    The parts are read-only properties here, so the service's concrete parts satisfy their protocols.
    """

    store: Store
    """The process's Redis store (:mod:`server.store`): the truth of every match."""
    settings: Settings
    """The server's settings (:mod:`server.settings`)."""
    executor: Executor | None
    """The solver's worker pool (``None``: the event loop's default executor)."""
    solver: SolverScheduler
    """The turns of ``executor``'s workers (:mod:`server.scheduler`): every solver job goes through it."""
    dead_executor: Executor | None
    """The pool of the dead-game checks (:func:`server.engine.dead.is_dead`), never the event loop."""
    hub: Hub
    """This process's fan-out (:mod:`server.hub`)."""
    metrics: Metrics
    """The app's metrics (:mod:`server.metrics`)."""
    process_id: str
    """This process's id: the holder of the timer leases it takes (:meth:`server.store.timers.Timers.lease`)."""
    daily: DailyHooks | None
    """The daily challenge when it runs (told of an attempt's start and end), else ``None``."""
    profiles: ProfileService
    """Named players (:mod:`server.profiles`): a join claims or checks its name; a finished match is recorded."""

    @property
    def clock(self) -> Clock:
        """The shared clock (:meth:`Clock.now_ms <server.match.clock.Clock.now_ms>`: ms since the epoch)."""

    @property
    def creation(self) -> CreationSteps:
        """The creation part (:mod:`server.match.creation`)."""

    @property
    def public(self) -> PublicSteps:
        """What anyone may read of a match (:mod:`server.match.public`)."""

    @property
    def lobby(self) -> LobbySteps:
        """The lobby part (:mod:`server.match.lobby`)."""

    @property
    def playing(self) -> PlayingSteps:
        """The playing part (:mod:`server.match.playing`)."""

    @property
    def ending(self) -> EndingSteps:
        """The ending part (:mod:`server.match.ending`)."""

    @property
    def effects(self) -> EffectsSteps:
        """The lifecycle table's dispatcher (:mod:`server.match.effects`)."""

    @property
    def rounds(self) -> RoundsSteps:
        """Rematch and the series of rounds (:mod:`server.match.rounds`)."""

    @property
    def bots(self) -> BotsSteps:
        """The bots the server plays (:mod:`server.match.bots`)."""

    def spawn(self, coro: Any, *, context: contextvars.Context | None = None) -> asyncio.Task[Any]:
        """Run ``coro`` as a background task of the service, in ``context`` (default: a copy of the current
        one); cancelled and waited for when the service stops."""

    async def attach(self, session: Session, code: str, name: str, epoch: int) -> None:
        """``session`` now speaks for player ``name`` of match ``code`` (connection ``epoch``): an older
        connection of the player in this process is replaced, the match's stream followed, the player marked
        connected."""

    async def disconnected(self, session: Session) -> None:
        """``session``'s socket closed: forget it; mark the player away unless a newer connection took over."""

    def known_lost(self, code: str) -> bool:
        """Whether this process found that Redis lost match ``code`` (a code Redis has no trace of is otherwise
        one that never existed)."""

    def lobby_lock(self, code: str) -> asyncio.Lock:
        """The lock that serialises this process's lobby changes and start decisions of match ``code``."""
