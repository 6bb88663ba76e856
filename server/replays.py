"""Replays of a finished match: ``GET /matches/{code}/replays/{name}``.

The answer is the player's game record (RULES.md section 10: ``format``,
``variant``, ``autoplay``, ``undo``, ``deal``, ``seed``, ``moves``,
``times_ms``), built from the match's deal and the player's stored move log
(the truth of a game: DESIGN.md "Data flow"), plus what a spectator needs
to check it: the ``commitment`` published at creation and the ``nonce``
(SHA-256 of ``nonce + seed`` is the commitment), the match ``code``, the
player's ``name`` and the final ``result`` (status, moves, foundation
cards, time in ms). Record readers ignore the extra keys, so the answer
replays as it is: ``python -m server.engine replay FILE --json``.

With ``?positions=1`` it also carries, for stepping through the game card
by card without any rules in the browser: ``positions``, the full position
text of the deal and after every accepted move (``len(moves) + 1`` texts),
and ``views``, the same positions as the player saw them (the redacted
:class:`protocol.messages.WireView` as JSON: face-down cards counted, the stock
a count). They are computed in a worker process, never in the event loop,
and kept in a small per-process cache (a finished game never changes).

Only once the match has ended (before: 409 ``not_finished``; the boards
are then secret even when the host opened them live, since a record shows
every move); 404 ``no_match`` / ``no_player`` for an unknown code or name.

``POST /replays`` replays any game record its sender holds (the CLI's
``forty-thieves replay FILE``, which has no rules of its own): the body is
the record (JSON, at most :data:`MAX_RECORD_BYTES`, at most
:data:`MAX_RECORD_COMMANDS` commands; extra keys ignored), the answer a
:class:`protocol.messages.RecordReplay`: every position as the player saw
it, refused commands shown with the engine's reason and skipped. The sender
already holds the whole deal, and still gets only redacted views. Errors:
400 ``malformed`` naming the bad field, 413 ``frame_too_large``, 429
``rate_limited`` past ``FTR_MATCHES_PER_MIN`` records a minute from one
address.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any

import msgspec
from aiolimiter import AsyncLimiter
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from protocol import messages as m
from protocol.errors import NotationError

from .core.lifecycle import State
from .engine import Game, IllegalCommandError, find_variant, format_position, parse_position, parse_record
from .httpjson import over_rate, read_json
from .matches import MatchService
from .views import legal_message, view_message

_CACHE_SIZE = 64
_cache: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()


def replay_steps(deal: str, variant: str, autoplay: bool, undo: str, moves: list[str]) -> dict[str, list[Any]]:
    """Every position of a stored game: ``{"positions": [full text], "views": [WireView as JSON]}``.

    Index 0 is the deal, index ``i`` the position after move ``i`` (with
    its auto-play). The moves come from the server's own log, so every one
    is legal; raises the engine's errors otherwise (a corrupt log). Pure and
    picklable: it runs in a worker process.
    """
    rules = find_variant(variant)
    game = Game(parse_position(deal, rules), rules, autoplay=autoplay, undo=undo)
    positions, views = [format_position(game.position)], [msgspec.to_builtins(view_message(game.position))]
    for move in moves:
        game.play(move)
        positions.append(format_position(game.position))
        views.append(msgspec.to_builtins(view_message(game.position)))
    return {"positions": positions, "views": views}


MAX_RECORD_BYTES = 256 * 1024
"""Largest record ``POST /replays`` reads (a won classic game's record is about 3 KiB)."""

MAX_RECORD_COMMANDS = 10_000
"""Most commands of a record ``POST /replays`` replays (its answer holds one redacted view a command)."""

_record_limiters: dict[str, AsyncLimiter] = {}
"""Per-address buckets of ``POST /replays`` (:func:`~server.httpjson.over_rate`)."""


def _step(game: Game, command: str, ok: bool, reason: str) -> m.ReplayStep:
    return m.ReplayStep(command, ok, reason, view_message(game.position), legal_message(game.legal_moves()),
                        game.moves, "won" if game.is_won else "playing", game.position.foundation_cards)


def record_steps(data: dict[str, Any]) -> bytes:
    """Every position of the game record ``data`` (RULES.md section 10), as the JSON of a
    :class:`protocol.messages.RecordReplay`.

    Step 0 is the deal (after its auto-play), step ``i`` the position after command ``i``; a command the
    rules refuse is a step with ``ok`` false, the engine's reason, and the position unchanged. Raises
    :class:`~protocol.errors.NotationError` naming what is wrong for data that is not a record, or one of more
    than :data:`MAX_RECORD_COMMANDS` commands. Pure and picklable: it runs in a worker process.
    """
    record = parse_record(data)
    if len(record.moves) > MAX_RECORD_COMMANDS:
        raise NotationError(f"the record has {len(record.moves)} commands; this server replays at most "
                            f"{MAX_RECORD_COMMANDS}")
    game = Game(record.deal, record.variant, autoplay=record.autoplay, undo=record.undo)
    steps = [_step(game, "", True, "")]
    for command in record.moves:
        ok, reason = True, ""
        try:
            game.play(command)
        except (NotationError, IllegalCommandError) as error:
            ok, reason = False, str(error)
        steps.append(_step(game, command, ok, reason))
    return msgspec.json.encode(m.RecordReplay(record.variant.name, steps))


RECORD_WAIT_S = 5.0
"""Seconds a ``POST /replays`` waits for the record replayed before it; then 429 ``rate_limited``."""


async def record_replay(request: Request) -> Response:
    """``POST /replays``: see the module docstring."""
    service: MatchService = request.app.state.service
    if over_rate(request, _record_limiters, service.settings.matches_per_min):
        return _error(429, "rate_limited", "too many records replayed from this address: wait a minute")
    data = await read_json(request, dict[str, Any], MAX_RECORD_BYTES, "game record")
    if isinstance(data, Response):
        return data
    # One record at a time shares the dead-game worker, so a live game's dead check waits behind one at most.
    turns: asyncio.Semaphore | None = getattr(request.app.state, "record_turns", None)
    if turns is None:
        turns = request.app.state.record_turns = asyncio.Semaphore(1)
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(RECORD_WAIT_S):
            await turns.acquire()
    except TimeoutError:
        busy = _error(429, "rate_limited", "the server is replaying other records: try again in a few seconds")
        busy.headers["Retry-After"] = str(int(RECORD_WAIT_S))
        return busy
    try:
        body = await loop.run_in_executor(service.dead_executor, record_steps, data)
    except NotationError as error:
        return _error(400, "malformed", str(error))
    finally:
        turns.release()
    return Response(body, media_type="application/json")


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": code, "message": message}, status_code=status)


async def match_replay(request: Request) -> Response:
    """``GET /matches/{code}/replays/{name}[?positions=1]``: see the module docstring."""
    service: MatchService = request.app.state.service
    code = request.path_params["code"][:32]
    name = request.path_params["name"]
    flag = request.query_params.get("positions", "0")
    if flag not in ("0", "1", "true", "false"):
        return _error(400, "malformed", "positions is 1 (add every position) or 0")
    meta = await service.store.matches.meta(code)
    if meta is None:
        return _error(404, "no_match", "no match with that code")
    if len(name) > m.MAX_NAME or name not in await service.store.players.roster(code):
        return _error(404, "no_player", f"no player named {name[:m.MAX_NAME]!r} in this match")
    if meta.day is not None:  # its deal is the day's: public only through the daily challenge, once the day is over
        date, variant = meta.day
        return _error(409, "not_revealed", f"this is a daily attempt: its replay is at "
                                           f"/daily/{date}/{variant}/replay/NAME once the day is over")
    if meta.state is not State.FINISHED:
        return _error(409, "not_finished", "replays are public once the match has ended: every move stays secret "
                                           "until then")
    settings = meta.settings
    log = await service.store.players.log(code, name)
    player = await service.store.players.get(code, name)
    assert player is not None
    record: dict[str, Any] = {
        "format": 1, "variant": settings.variant, "autoplay": settings.autoplay, "undo": settings.undo,
        "deal": meta.deal, "seed": meta.seed,
        "moves": [command for command, _ in log], "times_ms": [ms for _, ms in log],
        "match": code, "name": name, "commitment": meta.commitment, "nonce": meta.nonce,
        "result": {"status": player.status, "moves": player.moves, "foundation": player.foundation,
                   "time_ms": player.time_ms},
    }
    bot = meta.bot(name)
    if bot is not None:  # played by the server (server/match/bots.py): its planner level
        record["bot"] = bot.level
    if flag in ("1", "true"):
        key = (code, name)
        steps = _cache.get(key)
        if steps is None:
            loop = asyncio.get_running_loop()
            computed: dict[str, Any] = await loop.run_in_executor(service.dead_executor, replay_steps, record["deal"],
                                                                  settings.variant, settings.autoplay, settings.undo,
                                                                  record["moves"])
            steps = _cache[key] = computed
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
        _cache.move_to_end(key)
        record.update(steps)
    return JSONResponse(record)


__all__ = ["MAX_RECORD_BYTES", "MAX_RECORD_COMMANDS", "match_replay", "record_replay", "record_steps", "replay_steps"]
