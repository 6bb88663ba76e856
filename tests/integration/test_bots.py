"""Bots in a race (server/match/bots.py): a real server with one solver worker, real WebSocket players.

A bot is a player the server plays with the planner, at a pace, through the same commit path as a person;
its rows are marked, its places are bounded, and it is in nobody's history nor head-to-head.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import redis

from protocol import messages as m
from server.core.bots import pause_kind, pause_ms
from server.engine import Game, deal, find_variant
from server.engine.planner import LEVELS

from .conftest import ServerProcess
from .wsclient import Player

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

FAST = 600
"""Commands a minute of the bots here: the fastest pace, a mean pause of 100 ms."""


def post(server: ServerProcess, **body: Any) -> httpx.Response:
    return httpx.post(server.url + "/matches", json=body, timeout=10)


def replayed(seed: str, variant: str, moves: list[str]) -> Game:
    """The game ``moves`` make from the deal of ``seed``, checked by the engine (an illegal one raises)."""
    game = Game(deal(seed, find_variant(variant)), find_variant(variant), autoplay=True, undo="safe")
    for command in moves:
        game.play(command)
    return game


async def started_as_ann(server: ServerProcess, code: str) -> tuple[Player, m.Started]:
    """ann joins match ``code`` (its other seats bots, ready) and says ready: her connection and the deal."""
    ann = Player(server.ws_url)
    await ann.connect()
    await ann.join(code, "ann")
    await ann.send(m.Ready())
    return ann, await ann.expect(m.Started)


def solver_jobs(server: ServerProcess, job: str) -> float:
    """How many solver jobs ``job`` the server's metrics counted (every result)."""
    text = httpx.get(server.url + "/metrics", timeout=10).text
    pattern = re.compile(r'^ftr_solver_decision_seconds_count\{job="' + job + r'",[^}]*\} (\S+)$', re.MULTILINE)
    return sum(float(value) for value in pattern.findall(text))


@pytest.fixture
def bots_server(make_own_server: Any) -> Iterator[ServerProcess]:
    """A server with one solver worker kept for the bots (no deal pool, no daily challenge), at most 5 bots, 2 of
    them in matches one address created."""
    yield make_own_server(FTR_SOLVER_WORKERS="1", FTR_POOL_TARGET="0", FTR_DAILY_VARIANTS="", FTR_MAX_BOTS="5",
                          FTR_MAX_BOTS_PER_ADDRESS="2")


