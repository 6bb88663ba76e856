"""The lobby and the countdown: join, resume (and take over), ready, the host's start, the start check.

Which requests a match takes in which state is the lifecycle table's (:mod:`server.core.lifecycle`); the
store's scripts (``JOIN``, ``READY``, ``TRANSITION``) check the same states again, atomically.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

import msgspec

from protocol import messages as m
from protocol.codec import encode

from ..core.errors import ServiceError
from ..core.lifecycle import (
    TABLE,
    Effect,
    Event,
    ResumeStep,
    State,
    TimerKind,
    Transition,
    countdown,
    decide,
    refusal,
    require,
    resume_steps,
    should_start,
    state_of,
)
from ..core.player import MatchGone, new_game
from ..names import name_key, name_problem
from ..store import MatchMeta, token_hash
from .rounds import may_start

if TYPE_CHECKING:
    from .context import MatchContext
    from .session import Session


def require_joined(session: Session) -> None:
    """Raises :class:`ServiceError` ``not_joined`` for a connection that has joined no match."""
    if not session.code:
        raise ServiceError("not_joined", "join or resume a match first")


def join_refusal(status: str, code: str, name: str, meta: MatchMeta) -> ServiceError:
    """The error of a ``JOIN`` the store refused with ``status``: ``no_match``, ``closed``, ``name_taken``,
    ``match_full`` or ``seats_kept`` (answered ``match_full``, saying why) (``already_started`` needs the state
    now: see :meth:`Lobby.join`)."""
    if status in ("no_match", "closed"):
        return refusal(Event.JOIN, state_of(None if status == "no_match" else status), code)
    if status == "name_taken":
        kept = meta.expected is not None and not meta.window_over
        return ServiceError("name_taken", f"the name {name!r} (or one that looks the same) is already taken in this "
                                          "match" + (" (or kept for a player of the round before until its rematch "
                                                     "window ends)" if kept else ""))
    if status == "seats_kept":
        return ServiceError("match_full", f"the match's {meta.settings.players} seats are taken or kept for the "
                                          "players of the round before until its rematch window ends")
    return ServiceError("match_full", f"the match has all its {meta.settings.players} players")


class Lobby:
    """Joining and starting matches (see the module docstring)."""

    def __init__(self, service: MatchContext) -> None:
        self.service = service
        self.store = service.store

    async def join(self, session: Session, code: str, name: str) -> None:
        """Join match ``code`` in its lobby as ``name``: ``joined`` (with the new player token) to the session,
        ``lobby`` to all.

        Raises :class:`ServiceError`: ``no_match`` (none, or its keys expired: then the message says where
        its results are; :class:`~server.core.player.MatchGone` for a match this process knows Redis lost,
        :meth:`~server.match.context.MatchContext.known_lost`: a code Redis has no trace of is otherwise one
        that never existed, a typo), ``malformed`` (the name), ``already_started`` (the match left its lobby; a
        finished one says it has ended and where its results are), ``closed``, ``name_taken``, ``match_full``.
        """
        meta = await self.store.meta(code)
        if meta is None:
            if self.service.known_lost(code):
                raise MatchGone(code)
            raise refusal(Event.JOIN, None, code, results_kept=await self.store.results(code) is not None)
        code, meta = await self.service.rounds.joinable(code, meta)  # an ended round's link joins its next round
        problem = name_problem(name)  # the daily challenge's rule too (server/names.py)
        if problem is not None:
            raise ServiceError("malformed", problem)
        token = secrets.token_urlsafe(24)
        status, _ = await self.store.join(code, name, token_hash(token), meta.settings.players,
                                          self.service.clock.now_ms(), name_key(name))
        if status == "already_started":
            now = await self.store.meta(code)  # it may have ended since it was read above
            raise refusal(Event.JOIN, state_of((now or meta).state), code)
        if status == "no_match" and await self.store.lost(code):  # its meta was there a moment ago
            raise MatchGone(code)
        if status != "ok":
            raise join_refusal(status, code, name, meta)
        await self.service.attach(session, code, name, 0)
        session.push(encode(m.Joined(code, name, token)))
        async with self.service.lobby_lock(code):
            await self.carry_out(code, TABLE[(State.LOBBY, Event.JOIN)])  # the script took it: in the lobby

    async def resume(self, session: Session, code: str, token: str) -> None:
        """Resume match ``code`` as the player whose token is ``token``: ``joined`` (a new token), the lobby, and
        the game and results as far as they go (:func:`server.core.lifecycle.resume_steps`). A session in an
        ended match (the caller allows that only for the next round its ``rematch`` answered) leaves it once
        the token is accepted.

        Raises :class:`ServiceError` ``bad_token`` (no player of that match has it; nothing changes), and
        :class:`~server.core.player.MatchGone` for a match this process found Redis lost
        (:meth:`~server.match.context.MatchContext.known_lost`): Redis cannot tell a lost match from a code that
        never existed, which is answered as any match the token is not of.
        """
        service = self.service
        new_token = secrets.token_urlsafe(24)
        status, name, epoch = await self.store.resume(code, token_hash(token), token_hash(new_token))
        if status != "ok":
            if service.known_lost(code):
                raise MatchGone(code)
            raise ServiceError("bad_token", "that token does not belong to a player of this match")
        if session.code:  # into the next round a rematch answered: the ended match is left only now the token
            await service.rounds.leave_for_next_round(session)  # is known good (a refused one changes nothing)
        await service.attach(session, code, name, epoch)
        await self.store.add_event(code, msgspec.msgpack.encode([name, epoch]), kind="takeover")
        session.push(encode(m.Joined(code, name, new_token)))
        record = await self.store.player(code, name)
        meta = await self.store.meta(code)
        assert record is not None and meta is not None
        session.last_seq = record.seq
        session.push(encode(await service.public.lobby_message(code)))
        for step in resume_steps(State(meta.state), bool(meta.daily)):
            await self._resume_step(session, step, meta)

    async def _resume_step(self, session: Session, step: ResumeStep, meta: MatchMeta) -> None:
        """One :class:`~server.core.lifecycle.ResumeStep` of :meth:`resume` for match ``meta``."""
        code = session.code
        if step is ResumeStep.TELL_CLOSED:  # closed unstarted (lobby timeout, a daily attempt after its day)
            session.push(encode(m.Error("closed", "the match did not start in time and was closed")))
        elif step is ResumeStep.START_DAILY:  # a daily attempt starts when its player connects
            async with self.service.lobby_lock(code):
                await self.start_countdown(code)
        elif step is ResumeStep.COUNTDOWN:
            start_at = meta.start_at_ms
            session.push(encode(m.Countdown(start_at, max(0.0, (start_at - self.service.clock.now_ms()) / 1000))))
        elif step is ResumeStep.GAME:
            await self.service.playing.open_game(session, meta)
            players = await self.store.players(code)
            for other in players:  # what the player missed while away
                if other.name != session.name:
                    session.push(encode(m.Progress(other.name, other.moves, other.foundation, other.shown_status,
                                                   other.time_ms, other.undos)))
            if meta.state == State.PLAYING and not any(p.status == "playing" for p in players):
                await self.service.ending.finalize(code)  # every game ended, and no process finalized: the results now
        elif step is ResumeStep.RESULTS:
            results = await self.store.results(code)
            if results:
                session.push(results)

    async def _lobby_meta(self, code: str, event: Event) -> MatchMeta:
        """The meta of the connection's match ``code``; raises :class:`~server.core.player.MatchGone` when Redis
        lost it (the connection joined it, so it existed), :class:`ServiceError` ``no_match`` once its keys have
        expired (its results kept) and ``closed`` for a match closed unstarted (``FTR_LOBBY_TIMEOUT_S``), as the
        lifecycle refuses ``event`` there."""
        meta = await self.store.meta(code)
        if meta is None and await self.store.lost(code):
            raise MatchGone()
        if meta is None or meta.state == State.CLOSED:
            raise refusal(event, None if meta is None else State.CLOSED, code)
        return meta

    async def ready(self, session: Session) -> None:
        """The player is ready; start the countdown when every expected player is (lobby only).

        Raises :class:`ServiceError` ``already_started`` once the match has left the lobby, ``closed``,
        ``no_match`` (:class:`~server.core.player.MatchGone` when Redis lost it).
        """
        require_joined(session)
        code = session.code
        meta = await self._lobby_meta(code, Event.READY)
        require(State(meta.state), Event.READY, code)
        async with self.service.lobby_lock(code):  # the lobby frame and the start decision in one order
            state = await self.store.set_ready(code, session.name)  # not once the countdown has begun
            if not state and await self.store.lost(code):  # lost since its meta was read
                raise MatchGone()
            # It left its lobby meanwhile: refused as the lifecycle refuses a ready there.
            await self.carry_out(code, require(state_of(state or None), Event.READY, code))

    async def host_start(self, session: Session, host_token: str) -> None:
        """The host starts the countdown with the host token. Raises :class:`ServiceError` ``not_host`` (wrong
        token), ``not_started`` (the deal is still being prepared), ``already_started``, ``closed``."""
        require_joined(session)
        meta = await self._lobby_meta(session.code, Event.HOST_START)
        if not secrets.compare_digest(meta.host, token_hash(host_token)):
            raise ServiceError("not_host", "only the host may start the match (wrong host token)")
        require(State(meta.state), Event.HOST_START, session.code)
        async with self.service.lobby_lock(session.code):
            await self.start_countdown(session.code)

    async def carry_out(self, code: str, transition: Transition) -> None:
        """The lobby's effects of ``transition`` (:data:`server.core.lifecycle.TRANSITIONS`), in their order:
        :attr:`~server.core.lifecycle.Effect.PUBLISH_LOBBY` and :attr:`~server.core.lifecycle.Effect.CHECK_START`
        (the rest are the store script's, done already, or another transition's)."""
        for effect in transition.effects:
            if effect is Effect.PUBLISH_LOBBY:
                await self.service.public.publish_lobby(code)
            elif effect is Effect.CHECK_START:
                await self.start_if_all_ready(code)

    async def start_if_all_ready(self, code: str) -> None:
        """The start check (:func:`server.core.lifecycle.should_start`): the countdown starts when every
        expected player has joined and is ready (lobby only)."""
        meta = await self.store.meta(code)
        assert meta is not None
        players = await self.store.players(code)
        if should_start(state_of(meta.state), [p.ready for p in players], meta.settings.players,
                        may_start(meta, [p.name for p in players])):
            await self.start_countdown(code)

    async def start_countdown(self, code: str) -> None:
        """Move a match from ``lobby`` to ``countdown`` (once; a concurrent call changes nothing): the deal comes
        ``FTR_COUNTDOWN_S`` seconds later by the ``start`` timer, the time limit by the ``deadline`` timer. A
        daily attempt (meta ``deadline_at_ms``) starts at once and ends with its UTC day; after that day nothing
        happens (the daily service closes it). Raises what redis-py raises when Redis fails."""
        meta = await self.store.meta(code)
        assert meta is not None
        settings = meta.settings
        plan = countdown(self.service.clock.now_ms(), 0.0 if meta.deadline_at_ms else self.service.settings.countdown_s,
                         settings.time_limit_s, self.service.settings.untimed_limit_s, meta.deadline_at_ms)
        if plan is None or decide(state_of(meta.state), Event.ALL_READY) is None:
            return  # the day is over (the daily service closes the attempt), or the match left its lobby
        # Timers first, then the transition: a process dying in between leaves a timer that finds the match
        # still in the lobby (harmless), never a countdown without a timer. A timer of a losing concurrent
        # call is put right when it fires (server.core.lifecycle.fired_early).
        await self.store.add_timer(code, TimerKind.START, plan.start_at_ms)
        if plan.deadline_ms:
            await self.store.add_timer(code, TimerKind.DEADLINE, plan.deadline_ms)
        moved = await self.store.transition(code, State.LOBBY, State.COUNTDOWN,
                                            encode(m.Countdown(plan.start_at_ms, plan.seconds)),
                                            start_at_ms=plan.start_at_ms, deadline_ms=plan.deadline_ms)
        day = meta.day
        if moved and day is not None and self.service.daily is not None:
            foundation = new_game(meta.deal, settings).position.foundation_cards
            for name in await self.store.roster(code):
                await self.service.daily.started(code, day, name, plan.start_at_ms, foundation)
