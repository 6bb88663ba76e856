"""Worker processes for CPU-heavy work (the solver, dead-game checks): never the event loop.

Workers are spawned, not forked (a forked worker would inherit the open
sockets of the connections of the moment), and each one exits when its
server process is gone, even when that process was killed with SIGKILL.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor


def _exit_with_parent(parent: int) -> None:
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` spawned processes that die with this one."""
    return ProcessPoolExecutor(max_workers=max(1, workers), mp_context=multiprocessing.get_context("spawn"),
                               initializer=_exit_with_parent, initargs=(os.getpid(),))
