"""A named player's history: each finished race and daily attempt kept, the records it set, the head-to-head
with the other named players of its races; and what ``GET /players/{name}`` shows of it.

A match is recorded once per named player as it is finalized, before its results frame is kept and published
(:attr:`~server.core.lifecycle.Effect.RECORD_HISTORY`), so the frame carries the records the match set and
the running head-to-head. Recording is idempotent (finalize may run twice): a match recorded before answers
what it answered then.

A history entry (``recent`` of the page) is ``{"match", "finished_ms", "date", "variant", "kind": "race" |
"daily" | "practice" (a past day's deal, :meth:`server.daily_days.DailyDays.practice`), "daily" (the day of a
daily attempt's or a practice's deal, else null), "deal", "seed", "players", "rank", "of", "status", "time_ms", "moves", "foundation", "undos",
"hints", "replay"}``. ``deal`` labels the deal: ``"seed S"`` for a race with a seed (revealed by its results),
``"daily DATE"`` for a daily attempt and a practice on that day's deal, ``"deal "`` and 12 hex digits of SHA-256 of the position of a chosen deal
without seed. A daily attempt's ``seed`` is never stored: its day's seed is secret while anyone may still play
it, and the page fills it in only once the day is revealed.

Each recorded game also offers itself as the deal's ghost (:meth:`History.ghost_of`): its progress timeline,
replayed from the move log (:func:`server.core.ghosts.timeline`), kept by the store when it is the player's best
game on the deal (:meth:`server.store.profiles.Profiles.record`).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from protocol import messages as m

from .core.daily import day_bounds, day_of
from .core.ghosts import timeline
from .core.player import PlayerStatus
from .core.streaks import Streak, StreakRule, streak_of
from .names import name_key
from .settings import Settings
from .store import MatchMeta, Store
from .store.keys import name_hash
from .store.profiles import GameOutcome, ProfileRecord, Rival

log = logging.getLogger("forty_thieves.history")

RIVALS_SHOWN = 10
"""Opponents a player's page lists (the most raced)."""


def deal_label(meta: MatchMeta) -> str:
    """The label of a match's deal in a history (see the module docstring)."""
    day = meta.day or meta.practice_day  # a practice plays a past day's deal: one's records on it are one
    if day is not None:
        return f"daily {day[0]}"
    return dealt_label(meta.seed, meta.deal)


def dealt_label(seed: str, deal: str) -> str:
    """The label of a deal dealt from ``seed`` as position text ``deal`` (no day's): ``"seed S"``, or for a
    position given as the seed (``seed`` is ``deal``, or empty) ``"deal "`` and 12 hex digits of its SHA-256."""
    if seed and seed != deal:  # a chosen position is dealt as its own text, kept as the seed
        return f"seed {seed}"
    return "deal " + hashlib.sha256(deal.encode()).hexdigest()[:12]


