"""Solvable-only matches take a deal the solver proved solvable, from the pool that
solver worker processes fill; an empty pool shows "preparing"."""

from __future__ import annotations

import time

import httpx
import pytest

from protocol import messages as m
from server.engine import deal, find_variant
from server.engine.solver import Budget, solve

from .conftest import worker_pids
from .wsclient import Player, create_match

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


async def test_a_solvable_only_match_is_prepared_then_dealt_a_solvable_deal(make_own_server) -> None:  # type: ignore[no-untyped-def]
    # A database of its own, empty: no pooled deal to start from, and no other test's preparing match to take
    # the deal the worker finds.
    server = make_own_server(FTR_SOLVER_WORKERS="1", FTR_POOL_TARGET="1", FTR_SOLVER_SECONDS="5")
    created = create_match(server.url, variant="relaxed", players=1)
    assert created["state"] in ("preparing", "lobby")
    deadline = time.monotonic() + 90
    state = httpx.get(f"{server.url}/matches/{created['code']}").json()
    while state["state"] == "preparing" and time.monotonic() < deadline:
        assert state["commitment"] == "" and "seed" not in state
        time.sleep(0.25)
        state = httpx.get(f"{server.url}/matches/{created['code']}").json()
    assert state["state"] == "lobby" and len(state["commitment"]) == 64

    async def play() -> m.Results:
        player = Player(server.ws_url)
        await player.connect()
        await player.join(created["code"], "solo")
        await player.send(m.Ready())
        started = await player.expect(m.Started)
        assert isinstance(started, m.Started)
        await player.resign()
        results = await player.expect(m.Results)
        await player.close()
        return results

    results = await play()
    assert results.commitment == state["commitment"]
    variant = find_variant("relaxed")
    proof = solve(deal(results.seed, variant), variant, Budget(nodes=200_000))
    assert proof.result == "solved"  # checked independently of the server's stored solution


def test_a_solver_worker_killed_by_the_system_is_replaced_and_deals_keep_coming(make_own_server, own_redis_url) -> None:  # type: ignore[no-untyped-def]
    """The OOM killer (or a crash) ends a solver worker: the process pool broke for good, every later job failed
    at once ("deal pool failed" twice a second) and a solvable-only match stayed "preparing" until a restart."""
    import os
    import signal

    import redis

    # A database of its own: in the shared one a match another test left preparing takes the one pooled deal.
    client = redis.Redis.from_url(own_redis_url)
    server = make_own_server(FTR_SOLVER_WORKERS="1", FTR_POOL_TARGET="1", FTR_SOLVER_SECONDS="5",
                         FTR_DAILY_VARIANTS="")
    deadline = time.monotonic() + 90
    while client.llen("pool:relaxed") < 1 and time.monotonic() < deadline:  # the worker has done a job
        time.sleep(0.2)
    workers = worker_pids(server.process.pid)
    assert client.llen("pool:relaxed") == 1 and len(workers) == 1, workers
    os.kill(workers[0], signal.SIGKILL)
    time.sleep(0.5)

    created = create_match(server.url, variant="relaxed", players=1)  # takes the pooled deal; the refill needs a worker
    second = create_match(server.url, variant="relaxed", players=1)
    state = httpx.get(f"{server.url}/matches/{second['code']}").json()
    while state["state"] == "preparing" and time.monotonic() < deadline:
        time.sleep(0.25)
        state = httpx.get(f"{server.url}/matches/{second['code']}").json()
    assert created["state"] == "lobby"
    assert state["state"] == "lobby" and len(state["commitment"]) == 64
    replacement = worker_pids(server.process.pid)
    assert len(replacement) == 1 and replacement != workers
    from pathlib import Path

    assert "a worker process died" in Path(server.log.name).read_text(errors="replace")


