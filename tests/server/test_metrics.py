"""server/metrics.py's registry and the Grafana dashboard built on it (server/deploy/grafana-dashboard.json)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, Router, WebSocketRoute
from starlette.types import Message
from starlette.websockets import WebSocket

from server.metrics import OTHER_CLOSE_CODE, OTHER_METHOD, Metrics, MetricsMiddleware

DASHBOARD = Path(__file__).resolve().parents[2] / "server" / "deploy" / "grafana-dashboard.json"


def exported_series() -> set[str]:
    """Every series name a server's /metrics may carry (a labelled family shows none before its first use)."""
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",), "info": ("_info",)}
    return {family.name + suffix for family in Metrics().registry.collect()
            for suffix in suffixes.get(family.type, ("",))}


def test_the_dashboard_queries_only_series_the_server_exports() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    series = exported_series()
    queried = {name for panel in dashboard["panels"] for target in panel["targets"]
               for name in re.findall(r"\b(?:ftr|process|python)_[a-z_]+", target["expr"])}
    assert queried, "no query found"
    assert queried <= series, queried - series
    ftr = {name.removesuffix("_bucket") for name in queried if name.startswith("ftr_")}
    # Every family of the server's own is on a panel (histograms by their buckets or count).
    own = {family.name for family in Metrics().registry.collect() if family.name.startswith("ftr_")}
    shown = {name for name in own if any(q == name or q.startswith(name + "_") for q in ftr | queried)}
    assert shown == own, own - shown


def test_counters_have_no_created_series() -> None:
    metrics = Metrics()
    metrics.matches.inc()
    names = {sample.name for family in metrics.registry.collect() for sample in family.samples}
    assert "ftr_matches_created_total" in names
    assert not [name for name in names if name.endswith("_created")]


async def _closed_by_client(metrics: Metrics, code: int) -> None:
    """One WebSocket connection to ``/echo`` through :class:`MetricsMiddleware` that the client closes with
    ``code`` after one message."""

    async def echo(websocket: WebSocket) -> None:
        await websocket.accept()
        while (await websocket.receive())["type"] != "websocket.disconnect":
            pass

    app = MetricsMiddleware(Router(routes=[WebSocketRoute("/echo", echo)]), metrics)
    incoming = [{"type": "websocket.connect"}, {"type": "websocket.receive", "bytes": b"x"},
                {"type": "websocket.disconnect", "code": code}]

    async def receive() -> Message:
        return incoming.pop(0)

    async def send(message: Message) -> None:
        pass

    scope = {"type": "websocket", "path": "/echo", "root_path": "", "headers": [], "query_string": b"",
             "scheme": "ws", "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 5000), "subprotocols": []}
    await app(scope, receive, send)


def test_a_client_chosen_close_code_is_counted_as_other() -> None:
    """Close codes 3000-4999 are the client's to choose: each would be a label value of its own."""
    metrics = Metrics()
    for code in (1000, 1001, 3999, 4321, 4998):
        asyncio.run(_closed_by_client(metrics, code))
    closes = {sample.labels["code"]: sample.value for family in metrics.registry.collect()
              if family.name == "ftr_websocket_closes" for sample in family.samples if sample.name.endswith("_total")}
    assert closes == {"1000": 1, "1001": 1, OTHER_CLOSE_CODE: 3}


def test_an_unusual_method_is_counted_as_other() -> None:
    """The HTTP parser passes dozens of methods (``PROPFIND``, ``MKCOL``, ...): each would be a label value."""

    async def ask(app: Any, method: str) -> None:
        scope = {"type": "http", "method": method, "path": "/matches", "root_path": "", "headers": [],
                 "query_string": b"", "scheme": "http", "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 5000),
                 "http_version": "1.1"}

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Message) -> None:
            pass

        await app(scope, receive, send)

    async def created(request: Request) -> Response:
        return Response(status_code=201)

    metrics = Metrics()
    app = MetricsMiddleware(Router(routes=[Route("/matches", created, methods=["POST"])]), metrics)
    for method in ("POST", "GET", "PROPFIND", "MKCOL", "LINK"):
        asyncio.run(ask(app, method))
    counted = {(sample.labels["method"], sample.labels["status"]): sample.value
               for family in metrics.registry.collect() if family.name == "ftr_http_requests"
               for sample in family.samples if sample.name.endswith("_total")}
    assert counted == {("POST", "201"): 1, ("GET", "405"): 1, (OTHER_METHOD, "405"): 3}


def test_a_store_and_a_service_made_outside_the_app_share_one_default_and_the_app_keeps_its_own() -> None:
    """A :class:`Store` or :class:`MatchService` built without the app's metrics builds no registry of its own (a
    registry with the process, platform and GC collectors each): they count into one shared default."""
    import redis.asyncio as aioredis

    from server.app import create_app
    from server.matches import MatchService
    from server.settings import Settings
    from server.store import Store

    built: list[Metrics] = []
    original = Metrics.__init__

    def counted(self: Metrics, *args: Any, **kwargs: Any) -> None:
        built.append(self)
        original(self, *args, **kwargs)

    Metrics.__init__ = counted  # type: ignore[method-assign]
    try:
        client = aioredis.Redis()  # no connection is made: nothing here reads Redis
        stores = [Store(client, 60) for _ in range(3)]
        services = [MatchService(store, Settings(), None) for store in stores]
        app = create_app(Settings(), redis_url="redis://127.0.0.1:1/0")
    finally:
        Metrics.__init__ = original  # type: ignore[method-assign]
    defaults = {id(store.metrics) for store in stores} | {id(service.metrics) for service in services}
    assert len(defaults) == 1
    assert app.state.metrics is not stores[0].metrics
    assert app.state.metrics in built and len(built) <= 2  # the app's own, and the shared default at most once


def test_a_source_that_does_not_retry_counts_errors_and_never_a_reconnect() -> None:
    metrics = Metrics()
    metrics.redis_failed("request", ConnectionError("refused"), retries=False)
    metrics.redis_reached("request")
    metrics.redis_failed("timers", ConnectionError("refused"))
    metrics.redis_failed("timers", ValueError("a bug, not Redis"))
    metrics.redis_reached("timers")
    metrics.redis_reached("timers")  # reached again without a failure between: no second reconnect
    counted = {(family.name, sample.labels.get("source"), sample.labels.get("kind")): sample.value
               for family in metrics.registry.collect() if family.name.startswith("ftr_redis")
               for sample in family.samples if sample.name.endswith("_total")}
    assert counted == {("ftr_redis_errors", "request", "ConnectionError"): 1,
                       ("ftr_redis_errors", "timers", "ConnectionError"): 1,
                       ("ftr_redis_reconnects", "timers", None): 1}
