"""Match codes: made to be read aloud, typed in any case, and not guessed (shared by the server and the client).

A code is :data:`CODE_LENGTH` symbols of Crockford's base32 alphabet
(https://www.crockford.com/base32.html): the digits and the capital
letters without I, L, O and U, so no two symbols look alike. It is drawn
from :mod:`secrets`: 12 symbols of 5 bits are 60 bits, about 1.2e18
codes, the same strength as the older 10-character codes.

:func:`canonical_code` reads a code as a person types it: any case,
``O`` for ``0``, ``I`` or ``L`` for ``1`` (Crockford's decoding rule),
blanks and hyphens ignored. Text that is not a code of today's form after
that is returned exactly as given, so the older codes (10 characters of
``[A-Za-z0-9]``, case-sensitive) are still found: a 12-symbol reading of
an older code cannot happen, since those are 10 characters long.
"""

from __future__ import annotations

import re
import secrets

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
"""Crockford's base32 symbols: no I, L, O, U."""

CODE_LENGTH = 12
"""Symbols in a code: 12 x 5 = 60 bits of randomness."""

CODE_BITS = CODE_LENGTH * 5

_LOOK_ALIKES = str.maketrans({"O": "0", "I": "1", "L": "1"})
_IGNORED = re.compile(r"[\s\-]+")
_CODE = re.compile(f"[{ALPHABET}]{{{CODE_LENGTH}}}")


def new_code() -> str:
    """A fresh random code: :data:`CODE_LENGTH` symbols of :data:`ALPHABET` (``"K7QM4T2X9PZR"``)."""
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def canonical_code(text: str) -> str:
    """The code ``text`` means: upper case, ``O`` -> ``0``, ``I``/``L`` -> ``1``, blanks and hyphens dropped,
    when that gives a code of today's form (``"k7qm-4t2x-9pzr"`` -> ``"K7QM4T2X9PZR"``); else ``text`` unchanged
    (an older code, or no code at all: the lookup then says there is no such match)."""
    candidate = _IGNORED.sub("", text).upper().translate(_LOOK_ALIKES)
    return candidate if _CODE.fullmatch(candidate) else text


__all__ = ["ALPHABET", "CODE_BITS", "CODE_LENGTH", "canonical_code", "new_code"]
