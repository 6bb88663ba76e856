"""HTTP routes of the daily challenge (the service is :mod:`server.daily`).

==============================================  =========================================================
route                                           answer
==============================================  =========================================================
``GET /daily``                                  today: date, clock, end, per variant commitment and counts
``POST /daily/{variant}/attempt``               body ``{"name", "player_key"}``: today's attempt (or its resume)
``GET /daily/{date}/{variant}/leaderboard``     ``?offset=0&limit=50`` (limit at most 200): ranked entries
``GET /daily/{date}/{variant}/events``          Server-Sent Events ``attempt`` (resumable: Last-Event-ID)
``GET /daily/{date}/{variant}/reveal``          after the day: seed, commitment, attempt index, deal; 409 before
``GET /daily/{date}/{variant}/replay/{name}``   after the day: the attempt's game record; 409 before
``GET .../leaderboard?name=N``                  the same, plus ``entry``: N's place and share line, or null
``GET /daily/{date}``                           the day's archive: JSON to ``Accept: application/json``
                                                (variants, ``final``, first entries, the reveal once
                                                revealed), else the page ``day.html``
``POST /daily/{date}/{variant}/practice``       body ``{"name", "token", "ghost"}``: a practice on a revealed
                                                day's deal (on no board), racing ``ghost`` (``"top"`` or
                                                ``{"name": N}``: that attempt) if given; 409
                                                ``not_revealed`` before, 404 ``no_ghost``
==============================================  =========================================================

Errors are JSON ``{"error": code, "message": text}``: 400 malformed, 403
``bad_token``, 404 ``no_variant`` / ``no_day`` / ``no_attempt`` / ``no_ghost``, 409
``already_played`` / ``name_taken`` / ``not_revealed`` / ``day_over``, 429 ``rate_limited``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import msgspec
from aiolimiter import AsyncLimiter
from sse_starlette.sse import ServerSentEvent
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .daily import DailyError, DailyService
from .daily_days import DayGhost
from .httpjson import STREAM_ID_HELP, client_address, error_response, over_rate, public_url, read_json, valid_stream_id
from .hub import TooSlow
from .pages import page_response
from .watch import SpectatorStream

_NUMBER = re.compile(r"[0-9]{1,10}")
MAX_LIMIT = 200
MAX_NAME = 64
"""The longest name a query asks for (a display name is shorter: server/names.py)."""


class AttemptRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Body of ``POST /daily/{variant}/attempt``: the name and, once it is claimed, its ``player_key``
    (``token``: the older name of the same key, still taken)."""

    name: str
    token: str | None = None
    player_key: str | None = None


_error = error_response


def _service(request: Request) -> DailyService | None:
    return getattr(request.app.state, "daily", None)


async def _answer(request: Request, call: Any) -> Response:
    service = _service(request)
    if service is None:
        return _error(404, "no_daily", "this server runs no daily challenge (FTR_DAILY_VARIANTS is empty)")
    try:
        return JSONResponse(await call(service))
    except DailyError as error:
        return _error(error.status, error.code, error.message)


async def today(request: Request) -> Response:
    """``GET /daily``."""
    return await _answer(request, lambda s: s.today())


async def _limited(request: Request) -> bool:
    """Attempt requests make matches: at most ``FTR_MATCHES_PER_MIN`` a minute per address, as ``POST /matches``."""
    limiters: dict[str, AsyncLimiter] | None = getattr(request.app.state, "daily_limiters", None)
    if limiters is None:
        limiters = request.app.state.daily_limiters = {}
    return over_rate(request, limiters, request.app.state.settings.matches_per_min)


async def attempt(request: Request) -> Response:
    """``POST /daily/{variant}/attempt``: 200 with the match code and a player token (see DailyService.attempt)."""
    if await _limited(request):
        return _error(429, "rate_limited", "too many attempt requests from this address: wait a minute")
    wanted = await read_json(request, AttemptRequest, 4096, "attempt request")
    if isinstance(wanted, Response):
        return wanted
    variant = request.path_params["variant"][:40]
    address = client_address(request)
    return await _answer(request, lambda s: s.attempt(variant, wanted.name, wanted.token, wanted.player_key,
                                                      address))


def _int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    """The query parameter ``name`` as an int in ``low..high`` (ASCII digits only: ``str.isdigit`` also takes
    "²", which ``int`` refuses); :class:`DailyError` 400 ``malformed`` otherwise."""
    text = request.query_params.get(name)
    if text is None:
        return default
    if not _NUMBER.fullmatch(text) or not low <= int(text) <= high:
        raise DailyError(400, "malformed", f"{name} is a whole number {low}..{high}")
    return int(text)


