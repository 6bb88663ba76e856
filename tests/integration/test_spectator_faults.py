"""Spectators' streams under faults: connections reset during the catch-up read, and resume ids that look
like stream ids but that Redis refuses. Real server processes, real Redis, raw sockets for the resets."""

from __future__ import annotations

import asyncio
import re
import socket
import struct

import httpx
import msgspec
import pytest
import websockets

from protocol import messages as m

from .conftest import ServerProcess
from .test_race import lobby_of_two, solution
from .wsclient import Player, create_match

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SLOTS = 40
"""``FTR_MAX_WATCHERS`` of the servers here: the resets below are several times as many."""
RESETS = 3 * SLOTS


def spectators(server: ServerProcess) -> dict[str, float]:
    """``ftr_spectators`` from ``/metrics``, by label ``of``."""
    text = httpx.get(server.url + "/metrics", timeout=10).text
    return {found[1]: float(found[2]) for found in re.finditer(r'^ftr_spectators\{of="(\w+)"\} (\S+)$', text,
                                                                   re.MULTILINE)}


def daily_today(server: ServerProcess) -> dict:
    """``GET /daily`` (JSON): today's date of the daily challenge."""
    return httpx.get(server.url + "/daily", headers={"Accept": "application/json"}, timeout=10).json()


async def reset_after_answer(port: int, request: bytes) -> bytes:
    """Send ``request``, read the answer's head (a 101 handshake or the SSE headers), then reset the TCP
    connection (SO_LINGER 0: an RST, no FIN) while the server reads the stream for its catch-up."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
    return head


def ws_upgrade(path: str) -> bytes:
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()


def sse_get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode()


async def reset_many(port: int, request: bytes, count: int) -> list[bytes]:
    heads: list[bytes] = []
    for start in range(0, count, 20):  # 20 at a time: the resets land while the server is busy with the others
        heads += await asyncio.gather(*(reset_after_answer(port, request) for _ in range(min(20, count - start))))
    return heads


async def settled(server: ServerProcess, of: str, seconds: float = 5) -> float:
    """The spectator count once it stops falling (or after ``seconds``)."""
    deadline = asyncio.get_running_loop().time() + seconds
    count = spectators(server).get(of, -1)
    while count != 0 and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)
        count = spectators(server).get(of, -1)
    return count


async def finished_match(server: ServerProcess) -> str:
    """A two-player match that ended (30 moves, then both resign): its stream holds a few dozen events."""
    created, alice, bob = await lobby_of_two(server)
    await alice.expect(m.Started)
    await bob.expect(m.Started)
    for command in solution()[:30]:
        await alice.play(command)
    await alice.send(m.Resign(alice.seq + 1))
    await bob.send(m.Resign(bob.seq + 1))
    await alice.expect(m.Results)
    await alice.ws.close()
    await bob.ws.close()
    return created["code"]


async def test_watch_sockets_reset_during_catch_up_release_their_slots(make_server) -> None:  # type: ignore[no-untyped-def]
    """A spectator's slot is released whenever its connection ends: after several times ``FTR_MAX_WATCHERS``
    WebSocket handshakes reset during the catch-up read (on a finished match and on a lobby nobody joined),
    no slot stays taken and a new spectator gets the whole stream."""
    server = make_server(FTR_MAX_WATCHERS=str(SLOTS), FTR_MATCHES_PER_MIN="1000")

    async def run() -> None:
        ended = await finished_match(server)
        lobby = create_match(server.url, variant="classic", players=2, solvable_only=False)["code"]
        for code in (ended, lobby):
            heads = await reset_many(server.port, ws_upgrade(f"/matches/{code}/watch"), RESETS)
            assert all(head.startswith(b"HTTP/1.1 101") for head in heads)
            count = await settled(server, "match")
            async with websockets.connect(f"ws://127.0.0.1:{server.port}/matches/{code}/watch", max_queue=None) as watcher:
                if code == lobby:  # nobody joined: no event yet; the first player's arrival is the first
                    joining = Player(server.ws_url)
                    await joining.connect()
                    await joining.join(code, "carol")
                first = msgspec.msgpack.decode(await asyncio.wait_for(watcher.recv(), 10))
                if code == lobby:
                    await joining.ws.close()
            assert "event" in first and first["event"]["type"] == "lobby", first  # served, not too_many_watchers
            assert count == 0, (code, spectators(server))

    await run()
    assert "Task exception was never retrieved" not in server.logs()


async def test_a_spectator_is_served_after_many_watch_sockets_reset_on_a_lobby_nobody_joined(make_server) -> None:  # type: ignore[no-untyped-def]
    """What the spectators see, nothing else (no metrics): three times ``FTR_MAX_WATCHERS`` WebSocket
    handshakes on a match nobody joined, each reset (an RST) right after the handshake, then one more spectator
    of that match is served (its first frame is the lobby when a player joins), not ``too_many_watchers``. A
    reset must free its slot even though no event comes for the handler waiting on the watcher's queue."""
    server = make_server(FTR_MAX_WATCHERS=str(SLOTS), FTR_MATCHES_PER_MIN="1000")

    async def run() -> None:
        code = create_match(server.url, variant="classic", players=2, solvable_only=False)["code"]
        heads = await reset_many(server.port, ws_upgrade(f"/matches/{code}/watch"), RESETS)
        assert all(head.startswith(b"HTTP/1.1 101") for head in heads)
        await asyncio.sleep(1)  # time for the server to see the resets
        async with websockets.connect(f"ws://127.0.0.1:{server.port}/matches/{code}/watch", max_queue=None) as watcher:
            joining = Player(server.ws_url)
            await joining.connect()
            await joining.join(code, "carol")
            first = msgspec.msgpack.decode(await asyncio.wait_for(watcher.recv(), 10))
            await joining.ws.close()
        assert first.get("event", {}).get("type") == "lobby", first  # served, not too_many_watchers

    await run()


