"""The play page's layout in a real headless browser: the whole game in one screen, phone first.

A real server and Redis, Debian's chromium driven by Playwright. At 390x844
(a phone: mobile, touch, 2x) and at 1366x800 (a laptop) the start of a
classic race (the browser player and a protocol client) shows every column's
cards, the foundations, the stock, the waste and the Draw/Undo/Hint/Resign
buttons inside the viewport with the page not scrolled; a hint's text appears
inside the viewport too (next to the buttons, where the thumb is); on the
laptop the foundation row stays put while 20 draws fan the waste out. The
create form on a phone: classic by default, the game number typed is the deal
dealt, the auto-play choice is the match's setting, and the share link with
its Copy button shows before the host has joined. Geometry (bounding boxes),
never pixels; screenshots go to ``tests/browser/artifacts/``.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from protocol import messages as m
from server.engine import Game, deal, find_variant, format_position
from server.views import view_message
from tests.browser.test_play_page import PHONE, join, moves_shown
from tests.browser.test_watch_page import ARGS, ARTIFACTS, CHROMIUM, _browser_available
from tests.integration.wsclient import Player, create_match, public_state

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

DESKTOP = {"viewport": {"width": 1366, "height": 800}}
"""The desktop of the trial: a laptop's screen (test_play_page.py's DESKTOP is 1280x900)."""
CLASSIC_SEED = "20261206"
"""A game number: the decimal seed string of a classic deal."""

PARTS = {
    "stock": "#stock",
    "waste": "[role=group][aria-label=Waste]",
    "foundations": "[role=group][aria-label=Foundations]",
    "draw": "#draw", "undo": "#undo", "hint": "#hint", "resign": "#resign",
}


async def outside(page: Any) -> list[str]:
    """What of the board and its buttons lies (even partly) outside the viewport, as "what: box"."""
    return await page.evaluate("""(parts) => {
        const w = window.innerWidth, h = window.innerHeight, out = [];
        const check = (what, node) => {
            const r = node.getBoundingClientRect();
            if (!r.width || !r.height) out.push(`${what}: not shown`);
            else if (r.left < 0 || r.top < 0 || r.right > w || r.bottom > h)
                out.push(`${what}: ${Math.round(r.left)},${Math.round(r.top)} to ${Math.round(r.right)},${Math.round(r.bottom)}`);
        };
        for (const [what, selector] of Object.entries(parts)) {
            const node = document.querySelector(selector);
            if (node) check(what, node); else out.push(`${what}: missing`);
        }
        document.querySelectorAll('#board [role=group][aria-label^="Column "]').forEach((column) => {
            column.querySelectorAll('.card').forEach((card, i) => check(`${column.getAttribute('aria-label')} card ${i + 1}`, card));
        });
        return out;
    }""", PARTS)


async def painted(page: Any) -> None:
    """Until the page has laid out and painted what it rendered (the columns are fitted as they are drawn)."""
    await page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


async def start_classic_race(page: Any, server: Any, hints: bool = True) -> tuple[str, Player]:
    """A two-player classic race of :data:`CLASSIC_SEED`: ``page`` joins as ann, a protocol client as cli;
    returns once ann's board is dealt."""
    created = create_match(server.url, variant="classic", seed=CLASSIC_SEED, players=2, hints=hints,
                           solvable_only=False)
    code = created["code"]
    await join(page, f"{server.url}/join/{code}", "ann")
    cli = Player(server.ws_url)
    await cli.connect()
    await cli.join(code, "cli")
    await cli.send(m.Ready())
    await cli.expect(m.Started)
    await page.get_by_role("group", name="Column 10", exact=True).wait_for(timeout=15_000)
    return code, cli


