"""The server's Redis store: every key (:mod:`.keys`), every Lua script (:mod:`.scripts`), the records read
back (:mod:`.records`), the redis-py clients (:mod:`.client`), the :class:`Store` made of one part per job
(:mod:`.store`), and the Redis outages the server's loops ride out (:mod:`.outages`). Nothing outside this
package writes a key name, runs a script or reads a Redis field."""

from .client import open_redis, probe_client, redis_client
from .commits import CommitOutcome, Committed, Fenced
from .daily_store import Attempt, AttemptStatus, DailyStore
from .matches import LobbyWrite
from .outages import REDIS_REFUSALS, REDIS_UNAVAILABLE, Outage
from .players import EndStatus, Joined, JoinStatus, PlayerEnded, Resumed, StuckStatus, token_hash
from .records import BotSeat, DailyEntry, DailyReplay, DayDeal, MatchKeysGone, MatchMeta, PlayerRecord
from .rounds import ClaimStatus, NextClaim, RoundJoined, RoundJoinStatus
from .store import Store
from .streams import READ_COUNT, Feed, StreamEntry, day_feed, match_feed

__all__ = [
    "READ_COUNT", "REDIS_REFUSALS", "REDIS_UNAVAILABLE", "Attempt", "AttemptStatus", "BotSeat", "ClaimStatus",
    "CommitOutcome",
    "Committed", "DailyEntry", "DailyReplay", "DailyStore", "DayDeal", "EndStatus", "Feed", "Fenced",
    "JoinStatus", "Joined", "LobbyWrite", "MatchKeysGone", "MatchMeta", "NextClaim", "Outage", "PlayerEnded",
    "PlayerRecord", "Resumed", "RoundJoinStatus", "RoundJoined", "Store", "StreamEntry", "StuckStatus", "day_feed",
    "match_feed", "open_redis", "probe_client", "redis_client", "token_hash",
]
