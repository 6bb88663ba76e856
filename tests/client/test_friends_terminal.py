"""The race screen and the daily in a real terminal (tmux, 80x24): Tab's completions, the daily asks first."""

# ruff: noqa: F811 - pytest fixtures imported from test_interactive are parameters here
from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import httpx

from tests.integration.wsclient import create_match

from .conftest import ROOT, SEED, VARIANT, ServerProcess
from .test_interactive import Terminal, pytestmark, terminal  # noqa: F401 - the tmux fixture, its skip mark


def wrapped(terminal: Terminal) -> list[str]:
    """The screen's lines the terminal wrapped because they were wider than its 80 columns (tmux joins them
    again with ``capture-pane -J``), but for the command line typed at the shell: ``[]`` when every line the
    program printed fits."""
    joined = [line.rstrip() for line in terminal.tmux("capture-pane", "-p", "-J", "-t", "t").splitlines()]
    return [line for line in joined if len(line) > 80 and " -m client_cli " not in line]


def test_tab_lists_moves_on_the_help_line_without_card_counts(server: ServerProcess, terminal: Terminal) -> None:
    code = create_match(server.url, variant=VARIANT, seed=SEED, players=1)["code"]
    terminal.type(f"cd {shlex.quote(str(ROOT))} && {shlex.quote(sys.executable)} -m client_cli --server {server.url} "
                  f"join {code} --name carol")
    terminal.wait_for("Type ready")
    terminal.type("ready")  # the one player: the match starts
    terminal.wait_for("Foundations")
    terminal.type("3 3")
    before = terminal.wait_for("same column").splitlines()
    terminal.tmux("send-keys", "-t", "t", "Tab")
    deadline = time.monotonic() + 15
    while not any(line.startswith("Tab: ") for line in terminal.screen().splitlines()):
        assert time.monotonic() < deadline, terminal.screen()
        time.sleep(0.1)
    shown = terminal.screen().splitlines()
    assert "card" not in "\n".join(shown)  # no "2 cards" / "1 card" beside the moves
    message = next(i for i, line in enumerate(before) if "same column" in line)
    assert shown[message] == before[message]  # the message line is not drawn over
    offered = next(line for line in shown if line.startswith("Tab: "))
    assert " s " in offered + " " and "resign" in offered, offered
    terminal.tmux("send-keys", "-t", "t", "C-u")
    terminal.type("resign")
    asked = terminal.wait_for("Type resign again")
    assert "anything else plays on" in asked, asked  # the whole question fits the 80 columns
    assert httpx.get(f"{server.url}/matches/{code}", timeout=10).json()["players"][0]["status"] == "playing"
    terminal.type("resign")
    terminal.wait_for("Results")


def test_the_daily_asks_before_it_deals_and_leaving_it_says_so(server: ServerProcess, terminal: Terminal,
                                                               tmp_path: Path) -> None:
    def attempts() -> int:
        today = httpx.get(f"{server.url}/daily", timeout=10).json()
        return {v["variant"]: v["attempts"] for v in today["variants"]}["relaxed"]

    name = "daily-" + tmp_path.name[-8:].replace("_", "x")
    terminal.type(f"cd {shlex.quote(str(ROOT))} && {shlex.quote(sys.executable)} -m client_cli --server {server.url} "
                  f"daily --variant relaxed --name {name}; echo exit=$?")
    asked = terminal.wait_for("Ctrl-C")
    assert not wrapped(terminal), asked  # the intro and its question fit the 80 columns
    assert name in asked, asked
    before = attempts()
    terminal.type("")  # Enter: deal
    board = terminal.wait_for("Foundations")
    header = board.splitlines()[0]
    assert "Daily relaxed" in header, header
    assert attempts() == before + 1
    terminal.type("q")
    left = terminal.wait_for("exit=0")
    assert not wrapped(terminal), left  # the line saying how to come back fits the 80 columns
    assert "run the same daily command" in left.lower() and "join command" not in left and "exit=0" in left, left
