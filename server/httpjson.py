"""Small helpers shared by the HTTP routes (matches and the daily challenge): JSON errors, per-address
rate limits and JSON request bodies decoded into declared types (msgspec), with a size limit."""

from __future__ import annotations

from typing import TypeVar

import msgspec
from aiolimiter import AsyncLimiter
from starlette.requests import Request
from starlette.responses import JSONResponse

T = TypeVar("T")


def error_response(status: int, code: str, message: str) -> JSONResponse:
    """``{"error": code, "message": message}`` with HTTP ``status`` (codes: protocol.messages.ERROR_CODES)."""
    return JSONResponse({"error": code, "message": message}, status_code=status)


async def over_rate(request: Request, limiters: dict[str, AsyncLimiter], per_min: float) -> bool:
    """True when the client's address spent its ``per_min`` requests of this minute (token bucket per
    address, aiolimiter); otherwise takes one and returns False. ``limiters`` maps addresses to buckets and
    forgets idle ones past 10,000 addresses (bounded memory)."""
    if len(limiters) > 10_000:
        for key in [k for k, v in limiters.items() if v.has_capacity(per_min)]:
            del limiters[key]
    limiter = limiters.setdefault(request.client.host if request.client else "?", AsyncLimiter(per_min, 60))
    if not limiter.has_capacity():
        return True
    await limiter.acquire()
    return False


async def read_json(request: Request, kind: type[T], max_bytes: int, what: str) -> T | JSONResponse:
    """The request body decoded as JSON into ``kind`` (an empty body is ``{}``), or the error to answer:
    413 ``frame_too_large`` past ``max_bytes`` bytes, 400 ``malformed`` for bad JSON or a wrong shape
    (``what`` names the body in the message)."""
    body = await request.body()
    if len(body) > max_bytes:
        return error_response(413, "frame_too_large", f"the request body is larger than {max_bytes // 1024} KiB")
    try:
        return msgspec.json.decode(body or b"{}", type=kind)
    except msgspec.ValidationError as error:
        return error_response(400, "malformed", f"invalid {what}: {error}")
    except msgspec.DecodeError as error:
        return error_response(400, "malformed", f"the body is not JSON: {error}")


__all__ = ["error_response", "over_rate", "read_json"]
