"""The scripts on the server's global keys and the daily challenge's: live counts, timers, days, names."""

from __future__ import annotations

from .base import EVENTS_MAXLEN, Script

LIVE_STATE = Script(
    "LIVE_STATE", "global", ('live_matches', 'live_counts'),
    """Count a match in the live state it is in now, or in none.

    KEYS: live matches, live counts. ARGV: code, state ('' none: it left the live states), then either the
    order of the live states (each a state; a match never goes back in it, so a change counted late, after a
    later one, is not undone) or ``=`` and the state the match must be counted in now ('' none: the sweep's
    correction, made only when no change came between its reads).
    Reply: 1 moved, 0 not (counted so already, a step back, or not counted as expected).""",
    """
local old = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if old == ARGV[2] then return 0 end
if ARGV[3] == '=' then
  if old ~= (ARGV[4] or '') then return 0 end
else
  local rank = {}
  for i = 3, #ARGV do rank[ARGV[i]] = i end
  if old ~= '' and ARGV[2] ~= '' and rank[ARGV[2]] < rank[old] then return 0 end
end
if old ~= '' then
  if redis.call('HINCRBY', KEYS[2], old, -1) <= 0 then redis.call('HDEL', KEYS[2], old) end
end
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  redis.call('HINCRBY', KEYS[2], ARGV[2], 1)
end
return 1
""")

DONE_IF_DUE = Script(
    "DONE_IF_DUE", "global", ('timers',),
    """Remove a timer that is due, not one set again for later meanwhile.

    KEYS: timers. ARGV: member, now ms. Reply: 1 removed, 0 not.""",
    """
local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if due and tonumber(due) <= tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
""")

NEW_ATTEMPT = Script(
    "NEW_ATTEMPT", "day", ('deal', 'attempts', 'open'),
    """A name's attempt of a day, made once.

    KEYS: deal, attempts, open (a day's). ARGV: name, match code.
    Reply: ``{'new', code}``, ``{'exists', the name's code}`` or ``{'closed'}``.""",
    """
if redis.call('HGET', KEYS[1], 'closed') == '1' then return {'closed'} end
local code = redis.call('HGET', KEYS[2], ARGV[1])
if code then return {'exists', code} end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
return {'new', ARGV[2]}
""")

RECORD = Script(
    "RECORD", "day", ('open', 'board', 'entries', 'replays', 'events', 'names'),
    """Put an ended daily attempt on the board (once).

    KEYS: open, board, entries, replays, events, names (a day's). ARGV: name, score, entry JSON, replay JSON,
    event JSON, the name's key. Reply: 1, or 0 when it was there already.""",
    """
if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then redis.call('HDEL', KEYS[1], ARGV[1]) return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[4])
redis.call('HSET', KEYS[6], ARGV[6], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
wake(KEYS[5], redis.call('XADD', KEYS[5], 'MAXLEN', '~', %d, '*', 'd', ARGV[5]))
return 1
""" % EVENTS_MAXLEN)  # noqa: UP031 - Lua tables are braces: an f-string would double them all

UNCLAIM = Script(
    "UNCLAIM", "global", ('daily_names',),
    """Delete a daily name claim if it is still the given one.

    KEYS: daily names. ARGV: name key, the claim's value. Reply: 1 deleted, 0 not.""",
    """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0
""")

CLOSE_DAY = Script(
    "CLOSE_DAY", "day", ('deal', 'open', 'attempts', 'events'),
    """Close a day once no attempt is open.

    KEYS: deal, open, attempts, events (a day's). ARGV: seconds the attempts and events are kept.
    What only the day itself needed goes: the solution at once, the attempt index and the live event stream
    after the retention period; the deal (seed, commitment), the board, its entries and the replays stay
    (DESIGN.md: daily leaderboards stay). Reply: 1 closed, 0 an attempt is still open.""",
    """
if redis.call('HLEN', KEYS[2]) > 0 then return 0 end
redis.call('HSET', KEYS[1], 'closed', '1')
redis.call('HDEL', KEYS[1], 'solution')
redis.call('EXPIRE', KEYS[3], ARGV[1])
redis.call('EXPIRE', KEYS[4], ARGV[1])
return 1
""")
