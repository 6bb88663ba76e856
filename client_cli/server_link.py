"""The client's I/O: the server's HTTP API and one WebSocket connection.

- :func:`server_url`: the address, from ``--server``, else ``FTR_SERVER``,
  else ``http://localhost:8000``;
- :func:`create_match`, :func:`match_state`, :func:`match_results`,
  :func:`replay_record`: the HTTP API (server/README.md, "HTTP routes");
- :class:`Connection`: a WebSocket on ``/play`` that has said ``hello``
  (protocol :data:`protocol.messages.PROTOCOL_VERSION`) and been welcomed;
  frames are encoded and decoded by :mod:`protocol.codec`;
- :func:`backoff`: the reconnect delays (exponential, capped, with jitter).

Every failure the user should understand is a :class:`ClientError` with a
message that says what to do: :class:`Unreachable` (no server at that
address) and :class:`VersionMismatch` (the server sent ``error`` code
``version``).
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import httpx
import msgspec
import websockets

from protocol import messages as m
from protocol.codec import ProtocolError, decode_server, encode

DEFAULT_SERVER = "http://localhost:8000"
CLIENT_NAME = "forty-thieves-cli"


class ClientError(Exception):
    """A failure to show the user as it is (``str(error)`` says what happened and what to do)."""


class Unreachable(ClientError):
    """No server answers at the address; ``cause`` says what failed (``"ConnectionRefusedError: ..."``)."""

    def __init__(self, message: str, cause: str = "") -> None:
        super().__init__(message)
        self.cause = cause


class VersionMismatch(ClientError):
    """The server speaks another protocol version."""


class ServerRefused(ClientError):
    """The server answered an ``error`` (``code``) or an HTTP error."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def server_url(option: str | None = None) -> str:
    """The server's base URL: ``--server``, else ``$FTR_SERVER``, else :data:`DEFAULT_SERVER`."""
    url = (option or os.environ.get("FTR_SERVER") or DEFAULT_SERVER).strip().rstrip("/")
    if "://" not in url:
        url = "http://" + url
    return url


def server_option(server: str) -> str:
    """`` --server URL`` for a command friends type, unless ``server`` is :data:`DEFAULT_SERVER` (a friend's
    shell has no reason to hold the host's ``$FTR_SERVER``)."""
    if not server or server == DEFAULT_SERVER:
        return ""
    return f" --server {server}"


def join_link(server: str, code: str) -> str:
    """The page friends open to join match ``code`` in a browser: ``http://host:port/join/CODE``."""
    return f"{server.rstrip('/')}/join/{quote(code, safe='')}"


def public_server(created: dict[str, Any], server: str) -> str:
    """The address friends reach the server at: the base of the ``join_url`` of ``POST /matches``' answer
    (``FTR_PUBLIC_URL`` on the server, else the address this client used), else ``server``."""
    join_url = str(created.get("join_url") or "")
    suffix = f"/join/{created.get('code', '')}"
    return join_url[:-len(suffix)] if join_url.endswith(suffix) else server


def ws_url(server: str) -> str:
    """``http://host:port`` -> ``ws://host:port/play`` (``https`` -> ``wss``)."""
    parts = urlsplit(server)
    scheme = "wss" if parts.scheme in ("https", "wss") else "ws"
    return urlunsplit((scheme, parts.netloc, parts.path.rstrip("/") + "/play", "", ""))


def _unreachable(server: str, error: Exception) -> Unreachable:
    cause = f"{error.__class__.__name__}: {error}"
    return Unreachable(f"cannot reach the server at {server} ({cause}). "
                       "Is it running? Give its address with --server URL or FTR_SERVER.", cause)


async def _request(method: str, server: str, path: str, **kwargs: Any) -> httpx.Response:
    try:
        async with httpx.AsyncClient(timeout=10) as client:
            return await client.request(method, server + path, **kwargs)
    except httpx.HTTPError as error:
        raise _unreachable(server, error) from None


def _refusal(response: httpx.Response) -> ServerRefused:
    try:
        body = response.json()
        return ServerRefused(str(body.get("error", response.status_code)), str(body.get("message", response.text)))
    except ValueError:
        return ServerRefused(str(response.status_code), f"the server answered {response.status_code}: {response.text[:200]}")


async def get_json(server: str, path: str, key: str = "") -> dict[str, Any]:
    """``GET path`` of ``server`` as a JSON object (with a player ``key``: sent as ``Authorization``). Raises
    :class:`ServerRefused` with the server's code and message for any answer but 200, and :class:`ClientError`
    for a 200 whose body is no JSON object."""
    headers = {"Accept": "application/json"} | ({"Authorization": f"Bearer {key}"} if key else {})
    response = await _request("GET", server, path, headers=headers)
    if response.status_code != 200:
        raise _refusal(response)
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise ClientError(f"the server at {server} answered {path} with something else than a JSON object")
    return body


