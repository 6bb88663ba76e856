"""The daily challenge's pure rules: UTC days, the seed of a day, its commitment, the leaderboard score.

No I/O and no clock: an instant comes in as ``now_ms`` (Unix epoch milliseconds), a day as its UTC date
``YYYY-MM-DD``. The service that runs the challenge is :mod:`server.daily`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import re

from ..engine import deal, find_variant
from ..engine.solver import Budget, solve
from .player import PlayerStatus
from .ranking import Standing

DAY_MS = 86_400_000
DAILY_NODES = 5_000
"""Solver node budget per attempt index (a node budget, not seconds: every process finds the same index)."""
MAX_INDEX = 2_000
"""Attempt indexes tried before giving up on a day."""

# Score layout (DESIGN.md "Ranking"), lower is better, all under 2**53 so a double holds it exactly:
#   bit 52: 0 won, 1 not won; bits 44-51: 255 - foundation cards (0 for a win);
#   bits 17-43: time in ms (winners: the finishing time; others: the time of the last foundation card);
#   bits 0-16: moves. Times are clamped to 2**27 - 1 ms (37 hours: more than a day), moves to 2**17 - 1.
_TIME_BITS, _MOVE_BITS, _FOUND_BITS = 27, 17, 8


def day_of(now_ms: int) -> str:
    """The UTC date (``YYYY-MM-DD``) of the instant ``now_ms`` (Unix epoch milliseconds)."""
    return dt.datetime.fromtimestamp(now_ms // 1000, dt.UTC).date().isoformat()


_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def parse_date(text: str) -> str:
    """``text`` as a canonical ``YYYY-MM-DD`` date; raises ``ValueError`` when it is not one.

    ASCII digits in that one form only (``date.fromisoformat`` also reads ISO week dates and non-ASCII digits).
    """
    if not _DATE.fullmatch(text):
        raise ValueError("a date is written YYYY-MM-DD")
    return dt.date.fromisoformat(text).isoformat()


def day_bounds(date: str) -> tuple[int, int]:
    """``(start_ms, end_ms)`` of the UTC day ``date``: the day is ``start_ms <= t < end_ms``."""
    start = dt.datetime.combine(dt.date.fromisoformat(date), dt.time(), dt.UTC)
    start_ms = int(start.timestamp()) * 1000
    return start_ms, start_ms + DAY_MS


def next_day(date: str) -> str:
    """The UTC date after ``date``."""
    return (dt.date.fromisoformat(date) + dt.timedelta(days=1)).isoformat()


def previous_day(date: str) -> str:
    """The UTC date before ``date``."""
    return (dt.date.fromisoformat(date) - dt.timedelta(days=1)).isoformat()


def daily_seed(secret: str, date: str, variant: str, index: int) -> str:
    """The seed for attempt ``index`` of a day: HMAC-SHA256(secret, ``"DATE|VARIANT|INDEX"``), hex (64 digits)."""
    return hmac.new(secret.encode(), f"{date}|{variant}|{index}".encode(), hashlib.sha256).hexdigest()


def seed_commitment(seed: str) -> str:
    """The public commitment of a daily seed: SHA-256 of the seed (hex). DESIGN.md "Provably fair seeds"."""
    return hashlib.sha256(seed.encode()).hexdigest()


def find_daily_deal(secret: str, date: str, variant_name: str, nodes: int = DAILY_NODES,
                    max_index: int = MAX_INDEX, pure: bool = False) -> tuple[int, str, list[str]]:
    """The deal of the day: the first index 0, 1, 2 ... whose seed the solver proves solvable within ``nodes``.

    CPU-heavy: run it in a solver worker. Deterministic (a node budget, no time limit), so every process finds
    the same index. Returns ``(index, seed, winning commands)``; raises ``RuntimeError`` when ``max_index``
    indexes all fail. ``pure`` forces the solver's pure search (the same answer, slower).
    """
    variant = find_variant(variant_name)
    for index in range(max_index):
        seed = daily_seed(secret, date, variant.name, index)
        result = solve(deal(seed, variant), variant, Budget(nodes=nodes), pure=pure)
        if result.result == "solved":
            return index, seed, list(result.moves)
    raise RuntimeError(f"no solvable {variant.name} deal for {date} within {max_index} indexes")


def pack_score(standing: Standing) -> int:
    """The ranking key packed into one integer under 2**53 (a sorted-set score, exact as a double).

    Scores order as :func:`server.core.ranking.rank` does (equal keys, equal scores; Redis then orders by name,
    as ``rank`` does). Times are clamped to 2**27 - 1 ms, moves to 2**17 - 1.
    """
    time_cap, move_cap = (1 << _TIME_BITS) - 1, (1 << _MOVE_BITS) - 1
    moves = min(max(standing.moves, 0), move_cap)
    if standing.status == PlayerStatus.WON:
        return (min(max(standing.time_ms, 0), time_cap) << _MOVE_BITS) | moves
    found = (1 << _FOUND_BITS) - 1 - min(max(standing.foundation, 0), (1 << _FOUND_BITS) - 1)
    time_ms = min(max(standing.last_foundation_ms, 0), time_cap)
    return (1 << (_FOUND_BITS + _TIME_BITS + _MOVE_BITS)) | (found << (_TIME_BITS + _MOVE_BITS)) \
        | (time_ms << _MOVE_BITS) | moves


def _clock(ms: int) -> str:
    """``m:ss`` (``h:mm:ss`` from an hour on) of a time in ms, whole seconds (as the clients show a time)."""
    seconds = max(0, ms) // 1000
    if seconds >= 3600:
        return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return f"{seconds // 60}:{seconds % 60:02d}"


def beat_share(rank_below: int, total: int) -> float:
    """The share (0..1) of the OTHER ended attempts of a day that rank strictly below one: ``rank_below`` of
    ``total - 1``; 0.0 when the attempt is the day's only one."""
    return rank_below / (total - 1) if total > 1 else 0.0


def place_line(rank: int, total: int, below: int, date: str | None = None) -> str:
    """An ended attempt's place on its day's board, as the page and the command line show it:
    ``"#3 of 41 · you beat 73 % of players today"`` (``date`` given: ``"... of players on 2026-12-06"``, for a
    day that is over; alone on the board: ``"#1 of 1 today"``). The percentage is rounded down (never more than
    were beaten); ``below`` is the number of other attempts ranked strictly lower, ``total`` every ended
    attempt of the day."""
    when = f"on {date}" if date else "today"
    if total <= 1:  # nobody else to beat
        return f"#{rank} of {total} {when}"
    return f"#{rank} of {total} · you beat {100 * below // (total - 1)} % of players {when}"


def share_line(date: str, variant: str, status: str, time_ms: int, moves: int, foundation: int, rank: int,
               total: int, streak: int | None = None) -> str:
    """The spoiler-free line to share about an ended attempt, e.g.
    ``"Forty Thieves daily 2026-12-06 classic: won 4:12, 188 moves, #3 of 41"``; a game not won says its status
    and cards up instead: ``"... classic: resigned, 97 cards up, #5 of 41"``. ``streak`` (the player's daily
    streak, once the server keeps one) adds ``", streak N"``. It holds no card, deal or seed: only the day,
    the variant and the attempt's own figures."""
    if status == PlayerStatus.WON:
        outcome = f"won {_clock(time_ms)}, {moves} move{'' if moves == 1 else 's'}"
    else:
        outcome = f"{status}, {foundation} card{'' if foundation == 1 else 's'} up"
    line = f"Forty Thieves daily {date} {variant}: {outcome}, #{rank} of {total}"
    return line if streak is None else f"{line}, streak {streak}"
