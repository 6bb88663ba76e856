"""Every Redis key, script and transaction of the race server (DESIGN.md "Redis").

Keys of one match share the hash tag ``{m:CODE}`` so a Redis Cluster keeps
them on one node:

=========================  ===================================================
key                        holds
=========================  ===================================================
``{m:C}:meta``             hash: settings (JSON), state, seed and deal (secret
                           until the end), commitment, host token hash,
                           start and deadline (ms), players left playing
``{m:C}:roster``           list: player names in join order
``{m:C}:tokens``           hash: SHA-256 of a player token -> player name
``{m:C}:p:NAME``           hash: a player: token hash, epoch, ready, connected,
                           last accepted seq, moves, undos, hints, foundation
                           cards, status, time and last-foundation time (ms)
``{m:C}:log:NAME``         list: the player's accepted commands, ``"cmd ms"``
``{m:C}:events``           stream: events (field ``m``: msgpack frame, ``k``:
                           kind, see :data:`SPECTATOR_KINDS`)
``{m:C}:results``          the final results frame (msgpack)
``{m:F}:series``           list: the match codes of a series of rounds, in
                           order, under the hash tag of its first round F
``timers``                 sorted set: ``CODE start|deadline`` by due time (ms)
``pool:VARIANT``           list: verified solvable deals (msgpack)
=========================  ===================================================

Rounds (:mod:`server.rounds`): an ended match's meta holds ``next`` (the
next round's code, set once by :data:`CLAIM_NEXT`), ``next_made`` (that
round was created, :data:`NEXT_MADE`) and ``rematch`` (who asked, JSON); the next round's own keys are another match's (another
slot), and the series list a third: each step is one script on one slot,
safe to repeat, so a Redis Cluster can serve them. A round after the first
also holds ``expected`` (the round before's players, JSON),
``window_end_ms``, ``window_over``, ``host_name`` (set once, by the first
:data:`ROUND_JOIN`) and, until :data:`WINDOW_OVER`, the ``name:KEY``
fields of the round before's players (their names kept for them).

A player's game is its deal plus its move log; :data:`COMMIT` writes one
accepted command, the player's progress and the public event in one
script (one round trip), after checking the connection's epoch and the
command's sequence number so a retried frame is never applied twice and
one that skips a number is not applied at all.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import msgspec
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import NoScriptError

EVENTS_MAXLEN = 20000
"""Approximate cap of a match's event stream."""

SPECTATOR_KINDS = (b"public", b"ended", b"board")
"""Stream entry kinds spectators receive: public events, games the server ended, and (open-boards
matches only) players' redacted boards. ``start`` and ``takeover`` are internal."""


def token_hash(token: str) -> str:
    """Tokens are stored only as their SHA-256 (hex)."""
    return hashlib.sha256(token.encode()).hexdigest()


def meta_key(code: str) -> str:
    return f"{{m:{code}}}:meta"


def roster_key(code: str) -> str:
    return f"{{m:{code}}}:roster"


def tokens_key(code: str) -> str:
    return f"{{m:{code}}}:tokens"


def player_key(code: str, name: str) -> str:
    return f"{{m:{code}}}:p:{name}"


def log_key(code: str, name: str) -> str:
    return f"{{m:{code}}}:log:{name}"


def events_key(code: str) -> str:
    return f"{{m:{code}}}:events"


def results_key(code: str) -> str:
    return f"{{m:{code}}}:results"


def series_key(first: str) -> str:
    """The series of rounds whose first round is match ``first`` (its hash tag)."""
    return f"{{m:{first}}}:series"


TIMERS = "timers"


def pool_key(variant: str) -> str:
    return f"pool:{variant}"


CREATE = """
-- KEYS: meta ; ARGV: field/value pairs
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""

JOIN = """
-- KEYS: meta, roster, tokens, player, events ; ARGV: name, token hash, max players, now ms, event, name key
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'no_match'} end
if state == 'closed' then return {'closed'} end
if state ~= 'lobby' and state ~= 'preparing' then return {'already_started'} end
if redis.call('EXISTS', KEYS[4]) == 1 then return {'name_taken'} end
local count = redis.call('LLEN', KEYS[2])
if count >= tonumber(ARGV[3]) then return {'match_full'} end
-- A name that looks like a player's (case, Unicode form: one name key) is taken too.
if redis.call('HSETNX', KEYS[1], 'name:' .. ARGV[6], ARGV[1]) == 0 then return {'name_taken'} end
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[4], 'name', ARGV[1], 'token', ARGV[2], 'epoch', 0, 'ready', 0, 'connected', 0,
  'seq', 0, 'moves', 0, 'undos', 0, 'hints', 0, 'foundation', 0, 'status', 'lobby', 'time_ms', 0,
  'last_found_ms', 0, 'joined_ms', ARGV[4])
