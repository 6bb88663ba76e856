"""Limits on what one TCP connection may hold or make the server do, below the application.

uvicorn runs the app with the two protocol classes made here (its ``http`` and ``ws`` options take a
protocol class): uvicorn's httptools HTTP protocol and its websockets (sans-I/O) WebSocket protocol, each
with the checks uvicorn does not make:

- **connections per address**: past ``FTR_MAX_CONNECTIONS_PER_ADDRESS`` open connections from one
  address (HTTP and WebSocket together) a new one is closed at once;
- **request head deadline**: a connection has ``FTR_HEADER_TIMEOUT_S`` seconds from its start (or from
  the previous answer on a kept-alive connection) to send a whole request head, at most
  ``FTR_MAX_HEADER_BYTES`` of it, else it is closed (a head too large gets 431; uvicorn's keep-alive
  timer restarts on every byte, so a trickling client would be held for ever);
- **control frames and fragments**: pings, pongs and unfinished message fragments never reach the app
  and its per-connection rate limit, yet each costs the event loop a frame and a ping an answer; at most
  ``FTR_BURST`` of them at once and ``FTR_RATE`` a second, else the connection is closed with 1008;
- **write backlog**: a connection whose unsent bytes pass ``FTR_MAX_WRITE_BUFFER_BYTES`` (a client that
  sends but never reads) is closed with 1008 instead of the server buffering pongs for it.

Each limit that bites writes a log line (``forty_thieves.connections``, at most one per limit every few
seconds, with how many more bit meanwhile).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from aiolimiter import AsyncLimiter
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Request

from .settings import Settings

log = logging.getLogger("forty_thieves.connections")

LOG_EVERY_S = 5.0
"""One log line per limit at most this often (a flood must not flood the log too)."""


@dataclass
class ConnectionLimits:
    """The limits (from :class:`Settings`) and the process's count of open connections per address."""

    per_address: int
    header_timeout_s: float
    max_header_bytes: int
    write_buffer_bytes: int
    rate: float
    burst: int
    open: Counter[str] = field(default_factory=Counter)
    _logged: dict[str, tuple[float, int]] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings: Settings) -> ConnectionLimits:
        """The limits the settings give (``FTR_MAX_CONNECTIONS_PER_ADDRESS``, ``FTR_HEADER_TIMEOUT_S``, ...)."""
        return cls(settings.max_connections_per_address, settings.header_timeout_s, settings.max_header_bytes,
                   settings.max_write_buffer_bytes, settings.rate, settings.burst)

    def admit(self, address: str) -> bool:
        """Count a new connection from ``address``; False (not counted) when it holds ``per_address`` already."""
        if self.open[address] >= self.per_address:
            self.bit("connections per address", f"{address} holds {self.per_address} connections already")
            return False
        self.open[address] += 1
        return True

    def release(self, address: str) -> None:
        """One counted connection from ``address`` closed."""
        self.open[address] -= 1
        if self.open[address] <= 0:
            del self.open[address]

    def bit(self, limit: str, detail: str) -> None:
        """Log that ``limit`` closed or refused a connection (rate-limited per limit)."""
        now = asyncio.get_running_loop().time()
        last, suppressed = self._logged.get(limit, (-LOG_EVERY_S, 0))
        if now - last < LOG_EVERY_S:
            self._logged[limit] = (last, suppressed + 1)
            return
        self._logged[limit] = (now, 0)
        more = f" ({suppressed} more since the last line)" if suppressed else ""
        log.warning("limit %s: %s, connection closed%s", limit, detail, more)


def _address(client: tuple[str, int] | None) -> str:
    return client[0] if client else "?"


class _HeadTooLarge(Exception):
    """Raised by a parser callback to stop parsing a request head over the size limit (httptools turns it into
    an ``HttpParserCallbackError``, which uvicorn answers with :meth:`LimitedHttpProtocol.send_400_response`)."""


class LimitedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the per-address cap and the request head deadline and size.

    A head's size is measured twice: the parsed request line and headers of each request (however it comes:
    whole in one read, in pieces, after blank lines, or behind another request in the same read), and the raw
    bytes of the reads that end while no whole head has arrived (a head that never ends, whose last header
    the parser has not given yet); either over ``max_header_bytes`` is answered 431 and closed, and the request
    never reaches the application."""

    def __init__(self, *args: Any, limits: ConnectionLimits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits = limits
        self.counted: str | None = None  # the address this connection is counted under, until it closes
        self.head_timer: asyncio.TimerHandle | None = None
        self.head_bytes = 0
        self.in_head = True
        self.parsed_head = 0  # bytes of the request line and headers the parser gave of the current request
        self.head_refused = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        address = _address(self.client)
        if not self.limits.admit(address):
            transport.abort()
            return
        self.counted = address
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        if self.counted is not None:
            self.limits.release(self.counted)
            self.counted = None
        super().connection_lost(exc)

    def _await_head(self) -> None:
        self.in_head, self.head_bytes = True, 0
        self._stop_head_timer()
        self.head_timer = self.loop.call_later(self.limits.header_timeout_s, self._head_too_slow)

    def _stop_head_timer(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None

    def _head_too_slow(self) -> None:
        self.head_timer = None
        self.limits.bit("request head timeout", f"{_address(self.client)} sent no whole request head within "
                                                f"{self.limits.header_timeout_s:g} s")
        self.transport.close()

    def data_received(self, data: bytes) -> None:
        """uvicorn's parsing (which measures the parsed head: :meth:`_count_parsed`), then the raw bytes of a read
        after which no whole head has arrived yet."""
        counting = self.in_head
        super().data_received(data)
        if counting and self.in_head and not self.transport.is_closing():
            self.head_bytes += len(data)
            if self.head_bytes > self.limits.max_header_bytes:
                self._refuse_head()

    def _refuse_head(self) -> None:
        """Answer 431 and close: the request head is over the limit."""
        self.limits.bit("request head size", f"{_address(self.client)} sent a request head over "
                                             f"{self.limits.max_header_bytes} bytes")
        self._stop_head_timer()
        self.transport.write(b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n"
                             b"connection: close\r\n\r\n")
        self.transport.close()

    def _count_parsed(self, size: int) -> None:
        self.parsed_head += size
        if self.parsed_head > self.limits.max_header_bytes:
            self.head_refused = True
            raise _HeadTooLarge

    def on_message_begin(self) -> None:
        if not self.in_head:  # a request behind another in the same read: its head's raw bytes count from the next
            self.in_head, self.head_bytes = True, 0
        self.parsed_head = 16  # the request line less its url: method, version, spaces and CRLF
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        self._count_parsed(len(url))  # called for each piece of a url split across reads
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count_parsed(len(name) + len(value) + 4)  # "name: value" and CRLF
        super().on_header(name, value)

    def send_400_response(self, msg: str) -> None:
        if self.head_refused:  # the parser stopped at a head over the limit (_count_parsed): 431, not 400
            self._refuse_head()
            return
        super().send_400_response(msg)

    def on_headers_complete(self) -> None:
        self.in_head = False
        self._stop_head_timer()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # uvicorn armed its keep-alive timer (no pipelined request waits): the next head has its deadline too.
        if self.timeout_keep_alive_task is not None and not self.transport.is_closing():
            self._await_head()

    def handle_websocket_upgrade(self) -> None:
        # The WebSocket protocol takes the transport over, and with it the count (it releases it on close).
        self._stop_head_timer()
        self.counted = None
        super().handle_websocket_upgrade()


class LimitedWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's websockets (sans-I/O) protocol with a budget of control frames and fragments and a
    bound on the unsent bytes a connection may pile up. Created by an upgrade of
    :class:`LimitedHttpProtocol`, whose per-address count it releases when the connection closes."""

    def __init__(self, *args: Any, limits: ConnectionLimits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits = limits
        self.control_frames = AsyncLimiter(max(1, limits.burst), max(1, limits.burst) / max(limits.rate, 1e-9))

    def connection_lost(self, exc: Exception | None) -> None:
        self.limits.release(_address(self.client))
        super().connection_lost(exc)

    def handle_events(self) -> None:
        """The events of one read: a control frame or fragment past the budget, or a write backlog past its
        bound, closes the connection (1008) before any of them is dispatched; else uvicorn's dispatch."""
        events = self.conn.events_received()
        # Before anything is dispatched: websockets has already queued a pong for every ping of this read.
        for event in events:
            if _below_the_app(event) and not _take(self.control_frames):
                return self._close_abuser("control frames", f"more than {self.limits.burst} pings, pongs or "
                                          f"message fragments at once or {self.limits.rate:g} a second")
        if self.transport.get_write_buffer_size() > self.limits.write_buffer_bytes:
            return self._close_abuser("write backlog", f"over {self.limits.write_buffer_bytes} bytes unsent: "
                                      "the client does not read")
        self._dispatch(events)

    def _dispatch(self, events: list[Any]) -> None:
        # uvicorn's own dispatch (WebSocketsSansIOProtocol.handle_events: the same chain of tests) on events already
        # taken; binary frames first, a player's every command.
        for event in events:
            if isinstance(event, Frame):
                opcode = event.opcode
                if opcode is Opcode.BINARY:
                    self.handle_bytes(event)
                elif opcode is Opcode.TEXT:
                    self.handle_text(event)
                elif opcode is Opcode.PING:
                    self.handle_ping()
                elif opcode is Opcode.PONG:
                    self.handle_pong(event)
                elif opcode is Opcode.CLOSE:
                    self.handle_close(event)
                elif opcode is Opcode.CONT:
                    self.handle_cont(event)
            elif isinstance(event, Request):
                self.handle_connect(event)

    def _close_abuser(self, limit: str, detail: str) -> None:
        self.limits.bit(limit, f"{_address(self.client)}: {detail}")
        self.conn.data_to_send()  # the queued pongs are dropped: this connection gets only its close frame
        self.conn.fail(1008, f"flooding: {limit}")
        self.transport.write(b"".join(self.conn.data_to_send()))
        self.close_sent = True
        self.transport.close()


def _below_the_app(event: object) -> bool:
    """A frame the app never sees as a message: a ping, a pong or a fragment of an unfinished message."""
    return isinstance(event, Frame) and (event.opcode in (Opcode.PING, Opcode.PONG, Opcode.CONT) or not event.fin)


def _take(limiter: AsyncLimiter) -> bool:
    """Take one unit from ``limiter`` now or return False (protocol callbacks cannot wait). aiolimiter's
    ``acquire`` finishes without suspending when there is capacity, so it is run to its end here."""
    if not limiter.has_capacity():
        return False
    step = limiter.acquire()
    try:
        step.send(None)
    except StopIteration:
        return True
    step.close()  # unreachable: capacity was there
    return True


MAX_ADDRESSES = 10_000
"""Addresses :func:`over_limit` keeps a bucket for before it forgets the idle ones (bounded memory)."""


def over_limit(limiters: dict[str, AsyncLimiter], address: str, rate: float, period_s: float) -> bool:
    """True when ``address`` has spent its ``rate`` requests of ``period_s`` seconds (one aiolimiter token
    bucket per address in ``limiters``); otherwise takes one and returns False. Past :data:`MAX_ADDRESSES`
    addresses the buckets that are full again are forgotten."""
    if len(limiters) > MAX_ADDRESSES:
        for idle in [key for key, limiter in limiters.items() if limiter.has_capacity(rate)]:
            del limiters[idle]
    return not _take(limiters.setdefault(address, AsyncLimiter(rate, period_s)))


def protocol_classes(settings: Settings) -> tuple[Any, Any]:
    """``(http, ws)`` protocol factories for ``uvicorn.run`` with one shared :class:`ConnectionLimits`."""
    limits = ConnectionLimits.from_settings(settings)
    return (functools.partial(LimitedHttpProtocol, limits=limits),
            functools.partial(LimitedWebSocketProtocol, limits=limits))


__all__ = ["ConnectionLimits", "LimitedHttpProtocol", "LimitedWebSocketProtocol", "protocol_classes"]
