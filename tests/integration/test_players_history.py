"""A named player's history on a real server and Redis: two players race three times, their pages show the
games, the records and the head-to-head, the results frames carry them, and a restart loses nothing; a
daily attempt's entry never holds the day's seed before its reveal."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
import redis

from protocol import messages as m
from server.names import name_key

from .test_race import SEED, VARIANT, solution
from .wsclient import PLAYER_KEYS, Player, create_match

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def page(url: str, name: str, **params: Any) -> httpx.Response:
    response = httpx.get(f"{url}/players/{name}", params=params, headers={"Accept": "application/json"}, timeout=10)
    assert response.status_code == 200, response.text
    return response


async def race(url: str, ws_url: str, winner: str, loser: str, moves: list[str], pause_s: float = 0.0,
               ) -> tuple[str, m.Results]:
    """One race on seed 4: ``winner`` plays the solver's solution (after ``pause_s``), ``loser`` resigns."""
    created = create_match(url, variant=VARIANT, seed=SEED, players=2)
    players = {winner: Player(ws_url), loser: Player(ws_url)}
    for name, player in players.items():
        await player.connect()
        await player.join(created["code"], name)
    for player in players.values():
        await player.send(m.Ready())
    for player in players.values():
        assert isinstance(await player.expect(m.Started), m.Started)
    await asyncio.sleep(pause_s)
    for command in moves:
        assert isinstance(await players[winner].play(command), m.PositionReply)
    await players[loser].resign()
    results = [await player.expect(m.Results) for player in players.values()]
    assert results[0] == results[1] and isinstance(results[0], m.Results)
    for player in players.values():
        await player.close()
    return created["code"], results[0]


async def test_two_named_players_race_three_times(make_server, redis_url: str) -> None:
    moves = solution()
    first, second = make_server(), make_server()  # two processes on one Redis
    code1, results1 = await race(first.url, first.ws_url, "alice", "bob", moves, pause_s=1.2)
    code2, results2 = await race(second.url, second.ws_url, "alice", "bob", moves)
    code3, results3 = await race(first.url, first.ws_url, "bob", "alice", moves)
    time1, time2 = results1.ranking[0].time_ms, results2.ranking[0].time_ms
    assert time2 < time1 - 500  # the second win waited less before its moves

    # The first win sets every record there is; the second, faster on the same deal, the times only.
    assert {(n.name, n.deal, n.what, n.value, n.previous) for n in results1.records} == {
        ("alice", "seed 4", "time", time1, -1), ("alice", "seed 4", "moves", len(moves), -1),
        ("alice", "", "time", time1, -1)}
    assert {(n.name, n.deal, n.what, n.value, n.previous) for n in results2.records} == {
        ("alice", "seed 4", "time", time2, time1), ("alice", "", "time", time2, time1)}
    # Bob's first win: his times and moves, and more cards up than his resigned games had.
    assert {(n.name, n.what, n.deal) for n in results3.records} == {
        ("bob", "time", "seed 4"), ("bob", "moves", "seed 4"), ("bob", "time", ""), ("bob", "cards", "")}
    assert all(n.variant == VARIANT for n in results1.records + results2.records + results3.records)
    assert results1.head_to_head == [m.Rivalry("alice", "bob", 1, 0, 0, 1)]
    assert results2.head_to_head == [m.Rivalry("alice", "bob", 2, 0, 0, 2)]
    assert results3.head_to_head == [m.Rivalry("bob", "alice", 1, 2, 0, 3)]
    kept = httpx.get(f"{first.url}/matches/{code3}/results", timeout=10).json()  # the kept frame: the same
    assert kept["head_to_head"] == [{"a": "bob", "b": "alice", "a_wins": 1, "b_wins": 2, "draws": 0, "races": 3}]

    alice, bob = page(first.url, "alice").json(), page(second.url, "BOB").json()
    assert (alice["games"], alice["wins"], bob["games"], bob["wins"]) == (3, 2, 3, 1)
    assert [g["match"] for g in alice["recent"]] == [code3, code2, code1] == [g["match"] for g in bob["recent"]]
    newest = alice["recent"][0]
    assert newest["players"] == ["bob", "alice"] and (newest["rank"], newest["of"]) == (2, 2)
    assert newest["status"] == "resigned" and newest["seed"] == SEED and newest["deal"] == "seed 4"
    assert newest["kind"] == "race" and newest["daily"] is None and newest["variant"] == VARIANT
    assert newest["replay"] == f"/matches/{code3}/replays/alice"
    row = results2.ranking[0]
    assert {k: alice["recent"][1][k] for k in ("time_ms", "moves", "foundation", "undos", "hints", "status")} == {
        "time_ms": row.time_ms, "moves": row.moves, "foundation": row.foundation, "undos": row.undos,
        "hints": row.hints, "status": "won"}
    assert alice["records"] == [{"variant": VARIANT, "deal": "seed 4", "games": 3, "wins": 2, "best_time_ms": time2,
                                 "best_time_match": code2, "fewest_moves": len(moves),
                                 "fewest_moves_match": code1, "last_ms": alice["records"][0]["last_ms"]}]
    assert alice["variants"] == {VARIANT: {"games": 3, "wins": 2, "win_rate": 0.6667, "best_time_ms": time2,
                                           "best_time_match": code2, "most_foundation": 104}}  # a win: both decks up
    assert alice["head_to_head"] == [{"name": "bob", "races": 3, "wins": 2, "losses": 1, "draws": 0,
                                      "by_variant": {VARIANT: {"races": 3, "wins": 2, "losses": 1, "draws": 0}}}]
    assert bob["head_to_head"][0]["wins"] == 1 and bob["head_to_head"][0]["losses"] == 2
    versus = httpx.get(f"{first.url}/players/B0B/versus/ALICE", timeout=10).json()
    assert versus == {"a": "bob", "b": "alice", "races": 3, "a_wins": 1, "b_wins": 2, "draws": 0,
                      "by_variant": {VARIANT: {"races": 3, "a_wins": 1, "b_wins": 2, "draws": 0}}}
    assert len(page(first.url, "alice", limit=2).json()["recent"]) == 2

    # A restart of both processes (the same Redis) loses none of it.
    before = {name: page(first.url, name).content for name in ("alice", "bob")}
    for process in (first, second):
        process.stop()
    again = make_server()
    assert {name: page(again.url, name).content for name in ("alice", "bob")} == before
    # A wrong key changes nothing: the page is byte for byte what it was.
    thief = Player(again.ws_url)
    await thief.connect()
    other = create_match(again.url, variant=VARIANT, seed=SEED, players=2)
    await thief.send(m.Join(other["code"], "alice", "not her key"))
    assert (await thief.expect(m.Joined)).code == "bad_token"
    for route in ("/key", ""):
        response = httpx.request("POST" if route else "DELETE", f"{again.url}/players/alice{route}",
                                 json={"player_key": PLAYER_KEYS[name_key("alice")][::-1]}, timeout=10)
        assert response.status_code == 403
    await thief.close()
    assert page(again.url, "alice").content == before["alice"]
    with redis.Redis.from_url(redis_url) as client:  # no key of theirs expires
        assert all(client.ttl(key) == -1 for key in client.scan_iter("{n:*"))
