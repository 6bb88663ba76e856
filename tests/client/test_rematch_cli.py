"""The interactive client's ``rematch`` on the results screen: into round 2, raced there, the series shown."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import httpx
import pytest

from .conftest import ROOT, SEED, VARIANT, run_client
from .test_interactive import Terminal, terminal  # noqa: F401 - the fixture

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux to drive a terminal")]


def test_rematch_on_the_results_screen_races_round_two_and_shows_the_series(
        make_server, client_env: dict[str, str], terminal: Terminal, tmp_path: Path) -> None:  # noqa: F811
    from tests.integration.wsclient import create_match

    server = make_server(FTR_REMATCH_WINDOW_S="1")  # bob never asks: round 2 starts with carol after 1 s
    created = create_match(server.url, variant=VARIANT, seed=SEED, players=2)
    code = created["code"]
    (tmp_path / "bob.txt").write_text("")  # bob resigns as soon as the deal comes, and leaves after the results
    join = f"{shlex.quote(sys.executable)} -m client_cli --server {server.url} join {code} --name carol"
    terminal.type(f"cd {shlex.quote(str(ROOT))} && {join}")
    terminal.wait_for("Type ready")
    terminal.type("ready")
    bob = run_client(["--server", server.url, "join", code, "--name", "bob", "--script", str(tmp_path / "bob.txt")],
                     client_env)
    terminal.wait_for("Foundations")
    terminal.type("resign")
    terminal.wait_for("Type resign again")  # resign asks first
    terminal.type("resign")
    terminal.wait_for("Type rematch")
    bob.communicate(timeout=30)
    terminal.type("rematch")
    board = terminal.wait_for("Stock ", timeout=20)  # round 2's deal (the results show no stock)
    assert "moves 0" in board
    next_code = httpx.get(f"{server.url}/matches/{code}", timeout=10).json()["next_round"]
    assert next_code and next_code in board
    tokens = json.loads((Path(client_env["FTR_CLIENT_DATA"]) / "tokens.json").read_text())
    assert any(next_code in key and "carol" in entry.get("players", {}) for key, entry in tokens.items())
    terminal.type("resign")
    terminal.wait_for("Type resign again")  # resign asks first
    terminal.type("resign")
    shown = terminal.wait_for("Series after round 2")
    round_2 = httpx.get(f"{server.url}/matches/{next_code}", timeout=10).json()
    assert round_2["round"] == 2 and [p["name"] for p in round_2["players"]] == ["carol"]
    standings = round_2["series"]["standings"]
    assert {s["name"] for s in standings} == {"bob", "carol"}
    for standing in standings:  # each standing's line: name, rounds won, cards
        assert any(standing["name"] in line and f" {standing['rounds_won']} " in line
                   and f" {standing['foundation']} " in line for line in shown.splitlines()), shown
    terminal.type("q")
    terminal.wait_for("seed")


async def test_watch_follow_goes_on_to_the_next_round(server, client_env: dict[str, str]) -> None:
    import asyncio

    from protocol import messages as m
    from tests.integration.wsclient import Player, create_match

    created = create_match(server.url, variant=VARIANT, seed=SEED, players=1)
    code = created["code"]
    watcher = run_client(["--server", server.url, "watch", code, "--follow", "--follow-wait", "3",
                          "--interval", "0.2"], client_env)

    async def two_rounds() -> str:
        ann = Player(server.ws_url)
        await ann.connect()
        await ann.join(code, "ann")
        await ann.send(m.Ready())
        await ann.expect(m.Started)
        await ann.resign()
        await ann.expect(m.Results)
        await asyncio.sleep(0.5)  # the watcher prints round 1's results and waits for a rematch
        await ann.send(m.Rematch())
        answer = await ann.expect(m.NextRound)
        await ann.send(m.Resume(answer.match, answer.token))
        await ann.expect(m.Started)
        ann.seq = 0
        await ann.resign()
        await ann.expect(m.Results)
        await ann.close()
        return answer.match

    next_code = await two_rounds()
    out, err = watcher.communicate(timeout=40)
    assert watcher.returncode == 0, err
    assert f"round 2: match {next_code}" in out
    assert out.count("seed ") == 2  # both rounds' results, each with its revealed seed


async def test_the_results_screen_learns_who_asked_for_a_rematch(server, client_env: dict[str, str],
                                                                 tmp_path: Path) -> None:
    """The client leaves the match's socket at the results; a friend's ``rematch`` must still reach the results
    screen ("ann wants a rematch"), or the player never learns a round is waiting (and it starts without them
    once the window is over)."""
    import asyncio
    import io
    import re

    from client_cli.race import RaceClient, run_script
    from client_cli.render import screen, to_ansi
    from client_cli.tokens import TokenStore
    from protocol import messages as m
    from tests.integration.wsclient import Player, create_match

    code = create_match(server.url, variant=VARIANT, seed=SEED, players=2)["code"]
    bob = RaceClient(server.url, code, "bob", store=TokenStore(tmp_path / "tokens.json"), auto_ready=True)
    ann = Player(server.ws_url)
    await ann.connect()
    await ann.join(code, "ann")
    await ann.send(m.Ready())
    bob_plays = asyncio.ensure_future(run_script(bob, [], as_json=False, out=io.StringIO()))  # resigns at once
    await ann.expect(m.Started)
    await ann.resign()
    await ann.expect(m.Results)
    assert await asyncio.wait_for(bob_plays, 30) == 0 and bob.state.phase == "finished"
    follower = asyncio.ensure_future(bob.follow_rematch(every_s=0.2))
    try:
        await ann.send(m.Rematch())
        await ann.expect(m.NextRound)
        for _ in range(100):
            if bob.state.rematch:
                break
            await asyncio.sleep(0.1)
        assert bob.state.rematch == ["ann"]
        shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", to_ansi(screen(bob.state, 80, 24), 80))
        assert "ann wants a rematch. Type rematch for the next round; q quits." in shown, shown
    finally:
        follower.cancel()
        await asyncio.gather(follower, return_exceptions=True)
        await ann.close()
