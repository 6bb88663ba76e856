"""The server's Redis store: every key (:mod:`.keys`), every Lua script (:mod:`.scripts`), the records read
back (:mod:`.records`), the event streams the hub follows (:mod:`.streams`), the matches' store
(:mod:`.match_store`) and the daily challenge's (:mod:`.daily_store`). Nothing outside this package writes a
key name or runs a script."""

from .daily_store import DailyStore
from .match_store import RedisClient, Store, is_cluster, open_redis, redis_client, token_hash
from .records import DailyEntry, DailyReplay, DayDeal, MatchMeta, NameClaim, PlayerRecord, Timer
from .scripts import EVENTS_MAXLEN, SPECTATOR_KINDS
from .streams import Feed, day_feed, match_feed

__all__ = [
    "EVENTS_MAXLEN", "SPECTATOR_KINDS", "DailyEntry", "DailyReplay", "DailyStore", "DayDeal", "Feed", "MatchMeta",
    "NameClaim", "PlayerRecord", "RedisClient", "Store", "Timer", "day_feed", "is_cluster", "match_feed",
    "open_redis", "redis_client", "token_hash",
]
