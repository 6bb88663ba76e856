"""Bots on the pages, in a real headless browser: a phone's play page and the spectators' page of a match
with a bot (server/match/bots.py) mark the bot's row, and a person's not.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.test_play_page import PHONE
from tests.browser.test_watch_page import ARGS, CHROMIUM, _browser_available
from tests.integration.wsclient import create_match

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MARKS = """rows => rows.map(r => [r.dataset.name, [...r.querySelectorAll('.who .bot')].map(s => s.textContent)])"""
"""Each row's name and the bot marks in its name cell."""


async def test_the_play_page_and_the_watch_page_mark_a_bot(server) -> None:  # type: ignore[no-untyped-def]
    _browser_available()
    from playwright.async_api import async_playwright

    code = create_match(server.url, players=2, solvable_only=False, bots=[{"level": "casual"}])["code"]
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            context = await browser.new_context(**PHONE)
            page = await context.new_page()
            await page.goto(f"{server.url}/join/{code}")
            await page.get_by_label("Name").fill("ann")
            await page.get_by_role("button", name="Join").click()
            rows = page.locator("#race tbody tr")
            await rows.nth(1).wait_for()
            assert dict(await rows.evaluate_all(MARKS)) == {"casual bot": ["bot"], "ann": []}
            watch = await context.new_page()
            await watch.goto(f"{server.url}/watch/{code}")
            standings = watch.locator("#standings tbody tr")
            await standings.nth(1).wait_for()
            marks: Any = dict(await standings.evaluate_all(MARKS))
            assert marks == {"casual bot": ["bot"], "ann": []}, marks
        finally:
            await browser.close()
