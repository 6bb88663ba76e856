"""Spectators' streams of a match's events.

``GET /matches/{code}/events``: Server-Sent Events (sse-starlette), and ``/matches/{code}/watch``: a WebSocket
carrying the same events as msgpack (:func:`watch_endpoint`). One event per spectator event of the match (lobby,
countdown, progress, finished, results; ``board`` too when the host opened the boards): ``id`` its Redis Stream
id, ``event`` its type, ``data`` the message as JSON. A late watcher first gets what it missed; with
``Last-Event-ID`` (or ``?from=ID``) it resumes after that id with nothing lost or repeated. While a match runs
the events carry progress only, never a board or a move, unless the boards are open (then a player's redacted
view). A watcher that falls ``Settings.watcher_queue`` events behind is dropped (``event: dropped``) and can
resume from its last id; it never slows the players. When Redis loses the match, the stream sends ``event:
error`` ``{"type": "error", "code": "no_match", "message"}`` and ends.

Catch-up then live, the bounded queue and the drop are the hub's (:class:`server.hub.Subscription`). A
spectator's slot (``FTR_MAX_WATCHERS``) is its hub subscription, released by the code that owns the connection
when it ends, however it ends: a cancellation can be lost inside the Redis client.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import msgspec
from sse_starlette.sse import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from protocol import messages as m
from protocol.codec import encode

from .core.errors import ServiceError
from .core.player import MATCH_GONE, MatchGone
from .httpjson import STREAM_ID_HELP, valid_stream_id
from .hub import Ended, Subscription, TooSlow
from .logs import in_match, new_connection
from .matches import MatchService

log = logging.getLogger("forty_thieves.watch")

BATCH_S = 0.25
"""A spectator's connection sends what gathered at most this often (seconds): one write for several
events instead of one each, so many spectators cost the players' event loop little (a person watching
cannot tell a quarter of a second)."""


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


def _sse(code: str, entry_id: str, frame: bytes) -> bytes:
    """One Server-Sent Event: ``id`` = stream id, ``event`` = the message type, ``data`` = the message as JSON."""
    def build() -> bytes:
        message = msgspec.msgpack.decode(frame)
        return ServerSentEvent(data=msgspec.json.encode(message).decode(), event=str(message.get("type", "")),
                               id=entry_id).encode()

    return _encoded_once("sse", code, entry_id, build)


class SpectatorStream(EventSourceResponse):
    """An SSE response that holds the spectator's hub ``subscription`` while it runs and closes it once it ends,
    however it ends (the client gone, an error, or the body never started: a generator that never ran never
    runs its ``finally``)."""

    def __init__(self, content: AsyncIterator[Any], subscription: Subscription, **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self._subscription = subscription

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with self._subscription:
            await super().__call__(scope, receive, send)


def _gone_sse(error: ServiceError) -> ServerSentEvent:
    """``event: error`` with ``error`` as the ``error`` frame's JSON: the stream ends after it."""
    return ServerSentEvent(data=msgspec.json.encode(m.Error(error.code, error.message)).decode(), event="error")


async def _gone_event() -> AsyncIterator[ServerSentEvent]:
    yield _gone_sse(MatchGone())


def _unknown(service: MatchService, code: str) -> str:
    """Why a spectator of ``code``, which Redis has no meta of, is refused: the server lost it (this process found
    so), else there is no such match."""
    return MATCH_GONE if service.known_lost(code) else "no match with that code"


def _malformed_id() -> JSONResponse:
    return JSONResponse({"error": "malformed", "message": f"Last-Event-ID (or from) is {STREAM_ID_HELP}"},
                        status_code=400)


async def match_events(request: Request) -> Response:
    """``GET /matches/{code}/events``: the match's public events as Server-Sent Events."""
    service: MatchService = request.app.state.service
    code = request.path_params["code"][:32]
    new_connection()
    in_match(code)
    after = request.headers.get("last-event-id") or request.query_params.get("from") or "0-0"
    if not valid_stream_id(after):
        return _malformed_id()
    if await service.store.matches.meta(code) is None:
        if service.known_lost(code):  # the stream's own end, as its spectators got it: a page stops reconnecting
            return EventSourceResponse(_gone_event())
        return JSONResponse({"error": "no_match", "message": "no match with that code"}, status_code=404)
    try:
        subscription = await service.watch(code)  # first: live events queue up while the missed ones are read
    except ServiceError as error:
        return JSONResponse({"error": error.code, "message": error.message}, status_code=503,
                            headers={"Retry-After": "30"})

    # At server shutdown sse-starlette sets ``stop`` and waits a moment: the stream then ends by itself and its
    # response is completed. Cancelled instead, uvicorn logged "ASGI callable returned without completing
    # response" at every Ctrl-C with a spectator connected.
    stop = anyio.Event()

    async def end_at_stop() -> None:
        await stop.wait()
        subscription.close()

    async def events() -> AsyncIterator[ServerSentEvent | bytes]:
        # Events waiting together go out in one write (one send through the ASGI stack per batch).
        ender = asyncio.ensure_future(end_at_stop())
        try:
            async for batch in subscription.batches(after, page=200, pace_s=BATCH_S):
                yield b"".join(_sse(code, entry_id, frame) for entry_id, frame in batch)
        except TooSlow:
            yield ServerSentEvent(data='{"reason": "too slow: resume with Last-Event-ID"}', event="dropped")
        except Ended as ended:  # the match is gone: the refusal, then the stream ends (a page stops there)
            yield _gone_sse(ended.reason)
        finally:
            ender.cancel()

    return SpectatorStream(events(), subscription, ping=15, shutdown_event=stop, shutdown_grace_period=1.0)


