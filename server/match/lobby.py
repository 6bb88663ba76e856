"""The lobby and the countdown: join, resume (and take over), ready, the host's start, the start check.

Which requests a match takes in which state is the lifecycle table's (:mod:`server.core.lifecycle`); its
rows are carried out by :mod:`server.match.effects`, and the store's scripts check the same states again.
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
    Event,
    ResumeStep,
    State,
    allows,
    countdown,
    refusal,
    require,
    resume_steps,
    should_start,
    state_of,
)
from ..core.player import MatchGone, PlayerStatus
from ..names import name_key, name_problem
from ..store import JoinStatus, MatchMeta, token_hash
from .rounds import may_start
from .step import Step

if TYPE_CHECKING:
    from .context import MatchContext
    from .session import Session


def require_joined(session: Session) -> None:
    """Raises :class:`ServiceError` ``not_joined`` for a connection that has joined no match."""
    if not session.code:
        raise ServiceError("not_joined", "join or resume a match first")


def join_refusal(status: JoinStatus, code: str, name: str, meta: MatchMeta) -> ServiceError:
    """The error of a ``JOIN`` the store refused with ``status``: ``no_match``, ``closed``, ``name_taken``,
    ``match_full``, or ``seats_kept``, answered ``match_full`` saying why. ``already_started`` is
    :meth:`Lobby.take_seat`'s, which reads the state again."""
    if status is JoinStatus.NO_MATCH or status is JoinStatus.CLOSED:
        return refusal(Event.JOIN, None if status is JoinStatus.NO_MATCH else State.CLOSED, code)
    if status is JoinStatus.NAME_TAKEN:
        kept = meta.expected is not None and not meta.window_over
        return ServiceError("name_taken", f"the name {name!r} (or one that looks the same) is already taken in this "
                                          "match" + (" (or kept for a player of the round before until its rematch "
                                                     "window ends)" if kept else ""))
    if status is JoinStatus.SEATS_KEPT:
        return ServiceError("match_full", f"the match's {meta.settings.players} seats are taken or kept for the "
                                          "players of the round before until its rematch window ends")
    return ServiceError("match_full", f"the match has all its {meta.settings.players} players")


