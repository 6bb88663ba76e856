"""The store of groups (a board among friends): a group's keys ``{g:G}:group`` and ``{g:G}:members``, and each
member's side, ``{n:H}:groups`` (:mod:`server.store.keys`; scripts :mod:`server.store.scripts.groups`).

Each script touches the keys of one hash tag, so joining is two: the player's side first (refused past
:data:`~server.store.keys.MAX_GROUPS`), then the group's (refused past
:data:`~server.store.keys.MAX_GROUP_MEMBERS`, or for a group gone), the first undone when the second refuses.
Leaving runs the group's side first, then the player's; the last member leaving deletes the group. A player is
a member while both sides hold it: a claim released and made anew (which wipes ``{n:H}:groups``) leaves a
group's entry that :meth:`Groups.members` drops. None of these keys expires.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, NamedTuple

import msgspec

from ..names import name_key
from . import scripts
from .backend import Backend
from .keys import MAX_GROUP_MEMBERS, MAX_GROUPS, day_key, group_key, profile_key
from .records import DailyEntry


class JoinStatus(StrEnum):
    """What :meth:`Groups.join` did: ``JOINED`` (a member now), ``ALREADY`` (one before), ``NO_GROUP``,
    ``GROUP_FULL``, ``TOO_MANY_GROUPS`` (nothing changed for these three)."""

    JOINED = "joined"
    ALREADY = "already"
    NO_GROUP = "no_group"
    GROUP_FULL = "group_full"
    TOO_MANY_GROUPS = "too_many_groups"


class GroupRecord(NamedTuple):
    """A group as stored: its ``group`` id, ``name``, ``owner`` (its maker's name), ``created_ms``, and
    ``members``: each member's ``H`` -> its name (both sides holding it)."""

    group: str
    name: str
    owner: str
    created_ms: int
    members: dict[str, str]


class MemberEntry(NamedTuple):
    """A member's ended daily attempt on a day's board: ``name`` as it played, its packed ``score`` (lower ranks
    higher), its ``board_rank`` on the day's public board (1 + the attempts ranked strictly above), its entry."""

    name: str
    score: int
    board_rank: int
    entry: DailyEntry


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class Groups:
    """Groups' keys on the client of ``store`` (see the module docstring). A player is named by its ``hashed``
    name (:func:`~server.store.keys.name_hash`), a group by its id (:func:`~server.store.keys.is_group_id`:
    a text of another form raises :class:`~server.store.keys.BadKey`)."""

    def __init__(self, store: Backend) -> None:
        self.store = store
        self.redis: Any = store.redis  # bytes replies
        self._player_joins = store.register(scripts.PLAYER_JOINS)
        self._create = store.register(scripts.CREATE_GROUP)
        self._group_joins = store.register(scripts.GROUP_JOINS)
        self._group_leaves = store.register(scripts.GROUP_LEAVES)

    @staticmethod
    def _keys(group: str) -> list[str]:
        return [group_key(group, "group"), group_key(group, "members")]

    async def create(self, group: str, name: str, hashed: str, owner: str, now_ms: int) -> JoinStatus | None:
        """Make group ``group`` named ``name`` with the player ``hashed`` (named ``owner``) its first member.
        None when made; :attr:`JoinStatus.TOO_MANY_GROUPS` when the player is in as many groups as it may, and
        :attr:`JoinStatus.ALREADY` when a group of that id exists (take another id): nothing changed then."""
        mine = profile_key(hashed, "groups")
        added = _text(await self._player_joins(keys=[mine], args=[group, name, MAX_GROUPS]))
        if added == "full":
            return JoinStatus.TOO_MANY_GROUPS
        made = _text(await self._create(keys=self._keys(group), args=[name, owner, now_ms, hashed]))
        if made == "new":
            return None
        if added == "added":
            await self.redis.hdel(mine, group)
        return JoinStatus.ALREADY

    async def join(self, group: str, hashed: str, name: str) -> JoinStatus:
        """Player ``hashed`` (named ``name``) joins ``group``: the player's side, then the group's; the first
        undone when the second refuses. Joining twice answers :attr:`JoinStatus.ALREADY`, nothing doubled."""
        mine = profile_key(hashed, "groups")
        group_name = await self.redis.hget(group_key(group, "group"), "name")
        if group_name is None:
            return JoinStatus.NO_GROUP
        added = _text(await self._player_joins(keys=[mine], args=[group, group_name, MAX_GROUPS]))
        if added == "full":
            return JoinStatus.TOO_MANY_GROUPS
        status, _ = await self._group_joins(keys=self._keys(group), args=[hashed, name, MAX_GROUP_MEMBERS])
        status = _text(status)
        if status in ("added", "already"):
            return JoinStatus.ALREADY if status == "already" and added == "already" else JoinStatus.JOINED
        if added == "added":
            await self.redis.hdel(mine, group)
        return JoinStatus.NO_GROUP if status == "none" else JoinStatus.GROUP_FULL

    async def leave(self, group: str, hashed: str) -> bool:
        """Player ``hashed`` leaves ``group``: the group's side, then the player's (the last member gone, the
        group goes). Whether it was a member; leaving twice changes nothing."""
        was = bool(await self._group_leaves(keys=self._keys(group), args=[hashed]))
        await self.redis.hdel(profile_key(hashed, "groups"), group)
        return was

    async def get(self, group: str) -> GroupRecord | None:
        """The group and its members (those both sides hold: an entry only the group's side holds, left by a
        claim released and made anew, is not shown); None when there is no such group.

        A read never deletes such an entry: between its two reads the player may leave and join again, and a
        deletion then would undo a join already answered. It counts toward :data:`MAX_GROUP_MEMBERS` until the
        player joins again (the entry is the same) or the group goes."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(group_key(group, "group"))
            pipe.hgetall(group_key(group, "members"))
            data, members = await pipe.execute()
        if not data:
            return None
        fields = {_text(k): _text(v) for k, v in data.items()}
        held = {_text(k): _text(v) for k, v in members.items()}
        kept = await self._held(group, held)
        return GroupRecord(group, fields.get("name", ""), fields.get("owner", ""), int(fields.get("created_ms", 0)),
                           kept)

    async def _held(self, group: str, members: dict[str, str]) -> dict[str, str]:
        """The ``members`` whose player's side holds ``group``."""
        if not members:
            return {}
        order = list(members)
        async with self.redis.pipeline(transaction=False) as pipe:
            for hashed in order:
                pipe.hexists(profile_key(hashed, "groups"), group)
            held = await pipe.execute()
        return {hashed: members[hashed] for hashed, yes in zip(order, held) if yes}

    async def of_player(self, hashed: str) -> list[tuple[str, str]]:
        """``(G, name)`` of each group the player is in (whose group's side holds it too), by name then id."""
        data = await self.redis.hgetall(profile_key(hashed, "groups"))
        found = sorted((_text(k), _text(v)) for k, v in data.items())
        if not found:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for group, _ in found:
                pipe.hexists(group_key(group, "members"), hashed)
            held = await pipe.execute()
        return sorted(((g, n) for (g, n), yes in zip(found, held) if yes), key=lambda gn: (gn[1].casefold(), gn))

    async def rivals(self, members: list[tuple[str, str]]) -> list[tuple[int, int, dict[str, Any]]]:
        """The head-to-head of each pair of ``members`` (``(H, name)`` each, in the order the pairs are read):
        ``(i, j, record)`` with ``i < j`` and ``record`` member ``i``'s ``{n:H}:rivals`` entry for member ``j``
        (``races``, ``wins``, ``losses``, ``draws``, ``since`` ...: :meth:`server.store.profiles.Profiles.rivals`),
        kept only when ``since`` is member ``j``'s ``created_ms`` now (not a former holder of the name)."""
        if len(members) < 2:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for index, (hashed, _) in enumerate(members[:-1]):
                pipe.hmget(profile_key(hashed, "rivals"), [other for other, _ in members[index + 1:]])
            for hashed, _ in members:
                pipe.hget(profile_key(hashed, "profile"), "created_ms")
            replies = await pipe.execute()
        sides, created = replies[:len(members) - 1], replies[len(members) - 1:]
        found = []
        for i, values in enumerate(sides):
            for offset, raw in enumerate(values):
                j = i + 1 + offset
                if raw is None or created[j] is None:
                    continue
                record = msgspec.json.decode(raw)
                if record.get("since", int(created[j])) == int(created[j]) and record.get("races"):
                    found.append((i, j, record))
        return found

    async def on_board(self, date: str, variant: str, names: list[str]) -> list[MemberEntry]:
        """The ended attempts of ``names`` (members' names; a look-alike of a name finds the attempt it played, as
        :meth:`server.store.daily_store.DailyStore.place` does) on the board of ``date`` and ``variant``, best
        first (then by name). All on the day's slot."""
        if not names:
            return []
        board = day_key(date, variant, "board")
        played = await self.redis.hmget(day_key(date, variant, "names"), [name_key(n) for n in names])
        who = sorted({_text(p) for p in played if p is not None} | set(names))
        scores = await self.redis.zmscore(board, who)
        ended = [(int(score), name) for name, score in zip(who, scores) if score is not None]
        if not ended:
            return []
        ended.sort()
        async with self.redis.pipeline(transaction=False) as pipe:
            for score, _ in ended:
                pipe.zcount(board, "-inf", f"({score}")
            pipe.hmget(day_key(date, variant, "entries"), [name for _, name in ended])
            replies = await pipe.execute()
        above, entries = replies[:-1], replies[-1]
        return [MemberEntry(name, score, int(count) + 1,
                            msgspec.json.decode(raw, type=DailyEntry) if raw else DailyEntry())
                for (score, name), count, raw in zip(ended, above, entries)]
