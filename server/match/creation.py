"""Creating matches (``POST /matches``), the deal of a match no one chose, and a preparing match's deal."""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import TYPE_CHECKING, Any

import msgspec

from protocol import messages as m
from protocol.codec import encode
from protocol.codes import new_code
from protocol.errors import NotationError

from ..core.bots import (
    DEFAULT_MOVES_PER_MIN,
    MAX_BOTS_PER_MATCH,
    MAX_MOVES_PER_MIN,
    MIN_MOVES_PER_MIN,
    bot_names,
)
from ..core.errors import ServiceError
from ..core.lifecycle import Event, State, TimerKind, Transition, decide
from ..dealpool import check_host_deal
from ..engine import Position, Variant, find_variant, format_position, parse_position
from ..engine.deal import deal as deal_of
from ..engine.planner import LEVELS
from ..ghosts import GhostRequest, find_ghost
from ..history import dealt_label
from ..names import name_key
from ..scheduler import QueueFull
from ..store import BotSeat, JoinStatus, token_hash
from .step import Step

if TYPE_CHECKING:
    from .context import MatchContext

OFFERED_POOL_VARIANTS = ("relaxed", "classic")
"""Variants whose solvable deals are kept ready (relaxed first: its deals are proven fastest)."""

UNDO_POLICIES = ("none", "safe", "full")
MAX_TIME_LIMIT_S = 86400
MAX_SEED = 200
BOT_LEVELS = tuple(level.name for level in LEVELS)
"""The levels a bot of ``POST /matches`` may have, weakest first (the planner's)."""


class BotRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One bot of ``POST /matches``: its planner ``level`` (server/engine/planner.py ``LEVELS``) and its pace."""

    level: str
    moves_per_min: int = DEFAULT_MOVES_PER_MIN


class CreateMatch(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Body of ``POST /matches`` (JSON). Every field has a default."""

    variant: str = "classic"
    seed: str | None = None
    deal: str | None = None
    """Position text to deal instead of a seed (RULES.md section 10: any valid position can start a game);
    the commitment is then the SHA-256 of that text, revealed at the end in place of the seed."""
    solvable_only: bool = True
    players: int = 2
    time_limit_s: int = 1800
    """Seconds each player has from the start (0 .. 86400); 0: no time limit of the host's choosing, but the
    match still ends ``FTR_UNTIMED_LIMIT_S`` (24 h) after its start (server/settings.py)."""
    autoplay: bool = True
    undo: str = "safe"
    hints: bool = False
    bots: list[BotRequest] = msgspec.field(default_factory=list)
    """Bots to race (server/match/bots.py): at most 3, and fewer than ``players``, which counts them."""
    open_boards: bool = False
    """Spectators see each player's redacted board live (a race on one screen); by default they see only
    progress until the match ends (DESIGN.md "Anti stream-sniping"). The streams are public: with open
    boards a racer can watch the others' boards, cards still hidden in the racer's own game included."""
    ghost: GhostRequest | None = None
    """A recorded game of this deal to race (:mod:`server.ghosts`); needs a ``seed`` or a ``deal``."""


def commitment(seed: str, nonce: str) -> str:
    """SHA-256 (hex) of ``nonce + seed``, published at creation; both are revealed at the end. The random
    ``nonce`` keeps a guessable seed, such as a game number, from being found by hashing guesses."""
    return hashlib.sha256((nonce + seed).encode("utf-8")).hexdigest()


