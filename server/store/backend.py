"""What every part of the store is given (:class:`Backend`): the client, the settings, the metrics and the
scripts' registration. :class:`server.store.Store` is one; the parts import this, never the store."""

from __future__ import annotations

from typing import Any, Protocol

from ..metrics import Metrics
from .client import RedisClient
from .scripts import Script


class Backend(Protocol):
    """The store as its parts see it."""

    redis: RedisClient
    retention_s: int
    """Seconds an ended match's keys are kept."""
    metrics: Metrics
    clustered: bool
    """Whether streams are read per slot."""
    wakes: bool
    """Whether the scripts publish wake-ups (a Redis Cluster)."""

    def register(self, script: Script) -> Any:
        """``script`` registered with the client: an ``AsyncScript`` to await with ``keys`` and ``args``."""
        ...
