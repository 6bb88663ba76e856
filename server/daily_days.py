"""The daily challenge's days as a habit: a name's place on a day's board, a day's page (the archive), and
practice on a past day's deal (on no board), racing one of that day's attempts as a ghost if asked.

Part of the daily challenge's service (:class:`server.daily.DailyService`, which holds one as ``days``); the
share line and the place line are :mod:`server.core.daily`'s.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, Any, Literal, Protocol
from urllib.parse import quote

import msgspec

from protocol import messages as m
from protocol.codec import encode

from .core.daily import beat_share, day_of, next_day, place_line, previous_day, share_line
from .core.errors import DailyError
from .core.ghosts import ghost_label, timeline
from .match.daily_link import DailyMatches, attempt_settings
from .names import name_problem
from .profiles import Entered, ProfileService
from .store import DailyEntry, DailyStore, DayDeal

log = logging.getLogger(__name__)

ARCHIVE_ENTRIES = 20
"""The board's entries a day's page (``GET /daily/{date}``) shows per variant (the rest: the leaderboard's pages)."""


class NamedAttempt(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``{"name": NAME}`` as a practice's ``ghost``: NAME's ended attempt of that day (any look-alike of the
    name finds it, as the board's ``?name=`` does)."""

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=m.MAX_NAME)]


DayGhost = Literal["top"] | NamedAttempt
"""A practice's ``ghost``: ``"top"`` (the day's first-ranked attempt on its final board) or a
:class:`NamedAttempt`."""


class DailyDeals(Protocol):
    """What :class:`DailyDays` reads of the daily challenge's service (:class:`server.daily.DailyService`)."""

    store: DailyStore
    matches: DailyMatches
    variants: tuple[str, ...]
    now_ms: Callable[[], int]
    profiles: ProfileService
    """The named players (a practice is played under one)."""

    async def enter(self, name: str, key: str | None, address: str) -> Entered:
        """The named player a practice is played as (:class:`DailyError` when refused)."""

    def date_of(self, text: str) -> str:
        """A requested date (:class:`DailyError` 400 ``malformed``, 404 ``no_day`` after today)."""

    async def deal_of_day(self, date: str, variant: str) -> DayDeal:
        """The day's deal record (prepared now if it was not)."""

    async def known_day(self, date_text: str, variant_text: str) -> tuple[str, str, DayDeal]:
        """``(date, variant, deal record)`` of a day with a challenge; :class:`DailyError` otherwise."""

    def revealed(self, date: str, record: DayDeal) -> bool:
        """Whether the day is over and revealed (every attempt ended)."""


def board_row(rank: int, name: str, entry: DailyEntry) -> dict[str, Any]:
    """An ended attempt as a leaderboard lists it: ``{"rank", "name", "status", "time_ms", "moves",
    "foundation", "undos", "hints"}``."""
    return {"rank": rank, "name": name, "status": entry.status, "time_ms": entry.time_ms, "moves": entry.moves,
            "foundation": entry.foundation, "undos": entry.undos, "hints": entry.hints}


async def day_ghost(store: DailyStore, date: str, variant: str, deal: str, wanted: DayGhost) -> m.Ghost:
    """The ghost frame of an ended attempt of the revealed ``date``'s ``variant`` daily (its ``deal``, position
    text): ``wanted`` says which (:data:`DayGhost`). Its timeline is replayed from the attempt's move log, kept
    with the day (the record ``GET /daily/{date}/{variant}/replay/{name}`` answers), under the settings the
    attempt was played with; its figures are the board entry's. Raises :class:`DailyError` 404 ``no_ghost``
    when the day has no such attempt (or its log does not replay)."""
    if wanted == "top":
        rows = await store.board(date, variant, 0, 1)
        if not rows:
            raise DailyError(404, "no_ghost", f"no attempt ended on the {variant} daily of {date}: no ghost to race")
        _, name, entry = rows[0]
    else:
        place = await store.place(date, variant, wanted.name)
        if place is None:
            raise DailyError(404, "no_ghost", f"{wanted.name!r} has no ended {variant} attempt on {date} to race "
                                              "as a ghost")
        name, entry = place.name, place.entry
    replay = await store.replay(date, variant, name)
    if replay is None:
        raise DailyError(404, "no_ghost", f"the attempt of {name!r} on {date} has no game kept to race as a ghost")
    try:  # a few ms for a long game (the engine's C path), once per practice asked
        points = timeline(deal, attempt_settings(variant), zip(replay.moves, replay.times_ms))
    except Exception:
        log.exception("the daily attempt of %s on %s %s does not replay: no ghost", name, date, variant)
        raise DailyError(404, "no_ghost", f"the attempt of {name!r} on {date} does not replay: no ghost to race") \
            from None
    return m.Ghost(name, ghost_label(name, daily=True), entry.time_ms, entry.moves, entry.foundation, entry.status,
                   points)


class DailyDays:
    """A name's place, a day's page and practice, over the daily challenge's ``service``."""

    def __init__(self, service: DailyDeals) -> None:
        self.service = service

    async def entry(self, date: str, variant: str, name: str, final: bool, base_url: str) -> dict[str, Any] | None:
        """The place of ``name``'s ended attempt on the board of ``date`` (a look-alike of the name finds it):
        ``{"name" (as it played), "rank", "total", "below" (other attempts ranked strictly lower), "beat_share"
        (0..1: ``below`` of the other ended attempts), "status", "time_ms", "moves", "foundation", "undos",
        "hints", "place" (the line the clients show), "share" (the spoiler-free line to share, then the day's
        page on the next line), "streak", "best_streak", "freezes" (the name's daily streak as of ``date``:
        :meth:`server.history.History.streak`; the share line says ``streak N`` from 1 on)}``; None when the name has no ended attempt that day."""
        place = await self.service.store.place(date, variant, name)
        if place is None:
            return None
        e = place.entry
        streak = await self.service.profiles.history.streak(place.name, date, (date,))
        line = share_line(date, variant, e.status, e.time_ms, e.moves, e.foundation, place.rank, place.total,
                          streak.streak or None)
        return {"name": place.name, "rank": place.rank, "total": place.total, "below": place.below,
                **streak._asdict(),
                "beat_share": beat_share(place.below, place.total), "status": e.status, "time_ms": e.time_ms,
                "moves": e.moves, "foundation": e.foundation, "undos": e.undos, "hints": e.hints,
                "place": place_line(place.rank, place.total, place.below, date if final else None),
                "share": f"{line}\n{base_url}/daily/{date}"}

    async def archive(self, date_text: str, first: int = ARCHIVE_ENTRIES) -> dict[str, Any]:
        """``GET /daily/{date}`` (JSON): the day's page. ``{"date", "today" (bool: the day is still going),
        "previous", "next" (the dates around it: ``next`` null after today), "variants": [{"variant", "final",
        "total", "commitment", "entries" (the board's ``first`` entries), and once revealed "seed",
        "attempt_index", "deal", each entry's "replay" path}]}``. Nothing of the deal before the reveal. A
        variant that had no challenge that day is left out; raises :class:`DailyError` 400 ``malformed``, 404
        ``no_day`` (after today, or no variant had a challenge that day)."""
        date = self.service.date_of(date_text)
        today = day_of(self.service.now_ms())
        variants = []
        for variant in self.service.variants:
            record = await self.service.store.deal(date, variant)
            if record is None and date == today:
                record = await self.service.deal_of_day(date, variant)
            if record is None:
                continue
            _, total = await self.service.store.counts(date, variant)
            final = self.service.revealed(date, record)
            rows = await self.service.store.board(date, variant, 0, first)
            entries = []
            for rank, name, e in rows:
                row = board_row(rank, name, e)
                if final:
                    row["replay"] = f"/daily/{date}/{quote(variant, safe='')}/replay/{quote(name, safe='')}"
                entries.append(row)
            shown: dict[str, Any] = {"variant": variant, "final": final, "total": total,
                                     "commitment": record.commitment, "entries": entries}
            if final:  # the reveal: never before the day is over and every attempt has ended
                shown.update(seed=record.seed, attempt_index=record.attempt_index, deal=record.deal)
            variants.append(shown)
        if not variants:
            raise DailyError(404, "no_day", f"there was no daily challenge on {date}")
        return {"date": date, "today": date == today, "previous": previous_day(date),
                "next": next_day(date) if date < today else None, "variants": variants}

    async def practice(self, date_text: str, variant_text: str, name: str, key: str | None = None,
                       address: str = "?", ghost: DayGhost | None = None) -> dict[str, Any]:
        """``POST /daily/{date}/{variant}/practice``: a one-player match on a revealed day's deal, to play any
        number of times; on no board, changing no entry (its match meta says ``practice``, so the match
        service's hook that records attempts skips it). With ``ghost`` it races that attempt of the day as a
        ghost (:func:`day_ghost`: its ``ghost`` frame after ``started``). Returns ``{"date", "variant", "name", "match",
        "player_token", "commitment", "seed", "practice": true}``, plus ``"player_key"`` and ``"recovery_code"``
        when this call claimed the name. ``name`` is a named player's, as for an attempt
        (:meth:`server.profiles.ProfileService.enter`): a claimed name needs its ``key``, a free one is claimed
        now. Raises :class:`DailyError`: 400 ``malformed``, 403 ``bad_token`` (claimed, key missing or wrong),
        404 ``no_variant`` / ``no_day``, 409 ``name_taken`` (a look-alike of a claimed name), 409
        ``not_revealed`` (today, or a day not closed yet), 429 ``rate_limited`` (claims of ``address`` past
        ``FTR_NAMES_PER_HOUR``), 404 ``no_ghost`` (no such attempt to race; nothing is created or claimed then)."""
        date, variant, record = await self.service.known_day(date_text, variant_text)
        problem = name_problem(name) if isinstance(name, str) else "a display name is a string"
        if problem is not None:
            raise DailyError(400, "malformed", problem)
        if not self.service.revealed(date, record):
            raise DailyError(409, "not_revealed", f"the {variant} deal of {date} can be practised once the day is "
                                                  "over and revealed: play today's attempt instead")
        raced = b""  # found before the name is entered: a refusal claims nothing
        if ghost is not None:
            raced = encode(await day_ghost(self.service.store, date, variant, record.deal, ghost))
        entered = await self.service.enter(name, key, address)
        try:
            code = await self.service.matches.create_practice((date, variant), name, record.seed, record.deal,
                                                              record.commitment, raced)
            token = await self.service.matches.issue_token(code, name)
        except BaseException:
            await self.service.profiles.release(entered)  # claimed by this call, but its key never reaches anyone
            raise
        result = {"date": date, "variant": variant, "name": name, "match": code, "player_token": token,
                  "commitment": record.commitment, "seed": record.seed, "practice": True}
        if entered.player_key:
            result["player_key"] = entered.player_key
        if entered.recovery_code:
            result["recovery_code"] = entered.recovery_code
        return result


__all__ = ["ARCHIVE_ENTRIES", "DailyDays", "DailyDeals", "DayGhost", "NamedAttempt", "board_row", "day_ghost"]
