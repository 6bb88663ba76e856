"""Groups: a board among friends. A named player makes a group; whoever holds its link (the group's id is the
invitation: unguessable, listed nowhere public but on the group's own page) joins it under a named player;
each day's board of the group is the day's ended attempts of its members, ranked among themselves, beside
their places on the public board; the head-to-head table is its members' races against each other.

A group's board is made of what the public board shows (:func:`server.daily_days.board_row`), so nothing of
the deal reaches a group before the day is over. The keys and the two-sided joins are
:class:`server.store.groups.Groups`'; the routes :mod:`server.groups_web`.
"""

from __future__ import annotations

from typing import Any

from .core.daily import day_of
from .daily import DailyService
from .daily_days import board_row
from .names import name_problem
from .profiles import ProfileError, ProfileService
from .store.groups import GroupRecord, JoinStatus
from .store.keys import MAX_GROUP_MEMBERS, MAX_GROUPS, is_group_id, new_group_id

MAX_GROUP_NAME = 40
"""The most characters of a group's name (the rule of display names otherwise: :func:`server.names.name_problem`;
group names need not be unique)."""


def _by_name(name: str) -> tuple[str, str]:
    return name.casefold(), name


def no_group(group: str) -> ProfileError:
    """404 ``no_group``: no group of that id (or a text that is no group id)."""
    return ProfileError(404, "no_group", f"no group {group[:20]!r} on this server: check the link")


