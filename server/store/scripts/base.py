"""What every script is made of: :class:`Script`, the stream length, the ``wake`` of each Redis and the one
token rotation. Pure: script texts only."""

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

@dataclass(frozen=True)
class Script:
    """One Lua script: ``name``, the ``scope`` of its keys (``match``: one match's, ``day``: one daily
    challenge's, ``player``: one named player's, ``group``: one group's, ``global``: one key of its own), the parts of the keys it takes (``KEYS`` in order: the
    names of :mod:`server.store.keys`, ``player_prefix`` for a key a name is appended to), its ``doc``
    (``ARGV`` and reply) and its ``lua`` source."""

    name: str
    scope: Literal["match", "day", "player", "group", "global"]
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