def test_a_hosts_own_deal_with_solvable_only_is_decided_at_creation(make_server) -> None:  # type: ignore[no-untyped-def]
    """A seed (or position text, as a PySolFC deal is given) the host chose, with solvable-only asked: proven
    unsolvable, creation is refused with a clear message; otherwise the deal is dealt as given (settings
    solvable_only false, as for every chosen deal) and the answer says whether it was proven solvable.
    Expected answers from the solver run here, independently of the server (classic 124: unsolvable, and 1:
    solved, both in well under a second of search; 3: open after minutes of search, README.md)."""
    from server.engine import format_position

    classic = find_variant("classic")
    assert solve(deal("1", classic), classic, Budget(nodes=200_000)).result == "solved"
    assert solve(deal("124", classic), classic, Budget(nodes=200_000)).result == "unsolvable"
    server = make_server(FTR_SOLVER_WORKERS="1", FTR_POOL_TARGET="0")

    def post(**settings: object) -> httpx.Response:
        return httpx.post(server.url + "/matches", json={"variant": "classic", "players": 1, **settings}, timeout=30)

    for lost in ({"seed": "124"}, {"deal": format_position(deal("124", classic))}):
        refused = post(**lost)
        assert refused.status_code == 400, refused.text
        body = refused.json()
        assert body["error"] == "unsolvable" and "proven unsolvable" in body["message"], body
    assert post(seed="124", solvable_only=False).status_code == 201  # not asked: dealt as given, unchecked

    won = post(seed="1")
    assert won.status_code == 201 and won.json()["solvable"] == "solved", won.text
    state = httpx.get(f"{server.url}/matches/{won.json()['code']}").json()
    assert state["settings"]["solvable_only"] is False and state["state"] == "lobby"

    started = time.monotonic()
    open_deal = post(seed="3")
    assert open_deal.status_code == 201 and open_deal.json()["solvable"] == "unknown", open_deal.text
    assert time.monotonic() - started < 20  # the creation's solver cap (dealpool.HOST_DEAL_SECONDS), not more
    state = httpx.get(f"{server.url}/matches/{open_deal.json()['code']}").json()
    assert state["settings"]["solvable_only"] is False


@pytest.mark.parametrize("workers", ["1", "2"])
async def test_a_flood_of_seeded_creations_from_one_address_leaves_others_and_the_pool_their_turn(
        make_own_server, own_redis_url, workers: str) -> None:  # type: ignore[no-untyped-def]
    """30 creations at once from one address, each with a seed the solver cannot decide in its 6 s (classic 3,
    open after minutes of search: README.md), kept up for a while: another address's creation is answered
    within about 7 s, and the pool of ready deals (empty at the start) still gets deals meanwhile. Before the
    solver's fair turns (server/scheduler.py) the other address waited behind the whole flood (74 s) and the
    pool got nothing. The flood's creations past its bound of waiting deals are refused with 429 and
    Retry-After; those that got a worker, or waited the whole 6 s, are created with "solvable": "unknown"."""
    import asyncio

    import redis

    server = make_own_server(FTR_SOLVER_WORKERS=workers, FTR_POOL_TARGET="1000", FTR_DAILY_VARIANTS="",
                             FTR_MATCHES_PER_MIN="100000", FTR_FORWARDED_ALLOW_IPS="127.0.0.1")
    pools = redis.Redis.from_url(own_redis_url)

    def pooled() -> int:
        return int(pools.llen("pool:classic") + pools.llen("pool:relaxed"))

    flood_s = 14.0
    answers: list[tuple[int, dict[str, object], str | None]] = []
    async with httpx.AsyncClient(base_url=server.url, timeout=60,
                                 limits=httpx.Limits(max_connections=40)) as client:
        def create(address: str, seed: str) -> object:
            return client.post("/matches", json={"variant": "classic", "players": 1, "seed": seed},
                               headers={"X-Forwarded-For": address})

        loop = asyncio.get_running_loop()
        stop = [loop.time() + flood_s]

        async def flooder() -> None:
            while loop.time() < stop[0]:
                answer = await create("203.0.113.1", "3")
                answers.append((answer.status_code, answer.json(), answer.headers.get("retry-after")))
                if answer.status_code == 429:
                    await asyncio.sleep(0.5)  # not a busy loop of refusals on a 2-core machine

        before = pooled()
        flood = [asyncio.create_task(flooder()) for _ in range(30)]
        await asyncio.sleep(2.0)  # the flood holds the solver's queue
        sent = loop.time()
        other = await create("203.0.113.2", "1")
        took = loop.time() - sent
        # Kept up until the pool has had its turn too (two deals), then no longer than that: what follows the
        # last new creation is the wait of those in flight (up to their 6 s).
        while loop.time() < stop[0] and pooled() - before < 2:
            await asyncio.sleep(0.2)
        stop[0] = loop.time()
        await asyncio.gather(*flood)
        after = pooled()
    pools.close()
    assert other.status_code == 201, other.text
    assert other.json()["solvable"] in ("solved", "unknown"), other.json()
    assert took < 7.5, took  # the 6 s of a host's deal include its wait for a worker, plus the answer's way
    assert after - before >= 2, (before, after)  # the pool kept its turn during the flood
    statuses = {status for status, _, _ in answers}
    assert statuses <= {201, 429}, statuses
    assert all(body["solvable"] == "unknown" for status, body, _ in answers if status == 201)
    refused = [(body, retry) for status, body, retry in answers if status == 429]
    assert refused and all(body["error"] == "rate_limited" and retry == "6" for body, retry in refused), refused[:3]
