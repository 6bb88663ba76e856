"""``GET /metrics`` of a real server after a little play: every family parses (prometheus-client's own parser) and
the counts this test can know are what it did (server/metrics.py lists the families)."""

from __future__ import annotations

import asyncio
import platform
import subprocess
import time
from collections.abc import Callable
from typing import Any

import httpx
import msgspec
import pytest
import redis
import websockets
from prometheus_client.parser import text_string_to_metric_families

from protocol import messages as m
from server.about import c_paths, version

from .conftest import ServerProcess, start_redis_server
from .wsclient import Player, create_match

# The parser names a counter's family without its ``_total``.
FAMILIES = {
    "ftr_build_info": "gauge", "ftr_http_requests": "counter", "ftr_http_request_duration_seconds": "histogram",
    "ftr_websocket_messages_received": "counter", "ftr_websocket_messages_sent": "counter",
    "ftr_websocket_closes": "counter", "ftr_connections": "gauge", "ftr_commands": "counter",
    "ftr_command_seconds": "histogram", "ftr_errors": "counter", "ftr_matches_created": "counter",
    "ftr_match_transitions": "counter", "ftr_spectators": "gauge", "ftr_deal_pool_deals": "gauge",
    "ftr_solver_decision_seconds": "histogram", "ftr_redis_errors": "counter", "ftr_redis_reconnects": "counter",
    # prometheus-client's default collectors
    "process_cpu_seconds": "counter", "process_resident_memory_bytes": "gauge", "python_info": "gauge",
    "python_gc_collections": "counter",
}

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(server: ServerProcess) -> tuple[dict[str, str], Samples]:
    """The families (name -> type) and samples ((name, labels) -> value) of one ``GET /metrics``."""
    answer = httpx.get(server.url + "/metrics", timeout=10)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    families, samples = {}, {}
    for family in text_string_to_metric_families(answer.text):
        families[family.name] = family.type
        for sample in family.samples:
            samples[sample.name, frozenset(sample.labels.items())] = sample.value
    return families, samples


def value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, frozenset(labels.items())))


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(v for (n, have), v in samples.items() if n == name and wanted <= have)


def eventually(server: ServerProcess, check: Callable[[Samples], bool], within: float = 10) -> Samples:
    """Scrape until ``check(samples)`` holds (a connection's close is counted once its handler has returned)."""
    deadline = time.monotonic() + within
    while True:
        _, samples = scrape(server)
        if check(samples) or time.monotonic() > deadline:
            return samples
        time.sleep(0.1)


