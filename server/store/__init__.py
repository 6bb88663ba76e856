"""The server's Redis store: every key (:mod:`.keys`), every Lua script (:mod:`.scripts`), the records read
back (:mod:`.records`), the event streams the hub follows (:mod:`.streams`), the matches' store
(:mod:`.match_store`) and the daily challenge's (:mod:`.daily_store`), and the Redis outages the server's
loops ride out (:mod:`.outages`). Nothing outside this package writes a key name or runs a script."""

from .daily_store import DailyStore
from .match_store import Store, open_redis, probe_client, redis_client, token_hash
from .outages import REDIS_REFUSALS, REDIS_UNAVAILABLE, Outage
from .records import DailyEntry, DailyReplay, DayDeal, MatchKeysGone, MatchMeta, PlayerRecord
from .streams import Feed, day_feed, match_feed

__all__ = [
    "REDIS_REFUSALS", "REDIS_UNAVAILABLE", "DailyEntry", "DailyReplay", "DailyStore", "DayDeal", "Feed", "MatchKeysGone", "MatchMeta", "Outage",
    "PlayerRecord", "Store", "day_feed", "match_feed", "open_redis", "probe_client", "redis_client", "token_hash",
]