async def create_match(server: str, settings: dict[str, Any]) -> dict[str, Any]:
    """``POST /matches``: ``{"code", "host_token", "commitment", "state", "join_url"}``."""
    response = await _request("POST", server, "/matches", json=settings)
    if response.status_code != 201:
        raise _refusal(response)
    return dict(response.json())


async def replay_record(server: str, record: bytes) -> m.RecordReplay:
    """``POST /replays``: every position of the game record ``record`` (JSON), as the server replays it.

    Raises :class:`ServerRefused` for a record the server refuses (code ``malformed``: the message names the
    bad field), :class:`Unreachable` without a server, :class:`ClientError` for an answer that is not one."""
    response = await _request("POST", server, "/replays", content=record,
                              headers={"Content-Type": "application/json"})
    if response.status_code != 200:
        raise _refusal(response)
    try:
        return msgspec.json.decode(response.content, type=m.RecordReplay)
    except msgspec.DecodeError as error:  # ValidationError included
        raise ClientError(f"the server at {server} answered the replay with something else: {error}") from None


async def match_state(server: str, code: str) -> dict[str, Any]:
    """``GET /matches/{code}``: the public state (raises :class:`ServerRefused` ``no_match``)."""
    response = await _request("GET", server, f"/matches/{code}")
    if response.status_code != 200:
        raise _refusal(response)
    return dict(response.json())


async def match_results(server: str, code: str) -> dict[str, Any] | None:
    """``GET /matches/{code}/results``; ``None`` while the match is not finished."""
    response = await _request("GET", server, f"/matches/{code}/results")
    if response.status_code == 409:
        return None
    if response.status_code != 200:
        raise _refusal(response)
    return dict(response.json())


class Connection:
    """One WebSocket connection to ``/play`` that has been welcomed (see :meth:`open`)."""

    def __init__(self, ws: Any, welcome: m.Welcome) -> None:
        self.ws = ws
        self.welcome = welcome

    @classmethod
    async def open(cls, server: str, timeout: float = 10) -> Connection:
        """Connect, send ``hello`` and wait for ``welcome``.

        Raises :class:`Unreachable` when nothing answers, and
        :class:`VersionMismatch` when the server refuses our version.
        """
        try:
            ws = await websockets.connect(ws_url(server), compression=None, max_size=2**20, open_timeout=timeout,
                                          ping_interval=10, ping_timeout=20)
        except (OSError, TimeoutError, websockets.InvalidHandshake, websockets.InvalidURI) as error:
            raise _unreachable(server, error) from None
        connection = cls(ws, m.Welcome(0, "", 0, 0))
        try:
            await connection.send(m.Hello(m.PROTOCOL_VERSION, CLIENT_NAME))
            reply = await connection.recv()
        except websockets.ConnectionClosed as error:
            raise _unreachable(server, error) from None
        if isinstance(reply, m.Error) and reply.code == "version":
            await connection.close()
            raise VersionMismatch(f"protocol versions do not match: {reply.message} "
                                  f"(this client speaks version {m.PROTOCOL_VERSION})")
        if not isinstance(reply, m.Welcome):
            await connection.close()
            raise ServerRefused(getattr(reply, "code", "malformed"), f"unexpected answer to hello: {reply!r}")
        connection.welcome = reply
        return connection

    async def send(self, message: m.ClientMessage) -> None:
        """Send one message (raises ``websockets.ConnectionClosed`` when the connection is gone)."""
        await self.ws.send(encode(message))

    async def recv(self) -> m.ServerMessage:
        """The next message; frames that do not decode are skipped (a newer server's extra types)."""
        while True:
            frame = await self.ws.recv()
            if isinstance(frame, str):
                continue
            try:
                return decode_server(frame)
            except ProtocolError:
                continue

    async def close(self) -> None:
        try:
            await self.ws.close()
        except Exception:  # noqa: BLE001, S110 - closing a broken socket may fail in many ways; it is closed either way
            pass


def backoff(base: float = 0.25, cap: float = 5.0) -> Iterator[float]:
    """Reconnect delays: ``base * 2**n`` capped at ``cap``, each scaled by a jitter in [0.5, 1.5)."""
    attempt = 0
    while True:
        yield min(cap, base * 2**attempt) * random.uniform(0.5, 1.5)
        attempt += 1
