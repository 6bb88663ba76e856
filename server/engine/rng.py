"""The deal's random numbers: SHA-256 in counter mode, version 1.

Python's ``random`` module does not promise the same numbers across
versions (``random.shuffle`` and ``randrange`` have changed before), so the
deal algorithm uses only SHA-256, whose output is fixed by FIPS 180-4:

- key = ``b"forty-thieves-race/deal/v1\\x00" + seed.encode("utf-8")``;
- block i (i = 0, 1, 2, ...) = ``SHA-256(key + i.to_bytes(8, "big"))``,
  read as four unsigned 64-bit big-endian words, in order;
- :meth:`DealRandom.below` (n) draws words until one is below
  ``2**64 - 2**64 % n`` (rejection, so no value is favoured) and returns it
  modulo n;
- :func:`shuffle` is Fisher-Yates from the end: for i = n-1 down to 1,
  swap items i and ``below(i + 1)``.

Changing any of this changes every deal: bump :data:`DEAL_VERSION` and keep
the old version dealing the old way.
"""

from __future__ import annotations

import hashlib
from typing import TypeVar

DEAL_VERSION = 1
"""Version of the deal algorithm (this module and :mod:`server.engine.deal`)."""

_PREFIX = b"forty-thieves-race/deal/v1\x00"
_T = TypeVar("_T")


class DealRandom:
    """Deterministic random integers from a seed string (see the module docstring)."""

    def __init__(self, seed: str) -> None:
        self._key = _PREFIX + seed.encode("utf-8")
        self._counter = 0
        self._words: list[int] = []

    def word(self) -> int:
        """The next unsigned 64-bit word of the stream."""
        if not self._words:
            block = hashlib.sha256(self._key + self._counter.to_bytes(8, "big")).digest()
            self._counter += 1
            self._words = [int.from_bytes(block[i : i + 8], "big") for i in (24, 16, 8, 0)]
        return self._words.pop()

    def below(self, n: int) -> int:
        """Uniform integer in ``0..n-1`` (``n`` >= 1), by rejection sampling."""
        limit = (1 << 64) - (1 << 64) % n
        while True:
            x = self.word()
            if x < limit:
                return x % n


def shuffle(items: list[_T], rng: DealRandom) -> None:
    """Shuffle ``items`` in place: Fisher-Yates from the last index down."""
    for i in range(len(items) - 1, 0, -1):
        j = rng.below(i + 1)
        items[i], items[j] = items[j], items[i]
