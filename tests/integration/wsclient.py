"""A minimal real WebSocket test client speaking the race protocol (``websockets``)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import websockets

from protocol import messages as m
from protocol.codec import decode_server, encode
from server.names import name_key

PLAYER_KEYS: dict[str, str] = {}
"""The player key of each name a test's clients claimed (by its name key): a later join of that name, by any
client of the test, sends it. Emptied before each test (``fresh_names`` in the conftest)."""


class Player:
    """One player's connection; frames are decoded into protocol messages."""

    def __init__(self, ws_url: str) -> None:
        self.ws_url = ws_url
        self.ws: Any = None
        self.inbox: list[Any] = []
        self.seq = 0
        """The last play/resign seq the server accepted: the next one carries this plus 1."""
        self.token = ""
        self.code = ""
        self.frames: list[bytes | str] = []
        """Every raw frame received, in order (for tests that compare or search the bytes)."""

    async def connect(self) -> m.Welcome:
        # No limit on the frames received and not yet read: with websockets' default (16) a player who never
        # reads its opponent's progress stops reading the socket, and its close handshake then waits out the
        # 10 s close timeout, because the server's close frame sits behind the unread ones.
        self.ws = await websockets.connect(self.ws_url, compression=None, max_size=2**20, max_queue=None)
        await self.send(m.Hello(m.PROTOCOL_VERSION, "tests"))
        return await self.expect(m.Welcome)

    async def send(self, message: Any) -> None:
        await self.ws.send(encode(message))

    async def send_raw(self, frame: bytes | str) -> None:
        await self.ws.send(frame)

    async def recv(self, timeout: float = 10) -> Any:
        frame = await asyncio.wait_for(self.ws.recv(), timeout)
        self.frames.append(frame)
        return decode_server(frame)

    async def expect(self, kind: type, timeout: float = 10) -> Any:
        """Receive until a message of ``kind`` (or an Error, returned at once) arrives."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            left = deadline - asyncio.get_running_loop().time()
            message = await self.recv(max(0.01, left))
            self.inbox.append(message)
            if isinstance(message, kind) or (isinstance(message, m.Error) and kind is not m.Error):
                return message

    async def join(self, code: str, name: str, player_key: str | None = None) -> m.Joined:
        """Join as ``name`` with ``player_key`` (default: the one a client of this test got for the name)."""
        self.code = code
        await self.send(m.Join(code, name, PLAYER_KEYS.get(name_key(name), "") if player_key is None else player_key))
        joined = await self.expect(m.Joined)
        assert isinstance(joined, m.Joined), joined
        self.token = joined.token
        if joined.player_key:
            PLAYER_KEYS[name_key(name)] = joined.player_key
        return joined

    async def resume(self, code: str) -> m.Joined:
        await self.send(m.Resume(code, self.token))
        joined = await self.expect(m.Joined)
        assert isinstance(joined, m.Joined), joined
        self.token = joined.token
        return joined

    async def start(self, code: str, token: str) -> m.Started:
        """Resume match ``code`` (a one-player match the server made for this client) with ``token``, say
        ready, and wait for its start; the seq counts from the start's."""
        self.token = token
        await self.resume(code)
        await self.send(m.Ready())
        started = await self.expect(m.Started)
        assert isinstance(started, m.Started), started
        self.seq = started.seq
        return started

    async def play(self, command: str) -> Any:
        """Send ``command`` as the next ``play`` (the last accepted seq plus 1: a refused one uses up no number)."""
        await self.send(m.Play(self.seq + 1, command))
        return self._accepted(await self.expect_reply(self.seq + 1))

    def _accepted(self, reply: Any) -> Any:
        if isinstance(reply, m.PositionReply):
            self.seq = max(self.seq, reply.seq)
        return reply

    async def expect_reply(self, seq: int) -> Any:
        while True:
            message = await self.expect((m.PositionReply, m.Rejected))  # type: ignore[arg-type]
            if isinstance(message, m.Error) or message.seq == seq:
                return message

    async def resign(self) -> Any:
        await self.send(m.Resign(self.seq + 1))
        return self._accepted(await self.expect_reply(self.seq + 1))

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    async def ping(self, nonce: int, timeout: float = 10) -> list[Any]:
        """Send ``ping`` and receive until its ``pong``: the frames received meanwhile, the pong last."""
        await self.send(m.Ping(nonce))
        received = []
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            message = await self.recv(max(0.01, deadline - asyncio.get_running_loop().time()))
            self.inbox.append(message)
            received.append(message)
            if isinstance(message, m.Pong) and message.nonce == nonce:
                return received

    async def drain(self, quiet: float = 0.3, timeout: float = 10) -> list[Any]:
        """Receive until no frame came for ``quiet`` seconds (or the connection closed)."""
        received = []
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            try:
                message = await self.recv(quiet)
            except (TimeoutError, websockets.ConnectionClosed):
                break
            self.inbox.append(message)
            received.append(message)
        return received

    async def wait_closed(self, timeout: float = 10) -> tuple[int | None, str | None]:
        """Receive (and keep) frames until the server closes the connection: its close code and reason."""
        deadline = asyncio.get_running_loop().time() + timeout
        try:
            while True:
                self.inbox.append(await self.recv(max(0.01, deadline - asyncio.get_running_loop().time())))
        except websockets.ConnectionClosed:
            pass
        return self.ws.close_code, self.ws.close_reason


def public_state(base_url: str, code: str) -> dict[str, Any]:
    """``GET /matches/{code}`` (must answer 200)."""
    response = httpx.get(f"{base_url}/matches/{code}", timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def create_match(base_url: str, **settings: Any) -> dict[str, Any]:
    response = httpx.post(base_url + "/matches", json=settings, timeout=10)
    assert response.status_code == 201, response.text
    return response.json()


async def resigned_race(base_url: str, ws_url: str, names: tuple[str, ...], **settings: Any) -> m.Results:
    """A race of ``names`` on a new match with ``settings`` (``players`` defaults to their number): each
    joins (with the key this test's clients hold for the name), is ready and resigns at once; the results."""
    created = create_match(base_url, **{"players": len(names), **settings})
    players = [Player(ws_url) for _ in names]
    try:
        for player, name in zip(players, names):
            await player.connect()
            await player.join(created["code"], name)
        for player in players:
            await player.send(m.Ready())
        for player in players:
            await player.expect(m.Started)
        for player in players:
            await player.resign()
        results = await players[0].expect(m.Results)
    finally:
        for player in players:
            await player.close()
    assert isinstance(results, m.Results), results
    return results


async def resigned_daily_attempt(base_url: str, ws_url: str, name: str, key: str = "",
                                 variant: str = "relaxed") -> m.Results:
    """``name`` (with its player key, once it has one) plays today's ``variant`` daily over the protocol: one
    draw, then resigns; the results its player got."""
    body = {"name": name, "player_key": key} if key else {"name": name}
    answer = httpx.post(f"{base_url}/daily/{variant}/attempt", json=body, timeout=30)
    assert answer.status_code == 200, answer.text
    player = Player(ws_url)
    try:
        await player.connect()
        player.token = answer.json()["player_token"]
        await player.resume(answer.json()["match"])  # a daily attempt is dealt as it is resumed
        # A start the resume read past (the client keeps every message it read) is not waited for again.
        started = next((x for x in player.inbox if isinstance(x, m.Started)), None) or await player.expect(m.Started)
        assert isinstance(started, m.Started), started
        player.seq = started.seq
        await player.play("s")
        await player.resign()
        results = await player.expect(m.Results)
    finally:
        await player.close()
    assert isinstance(results, m.Results), results
    return results
