"""What named players cost: Redis memory per named player and per kept game, and the CPU a finished race's
recording adds to its finalize; prints figures, asserts nothing.

It starts a ``redis-server`` of its own (the tests' helper) and runs the match service in this process (no
WebSocket: the lobby, the start timer and the resigns are called as the tests of the lifecycle call them).

Memory: a name claimed with no game (its profile hash alone), then the same player with ``--games`` (1,000)
recorded games of two-player races over ``--deals`` deals against ``--rivals`` opponents (each recorded as
the finalize records one: :meth:`server.history.History.record_match`); ``MEMORY USAGE ... SAMPLES 0`` of each
of the player's keys, and per kept game the games list and its ``done`` marks divided by the games kept.

CPU: ``--races`` races of two named players (both resign), alternating with and without the history effect
(``RECORD_HISTORY`` a no-op), each race's ``finalize`` timed (this process's CPU, ``time.process_time``, and
wall time); the median of each and their difference. Redis's own CPU per race is the delta of its
``used_cpu_user + used_cpu_sys`` over each mode's races, divided by their count.

Run: ``python tests/benchmarks/players_bench.py [--games 1000] [--deals 300] [--rivals 20] [--races 200]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import redis.asyncio as aioredis

from protocol import messages as m
from server.core.lifecycle import Effect, State, TimerKind
from server.match.creation import CreateMatch
from server.matches import MatchService, Session
from server.names import name_key
from server.settings import Settings
from server.store import MatchMeta, Store
from server.store.keys import PROFILE_PARTS, name_hash, profile_key
from tests.integration.conftest import start_redis_server


async def memory(client: Any, service: MatchService, games: int, deals: int, rivals: int) -> None:
    history = service.profiles.history
    await service.profiles.claim("bench", "bench")
    for i in range(rivals):
        await service.profiles.claim(f"rival {i}", "bench")
    hashed = name_hash(name_key("bench"))
    claimed = await client.memory_usage(profile_key(hashed, "profile"), samples=0)
    settings = m.Settings("relaxed", False, 2, 1800, True, "safe", False)
    now = int(time.time() * 1000)
    for i in range(games):
        code = f"BENCH{i:07d}"
        meta = MatchMeta(code=code, state=State.PLAYING, settings=settings, seed=str(1000 + i % deals),
                         start_at_ms=now + i * 60_000)
        won = i % 2 == 0
        rows = [m.ResultRow(1, "bench" if won else f"rival {i % rivals}", "won", 200_000 + (i * 7919) % 100_000,
                            180 + i % 40, i % 5, 0, 104),
                m.ResultRow(2, f"rival {i % rivals}" if won else "bench", "resigned", 150_000, 90, 2, 1, 41)]
        await history.record_match(meta, m.Results(code, rows, meta.seed, "c" * 64, "n" * 32),
                                   now + i * 60_000 + 300_000)
    sizes = {part: await client.memory_usage(profile_key(hashed, part), samples=0) or 0 for part in PROFILE_PARTS}
    kept = await client.llen(profile_key(hashed, "games"))
    total = sum(sizes.values())
    print(f"a claimed name, no game: {claimed} bytes (its profile hash)")
    print(f"a named player with {games} games ({kept} kept) over {deals} deals and {rivals} opponents: "
          f"{total:,} bytes ({total / 1024:.0f} KiB)")
    for part, size in sizes.items():
        print(f"  {profile_key(hashed, part)}: {size:,} bytes")
    per_game = (sizes["games"] + sizes["done"]) / max(1, kept)
    print(f"per kept game (games list + done marks): {per_game:.0f} bytes")


async def race(service: MatchService, keys: dict[str, str], seed: int, timed: list[tuple[float, float]]) -> None:
    code = (await service.creation.create(CreateMatch(variant="relaxed", seed=str(seed), solvable_only=False)))["code"]
    sessions = []
    for name in ("ann", "bob"):
        session = Session(address="bench")
        await service.lobby.join(session, code, name, keys[name])
        sessions.append(session)
    for session in sessions:
        await service.lobby.ready(session)
    await service.timers.fire(code, TimerKind.START, service.clock.now_ms() + 10)
    meta = await service.store.matches.meta(code)
    assert meta is not None and meta.state is State.PLAYING
    for session in sessions:
        await service.playing.open_game(session, meta)
    finalize = service.ending.finalize

    async def measured(match: str) -> None:
        cpu, wall = time.process_time(), time.perf_counter()
        await finalize(match)
        timed.append((time.process_time() - cpu, time.perf_counter() - wall))

    service.ending.finalize = measured  # type: ignore[method-assign]
    try:
        for session in sessions:
            await service.playing.resign(session, 1)
    finally:
        service.ending.finalize = finalize  # type: ignore[method-assign]
    assert (await service.store.matches.meta(code) or meta).state is State.FINISHED


async def redis_cpu(client: Any) -> float:
    info = await client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


async def cpu(client: Any, service: MatchService, races: int) -> None:
    keys = {name: (await service.profiles.claim(name, "bench")).player_key for name in ("ann", "bob")}
    handlers = service.effects.handlers
    record = handlers[Effect.RECORD_HISTORY]

    async def nothing(step: Any) -> None:
        return None

    timed: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    redis_seconds = {True: 0.0, False: 0.0}
    for i in range(races):
        with_history = i % 2 == 0
        handlers[Effect.RECORD_HISTORY] = record if with_history else nothing
        before = await redis_cpu(client)
        await race(service, keys, i + 1, timed[with_history])
        redis_seconds[with_history] += await redis_cpu(client) - before
    handlers[Effect.RECORD_HISTORY] = record
    half = races // 2
    rows = {}
    for mode in (True, False):
        rows[mode] = (statistics.median(c for c, _ in timed[mode]) * 1e6,
                      statistics.median(w for _, w in timed[mode]) * 1e6, redis_seconds[mode] / half * 1e6)
    for mode, label in ((True, "with history"), (False, "without")):
        cpu_us, wall_us, redis_us = rows[mode]
        print(f"finalize {label}: process CPU median {cpu_us:.0f} us, wall median {wall_us:.0f} us, "
              f"Redis CPU {redis_us:.0f} us a race (the whole race)")
    print(f"the recording adds: {rows[True][0] - rows[False][0]:.0f} us of server CPU, "
          f"{rows[True][1] - rows[False][1]:.0f} us of wall time and {rows[True][2] - rows[False][2]:.0f} us of "
          f"Redis CPU per finished race of two named players ({half} races each, alternating)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--deals", type=int, default=300)
    parser.add_argument("--rivals", type=int, default=20)
    parser.add_argument("--races", type=int, default=200)
    args = parser.parse_args()
    print(f"load average at the start: {os.getloadavg()[0]:.2f}")
    process, url = start_redis_server(tempfile.mkdtemp(prefix="ftr-players-bench-"))
    client = aioredis.Redis.from_url(url)
    try:
        settings = Settings(countdown_s=0.0, names_per_hour=100_000, history_games=args.games)
        service = MatchService(Store(client, 3600), settings, None)
        await memory(client, service, args.games, args.deals, args.rivals)
        await cpu(client, service, args.races)
        await service.stop_background()
    finally:
        await client.aclose()
        process.terminate()
        process.wait(5)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
