"""The msgpack codec of the race protocol, with hard limits.

Decoding is two steps, each by a library made for it:

1. the ``msgpack`` package turns the frame into plain values (maps, arrays,
   strings, numbers) under explicit limits (:func:`unpack_limits`);
2. msgspec checks those values against the declared message types
   (:mod:`protocol.messages`): the tag, every field's type, the string and
   array lengths and number ranges the types declare.

Limits, all derived from the frame size limit ``max_bytes``
(:data:`MAX_FRAME_BYTES` for what a client sends, by default 4096, the
server's ``FTR_MAX_FRAME_BYTES``; :data:`MAX_SERVER_FRAME_BYTES` for what a
server sends):

- the frame itself: at most ``max_bytes`` bytes, checked before anything is
  decoded;
- ``max_str_len``, ``max_bin_len``, ``max_ext_len``: ``max_bytes`` (a value
  cannot be longer than the frame that holds it);
- ``max_array_len``: ``max_bytes`` (every item takes at least one byte);
- ``max_map_len``: ``max_bytes // 2`` (every entry takes at least two bytes:
  a key and a value).

So a header that claims more items or bytes than the frame can hold (an
array of 4 billion items in five bytes) is refused before anything is
allocated for it. Nesting is bounded by msgpack's own decoder stack, and the
declared types nest at most three levels. msgpack's ``max_buffer_size``
bounds a streaming ``Unpacker``'s buffer; a frame is decoded whole
(``unpackb``), so the frame size check above is that bound. Extension types
are refused: the protocol has none.

:func:`decode_client` raises :class:`ProtocolError` (and nothing else) for
every bad frame: too large, not msgpack, not a known message, a wrong or
missing field.

Encoding stays with msgspec's encoder: it writes the declared types as
msgpack directly (a frame any msgpack decoder reads), with no untrusted
input to limit, and costs less per frame than building plain values for
``msgpack.packb`` (``tests/benchmarks/codec_bench.py``).
"""

from __future__ import annotations

import functools
import typing
from typing import Any

import msgpack
import msgspec

from .errors import NotationError
from .messages import ClientMessage, ServerMessage

MAX_FRAME_BYTES = 4096
"""Largest frame a client may send, in bytes (the default of the server's ``FTR_MAX_FRAME_BYTES``)."""

MAX_SERVER_FRAME_BYTES = 2**20
"""Largest frame a client accepts from a server, in bytes (the CLI's WebSocket ``max_size``)."""

_encoder = msgspec.msgpack.Encoder()


class ProtocolError(NotationError):
    """A frame that cannot be accepted; ``code`` is a stable error code
    (``frame_too_large`` or ``malformed``), the message says what is wrong."""

    def __init__(self, message: str, code: str = "malformed") -> None:
        super().__init__(message)
        self.code = code


def _by_tag(union: Any) -> dict[str, type[msgspec.Struct]]:
    """The message types of ``union`` by their ``type`` tag."""
    return {member.__struct_config__.tag: member for member in typing.get_args(union)}


_CLIENT_TYPES = _by_tag(ClientMessage)
_SERVER_TYPES = _by_tag(ServerMessage)

_MSGPACK_NAMES = {type(None): "None (msgpack nil)", bool: "bool", int: "int", float: "float", str: "str",
                  bytes: "bytes (msgpack bin)", list: "array",
                  msgpack.Timestamp: "msgpack extension type -1 (timestamp)"}


def _refuse_extension(code: int, data: bytes) -> object:
    raise ValueError(f"msgpack extension type {code} is not part of the protocol")


def _refuse_timestamps(container: Any) -> Any:
    """``container`` (a decoded map or array) unless it holds a timestamp: msgpack decodes extension type -1
    (the timestamp) itself, without calling ``ext_hook``, so it is refused here, where each map and array is
    made (the values of a frame are all in one)."""
    values = container.values() if isinstance(container, dict) else container
    for value in values:
        if type(value) is msgpack.Timestamp:
            raise ValueError("msgpack extension type -1 (timestamp) is not part of the protocol")
    return container


@functools.lru_cache(maxsize=8)
def unpack_limits(max_bytes: int) -> dict[str, Any]:
    """The keyword arguments of ``msgpack.unpackb`` for a frame of at most ``max_bytes`` bytes: every length
    limit (see the module docstring), UTF-8 strings, string map keys only, and extension types refused (the
    timestamp, which msgpack decodes without ``ext_hook``, by the map and array hooks)."""
    return {"max_str_len": max_bytes, "max_bin_len": max_bytes, "max_array_len": max_bytes,
            "max_map_len": max_bytes // 2, "max_ext_len": max_bytes, "raw": False, "strict_map_key": True,
            "use_list": True, "ext_hook": _refuse_extension, "object_hook": _refuse_timestamps,
            "list_hook": _refuse_timestamps}


def encode(message: ClientMessage | ServerMessage) -> bytes:
    """Encode one message as a msgpack frame (a map with its ``type`` tag)."""
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
    return typing.cast(ClientMessage, _decode(frame, max_bytes, _CLIENT_TYPES, ClientMessage))


def decode_server(frame: bytes, max_bytes: int = MAX_SERVER_FRAME_BYTES) -> ServerMessage:
    """Decode a frame the server sent (for clients and tests). Raises :class:`ProtocolError`."""
    if len(frame) > max_bytes:
        raise ProtocolError(f"frame of {len(frame)} bytes; at most {max_bytes} are accepted", "frame_too_large")
    return typing.cast(ServerMessage, _decode(frame, max_bytes, _SERVER_TYPES, ServerMessage))


def _decode(frame: bytes, max_bytes: int, types: dict[str, type[msgspec.Struct]], union: Any) -> object:
    try:
        value = msgpack.unpackb(frame, **unpack_limits(max_bytes))
    except msgpack.ExtraData:
        raise ProtocolError("not a msgpack message: extra bytes after the message") from None
    except msgpack.StackError:
        raise ProtocolError("not a msgpack message: nested deeper than the decoder allows") from None
    except msgpack.FormatError:
        raise ProtocolError("not a msgpack message: a byte msgpack does not use") from None
    except (ValueError, TypeError, RecursionError, msgpack.UnpackException) as error:
        raise ProtocolError(f"not a msgpack message: {error}") from None
    if not isinstance(value, dict):
        kind = _MSGPACK_NAMES.get(type(value), type(value).__name__)
        raise ProtocolError(f"invalid message: Expected `object`, got `{kind}`: a message is a map with a `type`")
    # The tag picks the declared type (msgspec converts to one struct type much faster than to the union);
    # an unknown or missing tag goes to the union, whose error names what is wrong with it.
    tag = value.get("type")
    target = types.get(tag, union) if isinstance(tag, str) else union
    try:
        return msgspec.convert(value, target)
    except (msgspec.ValidationError, TypeError, ValueError) as error:
        raise ProtocolError(f"invalid message: {error}") from None
