"""``forty-thieves daily``, as a subprocess, against a real server and Redis."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from .conftest import ROOT, ServerProcess

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def daily(server: ServerProcess, env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "client_cli", "--server", server.url, "daily", *args], cwd=ROOT,
                          env=env, input=stdin, capture_output=True, text=True, timeout=120, check=False)


def test_play_today_once_then_the_leaderboard(server: ServerProcess, client_env: dict[str, str],
                                              tmp_path: Path) -> None:
    name = "cli-" + uuid.uuid4().hex[:8]  # names are global on a server: a fresh one per run
    played = daily(server, client_env, "--variant", "relaxed", "--name", name, "--script", "-", "--json",
                   stdin="s\ns\nnot-a-command\n")
    assert played.returncode == 0, played.stderr
    messages = [json.loads(line) for line in played.stdout.splitlines() if line.strip()]
    kinds = [message["type"] for message in messages]
    assert "started" in kinds and kinds[-1] == "results"  # the attempt was still there to play
    # The attempt claimed the name: its recovery code once, on standard error; no secret in the JSON lines.
    assert f"{name} is your name on this server now" in played.stderr and "forty-thieves recover" in played.stderr
    assert "player_key" not in played.stdout and "recovery_code" not in played.stdout
    positions = [message for message in messages if message["type"] == "position"]
    assert [p["command"] for p in positions] == ["s", "s", "resign"] and positions[-1]["status"] == "resigned"
    results = messages[-1]
    assert results["seed"] == "" and [r["name"] for r in results["ranking"]] == [name]
    today = httpx.get(server.url + "/daily", timeout=30).json()
    assert results["commitment"] == {v["variant"]: v["commitment"] for v in today["variants"]}["relaxed"]
    tokens = json.loads((Path(client_env["FTR_CLIENT_DATA"]) / "tokens.json").read_text())
    assert tokens[f"{server.url} players"][name]  # the name's player key, kept for later races and days
    # The attempt is in the name's history, without the day's seed (secret while anyone may still play it).
    history = subprocess.run([sys.executable, "-m", "client_cli", "--server", server.url, "history", "--json"],
                             cwd=ROOT, env=client_env, capture_output=True, text=True, timeout=60, check=False)
    assert history.returncode == 0, history.stderr
    [attempt] = json.loads(history.stdout)
    assert (attempt["kind"], attempt["deal"], attempt["seed"], attempt["status"]) == (
        "daily", f"daily {today['date']}", None, "resigned")

    again = daily(server, client_env, "--variant", "relaxed", "--name", name, "--script", "-", stdin="s\n")
    assert again.returncode == 2 and "one attempt a day" in again.stderr

    elsewhere = dict(client_env, FTR_CLIENT_DATA=str(tmp_path / "another machine"))
    stolen = daily(server, elsewhere, "--variant", "relaxed", "--name", name, "--script", "-", stdin="s\n")
    assert stolen.returncode == 2 and "is missing or wrong" in stolen.stderr

    board = daily(server, client_env, "--leaderboard", "--variant", "relaxed", "--json")
    assert board.returncode == 0, board.stderr
    shown = json.loads(board.stdout)
    assert shown["reveal"] is None and shown["leaderboard"]["date"] == today["date"]
    mine = [e for e in shown["leaderboard"]["entries"] if e["name"] == name]
    assert len(mine) == 1 and mine[0]["status"] == "resigned" and mine[0]["moves"] == 2
    text = daily(server, client_env, "--leaderboard", "--variant", "relaxed")
    assert text.returncode == 0 and name in text.stdout and "live" in text.stdout

    bad = daily(server, client_env, "--leaderboard", "--date", "2026-02-30")
    assert bad.returncode == 2 and "not a date" in bad.stderr
    assert daily(server, client_env, "--variant", "relaxed").returncode == 2  # no --name


def test_an_empty_script_does_not_spend_the_day(server: ServerProcess, client_env: dict[str, str]) -> None:
    """A script that ran out resigns; with no command at all (stdin not a terminal and empty, as under cron or
    `< /dev/null`), the one attempt of the day would be spent by nothing: the client refuses before asking."""
    name = "cli-" + uuid.uuid4().hex[:8]
    for stdin in ("", "\n# only a comment\n"):
        empty = daily(server, client_env, "--variant", "relaxed", "--name", name, stdin=stdin)
        assert empty.returncode == 2 and "no command" in empty.stderr, (empty.stdout, empty.stderr)
    played = daily(server, client_env, "--variant", "relaxed", "--name", name, "--script", "-", "--json",
                   stdin="s\n")
    assert played.returncode == 0, played.stderr
    kinds = [json.loads(line)["type"] for line in played.stdout.splitlines() if line.strip()]
    assert "started" in kinds and kinds[-1] == "results"  # the attempt was still there to play


def test_dates_and_variants_stay_in_their_path_segment(server: ServerProcess, client_env: dict[str, str]) -> None:
    """A --date or --variant with a "/" or "?" names no other route (an SSE stream made the client hang)."""
    date = httpx.get(server.url + "/daily", timeout=30).json()["date"]
    odd = daily(server, client_env, "--leaderboard", "--variant", "relaxed", "--date", f"{date}/relaxed/events?")
    assert odd.returncode == 2 and "not a date" in odd.stderr, (odd.stdout, odd.stderr)
    for variant in ("relaxed/x", "../matches"):  # refused (404 not_found), never another route's answer
        odd = daily(server, client_env, "--leaderboard", "--variant", variant)
        assert odd.returncode == 2 and "no such path" in odd.stderr, (odd.stdout, odd.stderr)
        odd = daily(server, client_env, "--variant", variant, "--name", "someone", "--script", "-", stdin="s\n")
        assert odd.returncode == 2 and "no such path" in odd.stderr, (odd.stdout, odd.stderr)


def test_a_long_board_says_how_many_are_not_shown() -> None:
    from client_cli.daily import board_lines

    entry = {"rank": 1, "name": "ann", "status": "won", "time_ms": 61_000, "moves": 90, "undos": 0, "hints": 0,
             "foundation": 104}
    board = {"date": "2026-11-30", "variant": "classic", "final": False, "total": 250, "offset": 0, "limit": 200,
             "entries": [entry] * 200}
    lines = board_lines(board, None)
    assert len(lines) == 2 + 200 + 1 and "50 more" in lines[-1]
    assert "more" not in board_lines(dict(board, total=200), None)[-1]