async def leaderboard(request: Request) -> Response:
    """``GET /daily/{date}/{variant}/leaderboard?offset=0&limit=50``."""
    date, variant = request.path_params["date"][:20], request.path_params["variant"][:40]
    try:
        offset = _int_param(request, "offset", 0, 0, 10**9)
        limit = _int_param(request, "limit", 50, 1, MAX_LIMIT)
    except DailyError as error:
        return _error(error.status, error.code, error.message)
    name = request.query_params.get("name")
    if name is not None and not 0 < len(name) <= MAX_NAME:
        return _error(400, "malformed", f"name is 1..{MAX_NAME} characters")
    base = public_url(request)
    return await _answer(request, lambda s: s.leaderboard(date, variant, offset, limit, name, base))


async def day_page(request: Request) -> Response:
    """``GET /daily/{date}``: the day's archive as JSON to ``Accept: application/json``, else its page
    (``day.html``, which reads the JSON)."""
    if "application/json" not in request.headers.get("accept", ""):
        return page_response("day.html")
    date = request.path_params["date"][:20]
    return await _answer(request, lambda s: s.days.archive(date))


class PracticeRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Body of ``POST /daily/{date}/{variant}/practice``: the name to play under and, when it is claimed, its
    token (``player_key``: the same key, named as named players name it); ``ghost``: an attempt of that day to
    race (``"top"``: the day's first; ``{"name": NAME}``: NAME's; :data:`server.daily_days.DayGhost`)."""

    name: str
    token: str | None = None
    player_key: str | None = None
    ghost: DayGhost | None = None


async def practice(request: Request) -> Response:
    """``POST /daily/{date}/{variant}/practice``: 200 with a practice match on a revealed day's deal (see
    :meth:`server.daily_days.DailyDays.practice`)."""
    if await _limited(request):
        return _error(429, "rate_limited", "too many attempt requests from this address: wait a minute")
    wanted = await read_json(request, PracticeRequest, 4096, "practice request")
    if isinstance(wanted, Response):
        return wanted
    date, variant = request.path_params["date"][:20], request.path_params["variant"][:40]
    address = client_address(request)
    return await _answer(request, lambda s: s.days.practice(date, variant, wanted.name,
                                                            wanted.player_key or wanted.token, address,
                                                            wanted.ghost))


async def reveal(request: Request) -> Response:
    """``GET /daily/{date}/{variant}/reveal``."""
    date, variant = request.path_params["date"][:20], request.path_params["variant"][:40]
    return await _answer(request, lambda s: s.reveal(date, variant))


async def replay(request: Request) -> Response:
    """``GET /daily/{date}/{variant}/replay/{name}``."""
    date, variant = request.path_params["date"][:20], request.path_params["variant"][:40]
    name = request.path_params["name"][:64]
    return await _answer(request, lambda s: s.replay(date, variant, name))


async def events(request: Request) -> Response:
    """``GET /daily/{date}/{variant}/events``: ``attempt`` events as SSE, ``id`` = the Redis Stream id.

    Data: ``{"name", "status", "moves", "foundation", "time_ms"}`` when an
    attempt starts (``playing``) and when it ends; never a move or a board.
    """
    service = _service(request)
    if service is None:
        return _error(404, "no_daily", "this server runs no daily challenge")
    try:
        date, variant, _ = await service.known_day(request.path_params["date"][:20],
                                                   request.path_params["variant"][:40])
    except DailyError as error:
        return _error(error.status, error.code, error.message)
    after = request.headers.get("last-event-id") or request.query_params.get("from") or "0-0"
    if not valid_stream_id(after):
        return _error(400, "malformed", f"Last-Event-ID is {STREAM_ID_HELP}")

    try:
        subscription = await service.watch(date, variant)  # first: live events queue up while the missed ones are read
    except DailyError as error:
        return _error(error.status, error.code, error.message)

    async def stream() -> AsyncIterator[ServerSentEvent]:
        try:
            async for entry_id, data in subscription.events(after):
                yield ServerSentEvent(data=data.decode(), event="attempt", id=entry_id)
        except TooSlow:
            yield ServerSentEvent(data='{"reason": "too slow: resume with Last-Event-ID"}', event="dropped")

    return SpectatorStream(stream(), subscription, ping=15)


ROUTES = [
    Route("/daily", today),
    Route("/daily/{date}", day_page),
    Route("/daily/{variant}/attempt", attempt, methods=["POST"]),
    Route("/daily/{date}/{variant}/practice", practice, methods=["POST"]),
    Route("/daily/{date}/{variant}/leaderboard", leaderboard),
    Route("/daily/{date}/{variant}/events", events),
    Route("/daily/{date}/{variant}/reveal", reveal),
    Route("/daily/{date}/{variant}/replay/{name:path}", replay),
]
"""The daily challenge's routes (added to the app's routes in :mod:`server.app`)."""
