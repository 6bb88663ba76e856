"""A match's settings, decoded once: the meta hash keeps them as JSON text (``meta.settings``)."""

from __future__ import annotations

from functools import lru_cache

import msgspec

from protocol import messages as m


@lru_cache(maxsize=4096)
def decode_settings(text: str) -> m.Settings:
    """The :class:`protocol.messages.Settings` of ``meta.settings`` (JSON text). Decoded once per distinct text
    and shared: the value is frozen. Raises :class:`msgspec.ValidationError` / :class:`msgspec.DecodeError`
    for text that is not a match's settings (the store holds only what :func:`encode_settings` wrote)."""
    return msgspec.json.decode(text, type=m.Settings)


def encode_settings(settings: m.Settings) -> str:
    """The JSON text kept as ``meta.settings`` (the inverse of :func:`decode_settings`)."""
    return msgspec.json.encode(settings).decode()
