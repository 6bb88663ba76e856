"""The settings: one declaration each, read and checked at start (a bad value names its variable), listed by
``forty-thieves-server --help``; ``--version`` prints the version line."""

from __future__ import annotations

import dataclasses
import socket

import platformdirs
import pytest

import server.settings as module
from server.__main__ import bind, main, start_line
from server.about import version_line
from server.settings import DECLARATIONS, ENVIRONMENT_VARIABLES, SettingError, Settings


def test_every_field_is_declared_once_with_its_own_variable() -> None:
    names = [field.name for field in dataclasses.fields(Settings)]
    assert list(DECLARATIONS) == names
    assert len(set(ENVIRONMENT_VARIABLES)) == len(ENVIRONMENT_VARIABLES) == len(names)
    assert all(name == "REDIS_URL" or name.startswith("FTR_") for name in ENVIRONMENT_VARIABLES)


def test_unset_variables_give_the_declared_defaults() -> None:
    settings = Settings.from_environ({})
    assert settings == Settings(data_dir=platformdirs.user_data_dir("forty-thieves-race"))
    assert (settings.port, settings.rate, settings.daily_variants, settings.redis_url) == (8000, 20.0,
                                                                                          ("classic", "relaxed"), None)


def test_set_variables_are_parsed() -> None:
    settings = Settings.from_environ({
        "FTR_PORT": "9001", "FTR_RATE": "2.5", "FTR_DAILY_VARIANTS": " relaxed , classic ", "REDIS_URL": "redis://r:1/2",
        "FTR_PUBLIC_URL": " https://race.example.org/ ", "FTR_DATA_DIR": "", "FTR_DAILY_SECRET": "",
        "FTR_CLOCK_OFFSET_MS": "-250", "FTR_UNTIMED_LIMIT_S": "0"})
    assert settings.port == 9001 and settings.rate == 2.5
    assert settings.daily_variants == ("relaxed", "classic")
    assert settings.redis_url == "redis://r:1/2" and settings.public_url == "https://race.example.org"
    assert settings.data_dir == platformdirs.user_data_dir("forty-thieves-race")  # empty: the default folder
    assert settings.daily_secret is None and settings.clock_offset_ms == -250 and settings.untimed_limit_s == 0
    assert Settings.from_environ({"FTR_DAILY_VARIANTS": ""}).daily_variants == ()  # no daily challenge


@pytest.mark.parametrize(("variable", "value", "says"), [
    ("FTR_PORT", "abc", "not a whole number"),
    ("FTR_PORT", "65536", "0 to 65535"),
    ("FTR_PORT", "-1", "0 to 65535"),
    ("FTR_RATE", "-1", "above 0"),
    ("FTR_RATE", "0", "above 0"),
    ("FTR_RATE", "inf", "above 0"),
    ("FTR_COUNTDOWN_S", "nan", "at least 0"),
    ("FTR_COUNTDOWN_S", "-0.5", "at least 0"),
    ("FTR_SOLVER_WORKERS", "-2", "at least 0"),
    ("FTR_SOLVER_WORKERS", "1.5", "not a whole number"),
    ("FTR_MAX_PLAYERS", "0", "at least 1"),
    ("FTR_DAILY_VARIANTS", "classic,klondike", "'klondike' is not a variant"),
    ("FTR_SOLVER", "pyhton", "python or c"),
    ("REDIS_URL", "localhost:6379", "redis://"),
    ("REDIS_URL", "redis://127.0.0.1:notaport/0", "Port could not be cast to integer"),
    ("REDIS_URL", "redis://127.0.0.1:99999/0", "Port out of range"),
    ("REDIS_URL", "redis://r:6379/0?socket_timeout=soon", "socket_timeout"),
    ("FTR_PUBLIC_URL", "race.example.org", "http://"),
    ("FTR_HOST", " ", "empty"),
])
def test_a_bad_value_is_one_line_naming_its_variable(variable: str, value: str, says: str) -> None:
    with pytest.raises(SettingError) as raised:
        Settings.from_environ({variable: value})
    text = str(raised.value)
    assert text.startswith(f"{variable}={value!r}: ") and says in text, text
    assert "\n" not in text


