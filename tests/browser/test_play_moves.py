"""How the play page is played: taps, selection, hints on the board, the keyboard, the rematch hand-over.

A real server and Redis, Debian's chromium driven by Playwright, one-player classic matches on seeds the
solver wins (``SEED`` and the few named beside it). The phone context (390x844, touch) wins a deal by tapping
cards and targets as the solver's solution says (from a position near its end where what is left still needs
every kind of tap the whole game does); a tap lifts a card with the run on it and nothing more (as patience pages
select), the selection bar says how many cards move at once and why; a hint marks its cards and target on the board
and a tap on a marked card then on the target plays it; the arrow keys move between columns and cards with
one Tab stop per pile group; after Rematch the results stay until the next round's lobby is here. Every
expected value comes from the engine (``server.engine``), never from the page. Screenshots go to
``tests/browser/artifacts/``.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import pytest

from server.engine import Game, deal, find_variant, format_position, parse_position
from server.engine.hint import hint as engine_hint
from server.engine.rules import move_limit, run_length
from server.engine.solver import Budget, solve
from server.engine.variants import PRESETS
from server.engine.view import redact
from server.views import legal_message, view_message
from tests.browser.test_layout import card_name
from tests.browser.test_play_page import (
    EVERY_KIND,
    PHONE,
    STRIP,
    command_kind,
    join,
    moves_shown,
    near_the_end,
    played_at_once,
)
from tests.browser.test_watch_page import ARGS, ARTIFACTS, CHROMIUM, _browser_available
from tests.integration.wsclient import create_match, public_state

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SEED = "38"
"""A classic deal the solver wins within 50 000 nodes in a few ms: 153 commands with auto-play, 232 without it
(where ``finish`` is offered before the last cards)."""
PHONE_SEED = "239"
"""The classic deal the phone wins by taps: of the deals up to 400 the one whose solver solution without auto-play
has ``finish`` offered soonest (201 commands with it, where seed 38 takes 232). The phone is dealt the position of
that solution from which the rest still takes every kind of tap the whole of it takes (``near_the_end``): 54
commands and Finish, each a tap or two."""
SELECTION_SEED = "116"
"""The classic deal of the selection test: its solution reaches a column with a run of 2 on a card that is not
part of it, with 2 empty columns (as seed 38's does), after 25 commands where seed 38's takes 79; the match deals
that position."""
HINT_SEED = "2"
"""The classic deal of the hint test: its solution reaches a hint of 2 cards written with their count
(``3-5x2``, as seed 38's ``5-2x2``) after 48 commands where seed 38's takes 82; the match deals that position."""
VARIANT = "classic"
DESKTOP = {"viewport": {"width": 1366, "height": 800}}


def classic_solution(autoplay: bool = True, seed: str = SEED) -> list[str]:
    variant = find_variant(VARIANT)
    result = solve(deal(seed, variant), variant, Budget(nodes=50_000), autoplay_on=autoplay)
    assert result.result == "solved"
    return list(result.moves)


def format_clock(ms: int) -> str:
    """The pages' m:ss of a time in ms (common.js formatMs, without tenths)."""
    minutes, seconds = divmod(ms // 1000, 60)
    return f"{minutes}:{seconds:02d}" if minutes < 60 else f"{minutes // 60}:{minutes % 60:02d}:{seconds:02d}"


def new_game(autoplay: bool = True, seed: str = SEED) -> Game:
    variant = find_variant(VARIANT)
    return Game(deal(seed, variant), variant, autoplay=autoplay, undo="safe")


def cards_of(game: Game, command: str) -> int:
    return next(move.cards for move in game.legal_moves() if str(move.command) == command)


def column(page: Any, n: str | int) -> Any:
    return page.get_by_role("group", name=f"Column {n}", exact=True)


async def tap_command(page: Any, game: Game, command: str) -> None:
    """Play ``command`` by taps: the stock; or the source card (as deep as the move takes cards: the tap lifts
    it with the run on it), then the target unless the page played it at once (one card, one target)."""
    if command in ("s", "r"):
        await page.get_by_role("button", name=re.compile("^Stock")).tap()
        return
    cards = cards_of(game, command)
    source, target = command.split("-")
    target = target.split("x")[0]
    if source == "w":
        await page.get_by_role("group", name="Waste").get_by_role("button").tap()
    else:
        await column(page, source).get_by_role("button").nth(-cards).tap(position=STRIP)
    if played_at_once(game, command):
        return
    where = page.get_by_role("group", name="Foundations", exact=True) if target.startswith("f") else column(page, target)
    await where.tap()


async def typed(page: Any, commands: list[str], start: int = 0) -> None:
    for i, command in enumerate(commands):
        await page.get_by_label("Command").fill(command)
        await page.get_by_label("Command").press("Enter")
        await moves_shown(page, start + i + 1)


def empty_columns(game: Game) -> int:
    position = game.position
    return sum(1 for i, c in enumerate(position.tableau) if not c and not position.hidden[i])


async def start_solo(browser: Any, url: str, context: dict[str, Any], seed: str = SEED,
                     **settings: Any) -> tuple[Any, str, list[str]]:
    """ann's page in a new ``context``, in a one-player match on ``seed`` (or the position ``deal`` of
    ``settings``) she joined and readied, its board shown: (page, match code, the page's errors)."""
    dealt = {"seed": seed} if "deal" not in settings else {}
    created = create_match(url, variant=VARIANT, players=1, **dealt, **settings)
    page = await (await browser.new_context(**context)).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    await join(page, f"{url}/join/{created['code']}", "ann")
    await column(page, 1).wait_for(timeout=15_000)
    return page, created["code"], errors


def finish_offered(game: Game) -> bool:
    return not game.is_won and any(str(x.command) == "finish" for x in game.legal_moves())


def phone_deal(seed: str = PHONE_SEED) -> tuple[str, list[str], set[str]]:
    """The solution of ``seed`` without auto-play up to where ``finish`` is offered, from where what is left
    still takes every kind of tap the whole of it does (:func:`near_the_end`): (the position text there, the
    commands left, the kinds of the whole)."""
    solution = classic_solution(autoplay=False, seed=seed)
    game = new_game(autoplay=False, seed=seed)
    offered = 0
    while not finish_offered(game):
        game.play(solution[offered])
        offered += 1
    start, dealt, kinds = near_the_end(new_game(autoplay=False, seed=seed), solution[:offered])
    return dealt, solution[start:offered], kinds


async def test_a_phone_wins_a_classic_deal_by_taps(server) -> None:  # type: ignore[no-untyped-def]
    """The solver's solution of a classic deal, played by taps at 390x844 from a position near its end where
    what is left still takes every kind of tap the whole solution does: every command lands (the move counter
    follows the engine), Finish is tapped when the engine offers it, and the winner's screen shows."""
    _browser_available()
    from playwright.async_api import async_playwright

    # Without auto-play: with it, the cards go up by themselves before Finish is ever offered.
    dealt, moves, every_kind = phone_deal()
    variant = find_variant(VARIANT)
    game = Game(parse_position(dealt, variant), variant, autoplay=False, undo="safe")
    tapped: set[str] = set()
    ARTIFACTS.mkdir(exist_ok=True)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page, code, errors = await start_solo(browser, server.url, PHONE, deal=dealt, autoplay=False)
        finished_by_button = False
        for i, command in enumerate(moves):
            tapped.add(command_kind(game, command))
            await tap_command(page, game, command)
            game.play(command)
            await moves_shown(page, i + 1)
            if finish_offered(game):
                await page.get_by_role("button", name="Finish").tap()
                game.play("finish")
                await moves_shown(page, i + 2)
                finished_by_button = True
                break
        await page.get_by_role("list", name="Results").wait_for(timeout=15_000)
        row = await page.locator("#results li[data-name=ann] .pill").text_content()
        headline = await page.locator("#headline").inner_text()
        await page.evaluate("window.scrollTo(0, 0)")
        await page.screenshot(path=str(ARTIFACTS / "play-phone-won.png"))
        await browser.close()
    print("\nscreenshot:", ARTIFACTS / "play-phone-won.png", "finish tapped:", finished_by_button)
    assert not errors, errors
    assert game.is_won
    assert finished_by_button
    assert tapped == every_kind == EVERY_KIND, (tapped, every_kind)
    # A game alone: the headline speaks to its player, with the time the server ranked.
    ranked = public_state(server.url, code)["players"][0]["time_ms"]
    assert row == "won" and headline == f"You won in {format_clock(ranked)}", (row, headline, ranked)
    state = public_state(server.url, code)
    assert [(x["status"], x["moves"]) for x in state["players"]] == [("won", game.moves)], state["players"]


def selection_position(seed: str = SELECTION_SEED) -> tuple[list[str], int, int]:
    """The solution's first commands up to a position with a column whose top run of 2 or more cards lies on
    a face-up card that is not part of it, and that run has a legal target (so targets glow):
    (commands, column index, run length)."""
    variant = find_variant(VARIANT)
    game = new_game(seed=seed)
    played: list[str] = []
    for command in classic_solution(seed=seed):
        legal = game.legal_moves()
        for i, cards in enumerate(game.position.tableau):
            hidden = game.position.hidden[i]
            run = run_length(cards, hidden, variant)
            if run >= 2 and len(cards) - hidden > run and any(
                    str(m.command).split("-")[0] == str(i + 1) and m.cards == run for m in legal):
                return played, i, run
        played.append(command)
        game.play(command)
    raise AssertionError("no such position in the solution")


async def test_a_tap_lifts_the_card_and_its_run_and_the_bar_says_how_many_move_at_once(server) -> None:  # type: ignore[no-untyped-def]
    """RULES.md section 3, as patience pages select: a tap on the card under a run that is not its own lifts
    nothing and says why; a tap on the run's lowest card lifts the run; ▲ stops at the run, ▼ shrinks it;
    the bar says "max N at once" with the engine's limit and the empty columns; only the targets the legal
    list has for the lifted count glow. The page's table of build and move rules is the engine's."""
    _browser_available()
    from playwright.async_api import async_playwright

    variant = find_variant(VARIANT)
    prefix, index, run = selection_position()
    game = new_game(seed=SELECTION_SEED)
    for command in prefix:
        game.play(command)
    n = str(index + 1)
    empty = empty_columns(game)
    limit = move_limit(variant, empty, False)
    reason = (f"max {limit} at once: {empty} empty column{'s' if empty != 1 else ''}"
              f" ({move_limit(variant, empty, True)} into an empty one)" if empty else f"max {limit} at once: no empty column")

    def lit_for(count: int) -> int:
        """Distinct legal targets of ``count`` cards from the column (the foundations as one)."""
        found = {str(m.command).split("-")[1].split("x")[0] for m in game.legal_moves()
                 if str(m.command).split("-")[0] == n and m.cards == count}
        return len({"f" if t.startswith("f") else t for t in found})

    ARTIFACTS.mkdir(exist_ok=True)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page, _code, errors = await start_solo(browser, server.url, PHONE, deal=format_position(game.position))
        rules = await page.evaluate("FTRRace.VARIANT_RULES")
        view, legal = view_message(game.position), legal_message(game.legal_moves())
        page_runs = await page.evaluate(
            "([view, legal]) => view.tableau.map((c, i) => FTRRace.runLength({view, legal, settings: {variant: 'classic'}}, i))",
            [msgspec.to_builtins(view), [[x.command, x.cards] for x in legal]])
        cards = column(page, n).get_by_role("button")
        got: dict[str, Any] = {}
        await cards.nth(-(run + 1)).tap(position=STRIP)  # under the run: not its own run on it
        got["blocked_lifted"] = await column(page, n).locator("button[aria-pressed=true]").count()
        got["blocked_text"] = await page.locator("#selection-text").inner_text()
        got["blocked_lit"] = await page.locator("#board .target").count()
        got["blocked_more"] = await page.get_by_role("button", name="one card more").is_disabled()
        await page.get_by_role("button", name="one card less").tap()  # from a card that cannot move: its run
        got["after_less"] = await column(page, n).locator("button[aria-pressed=true]").count()
        got["more_at_run"] = await page.get_by_role("button", name="one card more").is_disabled()
        got["text"] = await page.locator("#selection-text").inner_text()
        got["lit"] = await page.locator("#board .target").count()
        got["best"] = await page.locator("#board .target.best").count()
        await page.screenshot(path=str(ARTIFACTS / "play-phone-selection.png"))
        await page.get_by_role("button", name="one card less").tap()
        got["shrunk"] = await column(page, n).locator("button[aria-pressed=true]").count()
        got["lit_shrunk"] = await page.locator("#board .target").count()
        await page.get_by_role("button", name="Cancel").tap()
        await cards.nth(-run).tap(position=STRIP)  # the run's lowest card
        got["tapped_run"] = await column(page, n).locator("button[aria-pressed=true]").count()
        await browser.close()
    print("\nscreenshot:", ARTIFACTS / "play-phone-selection.png", got)
    assert not errors, errors
    assert rules == {name: [v.build_rule.value, v.move_rule.value] for name, v in PRESETS.items()}, rules
    assert page_runs == [run_length(c, h, variant) for c, h in zip(game.position.tableau, game.position.hidden)]
    assert got["blocked_lifted"] == 0 and got["blocked_lit"] == 0 and got["blocked_more"], got
    assert "cannot move" in got["blocked_text"] and got["blocked_text"].endswith(reason), (got, reason)
    assert got["after_less"] == run and got["more_at_run"], got  # ▲ stops at the run
    assert got["text"].startswith(f"{run} cards from column {n}: ") and got["text"].endswith(reason), (got, reason)
    assert got["lit"] == lit_for(run) >= 1 and got["best"] == 1, got
    assert got["shrunk"] == run - 1 and got["lit_shrunk"] == lit_for(run - 1), got
    assert got["tapped_run"] == run, got


def hint_position(seed: str = HINT_SEED) -> tuple[list[str], str, int]:
    """The solution's first commands up to a position whose hint moves 2 or more cards from a column
    (the engine's hint, from the view only): (commands, the hint, its cards)."""
    variant = find_variant(VARIANT)
    game = new_game(seed=seed)
    played: list[str] = []
    for command in classic_solution(seed=seed):
        suggested = engine_hint(redact(game.position), variant)
        if suggested and suggested.split("-")[0].isdigit():
            cards = cards_of(game, suggested)
            if cards >= 2:
                return played, suggested, cards
        played.append(command)
        game.play(command)
    raise AssertionError("no multi-card hint in the solution")


async def test_a_hint_marks_its_cards_and_target_and_a_tap_on_a_marked_card_plays_it(make_server) -> None:  # type: ignore[no-untyped-def]
    """After Hint: the message begins with "Hint: <command>", the cards the command moves (the legal list's
    count) and the target carry the hint's mark, the notation beside the target; a tap on the TOP marked
    card lifts all of them, a tap on the target plays the hint, and the marks are gone with the position.
    The server gives the one-look hint (``FTR_HINT_LEVEL=look``), so the test knows the hint in advance."""
    _browser_available()
    server = make_server(FTR_HINT_LEVEL="look")
    from playwright.async_api import async_playwright

    prefix, suggested, cards = hint_position()
    game = new_game(seed=HINT_SEED)
    for command in prefix:
        game.play(command)
    source, target = suggested.split("-")
    target = target.split("x")[0]
    ARTIFACTS.mkdir(exist_ok=True)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page, _code, errors = await start_solo(browser, server.url, PHONE, deal=format_position(game.position),
                                               hints=True)
        await page.get_by_role("button", name="Hint").tap()
        await page.wait_for_function("document.getElementById('message').textContent.startsWith('Hint')")
        got: dict[str, Any] = {"message": await page.locator("#message").inner_text()}
        got["marked"] = await column(page, source).locator(".card.hinted").count()
        got["marked_elsewhere"] = await page.locator("#board .card.hinted").count()
        where = page.get_by_role("group", name="Foundations", exact=True) if target.startswith("f") else column(page, target)
        got["target_class"] = await where.get_attribute("class")
        got["target_text"] = await where.inner_text()
        got["sr"] = await where.locator(".sr-only").all_inner_texts()
        await page.screenshot(path=str(ARTIFACTS / "play-phone-hint.png"))
        await column(page, source).get_by_role("button").nth(-1).tap(position=STRIP)  # the top marked card
        got["lifted"] = await column(page, source).locator("button[aria-pressed=true]").count()
        await where.tap()
        game.play(suggested)
        await moves_shown(page, 1)
        got["after"] = await page.locator("#board .hinted, #board .hint-target").count()
        got["tableau"] = await page.locator("#board .tableau").evaluate(
            "t => [...t.querySelectorAll('.column')].map(c => [...c.querySelectorAll('button.card:not(.slot)')]"
            ".map(b => b.getAttribute('aria-label')).length)")
        await browser.close()
    print("\nscreenshot:", ARTIFACTS / "play-phone-hint.png", got)
    assert not errors, errors
    assert got["message"].startswith(f"Hint: {suggested} (move "), got
    assert got["marked"] == got["marked_elsewhere"] == cards, got
    assert "hint-target" in got["target_class"] and suggested in got["target_text"], got
    assert f"hint target: {suggested}" in got["sr"], got
    assert got["lifted"] == cards and got["after"] == 0, got
    assert got["tableau"] == [len(c) - h for c, h in zip(game.position.tableau, game.position.hidden)], got


def one_target_column_card(game: Game) -> str:
    """A legal one-card move from a column that is that card's only move (the page plays it on Enter)."""
    legal = game.legal_moves()
    for move in legal:
        source = str(move.command).split("-")[0]
        if source.isdigit() and move.cards == 1 and sum(
                1 for other in legal if str(other.command).split("-")[0] == source and other.cards == 1) == 1:
            return str(move.command)
    raise AssertionError("no such move")


async def test_the_arrow_keys_walk_the_board_and_focus_stays_put_after_a_keyboard_move(server) -> None:  # type: ignore[no-untyped-def]
    """One Tab stop per pile group (the stock/waste/foundations row, the tableau), ArrowRight from column 1
    to column 2, ArrowUp/Down within a column; every foundation slot has its own key; a move played with
    Enter leaves the focus in its column (it used to jump to foundation 1)."""
    _browser_available()
    from playwright.async_api import async_playwright

    game = new_game()
    prefix: list[str] = []
    solution = classic_solution()
    while True:
        try:
            command = one_target_column_card(game)
            break
        except AssertionError:
            prefix.append(solution[len(prefix)])
            game.play(prefix[-1])
    source = command.split("-")[0]
    before = view_message(game.position)
    face_up = before.tableau[0]
    under_top = card_name(face_up[-2]) if len(face_up) > 1 else None
    stock_label = f"Stock: {before.stock} card{'' if before.stock == 1 else 's'}"
    focused_group = ("el => { const g = document.activeElement.closest('[role=group]');"
                     " return g ? g.getAttribute('aria-label') : document.activeElement.id; }")
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page, _code, errors = await start_solo(browser, server.url, DESKTOP)
        await typed(page, prefix)
        got: dict[str, Any] = {}
        got["tab_stops"] = await page.locator("#board button[tabindex='0']").count()
        got["slot_keys"] = await page.get_by_role("group", name="Foundations").locator("button").evaluate_all(
            "bs => bs.map(b => b.dataset.key)")
        await column(page, 1).get_by_role("button").nth(-1).focus()
        await page.keyboard.press("ArrowRight")
        got["right"] = await page.evaluate(focused_group)
        await page.keyboard.press("ArrowLeft")
        got["left"] = await page.evaluate(focused_group)
        await page.keyboard.press("ArrowUp")
        got["up_label"] = await page.evaluate("document.activeElement.getAttribute('aria-label')")
        got["tab_stops_after"] = await page.locator("#board button[tabindex='0']").count()
        await column(page, source).get_by_role("button").nth(-1).focus()
        await page.keyboard.press("Enter")
        game.play(command)
        await moves_shown(page, len(prefix) + 1)
        await page.wait_for_timeout(100)
        got["after_move"] = await page.evaluate(focused_group)
        await browser.close()
    assert not errors, errors
    assert got["tab_stops"] == 2 and got["tab_stops_after"] == 2, got
    assert got["slot_keys"] == [f"f{i}" for i in range(1, 9)], got
    assert (got["right"], got["left"]) == ("Column 2", "Column 1"), got
    # ArrowUp from column 1's top card: the card under it, or the top row's stop when it is the only one
    assert got["up_label"] == (under_top or stock_label), (got, under_top)
    assert got["after_move"] == f"Column {source}", got


async def test_after_rematch_the_results_stay_until_the_next_rounds_lobby_is_here(server) -> None:  # type: ignore[no-untyped-def]
    """A solo round ends (resigned); Rematch: the page keeps the results on screen after the server's
    ``next_round`` and hides them only once the next round's connection has its first lobby (or later)
    frame; then the new round's code is in the address bar."""
    _browser_available()
    from playwright.async_api import async_playwright

    # Every frame each WebSocket of the page receives, decoded, with the instant; the instant the results
    # panel is hidden again.
    spy = """
      window.__frames = [];
      const Native = window.WebSocket;
      window.WebSocket = function (...args) {
        const ws = new Native(...args);
        const socket = window.__sockets = (window.__sockets || 0) + 1;
        ws.addEventListener('message', (e) => {
          try { window.__frames.push({socket, type: MessagePack.decode(new Uint8Array(e.data)).type, t: performance.now()}); }
          catch (error) {}
        });
        return ws;
      };
      window.WebSocket.prototype = Native.prototype;
      Object.assign(window.WebSocket, {OPEN: Native.OPEN, CLOSED: Native.CLOSED, CONNECTING: Native.CONNECTING});
    """
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = await browser.new_context(**DESKTOP)
        await context.add_init_script(spy)
        created = create_match(server.url, variant=VARIANT, seed=SEED, players=1)
        code = created["code"]
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await join(page, f"{server.url}/join/{code}", "ann")
        await column(page, 1).wait_for(timeout=15_000)
        await page.get_by_role("button", name="Resign", exact=True).click()
        await page.get_by_role("button", name="Yes, resign").click()
        await page.get_by_role("list", name="Results").wait_for(timeout=15_000)
        await page.evaluate("""() => { const panel = document.getElementById('results-panel');
          new MutationObserver(() => { if (panel.hidden && !window.__hiddenAt) window.__hiddenAt = performance.now(); })
            .observe(panel, {attributes: true}); }""")
        await page.get_by_role("button", name="Rematch").click()
        await page.wait_for_function(f"!location.pathname.endsWith('/{code}')", timeout=15_000)
        await column(page, 1).wait_for(timeout=20_000)
        frames = await page.evaluate("window.__frames")
        hidden_at = await page.evaluate("window.__hiddenAt || 0")
        await browser.close()
    assert not errors, errors
    next_round = next(f for f in frames if f["type"] == "next_round")
    later = [f for f in frames if f["socket"] > next_round["socket"]]
    arrived = next(f for f in later if f["type"] in ("lobby", "countdown", "started"))
    assert hidden_at >= arrived["t"] > next_round["t"], (hidden_at, arrived, next_round)


async def test_the_hinted_target_is_the_best_target_while_the_hint_shows(server) -> None:  # type: ignore[no-untyped-def]
    """With two columns that take the lifted card, the best target (the second tap's, the bar's "best") is
    the lowest numbered one; while a hint names the other, the hint's is the best, so that tapping the hinted
    card twice plays the hint. FTRRace.targets on the page, given a view and the legal list."""
    _browser_available()
    from playwright.async_api import async_playwright

    tableau: list[list[str]] = [["9C"], ["TC"], [], ["KD"], ["KD"], ["KD"], ["KD"], ["TC"], ["KD"], ["KD"]]
    view = {"tableau": tableau, "hidden": [0] * 10, "foundations": ["-"] * 8, "stock": 0, "waste": [],
            "redeals_left": 0}
    legal = [["1-2", 1], ["1-3", 1], ["1-8", 1]]
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = await (await browser.new_context(**PHONE)).new_page()
        await page.goto(f"{server.url}/join/NOSUCHMATCH")
        await page.wait_for_function("typeof FTRRace === 'object'")
        order = """([view, legal, hint]) => FTRRace.targets({view, legal, hint: hint && {command: hint}},
                                                       {source: '1', count: 1}).map((t) => t.command)"""
        plain = await page.evaluate(order, [view, legal, None])
        hinted = await page.evaluate(order, [view, legal, "1-8"])
        await browser.close()
    assert plain == ["1-2", "1-8", "1-3"], plain  # onto a card first (the lower column), an empty column last
    assert hinted == ["1-8", "1-2", "1-3"], hinted
