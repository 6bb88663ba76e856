"""The msgpack codec of the race protocol, with hard limits.

One decoder per direction, built once (msgspec). Limits, checked before
and during decoding:

- :data:`MAX_FRAME_BYTES` per frame (kilobytes, not uvicorn's 16 MiB);
- string and array lengths by the declared types (:mod:`protocol.messages`);
- nesting: the declared types nest at most three levels, and a decoder for
  declared types cannot be made to nest deeper.

:func:`decode_client` raises :class:`ProtocolError` (and nothing else) for
every bad frame: too large, not msgpack, not a known message, a wrong or
missing field.
"""

from __future__ import annotations

import msgspec

from .errors import NotationError
from .messages import ClientMessage, ServerMessage

MAX_FRAME_BYTES = 4096
"""Largest frame a client may send, in bytes."""

_client_decoder = msgspec.msgpack.Decoder(ClientMessage)
_server_decoder = msgspec.msgpack.Decoder(ServerMessage)
_encoder = msgspec.msgpack.Encoder()


class ProtocolError(NotationError):
    """A frame that cannot be accepted; ``code`` is a stable error code
    (``frame_too_large`` or ``malformed``), the message says what is wrong."""

    def __init__(self, message: str, code: str = "malformed") -> None:
        super().__init__(message)
        self.code = code


def encode(message: ClientMessage | ServerMessage) -> bytes:
    """Encode one message as a msgpack frame."""
    return _encoder.encode(message)


def decode_client(frame: bytes, max_bytes: int = MAX_FRAME_BYTES) -> ClientMessage:
    """Decode and validate a frame a client sent.

    Raises :class:`ProtocolError` for a frame over ``max_bytes`` (default :data:`MAX_FRAME_BYTES`),
    bad msgpack, an unknown ``type`` or a field of the wrong type or size.
    """
    if not isinstance(frame, (bytes, bytearray, memoryview)):
        raise ProtocolError("frames are binary msgpack, not text")
    if len(frame) > max_bytes:
        raise ProtocolError(f"frame of {len(frame)} bytes; at most {max_bytes} are accepted", "frame_too_large")
    return _decode(_client_decoder, frame)  # type: ignore[no-any-return]


def _decode(decoder: msgspec.msgpack.Decoder[object], frame: bytes) -> object:
    try:
        return decoder.decode(frame)
    except msgspec.ValidationError as error:
        raise ProtocolError(f"invalid message: {error}") from None
    except (msgspec.DecodeError, ValueError, RecursionError) as error:
        raise ProtocolError(f"not a msgpack message: {error}") from None


def decode_server(frame: bytes) -> ServerMessage:
    """Decode a frame the server sent (for clients and tests). Raises :class:`ProtocolError`."""
    return _decode(_server_decoder, frame)  # type: ignore[no-any-return]
