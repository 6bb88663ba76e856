"""``--script -`` through a real pipe: each line is played as it arrives, its effect seen before the next is written
(a program driving the client live), and the end of input ends the script as before."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
import uuid
from typing import Any

import httpx
import pytest

from tests.integration.wsclient import create_match

from .conftest import ROOT, SEED, VARIANT, ServerProcess

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class LiveClient:
    """``python -m client_cli ARGS --json`` with a pipe on its standard input, its JSON lines read as they come."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "client_cli", *args, "--script", "-", "--json"],
                                        cwd=ROOT, env=env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def write(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def until(self, kind: str, timeout: float = 30.0) -> dict[str, Any]:
        """The next message of type ``kind`` the client printed (those before it are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            if line is None:
                raise AssertionError(f"the client exited before a {kind!r}: {self.stderr()}")
            message = json.loads(line)
            if message["type"] == kind:
                return message  # type: ignore[no-any-return]

    def none_within(self, seconds: float) -> list[dict[str, Any]]:
        """The messages printed within ``seconds`` (the client still running)."""
        seen = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.05)
            except queue.Empty:
                continue
            assert line is not None, self.stderr()
            seen.append(json.loads(line))
        return seen

    def stderr(self) -> str:
        if self.process.poll() is None:
            return ""
        assert self.process.stderr is not None
        return self.process.stderr.read()

    def end(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(60)

    def kill(self) -> None:
        """Stop the client if it still runs, and close the pipes."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            if pipe is not None and not pipe.closed:
                try:
                    pipe.close()
                except BrokenPipeError:
                    pass


def player_moves(server: ServerProcess, code: str, name: str) -> int:
    state = httpx.get(f"{server.url}/matches/{code}", timeout=10).json()
    return int(next(p["moves"] for p in state["players"] if p["name"] == name))


def test_join_plays_each_line_of_a_pipe_as_it_arrives(server: ServerProcess, client_env: dict[str, str]) -> None:
    """The client joined and the race started with nothing written yet (it read the whole input first before);
    each draw written is played and answered, and seen over HTTP, before the next is written; a line the client
    cannot use is told at once; closing the pipe resigns the rest of the game and ends with the results."""
    created = create_match(server.url, variant=VARIANT, seed=SEED, players=1, solvable_only=False)
    live = LiveClient(["--server", server.url, "join", created["code"], "--name", "solo"], client_env)
    try:
        live.until("started")
        assert [m for m in live.none_within(0.5) if m["type"] == "position"] == []  # nothing played unasked
        assert player_moves(server, created["code"], "solo") == 0
        for count in (1, 2):
            live.write("s")
            position = live.until("position")
            assert position["command"] == "s" and position["moves"] == count and position["status"] == "playing"
            assert player_moves(server, created["code"], "solo") == count  # stored before the next line exists
        live.write("no such command here")
        assert live.until("client_error")["line"] == "no such command here"
        assert live.end() == 0, live.stderr()
        resigned = live.until("position")
        assert resigned["command"] == "resign" and resigned["status"] == "resigned"
        assert live.until("results")["ranking"][0]["name"] == "solo"
    finally:
        live.kill()


def test_daily_waits_for_the_first_line_then_plays_each_as_it_arrives(server: ServerProcess,
                                                                      client_env: dict[str, str]) -> None:
    """The daily starts its attempt only once a first command arrives (an empty input must not spend the
    day), then plays each line as it comes, as ``join`` does."""
    name = "live-" + uuid.uuid4().hex[:8]
    live = LiveClient(["--server", server.url, "daily", "--variant", "relaxed", "--name", name], client_env)
    try:
        assert live.none_within(1.0) == []  # no attempt started while no command has come
        today = httpx.get(f"{server.url}/daily", timeout=10).json()["date"]
        board = httpx.get(f"{server.url}/daily/{today}/relaxed/leaderboard", timeout=10)
        assert board.status_code == 200 and name not in board.text, board.text
        live.write("s")
        live.until("started")
        first = live.until("position")
        assert first["command"] == "s" and first["moves"] == 1
        assert [m for m in live.none_within(0.5) if m["type"] == "position"] == []
        live.write("s")
        assert live.until("position")["moves"] == 2
        assert live.end() == 0, live.stderr()
        assert live.until("position")["command"] == "resign"
        assert live.until("results")["ranking"][0]["name"] == name
    finally:
        live.kill()


async def test_input_lines_come_as_written_from_a_pipe_and_whole_from_a_file(tmp_path: Any) -> None:
    """:func:`client_cli.join.stdin_lines`: from a pipe each line as soon as it is written (a line cut in two
    writes, a multi-byte character cut in two, CRLF), the last one without a line end at EOF; a regular file
    (``< file``), which cannot be waited on, whole."""
    import asyncio
    import os

    from client_cli.join import stdin_lines

    read_end, write_end = os.pipe()
    lines = stdin_lines(read_end)
    try:
        os.write(write_end, b"s\r\n3-")
        assert await asyncio.wait_for(anext(lines), 5) == "s"
        nothing = asyncio.ensure_future(anext(lines))
        await asyncio.sleep(0.2)
        assert not nothing.done()  # "3-" is not a line yet
        os.write(write_end, "7 \xe2".encode("latin-1"))
        os.write(write_end, b"\x99\xa5\nlast")
        assert await asyncio.wait_for(nothing, 5) == "3-7 \u2665"
        os.close(write_end)
        assert [line async for line in lines] == ["last"]
    finally:
        await lines.aclose()
        os.close(read_end)

    script = tmp_path / "script.txt"
    script.write_bytes(b"s\n# a comment\n1-2\n")
    fd = os.open(script, os.O_RDONLY)
    try:
        assert [line async for line in stdin_lines(fd)] == ["s", "# a comment", "1-2"]
    finally:
        os.close(fd)
