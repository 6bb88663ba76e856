"""server/logs.py and the two log settings: validated with the variable's name, and each format's fields."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from server.logs import ContextFilter, JsonLineFormatter, TextFormatter, in_match, logging_config, new_connection
from server.settings import SettingError, Settings


def test_the_log_settings_default_to_info_and_text_and_take_any_case() -> None:
    settings = Settings.from_environ({})
    assert (settings.log_level, settings.log_format) == ("info", "text")
    settings = Settings.from_environ({"FTR_LOG_LEVEL": " DEBUG ", "FTR_LOG_FORMAT": "Json"})
    assert (settings.log_level, settings.log_format) == ("debug", "json")


@pytest.mark.parametrize(("name", "value"), [("FTR_LOG_LEVEL", "loud"), ("FTR_LOG_LEVEL", "notset"),
                                             ("FTR_LOG_FORMAT", "xml")])
def test_an_unknown_level_or_format_is_an_error_naming_the_variable(name: str, value: str) -> None:
    with pytest.raises(SettingError, match=f"^{name}='{value}': it takes one of "):
        Settings.from_environ({name: value})
    with pytest.raises(ValueError, match="unknown log"):
        logging_config(**{"level" if name == "FTR_LOG_LEVEL" else "log_format": value})


def _record(message: str) -> logging.LogRecord:
    record = logging.LogRecord("forty_thieves.play", logging.INFO, __file__, 1, message, (), None)
    record.created = 1746100800.25  # 2025-05-01T12:00:00.250Z
    record.msecs = 250.0
    assert ContextFilter().filter(record)
    return record


def test_records_of_a_connection_carry_its_match_and_id_in_both_formats() -> None:
    async def inside_a_connection() -> tuple[str, logging.LogRecord]:
        connection = new_connection()
        in_match("7QK2M4XJ9P3A")
        return connection, _record("a player joined as 'ann'")

    connection, record = asyncio.run(inside_a_connection())  # a task of its own, as a connection's handler is
    assert json.loads(JsonLineFormatter().format(record)) == {
        "time": "2025-05-01T12:00:00.250Z", "level": "INFO", "logger": "forty_thieves.play",
        "message": "a player joined as 'ann'", "match": "7QK2M4XJ9P3A", "connection": connection}
    assert TextFormatter().format(record) == (f"2025-05-01T12:00:00.250Z INFO forty_thieves.play: a player joined "
                                              f"as 'ann' (match 7QK2M4XJ9P3A, connection {connection})")
    outside = _record("listening")  # this test's own context: no connection was started here
    assert json.loads(JsonLineFormatter().format(outside)).keys() == {"time", "level", "logger", "message"}
    assert TextFormatter().format(outside) == "2025-05-01T12:00:00.250Z INFO forty_thieves.play: listening"


def test_a_watched_path_that_is_no_code_never_reaches_a_line() -> None:
    """``/matches/{code}/events`` sets the match before it is looked up: a line break in the path (``%0A``) must
    not start a forged line of the text format."""
    forged = "AB\n2025-05-01T12:00:00.000Z ERROR"

    async def inside_a_connection() -> logging.LogRecord:
        new_connection()
        in_match(forged)
        return _record("GET /matches/AB%0A... 404")

    line = TextFormatter().format(asyncio.run(inside_a_connection()))
    assert "\n" not in line and "(match" not in line, line
