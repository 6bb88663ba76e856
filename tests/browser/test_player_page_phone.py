"""The player's page on a phone after a rematch: a race dealt from a random seed is labelled by its whole seed
(32 hex digits), and that label must wrap, so that a phone (390x844) shows each recent game's time, cards and
replay link, and each deal's records, without a sideways scroll. The head-to-head is worded from the viewer's side, as the CLI words it. A "use on another device" link
with a key other than the one the browser holds for that name replaces it only when the player says so."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from client_cli.render import rivalry_line
from protocol import messages as m
from server.names import name_key
from tests.browser.test_play_page import PHONE
from tests.browser.test_watch_page import ARGS, ARTIFACTS, CHROMIUM, _browser_available
from tests.integration.wsclient import PLAYER_KEYS, resigned_race

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

LONG_SEED = "71d07af614e70898212a5286b704906d"  # the form of a rematch's seed


async def test_a_long_seed_label_wraps_and_the_tables_fit_a_phone(server: Any) -> None:
    _browser_available()
    from playwright.async_api import async_playwright

    await resigned_race(server.url, server.ws_url, ("ann", "bob"), variant="relaxed", seed=LONG_SEED)

    ARTIFACTS.mkdir(exist_ok=True)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = await (await browser.new_context(**PHONE)).new_page()
        await page.goto(f"{server.url}/players/ann")
        await page.get_by_role("table", name="Recent games").locator("tbody tr").first.wait_for(timeout=10_000)
        # How far each table reaches past the box that holds it (0: it fits, no sideways scroll).
        past = await page.evaluate("""[...document.querySelectorAll('.scroll-x')].filter((b) => b.offsetParent)
            .map((b) => b.scrollWidth - b.clientWidth)""")
        replay = await page.get_by_role("link", name="replay").first.bounding_box()
        pair = m.Rivalry("ann", "bob", 23, 17, 1, 41)  # the page words the score as the CLI does, viewer first
        words = await page.evaluate("(pair) => [FTR.rivalryLine(pair, 'bob'), FTR.rivalryLine(pair, 'ann')]",
                                    msgspec.to_builtins(pair))
        await page.screenshot(path=str(ARTIFACTS / "player-long-seed-phone.png"), full_page=True)
        # A link with another key for a name this browser holds (anyone can make one) replaces nothing unasked.
        own = PLAYER_KEYS[name_key("ann")]
        await page.evaluate("(key) => localStorage.setItem('ftr:players', JSON.stringify({ann: key}))", own)
        planted = "P" * 32
        await page.goto("about:blank")  # a new load of the page, not a same-document jump to the fragment
        await page.goto(f"{server.url}/players/ann#key={planted}")
        question = page.get_by_role("region", name="Another key for ann")
        await question.wait_for(timeout=10_000)
        held_before = await page.evaluate("JSON.parse(localStorage.getItem('ftr:players'))['ann']")
        await page.screenshot(path=str(ARTIFACTS / "player-link-key-phone.png"), full_page=True)
        await question.get_by_role("button", name="Use the link's key").click()
        held_after = await page.evaluate("JSON.parse(localStorage.getItem('ftr:players'))['ann']")
        asked_after = await question.is_visible()
        await browser.close()
    assert past and all(extra <= 0 for extra in past), past
    assert words == [rivalry_line(pair, "bob"), rivalry_line(pair, "ann")], words
    assert words[0].startswith("bob 17-23 ann "), words
    assert held_before == own and held_after == planted and not asked_after, (held_before, held_after)
    assert replay is not None and replay["x"] + replay["width"] <= 390, replay