@pytest.mark.parametrize("device", ["phone", "desktop"])
async def test_the_start_of_a_classic_race_fits_the_screen_and_a_hint_shows_by_the_buttons(  # type: ignore[no-untyped-def]
        server, device: str) -> None:
    _browser_available()
    from playwright.async_api import async_playwright

    dealt = view_message(Game(deal(CLASSIC_SEED, find_variant("classic")), find_variant("classic"), autoplay=True,
                              undo="safe").position)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = await (await browser.new_context(**(PHONE if device == "phone" else DESKTOP))).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        code, cli = await start_classic_race(page, server)
        await painted(page)
        shown_tableau = await page.locator("#board [role=group][aria-label^='Column ']").evaluate_all(
            "cols => cols.map(c => [...c.querySelectorAll('.card')].map(b => b.getAttribute('aria-label')))")
        start_out = await outside(page)
        scroll = await page.evaluate("[window.scrollY, document.scrollingElement.scrollTop]")
        await page.screenshot(path=str(ARTIFACTS / f"play-{device}-start.png"))
        header = await page.evaluate("""() => ['#state', '#clock-value', '#code-chip'].map((s) => {
            const r = document.querySelector(s)?.getBoundingClientRect(); return r ? [r.top, r.bottom] : null; })""")
        strip = await page.locator("#racers").inner_text()
        live = await page.evaluate("""() => ['#clock', '#clock-value'].map((s) =>
            Boolean(document.querySelector(s).closest('[aria-live]')))""")
        await page.get_by_role("button", name="Hint").click()
        hint = page.locator("#message")
        await page.wait_for_function("document.getElementById('message').textContent.startsWith('Hint')")
        hint_box = await hint.bounding_box()
        hint_text = await hint.inner_text()
        viewport = page.viewport_size
        await page.screenshot(path=str(ARTIFACTS / f"play-{device}-hint.png"))
        moved: list[str] = []
        fan: list[tuple[str, float]] = []
        # Read in one turn of the page's event loop: a locator's box may be asked of the row a re-render has
        # just replaced (and be None).
        row_box = f"""() => {{ const r = document.querySelector({PARTS['foundations']!r}).getBoundingClientRect();
            return {{x: r.x, y: r.y, width: r.width, height: r.height}}; }}"""
        before = await page.evaluate(row_box)
        for i in range(20):
            await page.get_by_role("button", name="Draw").click()
            await moves_shown(page, i + 1)
            after = await page.evaluate(row_box)
            if after != before:
                moved.append(f"draw {i + 1}: {before} -> {after}")
            # Each card under the waste's top one shows its corner whole ("10♦", not "10 1"): the next card
            # starts right of the corner's text.
            fan += await page.evaluate("""() => {
                const cards = [...document.querySelectorAll('#board .waste .card')];
                return cards.slice(0, -1).map((card, i) => [card.querySelector('.corner').textContent,
                    cards[i + 1].getBoundingClientRect().left - card.querySelector('.corner').getBoundingClientRect().right]);
            }""")
        after_out = await outside(page)
        await page.screenshot(path=str(ARTIFACTS / f"play-{device}-after-draws.png"))
        await browser.close()
        await cli.close()
    print("\nscreenshots:", *(ARTIFACTS / f"play-{device}-{n}.png" for n in ("start", "hint", "after-draws")))

    assert not errors, errors
    assert [len(column) for column in shown_tableau] == [len(column) for column in dealt.tableau], shown_tableau
    assert start_out == [], start_out
    assert scroll == [0, 0], scroll
    tops = [round(box[0]) for box in header]
    assert max(tops) - min(tops) < 24, header  # code, status and clock on one line
    assert "cli" in strip, strip  # the other player's progress, while racing
    assert live == [False, False], live  # the ticking clock is never announced
    assert hint_text.startswith("Hint"), hint_text
    assert hint_box and 0 <= hint_box["y"] and hint_box["y"] + hint_box["height"] <= viewport["height"], hint_box
    assert moved == [], moved  # the foundation row stays put while the waste fans out
    assert after_out == [], after_out
    assert any(text.startswith("10") for text, _ in fan), fan  # the deal's 14th stock card is the 10♦
    assert all(gap >= 0 for _, gap in fan), [(text, gap) for text, gap in fan if gap < 0]
    assert re.fullmatch(r"[A-Z0-9]+", code)


def long_columns(seed: str, lengths: dict[int, int]) -> str:
    """The position text of ``seed``'s classic deal with stock cards dealt onto columns until column ``n`` holds
    ``lengths[n]`` cards (the same 104 cards: a valid position, as a race some way in may hold)."""
    lines = format_position(deal(seed, find_variant("classic"))).splitlines()
    stock_at = next(i for i, line in enumerate(lines) if line.startswith("Stock:"))
    stock = lines[stock_at].split()[1:]
    for i, line in enumerate(lines):
        number, _, cards = line.partition(": ")
        if number.isdigit() and int(number) in lengths:
            have = cards.split()
            more = lengths[int(number)] - len(have)
            lines[i] = f"{number}: {' '.join(have + stock[:more])}"
            stock = stock[more:]
    lines[stock_at] = "Stock: " + " ".join(stock)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("device", ["phone", "desktop"])
async def test_long_columns_shrink_their_strips_before_they_push_the_page(server, device: str) -> None:  # type: ignore[no-untyped-def]
    """Columns of 10 and 9 cards (one in each of the phone's two rows) in a solo classic game: the covered
    cards' strip shrinks (below the page's --strip-max, not below its --strip-min, so every corner stays
    readable), and every card and button is on screen with the page not scrolled."""
    _browser_available()
    from playwright.async_api import async_playwright

    created = create_match(server.url, variant="classic", deal=long_columns(CLASSIC_SEED, {1: 10, 7: 9}), players=1,
                           solvable_only=False, hints=True, autoplay=False)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = await (await browser.new_context(**(PHONE if device == "phone" else DESKTOP))).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await join(page, f"{server.url}/join/{created['code']}", "ann")
        await page.get_by_role("group", name="Column 10", exact=True).wait_for(timeout=15_000)
        await painted(page)
        lengths = await page.locator("#board [role=group][aria-label^='Column ']").evaluate_all(
            "cols => cols.map(c => c.querySelectorAll('.card').length)")
        strips = await page.evaluate("""() => { const b = document.getElementById('board'), s = getComputedStyle(b);
            const cards = document.querySelectorAll('#board [aria-label="Column 1"] .card');
            return [s.getPropertyValue('--strip-min'), s.getPropertyValue('--strip-max'),
                    cards[1].getBoundingClientRect().top - cards[0].getBoundingClientRect().top]; }""")
        out = await outside(page)
        scroll = await page.evaluate("window.scrollY")
        await page.screenshot(path=str(ARTIFACTS / f"play-{device}-long-columns.png"))
        await browser.close()
    print("\nscreenshot:", ARTIFACTS / f"play-{device}-long-columns.png", strips)

    assert not errors, errors
    assert lengths[0] == 10 and lengths[6] == 9, lengths
    least, most, strip = float(strips[0].removesuffix("px")), float(strips[1].removesuffix("px")), strips[2]
    assert least - 0.5 <= strip < most, strips
    assert out == [] and scroll == 0, (out, scroll)


