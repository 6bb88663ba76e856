"""One status for a stuck player, undos in the progress frames, and ``restart`` of a game alone.

Real server process, real Redis, real WebSocket players, and the spectators' SSE stream
(``/matches/{code}/events``). The stuck position is test_dead_games.py's SHUFFLE_ONLY: with undo
``safe`` the solver finds it dead after 6-2 while the undo is left (RULES.md section 5).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from protocol import messages as m

from .conftest import ServerProcess
from .test_dead_games import SHUFFLE_ONLY
from .wsclient import Player, create_match, public_state


async def _start(server: ServerProcess, names: list[str], **settings: Any) -> tuple[str, list[Player],
                                                                                     list[m.Started]]:
    created = create_match(server.url, players=len(names), solvable_only=False, **settings)
    players = []
    for name in names:
        player = Player(server.ws_url)
        await player.connect()
        await player.join(created["code"], name)
        players.append(player)
    for player in players:
        await player.send(m.Ready())
    started = [await player.expect(m.Started) for player in players]
    assert all(isinstance(s, m.Started) for s in started), started
    return created["code"], players, started


async def _progress_of(player: Player, name: str, status: str, timeout: float = 10) -> m.Progress:
    """Receive until a ``progress`` of ``name`` with ``status``."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        message = await player.recv(max(0.01, deadline - asyncio.get_running_loop().time()))
        player.inbox.append(message)
        if isinstance(message, m.Progress) and message.name == name and message.status == status:
            return message


def _sse_progress(url: str, code: str) -> list[dict[str, Any]]:
    """The ``progress`` events the spectators' SSE stream holds now (it sends what it missed, then goes quiet)."""
    events: list[dict[str, Any]] = []
    current: dict[str, str] = {}
    try:
        with httpx.stream("GET", f"{url}/matches/{code}/events", timeout=httpx.Timeout(1.5)) as response:
            assert response.status_code == 200
            for line in response.iter_lines():
                if not line:
                    if current.get("event") == "progress":
                        events.append(json.loads(current["data"]))
                    current = {}
                    continue
                field, _, value = line.partition(":")
                current[field] = value.strip()
    except httpx.ReadTimeout:
        pass
    return events


async def test_a_stuck_player_is_dead_for_everyone_until_their_undo(server: ServerProcess) -> None:
    code, (ann, bob), _ = await _start(server, ["ann", "bob"], variant="classic", deal=SHUFFLE_ONLY, undo="safe")
    reply = await ann.play("6-2")
    assert isinstance(reply, m.PositionReply) and reply.status == "playing"
    told = await ann.expect(m.PositionReply, timeout=10)  # the solver's verdict: dead, an undo left
    assert isinstance(told, m.PositionReply) and told.status == "dead" and "u" in [x.command for x in told.legal]
    seen = await _progress_of(bob, "ann", "dead")
    assert (seen.moves, seen.foundation, seen.undos) == (1, 73, 0)
    # The spectators' stream and the public state say the same.
    assert [(e["name"], e["status"]) for e in await asyncio.to_thread(_sse_progress, server.url, code)] == [
        ("ann", "playing"), ("ann", "dead")]
    assert {p["name"]: p["status"] for p in public_state(server.url, code)["players"]} == {
        "ann": "dead", "bob": "playing"}
    # A player resuming is told too: its opponent's progress, its own started.
    again = Player(server.ws_url)
    await again.connect()
    again.token = bob.token
    await again.resume(code)
    await bob.close()
    resumed = await _progress_of(again, "ann", "dead")
    assert resumed.undos == 0
    # The undo: playing again, everywhere, and its progress counts the undo.
    undone = await ann.play("u")
    assert isinstance(undone, m.PositionReply) and undone.status == "playing" and undone.undos == 1
    back = await _progress_of(again, "ann", "playing")
    assert (back.moves, back.undos) == (undone.moves, 1)
    assert [(e["status"], e.get("undos")) for e in await asyncio.to_thread(_sse_progress, server.url, code)] == [
        ("playing", 0), ("dead", 0), ("playing", 1)]
    # Back at the deal, which is dead too and has nothing left to undo: now the game ends as dead.
    finished = await again.expect(m.Finished)
    assert isinstance(finished, m.Finished) and (finished.name, finished.status) == ("ann", "dead")
    await ann.close()
    await again.close()


def _seed_of(url: str, code: str) -> str:
    response = httpx.get(f"{url}/matches/{code}/results", timeout=10)
    assert response.status_code == 200, response.text
    return str(response.json()["seed"])


async def _restart(player: Player) -> m.NextRound:
    await player.send(m.Restart())
    answer = await player.expect(m.NextRound)
    assert isinstance(answer, m.NextRound), answer
    return answer


