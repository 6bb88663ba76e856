"""Floods, idle connections and oversized requests against a real server process (127.0.0.1 only, each
case bounded in count and a few seconds long): the abuser is closed or refused, the server's memory stays
bounded, and another player's round trips stay as they were."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import statistics
import threading
import time
from pathlib import Path

import httpx
import pytest
import websockets

from protocol import messages as m

from .conftest import ServerProcess, redis_at
from .wsclient import Player

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

UPGRADE = (b"GET /play HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")


def rss_kib(server: ServerProcess) -> int:
    """The server process's resident memory (KiB, /proc)."""
    assert server.process is not None
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))


def client_frame(opcode: int, payload: bytes = b"", fin: bool = True) -> bytes:
    """One masked client frame (RFC 6455 section 5.2; payload under 126 bytes; mask 0 keeps it as is)."""
    assert len(payload) < 126
    return bytes([(0x80 if fin else 0) | opcode, 0x80 | len(payload)]) + b"\0\0\0\0" + payload


def upgraded_socket(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(UPGRADE)
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(4096)
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def flood(sock: socket.socket, data: bytes) -> int:
    """Send ``data`` without reading anything; the bytes sent before the server closed the connection."""
    sent = 0
    view = memoryview(data)
    try:
        while sent < len(data):
            sent += sock.send(view[sent:sent + 65536])
    except OSError:
        pass
    return sent


def drain(sock: socket.socket, seconds: float, limit: int = 1 << 22) -> tuple[bytes, bool]:
    """What the server sent (at most ``limit`` bytes, for ``seconds``) and whether it closed the connection."""
    sock.settimeout(0.2)
    got = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and len(got) < limit:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except OSError:
            return got, True
        if not chunk:
            return got, True
        got += chunk
    return got, False


async def round_trips(player: Player, count: int, pause: float = 0.06) -> list[float]:
    """``count`` ping -> pong round trips of ``player`` (seconds)."""
    times = []
    for nonce in range(count):
        start = time.perf_counter()
        await player.send(m.Ping(nonce))
        pong = await player.expect(m.Pong)
        assert isinstance(pong, m.Pong) and pong.nonce == nonce, pong
        times.append(time.perf_counter() - start)
        await asyncio.sleep(pause)
    return times


async def flood_against_a_player(server: ServerProcess, data: bytes) -> dict[str, object]:
    """Run ``data`` as a flood from a raw WebSocket that never reads while a greeted player measures its
    round trips: before, during and after; the server's RSS before and after."""
    async def run() -> dict[str, object]:
        player = Player(server.ws_url)
        await player.connect()
        before = await round_trips(player, 30)  # 16 a second: within FTR_RATE 20
        rss_before = rss_kib(server)
        sock = upgraded_socket(server.port)
        sent: list[int] = []
        flooder = threading.Thread(target=lambda: sent.append(flood(sock, data)))
        flooder.start()
        during = await round_trips(player, 40)
        await asyncio.to_thread(flooder.join, 30)
        rss_after = rss_kib(server)
        answer, closed = await asyncio.to_thread(drain, sock, 3)
        sock.close()
        await player.ws.close()
        return {"before": before, "during": during, "rss": (rss_before, rss_after), "sent": sent[0],
                "answer": answer, "closed": closed}

    return await run()


def check_flood(result: dict[str, object], server: ServerProcess, total: int) -> None:
    before, during = result["before"], result["during"]
    assert isinstance(before, list) and isinstance(during, list)
    rss_before, rss_after = result["rss"]  # type: ignore[misc]
    print(f"flood: sent {result['sent']} of {total} bytes; RSS {rss_before} -> {rss_after} KiB; round trips "
          f"median {statistics.median(before) * 1000:.2f} -> {statistics.median(during) * 1000:.2f} ms, "
          f"max {max(before) * 1000:.2f} -> {max(during) * 1000:.2f} ms")
    answer = result["answer"]
    assert isinstance(answer, bytes)
    assert result["closed"], "the flooder was not closed"
    assert b"\x88" in answer and b"\x03\xf0" in answer[answer.index(b"\x88"):][:4], answer[-64:]  # close 1008
    assert rss_after - rss_before < 8 * 1024, (rss_before, rss_after)
    assert statistics.median(during) < max(3 * statistics.median(before), 0.02), (before, during)
    assert max(during) < 0.25, during
    assert "limit control frames" in server.logs()


@pytest.fixture
def default_limits(make_server) -> ServerProcess:  # type: ignore[no-untyped-def]
    """A server with the default rate limits (the integration servers otherwise allow 5000 messages a second)."""
    return make_server(FTR_RATE="20", FTR_BURST="40")


async def test_a_ping_flood_is_closed_and_others_play_on(default_limits: ServerProcess) -> None:
    """100,000 pings of 125 bytes from a client that never reads: its answers would be 13 MB of pongs."""
    data = client_frame(0x9, b"p" * 125) * 100_000
    check_flood(await flood_against_a_player(default_limits, data), default_limits, len(data))


async def test_a_flood_of_unfinished_fragments_is_closed_and_others_play_on(default_limits: ServerProcess) -> None:
    """A binary message begun and continued by 300,000 empty fragments, never finished."""
    data = client_frame(0x2, b"\x81", fin=False) + client_frame(0x0, fin=False) * 300_000
    check_flood(await flood_against_a_player(default_limits, data), default_limits, len(data))


IDLE_LIMITS = {"FTR_HEADER_TIMEOUT_S": "1", "FTR_HELLO_TIMEOUT_S": "1.5", "FTR_MAX_CONNECTIONS_PER_ADDRESS": "60"}


async def test_idle_and_never_greeting_connections_are_closed(make_server) -> None:  # type: ignore[no-untyped-def]
    """100 TCP connections that send nothing, a request trickling one header every 0.3 s, and a WebSocket
    that sends a frame other than hello every 0.4 s: past the per-address cap at once, the rest by their
    deadlines; a player connects and plays meanwhile; each limit is logged."""
    server = make_server(**IDLE_LIMITS)

    async def trickle() -> float:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        start = time.monotonic()
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        try:
            for n in range(20):  # 6 s of headers if nobody stops it
                await asyncio.sleep(0.3)
                writer.write(f"X-Trickle-{n}: {n}\r\n".encode())
                await writer.drain()
                if reader.at_eof():
                    break
            assert await asyncio.wait_for(reader.read(), 3) == b""
        except (ConnectionError, OSError):
            pass
        writer.close()
        return time.monotonic() - start

    async def chatter() -> tuple[float, list[object]]:
        player = Player(server.ws_url)
        player.ws = await websockets.connect(server.ws_url, compression=None, max_queue=None)
        start = time.monotonic()
        got: list[object] = []
        with contextlib.suppress(websockets.ConnectionClosed):  # the server closing it is the point
            for _ in range(20):
                await player.send_raw(b"\xc1")  # not msgpack: malformed, not hello
                await asyncio.sleep(0.4)
        with contextlib.suppress(websockets.ConnectionClosed, TimeoutError):
            while True:
                got.append(await player.recv(3))
        return time.monotonic() - start, [got, player.ws.close_code]

    async def run() -> None:
        trickling, chatting = asyncio.create_task(trickle()), asyncio.create_task(chatter())
        await asyncio.sleep(0.1)  # both connected: the idle ones below meet the cap, not them
        idle = [await asyncio.open_connection("127.0.0.1", server.port) for _ in range(100)]
        start = time.monotonic()

        async def closed(reader: asyncio.StreamReader) -> float:
            assert await asyncio.wait_for(reader.read(), 4) == b""
            return time.monotonic() - start

        closed_at = await asyncio.gather(*(closed(reader) for reader, _ in idle))
        for _, writer in idle:
            writer.close()
        assert max(closed_at) < 3, closed_at
        assert sum(t < 0.5 for t in closed_at) >= 40 - 2, closed_at  # past the cap: closed at once
        player = Player(server.ws_url)
        await player.connect()
        await player.send(m.Ping(7))
        assert (await player.expect(m.Pong)).nonce == 7
        await player.ws.close()
        assert await trickling < 3
        seconds, (frames, close_code) = await chatting
        assert seconds < 3.5 and close_code == 1008, (seconds, frames, close_code)
        assert any(isinstance(f, m.Error) and f.code == "hello_first" and "within" in f.message for f in frames)

    await run()
    logs = server.logs()
    for line in ("limit connections per address", "limit request head timeout", "sent no hello within"):
        assert line in logs, line


def test_a_request_head_over_the_limit_is_refused_however_it_arrives(server: ServerProcess,
                                                                      redis_url: str) -> None:
    """A request head over ``FTR_MAX_HEADER_BYTES`` (16,384) is answered 431 and closed, whether it comes in one
    piece, in 4 KiB pieces, with its blank line split across two reads, after blank lines, or behind a small
    request in the same read; a ``POST /matches`` with such a head creates no match; a head of 16,000 bytes in
    one piece is served."""
    def answer(head: bytes, body: bytes = b"", pieces: list[int] | None = None) -> bytes:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            data, cuts = head + body, pieces or [len(head) + len(body)]
            try:
                for start, stop in zip([0, *cuts], [*cuts, len(data)]):
                    sock.sendall(data[start:stop])
                    time.sleep(0.2)  # separate reads on the server's side
            except OSError:  # the server answered and closed before the rest was sent
                pass
            got, _ = drain(sock, 2)
        return got

    def head_of(size: int, first: bytes = b"GET /healthz HTTP/1.1") -> bytes:
        start = first + b"\r\nHost: 127.0.0.1\r\nX-Big: "
        return start + b"a" * (size - len(start) - 4) + b"\r\n\r\n"

    big = head_of(20_000)
    assert len(big) == 20_000 and len(head_of(16_000)) == 16_000
    assert answer(big).startswith(b"HTTP/1.1 431"), answer(big)[:100]
    assert answer(big, pieces=list(range(4096, len(big), 4096))).startswith(b"HTTP/1.1 431")
    assert answer(head_of(16_000)).startswith(b"HTTP/1.1 200")
    over = head_of(16_386)  # over by two bytes, the second of which comes after the split blank line
    assert answer(over, pieces=[len(over) - 2]).startswith(b"HTTP/1.1 431")
    assert answer(head_of(16_384), pieces=[16_382]).startswith(b"HTTP/1.1 200")
    assert answer(b"\r\n" * 8 + big).startswith(b"HTTP/1.1 431")  # the parser skips blank lines before a head
    store = redis_at(redis_url)
    before = set(store.scan_iter("{m:*}:meta"))  # other tests' matches may expire meanwhile: new ones are counted
    body = b'{"variant": "classic", "players": 2, "solvable_only": false}'
    post = head_of(20_000, b"POST /matches HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: "
                   + str(len(body)).encode())
    assert answer(post, body).startswith(b"HTTP/1.1 431")
    # Behind a small request in the same read: the connection is refused as the parser reaches the big head,
    # before the first request's answer is written.
    pipelined = answer(head_of(200) + post, body)
    assert b"HTTP/1.1 431" in pipelined and b"HTTP/1.1 201" not in pipelined, pipelined[:300]
    assert set(store.scan_iter("{m:*}:meta")) - before == set()
    small = head_of(1_000, b"POST /matches HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: "
                    + str(len(body)).encode())
    served = answer(small, body)
    assert served.startswith(b"HTTP/1.1 201")  # the same request with a small head is served
    code = json.loads(served.split(b"\r\n\r\n", 1)[1])["code"]
    assert set(store.scan_iter("{m:*}:meta")) - before == {f"{{m:{code}}}:meta".encode()}
    store.close()


def test_a_huge_chunked_body_is_refused_at_the_limit(server: ServerProcess) -> None:
    """A chunked ``POST /matches`` of up to 96 MB: answered 413 without being read to its end, the server's
    RSS grows by a few MiB at most; a declared Content-Length past the limit is refused unread."""
    chunk = b"a" * 65536
    body = (b"%x\r\n" % len(chunk) + chunk + b"\r\n") * (96 * 16)
    rss_before = rss_kib(server)
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    sock.sendall(b"POST /matches HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\n")
    sent = flood(sock, body)
    answer, closed = drain(sock, 3)
    sock.close()
    rss_after = rss_kib(server)
    print(f"chunked body: sent {sent} of {len(body)} bytes; RSS {rss_before} -> {rss_after} KiB")
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"frame_too_large" in answer and closed
    assert sent < len(body), "the whole body was read"
    assert rss_after - rss_before < 8 * 1024, (rss_before, rss_after)
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    sock.sendall(b"POST /matches HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 300000000\r\n\r\n{")
    answer, _ = drain(sock, 3)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


def test_forwarded_addresses_count_only_from_configured_proxies(make_server) -> None:  # type: ignore[no-untyped-def]
    """With no ``FTR_FORWARDED_ALLOW_IPS`` a forged X-Forwarded-For does not buy a fresh creation budget; with
    127.0.0.1 configured as the proxy, each forwarded address has its own."""
    def creations(server: ServerProcess) -> list[int]:
        return [httpx.post(server.url + "/matches", json={"solvable_only": False}, timeout=10,
                           headers={"X-Forwarded-For": f"203.0.113.{n}"}).status_code for n in range(1, 5)]

    plain = make_server(FTR_MATCHES_PER_MIN="2")
    assert creations(plain) == [201, 201, 429, 429]
    proxied = make_server(FTR_MATCHES_PER_MIN="2", FTR_FORWARDED_ALLOW_IPS="127.0.0.1")
    assert creations(proxied) == [201, 201, 201, 201]

