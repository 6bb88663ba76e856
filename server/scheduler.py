"""Fair shares of the solver worker processes: one small scheduler, in the event loop, in front of the pool.

The work runs in the worker processes (:mod:`server.workers`); this only decides which job goes to a worker
when one is free, and for how long. The policy:

- Every job has an *owner*: the client address that asked (a host's own deal decided at creation), or one
  of the server's own owners, :data:`POOL` (the filler of the pool of ready deals) and :data:`DAILY` (the
  daily challenge's deals). Each owner has a queue, oldest job first.
- Fair turns between owners: when a worker is free, of the owners with a job waiting (and under their cap,
  below) the one running the fewest jobs starts its oldest job, ties going to the first in turn; it then goes
  to the back of the turn (round robin). So a flood from one address takes one turn in every round like any
  other owner, an owner running nothing goes before one already running, and the pool of ready deals keeps
  its turn (its jobs are short chunks: :data:`server.dealpool.FILL_CHUNK_S`).
- An address runs at most :attr:`SolverScheduler.share` jobs at once: half the workers, at least one. With
  two or more workers another address or the pool always finds a worker within one job's time. The server's
  own owners have no cap (their jobs are few and short, or rare).
- At most ``waiting_per_address`` jobs of one address wait at once; one more is refused at once with
  :class:`QueueFull` (HTTP 429 with ``Retry-After``). The server's own owners have no bound (each of their
  loops has one job out at a time).
- A job may have a deadline (``within_s`` from its submission): its wait for a worker counts. A job still
  waiting when less than :data:`MIN_START_S` of its time is left is dropped, and its caller gets
  :class:`DeadlinePassed` at that moment; a job that starts is given the time left (the keyword argument
  ``seconds``), so it ends within its deadline (plus the worker's own overhead).
- A caller cancelled while its job waits drops the job. A job that has started holds its worker until it ends
  (a worker process cannot be interrupted mid-job); its result is then dropped.
- A job whose worker failed (the pool broke, the pool was shut down) raises that error to its caller.
"""

from __future__ import annotations

import asyncio
import functools
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

POOL = "deal pool"
"""The owner of the filler's jobs (:func:`server.dealpool.fill_pool`); no address has a space in it."""
DAILY = "daily challenge"
"""The owner of the daily challenge's deal preparation (:func:`server.core.daily.find_daily_deal`)."""
SERVER_OWNERS = frozenset({POOL, DAILY})
"""Owners with no cap on running jobs and no bound on waiting ones (the server's own loops)."""

WAITING_PER_ADDRESS = 4
"""How many jobs of one address may wait for a worker at once (beyond those it runs)."""
MIN_START_S = 0.25
"""A job with a deadline is not started with less than this left: it is answered as past its deadline."""


class QueueFull(Exception):
    """``owner`` already has ``waiting`` jobs waiting for a worker (the bound of one address)."""

    def __init__(self, owner: str, waiting: int) -> None:
        super().__init__(f"{owner} already has {waiting} solver jobs waiting")
        self.owner = owner
        self.waiting = waiting


class DeadlinePassed(Exception):
    """The job waited for a worker until its deadline (less than :data:`MIN_START_S` left): it never ran."""

    def __init__(self, waited_s: float) -> None:
        super().__init__(f"no solver worker was free for {waited_s:.1f} s")
        self.waited_s = waited_s


@dataclass(eq=False)
class _Job:
    owner: str
    call: Callable[..., Any]
    """The job without its ``seconds`` (added at the start when the job has a deadline)."""
    submitted: float
    deadline: float | None
    result: asyncio.Future[Any]
    timer: asyncio.TimerHandle | None = field(default=None)


