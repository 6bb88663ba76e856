"""Named players on the 3+3 Redis Cluster: a race's join claims the names, the finalize records each player's
game on that player's slot (every script on one slot), and the results carry the records and the
head-to-head; a group made on one process, joined on the other, reads its members and their head-to-head
across the players' slots, and goes when its last member leaves."""

from __future__ import annotations

import httpx
import pytest
from redis.crc import key_slot

from server.names import name_key
from server.store.keys import group_key, name_hash, profile_key, profile_keys

from .conftest import ServerProcess, redis_at
from .test_players_history import race
from .test_race import solution
from .wsclient import PLAYER_KEYS

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
            assert sum(client.exists(key) for key in keys) == 8  # every part but groups, on the master of that slot
    finally:
        client.close()

    # A group: made on one process, joined on the other; its keys on one slot, each member's side on its own.
    ines, omar = (PLAYER_KEYS[name_key(name)] for name in ("Ines", "Omar"))
    made = httpx.post(f"{first.url}/groups", json={"name": "Ines & co", "player": "Ines", "player_key": ines},
                      timeout=10)
    assert made.status_code == 201, made.text
    group = made.json()["group"]
    joined = httpx.post(f"{server.url}/groups/{group}/members", json={"player": "Omar", "player_key": omar},
                        timeout=10)
    assert joined.status_code == 200, joined.text
    shown = httpx.get(f"{first.url}/groups/{group}", headers={"Accept": "application/json"}, timeout=10).json()
    assert shown["members"] == ["Ines", "Omar"]
    assert shown["head_to_head"] == [{"a": "Ines", "b": "Omar", "races": 1, "a_wins": 1, "b_wins": 0, "draws": 0}]
    client = redis_at(cluster_url)
    try:
        assert key_slot(group_key(group, "group").encode()) == key_slot(group_key(group, "members").encode())
        assert client.hlen(group_key(group, "members")) == 2
        for name, key in (("Ines", ines), ("Omar", omar)):
            assert client.hget(profile_key(name_hash(name_key(name)), "groups"), group) == b"Ines & co"
            left = httpx.request("DELETE", f"{second.url}/groups/{group}/members/{name}",
                                 headers={"Authorization": f"Bearer {key}"}, timeout=10)
            assert left.status_code == 204, left.text
            assert not client.exists(profile_key(name_hash(name_key(name)), "groups"))
        assert not client.exists(group_key(group, "group")) and not client.exists(group_key(group, "members"))
    finally:
        client.close()
