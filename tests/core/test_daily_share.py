"""The daily's share line and place line (server/core/daily.py): figures only, the contract's exact words."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from server.core.daily import beat_share, place_line, share_line

CARD = re.compile(r"(?<![0-9A-Za-z])(?:10|[2-9TJQKA])[CDHS](?![0-9A-Za-z])")


def test_the_share_line_is_the_contracts() -> None:
    assert share_line("2026-12-06", "classic", "won", 252_999, 188, 104, 3, 41) == \
        "Forty Thieves daily 2026-12-06 classic: won 4:12, 188 moves, #3 of 41"
    assert share_line("2026-12-06", "relaxed", "resigned", 600_000, 300, 97, 5, 41) == \
        "Forty Thieves daily 2026-12-06 relaxed: resigned, 97 cards up, #5 of 41"
    assert share_line("2026-12-06", "classic", "won", 3_725_000, 1, 104, 1, 1, streak=5) == \
        "Forty Thieves daily 2026-12-06 classic: won 1:02:05, 1 move, #1 of 1, streak 5"
    assert share_line("2026-12-06", "classic", "timeout", 0, 0, 1, 2, 2).endswith(": timeout, 1 card up, #2 of 2")


def test_the_place_line_rounds_down_and_says_when_alone() -> None:
    assert place_line(3, 41, 29) == "#3 of 41 · you beat 72 % of players today"  # 29/40 = 72.5 %
    assert place_line(1, 101, 100, "2026-12-06") == "#1 of 101 · you beat 100 % of players on 2026-12-06"
    assert place_line(1, 1, 0) == "#1 of 1 today" and place_line(1, 1, 0, "2026-12-06") == "#1 of 1 on 2026-12-06"
    assert beat_share(29, 41) == 29 / 40 and beat_share(0, 1) == 0.0


@given(st.integers(0, 10**7), st.integers(0, 10**5), st.integers(0, 104), st.integers(1, 10**6),
       st.sampled_from(["won", "resigned", "dead", "timeout"]))
def test_no_share_line_names_a_card(time_ms: int, moves: int, foundation: int, total: int, status: str) -> None:
    line = share_line("2026-12-06", "classic", status, time_ms, moves, foundation, min(total, 7), total)
    assert not CARD.search(line) and "\n" not in line
