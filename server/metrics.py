"""The server's Prometheus metrics: one registry per app, served at ``GET /metrics``.

=============================================  =========  ===============================================
family (labels)                                type       what
=============================================  =========  ===============================================
``ftr_build_info`` (version, python,           gauge      1; the installed version and which C paths
c_engine, c_solver)                                       run (``on``/``off``, :mod:`server.about`)
``ftr_http_requests_total`` (route, method,    counter    HTTP requests answered, counted when the
status)                                                   answer ends (a stream's at its end), and
                                                          WebSocket handshakes refused (GET); ``route``
                                                          is the route's template (``/matches/{code}``),
                                                          ``unmatched`` for a path no route has;
                                                          ``method`` is ``other`` past the usual seven
``ftr_http_request_duration_seconds`` (route,  histogram  from the request to the first part of its
method, status)                                           body (a stream's life is not its latency)
``ftr_websocket_messages_received_total``      counter    WebSocket messages received, by route
(route)                                                   (``/play``, ``/matches/{code}/watch``)
``ftr_websocket_messages_sent_total`` (route)  counter    WebSocket messages sent
``ftr_websocket_closes_total`` (route, code)   counter    WebSocket connections ended, by the close code
                                                          sent or received first (1011: the handler
                                                          failed; ``other``: a code the client chose
                                                          outside 1000-1015); a handshake refused before
                                                          it was accepted (no such route, say) opened no
                                                          WebSocket: it is an HTTP request (GET, 403)
``ftr_connections``                            gauge      open player connections (``/play``)
``ftr_commands_total``                         counter    play frames handled
``ftr_command_seconds``                        histogram  time to handle one play frame
``ftr_errors_total`` (code)                    counter    frames answered with an ``error``, by code
``ftr_matches_created_total``                  counter    matches created by ``POST /matches``
``ftr_match_transitions_total`` (state)        counter    matches this process moved into ``state``
                                                          (created: ``lobby`` or ``preparing``)
``ftr_matches`` (state)                        gauge      matches in each live state (``preparing``,
                                                          ``lobby``, ``countdown``, ``playing``) on this
                                                          Redis, of every server process: each process
                                                          says the same (``max``, not ``sum``); read at
                                                          each scrape (one HGETALL); none while Redis is
                                                          unreachable; ended matches (``finished``,
                                                          ``closed``) expire and are not counted here
``ftr_spectators`` (of)                        gauge      open spectator streams (``match``, ``daily``)
``ftr_deal_pool_deals`` (variant)              gauge      solvable deals ready in the pool, as the
                                                          pool's filler last read it
``ftr_solver_decision_seconds`` (job, result)  histogram  a solver job's time in the worker pool,
                                                          waiting included: ``host_deal`` (solved,
                                                          unsolvable, unknown; not with no solver
                                                          workers, where nothing is searched),
                                                          ``pool_find`` (found, none), ``daily_deal``
                                                          (found: a day's deal), ``dead_check`` (dead,
                                                          alive, unknown), ``hint`` (found, none: the
                                                          planner's hint, server/hints.py); ``error``
                                                          when it raised
``ftr_redis_errors_total`` (source, kind)      counter    Redis failures met, by where (``request``,
                                                          ``event streams``, ``wake-ups``, a background
                                                          loop's name) and exception class
``ftr_redis_reconnects_total`` (source)        counter    times a source that tries again (not
                                                          ``request``: a request fails and ends) reached
                                                          Redis again after failures
``process_*``, ``python_info``, ``python_gc_*``           prometheus-client's default collectors
=============================================  =========  ===============================================

Counters have no ``_created`` series (:func:`prometheus_client.disable_created_metrics`: one timestamp
series per counter and label set doubles what is stored for nothing a dashboard shows).
"""

from __future__ import annotations

import functools
import platform
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    Info,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
)
from redis.exceptions import RedisClusterException, RedisError
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .about import c_paths, version

disable_created_metrics()

