"""The scripts of the rounds of a series: the next round claimed, joined, its window, the series list.

An ended match's meta holds ``next`` (set once by :data:`CLAIM_NEXT`), ``next_made`` (:data:`NEXT_MADE`) and
``rematch`` (who asked, JSON); the next round's keys are another match's (another slot) and the series list a
third, so each step is one script on one slot, safe to repeat. A round after the first holds ``expected`` (the
round before's players, JSON), ``window_end_ms``, ``window_over``, ``host_name`` (set by the first
:data:`ROUND_JOIN`) and, until :data:`WINDOW_OVER`, the ``name:KEY`` fields kept for the round before's players.
"""

from __future__ import annotations

from .base import Script

CLAIM_NEXT = Script(
    "CLAIM_NEXT", "match", ('meta', 'player_prefix'),
    """A player of an ended match asks for its next round.

    KEYS: meta, player-prefix (an ended match). ARGV: name, candidate code of the next round, ``1`` when the
    next round is to be dealt the same deal (a ``restart``) else ``0``.
    The first rematch sets the next round's code (once: a concurrent or retried one reads it) and ``next_same``
    (ARGV[3], with it); every one adds its player to the names who asked (in order, once each).
    Reply: ``{'ok', next code, 1 if this call set it, names JSON}`` or ``{'no_match'}``,
    ``{'not_finished', state}``, ``{'no_player'}``.""",
    """
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'no_match'} end
if state ~= 'finished' then return {'not_finished', state} end
if redis.call('EXISTS', KEYS[2] .. ARGV[1]) == 0 then return {'no_player'} end
local nxt = redis.call('HGET', KEYS[1], 'next')
local claimed = 0
if not nxt then
  nxt = ARGV[2]
  redis.call('HSET', KEYS[1], 'next', nxt, 'next_same', ARGV[3] or '0')
  claimed = 1
end
local names = cjson.decode(redis.call('HGET', KEYS[1], 'rematch') or '[]')
local seen = false
for _, n in ipairs(names) do if n == ARGV[1] then seen = true end end
if not seen then
  table.insert(names, ARGV[1])
  redis.call('HSET', KEYS[1], 'rematch', cjson.encode(names))
end
return {'ok', nxt, claimed, cjson.encode(names)}
""")

ROUND_JOIN = Script(
    "ROUND_JOIN", "match", ('meta', 'roster', 'tokens', 'player'),
    """A player of the round before joins the next round as a ready player.

    KEYS: meta, roster, tokens, player (the next round). ARGV: name, token hash, max players, now ms,
    name key, code of the round before, host token hash.
    The host role goes to the first player into the round (HSETNX of host_name here, in the same script as
    the join, so however many processes ask at once exactly one player is ever given a host token); a
    retried rematch of the host gets a new host token, anyone else none. Asked again: a new newest token,
    the one before valid until the new one is used (as ISSUE); a name someone else joined with stays theirs.
    A name key held for this very name and no player yet is the seat kept for this player of the round
    before until its rematch window ends (see WINDOW_OVER).
    Reply: ``{status, 1 when the player hosts it}``; status ``ok``, ``again``, ``name_taken``,
    ``match_full``, ``already_started``, ``closed``, ``no_match``.""",
    """
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'no_match', 0} end
if redis.call('EXISTS', KEYS[4]) == 1 then
  if redis.call('HGET', KEYS[4], 'via') ~= ARGV[6] then return {'name_taken', 0} end
  rotate_token(KEYS[3], KEYS[4], ARGV[2], ARGV[1], nil)
  if redis.call('HGET', KEYS[1], 'host_name') == ARGV[1] then
    redis.call('HSET', KEYS[1], 'host', ARGV[7])
    return {'again', 1}
  end
  return {'again', 0}
end
if state == 'closed' then return {'closed', 0} end
if state ~= 'lobby' and state ~= 'preparing' then return {'already_started', 0} end
if redis.call('LLEN', KEYS[2]) >= tonumber(ARGV[3]) then return {'match_full', 0} end
local holder = redis.call('HGET', KEYS[1], 'name:' .. ARGV[5])
if holder and holder ~= ARGV[1] then return {'name_taken', 0} end
redis.call('HSET', KEYS[1], 'name:' .. ARGV[5], ARGV[1])
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[4], 'name', ARGV[1], 'token', ARGV[2], 'epoch', 0, 'ready', 1, 'connected', 0,
  'seq', 0, 'moves', 0, 'undos', 0, 'hints', 0, 'foundation', 0, 'status', 'lobby', 'time_ms', 0,
  'last_found_ms', 0, 'joined_ms', ARGV[4], 'via', ARGV[6])
redis.call('HINCRBY', KEYS[1], 'active', 1)
if redis.call('HSETNX', KEYS[1], 'host_name', ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], 'host', ARGV[7])
  return {'ok', 1}
end
return {'ok', 0}
""")

WINDOW_OVER = Script(
    "WINDOW_OVER", "match", ('meta', 'player_prefix'),
    """A round's rematch window is over (once; in the lobby only).

    KEYS: meta, player-prefix (a round after the first). ARGV: name, name key of each player of the round
    before. It may start with whoever is in, and the names kept for the players of the round before who
    did not ask are free for anyone. Reply: 1, or 0 when the round has left its lobby.""",
    """
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'lobby' and state ~= 'preparing' then return 0 end
redis.call('HSET', KEYS[1], 'window_over', 1)
for i = 1, #ARGV, 2 do
  local field = 'name:' .. ARGV[i + 1]
  if redis.call('EXISTS', KEYS[2] .. ARGV[i]) == 0 and redis.call('HGET', KEYS[1], field) == ARGV[i] then
    redis.call('HDEL', KEYS[1], field)
  end
end
return 1
""")

NEXT_MADE = Script(
    "NEXT_MADE", "match", ('meta',),
    """Mark an ended match's next round as made.

    KEYS: meta. Only while the match's keys exist: an expired match is not brought back as a hash with this
    field alone. Reply: 1 set, 0 not.""",
    """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('HSET', KEYS[1], 'next_made', 1)
""")

SERIES_ADD = Script(
    "SERIES_ADD", "match", ('series',),
    """Append a round to a series (once).

    KEYS: series. ARGV: the first round's code, a round's code, seconds the list is kept.
    Reply: the series' codes in order.""",
    """
if redis.call('LLEN', KEYS[1]) == 0 then redis.call('RPUSH', KEYS[1], ARGV[1]) end
if not redis.call('LPOS', KEYS[1], ARGV[2]) then redis.call('RPUSH', KEYS[1], ARGV[2]) end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return redis.call('LRANGE', KEYS[1], 0, -1)
""")
