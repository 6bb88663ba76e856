"""The scripts of named players (the keys of one ``{n:H}`` each, :func:`server.store.keys.profile_keys`): a name
claimed, its key rotated or recovered, its history deleted, a finished game recorded."""

from __future__ import annotations

from ..keys import HISTORY_PARTS, PROFILE_PARTS
from .base import Script

_ALL = tuple(PROFILE_PARTS)

CLAIM_NAME = Script(
    "CLAIM_NAME", "player", _ALL,
    """Claim a name for a new player key, unless it is claimed (and not released).

    KEYS: a named player's keys (profile first, all of them: a claim made anew drops the groups' side
    too). ARGV: name as claimed, SHA-256 of the player key, SHA-256 of
    the recovery code, now ms, released-before ms (0: never; a claim last seen before it is dropped with its
    history and claimed anew). Reply: ``{'new', name}`` or ``{'taken', the name as claimed}``.""",
    """
local seen = redis.call('HGET', KEYS[1], 'seen_ms')
if seen then
  if tonumber(ARGV[5]) > 0 and tonumber(seen) < tonumber(ARGV[5]) then
    for i = 1, 10 do redis.call('DEL', KEYS[i]) end
  else
    return {'taken', redis.call('HGET', KEYS[1], 'name')}
  end
end
redis.call('HSET', KEYS[1], 'name', ARGV[1], 'key', ARGV[2], 'recovery', ARGV[3], 'created_ms', ARGV[4],
           'seen_ms', ARGV[4], 'games', 0, 'wins', 0)
return {'new', ARGV[1]}
""")

UNCLAIM_NAME = Script(
    "UNCLAIM_NAME", "player", ("profile",),
    """Free a claim a refused join or attempt made: only while it holds that key and no game.

    KEYS: a named player's profile. ARGV: SHA-256 of the player key. Reply: 1 freed, 0 not.""",
    """
if redis.call('HGET', KEYS[1], 'key') == ARGV[1] and redis.call('HGET', KEYS[1], 'games') == '0' then
  return redis.call('DEL', KEYS[1])
end
return 0
""")

SET_KEY = Script(
    "SET_KEY", "player", ("profile",),
    """A new player key (and, with a 4th argument, a new recovery code) in place of the one checked.

    KEYS: a named player's profile. ARGV: field checked (``key`` or ``recovery``), its SHA-256 as checked,
    SHA-256 of the new player key, now ms, SHA-256 of the new recovery code (optional).
    Reply: 1 set, 0 the checked field had changed meanwhile (or the player is gone).""",
    """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'key', ARGV[3], 'seen_ms', ARGV[4])
if ARGV[5] then redis.call('HSET', KEYS[1], 'recovery', ARGV[5]) end
return 1
""")

DELETE_PLAYER = Script(
    "DELETE_PLAYER", "player", _ALL,
    """Delete a named player, claim and history, when the player key is the one checked.

    KEYS: a named player's keys (profile first). ARGV: SHA-256 of the player key. Reply: 1 deleted, 0 not.""",
    """
if redis.call('HGET', KEYS[1], 'key') ~= ARGV[1] then return 0 end
for i = 1, 10 do redis.call('DEL', KEYS[i]) end
return 1
""")

