"""Tasks that serve many connections log without any one connection's context (server/logs.py): the store's flush
of a batch of commits and the daily challenge's preparation of a day's deal are started by whichever connection
came first, and must not name its match or connection on their lines."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import pytest
import redis.asyncio as aioredis

from server.core.player import Stored
from server.daily import DailyService
from server.logs import ContextFilter, in_match, new_connection
from server.matches import MatchService
from server.settings import Settings
from server.store import Store

DB = 13
"""A database of this test's own: the daily deal it prepares must not be there already."""


class Kept(logging.Handler):
    """The records of the server's loggers, through :class:`ContextFilter` as the server's handler is."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.addFilter(ContextFilter())
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def kept() -> Iterator[Kept]:
    logger = logging.getLogger("forty_thieves")
    handler, level = Kept(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def own_db(redis_url: str) -> str:
    return redis_url.rsplit("/", 1)[0] + f"/{DB}"


async def test_a_batch_of_commits_logs_without_the_context_of_its_first_committer(redis_url: str,
                                                                                   kept: Kept) -> None:
    """One replica is waited for and none is there: the flush of the batch warns, from its own task."""
    client = aioredis.Redis.from_url(own_db(redis_url))
    store = Store(client, 60, wait_replicas=1, wait_ms=10)

    async def connection(code: str, name: str) -> str:
        new_connection()
        in_match(code)
        record = Stored(1, 0, 0, 0, "playing", 5, 0)
        status, _ = await store.commits.commit(code, name, 1, 1, "s 5", record, False, [b"event"])
        return status

    try:
        # Two connections' commits of one turn of the loop: one batch, whose flush the first one's call started.
        statuses = await asyncio.gather(asyncio.create_task(connection("AAAAAAAAAAAA", "ann")),
                                        asyncio.create_task(connection("BBBBBBBBBBBB", "bob")))
    finally:
        await client.flushdb()
        await client.aclose()
    assert statuses == ["gone", "gone"]  # no such matches: refused, yet the batch was sent and waited for
    warned = [r for r in kept.records if r.name == "forty_thieves.store" and "replicas" in r.getMessage()]
    assert warned
    for record in warned:
        assert not hasattr(record, "match") and not hasattr(record, "connection"), record.__dict__


async def test_the_days_deal_is_prepared_without_the_context_of_the_connection_that_asked(redis_url: str,
                                                                                         kept: Kept) -> None:
    client = aioredis.Redis.from_url(own_db(redis_url))
    await client.flushdb()
    matches = MatchService(Store(client, 3600), Settings(countdown_s=0.0), None)
    daily = DailyService(matches.daily_link, ("relaxed",), secret="a secret", now_ms=lambda: 1_780_000_000_000)

    async def connection() -> str:
        new_connection()
        in_match("CCCCCCCCCCCC")
        return (await daily.deal_of_day("2026-05-28", "relaxed")).commitment

    try:
        commitment = await asyncio.create_task(connection())
    finally:
        await client.flushdb()
        await client.aclose()
    assert len(commitment) == 64
    prepared = [r for r in kept.records if r.name == "forty_thieves.daily" and "is solvable" in r.getMessage()]
    assert len(prepared) == 1
    assert not hasattr(prepared[0], "match") and not hasattr(prepared[0], "connection"), prepared[0].__dict__
