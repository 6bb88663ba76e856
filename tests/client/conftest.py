"""Fixtures of the client tests: the integration tests' real Redis and real server processes, and the client.

The client runs as a subprocess (``python -m client_cli``) with its token
file in a per-test folder (``FTR_CLIENT_DATA``) and the server's address in
``FTR_SERVER``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from server.engine import deal, find_variant
from server.engine.solver import Budget, solve
from tests.integration.conftest import (
    ROOT,
    ServerProcess,
    free_port,
    fresh_names,
    make_own_server,
    make_server,
    own_redis_url,
    redis_url,
    server,
)

SEED = "4"
VARIANT = "relaxed"


def solution(seed: str = SEED, variant: str = VARIANT) -> list[str]:
    """The solver's winning commands for a deal (relaxed "4" solves in well under a second)."""
    return list(_solution(seed, variant))


@lru_cache(maxsize=4)
def _solution(seed: str, variant: str) -> tuple[str, ...]:
    v = find_variant(variant)
    result = solve(deal(seed, v), v, Budget(nodes=50_000))
    assert result.result == "solved"
    return tuple(result.moves)


@pytest.fixture
def client_env(tmp_path: Path) -> dict[str, str]:
    """Environment of a client subprocess: its own token folder, no colour, no terminal size surprises."""
    env = dict(os.environ)
    env.update({"FTR_CLIENT_DATA": str(tmp_path / "client"), "PYTHONUNBUFFERED": "1"})
    env.pop("FTR_SERVER", None)
    return env


def run_client(args: list[str], env: dict[str, str], **kwargs: object) -> subprocess.Popen[str]:
    """Start ``python -m client_cli ARGS`` (text pipes for stdout and stderr)."""
    return subprocess.Popen([sys.executable, "-m", "client_cli", *args], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            **kwargs)  # type: ignore[call-overload]


__all__ = ["ROOT", "SEED", "VARIANT", "ServerProcess", "client_env", "free_port", "fresh_names", "make_own_server",
           "make_server", "own_redis_url", "redis_url", "run_client", "server", "solution"]
