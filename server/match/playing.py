"""Playing: ``play``, ``hint``, ``resign``, a dead game's end, and a commit whose answer was lost.

Each command is the core's proposal (:class:`server.core.player.PlayerGame`), written through its row of the
lifecycle table (:mod:`server.match.effects`). Once Redis stored it, the session adopts the proposed value and
sends its reply; a failed or refused write leaves the session as it was. When Redis did not answer, what it
holds is learnt from it (:meth:`Playing.resolve`) before any answer.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING

from protocol import messages as m
from protocol.codec import encode

from ..core.errors import ServiceError
from ..core.lifecycle import TABLE, Event, State
from ..core.player import (
    REPLACED,
    Commit,
    CommitStatus,
    EndWrite,
    FollowUp,
    HintWrite,
    MatchGone,
    PlayerGame,
    PlayerStatus,
    Proposal,
    Reply,
    StuckWrite,
    commit_refusal,
    needs_dead_check,
)
from ..engine import Game
from ..engine.dead import Verdict, is_dead
from ..hints import planned_hint
from ..store import CommitOutcome, MatchKeysGone, MatchMeta
from .lobby import require_joined
from .step import GameEnd, Step

if TYPE_CHECKING:
    from .context import MatchContext
    from .session import Session

log = logging.getLogger("forty_thieves.matches")

DEAD_CHECK_QUIET_S = 0.25
"""Seconds a player's position must stay unchanged before the solver is asked whether it is dead."""

# A game's writes are rows of a playing match: its state is not read on every move, the scripts check it.
COMMIT_ROW = TABLE[(State.PLAYING, Event.COMMIT)]
STUCK_ROW = TABLE[(State.PLAYING, Event.STUCK)]
GAME_DEAD_ROW = TABLE[(State.PLAYING, Event.GAME_DEAD)]