class Lobby:
    """Joining and starting matches (see the module docstring)."""

    def __init__(self, service: MatchContext) -> None:
        self.service = service
        self.store = service.store

    async def join(self, session: Session, code: str, name: str, player_key: str = "") -> None:
        """Join match ``code`` in its lobby as ``name``: ``joined`` with the new player token to the session,
        ``lobby`` to all (the rows ``join`` of :data:`~server.core.lifecycle.TRANSITIONS`).

        The name is a named player's (:mod:`server.profiles`): a free one is claimed first (``joined`` then
        carries its new player key and recovery code, and a join refused after the claim frees it again); a
        claimed one needs its ``player_key``.

        Raises :class:`ServiceError`: ``no_match``, saying where the results are when they are kept;
        :class:`~server.core.player.MatchGone` for a match this process knows Redis lost; ``malformed`` for
        the name; ``name_taken`` (in this match, or a look-alike of a claimed name); ``bad_token`` (a claimed
        name's key missing or wrong); ``rate_limited`` (claims of this address); ``already_started``, saying
        where the results are of a finished match; ``closed``, ``match_full``.
        """
        meta = await self.store.matches.meta(code)
        if meta is None:
            if self.service.known_lost(code):
                raise MatchGone(code)
            raise refusal(Event.JOIN, None, code, results_kept=await self.store.matches.results(code) is not None)
        code, meta = await self.service.rounds.joinable(code, meta)  # an ended round's link joins its next round
        problem = name_problem(name)  # the daily challenge's rule too (server/names.py)
        if problem is not None:
            raise ServiceError("malformed", problem)
        row = require(meta.state, Event.JOIN, code)
        if name_key(name) in meta.names:  # taken in this match: said so before the name's key is asked for
            raise join_refusal(JoinStatus.NAME_TAKEN, code, name, meta)
        entered = await self.service.profiles.enter(name, player_key, session.address)
        step = Step(code, row, meta=meta, session=session, name=name, token=secrets.token_urlsafe(24),
                    player_key=entered.player_key, recovery_code=entered.recovery_code)
        try:
            async with self.service.lobby_lock(code):
                await self.service.effects.run(step)
        finally:
            if session.code != code:  # no seat: a name this join claimed is free again (its key reached no one)
                await self.service.profiles.release(entered)

    async def take_seat(self, step: Step) -> bool:
        """The ``JOIN`` script of ``step`` (:attr:`~server.core.lifecycle.Effect.TAKE_SEAT`): the player is in,
        its session attached and told ``joined``. Raises the refusals :meth:`join` lists."""
        code, name, meta, session = step.code, step.name, step.meta, step.session
        assert meta is not None and session is not None
        status, _ = await self.store.players.join(code, name, token_hash(step.token), meta.settings.players,
                                                  self.service.clock.now_ms(), name_key(name))
        if status is JoinStatus.ALREADY_STARTED:
            now = await self.store.matches.meta(code)  # it may have ended since it was read above
            raise refusal(Event.JOIN, (now or meta).state, code)
        if status is JoinStatus.NO_MATCH and await self.store.matches.lost(code):  # its meta was there a moment ago
            raise MatchGone(code)
        if status is not JoinStatus.OK:
            raise join_refusal(status, code, name, meta)
        await self.service.attach(session, code, name, 0)
        session.push(encode(m.Joined(code, name, step.token, step.player_key, step.recovery_code)))
        return True

    async def resume(self, session: Session, code: str, token: str) -> None:
        """Resume match ``code`` as the player whose token is ``token``: ``joined`` with a new token, the lobby,
        then what :func:`server.core.lifecycle.resume_steps` lists. A session in an ended match, resuming its
        next round, leaves the ended one once the token is accepted.

        Raises :class:`ServiceError` ``bad_token`` when no player of the match has the token, and
        :class:`~server.core.player.MatchGone` for a match this process knows Redis lost.
        """
        service = self.service
        new_token = secrets.token_urlsafe(24)
        resumed = await self.store.players.resume(code, token_hash(token), token_hash(new_token))
        if resumed is None:
            if service.known_lost(code):
                raise MatchGone(code)
            raise ServiceError("bad_token", "that token does not belong to a player of this match")
        name, epoch = resumed
        if session.code:  # into the next round a rematch answered: the ended match is left only now the token
            await service.rounds.leave_for_next_round(session)  # is known good (a refused one changes nothing)
        await service.attach(session, code, name, epoch)
        await self.store.streams.add_event(code, msgspec.msgpack.encode([name, epoch]), kind="takeover")
        session.push(encode(m.Joined(code, name, new_token)))
        record = await self.store.players.get(code, name)
        meta = await self.store.matches.meta(code)
        assert record is not None and meta is not None
        session.last_seq = record.seq
        session.push(encode(await service.public.lobby_message(code)))
        for step in resume_steps(meta.state, bool(meta.daily)):
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
            players = await self.store.players.all(code)
            for other in players:  # what the player missed while away
                if other.name != session.name:
                    session.push(encode(m.Progress(other.name, other.moves, other.foundation, other.shown_status,
                                                   other.time_ms, other.undos)))
            if meta.state == State.PLAYING and not any(p.status == PlayerStatus.PLAYING for p in players):
                await self.service.ending.finalize(code)  # every game ended, and no process finalized: the results now
        elif step is ResumeStep.RESULTS:
            results = await self.store.matches.results(code)
            if results:
                session.push(results)

    async def _lobby_meta(self, code: str, event: Event) -> MatchMeta:
        """The meta of the connection's match ``code``. Raises :class:`~server.core.player.MatchGone` when Redis
        lost it, and as the lifecycle refuses ``event``: ``no_match`` once its keys expired, ``closed``."""
        meta = await self.store.matches.meta(code)
        if meta is None and await self.store.matches.lost(code):
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
        row = require(meta.state, Event.READY, code)
        async with self.service.lobby_lock(code):  # the lobby frame and the start decision in one order
            await self.service.effects.run(Step(code, row, meta=meta, session=session))

    async def mark_ready(self, step: Step) -> bool:
        """The ``READY`` script of ``step`` (:attr:`~server.core.lifecycle.Effect.MARK_READY`), written only while
        the match is in its lobby. Raises the refusals :meth:`ready` lists."""
        code, session = step.code, step.session
        assert session is not None
        state = await self.store.players.set_ready(code, session.name)
        if not state and await self.store.matches.lost(code):  # lost since its meta was read
            raise MatchGone()
        # It left its lobby meanwhile: refused as the lifecycle refuses a ready there.
        require(state_of(state or None), Event.READY, code)
        return True

    async def host_start(self, session: Session, host_token: str) -> None:
        """The host starts the countdown with the host token. Raises :class:`ServiceError` ``not_host`` for a
        wrong token, ``not_started`` while the deal is prepared, ``already_started``, ``closed``."""
        require_joined(session)
        meta = await self._lobby_meta(session.code, Event.HOST_START)
        if not secrets.compare_digest(meta.host, token_hash(host_token)):
            raise ServiceError("not_host", "only the host may start the match (wrong host token)")
        require(meta.state, Event.HOST_START, session.code)
        async with self.service.lobby_lock(session.code):
            await self.start_countdown(session.code, Event.HOST_START)

    async def start_if_all_ready(self, code: str) -> None:
        """The start check (:func:`server.core.lifecycle.should_start`): the countdown starts when every
        expected player has joined and is ready (lobby only)."""
        meta = await self.store.matches.meta(code)
        assert meta is not None
        players = await self.store.players.all(code)
        if should_start(meta.state, [p.ready for p in players], meta.settings.players,
                        may_start(meta, [p.name for p in players])):
            await self.start_countdown(code)

    async def start_countdown(self, code: str, event: Event = Event.ALL_READY) -> None:
        """Move a match from ``lobby`` to ``countdown`` by ``event`` (``all_ready`` or ``host_start``), once:
        the plan is :func:`server.core.lifecycle.countdown`'s. Nothing happens once the match left its lobby,
        or for a daily attempt after its day. Raises what redis-py raises."""
        meta = await self.store.matches.meta(code)
        assert meta is not None
        settings = meta.settings
        plan = countdown(self.service.clock.now_ms(), 0.0 if meta.deadline_at_ms else self.service.settings.countdown_s,
                         settings.time_limit_s, self.service.settings.untimed_limit_s, meta.deadline_at_ms)
        if plan is None or not allows(meta.state, event):
            return  # the day is over (the daily service closes the attempt), or the match left its lobby
        row = TABLE[(meta.state, event)]
        # A timer of a losing concurrent call is put right when it fires (server.core.lifecycle.fired_early).
        await self.service.effects.run(Step(code, row, meta=meta, plan=plan,
                                            frame=encode(m.Countdown(plan.start_at_ms, plan.seconds)),
                                            fields={"start_at_ms": plan.start_at_ms, "deadline_ms": plan.deadline_ms}))
