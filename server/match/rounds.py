"""Rounds and rematch: the next round of an ended match, and the series of rounds.

``rematch`` (:class:`protocol.messages.Rematch`, after the results) puts the player in the next round: the same
settings, a new deal (never the host's seed or deal of round 1 again), a new nonce and commitment; the player
is in it and ready, and the first one in hosts it (one host token, decided in Redis). The round starts when
every player of the round before is in and ready, or once the rematch window (``FTR_REMATCH_WINDOW_S``) is
over with whoever is. Until then the names of the round before are kept for their players (``name_taken``).
The round before's bots are in the next round from its creation, ready (when the server has places left for
them, ``FTR_MAX_BOTS``; else the round is the people's alone): only its people are waited for.
``restart`` (:class:`protocol.messages.Restart`), alone only, ends the game and deals the same deal again as
the next round, for that player alone.

The rounds' keys are in different slots, so a rematch is a few steps (:meth:`Rounds.rematch`), each one
script on one slot and each safe to repeat (a retried frame, two processes at once, a process dying midway):
claim the next code (:data:`~server.store.scripts.CLAIM_NEXT`), create the round if absent and mark it made
(:data:`~server.store.scripts.NEXT_MADE`), add its missing timers, append it to the series, join the player
(:data:`~server.store.scripts.ROUND_JOIN`), tell the ended match's stream and publish the lobby, and answer
``next_round`` last. Only the claimer creates the round, unless it has not within :data:`CREATION_WAIT_S`.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from typing import TYPE_CHECKING, Any

import msgspec

from protocol import messages as m
from protocol.codec import decode_server, encode
from protocol.codes import new_code

from ..core.errors import ServiceError
from ..core.lifecycle import LOBBY_STATES, Event, State, Transition, decide, require, restart_refusal
from ..core.player import MatchGone, PlayerStatus
from ..core.ranking import RoundResult, SeriesStanding, series_standings
from ..engine import find_variant, format_position
from ..engine.deal import deal as deal_of
from ..names import name_key
from ..store import MatchMeta, RoundJoinStatus, token_hash
from ..store.keys import name_field
from .creation import commitment, dealt_fields
from .step import Step

if TYPE_CHECKING:
    from .context import MatchContext
    from .session import Session

CREATION_WAIT_S = 2.0
"""Seconds a process that did not claim the next round waits for its claimer to create it before creating it
itself (the claimer died between the two steps)."""


def may_start(meta: MatchMeta, names: list[str]) -> bool:
    """Whether a round after the first may start with the players ``names`` in it (all ready): every player of
    the round before is in, or its rematch window is over (meta ``window_over``). False for a first round."""
    if meta.expected is None:
        return False
    return meta.window_over or set(meta.expected) <= set(names)


def _not_joined(status: RoundJoinStatus, code: str, number: int, players: int, name: str) -> Exception:
    """The refusal of a rematch whose next round ``code`` (round ``number``) did not take the player
    (:meth:`server.store.rounds.Rounds.join` answered ``status``)."""
    if status is RoundJoinStatus.ALREADY_STARTED:
        return ServiceError("already_started", f"round {number} ({code}) has already started: watch it at "
                                               f"/watch/{code}")
    if status is RoundJoinStatus.CLOSED:
        return ServiceError("closed", f"round {number} ({code}) was closed: it did not start in time")
    if status is RoundJoinStatus.MATCH_FULL:
        return ServiceError("match_full", f"round {number} ({code}) has all its {players} players")
    if status is RoundJoinStatus.NAME_TAKEN:
        return ServiceError("name_taken", f"someone joined round {number} ({code}) as {name!r} (or a name that "
                                          f"looks the same) after its rematch window, before you asked")
    return ServiceError("no_match", "the next round no longer exists")


class Rounds:
    """The rematch and series side of a :class:`~server.matches.MatchService` (see the module docstring)."""

    def __init__(self, service: MatchContext) -> None:
        self.service = service
        self.store = service.store

    # ------------------------------------------------------------ rematch

    async def restart(self, session: Session) -> None:
        """``restart``: the player alone ends their game (``resigned`` if still playing, a stuck game too) and
        the next round starts on the same deal, answered ``next_round`` as :meth:`rematch` (which it is, with
        the deal kept). Raises :class:`~server.matches.ServiceError` as
        :func:`server.core.lifecycle.restart_refusal` says (nothing changes then), ``not_joined``, and what
        :meth:`rematch` raises."""
        if not session.code:
            raise ServiceError("not_joined", "join or resume a match first")
        code = session.code
        meta = await self.store.matches.meta(code)
        if meta is None and await self.store.matches.lost(code):
            raise MatchGone()
        state = None if meta is None else meta.state
        people = [name for name in await self.store.players.roster(code) if meta is None or meta.bot(name) is None]
        error = restart_refusal(state, len(people), bool(meta and meta.daily))
        if error is not None:
            raise error
        if state is State.PLAYING:
            if session.status == PlayerStatus.PLAYING:
                await self.service.playing.resign(session)  # the match ends with it: its only person's game
            if meta is not None and meta.bots:
                await self.service.bots.stop(code)  # its bots resign now, so the results are there for the round
            await self.service.ending.finalize_if_ended(code)  # ended already: a retried restart's lost answer
        await self.rematch(session, same_deal=True)

    async def rematch(self, session: Session, same_deal: bool = False) -> None:
        """Put the session's player into the next round of its ended match; answer ``next_round``.
        ``same_deal`` (a ``restart``): that round, if this call is the first to ask for it, is dealt the ended
        match's deal again (:meth:`_create_round`).

        Raises :class:`~server.matches.ServiceError`: ``not_joined``, ``not_finished`` (no results yet;
        nothing changes), ``malformed`` (a daily attempt has no next round), ``no_match``
        (:class:`~server.core.player.MatchGone` when Redis lost the match), and for a next
        round that is no longer open ``already_started``, ``closed``, ``match_full`` or ``name_taken``
        (after the rematch window, a friend joined it under this name first).
        """
        service = self.service
        if not session.code:
            raise ServiceError("not_joined", "join or resume a match first")
        old, name = session.code, session.name
        meta = await self.store.matches.meta(old)
        if meta is None:
            if await self.store.matches.lost(old):
                raise MatchGone()
            raise ServiceError("no_match", "the match no longer exists")
        if meta.daily:
            raise ServiceError("malformed", "a daily attempt has no rematch: one attempt per name, day and variant")
        claim = Step(old, require(meta.state, Event.REMATCH, old), meta=meta, session=session, candidate=new_code(),
                     same_deal=same_deal)
        await service.effects.run(claim)
        code, claimed, names = claim.answer
        new_meta = await self._created(old, code, meta, claimed)
        settings = new_meta.settings
        token, host_token = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        joined, hosts = await self.store.rounds.join(code, name, token_hash(token), settings.players,
                                                     service.clock.now_ms(), name_key(name), old,
                                                     token_hash(host_token))
        if joined is not RoundJoinStatus.OK and joined is not RoundJoinStatus.AGAIN:
            raise _not_joined(joined, code, new_meta.round, settings.players, name)
        # Also on a retry (AGAIN): the process that joined the player may have died before these steps,
        # and each is safe to repeat (the offer names everyone who asked so far; the start happens once).
        async with service.lobby_lock(code):
            now_meta = await self.store.matches.meta(code)
            if now_meta is not None and now_meta.state in LOBBY_STATES:
                await self.store.streams.add_event(old, encode(m.RematchOffer(old, code, names)))
                await service.public.publish_lobby(code)
                await service.lobby.start_if_all_ready(code)
        # The answer comes last: a player who has it knows every step is done (one who has not asks again).
        session.next_round = code
        window_ms = max(0, new_meta.window_end_ms - service.clock.now_ms())
        session.push(encode(m.NextRound(code, new_meta.round, token, host_token if hosts else "",
                                        window_ms)))

    async def _created(self, old: str, code: str, meta: MatchMeta, claimed: bool) -> MatchMeta:
        """The meta of round ``code`` after ended match ``old`` (meta ``meta``), created here when this call
        claimed it (or its claimer did not create it within :data:`CREATION_WAIT_S`), and in the series."""
        new_meta = await self.store.matches.meta(code)
        if new_meta is None and not claimed:
            # Made once and gone: its keys expired (a closed round is kept 10 minutes). It is not made again:
            # its players' tokens, its commitment and its place in the series were that round's.
            if meta.next_made:
                raise ServiceError("no_match", f"the next round ({code}) no longer exists")
            loop = asyncio.get_running_loop()
            deadline = loop.time() + CREATION_WAIT_S
            while new_meta is None and loop.time() < deadline:
                await asyncio.sleep(0.05)
                new_meta = await self.store.matches.meta(code)
        if new_meta is None:
            await self._create_round(old, code, meta)
            new_meta = await self.store.matches.meta(code)
            if new_meta is None:  # created and already gone: as above
                raise ServiceError("no_match", f"the next round ({code}) no longer exists")
        if not meta.next_made:
            await self.store.rounds.next_made(old)
        await self.add_missing_timers(code, new_meta)
        await self.store.rounds.series_add(new_meta.series, code)
        return new_meta

    async def add_missing_timers(self, code: str, meta: MatchMeta) -> None:
        """Add the timers round ``code`` (meta ``meta``) still needs and lacks: its lobby close, its window's
        end (until it is over) and, while its solvable deal is awaited, ``prepare``. Each instant comes from
        the meta, so whichever process adds a timer adds the same one; a timer that fired already and is
        added again (a concurrent call read the meta before) finds nothing left to do."""
        if meta.expected is None or meta.state not in LOBBY_STATES:
            return
        created = meta.created_ms
        due = {"close": created + self.service.settings.lobby_timeout_s * 1000}
        if not meta.window_over:
            due["window"] = meta.window_end_ms
        if meta.state == State.PREPARING:
            due["prepare"] = created
        await self.store.timers.add_missing(code, due)

    async def _create_round(self, old: str, code: str, meta: MatchMeta) -> None:
        """Create round ``code`` after ``old``: its settings, a new deal, nonce and commitment, and the names
        of ``old``'s players kept for them (its timers: :meth:`add_missing_timers`).

        A seed or deal the host gave round 1 is not dealt again: a new random seed (or, solvable-only, the
        pool's next deal, or ``preparing`` until the pool has one, as ``POST /matches`` does). The one exception
        is a ``restart`` (``old``'s meta ``next_same``, set with its ``next`` code): its player alone plays
        ``old``'s deal and seed again (revealed to them at ``old``'s results), with a new nonce and commitment,
        in a round of one person and ``old``'s bots, racing ``old``'s ghost if it had one; the round after it has
        the players setting of the rounds before the restart. ``old``'s bots are seated in the round
        (:meth:`server.match.creation.Creation.seat_bots`) by the call that created it; its expected players and
        kept names are ``old``'s people.
        """
        service = self.service
        now_meta = await self.store.matches.meta(old)  # next_same was set with the next code, after ``meta`` was read
        same = now_meta is not None and now_meta.next_same
        if same:  # the same deal, for the same player alone (and its bots): nobody else may join it
            # chosen_deal: its player has seen this deal (it was revealed at the round's results), and says so
            settings = msgspec.structs.replace(meta.settings, players=1 + len(meta.bots), chosen_deal=True)
        else:  # the server draws the deal; a restart's cap of one player ends with its round
            settings = msgspec.structs.replace(meta.settings, chosen_deal=False,
                                               players=await self._players_before_restarts(old, meta))
        variant = find_variant(settings.variant)
        # The bots come again (seated below, ready); the seats and names kept are the people's.
        roster = [name for name in await self.store.players.roster(old) if meta.bot(name) is None]
        now = service.clock.now_ms()
        seed: str | None
        if same:
            seed, solution, item = meta.seed, meta.solution, None
        else:
            seed, solution, item = await service.creation.draw_deal(variant.name, settings.solvable_only)
        state = State.LOBBY if seed is not None else State.PREPARING
        nonce = secrets.token_hex(16)
        window_end = now + int(service.settings.rematch_window_s * 1000)
        fields: dict[str, Any] = {
            "state": state.value, "settings": settings, "host": "", "created_ms": now, "active": 0,
            "solution": solution, "nonce": nonce, "commitment": "",
            "round": meta.round + 1, "series": meta.series or old, "prev": old,
            "expected": json.dumps(roster), "window_end_ms": window_end,
        }
        # The round before's names are kept for its players during the window (ROUND_JOIN, WINDOW_OVER).
        fields.update({name_field(name_key(name)): name for name in roster})
        if same:  # the deal as it was dealt (a seed's, or the position a host gave as its seed)
            fields.update(dealt_fields(meta.seed, nonce, meta.deal))
            ghost = await self.store.matches.ghost(old)  # the same deal: the same ghost to race (server/ghosts.py)
            if ghost is not None:
                fields["ghost"] = ghost
        elif seed is not None:
            fields.update(seed=seed, commitment=commitment(seed, nonce), deal=format_position(deal_of(seed, variant)))
        bots = meta.bots  # a restart races the same bots again, from the deal
        if bots and await service.creation.take_bot_places(code, len(bots), settings.time_limit_s, now) is not None:
            bots = []  # the server plays as many bots as it may: this round is the people's alone
        if bots:
            fields["bots"] = msgspec.json.encode(bots).decode()
        if not await self.store.matches.create(code, fields):
            await self.store.bots.free(code, len(bots))
            if item is not None:
                await self.store.pool.push(variant.name, item)  # another process created it meanwhile: back to the pool
            return
        await service.creation.seat_bots(code, bots, settings.players)

    async def _players_before_restarts(self, code: str, meta: MatchMeta) -> int:
        """The ``players`` setting of round ``code`` (meta ``meta``), or, when it was a ``restart``'s round (its
        ``prev`` has ``next_same`` and names it as ``next``), that of the round before it, and so on back: a
        restart's round is capped at one player, the series is not. A round before that is gone (its keys
        expired) ends the walk with the setting found so far."""
        players = meta.settings.players
        for _ in range(100):  # a bound against a cycle that cannot be made, not a limit of rounds
            before = await self.store.matches.meta(meta.prev) if meta.prev else None
            if before is None or not (before.next_same and before.next_round == code):
                break
            code, meta, players = meta.prev, before, before.settings.players
        return players

    async def window_over(self, code: str) -> None:
        """The ``window`` timer of round ``code``: its rematch window is over; it starts with whoever is in
        and ready (now, if all are), and the names kept for players of the round before are free."""
        meta = await self.store.matches.meta(code)
        row = None if meta is None else decide(meta.state, Event.WINDOW_OVER)
        if not isinstance(row, Transition):
            return
        async with self.service.lobby_lock(code):
            await self.service.effects.run(Step(code, row, meta=meta))

    async def leave_for_next_round(self, session: Session) -> None:
        """The session's player resumes the next round on this connection: it leaves the ended match (its
        player marked away there) and starts afresh, as a new connection would."""
        await self.service.disconnected(session)
        session.leave()

    # ------------------------------------------------------------ joining by an old code

    async def joinable(self, code: str, meta: MatchMeta) -> tuple[str, MatchMeta]:
        """The match a ``join`` naming ``code`` joins: an ended match whose next round (or the one after
        it, ...) is in its lobby sends the late friend there; any other match is itself."""
        for _ in range(100):  # a bound against a cycle that cannot be made, not a limit of rounds
            nxt = meta.next_round if meta.state == State.FINISHED else None
            if not nxt:
                break
            following = await self.store.matches.meta(nxt)
            if following is None:
                break
            code, meta = nxt, following
        await self.add_missing_timers(code, meta)  # a friend may reach a round whose creator died before them
        return code, meta

    # ------------------------------------------------------------ the series

    async def public(self, code: str, meta: MatchMeta) -> dict[str, Any]:
        """What ``GET /matches/{code}`` says of rounds: ``round``, ``next_round`` (code or None),
        ``rematch`` (names who asked for the next round) and ``series`` (its rounds' codes in order, and
        the standings over the rounds that have results: :func:`server.core.ranking.series_standings`)."""
        first = meta.series or code
        codes = await self.store.rounds.series(first) or [code]
        rounds: list[list[RoundResult]] = []
        for round_code in codes:
            frame = await self.store.matches.results(round_code)
            if frame is None:
                continue
            results = decode_server(frame)
            if isinstance(results, m.Results):
                rounds.append([RoundResult(r.name, r.rank, PlayerStatus(r.status), r.foundation, r.time_ms)
                               for r in results.ranking])
        standings: list[SeriesStanding] = series_standings(rounds)
        return {
            "round": meta.round, "next_round": meta.next_round or None,
            "rematch": meta.rematch,
            "series": {"rounds": codes, "standings": [
                {"name": s.name, "rounds_won": s.rounds_won, "foundation": s.foundation, "time_ms": s.time_ms}
                for s in standings]},
        }