def _frame(code: str, entry_id: str, frame: bytes) -> bytes:
    """``{"id": stream id, "event": <the event's own msgpack map>}``: the event bytes are reused as they are."""
    return _encoded_once("ws", code, entry_id,
                         lambda: msgspec.msgpack.encode({"id": entry_id, "event": msgspec.Raw(frame)}))


WATCH_CLOSE_CODES = {"malformed": 1008, "no_match": 4004, "too_many_watchers": 1013, "too_slow": 4002,
                     "internal": 1011}
"""Close code of the spectators' WebSocket after each ``error`` it sends (README "Spectating")."""


async def _refuse(websocket: WebSocket, error: m.Error) -> None:
    """Send ``error``, then close with its code's close code (:data:`WATCH_CLOSE_CODES`)."""
    await websocket.send_bytes(encode(error))
    await websocket.close(code=WATCH_CLOSE_CODES[error.code], reason=error.message[:120])


async def _until_disconnect(websocket: WebSocket) -> None:
    """Receive until the spectator leaves (a spectator sends nothing; Starlette notices a disconnect only on
    receive)."""
    while (await websocket.receive())["type"] != "websocket.disconnect":
        pass


async def _send_events(websocket: WebSocket, code: str, after: str, subscription: Subscription) -> None:
    """Send what the spectator missed after ``after``, then the live events, until the subscription is closed or
    dropped (then ``too_slow``, close 4002) or the socket fails."""
    try:
        try:
            async for batch in subscription.batches(after, pace_s=BATCH_S):
                for entry_id, frame in batch:
                    await websocket.send_bytes(_frame(code, entry_id, frame))
        except TooSlow:
            await _refuse(websocket, m.Error("too_slow", "you fell behind: resume with ?from=LAST_ID"))
        except Ended as ended:  # the match is gone: refused as an unknown match is (close 4004)
            await _refuse(websocket, m.Error(ended.reason.code, ended.reason.message))
    except (WebSocketDisconnect, RuntimeError, OSError):
        return  # the spectator went away


async def watch_endpoint(websocket: WebSocket) -> None:
    """``/matches/{code}/watch[?from=ID]``: the same public events as msgpack frames ``{"id", "event"}``.

    A spectator sends nothing; a late one first gets what it missed (after
    ``from``, exclusive); one that falls behind gets ``error`` ``too_slow``
    and is closed (code 4002): it can resume with ``from`` = its last id.
    A ``from`` that is no stream id gets ``error`` ``malformed`` and close
    1008, an unknown match ``no_match`` and close 4004, a full match
    ``too_many_watchers`` and close 1013. A match that Redis loses while it is
    watched (:meth:`MatchService.match_lost <server.matches.MatchService.match_lost>`)
    ends as an unknown one is refused: ``no_match`` saying the server lost it,
    close 4004.

    The sending runs in a task of its own while this handler receives: when
    the spectator leaves, the handler closes the subscription (which
    releases the slot and wakes the sender) without waiting for the sender
    to see its cancellation.
    """
    service: MatchService = websocket.app.state.service
    await websocket.accept()
    code = websocket.path_params["code"][:32]
    new_connection()
    in_match(code)
    after = websocket.query_params.get("from") or "0-0"
    if not valid_stream_id(after):
        return await _refuse(websocket, m.Error("malformed", f"from is {STREAM_ID_HELP}"))
    if await service.store.matches.meta(code) is None:
        return await _refuse(websocket, m.Error("no_match", _unknown(service, code)))
    try:
        subscription = await service.watch(code)
    except ServiceError as error:
        return await _refuse(websocket, m.Error(error.code, error.message))
    async with subscription:  # released here when the spectator leaves, whatever the sender is doing
        sender = asyncio.create_task(_send_events(websocket, code, after, subscription))
        # A sender that outlives the handler (its cancellation lost inside the Redis client) may still fail:
        # its exception is taken here so that asyncio does not log it as never retrieved.
        sender.add_done_callback(lambda task: task.cancelled() or task.exception())
        gone = asyncio.create_task(_until_disconnect(websocket))
        try:
            await asyncio.wait((sender, gone), return_when=asyncio.FIRST_COMPLETED)
            if sender.done() and not sender.cancelled() and sender.exception() is not None:  # Redis failed
                log.warning("streaming match %s to a spectator failed", code, exc_info=sender.exception())
                await websocket.close(code=1011, reason="the server could not read the match's events")
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass
        finally:
            gone.cancel()
            sender.cancel()
