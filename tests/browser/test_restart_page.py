"""Restart on the play page (/join/{code}): a game alone has a Restart button that deals the same deal again.

A real server and Redis, Debian's chromium through Playwright, at the phone size. A player alone joins from
the link, plays one draw, presses Restart, and the page is in round 2 of the series on the same deal (the
board's cards as dealt, the round chip, the new code in the address bar). In a race of two the button is not
there. Screenshots: ``tests/browser/artifacts/restart-actions.png`` and ``restart-round-2.png``.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.test_play_page import PHONE, join, moves_shown
from tests.browser.test_watch_page import ARGS, ARTIFACTS, CHROMIUM, _browser_available
from tests.integration.wsclient import create_match, public_state

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


async def _board(page: Any) -> str:
    return str(await page.locator("#board .tableau").inner_text())


async def test_restart_alone_takes_the_page_to_round_2_on_the_same_deal(server) -> None:  # type: ignore[no-untyped-def]
    _browser_available()
    from playwright.async_api import async_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    # Without auto-play: a drawn card stays on the waste (with it, a drawn ace would go up at once and leave
    # the waste as dealt, whatever the random deal).
    solo = create_match(server.url, variant="classic", players=1, solvable_only=False, autoplay=False)
    race = create_match(server.url, variant="classic", players=2, solvable_only=False)

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = await browser.new_context(**PHONE)
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await join(page, f"{server.url}/join/{solo['code']}", "solo")
        await page.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=15_000)
        dealt = await _board(page)
        waste = page.get_by_role("group", name="Waste")
        dealt_waste = await waste.inner_text()
        restart = page.get_by_role("button", name="Restart", exact=True)
        assert await restart.is_visible()
        box = await restart.bounding_box()
        assert box is not None and box["y"] >= 0 and box["width"] > 0
        await page.locator("#game-actions").screenshot(path=str(ARTIFACTS / "restart-actions.png"))
        await page.get_by_role("button", name="Draw", exact=True).click()
        await moves_shown(page, 1)
        assert await waste.inner_text() != dealt_waste  # the draw put a card on the waste: the game moved on
        await restart.click()  # the game goes on: asked first, as a resign is
        await page.get_by_role("button", name="Yes, restart").click()
        await page.wait_for_url(lambda url: solo["code"] not in url, timeout=15_000)
        await page.locator("#round-chip").wait_for(timeout=15_000)
        await page.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=15_000)
        await moves_shown(page, 0)
        again = await _board(page)
        await page.screenshot(path=str(ARTIFACTS / "restart-round-2.png"))
        print("screenshot:", ARTIFACTS / "restart-round-2.png")
        new_code = page.url.rstrip("/").rsplit("/", 1)[-1]
        assert again == dealt  # the same deal, from the start
        assert await waste.inner_text() == dealt_waste  # and the waste is empty again
        assert "2" in await page.locator("#round-chip").inner_text()
        assert public_state(server.url, solo["code"])["next_round"] == new_code
        assert await restart.is_visible()  # still alone: restart again is offered

        # In a race of two (one joined so far, then the second): no Restart button once the deal is out.
        await join(page, f"{server.url}/join/{race['code']}", "ann")
        friend = await (await browser.new_context(**PHONE)).new_page()
        await join(friend, f"{server.url}/join/{race['code']}", "bob")
        await page.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=15_000)
        assert not await page.get_by_role("button", name="Restart", exact=True).is_visible()
        assert errors == []
        await browser.close()


async def test_the_watch_feed_tells_of_a_stuck_player_and_of_an_undo(server) -> None:  # type: ignore[no-untyped-def]
    """The spectator page shows a stuck player as stuck (the solver's verdict, an undo left) and says when a
    player undid a move, live and from the catch-up of a page opened later alike."""
    _browser_available()
    from playwright.async_api import async_playwright

    from protocol import messages as m
    from tests.integration.test_dead_games import SHUFFLE_ONLY
    from tests.integration.wsclient import Player

    created = create_match(server.url, variant="classic", deal=SHUFFLE_ONLY, players=2, solvable_only=False,
                           undo="safe")
    code = created["code"]
    ann, bob = Player(server.ws_url), Player(server.ws_url)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = await (await browser.new_context(viewport={"width": 1280, "height": 900})).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await page.goto(f"{server.url}/watch/{code}")
        for player, name in ((ann, "ann"), (bob, "bob")):
            await player.connect()
            await player.join(code, name)
        for player in (ann, bob):
            await player.send(m.Ready())
        for player in (ann, bob):
            assert isinstance(await player.expect(m.Started, timeout=15), m.Started)
        assert isinstance(await ann.play("6-2"), m.PositionReply)
        told = await ann.expect(m.PositionReply, timeout=10)
        assert isinstance(told, m.PositionReply) and told.status == "dead"
        row = page.locator('#standings tr[data-name="ann"]')
        await row.get_by_text("stuck", exact=True).wait_for(timeout=10_000)
        feed = page.locator("#feed li span")
        await feed.filter(has_text="ann is stuck").wait_for(timeout=10_000)
        # A stuck player's game goes on: still counted among those playing.
        stuck_line = await page.locator("#subline").inner_text()
        undone = await ann.play("u")
        assert isinstance(undone, m.PositionReply) and undone.undos == 1
        await feed.filter(has_text="ann undid a move").wait_for(timeout=10_000)
        live = await feed.all_inner_texts()
        await page.screenshot(path=str(ARTIFACTS / "watch-stuck-undo.png"))
        late = await (await browser.new_context(viewport={"width": 1280, "height": 900})).new_page()
        await late.goto(f"{server.url}/watch/{code}")
        await late.locator("#feed li span").filter(has_text="ann undid a move").wait_for(timeout=10_000)
        assert [line for line in await late.locator("#feed li span").all_inner_texts() if "ann" in line][-2:] == [
            line for line in live if "ann" in line][-2:]
        assert any(line.startswith("ann undid a move · 73 on the foundations") for line in live), live
        await ann.close()
        await bob.close()
        assert stuck_line.startswith("2 of 2 still playing"), stuck_line
        assert errors == []
        await browser.close()
