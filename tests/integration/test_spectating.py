"""Spectators' Server-Sent Events stream: progress as it happens,
resumable with Last-Event-ID with no event lost or repeated; no board, no move."""

from __future__ import annotations

import asyncio
import json

import httpx
import msgspec
import pytest

from protocol import messages as m

from .conftest import stored_public_ids
from .test_race import SEED, lobby_of_two, solution
from .wsclient import Player

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


async def read_events(response: httpx.Response, until: int | None = None, stop_type: str | None = None) -> list[dict]:
    """Parse Server-Sent Events from a streaming response."""
    events: list[dict] = []
    current: dict[str, str] = {}
    async for line in response.aiter_lines():
        if line == "":
            if "data" in current:
                events.append(current)
                if (until is not None and len(events) >= until) or current.get("event") == stop_type:
                    return events
            current = {}
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(": ")
        current[field] = value
    return events


async def test_events_stream_progress_and_resume_without_loss_or_repeat(server, redis_url) -> None:  # type: ignore[no-untyped-def]
    moves = solution()

    async def run() -> list[dict]:
        created, alice, bob = await lobby_of_two(server)
        code = created["code"]
        await alice.expect(m.Started)
        await bob.expect(m.Started)
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            async with http.stream("GET", f"/matches/{code}/events") as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                for command in moves[:10]:
                    await alice.play(command)
                first = await read_events(response, until=8)
            # cut; the race goes on without the watcher
            for command in moves[10:40]:
                await alice.play(command)
            await bob.play("s")
            resume_from = first[-1]["id"]
            async with http.stream("GET", f"/matches/{code}/events", headers={"Last-Event-ID": resume_from}) as response:
                for command in moves[40:]:
                    await alice.play(command)
                await bob.resign()
                second = await read_events(response, stop_type="results")
        await alice.close()
        await bob.close()
        return [*first, *second], code

    events, code = await run()
    ids = [e["id"] for e in events]
    assert len(ids) == len(set(ids)) and ids == sorted(ids, key=lambda i: tuple(map(int, i.split("-"))))
    public = stored_public_ids(redis_url, code)
    assert ids == public  # every public event, in order, none lost, none repeated
    types = {e["event"] for e in events}
    assert {"lobby", "countdown", "progress", "finished", "results"} <= types
    progress = [json.loads(e["data"]) for e in events if e["event"] == "progress"]
    assert [p["moves"] for p in progress if p["name"] == "alice"] == list(range(1, len(moves) + 1))
    for event in events:
        data = json.loads(event["data"])
        assert not {"view", "legal", "tableau", "command", "deal"} & set(data), data  # progress only, never a board
        if event["event"] != "results":
            assert "seed" not in data and "nonce" not in data  # revealed only with the results


async def test_a_late_watcher_first_gets_what_it_missed(server) -> None:  # type: ignore[no-untyped-def]
    async def run() -> None:
        created, alice, bob = await lobby_of_two(server)
        await alice.expect(m.Started)
        await alice.play("s")
        await alice.resign()
        await bob.resign()
        await alice.expect(m.Results)
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            async with http.stream("GET", f"/matches/{created['code']}/events") as response:
                events = await read_events(response, stop_type="results")
            bad = await http.get(f"/matches/{created['code']}/events", headers={"Last-Event-ID": "nonsense"})
            assert bad.status_code == 400
            missing = await http.get("/matches/nope/events")
            assert missing.status_code == 404
        assert events[0]["event"] == "lobby" and events[-1]["event"] == "results"
        assert json.loads(events[-1]["data"])["seed"] == SEED
        await alice.close()
        await bob.close()

    await run()


async def test_the_watch_websocket_carries_the_same_events_and_resumes(server, redis_url) -> None:  # type: ignore[no-untyped-def]
    import msgspec
    import websockets

    moves = solution()

    async def run() -> tuple[list[dict], str]:
        created, alice, bob = await lobby_of_two(server)
        code = created["code"]
        await alice.expect(m.Started)
        url = server.ws_url.replace("/play", f"/matches/{code}/watch")
        got: list[dict] = []
        async with websockets.connect(url, max_queue=None) as watcher:
            for command in moves[:5]:
                await alice.play(command)
            while len(got) < 6:
                got.append(msgspec.msgpack.decode(await asyncio.wait_for(watcher.recv(), 10)))
        for command in moves[5:20]:
            await alice.play(command)
        await alice.resign()
        await bob.resign()
        await alice.expect(m.Results)
        async with websockets.connect(f"{url}?from={got[-1]['id']}", max_queue=None) as watcher:
            while got[-1]["event"]["type"] != "results":
                got.append(msgspec.msgpack.decode(await asyncio.wait_for(watcher.recv(), 10)))
        async with websockets.connect(server.ws_url.replace("/play", "/matches/nope/watch"), max_queue=None) as missing:
            refused = msgspec.msgpack.decode(await asyncio.wait_for(missing.recv(), 10))
            assert refused["type"] == "error" and refused["code"] == "no_match"
        await alice.close()
        await bob.close()
        return got, code

    got, code = await run()
    public = stored_public_ids(redis_url, code)
    assert [e["id"] for e in got] == public
    assert [e["event"]["moves"] for e in got if e["event"]["type"] == "progress" and e["event"]["name"] == "alice"] \
        == list(range(1, 21))


async def test_spectators_past_the_limit_are_refused_and_the_others_keep_their_streams(make_server) -> None:  # type: ignore[no-untyped-def]
    """FTR_MAX_WATCHERS per match and process: the next SSE watcher gets 503 too_many_watchers, the next
    WebSocket watcher that error and close 1013; when one leaves, a new one is let in."""
    import websockets

    server = make_server(FTR_MAX_WATCHERS="2")
    created = httpx.post(server.url + "/matches", json={"players": 2, "solvable_only": False}, timeout=10).json()
    code = created["code"]
    events_url = f"{server.url}/matches/{code}/events"

    async def run() -> None:
        async with httpx.AsyncClient(timeout=10) as client:
            async with client.stream("GET", events_url) as first, client.stream("GET", events_url) as second:
                assert first.status_code == second.status_code == 200
                third = await client.get(events_url)
                assert third.status_code == 503 and third.json()["error"] == "too_many_watchers"
                async with websockets.connect(f"ws://127.0.0.1:{server.port}/matches/{code}/watch", max_queue=None) as ws:
                    refused = msgspec.msgpack.decode(await ws.recv())
                    assert refused["type"] == "error" and refused["code"] == "too_many_watchers"
                    with pytest.raises(websockets.ConnectionClosed) as closed:
                        await ws.recv()
                    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
                player = Player(server.ws_url)  # an event now: the admitted watchers still stream
                await player.connect()
                await player.join(code, "ann")
                assert [e["event"] for e in await read_events(first, until=1)] == ["lobby"]
                await player.close()
            await asyncio.sleep(0.5)  # both left: their places are free again
            async with client.stream("GET", events_url) as again:
                assert again.status_code == 200

    await run()
