"""Every path of a player connection's protocol state (protocol/connection.py), with no socket and no clock:
frames and times in, the actions out compared whole."""

from __future__ import annotations

import msgspec
import pytest

from protocol import messages as m
from protocol.codec import encode
from protocol.connection import MAX_STRIKES, STRIKE_WINDOW_S, Close, Dispatch, PlayerConnection, Send, answers

RATE, BURST, MAX_BYTES = 20.0, 40, 4096


def fresh(opened_at: float = 100.0) -> PlayerConnection:
    return PlayerConnection(opened_at, MAX_BYTES, RATE, BURST, hello_timeout_s=10.0)


def greeted() -> PlayerConnection:
    connection = fresh()
    connection.receive(encode(m.Hello(m.PROTOCOL_VERSION, "tests")), 100.5)
    assert connection.greeted
    return connection


WELCOME = Send(m.Welcome(m.PROTOCOL_VERSION, "forty-thieves-race", MAX_BYTES, RATE, BURST))


def test_hello_is_welcomed_with_the_limits_and_then_frames_are_requests() -> None:
    connection = fresh()
    assert connection.receive(encode(m.Hello(m.PROTOCOL_VERSION, "tests")), 101.0) == [WELCOME]
    assert connection.greeted and connection.hello_deadline is None
    assert connection.receive(encode(m.Play(1, "3-7")), 102.0) == [Dispatch(m.Play(1, "3-7"))]
    assert connection.receive(encode(m.Ready()), 102.1) == [Dispatch(m.Ready())]


def test_frames_before_hello_are_refused_and_do_not_move_the_deadline() -> None:
    connection = fresh(opened_at=100.0)
    assert connection.hello_deadline == 110.0
    refusal = Send(m.Error("hello_first", "the first frame must be hello with the protocol version"))
    assert connection.receive(encode(m.Join("K7QX", "ann")), 101.0) == [refusal]
    assert connection.receive(encode(m.Play(1, "s")), 105.0) == [refusal]  # no seq: nothing of it was taken
    assert not connection.greeted and connection.hello_deadline == 110.0


def test_no_hello_in_time_says_so_and_closes_1008() -> None:
    assert fresh().hello_timed_out() == [Send(m.Error("hello_first", "no hello within 10 s")), Close(1008, "no hello")]


@pytest.mark.parametrize("version", [m.PROTOCOL_VERSION - 1, m.PROTOCOL_VERSION + 1, 0])
def test_another_version_is_refused_and_closed_4001(version: int) -> None:
    connection = fresh()
    actions = connection.receive(encode(m.Hello(version, "old")), 101.0)
    assert actions == [Send(m.Error("version", f"this server speaks protocol version {m.PROTOCOL_VERSION}, "
                                               f"the client {version}: update the client")),
                       Close(4001, "protocol version mismatch")]
    assert not connection.greeted


def test_a_second_hello_is_malformed_and_counted() -> None:
    connection = greeted()
    assert connection.receive(encode(m.Hello(m.PROTOCOL_VERSION)), 101.0) == [
        Send(m.Error("malformed", "hello was already received"), rejected="malformed")]
    assert connection.greeted


def test_text_frames_are_refused_before_and_after_hello() -> None:
    for connection in (fresh(), greeted()):
        before = connection.greeted
        assert connection.receive(None, 101.0) == [Send(m.Error("malformed", "frames are binary msgpack, not text"))]
        assert connection.greeted == before


def test_a_frame_over_the_limit_is_refused_unread_and_the_limit_is_inclusive() -> None:
    connection = greeted()
    assert connection.receive(b"\x80" * (MAX_BYTES + 1), 101.0) == [
        Send(m.Error("frame_too_large", f"frame of {MAX_BYTES + 1} bytes; at most {MAX_BYTES}"))]
    exact = msgspec.msgpack.encode({"type": "ping", "nonce": 7, "pad": ""})
    exact = msgspec.msgpack.encode({"type": "ping", "nonce": 7, "pad": "y" * (MAX_BYTES - len(exact) - 2)})
    assert len(exact) == MAX_BYTES
    assert connection.receive(exact, 101.0) == [Dispatch(m.Ping(7))]


def test_a_frame_that_does_not_decode_is_refused_with_the_codecs_error_and_counted() -> None:
    connection = greeted()
    [action] = connection.receive(msgspec.msgpack.encode({"type": "play", "seq": "2", "command": "s"}), 101.0)
    assert isinstance(action, Send) and action.rejected == "malformed"
    assert isinstance(action.message, m.Error) and action.message.code == "malformed"
    assert "$.seq" in action.message.message and action.message.seq is None
    [action] = fresh().receive(b"\xc1", 101.0)  # before hello too
    assert isinstance(action, Send) and action.rejected == "malformed"


RATE_LIMITED = Send(m.Error("rate_limited", "more than 20 messages per second: slow down"), rejected="rate_limited")


def test_a_rate_limited_frame_is_refused_unread_and_is_a_strike() -> None:
    connection = greeted()
    assert connection.receive(b"\xc1", 101.0, limited=True) == [RATE_LIMITED]  # not even decoded
    assert connection.strikes == [101.0]
    assert connection.receive(encode(m.Ping(1)), 101.1) == [Dispatch(m.Ping(1))]


def test_strikes_to_the_limit_close_1008() -> None:
    connection = greeted()
    for i in range(MAX_STRIKES - 1):
        assert connection.receive(encode(m.Ping(i)), 200.0 + i * 0.1, limited=True) == [RATE_LIMITED]
    assert connection.receive(encode(m.Ping(99)), 202.0, limited=True) == [
        RATE_LIMITED, Close(1008, "flooding: too many messages over the rate limit")]


def test_strikes_older_than_the_window_are_forgotten() -> None:
    connection = greeted()
    for i in range(MAX_STRIKES - 1):
        connection.receive(encode(m.Ping(i)), 200.0, limited=True)
    # One more after the window: the old strikes no longer count, so no close.
    assert connection.receive(encode(m.Ping(1)), 200.0 + STRIKE_WINDOW_S, limited=True) == [RATE_LIMITED]
    assert connection.strikes == [200.0 + STRIKE_WINDOW_S]


def test_a_flood_before_hello_is_closed_too() -> None:
    connection = fresh()
    actions = [connection.receive(b"", 101.0, limited=True) for _ in range(MAX_STRIKES)]
    assert actions[-1][-1] == Close(1008, "flooding: too many messages over the rate limit")
    assert all(a == [RATE_LIMITED] for a in actions[:-1])


def test_the_seq_an_error_answers() -> None:
    assert [answers(r) for r in (m.Play(3, "s"), m.Resign(4), m.Hint(2))] == [3, 4, 2]
    assert [answers(r) for r in (m.Hello(3), m.Join("K7QX", "ann"), m.Resume("K7QX", "t"), m.Ready(),
                                 m.Start("t"), m.Ping(5), m.Rematch())] == [None] * 7
