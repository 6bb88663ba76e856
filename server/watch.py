"""Spectators' streams of a match's events (issue 7 items 1-3).

``GET /matches/{code}/events``: Server-Sent Events (sse-starlette), and
``/matches/{code}/watch``: a WebSocket carrying the same events as msgpack
(:func:`watch_endpoint`). One event per spectator event of the match
(lobby, countdown, progress, finished, results; ``board`` too when the host
opened the boards), ``id`` = its Redis Stream id, ``event`` = its type,
``data`` = the message as JSON. A watcher that connects late first gets
what it missed (read from the stream in pages); with ``Last-Event-ID`` (or
``?from=ID``) it resumes after that id with nothing lost or repeated. While
a match runs the events carry progress only (moves, foundation cards,
status, time), never a board or a move, unless the boards are open (then a
player's redacted view, exactly what that player sees). A watcher that
falls ``Settings.watcher_queue`` events behind is dropped (``event:
dropped``) and can resume from its last id; it never slows the players.
Each event is encoded once per process, and a connection sends what
gathered at most every :data:`BATCH_S` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import msgspec
from sse_starlette.sse import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.websockets import WebSocket, WebSocketDisconnect

from protocol import messages as m
from protocol.codec import encode

from .matches import MatchService, ServiceError

_STREAM_ID = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")

BATCH_S = 0.25
"""A spectator's connection sends what gathered at most this often (seconds): one write for several
events instead of one each, so many spectators cost the players' event loop little (a person watching
cannot tell a quarter of a second). Measured (tests/integration/test_many_watchers.py, 49 spectators on the
players' process): 0.05 s -> 0.25 s cut the server CPU per command from 4,400 to 2,850 us (1,350 without
spectators); players' median round trip 2.10 vs 1.58 ms (1.70 and 1.29 without)."""


def _order(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq)


_ENCODED_MAX = 4096
_encoded: OrderedDict[tuple[str, str, str], bytes] = OrderedDict()


def _encoded_once(kind: str, code: str, entry_id: str, build: Callable[[], bytes]) -> bytes:
    """The bytes of one event for one kind of watcher, built once and fanned out to every watcher
    (DESIGN.md: outgoing events are encoded once). A small per-process LRU: watchers of one match
    read the same recent events at about the same time."""
    key = (kind, code, entry_id)
    data = _encoded.get(key)
    if data is None:
        data = _encoded[key] = build()
        if len(_encoded) > _ENCODED_MAX:
            _encoded.popitem(last=False)
    return data


_SHUTDOWN: Any = object()
"""Put in a spectator's queue at server shutdown: its stream ends."""


def _sse(code: str, entry_id: str, frame: bytes) -> bytes:
    """One Server-Sent Event: ``id`` = stream id, ``event`` = the message type, ``data`` = the message as JSON."""
    def build() -> bytes:
        message = msgspec.msgpack.decode(frame)
        return ServerSentEvent(data=msgspec.json.encode(message).decode(), event=str(message.get("type", "")),
                               id=entry_id).encode()

    return _encoded_once("sse", code, entry_id, build)


