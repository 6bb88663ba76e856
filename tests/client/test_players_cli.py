"""Named players in the CLI: the key kept in the tokens file and sent with every join, the recovery code printed
once, record notices and head-to-head on the results, and ``me``, ``history``, ``player`` and ``recover``.

The words of the notices are pinned on protocol values; the rest runs ``python -m client_cli`` against a real
server and Redis. A race here is a chosen position one command from the end (``finish``), so two races of
the same deal take a second, and the first can be made longer by a detour (a king into an empty column and
back up): the second win on the deal then has fewer moves, a new record.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from client_cli.race import message_json
from client_cli.render import record_line, rivalry_line
from client_cli.tokens import TokenStore
from protocol import messages as m

from .conftest import ROOT, ServerProcess

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

NEAR_WIN = """Foundations: QS QS QC QC QH QH QD QD
Stock:
Waste:
Redeals left: 0
1: KS
2: KS
3: KC
4: KC
5: KH
6: KH
7: KD
8: KD
9:
10:
"""
"""A relaxed position with every card up but the eight kings, two columns empty: ``finish`` wins it at once;
``1-9`` then ``9-f`` first is a detour of two moves."""
DETOUR = ["1-9", "9-f", "finish"]
STRAIGHT = ["finish"]


def near_win_match(server: ServerProcess, players: int = 1) -> str:
    """A match of :data:`NEAR_WIN` (relaxed, no auto-play): its code."""
    response = httpx.post(server.url + "/matches", json={"variant": "relaxed", "deal": NEAR_WIN, "players": players,
                                                         "solvable_only": False, "autoplay": False}, timeout=10)
    assert response.status_code == 201, response.text
    return str(response.json()["code"])


def cli(server: ServerProcess, env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "client_cli", "--server", server.url, *args], cwd=ROOT, env=env,
                          input=stdin, capture_output=True, text=True, timeout=60, check=False)


def race(server: ServerProcess, env: dict[str, str], name: str, commands: list[str]) -> subprocess.CompletedProcess[str]:
    """``join`` a new :data:`NEAR_WIN` match alone as ``name`` with ``commands`` as its script."""
    return cli(server, env, "join", near_win_match(server), "--name", name, "--script", "-",
               stdin="".join(f"{c}\n" for c in commands))


def tokens(env: dict[str, str]) -> dict[str, Any]:
    return dict(json.loads((Path(env["FTR_CLIENT_DATA"]) / "tokens.json").read_text()))


def moves(count: int) -> str:
    return f"{count} move" if count == 1 else f"{count} moves"


def moves_of(out: str, name: str) -> int:
    """The moves of ``name``'s row in the printed results (`` 1  ann   won   0:01   3 ...``)."""
    row = next(line for line in out.splitlines() if line.split()[1:2] == [name] and line.split()[0] == "1")
    return int(row.split()[4])


def test_a_claimed_name_keeps_its_key_and_the_commands_read_its_games(server: ServerProcess,
                                                                       client_env: dict[str, str],
                                                                       tmp_path: Path) -> None:
    name = "cli-" + uuid.uuid4().hex[:8]  # names are kept for good on a server: a fresh one per run
    first = race(server, client_env, name, DETOUR)
    assert first.returncode == 0, first.stderr
    assert f"{name} is your name on this server now" in first.stdout
    code = first.stdout.split("Its recovery code, shown only this once")[1].splitlines()[1].strip()
    # the command to type, on two lines where one would pass 80 columns
    assert f"forty-thieves recover {name} {code} \\\n      --server {server.url}\n" in first.stdout, first.stdout
    assert max(len(line) for line in first.stdout.splitlines() if "recover" in line) <= 80
    key = tokens(client_env)[f"{server.url} players"][name]
    assert len(key) >= 20 and key not in first.stdout and code not in json.dumps(tokens(client_env))
    detour_moves = moves_of(first.stdout, name)
    assert "First win on deal " in first.stdout

    second = race(server, client_env, name, STRAIGHT)  # refused with bad_token unless the key went with the join
    assert second.returncode == 0, second.stderr
    assert "recovery code" not in second.stdout  # shown once: this join claimed nothing
    straight_moves = moves_of(second.stdout, name)
    assert straight_moves < detour_moves

    me = cli(server, client_env, "me", "--json")
    assert me.returncode == 0, me.stderr
    mine = json.loads(me.stdout)
    assert (mine["name"], mine["games"], mine["wins"]) == (name, 2, 2)
    history = cli(server, client_env, "history", "--json")
    assert history.returncode == 0, history.stderr
    games = json.loads(history.stdout)
    assert [(g["moves"], g["status"], g["rank"], g["of"], g["variant"]) for g in games] == [
        (straight_moves, "won", 1, 1, "relaxed"), (detour_moves, "won", 1, 1, "relaxed")]  # the newest first
    deal = games[0]["deal"]
    assert games[1]["deal"] == deal and deal.startswith("deal ")  # a chosen position's label
    assert (f"New record on {deal}: {moves(straight_moves)}, {detour_moves - straight_moves} fewer than your best"
            in second.stdout), second.stdout
    assert f"First win on {deal}: {moves(detour_moves)}" in first.stdout, first.stdout
    text = cli(server, client_env, "history")
    assert text.returncode == 0 and text.stdout.count(games[0]["deal"]) == 2, text.stdout

    other_machine = dict(client_env, FTR_CLIENT_DATA=str(tmp_path / "another machine"))
    anyone = cli(server, other_machine, "player", name.upper(), "--json")  # any case finds the name
    assert anyone.returncode == 0, anyone.stderr
    assert json.loads(anyone.stdout)["games"] == 2 and json.loads(anyone.stdout)["name"] == name
    stolen = race(server, other_machine, name, STRAIGHT)
    assert stolen.returncode == 2 and "missing or wrong" in stolen.stderr and "forty-thieves recover" in stolen.stderr
    assert cli(server, other_machine, "me").returncode == 2  # no key held there, no --name: said so

    recovered = cli(server, other_machine, "recover", name, code)
    assert recovered.returncode == 0, recovered.stderr
    new_code = recovered.stdout.split("Its recovery code, shown only this once")[1].splitlines()[1].strip()
    new_key = tokens(other_machine)[f"{server.url} players"][name]
    assert new_code != code and new_key != key
    third = race(server, other_machine, name, STRAIGHT)  # the recovered key races as the name
    assert third.returncode == 0, third.stderr
    assert json.loads(cli(server, other_machine, "me", "--json").stdout)["games"] == 3
    old_key = race(server, client_env, name, STRAIGHT)  # the first machine's key stopped working
    assert old_key.returncode == 2 and "missing or wrong" in old_key.stderr
    assert cli(server, client_env, "recover", name, code).returncode == 2  # and so did the old code
    assert cli(server, client_env, "player", "nobody-" + uuid.uuid4().hex[:8]).returncode == 2