redis.call('HINCRBY', KEYS[1], 'active', 1)
return {'ok', count + 1}
"""

RESUME = """
-- KEYS: tokens, player-prefix ; ARGV: presented token hash, new token hash
-- A player has at most two valid tokens: the newest and, until the newest is first used, the one before
-- it (its 'joined' reply may never have reached the client: a lost reply must not lock the player out).
local name = redis.call('HGET', KEYS[1], ARGV[1])
if not name then return {'bad_token'} end
local pkey = KEYS[2] .. name
local current = redis.call('HGET', pkey, 'token')
local previous = redis.call('HGET', pkey, 'prev_token')
if ARGV[1] == current then
  if previous and previous ~= current then redis.call('HDEL', KEYS[1], previous) end
  redis.call('HSET', pkey, 'prev_token', current)
elseif current then
  redis.call('HDEL', KEYS[1], current)
end
redis.call('HSET', KEYS[1], ARGV[2], name)
redis.call('HSET', pkey, 'token', ARGV[2])
redis.call('HDEL', pkey, 'fence')  -- a takeover: the old connection's FENCE, sent again, finds it replaced
local epoch = redis.call('HINCRBY', pkey, 'epoch', 1)
return {'ok', name, epoch}
"""

ISSUE = """
-- KEYS: tokens, player ; ARGV: new token hash, name
-- A new token for a player outside a connection (a daily attempt asked for again): it becomes the newest,
-- the one before stays valid until the new one is used (as RESUME), older ones are void.
local current = redis.call('HGET', KEYS[2], 'token')
local previous = redis.call('HGET', KEYS[2], 'prev_token')
if previous and previous ~= current then redis.call('HDEL', KEYS[1], previous) end
if current then redis.call('HSET', KEYS[2], 'prev_token', current) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], 'token', ARGV[1])
return 1
"""

COMMIT = """
-- KEYS: player, log, events, meta
-- ARGV[1]: one msgpack array (one argument instead of twelve: redis-py packs each argument in Python):
--   epoch, seq, log entry ('' for none), moves, undos, hints, foundation, status, time_ms, last_found_ms
--   (all strings), ends (0|1), the number P of public event frames;
-- ARGV[2..]: P public event frames, then board frames (spectators only: open-boards matches).
-- (Frames stay separate arguments: Redis 7.0's cmsgpack refuses msgpack's bin type.)
local a = cmsgpack.unpack(ARGV[1])
local p = redis.call('HMGET', KEYS[1], 'epoch', 'seq', 'status')
if p[1] ~= a[1] then return {'stale'} end
if tonumber(p[2]) >= tonumber(a[2]) then return {'dup'} end
if tonumber(a[2]) > tonumber(p[2]) + 1 then return {'seq_gap'} end
if p[3] ~= 'playing' then return {'game_over'} end
if redis.call('HGET', KEYS[4], 'state') ~= 'playing' then return {'not_playing'} end
if a[3] ~= '' then redis.call('RPUSH', KEYS[2], a[3]) end
redis.call('HSET', KEYS[1], 'seq', a[2], 'moves', a[4], 'undos', a[5], 'hints', a[6],
  'foundation', a[7], 'status', a[8], 'time_ms', a[9], 'last_found_ms', a[10])
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
return {'ok', last, active}
""" % EVENTS_MAXLEN  # noqa: UP031 - Lua tables are braces: an f-string would double them all

FENCE = """
-- KEYS: player, log, meta ; ARGV: the connection's epoch, a nonce of the connection's
-- After a COMMIT whose answer was lost (a timeout): the connection takes a new epoch, so that the COMMIT, if it
-- is still on its way, is refused ('stale') whenever it arrives, and reads what Redis holds. Sent again with
-- the same nonce (its own answer lost too) it takes no other epoch; a takeover (RESUME) voids the nonce.
local p = redis.call('HMGET', KEYS[1], 'epoch', 'fence')
if p[2] ~= ARGV[2] then
  if p[1] ~= ARGV[1] then return {'stale'} end
  redis.call('HINCRBY', KEYS[1], 'epoch', 1)
  redis.call('HSET', KEYS[1], 'fence', ARGV[2])
end
return {'ok', redis.call('HGETALL', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1),
  redis.call('HMGET', KEYS[3], 'deal', 'settings')}
