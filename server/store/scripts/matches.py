"""The scripts of a match's life and its players' seats: creation, lobby, tokens, state changes."""

from __future__ import annotations

from .base import EVENTS_MAXLEN, Script

CREATE = Script(
    "CREATE", "match", ('meta',),
    """Create a match's meta hash unless it exists.

    KEYS: meta. ARGV: field/value pairs.
    Reply: 1 created, 0 the code exists already.""",
    """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
""")

JOIN = Script(
    "JOIN", "match", ('meta', 'roster', 'tokens', 'player'),
    """Add a player to a match in its lobby.

    KEYS: meta, roster, tokens, player. ARGV: name, token hash, max players, now ms, name key.
    A name that looks like a player's (case, Unicode form: one name key) is taken too. In a round after the
    first, until its rematch window is over, a seat is kept for each player of the round before who is not in
    yet (they come by ``rematch``: ROUND_JOIN): a newcomer with the old link takes only the seats left.
    Reply: ``{'ok', players now}`` or ``{refusal}``: ``no_match``, ``closed``, ``already_started``,
    ``name_taken``, ``match_full`` (``{'match_full', 'kept'}`` when the seats left are kept for the round
    before's players).""",
    """
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'no_match'} end
if state == 'closed' then return {'closed'} end
if state ~= 'lobby' and state ~= 'preparing' then return {'already_started'} end
if redis.call('EXISTS', KEYS[4]) == 1 then return {'name_taken'} end
local count = redis.call('LLEN', KEYS[2])
if count >= tonumber(ARGV[3]) then return {'match_full'} end
-- A name that looks like a player's (case, Unicode form: one name key) is taken too.
if redis.call('HEXISTS', KEYS[1], 'name:' .. ARGV[5]) == 1 then return {'name_taken'} end
local expected = redis.call('HGET', KEYS[1], 'expected')
if expected and redis.call('HGET', KEYS[1], 'window_over') ~= '1' then
  local inside = {}
  for _, player in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do inside[player] = true end
  local kept = 0
  for _, player in ipairs(cjson.decode(expected)) do
    if not inside[player] then kept = kept + 1 end
  end
  if count + kept >= tonumber(ARGV[3]) then return {'match_full', 'kept'} end
end
redis.call('HSET', KEYS[1], 'name:' .. ARGV[5], ARGV[1])
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[4], 'name', ARGV[1], 'token', ARGV[2], 'epoch', 0, 'ready', 0, 'connected', 0,
  'seq', 0, 'moves', 0, 'undos', 0, 'hints', 0, 'foundation', 0, 'status', 'lobby', 'time_ms', 0,
  'last_found_ms', 0, 'joined_ms', ARGV[4])
redis.call('HINCRBY', KEYS[1], 'active', 1)
return {'ok', count + 1}
""")

RESUME = Script(
    "RESUME", "match", ('tokens', 'player_prefix'),
    """Rotate a player's token and open a new connection epoch.

    KEYS: tokens, player-prefix. ARGV: presented token hash, new token hash.
    The rotation is :data:`ROTATE_TOKEN`'s, with the token presented. Reply: ``{'ok', name, epoch}`` or ``{'bad_token'}``.""",
    """
local name = redis.call('HGET', KEYS[1], ARGV[1])
if not name then return {'bad_token'} end
local pkey = KEYS[2] .. name
rotate_token(KEYS[1], pkey, ARGV[2], name, ARGV[1])
redis.call('HDEL', pkey, 'fence')  -- a takeover: the old connection's FENCE, sent again, finds it replaced
local epoch = redis.call('HINCRBY', pkey, 'epoch', 1)
return {'ok', name, epoch}
""")

ISSUE = Script(
    "ISSUE", "match", ('tokens', 'player'),
    """A new token for a player outside a connection (a daily attempt asked for again).

    KEYS: tokens, player. ARGV: new token hash, name.
    It becomes the newest (:data:`ROTATE_TOKEN`, no token presented). Reply: 1.""",
    """
rotate_token(KEYS[1], KEYS[2], ARGV[1], ARGV[2], nil)
return 1
""")

START = Script(
    "START", "match", ('meta', 'roster', 'events', 'player_prefix'),
    """The countdown is over: the match plays.

    KEYS: meta, roster, events, player-prefix. ARGV: event frame, foundation cards of the deal.
    Every player's status becomes ``playing`` with those foundation cards; the event goes to the stream as
    kind ``start``. Reply: 1, or 0 when the match was not in its countdown.""",
    """
if redis.call('HGET', KEYS[1], 'state') ~= 'countdown' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'playing')
local names = redis.call('LRANGE', KEYS[2], 0, -1)
for _, name in ipairs(names) do redis.call('HSET', KEYS[4] .. name, 'status', 'playing', 'foundation', ARGV[2]) end
redis.call('HSET', KEYS[1], 'active', #names)
wake(KEYS[3], redis.call('XADD', KEYS[3], 'MAXLEN', '~', %d, '*', 'm', ARGV[1], 'k', 'start'))
return 1
""" % EVENTS_MAXLEN)  # noqa: UP031 - Lua tables are braces: an f-string would double them all

