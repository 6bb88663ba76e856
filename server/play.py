"""The players' WebSocket endpoint: a short loop around the connection's protocol state.

:class:`protocol.connection.PlayerConnection` decides what a frame means
(hello first, the version, the frame size, decoding, rate-limit strikes);
this adapter receives, asks the rate limiter, carries out the actions it
gets back (send, close, call the part of the match service that does the
work: :attr:`~server.matches.MatchService.lobby`, ``playing``, ``rounds``)
and awaits. One writer task per socket drains the session's bounded queue;
the receive loop always runs (Starlette notices a disconnect only on
receive). No rules, Redis keys or redaction here: those live in
:mod:`server.match`, :mod:`server.store` and :mod:`server.engine.view`.
"""

from __future__ import annotations

import asyncio
import logging
from time import perf_counter

from aiolimiter import AsyncLimiter
from starlette.types import Message
from starlette.websockets import WebSocket, WebSocketDisconnect

from protocol import messages as m
from protocol.codec import encode
from protocol.codes import canonical_code
from protocol.connection import Action, Close, Dispatch, PlayerConnection, Send, answers

from .core.errors import ServiceError
from .core.player import MATCH_GONE_CLOSE, MatchGone
from .logs import in_match, new_connection
from .match.session import Session
from .matches import MatchService

log = logging.getLogger("forty_thieves.play")


_GONE = (WebSocketDisconnect, RuntimeError, OSError)
"""What Starlette's and uvicorn's send raise once the peer went away (uvicorn's ClientDisconnected is an OSError)."""


async def _writer(websocket: WebSocket, session: Session) -> None:
    """The one writer of a socket: drains the session's queue; ``None`` closes (code, reason). While it waits
    on an empty queue, a pushed frame is sent at once by the pusher (:class:`~server.match.session.Outbox`)."""
    session.bind_send(websocket.send_bytes, _GONE)
    try:
        while True:
            frame = await session.next_frame()
            if frame is None:
                code, reason = session.close_with
                await websocket.close(code=code, reason=reason)
                return
            if isinstance(frame, bytes):
                await websocket.send_bytes(frame)
            else:
                await frame  # a send a push began, waiting for the transport
    except _GONE:
        return  # the peer went away: nothing left to send to


async def player_endpoint(websocket: WebSocket) -> None:
    """``/play``: one player connection (see :mod:`protocol.messages` for the frames)."""
    service: MatchService = websocket.app.state.service
    settings = service.settings
    new_connection()  # its log lines carry this connection's id, and its match code once it has one
    await websocket.accept()
    session = Session(address=websocket.client.host if websocket.client else "?")
    writer = asyncio.create_task(_writer(websocket, session))
    limiter = AsyncLimiter(settings.burst, settings.burst / settings.rate)
    loop = asyncio.get_running_loop()
    connection = PlayerConnection(loop.time(), settings.max_frame_bytes, settings.rate, settings.burst,
                                  settings.hello_timeout_s)
    metrics = websocket.app.state.metrics
    metrics.connections.inc()
    try:
        while True:
            message = await _receive(websocket, connection.hello_deadline)
            if message is None:
                log.info("closed a connection that sent no hello within %g s", settings.hello_timeout_s)
                actions = connection.hello_timed_out()
            else:
                if message["type"] == "websocket.disconnect":
                    break
                limited = not limiter.has_capacity()
                if not limited:
                    await limiter.acquire()
                actions = connection.receive(message.get("bytes"), loop.time(), limited)
                if len(actions) == 1 and type(request := actions[0]) is Dispatch and type(request.request) is m.Play:
                    # Every move's path: straight to the play, without the general path's layers of coroutines
                    # (_carry_out, _dispatch, _handle), each a frame and an await a move.
                    await _play(service, session, request.request)
                    continue
            if await _carry_out(actions, service, session):
                break
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


async def _receive(websocket: WebSocket, deadline: float | None) -> Message | None:
    """The next ASGI message, or ``None`` when the loop's clock passes ``deadline`` first (``None``: no deadline)."""
    if deadline is None:
        return await websocket.receive()
    try:
        async with asyncio.timeout_at(deadline):
            return await websocket.receive()
    except TimeoutError:
        return None


