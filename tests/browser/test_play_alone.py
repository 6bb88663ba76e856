"""Play alone from ``/``: a deal by its game number, in a real browser against a real server and Redis.

At a 360 px phone: ``/`` fits the screen with its "Play alone" form, and its bot pickers offer the levels of
``GET /bots``, weakest first. "Play alone" with an empty game number picks one and shows it; with
a typed number it makes the match of that seed (one player, full undo, hints, no time limit, any deal) and the
play page starts it without a Join or a Ready: the board is the engine's deal of that number. Then a move, an
undo (back to the deal), a hint, a restart (round 2 of the same deal, the number still shown) and a resign:
the results show the seed. Screenshots: ``tests/browser/artifacts/alone-home-phone.png``,
``alone-playing-phone.png``, ``alone-results-phone.png``.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from server.engine import Game, deal, find_variant
from server.views import view_message
from tests.browser.test_play_page import click_command, moves_shown
from tests.browser.test_watch_page import ARGS, ARTIFACTS, CHROMIUM, _browser_available
from tests.integration.wsclient import public_state

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

NARROW_PHONE = {"viewport": {"width": 360, "height": 740}, "device_scale_factor": 2, "is_mobile": True,
                "has_touch": True}
NUMBER = "2026"
VARIANT = "classic"
SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


def dealt(number: str, variant: str = VARIANT) -> Game:
    """The game the server deals for a game number: the engine's deal of that seed, auto-play on (the server's
    default), full undo."""
    v = find_variant(variant)
    return Game(deal(number, v), v, autoplay=True, undo="full")


def shown_cards(game: Game) -> list[list[str]]:
    """The tableau as the page shows the cards ("10♥"): from the server's wire view of the position."""
    view = view_message(game.position)
    return [[("10" if text[0] == "T" else text[0]) + SYMBOLS[text[1]] for text in column] for column in view.tableau]


async def board(page: Any) -> list[list[str]]:
    """The page's tableau: each column's face-up cards as their names begin ("10♥, 10 of hearts")."""
    return list(await page.locator("#board .tableau").evaluate(
        "t => [...t.querySelectorAll('.column')].map(c => [...c.querySelectorAll('button.card:not(.slot)')]"
        ".map(b => b.getAttribute('aria-label').split(',')[0]))"))


async def test_play_alone_on_a_game_number_from_the_home_page(server) -> None:  # type: ignore[no-untyped-def]
    _browser_available()
    from playwright.async_api import async_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    width = NARROW_PHONE["viewport"]["width"]
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = await (await browser.new_context(**NARROW_PHONE)).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await page.goto(f"{server.url}/")
        form = page.locator("#alone")
        await form.get_by_label("Name").fill("solo")
        await page.wait_for_load_state("networkidle")  # GET /bots has answered
        overflow = await page.evaluate(f"document.documentElement.scrollWidth - {width}")
        rights = await page.locator("#alone select, #alone input, #alone button").evaluate_all(
            f"nodes => nodes.map(n => n.getBoundingClientRect().right - {width})")
        bot_pickers = [await page.locator(picker).is_visible() for picker in ("#alone-bots", "#create-bots")]
        bot_levels = await page.locator("#alone-bot-level option").evaluate_all("nodes => nodes.map(n => n.value)")
        await page.locator("#alone-panel").screenshot(path=str(ARTIFACTS / "alone-home-phone.png"))

        # No number: the page picks one, and the play page shows it.
        await form.get_by_role("button", name="Play alone").click()
        await page.wait_for_url("**/join/**", timeout=10_000)
        await page.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=15_000)
        picked = await page.locator("#number-chip b").inner_text()
        random_board = await board(page)

        await page.goto(f"{server.url}/")
        await form.get_by_label("Game number").fill(NUMBER)
        await form.get_by_label("Name").fill("solo")
        await form.get_by_role("button", name="Play alone").click()
        await page.wait_for_url("**/join/**", timeout=10_000)
        code = page.url.rstrip("/").rsplit("/", 1)[-1]
        await page.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=15_000)  # started: no Ready
        game = dealt(NUMBER)
        at_deal = await board(page)
        chip = await page.locator("#number-chip").inner_text()

        command = next(str(move.command) for move in game.legal_moves() if str(move.command) not in ("s", "r"))
        await click_command(page, game, command)
        await moves_shown(page, 1)
        game.play(command)
        after_move = await board(page)
        clock_label = await page.locator("#clock-label").inner_text()
        await page.get_by_role("button", name="Undo", exact=True).click()
        await moves_shown(page, 2)  # an undo counts as a move
        after_undo = await board(page)
        await page.get_by_role("button", name="Hint", exact=True).click()
        await page.wait_for_function("document.getElementById('message').textContent.startsWith('Hint')")
        await page.screenshot(path=str(ARTIFACTS / "alone-playing-phone.png"))
        clipped = await page.locator("#game-actions button:visible").evaluate_all(
            "nodes => nodes.filter(n => n.scrollWidth > n.clientWidth).map(n => n.textContent)")

        await page.get_by_role("button", name="Restart", exact=True).click()
        await page.get_by_role("button", name="Yes, restart").click()
        await page.wait_for_url(lambda url: code not in url, timeout=15_000)
        await page.locator("#round-chip").wait_for(timeout=15_000)
        await moves_shown(page, 0)
        restarted = await board(page)
        chip_after_restart = await page.locator("#number-chip").inner_text()

        await page.get_by_role("button", name="Resign").click()
        await page.get_by_role("button", name="Yes, resign").click()
        results = page.get_by_role("list", name="Results")
        await results.wait_for(timeout=15_000)
        await page.locator("#verified").wait_for(timeout=15_000)
        shown = {"results": await results.inner_text(), "verify": await page.locator("#verify").inner_text()}
        await page.screenshot(path=str(ARTIFACTS / "alone-results-phone.png"), full_page=True)
        await browser.close()
    print("\nscreenshots:", *(ARTIFACTS / name for name in ("alone-home-phone.png", "alone-playing-phone.png",
                                                            "alone-results-phone.png")))

    assert errors == []
    assert overflow <= 0 and max(rights) <= 0, (overflow, rights)
    assert bot_pickers == [True, True]
    levels = httpx.get(f"{server.url}/bots", timeout=10).json()["levels"]
    assert bot_levels == [""] + [level["level"] for level in levels]  # no bot first, then weakest first
    assert picked.isdigit() and 1 <= int(picked) <= 999_999, picked
    assert random_board == shown_cards(dealt(picked))
    settings = public_state(server.url, code)["settings"]
    assert {key: settings[key] for key in ("variant", "players", "undo", "hints", "time_limit_s", "solvable_only")} == {
        "variant": VARIANT, "players": 1, "undo": "full", "hints": True, "time_limit_s": 0, "solvable_only": False}
    assert chip == f"game {NUMBER}" and chip_after_restart == chip
    assert at_deal == shown_cards(dealt(NUMBER))
    assert after_move == shown_cards(game) != at_deal
    assert "left" not in clock_label.lower(), clock_label  # no time limit: no countdown of the 24 h cap
    assert after_undo == at_deal and restarted == at_deal
    assert clipped == [], f"at {width} px these buttons' labels are wider than the buttons"
    assert "resigned" in shown["results"].lower() and "solo" in shown["results"], shown
    assert f"seed {NUMBER} " in shown["verify"] and "✓" in shown["verify"], shown