"""

START = """
-- KEYS: meta, roster, events, player-prefix ; ARGV: event frame, foundation cards of the deal
if redis.call('HGET', KEYS[1], 'state') ~= 'countdown' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'playing')
local names = redis.call('LRANGE', KEYS[2], 0, -1)
for _, name in ipairs(names) do redis.call('HSET', KEYS[4] .. name, 'status', 'playing', 'foundation', ARGV[2]) end
redis.call('HSET', KEYS[1], 'active', #names)
redis.call('XADD', KEYS[3], 'MAXLEN', '~', %d, '*', 'm', ARGV[1], 'k', 'start')
return 1
""" % EVENTS_MAXLEN  # noqa: UP031 - Lua tables are braces: an f-string would double them all

END_PLAYER = """
-- KEYS: player, events, meta ; ARGV: status, time_ms, event frame
if redis.call('HGET', KEYS[1], 'status') ~= 'playing' then return {'game_over', -1} end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'time_ms', ARGV[2])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', %d, '*', 'm', ARGV[3], 'k', 'ended', 'n', redis.call('HGET', KEYS[1], 'name'),
  's', ARGV[1])
return {'ok', redis.call('HINCRBY', KEYS[3], 'active', -1)}
""" % EVENTS_MAXLEN  # noqa: UP031 - Lua tables are braces: an f-string would double them all

CLOSE = """
-- KEYS: meta, roster, tokens, events, player-prefix ; ARGV: event frame, seconds the keys are kept
-- A match that never started is closed: its players hear why, then its keys expire.
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'lobby' and state ~= 'preparing' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'closed')
redis.call('XADD', KEYS[4], 'MAXLEN', '~', %d, '*', 'm', ARGV[1], 'k', 'public')
for _, name in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do redis.call('EXPIRE', KEYS[5] .. name, ARGV[2]) end
for i = 1, 4 do redis.call('EXPIRE', KEYS[i], ARGV[2]) end
return 1
""" % EVENTS_MAXLEN  # noqa: UP031 - Lua tables are braces: an f-string would double them all

TRANSITION = """
-- KEYS: meta, events ; ARGV: from state, to state, event frame ('' none), field/value pairs...
if redis.call('HGET', KEYS[1], 'state') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2])
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
if ARGV[3] ~= '' then redis.call('XADD', KEYS[2], 'MAXLEN', '~', %d, '*', 'm', ARGV[3], 'k', 'public') end
return 1
""" % EVENTS_MAXLEN  # noqa: UP031 - Lua tables are braces: an f-string would double them all

CLAIM_NEXT = """
-- KEYS: meta, player-prefix (an ended match) ; ARGV: name, candidate code of the next round
-- The first rematch of a match sets its next round's code (once: a concurrent or retried one reads it);
-- every one adds its player to the names who asked (in order, once each).
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'no_match'} end
if state ~= 'finished' then return {'not_finished', state} end
if redis.call('EXISTS', KEYS[2] .. ARGV[1]) == 0 then return {'no_player'} end
local nxt = redis.call('HGET', KEYS[1], 'next')
local claimed = 0
if not nxt then
  nxt = ARGV[2]
  redis.call('HSET', KEYS[1], 'next', nxt)
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
"""

ROUND_JOIN = """
-- KEYS: meta, roster, tokens, player (the next round) ; ARGV: name, token hash, max players, now ms, name key,
--   code of the round before, host token hash
-- A player of the round before, in the next round as a ready player: {status, 1 when the player hosts it}.
-- The host role goes to the first player into the round (HSETNX of host_name here, in the same script as the
-- join, so however many processes ask at once exactly one player is ever given a host token); a retried
-- rematch of the host gets a new host token (the one before no longer starts the round), anyone else none.
-- Asked again (a retried rematch): a new newest token, the one before valid until the new one is used (as
-- ISSUE); a name someone else joined with stays theirs. A name key held for this very name and no player yet
-- is the seat kept for this player of the round before until its rematch window ends (see WINDOW_OVER).
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {'no_match', 0} end
if redis.call('EXISTS', KEYS[4]) == 1 then
  if redis.call('HGET', KEYS[4], 'via') ~= ARGV[6] then return {'name_taken', 0} end
  local current = redis.call('HGET', KEYS[4], 'token')
  local previous = redis.call('HGET', KEYS[4], 'prev_token')
  if previous and previous ~= current then redis.call('HDEL', KEYS[3], previous) end
  if current then redis.call('HSET', KEYS[4], 'prev_token', current) end
  redis.call('HSET', KEYS[3], ARGV[2], ARGV[1])
  redis.call('HSET', KEYS[4], 'token', ARGV[2])
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
"""

WINDOW_OVER = """
-- KEYS: meta, player-prefix (a round after the first) ; ARGV: name, name key of each player of the round before
-- Its rematch window is over (once; in the lobby only): it may start with whoever is in, and the names kept
-- for the players of the round before who did not ask are free for anyone (first come, as in any lobby).
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
"""

NEXT_MADE = """
-- KEYS: meta (an ended match) ; marks its next round as made (only while the match's keys exist: an expired
-- match is not brought back as a hash with this field alone)
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('HSET', KEYS[1], 'next_made', 1)
"""

SERIES_ADD = """
-- KEYS: series ; ARGV: the first round's code, a round's code, seconds the list is kept
if redis.call('LLEN', KEYS[1]) == 0 then redis.call('RPUSH', KEYS[1], ARGV[1]) end
if not redis.call('LPOS', KEYS[1], ARGV[2]) then redis.call('RPUSH', KEYS[1], ARGV[2]) end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return redis.call('LRANGE', KEYS[1], 0, -1)
"""


LOBBY_EVENT = """
-- KEYS: meta, roster, events, player-prefix
-- ARGV: event frame, then what it was built from: state, commitment, and name, ready, connected (0|1) per player
-- The lobby event is written only while the match is in its lobby and only if it shows the lobby as it is now
-- (the stream's lobby events follow the match's state in Redis: none contradicts the countdown or an earlier one).
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
redis.call('XADD', KEYS[3], 'MAXLEN', '~', %d, '*', 'm', ARGV[1], 'k', 'public')
return 'ok'
""" % EVENTS_MAXLEN  # noqa: UP031 - Lua tables are braces: an f-string would double them all

READY = """
-- KEYS: meta, player ; ARGV: none. The player is ready, only while the match is in its lobby: the match's state.
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'lobby' or state == 'preparing' then redis.call('HSET', KEYS[2], 'ready', 1) end
return state or ''
"""

DONE_IF_DUE = """
-- KEYS: timers ; ARGV: member, now ms. Remove a timer that is due, not one set again for later meanwhile.
local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if due and tonumber(due) <= tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
"""


@dataclass
class PlayerRecord:
    """A player's stored record (times in ms from the start instant)."""

    name: str
    epoch: int
    ready: bool
    connected: bool
    seq: int
    moves: int
    undos: int
    hints: int
    foundation: int
    status: str
    time_ms: int
    last_found_ms: int
    last_hint: str = ""
    """The answer to the player's last hint (``""``: none, or no hint asked), sent again for a retried hint."""

    @classmethod
    def from_hash(cls, data: dict[bytes, bytes]) -> PlayerRecord:
        get = lambda k: data.get(k.encode(), b"0").decode()
        return cls(
            name=get("name"), epoch=int(get("epoch")), ready=get("ready") == "1", connected=get("connected") != "0",
            seq=int(get("seq")), moves=int(get("moves")), undos=int(get("undos")), hints=int(get("hints")),
            foundation=int(get("foundation")), status=get("status"), time_ms=int(get("time_ms")),
            last_found_ms=int(get("last_found_ms")), last_hint=data.get(b"last_hint", b"").decode(),
        )