class SolverScheduler:
    """Runs jobs in ``executor`` (``None``: the event loop's default executor), ``workers`` at a time, by the
    policy of the module docstring. Create it anywhere, use it in one event loop (its clock: the loop's)."""

    def __init__(self, executor: Executor | None, workers: int, *,
                 waiting_per_address: int = WAITING_PER_ADDRESS) -> None:
        self.executor = executor
        self.workers = max(1, workers)
        self.share = max(1, (self.workers + 1) // 2)
        """How many jobs one address may run at once: half the workers (rounded up), at least one."""
        self.waiting_per_address = waiting_per_address
        self._queues: dict[str, deque[_Job]] = {}
        """Each owner's waiting jobs, oldest first (owners with none are removed)."""
        self._turn: deque[str] = deque()
        """The owners with waiting jobs, in round-robin order: the next to start a job first."""
        self._running: dict[str, int] = {}
        self._busy = 0

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

    @property
    def running(self) -> dict[str, int]:
        """How many jobs each owner runs now (owners running none left out)."""
        return dict(self._running)

    def waiting(self, owner: str) -> int:
        """How many jobs of ``owner`` wait for a worker."""
        return len(self._queues.get(owner, ()))

    async def run(self, owner: str, fn: Callable[..., T], /, *args: Any, within_s: float | None = None,
                  **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in a worker, when ``owner``'s turn comes; its return value.

        With ``within_s`` the job's wait counts against it: ``fn`` is called with the seconds left as the
        keyword ``seconds`` (at least :data:`MIN_START_S`), or not at all. Raises :class:`QueueFull` at once
        (nothing queued) when ``owner`` is an address with ``waiting_per_address`` jobs waiting,
        :class:`DeadlinePassed` when ``within_s`` went by before a worker was free, and whatever ``fn`` or the
        executor raised (``RuntimeError`` once the executor is shut down).
        """
        queue = self._queues.get(owner)
        if owner not in SERVER_OWNERS and queue is not None and len(queue) >= self.waiting_per_address:
            raise QueueFull(owner, len(queue))
        loop = asyncio.get_running_loop()
        now = self._now()
        job = _Job(owner, functools.partial(fn, *args, **kwargs), now,
                   None if within_s is None else now + within_s, loop.create_future())
        if queue is None:
            queue = self._queues[owner] = deque()
            self._turn.append(owner)
        queue.append(job)
        if job.deadline is not None:
            job.timer = loop.call_later(max(0.0, within_s - MIN_START_S), self._expire, job)  # type: ignore[operator]
        job.result.add_done_callback(functools.partial(self._abandoned, job))
        self._dispatch()
        return await job.result  # type: ignore[no-any-return]

    def _remove(self, job: _Job) -> bool:
        """Take ``job`` out of its owner's queue; False when it is not waiting (it has started)."""
        queue = self._queues.get(job.owner)
        if queue is None or job not in queue:
            return False
        queue.remove(job)
        if not queue:
            del self._queues[job.owner]
            self._turn.remove(job.owner)
        if job.timer is not None:
            job.timer.cancel()
        return True

    def _expire(self, job: _Job) -> None:
        if self._remove(job) and not job.result.done():
            job.result.set_exception(DeadlinePassed(self._now() - job.submitted))

    def _abandoned(self, job: _Job, result: asyncio.Future[Any]) -> None:
        if result.cancelled():  # its caller was cancelled: a waiting job is dropped
            self._remove(job)

    def _may_start(self, owner: str) -> bool:
        return owner in SERVER_OWNERS or self._running.get(owner, 0) < self.share

    def _dispatch(self) -> None:
        """Start jobs while a worker is free and an owner in turn may start one (see the module docstring)."""
        while self._busy < self.workers:
            allowed = [owner for owner in self._turn if self._may_start(owner)]
            if not allowed:
                return  # nothing waits, or every owner with jobs waiting runs its share
            owner = min(allowed, key=lambda owner: self._running.get(owner, 0))  # the first in turn of the least busy
            self._turn.remove(owner)
            self._turn.append(owner)  # to the back of the turn
            job = self._queues[owner][0]
            self._remove(job)
            self._start(job)

    def _start(self, job: _Job) -> None:
        call = job.call
        if job.deadline is not None:
            left = job.deadline - self._now()
            if left < MIN_START_S:  # its timer is due and has not run yet
                job.result.set_exception(DeadlinePassed(self._now() - job.submitted))
                return
            call = functools.partial(call, seconds=left)
        loop = asyncio.get_running_loop()
        try:
            work = loop.run_in_executor(self.executor, call)
        except RuntimeError as error:  # shut down, or broken beyond repair (BrokenExecutor): the caller hears why
            if not job.result.done():
                job.result.set_exception(error)
            return
        self._busy += 1
        self._running[job.owner] = self._running.get(job.owner, 0) + 1
        work.add_done_callback(functools.partial(self._finished, job))

    def _finished(self, job: _Job, work: asyncio.Future[Any]) -> None:
        self._busy -= 1
        self._running[job.owner] -= 1
        if not self._running[job.owner]:
            del self._running[job.owner]
        if not job.result.done():
            if work.cancelled():
                job.result.cancel()
            elif work.exception() is not None:
                job.result.set_exception(work.exception())  # type: ignore[arg-type]
            else:
                job.result.set_result(work.result())
        elif not work.cancelled():
            work.exception()  # retrieved, so an abandoned job's failure logs no "never retrieved" warning
        self._dispatch()


__all__ = ["DAILY", "MIN_START_S", "POOL", "SERVER_OWNERS", "WAITING_PER_ADDRESS", "DeadlinePassed", "QueueFull",
           "SolverScheduler"]
