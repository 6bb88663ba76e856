"""The rounds of a series in the store: the next round claimed and joined, its rematch window, the series list
(:mod:`server.store.scripts.rounds`)."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, NamedTuple

from . import scripts
from .backend import Backend
from .keys import meta_key, player_key, player_prefix, roster_key, series_key, tokens_key


class ClaimStatus(StrEnum):
    """What :meth:`Rounds.claim_next` found: ``OK``, or why there is no next round for the player."""

    OK = "ok"
    NO_MATCH = "no_match"
    NOT_FINISHED = "not_finished"
    NO_PLAYER = "no_player"
    """The player's record is gone."""


class NextClaim(NamedTuple):
    """:meth:`Rounds.claim_next`'s answer: when ``OK``, the next round's ``code``, whether this call ``claimed``
    it (set it), and the ``names`` who asked, in order; else ``""``, False and ``[]``."""

    status: ClaimStatus
    code: str
    claimed: bool
    names: list[str]


class RoundJoinStatus(StrEnum):
    """What :meth:`Rounds.join` did: ``OK``, ``AGAIN`` (in already: a new token), or why not."""

    OK = "ok"
    AGAIN = "again"
    NAME_TAKEN = "name_taken"
    MATCH_FULL = "match_full"
    ALREADY_STARTED = "already_started"
    CLOSED = "closed"
    NO_MATCH = "no_match"


class RoundJoined(NamedTuple):
    """:meth:`Rounds.join`'s answer: ``status``, and whether the player ``hosts`` the round (the host digest
    given is its host token now)."""

    status: RoundJoinStatus
    hosts: bool


class Rounds:
    """The store's part for rounds (see the module docstring)."""

    def __init__(self, store: Backend) -> None:
        self.store = store
        self.redis: Any = store.redis  # bytes replies: redis-py types each one bytes | str
        self._claim_next = store.register(scripts.CLAIM_NEXT)
        self._join = store.register(scripts.ROUND_JOIN)
        self._window_over = store.register(scripts.WINDOW_OVER)
        self._next_made = store.register(scripts.NEXT_MADE)
        self._series_add = store.register(scripts.SERIES_ADD)

    async def claim_next(self, code: str, name: str, candidate: str, same_deal: bool = False) -> NextClaim:
        """Player ``name`` of ended match ``code`` asks for the next round (:data:`~server.store.scripts.CLAIM_NEXT`),
        ``candidate`` its code if none is set yet; ``same_deal``: the round this call sets is dealt the ended
        match's deal again (meta ``next_same``)."""
        result = await self._claim_next(keys=[meta_key(code), player_prefix(code)],
                                        args=[name, candidate, "1" if same_deal else "0"])
        status = ClaimStatus(result[0].decode())
        if status is not ClaimStatus.OK:
            return NextClaim(status, "", False, [])
        return NextClaim(status, result[1].decode(), int(result[2]) == 1, json.loads(result[3]))

    async def join(self, code: str, name: str, token_digest: str, max_players: int, now_ms: int, name_key: str,
                   via: str, host_digest: str) -> RoundJoined:
        """Put player ``name`` of round ``via`` into round ``code`` as ready (:data:`~server.store.scripts.ROUND_JOIN`);
        ``host_digest``: a new host token's SHA-256, the round's host token if the player hosts it."""
        result = await self._join(
            keys=[meta_key(code), roster_key(code), tokens_key(code), player_key(code, name)],
            args=[name, token_digest, max_players, now_ms, name_key, via, host_digest])
        return RoundJoined(RoundJoinStatus(result[0].decode()), int(result[1]) == 1)

    async def window_over(self, code: str, names: dict[str, str]) -> bool:
        """Round ``code``'s rematch window is over (:data:`~server.store.scripts.WINDOW_OVER`); ``names`` maps each
        player of the round before to its name key. False (nothing changed) once the round has left its lobby."""
        args = [item for pair in names.items() for item in pair]
        return bool(await self._window_over(keys=[meta_key(code), player_prefix(code)], args=args))

    async def next_made(self, code: str) -> None:
        """Mark ended match ``code``'s next round as made (:data:`~server.store.scripts.NEXT_MADE`)."""
        await self._next_made(keys=[meta_key(code)])

    async def series_add(self, first: str, code: str) -> list[str]:
        """Append round ``code`` to the series of round ``first`` (once); the series' codes in order."""
        codes = await self._series_add(keys=[series_key(first)], args=[first, code, 2 * self.store.retention_s])
        return [c.decode() for c in codes]

    async def series(self, first: str) -> list[str]:
        """The codes of the series whose first round is ``first`` (``[]``: it has one round only)."""
        return [c.decode() for c in await self.redis.lrange(series_key(first), 0, -1)]
