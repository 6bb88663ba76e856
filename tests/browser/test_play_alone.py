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

import json
from typing import Any

import httpx
import pytest

from server.engine import Game, deal, find_variant
from server.views import view_message
from tests.browser.test_layout import card_name
from tests.browser.test_play_page import click_command, moves_shown
from tests.browser.test_watch_page import ARGS, ARTIFACTS, CHROMIUM, _browser_available
from tests.integration.wsclient import public_state

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

NARROW_PHONE = {"viewport": {"width": 360, "height": 740}, "device_scale_factor": 2, "is_mobile": True,
                "has_touch": True}
NUMBER = "2026"
VARIANT = "classic"


def dealt(number: str, variant: str = VARIANT) -> Game:
    """The game the server deals for a game number: the engine's deal of that seed, auto-play on (the server's
    default), full undo."""
    v = find_variant(variant)
    return Game(deal(number, v), v, autoplay=True, undo="full")


def shown_cards(game: Game) -> list[list[str]]:
    """The tableau as the page shows the cards ("10♥"): from the server's wire view of the position."""
    view = view_message(game.position)
    return [[card_name(text).split(",")[0] for text in column] for column in view.tableau]


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
        chip_shown = await page.locator("#number-chip").is_visible()  # the phone's header keeps it
        clock_label = await page.locator("#clock-label").text_content()  # no limit: no "23:59:59 left"

        command = next(str(move.command) for move in game.legal_moves() if str(move.command) not in ("s", "r"))
        await click_command(page, game, command)
        await moves_shown(page, 1)
        game.play(command)
        after_move = await board(page)
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
        chip_shown_after_restart = await page.locator("#number-chip").is_visible()

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
    assert chip_shown and chip_shown_after_restart
    assert clock_label == "your clock", clock_label
    assert at_deal == shown_cards(dealt(NUMBER))
    assert after_move == shown_cards(game) != at_deal
    assert after_undo == at_deal and restarted == at_deal
    assert clipped == [], f"at {width} px these buttons' labels are wider than the buttons"
    assert "resigned" in shown["results"].lower() and "solo" in shown["results"], shown
    assert f"seed {NUMBER} " in shown["verify"] and "✓" in shown["verify"], shown


LEVELS = {"levels": [{"level": level, "label": level.title(), "about": ""} for level in ("casual", "club", "expert",
                                                                                         "strong")]}
"""``GET /bots`` as the contract words it: this server has no bots yet, so the page is given the answer."""


async def test_bad_input_on_the_home_page_is_told_on_the_form_and_sends_nothing(server) -> None:  # type: ignore[no-untyped-def]
    """A game number of 300 digits (no maxlength cuts it to another deal), letters, a negative one, a name of
    spaces; an empty bot count or pace (the browser's own check), and the same driven by a script that submits
    the form past the browser's checks: each gets its message and no ``POST`` leaves the page."""
    _browser_available()
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = await (await browser.new_context(**NARROW_PHONE)).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        posts: list[str] = []
        page.on("request", lambda request: posts.append(request.url) if request.method == "POST" else None)
        await page.route("**/bots", lambda route: route.fulfill(status=200, content_type="application/json",
                                                                body=json.dumps(LEVELS)))
        await page.goto(f"{server.url}/")
        await page.locator("#alone-bots").wait_for()
        form = page.locator("#alone")
        told = {}
        for number, name in (("9" * 300, "solo"), ("12ab", "solo"), ("-5", "solo"), (" 7 ", "   ")):
            await form.get_by_label("Game number").fill(number)
            await form.get_by_label("Name").fill(name)
            await form.get_by_role("button", name="Play alone").click()  # the message is set as the form submits
            told[number[:4]] = await page.locator("#alone-error").inner_text()
            if len(number) == 300:
                kept = await form.get_by_label("Game number").input_value()

        await page.locator("#bot-level").select_option("strong")
        browser_checks = {}
        for field in ("#bot-count", "#bot-pace"):
            await page.locator(field).fill("")
            await page.get_by_role("button", name="Create race").click()
            browser_checks[field] = await page.locator(field).evaluate("n => n.validationMessage")
            await page.locator(field).fill("2")
        scripted = {}
        for field, value in (("#bot-count", ""), ("#bot-count", "7"), ("#bot-pace", "0")):
            await page.locator(field).fill(value)
            await page.locator("#create").evaluate("f => f.dispatchEvent(new Event('submit', {cancelable: true}))")
            scripted[f"{field} {value!r}"] = await page.locator("#create-error").inner_text()
            await page.locator(field).fill("2")
        url = page.url
        await browser.close()

    assert errors == [] and posts == [], (errors, posts)
    assert url == f"{server.url}/"
    assert kept == "9" * 300  # as pasted: the message says what is wrong with it
    assert told == {"9999": "a game number has at most 200 digits (this one has 300)",
                    "12ab": "a game number is digits only (or leave it empty for a random one)",
                    "-5": "a game number is digits only (or leave it empty for a random one)",
                    " 7 ": "type your name: the game goes into its history and records"}, told
    assert all(browser_checks.values()), browser_checks
    assert scripted == {"#bot-count ''": "how many bots: 1 to 3", "#bot-count '7'": "how many bots: 1 to 3",
                        "#bot-pace '0'": "a bot's pace: 1 to 600 moves a minute"}, scripted
