"""Worker processes (server/workers.py): they run below the event loop's priority."""

from __future__ import annotations

import os

from server.workers import WORKER_NICENESS, worker_pool


def test_workers_run_at_a_lower_priority_than_the_server() -> None:
    pool = worker_pool(1)
    try:
        worker_nice = pool.submit(os.nice, 0).result(timeout=60)
    finally:
        pool.shutdown()
    assert worker_nice == min(19, os.nice(0) + WORKER_NICENESS)


def test_a_worker_interrupted_while_it_starts_keeps_working() -> None:
    """Ctrl-C reaches every process of the terminal's group, workers included. A worker ignored SIGINT only once
    its initializer ran; one interrupted while its interpreter was still starting died, the pool broke, and the
    server logged "deal pool failed" for what was a shutdown. SIGINT is sent here right after the spawn."""
    import multiprocessing
    import signal

    before = set(multiprocessing.active_children())
    pool = worker_pool(1)
    try:
        future = pool.submit(pow, 2, 10)  # spawns the worker process now
        started = set(multiprocessing.active_children()) - before
        assert len(started) == 1, started
        for worker in started:
            os.kill(worker.pid, signal.SIGINT)  # long before its interpreter has started
        assert future.result(timeout=60) == 1024
        assert pool.submit(pow, 3, 4).result(timeout=60) == 81
        for worker in started:
            os.kill(worker.pid, signal.SIGINT)  # and once it runs
        assert pool.submit(pow, 5, 2).result(timeout=60) == 25
    finally:
        pool.shutdown()


def _die() -> None:
    os._exit(3)  # a worker killed mid-job (the OOM killer, a crash in the C solver): no exception, just gone


def test_a_pool_whose_worker_died_replaces_it_and_keeps_working() -> None:
    """A ProcessPoolExecutor whose worker dies is broken for good: every later job fails at once with
    BrokenProcessPool, so the deal pool stopped filling (matches stayed "preparing deal") and the dead-game
    checks stopped until a restart. The job that was running fails; the next ones run on fresh workers."""
    from concurrent.futures.process import BrokenProcessPool

    import pytest

    pool = worker_pool(1)
    try:
        assert pool.submit(pow, 2, 5).result(timeout=60) == 32
        with pytest.raises(BrokenProcessPool):
            pool.submit(_die).result(timeout=60)
        assert pool.submit(pow, 3, 3).result(timeout=60) == 27
        assert [pool.submit(pow, 2, k).result(timeout=60) for k in range(4)] == [1, 2, 4, 8]
        with pytest.raises(BrokenProcessPool):  # and again: it heals every time
            pool.submit(_die).result(timeout=60)
        assert pool.submit(pow, 7, 2).result(timeout=60) == 49
    finally:
        pool.shutdown()
    with pytest.raises(RuntimeError):  # shut down means shut down: no new workers
        pool.submit(pow, 1, 1)


async def test_a_pool_shut_down_without_waiting_is_seen_to_wind_down() -> None:
    """``stopped`` waits (without blocking the loop) until the pool's manager thread has ended, after which
    Python's exit hook no longer writes to its closed wake-up pipe; it gives up after its bound while a job
    still runs in a worker."""
    import asyncio
    import time

    pool = worker_pool(1)
    assert pool.submit(os.getpid).result(timeout=60) != os.getpid()  # a worker started and ran a job
    pool.shutdown(wait=False, cancel_futures=True)
    thread = pool._manager
    assert thread is not None
    assert await pool.stopped(30)
    assert not thread.is_alive()

    busy = worker_pool(1)
    busy.submit(time.sleep, 3)
    await asyncio.sleep(1.0)  # the job runs in the worker
    busy.shutdown(wait=False, cancel_futures=True)
    started = time.monotonic()
    assert not await busy.stopped(0.3)  # the job holds the pool for 2 s more
    assert 0.3 <= time.monotonic() - started < 1.5
    assert await busy.stopped(30)