async def match_events(request: Request) -> Response:
    """``GET /matches/{code}/events``: the match's public events as Server-Sent Events."""
    service: MatchService = request.app.state.service
    code = request.path_params["code"][:32]
    if await service.store.meta(code) is None:
        return JSONResponse({"error": "no_match", "message": "no match with that code"}, status_code=404)
    after = request.headers.get("last-event-id") or request.query_params.get("from") or "0-0"
    if not _STREAM_ID.fullmatch(after):
        return JSONResponse({"error": "malformed", "message": "Last-Event-ID is a stream id such as 1700000000000-0"},
                            status_code=400)
    try:
        watcher = await service.watch(code)  # first: live events queue up while the missed ones are read
    except ServiceError as error:
        return JSONResponse({"error": error.code, "message": error.message}, status_code=503,
                            headers={"Retry-After": "30"})

    # At server shutdown sse-starlette sets ``stop`` and waits a moment: the stream then ends by itself and its
    # response is completed. Cancelled instead, uvicorn logged "ASGI callable returned without completing
    # response" at every Ctrl-C with a spectator connected.
    stop = anyio.Event()

    async def wake_at_stop() -> None:
        await stop.wait()
        with contextlib.suppress(asyncio.QueueFull):  # a full queue is being drained: the grace period ends it
            watcher.queue.put_nowait(_SHUTDOWN)

    async def events() -> AsyncIterator[ServerSentEvent | bytes]:
        # Events waiting together go out in one write (one send through the ASGI stack per batch).
        sent = _order(after)
        waker = asyncio.ensure_future(wake_at_stop())
        try:
            async for missed in service.store.spectator_events_after(code, after, page=200):
                sent = _order(missed[-1][0])
                yield b"".join(_sse(code, entry_id, frame) for entry_id, frame in missed)
            while True:
                items = [await watcher.queue.get()]
                while not watcher.queue.empty():
                    items.append(watcher.queue.get_nowait())
                chunk = []
                for item in items:
                    if item is _SHUTDOWN:
                        if chunk:
                            yield b"".join(chunk)
                        return
                    if item is None:
                        if chunk:
                            yield b"".join(chunk)
                        yield ServerSentEvent(data='{"reason": "too slow: resume with Last-Event-ID"}',
                                              event="dropped")
                        return
                    entry_id, frame = item
                    if _order(entry_id) <= sent:
                        continue  # already sent in the catch-up
                    sent = _order(entry_id)
                    chunk.append(_sse(code, entry_id, frame))
                if chunk:
                    yield b"".join(chunk)
                await asyncio.sleep(BATCH_S)
        finally:
            waker.cancel()
            service.unwatch(code, watcher)

    return EventSourceResponse(events(), ping=15, shutdown_event=stop, shutdown_grace_period=1.0)


def _frame(code: str, entry_id: str, frame: bytes) -> bytes:
    """``{"id": stream id, "event": <the event's own msgpack map>}``: the event bytes are reused as they are."""
    return _encoded_once("ws", code, entry_id,
                         lambda: msgspec.msgpack.encode({"id": entry_id, "event": msgspec.Raw(frame)}))


async def watch_endpoint(websocket: WebSocket) -> None:
    """``/matches/{code}/watch[?from=ID]``: the same public events as msgpack frames ``{"id", "event"}``.

    A spectator sends nothing; a late one first gets what it missed (after
    ``from``, exclusive); one that falls behind gets ``error`` ``too_slow``
    and is closed (code 4002): it can resume with ``from`` = its last id.
    """
    service: MatchService = websocket.app.state.service
    await websocket.accept()
    code = websocket.path_params["code"][:32]
    after = websocket.query_params.get("from") or "0-0"
    if await service.store.meta(code) is None or not _STREAM_ID.fullmatch(after):
        problem = ("no_match", "no match with that code") if _STREAM_ID.fullmatch(after) else \
            ("malformed", "from is a stream id such as 1700000000000-0")
        await websocket.send_bytes(encode(m.Error(*problem)))
        await websocket.close(code=4004 if problem[0] == "no_match" else 4000, reason=problem[1])
        return
    try:
        watcher = await service.watch(code)
    except ServiceError as error:
        await websocket.send_bytes(encode(m.Error(error.code, error.message)))
        await websocket.close(code=1013, reason="too many spectators: try again later")
        return

    async def until_disconnect() -> None:  # Starlette notices a disconnect only on receive
        while (await websocket.receive())["type"] != "websocket.disconnect":
            pass

    gone = asyncio.create_task(until_disconnect())
    sender = asyncio.current_task()
    assert sender is not None

    def left(_: object) -> None:  # the spectator left: stop sending (no asyncio.wait per event)
        sender.cancel()

    gone.add_done_callback(left)
    try:
        sent = _order(after)
        async for missed in service.store.spectator_events_after(code, after):
            for entry_id, frame in missed:
                sent = _order(entry_id)
                await websocket.send_bytes(_frame(code, entry_id, frame))
        while True:
            item = await watcher.queue.get()
            if item is None:
                await websocket.send_bytes(encode(m.Error("too_slow", "you fell behind: resume with ?from=LAST_ID")))
                await websocket.close(code=4002, reason="too slow")
                return
            entry_id, frame = item
            if _order(entry_id) > sent:
                sent = _order(entry_id)
                await websocket.send_bytes(_frame(code, entry_id, frame))
            if watcher.queue.empty():
                await asyncio.sleep(BATCH_S)
    except asyncio.CancelledError:
        if not gone.done():
            raise  # cancelled from outside (shutdown), not by the spectator leaving
        sender.uncancel()
        return
    except (WebSocketDisconnect, RuntimeError):
        return
    finally:
        gone.remove_done_callback(left)
        gone.cancel()
        service.unwatch(code, watcher)