@pytest.mark.parametrize(("value", "quoted"), [
    ("redis://ann:hunter2@127.0.0.1:notaport/0", "redis://ann:***@127.0.0.1:notaport/0"),
    ("redis://:hunter2@127.0.0.1:99999/0", "redis://:***@127.0.0.1:99999/0"),
    ("unix:///run/redis.sock?db=x&password=hunter2", "unix:///run/redis.sock?db=x&password=***"),
])
def test_a_bad_redis_url_is_quoted_without_its_password(value: str, quoted: str) -> None:
    """The line goes to stderr, so to a container's log: the rest of the URL is quoted, its password never."""
    with pytest.raises(SettingError) as raised:
        Settings.from_environ({"REDIS_URL": value})
    text = str(raised.value)
    assert text.startswith(f"REDIS_URL={quoted!r}: ") and "hunter2" not in text, text


def test_the_module_table_has_a_row_per_declaration() -> None:
    doc = module.__doc__ or ""
    rows = [line for line in doc.splitlines() if line.startswith("``")]
    assert [row.split("``")[1] for row in rows] == list(ENVIRONMENT_VARIABLES)
    for row, declared in zip(rows, DECLARATIONS.values(), strict=True):
        assert row.split()[1] == declared.shown.split()[0], row
        assert declared.meaning.split()[0] in row


def test_help_lists_every_setting_with_its_default_and_the_options_have_help(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    for declared in DECLARATIONS.values():
        if declared.variable != "FTR_DATA_DIR":
            assert f"{declared.variable} (default: {declared.shown})" in text, declared.variable
    # The data folder's default is the user data folder of this machine, shown as the path itself.
    assert f"FTR_DATA_DIR (default: {platformdirs.user_data_dir('forty-thieves-race')})" in text
    flat = " ".join(text.split())
    assert "--host HOST address to listen on (default: FTR_HOST, else 127.0.0.1" in flat
    assert "--port PORT port to listen on (default: FTR_PORT, else 8000)" in flat


def test_version_prints_the_version_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == version_line("forty-thieves-server")


def test_version_says_the_solver_runs_its_pure_search_under_ftr_solver_python(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """As the start's log line does: the C search is built here (the suite's install has a compiler), but
    ``FTR_SOLVER=python`` keeps the solver off it."""
    monkeypatch.setenv("FTR_SOLVER", "python")
    with pytest.raises(SystemExit):
        main(["--version"])
    line = capsys.readouterr().out.strip()
    assert line.endswith("solver off (pure Python))"), line
    assert line == version_line("forty-thieves-server", pure_solver=True)


def test_a_bad_port_option_is_argparses_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--port", "abc"])
    assert exited.value.code == 2
    assert "argument --port: not a whole number" in capsys.readouterr().err


def test_a_host_name_is_bound_as_uvicorn_binds_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--host localhost`` listens on IPv4 as uvicorn's own bind does (IPv6 only for an address with a
    colon), even where the resolver gives ``::1`` first (an /etc/hosts with ``::1 localhost`` first)."""
    resolved = socket.getaddrinfo("::1", 0, type=socket.SOCK_STREAM) + socket.getaddrinfo(
        "127.0.0.1", 0, type=socket.SOCK_STREAM)
    monkeypatch.setattr(socket, "getaddrinfo", lambda *args, **kwargs: resolved)
    for host, family in (("localhost", socket.AF_INET), ("127.0.0.1", socket.AF_INET), ("::1", socket.AF_INET6)):
        sock = bind(host, 0)
        try:
            assert sock.family == family, host
        finally:
            sock.close()


@pytest.mark.parametrize(("host", "where"), [("::", "listening on [::]:8000;"),
                                             ("::1", "listening on [::1]:8000 (this machine only"),
                                             ("0.0.0.0", "listening on 0.0.0.0:8000;"),
                                             ("127.0.0.1", "listening on 127.0.0.1:8000 (this machine only")])
def test_the_start_line_writes_an_ipv6_address_in_brackets(host: str, where: str) -> None:
    assert start_line(host, 8000, "").startswith(where)
