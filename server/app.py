"""The Starlette application: routes, lifespan and the resources it owns.

Routes: ``/play`` (WebSocket, players), ``POST /matches``,
``GET /matches/{code}``, ``GET /matches/{code}/results``, ``GET /healthz``,
``GET /metrics``; spectators: ``GET /matches/{code}/events`` (SSE),
``/matches/{code}/watch`` (WebSocket), ``GET /matches/{code}/replays/{name}``,
and the web pages (``/``, ``/join/{code}``, ``/watch/{code}``, ``/daily``, ``/static/``); the
daily challenge's routes (:mod:`server.daily_web`). Resources (Redis or the
embedded Redis, the solver process pool, the match service and its
background tasks) are opened in the lifespan and closed there.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import AsyncIterator

import msgspec
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from redis import exceptions as redis_errors
from starlette.applications import Starlette
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from protocol import messages as m
from protocol.codec import decode_server, encode
from protocol.codes import canonical_code

from .daily import DailyService
from .daily_web import ROUTES as DAILY_ROUTES
from .dealpool import HOST_DEAL_SECONDS, fill_pool
from .embedded_redis import EmbeddedRedis
from .gcpacing import pace_collections
from .httpjson import error_response, over_rate, read_json
from .matches import OFFERED_POOL_VARIANTS, CreateMatch, MatchService, ServiceError
from .metrics import Metrics, MetricsMiddleware
from .pages import STATIC_DIR, PagesMiddleware, StaticFiles, index_page, play_page, watch_page
from .play import player_endpoint
from .replays import match_replay
from .settings import Settings
from .store import Store, open_redis
from .watch import WATCH_CLOSE_CODES, match_events, watch_endpoint
from .workers import worker_pool

log = logging.getLogger("forty_thieves.app")

REDIS_UNAVAILABLE: tuple[type[Exception], ...] = (
    redis_errors.ConnectionError,  # refused, reset, still loading its data (BusyLoadingError)
    redis_errors.TimeoutError,  # no answer within the socket timeout (a stall)
    redis_errors.ClusterDownError,  # a cluster without a master for a slot (MasterDownError too)
    redis_errors.TryAgainError,  # a slot being moved
    redis_errors.ReadOnlyError,  # a write reached a replica during a failover
    redis_errors.RedisClusterException,  # no node of the cluster reachable, a slot no node serves
)
"""The failures of Redis itself (not of a request) that any route may meet: each answers 503 ``internal``."""

REDIS_UNAVAILABLE_MESSAGE = "Redis is unreachable: try again later"

STOP_WORKERS_S = 5.0
"""How long the server's stop waits for its solver worker pools to wind down (a job running in a worker ends
first; the solves the server starts are capped at a few seconds): see :meth:`server.workers.WorkerPool.stopped`."""


_error = error_response


class MatchCode(Convertor[str]):
    """``{code:match}`` in a route: the code as typed, read by :func:`protocol.codes.canonical_code` (any case,
    ``O``/``I``/``L`` for ``0``/``1``; an older code stays as it is), so every route finds the same match."""

    regex = "[^/]+"

    def convert(self, value: str) -> str:
        return canonical_code(value[:32])

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("match", MatchCode())


def public_url(request: Request) -> str:
    """The address friends reach this server at: ``FTR_PUBLIC_URL``, else the one this request came to."""
    return request.app.state.settings.public_url or str(request.base_url).rstrip("/")


async def create_match(request: Request) -> Response:
    service: MatchService = request.app.state.service
    if await over_rate(request, request.app.state.create_limiters, service.settings.matches_per_min):
        return _error(429, "rate_limited", "too many matches created from this address: wait a minute")
    create = await read_json(request, CreateMatch, 16384, "match settings")
    if isinstance(create, Response):
        return create
    try:
        created = await service.create(create, request.client.host if request.client else "?")
    except ServiceError as error:
        if error.code == "rate_limited":  # this address's own deals already wait for the solver
            refused = _error(429, error.code, error.message)
            refused.headers["Retry-After"] = str(math.ceil(HOST_DEAL_SECONDS))
            return refused
        return _error(400, error.code, error.message)
    except REDIS_UNAVAILABLE:
        raise  # answered by redis_unavailable, as on every route
    except Exception:  # a server bug: the README's JSON error, not a bare 500
        log.exception("creating a match failed")
        return _error(400, "internal", "the server failed to create the match: try again later")
    request.app.state.metrics.matches.inc()
    created["join_url"] = f"{public_url(request)}/join/{created['code']}"
    return JSONResponse(created, status_code=201)


async def match_state(request: Request) -> Response:
    state = await request.app.state.service.public_state(request.path_params["code"][:32])
    if state is None:
        return _error(404, "no_match", "no match with that code")
    # The server's clock (Redis TIME, ms) in a header, so a page runs the match clock from the server's
    # start instant; the body stays the match's state alone.
    return JSONResponse(state, headers={"X-Server-Time-Ms": str(request.app.state.service.clock.now_ms())})


async def match_results(request: Request) -> Response:
    service: MatchService = request.app.state.service
    code = request.path_params["code"][:32]
    frame = await service.store.results(code)
    if frame is None:
        if await service.store.meta(code) is None:
            return _error(404, "no_match", "no match with that code")
        return _error(409, "not_finished", "the match has not finished: results come when every player has ended")
    return JSONResponse(msgspec.to_builtins(decode_server(frame)))


async def healthz(request: Request) -> Response:
    try:
        await request.app.state.service.store.redis.ping()
    except Exception as error:  # noqa: BLE001 - report any Redis failure
        # The error's text names Redis's host and port: for the log, not for any client.
        log.warning("health check: Redis did not answer PING (%s: %s)", type(error).__name__, error)
        return JSONResponse({"ok": False, "redis": "unreachable"}, status_code=503)
    return JSONResponse({"ok": True})


async def metrics(request: Request) -> Response:
    return Response(generate_latest(request.app.state.metrics.registry), media_type=CONTENT_TYPE_LATEST)


def create_app(settings: Settings | None = None) -> Starlette:
    """Build the application; resources open in its lifespan."""
    settings = settings or Settings.from_environ()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        embedded = None
        url = settings.redis_url
        if url is None:
            embedded = EmbeddedRedis(settings.data_dir)
            url = embedded.url
            log.info("embedded Redis at %s", url)
        client = await open_redis(url)  # a Redis Cluster when the node at REDIS_URL says it is one
        executor = worker_pool(settings.solver_workers)
        # Dead-game checks get their own worker, never queued behind a 30-second solver job.
        dead_executor = worker_pool(1)
        store = Store(client, settings.retention_s, settings.redis_wait_replicas, settings.redis_wait_ms)
        service = MatchService(store, settings, executor, dead_executor)
        service.metrics = store.metrics = app.state.metrics
        app.state.metrics.count_spectators(service.hub.spectators)
        app.state.service = service
        await service.start_background()
        # Full collections of the long-lived objects on a schedule, not every few seconds (server/gcpacing.py).
        service.spawn(service.run_forever(pace_collections, "collection pacing"))
        if settings.daily_variants:  # the daily challenge (server/daily.py): deals prepared ahead, days closed
            daily = service.daily = app.state.daily = DailyService(service.daily_link, settings.daily_variants,
                                                                   settings.daily_secret)
            service.spawn(service.run_forever(daily.run, "daily challenge"))
        for _ in range(settings.solver_workers):
            service.spawn(service.run_forever(
                lambda: fill_pool(store, service.solver, OFFERED_POOL_VARIANTS, settings.pool_target,
                                  settings.solver_seconds, settings.pure_solver),
                "deal pool"))
        try:
            yield
        finally:
            await service.stop_background()
            executor.shutdown(wait=False, cancel_futures=True)
            dead_executor.shutdown(wait=False, cancel_futures=True)
            for pool in (executor, dead_executor):  # see WorkerPool.stopped: a clean exit, bounded
                await pool.stopped(STOP_WORKERS_S)
            await client.aclose()
            if embedded is not None:
                embedded.close()

    async def http_error(request: Request, error: Exception) -> Response:
        """Unknown paths and methods answer like every route: ``{"error", "message"}`` (not plain text)."""
        assert isinstance(error, HTTPException)
        if error.status_code == 404:
            return error_response(404, "not_found", f"no such path: {request.url.path}")
        if error.status_code == 405:
            answer = error_response(405, "method_not_allowed", f"{request.method} is not allowed on {request.url.path}")
        else:
            answer = error_response(error.status_code, "malformed", str(error.detail))
        answer.headers.update(error.headers or {})  # a 405 keeps its Allow header (RFC 9110)
        return answer

    async def redis_unavailable(conn: Request | WebSocket, error: Exception) -> Response | None:
        """Redis down, stalled or failing over, on any route: 503 ``{"error": "internal", "message"}`` (the
        README's error shape; not Starlette's bare 500) and one log line; a WebSocket is closed with 1011."""
        # redis-py's cluster client also raises its base RedisClusterException for a request's own fault (keys in
        # two slots, a command it cannot route): with a traceback, such a bug stays visible in the log.
        own_fault = type(error) is not redis_errors.SlotNotCoveredError and isinstance(
            error, redis_errors.RedisClusterException)
        conn.app.state.metrics.redis_failed("request", error)
        log.error("Redis is unreachable: %s %s failed (%s: %s)", conn.scope.get("method", "WEBSOCKET"),
                  conn.url.path, type(error).__name__, error, exc_info=own_fault)
        if isinstance(conn, WebSocket):
            # Like every other refusal of a spectator: the error frame, then the close (README "Spectating").
            with contextlib.suppress(RuntimeError, WebSocketDisconnect):  # already closed, or the client left
                if conn.application_state is WebSocketState.CONNECTED:
                    await conn.send_bytes(encode(m.Error("internal", REDIS_UNAVAILABLE_MESSAGE)))
                await conn.close(WATCH_CLOSE_CODES["internal"])
            return None
        answer = error_response(503, "internal", REDIS_UNAVAILABLE_MESSAGE)
        answer.headers["Retry-After"] = "5"
        return answer

    app_metrics = Metrics(settings.pure_solver)
    app = Starlette(
        exception_handlers={HTTPException: http_error, **{kind: redis_unavailable for kind in REDIS_UNAVAILABLE}},
        routes=[
            WebSocketRoute("/play", player_endpoint),
            WebSocketRoute("/matches/{code:match}/watch", watch_endpoint),
            Route("/matches", create_match, methods=["POST"]),
            Route("/matches/{code:match}", match_state),
            Route("/matches/{code:match}/results", match_results),
            Route("/matches/{code:match}/events", match_events),
            # Spectating: replays once a match ended, and the web page (server/pages.py).
            Route("/matches/{code:match}/replays/{name:path}", match_replay),  # a name may hold "/"
            Route("/watch/{code:match}", watch_page),
            Route("/join/{code:match}", play_page),
            Route("/", index_page),
            Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
            Route("/healthz", healthz),
            Route("/metrics", metrics),
            *DAILY_ROUTES,
        ],
        lifespan=lifespan,
        middleware=[Middleware(MetricsMiddleware, metrics=app_metrics), Middleware(PagesMiddleware)],
    )
    app.state.settings = settings
    app.state.metrics = app_metrics
    app.state.create_limiters = {}
    return app


__all__ = ["create_app"]
