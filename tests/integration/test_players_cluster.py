"""Named players on the 3+3 Redis Cluster: a race's join claims the names, the finalize records each player's
game on that player's slot (every script on one slot), and the results carry the records and the
head-to-head."""

from __future__ import annotations

import httpx
import pytest
from redis.crc import key_slot

from server.names import name_key
from server.store.keys import name_hash, profile_keys

from .conftest import ServerProcess, redis_at
from .test_players_history import race
from .test_race import solution

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


async def test_a_named_race_on_a_cluster(make_cluster_server, cluster_url: str) -> None:  # type: ignore[no-untyped-def]
    first, second = make_cluster_server(), make_cluster_server()
    moves = solution()
    code, results = await race(first.url, first.ws_url, "Ines", "Omar", moves)
    assert [(n.name, n.what, n.deal) for n in results.records if n.deal] == [
        ("Ines", "time", "seed 4"), ("Ines", "moves", "seed 4")]
    assert [(r.a, r.b, r.a_wins, r.b_wins, r.races) for r in results.head_to_head] == [("Ines", "Omar", 1, 0, 1)]
    server: ServerProcess = second  # the other process reads the same players
    for name, wins in (("Ines", 1), ("omar", 0)):
        shown = httpx.get(f"{server.url}/players/{name}", headers={"Accept": "application/json"}, timeout=10)
        assert shown.status_code == 200, shown.text
        assert (shown.json()["games"], shown.json()["wins"], shown.json()["recent"][0]["match"]) == (1, wins, code)
    client = redis_at(cluster_url)
    try:
        for name in ("Ines", "Omar"):
            keys = profile_keys(name_hash(name_key(name)))
            assert len({key_slot(key.encode()) for key in keys}) == 1
            assert sum(client.exists(key) for key in keys) == 7  # every part, on the master of that slot
    finally:
        client.close()
