"""A day of the daily challenge, end to end: a real server and Redis, several scripted players.

The server's clock is shifted (``FTR_CLOCK_OFFSET_MS``) so that it starts
:data:`LEAD_S` seconds before midnight UTC: the players play, one of them
starts at 23:59:50 or later and is still playing when the day ends, the
day closes, and the reveal's seed rebuilds exactly the deal everyone
played and matches the commitment published from the start. Everything
received before the end (WebSocket frames, HTTP bodies, Server-Sent
Events) is kept and checked: no seed, no card a player could not see, no
other player's moves.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import hmac
import json
import re
import subprocess
import sys
import time
from typing import Any

import httpx
import pytest
import redis

from protocol import messages as m
from server.engine import Game, deal, find_variant, format_position, parse_position, parse_record, replay
from server.engine.solver import Budget, solve
from server.views import view_message

from .conftest import ROOT, ServerProcess
from .wsclient import Player

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SECRET = "end-to-end daily secret"
VARIANT = "relaxed"
LEAD_S = 30
DB = 7
CARD = re.compile(r"(?<![0-9A-Za-z])(?:10|[2-9TJQKA])[CDHS](?![0-9A-Za-z])")
TOKENS = ("player_token", "name_token")
"""The fields of an attempt's answer that hold the player's own random tokens (URL-safe base64: ``-`` and ``_``
among letters and digits), which can spell a card by chance (``'...Z-7C__...'``): not a deal's card."""


def without_tokens(data: bytes) -> str:
    """An HTTP or SSE answer as text for the search for card names: a JSON object's :data:`TOKENS` blanked."""
    text = data.decode("utf-8", "replace")
    try:
        body = json.loads(text)
    except ValueError:
        return text
    if isinstance(body, dict) and any(field in body for field in TOKENS):
        return json.dumps({key: "" if key in TOKENS else value for key, value in body.items()})
    return text
RANKS = {r: i + 1 for i, r in enumerate("A23456789TJQK")}


def deal_of_the_day(date: str, variant: str) -> tuple[int, str, list[str]]:
    """server/README.md's recipe, written out here: HMAC-SHA256(secret, "DATE|VARIANT|INDEX"), first index solved."""
    v = find_variant(variant)
    for index in range(500):
        seed = hmac.new(SECRET.encode(), f"{date}|{variant}|{index}".encode(), hashlib.sha256).hexdigest()
        result = solve(deal(seed, v), v, Budget(nodes=5000))
        if result.result == "solved":
            return index, seed, list(result.moves)
    raise AssertionError("no solvable deal")


class Seen:
    """Everything received before the day's end: raw bytes, by where they came from."""

    def __init__(self) -> None:
        self.items: list[tuple[str, bytes]] = []

    def get(self, url: str, expect: int | None = 200) -> httpx.Response:
        response = httpx.get(url, timeout=30)
        self.items.append((url, response.content))
        if expect is not None:
            assert response.status_code == expect, (url, response.text)
        return response

    def post(self, url: str, body: dict[str, Any]) -> httpx.Response:
        response = httpx.post(url, json=body, timeout=60)
        self.items.append((url, response.content))
        return response


def sse(url: str, count: int, seen: Seen | None = None, timeout: float = 5) -> list[dict[str, Any]]:
    """The first ``count`` events of an SSE stream (fewer if it goes quiet for ``timeout`` seconds)."""
    events: list[dict[str, Any]] = []
    raw = b""
    try:
        with httpx.stream("GET", url, timeout=httpx.Timeout(timeout)) as response:
            current: dict[str, Any] = {}
            for line in response.iter_lines():
                raw += line.encode() + b"\n"
                if not line:
                    if "data" in current:
                        events.append(current)
                    current = {}
                    if len(events) >= count:
                        break
                    continue
                field, _, value = line.partition(":")
                current[field] = value.strip()
    except httpx.ReadTimeout:
        pass
    if seen is not None:
        seen.items.append((url, raw))
    return events


