"""``forty-thieves watch CODE``: live standings of a match, as a spectator (issues 5 and 7).

It follows the match's Server-Sent Events (``GET /matches/{code}/events``,
reconnecting with ``Last-Event-ID`` when the stream drops) and, at each
event, reads the public state ``GET /matches/{code}`` and draws the
standings from it: each player's status, foundation cards, moves and time,
ranked like the results (DESIGN.md "Ranking": winners by time then moves,
the rest by foundation cards then moves). Without events it still reads the
state every ``interval`` seconds (2 by default), so a stream it cannot
open only makes it slower. When the match is finished it prints the ranked
results of ``GET /matches/{code}/results`` with the revealed seed and
exits 0. With ``--json`` it prints the public state as one JSON line each
time it changes, then the results.

Rounds: when players asked for a rematch, the results are followed by the
command that watches the next round; with ``--follow`` it waits for the
next round (as long as ``--follow-wait`` seconds, 60 by default, for the
first ``rematch``) and watches it too, round after round.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import httpx
from rich.console import Console
from rich.live import Live
from rich.table import Table

from .connection import match_results, match_state, server_option
from .render import clock

STATUS_ORDER = {"won": 0}


def standings(public: dict[str, Any]) -> list[dict[str, Any]]:
    """Players in the order of the ranking rule, as far as the public state tells it."""
    def key(p: dict[str, Any]) -> tuple[Any, ...]:
        if p.get("status") == "won":
            return (0, p.get("time_ms", 0), p.get("moves", 0))
        return (1, -p.get("foundation", 0), p.get("moves", 0))

    return sorted(public.get("players", []), key=key)


def table(public: dict[str, Any]) -> Table:
    settings = public.get("settings", {})
    title = f"match {public.get('code', '')} · {settings.get('variant', '')} · {public.get('state', '')}"
    grid = Table(title=title, expand=False)
    for header, justify in (("#", "right"), ("name", "left"), ("status", "left"), ("cards", "right"),
                            ("moves", "right"), ("time", "right")):
        grid.add_column(header, justify=justify)  # type: ignore[arg-type]
    for i, player in enumerate(standings(public), 1):
        status = player.get("status", "")
        if public.get("state") in ("lobby", "preparing"):
            status = "ready" if player.get("ready") else "joined"
        if not player.get("connected", True) and status in ("playing", "joined", "ready"):
            status += " (away)"
        grid.add_row(str(i), player.get("name", ""), status, str(player.get("foundation", 0)),
                     str(player.get("moves", 0)), clock(int(player.get("time_ms", 0))),
                     style="green" if player.get("status") == "won" else None)
    return grid


async def follow_events(server: str, code: str, nudge: asyncio.Event) -> None:
    """Set ``nudge`` at every Server-Sent Event of the match; reconnect after 1 s with ``Last-Event-ID``
    when the stream drops or cannot be opened. Runs until cancelled."""
    url = f"{server.rstrip('/')}/matches/{code}/events"
    last = ""
    while True:
        try:
            async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=60)) as client:
                headers = {"Last-Event-ID": last} if last else {}
                async with client.stream("GET", url, headers=headers) as response:
                    if response.status_code == 200:
                        async for line in response.aiter_lines():
                            if line.startswith("id:"):
                                last = line[3:].strip()
                            elif line == "":
                                nudge.set()
        except httpx.HTTPError:
            pass
        await asyncio.sleep(1.0)


async def watch(server: str, code: str, *, as_json: bool = False, interval: float = 2.0, follow: bool = False,
                follow_wait_s: float = 60.0) -> int:
    """Draw the standings at every event (or every ``interval`` seconds) until the match is finished; with
    ``follow``, then the next round's (see the module docstring). 0 when the last match watched ended."""
    while True:
        status = await watch_match(server, code, as_json=as_json, interval=interval)
        if status != 0:
            return status
        following = await next_round(server, code, follow_wait_s if follow else 0.0, interval)
        if following is None:
            return 0
        if not follow:
            if not as_json:
                print(f"round {following[1]}: forty-thieves watch {following[0]}{server_option(server)}", flush=True)
            return 0
        if not as_json:
            print(f"\nround {following[1]}: match {following[0]}", flush=True)
        code = following[0]


async def next_round(server: str, code: str, wait_s: float, interval: float) -> tuple[str, int] | None:
    """The next round of ended match ``code`` (its code and number) once a player asked for it, waiting up to
    ``wait_s`` seconds; None when none came."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    while True:
        public = await match_state(server, code)
        if public.get("next_round"):
            return str(public["next_round"]), int(public.get("round", 1)) + 1
        if loop.time() >= deadline:
            return None
        await asyncio.sleep(min(interval, max(0.05, deadline - loop.time())))


async def watch_match(server: str, code: str, *, as_json: bool = False, interval: float = 2.0) -> int:
    """Draw one match's standings at every event (or every ``interval`` seconds) until it is finished, then
    its results; 1 when it never had results."""
    console = Console(no_color=bool(os.environ.get("NO_COLOR")) or None)
    last: dict[str, Any] | None = None
    live = Live(console=console, auto_refresh=False) if console.is_terminal and not as_json else None
    nudge = asyncio.Event()
    events = asyncio.create_task(follow_events(server, code, nudge))
    try:
        if live is not None:
            live.start()
        while True:
            public = await match_state(server, code)
            if public != last:
                last = public
                if as_json:
                    print(json.dumps(public), flush=True)
                elif live is not None:
                    live.update(table(public), refresh=True)
                else:
                    console.print(table(public))
            if public.get("state") == "finished":
                break
            try:
                await asyncio.wait_for(nudge.wait(), interval)
            except TimeoutError:
                pass
            nudge.clear()
    finally:
        events.cancel()
        if live is not None:
            live.stop()
    results = await match_results(server, code)
    if results is None:
        return 1
    if as_json:
        print(json.dumps(results), flush=True)
    else:
        from protocol.messages import ResultRow, Results

        from .render import results_lines

        rows = [ResultRow(**row) for row in results["ranking"]]
        for line in results_lines(Results(results["match"], rows, results["seed"], results["commitment"], results.get("nonce", ""))):
            console.print(line)
    sys.stdout.flush()
    return 0