def redis_client(url: str) -> aioredis.Redis:
    """The server's Redis client for ``url`` (``redis://host:port/db``): a few connections shared by every player.

    Commands wait up to 10 s for a free connection instead of failing (DESIGN.md: a pool of 32 made p99
    three times worse than a few); the stream reader's blocking XREAD holds one of them at a time. A
    socket read or write waits at most 5 s (then redis-py raises ``TimeoutError``). The load benchmark's
    floor baseline uses this same client.
    """
    pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=16, timeout=10,
                                                    socket_timeout=5, health_check_interval=30)
    return aioredis.Redis(connection_pool=pool)


class Store:
    """The server's one owner of Redis access (opened in the app's lifespan)."""

    def __init__(self, client: aioredis.Redis, retention_s: int) -> None:
        self.redis = client
        self.retention_s = retention_s
        self._join = client.register_script(JOIN)
        self._resume = client.register_script(RESUME)
        self._issue = client.register_script(ISSUE)
        self._commit = client.register_script(COMMIT)
        self._fence = client.register_script(FENCE)
        self._transition = client.register_script(TRANSITION)
        self._start = client.register_script(START)
        self._create = client.register_script(CREATE)
        self._pending: list[tuple[list[str], list[Any], asyncio.Future[Any]]] = []
        self._flushes: set[asyncio.Task[None]] = set()
        self._end_player = client.register_script(END_PLAYER)
        self._close = client.register_script(CLOSE)
        self._claim_next = client.register_script(CLAIM_NEXT)
        self._round_join = client.register_script(ROUND_JOIN)
        self._window_over = client.register_script(WINDOW_OVER)
        self._next_made = client.register_script(NEXT_MADE)
        self._series_add = client.register_script(SERIES_ADD)
        self._lobby_event = client.register_script(LOBBY_EVENT)
        self._ready = client.register_script(READY)
        self._done_if_due = client.register_script(DONE_IF_DUE)

    async def time_ms(self) -> int:
        """Redis ``TIME`` in ms: the one clock all processes share."""
        seconds, micros = await self.redis.time()
        return int(seconds) * 1000 + int(micros) // 1000

    # ------------------------------------------------------------ matches

    async def create_match(self, code: str, fields: dict[str, Any]) -> bool:
        """Create a match's meta hash in one step; False if the code exists already."""
        args: list[Any] = ["code", code]
        for k, v in fields.items():
            args += [k, _plain(v)]
        return bool(await self._create(keys=[meta_key(code)], args=args))

    async def meta(self, code: str) -> dict[str, str] | None:
        """The meta hash as text, or None for an unknown match."""
        data = await self.redis.hgetall(meta_key(code))
        if not data:
            return None
        return {k.decode(): v.decode() for k, v in data.items()}

    async def set_meta(self, code: str, **fields: Any) -> None:
        await self.redis.hset(meta_key(code), mapping={k: _plain(v) for k, v in fields.items()})

    async def transition(self, code: str, old: str, new: str, event: bytes = b"", **fields: Any) -> bool:
        """Atomically move a match from state ``old`` to ``new`` (setting fields, adding an event)."""
        args: list[Any] = [old, new, event]
        for k, v in fields.items():
            args += [k, _plain(v)]
        return bool(await self._transition(keys=[meta_key(code), events_key(code)], args=args))

    async def start(self, code: str, event: bytes, foundation: int = 0) -> bool:
        """Countdown over: the match plays, every player's status becomes ``playing`` with the ``foundation``
        cards the deal (and its auto-play) put up before the first command."""
        return bool(await self._start(keys=[meta_key(code), roster_key(code), events_key(code), f"{{m:{code}}}:p:"],
                                      args=[event, foundation]))

    async def close_unstarted(self, code: str, event: bytes, keep_s: int) -> bool:
        """Close a match still in ``lobby`` or ``preparing`` (state ``closed``, ``event`` to its stream, keys
        expiring in ``keep_s`` seconds); False when it had started (or is gone)."""
        keys = [meta_key(code), roster_key(code), tokens_key(code), events_key(code), f"{{m:{code}}}:p:"]
        return bool(await self._close(keys=keys, args=[event, keep_s]))

    async def end_player(self, code: str, name: str, status: str, time_ms: int, event: bytes) -> tuple[str, int]:
        """End a player's game (timeout, dead) unless it ended already: (status, players left)."""
        result = await self._end_player(keys=[player_key(code, name), events_key(code), meta_key(code)],
                                        args=[status, time_ms, event])
        return result[0].decode(), int(result[1])

    async def add_lobby_event(self, code: str, frame: bytes, state: str, commitment: str,
                              players: list[PlayerRecord]) -> str:
        """Append lobby ``frame``, built from ``state``, ``commitment`` and ``players`` (join order), unless the
        lobby has changed since they were read (see :data:`LOBBY_EVENT`): ``ok``, ``changed`` (read again and
        retry) or ``not_lobby`` (the match has left its lobby: no lobby event any more)."""
        args: list[Any] = [frame, state, commitment]
        for p in players:
            args += [p.name, 1 if p.ready else 0, 1 if p.connected else 0]
        keys = [meta_key(code), roster_key(code), events_key(code), f"{{m:{code}}}:p:"]
        return (await self._lobby_event(keys=keys, args=args)).decode()

    async def set_ready(self, code: str, name: str) -> str:
        """Mark the player ready if the match is still in its lobby (``lobby`` or ``preparing``); returns the
        match's state (``""``: no such match)."""
        return (await self._ready(keys=[meta_key(code), player_key(code, name)])).decode()

    async def roster(self, code: str) -> list[str]:
        return [n.decode() for n in await self.redis.lrange(roster_key(code), 0, -1)]

    async def players(self, code: str) -> list[PlayerRecord]:
        """Every player's record, in join order."""
        names = await self.roster(code)
        if not names:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.hgetall(player_key(code, name))
            rows = await pipe.execute()
        return [PlayerRecord.from_hash(row) for row in rows if row]

    async def player(self, code: str, name: str) -> PlayerRecord | None:
        row = await self.redis.hgetall(player_key(code, name))
        return PlayerRecord.from_hash(row) if row else None

    async def set_player(self, code: str, name: str, **fields: Any) -> None:
        await self.redis.hset(player_key(code, name), mapping={k: _plain(v) for k, v in fields.items()})

    async def join(self, code: str, name: str, token_digest: str, max_players: int, now_ms: int,
                   name_key: str | None = None) -> tuple[str, int]:
        """Add a player in the lobby: ``("ok", count)`` or an error code (``name_taken`` also when another
        player's name has the same ``name_key``, default ``name``)."""
        result = await self._join(
            keys=[meta_key(code), roster_key(code), tokens_key(code), player_key(code, name), events_key(code)],
            args=[name, token_digest, max_players, now_ms, b"", name if name_key is None else name_key],
        )
        status = result[0].decode()
        return status, int(result[1]) if status == "ok" else 0

    async def resume(self, code: str, old_digest: str, new_digest: str) -> tuple[str, str, int]:
        """Rotate a player's token and open a new connection epoch: ``("ok", name, epoch)``.

        ``old_digest`` may be the newest token or the one before it while the newest has not been used
        (see :data:`RESUME`); ``("bad_token", "", 0)`` for any other.
        """
        result = await self._resume(keys=[tokens_key(code), f"{{m:{code}}}:p:"], args=[old_digest, new_digest])
        status = result[0].decode()
        if status != "ok":
            return status, "", 0
        return status, result[1].decode(), int(result[2])

    async def issue_token(self, code: str, name: str, digest: str) -> None:
        """Make ``digest`` (a token's SHA-256) the player's newest token (see :data:`ISSUE`)."""
        await self._issue(keys=[tokens_key(code), player_key(code, name)], args=[digest, name])

    async def log(self, code: str, name: str) -> list[tuple[str, int]]:
        """A player's accepted commands with their times (ms from the start)."""
        return _log_entries(await self.redis.lrange(log_key(code, name), 0, -1))

    async def commit(self, code: str, name: str, epoch: int, seq: int, entry: str, record: dict[str, Any],
                     ends: bool, events: list[bytes], boards: list[bytes] | None = None) -> tuple[str, int]:
        """Write one accepted command atomically; returns (status, players still playing or -1).

        Status ``ok``, or why nothing was written: ``stale`` (another connection's ``epoch`` is newer),
        ``dup`` (``seq`` was accepted already), ``seq_gap`` (``seq`` skips a number: it is not the stored
        one plus 1), ``game_over`` (the player's game has ended), ``not_playing`` (the match is not playing).

        ``events`` go to the match's stream as public events (players and
        spectators), ``boards`` as kind ``board`` (spectators only; an
        open-boards match's redacted views, :data:`SPECTATOR_KINDS`).

        Commits made during one turn of the event loop go to Redis together,
        one pipeline of :data:`COMMIT` scripts (each still atomic on its
        own): one round trip for many players (DESIGN.md: fewer, larger
        round trips win). Raises what redis-py raises when Redis fails.
        """
        keys = [player_key(code, name), log_key(code, name), events_key(code), meta_key(code)]
        args = [msgspec.msgpack.encode([
            str(epoch), str(seq), entry, str(record["moves"]), str(record["undos"]), str(record["hints"]),
            str(record["foundation"]), record["status"], str(record["time_ms"]), str(record["last_found_ms"]),
            1 if ends else 0, len(events)]), *events, *(boards or ())]
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending.append((keys, args, future))
        if len(self._pending) == 1:
            asyncio.get_running_loop().call_soon(self._flush_soon)
        result = await future
        status = result[0].decode()
        return status, int(result[2]) if status == "ok" else -1

    async def fence(self, code: str, name: str, epoch: int, nonce: str,
                    within_s: float) -> tuple[PlayerRecord, list[tuple[str, int]], str, str] | None:
        """After a :meth:`commit` whose answer was lost: void the connection's ``epoch`` (a new one is stored, see
        :data:`FENCE`) and read what Redis holds, in one step, so that nothing of the lost commit can land later.

        Returns the player's record (with its new epoch), its log as :meth:`log` gives it, and the match's deal
        and settings (JSON); None when another connection has taken over (``epoch`` is not the stored one).
        Tried again (redis-py's :class:`~redis.asyncio.retry.Retry`, jittered exponential backoff, on connection
        errors and timeouts) for at most ``within_s`` seconds, then raises :class:`TimeoutError`; raises what
        redis-py raises for other failures. ``nonce`` makes a repeated call, its first answer lost, harmless.
        """
        keys = [player_key(code, name), log_key(code, name), meta_key(code)]
        retry = Retry(ExponentialWithJitterBackoff(base=0.05, cap=1.0), retries=-1)  # bounded by within_s

        async def attempt() -> Any:
            return await self._fence(keys=keys, args=[epoch, nonce])

        async def failed(_error: Exception) -> None:
            return None  # redis-py has dropped the failed connection already

        async with asyncio.timeout(within_s):
            reply = await retry.call_with_retry(attempt, failed)
        if reply[0] != b"ok":
            return None
        flat = reply[1]
        record = PlayerRecord.from_hash(dict(zip(flat[::2], flat[1::2])))
        deal, settings = (value.decode() for value in reply[3])
        return record, _log_entries(reply[2]), deal, settings

    def _flush_soon(self) -> None:
        batch, self._pending = self._pending, []
        task = asyncio.create_task(self._flush(batch))
        self._flushes.add(task)
        task.add_done_callback(self._flushes.discard)

    async def _flush(self, batch: list[tuple[list[str], list[Any], asyncio.Future[Any]]]) -> None:
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                for keys, args, _ in batch:
                    pipe.evalsha(self._commit.sha, len(keys), *keys, *args)
                results = await pipe.execute(raise_on_error=False)
        except Exception as error:  # noqa: BLE001 - every waiting command gets the failure
            for _, _, future in batch:
                if not future.done():
                    future.set_exception(error)
            return
        for (keys, args, future), result in zip(batch, results):
            if isinstance(result, NoScriptError):  # Redis restarted or flushed its scripts: load and retry
                try:
                    result = await self._commit(keys=keys, args=args)
                except Exception as error:  # noqa: BLE001
                    result = error
            if future.done():
                continue
            if isinstance(result, Exception):
                future.set_exception(result)
            else:
                future.set_result(result)

    async def add_event(self, code: str, frame: bytes, kind: str = "public") -> str:
        """Append an event to the match's stream: ``kind`` public, or internal (start, takeover)."""
        entry = await self.redis.xadd(events_key(code), {"m": frame, "k": kind}, maxlen=EVENTS_MAXLEN,
                                      approximate=True)
        return entry.decode()

    async def store_results(self, code: str, frame: bytes) -> None:
        await self.redis.set(results_key(code), frame)

    async def results(self, code: str) -> bytes | None:
        return await self.redis.get(results_key(code))

    async def expire_match(self, code: str) -> None:
        """Finished matches expire after the retention period; their results stay."""
        names = await self.roster(code)
        keys = [meta_key(code), roster_key(code), tokens_key(code), events_key(code)]
        keys += [player_key(code, n) for n in names] + [log_key(code, n) for n in names]
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.expire(key, self.retention_s)
            await pipe.execute()

    # ------------------------------------------------------------ rounds

    async def claim_next(self, code: str, name: str, candidate: str) -> tuple[str, str, bool, list[str]]:
        """Player ``name`` of ended match ``code`` asks for the next round (:data:`CLAIM_NEXT`):
        ``("ok", next code, whether this call set it to ``candidate``, names who asked)``, or an error status
        (``no_match``, ``not_finished``, ``no_player``) with empty fields."""
        result = await self._claim_next(keys=[meta_key(code), f"{{m:{code}}}:p:"], args=[name, candidate])
        status = result[0].decode()
        if status != "ok":
            return status, "", False, []
        return status, result[1].decode(), int(result[2]) == 1, json.loads(result[3])

    async def round_join(self, code: str, name: str, token_digest: str, max_players: int, now_ms: int,
                         name_key: str, via: str, host_digest: str) -> tuple[str, bool]:
        """Put player ``name`` of round ``via`` into round ``code`` as ready (:data:`ROUND_JOIN`):
        ``(status, hosts)``. Status ``ok``, ``again`` (in already: a new token), or why not (``name_taken``,
        ``match_full``, ``already_started``, ``closed``, ``no_match``); ``hosts``: the player hosts the round
        and ``host_digest`` (a new host token's SHA-256) is now its host token."""
        result = await self._round_join(
            keys=[meta_key(code), roster_key(code), tokens_key(code), player_key(code, name)],
            args=[name, token_digest, max_players, now_ms, name_key, via, host_digest])
        return result[0].decode(), int(result[1]) == 1

    async def round_window_over(self, code: str, names: dict[str, str]) -> bool:
        """Round ``code``'s rematch window is over (:data:`WINDOW_OVER`); ``names`` maps each player of the
        round before to its name key. False (nothing changed) when the round has left its lobby."""
        args = [item for pair in names.items() for item in pair]
        return bool(await self._window_over(keys=[meta_key(code), f"{{m:{code}}}:p:"], args=args))

    async def next_made(self, code: str) -> None:
        """Mark ended match ``code``'s next round as made (:data:`NEXT_MADE`): once its keys expire, a rematch
        is refused instead of making it again."""
        await self._next_made(keys=[meta_key(code)])

    async def series_add(self, first: str, code: str) -> list[str]:
        """Append round ``code`` to the series of round ``first`` (once); the series' codes in order."""
        codes = await self._series_add(keys=[series_key(first)], args=[first, code, 2 * self.retention_s])
        return [c.decode() for c in codes]

    async def series(self, first: str) -> list[str]:
        """The codes of the series whose first round is ``first`` (``[]``: it has one round only)."""
        return [c.decode() for c in await self.redis.lrange(series_key(first), 0, -1)]

    # ------------------------------------------------------------ timers

    async def add_timer(self, code: str, kind: str, due_ms: int) -> None:
        await self.redis.zadd(TIMERS, {f"{code} {kind}": due_ms})

    async def add_missing_timers(self, code: str, due_ms: dict[str, int]) -> None:
        """Add the match's timers ``{kind: due ms}`` that are not set (ZADD NX: a timer set already keeps
        its instant), so any process may repeat it."""
        if due_ms:
            await self.redis.zadd(TIMERS, {f"{code} {kind}": due for kind, due in due_ms.items()}, nx=True)

    async def due_timers(self, now_ms: int, limit: int = 50) -> list[tuple[str, str]]:
        members = await self.redis.zrangebyscore(TIMERS, "-inf", now_ms, start=0, num=limit)
        return [tuple(m.decode().split(" ", 1)) for m in members]  # type: ignore[misc]

    async def next_timer_ms(self) -> int | None:
        first = await self.redis.zrange(TIMERS, 0, 0, withscores=True)
        return int(first[0][1]) if first else None

    async def lease(self, name: str, holder: str, ms: int) -> bool:
        """Take a lease (SET NX PX); another process takes over when it expires."""
        return bool(await self.redis.set(f"lease:{name}", holder, nx=True, px=ms))

    async def release(self, name: str) -> None:
        await self.redis.delete(f"lease:{name}")

    async def done_timer(self, code: str, kind: str) -> None:
        await self.redis.zrem(TIMERS, f"{code} {kind}")
        await self.redis.delete(f"lease:{code} {kind}")

    async def done_timer_if_due(self, code: str, kind: str, now_ms: int) -> None:
        """Remove the timer unless it was set again for after ``now_ms`` meanwhile; release its lease."""
        await self._done_if_due(keys=[TIMERS], args=[f"{code} {kind}", now_ms])
        await self.redis.delete(f"lease:{code} {kind}")

    # ------------------------------------------------------------ events

    async def read_events(self, streams: dict[str, str], block_ms: int) -> list[tuple[str, str, dict[bytes, bytes]]]:
        """XREAD from several match streams: (code, id, fields) triples."""
        if not streams:
            return []
        keys = {events_key(code): last for code, last in streams.items()}
        reply = await self.redis.xread(keys, block=block_ms, count=200)
        result = []
        for key, entries in reply or []:
            code = key.decode()[3:].split("}", 1)[0]
            for entry_id, fields in entries:
                result.append((code, entry_id.decode(), fields))
        return result

    async def spectator_events_after(self, code: str, after: str,
                                     page: int = 500) -> AsyncIterator[list[tuple[str, bytes]]]:
        """Spectators' events (:data:`SPECTATOR_KINDS`) after stream id ``after`` (exclusive), oldest
        first, in pages of ``(id, frame)`` pairs (one XRANGE of ``page`` entries each) to the stream's end."""
        while True:
            entries = await self.redis.xrange(events_key(code), min=f"({after}", max="+", count=page)
            if not entries:
                return
            after = entries[-1][0].decode()
            chosen = [(entry_id.decode(), fields[b"m"]) for entry_id, fields in entries
                      if fields.get(b"k", b"public") in SPECTATOR_KINDS]
            if chosen:
                yield chosen
            if len(entries) < page:
                return

    async def last_event_id(self, code: str) -> str:
        last = await self.redis.xrevrange(events_key(code), count=1)
        return last[0][0].decode() if last else "0-0"

    # ------------------------------------------------------------ deal pool

    async def pool_size(self, variant: str) -> int:
        return int(await self.redis.llen(pool_key(variant)))

    async def pool_push(self, variant: str, item: bytes) -> None:
        await self.redis.rpush(pool_key(variant), item)

    async def pool_pop(self, variant: str) -> bytes | None:
        return await self.redis.lpop(pool_key(variant))


