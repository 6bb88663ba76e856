"""What ``ftr_solver_decision_seconds`` records of a host's deal (server/metrics.py): a decision, never an answer
given without a search."""

from __future__ import annotations

import redis.asyncio as aioredis

from server.match.creation import CreateMatch
from server.matches import MatchService
from server.metrics import Metrics
from server.settings import Settings
from server.store import Store


def decisions(metrics: Metrics, job: str) -> dict[str, float]:
    return {sample.labels["result"]: sample.value for family in metrics.registry.collect()
            if family.name == "ftr_solver_decision_seconds" for sample in family.samples
            if sample.name.endswith("_count") and sample.labels["job"] == job}


async def test_a_host_deal_with_no_solver_workers_is_answered_unknown_and_not_timed(redis_url: str) -> None:
    client = aioredis.Redis.from_url(redis_url)
    service = MatchService(Store(client, 60), Settings(), None)  # no executor: nothing is ever searched
    service.metrics = Metrics()
    try:
        created = await service.creation.create(CreateMatch(variant="relaxed", seed="2"))
    finally:
        await client.aclose()
    assert created["solvable"] == "unknown" and created["state"] == "lobby"
    assert decisions(service.metrics, "host_deal") == {}
