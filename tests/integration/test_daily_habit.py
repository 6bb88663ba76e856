"""The daily as a habit, end to end on a real server and Redis: a place on the board, the archive of a day,
practice on a past day, and the line to share.

Two server processes in turn on one database: the first's clock (``FTR_CLOCK_OFFSET_MS``) is on day D, ten
minutes before midnight UTC: three names end their attempts and a fourth plays with the command-line client;
the second's clock is just past that midnight, so it closes day D and reveals it. What was received before the
day's end is checked against the day's real seed and deal.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import redis

from protocol import messages as m
from server.core.daily import next_day
from server.engine import deal, find_variant, format_position

from .conftest import ROOT, ServerProcess
from .test_daily_day import CARD, SECRET, VARIANT, Attempt, Seen, deal_of_the_day
from .wsclient import Player

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

DB = 12
PUBLIC = "https://race.example.org"
"""The servers' FTR_PUBLIC_URL: the share line's link names it."""
DAY_MS = 86_400_000


def offset_to(target_ms: int) -> str:
    return str(target_ms - int(time.time() * 1000))


def key(figures: tuple[str, int, int, int, int]) -> tuple[int, ...]:
    """DESIGN.md "Ranking", written out: winners by time then moves; the others by cards up (more first), the
    time of their last foundation card, then moves."""
    status, time_ms, moves, foundation, last_found = figures
    return (0, time_ms, moves) if status == "won" else (1, -foundation, last_found, moves)


def get(url: str, **headers: str) -> httpx.Response:
    return httpx.get(url, headers=headers, timeout=30)


async def test_place_archive_practice_and_share(redis_url: str, tmp_path: Path) -> None:
    url = redis_url.rsplit("/", 1)[0] + f"/{DB}"
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    midnight = (int(time.time() * 1000) // DAY_MS + 1) * DAY_MS
    env = {"FTR_DAILY_SECRET": SECRET, "FTR_DAILY_VARIANTS": VARIANT, "FTR_PUBLIC_URL": PUBLIC}
    connections: list[Player] = []
    server = ServerProcess(url, FTR_CLOCK_OFFSET_MS=offset_to(midnight - 600_000), **env)
    try:
        date, index, seed, deal_text, shares, token = await day_d(server, connections, tmp_path)
        server.stop()
        server = ServerProcess(url, FTR_CLOCK_OFFSET_MS=offset_to(midnight + 2_000), **env)
        await after_day_d(server, connections, date, index, seed, deal_text, shares, token)
    finally:
        for player in connections:
            await player.close()
        server.stop()
        with redis.Redis.from_url(url) as client:
            client.flushdb()


def cli(server: ServerProcess, data: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "FTR_CLIENT_DATA": str(data), "HOME": str(data)}
    return subprocess.run([sys.executable, "-m", "client_cli", "--server", server.url, "daily", *args], cwd=ROOT,
                          env=env, input=stdin, capture_output=True, text=True, timeout=60, check=False)


async def day_d(server: ServerProcess, connections: list[Player],
                tmp_path: Path) -> tuple[str, int, str, str, list[str], str]:
    seen = Seen()
    date = seen.get(server.url + "/daily").json()["date"]
    index, seed, solution = deal_of_the_day(date, VARIANT)
    board_url = f"{server.url}/daily/{date}/{VARIANT}/leaderboard"

    # Before any attempt: no entry for anyone.
    assert seen.get(f"{board_url}?name=ann").json()["entry"] is None
    assert "entry" not in seen.get(board_url).json()

    ann, bob, cy = (Attempt(server, seen, name, connections) for name in ("Ann", "bob", "cy"))
    await ann.begin()
    await ann.play(solution)
    assert ann.replies[-1].status == "won"
    await bob.begin()
    await bob.play(solution[:12])
    await bob.resign()
    await cy.begin()
    assert seen.get(f"{board_url}?name=cy").json()["entry"] is None  # playing: not ended yet
    await cy.play(solution[:4])
    await cy.resign()

    # Each entry's rank, total and beat share, against an independent ranking of what the players observed.
    observed = {p.name: p.expected_entry() for p in (ann, bob, cy)}
    order = sorted(observed, key=lambda n: (key(observed[n]), n))
    shares = []
    for name in order:
        entry = seen.get(f"{board_url}?name={name}").json()["entry"]
        rank = 1 + sum(key(observed[o]) < key(observed[name]) for o in observed)
        below = sum(key(observed[o]) > key(observed[name]) for o in observed)
        status, time_ms, moves, foundation, _ = observed[name]
        assert (entry["name"], entry["rank"], entry["total"], entry["below"]) == (name, rank, 3, below)
        assert entry["beat_share"] == pytest.approx(below / 2)
        assert (entry["status"], entry["time_ms"], entry["moves"], entry["foundation"]) == \
            (status, time_ms, moves, foundation)
        assert entry["place"] == f"#{rank} of 3 · you beat {100 * below // 2} % of players today"
        outcome = f"won {time_ms // 60000}:{time_ms // 1000 % 60:02d}, {moves} moves" if status == "won" \
            else f"{status}, {foundation} cards up"
        # Each name's first day played: a streak of 1, which the share line says.
        assert (entry["streak"], entry["best_streak"], entry["freezes"]) == (1, 1, 0)
        assert entry["share"] == f"Forty Thieves daily {date} {VARIANT}: {outcome}, #{rank} of 3, streak 1\n" \
                                 f"{PUBLIC}/daily/{date}"
        shares.append(entry["share"])
    assert order[0] == "Ann"
    # Any look-alike of a name finds its entry (its name key), spelled as it played.
    assert seen.get(f"{board_url}?name=ANN").json()["entry"]["name"] == "Ann"
    assert seen.get(f"{board_url}?name=%D0%90nn").json()["entry"]["name"] == "Ann"  # a Cyrillic A
    assert seen.get(f"{board_url}?name=nobody").json()["entry"] is None
    assert seen.get(f"{board_url}?name={'x' * 65}", expect=400).json()["error"] == "malformed"

    # The command-line client: its results print the place line; --share prints the share text.
    played = cli(server, tmp_path / "cli", "--variant", VARIANT, "--name", "dora", "--script", "-", stdin="s\ns\n")
    assert played.returncode == 0, played.stderr
    dora = seen.get(f"{board_url}?name=dora").json()["entry"]
    assert dora["total"] == 4 and dora["place"] in played.stdout.splitlines() and dora["share"] in played.stdout
    assert "Streak 1 (best 1) · 0 freezes" in played.stdout.splitlines()  # her first day played
    shared = cli(server, tmp_path / "cli", "--variant", VARIANT, "--share")
    assert shared.returncode == 0 and shared.stdout == dora["share"] + "\n", (shared.stdout, shared.stderr)
    shares.append(shared.stdout)

    # The archive before the day's end: the boards and the commitment, nothing of the deal.
    archive = get(f"{server.url}/daily/{date}", Accept="application/json")
    seen.items.append((f"/daily/{date}", archive.content))
    day = archive.json()
    assert day["date"] == date and day["today"] is True and day["next"] is None
    [variant] = day["variants"]
    assert variant["final"] is False and variant["total"] == 4
    assert variant["entries"][0]["name"] == "Ann"
    for secret in ("seed", "attempt_index", "deal"):
        assert secret not in variant
    assert all("replay" not in e for e in variant["entries"])
    page = get(f"{server.url}/daily/{date}", Accept="text/html")
    assert page.status_code == 200 and "day.js" in page.text

    # Practice on today's (unrevealed) deal is refused, and changes nothing.
    board_before = get(f"{board_url}?name=Ann").content
    refused = seen.post(f"{server.url}/daily/{date}/{VARIANT}/practice", {"name": "pat"})
    assert refused.status_code == 409 and refused.json()["error"] == "not_revealed"
    assert get(f"{board_url}?name=Ann").content == board_before

    # Nothing received before the end reveals the seed, a card or a line of the deal; the share lines neither.
    deal_text = format_position(deal(seed, find_variant(VARIANT)))
    deal_lines = [line.strip() for line in deal_text.splitlines() if len(line.strip()) > 4]
    for where, data in seen.items:
        assert seed.encode() not in data, where
    for text in shares:
        assert seed not in text and not CARD.search(text)
        assert not any(line in text for line in deal_lines)
    assert ann.name_token
    return date, index, seed, deal_text, shares, ann.name_token


async def after_day_d(server: ServerProcess, connections: list[Player], date: str, index: int, seed: str,
                      deal_text: str, shares: list[str], token: str) -> None:
    board_url = f"{server.url}/daily/{date}/{VARIANT}/leaderboard"
    deadline = time.monotonic() + 15
    while get(f"{server.url}/daily/{date}/{VARIANT}/reveal").status_code != 200:
        assert time.monotonic() < deadline, "day D was not revealed"
        await asyncio.sleep(0.2)

    # The archive of the revealed day: the seed, its index, the deal, the replays; the commitment checks.
    day = get(f"{server.url}/daily/{date}", Accept="application/json").json()
    [variant] = day["variants"]
    assert day["today"] is False and day["next"] == next_day(date) and variant["final"] is True
    assert variant["seed"] == seed and variant["deal"].strip() == deal_text.strip()
    assert variant["attempt_index"] == index
    assert hashlib.sha256(variant["seed"].encode()).hexdigest() == variant["commitment"]
    assert variant["entries"][0]["name"] == "Ann" and len(variant["entries"]) == 4
    replay = get(server.url + variant["entries"][0]["replay"])
    assert replay.status_code == 200 and replay.json()["seed"] == seed
    assert get(f"{server.url}/daily/{next_day(next_day(date))}", Accept="application/json").status_code == 404
    assert get(f"{server.url}/daily/2026-02-30", Accept="application/json").status_code == 400

    # A practice on the revealed day: a one-player match on its deal, on no board, any number of times.
    board_before = get(f"{board_url}?name=Ann").content
    entry_before = json.loads(board_before)["entry"]
    practice_url = f"{server.url}/daily/{date}/{VARIANT}/practice"
    # A claimed name needs its token; a look-alike of it is refused.
    for body, refusal in (({"name": "Ann"}, "bad_token"), ({"name": "Ann", "token": "guessed"}, "bad_token"),
                          ({"name": "ANN", "token": token}, "name_taken")):
        refused = httpx.post(practice_url, json=body, timeout=30)
        assert refused.status_code in (403, 409) and refused.json()["error"] == refusal, (body, refused.text)
    codes = set()
    for _ in range(2):
        answer = httpx.post(practice_url, json={"name": "Ann", "token": token}, timeout=30)
        assert answer.status_code == 200, answer.text
        practice = answer.json()
        assert practice["practice"] is True and practice["seed"] == seed
        public = get(f"{server.url}/matches/{practice['match']}").json()
        assert public["practice"] == {"date": date, "variant": VARIANT} and "daily" not in public
        codes.add(practice["match"])
        if len(codes) == 2:  # a second practice is a new match (played like the first)
            break
        player = Player(server.ws_url)
        connections.append(player)
        await player.connect()
        await player.start(practice["match"], practice["player_token"])
        reply = await player.play("s")
        assert isinstance(reply, m.PositionReply), reply
        await player.resign()
        results = await player.expect(m.Results)
        assert isinstance(results, m.Results) and results.seed == seed
        assert hashlib.sha256((results.nonce + results.seed).encode()).hexdigest() == results.commitment
        await player.close()
    board_after = get(f"{board_url}?name=Ann").content
    assert board_after == board_before and json.loads(board_after)["entry"] == entry_before
    # A practice on today's day (D+1: not revealed) is refused; a malformed one too.
    today = get(server.url + "/daily").json()["date"]
    assert today == next_day(date)
    refused = httpx.post(f"{server.url}/daily/{today}/{VARIANT}/practice", json={"name": "pat"}, timeout=30)
    assert refused.status_code == 409 and refused.json()["error"] == "not_revealed"
    for body in ({"name": " x"}, {"nam": "x"}):
        bad = httpx.post(f"{server.url}/daily/{date}/{VARIANT}/practice", json=body, timeout=30)
        assert bad.status_code == 400, bad.text
    # The day over, the place line says its date; --share for that day prints the same line as before.
    dora = get(f"{board_url}?name=dora").json()["entry"]
    assert dora["place"].endswith(f"of players on {date}") and dora["share"] + "\n" == shares[-1]
    assert re.fullmatch(rf"Forty Thieves daily {date} {VARIANT}: \w+, \d+ cards? up, #\d of 4, streak 1\n{PUBLIC}/daily/{date}\n",
                        shares[-1])