async def follow_streams(ids: dict[Any, str], wakeup: asyncio.Event,
                         read: Callable[[dict[Any, str], int], Awaitable[list[tuple[Any, str, Any]]]],
                         handle: Callable[[Any, str, Any], Awaitable[None]], pause_s: float = 0.0) -> None:
    """The loop of a process's one stream reader (DESIGN.md: one supervised reader per process).

    ``ids`` maps each followed stream (a match code, a day) to the last id seen; callers add and remove
    entries and set ``wakeup`` when they add the first. ``read(ids, block_ms)`` returns new
    ``(stream, id, data)`` events; each goes to ``handle`` in order, then its id is remembered (when the
    stream is still followed). After a read with events the loop sleeps ``pause_s`` seconds so that the
    next XREAD gathers several. Runs until cancelled; raises what ``read`` or ``handle`` raise.
    """
    while True:
        if not ids:
            wakeup.clear()
            try:
                await asyncio.wait_for(wakeup.wait(), timeout=0.5)
            except TimeoutError:
                pass
            continue
        events = await read(dict(ids), 100)
        for stream, entry_id, data in events:
            await handle(stream, entry_id, data)
            if stream in ids:
                ids[stream] = entry_id
        if events and pause_s:
            await asyncio.sleep(pause_s)


def _log_entries(entries: list[bytes]) -> list[tuple[str, int]]:
    """A move log's entries (``b"cmd ms"``) as (command, ms from the start) pairs."""
    result = []
    for entry in entries:
        command, _, ms = entry.decode().partition(" ")
        result.append((command, int(ms or 0)))
    return result


def _plain(value: Any) -> Any:
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    if value is None:
        return ""
    return value