async def test_two_bots_and_a_person_race_to_ranked_results_with_the_bots_marked(bots_server: ServerProcess) -> None:
    server = bots_server
    # A person claimed the name a bot takes: the bot's game must not go into that person's history.
    claimed = httpx.post(server.url + "/players", json={"name": "casual bot"}, timeout=10)
    assert claimed.status_code == 201, claimed.text
    seed = "bots-race-1"
    created = post(server, seed=seed, solvable_only=False, players=3, time_limit_s=120, undo="safe",
                   bots=[{"level": "casual", "moves_per_min": FAST}, {"level": "club", "moves_per_min": FAST}])
    assert created.status_code == 201, created.text
    code = created.json()["code"]
    ann = Player(server.ws_url)
    try:
        await ann.connect()
        await ann.join(code, "ann")
        lobby = await ann.expect(m.Lobby)
        assert [(p.name, p.ready, p.bot) for p in lobby.players] == [
            ("casual bot", True, True), ("club bot", True, True), ("ann", False, False)]
        # The bots' names are taken in the match.
        other = Player(server.ws_url)
        await other.connect()
        await other.send(m.Join(code, "club bot"))
        refused = await other.expect(m.Error)
        assert refused.code == "name_taken"
        await other.close()
        await ann.send(m.Ready())  # the last seat ready: the countdown starts
        started = await ann.expect(m.Started)
        assert started.status == "playing"
        assert isinstance(await ann.play("s"), m.PositionReply)
        public_url = f"{server.url}/matches/{code}"
        for _ in range(100):  # the bots make their first few moves (at 600 a minute: a second or two)
            if all(p["moves"] >= 3 for p in httpx.get(public_url, timeout=10).json()["players"] if p.get("bot")):
                break
            await asyncio.sleep(0.1)
        assert (await ann.resign()).status == "resigned"
        # The last person's game ended: the bots resign at once, not at the 120 s limit.
        resigned_at = time.monotonic()
        results = await ann.expect(m.Results, timeout=15)
        waited_s = time.monotonic() - resigned_at
        # A rematch: the same bots are in the next round, ready (the round starts: every seat is ready).
        await ann.send(m.Rematch())
        next_round = await ann.expect(m.NextRound)
        state = httpx.get(f"{server.url}/matches/{next_round.match}", timeout=10).json()
        assert [(p["name"], p["ready"], p.get("bot")) for p in state["players"]] == [
            ("casual bot", True, "casual"), ("club bot", True, "club"), ("ann", True, None)]
        assert state["settings"]["players"] == 3
    finally:
        await ann.close()
    rows = {row.name: row for row in results.ranking}
    assert set(rows) == {"casual bot", "club bot", "ann"}
    assert waited_s < 10 and {row.status for row in results.ranking} == {"resigned"}, (waited_s, results.ranking)
    assert [row.rank for row in results.ranking] == [1, 2, 3]
    assert {name: row.bot for name, row in rows.items()} == {"casual bot": True, "club bot": True, "ann": False}
    # Ranked as DESIGN.md says: winners first, then more foundation cards ahead (no bot wins in seconds here).
    assert all(row.status != "won" for row in results.ranking)
    cards = [row.foundation for row in results.ranking]
    assert cards == sorted(cards, reverse=True)
    # The bots played real games, at most at their pace, that the engine replays to the rows' figures.
    mean_ms = 60_000 / FAST
    for name, level in (("casual bot", "casual"), ("club bot", "club")):
        record = httpx.get(f"{server.url}/matches/{code}/replays/{quote(name)}", timeout=10).json()
        assert record["bot"] == level
        assert len(record["moves"]) >= 3, record["moves"]
        game = replayed(seed, "classic", record["moves"])
        assert (game.moves, game.position.foundation_cards) == (rows[name].moves, rows[name].foundation)
        gaps = [b - a for a, b in zip([0, *record["times_ms"]], record["times_ms"])]
        assert min(gaps) >= mean_ms / 2, gaps
    person = httpx.get(f"{server.url}/matches/{code}/replays/ann", timeout=10).json()
    assert "bot" not in person
    # The club bot thought in the solver worker.
    assert solver_jobs(server, "bot") >= 1
    # Nobody's history holds a bot: ann's game is there, with no rival; the person called "casual bot" has none.
    assert results.head_to_head == []
    ann_page = httpx.get(server.url + "/players/ann", timeout=10).json()
    assert ann_page["games"] == 1 and ann_page["head_to_head"] == []
    named_like_a_bot = httpx.get(server.url + "/players/" + quote("casual bot"), timeout=10).json()
    assert named_like_a_bot["games"] == 0
    # The bots of the first round ended (their places pruned from this address's too), those of the next round
    # hold 2 places of the server's 5 (a next round's are no address's).
    first = post(server, players=2, solvable_only=False, bots=[{"level": "casual"}])
    assert first.status_code == 201, first.text
    by_address = post(server, players=3, solvable_only=False, bots=[{"level": "casual"}] * 2)
    assert by_address.status_code == 429 and by_address.json()["error"] == "rate_limited", by_address.text
    assert "this address" in by_address.json()["message"]
    last = post(server, players=2, solvable_only=False, bots=[{"level": "strong", "moves_per_min": 1}])
    assert last.status_code == 201, last.text
    refused_bots = post(server, players=3, solvable_only=False, bots=[{"level": "casual"}] * 2)
    assert refused_bots.status_code == 503 and refused_bots.json()["error"] == "too_many_bots"
    assert refused_bots.headers["retry-after"] == "60"  # places come back as races end: minutes
    with redis.Redis.from_url(server.env["REDIS_URL"]) as client:
        assert client.zcard("{live}:bots") == 4
        owners = list(client.scan_iter("{live}:bots:by:*"))
        assert len(owners) == 1 and sorted(client.zrange(owners[0], 0, -1)) == sorted(
            f"{answer.json()['code']}/0".encode() for answer in (first, last))
        for answer in (by_address, refused_bots):
            assert client.exists(f"{{m:{answer.json().get('code', 'none')}}}:meta") == 0


BAD_BOTS = [
    ({"players": 2, "bots": [{"level": "casual"}] * 2}, "players counts the bots"),
    ({"players": 5, "bots": [{"level": "casual"}] * 4}, "at most 3 bots"),
    ({"players": 2, "bots": [{"level": "grandmaster"}]}, "unknown bot level"),
    ({"players": 2, "bots": [{"level": "club", "moves_per_min": 0}]}, "moves_per_min"),
    ({"players": 2, "bots": [{"level": "club", "moves_per_min": 601}]}, "moves_per_min"),
    ({"players": 2, "bots": [{"level": "club", "pace": 30}]}, ""),
    ({"players": 2, "bots": [{"moves_per_min": 30}]}, ""),
    ({"players": 2, "bots": "strong"}, ""),
    ({"players": 1, "bots": [{"level": "strong"}]}, "players counts the bots"),
]


