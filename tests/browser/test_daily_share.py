"""A daily attempt's place and line to share in the browser, then the day's archive once it is revealed.

A server whose clock is on day D, ten minutes before midnight UTC: a name plays the relaxed daily on /daily and
resigns; the results show the place line ("#1 of 1 · ...") and a Copy button (the browser has no Web Share
sheet here), whose copied text is the contract's line and the day's link, and re-read when another attempt ends;
/daily shows the same place, with Share where the browser has a share sheet (a stub here). Then a
server just past that midnight on the same Redis closes the day: /daily/D shows the board, the seed with the
commitment checked in the browser ("✓"), and a practice button that leads to the play page, racing the day's best
as a ghost when its box is ticked. The results, /daily,
the day's page and the player's page fit a 360 px phone: no sideways scroll.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

import httpx
import pytest
import redis

from tests.browser.axe import severe_violations
from tests.browser.test_play_page import DAILY_DB, DESKTOP, PHONE
from tests.browser.test_watch_page import ARGS, ARTIFACTS, CHROMIUM, _browser_available
from tests.integration.conftest import ServerProcess
from tests.integration.wsclient import resigned_daily_attempt

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

DAY_MS = 86_400_000
SHARE_SHEET = """
if (location.search.includes("share-sheet")) {
  Navigator.prototype.share = async function (data) { window.sharedData = data; };
} else {
  delete Navigator.prototype.share;
}
"""
"""Whether the browser has a share sheet is the page's choice: a stub that keeps what it was given on pages
opened with ``?share-sheet``, none elsewhere (Chromium has one on some desktops): there the page offers Copy."""


NARROW = {"width": 360, "height": 740}
"""The narrowest phone the pages are made for."""


async def overflow_at_360(page: Any, shot: str) -> int:
    """How many CSS pixels the page open on ``page`` is wider than a 360x740 phone (0: no sideways scroll);
    the page's screenshot at that size goes to ``ARTIFACTS/shot``; the viewport is the desktop's again after."""
    await page.set_viewport_size(NARROW)
    await page.wait_for_timeout(100)  # a layout that follows the width (a resize handler) has settled
    await page.screenshot(path=str(ARTIFACTS / shot), full_page=True)
    overflow = int(await page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))
    await page.set_viewport_size(DESKTOP["viewport"])
    return overflow


def server_at(url: str, clock_ms: int) -> ServerProcess:
    return ServerProcess(url, FTR_DAILY_SECRET="share test", FTR_DAILY_VARIANTS="relaxed",
                         FTR_CLOCK_OFFSET_MS=str(clock_ms - int(time.time() * 1000)))


async def test_results_show_the_place_and_copy_the_share_line_and_the_archive_checks_the_seed(redis_url: str) -> None:
    _browser_available()
    from playwright.async_api import async_playwright

    url = redis_url.rsplit("/", 1)[0] + f"/{DAILY_DB}"
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    midnight = (int(time.time() * 1000) // DAY_MS + 1) * DAY_MS
    server = server_at(url, midnight - 600_000)
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            context = await browser.new_context(**DESKTOP)
            await context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
            await context.add_init_script(SHARE_SHEET)
            page = await context.new_page()
            problems: list[str] = []
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
            overflows: dict[str, int] = {}
            date = await played(page, server, overflows)
            await page.goto("about:blank")  # no page of the first server open while it stops
            server.stop()

            server = server_at(url, midnight + 2_000)
            deadline = time.monotonic() + 15
            while httpx.get(f"{server.url}/daily/{date}/relaxed/reveal", timeout=10).status_code != 200:
                assert time.monotonic() < deadline, "the day was not revealed"
                time.sleep(0.2)
            await archive(page, server, date, overflows)
            await browser.close()
            assert not problems, problems
            assert overflows == dict.fromkeys(overflows, 0) and len(overflows) == 4, overflows  # wider than 360 px
    finally:
        server.stop()
        with redis.Redis.from_url(url) as client:
            client.flushdb()


async def played(page: Any, server: ServerProcess, overflows: dict[str, int]) -> str:
    """Play and resign the relaxed daily as "eve" on day D; check the results' place and copied line."""
    await page.goto(server.url + "/daily")
    panel = page.locator('section[data-variant="relaxed"]')
    await panel.get_by_label("Name").fill("eve")
    await panel.get_by_role("button", name="Play today's relaxed deal").click()
    await page.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=30_000)
    match = page.url.rsplit("/", 1)[1]
    await page.get_by_role("button", name="Resign", exact=True).click()
    await page.get_by_role("button", name="Yes, resign").click()
    await page.get_by_role("list", name="Results").wait_for(timeout=15_000)
    place = page.locator(".day-place", has=page.locator("#day-rank"))
    await place.get_by_role("button", name="Copy").wait_for(timeout=10_000)
    public = httpx.get(f"{server.url}/matches/{match}", timeout=10).json()
    date, cards = public["daily"]["date"], public["players"][0]["foundation"]
    expected = f"Forty Thieves daily {date} relaxed: resigned, {cards} cards up, #1 of 1, streak 1\n"\
               f"{server.url}/daily/{date}"
    line = await page.locator("#day-rank").inner_text()
    assert line == "#1 of 1 today · the day's board →", line
    await place.get_by_role("button", name="Copy").click()
    await place.get_by_role("button", name="Copied ✓").wait_for(timeout=5_000)
    copied = await page.evaluate("navigator.clipboard.readText()")
    assert copied == expected, copied
    assert await place.locator(".share-text").inner_text() == expected
    # Her first day, as the results frame says it (the place leaves it out: said once on the page).
    assert await page.locator("#results-streak").inner_text() == "Streak 1 (best 1) · 0 freezes"
    assert not await place.locator(".streak-line").is_visible()
    box = await place.get_by_role("button", name="Copied ✓").bounding_box()
    assert box is not None and box["width"] > 40 and box["height"] > 20

    # Another attempt ends: the results re-read the place on the day's events.
    await resigned_daily_attempt(server.url, server.ws_url, "fay")
    entry = httpx.get(f"{server.url}/daily/{date}/relaxed/leaderboard?name=eve", timeout=10).json()["entry"]
    assert entry["total"] == 2 and " · you beat " in entry["place"]
    await page.wait_for_function("document.getElementById('day-rank').textContent.includes('of 2')", timeout=10_000)
    assert await page.locator("#day-rank").inner_text() == f"{entry['place']} · the day's board →"
    assert await place.locator(".share-text").inner_text() == entry["share"]
    await page.screenshot(path=str(ARTIFACTS / "daily-share-results.png"), full_page=True)
    overflows["results"] = await overflow_at_360(page, "daily-results-360.png")

    # The daily page shows the place of the name this browser played under, with the same line to share; where
    # the browser has a share sheet (a phone), the button is Share and hands it that text.
    await page.goto(server.url + "/daily?share-sheet")
    mine = page.locator('section[data-variant="relaxed"] .day-place')
    await mine.get_by_role("button", name="Share").wait_for(timeout=10_000)
    assert await mine.locator(".share-text").inner_text() == entry["share"]
    assert await page.get_by_role("link", name="Yesterday's deals").count() == 1
    overflows["daily"] = await overflow_at_360(page, "daily-360.png")
    await page.set_viewport_size(PHONE["viewport"])
    await page.screenshot(path=str(ARTIFACTS / "daily-share-phone.png"), full_page=True)
    await page.set_viewport_size(DESKTOP["viewport"])
    await mine.get_by_role("button", name="Share").click()
    await page.wait_for_function("window.sharedData !== undefined", timeout=5_000)
    assert await page.evaluate("window.sharedData") == {"text": entry["share"]}
    return str(date)


