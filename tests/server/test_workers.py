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