RECORD_GAME = Script(
    "RECORD_GAME", "player", tuple(HISTORY_PARTS),
    """Record one finished game of a named player (once per match): history, aggregates, records, rivals, and
    the game as the deal's ghost when it is the player's best there (won fastest, then fewest moves; else the
    most foundation cards, then the fewest moves; a tie keeps the one kept before).

    KEYS: a named player's keys (profile, games, done, deals, deal_times, rivals, rival_times, days, ghosts).
    ARGV: 1
    match code, 2 entry JSON, 3 variant, 4 deal label, 5 won (1/0), 6 time ms, 7 moves, 8 foundation cards, 9
    now ms, 10 games kept, 11 deals kept, 12 rivals kept, 13 the match's start ms (a name claimed after it is
    another player's), 14 the day of a daily attempt (``YYYY-MM-DD``, its streak's day) or "", 15 days kept,
    16 the game as a ghost (JSON with ``timeline``; "" for none), 17 ghosts kept (of the deals last played),
    then per named opponent: its ``H``, its name, ``w``/``l``/``d`` (this player ranked higher, lower, equal),
    its ``created_ms`` (kept as ``since``: another one restarts the count, the name having been deleted and
    claimed again). Reply: ``{'none'}`` (no such player), else ``{'new' or 'done', outcome JSON}``
    (``{"records": [[what, deal, value, previous]...], "rivals": {H: {name, races, wins, losses,
    draws}}}``); a match recorded before answers the outcome it had.""",
    """
if redis.call('EXISTS', KEYS[1]) == 0 then return {'none'} end
local done = redis.call('HGET', KEYS[3], ARGV[1])
if done then return {'done', done} end
if tonumber(redis.call('HGET', KEYS[1], 'created_ms') or '0') > tonumber(ARGV[13]) then return {'none'} end
local code, variant, deal = ARGV[1], ARGV[3], ARGV[4]
local won = ARGV[5] == '1'
local time, moves, cards, now = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local notes = {}
local function note(what, where, value, previous) notes[#notes + 1] = {what, where, value, previous} end
redis.call('LPUSH', KEYS[2], ARGV[2])
while redis.call('LLEN', KEYS[2]) > tonumber(ARGV[10]) do
  local old = cjson.decode(redis.call('RPOP', KEYS[2]))
  redis.call('HDEL', KEYS[3], old['match'])
end
redis.call('HINCRBY', KEYS[1], 'games', 1)
redis.call('HINCRBY', KEYS[1], variant .. '|games', 1)
redis.call('HSET', KEYS[1], 'seen_ms', ARGV[9])
if won then
  redis.call('HINCRBY', KEYS[1], 'wins', 1)
  redis.call('HINCRBY', KEYS[1], variant .. '|wins', 1)
  local best = tonumber(redis.call('HGET', KEYS[1], variant .. '|best_ms'))
  if not best or time < best then
    note('time', '', time, best or -1)
    redis.call('HSET', KEYS[1], variant .. '|best_ms', ARGV[6], variant .. '|best_match', code)
  end
end
local most = tonumber(redis.call('HGET', KEYS[1], variant .. '|cards'))
if not most or cards > most then
  if most then note('cards', '', cards, most) end
  redis.call('HSET', KEYS[1], variant .. '|cards', ARGV[8])
end
local field = variant .. '|' .. deal
local raw = redis.call('HGET', KEYS[4], field)
local rec = raw and cjson.decode(raw) or {games = 0, wins = 0}
rec.games = rec.games + 1
rec.last_ms = now
if won then
  rec.wins = rec.wins + 1
  if not rec.best_ms or time < rec.best_ms then
    note('time', deal, time, rec.best_ms or -1)
    rec.best_ms, rec.best_match = time, code
  end
  if not rec.fewest or moves < rec.fewest then
    note('moves', deal, moves, rec.fewest or -1)
    rec.fewest, rec.fewest_match = moves, code
  end
end
redis.call('HSET', KEYS[4], field, cjson.encode(rec))
redis.call('ZADD', KEYS[5], now, field)
local extra = redis.call('ZCARD', KEYS[5]) - tonumber(ARGV[11])
if extra > 0 then
  for _, gone in ipairs(redis.call('ZRANGE', KEYS[5], 0, extra - 1)) do
    redis.call('HDEL', KEYS[4], gone)
    redis.call('HDEL', KEYS[9], gone)
  end
  redis.call('ZREMRANGEBYRANK', KEYS[5], 0, extra - 1)
end
if ARGV[16] ~= '' and redis.call('ZSCORE', KEYS[5], field) then
  local kept = redis.call('HGET', KEYS[9], field)
  local ok, old = pcall(cjson.decode, kept or '')
  -- a kept value that is not a ghost's (damaged) is no better than any game: replaced, not an error that would
  -- stop this recording halfway (a script's writes are not undone)
  local better = not ok or type(old) ~= 'table' or type(old.time_ms) ~= 'number' or type(old.moves) ~= 'number'
    or type(old.foundation) ~= 'number'
  if not better then
    local old_won = old.status == 'won'
    if won ~= old_won then better = won
    elseif won then better = time < old.time_ms or (time == old.time_ms and moves < old.moves)
    else better = cards > old.foundation or (cards == old.foundation and moves < old.moves) end
  end
  if better then redis.call('HSET', KEYS[9], field, ARGV[16]) end
end
-- ghosts only for the deals last played: the one deal this recording pushed past that rank loses its ghost
local beyond = redis.call('ZREVRANGE', KEYS[5], ARGV[17], ARGV[17])
if beyond[1] then redis.call('HDEL', KEYS[9], beyond[1]) end
local rivals = {}
for i = 18, #ARGV, 4 do
  local other, result, since = ARGV[i], ARGV[i + 2], tonumber(ARGV[i + 3])
  local r = redis.call('HGET', KEYS[6], other)
  local h = r and cjson.decode(r)
  if not h or (h.since and h.since ~= since) then h = {races = 0, wins = 0, losses = 0, draws = 0, v = {}} end
  h.since = since
  local v = h.v[variant] or {races = 0, wins = 0, losses = 0, draws = 0}
  local column = result == 'w' and 'wins' or result == 'l' and 'losses' or 'draws'
  h.name, h.last_ms = ARGV[i + 1], now
  h.races, v.races = h.races + 1, v.races + 1
  h[column], v[column] = h[column] + 1, v[column] + 1
  h.v[variant] = v
  redis.call('HSET', KEYS[6], other, cjson.encode(h))
  redis.call('ZADD', KEYS[7], now, other)
  rivals[other] = {name = h.name, races = h.races, wins = h.wins, losses = h.losses, draws = h.draws}
end
extra = redis.call('ZCARD', KEYS[7]) - tonumber(ARGV[12])
if extra > 0 then
  for _, gone in ipairs(redis.call('ZRANGE', KEYS[7], 0, extra - 1)) do redis.call('HDEL', KEYS[6], gone) end
  redis.call('ZREMRANGEBYRANK', KEYS[7], 0, extra - 1)
end
if ARGV[14] ~= '' then
  redis.call('ZADD', KEYS[8], 0, ARGV[14])
  extra = redis.call('ZCARD', KEYS[8]) - tonumber(ARGV[15])
  if extra > 0 then redis.call('ZREMRANGEBYRANK', KEYS[8], 0, extra - 1) end
end
local outcome = cjson.encode({records = notes, rivals = rivals})
redis.call('HSET', KEYS[3], code, outcome)
return {'new', outcome}
""")
