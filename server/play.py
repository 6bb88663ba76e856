"""The players' WebSocket endpoint: a short loop of receive, decode, handle, send.

One writer task per socket drains the session's bounded queue; the receive
loop always runs (Starlette notices a disconnect only on receive). No rules,
Redis keys or redaction here: those live in :mod:`server.matches`,
:mod:`server.store` and :mod:`server.engine.view`.
"""

from __future__ import annotations

import asyncio
import logging

from aiolimiter import AsyncLimiter
from starlette.websockets import WebSocket, WebSocketDisconnect

from protocol import messages as m
from protocol.codec import ProtocolError, decode_client, encode
from protocol.codes import canonical_code

from .matches import MatchService, ServiceError, Session

log = logging.getLogger("forty_thieves.play")

MAX_STRIKES = 20
"""Rate-limited frames within :data:`STRIKE_WINDOW_S` before the connection is closed (code 1008)."""
STRIKE_WINDOW_S = 10.0


async def _writer(websocket: WebSocket, session: Session) -> None:
    """The one writer of a socket: drains the session's queue; ``None`` closes (code, reason)."""
    try:
        while True:
            frame = await session.queue.get()
            if frame is None:
                code, reason = session.close_with
                await websocket.close(code=code, reason=reason)
                return
            await websocket.send_bytes(frame)
    except (WebSocketDisconnect, RuntimeError, OSError):
        return  # the peer went away: nothing left to send to


async def player_endpoint(websocket: WebSocket) -> None:
    """``/play``: one player connection (see :mod:`protocol.messages` for the frames)."""
    service: MatchService = websocket.app.state.service
    settings = service.settings
    await websocket.accept()
    session = Session()
    writer = asyncio.create_task(_writer(websocket, session))
    limiter = AsyncLimiter(settings.burst, settings.burst / settings.rate)
    loop = asyncio.get_running_loop()
    # The hello's deadline runs from the connection's start: frames other than hello do not move it.
    hello_by = loop.time() + settings.hello_timeout_s
    greeted = False
    strikes: list[float] = []
    metrics = websocket.app.state.metrics
    metrics.connections.inc()
    try:
        while True:
            if greeted:
                message = await websocket.receive()
            else:
                try:
                    async with asyncio.timeout_at(hello_by):
                        message = await websocket.receive()
                except TimeoutError:
                    log.info("closed a connection that sent no hello within %g s", settings.hello_timeout_s)
                    session.push(encode(m.Error("hello_first", f"no hello within {settings.hello_timeout_s:g} s")))
                    session.close(1008, "no hello")
                    break
            if message["type"] == "websocket.disconnect":
                break
            if not limiter.has_capacity():
                now = loop.time()
                strikes = [t for t in strikes if now - t < STRIKE_WINDOW_S] + [now]
                metrics.rejected.labels("rate_limited").inc()
                session.push(encode(m.Error("rate_limited", f"more than {settings.rate:g} messages per second: slow down")))
                if len(strikes) >= MAX_STRIKES:
                    session.close(1008, "flooding: too many messages over the rate limit")
                    break
                continue
            await limiter.acquire()
            data = message.get("bytes")
            if data is None:
                session.push(encode(m.Error("malformed", "frames are binary msgpack, not text")))
                continue
            if len(data) > settings.max_frame_bytes:
                session.push(encode(m.Error("frame_too_large", f"frame of {len(data)} bytes; at most {settings.max_frame_bytes}")))
                continue
            try:
                request = decode_client(data, settings.max_frame_bytes)
            except ProtocolError as error:
                metrics.rejected.labels(error.code).inc()
                session.push(encode(m.Error(error.code, str(error))))
                continue
            if not greeted:
                if not isinstance(request, m.Hello):
                    session.push(encode(m.Error("hello_first", "the first frame must be hello with the protocol version")))
                    continue
                if request.version != m.PROTOCOL_VERSION:
                    session.push(encode(m.Error("version", f"this server speaks protocol version {m.PROTOCOL_VERSION}, "
                                                           f"the client {request.version}: update the client")))
                    session.close(4001, "protocol version mismatch")
                    break
                greeted = True
                session.push(encode(m.Welcome(m.PROTOCOL_VERSION, "forty-thieves-race", settings.max_frame_bytes,
                                              settings.rate, settings.burst)))
                continue
            # The error answering a numbered frame names its seq: the client matches it to its request.
            answers = request.seq if isinstance(request, (m.Play, m.Resign, m.Hint)) else None
            try:
                await _handle(service, session, request)
            except ServiceError as error:
                metrics.rejected.labels(error.code).inc()
                session.push(encode(m.Error(error.code, error.message, answers)))
            except Exception:  # a server bug or a Redis failure must not take the connection or the process down
                log.exception("handling a %s frame failed", type(request).__name__)
                session.push(encode(m.Error("internal", "the server failed to handle that frame", answers)))
    except WebSocketDisconnect:
        pass
    finally:
        metrics.connections.dec()
        try:
            await service.disconnected(session)
        except Exception:  # Redis unreachable: the flag stays stale, nothing else depends on it
            log.warning("could not mark %s/%s disconnected", session.code, session.name, exc_info=True)
        if not writer.done():
            session.close(1000, "bye")
            try:
                await asyncio.wait_for(writer, timeout=1)
            except (TimeoutError, asyncio.CancelledError):
                writer.cancel()


async def _handle(service: MatchService, session: Session, request: m.ClientMessage) -> None:
    metrics = service.metrics
    match request:
        case m.Play(seq=seq, command=command):
            metrics.commands.inc()
            with metrics.command_seconds.time():
                await service.play(session, seq, command)
        case m.Join(match=code, name=name):
            if session.code:
                raise ServiceError("malformed", "this connection has joined a match already")
            await service.join(session, canonical_code(code), name)
        case m.Resume(match=code, token=token):
            if session.code and not (session.next_round and canonical_code(code) == session.next_round):
                raise ServiceError("malformed", "this connection has joined a match already")
            await service.resume(session, canonical_code(code), token)
        case m.Ready():
            await service.ready(session)
        case m.Start(host_token=token):
            await service.host_start(session, token)
        case m.Resign(seq=seq):
            await service.resign(session, seq)
        case m.Hint(seq=seq):
            await service.hint(session, seq)
        case m.Rematch():
            await service.rounds.rematch(session)
        case m.Ping(nonce=nonce):
            session.push(encode(m.Pong(nonce, service.clock.now_ms())))
        case m.Hello():
            raise ServiceError("malformed", "hello was already received")