async def archive(page: Any, server: ServerProcess, date: str, overflows: dict[str, int]) -> None:
    """The revealed day's page: its board, the seed checked in the browser, then a practice."""
    revealed = httpx.get(f"{server.url}/daily/{date}/relaxed/reveal", timeout=10).json()
    assert hashlib.sha256(revealed["seed"].encode()).hexdigest() == revealed["commitment"]
    await page.goto(f"{server.url}/daily/{date}")
    panel = page.locator('section[data-variant="relaxed"]')
    check = panel.get_by_role("status")
    await check.wait_for(timeout=10_000)
    assert await check.inner_text() == "✓ SHA-256(seed) equals the commitment published before the day"
    assert await panel.locator("code.seed").inner_text() == revealed["seed"]
    assert await panel.locator('tr[data-name="eve"]').count() == 1 and await panel.locator("tbody tr").count() == 2
    replay = panel.locator('tr[data-name="eve"]').get_by_role("link", name="replay")
    assert await replay.get_attribute("href") == f"/daily/{date}/relaxed/replay/eve"
    violations = await severe_violations(page)
    await page.screenshot(path=str(ARTIFACTS / "daily-archive.png"), full_page=True)
    assert violations == [], violations
    overflows["day"] = await overflow_at_360(page, "daily-archive-360.png")
    await panel.get_by_label("Name").fill("gus")  # eve's name token stayed with the first server's page
    # Racing the day's best: its name and time as the board has them; the practice then races it as a ghost.
    top = httpx.get(f"{server.url}/daily/{date}/relaxed/leaderboard", timeout=10).json()["entries"][0]
    minutes, seconds = divmod(top["time_ms"] // 1000, 60)
    await panel.get_by_label(f"Race the day's best ({top['name']}, {minutes}:{seconds:02d})").check()
    await panel.get_by_role("button", name="Play this day (practice)").click()
    await page.get_by_role("button", name="Ready").click(timeout=15_000)
    assert "/join/" in page.url
    ghost = page.locator("#race tr.ghost")
    await ghost.wait_for(timeout=10_000)
    assert f"{top['name']}'s daily" in await ghost.inner_text()
    # The practice claimed the free name gus: this browser holds its key (else the name is lost to it).
    held = await page.evaluate("FTR.playerKey('gus')")
    assert isinstance(held, str) and len(held) >= 20, held
    await page.locator("#race-panel").screenshot(path=str(ARTIFACTS / "daily-practice-ghost.png"))
    await page.goto(f"{server.url}/players/eve")  # her page: the streak, the daily attempt in her history
    await page.get_by_text("Streak 1 (best 1)").first.wait_for(timeout=10_000)
    overflows["player"] = await overflow_at_360(page, "player-360.png")