CLOSE_MATCH = Script(
    "CLOSE_MATCH", "match", ('meta', 'roster', 'tokens', 'events', 'player_prefix'),
    """Close a match that never started: its players hear why, then its keys expire.

    KEYS: meta, roster, tokens, events, player-prefix. ARGV: event frame, seconds the keys are kept.
    Reply: 1, or 0 when the match had started (or is gone).""",
    """
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'lobby' and state ~= 'preparing' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'closed')
wake(KEYS[4], redis.call('XADD', KEYS[4], 'MAXLEN', '~', %d, '*', 'm', ARGV[1], 'k', 'public'))
for _, name in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do redis.call('EXPIRE', KEYS[5] .. name, ARGV[2]) end
for i = 1, 4 do redis.call('EXPIRE', KEYS[i], ARGV[2]) end
return 1
""" % EVENTS_MAXLEN)  # noqa: UP031 - Lua tables are braces: an f-string would double them all

TRANSITION = Script(
    "TRANSITION", "match", ('meta', 'events'),
    """Move a match from one state to another, setting fields and adding an event.

    KEYS: meta, events. ARGV: from state, to state, event frame ('' none), field/value pairs...
    Reply: 1, or 0 when the match was not in the from state.""",
    """
if redis.call('HGET', KEYS[1], 'state') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2])
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
if ARGV[3] ~= '' then
  wake(KEYS[2], redis.call('XADD', KEYS[2], 'MAXLEN', '~', %d, '*', 'm', ARGV[3], 'k', 'public'))
end
return 1
""" % EVENTS_MAXLEN)  # noqa: UP031 - Lua tables are braces: an f-string would double them all

LOBBY_EVENT = Script(
    "LOBBY_EVENT", "match", ('meta', 'roster', 'events', 'player_prefix'),
    """Append a lobby event only if it shows the lobby as it is now.

    KEYS: meta, roster, events, player-prefix. ARGV: event frame, then what it was built from: state,
    commitment, and name, ready, connected (0|1) per player. The stream's lobby events follow the match's
    state in Redis: none contradicts the countdown or an earlier one.
    Reply: ``ok``, ``changed`` (read again and retry) or ``not_lobby``.""",
    """
local meta = redis.call('HMGET', KEYS[1], 'state', 'commitment')
if meta[1] ~= 'lobby' and meta[1] ~= 'preparing' then return 'not_lobby' end
if meta[1] ~= ARGV[2] or (meta[2] or '') ~= ARGV[3] then return 'changed' end
local names = redis.call('LRANGE', KEYS[2], 0, -1)
if #names * 3 ~= #ARGV - 3 then return 'changed' end
for i, name in ipairs(names) do
  local p = redis.call('HMGET', KEYS[4] .. name, 'ready', 'connected')
  local ready, connected = '0', '0'
  if p[1] == '1' then ready = '1' end
  if p[2] and p[2] ~= '0' then connected = '1' end
  local at = 3 + (i - 1) * 3
  if ARGV[at + 1] ~= name or ARGV[at + 2] ~= ready or ARGV[at + 3] ~= connected then return 'changed' end
end
wake(KEYS[3], redis.call('XADD', KEYS[3], 'MAXLEN', '~', %d, '*', 'm', ARGV[1], 'k', 'public'))
return 'ok'
""" % EVENTS_MAXLEN)  # noqa: UP031 - Lua tables are braces: an f-string would double them all

SET_PLAYER = Script(
    "SET_PLAYER", "match", ('player',),
    """Set fields of a player's record (``connected``, ``hints``), only while it exists.

    KEYS: player. ARGV: field, value, ... A player of a match whose keys are gone (expired, or lost by Redis)
    is not brought back as a hash of these fields alone, with no expiry. Reply: 1 set, 0 not.""",
    """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
""")

READY = Script(
    "READY", "match", ('meta', 'player'),
    """The player is ready, only while the match is in its lobby.

    KEYS: meta, player. ARGV: none. Reply: the match's state (``''``: no such match).""",
    """
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'lobby' or state == 'preparing' then redis.call('HSET', KEYS[2], 'ready', 1) end
return state or ''
""")
