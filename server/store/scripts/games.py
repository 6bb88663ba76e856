"""The scripts of the games in play: a command's commit, the fence after a lost answer, a game ended or stuck.

A player's game is its deal plus its move log: :data:`COMMIT` writes one accepted command, the player's progress
and the public events in one script, after checking the connection's epoch and the command's sequence number (a
retried frame is never applied twice, one that skips a number not at all).
"""

from __future__ import annotations

from .base import EVENTS_MAXLEN, Script

COMMIT = Script(
    "COMMIT", "match", ('player', 'log', 'events', 'meta'),
    """Write one accepted command, the player's progress and its public events.

    KEYS: player, log, events, meta. The command clears the player's ``stuck`` mark (:data:`STUCK`).
    ARGV[1]: one msgpack array (one argument instead of twelve: redis-py packs each argument in Python):
    epoch, seq, log entry ('' for none), moves, undos, hints, foundation, status, time_ms, last_found_ms
    (all strings), ends (0|1), the number P of public event frames; ARGV[2..]: P public event frames, then
    board frames (spectators only: open-boards matches). Frames stay separate arguments: Redis 7.0's cmsgpack
    refuses msgpack's bin type.
    Reply: ``{'ok', last stream id, players still playing or -1}`` or ``{refusal}``: ``stale`` (another
    epoch), ``gone`` (the player's or the match's keys are not there: Redis lost them), ``dup`` (seq accepted
    already), ``seq_gap``, ``game_over``, ``not_playing``.""",
    """
local a = cmsgpack.unpack(ARGV[1])
local p = redis.call('HMGET', KEYS[1], 'epoch', 'seq', 'status')
if p[1] ~= a[1] then
  if not p[1] or redis.call('EXISTS', KEYS[4]) == 0 then return {'gone'} end
  return {'stale'}
end
if tonumber(p[2]) >= tonumber(a[2]) then return {'dup'} end
if tonumber(a[2]) > tonumber(p[2]) + 1 then return {'seq_gap'} end
if p[3] ~= 'playing' then return {'game_over'} end
if redis.call('HGET', KEYS[4], 'state') ~= 'playing' then return {'not_playing'} end
if a[3] ~= '' then redis.call('RPUSH', KEYS[2], a[3]) end
redis.call('HSET', KEYS[1], 'seq', a[2], 'moves', a[4], 'undos', a[5], 'hints', a[6],
  'foundation', a[7], 'status', a[8], 'time_ms', a[9], 'last_found_ms', a[10])
redis.call('HDEL', KEYS[1], 'stuck')
local last = ''
local name = redis.call('HGET', KEYS[1], 'name')
local public_end = 1 + a[12]
for i = 2, #ARGV do
  local kind = 'public'
  if i > public_end then kind = 'board' end
  last = redis.call('XADD', KEYS[3], 'MAXLEN', '~', %d, '*', 'm', ARGV[i], 'k', kind, 'n', name)
end
local active = -1
if a[11] == 1 then active = redis.call('HINCRBY', KEYS[4], 'active', -1) end
if last ~= '' then wake(KEYS[3], last) end
return {'ok', last, active}
""" % EVENTS_MAXLEN)  # noqa: UP031 - Lua tables are braces: an f-string would double them all

FENCE = Script(
    "FENCE", "match", ('player', 'log', 'meta'),
    """After a COMMIT whose answer was lost: a new epoch, and what Redis holds.

    KEYS: player, log, meta. ARGV: the connection's epoch, a nonce of the connection's.
    The connection takes a new epoch, so that the COMMIT, if it is still on its way, is refused ('stale')
    whenever it arrives. Sent again with the same nonce (its own answer lost too) it takes no other epoch; a
    takeover (RESUME) voids the nonce.
    Reply: ``{'ok', player hash (flat), log entries, {deal, settings}}``, ``{'stale'}`` (another connection
    took over) or ``{'gone'}`` (the player's or the match's keys are not there: Redis lost them).""",
    """
local p = redis.call('HMGET', KEYS[1], 'epoch', 'fence')
if not p[1] or redis.call('EXISTS', KEYS[3]) == 0 then return {'gone'} end
if p[2] ~= ARGV[2] then
  if p[1] ~= ARGV[1] then return {'stale'} end
  redis.call('HINCRBY', KEYS[1], 'epoch', 1)
  redis.call('HSET', KEYS[1], 'fence', ARGV[2])
end
return {'ok', redis.call('HGETALL', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1),
  redis.call('HMGET', KEYS[3], 'deal', 'settings')}
""")

END_PLAYER = Script(
    "END_PLAYER", "match", ('player', 'events', 'meta'),
    """End a player's game (timeout, dead) unless it ended already.

    KEYS: player, events, meta. ARGV: status, time_ms, event frame.
    Reply: ``{'ok', players still playing}`` or ``{'game_over', -1}``.""",
    """
if redis.call('HGET', KEYS[1], 'status') ~= 'playing' then return {'game_over', -1} end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'time_ms', ARGV[2])
wake(KEYS[2], redis.call('XADD', KEYS[2], 'MAXLEN', '~', %d, '*', 'm', ARGV[3], 'k', 'ended',
  'n', redis.call('HGET', KEYS[1], 'name'), 's', ARGV[1]))
return {'ok', redis.call('HINCRBY', KEYS[3], 'active', -1)}
""" % EVENTS_MAXLEN)  # noqa: UP031 - Lua tables are braces: an f-string would double them all

STUCK = Script(
    "STUCK", "match", ('player', 'events', 'meta'),
    """Mark a player stuck: the solver found their game dead with an undo left (it goes on).

    KEYS: player, events, meta. ARGV: the connection's epoch, the player's last accepted seq the verdict is
    of, event frame (a ``progress`` with status ``dead``).
    Sets the player's ``stuck`` field (COMMIT clears it) and adds the event (kind ``public``, from the player).
    Reply: ``ok``, or why nothing was written: ``gone`` (the player's or the match's keys are not there),
    ``stale`` (another epoch), ``moved`` (another seq: the player moved on), ``game_over`` (the game or the
    match is not playing).""",
    """
local p = redis.call('HMGET', KEYS[1], 'epoch', 'seq', 'status', 'name')
if not p[1] or redis.call('EXISTS', KEYS[3]) == 0 then return 'gone' end
if p[1] ~= ARGV[1] then return 'stale' end
if p[2] ~= ARGV[2] then return 'moved' end
if p[3] ~= 'playing' or redis.call('HGET', KEYS[3], 'state') ~= 'playing' then return 'game_over' end
redis.call('HSET', KEYS[1], 'stuck', '1')
wake(KEYS[2], redis.call('XADD', KEYS[2], 'MAXLEN', '~', %d, '*', 'm', ARGV[3], 'k', 'public', 'n', p[4]))
return 'ok'
""" % EVENTS_MAXLEN)  # noqa: UP031 - Lua tables are braces: an f-string would double them all
