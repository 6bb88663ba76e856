"""The event streams the fan-out hub (:mod:`server.hub`) follows, and what a spectator sees of each entry.

A :class:`Feed` names one stream key (built by :mod:`.keys`) and says which
entries a spectator gets and which field holds the frame: a match's stream
(:func:`match_feed`) carries internal entries too (``start``, ``takeover``),
which only the players' callback sees; a day's stream (:func:`day_feed`)
carries public attempt events only. Pure: no I/O.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from .keys import day_key, events_key
from .scripts import SPECTATOR_KINDS


class Feed(msgspec.Struct, frozen=True):
    """One event stream and its spectators' view of it.

    ``key``: the stream's Redis key; ``of``: what it belongs to (``match`` or ``daily``, the label of the
    ``ftr_spectators`` metric); ``field``: the entry field holding the frame (msgpack for a match, JSON for a
    day); ``kinds``: the values of field ``k`` a spectator gets (an entry without ``k`` is ``public``), or
    None for every entry.
    """

    key: str
    of: Literal["match", "daily"]
    field: bytes = b"m"
    kinds: tuple[bytes, ...] | None = SPECTATOR_KINDS

    def frame(self, fields: dict[bytes, bytes]) -> bytes | None:
        """The frame a spectator gets of the entry ``fields`` (raw, as XREAD/XRANGE return them), or None
        when spectators do not get that entry."""
        if self.kinds is not None and fields.get(b"k", b"public") not in self.kinds:
            return None
        return fields.get(self.field)


def match_feed(code: str) -> Feed:
    """The stream of match ``code`` (``{m:CODE}:events``): spectators get :data:`SPECTATOR_KINDS` entries."""
    return Feed(events_key(code), "match")


def day_feed(date: str, variant: str) -> Feed:
    """The stream of a day's attempt events (``{d:DATE:VARIANT}:events``): every entry, field ``d`` (JSON)."""
    return Feed(day_key(date, variant, "events"), "daily", field=b"d", kinds=None)
