"""The hub's read groups: one XREAD per group of streams, the groups a Redis Cluster needs (one hash slot each)."""

from __future__ import annotations

import redis.asyncio as aioredis
from redis.crc import key_slot

from server.hub import group_streams, order
from server.store import Store, day_feed, match_feed


def test_one_group_holds_every_stream_on_one_node() -> None:
    positions = {match_feed("AAAA").key: "1-0", day_feed("2026-11-30", "classic").key: "0-0",
                 match_feed("BBBB").key: "5-2"}
    groups = group_streams(positions, lambda key: 0)
    assert groups == {0: positions}
    assert list(groups[0]) == list(positions)  # XREAD's argument keeps the followed order


def test_groups_by_hash_slot_put_each_key_with_the_keys_of_its_slot() -> None:
    codes = [f"CODE{i}" for i in range(40)]
    positions = {match_feed(code).key: f"{i}-0" for i, code in enumerate(codes)}
    positions[day_feed("2026-11-30", "classic").key] = "9-9"
    groups = group_streams(positions, lambda key: key_slot(key.encode()))
    # Every key is in exactly one group, with its own position, and every group is one slot.
    assert sorted(k for keys in groups.values() for k in keys) == sorted(positions)
    for slot, keys in groups.items():
        assert {key_slot(k.encode()) for k in keys} == {slot}
        assert all(positions[k] == last for k, last in keys.items())
    # The hash tag decides the slot: a match's stream shares it with the match's other keys.
    assert key_slot(match_feed("CODE1").key.encode()) == key_slot(b"{m:CODE1}:meta")
    assert len(groups) > 1  # 40 codes do not all hash to one of 16384 slots


def test_the_store_groups_by_slot_only_on_a_cluster() -> None:
    store = Store(aioredis.Redis(), 60)  # no connection is made: grouping reads no Redis
    keys = [match_feed(f"C{i}").key for i in range(10)]
    assert {store.streams.group(k) for k in keys} == {0}
    store.clustered = True
    assert [store.streams.group(k) for k in keys] == [key_slot(k.encode()) for k in keys]


def test_stream_ids_order_as_redis_orders_them() -> None:
    ids = ["0-0", "0-1", "9-0", "10-0", "10-2", "10-10", "1700000000000-0"]
    shuffled = [ids[i] for i in (4, 0, 6, 2, 5, 1, 3)]
    assert sorted(shuffled, key=order) == ids
    assert sorted(ids) != ids  # as text "10-0" would come before "9-0"
