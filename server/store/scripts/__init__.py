"""Every Lua script of the server (DESIGN.md "Redis"), each atomic on the keys of one hash tag: the one registry.

A :class:`Script` names the keys it is given (``KEYS``, in order) by their part in :mod:`server.store.keys`;
its doc gives its ``ARGV`` and its reply. A script touches only the keys it is given, or a key made by
appending a player's name to its ``player_prefix`` key, which shares that key's hash tag, so it runs on one
slot of a Redis Cluster (``tests/server/test_store_layout.py`` checks both). The scripts are written by job
in this package's modules (:mod:`.matches`, :mod:`.games`, :mod:`.rounds`, :mod:`.shared`, :mod:`.profiles`,
:mod:`.groups`) and listed once
here (:data:`ALL`).

Wake-ups: every script that adds to an event stream calls ``wake(stream, id)`` with the entry's id: on a
Redis Cluster an ``SPUBLISH`` of the id on the shard channel named as the stream (:mod:`server.store.wakeups`),
on one Redis nothing (:meth:`Script.source`).
"""

from __future__ import annotations

from .base import EVENTS_MAXLEN, ROTATE_TOKEN, WAKE_NOTHING, WAKE_PUBLISH, Script
from .games import COMMIT, END_PLAYER, FENCE, STUCK
from .groups import CREATE_GROUP, GROUP_JOINS, GROUP_LEAVES, PLAYER_JOINS
from .matches import CLOSE_MATCH, CREATE, ISSUE, JOIN, LOBBY_EVENT, READY, RESUME, SET_PLAYER, START, TRANSITION
from .profiles import CLAIM_NAME, DELETE_PLAYER, RECORD_GAME, SET_KEY, UNCLAIM_NAME
from .rounds import CLAIM_NEXT, NEXT_MADE, ROUND_JOIN, SERIES_ADD, WINDOW_OVER
from .shared import CLOSE_DAY, DONE_IF_DUE, LIVE_STATE, NEW_ATTEMPT, RECORD, UNCLAIM

ALL: tuple[Script, ...] = (
    CREATE, JOIN, RESUME, ISSUE, COMMIT, FENCE, START, END_PLAYER, STUCK, CLOSE_MATCH, TRANSITION, CLAIM_NEXT,
    ROUND_JOIN, WINDOW_OVER, NEXT_MADE, SERIES_ADD, LOBBY_EVENT, SET_PLAYER, READY, LIVE_STATE, DONE_IF_DUE,
    NEW_ATTEMPT, RECORD, UNCLAIM, CLOSE_DAY, CLAIM_NAME, UNCLAIM_NAME, SET_KEY, DELETE_PLAYER, RECORD_GAME,
    PLAYER_JOINS, CREATE_GROUP, GROUP_JOINS, GROUP_LEAVES,
)
"""Every script of the server (the store registers them; the test of the key layout walks them)."""

__all__ = [
    "ALL",
    "CLAIM_NAME",
    "CLAIM_NEXT",
    "CLOSE_DAY",
    "CLOSE_MATCH",
    "COMMIT",
    "CREATE",
    "CREATE_GROUP",
    "DELETE_PLAYER",
    "DONE_IF_DUE",
    "END_PLAYER",
    "EVENTS_MAXLEN",
    "FENCE",
    "GROUP_JOINS",
    "GROUP_LEAVES",
    "ISSUE",
    "JOIN",
    "LIVE_STATE",
    "LOBBY_EVENT",
    "NEW_ATTEMPT",
    "NEXT_MADE",
    "PLAYER_JOINS",
    "READY",
    "RECORD",
    "RECORD_GAME",
    "RESUME",
    "ROTATE_TOKEN",
    "ROUND_JOIN",
    "SERIES_ADD",
    "SET_KEY",
    "SET_PLAYER",
    "START",
    "STUCK",
    "TRANSITION",
    "UNCLAIM",
    "UNCLAIM_NAME",
    "WAKE_NOTHING",
    "WAKE_PUBLISH",
    "WINDOW_OVER",
    "Script",
]
