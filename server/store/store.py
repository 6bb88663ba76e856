"""The store: the server's one owner of Redis access, made of one part per job.

``store.matches`` (meta, state changes, lobby events, results), ``store.live`` (live counts),
``store.players`` (seats, tokens, records), ``store.commits`` (commands, WAIT, fence), ``store.rounds``,
``store.timers`` (timers and leases), ``store.streams`` (event streams), ``store.pool`` (the deal pool),
``store.daily`` (the daily challenge), ``store.profiles`` (named players: claims, history, records) and
``store.groups`` (groups of named players: members, their boards).
Keys: :mod:`.keys`; scripts: :mod:`.scripts`; records: :mod:`.records`.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio.cluster import RedisCluster

from ..metrics import Metrics, default_metrics
from .bots import BotPlaces
from .client import RedisClient
from .commits import Commits
from .daily_store import DailyStore
from .groups import Groups
from .matches import LiveCounts, Matches
from .players import Players
from .pool import DealPool
from .profiles import Profiles
from .rounds import Rounds
from .scripts import Script
from .streams import Streams
from .timers import Timers


class Store:
    """Redis access on ``client`` (opened in the app's lifespan): an ended match's keys are kept ``retention_s``
    seconds; ``wait_replicas`` and ``wait_ms`` as :class:`~server.store.commits.Commits` takes them
    (``FTR_REDIS_WAIT_REPLICAS``, ``FTR_REDIS_WAIT_MS``)."""

    def __init__(self, client: RedisClient, retention_s: int, wait_replicas: int = 0, wait_ms: int = 1000) -> None:
        self.redis = client
        self.retention_s = retention_s
        self.metrics: Metrics = default_metrics()
        """Where the store counts Redis failures and state changes: the app sets its own."""
        self.clustered = isinstance(client, RedisCluster)
        """Whether streams are read per slot (:meth:`server.store.streams.Streams.read`)."""
        self.wakes = self.clustered
        """Whether the scripts publish wake-ups (on a Redis Cluster: the hub reads the streams it is woken for)."""
        self.live = LiveCounts(self)
        self.matches = Matches(self, self.live)
        self.players = Players(self)
        self.commits = Commits(self, wait_replicas, wait_ms)
        self.rounds = Rounds(self)
        self.timers = Timers(self)
        self.streams = Streams(self)
        self.pool = DealPool(self)
        self.daily = DailyStore(self)
        self.profiles = Profiles(self)
        self.groups = Groups(self)
        self.bots = BotPlaces(self)

    def register(self, script: Script) -> Any:
        """``script`` registered with the client in the text this Redis runs (its ``wake`` by :attr:`wakes`): an
        ``AsyncScript`` to await with ``keys`` and ``args``."""
        return self.redis.register_script(script.source(self.wakes))

    async def time_ms(self) -> int:
        """Redis ``TIME`` in ms: the one clock all processes share."""
        seconds, micros = await self.redis.time()
        return int(seconds) * 1000 + int(micros) // 1000
