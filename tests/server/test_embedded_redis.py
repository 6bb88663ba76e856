"""The embedded Redis (README's first command): what the server stored is there after a restart."""

from __future__ import annotations

from pathlib import Path

import redis

from server.embedded_redis import EmbeddedRedis


def test_a_restarted_embedded_redis_finds_what_was_written(tmp_path: Path) -> None:
    """close() must save: it sent SHUTDOWN SAVE NOW FORCE, a syntax error for the bundled Redis 6.2, then
    killed the server after 2.5 s, so everything written since the last periodic save was lost."""
    first = EmbeddedRedis(str(tmp_path))
    client = redis.Redis.from_url(first.url)
    client.set("match", "still here")
    client.close()
    first.close()
    second = EmbeddedRedis(str(tmp_path))
    try:
        client = redis.Redis.from_url(second.url)
        assert client.get("match") == b"still here"
        client.close()
    finally:
        second.close()
