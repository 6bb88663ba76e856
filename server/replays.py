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
:class:`protocol.messages.View` as JSON: face-down cards counted, the stock
a count). They are computed in a worker process, never in the event loop,
and kept in a small per-process cache (a finished game never changes).

Only once the match has ended (before: 409 ``not_finished``; the boards
are then secret even when the host opened them live, since a record shows
every move); 404 ``no_match`` / ``no_player`` for an unknown code or name.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from protocol import messages as m

from .engine import Game, find_variant, format_position, parse_position
from .matches import MatchService
from .views import view_message

_CACHE_SIZE = 64
_cache: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()


def replay_steps(deal: str, variant: str, autoplay: bool, undo: str, moves: list[str]) -> dict[str, list[Any]]:
    """Every position of a stored game: ``{"positions": [full text], "views": [View as JSON]}``.

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
    meta = await service.store.meta(code)
    if meta is None:
        return _error(404, "no_match", "no match with that code")
    if len(name) > m.MAX_NAME or name not in await service.store.roster(code):
        return _error(404, "no_player", f"no player named {name[:m.MAX_NAME]!r} in this match")
    if meta.day is not None:  # its deal is the day's: public only through the daily challenge, once the day is over
        date, variant = meta.day
        return _error(409, "not_revealed", f"this is a daily attempt: its replay is at "
                                           f"/daily/{date}/{variant}/replay/NAME once the day is over")
    if meta.state != "finished":
        return _error(409, "not_finished", "replays are public once the match has ended: every move stays secret "
                                           "until then")
    settings = meta.settings
    log = await service.store.log(code, name)
    player = await service.store.player(code, name)
    assert player is not None
    record: dict[str, Any] = {
        "format": 1, "variant": settings.variant, "autoplay": settings.autoplay, "undo": settings.undo,
        "deal": meta.deal, "seed": meta.seed,
        "moves": [command for command, _ in log], "times_ms": [ms for _, ms in log],
        "match": code, "name": name, "commitment": meta.commitment, "nonce": meta.nonce,
        "result": {"status": player.status, "moves": player.moves, "foundation": player.foundation,
                   "time_ms": player.time_ms},
    }
    if flag in ("1", "true"):
        key = (code, name)
        steps = _cache.get(key)
        if steps is None:
            loop = asyncio.get_running_loop()
            steps = await loop.run_in_executor(service.dead_executor, replay_steps, record["deal"], settings.variant,
                                               settings.autoplay, settings.undo, record["moves"])
            _cache[key] = steps
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
        _cache.move_to_end(key)
        record.update(steps)
    return JSONResponse(record)


__all__ = ["match_replay", "replay_steps"]