class Attempt:
    """One scripted daily player: its name token, its connection, what it observed."""

    def __init__(self, server: ServerProcess, seen: Seen, name: str, connections: list[Player]) -> None:
        self.server, self.seen, self.name, self.connections = server, seen, name, connections
        self.name_token: str | None = None
        self.player = Player(server.ws_url)
        self.code = ""
        self.started: m.Started | None = None
        self.replies: list[m.PositionReply] = []
        self.commands: list[str] = []

    def request(self) -> httpx.Response:
        body = {"name": self.name, "token": self.name_token}
        return self.seen.post(f"{self.server.url}/daily/{VARIANT}/attempt", body)

    async def begin(self) -> m.Started:
        response = self.request()
        assert response.status_code == 200, response.text
        body = response.json()
        self.name_token = body.get("name_token", self.name_token)
        self.code = body["match"]
        self.player = Player(self.server.ws_url)
        self.connections.append(self.player)
        await self.player.connect()
        self.player.code, self.player.token = body["match"], body["player_token"]
        await self.player.resume(self.code)
        started = await self.player.expect(m.Started)
        assert isinstance(started, m.Started), started
        self.player.seq = started.seq
        self.started = self.started or started
        return started

    async def play(self, commands: list[str]) -> None:
        for command in commands:
            reply = await self.player.play(command)
            assert isinstance(reply, m.PositionReply), reply
            self.replies.append(reply)
            self.commands.append(command)

    async def resign(self) -> None:
        reply = await self.player.resign()
        assert isinstance(reply, m.PositionReply) and reply.status == "resigned", reply
        self.replies.append(reply)

    def frames(self) -> list[bytes]:
        return [f for f in self.player.frames if isinstance(f, bytes)]

    def expected_entry(self, end: m.Finished | None = None) -> tuple[str, int, int, int, int]:
        """(status, time, moves, foundation, time of the last foundation card) from what this player saw."""
        assert self.started is not None
        found = sum(RANKS[top[0]] for top in self.started.view.foundations if top != "-")
        last_found = 0
        for reply in self.replies:
            if reply.foundation > found:
                last_found = reply.time_ms
            found = reply.foundation
        final = self.replies[-1]
        if end is not None:
            return end.status, end.time_ms, end.moves, end.foundation, last_found
        return final.status, final.time_ms, final.moves, final.foundation, last_found


async def test_a_whole_day(redis_url: str) -> None:
    url = redis_url.rsplit("/", 1)[0] + f"/{DB}"
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    try:
        await day_on(url)
    finally:
        with redis.Redis.from_url(url) as client:
            client.flushdb()


async def test_a_whole_day_on_a_cluster(cluster_url: str) -> None:
    """The same day with the server on a 3+3 Redis Cluster: the day's keys, its names, its matches and its
    leaderboard on the masters their slots name, every script on one slot. A cluster has one database, so the
    cluster is emptied before and after (no server of another test is running on it then: the day that server
    would have prepared for today, with another secret, would be this one's)."""
    flush_cluster(cluster_url)
    try:
        await day_on(cluster_url, lead_s=CLUSTER_LEAD_S)
    finally:
        flush_cluster(cluster_url)


CLUSTER_LEAD_S = 25
"""The cluster's day starts this many seconds before midnight (enough for the plays before erin's, which starts
in the last 10 s): the single Redis's day keeps :data:`LEAD_S`."""


def flush_cluster(url: str) -> None:
    with redis.RedisCluster.from_url(url) as client:
        client.flushall(target_nodes=redis.RedisCluster.PRIMARIES)