def test_every_family_parses_and_counts_what_a_little_play_did(make_own_server: Any, own_redis_url: str) -> None:
    """Create a match (a host's seed, decided by the solver), read it, join it over a WebSocket, watch it,
    watch a match that does not exist, ask a path no route has: then each count says exactly that, by route
    template, method, status and close code."""
    server = make_own_server(FTR_SOLVER_WORKERS="1", FTR_POOL_TARGET="0")
    created = create_match(server.url, variant="relaxed", seed="2", players=2)  # solvable_only: decided now
    code = created["code"]
    assert created["state"] == "lobby"
    assert httpx.get(f"{server.url}/matches/{code}", timeout=10).status_code == 200
    assert httpx.get(f"{server.url}/no/such/path", timeout=10).status_code == 404

    async def play() -> tuple[int, int]:
        player = Player(server.ws_url)
        await player.connect()
        await player.join(code, "ann")
        await player.drain()
        _, samples = scrape(server)
        assert value(samples, "ftr_connections") == 1
        spectator = await websockets.connect(f"{server.url.replace('http', 'ws')}/matches/{code}/watch",
                                             compression=None)
        watched = [await asyncio.wait_for(spectator.recv(), 10)]  # the lobby, at least
        while True:
            try:
                watched.append(await asyncio.wait_for(spectator.recv(), 0.3))
            except TimeoutError:
                break
        _, samples = scrape(server)
        assert value(samples, "ftr_spectators", of="match") == 1
        await spectator.close()
        async with websockets.connect(f"{server.url.replace('http', 'ws')}/matches/NOSUCHMATCH/watch") as refused:
            error = msgspec.msgpack.decode(await refused.recv())
            assert error["code"] == "no_match"
            with pytest.raises(websockets.ConnectionClosed):
                await refused.recv()
            assert refused.close_code == 4004
        await player.close()
        return len(player.frames), len(watched) + 1  # the refused spectator's error frame too

    sent_to_player, sent_to_spectators = asyncio.run(play())
    watch = "/matches/{code}/watch"
    samples = eventually(server, lambda s: total(s, "ftr_websocket_closes_total") == 3)
    families, _ = scrape(server)

    for name, kind in FAMILIES.items():
        assert families.get(name) == kind, (name, families.get(name))
    assert not [key for key in samples if key[0].endswith("_created")]  # turned off
    paths = c_paths()
    assert value(samples, "ftr_build_info", version=version(), python=platform.python_version(),
                 c_engine="on" if paths["engine"] else "off", c_solver="on" if paths["solver"] else "off") == 1

    assert value(samples, "ftr_matches_created_total") == 1
    assert value(samples, "ftr_match_transitions_total", state="lobby") == 1
    assert value(samples, "ftr_http_requests_total", route="/matches", method="POST", status="201") == 1
    assert value(samples, "ftr_http_requests_total", route="/matches/{code}", method="GET", status="200") == 1
    assert value(samples, "ftr_http_requests_total", route="unmatched", method="GET", status="404") == 1
    assert value(samples, "ftr_http_request_duration_seconds_count", route="/matches", method="POST",
                 status="201") == 1
    assert not [key for key in samples if code in str(key)]  # a route's template, never the path it was asked by

    assert value(samples, "ftr_websocket_messages_received_total", route="/play") == 2  # hello, join
    assert value(samples, "ftr_websocket_messages_sent_total", route="/play") == sent_to_player
    assert value(samples, "ftr_websocket_messages_sent_total", route=watch) == sent_to_spectators
    assert value(samples, "ftr_websocket_closes_total", route="/play", code="1000") == 1
    assert value(samples, "ftr_websocket_closes_total", route=watch, code="1000") == 1
    assert value(samples, "ftr_websocket_closes_total", route=watch, code="4004") == 1
    assert value(samples, "ftr_connections") == 0
    assert value(samples, "ftr_spectators", of="match") == 0

    assert value(samples, "ftr_solver_decision_seconds_count", job="host_deal", result="solved") == 1
    with redis.Redis.from_url(own_redis_url) as client:
        ready = {variant: client.llen(f"pool:{variant}") for variant in ("classic", "relaxed")}
    for variant, deals in ready.items():
        assert value(samples, "ftr_deal_pool_deals", variant=variant) == deals
    assert total(samples, "ftr_redis_errors_total") == 0
    assert value(samples, "process_resident_memory_bytes") > 0  # type: ignore[operator]


def test_redis_errors_and_reconnects_are_counted_by_source(tmp_path: Any) -> None:
    """Redis stopped for a moment under a spectator's stream: each request that met it counts once as a
    ``request`` error, the hub's reads of the event streams count errors and, once Redis is back, one
    reconnect; the timers' loop (a supervised background loop) counts its errors and its reconnect too. A
    request tries no more once answered, so ``request`` counts no reconnect, even when the requests after
    succeed."""
    redis_process, url = start_redis_server(str(tmp_path))
    server = None
    try:
        server = ServerProcess(url, FTR_DAILY_VARIANTS="")
        code = create_match(server.url, variant="relaxed", seed="2", players=2, solvable_only=False)["code"]

        async def outage() -> None:
            nonlocal redis_process
            async with websockets.connect(f"{server.url.replace('http', 'ws')}/matches/{code}/watch"):
                # Its subscription open: the hub follows the match's stream (a match no one joined has no event).
                assert value(eventually(server, lambda s: value(s, "ftr_spectators", of="match") == 1),
                             "ftr_spectators", of="match") == 1
                redis_process.terminate()
                redis_process.wait(5)
                async with httpx.AsyncClient(timeout=30) as client:
                    for _ in range(3):
                        assert (await client.get(f"{server.url}/matches/{code}")).status_code == 503
                await asyncio.sleep(1.0)  # the hub's blocking read fails and is tried again meanwhile
                redis_process = await asyncio.to_thread(subprocess.Popen, [*redis_process.args])  # back, same port

        asyncio.run(outage())
        samples = eventually(server, lambda s: total(s, "ftr_redis_reconnects_total", source="event streams") >= 1
                             and total(s, "ftr_redis_reconnects_total", source="timers") >= 1, within=20)
        # Redis is back, without its data (no persistence): the request reaches it and finds no match.
        assert httpx.get(f"{server.url}/matches/{code}", timeout=10).status_code == 404
        samples = eventually(server, lambda s: value(s, "ftr_http_requests_total", route="/matches/{code}",
                                                     method="GET", status="404") == 1)
        assert total(samples, "ftr_redis_errors_total", source="request") == 3
        assert value(samples, "ftr_redis_errors_total", source="request", kind="ConnectionError") == 3
        assert total(samples, "ftr_redis_errors_total", source="event streams") >= 1
        assert value(samples, "ftr_redis_reconnects_total", source="event streams") == 1
        assert total(samples, "ftr_redis_errors_total", source="timers") >= 1
        assert value(samples, "ftr_redis_reconnects_total", source="timers") == 1  # one outage, one reconnect
        assert value(samples, "ftr_redis_reconnects_total", source="request") is None
    finally:
        if server is not None:
            server.stop()
        if redis_process.poll() is None:
            redis_process.terminate()
            redis_process.wait(5)


