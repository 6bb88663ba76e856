"""The codec's limits: every length bounded by the frame size, before anything is allocated for it."""

from __future__ import annotations

import struct

import msgpack
import msgspec
import pytest

from protocol import messages as m
from protocol.codec import MAX_FRAME_BYTES, ProtocolError, decode_client, decode_server, encode, unpack_limits


def refused(frame: bytes, *words: str, code: str = "malformed") -> None:
    with pytest.raises(ProtocolError) as caught:
        decode_client(frame)
    assert caught.value.code == code, caught.value
    for word in words:
        assert word in str(caught.value), (word, str(caught.value))


def test_the_limits_follow_the_frame_size() -> None:
    limits = unpack_limits(4096)
    assert [limits[k] for k in ("max_str_len", "max_bin_len", "max_array_len", "max_ext_len")] == [4096] * 4
    assert limits["max_map_len"] == 2048  # an entry is at least a key and a value, one byte each
    assert unpack_limits(100)["max_str_len"] == 100


@pytest.mark.parametrize(("header", "limit"), [
    (b"\xdd" + struct.pack(">I", MAX_FRAME_BYTES + 1), "max_array_len"),  # array32
    (b"\xdf" + struct.pack(">I", MAX_FRAME_BYTES // 2 + 1), "max_map_len"),  # map32
])
def test_a_length_past_what_a_frame_can_hold_is_refused_by_its_limit(header: bytes, limit: str) -> None:
    refused(header, "not a msgpack message", limit)


@pytest.mark.parametrize(("value", "limit"), [("s" * 9, "max_str_len"), (b"b" * 9, "max_bin_len"),
                                              (msgspec.msgpack.Ext(1, b"e" * 9), "max_ext_len")])
def test_strings_binaries_and_extensions_are_limited_too(value: object, limit: str) -> None:
    """Their bytes must be in the frame, so the frame size check refuses them first; the limit holds anyway."""
    with pytest.raises(ValueError, match=limit):
        msgpack.unpackb(msgspec.msgpack.encode(value), **unpack_limits(8))


def test_extension_types_are_refused() -> None:
    refused(msgspec.msgpack.encode({"type": "ping", "nonce": msgspec.msgpack.Ext(1, b"x")}), "extension type 1")


def test_each_kind_of_bad_msgpack_says_what_it_is() -> None:
    valid = encode(m.Play(1, "s"))
    refused(valid + b"\x00", "extra bytes")
    refused(b"\xc1", "does not use")
    refused(b"\x91" * 3000 + b"\xc0", "nested deeper")
    refused(b"\xa2\xff\xfe", "utf-8")
    refused(b"\x81\x01\x02", "map key")


def test_the_values_are_checked_against_the_declared_types() -> None:
    refused(msgspec.msgpack.encode({"type": "play", "seq": "2", "command": "s"}), "`int`", "$.seq")
    refused(msgspec.msgpack.encode({"type": "teleport"}), "'teleport'", "$.type")
    refused(msgspec.msgpack.encode({"seq": 1}), "`type`")
    refused(msgspec.msgpack.encode(None), "None")
    refused(msgspec.msgpack.encode({"type": "position"}), "'position'")  # a server message is not a client's
    assert decode_client(encode(m.Play(7, "3-7"))) == m.Play(7, "3-7")


def test_frames_over_the_size_are_refused_whole() -> None:
    refused(b"\x80" * (MAX_FRAME_BYTES + 1), f"{MAX_FRAME_BYTES + 1} bytes", code="frame_too_large")
    with pytest.raises(ProtocolError) as caught:
        decode_server(encode(m.Pong(1, 2)), max_bytes=4)
    assert caught.value.code == "frame_too_large"
    assert decode_server(encode(m.Pong(1, 2))) == m.Pong(1, 2)
