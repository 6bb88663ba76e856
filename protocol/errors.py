"""Errors of the shared language.

The tree (every class also subclasses :class:`ValueError`)::

    ValueError
     └── NotationError            a string is not canonical notation
                                  (card, command, position text, game record)

The rules engine adds its own subclass for commands that are well formed but
not allowed in the position (``server.engine.errors.IllegalCommandError``).

Every error carries ``code``, a stable machine-readable string for the wire,
and a message meant for a person that says what is wrong and, where it can,
what would be right.
"""

from __future__ import annotations


class NotationError(ValueError):
    """A string is not in the canonical notation of RULES.md section 10.

    Raised by every parser in :mod:`protocol` and by the engine's position
    text and game record parsers. ``str(error)`` is the human message,
    ``error.code`` a stable code (``"malformed"`` unless a subclass says
    otherwise).
    """

    code = "malformed"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
