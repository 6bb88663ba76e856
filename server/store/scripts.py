"""Every Lua script of the server (DESIGN.md "Redis"), each atomic on the keys of one hash tag.

A :class:`Script` names the keys it is given (``KEYS``, in order) by their
part in :mod:`server.store.keys`, and its docstring says its ``ARGV`` and
its reply. A script touches only the keys it is given, or a key made by
appending a player's name to its ``player-prefix`` key
(:func:`server.store.keys.player_prefix`), which shares that key's hash
tag: so every script runs on one slot of a Redis Cluster (the test of the
store checks both).

A player's game is its deal plus its move log; :data:`COMMIT` writes one
accepted command, the player's progress and the public event in one
script (one round trip), after checking the connection's epoch and the
command's sequence number so a retried frame is never applied twice and
one that skips a number is not applied at all.

Rounds (:mod:`server.match.rounds`): an ended match's meta holds ``next`` (the
next round's code, set once by :data:`CLAIM_NEXT`), ``next_made`` (that
round was created, :data:`NEXT_MADE`) and ``rematch`` (who asked, JSON);
the next round's own keys are another match's (another slot), and the
series list a third: each step is one script on one slot, safe to repeat.
A round after the first also holds ``expected`` (the round before's
players, JSON), ``window_end_ms``, ``window_over``, ``host_name`` (set
once, by the first :data:`ROUND_JOIN`) and, until :data:`WINDOW_OVER`, the
``name:KEY`` fields of the round before's players (their names kept for
them).

Wake-ups: every script that adds to an event stream calls ``wake(stream, id)`` with the entry's id. On a Redis
Cluster that is ``SPUBLISH`` of the id on the shard channel named as the stream's key (its hash tag, so the
stream's slot: Redis 7.0 takes a script's SPUBLISH on the slot of its keys), which wakes the hub's reads of
that stream (:mod:`server.store.wakeups`); on one Redis, where the hub's blocking XREAD needs no wake-up, it is
nothing (:meth:`Script.source`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

EVENTS_MAXLEN = 20000
"""Approximate cap of an event stream (a match's, and a daily challenge's): the one stream length."""

WAKE_NOTHING = "local function wake(stream, id) end\n"
"""The ``wake`` of a script on one Redis: nothing (:meth:`Script.source`)."""

WAKE_PUBLISH = "local function wake(stream, id) redis.call('SPUBLISH', stream, id) end\n"
"""The ``wake`` of a script on a Redis Cluster: the new entry's id on the shard channel named as its stream."""

ROTATE_TOKEN = """
local function rotate_token(tokens, player, new, name, presented)
  local current = redis.call('HGET', player, 'token')
  local previous = redis.call('HGET', player, 'prev_token')
  if presented and presented ~= current then
    if current then redis.call('HDEL', tokens, current) end
  else
    if previous and previous ~= current then redis.call('HDEL', tokens, previous) end
    if current then redis.call('HSET', player, 'prev_token', current) end
  end
  redis.call('HSET', tokens, new, name)
  redis.call('HSET', player, 'token', new)
end
"""
"""The one token rotation, put before every script that calls ``rotate_token`` (:meth:`Script.source`).

``rotate_token(tokens, player, new, name, presented)``: the token hash ``new`` becomes ``name``'s newest
token (``tokens`` maps token hashes to names; ``player`` is the player's hash). A player holds at most two
valid tokens: the newest, and until the newest is first used the one before it (a ``joined`` reply lost on
the way must not lock the player out). ``presented``: the token a ``resume`` came with (nil outside a
connection): the newest keeps the one before valid and voids any older; the one before voids the newest
(which never reached its client) and stays valid itself."""

SPECTATOR_KINDS = (b"public", b"ended", b"board")
"""Stream entry kinds spectators receive: public events, games the server ended, and (open-boards
matches only) players' redacted boards. ``start`` and ``takeover`` are internal."""


@dataclass(frozen=True)
class Script:
    """One Lua script: ``name``, the ``scope`` of its keys (``match``: one match's, ``day``: one daily
    challenge's, ``global``: one key of its own), the parts of the keys it takes (``KEYS`` in order: the
    names of :mod:`server.store.keys`, ``player_prefix`` for a key a name is appended to), its ``doc``
    (``ARGV`` and reply) and its ``lua`` source."""

    name: str
    scope: Literal["match", "day", "global"]
    keys: tuple[str, ...]
    doc: str
    lua: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "__doc__", self.doc)

    def source(self, cluster: bool) -> str:
        """The text Redis runs: :attr:`lua` after the ``wake`` it calls (:data:`WAKE_PUBLISH` on a Redis Cluster,
        :data:`WAKE_NOTHING` on one Redis), and after :data:`ROTATE_TOKEN` when it calls ``rotate_token``."""
        rotation = ROTATE_TOKEN if "rotate_token(" in self.lua else ""
        return (WAKE_PUBLISH if cluster else WAKE_NOTHING) + rotation + self.lua


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
    "RECORD", "day", ('open', 'board', 'entries', 'replays', 'events'),
    """Put an ended daily attempt on the board (once).

    KEYS: open, board, entries, replays, events (a day's). ARGV: name, score, entry JSON, replay JSON,
    event JSON. Reply: 1, or 0 when it was there already.""",
    """
if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then redis.call('HDEL', KEYS[1], ARGV[1]) return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[4])
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

ALL: tuple[Script, ...] = tuple(value for value in list(globals().values()) if isinstance(value, Script))
"""Every script of the server (the store registers them; the test of the key layout walks them)."""
