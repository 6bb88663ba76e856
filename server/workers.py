"""Worker processes for CPU-heavy work (the solver, dead-game checks): never the event loop.

Workers are spawned, not forked (a forked worker would inherit the open
sockets of the connections of the moment), and each one exits when its
server process is gone, even when that process was killed with SIGKILL.

Ctrl-C in a terminal sends SIGINT to the whole process group, workers
included: the server process shuts the pool down (as on SIGTERM), so a
worker must not die of it. A worker is started with SIGINT blocked (the
mask is inherited through the spawn's fork and exec), so the signal cannot
reach it even before its interpreter runs any code of its own (one that
died there broke the pool: "deal pool failed" for a mere shutdown).

A worker that dies for a real reason (the OOM killer, a crash) breaks a
``ProcessPoolExecutor`` for good: :class:`WorkerPool` replaces the broken
pool with a fresh one, so only the jobs that were running fail.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.context import SpawnContext, SpawnProcess
from typing import Any, ParamSpec, TypeVar

log = logging.getLogger("forty_thieves.workers")

P = ParamSpec("P")
T = TypeVar("T")

WORKER_NICENESS = 10
"""Added to a worker's nice value: on a small machine the solver and the dead-game checks yield the CPU to
the event loop, while they still get every cycle it leaves idle."""

TERMINATED_S = 2.0
"""How long :meth:`WorkerPool.stop` waits for the pool to wind down once it has terminated its busy workers."""


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


class WorkerPool(Executor):
    """A process pool that replaces itself when a worker dies.

    Jobs run in a ``ProcessPoolExecutor`` of ``workers`` processes. When a
    worker dies (its jobs' futures fail with ``BrokenProcessPool``, and that
    pool refuses every later job), the next :meth:`submit` or the failed
    job's completion swaps in a fresh pool: the jobs that were running fail,
    later ones run. After :meth:`shutdown`, ``submit`` raises ``RuntimeError``.
    """

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)
        self.restarts = 0
        """How many broken pools were replaced."""
        self._lock = threading.Lock()
        self._closed = False
        self._manager: threading.Thread | None = None
        """The shut-down pool's manager thread (:meth:`stopped`)."""
        self._processes: list[SpawnProcess] = []
        """The shut-down pool's worker processes (:meth:`stop`)."""
        self._pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=_WorkerContext(),
                                   initializer=_start_worker, initargs=(os.getpid(),))

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Run ``fn(*args, **kwargs)`` in a worker; a pool found broken is replaced first.

        Raises ``RuntimeError`` after :meth:`shutdown`."""
        for _ in range(3):  # a pool replaced by another thread meanwhile: try the new one
            with self._lock:
                if self._closed:
                    raise RuntimeError("cannot schedule new futures after shutdown")
                pool = self._pool
            try:
                future = pool.submit(fn, *args, **kwargs)
            except BrokenProcessPool:
                self._replace(pool)
                continue
            except RuntimeError:  # that pool was shut down by a replacement
                if self._pool is pool:
                    raise
                continue
            future.add_done_callback(functools.partial(self._check, pool))
            return future
        raise BrokenProcessPool("the worker processes keep dying")

    def _check(self, pool: ProcessPoolExecutor, future: Future[Any]) -> None:
        if not future.cancelled() and isinstance(future.exception(), BrokenProcessPool):
            self._replace(pool)

    def _replace(self, broken: ProcessPoolExecutor) -> ProcessPoolExecutor:
        """Swap ``broken`` for a fresh pool (once, whoever notices first); returns the current pool."""
        with self._lock:
            if self._pool is broken and not self._closed:
                broken.shutdown(wait=False, cancel_futures=True)
                self._pool = self._new_pool()
                self.restarts += 1
                log.warning("a worker process died; its jobs failed, a new pool of %d takes the next ones",
                            self.workers)
            return self._pool

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Shut the current pool down (``concurrent.futures.Executor.shutdown``); it is not replaced again."""
        with self._lock:
            self._closed = True
            pool = self._pool
        # CPython's, not public API: the thread that winds the pool down and the worker processes (shutdown
        # forgets both); see stopped and stop.
        self._manager = getattr(pool, "_executor_manager_thread", None)
        self._processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=wait, cancel_futures=cancel_futures)

    async def stopped(self, within_s: float) -> bool:
        """After :meth:`shutdown` without waiting: wait, polling every 50 ms and never blocking the event loop,
        until the pool has wound down (its manager thread, which lets a running job end, then joins the
        workers), for at most ``within_s`` seconds. True when it has.

        Why: that thread closes its wake-up pipe while it winds down, and Python 3.11's exit hook for process
        pools checks the pipe and writes to it without a lock; a process that exits meanwhile printed
        ``OSError: [Errno 9] Bad file descriptor`` with a traceback at a Ctrl-C now and then. Once the thread
        has ended the pipe is marked closed and the hook leaves it alone. The thread is the executor's
        ``_executor_manager_thread``, kept by :meth:`shutdown` (CPython's, not public API: without it there is
        nothing to wait for)."""
        thread = self._manager
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within_s
        while thread is not None and thread.is_alive():
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(0.05)
        return True

    async def stop(self, grace_s: float) -> bool:
        """Stop the pool for good, from the event loop: :meth:`shutdown` without waiting (queued jobs
        cancelled), ``grace_s`` seconds for a running job to end, then the workers still busy terminated (their
        results are not wanted any more: a solve ran up to 30 s), and a wait until the pool has wound down
        (:meth:`stopped`, at most :data:`TERMINATED_S` more). True when it has.

        Why: while the pool's manager thread lives, it holds the pool's two queues and with them 5 named
        semaphores, which only their collection or Python's exit unlinks. A server stopped by SIGTERM dies of the
        signal (uvicorn raises it again once it has shut down), so no exit hook runs: a job still running then
        left "There appear to be 5 leaked semaphore objects" on stderr, from multiprocessing's resource tracker.
        Once the thread has ended and this pool no longer refers to it, the queues are collected and their
        semaphores unlinked at once."""
        self.shutdown(wait=False, cancel_futures=True)
        done = await self.stopped(grace_s)
        if not done:
            for process in self._processes:
                if process.is_alive():
                    process.terminate()
            done = await self.stopped(TERMINATED_S)
        if done:
            self._manager, self._processes = None, []
            gc.collect()  # the queues' semaphores, if a cycle holds them: unlinked now, not at an exit that never runs
        return done


def worker_pool(workers: int) -> WorkerPool:
    """A pool of ``workers`` spawned processes that die with this one, at a lower priority
    (:data:`WORKER_NICENESS`), that SIGINT (Ctrl-C) never interrupts, from their start on, and that
    replaces itself when a worker dies (:class:`WorkerPool`)."""
    return WorkerPool(workers)
