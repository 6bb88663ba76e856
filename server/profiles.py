"""Named players: a name of one's own with no sign-up, kept by a secret player key.

The first use of a free name on a server (a race's ``join``, a daily attempt, ``POST /players``) claims it:
the client receives a random **player key** (``secrets.token_urlsafe(24)``) and a **recovery code** (four
groups of four characters of :data:`RECOVERY_ALPHABET`, shown once). Both are stored as their SHA-256 only and
compared with :func:`secrets.compare_digest`; neither is ever logged. Names that look alike
(:func:`server.names.name_key`) are one player: "BiII" cannot be claimed, nor sit, beside "Bill".

A name claimed before named players existed, by the daily challenge (``daily:names``), keeps working: its
daily token becomes its player key the first time it is used, and the answer then carries a recovery code.

The history of each player's finished games, its records and head-to-head are :mod:`server.history`'s; the
Redis keys and scripts the store's (:class:`server.store.profiles.Profiles`).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any, NamedTuple

from aiolimiter import AsyncLimiter

from .connection_limits import over_limit
from .core.errors import ServiceError
from .history import History
from .names import name_key, name_problem
from .settings import Settings
from .store import Store, token_hash
from .store.keys import name_hash
from .store.profiles import ProfileRecord

RECOVERY_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
"""The recovery code's characters: capitals and digits with none that reads as another (no 0/O, 1/I/L)."""

DAY_MS = 86_400_000
class ProfileError(ServiceError):
    """A refusal of a named player's request: HTTP ``status``, a stable ``code`` and a readable ``message``
    (the WebSocket sends ``code`` and ``message`` as an ``error`` frame)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(code, message)
        self.status = status


class Entered(NamedTuple):
    """A name a join or daily attempt may use: ``name`` as claimed, its ``hashed`` key name, and, when this call
    claimed it (or took over its daily token), the new ``player_key`` and ``recovery_code`` (else ``""``)."""

    name: str
    hashed: str
    player_key: str = ""
    recovery_code: str = ""
    key_digest: str = ""


def new_recovery_code() -> str:
    """``ABCD-EFGH-JKMN-PQRS``: 16 random characters of :data:`RECOVERY_ALPHABET` (about 79 bits)."""
    return "-".join("".join(secrets.choice(RECOVERY_ALPHABET) for _ in range(4)) for _ in range(4))


def recovery_digest(code: str) -> str:
    """The stored form of a recovery code as typed: capitals, dashes and spaces dropped, then its SHA-256."""
    return token_hash("".join(c for c in code.upper() if c not in "- "))


def taken(name: str, claimed: str) -> ProfileError:
    """409 ``name_taken``: ``name`` looks like the claimed name ``claimed``."""
    if claimed == name:
        return ProfileError(409, "name_taken", f"the name {name!r} is claimed on this server: pick another")
    return ProfileError(409, "name_taken", f"the name {name!r} looks like {claimed!r}, which is claimed on this "
                                           "server: write that one exactly, or pick another")


def wrong_key(name: str) -> ProfileError:
    """403 ``bad_token``: the claimed name's key is missing or wrong."""
    return ProfileError(403, "bad_token", f"the name {name!r} is claimed: its player key is missing or wrong")


def no_player(name: str) -> ProfileError:
    return ProfileError(404, "no_player", f"no named player {name[:24]!r} on this server")


