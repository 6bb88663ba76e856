"""The wake-up listener's pause after failures in a row (server/store/wakeups.py): short after one, growing, capped,
and never an error however long a master stays away."""

from __future__ import annotations

import pytest

from server.store import wakeups
from server.store.wakeups import RETRY_S, WakeUps


async def test_the_pause_grows_from_a_few_ms_to_retry_s_and_a_long_outage_never_raises(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Failures 1, 2, 3 pause 5, 10, 20 ms (redis-py's ExponentialBackoff, base 5 ms); the 10th and later pause
    RETRY_S; the 2,000th (a master away for a quarter of an hour) still pauses RETRY_S: 2**n of a float
    overflows past n = 1023, which ended the hub's reader. A success (popping the count) starts again at 5 ms."""
    pauses: list[float] = []

    async def no_wait(seconds: float) -> None:
        pauses.append(seconds)

    monkeypatch.setattr(wakeups.asyncio, "sleep", no_wait)
    listener = WakeUps(client=None)  # type: ignore[arg-type]  # no cluster client: _failed reads no layout
    for _ in range(3):
        await listener._failed("node-a", "reading wake-ups from node-a", ConnectionError("killed"))
    assert pauses == [0.005, 0.010, 0.020]
    listener._failures["node-a"] = 1_999
    await listener._failed("node-a", "reading wake-ups from node-a", ConnectionError("still away"))
    assert pauses[-1] == RETRY_S and listener._failures["node-a"] == 2_000
    listener._failures.pop("node-a")
    await listener._failed("node-a", "reading wake-ups from node-a", ConnectionError("killed again"))
    assert pauses[-1] == 0.005
    assert listener._changed.is_set()  # the next round subscribes again