UNMATCHED = "unmatched"
"""The ``route`` label of a request no route matched (a 404): never the raw path, whose values are unbounded."""

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Seconds: HTTP answers here take about a millisecond; a seeded creation may take the solver's seconds."""

SOLVER_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 30.0, 60.0)
"""Seconds: dead-game checks take milliseconds, a host's deal up to 6 s, a pool search up to 30 s."""

STANDARD_CLOSE_CODES = range(1000, 1016)
"""The close codes RFC 6455's registry defines: a client's own close code outside them (any of 3000-4999) is
counted as :data:`OTHER_CLOSE_CODE`, so a client cannot make the ``code`` label take thousands of values."""

OTHER_CLOSE_CODE = "other"

HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"})
"""The ``method`` label's own values; any other method a client sends (``PROPFIND``, ``MKCOL``, ... the HTTP
parser knows dozens) is :data:`OTHER_METHOD`, so a scanner cannot multiply the series by them."""

OTHER_METHOD = "other"

REDIS_FAILURES: tuple[type[Exception], ...] = (RedisError, RedisClusterException, OSError)
"""What :meth:`Metrics.redis_failed` counts: anything redis-py raises (an error reply too) and the socket's own
``OSError``; any other exception is a bug of the server's, not counted. Wider than
:data:`server.store.REDIS_UNAVAILABLE`, the outages a route answers 503 and a loop waits out: this one is for
counting what talking to Redis met, whatever its kind (it lives here, not in the store, which imports this
module)."""


