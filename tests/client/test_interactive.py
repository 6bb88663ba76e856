"""The interactive client in a real terminal (tmux, 80x24): type moves, read the screen, quit and come back."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import ROOT, SEED, VARIANT, ServerProcess, run_client, solution

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux to drive a terminal")]


class Terminal:
    """One tmux pane of 80x24 on a private tmux server, running a shell."""

    def __init__(self, socket: str, env: dict[str, str]) -> None:
        self.socket = socket
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()
                           if k in ("FTR_CLIENT_DATA", "PATH", "PYTHONPATH", "HOME", "VIRTUAL_ENV", "REDIS_URL"))
        self.tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "24",
                  f"env -i {exports} TERM=xterm-256color LANG=C.UTF-8 bash --norc --noprofile")
        self.tmux("set-option", "-g", "status", "off")

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True,
                              timeout=10).stdout

    def type(self, text: str, enter: bool = True) -> None:
        self.tmux("send-keys", "-t", "t", "-l", text)
        if enter:
            self.tmux("send-keys", "-t", "t", "Enter")

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "t")

    def wait_for(self, text: str, timeout: float = 15) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.screen()
            if text in shown:
                return shown
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; the screen:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10, check=False)


@pytest.fixture
def terminal(client_env: dict[str, str], tmp_path: Path) -> Iterator[Terminal]:
    term = Terminal(f"ftr-test-{tmp_path.name}", client_env)
    yield term
    term.close()


def test_type_moves_read_the_screen_quit_and_come_back(server: ServerProcess, client_env: dict[str, str],
                                                       terminal: Terminal, tmp_path: Path) -> None:
    from tests.integration.wsclient import create_match

    created = create_match(server.url, variant=VARIANT, seed=SEED, players=2)
    code = created["code"]
    (tmp_path / "bob.txt").write_text("")  # bob says ready, then resigns at once when the deal comes
    join = f"{shlex.quote(sys.executable)} -m client_cli --server {server.url} join {code} --name carol"
    terminal.type(f"cd {shlex.quote(str(ROOT))} && {join}")
    lobby = terminal.wait_for("Type ready")
    assert f"forty-thieves join {code}" in lobby and "carol (you)" in lobby
    terminal.type("ready")
    bob = run_client(["--server", server.url, "join", code, "--name", "bob", "--script", str(tmp_path / "bob.txt")],
                     client_env)
    board = terminal.wait_for("Foundations")
    assert "Stock 64" in board and " 1    2    3" in board and "♣" in board
    lines = board.splitlines()
    assert len(lines) <= 24 and max(len(line) for line in lines) <= 80
    first = solution()[:4]
    assert first == ["s", "s", "w-3", "7-3"]
    terminal.type("d")  # short for s
    terminal.wait_for("moves 1 ")
    terminal.type("s")
    terminal.wait_for("moves 2 ")
    terminal.type("w 3")  # short for w-3
    terminal.wait_for("moves 3 ")
    terminal.type("73")  # short for 7-3
    shown = terminal.wait_for("moves 4 ")
    assert "Stock 62" in shown
    terminal.type("3 3")
    assert "same column" in terminal.wait_for("same column")
    assert "moves 4 " in terminal.screen()  # a refused command changes nothing
    terminal.type("?")
    terminal.wait_for("Tab completes the legal moves")
    terminal.type("q")  # leave; the token file lets the same command come back to the same game
    terminal.wait_for("your game goes on")
    terminal.type(join)
    back = terminal.wait_for("moves 4 ")
    assert "Stock 62" in back and "carol (you)" in back
    terminal.type("resign")
    terminal.wait_for("Type resign again")  # resign asks first
    terminal.type("resign")
    results = terminal.wait_for("Results")
    assert "bob" in results and "carol" in results and "resigned" in results
    bob.communicate(timeout=30)
    assert bob.returncode == 0
    terminal.type("q")
    terminal.wait_for("seed '4'")
