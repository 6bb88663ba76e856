"""The Starlette application: routes, lifespan and the resources it owns.

Routes: ``/play`` (WebSocket, players), ``POST /matches``,
``GET /matches/{code}``, ``GET /matches/{code}/results``, ``GET /metrics``;
health (:mod:`server.health`): ``GET /livez`` (200 whenever the process
serves), ``GET /readyz`` (200 when Redis answers, else 503, within about a
second even while Redis stalls) and ``GET /healthz`` (the same as
``/readyz``); spectators: ``GET /matches/{code}/events`` (SSE),
``/matches/{code}/watch`` (WebSocket), ``GET /matches/{code}/replays/{name}``,
and the web pages (``/``, ``/join/{code}``, ``/watch/{code}``, ``/daily``, ``/static/``); the
daily challenge's routes (:mod:`server.daily_web`), the named players' (:mod:`server.players_web`) and the
groups' (:mod:`server.groups_web`).

Resources (Redis or the embedded Redis, the solver process pool, the match
service and its background tasks) are owned by the lifespan. The lifespan
does not wait for Redis: the server serves at once, and a task of its own
reaches Redis (retrying with backoff, saying once that it waits and once
that it got there), then opens the rest. Until then every route that needs
Redis answers as during a Redis outage (503 ``internal``; a WebSocket the
``internal`` error frame and close 1011), ``/livez`` 200 and ``/readyz`` 503.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import os
import signal
from collections.abc import AsyncIterator
from typing import Any, NoReturn, cast

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
from starlette.types import ExceptionHandler
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from protocol import messages as m
from protocol.codec import decode_server, encode
from protocol.codes import canonical_code

from .core.errors import ServiceError
from .daily import DailyService
from .daily_web import ROUTES as DAILY_ROUTES
from .dealpool import HOST_DEAL_SECONDS, fill_pool
from .embedded_redis import EmbeddedRedis
from .gcpacing import pace_collections
from .groups import GroupService
from .groups_web import ROUTES as GROUP_ROUTES
from .health import Readiness, livez, readyz
from .httpjson import client_address, error_response, over_rate, public_url, read_json
from .match.bots import level_list
from .match.creation import OFFERED_POOL_VARIANTS, CreateMatch
from .matches import MatchService
from .metrics import Metrics, MetricsMiddleware
from .pages import STATIC_DIR, PagesMiddleware, StaticFiles, index_page, play_page, watch_page
from .play import player_endpoint
from .players_web import ROUTES as PLAYER_ROUTES
from .replays import match_replay, record_replay
from .settings import Settings
from .store import REDIS_REFUSALS, REDIS_UNAVAILABLE, Outage, Store, open_redis
from .store.outages import describe
from .watch import WATCH_CLOSE_CODES, match_events, watch_endpoint
from .workers import worker_pool

log = logging.getLogger("forty_thieves.app")

REDIS_UNAVAILABLE_MESSAGE = "Redis is unreachable: try again later"

REACH_CAP_S = 5.0
"""At its start, the server tries to reach Redis again at most this long after the last try (seconds)."""


class RedisRefused(Exception):
    """At start, the Redis at ``REDIS_URL`` answers but refuses the server (a wrong or missing password or user,
    an ACL, a database number it does not have): a setting's fault, not an outage to wait out. The message is
    one line naming ``REDIS_URL`` (without its password) and what Redis said; the command exits with status 2."""


class RedisNotReady(redis_errors.ConnectionError):
    """The server has not reached Redis since it started: raised by any use of the match service meanwhile,
    and answered as a Redis outage is (it is one of :data:`REDIS_UNAVAILABLE`)."""


class _WaitingForRedis:
    """What ``app.state.service`` (and ``app.state.daily``, ``app.state.groups``) hold until Redis is reached: any
    attribute raises :class:`RedisNotReady`, so every route that needs Redis answers as during an outage, with no list of
    routes to keep in step, and the routes that need none (pages, health, metrics) never touch it."""

    def __getattr__(self, name: str) -> NoReturn:
        raise RedisNotReady("the server has not reached Redis since it started")


STOP_WORKERS_S = 1.0
"""How long the server's stop lets a job running in a solver worker end before it terminates the worker (its
answer is wanted no more): see :meth:`server.workers.WorkerPool.stop`."""


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


BOTS_RETRY_AFTER_S = 60
"""Seconds a client refused ``too_many_bots`` is asked to wait (a race with bots frees its places in minutes)."""


async def create_match(request: Request) -> Response:
    service: MatchService = request.app.state.service
    if over_rate(request, request.app.state.create_limiters, service.settings.matches_per_min):
        return _error(429, "rate_limited", "too many matches created from this address: wait a minute")
    create = await read_json(request, CreateMatch, 16384, "match settings")
    if isinstance(create, Response):
        return create
    try:
        created = await service.creation.create(create, client_address(request))
    except ServiceError as error:
        if error.code == "rate_limited":  # this address's own deals already wait for the solver
            refused = _error(429, error.code, error.message)
            refused.headers["Retry-After"] = str(math.ceil(HOST_DEAL_SECONDS))
            return refused
        if error.code == "too_many_bots":  # the server's places for bots are taken: it is busy, not the request
            busy = _error(503, error.code, error.message)
            busy.headers["Retry-After"] = str(BOTS_RETRY_AFTER_S)
            return busy
        return _error(404 if error.code == "no_ghost" else 400, error.code, error.message)
    except REDIS_UNAVAILABLE:
        raise  # answered by redis_unavailable, as on every route
    except Exception:  # a server bug: the README's JSON error, not a bare 500
        log.exception("creating a match failed")
        return _error(400, "internal", "the server failed to create the match: try again later")
    request.app.state.metrics.matches.inc()
    created["join_url"] = f"{public_url(request)}/join/{created['code']}"
    return JSONResponse(created, status_code=201)


async def bot_levels(request: Request) -> Response:
    """``GET /bots``: the bots' levels a match may have, weakest first (server/match/bots.py)."""
    return JSONResponse({"levels": level_list()})


