"""The scripts of groups: each on the keys of one hash tag, the player's side (``{n:H}:groups``) or the group's
(``{g:G}:group`` and ``{g:G}:members``). Joining runs the player's side first, leaving the group's first (see
:class:`server.store.groups.Groups`)."""

from __future__ import annotations

from .base import Script

PLAYER_JOINS = Script(
    "PLAYER_JOINS", "player", ("groups",),
    """The player's side of joining a group: the group's id added to the player's groups, unless it holds as many
    as it may.

    KEYS: a named player's groups. ARGV: the group's id, its name, the most groups a player is in.
    Reply: ``'added'``, ``'already'`` (the player was in it: its name refreshed) or ``'full'`` (nothing changed).""",
    """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return 'already'
end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 'full' end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 'added'
""")

CREATE_GROUP = Script(
    "CREATE_GROUP", "group", ("group", "members"),
    """Make a group with its maker as its first member, unless a group of that id exists.

    KEYS: the group's hash, its members. ARGV: name, the maker's name, now ms, the maker's ``H``.
    Reply: ``'new'`` or ``'exists'`` (nothing changed).""",
    """
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
redis.call('HSET', KEYS[1], 'name', ARGV[1], 'owner', ARGV[2], 'created_ms', ARGV[3])
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], ARGV[4], ARGV[2])
return 'new'
""")

GROUP_JOINS = Script(
    "GROUP_JOINS", "group", ("group", "members"),
    """The group's side of joining it: a member added, unless the group is gone or full.

    KEYS: the group's hash, its members. ARGV: the member's ``H``, its name, the most members a group holds.
    Reply: ``{status, the group's name}``: status ``'added'``, ``'already'`` (a member: its name refreshed),
    ``'full'`` or ``'none'`` (no such group; the name ``''``); nothing changed but for ``'added'``.""",
    """
local name = redis.call('HGET', KEYS[1], 'name')
if not name then return {'none', ''} end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  return {'already', name}
end
if redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[3]) then return {'full', name} end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return {'added', name}
""")

GROUP_LEAVES = Script(
    "GROUP_LEAVES", "group", ("group", "members"),
    """The group's side of a member leaving: the member dropped; the last one gone, the group's keys go too.

    KEYS: the group's hash, its members. ARGV: the member's ``H``.
    Reply: 1 it was a member, 0 not (nothing changed).""",
    """
local was = redis.call('HDEL', KEYS[2], ARGV[1])
if redis.call('HLEN', KEYS[2]) == 0 then redis.call('DEL', KEYS[1]) end
return was
""")
