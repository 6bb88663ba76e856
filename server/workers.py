"""Worker processes for CPU-heavy work (the solver, dead-game checks): never the event loop.

Workers are spawned, not forked (a forked worker would inherit the open
sockets of the connections of the moment), and each one exits when its
server process is gone, even when that process was killed with SIGKILL.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor


WORKER_NICENESS = 10
"""Added to a worker's nice value: on a small machine the solver and the dead-game checks yield the CPU to
the event loop (a dead check that took a core at bot pace made players' p99 round trip several times worse),
while they still get every cycle the event loop leaves idle."""


def _start_worker(parent: int) -> None:
    # Ctrl-C in a terminal interrupts the whole process group: a worker leaves its job to the server process,
    # which shuts the pool down (as on SIGTERM), instead of dying mid-job with a KeyboardInterrupt traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        os.nice(WORKER_NICENESS)
    except OSError:  # not allowed here: run at the same priority
        pass
    _exit_with_parent(parent)


def _exit_with_parent(parent: int) -> None:
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` spawned processes that die with this one, at a lower priority
    (:data:`WORKER_NICENESS`)."""
    return ProcessPoolExecutor(max_workers=max(1, workers), mp_context=multiprocessing.get_context("spawn"),
                               initializer=_start_worker, initargs=(os.getpid(),))
