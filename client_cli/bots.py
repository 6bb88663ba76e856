"""``forty-thieves bots --count N``: a load generator of bot players.

Each bot is a :class:`~client_cli.race.RaceClient` (the same connection,
resume and reconnect code as a person's client) that joins a match, says
``ready``, and once the deal arrives plays legal moves the server sent,
picked at random (never ``u``), one every ``--delay`` seconds, for at most
``--moves`` commands; then it resigns unless its game ended, and waits for
the results. Without ``--match`` the bots create their own matches of
``--players`` bots each (any deal, or ``--seed``); with ``--match CODE``
they all join that one.

It prints a summary: bots, matches, commands sent, refusals, errors, the
reply latency (median, 95th and 99th percentile, max, in ms) and the
commands per second; ``--json`` prints it as one JSON object (the server
benchmark may reuse :func:`bot` and :func:`summary`). Exit status 0 when
every bot got its match's results.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any

from protocol import messages as m

from .race import RaceClient
from .server_link import ClientError, create_match
from .tokens import TokenStore


@dataclass
class BotStats:
    """What one bot saw."""

    name: str
    commands: int = 0
    refused: int = 0
    errors: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    finished: bool = False
    status: str = ""


async def bot(server: str, code: str, name: str, *, moves: int, delay: float, store: TokenStore,
              rng: random.Random | None = None) -> BotStats:
    """Run one bot to the end of its match (see the module docstring)."""
    rng = rng or random.Random()
    stats = BotStats(name)
    client = RaceClient(server, code, name, store=store, auto_ready=True)
    runner = asyncio.ensure_future(client.run())
    try:
        started = asyncio.ensure_future(client.started.wait())
        await asyncio.wait({started, runner}, return_when=asyncio.FIRST_COMPLETED)
        while not runner.done() and stats.commands < moves and not client.state.my_game_over:
            choices = [x.command for x in client.state.legal if x.command != "u"]
            if not choices:
                break
            before = time.perf_counter()
            future = client.play(rng.choice(choices))
            either: set[asyncio.Future[Any]] = {future, runner}
            await asyncio.wait(either, timeout=30, return_when=asyncio.FIRST_COMPLETED)
            if not future.done():
                stats.errors += 1
                break
            stats.latencies_ms.append((time.perf_counter() - before) * 1000)
            stats.commands += 1
            reply = future.result()
            if isinstance(reply, m.Rejected):
                stats.refused += 1
            elif isinstance(reply, m.Error):
                stats.errors += 1
            if delay:
                await asyncio.sleep(delay * rng.uniform(0.5, 1.5))
        if not runner.done() and not client.state.my_game_over:
            future = client.resign()
            either = {future, runner}
            await asyncio.wait(either, timeout=30, return_when=asyncio.FIRST_COMPLETED)
        done = asyncio.ensure_future(client.done.wait())
        await asyncio.wait({done, runner}, timeout=600, return_when=asyncio.FIRST_COMPLETED)
        if runner.done() and runner.exception() is not None:
            stats.errors += 1
        stats.finished = client.done.is_set()
        stats.status = client.state.status
        return stats
    finally:
        if not runner.done():
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)
        await client.close()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summary(stats: list[BotStats], matches: int, seconds: float) -> dict[str, Any]:
    latencies = [x for s in stats for x in s.latencies_ms]
    commands = sum(s.commands for s in stats)
    return {
        "bots": len(stats), "matches": matches, "finished": sum(s.finished for s in stats),
        "commands": commands, "refused": sum(s.refused for s in stats), "errors": sum(s.errors for s in stats),
        "latency_ms": {"p50": round(percentile(latencies, 0.5), 2), "p95": round(percentile(latencies, 0.95), 2),
                       "p99": round(percentile(latencies, 0.99), 2), "max": round(max(latencies, default=0.0), 2)},
        "seconds": round(seconds, 2), "commands_per_s": round(commands / seconds, 1) if seconds else 0.0,
    }


async def run_bots(server: str, args: argparse.Namespace) -> int:
    if args.count < 1:
        raise ClientError("--count must be at least 1")
    store = TokenStore()
    plan: list[tuple[str, str]] = []
    tag = f"{random.randrange(16**4):04x}"
    if args.match:
        plan = [(args.match, f"bot-{tag}-{i + 1}") for i in range(args.count)]
        matches = 1
    else:
        per = max(1, args.players)
        matches = (args.count + per - 1) // per
        for i in range(matches):
            size = min(per, args.count - i * per)
            settings: dict[str, Any] = {"variant": args.variant, "players": size, "solvable_only": False}
            if args.seed is not None:
                settings["seed"] = args.seed
            created = await create_match(server, settings)
            # A name is its player's on the server from its first use: one name per bot, across the matches.
            plan += [(created["code"], f"bot-{i * per + j + 1}") for j in range(size)]
    began = time.perf_counter()
    stats = await asyncio.gather(*(bot(server, code, name, moves=args.moves, delay=args.delay, store=store)
                                   for code, name in plan))
    report = summary(list(stats), matches, time.perf_counter() - began)
    if args.json:
        print(json.dumps(report))
    else:
        lat = report["latency_ms"]
        print(f"{report['bots']} bots in {report['matches']} matches: {report['finished']} got results; "
              f"{report['commands']} commands ({report['refused']} refused, {report['errors']} errors) in "
              f"{report['seconds']} s = {report['commands_per_s']}/s; reply latency ms p50 {lat['p50']} "
              f"p95 {lat['p95']} p99 {lat['p99']} max {lat['max']}")
    return 0 if report["finished"] == report["bots"] else 1
