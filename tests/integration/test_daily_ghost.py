"""A practice of a revealed day races one of that day's attempts as a ghost, end to end on a real server and Redis.

Two server processes in turn on one database, as in test_daily_habit.py: the first's clock
(``FTR_CLOCK_OFFSET_MS``) is ten minutes before midnight UTC, where Ann wins her attempt and bob resigns his; the
second's is just past that midnight, so it closes the day and reveals it. Then practices ask for a ghost: the
``ghost`` frame each gets is checked against a timeline computed here, with the engine alone, from the attempt's
public replay record (``GET /daily/{date}/{variant}/replay/{name}``); refusals create nothing; and the
command-line client's ``practice --day`` races the same ghost.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
import redis

from client_cli.practice import practice as cli_practice
from client_cli.server_link import ClientError
from protocol import messages as m
from server.engine import Game, find_variant, parse_position

from .conftest import ROOT, ServerProcess
from .test_daily_day import CARD, SECRET, VARIANT, Attempt, Seen, deal_of_the_day
from .wsclient import Player

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

DB = 3
DAY_MS = 86_400_000


def offset_to(target_ms: int) -> str:
    return str(target_ms - int(time.time() * 1000))


def expected_timeline(record: dict[str, Any]) -> list[tuple[int, int, int]]:
    """The progress of a public game record, replayed here: the deal after its auto-play, then after each
    command its time, the moves and the cards up."""
    variant = find_variant(record["variant"])
    game = Game(parse_position(record["deal"], variant), variant, autoplay=record["autoplay"], undo=record["undo"])
    points = [(0, 0, game.position.foundation_cards)]
    for command, ms in zip(record["moves"], record["times_ms"], strict=True):
        game.play(command)
        points.append((ms, game.moves, game.position.foundation_cards))
    return points


def match_metas(url: str) -> int:
    with redis.Redis.from_url(url) as client:
        return sum(1 for _ in client.scan_iter(match="{m:*}:meta"))


async def test_a_practice_races_the_days_top_attempt_as_a_ghost(redis_url: str, tmp_path: Path) -> None:
    url = redis_url.rsplit("/", 1)[0] + f"/{DB}"
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    midnight = (int(time.time() * 1000) // DAY_MS + 1) * DAY_MS
    env = {"FTR_DAILY_SECRET": SECRET, "FTR_DAILY_VARIANTS": VARIANT}
    connections: list[Player] = []
    server = ServerProcess(url, FTR_CLOCK_OFFSET_MS=offset_to(midnight - 600_000), **env)
    try:
        seen = Seen()
        date = seen.get(server.url + "/daily").json()["date"]
        _, _, solution = deal_of_the_day(date, VARIANT)
        ann, bob = (Attempt(server, seen, name, connections) for name in ("Ann", "bob"))
        await ann.begin()
        await ann.play(solution)
        assert ann.replies[-1].status == "won"
        await bob.begin()
        await bob.play(solution[:6])
        await bob.resign()
        # Before the reveal a practice is refused, ghost or not.
        early = httpx.post(f"{server.url}/daily/{date}/{VARIANT}/practice", json={"name": "cy", "ghost": "top"},
                           timeout=30)
        assert early.status_code == 409 and early.json()["error"] == "not_revealed", early.text
        server.stop()
        server = ServerProcess(url, FTR_CLOCK_OFFSET_MS=offset_to(midnight + 2_000), **env)
        await after_the_day(server, url, connections, date, tmp_path)
    finally:
        for player in connections:
            await player.close()
        server.stop()
        with redis.Redis.from_url(url) as client:
            client.flushdb()


async def ghost_of_practice(server: ServerProcess, connections: list[Player], keys: dict[str, str], date: str,
                            name: str, ghost: Any) -> m.Ghost:
    """Practise ``date`` as ``name`` (its key in ``keys`` once a practice claimed it) racing ``ghost``: its ghost
    frame, the player resigned to the practice's results."""
    body = {"name": name, "ghost": ghost, "player_key": keys.get(name)}
    answer = httpx.post(f"{server.url}/daily/{date}/{VARIANT}/practice", json=body, timeout=30)
    assert answer.status_code == 200, answer.text
    keys.setdefault(name, answer.json().get("player_key"))  # the first practice claimed the name
    player = Player(server.ws_url)
    connections.append(player)
    await player.connect()
    await player.start(answer.json()["match"], answer.json()["player_token"])
    frame = await player.expect(m.Ghost)
    assert isinstance(frame, m.Ghost), frame
    await player.resign()
    assert isinstance(await player.expect(m.Results), m.Results)
    return frame


