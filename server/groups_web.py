"""HTTP routes of groups (the service is :mod:`server.groups`).

================================================  =========================================================
route                                             answer
================================================  =========================================================
``POST /groups``                                  body ``{"name", "player", "player_key"}``: 201 ``{"group",
                                                  "name", "join_url", "page_url"}``; the maker is a member
``GET /groups/{group}``                           the group as JSON to ``Accept: application/json``
                                                  (members, head-to-head, today, variants), else the page
                                                  ``group.html``
``GET /groups/{group}/join``                      the page ``group.html`` (it offers to join first)
``POST /groups/{group}/members``                  body ``{"player", "player_key"}``: 200 the group's JSON
``DELETE /groups/{group}/members/{name}``         with that name's key: 204 (not a member: 204 too)
``GET /groups/{group}/daily/{date}/{variant}``    the group's board of that day: its members' ended attempts,
                                                  ranked among themselves, each with its ``board_rank``
================================================  =========================================================

The key goes in the JSON body (``{"player_key"}``) or as ``Authorization: Bearer KEY``, never in the address. A
name is one path segment: a ``/`` in it is written ``%2F``. Errors are JSON ``{"error": code, "message": text}``:
400 ``malformed``, 403 ``bad_token``, 404 ``no_group`` / ``no_player`` / ``no_day`` / ``no_variant``, 409
``group_full`` / ``too_many_groups``, 413 ``frame_too_large``, 429 ``rate_limited``.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .core.errors import DailyError
from .groups import GroupService
from .httpjson import (
    bearer_key,
    client_address,
    error_response,
    method_not_allowed,
    path_segments,
    player_key,
    public_url,
    read_json,
)
from .pages import STATIC_DIR, page_response
from .profiles import ProfileError

GROUP_PAGE = STATIC_DIR / "group.html"
MAX_BODY = 4096


class CreateRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Body of ``POST /groups``: the group's name, the maker's name and its key (or ``Authorization``)."""

    name: str
    player: str
    player_key: str | None = None


class JoinRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Body of ``POST /groups/{group}/members``: the joining player's name and its key (or ``Authorization``)."""

    player: str
    player_key: str | None = None


def _service(request: Request) -> GroupService:
    return request.app.state.groups  # type: ignore[no-any-return]


async def _answer(call: Awaitable[Any], status: int = 200) -> Response:
    try:
        result = await call
    except (ProfileError, DailyError) as error:
        return error_response(error.status, error.code, error.message)
    if result is None:
        return Response(status_code=status)
    return JSONResponse(result, status_code=status)


async def create(request: Request) -> Response:
    """``POST /groups``: 201 with the new group's id and links."""
    wanted = await read_json(request, CreateRequest, MAX_BODY, "group")
    if isinstance(wanted, Response):
        return wanted
    key = bearer_key(request) or wanted.player_key
    return await _answer(_service(request).create(wanted.name, wanted.player, key, client_address(request),
                                                  public_url(request)), 201)


def _page() -> Response | None:
    return page_response(GROUP_PAGE.name) if GROUP_PAGE.exists() else None


async def group(request: Request) -> Response:
    """Every ``/groups/{group}...`` route: the path's segments are decoded one by one from the raw path (so a
    ``/`` in a name, written ``%2F``, stays in it)."""
    parts = path_segments(request)
    service, method = _service(request), request.method
    if not parts or not parts[0]:
        return error_response(404, "not_found", f"no such path: {request.url.path}")
    reading = method in ("GET", "HEAD")
    if len(parts) == 1:
        if not reading:
            return method_not_allowed(request, "GET")
        page = None if "application/json" in request.headers.get("accept", "") else _page()
        return page or await _answer(service.show(parts[0], public_url(request)))
    if len(parts) == 2 and parts[1] == "join":
        if not reading:
            return method_not_allowed(request, "GET")
        return _page() or await _answer(service.show(parts[0], public_url(request)))
    if len(parts) == 2 and parts[1] == "members":
        if method != "POST":
            return method_not_allowed(request, "POST")
        wanted = await read_json(request, JoinRequest, MAX_BODY, "join request")
        if isinstance(wanted, Response):
            return wanted
        key = bearer_key(request) or wanted.player_key
        return await _answer(service.join(parts[0], wanted.player, key, public_url(request)))
    if len(parts) == 3 and parts[1] == "members" and parts[2]:
        if method != "DELETE":
            return method_not_allowed(request, "DELETE")
        held = await player_key(request)
        if isinstance(held, Response):
            return held
        return await _answer(service.leave(parts[0], parts[2], held), 204)
    if len(parts) == 4 and parts[1] == "daily":
        if not reading:
            return method_not_allowed(request, "GET")
        return await _answer(service.board(parts[0], parts[2][:20], parts[3][:40]))
    return error_response(404, "not_found", f"no such path: {request.url.path}")


ROUTES = [
    Route("/groups", create, methods=["POST"]),
    Route("/groups/{rest:path}", group, methods=["GET", "HEAD", "POST", "DELETE"]),
]
"""The groups' routes (added to the app's routes in :mod:`server.app`)."""
