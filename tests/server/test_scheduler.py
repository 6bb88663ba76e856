"""The solver scheduler's policy (server/scheduler.py), with fake jobs: an executor that runs nothing until the test
says a job is done, so the order, the shares and the deadlines are seen exactly."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

import pytest

from server.scheduler import DAILY, MIN_START_S, POOL, DeadlinePassed, QueueFull, SolverScheduler


class FakeExecutor(Executor):
    """Holds each submitted job until :meth:`finish` runs it (in the test's thread) and completes its future."""

    def __init__(self) -> None:
        self.jobs: list[tuple[Callable[[], Any], Future[Any]]] = []
        self.closed = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        if self.closed:
            raise RuntimeError("cannot schedule new futures after shutdown")
        future: Future[Any] = Future()
        future.set_running_or_notify_cancel()
        self.jobs.append((lambda: fn(*args, **kwargs), future))
        return future

    def running(self) -> list[Future[Any]]:
        return [future for _, future in self.jobs if not future.done()]

    def finish(self, index: int) -> None:
        call, future = self.jobs[index]
        try:
            future.set_result(call())
        except ValueError as error:  # the fake failure, fail()
            future.set_exception(error)


def job(label: str, seconds: float | None = None) -> tuple[str, float | None]:
    return label, seconds


def fail(label: str) -> None:
    raise ValueError(label)


async def settle() -> None:
    """Let the loop hand completed futures on (concurrent future -> asyncio future -> the scheduler)."""
    for _ in range(10):
        await asyncio.sleep(0)


def started_labels(executor: FakeExecutor) -> list[str]:
    """The labels of the jobs submitted so far, in the order they were started (their call run here: fake)."""
    return [call()[0] for call, _ in executor.jobs]


async def test_owners_take_turns_one_job_each() -> None:
    """One worker; an address with three jobs, another with two, the pool with two: after the job that found
    the worker free, every owner in turn starts its oldest job (round robin), whatever its backlog."""
    executor = FakeExecutor()
    solver = SolverScheduler(executor, 1)
    tasks = [asyncio.create_task(solver.run(owner, job, label)) for owner, label in
             [("198.51.100.1", "a1"), ("198.51.100.1", "a2"), ("198.51.100.1", "a3"),
              ("198.51.100.2", "b1"), ("198.51.100.2", "b2"), (POOL, "p1"), (POOL, "p2")]]
    await settle()
    for done in range(7):
        assert len(executor.running()) == 1
        executor.finish(done)
        await settle()
    # a1 found the worker free; then the turn order of the owners as they first queued: a, b, pool, a, b, pool.
    assert started_labels(executor) == ["a1", "a2", "b1", "p1", "a3", "b2", "p2"]
    assert [(await task)[0] for task in tasks] == ["a1", "a2", "a3", "b1", "b2", "p1", "p2"]
    assert solver.running == {} and solver.waiting("198.51.100.1") == 0


async def test_an_address_runs_at_most_half_the_workers_and_the_server_owners_the_rest() -> None:
    executor = FakeExecutor()
    solver = SolverScheduler(executor, 4)
    assert solver.share == 2
    flood = [asyncio.create_task(solver.run("198.51.100.1", job, f"a{n}")) for n in range(4)]
    await settle()
    assert solver.running == {"198.51.100.1": 2} and solver.waiting("198.51.100.1") == 2  # two workers idle
    fill = [asyncio.create_task(solver.run(POOL, job, f"p{n}")) for n in range(3)]
    await settle()
    assert solver.running == {"198.51.100.1": 2, POOL: 2} and solver.waiting(POOL) == 1
    other = asyncio.create_task(solver.run("198.51.100.2", job, "b"))
    await settle()
    assert len(executor.running()) == 4 and solver.waiting("198.51.100.2") == 1
    executor.finish(0)  # one of the flood's jobs ends: the next in turn is the other address, not the flood
    await settle()
    assert started_labels(executor)[4] == "b"
    assert solver.running == {"198.51.100.1": 1, POOL: 2, "198.51.100.2": 1}
    while executor.running():
        assert solver.running.get("198.51.100.1", 0) <= 2 and len(executor.running()) <= 4
        executor.finish(next(i for i, (_, f) in enumerate(executor.jobs) if not f.done()))
        await settle()
    assert sorted(label for label, _ in await asyncio.gather(*flood, *fill, other)) == [
        "a0", "a1", "a2", "a3", "b", "p0", "p1", "p2"]


async def test_one_worker_is_one_share() -> None:
    executor = FakeExecutor()
    solver = SolverScheduler(executor, 1)
    assert solver.share == 1
    task = asyncio.create_task(solver.run("198.51.100.1", job, "a"))
    assert (await asyncio.wait_for(_finish_when_started(executor, 0), 5))[0] == "a"
    assert (await task)[0] == "a"


async def _finish_when_started(executor: FakeExecutor, index: int) -> Any:
    while len(executor.jobs) <= index:
        await asyncio.sleep(0)
    executor.finish(index)
    return executor.jobs[index][1].result()


async def test_an_address_past_its_waiting_bound_is_refused_at_once_and_the_server_owners_never() -> None:
    executor = FakeExecutor()
    solver = SolverScheduler(executor, 1, waiting_per_address=2)
    held = [asyncio.create_task(solver.run("198.51.100.1", job, f"a{n}")) for n in range(3)]  # one runs, two wait
    await settle()
    with pytest.raises(QueueFull) as refused:
        await solver.run("198.51.100.1", job, "a3")
    assert refused.value.waiting == 2 and solver.waiting("198.51.100.1") == 2
    other = asyncio.create_task(solver.run("198.51.100.2", job, "b"))  # another address has its own bound
    server_own = [asyncio.create_task(solver.run(owner, job, f"{owner}{n}")) for owner in (POOL, DAILY)
                  for n in range(4)]
    await settle()
    assert solver.waiting("198.51.100.2") == 1 and solver.waiting(POOL) == 4 and solver.waiting(DAILY) == 4
    while executor.running():
        executor.finish(next(i for i, (_, f) in enumerate(executor.jobs) if not f.done()))
        await settle()
    assert len(await asyncio.gather(*held, other, *server_own)) == 12
    assert "a3" not in started_labels(executor)


async def test_a_deadline_counts_the_wait_and_the_job_gets_the_time_left() -> None:
    """A job with ``within_s`` behind a busy worker: started with the seconds left, or, past its deadline
    (less than MIN_START_S left), answered DeadlinePassed at that moment without ever running."""
    loop = asyncio.get_running_loop()
    executor = FakeExecutor()
    solver = SolverScheduler(executor, 1)
    blocker = asyncio.create_task(solver.run(POOL, job, "long"))
    await settle()
    submitted = loop.time()
    late = asyncio.create_task(solver.run("198.51.100.1", job, "late", within_s=0.6))
    with pytest.raises(DeadlinePassed):
        await late
    waited = loop.time() - submitted
    assert 0.6 - MIN_START_S - 0.02 <= waited < 0.6 + 0.2, waited  # answered when no start was possible any more
    assert started_labels(executor) == ["long"]  # never ran

    timely = asyncio.create_task(solver.run("198.51.100.1", job, "timely", within_s=1.0))
    await asyncio.sleep(0.3)
    executor.finish(0)
    label, seconds = await _finish_when_started(executor, 1)
    assert label == "timely" and seconds is not None and 1.0 - 0.3 - 0.15 < seconds <= 1.0 - 0.3, seconds
    assert (await timely)[1] == seconds and (await blocker)[1] is None  # no deadline: no seconds given
    alone = asyncio.create_task(solver.run("198.51.100.1", job, "alone", within_s=2.0))
    assert (await _finish_when_started(executor, 2))[1] == pytest.approx(2.0, abs=0.05)
    await alone


async def test_a_cancelled_caller_drops_its_waiting_job_and_a_running_one_keeps_its_worker() -> None:
    executor = FakeExecutor()
    solver = SolverScheduler(executor, 1)
    running = asyncio.create_task(solver.run("198.51.100.1", job, "running"))
    waiting = asyncio.create_task(solver.run("198.51.100.2", job, "waiting"))
    after = asyncio.create_task(solver.run("198.51.100.3", job, "after"))
    await settle()
    waiting.cancel()
    running.cancel()
    await settle()
    assert solver.waiting("198.51.100.2") == 0 and solver.running == {"198.51.100.1": 1}  # still in its worker
    assert len(executor.jobs) == 1
    executor.finish(0)
    await settle()
    assert started_labels(executor) == ["running", "after"]
    executor.finish(1)
    assert (await after)[0] == "after"
    assert running.cancelled() and waiting.cancelled()


async def test_failures_reach_their_caller_and_free_the_worker() -> None:
    executor = FakeExecutor()
    solver = SolverScheduler(executor, 1)
    failing = asyncio.create_task(solver.run("198.51.100.1", fail, "boom"))
    next_job = asyncio.create_task(solver.run("198.51.100.2", job, "next"))
    await settle()
    executor.finish(0)
    with pytest.raises(ValueError, match="boom"):
        await failing
    await settle()
    executor.finish(1)
    assert (await next_job)[0] == "next"
    executor.closed = True  # shut down: the caller hears it, and nothing is held
    with pytest.raises(RuntimeError, match="shutdown"):
        await solver.run(POOL, job, "late")
    assert solver.running == {} and solver.waiting(POOL) == 0
