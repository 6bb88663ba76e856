"""The server's log lines: one format for its own loggers and uvicorn's, as text or as JSON.

``FTR_LOG_FORMAT=text`` (the default) writes one line a record::

    2025-05-01T12:00:00.123Z INFO forty_thieves.play: a player joined as 'ann' (match 7QK2M4XJ9P3A, connection 5f0c9e1a)

``FTR_LOG_FORMAT=json`` writes one JSON object a line (python-json-logger), with ``time`` (UTC, ISO 8601),
``level``, ``logger``, ``message``, and ``match`` and ``connection`` where the record was logged inside a
player's or a spectator's connection (and ``exc_info``, the traceback, where there is one)::

    {"time": "2025-05-01T12:00:00.123Z", "level": "INFO", "logger": "forty_thieves.play",
     "message": "a player joined as 'ann'", "match": "7QK2M4XJ9P3A", "connection": "5f0c9e1a"}

``FTR_LOG_LEVEL`` (``info``) is the level of the server's loggers (``forty_thieves.*``) and uvicorn's; other
libraries log at ``info`` and above even at ``debug``. The WebSocket frames that websockets logs at ``debug``
(through uvicorn's logger, which uvicorn hands it) are left out at every level (:class:`NoFrames`): their bytes
hold the players' tokens.

The match code and the connection id come from context variables (:data:`MATCH_CODE`,
:data:`CONNECTION_ID`): set where a ``/play`` or watch connection starts (:func:`new_connection`) and where
it learns its match (:func:`in_match`), they hold for everything that connection's task and the tasks it
starts log; :class:`ContextFilter` puts them on each record.
"""

from __future__ import annotations

import logging
import logging.config
import re
import secrets
import time
from contextvars import ContextVar
from typing import Any

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter
from websockets.frames import Frame

LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
"""The values of ``FTR_LOG_LEVEL``."""

LOG_FORMATS = ("text", "json")
"""The values of ``FTR_LOG_FORMAT``."""

MATCH_CODE: ContextVar[str] = ContextVar("match_code", default="")
"""The match the current connection plays or watches (``""``: none, or not known yet)."""

CONNECTION_ID: ContextVar[str] = ContextVar("connection_id", default="")
"""The current connection's id (``""``: not inside a player's or spectator's connection)."""

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def new_connection() -> str:
    """Start a connection's log context (in its own task): a fresh id, 8 hex digits, and no match yet."""
    connection = secrets.token_hex(4)
    CONNECTION_ID.set(connection)
    MATCH_CODE.set("")
    return connection


_CODE_TEXT = re.compile(r"[0-9A-Za-z]{1,32}")
"""What a match code may be (today's and the older forms): anything else came from a client, names no match,
and would go into the text format's lines as it is (a line break in a watched path forges a log line)."""


def in_match(code: str) -> None:
    """The current connection plays or watches match ``code`` from now on (``""``: none; text that cannot be a
    match code counts as none)."""
    if not _CODE_TEXT.fullmatch(code):
        code = ""
    if MATCH_CODE.get() != code:
        MATCH_CODE.set(code)


class ContextFilter(logging.Filter):
    """Puts ``match`` and ``connection`` on a record logged inside a connection (left off where unset)."""

    def filter(self, record: logging.LogRecord) -> bool:
        code, connection = MATCH_CODE.get(), CONNECTION_ID.get()
        if code:
            record.match = code
        if connection:
            record.connection = connection
        return True


class NoFrames(logging.Filter):
    """Drops the records of WebSocket frames, ``< %s`` / ``> %s`` with a :class:`websockets.frames.Frame`:
    websockets logs each frame at ``debug`` with the first and last bytes of its payload (a ``joined`` or
    ``resume`` frame ends with the player's token)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        return not (isinstance(args, tuple) and len(args) == 1 and isinstance(args[0], Frame))


_SECRET_QUERY = re.compile(r"([?&](?:player_key|key|token|name_token|host_token|recovery_code)=)[^&#\s]*",
                           re.IGNORECASE)
"""A secret's value in a query string (no route reads one there, but a client may put it there anyway)."""