class ProfileService:
    """Claims, keys and recovery of named players on ``store`` (see the module docstring). ``now_ms``: the
    shared clock (epoch ms)."""

    def __init__(self, store: Store, settings: Settings, now_ms: Callable[[], int]) -> None:
        self.store = store
        self.profiles = store.profiles
        self.settings = settings
        self.now_ms = now_ms
        self.history = History(store, settings, now_ms)
        """Each player's finished games, records and head-to-head (:mod:`server.history`)."""
        self._limiters: dict[str, AsyncLimiter] = {}

    # ------------------------------------------------------------ claims

    def _released_before(self) -> int:
        days = self.settings.name_release_days
        return self.now_ms() - days * DAY_MS if days else 0

    async def may_claim(self, address: str) -> None:
        """Spend one of ``address``'s claims of the hour (``FTR_NAMES_PER_HOUR``, token bucket; a group's
        making spends one too); raises 429 ``rate_limited`` when none is left."""
        per_hour = self.settings.names_per_hour
        if over_limit(self._limiters, address, per_hour, 3600):
            raise ProfileError(429, "rate_limited", f"this address has claimed {per_hour} names in the last hour: "
                                                    "wait, or use a name it claimed")

    async def _new_claim(self, name: str, hashed: str, address: str, key: str | None = None) -> Entered | None:
        """Claim ``name`` now (with ``key``, a legacy daily token, or a new key); None when it is claimed."""
        player_key = key or secrets.token_urlsafe(24)
        code = new_recovery_code()
        if key is None:
            await self.may_claim(address)
        claimed = await self.profiles.claim(hashed, name, token_hash(player_key), recovery_digest(code),
                                            self.now_ms(), self._released_before())
        if claimed is not None:
            return None
        return Entered(name, hashed, "" if key else player_key, code, token_hash(player_key))

    async def claim(self, name: str, address: str) -> Entered:
        """``POST /players``: claim a free name. Raises :class:`ProfileError` 400 ``malformed``, 409
        ``name_taken`` (it or a look-alike is claimed, here or by the daily challenge), 429 ``rate_limited``."""
        hashed = self._hashed(name)
        legacy = await self.store.daily.name_claim(name)
        if legacy is not None:
            raise taken(name, legacy.name)
        entered = await self._new_claim(name, hashed, address)
        if entered is None:
            record = await self.profiles.get(hashed)
            raise taken(name, record.name if record else name)
        return entered

    async def enter(self, name: str, key: str | None, address: str) -> Entered:
        """The name a race's join or a daily attempt plays under: claimed now when free (the answer carries the
        new key and recovery code), else checked against ``key``. Nothing changes when it raises
        :class:`ProfileError`: 400 ``malformed``, 409 ``name_taken`` (a look-alike of a claimed name, written
        otherwise), 403 ``bad_token`` (the key is missing or wrong), 429 ``rate_limited`` (a claim past
        ``FTR_NAMES_PER_HOUR``)."""
        hashed = self._hashed(name)
        for _ in range(3):  # a claim lost to a concurrent one is checked as a claimed name
            record = await self.profiles.get(hashed)
            released = record is not None and bool(self.settings.name_release_days) and (
                record.seen_ms < self._released_before())
            if record is not None and not released:
                return self._checked(name, hashed, record, key)
            legacy = None if record else await self.store.daily.name_claim(name)
            if legacy is not None:  # a daily name from before: its daily token becomes its player key
                if legacy.name != name:
                    raise taken(name, legacy.name)
                if not key or not secrets.compare_digest(legacy.digest, token_hash(key)):
                    raise wrong_key(name)
                entered = await self._new_claim(name, hashed, address, key)
            else:
                entered = await self._new_claim(name, hashed, address)
            if entered is not None:
                return entered
        raise wrong_key(name)

    def _checked(self, name: str, hashed: str, record: ProfileRecord, key: str | None) -> Entered:
        if record.name != name:  # one player, one spelling
            raise taken(name, record.name)
        if not key or not secrets.compare_digest(record.key, token_hash(key)):
            raise wrong_key(name)
        return Entered(record.name, hashed, key_digest=record.key)

    async def release(self, entered: Entered) -> None:
        """Free the claim ``entered`` made when what it was for was refused (its key never reached anyone);
        nothing for a name claimed before."""
        if entered.player_key:
            await self.profiles.unclaim(entered.hashed, entered.key_digest)

    def _hashed(self, name: str) -> str:
        problem = name_problem(name) if isinstance(name, str) else "a display name is a string"
        if problem is not None:  # the rule of race names and daily names (server/names.py)
            raise ProfileError(400, "malformed", problem)
        return name_hash(name_key(name))

    # ------------------------------------------------------------ reading

    async def page(self, name: str, limit: int, key: str | None = None) -> dict[str, Any]:
        """``GET /players/{name}`` (any look-alike of the name): the player's page as JSON
        (:meth:`server.history.History.page`); with the player's ``key`` also ``"groups"``: ``[{"group",
        "name"}]`` of each group it is in (a group's id is its invitation: shown to its members only). 404
        ``no_player``, 403 ``bad_token`` for a key that is not the player's."""
        hashed, record = await (self.find(name) if key is None else self.owned(name, key))
        page = await self.history.page(hashed, record, limit)
        if key is not None:
            page["groups"] = [{"group": group, "name": group_name}
                              for group, group_name in await self.store.groups.of_player(hashed)]
        return page

    async def versus(self, name: str, other: str) -> dict[str, Any]:
        """``GET /players/{name}/versus/{other}``: the two players' head-to-head; 404 ``no_player`` for either,
        400 ``malformed`` for one player twice."""
        a, b = await self.find(name), await self.find(other)
        if a[0] == b[0]:
            raise ProfileError(400, "malformed", f"{name[:24]!r} and {other[:24]!r} are one player")
        return await self.history.versus(a, b)

    # ------------------------------------------------------------ the key holder's requests

    async def find(self, name: str) -> tuple[str, ProfileRecord]:
        """``(hashed, profile)`` of the player ``name`` or a look-alike; 404 ``no_player`` when none (a name that
        could never be claimed included)."""
        if not isinstance(name, str) or not 0 < len(name) <= 64 or not name_key(name):
            raise no_player(str(name))
        hashed = name_hash(name_key(name))
        record = await self.profiles.get(hashed)
        if record is None:
            raise no_player(name)
        return hashed, record

    async def owned(self, name: str, key: str | None) -> tuple[str, ProfileRecord]:
        """``(hashed, profile)`` of the player ``name`` (or a look-alike) when ``key`` is its player key; 404
        ``no_player``, 403 ``bad_token``."""
        hashed, record = await self.find(name)
        if not key or not secrets.compare_digest(record.key, token_hash(key)):
            raise wrong_key(record.name)
        return hashed, record

    async def rotate(self, name: str, key: str | None) -> str:
        """``POST /players/{name}/key``: a new player key for the holder of ``key`` (the old one stops working).
        Raises 404 ``no_player``, 403 ``bad_token``."""
        hashed, record = await self.owned(name, key)
        new_key = secrets.token_urlsafe(24)
        if not await self.profiles.set_key(hashed, "key", record.key, token_hash(new_key), self.now_ms()):
            raise wrong_key(record.name)  # rotated (or deleted) meanwhile by another request
        return new_key

    async def recover(self, name: str, code: str | None) -> tuple[str, str]:
        """``POST /players/{name}/recover``: ``(player key, recovery code)``, both new, for the holder of the
        recovery code ``code``; the old key and code stop working. Raises 404 ``no_player``, 403 ``bad_token``."""
        hashed, record = await self.find(name)
        if not code or not secrets.compare_digest(record.recovery, recovery_digest(code)):
            raise ProfileError(403, "bad_token", f"that is not the recovery code of {record.name!r}")
        new_key, new_code = secrets.token_urlsafe(24), new_recovery_code()
        if not await self.profiles.set_key(hashed, "recovery", record.recovery, token_hash(new_key), self.now_ms(),
                                           recovery_digest(new_code)):
            raise ProfileError(403, "bad_token", f"that is not the recovery code of {record.name!r}")
        return new_key, new_code

    async def delete(self, name: str, key: str | None) -> None:
        """``DELETE /players/{name}``: the claim and the whole history go (the daily challenge's old claim of the
        name too); the name is free again. The player leaves each of its groups first. Raises 404
        ``no_player``, 403 ``bad_token``."""
        hashed, record = await self.owned(name, key)
        for group, _ in await self.store.groups.of_player(hashed):
            await self.store.groups.leave(group, hashed)
        if not await self.profiles.delete(hashed, record.key):
            raise wrong_key(record.name)
        await self.store.daily.drop_name_claim(record.name)


__all__ = ["RECOVERY_ALPHABET", "Entered", "ProfileError", "ProfileService", "new_recovery_code",
           "recovery_digest"]
