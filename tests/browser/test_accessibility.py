"""axe-core on the pages of a race: no serious or critical violation on ``/``, ``/join/{code}`` in the lobby
and while racing, ``/watch/{code}`` and the player's own page ``/players/{name}`` (``/daily``:
tests/browser/test_daily_results.py)."""

from __future__ import annotations

import pytest

from tests.browser.axe import severe_violations
from tests.browser.test_play_page import DESKTOP, join
from tests.browser.test_watch_page import ARGS, CHROMIUM, _browser_available
from tests.integration.test_race import SEED, VARIANT
from tests.integration.wsclient import create_match

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


async def test_the_race_pages_have_no_serious_accessibility_violation(server) -> None:  # type: ignore[no-untyped-def]
    _browser_available()
    from playwright.async_api import async_playwright

    code = create_match(server.url, variant=VARIANT, seed=SEED, players=2)["code"]
    found: dict[str, list[object]] = {}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = await (await browser.new_context(**DESKTOP)).new_page()
        await page.goto(server.url + "/")
        found["/"] = await severe_violations(page)
        await join(page, f"{server.url}/join/{code}", "ann")
        await page.get_by_role("button", name="Ready ✓").wait_for(timeout=10_000)
        found["lobby"] = await severe_violations(page)
        other = await (await browser.new_context(**DESKTOP)).new_page()
        await join(other, f"{server.url}/join/{code}", "bob")
        await page.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=15_000)
        found["racing"] = await severe_violations(page)
        await other.goto(f"{server.url}/watch/{code}")
        await other.get_by_text("Race on").wait_for(timeout=10_000)
        found["watch"] = await severe_violations(other)
        # ann's own page (her browser holds the key her join was given): its link and QR code for another device
        # open (the page with games, chart and head-to-head: tests/browser/test_player_page.py)
        await page.goto(f"{server.url}/players/ann")
        await page.get_by_role("button", name="Use on another device").click()
        await page.locator("#device-qr svg").wait_for(timeout=10_000)
        found["player"] = await severe_violations(page)
        await browser.close()
    assert found == {"/": [], "lobby": [], "racing": [], "watch": [], "player": []}, found