class NoSecrets(logging.Filter):
    """Blanks the value of a query parameter named as a secret (``player_key``, ``token``, ``recovery_code``
    ...) in a record's text arguments, such as the path of uvicorn's access log line: keys and tokens are
    sent in bodies and headers, and one sent in an address must not reach a log either."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(isinstance(a, str) and "=" in a for a in record.args):
            record.args = tuple(_SECRET_QUERY.sub(r"\1REDACTED", a) if isinstance(a, str) else a
                                for a in record.args)
        return True


class _UtcTime(logging.Formatter):
    """``asctime`` as UTC ISO 8601 with milliseconds: ``2025-05-01T12:00:00.123Z``."""

    converter = staticmethod(time.gmtime)
    default_time_format = "%Y-%m-%dT%H:%M:%S"
    default_msec_format = "%s.%03dZ"


class TextFormatter(_UtcTime):
    """:data:`TEXT_FORMAT`, then `` (match CODE, connection ID)`` where the record has them."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def formatMessage(self, record: logging.LogRecord) -> str:
        line = super().formatMessage(record)
        context = [f"{name} {value}" for name in ("match", "connection") if (value := getattr(record, name, ""))]
        return f"{line} ({', '.join(context)})" if context else line


class JsonLineFormatter(_UtcTime, JsonFormatter):
    """One JSON object a record: ``time``, ``level``, ``logger``, ``message``, then ``match``, ``connection``
    and any other extra field of the record (uvicorn's ``color_message``, the same text with colour codes,
    left out)."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s",
                         rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
                         reserved_attrs=[*RESERVED_ATTRS, "color_message", "taskName"])


def logging_config(level: str = "info", log_format: str = "text") -> dict[str, Any]:
    """The :func:`logging.config.dictConfig` configuration of ``level`` (one of :data:`LOG_LEVELS`) and
    ``log_format`` (one of :data:`LOG_FORMATS`): one handler on standard error, for the root logger, which
    uvicorn's loggers propagate to; also uvicorn's ``log_config``. Raises ``ValueError`` for another value."""
    if level not in LOG_LEVELS:
        raise ValueError(f"unknown log level {level!r}: one of {', '.join(LOG_LEVELS)}")
    if log_format not in LOG_FORMATS:
        raise ValueError(f"unknown log format {log_format!r}: one of {', '.join(LOG_FORMATS)}")
    server_level = level.upper()
    others = logging.getLevelName(max(logging.INFO, logging.getLevelName(server_level)))
    formatter = TextFormatter if log_format == "text" else JsonLineFormatter
    uvicorn = {"handlers": [], "propagate": True, "level": server_level}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": ContextFilter}, "no_frames": {"()": NoFrames}, "no_secrets": {"()": NoSecrets}},
        "formatters": {"line": {"()": formatter}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr", "formatter": "line",
                                "filters": ["no_frames", "no_secrets", "context"]}},
        "loggers": {"forty_thieves": {"level": server_level}, "uvicorn": uvicorn, "uvicorn.error": uvicorn,
                    "uvicorn.access": uvicorn},
        "root": {"handlers": ["stderr"], "level": others},
    }


def configure_logging(level: str = "info", log_format: str = "text") -> None:
    """Apply :func:`logging_config`; Python's warnings are logged too (``py.warnings``), in the same format."""
    logging.config.dictConfig(logging_config(level, log_format))
    logging.captureWarnings(True)


__all__ = ["CONNECTION_ID", "LOG_FORMATS", "LOG_LEVELS", "MATCH_CODE", "ContextFilter", "JsonLineFormatter",
           "NoFrames", "NoSecrets", "TextFormatter", "configure_logging", "in_match", "logging_config", "new_connection"]
