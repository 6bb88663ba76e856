"""HTTP routes of named players (the service is :mod:`server.profiles`).

==========================================  ===============================================================
route                                       answer
==========================================  ===============================================================
``POST /players``                           body ``{"name"}``: 201 ``{"name", "player_key", "recovery_code"}``
``GET /players/{name}``                     ``?limit=50`` (1..200): the player's page as JSON, or for a
                                            browser (``Accept: text/html``) the page ``player.html``; with
                                            the key (``Authorization``) also its ``groups``
``GET /players/{name}/versus/{other}``      the two players' head-to-head
``POST /players/{name}/recover``            body ``{"recovery_code"}``: 200 ``{"player_key", "recovery_code"}``
``POST /players/{name}/key``                with the key: 200 ``{"player_key"}``, a new one
``DELETE /players/{name}``                  with the key: 204, claim and history gone
==========================================  ===============================================================

The key goes in the JSON body (``{"player_key"}``) or as ``Authorization: Bearer KEY``, never in the address
(an address reaches access logs). A name is one path segment: a ``/`` in it is written ``%2F``. Errors are JSON
``{"error": code, "message": text}``: 400 ``malformed``, 403 ``bad_token``, 404 ``no_player``, 409
``name_taken``, 429 ``rate_limited``.
"""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .httpjson import (
    bearer_key,
    client_address,
    error_response,
    method_not_allowed,
    path_segments,
    player_key,
    read_json,
)
from .pages import STATIC_DIR, page_response
from .profiles import ProfileError, ProfileService

MAX_LIMIT = 200
PLAYER_PAGE = STATIC_DIR / "player.html"


class ClaimRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Body of ``POST /players``."""

    name: str


class RecoverRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Body of ``POST /players/{name}/recover``."""

    recovery_code: str


def _service(request: Request) -> ProfileService:
    return request.app.state.service.profiles  # type: ignore[no-any-return]


async def _answer(call: Any, status: int = 200) -> Response:
    try:
        result = await call
    except ProfileError as error:
        return error_response(error.status, error.code, error.message)
    if result is None:
        return Response(status_code=status)
    return JSONResponse(result, status_code=status)


async def claim(request: Request) -> Response:
    """``POST /players``: claim a free name."""
    wanted = await read_json(request, ClaimRequest, 4096, "claim")
    if isinstance(wanted, Response):
        return wanted

    async def made() -> dict[str, str]:
        entered = await _service(request).claim(wanted.name, client_address(request))
        return {"name": entered.name, "player_key": entered.player_key, "recovery_code": entered.recovery_code}

    return await _answer(made(), 201)


def _limit(request: Request) -> int | Response:
    text = request.query_params.get("limit", "50")
    if not (text.isascii() and text.isdigit() and 1 <= int(text) <= MAX_LIMIT):
        return error_response(400, "malformed", f"limit is a whole number 1..{MAX_LIMIT}")
    return int(text)


def _wants_page(request: Request) -> bool:
    """A browser's navigation (it prefers ``text/html``); a script's ``fetch`` asks for JSON."""
    accept = request.headers.get("accept", "")
    return "text/html" in accept.partition(",")[0] and PLAYER_PAGE.exists()


async def player(request: Request) -> Response:
    """Every ``/players/{name}...`` route: the name is the raw path's segment, decoded alone (so a ``/`` in a
    name, written ``%2F``, stays in it)."""
    parts = path_segments(request)
    service, method = _service(request), request.method
    if not parts or not parts[0]:
        return error_response(404, "not_found", f"no such path: {request.url.path}")
    name = parts[0]
    if len(parts) == 1:
        if method in ("GET", "HEAD"):
            if _wants_page(request):
                return page_response(PLAYER_PAGE.name)
            limit = _limit(request)
            if isinstance(limit, Response):
                return limit
            return await _answer(service.page(name, limit, bearer_key(request)))
        if method == "DELETE":
            key = await player_key(request)
            return key if isinstance(key, Response) else await _answer(service.delete(name, key), 204)
        return method_not_allowed(request, "GET, DELETE")
    if len(parts) == 3 and parts[1] == "versus":
        if method not in ("GET", "HEAD"):
            return method_not_allowed(request, "GET")
        return await _answer(service.versus(name, parts[2]))
    if len(parts) == 2 and parts[1] == "recover":
        if method != "POST":
            return method_not_allowed(request, "POST")
        wanted = await read_json(request, RecoverRequest, 4096, "recovery")
        if isinstance(wanted, Response):
            return wanted

        async def recovered() -> dict[str, str]:
            key, code = await service.recover(name, wanted.recovery_code)
            return {"player_key": key, "recovery_code": code}

        return await _answer(recovered())
    if len(parts) == 2 and parts[1] == "key":
        if method != "POST":
            return method_not_allowed(request, "POST")
        key = await player_key(request)
        if isinstance(key, Response):
            return key

        async def rotated() -> dict[str, str]:
            return {"player_key": await service.rotate(name, key)}

        return await _answer(rotated())
    return error_response(404, "not_found", f"no such path: {request.url.path}")


ROUTES = [
    Route("/players", claim, methods=["POST"]),
    Route("/players/{rest:path}", player, methods=["GET", "HEAD", "POST", "DELETE"]),
]
"""The named players' routes (added to the app's routes in :mod:`server.app`)."""