async def test_bad_bots_are_refused_with_nothing_created_and_the_levels_are_listed(server: ServerProcess) -> None:
    # The client's --bot: the match has the bots, and one seat more for the person who created it.
    done = subprocess.run([sys.executable, "-m", "client_cli", "--server", server.url, "create", "--any-deal", "--json",
                           "--bot", "strong:45", "--bot", "casual"], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    state = httpx.get(f"{server.url}/matches/{json.loads(done.stdout)['code']}", timeout=10).json()
    assert state["settings"]["players"] == 3
    assert [(p["name"], p["bot"], p["ready"]) for p in state["players"]] == [("strong bot", "strong", True),
                                                                             ("casual bot", "casual", True)]
    levels = httpx.get(server.url + "/bots", timeout=10)
    assert levels.status_code == 200
    assert [level["level"] for level in levels.json()["levels"]] == [level.name for level in LEVELS]
    assert [level["level"] for level in levels.json()["levels"]] == ["casual", "club", "expert", "strong"]
    assert all(level["label"] and level["about"] for level in levels.json()["levels"])
    with redis.Redis.from_url(server.env["REDIS_URL"]) as client:
        def made() -> tuple[int, int]:
            return len(list(client.scan_iter("{m:*:meta", count=1000))), client.zcard("{live}:bots")

        before = made()
        for body, message in BAD_BOTS:
            answer = post(server, solvable_only=False, **body)
            assert answer.status_code == 400, (body, answer.text)
            assert answer.json()["error"] == "malformed" and message in answer.json()["message"], answer.text
        assert made() == before


@pytest.mark.xdist_group("cpu_bound")  # never beside the CP-SAT tests, which would take its core (test_relaxation.py)
async def test_a_fast_bot_keeps_its_pace_beside_a_bot_that_thinks_long(make_own_server: Any) -> None:
    # No workers: every level plays the one-look hint, but a strong bot still takes its time to think (most of
    # each 1 s pause): the casual bot at 600 a minute must not wait for it.
    server = make_own_server(FTR_SOLVER_WORKERS="0", FTR_POOL_TARGET="0", FTR_DAILY_VARIANTS="")
    seed = "bots-pace-1"
    created = post(server, seed=seed, solvable_only=False, players=3, time_limit_s=2,
                   bots=[{"level": "strong", "moves_per_min": 60}, {"level": "casual", "moves_per_min": FAST}])
    assert created.status_code == 201, created.text
    code = created.json()["code"]
    ann, _ = await started_as_ann(server, code)
    try:  # ann plays on to the 2 s limit: a bot whose people have all ended resigns, and this bot must not
        await ann.expect(m.Results, timeout=15)
    finally:
        await ann.close()
    record = httpx.get(f"{server.url}/matches/{code}/replays/{quote('casual bot')}", timeout=10).json()
    # Each command's own pause, as the bot's seeded pace draws it, replayed here from the move log.
    game = Game(deal(seed, find_variant("classic")), find_variant("classic"), autoplay=True, undo="safe")
    late = []
    before = 0
    for seq, (command, at_ms) in enumerate(zip(record["moves"], record["times_ms"], strict=True), start=1):
        pause = pause_ms(f"{code}/casual bot/{seq}", FAST, pause_kind(game))
        late.append(at_ms - before - pause)
        game.play(command)
        before = at_ms
    assert len(late) >= 8, record
    assert min(late) >= 0, late  # never faster than its pace
    assert sorted(late)[len(late) // 2] <= 250, late  # and not held up by the strong bot's thinking


async def test_alone_against_a_bot_a_restart_deals_the_same_deal_with_the_same_bot(
        bots_server: ServerProcess) -> None:
    """One person and a bot: restart is the person's (a bot plays from its own view); the bot resigns with the
    person's game, and the next round deals the same deal to the person and the same bot, ready."""
    server = bots_server
    created = post(server, seed="restart-with-a-bot", solvable_only=False, players=2, time_limit_s=0, undo="full",
                   bots=[{"level": "casual", "moves_per_min": FAST}])
    assert created.status_code == 201, created.text
    code = created.json()["code"]
    ann, first = await started_as_ann(server, code)
    try:
        assert isinstance(await ann.play("s"), m.PositionReply)
        await ann.send(m.Restart())
        answer = await ann.expect(m.NextRound)
        results = httpx.get(f"{server.url}/matches/{code}/results", timeout=10).json()
        assert {r["name"]: r["status"] for r in results["ranking"]} == {"ann": "resigned", "casual bot": "resigned"}
        ann.code, ann.token, ann.seq = answer.match, answer.token, 0
        await ann.resume(answer.match)
        second = await ann.expect(m.Started, timeout=15)
    finally:
        await ann.close()
    assert answer.round == 2 and second.view == first.view and second.moves == 0  # the same deal, from its start
    state = httpx.get(f"{server.url}/matches/{answer.match}", timeout=10).json()
    assert state["settings"]["players"] == 2 and state["state"] == "playing", state
    assert [(p["name"], p.get("bot")) for p in state["players"]] == [("casual bot", "casual"), ("ann", None)]
