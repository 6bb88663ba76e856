"""The daily service against a real Redis with an injected clock.

Name claims and tokens, one attempt per name and day, the day boundary
(an attempt started at 23:59:50 UTC ends with its day and is ranked on
it), the reveal only after the day once every attempt has ended, and the
leaderboard's order and ranks against :func:`server.core.ranking.rank`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import redis.asyncio as aioredis

from protocol import messages as m
from protocol.codec import decode_server, encode
from server.core.daily import pack_score
from server.core.ranking import Standing, rank
from server.daily import DailyError, DailyService
from server.match.session import Session
from server.matches import MatchService
from server.names import legacy_name_key, name_key
from server.settings import Settings
from server.store import DailyEntry, DailyReplay, Store, token_hash
from server.store.keys import DAILY_NAMES, TIMERS, day_key

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

DB = 6


def ms(text: str) -> int:
    return int(dt.datetime.fromisoformat(text + "+00:00").timestamp() * 1000)


class FakeClock:
    """The injected clock: tests set ``now`` (epoch ms)."""

    def __init__(self, now: int) -> None:
        self.now = now

    def now_ms(self) -> int:
        return self.now

    async def sync(self, store: Store) -> None:
        return None


async def run(redis_url: str, now: int, body: Callable[[DailyService, FakeClock, MatchService], Awaitable[None]]) -> None:
    async def main() -> None:
        client = aioredis.Redis.from_url(redis_url.rsplit("/", 1)[0] + f"/{DB}")
        await client.flushdb()
        matches = MatchService(Store(client, 3600), Settings(countdown_s=0.0), None)
        clock = FakeClock(now)
        matches.clock = clock  # type: ignore[assignment]
        daily = matches.daily = DailyService(matches.daily_link, ("classic", "relaxed"), secret="unit secret",
                                             now_ms=clock.now_ms)
        await matches.start_background()
        try:
            await body(daily, clock, matches)
        finally:
            await matches.stop_background()
            await client.flushdb()
            await client.aclose()

    await main()


async def refused(call: Awaitable[Any]) -> DailyError:
    with pytest.raises(DailyError) as caught:
        await call
    return caught.value


async def next_frame(session: Session, kind: type, timeout: float = 10) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        frame = await asyncio.wait_for(session.queue.get(), deadline - asyncio.get_running_loop().time())
        assert frame is not None, "the session was closed"
        message = decode_server(frame)
        if isinstance(message, kind):
            return message


async def connect(matches: MatchService, attempt: dict[str, Any]) -> tuple[Session, m.Started]:
    session = Session()
    await matches.lobby.resume(session, attempt["match"], attempt["player_token"])
    return session, await next_frame(session, m.Started)


async def test_names_are_claimed_with_a_token_and_one_attempt_a_day(redis_url: str) -> None:
    async def body(daily: DailyService, clock: FakeClock, matches: MatchService) -> None:
        first = await daily.attempt("relaxed", "ann", None)
        token = first["name_token"]
        assert first["date"] == "2026-11-30" and first["variant"] == "relaxed"
        assert (await refused(daily.attempt("relaxed", "ann", None))).code == "bad_token"
        assert (await refused(daily.attempt("relaxed", "ann", "not the token"))).code == "bad_token"
        assert (await refused(daily.attempt("classic", "ann", None))).code == "bad_token"  # names are global
        assert (await refused(daily.attempt("relaxed", " ann", None))).code == "malformed"
        assert (await refused(daily.attempt("josephine", "ann", token))).status == 404
        again = await daily.attempt("relaxed", "ann", token)  # the open attempt, resumed: same match
        assert again["match"] == first["match"] and "name_token" not in again
        assert again["player_token"] != first["player_token"]
        other = await daily.attempt("relaxed", "bo", None)
        assert other["match"] != first["match"]
        session, started = await connect(matches, again)  # the newest player token resumes
        assert started.deadline_ms == ms("2026-12-01T00:00:00.000")
        await matches.playing.play(session, 1, "s")
        position = await next_frame(session, m.PositionReply)
        assert position.moves == 1
        await matches.playing.resign(session, 2)
        results = await next_frame(session, m.Results)
        assert results.seed == "" and results.nonce == ""  # nothing of the seed before the day is over
        record = await daily.store.deal("2026-11-30", "relaxed")
        assert record is not None and results.commitment == hashlib.sha256(record.seed.encode()).hexdigest()
        assert (await refused(daily.attempt("relaxed", "ann", token))).code == "already_played"
        board = await daily.leaderboard("2026-11-30", "relaxed", 0, 50)
        # resigning is no move
        assert [(e["name"], e["status"], e["moves"]) for e in board["entries"]] == [("ann", "resigned", 1)]
        assert board["final"] is False
        # Another variant is another attempt.
        assert (await daily.attempt("classic", "ann", token))["variant"] == "classic"

    await run(redis_url, ms("2026-11-30T12:00:00.000"), body)


async def test_an_attempt_started_at_23_59_50_ends_on_its_day(redis_url: str) -> None:
    async def body(daily: DailyService, clock: FakeClock, matches: MatchService) -> None:
        attempt = await daily.attempt("relaxed", "late", None)
        assert attempt["date"] == "2026-11-30"
        session, started = await connect(matches, attempt)
        assert started.start_at_ms == ms("2026-11-30T23:59:50.000")
        assert started.deadline_ms == ms("2026-12-01T00:00:00.000")
        clock.now = ms("2026-11-30T23:59:55.000")
        await matches.playing.play(session, 1, "s")
        assert (await next_frame(session, m.PositionReply)).time_ms == 5000
        assert (await refused(daily.reveal("2026-11-30", "relaxed"))).code == "not_revealed"
        clock.now = ms("2026-12-01T00:00:00.000")  # the day's end: the deadline timer ends the attempt
        finished = await next_frame(session, m.Finished)
        assert finished.status == "timeout" and finished.time_ms == 10_000
        await next_frame(session, m.Results)
        board = await daily.leaderboard("2026-11-30", "relaxed", 0, 50)
        assert [(e["name"], e["status"], e["time_ms"]) for e in board["entries"]] == [("late", "timeout", 10_000)]
        assert (await daily.leaderboard("2026-12-01", "relaxed", 0, 50))["entries"] == []
        assert (await daily.today())["date"] == "2026-12-01"
        # Someone who asked for an attempt at 23:59:59 but never connected does not keep the day open.
        await daily.close_days()
        revealed = await daily.reveal("2026-11-30", "relaxed")
        assert hashlib.sha256(revealed["seed"].encode()).hexdigest() == revealed["commitment"]
        assert (await daily.leaderboard("2026-11-30", "relaxed", 0, 50))["final"] is True
        replay = await daily.replay("2026-11-30", "relaxed", "late")
        assert replay["moves"] == ["s"] and replay["times_ms"] == [5000] and replay["seed"] == revealed["seed"]
        # What the closed day no longer needs: the solution at once, attempts and events after the retention.
        redis = daily.store.redis
        deal_fields = await redis.hkeys(day_key("2026-11-30", "relaxed", "deal"))
        assert b"seed" in deal_fields and b"solution" not in deal_fields
        retention = matches.settings.retention_s
        for what in ("attempts", "events"):
            assert 0 < await redis.ttl(day_key("2026-11-30", "relaxed", what)) <= retention, what
        for what in ("deal", "board", "entries", "replays"):
            assert await redis.ttl(day_key("2026-11-30", "relaxed", what)) == -1, what
        # A new day: a new attempt for the same name.
        again = await daily.attempt("relaxed", "late", attempt["name_token"])
        assert again["date"] == "2026-12-01" and again["commitment"] != attempt["commitment"]

    await run(redis_url, ms("2026-11-30T23:59:50.000"), body)


async def test_the_day_stays_secret_while_an_attempt_is_open_and_no_shows_are_dropped(redis_url: str) -> None:
    async def body(daily: DailyService, clock: FakeClock, matches: MatchService) -> None:
        playing = await daily.attempt("relaxed", "p", None)
        await daily.attempt("relaxed", "noshow", None)  # never connects
        session, _ = await connect(matches, playing)
        clock.now = ms("2026-12-01T00:00:00.500")
        await daily.close_days()  # the deadline timer may not have run yet: the day closes only without open attempts
        await next_frame(session, m.Results)
        for _ in range(50):
            await daily.close_days()
            record = await daily.store.deal("2026-11-30", "relaxed")
            if record and record.closed:
                break
            await asyncio.sleep(0.1)
        assert (await daily.reveal("2026-11-30", "relaxed"))["attempt_index"] >= 0
        board = await daily.leaderboard("2026-11-30", "relaxed", 0, 50)
        assert [e["name"] for e in board["entries"]] == ["p"]  # the no-show never got the deal: no entry

    await run(redis_url, ms("2026-11-30T23:59:58.000"), body)


async def test_leaderboard_order_ranks_and_pages(redis_url: str) -> None:
    entries = [Standing("w1", "won", 5000, 200, 0, 0, 104, 4000), Standing("w2", "won", 5000, 180, 0, 0, 104, 4000),
               Standing("w3", "won", 9000, 100, 0, 0, 104, 8000), Standing("a", "resigned", 300, 40, 0, 0, 30, 200),
               Standing("b", "dead", 900, 40, 0, 0, 30, 200),
               Standing("c", "timeout", 86_400_000, 60, 0, 0, 31, 80_000),
               Standing("d", "resigned", 10, 3, 0, 0, 30, 150), Standing("tie", "won", 5000, 180, 0, 0, 104, 1)]

    async def body(daily: DailyService, clock: FakeClock, matches: MatchService) -> None:
        await daily.deal_of_day("2026-11-30", "classic")
        for s in entries:
            entry = DailyEntry(status=s.status, time_ms=s.time_ms, moves=s.moves, foundation=s.foundation)
            await daily.store.record("2026-11-30", "classic", s.name, pack_score(s), entry, DailyReplay([], []),
                                     {"name": s.name})
        expected = [(r, s.name) for r, s in rank(entries)]
        board = await daily.leaderboard("2026-11-30", "classic", 0, 200)
        assert [(e["rank"], e["name"]) for e in board["entries"]] == expected
        assert board["total"] == len(entries)
        assert expected[:3] == [(1, "tie"), (1, "w2"), (3, "w1")]
        for offset, limit in ((0, 3), (1, 2), (2, 4), (5, 10), (8, 5)):
            page = await daily.leaderboard("2026-11-30", "classic", offset, limit)
            assert [(e["rank"], e["name"]) for e in page["entries"]] == expected[offset:offset + limit]
        events = await daily.store.redis.xrange(day_key("2026-11-30", "classic", "events"))
        assert [json.loads(fields[b"d"])["name"] for _, fields in events] == [s.name for s in entries]

    await run(redis_url, ms("2026-11-30T10:00:00.000"), body)


async def test_a_deadline_due_during_the_countdown_is_not_lost(redis_url: str) -> None:
    """Two processes: one runs the ``start`` timer, the other the ``deadline`` timer of the same attempt (started
    just before midnight, or both due after a restart). A deadline that finds the match still in its countdown
    must come back, or the attempt never ends and its day never closes (the seed is never revealed)."""
    async def body(daily: DailyService, clock: FakeClock, matches: MatchService) -> None:
        store = matches.store
        attempt = await daily.attempt("relaxed", "split", None)
        code, end = attempt["match"], ms("2026-12-01T00:00:00.000")
        # The other process's start timer has not run yet: the match is in its countdown.
        assert await store.matches.transition(code, "lobby", "countdown", b"", start_at_ms=end - 5, deadline_ms=end)
        clock.now = end + 10
        await store.timers.add(code, "deadline", end)
        await asyncio.sleep(1.0)  # this process's timer loop runs the deadline timer meanwhile
        meta = await store.matches.meta(code)
        assert meta is not None and meta.state == "countdown"
        assert await store.redis.zscore(TIMERS, f"{code} deadline") is not None, "the deadline timer was dropped"
        settings = (await matches.public.lobby_message(code)).settings  # the other process's start timer:
        assert await store.matches.start(code, encode(m.Lobby(code, "playing", [], settings, "")))
        clock.now = end + 1000  # the deadline timer, put back 200 ms later, is due again
        for _ in range(50):
            await daily.close_days()
            record = await daily.store.deal("2026-11-30", "relaxed")
            if record is not None and record.closed:
                break
            await asyncio.sleep(0.1)
        board = await daily.leaderboard("2026-11-30", "relaxed", 0, 50)
        assert [(e["name"], e["status"], e["time_ms"]) for e in board["entries"]] == [("split", "timeout", 5)]
        assert (await daily.reveal("2026-11-30", "relaxed"))["attempt_index"] >= 0

    await run(redis_url, ms("2026-11-30T23:59:59.000"), body)


async def test_a_name_claimed_under_the_old_key_is_still_found(redis_url: str) -> None:
    """Daily names were once keyed by NFKC_Casefold alone (``legacy_name_key``); a claim made then stays under that
    key in Redis. Its token still opens the name, no second claim is made under the skeleton key, and another
    spelling is refused as taken."""
    async def body(daily: DailyService, clock: FakeClock, matches: MatchService) -> None:
        token = "token kept from before"
        assert legacy_name_key("Sam") == "sam" != name_key("Sam")  # the skeleton key is another ("sarn")
        await daily.store.redis.hset(DAILY_NAMES, "sam", f"{hashlib.sha256(token.encode()).hexdigest()} Sam")
        assert token_hash(token) == hashlib.sha256(token.encode()).hexdigest()
        assert await daily.store.name_claim("Sam") == (token_hash(token), "Sam")
        assert (await refused(daily.attempt("relaxed", "Sam", None))).code == "bad_token"
        assert (await refused(daily.attempt("relaxed", "Sam", "not the token"))).code == "bad_token"
        assert (await refused(daily.attempt("relaxed", "SAM", None))).code == "name_taken"
        first = await daily.attempt("relaxed", "Sam", token)
        assert first["name"] == "Sam" and "name_token" not in first
        assert await daily.store.redis.hkeys(DAILY_NAMES) == [b"sam"]  # the old claim, and no new one

    await run(redis_url, ms("2026-11-30T12:00:00.000"), body)


async def test_a_name_claimed_by_a_refused_request_is_free_again(redis_url: str) -> None:
    """The first request of a name claims it; when that request is then refused (the day closed meanwhile,
    in another process whose clock is a little ahead), its name token never reaches anyone: the name must not
    stay claimed for ever."""
    async def body(daily: DailyService, clock: FakeClock, matches: MatchService) -> None:
        await daily.deal_of_day("2026-11-30", "relaxed")
        await daily.store.redis.hset("{d:2026-11-30:relaxed}:deal", "closed", "1")  # another process closed it
        assert (await refused(daily.attempt("relaxed", "newcomer", None))).code == "day_over"
        assert await daily.store.name_claim("newcomer") is None
        clock.now = ms("2026-12-01T00:00:01.000")
        first = await daily.attempt("relaxed", "newcomer", None)  # the next day: the name is claimed now
        assert first["date"] == "2026-12-01" and "name_token" in first

    await run(redis_url, ms("2026-11-30T23:59:59.990"), body)


async def test_an_attempt_finalized_by_a_process_without_the_daily_service_still_counts(redis_url: str) -> None:
    """A process of the deployment that runs no daily challenge (FTR_DAILY_VARIANTS empty) may finalize a daily
    match: it puts no entry on the board. The day's close records it, or the day never closes (no reveal)."""
    async def body(daily: DailyService, clock: FakeClock, matches: MatchService) -> None:
        attempt = await daily.attempt("relaxed", "elsewhere", None)
        session, _ = await connect(matches, attempt)
        await matches.playing.play(session, 1, "s")
        await next_frame(session, m.PositionReply)
        matches.daily = None  # this "process" knows nothing of the daily challenge
        await matches.playing.resign(session, 2)
        await next_frame(session, m.Results)
        matches.daily = daily
        clock.now = ms("2026-12-01T00:00:01.000")
        await daily.close_days()
        board = await daily.leaderboard("2026-11-30", "relaxed", 0, 50)
        assert [(e["name"], e["status"], e["moves"]) for e in board["entries"]] == [("elsewhere", "resigned", 1)]
        assert (await daily.reveal("2026-11-30", "relaxed"))["attempt_index"] >= 0
        assert (await daily.replay("2026-11-30", "relaxed", "elsewhere"))["moves"] == ["s"]

    await run(redis_url, ms("2026-11-30T20:00:00.000"), body)