class Metrics:
    """The server's Prometheus metrics on a registry of their own (:attr:`registry`; the module docstring
    lists the families). ``pure_solver`` (``FTR_SOLVER=python``) is reported by ``ftr_build_info``."""

    def __init__(self, pure_solver: bool = False) -> None:
        self.registry = registry = CollectorRegistry()
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        GCCollector(registry=registry)
        paths = c_paths(pure_solver)
        Info("ftr_build", "the installed version and the C paths that run", registry=registry).info({
            "version": version(), "python": platform.python_version(),
            "c_engine": "on" if paths["engine"] else "off", "c_solver": "on" if paths["solver"] else "off"})
        self.http_requests = Counter("ftr_http_requests_total", "HTTP requests answered",
                                     ["route", "method", "status"], registry=registry)
        self.http_seconds = Histogram("ftr_http_request_duration_seconds",
                                      "time from an HTTP request to the first part of its answer's body",
                                      ["route", "method", "status"], registry=registry, buckets=LATENCY_BUCKETS)
        self.ws_received = Counter("ftr_websocket_messages_received_total", "WebSocket messages received",
                                   ["route"], registry=registry)
        self.ws_sent = Counter("ftr_websocket_messages_sent_total", "WebSocket messages sent", ["route"],
                               registry=registry)
        self.ws_closes = Counter("ftr_websocket_closes_total", "WebSocket connections ended, by close code",
                                 ["route", "code"], registry=registry)
        self.connections = Gauge("ftr_connections", "open player connections", registry=registry)
        self.commands = Counter("ftr_commands_total", "commands handled", registry=registry)
        self.rejected = Counter("ftr_errors_total", "frames answered with an error", ["code"], registry=registry)
        self.command_seconds = Histogram("ftr_command_seconds", "time to handle one play frame",
                                         registry=registry,
                                         buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5))
        self.matches = Counter("ftr_matches_created_total", "matches created", registry=registry)
        self.transitions = Counter("ftr_match_transitions_total", "matches this process moved into a state",
                                   ["state"], registry=registry)
        self.live = Gauge("ftr_matches", "matches in each live state, of every server process on this Redis",
                          ["state"], registry=registry)
        self.spectators = Gauge("ftr_spectators", "open spectator streams in this process (SSE and WebSocket), "
                                "of a match or of a day of the daily challenge", ["of"], registry=registry)
        self.pool_deals = Gauge("ftr_deal_pool_deals", "solvable deals ready in the deal pool", ["variant"],
                                registry=registry)
        self.solver_seconds = Histogram("ftr_solver_decision_seconds",
                                        "time a solver job took in the worker pool, waiting included",
                                        ["job", "result"], registry=registry, buckets=SOLVER_BUCKETS)
        self.redis_errors = Counter("ftr_redis_errors_total", "Redis failures met", ["source", "kind"],
                                    registry=registry)
        self.redis_reconnects = Counter("ftr_redis_reconnects_total", "times Redis was reached again after failures",
                                        ["source"], registry=registry)
        self._failing: set[str] = set()

    def count_spectators(self, spectators: Callable[[str], int]) -> None:
        """Have ``ftr_spectators`` read ``spectators(of)`` (the hub's count, ``of`` = ``match`` or ``daily``)
        whenever /metrics is scraped."""
        self.spectators.labels("match").set_function(lambda: spectators("match"))
        self.spectators.labels("daily").set_function(lambda: spectators("daily"))

    def show_live(self, counts: dict[str, int] | None) -> None:
        """Have ``ftr_matches`` say ``counts`` (live state -> matches in it,
        :meth:`server.store.matches.LiveCounts.counts`), or nothing when they could not be read (``None``: Redis
        unreachable): no figure rather than an old one."""
        if counts is None:
            self.live.clear()
            return
        for state, count in counts.items():
            self.live.labels(state).set(count)

    def redis_failed(self, source: str, error: BaseException, *, retries: bool = True) -> None:
        """Count ``error`` met by ``source`` when it is a failure of Redis (:data:`REDIS_FAILURES`). A source
        that ``retries`` (a background loop, the hub's reads, the wake-ups' listener: each tries again until it
        reaches Redis) counts a reconnect at its next :meth:`redis_reached`; one that does not (a request, which
        is answered 503 and ends) counts its errors only."""
        if isinstance(error, REDIS_FAILURES):
            self.redis_errors.labels(source, type(error).__name__).inc()
            if retries:
                self._failing.add(source)

    def redis_reached(self, source: str) -> None:
        """``source`` reached Redis: a reconnect when it had failed since it last did."""
        if source in self._failing:
            self._failing.discard(source)
            self.redis_reconnects.labels(source).inc()

    def entered(self, state: str) -> None:
        """This process moved a match into ``state`` (a :class:`server.core.lifecycle.State` value)."""
        self.transitions.labels(state).inc()

    def solver_job(self, job: str) -> SolverTiming:
        """Time one solver job: ``with metrics.solver_job("pool_find") as timing: ...; timing.result = "found"``
        (``error`` when the block raises)."""
        return SolverTiming(self.solver_seconds, job)


@functools.cache
def default_metrics() -> Metrics:
    """The one :class:`Metrics` of this process that a :class:`~server.store.Store`, a
    :class:`~server.matches.MatchService` or a :class:`~server.store.wakeups.WakeUps` made without the app's
    counts into until the app gives it its own: built at the first call, then shared, so that a store or a
    service made outside the app (a test, a tool) costs no registry and no collectors of its own. The app's
    registry is always its own (:func:`server.app.create_app`)."""
    return Metrics()


class SolverTiming:
    """The context manager of :meth:`Metrics.solver_job`: set :attr:`result` inside the block (``None``: no
    decision was made, say no worker ran the job, and nothing is recorded)."""

    __slots__ = ("_histogram", "_job", "_started", "result")

    def __init__(self, histogram: Histogram, job: str) -> None:
        self._histogram, self._job, self._started = histogram, job, 0.0
        self.result: str | None = "done"

    def __enter__(self) -> Self:
        self._started = time.perf_counter()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if kind is not None and not issubclass(kind, Exception):  # cancelled: no decision to time
            return
        result = "error" if kind is not None else self.result
        if result is not None:
            self._histogram.labels(self._job, result).observe(time.perf_counter() - self._started)