def _date(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d")


def _result(mine: int, theirs: int) -> str:
    return "w" if mine < theirs else "l" if mine > theirs else "d"


def _rate(wins: int, games: int) -> float:
    return round(wins / games, 4) if games else 0.0


class History:
    """Recording and reading named players' histories on ``store`` (see the module docstring); ``now_ms``: the
    shared clock (epoch ms)."""

    def __init__(self, store: Store, settings: Settings, now_ms: Callable[[], int]) -> None:
        self.store = store
        self.profiles = store.profiles
        self.settings = settings
        self.now_ms = now_ms

    # ------------------------------------------------------------ recording

    def entry(self, meta: MatchMeta, row: m.ResultRow, ranking: list[m.ResultRow], finished_ms: int) -> dict[str, Any]:
        """The history entry of ``row``'s player in the finished match ``meta`` (no seed of a daily attempt)."""
        day, practice = meta.day, meta.practice_day
        variant = meta.settings.variant
        replay = (f"/daily/{day[0]}/{variant}/replay/{quote(row.name, safe='')}" if day else
                  f"/matches/{meta.code}/replays/{quote(row.name, safe='')}")
        kind = "daily" if day else "practice" if practice else "race"
        played = day or practice
        return {"match": meta.code, "finished_ms": finished_ms, "date": _date(meta.start_at_ms or finished_ms),
                "variant": variant, "kind": kind, "daily": played[0] if played else None,
                "deal": deal_label(meta), "seed": None if day else (meta.seed or None),
                "players": [r.name for r in ranking], "rank": row.rank, "of": len(ranking), "status": row.status,
                "time_ms": row.time_ms, "moves": row.moves, "foundation": row.foundation, "undos": row.undos,
                "hints": row.hints, "replay": replay}

    async def record_match(self, meta: MatchMeta, results: m.Results,
                           finished_ms: int) -> tuple[list[m.RecordNote], list[m.Rivalry]]:
        """Record finished match ``meta`` (ranked as ``results``) for each of its named players: the records it
        set and, for each pair of its named players (a race's), their head-to-head over all their races."""
        ranking = results.ranking
        hashed = {row.name: name_hash(name_key(row.name)) for row in ranking}
        # A bot is nobody's: its row is no named player's game, even when a person claimed its name, and no
        # person's rival (a race against bots changes no head-to-head).
        created = {row.name: profile.created_ms for row in ranking
                   if not row.bot and (profile := await self.profiles.get(hashed[row.name])) is not None}
        named = [row for row in ranking if row.name in created]
        race = meta.day is None
        notes: list[m.RecordNote] = []
        outcomes: dict[str, GameOutcome] = {}
        for row in named:
            rivals = [Rival(hashed[other.name], other.name, _result(row.rank, other.rank), created[other.name])
                      for other in named if race and other.name != row.name]
            outcome = await self.profiles.record(
                hashed[row.name], meta.code, self.entry(meta, row, ranking, finished_ms), row.status == PlayerStatus.WON,
                finished_ms, meta.start_at_ms, rivals, self.settings.history_games, self.settings.history_deals,
                await self.ghost_of(meta, row))
            if outcome is None:  # deleted meanwhile, or claimed by someone else after the start
                continue
            outcomes[row.name] = outcome
            notes += [m.RecordNote(row.name, meta.settings.variant, deal, what, int(value), int(previous))
                      for what, deal, value, previous in outcome.records]
        pairs: list[m.Rivalry] = []
        for index, a in enumerate(named):
            for b in named[index + 1:]:
                side = outcomes.get(a.name, GameOutcome([], {})).rivals.get(hashed[b.name])
                if side is not None and b.name in outcomes:
                    pairs.append(m.Rivalry(a.name, b.name, side["wins"], side["losses"], side["draws"],
                                           side["races"]))
        return notes, pairs

    async def ghost_of(self, meta: MatchMeta, row: m.ResultRow) -> dict[str, Any] | None:
        """``row``'s game in finished match ``meta`` as a ghost: ``{"match", "status", "time_ms", "moves",
        "foundation", "timeline"}``; None (and logged) when its move log does not replay (a corrupt log keeps no
        ghost, and the rest of the recording goes on)."""
        commands = await self.store.players.log(meta.code, row.name)
        try:
            # A few ms for a long game (the engine's C path): once per named player at the end, never per move.
            points = timeline(meta.deal, meta.settings, commands)
        except Exception:
            log.exception("the move log of %s in match %s does not replay: no ghost kept", row.name, meta.code)
            return None
        return {"match": meta.code, "status": row.status, "time_ms": row.time_ms, "moves": row.moves,
                "foundation": row.foundation, "timeline": points}

    # ------------------------------------------------------------ reading

    async def streak(self, name: str, today: str | None = None, ended: tuple[str, ...] = ()) -> Streak:
        """The daily streak of the player named ``name`` (any look-alike) as of the UTC date ``today`` (default:
        the server's today), from the days the server holds with an ended daily attempt of it
        (:func:`server.core.streaks.streak_of`, under ``FTR_FREEZE_EVERY_DAYS`` and ``FTR_FREEZES_MAX``);
        ``(0, 0, 0)`` for a name not claimed or never played. ``ended``: days known to have one besides (a
        board's entry is one: the board is written just before the player's history), counted only for a name
        still claimed (a board keeps the entries of a deleted player)."""
        hashed = name_hash(name_key(name))
        days = await self.profiles.days(hashed)
        if ended and await self.profiles.get(hashed) is not None:
            days += ended
        rule = StreakRule(self.settings.freeze_every_days, self.settings.freezes_max)
        return streak_of(days, today or day_of(self.now_ms()), rule)

    async def _revealed_seed(self, date: str, variant: str, seen: dict[tuple[str, str], str | None]) -> str | None:
        """The seed of a daily challenge once it is revealed (the day over, every attempt ended), else None."""
        if (date, variant) not in seen:
            deal = await self.store.daily.deal(date, variant)
            revealed = deal is not None and deal.closed and self.now_ms() >= day_bounds(date)[1]
            seen[(date, variant)] = deal.seed if revealed and deal is not None else None
        return seen[(date, variant)]

    async def recent(self, hashed: str, limit: int) -> list[dict[str, Any]]:
        """The last ``limit`` games of a player, newest first; a daily attempt's seed filled in once revealed."""
        games = await self.profiles.games(hashed, limit)
        seen: dict[tuple[str, str], str | None] = {}
        for game in games:
            if game.get("kind") == "daily" and game.get("daily"):
                game["seed"] = await self._revealed_seed(game["daily"], game["variant"], seen)
        return games

    async def page(self, hashed: str, record: ProfileRecord, limit: int) -> dict[str, Any]:
        """``GET /players/{name}``: ``{"name", "games", "wins", "win_rate", "created_ms", "records", "recent",
        "head_to_head", "variants", "streak", "best_streak", "freezes"}`` (see protocol/README.md)."""
        records = [{"variant": field.partition("|")[0], "deal": field.partition("|")[2],
                    "games": one.get("games", 0), "wins": one.get("wins", 0),
                    "best_time_ms": one.get("best_ms", -1), "best_time_match": one.get("best_match", ""),
                    "fewest_moves": one.get("fewest", -1), "fewest_moves_match": one.get("fewest_match", ""),
                    "last_ms": one.get("last_ms", 0)}
                   for field, one in await self.profiles.deals(hashed, limit)]
        rivals = sorted((await self.profiles.rivals(hashed)).items(),
                        key=lambda item: (-item[1].get("races", 0), -item[1].get("last_ms", 0)))
        head_to_head: list[dict[str, Any]] = []
        for other, r in rivals:
            if len(head_to_head) == RIVALS_SHOWN:
                break
            if await self._same_opponent(other, r):
                head_to_head.append({"name": r["name"], "races": r["races"], "wins": r["wins"],
                                     "losses": r["losses"], "draws": r["draws"], "by_variant": r.get("v") or {}})
        variants = {variant: {"games": one["games"], "wins": one["wins"], "win_rate": _rate(one["wins"], one["games"]),
                              "best_time_ms": one["best_ms"], "best_time_match": one["best_match"],
                              "most_foundation": one["cards"]}
                    for variant, one in sorted(record.variants.items())}
        streak = streak_of(await self.profiles.days(hashed), day_of(self.now_ms()),
                           StreakRule(self.settings.freeze_every_days, self.settings.freezes_max))
        return {"name": record.name, "games": record.games, "wins": record.wins, **streak._asdict(),
                "win_rate": _rate(record.wins, record.games), "created_ms": record.created_ms, "records": records,
                "recent": await self.recent(hashed, limit), "head_to_head": head_to_head, "variants": variants}

    async def _same_opponent(self, other: str, rival: dict[str, Any]) -> bool:
        """Whether the head-to-head ``rival`` against ``other`` (its ``H``) is against the name's holder now,
        not one who deleted the name (or had it released) before it was claimed again."""
        if "since" not in rival:
            return True
        profile = await self.profiles.get(other)
        return profile is not None and profile.created_ms == rival["since"]

    async def versus(self, a: tuple[str, ProfileRecord], b: tuple[str, ProfileRecord]) -> dict[str, Any]:
        """``GET /players/{a}/versus/{b}``: ``{"a", "b", "races", "a_wins", "b_wins", "draws", "by_variant":
        {V: {"races", "a_wins", "b_wins", "draws"}}}`` over every race the two were both in."""
        side = await self.profiles.rival(a[0], b[0])
        if side is None or side.get("since", b[1].created_ms) != b[1].created_ms:
            side = {}  # never raced, or raced the name's former holder
        by_variant = {variant: {"races": v["races"], "a_wins": v["wins"], "b_wins": v["losses"], "draws": v["draws"]}
                      for variant, v in sorted((side.get("v") or {}).items())}
        return {"a": a[1].name, "b": b[1].name, "races": side.get("races", 0), "a_wins": side.get("wins", 0),
                "b_wins": side.get("losses", 0), "draws": side.get("draws", 0), "by_variant": by_variant}


__all__ = ["History", "deal_label", "dealt_label"]