async def test_restart_alone_deals_the_same_deal_again_as_the_next_round(server: ServerProcess) -> None:
    code, (solo,), (first,) = await _start(server, ["solo"], variant="classic")
    draw = await solo.play("s")
    assert isinstance(draw, m.PositionReply)
    answer = await _restart(solo)
    assert answer.round == 2 and answer.match != code
    # The game ended as resigned (the results frame comes on the match's stream: maybe after next_round).
    results = httpx.get(f"{server.url}/matches/{code}/results", timeout=10).json()
    assert [(r["name"], r["status"]) for r in results["ranking"]] == [("solo", "resigned")]
    solo.code, solo.token, solo.seq = answer.match, answer.token, 0
    await solo.resume(answer.match)
    second = await solo.expect(m.Started, timeout=15)
    assert isinstance(second, m.Started), second
    assert second.view == first.view and second.moves == 0 and second.legal == first.legal
    state = public_state(server.url, answer.match)
    assert state["round"] == 2 and state["settings"]["players"] == 1
    assert state["commitment"] != public_state(server.url, code)["commitment"]  # a new nonce and commitment
    # Restarted again once that game is won or not: from a finished round too (here: after a resign).
    assert isinstance(await solo.resign(), m.PositionReply)
    while (results_2 := await solo.expect(m.Results)).match != answer.match:  # round 1's may come late
        assert isinstance(results_2, m.Results), results_2
    third = await _restart(solo)
    assert third.round == 3
    assert _seed_of(server.url, code) == _seed_of(server.url, answer.match)
    await solo.close()


async def _restart_refused(player: Player) -> m.Error:
    """Send ``restart`` and return the ``error`` that answers it (anything else fails the test)."""
    await player.send(m.Restart())
    refused = await player.expect(m.Error)
    assert isinstance(refused, m.Error), refused
    return refused


async def test_restart_is_refused_in_a_race_and_before_the_start(server: ServerProcess) -> None:
    created = create_match(server.url, players=1, solvable_only=False, variant="classic")
    early = Player(server.ws_url)
    await early.connect()
    await early.join(created["code"], "early")
    refused = await _restart_refused(early)
    assert refused.code == "not_started"
    await early.close()

    code, (ann, bob), _ = await _start(server, ["ann", "bob"], variant="classic")
    refused = await _restart_refused(ann)
    assert refused.code == "no_restart" and "fair" in refused.message
    # Nothing changed: the race goes on, and ann's next command is seq 1.
    reply = await ann.play("s")
    assert isinstance(reply, m.PositionReply) and reply.seq == 1 and reply.status == "playing"
    state = public_state(server.url, code)
    assert state["state"] == "playing" and state["next_round"] is None
    await ann.close()
    await bob.close()


async def test_restart_is_refused_in_a_daily_attempt(server: ServerProcess) -> None:
    response = httpx.post(f"{server.url}/daily/classic/attempt", json={"name": "dee"}, timeout=60)
    assert response.status_code == 200, response.text
    body = response.json()
    player = Player(server.ws_url)
    await player.connect()
    player.code, player.token = body["match"], body["player_token"]
    await player.resume(body["match"])
    started = await player.expect(m.Started, timeout=15)
    assert isinstance(started, m.Started), started
    refused = await _restart_refused(player)
    assert refused.code == "no_restart" and "daily" in refused.message
    reply = await player.play("s")  # nothing changed: the attempt goes on
    assert isinstance(reply, m.PositionReply) and reply.status == "playing" and reply.seq == 1
    assert public_state(server.url, body["match"])["state"] == "playing"
    await player.close()


async def test_a_rematch_after_a_restart_has_room_for_the_series_players_again(server: ServerProcess) -> None:
    created = create_match(server.url, players=3, solvable_only=False, variant="classic")
    host = Player(server.ws_url)
    await host.connect()
    await host.join(created["code"], "host")
    await host.send(m.Start(created["host_token"]))  # nobody else came: the host plays alone
    assert isinstance(await host.expect(m.Started, timeout=15), m.Started)
    again = await _restart(host)
    assert public_state(server.url, again.match)["settings"]["players"] == 1  # the known deal: for its player only
    host.code, host.token, host.seq = again.match, again.token, 0
    await host.resume(again.match)
    assert isinstance(await host.expect(m.Started, timeout=15), m.Started)
    assert isinstance(await host.resign(), m.PositionReply)
    while (results := await host.expect(m.Results)).match != again.match:  # round 1's may come late
        assert isinstance(results, m.Results), results
    await host.send(m.Rematch())
    third = await host.expect(m.NextRound)
    assert isinstance(third, m.NextRound) and third.round == 3, third
    # A new deal: the round has the room the host made the match with (not the restart's one player).
    assert public_state(server.url, third.match)["settings"]["players"] == 3
    await host.close()