async def day_on(url: str, lead_s: int = LEAD_S) -> None:
    """A day on the Redis at ``url``: a server whose clock starts ``lead_s`` seconds before midnight UTC."""
    real_now = int(time.time() * 1000)
    midnight = (real_now // 86_400_000 + 1) * 86_400_000
    offset = midnight - lead_s * 1000 - real_now
    server = ServerProcess(url, FTR_CLOCK_OFFSET_MS=str(offset), FTR_DAILY_SECRET=SECRET,
                           FTR_DAILY_VARIANTS="classic,relaxed")
    try:
        await day(server, lead_s)
    finally:
        server.stop()


async def day(server: ServerProcess, lead_s: int = LEAD_S) -> None:
    connections: list[Player] = []
    try:
        await whole_day(server, connections, lead_s)
    finally:
        for player in connections:
            await player.close()


async def whole_day(server: ServerProcess, connections: list[Player], lead_s: int = LEAD_S) -> None:
    seen = Seen()
    today = seen.get(server.url + "/daily").json()
    date = today["date"]
    ends_at = today["ends_at_ms"]
    start_ms = int(dt.datetime.fromisoformat(date + "T00:00:00+00:00").timestamp() * 1000)
    assert ends_at == start_ms + 86_400_000 and 0 < ends_at - today["now_ms"] <= lead_s * 1000
    commitments = {v["variant"]: v["commitment"] for v in today["variants"]}
    assert set(commitments) == {"classic", "relaxed"}
    assert all(re.fullmatch("[0-9a-f]{64}", c) for c in commitments.values())
    index, seed, solution = deal_of_the_day(date, VARIANT)
    assert hashlib.sha256(seed.encode()).hexdigest() == commitments[VARIANT]
    variant = find_variant(VARIANT)

    # Winners: alice, then bob, on the same line.
    alice, bob = Attempt(server, seen, "alice", connections), Attempt(server, seen, "bob", connections)
    await alice.begin()
    await alice.play(solution)
    assert alice.replies[-1].status == "won"
    await bob.begin()
    await bob.play(solution)
    assert bob.replies[-1].status == "won"
    # carol: 20 commands, her connection drops, she resumes with her name token and goes on, then resigns.
    carol = Attempt(server, seen, "carol", connections)
    await carol.begin()
    await carol.play(solution[:20])
    await carol.player.close()
    first_code = carol.code
    resumed = await carol.begin()
    assert carol.code == first_code and resumed.moves == carol.replies[-1].moves  # the same attempt, not a new one
    await carol.play(solution[20:30])
    await carol.resign()
    # dave: 5 commands, resigns.
    dave = Attempt(server, seen, "dave", connections)
    await dave.begin()
    await dave.play(solution[:5])
    await dave.resign()
    # dave's ended attempt is no ghost to race before the day is revealed: not by its match, nor as his best.
    for ghost in ({"name": "dave", "match": dave.code}, {"name": "dave"}):
        refused = seen.post(f"{server.url}/matches", {"seed": "1", "players": 1, "solvable_only": False,
                                                      "ghost": ghost})
        assert (refused.status_code, refused.json()["error"]) == (404, "no_ghost"), refused.text

    # Refusals: a second attempt, a claimed name without (or with a wrong) token, a malformed body.
    second = alice.request()
    assert second.status_code == 409 and second.json()["error"] == "already_played"
    thief = Attempt(server, seen, "alice", connections)
    assert thief.request().status_code == 403
    thief.name_token = "guessed"
    assert thief.request().json()["error"] == "bad_token"
    assert seen.post(f"{server.url}/daily/{VARIANT}/attempt", {"nam": "x"}).status_code == 400
    assert seen.post(f"{server.url}/daily/napoleonic/attempt", {"name": "x"}).status_code == 404

    # erin starts at 23:59:50 or later and is still playing when the day ends.
    assert int(seen.get(server.url + "/daily").json()["now_ms"]) < ends_at - 10_000, "the plays took too long"
    while int(seen.get(server.url + "/daily").json()["now_ms"]) < ends_at - 10_000:
        await asyncio.sleep(0.2)
    erin = Attempt(server, seen, "erin", connections)
    erin_started = await erin.begin()
    assert ends_at - 10_000 <= erin_started.start_at_ms < ends_at and erin_started.deadline_ms == ends_at
    await erin.play(solution[:3])

    # Readers before the end: the board so far, the refusals, the events, a finished match's public state.
    board = seen.get(f"{server.url}/daily/{date}/{VARIANT}/leaderboard").json()
    assert board["final"] is False and {e["name"] for e in board["entries"]} == {"alice", "bob", "carol", "dave"}
    assert seen.get(f"{server.url}/daily/{date}/{VARIANT}/reveal", expect=409).json()["error"] == "not_revealed"
    assert seen.get(f"{server.url}/daily/{date}/{VARIANT}/replay/alice", expect=409).status_code == 409
    assert seen.get(f"{server.url}/daily/{date}/nope/leaderboard", expect=404).status_code == 404
    assert seen.get(f"{server.url}/daily/2026-02-30/{VARIANT}/leaderboard", expect=400).status_code == 400
    assert seen.get(f"{server.url}/daily/2020-01-01/{VARIANT}/events", expect=404).json()["error"] == "no_day"
    assert seen.get(f"{server.url}/daily/2999-01-01/{VARIANT}/reveal", expect=404).json()["error"] == "no_day"
    seen.get(f"{server.url}/matches/{alice.code}")
    seen.get(f"{server.url}/matches/{alice.code}/results")
    early_events = sse(f"{server.url}/daily/{date}/{VARIANT}/events", 9, seen)
    assert [(json.loads(e["data"])["name"], json.loads(e["data"])["status"]) for e in early_events] == [
        ("alice", "playing"), ("alice", "won"), ("bob", "playing"), ("bob", "won"), ("carol", "playing"),
        ("carol", "resigned"), ("dave", "playing"), ("dave", "resigned"), ("erin", "playing")]
    # An attempt starts with the cards the deal's auto-play put up (it said 0 before the first command).
    assert alice.started is not None
    start_found = sum(RANKS[top[0]] for top in alice.started.view.foundations if top != "-")
    assert [json.loads(e["data"])["foundation"] for e in early_events
            if json.loads(e["data"])["status"] == "playing"] == [start_found] * 5

    # The day ends: erin's attempt ends by the deadline, on the day it started.
    finished = await erin.player.expect(m.Finished, timeout=30)
    assert isinstance(finished, m.Finished) and finished.name == "erin" and finished.status == "timeout"
    assert finished.time_ms == ends_at - erin_started.start_at_ms
    results = await erin.player.expect(m.Results, timeout=10)
    assert isinstance(results, m.Results) and results.seed == "" and results.commitment == commitments[VARIANT]
    players = [alice, bob, carol, dave, erin]
    before_end = [(f"{p.name} ws", f) for p in players for f in p.frames()] + seen.items

    # Nothing received before the end reveals the seed, and no HTTP/SSE answer names a card.
    for where, data in before_end:
        assert seed.encode() not in data, where
    for where, data in seen.items:
        assert not CARD.search(without_tokens(data)), (where, data[:300])
    # Every view a player got is exactly the redacted engine position after its own commands (no stock order,
    # nothing of another player: other daily players never appear in a player's frames).
    dealt = deal(seed, variant)
    for p in players:
        game = Game(dealt, variant, autoplay=True, undo="safe")
        assert p.started is not None and p.started.view == view_message(game.position)
        for command, reply in zip(p.commands, [r for r in p.replies if r.command != "resign"]):
            game.play(command)
            assert reply.view == view_message(game.position), (p.name, command)
        others = {q.name for q in players} - {p.name}
        for message in p.player.inbox:
            assert getattr(message, "name", p.name) not in others, (p.name, message)

    # The reveal, once the day is closed.
    deadline = time.monotonic() + 30
    while True:
        response = await asyncio.to_thread(httpx.get, f"{server.url}/daily/{date}/{VARIANT}/reveal", timeout=10)
        if response.status_code == 200 or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    assert response.status_code == 200, response.text
    revealed = response.json()
    assert revealed["seed"] == seed and revealed["attempt_index"] == index and revealed["date"] == date
    assert hashlib.sha256(revealed["seed"].encode()).hexdigest() == revealed["commitment"] == commitments[VARIANT]
    deal_command = [sys.executable, "-m", "server.engine", "deal", "--seed", revealed["seed"], "--variant", VARIANT]
    rebuilt = (await asyncio.to_thread(subprocess.run, deal_command, cwd=ROOT, capture_output=True, text=True,
                                       check=True)).stdout
    assert rebuilt.strip() == revealed["deal"].strip() == format_position(dealt).strip()
    played = Game(parse_position(rebuilt, variant), variant, autoplay=True, undo="safe")
    assert all(p.started is not None and p.started.view == view_message(played.position) for p in players)

    # The final leaderboard, against an independent sort of what the players observed (DESIGN.md "Ranking").
    observed = {p.name: p.expected_entry() for p in (alice, bob, carol, dave)}
    observed["erin"] = erin.expected_entry(finished)

    def key(name: str) -> tuple[int, ...]:
        status, time_ms, moves, foundation, last_found = observed[name]
        return (0, time_ms, moves) if status == "won" else (1, -foundation, last_found, moves)

    expected = sorted(observed, key=lambda n: (key(n), n))
    final = (await asyncio.to_thread(httpx.get, f"{server.url}/daily/{date}/{VARIANT}/leaderboard", timeout=10)).json()
    assert final["final"] is True and final["total"] == 5
    assert [e["name"] for e in final["entries"]] == expected
    assert set(expected[:2]) == {"alice", "bob"}  # the winners first (each timed from their own deal)
    for entry in final["entries"]:
        status, time_ms, moves, foundation, _ = observed[entry["name"]]
        assert (entry["status"], entry["time_ms"], entry["moves"], entry["foundation"]) == \
            (status, time_ms, moves, foundation)
    # Competition ranks (DESIGN.md gives no tie rule; server/core/ranking.py: equal keys share a rank, 1, 1, 3):
    # the two winners play the same line at the same pace, so they can tie to the millisecond.
    ranks = [next(i + 1 for i, other in enumerate(expected) if key(other) == key(name)) for name in expected]
    assert [e["rank"] for e in final["entries"]] == ranks and ranks[2:] == [3, 4, 5]
    second_page = f"{server.url}/daily/{date}/{VARIANT}/leaderboard?offset=3&limit=2"
    page = (await asyncio.to_thread(httpx.get, second_page, timeout=10)).json()
    assert [(e["rank"], e["name"]) for e in page["entries"]] == [(4, expected[3]), (5, expected[4])]

    # Replays after the day: alice's record replays to a win on the revealed deal.
    replay_url = f"{server.url}/daily/{date}/{VARIANT}/replay/alice"
    record = (await asyncio.to_thread(httpx.get, replay_url, timeout=10)).json()
    assert record["seed"] == seed and record["moves"] == solution
    assert replay(parse_record(json.dumps(record).encode())).status == "won"

    # The next day is ready at once (prepared ahead), with a new commitment and nobody's attempt yet.
    tomorrow = (await asyncio.to_thread(httpx.get, server.url + "/daily", timeout=10)).json()
    assert tomorrow["date"] > date and all(v["attempts"] == 0 for v in tomorrow["variants"])
    assert {v["variant"]: v["commitment"] for v in tomorrow["variants"]}[VARIANT] != commitments[VARIANT]
    events = sse(f"{server.url}/daily/{date}/{VARIANT}/events", 10)
    assert json.loads(events[-1]["data"]) == {"name": "erin", "status": "timeout", "moves": finished.moves,
                                              "foundation": finished.foundation, "time_ms": finished.time_ms}
    resumed_events = sse(f"{server.url}/daily/{date}/{VARIANT}/events?from={events[7]['id']}", 10)
    assert [e["id"] for e in resumed_events] == [e["id"] for e in events[8:]]
