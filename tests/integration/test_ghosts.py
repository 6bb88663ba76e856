"""Ghosts on a real server and Redis: a named player's best game on a deal is kept (its timeline replayed here
from the game's record), raced as the ``ghost`` of a new match on that deal, kept across a server restart, and
deleted with the player; a ghost nobody can race is refused and nothing is made."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
import redis

from protocol import messages as m
from server.engine import Game, deal, find_variant
from server.names import name_key
from server.store.keys import name_hash, profile_key

from .test_race import SEED, VARIANT, solution
from .wsclient import PLAYER_KEYS, Player, create_match

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SOLO = {"variant": VARIANT, "seed": SEED, "players": 1, "solvable_only": False, "undo": "full",
        "time_limit_s": 0}


async def solo(url: str, ws_url: str, name: str, commands: list[str], **extra: Any) -> tuple[str, Player]:
    """``name`` alone on seed 4 (or as ``extra`` says) plays ``commands`` (a short pause after each of the first few, so their times
    differ), then resigns unless the game is won; the match code and the connection, closed."""
    created = create_match(url, **SOLO | extra)
    player = Player(ws_url)
    await player.connect()
    await player.join(created["code"], name)
    await player.send(m.Ready())
    assert isinstance(await player.expect(m.Started), m.Started)
    reply = None
    for index, command in enumerate(commands):
        if index < 4:
            await asyncio.sleep(0.05)
        reply = await player.play(command)
        assert isinstance(reply, m.PositionReply), reply
    if reply is None or reply.status != "won":
        await player.resign()
    assert isinstance(await player.expect(m.Results), m.Results)
    await player.close()
    return created["code"], player


def replayed_timeline(url: str, code: str, name: str) -> tuple[list[tuple[int, int, int]], dict[str, Any]]:
    """The timeline of ``name``'s game in ``code`` computed here: its public record replayed through the engine,
    the deal first (``(0, 0, cards up)``) and then ``(ms, moves, cards up)`` after each command."""
    record = httpx.get(f"{url}/matches/{code}/replays/{name}", timeout=10).json()
    variant = find_variant(record["variant"])
    game = Game(deal(record["seed"], variant), variant, autoplay=record["autoplay"], undo=record["undo"])
    points = [(0, 0, game.position.foundation_cards)]
    for command, ms in zip(record["moves"], record["times_ms"], strict=True):
        game.play(command)
        points.append((ms, game.moves, game.position.foundation_cards))
    return points, record["result"]


async def raced_ghost(url: str, ws_url: str, ghost: dict[str, Any], name: str = "rider") -> tuple[m.Ghost, Player]:
    """A new solo match racing ``ghost``: joined as ``name`` and started; the ghost frame sent right after
    ``started`` (the connection left open)."""
    created = create_match(url, **SOLO, ghost=ghost)
    player = Player(ws_url)
    await player.connect()
    await player.join(created["code"], name)
    await player.send(m.Ready())
    assert isinstance(await player.expect(m.Started), m.Started)
    frame = await player.recv()
    assert isinstance(frame, m.Ghost), frame
    return frame, player


def refused(url: str, status: int, code: str, **body: Any) -> str:
    response = httpx.post(url + "/matches", json=body, timeout=10)
    assert (response.status_code, response.json()["error"]) == (status, code), response.text
    return str(response.json()["message"])


async def test_a_best_game_is_kept_raced_restarted_and_deleted(make_server, redis_url: str) -> None:
    moves = solution()
    first = make_server()
    url, ws = first.url, first.ws_url
    code1, _ = await solo(url, ws, "ann", moves[:6])            # resigned after 6 moves
    ghost1, rider = await raced_ghost(url, ws, {"name": "ANN"})  # any look-alike finds her
    await rider.close()
    points1, result1 = replayed_timeline(url, code1, "ann")
    assert ghost1.timeline == points1 and len(points1) == 7 and points1[-1][0] > points1[1][0] > 0
    assert (ghost1.name, ghost1.label, ghost1.status) == ("ann", "ann's best", "resigned")
    assert (ghost1.moves, ghost1.foundation, ghost1.time_ms) == (result1["moves"], result1["foundation"],
                                                                 result1["time_ms"])

    code2, _ = await solo(url, ws, "ann", moves)                # won: the best from now on
    code3, _ = await solo(url, ws, "ann", moves[:3])            # resigned again: not better than a win
    points2, result2 = replayed_timeline(url, code2, "ann")
    ghost2, rider = await raced_ghost(url, ws, {"name": "ann"})
    assert ghost2.status == "won" and ghost2.timeline == points2 and ghost2.time_ms == result2["time_ms"]
    assert ghost2.timeline[-1][1:] == (len(moves), 104) == (result2["moves"], result2["foundation"])
    await rider.close()
    back = Player(ws)                                           # on a resume: the ghost again, after started
    await back.connect()
    back.token = rider.token
    await back.resume(rider.code)
    await back.drain()
    again = [x for x in back.inbox if isinstance(x, (m.Started, m.Ghost))]
    assert [type(x) for x in again] == [m.Started, m.Ghost] and again[1] == ghost2
    await back.send(m.Restart())                                # the same deal again: the same ghost again
    answer = await back.expect(m.NextRound)
    assert isinstance(answer, m.NextRound), answer
    back.token, back.inbox = answer.token, []
    await back.resume(answer.match)
    assert isinstance(await back.expect(m.Started), m.Started) and await back.expect(m.Ghost) == ghost2
    await back.close()
    # A game of a finished match, named by its code: whoever played it, best or not.
    ghost3, rider = await raced_ghost(url, ws, {"name": "ann", "match": code3})
    await rider.close()
    assert ghost3.timeline == replayed_timeline(url, code3, "ann")[0] and ghost3.label == "ann's game"

    # Refused, and nothing made: a deal no one chose, a name never claimed, no game on that deal or variant,
    # a match not kept, not on this deal, or without that player.
    with redis.Redis.from_url(redis_url) as client:
        metas = len(list(client.scan_iter("{m:*}:meta", count=1000)))
    assert "seed or a deal" in refused(url, 400, "malformed", players=1, ghost={"name": "ann"})
    assert "zed" in refused(url, 404, "no_ghost", **SOLO | {"ghost": {"name": "zed"}})
    assert "seed 5" in refused(url, 404, "no_ghost", **SOLO | {"seed": "5", "ghost": {"name": "ann"}})
    assert "classic" in refused(url, 404, "no_ghost", **SOLO | {"variant": "classic", "ghost": {"name": "ann"}})
    refused(url, 404, "no_ghost", **SOLO | {"ghost": {"name": "ann", "match": "NOSUCHMATCH"}})
    refused(url, 404, "no_ghost", **SOLO | {"seed": "5", "ghost": {"name": "ann", "match": code3}})
    refused(url, 404, "no_ghost", **SOLO | {"ghost": {"name": "bob", "match": code3}})
    refused(url, 400, "malformed", **SOLO | {"ghost": {"name": "ann", "moves": 3}})
    with redis.Redis.from_url(redis_url) as client:
        assert len(list(client.scan_iter("{m:*}:meta", count=1000))) == metas

    # A restart of the server (the same Redis) keeps the ghost.
    first.stop()
    second = make_server(FTR_HISTORY_DEALS="1")
    ghost4, rider = await raced_ghost(second.url, second.ws_url, {"name": "ann"})
    await rider.close()
    assert ghost4 == ghost2
    # Bounded with the kept deals: keeping one deal, a game on seed 5 drops seed 4's records and its ghost.
    await solo(second.url, second.ws_url, "ann", ["s"], seed="5")
    assert "seed 4" in refused(second.url, 404, "no_ghost", **SOLO | {"ghost": {"name": "ann"}})

    # Deleted with the player (her seed 5 game the one ghost kept): the key is gone, no ghost of hers is raced.
    ghosts = profile_key(name_hash(name_key("ann")), "ghosts")
    with redis.Redis.from_url(redis_url) as client:
        assert client.hkeys(ghosts) == [f"{VARIANT}|seed 5".encode()] and client.ttl(ghosts) == -1
    gone = httpx.request("DELETE", f"{second.url}/players/ann", json={"player_key": PLAYER_KEYS[name_key("ann")]},
                         timeout=10)
    assert gone.status_code == 204, gone.text
    with redis.Redis.from_url(redis_url) as client:
        assert not client.exists(ghosts)
    refused(second.url, 404, "no_ghost", **SOLO | {"seed": "5", "ghost": {"name": "ann"}})
