"""Redis outages as the server's loops meet them: which errors are Redis itself failing, and one record per
loop that says once when Redis became unreachable and once when it was reached again (with how long it
took), and how long to wait between tries (capped, jittered: redis-py's own backoff). Why: an outage logs two
lines, not one per failed try."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from redis import exceptions as redis_errors
from redis.backoff import EqualJitterBackoff

REDIS_REFUSALS: tuple[type[Exception], ...] = (
    redis_errors.AuthenticationError,  # a wrong or missing password or user (a ConnectionError in redis-py)
    redis_errors.AuthorizationError,  # the user may not connect
    redis_errors.NoPermissionError,  # an ACL forbids the user a command or a key (NOPERM)
)
"""Redis answers, but refuses the server: at start a setting's fault (``REDIS_URL``: the server exits with status
2); once running, met as an outage (a Redis restarted with another password) and said so once."""

REDIS_UNAVAILABLE: tuple[type[Exception], ...] = (
    redis_errors.ConnectionError,  # refused, reset, still loading its data (BusyLoadingError), a wrong password
    redis_errors.NoPermissionError,  # an ACL changed under the server (see REDIS_REFUSALS)
    redis_errors.TimeoutError,  # no answer within the socket timeout (a stall)
    redis_errors.ClusterDownError,  # a cluster without a master for a slot (MasterDownError too)
    redis_errors.TryAgainError,  # a slot being moved
    redis_errors.ReadOnlyError,  # a write reached a replica during a failover
    redis_errors.RedisClusterException,  # no node of the cluster reachable, a slot no node serves
)
"""The failures of Redis itself (not of a request) that any route or loop may meet: a route answers each with
503 ``internal``, a loop waits for Redis and starts again. What the metrics count is wider
(:data:`server.metrics.REDIS_FAILURES`: an error reply, a bug's, too)."""

RETRY_BASE_S = 0.1
"""The first wait after a failure (seconds, before jitter): it doubles with each failure in a row."""

RETRY_CAP_S = 2.0
"""The longest wait between two tries (seconds): Redis back is noticed within about this."""

_MOST_FAILURES = 30
"""Failures in a row past which the backoff is computed as for this many (2**n overflows a float past 1023)."""


def describe(error: BaseException) -> str:
    """``"ConnectionError: Error 111 connecting to 127.0.0.1:6379. Connection refused."``: for a log line."""
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class Outage:
    """What one loop (``what``: ``"timers"``, ``"deal pool"``) knows of Redis: reachable, or unreachable since
    a failure. :meth:`failed` logs the first failure of an outage (a warning), :meth:`reached` its end (with
    its duration); the tries between are not logged. :meth:`delay` is the wait before the next try."""

    def __init__(self, what: str, logger: logging.Logger, *, cap_s: float = RETRY_CAP_S,
                 base_s: float = RETRY_BASE_S) -> None:
        self.what = what
        self.log = logger
        self.failures = 0
        """Failed tries in a row (0: Redis is reachable as far as this loop knows)."""
        self.since: float | None = None
        """``time.monotonic()`` of the outage's first failure, while it lasts."""
        self._backoff = EqualJitterBackoff(cap=cap_s, base=base_s)
        self._said_refused = False
        """Whether this outage's refusal (:data:`REDIS_REFUSALS`) was logged."""

    def failed(self, error: BaseException, message: str = "%(what)s: Redis unreachable (%(failure)s); retrying",
               **values: object) -> None:
        """One more failed try; the first of an outage is logged: ``message`` is a %-style template of the
        logging module, given ``what``, ``failure`` (the error, :func:`describe`) and ``values`` as a mapping. Text from
        outside (an address, a path that may hold ``{`` or ``%``) goes in ``values``, never in the template.
        A refusal (:data:`REDIS_REFUSALS`: Redis back with another password) is said once as such, in place of
        ``message`` or after it."""
        self.failures += 1
        refused = isinstance(error, REDIS_REFUSALS)
        if self.since is None or (refused and not self._said_refused):
            if self.since is None:
                self.since = time.monotonic()
            if refused:
                self._said_refused = True
                message = ("%(what)s: Redis refuses the server (%(failure)s): the password, user or permissions that "
                           "REDIS_URL gives are not the Redis's; retrying")
            self.log.warning(message, {"what": self.what, "failure": describe(error), **values})

    def reached(self, message: str = "%(what)s: Redis reachable again after %(seconds).1f s",
                **values: object) -> float | None:
        """Redis answered: an outage that was going on ends, logged (``message`` as for :meth:`failed`, given
        ``what``, ``seconds`` and ``values``); returns its length in seconds, ``None`` when there was none."""
        self.failures = 0
        self._said_refused = False
        if self.since is None:
            return None
        seconds = time.monotonic() - self.since
        self.since = None
        self.log.info(message, {"what": self.what, "seconds": seconds, **values})
        return seconds

    def delay(self) -> float:
        """Seconds to wait before the next try: doubling from :data:`RETRY_BASE_S` with the failures in a row,
        at most the cap, half of it random (redis-py's :class:`~redis.backoff.EqualJitterBackoff`), so that
        many processes do not try again in step."""
        return self._backoff.compute(min(max(self.failures, 1), _MOST_FAILURES))

    async def until_reached(self, probe: Callable[[], Awaitable[object]],
                            stopping: Callable[[], bool] = lambda: False) -> bool:
        """After :meth:`failed`: wait (:meth:`delay`), ``await probe()`` (a PING, say), and again until it
        answers, then :meth:`reached`. Returns False, without waiting on, once ``stopping()`` is true (checked
        before each try: a cancellation can be swallowed inside redis-py)."""
        while not stopping():
            await asyncio.sleep(self.delay())
            if stopping():
                break
            try:
                await probe()
            except REDIS_UNAVAILABLE as error:
                self.failed(error)
                continue
            self.reached()
            return True
        return False


__all__ = ["REDIS_REFUSALS", "REDIS_UNAVAILABLE", "RETRY_BASE_S", "RETRY_CAP_S", "Outage", "describe"]
