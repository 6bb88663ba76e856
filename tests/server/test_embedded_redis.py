"""The embedded Redis (README's first command): what the server stored is there after a restart; one process
owns a data folder at a time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import redis

from server.embedded_redis import DataFolderInUse, EmbeddedRedis


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


def test_a_data_folder_owned_by_a_live_process_is_refused_and_free_once_that_process_is_killed(tmp_path: Path) -> None:
    """The claim is a lock another process sees (the error names the owner's pid and FTR_DATA_DIR), and the
    kernel drops it when the owner dies without a word (SIGKILL): no stale lock keeps a folder claimed."""
    owner = subprocess.Popen(
        [sys.executable, "-c", ("import sys, time; from server.embedded_redis import claim_data_folder; "
                                "claim_data_folder(sys.argv[1]); print('claimed', flush=True); time.sleep(60)"),
         str(tmp_path)],
        stdout=subprocess.PIPE)
    try:
        assert owner.stdout is not None and owner.stdout.readline() == b"claimed\n"
        with pytest.raises(DataFolderInUse) as refused:
            EmbeddedRedis(str(tmp_path))
        assert f"pid {owner.pid}" in str(refused.value) and "FTR_DATA_DIR" in str(refused.value)
        assert not (tmp_path / "forty-thieves-race.rdb.settings").exists()  # no Redis was started meanwhile
    finally:
        owner.kill()
        owner.wait(5)
        if owner.stdout is not None:
            owner.stdout.close()
    embedded = EmbeddedRedis(str(tmp_path))
    try:
        client = redis.Redis.from_url(embedded.url)
        assert client.ping()
        client.close()
    finally:
        embedded.close()