class Playing:
    """The commands of a game in play (see the module docstring)."""

    def __init__(self, service: MatchContext) -> None:
        self.service = service
        self.store = service.store

    # ------------------------------------------------------------ commands

    async def play(self, session: Session, seq: int, command: str) -> None:
        """Validate and apply one command; answer ``position`` or ``rejected``.

        When Redis does not answer the commit, its outcome is learnt from Redis first (:meth:`resolve`): the
        ``position`` if Redis holds it, else an ``internal`` error saying nothing changed, or
        ``unknown_outcome`` if Redis cannot tell in time. Raises :class:`ServiceError` as
        :meth:`server.core.player.PlayerGame.propose_play` and :meth:`settled` do.
        """
        require_joined(session)
        async with session.lock:
            # Every move's path: the settled game is read here, the coroutine only when it must ask Redis.
            player = session.player
            if player is None or session.unsure:
                player = await self.settled(session)
            answer = player.propose_play(seq, command, self.service.clock.now_ms())
            if isinstance(answer, Reply):
                session.push(encode(answer.message))
                return
            stored, active = await self._commit(session, answer)
        if stored is not CommitOutcome.STORED or answer.follow_up is not FollowUp.NONE:
            await self._follow_up(session, answer, stored, active)

    async def resign(self, session: Session, seq: int | None = None) -> None:
        """End the player's game as ``resigned``, numbered like ``play`` and resolved as there when the commit's
        answer is lost. ``seq`` None: the next number (a ``restart`` carries none)."""
        require_joined(session)
        async with session.lock:
            player = await self.settled(session)
            answer = player.propose_resign(player.last_seq + 1 if seq is None else seq, self.service.clock.now_ms())
            if isinstance(answer, Reply):
                session.push(encode(answer.message))
                return
            stored, active = await self._commit(session, answer)
        await self._follow_up(session, answer, stored, active)

    async def hint(self, session: Session, seq: int) -> None:
        """Hint ``seq``: a suggestion from the player's redacted view only (RULES.md section 8), counted. Hint n
        is the player's n-th, on any connection. Raises as
        :meth:`server.core.player.PlayerGame.propose_hint`, and ``no_match``
        (:class:`~server.core.player.MatchGone`) when Redis lost the player's record."""
        require_joined(session)
        async with session.lock:
            player = await self.settled(session)
            asked = player.game if player.needs_hint(seq) else None
        # The planner runs without the lock (a move sent meanwhile is not held up), on this game value (never
        # played on: a command makes a new one); its answer counts only if the game is still that one.
        planned = None
        if asked is not None:
            planned = await planned_hint(self.service, session.address or session.name, asked,
                                         f"{session.code}/{session.name}/{seq}")
        async with session.lock:
            player = await self.settled(session)
            answer = player.propose_hint(seq, planned if player.game is asked else None)
            if isinstance(answer, Proposal):
                assert isinstance(answer.write, HintWrite)
                if not await self.store.players.update(session.code, session.name, hints=answer.write.hints,
                                                       last_hint=answer.write.last_hint):
                    raise MatchGone()  # Redis lost the match: no hint for a game that is gone
                session.adopt(answer.next)
            session.push(answer.frame if isinstance(answer, Proposal) else encode(answer.message))

    async def settled(self, session: Session) -> PlayerGame:
        """The player's game, reloaded from Redis first when a commit's outcome is still unknown (the session
        may differ from Redis: it must not accept a command on the wrong game). Raises :class:`ServiceError`
        ``not_started`` before the deal, and what :meth:`resolve` raises."""
        if session.player is None:
            raise ServiceError("not_started", "the match has not started yet: wait for the deal")
        if session.unsure:
            await self.resolve(session, 0)
        assert session.player is not None
        return session.player

    # ------------------------------------------------------------ writing a proposal

    async def _commit(self, session: Session, proposal: Proposal) -> tuple[CommitOutcome, int]:
        """Write a ``play``/``resign`` proposal by the ``commit`` row; once stored adopt it and send its reply.
        Returns what became of it and the count of players still playing, -1 unless it ended a game."""
        write = proposal.write
        assert isinstance(write, Commit)
        step = Step(session.code, COMMIT_ROW, session=session, write=write)
        try:
            await self.service.effects.run(step)
        except Exception as error:  # noqa: BLE001 - any failure: what was stored is learnt from Redis
            await self._lost_commit(session, write.seq, error)
            return CommitOutcome.LOST, -1
        result, active = step.answer
        if result is not CommitStatus.OK:
            await self._refused_commit(session, write.seq, result)
            return CommitOutcome.REFUSED, -1
        session.adopt(proposal.next)
        session.push(proposal.frame)
        return CommitOutcome.STORED, active

    async def _follow_up(self, session: Session, proposal: Proposal, stored: CommitOutcome, active: int) -> None:
        """What follows a proposal once its lock is released (:class:`server.core.player.FollowUp`)."""
        if stored is CommitOutcome.LOST:  # stored, its answer lost: whether it ended the last game is not known here
            if session.status != PlayerStatus.PLAYING:
                await self.service.ending.finalize_if_ended(session.code)
            return
        if stored is not CommitOutcome.STORED:
            return
        follow_up = proposal.follow_up
        if follow_up is FollowUp.END_MATCH_IF_LAST and active == 0:
            await self.service.ending.end_match(session.code)
        elif follow_up is FollowUp.END_MATCH_IF_LAST:  # others play on: bots alone stop (Bots.people_ended)
            await self.service.bots.people_ended(session.code)
        elif follow_up is FollowUp.END_DEAD:
            await self.end_dead(session, proposal.next.game, proposal.next.game.moves)
        elif follow_up is FollowUp.CHECK_DEAD and (session.dead_check is None or session.dead_check.done()):
            session.dead_check = self.service.spawn(self._check_dead(session))

    async def _lost_commit(self, session: Session, seq: int, error: Exception) -> None:
        """The commit of ``seq`` got no answer: learn from Redis whether it is stored (:meth:`resolve`), then
        acknowledge it with the ``position`` of what Redis holds as ``seq``. Raises :class:`ServiceError`
        ``internal`` when it is not stored and fenced off, and as :meth:`resolve`."""
        log.warning("the commit of %s/%s seq %d got no answer from Redis: asking Redis", session.code, session.name,
                    seq, exc_info=error)
        await self.resolve(session, seq)
        if session.last_seq >= seq and session.player is not None:
            session.push(encode(session.player.acknowledged(seq, self.service.clock.now_ms())))
            return
        raise ServiceError("internal", f"Redis failed while storing seq {seq}; it is not stored and nothing changed: "
                                       f"send it again")

    async def resolve(self, session: Session, seq: int) -> None:
        """Make the session what Redis holds, after the commit of ``seq`` (0: an earlier one) lost its answer.

        One :meth:`Commits.fence <server.store.commits.Commits.fence>` gives the connection a new epoch, so the lost
        commit cannot land later, and reads the player's record and log to rebuild the game. Tried for
        ``FTR_RESOLVE_S`` seconds. Raises :class:`ServiceError` ``unknown_outcome`` after that, leaving the
        session :attr:`Session.unsure`; ``replaced`` when another connection took over the player;
        ``no_match`` (:class:`~server.core.player.MatchGone`) when Redis lost the match's keys."""
        session.unsure = True
        session.fence = session.fence or uuid.uuid4().hex
        try:
            fenced = await self.store.commits.fence(session.code, session.name, session.epoch, session.fence,
                                                    self.service.settings.resolve_s)
        except MatchKeysGone:
            session.unsure = False
            raise MatchGone() from None
        except Exception:  # whatever failed, Redis did not say what it holds
            log.warning("could not learn %s/%s's game from Redis", session.code, session.name, exc_info=True)
            which = f"seq {seq}" if seq else "your last play or resign"
            raise ServiceError("unknown_outcome", f"Redis did not answer in time: whether {which} was stored is not "
                                                  f"known; send the same frame again (a retry is acknowledged as "
                                                  f"what was stored)") from None
        session.fence = ""
        if fenced is None:
            session.unsure = False
            raise ServiceError("replaced", REPLACED)
        record, commands, deal, settings = fenced
        before = session.player
        assert before is not None
        session.adopt(PlayerGame.restored(session.name, deal, settings, commands, record.status, record.seq,
                                          before.start_at_ms, before.deadline_ms, record.hints, record.last_hint,
                                          record.last_found_ms, record.stuck))
        session.epoch = record.epoch
        session.unsure = False

    async def _refused_commit(self, session: Session, seq: int, result: CommitStatus) -> None:
        """Redis did not store command ``seq``; ``COMMIT`` answered ``result``. The session takes what Redis
        holds; a ``dup`` is acknowledged again, the rest raise :func:`server.core.player.commit_refusal`'s
        :class:`ServiceError`."""
        meta = await self.store.matches.meta(session.code) if result is not CommitStatus.GONE else None
        if meta is not None:
            await self._load(session, meta)
        error = commit_refusal(result, seq, session.last_seq)
        if error is not None:
            raise error
        assert session.player is not None
        session.push(encode(session.player.acknowledged(seq, self.service.clock.now_ms())))

    # ------------------------------------------------------------ the deal

    async def _load(self, session: Session, meta: MatchMeta) -> int:
        """The session adopts the player's game as Redis holds it (the deal plus the move log, event-sourced);
        returns the player's stored undo count."""
        commands = await self.store.players.log(session.code, session.name)
        record = await self.store.players.get(session.code, session.name)
        assert record is not None
        session.adopt(PlayerGame.restored(session.name, meta.deal, meta.settings, commands, record.status,
                                          record.seq, meta.start_at_ms, meta.deadline_ms, record.hints,
                                          record.last_hint, record.last_found_ms, record.stuck))
        return record.undos

    async def open_game(self, session: Session, meta: MatchMeta) -> None:
        """Rebuild the player's game from the deal and the move log; send ``started``, then the ``ghost`` the
        match races against, if any (:mod:`server.ghosts`)."""
        async with session.lock:
            undos = await self._load(session, meta)
            session.unsure = False
            assert session.player is not None
            ghost = await self.store.matches.ghost(session.code)
            session.push(encode(session.player.started(undos)))
            if ghost is not None:
                session.push(ghost)

    async def open_game_logged(self, session: Session, meta: MatchMeta) -> None:
        """:meth:`open_game` for the start event: a failure is logged and the player told to resume."""
        try:
            await self.open_game(session, meta)
        except Exception:
            log.exception("could not open %s's game in %s", session.name, session.code)
            session.push(encode(m.Error("internal", "the deal could not be sent: resume to get it")))

    # ------------------------------------------------------------ dead games

    async def _check_dead(self, session: Session) -> None:
        """Dead-game check in a worker process (never in the event loop).

        At most one check per player runs at a time; when the player moved
        during a check, the newest position is checked next.
        """
        loop = asyncio.get_running_loop()
        while True:
            player = session.player
            if player is None or player.status != PlayerStatus.PLAYING:
                return
            game, moves = player.game, player.game.moves
            # Wait for a pause: a player who is still moving is not stuck, and one check per pause instead
            # of one per move keeps the worker hand-off (pickling, the pool's manager thread) off the hot path.
            await asyncio.sleep(DEAD_CHECK_QUIET_S)
            if session.game is not game or session.status != PlayerStatus.PLAYING:
                continue
            if not needs_dead_check(game, game.legal_moves()):
                return
            with self.service.metrics.solver_job("dead_check") as timing:
                verdict = await loop.run_in_executor(self.service.dead_executor, is_dead, game.position, game.variant,
                                                     self.service.settings.dead_budget)
                timing.result = verdict.value
            if session.game is game:
                break
        if verdict is Verdict.DEAD:
            await self.end_dead(session, game, moves)

    async def end_dead(self, session: Session, game: Game, moves: int) -> None:
        """The game ``game`` at ``moves`` moves is dead (:meth:`server.core.player.PlayerGame.propose_dead_end`):
        the ``stuck`` row marks the player stuck while an undo is left, else the ``game_dead`` row ends it."""
        async with session.lock:
            player = session.player
            if player is None or player.game is not game or session.unsure:
                return  # the player moved on meanwhile (or the game here may not be Redis's)
            answer = player.propose_dead_end(moves, self.service.clock.now_ms())
            if answer is None:
                return
            write = answer.write
            if isinstance(write, StuckWrite):
                if await self.service.effects.run(Step(session.code, STUCK_ROW, session=session, write=write)):
                    session.adopt(answer.next)
                    session.push(answer.frame)
                return  # not written: the player moved on, or another connection took over (it checks again)
            assert isinstance(write, EndWrite)
            step = Step(session.code, GAME_DEAD_ROW, session=session,
                        ends=[GameEnd(session.name, write.status, write.time_ms, encode(write.event))])
            if not await self.service.effects.run(step):
                return
            _, active = step.answer
            session.adopt(answer.next)
            session.push(answer.frame)
        if active == 0:
            await self.service.ending.end_match(session.code)
        else:
            await self.service.bots.people_ended(session.code)