def test_the_tokens_file_finds_a_key_in_any_case_and_reads_the_dailys_older_tokens(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "tokens.json")
    server = "http://example.org:8000"
    store.update(server, "daily", names={"Dora": "old-daily-token"})
    assert store.player_key(server, "Dora") == "old-daily-token" and store.player_key(server, "dora") == "old-daily-token"
    store.keep_player_key(server, "Ann", "key-1")
    assert store.player_key(server, "ann") == "key-1" and store.player_key(server, "Bob") == ""
    store.keep_player_key(server, "ANN", "key-2")  # one key per name, whatever its case
    assert store.player_keys(server) == {"Dora": "old-daily-token", "ANN": "key-2"}
    store.keep_player_key(server, "Dora", "new-key")
    assert store.player_key(server, "Dora") == "new-key"  # the players entry wins over the daily's older token
    store.forget_player_key(server, "dora")
    assert store.player_keys(server) == {"ANN": "key-2"} and store.player_key("http://other", "ANN") == ""


def test_record_notices_and_the_head_to_head_in_words() -> None:
    moves = m.RecordNote("ann", "classic", "seed 1234", "moves", 212, 221)
    assert record_line(moves, "ann") == "New record on deal seed 1234: 212 moves, 9 fewer than your best"
    assert record_line(moves, "bob") == "ann: new record on deal seed 1234: 212 moves, 9 fewer than their best"
    assert record_line(m.RecordNote("ann", "classic", "", "time", 211_000, 223_500), "ann") == \
        "New record in classic: 3:31.0, 0:12.5 faster than your best"
    assert record_line(m.RecordNote("ann", "relaxed", "deal 3f2a9c01be77", "moves", 3, -1), "ann") == \
        "First win on deal 3f2a9c01be77: 3 moves"
    assert record_line(m.RecordNote("ann", "relaxed", "", "cards", 87, 82), "ann") == \
        "New record in relaxed: 87 cards up, 5 more than your best"
    assert record_line(m.RecordNote("ann", "classic", "daily 2026-12-07", "time", 95_000, -1), "ann") == \
        "First win on the daily of 2026-12-07: 1:35.0"
    assert rivalry_line(m.Rivalry("ann", "bob", 23, 17, 1, 41)) == \
        "ann 23-17 bob between the two of them, over all their races (41, 1 drawn)"
    # On bob's own screen, bob's side first: the score reads as his.
    assert rivalry_line(m.Rivalry("ann", "bob", 23, 17, 1, 41), "bob") == \
        "bob 17-23 ann between the two of them, over all their races (41, 1 drawn)"


def test_a_joined_line_in_json_carries_none_of_its_secrets() -> None:
    line = json.loads(message_json(m.Joined("K7QM", "ann", "match-token", "player-key", "ABCD-EFGH-JKLM-NPQR")))
    assert line == {"type": "joined", "match": "K7QM", "name": "ann"}


def test_the_results_screen_of_round_three_shows_records_head_to_head_and_the_series_in_80x24() -> None:
    from tests.client.test_render import ANSI, assert_fits, playing_state

    state = playing_state(213)
    state.round = 3
    state.series = [{"name": "alice", "rounds_won": 2, "foundation": 300, "time_ms": 400_000},
                    {"name": "bob", "rounds_won": 1, "foundation": 250, "time_ms": 500_000}]
    records = [m.RecordNote("alice", "relaxed", "", "time", 65_000, 70_400),
               m.RecordNote("alice", "relaxed", "seed 4", "time", 65_000, 70_400),
               m.RecordNote("alice", "relaxed", "seed 4", "moves", 214, 230),
               m.RecordNote("bob", "relaxed", "", "cards", 9, 8)]
    state.apply(m.Results("abcDEF1234", [m.ResultRow(1, "alice", "won", 65_000, 214, 0, 0, 104),
                                         m.ResultRow(2, "bob", "resigned", 3_000, 12, 0, 0, 9)], "4", "c" * 64,
                          "n" * 32, records, [m.Rivalry("alice", "bob", 23, 17, 1, 41)]))
    text = ANSI.sub("", assert_fits(state))
    assert "New record on deal seed 4: 214 moves, 16 fewer than your best" in text
    assert "New record on deal seed 4: 1:05.0, 0:05.4 faster than your best" in text
    assert "bob: new record" not in text  # a player's screen: their own records only
    assert "alice 23-17 bob between the two of them, over all their races (41, 1 drawn)" in text
    assert "Series after round 3" in text and "bob" in text.split("Series after round 3")[1]
