"""The refusals of the match service, each with a stable wire code (``protocol.messages.ERROR_CODES``)."""

from __future__ import annotations


class ServiceError(Exception):
    """A refusal with a stable ``code`` (see ``protocol.messages.ERROR_CODES``) and a readable ``message``.

    Raised by the core's decisions and by the adapters; the WebSocket endpoint sends it as an ``error``
    frame, the HTTP routes as ``{"error": code, "message": message}``. Nothing has changed when it is raised.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"ServiceError({self.code!r}, {self.message!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ServiceError) and (self.code, self.message) == (other.code, other.message)

    __hash__ = Exception.__hash__


class DailyError(Exception):
    """A refusal of the daily challenge (:mod:`server.daily`): HTTP ``status``, stable ``code`` (see
    ``protocol.messages.ERROR_CODES``) and a readable ``message``. Nothing has changed when it is raised."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