class GroupService:
    """Groups of the named players of ``profiles`` (their keys checked there), with the daily challenge
    ``daily`` (None: a server without one; a group then has no board)."""

    def __init__(self, profiles: ProfileService, daily: DailyService | None) -> None:
        self.profiles = profiles
        self.groups = profiles.store.groups
        self.daily = daily

    @staticmethod
    def group_id(text: str) -> str:
        """A group's id as a client wrote it (any case); 404 ``no_group`` for a text that is none."""
        group = text.lower() if isinstance(text, str) else ""
        if not is_group_id(group):
            raise no_group(str(text))
        return group

    async def create(self, name: str, player: str, key: str | None, address: str, base_url: str) -> dict[str, Any]:
        """``POST /groups``: the player ``player`` (holding ``key``) makes a group named ``name``, and is its first
        member. Returns ``{"group", "name", "join_url", "page_url"}`` (``base_url``: the server's public address).
        Raises :class:`~server.profiles.ProfileError`: 400 ``malformed`` (the name), 404 ``no_player``, 403
        ``bad_token``, 429 ``rate_limited`` (makings of ``address`` past ``FTR_NAMES_PER_HOUR``, the bucket of
        name claims), 409 ``too_many_groups``. Nothing changes when it raises."""
        problem = name_problem(name, MAX_GROUP_NAME) if isinstance(name, str) else "a group's name is a string"
        if problem is not None:
            raise ProfileError(400, "malformed", problem.replace("a display name", "a group's name"))
        hashed, record = await self.profiles.owned(player, key)
        await self.profiles.may_claim(address)
        for _ in range(5):  # an id taken already: another (at about 50 bits, never twice)
            group = new_group_id()
            refused = await self.groups.create(group, name, hashed, record.name, self.profiles.now_ms())
            if refused is None:
                return {"group": group, "name": name, **self._urls(group, base_url)}
            if refused is JoinStatus.TOO_MANY_GROUPS:
                raise self._too_many(record.name)
        raise ProfileError(503, "internal", "no free group id was found: try again")

    @staticmethod
    def _urls(group: str, base_url: str) -> dict[str, str]:
        return {"join_url": f"{base_url}/groups/{group}/join", "page_url": f"{base_url}/groups/{group}"}

    @staticmethod
    def _too_many(name: str) -> ProfileError:
        return ProfileError(409, "too_many_groups", f"{name!r} is in {MAX_GROUPS} groups, the most a player may "
                                                    "be in: leave one first")

    async def _record(self, group: str) -> GroupRecord:
        record = await self.groups.get(group)
        if record is None:
            raise no_group(group)
        return record

    async def show(self, group_text: str, base_url: str) -> dict[str, Any]:
        """``GET /groups/{group}``: ``{"group", "name", "owner", "created_ms", "members" (names, by name),
        "join_url", "page_url", "head_to_head": [{"a", "b", "races", "a_wins", "b_wins", "draws"}] (each pair of
        members who raced, most races first; ``a`` before ``b`` by name), "today" (the server's UTC date),
        "variants" (the daily's)}``. 404 ``no_group``."""
        group = self.group_id(group_text)
        return await self._shown(await self._record(group), base_url)

    async def _shown(self, record: GroupRecord, base_url: str) -> dict[str, Any]:
        members = sorted(record.members.items(), key=lambda item: _by_name(item[1]))
        table = []
        for i, j, side in await self.groups.rivals(members):
            table.append({"a": members[i][1], "b": members[j][1], "races": side["races"], "a_wins": side["wins"],
                          "b_wins": side["losses"], "draws": side["draws"]})
        table.sort(key=lambda row: (-row["races"], _by_name(row["a"]), _by_name(row["b"])))
        return {"group": record.group, "name": record.name, "owner": record.owner, "created_ms": record.created_ms,
                "members": [name for _, name in members], **self._urls(record.group, base_url),
                "head_to_head": table, "today": day_of(self.profiles.now_ms()),
                "variants": list(self.daily.variants) if self.daily is not None else []}

    async def join(self, group_text: str, player: str, key: str | None, base_url: str) -> dict[str, Any]:
        """``POST /groups/{group}/members``: the player ``player`` (holding ``key``) joins; joining again changes
        nothing. Returns the group as :meth:`show` does. Raises :class:`~server.profiles.ProfileError`: 404
        ``no_group`` / ``no_player``, 403 ``bad_token``, 409 ``group_full`` (:data:`MAX_GROUP_MEMBERS`
        members), 409 ``too_many_groups``."""
        group = self.group_id(group_text)
        hashed, record = await self.profiles.owned(player, key)
        status = await self.groups.join(group, hashed, record.name)
        if status is JoinStatus.NO_GROUP:
            raise no_group(group)
        if status is JoinStatus.TOO_MANY_GROUPS:
            raise self._too_many(record.name)
        if status is JoinStatus.GROUP_FULL:
            raise ProfileError(409, "group_full", f"the group has {MAX_GROUP_MEMBERS} members, the most it may hold")
        return await self.show(group, base_url)

    async def leave(self, group_text: str, player: str, key: str | None) -> None:
        """``DELETE /groups/{group}/members/{player}``: the player (holding ``key``) leaves; not a member (or the
        group gone): nothing changes, and no error. Raises :class:`~server.profiles.ProfileError` 404
        ``no_group`` (a text that is no group id), 404 ``no_player``, 403 ``bad_token``."""
        group = self.group_id(group_text)
        hashed, _ = await self.profiles.owned(player, key)
        await self.groups.leave(group, hashed)

    async def board(self, group_text: str, date_text: str, variant_text: str) -> dict[str, Any]:
        """``GET /groups/{group}/daily/{date}/{variant}``: ``{"group", "name", "date", "variant", "final",
        "total" (members with an ended attempt), "entries"}``: the members' ended attempts ranked among
        themselves, each row :func:`~server.daily_days.board_row`'s with ``rank`` in the group and
        ``board_rank`` on the day's public board. ``final`` as the day's archive says it. Raises
        :class:`~server.profiles.ProfileError` 404 ``no_group`` / ``no_daily``, :class:`~server.core.errors.DailyError` 400
        ``malformed``, 404 ``no_day`` / ``no_variant``."""
        group = self.group_id(group_text)
        record = await self._record(group)
        if self.daily is None:
            raise ProfileError(404, "no_daily", "this server runs no daily challenge (FTR_DAILY_VARIANTS is empty)")
        date, variant, deal = await self.daily.known_day(date_text, variant_text)
        found = await self.groups.on_board(date, variant, list(record.members.values()))
        entries: list[dict[str, Any]] = []
        for index, one in enumerate(found):
            rank = index + 1 if index == 0 or one.score != found[index - 1].score else entries[-1]["rank"]
            entries.append({**board_row(rank, one.name, one.entry), "board_rank": one.board_rank})
        return {"group": group, "name": record.name, "date": date, "variant": variant,
                "final": self.daily.revealed(date, deal), "total": len(entries), "entries": entries}


__all__ = ["MAX_GROUP_NAME", "GroupService", "no_group"]