async def _carry_out(actions: list[Action], service: MatchService, session: Session) -> bool:
    """Carry out the connection state's ``actions`` in order; True once the connection is closed."""
    metrics = service.metrics
    for action in actions:
        match action:
            case Send(message=message, rejected=rejected):
                if rejected:
                    metrics.rejected.labels(rejected).inc()
                session.push(encode(message))
            case Close(code=code, reason=reason):
                session.close(code, reason)
                return True
            case Dispatch(request=m.Play() as request):
                await _play(service, session, request)
            case Dispatch(request=request):
                await _dispatch(service, session, request)
    return False


async def _play(service: MatchService, session: Session, request: m.Play) -> None:
    """A ``play`` as :func:`_dispatch` and :func:`_handle` carry it out (counted, timed, a refusal answered as
    an ``error`` naming its ``seq``), in one coroutine."""
    metrics = service.metrics
    metrics.commands.inc()
    # Histogram.observe itself, not its timer context manager (an object and two calls more a move).
    started = perf_counter()
    try:
        await service.playing.play(session, request.seq, request.command)
    except Exception as error:  # noqa: BLE001 - answered (a bug or a Redis failure logged), the connection stays
        _answer_failure(service, session, request, error)
    finally:
        metrics.command_seconds.observe(perf_counter() - started)


async def _dispatch(service: MatchService, session: Session, request: m.ClientMessage) -> None:
    """Carry out ``request`` in the match service; a refusal goes back as an ``error`` naming the request's ``seq``
    (the client matches it to its request)."""
    try:
        await _handle(service, session, request)
    except Exception as error:  # noqa: BLE001 - answered (a bug or a Redis failure logged), the connection stays
        _answer_failure(service, session, request, error)


def _answer_failure(service: MatchService, session: Session, request: m.ClientMessage, error: Exception) -> None:
    """Answer ``request`` whose handling raised ``error`` with an ``error`` naming its ``seq`` (the client
    matches it to its request): a :class:`ServiceError` with its own code and words, counted as refused; anything
    else, a server bug or a Redis failure, logged with its traceback and answered ``internal``, so that it takes
    neither the connection nor the process down."""
    if isinstance(error, ServiceError):
        service.metrics.rejected.labels(error.code).inc()
        session.push(encode(m.Error(error.code, error.message, answers(request))))
        if isinstance(error, MatchGone):  # Redis lost the match: nothing this connection sends can succeed
            service.noted_lost(error.match or session.code)
            session.close(MATCH_GONE_CLOSE, "the server lost this match")
        return
    log.error("handling a %s frame failed", type(request).__name__, exc_info=error)
    session.push(encode(m.Error("internal", "the server failed to handle that frame", answers(request))))


async def _handle(service: MatchService, session: Session, request: m.ClientMessage) -> None:
    """Every request but ``play`` (:func:`_play`)."""
    match request:
        case m.Join(match=code, name=name, player_key=player_key):
            if session.code:
                raise ServiceError("malformed", "this connection has joined a match already")
            await service.lobby.join(session, canonical_code(code), name, player_key)
            in_match(session.code)
            log.info("a player joined as %r", session.name)
        case m.Resume(match=code, token=token):
            if session.code and not (session.next_round and canonical_code(code) == session.next_round):
                raise ServiceError("malformed", "this connection has joined a match already")
            await service.lobby.resume(session, canonical_code(code), token)
        case m.Ready():
            await service.lobby.ready(session)
        case m.Start(host_token=token):
            await service.lobby.host_start(session, token)
        case m.Resign(seq=seq):
            await service.playing.resign(session, seq)
        case m.Hint(seq=seq):
            await service.playing.hint(session, seq)
        case m.Rematch():
            await service.rounds.rematch(session)
        case m.Restart():
            await service.rounds.restart(session)
        case m.Ping(nonce=nonce):
            session.push(encode(m.Pong(nonce, service.clock.now_ms())))
    in_match(session.code)  # joined, resumed, or moved to the next round
