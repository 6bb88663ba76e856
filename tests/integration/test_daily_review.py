"""The daily challenge under attack: odd query strings and dates, lookalike names, and an
attempt asked for before midnight but connected after it. A real server and Redis.

The servers' clocks are shifted (``FTR_CLOCK_OFFSET_MS``): the module's server starts :data:`LEAD_S` seconds
before midnight UTC, and the after-midnight test has a server of its own, on a database of its own, that starts
:data:`MIDNIGHT_LEAD_S` seconds before it, so that the suite does not wait out the long lead.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis

from protocol import messages as m

from .conftest import ServerProcess
from .wsclient import Player

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

LEAD_S = 45
DB = 8
# Enough for a server to start and two attempts to be asked for on a loaded CI machine.
MIDNIGHT_LEAD_S = 12
MIDNIGHT_DB = 14
VARIANT = "relaxed"


def server_before_midnight(redis_url: str, db: int, lead_s: int) -> Iterator[ServerProcess]:
    url = redis_url.rsplit("/", 1)[0] + f"/{db}"
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    real_now = int(time.time() * 1000)
    midnight = (real_now // 86_400_000 + 1) * 86_400_000
    server = ServerProcess(url, FTR_CLOCK_OFFSET_MS=str(midnight - lead_s * 1000 - real_now),
                           FTR_DAILY_SECRET="review secret", FTR_DAILY_VARIANTS=VARIANT)
    try:
        yield server
    finally:
        server.stop()
        with redis.Redis.from_url(url) as client:
            client.flushdb()


@pytest.fixture(scope="module")
def day_server(redis_url: str) -> Iterator[ServerProcess]:
    yield from server_before_midnight(redis_url, DB, LEAD_S)


@pytest.fixture
def midnight_server(redis_url: str) -> Iterator[ServerProcess]:
    yield from server_before_midnight(redis_url, MIDNIGHT_DB, MIDNIGHT_LEAD_S)


def attempt(server: ServerProcess, name: str, token: str | None = None) -> httpx.Response:
    return httpx.post(f"{server.url}/daily/{VARIANT}/attempt", json={"name": name, "token": token}, timeout=60)


def today(server: ServerProcess) -> dict[str, Any]:
    return dict(httpx.get(f"{server.url}/daily", timeout=60).json())


def test_query_numbers_and_dates_are_ascii_and_strict(day_server: ServerProcess) -> None:
    date = today(day_server)["date"]
    board = f"{day_server.url}/daily/{date}/{VARIANT}/leaderboard"
    # "²" and "١" pass str.isdigit(); the first one made int() fail with a 500.
    for query in ("limit=%C2%B2", "offset=%C2%B2", "offset=%D9%A1", "limit=+5", "limit=%205"):
        response = httpx.get(f"{board}?{query}", timeout=10)
        assert response.status_code == 400, (query, response.text)
        assert response.json()["error"] == "malformed"
    assert httpx.get(f"{board}?offset=1&limit=5", timeout=10).json()["limit"] == 5
    # Only YYYY-MM-DD: an ISO week date has 10 characters too, and named another day.
    for text in ("2026-W48-1", "２０２６-11-30", "2026-11-3٠"):
        response = httpx.get(f"{day_server.url}/daily/{text}/{VARIANT}/reveal", timeout=10)
        assert response.status_code == 400, (text, response.text)
        assert response.json()["error"] == "malformed"


def test_lookalike_names_cannot_be_claimed(day_server: ServerProcess) -> None:
    first = attempt(day_server, "Ann Lee")
    assert first.status_code == 200, first.text
    token = first.json()["name_token"]
    before = today(day_server)["variants"][0]["attempts"]
    # Other case, full-width letters, a Cyrillic "А", a Greek "Α", a ligature ...: each shows as "Ann Lee".
    for lookalike in ("ann lee", "ANN LEE", "Ａｎｎ Ｌｅｅ", "\u0410nn Lee", "\u0391nn Lee", "Ann Lee\u00ad"):
        for with_token in (None, token):  # not even the owner gets a second attempt under another spelling
            response = attempt(day_server, lookalike, with_token)
            assert response.status_code in (400, 403, 409), (lookalike, response.text)
            assert "name_token" not in response.json()
    assert today(day_server)["variants"][0]["attempts"] == before
    again = attempt(day_server, "Ann Lee", token)
    assert again.status_code == 200 and again.json()["match"] == first.json()["match"]
    # Names of one script are fine, in any script; digits and punctuation go with any.
    for name in ("Łukasz-2", "Ωμέγα", "山田 たろう", "Иван_3"):
        response = attempt(day_server, name)
        assert response.status_code == 200, (name, response.text)


def test_daily_names_take_emoji_sequences_and_refusals_say_why(day_server: ServerProcess) -> None:
    """An emoji sequence (two emoji joined by a zero width joiner) is a picture, not a control character; the
    refusals name the character or the scripts at fault (one message for every rule before)."""
    coder = "Cy \U0001f469\u200d\U0001f4bb"
    response = attempt(day_server, coder)
    assert response.status_code == 200 and response.json()["name"] == coder, response.text
    for name, words in (("\u0410nn Cy", ["CYRILLIC", "LATIN"]), ("Cy\u200dra", ["U+200D", "invisible"]),
                        ("Cy\tra", ["U+0009", "control character"])):
        response = attempt(day_server, name)
        assert response.status_code == 400 and response.json()["error"] == "malformed", (name, response.text)
        for word in words:
            assert word in response.json()["message"], (name, response.json())


async def test_a_finished_attempt_shows_no_board_or_replay_before_the_day_ends(day_server: ServerProcess) -> None:
    """A daily attempt's match holds the day's whole deal: the match routes must not give it out while the
    day runs (one throwaway name, resign at once, then ask the match's replay: it carried the stock)."""
    answer = attempt(day_server, "peeker")
    assert answer.status_code == 200, answer.text
    body = answer.json()

    async def resign_at_once() -> None:
        player = Player(day_server.ws_url)
        await player.connect()
        player.code, player.token = body["match"], body["player_token"]
        await player.resume(body["match"])
        started = await player.expect(m.Started)
        assert isinstance(started, m.Started), started
        player.seq = started.seq
        reply = await player.resign()
        assert isinstance(reply, m.PositionReply) and reply.status == "resigned", reply
        await player.expect(m.Results)
        await player.close()

    await resign_at_once()
    base = f"{day_server.url}/matches/{body['match']}"
    assert httpx.get(base, timeout=10).json()["state"] == "finished"
    assert httpx.get(base, timeout=10).json()["boards_public"] is False
    # Its pages learn the day from the match (the leaderboard's rank, the reveal), as a plain match has no day.
    assert httpx.get(base, timeout=10).json()["daily"] == {"date": today(day_server)["date"], "variant": VARIANT}
    for query in ("", "?positions=1"):
        response = httpx.get(f"{base}/replays/peeker{query}", timeout=10)
        assert response.status_code == 409 and response.json()["error"] == "not_revealed", response.text
        assert "Stock" not in response.text and "deal" not in response.json()
    date = today(day_server)["date"]
    assert httpx.get(f"{day_server.url}/daily/{date}/{VARIANT}/reveal", timeout=10).status_code == 409


async def test_asking_again_for_an_attempt_voids_all_but_the_two_newest_player_tokens(day_server: ServerProcess) -> None:
    """Each request for the open attempt issues a player token; as with resume, the newest and the one before
    it (until the newest is used) work, older ones are void."""
    first = attempt(day_server, "token keeper")
    assert first.status_code == 200, first.text
    name_token = first.json()["name_token"]
    tokens = [first.json()["player_token"]]
    for _ in range(2):
        again = attempt(day_server, "token keeper", name_token)
        assert again.status_code == 200, again.text
        tokens.append(again.json()["player_token"])
    code = first.json()["match"]

    async def resume_with(token: str) -> Any:
        player = Player(day_server.ws_url)
        await player.connect()
        await player.send(m.Resume(code, token))
        reply = await player.expect(m.Joined)
        await player.close()
        return reply

    async def check() -> None:
        void = await resume_with(tokens[0])
        assert isinstance(void, m.Error) and void.code == "bad_token"
        newest = await resume_with(tokens[2])
        assert isinstance(newest, m.Joined) and newest.name == "token keeper"
        before_newest = await resume_with(tokens[1])  # void once the newest was used
        assert isinstance(before_newest, m.Error) and before_newest.code == "bad_token"

    await check()


async def test_an_attempt_connected_after_midnight_is_told_the_day_is_over(midnight_server: ServerProcess) -> None:
    await after_midnight(midnight_server)


async def after_midnight(server: ServerProcess) -> None:
    now = today(server)
    date, ends_at = now["date"], now["ends_at_ms"]
    assert ends_at - now["now_ms"] > 2000, "the server took the whole lead to start: raise MIDNIGHT_LEAD_S"
    early, late = attempt(server, "early bird"), attempt(server, "night owl")
    assert early.status_code == 200 and late.status_code == 200
    while today(server)["now_ms"] < ends_at + 100:
        await asyncio.sleep(0.1)
    # Connected just after midnight: the attempt cannot start any more, and the player hears so.
    player = Player(server.ws_url)
    await player.connect()
    player.code, player.token = late.json()["match"], late.json()["player_token"]
    await player.resume(player.code)
    error = await player.expect(m.Error, timeout=10)
    assert isinstance(error, m.Error) and error.code == "closed", error
    await player.close()
    # The day closes (neither of them played) and reveals; an attempt connected later still gets a clear answer.
    deadline = time.monotonic() + 20
    reveal = f"{server.url}/daily/{date}/{VARIANT}/reveal"
    while (await asyncio.to_thread(httpx.get, reveal, timeout=10)).status_code != 200:
        assert time.monotonic() < deadline, "the day never closed"
        await asyncio.sleep(0.2)
    player = Player(server.ws_url)
    await player.connect()
    player.code, player.token = early.json()["match"], early.json()["player_token"]
    await player.resume(player.code)
    error = await player.expect(m.Error, timeout=10)
    assert isinstance(error, m.Error) and error.code == "closed", error
    await player.close()
    board = (await asyncio.to_thread(httpx.get, f"{server.url}/daily/{date}/{VARIANT}/leaderboard", timeout=10)).json()
    assert board["final"] is True
    assert not {e["name"] for e in board["entries"]} & {"early bird", "night owl"}  # never started: no entry
    assert "Traceback" not in server.logs()
