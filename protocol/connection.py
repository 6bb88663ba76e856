"""A player connection's protocol state, without I/O: frames and facts in, actions out.

In the manner of h11 (STYLE.md): :class:`PlayerConnection` knows what the
protocol says of one ``/play`` connection (hello first and the version, the
frame size, decoding, rate-limit strikes) and nothing of sockets, clocks or
matches. The adapter (``server/play.py``) passes in what happened (a frame
received, whether the rate limiter had room, the time on its clock, the
hello deadline passing) and carries out the actions it gets back, in order:

- :class:`Send`: put this message on the socket;
- :class:`Close`: close the socket with this code and reason (nothing of
  this connection is read after it);
- :class:`Dispatch`: a decoded request for the match service (the adapter
  calls it; an ``error`` refusing it carries :func:`answers` as its ``seq``).

Close codes: 1008 (policy violation) for no hello in time and for a flood,
4001 for a protocol version mismatch (README "Protocol").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import messages as m
from .codec import ProtocolError, decode_client

MAX_STRIKES = 20
"""Rate-limited frames within :data:`STRIKE_WINDOW_S` before the connection is closed (code 1008)."""
STRIKE_WINDOW_S = 10.0
"""Seconds a rate-limited frame counts as a strike."""

SERVER_NAME = "forty-thieves-race"
"""The ``server`` of ``welcome``."""


@dataclass(frozen=True, slots=True)
class Send:
    """Send ``message``. ``rejected``: the label under which the server counts the refusal ("" for none)."""

    message: m.ServerMessage
    rejected: str = ""


@dataclass(frozen=True, slots=True)
class Close:
    """Close the connection with WebSocket close ``code`` and ``reason``."""

    code: int
    reason: str


@dataclass(frozen=True, slots=True)
class Dispatch:
    """Hand ``request`` (decoded, after hello) to the match service."""

    request: m.ClientMessage


Action = Send | Close | Dispatch


def answers(request: m.ClientMessage) -> int | None:
    """The ``seq`` an error answering ``request`` carries: its own for ``play``, ``resign`` and ``hint``
    (the numbered frames), ``None`` for any other."""
    return request.seq if isinstance(request, (m.Play, m.Resign, m.Hint)) else None


@dataclass
class PlayerConnection:
    """One ``/play`` connection's protocol state (see the module docstring).

    ``opened_at``: the adapter's clock (seconds, any monotonic origin) when the connection was accepted;
    every later time passed in is on the same clock. ``max_frame_bytes``, ``rate`` (messages per second),
    ``burst`` and ``hello_timeout_s`` are the server's settings (``FTR_MAX_FRAME_BYTES``, ``FTR_RATE``,
    ``FTR_BURST``, ``FTR_HELLO_TIMEOUT_S``); the rate limiter itself is the adapter's, which says for each
    frame whether it had room.
    """

    opened_at: float
    max_frame_bytes: int
    rate: float
    burst: int
    hello_timeout_s: float
    greeted: bool = False
    """A hello of this version was welcomed: frames are requests now."""
    strikes: list[float] = field(default_factory=list)
    """Times of the rate-limited frames within the last :data:`STRIKE_WINDOW_S`."""

    @property
    def hello_deadline(self) -> float | None:
        """When the connection is closed if no hello came (the adapter's clock); ``None`` once greeted.
        It runs from the connection's start: frames other than hello do not move it."""
        return None if self.greeted else self.opened_at + self.hello_timeout_s

    def hello_timed_out(self) -> list[Action]:
        """The hello deadline passed with no hello: say so and close (1008)."""
        return [Send(m.Error("hello_first", f"no hello within {self.hello_timeout_s:g} s")), Close(1008, "no hello")]

    def receive(self, frame: bytes | None, now: float, limited: bool = False) -> list[Action]:
        """A frame arrived at ``now``: ``frame`` is its bytes, ``None`` for a text frame; ``limited``: the
        rate limiter had no room for it (it is then refused unread, and counts as a strike)."""
        if limited:
            return self._strike(now)
        if frame is None:
            return [Send(m.Error("malformed", "frames are binary msgpack, not text"))]
        if len(frame) > self.max_frame_bytes:
            return [Send(m.Error("frame_too_large", f"frame of {len(frame)} bytes; at most {self.max_frame_bytes}"))]
        try:
            request = decode_client(frame, self.max_frame_bytes)
        except ProtocolError as error:
            return [Send(m.Error(error.code, str(error)), rejected=error.code)]
        if not self.greeted:
            return self._hello(request)
        if isinstance(request, m.Hello):
            return [Send(m.Error("malformed", "hello was already received"), rejected="malformed")]
        return [Dispatch(request)]

    def _strike(self, now: float) -> list[Action]:
        self.strikes = [t for t in self.strikes if now - t < STRIKE_WINDOW_S] + [now]
        actions: list[Action] = [Send(m.Error("rate_limited", f"more than {self.rate:g} messages per second: "
                                                              "slow down"), rejected="rate_limited")]
        if len(self.strikes) >= MAX_STRIKES:
            actions.append(Close(1008, "flooding: too many messages over the rate limit"))
        return actions

    def _hello(self, request: m.ClientMessage) -> list[Action]:
        if not isinstance(request, m.Hello):
            return [Send(m.Error("hello_first", "the first frame must be hello with the protocol version"))]
        if request.version != m.PROTOCOL_VERSION:
            return [Send(m.Error("version", f"this server speaks protocol version {m.PROTOCOL_VERSION}, "
                                            f"the client {request.version}: update the client")),
                    Close(4001, "protocol version mismatch")]
        self.greeted = True
        return [Send(m.Welcome(m.PROTOCOL_VERSION, SERVER_NAME, self.max_frame_bytes, self.rate, self.burst))]
