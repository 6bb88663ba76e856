"""``forty-thieves create`` options checked before anything is sent, and the join line printed for friends."""

from __future__ import annotations

import subprocess
import sys

import pytest

from client_cli.server_link import DEFAULT_SERVER, join_link, server_option


@pytest.mark.parametrize("value, message", [("-5", "0 (no limit) .. 86400"), ("86401", "0 (no limit) .. 86400"),
                                            ("ten", "not a whole number")])
def test_a_time_limit_the_server_would_refuse_is_refused_naming_the_option(value: str, message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "client_cli", "--server", "http://127.0.0.1:9", "create",
                           "--time-limit", value], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert "--time-limit" in done.stderr and message in done.stderr


def test_friends_are_told_the_server_unless_it_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FTR_SERVER", "http://race.example:8000")  # the host's own setting: friends lack it
    assert server_option("http://race.example:8000") == " --server http://race.example:8000"
    assert server_option(DEFAULT_SERVER) == ""


def test_the_browser_link_friends_open_is_the_join_page_of_the_code() -> None:
    assert join_link("http://race.example:8000/", "ab3k") == "http://race.example:8000/join/ab3k"
    assert join_link(DEFAULT_SERVER, "a b/c") == "http://localhost:8000/join/a%20b%2Fc"
