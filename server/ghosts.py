"""Ghosts: a new match races a recorded game of its deal (``POST /matches`` field ``ghost``).

A ghost is never a player: it has no seat and plays no move. The match keeps its
:class:`protocol.messages.Ghost` frame (its progress timeline, :mod:`server.core.ghosts`) in its meta, and each
player gets that frame after ``started`` and on every resume; the clients replay it against the match clock.
Nothing in it is a card: it tells nothing of the stock.

Two sources, both on the new match's own deal (so the host must choose the deal: a ``seed`` or a ``deal``):

- ``{"name": NAME}``: NAME's best kept game on that deal in that variant (the named player's history keeps one
  per deal it keeps: :meth:`server.store.profiles.Profiles.ghost`);
- ``{"name": NAME, "match": CODE}``: NAME's game in match CODE, ended and still kept (``FTR_RETENTION_S``),
  dealt the same deal in the same variant; not a daily attempt (its moves stay secret).

Refusals (:class:`~server.core.errors.ServiceError`): ``malformed`` for a ghost on a deal no one chose,
``no_ghost`` (HTTP 404) when there is no such game; nothing is created then.
"""

from __future__ import annotations

import logging
from typing import Annotated

import msgspec

from protocol import messages as m

from .core.errors import ServiceError
from .core.ghosts import ghost_label, timeline
from .core.lifecycle import State
from .names import name_key
from .store import Store
from .store.keys import name_hash

log = logging.getLogger("forty_thieves.ghosts")


class GhostRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The ``ghost`` field of ``POST /matches``: whose game (``name``, any look-alike of a named player's name;
    a player's name in match ``match``), and ``match`` (optional): the finished match of that game."""

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=m.MAX_NAME)]
    match: Annotated[str, msgspec.Meta(min_length=1, max_length=32)] | None = None


class KeptGhost(msgspec.Struct, frozen=True):
    """A player's best game on a deal as the history keeps it (:meth:`server.store.profiles.Profiles.ghost`):
    how it ended and its timeline, ``[[ms, moves, foundation], ...]``."""

    status: str
    time_ms: int
    moves: int
    foundation: int
    timeline: list[tuple[int, int, int]]
    match: str = ""


async def find_ghost(store: Store, request: GhostRequest, variant: str, label: str, deal: str) -> m.Ghost:
    """The ghost frame of ``request`` for a new match of ``variant`` dealing ``deal`` (position text, labelled
    ``label``); raises :class:`ServiceError` ``no_ghost`` (see the module docstring)."""
    if request.match is not None:
        return await _match_ghost(store, request.name, request.match, variant, deal)
    hashed = name_hash(name_key(request.name))
    profile = await store.profiles.get(hashed)
    if profile is None:
        raise ServiceError("no_ghost", f"no named player {request.name!r} on this server: no ghost to race")
    try:
        raw = await store.profiles.ghost(hashed, variant, label)
        kept = None if raw is None else msgspec.convert(raw, KeptGhost)
    except (ValueError, msgspec.ValidationError):  # a damaged value: no ghost to race (the next game replaces it)
        log.warning("the kept ghost of %s on %s %s is damaged: not raced", profile.name, variant, label)
        kept = None
    if kept is None or not kept.timeline:
        raise ServiceError("no_ghost", f"{profile.name} has no recorded {variant} game on this deal ({label}) "
                                       "to race as a ghost")
    return m.Ghost(profile.name, ghost_label(profile.name), kept.time_ms, kept.moves, kept.foundation,
                   kept.status, kept.timeline)


async def _match_ghost(store: Store, name: str, code: str, variant: str, deal: str) -> m.Ghost:
    meta = await store.matches.meta(code)
    if meta is None or meta.state is not State.FINISHED:
        raise ServiceError("no_ghost", f"no ended match {code!r} is kept on this server: no ghost to race")
    if meta.day is not None:
        raise ServiceError("no_ghost", "a daily attempt's game is not raced as a ghost of a match")
    if meta.settings.variant != variant or meta.deal != deal:
        raise ServiceError("no_ghost", f"match {code} was not dealt this deal in {variant}: a ghost races on its "
                                       "own deal (give the same seed or deal)")
    if name not in await store.players.roster(code):
        raise ServiceError("no_ghost", f"no player named {name!r} in match {code}")
    player = await store.players.get(code, name)
    if player is None:  # in the roster, its record gone (the match expiring meanwhile): nothing left to race
        raise ServiceError("no_ghost", f"no player named {name!r} is kept in match {code}")
    points = timeline(meta.deal, meta.settings, await store.players.log(code, name))
    return m.Ghost(name, ghost_label(name, code), player.time_ms, player.moves, player.foundation, player.status,
                   points)


__all__ = ["GhostRequest", "KeptGhost", "find_ghost"]