def checked(request: CreateMatch, max_players: int) -> tuple[Variant, Position | None]:
    """The variant of ``request`` and the position it deals; ``None`` for a seed or the pool's deal.

    Raises :class:`ServiceError` ``malformed`` for an unknown variant, an undo policy other than
    :data:`UNDO_POLICIES`, a player count outside ``1..max_players``, a time limit outside 0..86400 s, a seed
    of more than 200 characters, both a seed and a deal, a ghost without either, a deal that is no position of
    the variant, or a solvable deal asked of a variant whose deals are not prepared (:data:`OFFERED_POOL_VARIANTS`),
    and bots :func:`_check_bots` refuses.
    """
    try:
        variant = find_variant(request.variant)
    except NotationError as error:
        raise ServiceError("malformed", str(error)) from None
    if request.undo not in UNDO_POLICIES:
        raise ServiceError("malformed", "undo must be 'none', 'safe' or 'full'")
    if not 1 <= request.players <= max_players:
        raise ServiceError("malformed", f"players must be 1..{max_players}")
    if not 0 <= request.time_limit_s <= MAX_TIME_LIMIT_S:
        raise ServiceError("malformed", "time_limit_s must be 0 (none) .. 86400 seconds")
    if request.seed is not None and not 0 < len(request.seed) <= MAX_SEED:
        raise ServiceError("malformed", "a seed is 1..200 characters")
    if request.deal is not None and request.seed is not None:
        raise ServiceError("malformed", "give a seed or a deal, not both")
    if request.ghost is not None and request.seed is None and request.deal is None:
        raise ServiceError("malformed", "a ghost races on a deal you choose: give a seed or a deal")
    position = None
    if request.deal is not None:
        try:
            position = parse_position(request.deal, variant)
        except NotationError as error:
            raise ServiceError("malformed", f"the deal is not a valid {variant.name} position: {error}") from None
    _check_bots(request.bots, request.players)
    if request.solvable_only and request.seed is None and position is None \
            and variant.name not in OFFERED_POOL_VARIANTS:
        raise ServiceError("malformed", f"solvable deals are prepared for {' and '.join(OFFERED_POOL_VARIANTS)}; "
                                        f"for {variant.name} create the match with solvable_only false "
                                        f"(forty-thieves create --any-deal)")
    return variant, position


def _check_bots(bots: list[BotRequest], players: int) -> None:
    """Raises :class:`ServiceError` ``malformed`` for more than :data:`MAX_BOTS_PER_MATCH` bots, as many bots as
    seats or more, an unknown level or a pace outside 1..600 commands a minute."""
    if len(bots) > MAX_BOTS_PER_MATCH:
        raise ServiceError("malformed", f"a match has at most {MAX_BOTS_PER_MATCH} bots")
    if bots and len(bots) >= players:
        raise ServiceError("malformed", f"players counts the bots too: {len(bots)} bots need players of at least "
                                        f"{len(bots) + 1}, so that one seat is a person's")
    for bot in bots:
        if bot.level not in BOT_LEVELS:
            raise ServiceError("malformed", f"unknown bot level {bot.level[:20]!r}: {', '.join(BOT_LEVELS)}")
        if not MIN_MOVES_PER_MIN <= bot.moves_per_min <= MAX_MOVES_PER_MIN:
            raise ServiceError("malformed", f"a bot's moves_per_min is {MIN_MOVES_PER_MIN}..{MAX_MOVES_PER_MIN}")


def bot_seats(bots: list[BotRequest]) -> list[BotSeat]:
    """The bots of a new match with their names (:func:`server.core.bots.bot_names`)."""
    return [BotSeat(name, bot.level, bot.moves_per_min)
            for name, bot in zip(bot_names([bot.level for bot in bots]), bots, strict=True)]


def dealt_fields(seed: str, nonce: str, deal: str) -> dict[str, Any]:
    """The meta fields of a match's deal: its seed (or the position text dealt), commitment and position."""
    return {"seed": seed, "commitment": commitment(seed, nonce), "deal": deal}