async def after_the_day(server: ServerProcess, url: str, connections: list[Player], date: str,
                        tmp_path: Path) -> None:
    deadline = time.monotonic() + 15
    while httpx.get(f"{server.url}/daily/{date}/{VARIANT}/reveal", timeout=30).status_code != 200:
        assert time.monotonic() < deadline, "the day was not revealed"
        time.sleep(0.2)
    board = httpx.get(f"{server.url}/daily/{date}/{VARIANT}/leaderboard", timeout=30).json()
    entries = {e["name"]: e for e in board["entries"]}
    assert [e["name"] for e in board["entries"]] == ["Ann", "bob"]  # a win ranks above a resignation
    records = {name: httpx.get(f"{server.url}/daily/{date}/{VARIANT}/replay/{name}", timeout=30).json()
               for name in entries}

    # "top": the day's first-ranked attempt, Ann's won game, on its recorded times; progress only, no card.
    keys: dict[str, str] = {}
    top = await ghost_of_practice(server, connections, keys, date, "cy", "top")
    expected = expected_timeline(records["Ann"])
    assert 10 < len(expected) < 1000  # under the frame's bound: kept whole, not thinned
    assert top.timeline == expected
    assert top.timeline[-1][2] == 104  # the whole pack up, as the win says
    ann = entries["Ann"]
    assert (top.name, top.label, top.status, top.time_ms, top.moves, top.foundation) == \
        ("Ann", "Ann's daily", "won", ann["time_ms"], ann["moves"], ann["foundation"])
    assert not CARD.search(json.dumps(msgspec.to_builtins(top)))
    # A name's attempt: any look-alike of the name finds it, as the board's ?name= does.
    named = await ghost_of_practice(server, connections, keys, date, "cy", {"name": "BOB"})
    assert named.name == "bob" and named.status == "resigned" and named.timeline == expected_timeline(records["bob"])

    # Refusals: a name with no attempt that day (404), a ghost of a wrong shape (400); nothing made, no name taken.
    metas = match_metas(url)
    for ghost, status, code in (({"name": "nobody"}, 404, "no_ghost"), ("best", 400, "malformed"),
                                ({"name": ""}, 400, "malformed"), ({"name": "Ann", "match": "X"}, 400, "malformed")):
        refused = httpx.post(f"{server.url}/daily/{date}/{VARIANT}/practice", json={"name": "dee", "ghost": ghost},
                             timeout=30)
        assert (refused.status_code, refused.json()["error"]) == (status, code), (ghost, refused.text)
    assert match_metas(url) == metas
    assert httpx.get(f"{server.url}/players/dee", timeout=30).status_code == 404  # never claimed

    # The command-line client: practice --day races the same ghost; with --seed or --bot it is refused first.
    env = {"PATH": "/usr/bin:/bin", "FTR_CLIENT_DATA": str(tmp_path), "HOME": str(tmp_path)}
    played = subprocess.run([sys.executable, "-m", "client_cli", "--server", server.url, "practice", "--day", date,
                             "--variant", VARIANT, "--ghost", "top", "--name", "eve", "--script", "-", "--json"],
                            cwd=ROOT, env=env, input="s\n", capture_output=True, text=True, timeout=60, check=False)
    assert played.returncode == 0, played.stderr
    frames = [json.loads(line) for line in played.stdout.splitlines()]
    [ghost] = [f for f in frames if f["type"] == "ghost"]
    assert [tuple(point) for point in ghost["timeline"]] == expected and ghost["name"] == "Ann"
    assert f"Practice of the daily {date} ({VARIANT})" in played.stderr and "against the day's best" in played.stderr
    assert any(f["type"] == "results" for f in frames)
    for wrong in (["--seed", "7"], ["--bot", "casual"]):
        args = argparse.Namespace(day=date, variant=VARIANT, seed=None, bot=[], ghost="top", name="eve",
                                  script="-", json=True)
        if wrong[0] == "--seed":
            args.seed = wrong[1]
        else:
            args.bot = [{"level": wrong[1], "moves_per_min": 30}]
        with pytest.raises(ClientError, match="neither --seed nor --bot"):
            await cli_practice(server.url, args, "eve")
