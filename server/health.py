"""Health routes for probes: ``/livez`` (the process serves) and ``/readyz`` (it can serve races: Redis
answers), ``/healthz`` the same as ``/readyz``.

A liveness probe must not fail while Redis is down (restarting a healthy server would not bring Redis back),
so ``/livez`` reads nothing. ``/readyz`` sends a PING on a client of its own
(:func:`server.store.probe_client`) that waits at most :data:`READY_TIMEOUT_S`, so it answers within about a
second even while Redis stalls, and is 503 until the server has reached Redis at its start.
"""

from __future__ import annotations

import asyncio
import logging

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .store import REDIS_UNAVAILABLE, probe_client
from .store.outages import describe

log = logging.getLogger("forty_thieves.health")

_NOT_READY: tuple[type[Exception], ...] = (TimeoutError, *REDIS_UNAVAILABLE)
"""What a ping that found Redis unready raises (a tuple mypy can read in an ``except``, unlike a starred one)."""

READY_TIMEOUT_S = 0.8
"""Longest wait of a readiness probe for Redis's PONG (seconds), its connection's included."""


class Readiness:
    """The readiness probe of one app: ``opened`` once the server's resources are open (Redis reached at
    start), and a PING on a small client of its own for each probe. Logs when the answer changes, not for
    each probe."""

    def __init__(self, url: str) -> None:
        self.client = probe_client(url, READY_TIMEOUT_S)
        self.opened = False
        self._answered: bool | None = None

    async def check(self) -> bool:
        """True when the server's resources are open and Redis answers a PING within :data:`READY_TIMEOUT_S`."""
        if not self.opened:
            return False
        try:
            async with asyncio.timeout(READY_TIMEOUT_S):
                await self.client.ping()
        except _NOT_READY as error:
            if self._answered is not False:
                # The error's text names Redis's host and port: for the log, not for any client.
                log.warning("readiness: Redis did not answer PING (%s): not ready", describe(error))
            self._answered = False
            return False
        if self._answered is False:
            log.info("readiness: Redis answers PING again: ready")
        self._answered = True
        return True

    async def close(self) -> None:
        await self.client.aclose()


async def livez(request: Request) -> Response:
    """``GET /livez``: 200 ``{"ok": true}`` whenever the process serves HTTP (Redis reachable or not)."""
    return JSONResponse({"ok": True})


async def readyz(request: Request) -> Response:
    """``GET /readyz`` (and ``/healthz``): 200 ``{"ok": true}`` when Redis answers, else 503
    ``{"ok": false, "redis": "unreachable"}`` (where Redis runs is never said), within about a second."""
    if await request.app.state.readiness.check():
        return JSONResponse({"ok": True})
    return JSONResponse({"ok": False, "redis": "unreachable"}, status_code=503)


__all__ = ["READY_TIMEOUT_S", "Readiness", "livez", "readyz"]