class Creation:
    """``POST /matches`` and deals (see the module docstring)."""

    def __init__(self, service: MatchContext) -> None:
        self.service = service
        self.store = service.store

    async def create(self, request: CreateMatch, address: str = "?") -> dict[str, Any]:
        """Create a match for the client at ``address``: ``{code, host_token, commitment, state}``, the state
        ``lobby`` or, while its solvable deal is awaited, ``preparing``. Raises :class:`ServiceError` as
        :func:`checked`; ``internal`` for a match code that is taken; ``rate_limited`` when ``address`` has
        :data:`server.scheduler.WAITING_PER_ADDRESS` deals waiting for the solver; ``no_ghost`` for a ``ghost``
        with no such recorded game (:func:`server.ghosts.find_ghost`); ``too_many_bots`` when the server has no
        places left for the bots asked (``FTR_MAX_BOTS``), ``rate_limited`` when ``address``'s matches have them
        (``FTR_MAX_BOTS_PER_ADDRESS``). The bots are in the match, ready."""
        service = self.service
        variant, position = checked(request, service.settings.max_players)
        code = new_code()  # protocol/codes.py: no look-alike symbols, 60 bits
        host_token = secrets.token_urlsafe(24)
        seed = request.seed if position is None else format_position(position)
        chosen_deal = seed is not None
        ghost = b""
        if request.ghost is not None and seed is not None:  # before the solver: no job spent on a refusal
            dealt = format_position(position if position is not None else deal_of(seed, variant))
            ghost = encode(await find_ghost(self.store, request.ghost, variant.name,
                                            dealt_label(seed, dealt), dealt))
        solvable_only = request.solvable_only and seed is None
        solution, item, proof = "", None, None
        if request.solvable_only and seed is not None:  # the host's own deal: decided now (dealpool.decide_deal)
            try:
                with service.metrics.solver_job("host_deal") as timing:  # its wait for a worker included
                    verdict, moves, reason = await check_host_deal(service.solver, address, variant.name,
                                                                   request.seed, request.deal,
                                                                   pure=service.settings.pure_solver)
                    # No worker, no search: the "unknown" is no decision, and is not timed as one.
                    timing.result = verdict if service.solver.executor is not None else None
            except QueueFull as full:
                raise ServiceError("rate_limited", f"{full.waiting} deals from this address are already waiting "
                                                   "for the solver: wait for their answers, or create the match "
                                                   "with solvable_only false") from None
            if verdict == "unsolvable":
                raise ServiceError("unsolvable", f"that {variant.name} deal is proven unsolvable ({reason}): choose "
                                                 "another, or create the match with solvable_only false to play it")
            solution = json.dumps(moves) if verdict == "solved" else ""  # kept as a pool deal's proof is
            proof = {"solvable": verdict, "solvable_reason": reason if verdict != "solved" else ""}
        if seed is None:
            seed, solution, item = await self.draw_deal(variant.name, solvable_only)
        state = State.LOBBY if seed is not None else State.PREPARING
        # A seed or deal the host chose is dealt as given and its settings say solvable_only false (the next
        # rounds then draw any deal, as before); with solvable-only asked, the answer says what was proven.
        settings = m.Settings(variant.name, solvable_only, request.players, request.time_limit_s,
                              request.autoplay, request.undo, request.hints, request.open_boards, chosen_deal)
        nonce = secrets.token_hex(16)
        now = service.clock.now_ms()
        fields: dict[str, Any] = {"state": state.value, "settings": settings, "host": token_hash(host_token),
                                  "created_ms": now, "active": 0, "solution": solution, "nonce": nonce,
                                  "commitment": ""}  # set with the deal once the pool delivers one (prepare)
        if seed is not None:
            deal = format_position(position if position is not None else deal_of(seed, variant))
            fields.update(dealt_fields(seed, nonce, deal))
            if ghost:
                fields["ghost"] = ghost  # kept encoded: every player is sent these bytes as they are
        bots = bot_seats(request.bots)
        if bots:
            fields["bots"] = msgspec.json.encode(bots).decode()
            refused = await self.take_bot_places(code, len(bots), request.time_limit_s, now, address)
            if refused is not None:
                if item is not None:
                    await self.store.pool.push(variant.name, item)
                if refused == "owner":
                    raise ServiceError("rate_limited", f"matches created from this address have "
                                                       f"{service.settings.max_bots_per_address} bots at most at once: "
                                                       "start one of them, or wait for a lobby nobody starts to "
                                                       f"close ({service.settings.lobby_timeout_s} s after it opened)")
                raise ServiceError("too_many_bots", f"the server plays {service.settings.max_bots} bots at most at "
                                                    "once: create the match without bots, or try again later")
        if not await self.store.matches.create(code, fields):
            if item is not None:  # the pool's deal is not used up by a match that was not made
                await self.store.pool.push(variant.name, item)
            await self.store.bots.free(code, len(bots))
            raise ServiceError("internal", "match code collision: create the match again")
        await self.seat_bots(code, bots, request.players)
        if state is State.PREPARING:
            await self.store.timers.add(code, TimerKind.PREPARE, now)
        await self.store.timers.add(code, TimerKind.CLOSE, now + service.settings.lobby_timeout_s * 1000)
        created = {"code": code, "host_token": host_token, "commitment": fields["commitment"], "state": state.value}
        return created | proof if proof else created

    async def take_bot_places(self, code: str, count: int, time_limit_s: int, now_ms: int,
                              address: str = "") -> str | None:
        """Places for ``count`` bots of new match ``code`` among the server's ``FTR_MAX_BOTS`` and, for a match
        a client at ``address`` creates, among that address's ``FTR_MAX_BOTS_PER_ADDRESS``, held at the latest
        until the match has surely ended (its lobby timeout, countdown and time limit past). ``None`` when
        taken, else the bound that refused (:meth:`server.store.bots.BotPlaces.take`)."""
        settings = self.service.settings
        limit_s = time_limit_s or settings.untimed_limit_s or MAX_TIME_LIMIT_S
        until = now_ms + int((settings.lobby_timeout_s + settings.countdown_s + limit_s + 60) * 1000)
        owner = hashlib.sha256(address.encode()).hexdigest()[:16] if address else ""
        return await self.store.bots.take(code, count, until, now_ms, settings.max_bots, owner,
                                          settings.max_bots_per_address)

    async def seat_bots(self, code: str, bots: list[BotSeat], players: int) -> None:
        """Join the ``bots`` of match ``code`` (``players`` seats), each ready at once, its token thrown away:
        no client can speak for a bot. Their names are then taken in the match. A bot whose seat was taken
        first (a rematch round is joinable as soon as it exists: a person may have joined under a bot's name) is
        struck from the match's bots, so no person's game is ever played as a bot's."""
        seated = []
        for bot in bots:
            status, _ = await self.store.players.join(code, bot.name, token_hash(secrets.token_urlsafe(24)), players,
                                                      self.service.clock.now_ms(), name_key(bot.name))
            if status is JoinStatus.OK:
                await self.store.players.set_ready(code, bot.name)
                seated.append(bot)
        if len(seated) < len(bots):
            await self.store.matches.set_meta(code, bots=msgspec.json.encode(seated).decode())

    async def draw_deal(self, variant: str, solvable_only: bool) -> tuple[str | None, str, bytes | None]:
        """The deal of a new match or round no one chose: ``(seed, solution, pool_item)``.

        ``solvable_only``: the pool's next deal of ``variant``, its proof as JSON text of the commands, and the
        pool item to push back if the match is not made; ``(None, "", None)`` when the pool is empty.
        Otherwise a random seed of 128 bits and no proof.
        """
        if not solvable_only:
            return secrets.token_hex(16), "", None
        item = await self.store.pool.pop(variant)
        if item is None:
            return None, "", None
        seed, moves = msgspec.msgpack.decode(item)
        return seed, json.dumps(moves), item

    async def prepare(self, code: str) -> bool:
        """The ``prepare`` timer: a preparing match's solvable deal from the pool, then the ``deal_found`` row.
        False when the pool is empty (the timer is tried again); True when done or the match moved on."""
        meta = await self.store.matches.meta(code)
        row = None if meta is None else decide(meta.state, Event.DEAL_FOUND)
        if meta is None or not isinstance(row, Transition):
            return True
        variant = find_variant(meta.settings.variant)
        item = await self.store.pool.pop(variant.name)
        if item is None:
            return False
        seed, moves = msgspec.msgpack.decode(item)
        dealt = dealt_fields(seed, meta.nonce, format_position(deal_of(seed, variant)))
        await self.store.matches.set_meta(code, **dealt, solution=json.dumps(moves))
        await self.service.effects.run(Step(code, row, meta=meta))
        return True