async def test_event_streams_reset_during_catch_up_release_their_slots(make_server) -> None:  # type: ignore[no-untyped-def]
    """The same for the SSE streams of a match and of a day of the daily challenge."""
    server = make_server(FTR_MAX_WATCHERS=str(SLOTS), FTR_MATCHES_PER_MIN="1000")

    async def run() -> None:
        code = await finished_match(server)
        heads = await reset_many(server.port, sse_get(f"/matches/{code}/events"), RESETS)
        assert all(head.startswith(b"HTTP/1.1 200") for head in heads)
        count = await settled(server, "match")
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http, \
                http.stream("GET", f"/matches/{code}/events") as response:
            assert response.status_code == 200, await response.aread()  # served, not too_many_watchers
            async for line in response.aiter_lines():
                if line.startswith("event: "):
                    assert line == "event: lobby"
                    break
        assert count == 0, spectators(server)
        today = daily_today(server)
        heads = await reset_many(server.port, sse_get(f"/daily/{today['date']}/classic/events"), RESETS)
        assert all(head.startswith(b"HTTP/1.1 200") for head in heads), heads[0]
        count = await settled(server, "daily")
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http, \
                http.stream("GET", f"/daily/{today['date']}/classic/events") as response:
            assert response.status_code == 200, await response.aread()  # served, not too_many_watchers
        assert count == 0, spectators(server)

    await run()


REFUSED_IDS = ["99999999999999999999-0", "0-99999999999999999999", "18446744073709551616-0",
               "18446744073709551615-18446744073709551615"]
"""Ids of the right shape that Redis refuses: a part of 2**64 or more; the largest id (nothing follows it)."""
ACCEPTED_IDS = ["18446744073709551615-0", "0-18446744073709551615", "0-0"]


async def test_stream_ids_redis_refuses_are_malformed(server: ServerProcess) -> None:
    """Every stream route answers such an id with 400 ``malformed`` (WebSocket: ``error`` ``malformed`` and
    close 1008), and nothing reaches Redis as ``Invalid stream ID``; the largest ids Redis takes still work."""
    async def run() -> None:
        code = create_match(server.url, variant="classic", players=2, solvable_only=False)["code"]
        today = daily_today(server)
        paths = [f"/matches/{code}/events", f"/daily/{today['date']}/classic/events"]
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            for path in paths:
                for bad in REFUSED_IDS:
                    for request in ({"params": {"from": bad}}, {"headers": {"Last-Event-ID": bad}}):
                        answer = await http.get(path, **request)  # type: ignore[arg-type]
                        assert answer.status_code == 400, (path, bad, answer.status_code, answer.text)
                        assert answer.json()["error"] == "malformed"
                        assert "2**64" in answer.json()["message"]
                for good in ACCEPTED_IDS:
                    async with http.stream("GET", path, params={"from": good}) as response:
                        assert response.status_code == 200, (path, good)
        for bad in REFUSED_IDS:
            async with websockets.connect(f"ws://127.0.0.1:{server.port}/matches/{code}/watch?from={bad}", max_queue=None) as ws:
                error = msgspec.msgpack.decode(await asyncio.wait_for(ws.recv(), 10))
                with pytest.raises(websockets.ConnectionClosed):
                    await asyncio.wait_for(ws.recv(), 10)
            assert error["type"] == "error" and error["code"] == "malformed", error
            assert ws.close_code == 1008, (bad, ws.close_code)
        for good in ACCEPTED_IDS[:2]:  # past every event: the socket stays open, waiting for live ones
            async with websockets.connect(f"ws://127.0.0.1:{server.port}/matches/{code}/watch?from={good}", max_queue=None) as ws:
                with pytest.raises(TimeoutError):
                    await asyncio.wait_for(ws.recv(), 0.5)

    await run()
    logs = server.logs()
    assert "Invalid stream ID" not in logs and "Exception in ASGI application" not in logs, logs[-3000:]
