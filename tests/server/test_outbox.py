"""A socket's outbox and its one writer (server.match.session.Outbox, server.play._writer), on a stand-in socket.

The stand-in's send is uvicorn's in shape: it waits while the transport has paused writing (an event), then
writes, and raises ClientDisconnected (an OSError) once the peer went away. The real thing over real sockets
runs in tests/integration (every frame a player or spectator gets goes this way).
"""

from __future__ import annotations

import asyncio

import pytest

from server.match.session import Outbox
from server.play import _writer


class Socket:
    """The part of a Starlette WebSocket the writer uses, with uvicorn's flow control."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.closed: tuple[int, str] | None = None
        self.writable = asyncio.Event()
        self.writable.set()
        self.gone = False
        self.sends_begun = 0

    async def send_bytes(self, frame: bytes) -> None:
        self.sends_begun += 1
        await self.writable.wait()
        if self.gone:
            raise OSError("the peer went away")
        self.sent.append(frame)

    async def close(self, code: int = 1000, reason: str = "") -> None:
        self.closed = (code, reason)


async def started(outbox: Outbox, socket: Socket) -> asyncio.Task[None]:
    writer = asyncio.create_task(_writer(socket, outbox))  # type: ignore[arg-type]
    await asyncio.sleep(0)  # the writer attaches and waits on the empty queue
    return writer


async def test_a_frame_pushed_while_the_writer_waits_is_sent_at_once() -> None:
    outbox, socket = Outbox(), Socket()
    writer = await started(outbox, socket)
    assert outbox.push(b"1") and outbox.push(b"2")
    assert socket.sent == [b"1", b"2"]  # no await in between: sent by the pushes, not by the writer's task
    assert outbox.queue.empty()
    outbox.close(1000, "bye")
    await asyncio.wait_for(writer, 1)
    assert socket.closed == (1000, "bye")


async def test_a_paused_transport_queues_in_order_and_the_queue_stays_bounded() -> None:
    outbox, socket = Outbox(), Socket()
    writer = await started(outbox, socket)
    socket.writable.clear()  # the client stopped reading: the transport paused writing
    assert outbox.push(b"first")  # begun, waiting: handed to the writer
    assert socket.sent == [] and socket.sends_begun == 1
    await asyncio.sleep(0)
    pushed = [outbox.push(str(i).encode()) for i in range(600)]
    # The writer holds the unfinished send; the queue takes 512 more frames, then refuses.
    assert pushed == [True] * 512 + [False] * 88
    assert socket.sends_begun == 1  # one send at a time: nothing else was begun meanwhile
    socket.writable.set()
    for _ in range(600):
        await asyncio.sleep(0)
    assert socket.sent == [b"first"] + [str(i).encode() for i in range(512)]
    assert outbox.push(b"later") and socket.sent[-1] == b"later"  # idle again: direct again
    outbox.close(1000, "")
    await asyncio.wait_for(writer, 1)


async def test_a_close_while_a_send_waits_comes_after_it() -> None:
    outbox, socket = Outbox(), Socket()
    writer = await started(outbox, socket)
    socket.writable.clear()
    outbox.push(b"a")
    outbox.push(b"b")
    outbox.close(4000, "replaced")
    outbox.push(b"after the close")  # behind the close: never sent
    socket.writable.set()
    await asyncio.wait_for(writer, 1)
    assert socket.sent == [b"a", b"b"] and socket.closed == (4000, "replaced")


async def test_a_peer_gone_drops_the_frame_and_ends_the_writer_at_its_next_frame() -> None:
    outbox, socket = Outbox(), Socket()
    writer = await started(outbox, socket)
    socket.gone = True
    assert outbox.push(b"lost")  # raised inside the push: dropped, as the writer drops it
    assert outbox.push(b"queued")  # no direct send any more: the writer takes it, fails, ends
    await asyncio.wait_for(writer, 1)
    assert socket.sent == [] and socket.closed is None


async def test_a_paused_send_ends_the_writer_when_the_peer_goes() -> None:
    outbox, socket = Outbox(), Socket()
    writer = await started(outbox, socket)
    socket.writable.clear()
    outbox.push(b"stuck")
    await asyncio.sleep(0)
    socket.gone = True
    socket.writable.set()  # uvicorn wakes waiting sends when the connection is lost
    await asyncio.wait_for(writer, 1)
    assert socket.sent == []


async def test_cancelling_the_writer_cancels_a_waiting_send() -> None:
    outbox, socket = Outbox(), Socket()
    writer = await started(outbox, socket)
    socket.writable.clear()
    outbox.push(b"stuck")
    await asyncio.sleep(0)
    writer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await writer
    socket.writable.set()
    await asyncio.sleep(0)
    assert socket.sent == []
