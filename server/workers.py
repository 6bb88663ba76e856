"""Worker processes for CPU-heavy work (the solver, dead-game checks): never the event loop.

Workers are spawned, not forked (a forked worker would inherit the open
sockets of the connections of the moment), and each one exits when its
server process is gone, even when that process was killed with SIGKILL.

Ctrl-C in a terminal sends SIGINT to the whole process group, workers
included: the server process shuts the pool down (as on SIGTERM), so a
worker must not die of it. A worker is started with SIGINT blocked (the
mask is inherited through the spawn's fork and exec), so the signal cannot
reach it even while its interpreter is still starting, before any Python
code of its own runs: a worker that died there broke the pool, and the
server logged "deal pool failed" for what was only a shutdown.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.context import SpawnContext, SpawnProcess

WORKER_NICENESS = 10
"""Added to a worker's nice value: on a small machine the solver and the dead-game checks yield the CPU to
the event loop (a dead check that took a core at bot pace made players' p99 round trip several times worse),
while they still get every cycle the event loop leaves idle."""


def _start_worker(parent: int) -> None:
    # Ctrl-C in a terminal interrupts the whole process group: a worker leaves its job to the server process,
    # which shuts the pool down (as on SIGTERM), instead of dying mid-job with a KeyboardInterrupt traceback.
    # SIGINT is blocked from the start (_WorkerProcess); ignoring it too also drops one that arrived meanwhile.
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


class _WorkerProcess(SpawnProcess):
    """A spawned process that never sees SIGINT: it is started with SIGINT blocked, and keeps that mask."""

    def start(self) -> None:
        """Spawn the process with SIGINT blocked in the spawning thread for the while, so the child starts with
        it blocked; a SIGINT that arrives here meanwhile waits, and is handled once the mask is restored."""
        before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            super().start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)


class _WorkerContext(SpawnContext):
    """The ``spawn`` start method with :class:`_WorkerProcess` processes."""

    Process = _WorkerProcess


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` spawned processes that die with this one, at a lower priority
    (:data:`WORKER_NICENESS`), and that SIGINT (Ctrl-C) never interrupts, from their start on."""
    return ProcessPoolExecutor(max_workers=max(1, workers), mp_context=_WorkerContext(),
                               initializer=_start_worker, initargs=(os.getpid(),))
