"""The match service: lifecycle, commands, timers and fan-out.

One :class:`MatchService` per server process. It holds no match state of
its own beyond caches: Redis (:mod:`server.store`) is the truth, so any
process can serve any player, and a restarted process loses nothing.

Lifecycle: ``preparing`` (waiting for a solvable deal) -> ``lobby`` ->
``countdown`` -> ``playing`` -> ``finished``. Pure decisions (ranking) live
in :mod:`server.ranking`; the WebSocket adapter is :mod:`server.play`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import secrets
import time
import uuid
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

import msgspec

from protocol import messages as m
from protocol.codec import encode
from protocol.codes import new_code
from protocol.errors import NotationError

from .dealpool import check_host_deal
from .engine import Game, IllegalCommandError, find_variant, format_position, parse_position
from .engine.dead import Verdict, is_dead, stock_exhausted
from .engine.deal import deal as deal_of
from .engine.hint import hint
from .engine.view import redact
from .names import name_key, name_problem
from .ranking import Standing, rank
from .rounds import Rounds, may_start
from .settings import Settings
from .store import SPECTATOR_KINDS, PlayerRecord, Store, follow_streams, token_hash
from .views import legal_message, view_message

log = logging.getLogger("forty_thieves.matches")

DEAD_CHECK_QUIET_S = 0.25
"""Seconds a player's position must stay unchanged before the solver is asked whether it is dead."""

READER_PAUSE_S = 0.010
"""Pause of the stream reader after a read that returned events (seconds): other players' progress
reaches a player up to this much later, a player's own reply not at all. Measured (server_bench, 60 paced
players): 2 ms -> 10 ms cut the server's CPU per move from 1,272 to 1,046 us (fewer XREAD calls)."""

OFFERED_POOL_VARIANTS = ("relaxed", "classic")
"""Variants whose solvable deals are kept ready (relaxed first: its deals are proven fastest)."""


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
    open_boards: bool = False
    """Spectators see each player's redacted board live (a race on one screen); by default they see only
    progress until the match ends (DESIGN.md "Anti stream-sniping"). The streams are public: with open
    boards a racer can watch the others' boards, cards still hidden in the racer's own game included."""


