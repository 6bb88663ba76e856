"""The single-node Redis client the server builds (:func:`server.store.redis_client`), on a real Redis: its
redis-py adaptations (:mod:`server.store.client`) each change what a test here sees."""

from __future__ import annotations

import asyncio
import secrets
import tempfile
from typing import Any

import pytest
import redis.asyncio as aioredis

from server.store.client import HiredisPackedConnection, probe_client, redis_client

from .conftest import free_port, start_redis_server


async def test_a_single_node_client_packs_its_commands_with_hiredis(redis_url: str) -> None:
    """A ``redis://`` client's connections pack with hiredis, byte for byte what redis-py's own Python packer
    makes, and Redis reads them back as written."""
    client = redis_client(redis_url)
    try:
        assert client.connection_pool.connection_class is HiredisPackedConnection
        key = "{store-client}:packed"
        value = "é\x00 x" * 3000  # past redis-py's buffer cutoff: packed in several parts
        args = ("SET", key, value, "EX", 60, b"\xff\x00")
        connection = client.connection_pool.make_connection()  # not connected: packing needs no socket
        assert isinstance(connection, HiredisPackedConnection)
        python = b"".join(aioredis.Connection.pack_command(connection, *args))
        assert b"".join(connection.pack_command(*args)) == python
        await connection.disconnect()
        await client.set(key, value.encode(), ex=60)
        assert await client.get(key) == value.encode()
        await client.delete(key)
    finally:
        await client.aclose()


async def _names_connected(redis_url: str, name: str, connected: bool) -> bool:
    """Whether Redis comes to list a client named ``name`` (``connected``) or none (not ``connected``) within
    5 s, asked on a connection of its own (Redis drops a client once it reads the closed socket)."""
    async with aioredis.Redis.from_url(redis_url) as observer:
        for _ in range(100):
            listed = any(client.get("name") == name for client in await observer.client_list())
            if listed is connected:
                return True
            await asyncio.sleep(0.05)
    return False


@pytest.mark.parametrize("make", [redis_client, lambda url: probe_client(url, 1.0)], ids=["server", "probe"])
async def test_closing_a_single_node_client_disconnects_its_pool(redis_url: str, make: Any) -> None:
    """The server's client and the readiness probe's own their pools: after ``aclose()`` (the server's
    shutdown) Redis no longer lists their connections (a pool passed as ``connection_pool=`` stays open)."""
    client = make(redis_url)
    name = f"ftr-close-{secrets.token_hex(4)}"
    try:
        await client.execute_command("CLIENT", "SETNAME", name)  # a fresh pool: its one connection
        assert await _names_connected(redis_url, name, True)
    finally:
        await client.aclose()
    assert await _names_connected(redis_url, name, False), "the pool's connection is still open after aclose()"


async def test_a_single_node_client_reconnects_after_a_redis_restart() -> None:
    """After Redis restarts, every command on the connections pooled before it answers: the pool finds each
    connection closed and opens it again (with redis-py's maintenance notifications on, it did not check, and
    each pooled connection failed one command)."""
    port, folder = free_port(), tempfile.mkdtemp(prefix="ftr-restart-")
    process, _ = start_redis_server(folder, port)
    client = redis_client(f"redis://127.0.0.1:{port}/0")
    try:
        await asyncio.gather(*(client.execute_command("DEBUG", "SLEEP", "0.05") for _ in range(8)))
        assert sum(count for count, _ in client.connection_pool.get_connection_count()) == 8
        process.terminate()
        process.wait(5)
        process, _ = start_redis_server(folder, port)
        await asyncio.sleep(0.1)  # the loop reads the old connections' end, as a server's loop would meanwhile
        answers = await asyncio.gather(*(client.incr("{store-client}:restarts") for _ in range(8)),
                                       return_exceptions=True)
        assert sorted(a for a in answers if isinstance(a, int)) == list(range(1, 9)), answers
    finally:
        await client.aclose()
        process.terminate()
        process.wait(5)
