"""``forty-thieves watch CODE``: live standings of a match, as a spectator.

It follows the match's Server-Sent Events (``GET /matches/{code}/events``,
reconnecting with ``Last-Event-ID`` when the stream drops) and, at each
event, reads the public state ``GET /matches/{code}`` and draws the
standings from it: each player's status, foundation cards, moves and time,
ranked as the watch page ranks them (winners by time then moves, the rest
by foundation cards: equal cards share a rank; DESIGN.md "Ranking" breaks
such ties in the results by data the public state does not carry). Without events it still reads the
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
import time
from collections.abc import Callable
from typing import Any

import httpx
from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from .render import clock
from .server_link import Unreachable, backoff, match_results, match_state, server_option


def _standing_key(p: dict[str, Any]) -> tuple[Any, ...]:
    """A player's place while the race runs, as the watch page ranks it: winners first by time then moves, the
    rest by foundation cards alone. The results break a tie of cards by the time of the last foundation card
    (then moves), which the public state does not carry; moves alone would rank a player who moved less ahead
    of one with the same cards, which says nothing of who leads."""
    if p.get("status") == "won":
        return (0, p.get("time_ms", 0), p.get("moves", 0))
    return (1, -p.get("foundation", 0))


def standings(public: dict[str, Any]) -> list[dict[str, Any]]:
    """Players in the order of the ranking rule, as far as the public state tells it (ties by name, as the
    results order them)."""
    return sorted(public.get("players", []), key=lambda p: (_standing_key(p), p.get("name", "")))


def ranked(public: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """:func:`standings` with their ranks: equal places share one (competition ranking, 1, 2, 2, 4, as the
    results number them)."""
    rows: list[tuple[int, dict[str, Any]]] = []
    for index, player in enumerate(standings(public)):
        tied = bool(rows) and _standing_key(player) == _standing_key(rows[-1][1])
        rows.append((rows[-1][0] if tied else index + 1, player))
    return rows


def race_time_ms(public: dict[str, Any], player: dict[str, Any], now_ms: int) -> int:
    """The time column: a player still playing is on the race clock (now minus the start, capped at the time
    limit), one whose game ended shows the time it ended at."""
    start = int(public.get("start_at_ms") or 0)
    if public.get("state") == "playing" and player.get("status") == "playing" and start:
        elapsed = max(0, now_ms - start)
        deadline = int(public.get("deadline_ms") or 0)
        return min(elapsed, deadline - start) if deadline else elapsed
    return int(player.get("time_ms", 0))


def table(public: dict[str, Any], now_ms: int | None = None, note: str = "") -> Table:
    """The standings of ``public`` (a ``GET /matches/{code}`` answer) as a rich table: rank, name, status,
    foundation cards, moves and time (the race clock at ``now_ms``, ms since the epoch, default now, for a
    player still playing); ``note`` is added to the title."""
    settings = public.get("settings", {})
    now = int(time.time() * 1000) if now_ms is None else now_ms
    title = f"match {public.get('code', '')} · {settings.get('variant', '')} · {public.get('state', '')}{note}"
    grid = Table(title=title, expand=False, caption="time: the race clock while a player plays, else when the "
                 "game ended")
    for header, justify in (("#", "right"), ("name", "left"), ("status", "left"), ("cards", "right"),
                            ("moves", "right"), ("time", "right")):
        grid.add_column(header, justify=justify)  # type: ignore[arg-type]
    for i, player in ranked(public):
        status = player.get("status", "")
        if status == "dead":  # stuck (an undo left) or ended so: the play page's and the watch page's word
            status = "stuck"
        if public.get("state") in ("lobby", "preparing"):
            status = "ready" if player.get("ready") else "joined"
        if not player.get("connected", True) and status in ("playing", "joined", "ready"):
            status += " (away)"
        # Text, not markup: a name (or the bot's mark) in brackets is shown as it is.
        name = Text(player.get("name", "") + (" [bot]" if player.get("bot") else ""))
        grid.add_row(str(i), name, status, str(player.get("foundation", 0)),
                     str(player.get("moves", 0)), clock(race_time_ms(public, player, now)),
                     style="green" if player.get("status") == "won" else None)
    return grid


async def follow_events(server: str, code: str, nudge: asyncio.Event) -> None:
    """Set ``nudge`` at every Server-Sent Event of the match; when the stream drops or cannot be opened (the
    server restarted), reconnect with ``Last-Event-ID`` after the players' reconnect delays
    (:func:`~client_cli.server_link.backoff`). Runs until cancelled."""
    url = f"{server.rstrip('/')}/matches/{code}/events"
    last = ""
    delays = backoff()
    while True:
        try:
            async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=60)) as client:
                headers = {"Last-Event-ID": last} if last else {}
                async with client.stream("GET", url, headers=headers) as response:
                    if response.status_code == 200:
                        delays = backoff()
                        async for line in response.aiter_lines():
                            if line.startswith("id:"):
                                last = line[3:].strip()
                            elif line == "":
                                nudge.set()
        except httpx.HTTPError:
            pass
        await asyncio.sleep(next(delays))


async def _state(server: str, code: str, on_wait: Callable[[], None]) -> dict[str, Any]:
    """``GET /matches/{code}``; while the server cannot be reached (it restarts), try again after the players'
    reconnect delays for up to :data:`~client_cli.race.GIVE_UP_S` seconds, calling ``on_wait`` each time."""
    from . import race

    delays, since = backoff(), time.monotonic()
    while True:
        try:
            return await match_state(server, code)
        except Unreachable:
            if time.monotonic() - since > race.GIVE_UP_S:
                raise
            on_wait()
            await asyncio.sleep(next(delays))


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

    def reconnecting() -> None:
        if live is not None and last is not None:
            live.update(table(last, note=" · reconnecting…"), refresh=True)

    public = await match_state(server, code)  # a wrong code or address: say so at once
    try:
        if live is not None:
            live.start()
        while True:
            if public != last:
                last = public
                if as_json:
                    print(json.dumps(public), flush=True)
                elif live is None:
                    console.print(table(public))
            if live is not None:
                live.update(table(public), refresh=True)  # the race clock runs between events
            if public.get("state") == "finished":
                break
            read_at = time.monotonic() + interval
            while not nudge.is_set() and time.monotonic() < read_at:
                try:
                    await asyncio.wait_for(nudge.wait(), min(1.0, max(0.01, read_at - time.monotonic())))
                except TimeoutError:
                    if live is not None:
                        live.update(table(public), refresh=True)
            nudge.clear()
            public = await _state(server, code, reconnecting)
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
        from protocol.messages import RecordNote, ResultRow, Results, Rivalry

        from .render import results_lines

        rows = [ResultRow(**row) for row in results["ranking"]]
        records = [RecordNote(**note) for note in results.get("records", [])]  # a server keeping histories
        pairs = [Rivalry(**pair) for pair in results.get("head_to_head", [])]
        for line in results_lines(Results(results["match"], rows, results["seed"], results["commitment"],
                                          results.get("nonce", ""), records, pairs, results.get("streak"),
                                          results.get("best_streak"), results.get("freezes"))):
            console.print(line)
    sys.stdout.flush()
    return 0
