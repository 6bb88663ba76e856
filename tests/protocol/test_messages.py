"""The message set's wire form: what an ``error`` carries of the request it answers."""

from __future__ import annotations

import msgspec

from protocol import messages as m
from protocol.codec import decode_server, encode


def test_an_error_answering_a_numbered_frame_carries_its_seq() -> None:
    frame = encode(m.Error("seq_gap", "seq 5 skips ahead: the next play or resign must be seq 1", 5))
    assert msgspec.msgpack.decode(frame) == {"type": "error", "code": "seq_gap",
                                             "message": "seq 5 skips ahead: the next play or resign must be seq 1",
                                             "seq": 5}
    assert decode_server(frame) == m.Error("seq_gap", "seq 5 skips ahead: the next play or resign must be seq 1", 5)


def test_an_error_answering_no_numbered_frame_has_no_seq_on_the_wire() -> None:
    frame = encode(m.Error("hello_first", "the first frame must be hello"))
    assert msgspec.msgpack.decode(frame) == {"type": "error", "code": "hello_first",
                                             "message": "the first frame must be hello"}
    assert decode_server(frame).seq is None  # type: ignore[union-attr]


def test_seq_zero_is_a_seq_and_stays_on_the_wire() -> None:
    """``seq`` 0 (refused as ``malformed``) is answered with 0, not dropped as if it answered nothing."""
    frame = encode(m.Error("malformed", "seq numbers a player's commands from 1", 0))
    assert msgspec.msgpack.decode(frame)["seq"] == 0
    assert decode_server(frame) == m.Error("malformed", "seq numbers a player's commands from 1", 0)


def test_an_older_servers_error_decodes_with_no_seq() -> None:
    """A version-2 error (no ``seq`` field) still decodes: the client then matches it to no request."""
    frame = msgspec.msgpack.encode({"type": "error", "code": "version", "message": "this server speaks version 2"})
    assert decode_server(frame) == m.Error("version", "this server speaks version 2", None)