async def match_state(request: Request) -> Response:
    state = await request.app.state.service.public.state(request.path_params["code"][:32])
    if state is None:
        return _error(404, "no_match", "no match with that code")
    # The server's clock (Redis TIME, ms) in a header, so a page runs the match clock from the server's
    # start instant; the body stays the match's state alone.
    return JSONResponse(state, headers={"X-Server-Time-Ms": str(request.app.state.service.clock.now_ms())})


async def match_results(request: Request) -> Response:
    service: MatchService = request.app.state.service
    code = request.path_params["code"][:32]
    frame = await service.store.matches.results(code)
    if frame is None:
        if await service.store.matches.meta(code) is None:
            return _error(404, "no_match", "no match with that code")
        return _error(409, "not_finished", "the match has not finished: results come when every player has ended")
    return JSONResponse(msgspec.to_builtins(decode_server(frame)))


LIVE_COUNTS_WAIT_S = 1.0
"""How long a scrape of ``/metrics`` waits for the live counts (``ftr_matches``) before it answers without them."""


async def metrics(request: Request) -> Response:
    """``GET /metrics``: this process's registry, with the live counts of matches read from Redis first."""
    metrics: Metrics = request.app.state.metrics
    try:
        async with asyncio.timeout(LIVE_COUNTS_WAIT_S):  # a stalled Redis must not stall the scrape
            counts: dict[str, int] | None = await request.app.state.service.store.live.counts()
    except REDIS_UNAVAILABLE + (TimeoutError,):  # not reached yet, or unreachable: no figure, not an old one
        counts = None
    metrics.show_live(counts)
    return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)


