"""A daily attempt played in the browser to its results: its pages say the truth.

The play page shows no Rematch (a daily attempt has none), the rank on the day's leaderboard and a link to
the board, a headline for one player, and the seed "revealed when the day is over" (never "revealed" next
to "stays secret"); the attempt's watch page shows no failed commitment check and makes no request that is
refused. axe-core finds no serious or critical violation on /daily and the watch page.
"""

from __future__ import annotations

import pytest

from tests.browser.axe import severe_violations
from tests.browser.test_play_page import DESKTOP, daily_server, stop_daily_server
from tests.browser.test_watch_page import ARGS, ARTIFACTS, CHROMIUM, _browser_available

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


async def test_a_daily_attempt_resigned_in_the_browser_shows_its_rank_and_no_rematch(redis_url) -> None:  # type: ignore[no-untyped-def]
    _browser_available()
    from playwright.async_api import async_playwright

    server = daily_server(redis_url, "daily results test")

    async def run() -> None:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = await (await browser.new_context(**DESKTOP)).new_page()
            problems: list[str] = []
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
            page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
            await page.goto(server.url + "/daily")
            panel = page.locator('section[data-variant="relaxed"]')
            await panel.get_by_label("Name").fill("dora")
            daily_axe = await severe_violations(page)
            await panel.get_by_role("button", name="Play today's relaxed deal").click()
            await page.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=30_000)
            match = page.url.rsplit("/", 1)[1]
            await page.get_by_role("button", name="Resign", exact=True).click()
            await page.get_by_role("button", name="Yes, resign").click()
            await page.get_by_role("list", name="Results").wait_for(timeout=15_000)
            await page.locator("#day-rank").wait_for(timeout=10_000)
            text = await page.locator("body").inner_text()
            headline = await page.locator("#headline").inner_text()
            rank = await page.locator("#day-rank").inner_text()
            board_link = await page.get_by_role("link", name="the day's board →").get_attribute("href")
            rematch_visible = await page.get_by_role("button", name="Rematch").is_visible()
            await page.set_viewport_size({"width": 390, "height": 844})
            await page.screenshot(path=str(ARTIFACTS / "daily-results-phone.png"), full_page=True)

            await page.goto(f"{server.url}/watch/{match}")
            await page.locator("#seed-note").wait_for(timeout=10_000)
            await page.wait_for_timeout(500)  # any later request would show in the responses
            watch_text = await page.locator("body").inner_text()
            watch_axe = await severe_violations(page)
            await page.screenshot(path=str(ARTIFACTS / "daily-watch.png"), full_page=True)
            await browser.close()

            assert not problems, problems
            assert not rematch_visible
            assert headline.startswith("Your game: resigned with "), headline
            assert "Nobody won" not in text and not ("revealed:" in text and "stays secret" in text), text
            assert "revealed when the day is over" in text, text
            assert rank == "#1 of 1 today · the day's board →", rank
            assert board_link == "/daily#board-relaxed"
            assert "does not match" not in watch_text and "revealed when the day is over" in watch_text, watch_text
            assert daily_axe == [] and watch_axe == [], (daily_axe, watch_axe)

    ARTIFACTS.mkdir(exist_ok=True)
    try:
        await run()
    finally:
        stop_daily_server(server)
