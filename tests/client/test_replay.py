"""``forty-thieves replay``: every position of a record, forwards and backwards, as a real server replays it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from client_cli.replay import steps_of
from server.engine import GameRecord, UndoPolicy, deal, find_variant, format_record

from .conftest import ROOT, SEED, VARIANT, ServerProcess, free_port, solution


@pytest.fixture(scope="module")
def url(redis_url: str) -> Iterator[str]:
    """One real server for the module (``POST /replays`` keeps no state)."""
    process = ServerProcess(redis_url)
    yield process.url
    process.stop()


def record(moves: list[str]) -> str:
    variant = find_variant(VARIANT)
    return format_record(GameRecord(variant, True, UndoPolicy.SAFE, deal(SEED, variant), tuple(moves), SEED))


def test_steps_are_the_deal_then_one_per_command_refusals_shown_and_skipped(url: str) -> None:
    moves = solution()
    steps, variant = steps_of(record(moves[:3] + ["3-3"] + moves[3:]), url)
    assert variant == VARIANT and len(steps) == len(moves) + 2
    assert steps[0].command == "" and steps[0].view.stock == 64
    refused = steps[4]
    assert not refused.ok and "same column" in refused.reason and refused.view == steps[3].view
    assert steps[-1].status == "won" and steps[-1].moves == len(moves)


def test_replay_prints_every_step_when_not_on_a_terminal(client_env: dict[str, str], tmp_path: Path,
                                                          url: str) -> None:
    client_env["FTR_SERVER"] = url
    path = tmp_path / "game.json"
    path.write_text(record(solution()[:5]))
    done = subprocess.run([sys.executable, "-m", "client_cli", "replay", str(path), "--json"], cwd=ROOT,
                          env=client_env, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["step"] for line in lines] == list(range(6)) and lines[-1]["moves"] == 5
    done = subprocess.run([sys.executable, "-m", "client_cli", "replay", str(path)], cwd=ROOT, env=client_env,
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0 and "step 5/5" in done.stdout and "Stock: " in done.stdout
    path.write_text("{}")
    done = subprocess.run([sys.executable, "-m", "client_cli", "replay", str(path)], cwd=ROOT, env=client_env,
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2 and "not a game record" in done.stderr


def test_replay_into_a_pipe_closed_early_stops_quietly(client_env: dict[str, str], tmp_path: Path, url: str) -> None:
    """``forty-thieves replay game.json | head``: the reader leaves early; no BrokenPipeError traceback."""
    client_env["FTR_SERVER"] = url
    path = tmp_path / "game.json"
    path.write_text(record(solution()))
    with subprocess.Popen([sys.executable, "-m", "client_cli", "replay", str(path)], cwd=ROOT, env=client_env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.readline()
        process.stdout.close()  # what head does after its lines
        stderr = process.stderr.read().decode()
        process.wait(30)
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr


def test_without_a_server_the_replay_says_where_it_looked(client_env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    path.write_text(record(solution()[:2]))
    nobody = f"http://127.0.0.1:{free_port()}"
    done = subprocess.run([sys.executable, "-m", "client_cli", "--server", nobody, "replay", str(path)], cwd=ROOT,
                          env=client_env, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2 and f"cannot reach the server at {nobody}" in done.stderr, done.stderr
    assert done.stdout == ""


def test_a_servers_replay_shows_each_steps_time_the_player_and_how_the_game_ended(url: str) -> None:
    """A record from GET /matches/{code}/replays/{name}: times_ms and result give the clock and the ending."""
    from client_cli.render import screen, to_ansi
    from client_cli.replay import state_of

    moves = solution()[:4]
    data = json.loads(record(moves))
    data |= {"times_ms": [1_000, 2_500, 61_000, 62_000], "name": "ann",
             "result": {"status": "resigned", "moves": 4, "foundation": 0, "time_ms": 75_000}}
    steps, variant = steps_of(json.dumps(data), url)
    assert [s.time_ms for s in steps] == [0, 1_000, 2_500, 61_000, 75_000]  # the last: when the game ended
    assert [s.status for s in steps] == ["playing"] * 4 + ["resigned"] and steps[-1].legal == []
    third = to_ansi(screen(state_of(steps[3], 4, variant, "ann.json"), 80, 24, now=10**13), color=False)
    assert "time 1:01" in third and "ann.json (you)" in third
    last = to_ansi(screen(state_of(steps[4], 4, variant, "ann.json"), 80, 24, now=10**13), color=False)
    assert "time 1:15" in last and "gave up" in last
    plain = steps_of(record(moves), url)[0]
    assert [s.time_ms for s in plain] == [0] * 5 and plain[-1].status == "playing"  # a bare record has neither


def test_a_replay_file_with_a_huge_status_or_name_still_draws_at_once(url: str) -> None:
    """Bad input: a record's result status and name are free text; the screen crops them (it hung)."""
    import time

    from client_cli.render import screen
    from client_cli.replay import state_of

    data = json.loads(record(solution()[:2]))
    data |= {"result": {"status": "x" * 25, "moves": 2, "foundation": 0, "time_ms": 5}}
    steps, variant = steps_of(json.dumps(data), url)
    started = time.monotonic()
    lines = screen(state_of(steps[-1], 2, variant, "n" * 32_000), 80, 24, now=0)
    assert time.monotonic() - started < 10  # milliseconds now; before, it never returned
    assert len(lines) == 23 and all(line.cell_len <= 80 for line in lines)


def test_a_refused_step_names_cards_with_suit_symbols_like_the_rest_of_the_screen(url: str) -> None:
    """The replay's screen (the race screen's renderer) showed the engine's reason with card codes (2C, TC)."""
    from client_cli.render import screen, to_ansi
    from client_cli.replay import state_of

    moves = solution()[:3]
    steps, variant = steps_of(record([*moves, "w-1"]), url)
    refused = steps[-1]
    assert not refused.ok and refused.reason == "2C does not fit on TC"  # the engine's words, in notation
    shown = to_ansi(screen(state_of(refused, 4, variant, "ann"), 100, 24, now=0), 100, color=False)
    assert "REFUSED: 2♣ does not fit on 10♣" in shown, shown
    assert "2C" not in shown and "TC" not in shown