async def reach_redis(url: str) -> Any:
    """The server's Redis client for ``url`` (:func:`server.store.open_redis`: a cluster's when the node says
    it is one), once that Redis answers: until then tried again with capped, jittered backoff (at most
    :data:`REACH_CAP_S` apart), saying once that the server waits and once how long it took.

    Raises :class:`RedisRefused` when Redis answers but refuses the server (:data:`~server.store.REDIS_REFUSALS`,
    or an error reply such as ``DB index is out of range``): waiting would not help."""
    outage = Outage("start", log, cap_s=REACH_CAP_S)
    while True:
        try:
            client = await open_redis(url)
        except REDIS_REFUSALS + (redis_errors.ResponseError,) as error:  # before REDIS_UNAVAILABLE: a wrong password
            # is a ConnectionError in redis-py
            raise RedisRefused(f"REDIS_URL={_where(url)!r}: Redis refuses the server ({describe(error)}): check the "
                               "password, user and database number it gives") from None
        except REDIS_UNAVAILABLE as error:
            outage.failed(error, "Redis at %(where)s unreachable (%(failure)s): waiting for it", where=_where(url))
            await asyncio.sleep(outage.delay())
            continue
        outage.reached("Redis reached after %(seconds).1f s")
        return client


def _where(url: str) -> str:
    """``url`` without a password (for the log): ``redis://host:6379/0``, ``unix:///path/redis.socket``."""
    scheme, _, rest = url.partition("://")
    authority, slash, path = rest.partition("/")
    return f"{scheme}://{authority.rpartition('@')[2]}{slash}{path.split('?', 1)[0]}"