class ServiceError(Exception):
    """A refusal with a stable ``code`` (see ``protocol.messages.ERROR_CODES``) and a message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Clock:
    """Milliseconds on Redis's clock (``TIME``), read locally with a measured offset.

    ``shift_ms`` (``FTR_CLOCK_OFFSET_MS``, tests and demos only) moves the
    whole server's clock, e.g. to just before midnight UTC for the daily
    challenge; every process of one deployment must use the same value.
    """

    def __init__(self, shift_ms: int = 0) -> None:
        self.offset_ms = float(shift_ms)
        self.shift_ms = shift_ms

    async def sync(self, store: Store) -> None:
        before = time.time() * 1000
        redis_ms = await store.time_ms()
        after = time.time() * 1000
        self.offset_ms = redis_ms - (before + after) / 2 + self.shift_ms

    def now_ms(self) -> int:
        """Now on the shared clock (Redis ``TIME`` plus ``FTR_CLOCK_OFFSET_MS``), in ms since the epoch."""
        return int(time.time() * 1000 + self.offset_ms)


@dataclass(eq=False)
class Session:
    """One live player connection in this process (its socket's writer drains :attr:`queue`)."""

    code: str = ""
    name: str = ""
    epoch: int = -1
    game: Game | None = None
    last_seq: int = 0
    status: str = "lobby"
    start_at_ms: int = 0
    undos: int = 0
    hints: int = 0
    hints_allowed: bool = False
    open_boards: bool = False
    last_found_ms: int = 0
    dead_check: asyncio.Task[Any] | None = None
    queue: asyncio.Queue[bytes | None] = field(default_factory=lambda: asyncio.Queue(maxsize=512))
    last_hint: str = ""
    """The answer to the player's last hint (hint number :attr:`hints`), for a retried hint frame."""
    deadline_ms: int = 0
    next_round: str = ""
    """The code of the next round a ``rematch`` put this player in: ``resume`` may go there on this connection."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    commands: list[tuple[str, int]] = field(default_factory=list)
    """The player's move log as Redis holds it: (command, ms from the start) per accepted ``play``, so
    ``commands[seq - 1]`` is the command of ``seq`` (a ``resign`` is the one seq after them)."""
    unsure: bool = False
    """A commit's outcome could not be learnt from Redis: the game here may differ from Redis's, so the next
    numbered frame first reloads it (:meth:`MatchService._resolve`)."""
    fence: str = ""
    """The nonce of this connection's unanswered :data:`server.store.FENCE` (``""``: none)."""

    close_with: tuple[int, str] = (1000, "")
    closing: bool = False

    def push(self, frame: bytes) -> bool:
        """Queue a frame for the writer; False when the queue is full (a stuck reader)."""
        try:
            self.queue.put_nowait(frame)
            return True
        except asyncio.QueueFull:
            return False

    def close(self, code: int, reason: str) -> None:
        """Have the writer close the socket with ``code`` after what is queued (or at once when full).

        The first close wins: a later one (the endpoint's own goodbye) does not change the code.
        """
        if self.closing:
            return
        self.closing = True
        self.close_with = (code, reason)
        if not self.push(None):  # type: ignore[arg-type]
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(None)


WATCHER_QUEUE = 1024
"""Default of ``Settings.watcher_queue``: events a spectator may fall behind by before it is dropped."""


class Watcher:
    """One spectator connection in this process: a bounded queue of ``(stream id, frame)``.

    A watcher that falls ``limit`` events behind is dropped: its queue gets
    ``None`` and nothing more (it can resume from its last id); players are
    never slowed down.
    """

    def __init__(self, limit: int = WATCHER_QUEUE) -> None:
        self.limit = max(1, limit)
        self.queue: asyncio.Queue[tuple[str, bytes] | None] = asyncio.Queue(maxsize=self.limit + 1)
        self.dropped = False
        self.closed = False

    def push(self, entry_id: str, frame: bytes) -> None:
        """Queue one event (stream id, msgpack frame); past ``limit`` queued the watcher is dropped instead."""
        if self.dropped or self.closed:
            return
        if self.queue.qsize() >= self.limit:
            self.dropped = True
            self.queue.put_nowait(None)
            return
        self.queue.put_nowait((entry_id, frame))

    def close(self) -> None:
        """The spectator's connection ended: whatever waits on the queue gets ``None`` with ``closed`` set
        (so a sender that missed its cancellation still stops), and nothing more is queued."""
        if self.closed:
            return
        self.closed = True
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(None)


def _progress_record(session: Session, game: Game, status: str, time_ms: int) -> dict[str, Any]:
    """The player's stored progress after a command (times in ms from the start)."""
    return {"moves": game.moves, "undos": game.undos, "hints": session.hints,
            "foundation": game.position.foundation_cards, "status": status, "time_ms": time_ms,
            "last_found_ms": session.last_found_ms}


def _needs_dead_check(game: Game, legal: list[Any]) -> bool:
    """Whether the solver must say if ``game`` is dead (RULES.md section 5): the stock is exhausted, some
    command is legal (none at all is dead by itself), no card can go up now (that is alive), and every
    card is face up (a verdict that depended on face-down cards would reveal them)."""
    if not legal or not stock_exhausted(game.position, game.variant) or any(game.position.hidden):
        return False
    return not any(move.command.kind == "finish"
                   or (move.command.target is not None and move.command.target.kind == "foundation")
                   for move in legal)


def _initial_game(meta: dict[str, str], settings: m.Settings) -> Game:
    """A match's game before any command: its deal (meta ``deal``) after the auto-play that comes with it."""
    variant = find_variant(settings.variant)
    return Game(parse_position(meta["deal"], variant), variant, autoplay=settings.autoplay, undo=settings.undo)


FINALIZE_GRACE_MS = 2000
"""Ms after a game's end at which the ``finalize`` timer fires, should the process that ended the last game not
have published the results by then (it died, or Redis failed it)."""

LOBBY_EVENT_TRIES = 5
"""Times :meth:`MatchService.publish_lobby` reads the lobby again when it changed before its event was written."""


def _lobby(code: str, meta: dict[str, str], players: list[PlayerRecord]) -> m.Lobby:
    """The ``lobby`` frame of match ``code`` from its meta hash and its players (join order)."""
    return m.Lobby(match=code, state=meta["state"],  # type: ignore[arg-type]
                   players=[m.PlayerInfo(p.name, p.ready, p.connected) for p in players],
                   settings=msgspec.json.decode(meta["settings"], type=m.Settings),
                   commitment=meta.get("commitment", ""))


def _replayed(deal: str, settings: m.Settings, commands: list[tuple[str, int]]) -> Game:
    """A player's game rebuilt from the match's ``deal`` (position text) and its move log ``commands``."""
    variant = find_variant(settings.variant)
    game = Game(parse_position(deal, variant), variant, autoplay=settings.autoplay, undo=settings.undo)
    for command, _ in commands:
        game.play(command)
    return game


def _is_retry(seq: int, last: int, sequence: str) -> bool:
    """Check a frame's ``seq`` against ``last``, the last number accepted in its sequence (``sequence`` names it
    for the message: ``"play or resign"``, or ``"hint"``; each sequence counts 1, 2, 3, ... with no gap).

    Returns True for a retry (``seq <= last``: that frame was accepted, so it is acknowledged again and never
    applied twice) and False for the next frame (``seq == last + 1``). Raises :class:`ServiceError`
    ``malformed`` for ``seq < 1`` and ``seq_gap`` for ``seq > last + 1`` (a number was skipped: the frame is
    not applied, does not use up its number, and the message names the one expected).
    """
    if seq < 1:
        raise ServiceError("malformed", "seq numbers a player's commands from 1")
    if seq > last + 1:
        raise _seq_gap(seq, last, sequence)
    return seq <= last


def _seq_gap(seq: int, last: int, sequence: str) -> ServiceError:
    """The ``seq_gap`` refusal of frame ``seq`` when ``last`` was the last number accepted (see :func:`_is_retry`)."""
    return ServiceError("seq_gap", f"seq {seq} skips ahead: the next {sequence} must be seq {last + 1} (the last "
                                   f"accepted was {last}); nothing was applied")


def _too_late(code: str, state: str | None) -> ServiceError:
    """The ``already_started`` refusal of ``join``, ``ready`` or ``start`` once match ``code`` has left its lobby
    (``state``): a finished match says it has ended and where its results are, not that it has started."""
    if state == "finished":
        return ServiceError("already_started", f"match {code} has ended: its results are at /matches/{code}/results")
    return ServiceError("already_started", "the match has already started")


def commitment(seed: str, nonce: str) -> str:
    """SHA-256 (hex) of ``nonce + seed``, published at creation; both are revealed at the end.

    The random ``nonce`` (32 hex digits) keeps a guessable seed (a game
    number the host picked) from being found by hashing guesses.
    """
    return hashlib.sha256((nonce + seed).encode("utf-8")).hexdigest()


class MatchService:
    """Everything a process does for matches; see the module docstring."""

    def __init__(self, store: Store, settings: Settings, executor: Executor | None,
                 dead_executor: Executor | None = None) -> None:
        self.store = store
        self.settings = settings
        self.executor = executor
        self.dead_executor = dead_executor or executor
        self.clock = Clock(settings.clock_offset_ms)
        self.daily: Any = None
        """The :class:`server.daily.DailyService` when the daily challenge runs (it hooks start and end)."""
        self.process_id = uuid.uuid4().hex[:12]
        self.local: dict[str, set[Session]] = {}
        self.stream_ids: dict[str, str] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stopping = False
        """True once :meth:`stop_background` has begun: supervised loops are not restarted any more."""
        self._lobby_locks: dict[str, asyncio.Lock] = {}
        self.watchers: dict[str, set[Watcher]] = {}
        self._wakeup = asyncio.Event()
        self.rounds = Rounds(self)
        """Rematch and the series of rounds (:mod:`server.rounds`)."""

    # ------------------------------------------------------------ background tasks

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def run_forever(self, coro_factory: Any, name: str) -> None:
        """Supervise a loop: log and restart it when it fails (not once :meth:`stop_background` has begun)."""
        while not self._stopping:
            try:
                await coro_factory()
            except asyncio.CancelledError:
                raise
            except Exception:
                if self._stopping:  # a cancellation that surfaced as another error (a Redis read's timeout)
                    return
                log.exception("%s failed; restarting in 0.5 s", name)
                await asyncio.sleep(0.5)

    async def start_background(self) -> None:
        await self.clock.sync(self.store)
        self.spawn(self.run_forever(self._reader, "event reader"))
        self.spawn(self.run_forever(self._timers, "timers"))
        self.spawn(self.run_forever(self._clock_sync, "clock sync"))

    async def stop_background(self) -> None:
        """Cancel the background tasks and wait until they have ended.

        Cancelled again every second: a cancellation can be swallowed on the way (it surfaced as a Redis
        timeout error, the supervisor restarted the loop, and a one-shot cancel left the stop waiting for ever).
        """
        self._stopping = True
        while self._tasks:
            for task in list(self._tasks):
                task.cancel()
            await asyncio.wait(list(self._tasks), timeout=1.0)

    async def _clock_sync(self) -> None:
        while True:
            await asyncio.sleep(30)
            await self.clock.sync(self.store)

    # ------------------------------------------------------------ creating matches

    async def create(self, request: CreateMatch) -> dict[str, Any]:
        """Create a match; returns its code, the host token and the seed's commitment.

        Raises :class:`ServiceError` for a bad request (unknown variant, bad
        undo policy, player count or time limit out of range).
        """
        try:
            variant = find_variant(request.variant)
        except NotationError as error:
            raise ServiceError("malformed", str(error)) from None
        if request.undo not in ("none", "safe", "full"):
            raise ServiceError("malformed", "undo must be 'none', 'safe' or 'full'")
        if not 1 <= request.players <= self.settings.max_players:
            raise ServiceError("malformed", f"players must be 1..{self.settings.max_players}")
        if not 0 <= request.time_limit_s <= 86400:
            raise ServiceError("malformed", "time_limit_s must be 0 (none) .. 86400 seconds")
        if request.seed is not None and not 0 < len(request.seed) <= 200:
            raise ServiceError("malformed", "a seed is 1..200 characters")
        if request.deal is not None and request.seed is not None:
            raise ServiceError("malformed", "give a seed or a deal, not both")
        deal_position = None
        if request.deal is not None:
            try:
                deal_position = parse_position(request.deal, variant)
            except NotationError as error:
                raise ServiceError("malformed", f"the deal is not a valid {variant.name} position: {error}") from None
        code = new_code()  # protocol/codes.py: no look-alike symbols, 60 bits
        host_token = secrets.token_urlsafe(24)
        seed = request.seed if deal_position is None else format_position(deal_position)
        solution, item, proof = "", None, None
        solvable_only = request.solvable_only and seed is None
        if request.solvable_only and seed is not None:  # the host's own deal: decided now (dealpool.decide_deal)
            verdict, moves, reason = await check_host_deal(self.executor, variant.name, request.seed, request.deal)
            if verdict == "unsolvable":
                raise ServiceError("unsolvable", f"that {variant.name} deal is proven unsolvable ({reason}): choose "
                                                 "another, or create the match with solvable_only false to play it")
            solution = json.dumps(moves) if verdict == "solved" else ""  # kept as a pool deal's proof is
            proof = {"solvable": verdict, "solvable_reason": reason if verdict != "solved" else ""}
        elif solvable_only and variant.name not in OFFERED_POOL_VARIANTS:
            raise ServiceError("malformed", f"solvable deals are prepared for {' and '.join(OFFERED_POOL_VARIANTS)}; "
                                            f"for {variant.name} create the match with solvable_only false (forty-thieves create --any-deal)")
        if seed is None:
            seed, solution, item = await self.draw_deal(variant.name, solvable_only)
        state = "lobby" if seed is not None else "preparing"
        # A seed or deal the host chose is dealt as given and its settings say solvable_only false (the next
        # rounds then draw any deal, as before); with solvable-only asked, the answer says what was proven.
        settings = m.Settings(variant.name, solvable_only, request.players, request.time_limit_s,
                              request.autoplay, request.undo, request.hints, request.open_boards)
        nonce = secrets.token_hex(16)
        fields: dict[str, Any] = {
            "state": state, "settings": msgspec.json.encode(settings).decode(), "host": token_hash(host_token),
            "created_ms": self.clock.now_ms(), "active": 0, "solution": solution, "nonce": nonce,
        }
        if deal_position is not None:
            fields.update(seed=seed, commitment=commitment(seed, nonce), deal=format_position(deal_position))
        elif seed is not None:
            fields.update(seed=seed, commitment=commitment(seed, nonce), deal=format_position(deal_of(seed, variant)))
        else:
            fields.update(commitment="")  # set with the deal once the pool delivers one (_prepare)
        if not await self.store.create_match(code, fields):
            if item is not None:  # the pool's deal is not used up by a match that was not made
                await self.store.pool_push(variant.name, item)
            raise ServiceError("internal", "match code collision: create the match again")
        if state == "preparing":
            await self.store.add_timer(code, "prepare", self.clock.now_ms())
        await self.store.add_timer(code, "close", self.clock.now_ms() + self.settings.lobby_timeout_s * 1000)
        meta = await self.store.meta(code)
        assert meta is not None
        created = {"code": code, "host_token": host_token, "commitment": meta.get("commitment", ""), "state": state}
        return created | proof if proof else created

    async def draw_deal(self, variant: str, solvable_only: bool) -> tuple[str | None, str, bytes | None]:
        """The deal of a new match (or round) no one chose: ``(seed, solution, pool_item)``.

        Solvable-only: the pool's next deal of ``variant`` (its seed, its proof as JSON text of the
        command list, and the pool item to push back should the match not be created), or
        ``(None, "", None)`` when the pool is empty: the match is then ``preparing`` until
        :meth:`_prepare` finds one. Otherwise a random seed of 128 bits, with no proof.
        """
        if not solvable_only:
            return secrets.token_hex(16), "", None
        item = await self.store.pool_pop(variant)
        if item is None:
            return None, "", None
        seed, moves = msgspec.msgpack.decode(item)
        return seed, json.dumps(moves), item

    async def _prepare(self, code: str) -> bool:
        """Give a preparing match a solvable deal from the pool and open its lobby.

        Runs as a timer (so another process takes over if this one dies);
        returns False when the pool is empty (the timer is tried again).
        """
        meta = await self.store.meta(code)
        if meta is None or meta["state"] != "preparing":
            return True
        variant = find_variant(msgspec.json.decode(meta["settings"], type=m.Settings).variant)
        item = await self.store.pool_pop(variant.name)
        if item is None:
            return False
        seed, moves = msgspec.msgpack.decode(item)
        await self.store.set_meta(code, seed=seed, commitment=commitment(seed, meta["nonce"]),
                                  deal=format_position(deal_of(seed, variant)), solution=json.dumps(moves))
        await self.store.transition(code, "preparing", "lobby")
        await self.publish_lobby(code)
        await self._start_if_all_ready(code)
        return True

    # ------------------------------------------------------------ public state

    async def public_state(self, code: str) -> dict[str, Any] | None:
        """What anyone may read about a match (never the seed before the end, never a board).

        ``boards_public``: spectators may see boards now (the host opened them,
        or the match ended); ``cards``: the variant's card total. (The HTTP
        answer adds the server's clock in the ``X-Server-Time-Ms`` header.)
        """
        meta = await self.store.meta(code)
        if meta is None:
            return None
        players = await self.store.players(code)
        state = meta["state"]
        settings = json.loads(meta["settings"])
        result: dict[str, Any] = {
            "code": code, "state": state, "settings": settings,
            "commitment": meta.get("commitment", ""), "start_at_ms": int(meta.get("start_at_ms", 0) or 0),
            "deadline_ms": int(meta.get("deadline_ms", 0) or 0),
            # Boards and replays: public live when the host opened the boards, otherwise once the match ended.
            # A daily attempt's board is the day's deal: never public here (the daily reveal shows it).
            "boards_public": (bool(settings.get("open_boards")) or state == "finished") and not meta.get("daily"),
            "cards": find_variant(settings["variant"]).card_total,
            "players": [{"name": p.name, "ready": p.ready, "connected": p.connected, "status": p.status,
                         "moves": p.moves, "foundation": p.foundation, "time_ms": p.time_ms} for p in players],
        }
        if state == "finished":
            result["seed"] = meta.get("seed", "")
            result["nonce"] = meta.get("nonce", "")
        result.update(await self.rounds.public(code, meta))
        return result

    async def lobby_message(self, code: str) -> m.Lobby:
        meta = await self.store.meta(code)
        assert meta is not None
        return _lobby(code, meta, await self.store.players(code))

    async def publish_lobby(self, code: str) -> None:
        """Append the lobby as Redis holds it to the match's stream, while the match is in its lobby.

        The frame is written only if nothing it shows changed since it was read (else it is read again, up to
        :data:`LOBBY_EVENT_TRIES` times; a change that keeps racing publishes its own), and never once the
        match has left its lobby: on every process the stream's lobby events follow the match's state in
        Redis, so none contradicts the countdown or a lobby event before it. Raises what redis-py raises."""
        for _ in range(LOBBY_EVENT_TRIES):
            meta = await self.store.meta(code)
            if meta is None or meta["state"] not in ("lobby", "preparing"):
                return
            players = await self.store.players(code)
            written = await self.store.add_lobby_event(code, encode(_lobby(code, meta, players)), meta["state"],
                                                       meta.get("commitment", ""), players)
            if written != "changed":
                return

    # ------------------------------------------------------------ joining

    async def join(self, session: Session, code: str, name: str) -> None:
        """Join match ``code`` in its lobby as ``name``: ``joined`` (with the new player token) to the session,
        ``lobby`` to all.

        Raises :class:`ServiceError`: ``no_match`` (none, or its keys expired: then the message says where
        its results are), ``malformed`` (the name), ``already_started`` (the match left its lobby; a finished
        one says it has ended and where its results are), ``closed``, ``name_taken``, ``match_full``.
        """
        meta = await self.store.meta(code)
        if meta is None:
            if await self.store.results(code) is not None:  # ended, its keys expired; the results are kept
                raise ServiceError("no_match", f"match {code} has ended and is no longer kept; its results are at "
                                               f"/matches/{code}/results")
            raise ServiceError("no_match", f"no match with code {code!r}")
        code, meta = await self.rounds.joinable(code, meta)  # an ended round's link joins its next round
        problem = name_problem(name)  # the daily challenge's rule too (server/names.py)
        if problem is not None:
            raise ServiceError("malformed", problem)
        token = secrets.token_urlsafe(24)
        settings = msgspec.json.decode(meta["settings"], type=m.Settings)
        status, _ = await self.store.join(code, name, token_hash(token), settings.players, self.clock.now_ms(),
                                          name_key(name))
        if status != "ok":
            if status == "already_started":
                now = await self.store.meta(code)  # it may have ended since it was read above
                raise _too_late(code, (now or meta).get("state"))
            messages = {"no_match": f"no match with code {code!r}",
                        "closed": "the match was closed: it did not start in time",
                        "name_taken": f"the name {name!r} (or one that looks the same) is already taken in this match"
                                      + (" (or kept for a player of the round before until its rematch window ends)"
                                         if "expected" in meta and not meta.get("window_over") else ""),
                        "match_full": f"the match has all its {settings.players} players"}
            raise ServiceError(status, messages[status])
        await self._attach(session, code, name, 0)
        session.push(encode(m.Joined(code, name, token)))
        async with self._lobby_lock(code):
            await self.publish_lobby(code)

    async def resume(self, session: Session, code: str, token: str) -> None:
        """Resume match ``code`` as the player whose token is ``token``: ``joined`` (a new token), the lobby, and
        the game and results as far as they go. A session in an ended match (the caller allows that only for
        the next round its ``rematch`` answered) leaves it once the token is accepted.

        Raises :class:`ServiceError` ``bad_token`` (no player of that match has it; nothing changes).
        """
        new_token = secrets.token_urlsafe(24)
        status, name, epoch = await self.store.resume(code, token_hash(token), token_hash(new_token))
        if status != "ok":
            raise ServiceError("bad_token", "that token does not belong to a player of this match")
        if session.code:  # into the next round a rematch answered: the ended match is left only now the token
            await self.rounds.leave_for_next_round(session)  # is known good (a refused one changes nothing)
        await self._attach(session, code, name, epoch)
        await self.store.add_event(code, msgspec.msgpack.encode([name, epoch]), kind="takeover")
        session.push(encode(m.Joined(code, name, new_token)))
        record = await self.store.player(code, name)
        meta = await self.store.meta(code)
        assert record is not None and meta is not None
        session.last_seq = record.seq
        session.push(encode(await self.lobby_message(code)))
        if meta["state"] == "closed":  # closed unstarted (lobby timeout, a daily attempt after its day)
            session.push(encode(m.Error("closed", "the match did not start in time and was closed")))
        elif meta["state"] == "lobby" and meta.get("daily"):  # a daily attempt starts when its player connects
            async with self._lobby_lock(code):
                await self.start_countdown(code)
        elif meta["state"] == "countdown":
            start_at = int(meta["start_at_ms"])
            session.push(encode(m.Countdown(start_at, max(0.0, (start_at - self.clock.now_ms()) / 1000))))
        elif meta["state"] in ("playing", "finished"):
            await self._open_game(session, meta)
            players = await self.store.players(code)
            for other in players:  # what the player missed while away
                if other.name != name:
                    session.push(encode(m.Progress(other.name, other.moves, other.foundation, other.status,
                                                   other.time_ms)))
            if meta["state"] == "playing" and not any(p.status == "playing" for p in players):
                await self.finalize(code)  # every game ended, and no process finalized: the results come now
            if meta["state"] == "finished":
                results = await self.store.results(code)
                if results:
                    session.push(results)

    async def _attach(self, session: Session, code: str, name: str, epoch: int) -> None:
        for other in list(self.local.get(code, ())):
            if other.name == name and other is not session:
                await self._replace(other)
        session.code, session.name, session.epoch = code, name, epoch
        self.local.setdefault(code, set()).add(session)
        await self._follow(code)
        await self.store.set_player(code, name, connected=1)

    async def _follow(self, code: str) -> None:
        """Have this process's reader follow the match's stream from now on."""
        if code not in self.stream_ids:
            self.stream_ids[code] = await self.store.last_event_id(code)
            self._wakeup.set()

    def _unfollow_if_idle(self, code: str) -> None:
        if not self.local.get(code) and not self.watchers.get(code):
            self.local.pop(code, None)
            self.watchers.pop(code, None)
            self.stream_ids.pop(code, None)
            self._lobby_locks.pop(code, None)

    async def watch(self, code: str) -> Watcher:
        """A spectator's bounded queue of this match's public events (from now on).

        Raises :class:`ServiceError` ``too_many_watchers`` when this process already serves
        ``FTR_MAX_WATCHERS`` spectators of the match (DESIGN.md "Limits": watchers per match).
        """
        if len(self.watchers.get(code, ())) >= self.settings.max_watchers:
            raise ServiceError("too_many_watchers", f"this server already streams this match to "
                                                    f"{self.settings.max_watchers} spectators: try again later")
        watcher = Watcher(self.settings.watcher_queue)
        self.watchers.setdefault(code, set()).add(watcher)
        await self._follow(code)
        return watcher

    def unwatch(self, code: str, watcher: Watcher) -> None:
        self.watchers.get(code, set()).discard(watcher)
        self._unfollow_if_idle(code)

    async def _replace(self, old: Session) -> None:
        self.detach(old)
        old.push(encode(m.Error("replaced", "another connection with your token took over this game")))
        old.close(4000, "replaced by a newer connection with the same token")

    def detach(self, session: Session) -> None:
        sessions = self.local.get(session.code)
        if sessions is not None:
            sessions.discard(session)
            self._unfollow_if_idle(session.code)

    async def disconnected(self, session: Session) -> None:
        """The socket closed: forget it; mark the player away unless a newer connection took over."""
        if not session.code:
            return
        self.detach(session)
        record = await self.store.player(session.code, session.name)
        if record is not None and record.epoch == session.epoch:
            await self.store.set_player(session.code, session.name, connected=0)

    # ------------------------------------------------------------ lobby and start

    async def ready(self, session: Session) -> None:
        """The player is ready; start the countdown when every expected player is (lobby only).

        Raises :class:`ServiceError` ``already_started`` once the match has left the lobby.
        """
        self._require_joined(session)
        meta = await self._lobby_meta(session.code)
        if meta["state"] not in ("lobby", "preparing"):
            raise _too_late(session.code, meta["state"])
        async with self._lobby_lock(session.code):  # the lobby frame and the start decision in one order
            state = await self.store.set_ready(session.code, session.name)  # not once the countdown has begun
            if state not in ("lobby", "preparing"):
                await self._lobby_meta(session.code)  # closed, or gone
                raise _too_late(session.code, state)
            await self.publish_lobby(session.code)
            await self._start_if_all_ready(session.code)

    async def _lobby_meta(self, code: str) -> dict[str, str]:
        """The match's meta hash; raises :class:`ServiceError` ``closed`` for a match closed unstarted
        (``FTR_LOBBY_TIMEOUT_S``) and ``no_match`` once its keys have expired."""
        meta = await self.store.meta(code)
        if meta is None:
            raise ServiceError("no_match", "the match no longer exists")
        if meta["state"] == "closed":
            raise ServiceError("closed", "the match did not start in time and was closed")
        return meta

    def _lobby_lock(self, code: str) -> asyncio.Lock:
        """Serialises this process's lobby changes and start decisions of one match (the order of the lobby
        events across processes is Redis's: :meth:`publish_lobby`)."""
        lock = self._lobby_locks.get(code)
        if lock is None:
            lock = self._lobby_locks[code] = asyncio.Lock()
        return lock

    async def _start_if_all_ready(self, code: str) -> None:
        """Start the countdown when every expected player has joined and is ready (lobby only)."""
        meta = await self.store.meta(code)
        assert meta is not None
        settings = msgspec.json.decode(meta["settings"], type=m.Settings)
        players = await self.store.players(code)
        if meta["state"] == "lobby" and players and all(p.ready for p in players) and (
                len(players) >= settings.players or may_start(meta, [p.name for p in players])):
            await self.start_countdown(code)

    async def host_start(self, session: Session, host_token: str) -> None:
        self._require_joined(session)
        meta = await self._lobby_meta(session.code)
        if not secrets.compare_digest(meta.get("host", ""), token_hash(host_token)):
            raise ServiceError("not_host", "only the host may start the match (wrong host token)")
        if meta["state"] == "preparing":
            raise ServiceError("not_started", "the deal is still being prepared; start again in a moment")
        if meta["state"] != "lobby":
            raise _too_late(session.code, meta["state"])
        async with self._lobby_lock(session.code):
            await self.start_countdown(session.code)

    async def start_countdown(self, code: str) -> None:
        """Move a match from ``lobby`` to ``countdown`` (once; a concurrent call changes nothing): the deal comes
        ``FTR_COUNTDOWN_S`` seconds later by the ``start`` timer, the time limit by the ``deadline`` timer. A
        daily attempt (meta ``deadline_at_ms``) starts at once and ends with its UTC day; after that day nothing
        happens (the daily service closes it). Raises what redis-py raises when Redis fails."""
        meta = await self.store.meta(code)
        assert meta is not None
        settings = msgspec.json.decode(meta["settings"], type=m.Settings)
        # A daily attempt (server/daily.py): no countdown, and it ends with its UTC day at the latest.
        fixed_deadline = int(meta.get("deadline_at_ms", 0) or 0)
        countdown_s = 0.0 if fixed_deadline else self.settings.countdown_s
        start_at = self.clock.now_ms() + int(countdown_s * 1000)
        # "No time limit" still ends: a player who walked away must not keep the match (and its results) open
        # for ever, so it ends FTR_UNTIMED_LIMIT_S after the start (24 h by default), games still playing as
        # ``timeout`` like any time limit.
        limit_s = settings.time_limit_s or self.settings.untimed_limit_s  # FTR_UNTIMED_LIMIT_S 0: truly none
        deadline = start_at + limit_s * 1000 if limit_s > 0 else 0
        if fixed_deadline:
            if start_at >= fixed_deadline:
                return  # the day is over: the daily service closes the attempt
            deadline = fixed_deadline
        event = encode(m.Countdown(start_at, countdown_s))
        # Timers first, then the transition: a process dying in between leaves a timer that finds the match
        # still in the lobby (harmless), never a countdown without a timer. A timer of a losing concurrent
        # call is put right when it fires (see _timer_early).
        await self.store.add_timer(code, "start", start_at)
        if deadline:
            await self.store.add_timer(code, "deadline", deadline)
        moved = await self.store.transition(code, "lobby", "countdown", event, start_at_ms=start_at,
                                            deadline_ms=deadline)
        if moved and meta.get("daily") and self.daily is not None:
            foundation = _initial_game(meta, settings).position.foundation_cards
            for name in await self.store.roster(code):
                await self.daily.started(meta, name, start_at, foundation)

    async def _timer_early(self, code: str, kind: str, now: int) -> bool:
        """True (and the timer set again to the stored instant) when a ``start`` or ``deadline`` timer fired
        before the instant stored with the match (a concurrent countdown's timer overwrote it)."""
        field = {"start": "start_at_ms", "deadline": "deadline_ms"}.get(kind)
        if field is None:
            return False
        meta = await self.store.meta(code)
        due = int(meta.get(field) or 0) if meta is not None else 0
        if now >= due:
            return False
        await self.store.add_timer(code, kind, due)
        await self.store.release(f"{code} {kind}")
        return True

    # ------------------------------------------------------------ timers

    async def _timers(self) -> None:
        while True:
            now = self.clock.now_ms()
            for code, kind in await self.store.due_timers(now):
                if not await self.store.lease(f"{code} {kind}", self.process_id, 10_000):
                    continue
                if await self._timer_early(code, kind, now):
                    continue
                if kind == "prepare":
                    if not await self._prepare(code):
                        await self.store.add_timer(code, kind, now + 500)
                        await self.store.release(f"{code} {kind}")
                        continue
                elif kind == "start":
                    settings = (await self.lobby_message(code)).settings
                    game = await self._initial_game(code, settings)
                    if await self.store.start(code, encode(m.Lobby(match=code, state="playing", players=[],
                                                                  settings=settings, commitment="")),
                                              game.position.foundation_cards) \
                            and settings.open_boards:
                        await self._publish_start_boards(code, game)
                elif kind == "deadline":
                    if not await self._deadline(code):  # still in its countdown (the start timer is due too and
                        await self.store.add_timer(code, kind, now + 200)  # run elsewhere): again, or it is lost
                        await self.store.release(f"{code} {kind}")
                        continue
                elif kind == "finalize":
                    if not await self._finalize_if_ended(code):
                        # A game still plays: its end sets this timer again (maybe just now, for later).
                        await self.store.done_timer_if_due(code, kind, now)
                        continue
                elif kind == "window":
                    await self.rounds.window_over(code)
                elif kind == "close":
                    timeout = self.settings.lobby_timeout_s
                    await self.store.close_unstarted(code, encode(m.Error(
                        "closed", f"the match did not start within {timeout} s and was closed")), 600)
                await self.store.done_timer(code, kind)
            due = await self.store.next_timer_ms()
            wait = 0.1 if due is None else min(0.1, max(0.0, (due - self.clock.now_ms()) / 1000))
            await asyncio.sleep(wait)

    async def _initial_game(self, code: str, settings: m.Settings) -> Game:
        """The match's game at the start instant: its deal after the auto-play that precedes any command."""
        meta = await self.store.meta(code)
        assert meta is not None
        return _initial_game(meta, settings)

    async def _publish_start_boards(self, code: str, game: Game) -> None:
        """Open-boards matches: every player's board at the start (the redacted deal), for spectators."""
        view = view_message(game.position)
        for name in await self.store.roster(code):
            await self.store.add_event(code, encode(m.Board(name, 0, game.position.foundation_cards, "playing", 0,
                                                            view)), kind="board")

    async def _deadline(self, code: str) -> bool:
        """The time limit is over: every game still playing ends as ``timeout``, then the results. False (and
        nothing done) while the match is still in its countdown: its start timer has not run yet."""
        meta = await self.store.meta(code)
        if meta is not None and meta["state"] == "countdown":
            return False
        if meta is None or meta["state"] != "playing":
            return True
        limit_ms = int(meta["deadline_ms"]) - int(meta["start_at_ms"])
        for record in await self.store.players(code):
            if record.status == "playing":
                frame = encode(m.Finished(record.name, "timeout", limit_ms, record.moves, record.foundation))
                await self.store.end_player(code, record.name, "timeout", limit_ms, frame)
        await self.finalize(code)  # every game has ended now, whoever ended it
        return True

    # ------------------------------------------------------------ fan-out

    async def _reader(self) -> None:
        """The one reader of this process: match streams -> local sessions' and spectators' queues.

        After a read with events it pauses :data:`READER_PAUSE_S`: progress reaches other players at most
        that much later, a player's own reply not at all."""
        await follow_streams(self.stream_ids, self._wakeup, self.store.read_events, self._deliver, READER_PAUSE_S)

    async def _deliver(self, code: str, entry_id: str, fields: dict[bytes, bytes]) -> None:
        """One stream event: to this process's players of the match, and to its spectators when public."""
        await self._dispatch(code, fields)
        if fields.get(b"k", b"public") in SPECTATOR_KINDS:
            for watcher in list(self.watchers.get(code, ())):
                watcher.push(entry_id, fields[b"m"])

    async def _dispatch(self, code: str, fields: dict[bytes, bytes]) -> None:
        kind = fields.get(b"k", b"public")
        frame = fields[b"m"]
        sessions = list(self.local.get(code, ()))
        if kind == b"public":
            origin = fields.get(b"n", b"").decode()
            for session in sessions:
                if session.name != origin and not session.push(frame):
                    await self._drop_slow(session)
        elif kind == b"ended":  # the server ended a player's game (time limit, dead game): everyone hears it
            name, status = fields.get(b"n", b"").decode(), fields.get(b"s", b"").decode()
            for session in sessions:
                if session.name == name:
                    session.status = status
                if not session.push(frame):
                    await self._drop_slow(session)
        elif kind == b"start":
            meta = await self.store.meta(code)
            if meta is not None:
                for session in sessions:
                    if session.game is None:
                        self.spawn(self._open_game_logged(session, meta))
        elif kind == b"takeover":
            name, epoch = msgspec.msgpack.decode(frame)
            for session in sessions:
                if session.name == name and session.epoch < epoch:
                    await self._replace(session)

    async def _drop_slow(self, session: Session) -> None:
        """A connection whose queue is full is dropped; it can resume and catch up."""
        self.detach(session)
        session.close(4002, "too slow: the connection fell behind; resume to catch up")

    # ------------------------------------------------------------ playing

    async def _load_game(self, code: str, name: str,
                         meta: dict[str, str]) -> tuple[Game, m.Settings, list[tuple[str, int]]]:
        """A player's game, event-sourced: the match's deal plus the player's move log (also returned)."""
        settings = msgspec.json.decode(meta["settings"], type=m.Settings)
        commands = await self.store.log(code, name)
        return _replayed(meta["deal"], settings, commands), settings, commands

    async def _open_game(self, session: Session, meta: dict[str, str]) -> None:
        """Rebuild the player's game from the deal and the move log; send ``started``."""
        async with session.lock:
            game, settings, session.commands = await self._load_game(session.code, session.name, meta)
            record = await self.store.player(session.code, session.name)
            assert record is not None
            session.game = game
            session.unsure = False
            session.status = record.status
            session.last_seq = record.seq
            session.start_at_ms = int(meta["start_at_ms"])
            session.deadline_ms = int(meta.get("deadline_ms", 0) or 0)
            session.last_found_ms = record.last_found_ms
            session.hints, session.hints_allowed, session.last_hint = record.hints, settings.hints, record.last_hint
            session.open_boards = settings.open_boards
            legal = game.legal_moves() if record.status == "playing" else []
            session.push(encode(m.Started(session.start_at_ms, int(meta.get("deadline_ms", 0) or 0),
                                          view_message(game.position), legal_message(legal), game.moves,
                                          record.seq, record.status, record.hints, record.undos)))

    async def _open_game_logged(self, session: Session, meta: dict[str, str]) -> None:
        try:
            await self._open_game(session, meta)
        except Exception:
            log.exception("could not open %s's game in %s", session.name, session.code)
            session.push(encode(m.Error("internal", "the deal could not be sent: resume to get it")))

    @staticmethod
    def _started_game(session: Session) -> Game:
        """The player's game; raises :class:`ServiceError` ``not_started`` before the deal."""
        if session.game is None:
            raise ServiceError("not_started", "the match has not started yet: wait for the deal")
        return session.game

    @staticmethod
    def _require_playing(session: Session) -> None:
        """Raises :class:`ServiceError` ``game_over`` once the player's game has ended."""
        if session.status != "playing":
            raise ServiceError("game_over", f"your game has ended ({session.status})")

    def _require_joined(self, session: Session) -> None:
        if not session.code:
            raise ServiceError("not_joined", "join or resume a match first")

    async def play(self, session: Session, seq: int, command: str) -> None:
        """Validate and apply one command; answer ``position`` or ``rejected``.

        When Redis does not answer the commit (a timeout, a lost connection), its outcome is learnt from Redis
        before any answer (:meth:`_resolve`): ``position`` if Redis holds it, an ``internal`` error saying
        nothing changed if Redis does not and never will, ``unknown_outcome`` if Redis cannot tell in time.
        """
        self._require_joined(session)
        async with session.lock:
            game = await self._settled_game(session)
            if _is_retry(seq, session.last_seq, "play or resign"):  # acknowledged again, never applied twice
                session.push(encode(self._acknowledged(session, seq)))
                return
            if session.deadline_ms and self.clock.now_ms() >= session.deadline_ms:
                raise ServiceError("game_over", "the time limit is over")
            self._require_playing(session)
            now = self.clock.now_ms()
            time_ms = max(0, now - session.start_at_ms)
            before_found = game.position.foundation_cards
            saved, saved_found_ms = game.snapshot(), session.last_found_ms
            try:
                game.play(command)
            except (NotationError, IllegalCommandError) as error:
                code = getattr(error, "code", "illegal")
                session.push(encode(m.Rejected(seq, command, code, str(error))))
                return
            found = game.position.foundation_cards
            if found > before_found:
                session.last_found_ms = time_ms
            status = "won" if game.is_won else "playing"
            ends = status == "won"
            events = [encode(m.Progress(session.name, game.moves, found, status, time_ms))]
            if ends:
                events.append(encode(m.Finished(session.name, status, time_ms, game.moves, found)))
            record = _progress_record(session, game, status, time_ms)
            boards = [encode(m.Board(session.name, game.moves, found, status, time_ms, view_message(game.position)))] \
                if session.open_boards else []
            try:
                if ends:
                    await self._arm_finalize(session.code)
                result, active = await self.store.commit(session.code, session.name, session.epoch, seq,
                                                         f"{command} {time_ms}", record, ends, events, boards)
            except Exception as error:  # noqa: BLE001 - any failure: what was stored is learnt from Redis
                # Not known to be stored, so not played here: the game is what Redis says once Redis is asked.
                game.restore(saved)
                session.last_found_ms = saved_found_ms
                await self._lost_commit(session, seq, error)
                lost, active = True, -1
            else:
                lost = False
                if result != "ok":
                    await self._refused_commit(session, seq, result)
                    return
                session.last_seq = seq
                session.status = status
                session.commands.append((command, time_ms))
                legal = game.legal_moves() if status == "playing" else []
                session.push(encode(self._position(session, seq, command, time_ms, legal)))
        if lost:  # stored, its answer lost: whether it ended the last game is not known here
            if session.status != "playing":
                await self._finalize_if_ended(session.code)
        elif ends and active == 0:
            await self.end_match(session.code)
        elif status == "playing" and stock_exhausted(game.position, game.variant):
            if not legal:
                # No command at all is legal, undo included: dead by RULES.md section 5 (no sequence of legal
                # moves exists), decided from what the player sees, so it reveals nothing. No worker needed.
                await self._end_dead(session, game, game.moves)
            elif _needs_dead_check(game, legal) and (session.dead_check is None or session.dead_check.done()):
                session.dead_check = self.spawn(self._check_dead(session))

    async def _settled_game(self, session: Session) -> Game:
        """The player's game, reloaded from Redis first when a commit's outcome is still unknown (the session
        may differ from Redis: it must not accept a command on the wrong game). Raises :class:`ServiceError`
        ``not_started`` before the deal, and what :meth:`_resolve` raises."""
        self._started_game(session)
        if session.unsure:
            await self._resolve(session, 0)
        return self._started_game(session)

    async def _lost_commit(self, session: Session, seq: int, error: Exception) -> None:
        """The commit of ``seq`` got no answer: learn from Redis whether it is stored (:meth:`_resolve`), then
        acknowledge it (``position`` naming the command Redis holds as ``seq``) or raise :class:`ServiceError`
        ``internal`` (known not stored, and fenced off: nothing changed); ``unknown_outcome`` when Redis
        cannot tell in time, ``replaced`` when another connection took over."""
        log.warning("the commit of %s/%s seq %d got no answer from Redis: asking Redis", session.code, session.name,
                    seq, exc_info=error)
        await self._resolve(session, seq)
        if session.last_seq >= seq:
            session.push(encode(self._acknowledged(session, seq)))
            return
        raise ServiceError("internal", f"Redis failed while storing seq {seq}; it is not stored and nothing changed: "
                                       f"send it again")

    async def _resolve(self, session: Session, seq: int) -> None:
        """Make the session what Redis holds, after a commit whose answer was lost (``seq``; 0: an earlier one).

        One :meth:`Store.fence <server.store.Store.fence>` gives the connection a new epoch, so that the lost
        commit can no longer land later, and reads the player's record and log; the game is rebuilt from them.
        Tried for ``FTR_RESOLVE_S`` seconds; then the session stays :attr:`Session.unsure` (the next numbered
        frame tries again before anything else) and :class:`ServiceError` ``unknown_outcome`` is raised.
        Raises ``replaced`` when another connection has taken over the player."""
        session.unsure = True
        session.fence = session.fence or uuid.uuid4().hex
        try:
            fenced = await self.store.fence(session.code, session.name, session.epoch, session.fence,
                                            self.settings.resolve_s)
        except Exception:  # whatever failed, Redis did not say what it holds
            log.warning("could not learn %s/%s's game from Redis", session.code, session.name, exc_info=True)
            which = f"seq {seq}" if seq else "your last play or resign"
            raise ServiceError("unknown_outcome", f"Redis did not answer in time: whether {which} was stored is not "
                                                  f"known; send the same frame again (a retry is acknowledged as "
                                                  f"what was stored)") from None
        session.fence = ""
        if fenced is None:
            session.unsure = False
            raise ServiceError("replaced", "another connection with your token took over this game")
        record, commands, deal, settings = fenced
        session.game = _replayed(deal, msgspec.json.decode(settings, type=m.Settings), commands)
        session.commands = commands
        session.epoch, session.last_seq, session.status = record.epoch, record.seq, record.status
        session.last_found_ms, session.hints, session.last_hint = record.last_found_ms, record.hints, record.last_hint
        session.unsure = False

    def _acknowledged(self, session: Session, seq: int) -> m.Position:
        """The answer to a ``seq`` accepted already: the position right after the command Redis holds as ``seq``,
        naming it. The last one accepted: the game's position now, with its legal moves; an older one: the
        position it made, its time, and no legal moves (it is not the game's position any more)."""
        game = session.game
        assert game is not None
        if seq > len(session.commands):  # the resign that ended the game, after the last logged command
            return self._position(session, seq, "resign")
        command, time_ms = session.commands[seq - 1]
        if seq == session.last_seq:
            return self._position(session, seq, command, time_ms)
        then = Game(game.deal, game.variant, autoplay=game.autoplay, undo=game.undo_policy)
        for earlier, _ in session.commands[:seq]:
            then.play(earlier)
        return m.Position(seq, command, view_message(then.position), [], then.moves, then.undos,
                          then.position.foundation_cards, "playing", time_ms)

    def _position(self, session: Session, seq: int, command: str, time_ms: int | None = None,
                  legal: list[Any] | None = None) -> m.Position:
        """The ``position`` reply: the redacted view, legal moves (``legal`` when the caller listed them
        already), counters and the time in ms since the start."""
        game = session.game
        assert game is not None
        if legal is None:
            legal = game.legal_moves() if session.status == "playing" else []
        if time_ms is None:
            time_ms = max(0, self.clock.now_ms() - session.start_at_ms)
        return m.Position(seq, command, view_message(game.position), legal_message(legal), game.moves, game.undos,
                          game.position.foundation_cards, session.status, time_ms)

    async def _refused_commit(self, session: Session, seq: int, result: str) -> None:
        """Redis did not store command ``seq`` (COMMIT answered ``result``): the session takes what Redis holds,
        then a ``dup`` is acknowledged again (``position``); the rest raise :class:`ServiceError`: ``replaced``
        (``stale``: another connection took over), ``seq_gap`` (Redis holds fewer commands than this process
        knew of: Redis decides), ``game_over``."""
        await self._reload(session)
        if result == "stale":
            raise ServiceError("replaced", "another connection with your token took over this game")
        if result == "dup":
            session.push(encode(self._acknowledged(session, seq)))
            return
        if result == "seq_gap":
            raise _seq_gap(seq, session.last_seq, "play or resign")
        raise ServiceError("game_over", "your game has ended")

    async def _reload(self, session: Session) -> None:
        meta = await self.store.meta(session.code)
        if meta is not None:
            session.game, _, session.commands = await self._load_game(session.code, session.name, meta)
            record = await self.store.player(session.code, session.name)
            if record is not None:
                session.last_seq, session.status = record.seq, record.status

    async def _check_dead(self, session: Session) -> None:
        """Dead-game check in a worker process (never in the event loop).

        At most one check per player runs at a time; when the player moved
        during a check, the newest position is checked next.
        """
        loop = asyncio.get_running_loop()
        while True:
            game = session.game
            if game is None or session.status != "playing":
                return
            moves = game.moves
            # Wait for a pause: a player who is still moving is not stuck, and one check per pause instead
            # of one per move keeps the worker hand-off (pickling, the pool's manager thread) off the hot path.
            await asyncio.sleep(DEAD_CHECK_QUIET_S)
            if session.game is not game or game.moves != moves or session.status != "playing":
                continue
            if not _needs_dead_check(game, game.legal_moves()):
                return
            position, variant = game.position, game.variant
            verdict = await loop.run_in_executor(self.dead_executor, is_dead, position, variant, self.settings.dead_budget)
            if session.game is game and game.moves == moves:
                break
        if verdict is not Verdict.DEAD:
            return
        await self._end_dead(session, game, moves)

    async def _end_dead(self, session: Session, game: Game, moves: int) -> None:
        """The game at ``moves`` moves is dead: with an undo left the player is told (status ``dead`` in a
        ``position``); with none the player's game ends as ``dead`` (issue 4, DESIGN.md)."""
        async with session.lock:
            if session.game is not game or game.moves != moves or session.status != "playing" or session.unsure:
                return  # the player moved on meanwhile (or the game here may not be Redis's)
            time_ms = max(0, self.clock.now_ms() - session.start_at_ms)
            if game.undo_refusal() is None:
                frame = self._position(session, session.last_seq, "", time_ms)
                session.push(encode(msgspec.structs.replace(frame, status="dead")))
                return
            found = game.position.foundation_cards
            await self._arm_finalize(session.code)
            status, active = await self.store.end_player(
                session.code, session.name, "dead", time_ms,
                encode(m.Finished(session.name, "dead", time_ms, game.moves, found)))
            if status != "ok":
                return
            session.status = "dead"
            session.push(encode(self._position(session, session.last_seq, "", time_ms)))
        if active == 0:
            await self.end_match(session.code)

    async def hint(self, session: Session, seq: int) -> None:
        """A suggestion from the player's redacted view only (RULES.md section 8); counted."""
        self._require_joined(session)
        async with session.lock:
            game = await self._settled_game(session)
            if not session.hints_allowed:
                raise ServiceError("no_hints", "this match does not allow hints")
            self._require_playing(session)
            # Hints are numbered on their own: hint n is the player's n-th, so the count kept with the player is
            # the last number accepted, on any connection.
            if _is_retry(seq, session.hints, "hint"):  # the same answer again, not counted again
                session.push(encode(m.Suggestion(seq, session.last_hint, session.hints)))
                return
            suggestion = hint(redact(game.position), game.variant) or ""
            await self.store.set_player(session.code, session.name, hints=session.hints + 1, last_hint=suggestion)
            session.hints += 1
            session.last_hint = suggestion
            session.push(encode(m.Suggestion(seq, suggestion, session.hints)))

    async def resign(self, session: Session, seq: int) -> None:
        """End the player's game as ``resigned`` (numbered like ``play``; a lost commit is resolved as there)."""
        self._require_joined(session)
        async with session.lock:
            game = await self._settled_game(session)
            if _is_retry(seq, session.last_seq, "play or resign"):  # acknowledged again, never applied twice
                session.push(encode(self._acknowledged(session, seq)))
                return
            self._require_playing(session)
            time_ms = max(0, self.clock.now_ms() - session.start_at_ms)
            found = game.position.foundation_cards
            record = _progress_record(session, game, "resigned", time_ms)
            events = [encode(m.Finished(session.name, "resigned", time_ms, game.moves, found))]
            try:
                await self._arm_finalize(session.code)
                result, active = await self.store.commit(session.code, session.name, session.epoch, seq, "", record,
                                                         True, events)
            except Exception as error:  # noqa: BLE001 - any failure: what was stored is learnt from Redis
                await self._lost_commit(session, seq, error)
                result, active = "lost", -1
            if result not in ("ok", "lost"):
                await self._refused_commit(session, seq, result)
                return
            if result == "ok":
                session.last_seq, session.status = seq, "resigned"
                session.push(encode(self._position(session, seq, "resign", time_ms)))
        if active == 0:
            await self.end_match(session.code)
        elif result == "lost" and session.status != "playing":  # whether it ended the last game is not known
            await self._finalize_if_ended(session.code)

    # ------------------------------------------------------------ the end

    async def _arm_finalize(self, code: str) -> None:
        """Set the ``finalize`` timer before writing a command that may end a player's game.

        Written before the commit, not after it: whenever a process dies, once every player has ended
        there is a timer that makes any process finalize (:meth:`_finalize_if_ended`), well before the
        deadline. A timer that finds a game still playing is dropped, and the next game's end sets it again.
        (The timer set and the commit cannot be one script: the timers are global keys, a match's keys
        share its hash tag, and on a Redis Cluster every script touches one slot.)
        """
        await self.store.add_timer(code, "finalize", self.clock.now_ms() + FINALIZE_GRACE_MS)

    async def end_match(self, code: str) -> None:
        """Every player has ended: finalize now; the timer :meth:`_arm_finalize` set is the safety net (under a
        lease it finalizes if this process fails or dies midway), then removed."""
        await self.finalize(code)
        await self.store.done_timer(code, "finalize")

    async def _finalize_if_ended(self, code: str) -> bool:
        """Finalize a playing match none of whose players is still playing (whoever ended the last game, and
        whether or not its process lived to finalize); False (nothing done) while a game still plays."""
        meta = await self.store.meta(code)
        if meta is None or meta["state"] != "playing":
            return True
        if any(p.status == "playing" for p in await self.store.players(code)):
            return False
        await self.finalize(code)
        return True

    async def finalize(self, code: str) -> None:
        """Every player has ended: rank, reveal the seed, publish the results (once)."""
        meta = await self.store.meta(code)
        if meta is None or meta["state"] != "playing":
            return
        players = await self.store.players(code)
        standings = [Standing(p.name, p.status, p.time_ms, p.moves, p.undos, p.hints, p.foundation, p.last_found_ms)
                     for p in players]
        if meta.get("daily") and self.daily is not None:  # a daily attempt: on the day's leaderboard first
            for standing in standings:
                await self.daily.record(code, meta, standing)
        rows = [m.ResultRow(r, s.name, s.status, s.time_ms, s.moves, s.undos, s.hints, s.foundation)
                for r, s in rank(standings)]
        frame = encode(m.Results(code, rows, meta.get("seed", ""), meta.get("commitment", ""), meta.get("nonce", "")))
        await self.store.store_results(code, frame)
        if await self.store.transition(code, "playing", "finished", frame, finished_ms=self.clock.now_ms()):
            await self.store.done_timer(code, "deadline")
            await self.store.expire_match(code)
