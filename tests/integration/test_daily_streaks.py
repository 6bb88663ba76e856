"""A named player's daily streak, end to end on a real server and Redis, across UTC midnights.

Server processes in turn on one database, each with its clock (``FTR_CLOCK_OFFSET_MS``) at noon UTC of a later
day: D0, D1, D2, then D4 (D3 passes with no server and nobody playing). ``FTR_FREEZE_EVERY_DAYS=2`` earns a
freeze within the test. Ann plays D0, D1, D2 and misses D3: her streak grows to 3, earns a freeze on her second
day, and the freeze keeps the streak over D3. Bob plays D0, misses D1 (no freeze held): his streak breaks, then
begins again on D2; his practice of D1's deal on D2 changes neither his streak nor his days. The expected
figures are counted here by hand, day by day, from the rule's words (README: a freeze per two days played,
kept over one missed day), not by the server's function.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from protocol import messages as m

from .conftest import ROOT, ServerProcess
from .test_daily_day import SECRET, VARIANT, Attempt, Seen
from .wsclient import Player, create_match

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

DB = 5
DAY_MS = 86_400_000


def server_on(url: str, day_ms: int) -> ServerProcess:
    """A server whose clock is at noon UTC of the day starting at ``day_ms``."""
    offset = day_ms + DAY_MS // 2 - int(time.time() * 1000)
    return ServerProcess(url, FTR_CLOCK_OFFSET_MS=str(offset), FTR_DAILY_SECRET=SECRET, FTR_DAILY_VARIANTS=VARIANT,
                         FTR_FREEZE_EVERY_DAYS="2", FTR_FREEZES_MAX="2")


def figures(body: dict[str, Any]) -> tuple[int, int, int]:
    return body["streak"], body["best_streak"], body["freezes"]


class Day:
    """One server process's day: attempts ended under the names' keys, and what the server answers of them."""

    def __init__(self, server: ServerProcess, keys: dict[str, str], connections: list[Player]) -> None:
        self.server, self.keys, self.connections = server, keys, connections
        self.seen = Seen()
        self.date = self.seen.get(server.url + "/daily").json()["date"]

    async def play(self, name: str) -> dict[str, Any]:
        """End ``name``'s attempt of today (resigned at once); the attempt's answer."""
        attempt = Attempt(self.server, self.seen, name, self.connections)
        attempt.name_token = self.keys.get(name)
        answer = attempt.request().json()
        attempt.name_token = answer.get("name_token", attempt.name_token)
        await attempt.begin()  # the same open attempt, with a new player token
        await attempt.resign()
        assert attempt.name_token
        self.keys[name] = attempt.name_token
        return dict(answer)

    def entry(self, name: str, date: str | None = None) -> dict[str, Any]:
        """The name's ``entry`` on the board of ``date`` (default today), once its attempt is recorded."""
        url = f"{self.server.url}/daily/{date or self.date}/{VARIANT}/leaderboard?name={name}"
        deadline = time.monotonic() + 10
        while True:
            body = self.seen.get(url).json()
            if body["entry"] is not None and "streak" in body["entry"]:
                return dict(body["entry"])
            assert time.monotonic() < deadline, body
            time.sleep(0.1)

    def player(self, name: str) -> dict[str, Any]:
        return dict(self.seen.get(f"{self.server.url}/players/{name}").json())

    async def practice(self, date: str, name: str) -> None:
        """A practice of ``date``'s deal under ``name``, played (resigned) to its results."""
        answer = httpx.post(f"{self.server.url}/daily/{date}/{VARIANT}/practice",
                            json={"name": name, "player_key": self.keys[name]}, timeout=30)
        assert answer.status_code == 200, answer.text
        practice = answer.json()
        player = Player(self.server.ws_url)
        self.connections.append(player)
        await player.connect()
        await player.start(practice["match"], practice["player_token"])
        await player.resign()
        assert isinstance(await player.expect(m.Results), m.Results)


