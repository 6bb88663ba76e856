"""``forty-thieves practice``: a game alone on a deal by its game number, the real client against a real server.

The options are checked before anything is sent (a game number is digits, a bot ``LEVEL[:MOVES_PER_MIN]`` with a
pace of 1 .. 600, at most 3 bots, ``--ghost best`` needs the player's name). A scripted game with no ``--seed``
prints the number it picked; the match is that seed's deal (the engine's deal of the number is the board that
started, without a ready typed), one player, full undo, hints, no time limit, any deal; a move, an undo and a
hint are answered, and the results reveal the number as the seed.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from client_cli.commands import parse_bot
from client_cli.practice import game_number, practice_settings
from protocol import messages as m
from server.engine import Game, deal, find_variant
from server.views import view_message
from tests.integration.wsclient import public_state

from .conftest import ROOT, ServerProcess
from .test_message_line import plain_screen
from .test_race_cli import events
from .test_render import playing_state

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_the_game_number_is_read_as_the_server_takes_it() -> None:
    assert game_number("0042") == "0042"  # the seed string as typed: "0042" and "42" are two deals
    for bad in ("12a", "", "-3", "1x" * 150):
        with pytest.raises(argparse.ArgumentTypeError, match="digits only"):
            game_number(bad)
    for long in ("1" * 201, "1" * 300):  # digits, too many of them: said so, without the whole number
        with pytest.raises(argparse.ArgumentTypeError, match=f"^a game number has at most 200 digits, this one {len(long)}$"):
            game_number(long)
    assert game_number("9" * 200) == "9" * 200
    # Every seat counted, bots included; no bots or ghost field unless asked for (a server without them
    # refuses the fields).
    assert practice_settings("classic", "7", []) == {
        "variant": "classic", "players": 1, "seed": "7", "solvable_only": False, "undo": "full", "hints": True,
        "time_limit_s": 0}
    both = practice_settings("relaxed", "7", [parse_bot("club"), parse_bot("expert:45")], "ann")
    assert both["players"] == 3 and both["ghost"] == {"name": "ann"} and len(both["bots"]) == 2


@pytest.mark.parametrize("options, message", [
    (["--seed", "12x"], "digits only"),
    (["--bot", "strong:0"], "1..600"),
    (["--bot", "casual"] * 4, "at most 3 bots"),
    (["--seed", "7", "--ghost", "best"], "give --name NAME"),  # this machine holds no name's key yet
    (["--ghost", "ann"], "give its --seed NUMBER"),  # a random number: no recorded game of it to race
    (["--match", "ABC", "--seed", "7", "--ghost", "ann"], "not --seed"),
])
def test_options_the_server_would_refuse_are_refused_before_anything_is_sent(
        options: list[str], message: str, client_env: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "-m", "client_cli", "--server", "http://127.0.0.1:9", "practice",
                           *options], cwd=ROOT, env=client_env, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr, done.stderr


def test_a_scripted_game_alone_plays_the_deal_of_the_number_it_picked(server: ServerProcess,
                                                                      client_env: dict[str, str],
                                                                      tmp_path: Path) -> None:
    script = tmp_path / "alone.txt"
    script.write_text("s\nu\nhint\n")  # a draw is legal on every classic deal: 64 cards in the stock
    done = subprocess.run([sys.executable, "-m", "client_cli", "--server", server.url, "practice", "--name", "solo",
                           "--script", str(script), "--json"], cwd=ROOT, env=client_env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    said = re.search(r"^Game ([0-9]+) \(classic\), alone: match ([0-9A-Z]+), ", done.stderr, re.MULTILINE)
    assert said, done.stderr
    number, code = said.groups()
    assert 1 <= int(number) <= 999_999
    received = events(done.stdout)
    kinds = [event["type"] for event in received]
    assert kinds.count("started") == 1, kinds  # the script says no ready: the client said it at once

    variant = find_variant("classic")
    game = Game(deal(number, variant), variant, autoplay=True, undo="full")
    started = msgspec.convert(next(e for e in received if e["type"] == "started"), m.Started)
    assert started.view == view_message(game.position)  # the deal of the number, as the server showed it
    replies = [e for e in received if e["type"] in ("position", "suggestion")]
    assert [e["type"] for e in replies][:3] == ["position", "position", "suggestion"], replies
    assert replies[1]["moves"] == 2 and replies[1]["undos"] == 1 and msgspec.convert(
        replies[1]["view"], m.WireView) == started.view  # the draw undone: the deal again
    assert replies[2]["hints"] == 1 and replies[2]["command"], replies[2]
    results = msgspec.convert(received[-1], m.Results)
    assert results.seed == number and [row.name for row in results.ranking] == ["solo"]

    settings = public_state(server.url, code)["settings"]
    assert {key: settings[key] for key in ("variant", "players", "undo", "hints", "time_limit_s", "solvable_only")} == {
        "variant": "classic", "players": 1, "undo": "full", "hints": True, "time_limit_s": 0, "solvable_only": False}

    # That game raced again as a ghost: --match CODE deals the match's revealed seed, the ghost is solo's game.
    script.write_text("s\nresign\n")
    again = subprocess.run([sys.executable, "-m", "client_cli", "--server", server.url, "practice", "--name", "solo",
                            "--match", code, "--ghost", "solo", "--script", str(script), "--json"], cwd=ROOT,
                           env=client_env, capture_output=True, text=True, timeout=60, check=False)
    assert again.returncode == 0, again.stderr
    assert f"Game {number} (classic), alone against solo's game in match {code}: match " in again.stderr, again.stderr
    shown = events(again.stdout)
    ghost = msgspec.convert(next(e for e in shown if e["type"] == "ghost"), m.Ghost)
    assert (ghost.name, ghost.label, ghost.moves, ghost.status) == ("solo", "solo's game", 2, "resigned")
    assert msgspec.convert(next(e for e in shown if e["type"] == "started"), m.Started).view == started.view


def test_a_game_with_no_time_limit_shows_no_countdown_of_the_servers_24_h_cap() -> None:
    """The race screen's header: a timed game shows its time left; an untimed one (a game alone) only in the last
    hour of the server's cap of an untimed match."""
    state = playing_state(0)  # started at 1 s, 30 min to play; the screen's now is 70 s
    state.deadline_ms = 1_000 + 1_800_000
    timed = plain_screen(state)[0].rstrip()
    assert state.settings is not None
    state.settings = msgspec.structs.replace(state.settings, time_limit_s=0)
    state.deadline_ms = 1_000 + 86_400_000
    untimed = plain_screen(state)[0].rstrip()
    state.deadline_ms = 70_000 + 1_800_000  # the cap 30 min away
    near_the_cap = plain_screen(state)[0].rstrip()
    assert timed.endswith("(left 28:51)"), timed
    assert "left" not in untimed and untimed.endswith("time 1:09"), untimed
    assert near_the_cap.endswith("(left 30:00)"), near_the_cap