class _Running:
    """What the lifespan opens once Redis is reached (the client, the solver pools, the store, the match
    service and its background tasks), and closes at the end, in reverse."""

    def __init__(self, app: Starlette, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self.client: Any = None
        self.service: MatchService | None = None
        self.pools: list[Any] = []

    async def open(self, url: str) -> None:
        """Reach Redis (:func:`reach_redis`), then open everything and put the service (and the daily
        challenge) on ``app.state``. A Redis lost again while the service starts (its clock's first read) is
        waited for again."""
        settings, app = self.settings, self.app
        while True:
            self.client = await reach_redis(url)
            store = Store(self.client, settings.retention_s, settings.redis_wait_replicas, settings.redis_wait_ms)
            if not self.pools:
                # Dead-game checks get their own worker, never queued behind a 30-second solver job.
                self.pools = [worker_pool(settings.solver_workers), worker_pool(1)]
            executor, dead_executor = self.pools
            service = MatchService(store, settings, executor, dead_executor)
            service.metrics = store.metrics = app.state.metrics
            # Known to close() before its loops start: a stop during the opening stops the loops already started,
            # which would otherwise outlive the lifespan and hang the process's exit.
            self.service = service
            try:
                await service.start_background()
            except REDIS_UNAVAILABLE as error:
                log.warning("Redis was lost again as the server started (%s: %s)", type(error).__name__, error)
                self.service = None
                await service.stop_background()
                await self.client.aclose()
                continue
            break
        app.state.metrics.count_spectators(service.hub.spectators)
        # Full collections of the long-lived objects on a schedule, not every few seconds (server/gcpacing.py).
        service.spawn(service.run_forever(pace_collections, "collection pacing"))
        daily = None
        if settings.daily_variants:  # the daily challenge (server/daily.py): deals prepared ahead, days closed
            daily = service.daily = app.state.daily = DailyService(service.daily_link, settings.daily_variants,
                                                                   settings.daily_secret, profiles=service.profiles)
            service.spawn(service.run_forever(daily.run, "daily challenge"))
        app.state.groups = GroupService(service.profiles, daily)  # groups' boards are the daily's (server/groups.py)
        for _ in range(settings.solver_workers):
            service.spawn(service.run_forever(
                lambda: fill_pool(store, service.solver, OFFERED_POOL_VARIANTS, settings.pool_target,
                                  settings.solver_seconds, settings.pure_solver),
                "deal pool"))
        app.state.service = service
        app.state.readiness.opened = True

    async def close(self) -> None:
        """Stop the background tasks, the worker pools (a running job given :data:`STOP_WORKERS_S`, then its
        worker terminated: :meth:`~server.workers.WorkerPool.stop`) and the client; whatever was opened."""
        if self.service is not None:
            await self.service.stop_background()
        # Both at once, each bounded (WorkerPool.stop): a clean exit with no semaphore left to the resource tracker.
        await asyncio.gather(*(pool.stop(STOP_WORKERS_S) for pool in self.pools))
        if self.client is not None:
            await self.client.aclose()


REFUSALS_EVERY_S = 10.0
"""While Redis is unreachable, the requests refused for it are logged at most this often (seconds): the first one
with its route, then how many were refused in each such spell."""


class RefusalLog:
    """The log of the requests refused because Redis is unreachable (an outage, or the start's wait for Redis):
    the first of a spell is one warning naming its route and the error; the ones after it are counted, and
    :data:`REFUSALS_EVERY_S` later one line says how many were refused meanwhile (again every such spell while
    refusals go on). A spell with no refusal after its first line ends the outage's record: the next refusal is
    logged as a first. Runs in the event loop (its timer is the loop's)."""

    def __init__(self, logger: logging.Logger, every_s: float = REFUSALS_EVERY_S) -> None:
        self.log = logger
        self.every_s = every_s
        self.counted = 0
        """Refusals since the last line."""
        self.last_route = ""
        self._timer: asyncio.TimerHandle | None = None

    def refused(self, route: str, error: BaseException) -> None:
        """A request (``"GET /matches/X"``) answered 503 for ``error``: logged as the first of a spell, or
        counted."""
        if self._timer is None:
            self.log.warning("Redis is unreachable: %s refused (%s: %s); the refusals that follow are counted "
                             "every %g s", route, type(error).__name__, error, self.every_s)
            self._timer = asyncio.get_running_loop().call_later(self.every_s, self._spell_over)
            return
        self.counted += 1
        self.last_route = route

    def _spell_over(self) -> None:
        if not self.counted:
            self._timer = None
            return
        self.log.warning("Redis is unreachable: %d more request%s refused in the last %g s (the last: %s)",
                         self.counted, "" if self.counted == 1 else "s", self.every_s, self.last_route)
        self.counted = 0
        self._timer = asyncio.get_running_loop().call_later(self.every_s, self._spell_over)


def create_app(settings: Settings | None = None, redis_url: str | None = None) -> Starlette:
    """Build the application; resources open in its lifespan. ``redis_url`` (the embedded Redis the command
    started) takes the place of ``settings.redis_url``; with neither, the lifespan starts an embedded Redis."""
    settings = settings or Settings.from_environ()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        embedded = None
        url = redis_url or settings.redis_url
        if url is None:
            embedded = EmbeddedRedis(settings.data_dir)
            url = embedded.url
        log.info("Redis at %s", _where(url))
        app.state.service = _WaitingForRedis()
        if settings.daily_variants:
            app.state.daily = _WaitingForRedis()
        app.state.groups = _WaitingForRedis()
        app.state.readiness = Readiness(url)
        running = _Running(app, settings)
        opening = asyncio.create_task(running.open(url))
        # A failure to open that is not Redis's (a bug) ends the server, as it did when the lifespan opened it all.
        stop_if_failed = functools.partial(_stop_if_failed, app)
        opening.add_done_callback(stop_if_failed)
        try:
            yield
        finally:
            opening.remove_done_callback(stop_if_failed)
            opening.cancel()
            await asyncio.gather(opening, return_exceptions=True)
            await running.close()
            await app.state.readiness.close()
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
        README's error shape; not Starlette's bare 500), logged by :class:`RefusalLog` (the first of an outage, then
        a count every :data:`REFUSALS_EVERY_S`); a WebSocket is closed with 1011."""
        # redis-py's cluster client also raises its base RedisClusterException for a request's own fault (keys in
        # two slots, a command it cannot route): with a traceback, such a bug stays visible in the log.
        own_fault = type(error) is not redis_errors.SlotNotCoveredError and isinstance(
            error, redis_errors.RedisClusterException)
        # A request tries no more: its error is counted, and no reconnect will be (whether Redis is back is
        # /readyz's to say, and the reconnects of the sources that try again).
        conn.app.state.metrics.redis_failed("request", error, retries=False)
        route = f"{conn.scope.get('method', 'WEBSOCKET')} {conn.url.path}"
        if own_fault:  # a bug of the request's: every one logged, with its traceback
            log.error("%s failed in the Redis client (%s: %s)", route, type(error).__name__, error, exc_info=error)
        else:
            refusals.refused(route, error)
        if isinstance(conn, WebSocket):
            # Like every other refusal of a spectator: the error frame, then the close (README "Spectating").
            with contextlib.suppress(RuntimeError, WebSocketDisconnect):  # already closed, or the client left
                if conn.application_state is WebSocketState.CONNECTING:  # refused before it was accepted
                    await conn.accept()
                if conn.application_state is WebSocketState.CONNECTED:
                    await conn.send_bytes(encode(m.Error("internal", REDIS_UNAVAILABLE_MESSAGE)))
                await conn.close(WATCH_CLOSE_CODES["internal"])
            return None
        answer = error_response(503, "internal", REDIS_UNAVAILABLE_MESSAGE)
        answer.headers["Retry-After"] = "5"
        return answer

    # One handler for HTTP and WebSocket routes alike, which Starlette's handler type gives one of each.
    on_redis_error = cast(ExceptionHandler, redis_unavailable)
    refusals = RefusalLog(log)
    app_metrics = Metrics(settings.pure_solver)
    app = Starlette(
        exception_handlers={HTTPException: http_error, **{kind: on_redis_error for kind in REDIS_UNAVAILABLE}},
        routes=[
            WebSocketRoute("/play", player_endpoint),
            WebSocketRoute("/matches/{code:match}/watch", watch_endpoint),
            Route("/matches", create_match, methods=["POST"]),
            Route("/bots", bot_levels),
            Route("/matches/{code:match}", match_state),
            Route("/matches/{code:match}/results", match_results),
            Route("/matches/{code:match}/events", match_events),
            # Spectating: replays once a match ended, and the web page (server/pages.py).
            Route("/matches/{code:match}/replays/{name:path}", match_replay),  # a name may hold "/"
            Route("/replays", record_replay, methods=["POST"]),  # any record its sender holds (the CLI's replay)
            Route("/watch/{code:match}", watch_page),
            Route("/join/{code:match}", play_page),
            Route("/", index_page),
            Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
            Route("/livez", livez),
            Route("/readyz", readyz),
            Route("/healthz", readyz),  # the readiness probe's older name
            Route("/metrics", metrics),
            *DAILY_ROUTES,
            *PLAYER_ROUTES,
            *GROUP_ROUTES,
        ],
        lifespan=lifespan,
        middleware=[Middleware(MetricsMiddleware, metrics=app_metrics), Middleware(PagesMiddleware)],
    )
    app.state.settings = settings
    app.state.metrics = app_metrics
    app.state.create_limiters = {}
    app.state.failed = 0  # the exit status when the server could not start (_stop_if_failed), else 0
    return app


def _stop_if_failed(app: Starlette, opening: asyncio.Task[None]) -> None:
    """The opening task's end: a failure other than an outage (which it waits out) is one it cannot run with,
    and the process is asked to stop as for a SIGTERM, with ``app.state.failed`` set to the exit status the
    command then ends with (not that of the signal): a Redis that refuses the server (:class:`RedisRefused`) is
    a setting's fault, one line and status 2, as every bad setting; anything else is a bug, logged with its
    traceback, status 3."""
    if opening.cancelled() or opening.exception() is None:
        return
    error = opening.exception()
    if isinstance(error, RedisRefused):
        log.critical("%s", error)
        app.state.failed = 2
    else:
        log.critical("the server could not start", exc_info=error)
        app.state.failed = 3
    os.kill(os.getpid(), signal.SIGTERM)


__all__ = ["RedisNotReady", "RedisRefused", "create_app", "reach_redis"]