def wait_revealed(server: ServerProcess, date: str) -> None:
    deadline = time.monotonic() + 15
    while httpx.get(f"{server.url}/daily/{date}/{VARIANT}/reveal", timeout=30).status_code != 200:
        assert time.monotonic() < deadline, f"{date} was not revealed"
        time.sleep(0.2)


async def test_a_streak_grows_survives_a_missed_day_with_a_freeze_and_breaks_without(redis_url: str,
                                                                                     tmp_path: Path) -> None:
    url = redis_url.rsplit("/", 1)[0] + f"/{DB}"
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    d0 = (int(time.time() * 1000) // DAY_MS + 1) * DAY_MS  # a day to come: nobody else's attempts on it
    keys: dict[str, str] = {}
    connections: list[Player] = []
    server = server_on(url, d0)
    try:
        # D0: Ann and Bob play their first day. Before it ends today counts once the attempt has ended.
        day = Day(server, keys, connections)
        first = await day.play("Ann")
        assert figures(first) == (0, 0, 0)  # the answer comes as the attempt opens: nothing played yet
        await day.play("Bob")
        d0_date = day.date
        ann = day.entry("Ann")
        assert figures(ann) == (1, 1, 0)
        assert ann["share"].split("\n")[0].endswith(f"#{ann['rank']} of 2, streak 1")
        server.stop()

        # D1: Ann's second day earns her a freeze (one per two days played). Bob does not play.
        server = server_on(url, d0 + DAY_MS)
        day = Day(server, keys, connections)
        assert figures(await day.play("Ann")) == (1, 1, 0)  # as the attempt opens: D0's streak, today going
        assert figures(day.entry("Ann")) == (2, 2, 1)
        assert figures(day.player("Ann")) == (2, 2, 1)
        assert figures(day.player("Bob")) == (1, 1, 0)  # D1 still going: a day not played yet breaks nothing
        d1_date = day.date
        server.stop()

        # D2: Ann's third day. Bob missed D1 holding no freeze: broken; he practises D1's deal (revealed now),
        # which counts for no streak, then plays D2: a streak of 1 again, his second day played earns a freeze.
        server = server_on(url, d0 + 2 * DAY_MS)
        day = Day(server, keys, connections)
        await day.play("Ann")
        assert figures(day.entry("Ann")) == (3, 3, 1)
        assert figures(day.player("Bob")) == (0, 1, 0)
        wait_revealed(server, d1_date)
        await day.practice(d1_date, "Bob")
        await day.practice(d0_date, "Ann")
        assert figures(day.player("Bob")) == (0, 1, 0)  # a practice of D1 would have bridged his gap
        assert figures(day.player("Ann")) == (3, 3, 1)
        practices = [game for game in day.player("Bob")["recent"] if game["kind"] == "practice"]
        assert len(practices) == 1 and practices[0]["daily"] == d1_date  # recorded, as practice
        d2_date = day.date
        answer = await day.play("Bob")
        assert figures(answer) == (0, 1, 0)
        bob = day.entry("Bob")
        assert figures(bob) == (1, 1, 1)
        assert bob["share"].split("\n")[0].endswith(", streak 1")
        # A past day's entry says the streak as it stood on that day.
        assert figures(day.entry("Ann", d0_date)) == (1, 1, 0)
        server.stop()

        # D4 (nobody played D3): Ann's freeze keeps her streak of 3 and is spent; Bob's too keeps his 1.
        server = server_on(url, d0 + 4 * DAY_MS)
        day = Day(server, keys, connections)
        assert figures(day.player("Ann")) == (3, 3, 0)
        assert figures(day.player("Bob")) == (1, 1, 0)
        assert figures(await day.play("Ann")) == (3, 3, 0)
        assert figures(day.entry("Ann")) == (4, 4, 1)  # her fourth day played: a freeze earned again
        # The command-line client says it as the pages do.
        env = {"PATH": "/usr/bin:/bin", "FTR_CLIENT_DATA": str(tmp_path), "HOME": str(tmp_path)}
        me = subprocess.run([sys.executable, "-m", "client_cli", "--server", server.url, "me", "--name", "ann"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False)
        assert me.returncode == 0 and "Streak 4 (best 4) · 1 freeze" in me.stdout.splitlines(), (me.stdout, me.stderr)
        # The days kept: the dates of the ended attempts only (no practice), in the player's own keys.
        with redis.Redis.from_url(url) as client:
            stored = {key.decode() for key in client.keys("{n:*}:days")}
            assert len(stored) == 2
            kept = sorted((tuple(d.decode() for d in client.zrange(key, 0, -1)) for key in stored), key=len)
        assert kept == [(d0_date, d2_date), (d0_date, d1_date, d2_date, day.date)]
        assert day.date == day_of(d0 + 4 * DAY_MS) and d2_date == day_of(d0 + 2 * DAY_MS)
    finally:
        for player in connections:
            await player.close()
        server.stop()
        with redis.Redis.from_url(url) as client:
            client.flushdb()


async def attempt_results(day: Day, name: str) -> m.Results:
    """End ``name``'s attempt of today (resigned at once); the ``results`` frame its player got."""
    attempt = Attempt(day.server, day.seen, name, day.connections)
    attempt.name_token = day.keys.get(name)
    await attempt.begin()
    await attempt.resign()
    assert attempt.name_token
    day.keys[name] = attempt.name_token
    results = await attempt.player.expect(m.Results)
    assert isinstance(results, m.Results), results
    return results


async def race_results(day: Day, names: tuple[str, str]) -> m.Results:
    """A race of the named players ``names`` (under their keys), both resigning; its ``results`` frame."""
    code = create_match(day.server.url, variant=VARIANT, seed="4", players=2)["code"]  # a seed: no pooled deal
    players = [Player(day.server.ws_url) for _ in names]
    day.connections.extend(players)
    for name, player in zip(names, players):
        await player.connect()
        await player.join(code, name, day.keys[name])
    for player in players:
        await player.send(m.Ready())
    for player in players:
        assert isinstance(await player.expect(m.Started), m.Started)
    for player in players:
        await player.resign()
    results = [await player.expect(m.Results) for player in players]
    assert isinstance(results[0], m.Results) and results[0] == results[1], results
    return results[0]


def results_figures(results: m.Results) -> tuple[int | None, int | None, int | None]:
    return results.streak, results.best_streak, results.freezes


async def test_a_daily_attempts_results_carry_the_streak_and_a_races_none(redis_url: str) -> None:
    """Ann plays D0 and D1 (a freeze per two days played): each attempt's ``results`` carry the streak as it
    stands once that attempt is recorded, the figures the server gives for her elsewhere; a race of hers and
    Bob's on D1 carries none."""
    url = redis_url.rsplit("/", 1)[0] + f"/{DB}"
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    d0 = (int(time.time() * 1000) // DAY_MS + 1) * DAY_MS
    keys: dict[str, str] = {}
    connections: list[Player] = []
    server = server_on(url, d0)
    try:
        day = Day(server, keys, connections)
        first = await attempt_results(day, "Ann")
        assert results_figures(first) == (1, 1, 0)  # her first day, counted at once
        assert results_figures(first) == figures(day.entry("Ann")) == figures(day.player("Ann"))
        await day.play("Bob")
        server.stop()

        server = server_on(url, d0 + DAY_MS)
        day = Day(server, keys, connections)
        second = await attempt_results(day, "Ann")
        assert results_figures(second) == (2, 2, 1)  # two days in a row; her second day played earns a freeze
        assert results_figures(second) == figures(day.entry("Ann")) == figures(day.player("Ann"))
        race = await race_results(day, ("Ann", "Bob"))
        assert {row.name for row in race.ranking} == {"Ann", "Bob"} and race.seed
        assert results_figures(race) == (None, None, None)
        # The results kept for later (GET /matches/{code}/results) say the same.
        kept = httpx.get(f"{server.url}/matches/{second.match}/results", timeout=10).json()
        assert (kept["streak"], kept["best_streak"], kept["freezes"]) == (2, 2, 1)
    finally:
        for player in connections:
            await player.close()
        server.stop()
        with redis.Redis.from_url(url) as client:
            client.flushdb()


def day_of(ms: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(ms / 1000))