def route_template(scope: Scope) -> str:
    """The template of the route that answered ``scope`` (``/matches/{code}``: convertors left out), found by
    the router (``scope["route"]``, Starlette's) or, for a request answered before routing (a middleware's
    page), by asking the app's routes; :data:`UNMATCHED` when none matches."""
    route = scope.get("route")
    if route is None:
        app = scope.get("app")
        for candidate in getattr(getattr(app, "router", None), "routes", ()):
            match, _ = candidate.matches(scope)
            if match is Match.FULL:
                route = candidate
                break
        else:
            return UNMATCHED
    return str(getattr(route, "path_format", None) or getattr(route, "path", UNMATCHED))


class MetricsMiddleware:
    """ASGI middleware counting HTTP requests and WebSocket messages and closes by route into ``metrics``.

    The route is read after routing (Starlette keeps it in the scope), so the label is the template, never
    the raw path. A WebSocket's counters are resolved once per connection: a message costs a type check and
    an increment."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        status = 0
        answered = 0.0

        async def send_counted(message: Message) -> None:
            nonlocal status, answered
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body" and not answered:
                answered = time.perf_counter()
            await send(message)

        try:
            await self.app(scope, receive, send_counted)
        except Exception:
            status = status or 500
            raise
        finally:
            method = scope["method"]
            labels = (route_template(scope), method if method in HTTP_METHODS else OTHER_METHOD, str(status or 500))
            self.metrics.http_requests.labels(*labels).inc()
            self.metrics.http_seconds.labels(*labels).observe((answered or time.perf_counter()) - started)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        metrics = self.metrics
        counters: list[Any] = []  # [received, sent] for the route, once the router has set it
        close_code: int | str | None = None  # the server's own code, or one a client sent (OTHER_CLOSE_CODE)
        started = time.perf_counter()
        accepted = False
        refused_status = 0  # an HTTP answer the handler gave to the handshake instead (ASGI's denial response)

        def route_counters() -> list[Any]:
            if not counters:
                route = route_template(scope)
                counters.extend((metrics.ws_received.labels(route), metrics.ws_sent.labels(route)))
            return counters

        async def receive_counted() -> Message:
            nonlocal close_code
            message = await receive()
            kind = message["type"]
            if kind == "websocket.receive":
                (counters or route_counters())[0].inc()
            elif kind == "websocket.disconnect" and close_code is None:
                code = int(message.get("code", 1005))
                close_code = code if code in STANDARD_CLOSE_CODES else OTHER_CLOSE_CODE
            return message

        async def send_counted(message: Message) -> None:
            nonlocal close_code, accepted, refused_status
            kind = message["type"]
            if kind == "websocket.send":
                (counters or route_counters())[1].inc()
            elif kind == "websocket.accept":
                accepted = True
            elif kind == "websocket.close" and close_code is None:
                close_code = int(message.get("code", 1000))
            elif kind == "websocket.http.response.start":
                refused_status = int(message["status"])
            await send(message)

        failed = False
        try:
            await self.app(scope, receive_counted, send_counted)
        except Exception:
            failed = True
            if close_code is None:
                close_code = 1011  # the server closes a socket whose handler raised with 1011
            raise
        finally:
            route = route_template(scope)
            if accepted:
                # A handler that returned without closing: the server closes the socket with 1000.
                metrics.ws_closes.labels(route, str(1000 if close_code is None else close_code)).inc()
            else:
                # Refused before it was accepted (no route, a close, a handler that raised or returned): no
                # WebSocket was opened, so no close; the server answered the handshake (a GET) over HTTP, 403 (500
                # for a handler that raised) unless the handler sent an answer of its own.
                status = str(refused_status or (500 if failed else 403))
                metrics.http_requests.labels(route, "GET", status).inc()
                metrics.http_seconds.labels(route, "GET", status).observe(time.perf_counter() - started)


__all__ = ["HTTP_METHODS", "OTHER_CLOSE_CODE", "OTHER_METHOD", "STANDARD_CLOSE_CODES", "UNMATCHED", "Metrics",
           "MetricsMiddleware", "SolverTiming", "default_metrics", "route_template"]
