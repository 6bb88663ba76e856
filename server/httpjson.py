"""Small helpers shared by the HTTP routes (matches, spectators and the daily challenge): JSON errors,
per-address rate limits, JSON request bodies decoded into declared types (msgspec) with a size limit
read no further than that limit, and the check of a Redis Stream id a client sends to resume from."""

from __future__ import annotations

import asyncio
import re
from typing import TypeVar
from urllib.parse import unquote

import msgspec
from aiolimiter import AsyncLimiter
from starlette.requests import Request
from starlette.responses import JSONResponse

from .connection_limits import over_limit

T = TypeVar("T")


def public_url(request: Request) -> str:
    """The address friends reach this server at: ``FTR_PUBLIC_URL``, else the one this request came to."""
    return request.app.state.settings.public_url or str(request.base_url).rstrip("/")


def error_response(status: int, code: str, message: str) -> JSONResponse:
    """``{"error": code, "message": message}`` with HTTP ``status`` (codes: protocol.messages.ERROR_CODES)."""
    return JSONResponse({"error": code, "message": message}, status_code=status)


def client_address(request: Request) -> str:
    """The address a request came from (``"?"`` when the server does not know it)."""
    return request.client.host if request.client else "?"


def over_rate(request: Request, limiters: dict[str, AsyncLimiter], per_min: float) -> bool:
    """True when the client's address spent its ``per_min`` requests of this minute; otherwise takes one and
    returns False (:func:`server.connection_limits.over_limit`, one bucket per address in ``limiters``)."""
    return over_limit(limiters, client_address(request), per_min, 60)


async def read_json(request: Request, kind: type[T], max_bytes: int, what: str) -> T | JSONResponse:
    """The request body decoded as JSON into ``kind`` (an empty body is ``{}``), or the error to answer:
    415 ``malformed`` unless the ``Content-Type`` is ``application/json``, 413 ``frame_too_large`` past
    ``max_bytes`` bytes, 400 ``malformed`` for bad JSON, JSON nested too deeply or a wrong shape (``what``
    names the body in the message).

    The content type is required because a browser sends a cross-site POST of a form or of ``text/plain``
    (or with no body) without asking the server first (a CORS "simple request"): any page a player visits
    could otherwise create matches or daily attempts in their name. ``application/json`` makes the browser
    ask first (a preflight), which this server never allows across origins.

    The body is read as it arrives and reading stops at the first chunk past ``max_bytes`` (a declared
    ``Content-Length`` over the limit is refused before reading anything), so a huge or endless chunked
    body costs the server at most ``max_bytes`` plus one chunk of memory; a body that takes longer than
    ``FTR_HEADER_TIMEOUT_S`` to arrive gets 408 ``malformed``."""
    too_large = error_response(413, "frame_too_large", f"the request body is larger than {max_bytes // 1024} KiB")
    too_large.headers["Connection"] = "close"  # uvicorn then closes the socket: the rest of the body is not read
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > max_bytes:
        return too_large
    media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media_type != "application/json":
        not_json = error_response(415, "malformed", f"the {what} must be sent as JSON, with Content-Type: "
                                                    f"application/json (not {media_type or 'none'})")
        not_json.headers["Connection"] = "close"  # the body is not read
        return not_json
    chunks: list[bytes] = []
    size = 0
    seconds = request.app.state.settings.header_timeout_s
    try:
        async with asyncio.timeout(seconds):
            async for chunk in request.stream():
                size += len(chunk)
                if size > max_bytes:
                    return too_large
                chunks.append(chunk)
    except TimeoutError:
        answer = error_response(408, "malformed", f"the request body did not arrive within {seconds:g} s")
        answer.headers["Connection"] = "close"
        return answer
    body = b"".join(chunks)
    try:
        return msgspec.json.decode(body or b"{}", type=kind)
    except msgspec.ValidationError as error:
        return error_response(400, "malformed", f"invalid {what}: {error}")
    except msgspec.DecodeError as error:
        return error_response(400, "malformed", f"the body is not JSON: {error}")
    except RecursionError:  # msgspec's decoder into Any nests one C call per array or object
        return error_response(400, "malformed", f"the {what} is nested too deeply")


class KeyRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A body holding a player key alone (or none: the key may come as ``Authorization: Bearer KEY``)."""

    player_key: str | None = None


def path_segments(request: Request) -> list[str]:
    """The segments of the request's path after its first (``/players/a%2Fb/key`` -> ``["a/b", "key"]``),
    each decoded on its own from the raw path, so a ``/`` in a name, written ``%2F``, stays in it."""
    raw = request.scope.get("raw_path") or request.url.path.encode()
    return [unquote(part) for part in raw.decode("utf-8", "replace").split("?", 1)[0].split("/")[2:]]


def method_not_allowed(request: Request, allow: str) -> JSONResponse:
    """405 ``method_not_allowed`` with its ``Allow`` header (``allow``: the methods the path takes)."""
    answer = error_response(405, "method_not_allowed", f"{request.method} is not allowed on {request.url.path}")
    answer.headers["Allow"] = allow
    return answer


def bearer_key(request: Request) -> str | None:
    """The player key of an ``Authorization: Bearer KEY`` header, else None."""
    scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
    return credentials.strip() if scheme.lower() == "bearer" and credentials.strip() else None


async def player_key(request: Request) -> str | JSONResponse | None:
    """The player key of a request: ``Authorization: Bearer KEY``, else the JSON body's ``player_key``
    (:class:`KeyRequest`); the error to answer for a body that is no such JSON. Never in the address: an
    address reaches access logs."""
    key = bearer_key(request)
    if key is not None:
        return key
    body = await read_json(request, KeyRequest, 4096, "request")
    return body if isinstance(body, JSONResponse) else body.player_key


_STREAM_ID = re.compile(r"([0-9]{1,20})-([0-9]{1,20})")
_ID_PART_LIMIT = 2**64


def valid_stream_id(text: str) -> bool:
    """True when ``text`` is a Redis Stream entry id ``MS-SEQ`` that Redis accepts as the exclusive start
    of an XRANGE: two decimal numbers, each an unsigned 64-bit integer (below 2**64; Redis's
    ``streamParseID``), and not the largest id of all (nothing can follow it: Redis refuses ``(`` on it).
    A client's ``Last-Event-ID`` or ``from`` passes this check before it reaches Redis."""
    found = _STREAM_ID.fullmatch(text)
    if found is None:
        return False
    ms, seq = int(found[1]), int(found[2])
    return ms < _ID_PART_LIMIT and seq < _ID_PART_LIMIT and (ms, seq) != (_ID_PART_LIMIT - 1, _ID_PART_LIMIT - 1)


STREAM_ID_HELP = "a stream id such as 1700000000000-0 (two whole numbers, each below 2**64)"
"""What a refused stream id is told it should have been (the ``malformed`` message of every stream route)."""


__all__ = ["STREAM_ID_HELP", "KeyRequest", "bearer_key", "error_response", "over_rate", "player_key", "read_json",
           "valid_stream_id"]
