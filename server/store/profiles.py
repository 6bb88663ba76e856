"""The store of named players: a claimed name, its hashed secrets, its history, records and rivals (keys
``{n:H}:...`` of :mod:`server.store.keys`, scripts :mod:`server.store.scripts.profiles`).

None of these keys expires: a player's history outlives the matches it came from (``FTR_RETENTION_S``). What
grows with play is bounded: the games list and its ``done`` hash by ``FTR_HISTORY_GAMES``, the deals by
``FTR_HISTORY_DEALS`` (each deal's ghost, the player's best game there, goes with its deal, and only the
:data:`~server.store.keys.MAX_GHOSTS` deals last played keep one), the rivals by :data:`~server.store.keys.MAX_RIVALS`, the days of daily attempts (a
streak's) by :data:`~server.store.keys.MAX_DAYS`.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import msgspec

from . import scripts
from .backend import Backend
from .keys import MAX_DAYS, MAX_GHOSTS, MAX_RIVALS, history_keys, profile_key, profile_keys


class ProfileRecord(msgspec.Struct, frozen=True):
    """A named player's profile hash: ``name`` as claimed, ``key`` and ``recovery`` (SHA-256 hex of the player
    key and of the recovery code), ``created_ms``/``seen_ms`` (epoch ms), ``games``, ``wins``, and per variant
    its ``games``, ``wins``, best won time (ms, -1 none) and its match, most foundation cards (-1 none)."""

    name: str
    key: str
    recovery: str
    created_ms: int
    seen_ms: int
    games: int
    wins: int
    variants: dict[str, dict[str, Any]]

    @classmethod
    def from_hash(cls, data: dict[bytes, bytes]) -> ProfileRecord:
        fields = {k.decode(): v.decode() for k, v in data.items()}
        variants: dict[str, dict[str, Any]] = {}
        for field, value in fields.items():
            variant, sep, what = field.rpartition("|")
            if sep:
                one = variants.setdefault(variant, {"games": 0, "wins": 0, "best_ms": -1, "best_match": "",
                                                    "cards": -1})
                one[what] = value if what == "best_match" else int(value)
        return cls(fields.get("name", ""), fields.get("key", ""), fields.get("recovery", ""),
                   int(fields.get("created_ms", 0)), int(fields.get("seen_ms", 0)), int(fields.get("games", 0)),
                   int(fields.get("wins", 0)), variants)


class GameOutcome(NamedTuple):
    """What recording one game answered: ``records`` (``[what, deal, value, previous]`` each) and ``rivals``
    (an opponent's ``H`` -> ``{"name", "races", "wins", "losses", "draws"}``, this player's side)."""

    records: list[list[Any]]
    rivals: dict[str, dict[str, Any]]


class Rival(NamedTuple):
    """One named opponent of a recorded race: its ``hashed`` name (``H``), ``name``, and ``result`` from the
    recorded player's side: ``w`` ranked higher, ``l`` lower, ``d`` equal; ``since``: the opponent's
    ``created_ms`` (a name deleted and claimed again is another opponent, whose head-to-head starts anew)."""

    hashed: str
    name: str
    result: str
    since: int


class Profiles:
    """Named players' keys on the client of ``store`` (see the module docstring). Every method takes the
    player's ``hashed`` name (:func:`~server.store.keys.name_hash` of its name key)."""

    def __init__(self, store: Backend) -> None:
        self.store = store
        self.redis: Any = store.redis  # bytes replies
        self._claim = store.register(scripts.CLAIM_NAME)
        self._unclaim = store.register(scripts.UNCLAIM_NAME)
        self._set_key = store.register(scripts.SET_KEY)
        self._delete = store.register(scripts.DELETE_PLAYER)
        self._record = store.register(scripts.RECORD_GAME)

    async def get(self, hashed: str) -> ProfileRecord | None:
        """The player's profile; None when no such name is claimed."""
        data = await self.redis.hgetall(profile_key(hashed, "profile"))
        return ProfileRecord.from_hash(data) if data else None

    async def claim(self, hashed: str, name: str, key_digest: str, recovery_digest: str, now_ms: int,
                    released_before_ms: int = 0) -> str | None:
        """Claim ``name`` (:data:`~server.store.scripts.CLAIM_NAME`); None when claimed now, else the name as it
        was claimed. ``released_before_ms`` (0: never): a claim last seen before it is dropped and made anew."""
        status, claimed = await self._claim(keys=profile_keys(hashed),
                                            args=[name, key_digest, recovery_digest, now_ms, released_before_ms])
        return None if status == b"new" else claimed.decode()

    async def unclaim(self, hashed: str, key_digest: str) -> bool:
        """Free a claim holding ``key_digest`` and no game (a refused join's); whether it was freed."""
        return bool(await self._unclaim(keys=[profile_key(hashed, "profile")], args=[key_digest]))

    async def set_key(self, hashed: str, checked: str, digest: str, key_digest: str, now_ms: int,
                      recovery_digest: str | None = None) -> bool:
        """A new player key (and recovery code) if field ``checked`` (``key``/``recovery``) still holds ``digest``."""
        args = [checked, digest, key_digest, now_ms] + ([recovery_digest] if recovery_digest else [])
        return bool(await self._set_key(keys=[profile_key(hashed, "profile")], args=args))

    async def delete(self, hashed: str, key_digest: str) -> bool:
        """Delete the player (claim and history) if its key is ``key_digest``; whether it was deleted."""
        return bool(await self._delete(keys=profile_keys(hashed), args=[key_digest]))

    async def record(self, hashed: str, code: str, entry: dict[str, Any], won: bool, now_ms: int, start_ms: int,
                     rivals: list[Rival], keep_games: int, keep_deals: int,
                     ghost: dict[str, Any] | None = None) -> GameOutcome | None:
        """Record a finished game (:data:`~server.store.scripts.RECORD_GAME`) from its history ``entry`` (the
        keys :class:`server.profiles.ProfileService` writes: ``variant``, ``deal``, ``time_ms``, ``moves``,
        ``foundation`` ...); None when the player is not claimed (or was claimed after ``start_ms``). A match
        recorded before answers the outcome it had then. A daily attempt (``entry["kind"]`` ``"daily"``) adds
        its day (``entry["daily"]``) to the player's days (:meth:`days`); a practice or a race adds none. ``ghost``
        (``{"match", "status", "time_ms", "moves", "foundation", "timeline"}``) becomes the deal's ghost
        (:meth:`ghost`) when it is the player's best game there."""
        day = entry["daily"] if entry.get("kind") == "daily" and entry.get("daily") else ""
        args: list[Any] = [code, json.dumps(entry, separators=(",", ":")), entry["variant"], entry["deal"],
                           int(won), entry["time_ms"], entry["moves"], entry["foundation"], now_ms, keep_games,
                           keep_deals, MAX_RIVALS, start_ms, day, MAX_DAYS,
                           json.dumps(ghost, separators=(",", ":")) if ghost is not None else "", MAX_GHOSTS]
        for rival in rivals:
            args += [rival.hashed, rival.name, rival.result, rival.since]
        reply = await self._record(keys=history_keys(hashed), args=args)
        if reply[0] == b"none":
            return None
        outcome = json.loads(reply[1])
        return GameOutcome(outcome.get("records") or [], outcome.get("rivals") or {})

    async def days(self, hashed: str) -> list[str]:
        """The UTC dates (``YYYY-MM-DD``, earliest first) on which the player ended a daily attempt (the last
        :data:`~server.store.keys.MAX_DAYS`); empty for no such player."""
        return [day.decode() for day in await self.redis.zrange(profile_key(hashed, "days"), 0, -1)]

    async def games(self, hashed: str, limit: int) -> list[dict[str, Any]]:
        """The player's last ``limit`` games, newest first (the history entries)."""
        return [json.loads(raw) for raw in await self.redis.lrange(profile_key(hashed, "games"), 0, limit - 1)]

    async def deals(self, hashed: str, limit: int) -> list[tuple[str, dict[str, Any]]]:
        """``("VARIANT|DEAL", record)`` of the player's ``limit`` most recently played deals, latest first."""
        fields = await self.redis.zrevrange(profile_key(hashed, "deal_times"), 0, limit - 1)
        if not fields:
            return []
        values = await self.redis.hmget(profile_key(hashed, "deals"), fields)
        return [(f.decode(), json.loads(v)) for f, v in zip(fields, values) if v is not None]

    async def ghost(self, hashed: str, variant: str, deal: str) -> dict[str, Any] | None:
        """The player's best kept game on ``deal`` (its label, :func:`server.history.deal_label`) in ``variant``:
        ``{"match", "status", "time_ms", "moves", "foundation", "timeline"}``; None when there is none. Raises
        ``ValueError`` for a kept value that is not JSON (damaged)."""
        raw = await self.redis.hget(profile_key(hashed, "ghosts"), f"{variant}|{deal}")
        return json.loads(raw) if raw is not None else None

    async def rivals(self, hashed: str) -> dict[str, dict[str, Any]]:
        """Every kept opponent's ``H`` -> its head-to-head (``name``, ``races``, ``wins``, ``losses``,
        ``draws``, ``last_ms``, ``since``: the opponent's ``created_ms`` then, ``v``: per variant the same four
        counts)."""
        data = await self.redis.hgetall(profile_key(hashed, "rivals"))
        return {k.decode(): json.loads(v) for k, v in data.items()}

    async def rival(self, hashed: str, other: str) -> dict[str, Any] | None:
        """The head-to-head against the opponent ``other`` (its ``H``); None when they never raced."""
        raw = await self.redis.hget(profile_key(hashed, "rivals"), other)
        return json.loads(raw) if raw is not None else None

    async def outcome(self, hashed: str, code: str) -> GameOutcome | None:
        """What recording match ``code`` answered for the player, if it was recorded (and is still kept)."""
        raw = await self.redis.hget(profile_key(hashed, "done"), code)
        if raw is None:
            return None
        outcome = json.loads(raw)
        return GameOutcome(outcome.get("records") or [], outcome.get("rivals") or {})