RANK_NAMES = {"A": "ace", "T": "10", "J": "jack", "Q": "queen", "K": "king"}
SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
AUTOPLAY = "Play safe cards to the foundations automatically"


def card_name(card: str) -> str:
    """"TH" -> "10♥, 10 of hearts": a card button's accessible name on the play page (what it shows, then
    in words)."""
    short = ("10" if card[0] == "T" else card[0]) + SUIT_SYMBOLS[card[1]]
    return f"{short}, {RANK_NAMES.get(card[0], card[0])} of {SUIT_NAMES[card[1]]}"


async def test_the_create_form_deals_the_game_number_and_shares_the_link_before_joining(server) -> None:  # type: ignore[no-untyped-def]
    """On a phone: classic and auto-play are the defaults; a game number typed is the deal dealt (the board
    is the engine's deal of that seed, with auto-play off as chosen); the host sees the share link and Copy
    before joining (Copy puts the link on the clipboard), and still in the lobby once joined; the results
    reveal the game number as the seed."""
    _browser_available()
    from playwright.async_api import async_playwright

    variant = find_variant("classic")
    dealt = view_message(Game(deal(CLASSIC_SEED, variant), variant, autoplay=False, undo="safe").position)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = await browser.new_context(**PHONE)
        await context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await page.goto(f"{server.url}/")
        create = page.locator("#create")  # the create form (Play alone has a variant and a game number too)
        defaults = {"variant": await create.get_by_label("Variant").input_value(),
                    "autoplay": await create.get_by_label(AUTOPLAY).is_checked(),
                    "seed": await create.get_by_label("Game number").input_value()}
        await page.screenshot(path=str(ARTIFACTS / "home-phone.png"), full_page=True)
        await create.get_by_label("Players").fill("1")
        await create.get_by_label("Game number").fill(CLASSIC_SEED)
        await create.get_by_label(AUTOPLAY).uncheck()
        await page.get_by_role("button", name="Create race").click()
        await page.wait_for_url("**/join/**", timeout=10_000)
        code = page.url.rsplit("/", 1)[1]
        share = page.locator("#share-link")
        await share.wait_for(timeout=10_000)
        before_join = {"link": await share.inner_text(), "name_field": await page.get_by_label("Name").is_visible(),
                       "copy": await page.get_by_role("button", name="Copy").is_visible()}
        await page.get_by_role("button", name="Copy").click()
        await page.wait_for_function("document.getElementById('copy-note').textContent !== ''")
        clipboard = await page.evaluate("navigator.clipboard.readText()")
        await page.screenshot(path=str(ARTIFACTS / "play-phone-share.png"))
        await page.get_by_label("Name").fill("ann")
        await page.get_by_role("button", name="Join").click()
        await page.get_by_role("button", name="Ready").wait_for(timeout=10_000)
        in_lobby = await share.is_visible()
        await page.get_by_role("button", name="Ready").click()
        await page.get_by_role("group", name="Column 10", exact=True).wait_for(timeout=15_000)
        share_while_racing = await share.is_visible()
        tableau = await page.locator("#board [role=group][aria-label^='Column ']").evaluate_all(
            "cols => cols.map(c => [...c.querySelectorAll('.card')].map(b => b.getAttribute('aria-label')))")
        await page.get_by_role("button", name="Resign", exact=True).click()
        await page.get_by_role("button", name="Yes, resign").click()
        await page.get_by_role("list", name="Results").wait_for(timeout=15_000)
        revealed = await page.locator("#verify code").first.inner_text()
        await browser.close()
    print("\nscreenshots:", ARTIFACTS / "home-phone.png", ARTIFACTS / "play-phone-share.png")

    assert not errors, errors
    assert defaults == {"variant": "classic", "autoplay": True, "seed": ""}, defaults
    assert before_join == {"link": f"{server.url}/join/{code}", "name_field": True, "copy": True}, before_join
    assert clipboard == f"{server.url}/join/{code}"
    assert in_lobby and not share_while_racing
    settings = public_state(server.url, code)["settings"]
    assert (settings["variant"], settings["autoplay"], settings["chosen_deal"]) == ("classic", False, True), settings
    assert tableau == [[card_name(card) for card in column] for column in dealt.tableau], tableau
    assert revealed == CLASSIC_SEED