def test_the_days_deal_search_is_timed(make_own_server: Any, own_redis_url: str) -> None:
    """The daily challenge's search for its day's deal is a solver decision like the others: ``daily_deal``, one
    per day's deal this server made."""
    server = make_own_server(FTR_DAILY_VARIANTS="relaxed")

    def deals_made() -> int:
        with redis.Redis.from_url(own_redis_url) as client:
            return sum(1 for _ in client.scan_iter("{d:*:relaxed}:deal"))

    # The server prepares the next day's deal too, so a deal's key may be written just before its decision is
    # counted: the two are compared until they agree (each deal made is one decision timed).
    seen: list[tuple[float | None, int]] = []

    def agree(samples: Samples) -> bool:
        seen.append((value(samples, "ftr_solver_decision_seconds_count", job="daily_deal", result="found"),
                     deals_made()))
        return seen[-1][0] == seen[-1][1] >= 1

    eventually(server, agree, within=30)
    assert seen[-1][0] == seen[-1][1] >= 1, seen[-5:]


def test_a_refused_websocket_handshake_is_an_http_answer_not_a_close(server: ServerProcess) -> None:
    """A WebSocket asked of a path no route has is refused before it opens (uvicorn answers 403): no connection
    was opened or closed, so it counts as a ``GET`` answered 403, never as a close with code 1000."""
    async def refused() -> int:
        with pytest.raises(websockets.InvalidStatus) as caught:
            await websockets.connect(f"{server.url.replace('http', 'ws')}/no/such/socket")
        return caught.value.response.status_code

    assert asyncio.run(refused()) == 403
    refusals = {"route": "unmatched", "method": "GET", "status": "403"}
    samples = eventually(server, lambda s: value(s, "ftr_http_requests_total", **refusals) is not None)
    assert value(samples, "ftr_http_requests_total", **refusals) == 1  # a new server: its only such request
    assert value(samples, "ftr_http_request_duration_seconds_count", **refusals) == 1
    assert total(samples, "ftr_websocket_closes_total", route="unmatched") == 0


def test_matches_by_live_state_are_counted_across_processes(make_own_server: Any) -> None:
    """Two server processes on one Redis: a match created on each, one of them played from the other process.
    ``ftr_matches`` says how many are in each live state, the same on both, as each match moves: lobby, playing,
    then out of the count when it ends (finished) or when its lobby times out (closed)."""
    first = make_own_server(FTR_LOBBY_TIMEOUT_S="4", FTR_DAILY_VARIANTS="")
    second = make_own_server(FTR_LOBBY_TIMEOUT_S="4", FTR_DAILY_VARIANTS="")

    def live(server: ServerProcess) -> dict[str, float | None]:
        _, samples = scrape(server)
        return {state: value(samples, "ftr_matches", state=state)
                for state in ("preparing", "lobby", "countdown", "playing")}

    def counts(**states: int) -> dict[str, float | None]:
        return {state: float(states.get(state, 0)) for state in ("preparing", "lobby", "countdown", "playing")}

    def becomes(wanted: dict[str, float | None], within: float = 10) -> None:
        deadline = time.monotonic() + within
        while (live(first), live(second)) != (wanted, wanted) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert live(first) == live(second) == wanted

    assert live(first) == live(second) == counts()
    solo = create_match(first.url, variant="relaxed", players=1, solvable_only=False, time_limit_s=60)["code"]
    create_match(second.url, variant="relaxed", players=2, solvable_only=False)
    assert live(first) == live(second) == counts(lobby=2)  # no process waits: every one reads the same counts

    async def play() -> None:
        player = Player(second.ws_url)  # the match was created by the first process
        await player.connect()
        await player.join(solo, "ann")
        await player.send(m.Ready())
        await player.expect(m.Started)
        await asyncio.to_thread(becomes, counts(lobby=1, playing=1))
        await player.resign()
        await player.expect(m.Results)
        await player.close()

    asyncio.run(play())
    becomes(counts(lobby=1))  # the solo match has finished
    becomes(counts(), within=15)  # the other's lobby timed out: closed
