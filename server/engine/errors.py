"""Errors of the rules engine.

The tree::

    ValueError
     ├── protocol.errors.NotationError    malformed: not canonical notation
     │                                    (command, card, position text,
     │                                    game record, unknown variant)
     └── IllegalCommandError              well formed, but not allowed in
                                          this position (``code`` says why)

Both carry ``code`` (stable, for the wire) and a human message.
"""

from __future__ import annotations

from protocol.errors import NotationError

__all__ = ["IllegalCommandError", "NotationError"]


class IllegalCommandError(ValueError):
    """A well-formed command that the rules (RULES.md sections 2-8) refuse now.

    ``str(error)`` says why, e.g. ``"3D does not fit on 8H"``; ``code`` is
    ``"illegal"`` for rule violations, ``"undo_refused"`` for undos the
    match's undo policy refuses and ``"game_over"`` once the game is won.
    Refusing a command never changes the game.
    """

    def __init__(self, message: str, code: str = "illegal") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
