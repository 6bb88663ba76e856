"""The play page (/join/{code}) in a real headless browser: people race from a link.

A real server and Redis, Debian's chromium driven by Playwright (never
``playwright install``), the page read by roles and labels. Two browser
contexts (a desktop and a phone) join one match by name, ready and race: the
desktop wins a relaxed deal by playing the solver's solution through clicks on
cards and targets (from a position near its end where what is left still takes
every kind of click the whole solution does), the phone resigns; both see the
ranked results with the dealt position checked against the commitment; both press Rematch and round 2 starts
with a new deal. A browser player and a protocol client in one match see each
other's progress and the same results, and nothing the page receives before
the end names a card it cannot see or the seed. The notation port gives the
Python client's answers. Screenshots go to ``tests/browser/artifacts/``
(gitignored); their paths are printed.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import pytest

from client_cli.commands import resolve
from protocol import messages as m
from server.engine import Game, deal, find_variant, format_position, parse_position
from server.views import legal_message, view_message
from tests.browser.test_watch_page import ARGS, ARTIFACTS, CHROMIUM, _browser_available
from tests.integration.test_no_leaks import CARD, script_for, strings_in, visible_cards
from tests.integration.test_race import SEED, VARIANT, solution
from tests.integration.wsclient import Player, create_match, public_state

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

DESKTOP = {"viewport": {"width": 1280, "height": 900}}
STRIP = {"x": 12, "y": 8}
"""Where a person clicks a card that lies under others: the strip at its top that stays visible."""
RACE_SEED = "345"
"""The relaxed deal the desktop wins by clicks in the race from a link: of the deals up to 500 the one whose solver
solution is the shortest (141 commands; seed 4's has 215). The match deals the position of that solution from which
the rest still takes every kind of click the whole of it takes (:func:`near_the_end`): its last 41 commands, each
a click or two and a wait."""

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}


async def join(page: Any, url: str, name: str) -> None:
    """Open the link, type the name, Join, Ready (by label and role, as a person would)."""
    await page.goto(url)
    await page.get_by_label("Name").fill(name)
    await page.get_by_role("button", name="Join").click()
    await page.get_by_role("button", name="Ready").click()


async def moves_shown(page: Any, count: int) -> None:
    """Wait until the page's move counter says ``count``; failing, say what the page showed instead (its
    counter, its message line, its selection and its connection state), so a failure under load tells why."""
    try:
        await page.wait_for_function(f"document.getElementById('moves')?.textContent === '{count}'",
                                     timeout=10_000)
    except Exception as error:  # playwright's TimeoutError: re-raised with what the page showed
        shown = await page.evaluate("""() => ({
            moves: document.getElementById('moves')?.textContent,
            message: document.getElementById('message')?.textContent,
            selection: document.getElementById('selection')?.textContent,
            state: document.getElementById('state')?.textContent })""")
        raise AssertionError(f"the page did not show {count} moves: {shown}") from error


def played_at_once(game: Game, command: str) -> bool:
    """Whether the page plays ``command`` on a click or tap of its source card alone: a single card with one
    possible target."""
    legal = game.legal_moves()
    cards = next(move.cards for move in legal if str(move.command) == command)
    source = command.split("-")[0]
    return cards == 1 and sum(1 for move in legal if str(move.command).split("-")[0] == source and move.cards == 1) == 1


EVERY_KIND = {"stock", "waste at once", "waste to foundations", "waste to column", "waste to empty column",
              "card at once", "card to foundations", "card to column", "run to column", "run to empty column"}
"""The kinds of :func:`command_kind` the race's and the phone's solutions take: every one a game can take but
Finish and a lone card of a column moved onto an empty column (a run goes up one card at a time, so never onto
the foundations)."""


def command_kind(game: Game, command: str) -> str:
    """What a person clicks or taps for ``command`` on ``game``'s position (:func:`click_command`), as words: the
    stock, or Finish; else the source (the waste, a column's card, a run of cards), played at once or followed by
    its target (the foundations, a column, an empty column)."""
    if command in ("s", "r", "finish"):
        return "stock" if command != "finish" else "finish"
    source, target = command.split("-")
    cards = next(move.cards for move in game.legal_moves() if str(move.command) == command)
    what = "waste" if source == "w" else "run" if cards > 1 else "card"
    if played_at_once(game, command):
        return f"{what} at once"
    target = target.split("x")[0]
    onto = ("foundations" if target.startswith("f") else
            "empty column" if not game.position.tableau[int(target) - 1] else "column")
    return f"{what} to {onto}"


def near_the_end(game: Game, commands: list[str]) -> tuple[int, str, set[str]]:
    """Where in ``commands`` (played from ``game``'s position, which they leave played) what is left still
    takes every kind of click or tap (:func:`command_kind`) the whole of them takes: (that index, the position
    text there, the kinds of the whole)."""
    positions, kinds = [], []
    for command in commands:
        positions.append(format_position(game.position))
        kinds.append(command_kind(game, command))
        game.play(command)
    start = max(i for i in range(len(kinds)) if set(kinds[i:]) == set(kinds))
    return start, positions[start], set(kinds)


async def click_command(page: Any, game: Game, command: str) -> None:
    """Play ``command`` by clicking: the source card (as many from the top as the legal list says the move
    takes), then the target unless the page sent it at once (a single card with one possible target)."""
    if command in ("s", "r"):
        await page.get_by_role("button", name=re.compile("^Stock")).click()
        return
    if command == "finish":
        await page.get_by_role("button", name="Finish").click()
        return
    cards = next(move.cards for move in game.legal_moves() if str(move.command) == command)
    source, target = command.split("-")
    target = target.split("x")[0]
    if source == "w":
        await page.get_by_role("group", name="Waste").get_by_role("button").click()
    else:
        await page.get_by_role("group", name=f"Column {source}", exact=True).get_by_role("button").nth(-cards).click(position=STRIP)
    if played_at_once(game, command):
        return  # one card, one possible target: it goes at once
    where = "Foundations" if target.startswith("f") else f"Column {target}"
    await page.get_by_role("group", name=where, exact=True).click()


async def test_two_browsers_race_from_a_link_then_rematch(server) -> None:  # type: ignore[no-untyped-def]
    _browser_available()
    from playwright.async_api import async_playwright

    variant = find_variant(VARIANT)
    whole = solution(RACE_SEED)
    start, dealt, every_kind = near_the_end(Game(deal(RACE_SEED, variant), variant, autoplay=True, undo="safe"), whole)
    moves = whole[start:]
    live_at = len(moves) // 2  # the command after which bob's phone is looked at
    clicked: set[str] = set()
    ARTIFACTS.mkdir(exist_ok=True)
    created = create_match(server.url, variant=VARIANT, deal=dealt, players=2)
    code = created["code"]
    link = f"{server.url}/join/{code}"

    async def run() -> None:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            ann_context, bob_context = await browser.new_context(**DESKTOP), await browser.new_context(**PHONE)
            ann, bob = await ann_context.new_page(), await bob_context.new_page()
            errors: list[str] = []
            for page in (ann, bob):
                page.on("pageerror", lambda error: errors.append(str(error)))
            # ann created the match: the host token is in her browser's local storage, as / leaves it.
            await ann.goto(f"{server.url}/")
            await ann.evaluate(f"localStorage.setItem('ftr:host:{code}', '{created['host_token']}')")
            await join(ann, link, "ann")
            host_start = await ann.get_by_role("button", name="Start").is_visible()
            await join(bob, link, "bob")
            bob_start = await bob.get_by_role("button", name="Start").is_visible()
            await ann.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=15_000)
            await bob.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=15_000)
            deal_round_1 = await ann.locator("#board .tableau").inner_text()
            # The match was dealt from the host's seed: bob is told (ann may have seen the deal before).
            chosen_round_1 = await bob.locator("#chosen-chip").inner_text()

            game = Game(parse_position(dealt, variant), variant, autoplay=True, undo="safe")
            shot_taken = False
            for i, command in enumerate(moves):
                clicked.add(command_kind(game, command))
                if not shot_taken and "-" in command and command[0] != "w":
                    # a selection with its targets lit, for the screenshot
                    cards = next(mv.cards for mv in game.legal_moves() if str(mv.command) == command)
                    source = command.split("-")[0]
                    column = ann.get_by_role("group", name=f"Column {source}", exact=True)
                    await column.get_by_role("button").nth(-cards).click(position=STRIP)
                    if await ann.locator("#selection").is_visible():
                        await ann.screenshot(path=str(ARTIFACTS / "play-selection.png"), full_page=True)
                        lifted = await column.locator("button[aria-pressed=true]").count()
                        lit = await ann.locator(".target").count()
                        best_marked = await ann.locator(".target.best").count()
                        await ann.get_by_role("button", name="Cancel").click()
                        shot_taken = True
                        assert (lifted, best_marked) == (cards, 1) and lit >= 1, (lifted, lit, best_marked)
                    else:  # it went at once; that is this move
                        game.play(command)
                        await moves_shown(ann, i + 1)
                        continue
                await click_command(ann, game, command)
                game.play(command)
                await moves_shown(ann, i + 1)
                if i == live_at:
                    # bob's phone shows ann's progress live
                    await bob.wait_for_function(
                        f"document.querySelector('#race tr[data-name=ann] .moves')?.textContent === '{i + 1}'")
                    await bob.screenshot(path=str(ARTIFACTS / "play-phone.png"), full_page=True)
                    overflow = await bob.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                    columns_top = await bob.locator("#board .column").evaluate_all(
                        "cols => cols.map(c => Math.round(c.getBoundingClientRect().top))")
            assert game.is_won
            assert clicked == every_kind == EVERY_KIND, (clicked, every_kind)
            await bob.get_by_role("button", name="Resign", exact=True).click()
            await bob.get_by_role("button", name="Yes, resign").click()
            for page in (ann, bob):
                await page.get_by_role("list", name="Results").wait_for(timeout=15_000)
                await page.locator("#verified").wait_for(timeout=10_000)
            ranking = [await page.get_by_role("list", name="Results").get_by_role("listitem").evaluate_all(
                "items => items.map(i => [i.querySelector('.rank').textContent, i.dataset.name,"
                " i.querySelector('.pill').textContent])") for page in (ann, bob)]
            verified = [await page.locator("#verified").inner_text() for page in (ann, bob)]
            await ann.screenshot(path=str(ARTIFACTS / "play-results.png"), full_page=True)
            await bob.screenshot(path=str(ARTIFACTS / "play-results-phone.png"), full_page=True)

            # Rematch: both press it; round 2 is a new match with a new deal, its link in the address bar.
            await ann.get_by_role("button", name="Rematch").click()
            await bob.get_by_role("button", name="Rematch").click()
            for page in (ann, bob):
                await page.wait_for_function(f"!location.pathname.endsWith('/{code}')", timeout=15_000)
                await page.locator("#round-chip").wait_for(timeout=15_000)
                await page.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=20_000)
            round_codes = [ann.url.rsplit("/", 1)[1], bob.url.rsplit("/", 1)[1]]
            round_chip = await ann.locator("#round-chip").inner_text()
            chosen_round_2 = [await page.locator("#chosen-chip").count() for page in (ann, bob)]
            deal_round_2 = await ann.locator("#board .tableau").inner_text()
            moves_round_2 = await ann.locator("#moves").inner_text()
            await ann.screenshot(path=str(ARTIFACTS / "play-round-2.png"), full_page=True)
            # Both give round 2 up: the series standings (rounds won, cards, time) appear on the page.
            for page in (ann, bob):
                await page.get_by_role("button", name="Resign", exact=True).click()
                await page.get_by_role("button", name="Yes, resign").click()
            series_table = ann.get_by_role("table", name="Series standings")
            await series_table.wait_for(timeout=15_000)
            headline = await ann.locator("#headline").inner_text()  # both resigned: nobody won
            series_rows = await series_table.locator("tbody tr").evaluate_all(
                "rows => rows.map(r => [r.dataset.name, r.children[1].textContent])")
            await ann.screenshot(path=str(ARTIFACTS / "play-series.png"), full_page=True)
            await browser.close()
            print("\nscreenshots:", *(ARTIFACTS / n for n in ("play-selection.png", "play-phone.png", "play-results.png",
                                                           "play-results-phone.png", "play-round-2.png",
                                                           "play-series.png")))

            assert not errors, errors
            assert host_start and not bob_start  # only the host's browser holds the host token
            assert ranking[0] == ranking[1] == [["1", "ann", "won"], ["2", "bob", "resigned"]], ranking
            assert all("equals the commitment" in text for text in verified), verified
            assert overflow <= 0, f"the phone page scrolls sideways by {overflow} px"
            assert len(set(columns_top)) == 2 and columns_top.count(min(columns_top)) == 5, columns_top
            assert round_codes[0] == round_codes[1] != code and round_chip == "round 2"
            assert chosen_round_1 == "deal chosen by the host" and chosen_round_2 == [0, 0]  # the server drew round 2's
            assert moves_round_2 == "0" and deal_round_2 != deal_round_1
            state = public_state(server.url, round_codes[0])
            assert state["round"] == 2 and state["state"] == "finished", state
            assert state["series"]["rounds"][:2] == [code, round_codes[0]], state["series"]
            assert dict(series_rows)["ann"] == "1" and dict(series_rows)["bob"] == "0", series_rows
            assert "wins" not in headline and "Nobody won" in headline and " first with " in headline, headline
            assert series_rows == [[row["name"], str(row["rounds_won"])]
                                   for row in public_state(server.url, round_codes[0])["series"]["standings"]]
            first = public_state(server.url, code)
            assert first["next_round"] == round_codes[0]

    await run()


async def test_a_browser_and_a_protocol_client_see_each_other_and_the_page_gets_only_the_redacted_protocol(
        server) -> None:  # type: ignore[no-untyped-def]
    """``web`` plays in the browser (typed notation, clicks on Draw), ``cli`` over a plain WebSocket; each sees
    the other's progress, both get the same results. Every frame the page's WebSocket received before the
    results is checked as the leak test checks a client's: it names no card either player cannot see, holds
    no seed, and every view and legal list is the engine's redacted one for web's game."""
    _browser_available()
    from playwright.async_api import async_playwright

    variant_name = "emperor"  # face-down cards: a leak of one would show
    seed = "page-leak-check-5d1e"
    variant = find_variant(variant_name)
    start = deal(seed, variant)
    script = script_for(start, variant_name)[:12]
    created = create_match(server.url, variant=variant_name, seed=seed, players=2, solvable_only=False)
    code = created["code"]

    async def run() -> None:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = await (await browser.new_context(**DESKTOP)).new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            frames: list[bytes] = []
            page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(
                payload if isinstance(payload, bytes) else payload.encode())))
            await join(page, f"{server.url}/join/{code}", "web")
            cli = Player(server.ws_url)
            await cli.connect()
            await cli.join(code, "cli")
            await cli.send(m.Ready())
            started = await cli.expect(m.Started)
            cli.seq = started.seq
            await page.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=15_000)
            web = Game(start, variant, autoplay=True, undo="safe")
            them = Game(start, variant, autoplay=True, undo="safe")
            seen_web: list[int] = []
            for i, command in enumerate(script):
                if command == "s" and i % 2:
                    await page.get_by_role("button", name="Draw").click()
                else:
                    await page.get_by_label("Command").fill(command)
                    await page.get_by_label("Command").press("Enter")
                web.play(command)
                await moves_shown(page, i + 1)
                if i < 4:
                    reply = await cli.play(command)
                    assert isinstance(reply, m.PositionReply), reply
                    them.play(command)
                    await page.wait_for_function(
                        f"document.querySelector('#race tr[data-name=cli] .moves')?.textContent === '{i + 1}'")
                progress = [x for x in await cli.drain(0.05) if isinstance(x, m.Progress) and x.name == "web"]
                seen_web += [x.moves for x in progress]
            # a refused command shows the server's reason and changes nothing
            await page.get_by_label("Command").fill("9-9")
            await page.get_by_label("Command").press("Enter")
            await page.wait_for_function("document.getElementById('message').textContent.startsWith('9-9')")
            refused = await page.locator("#message").inner_text()
            moves_after = await page.locator("#moves").inner_text()
            before_end = len(frames)
            await cli.resign()
            await page.get_by_role("button", name="Resign", exact=True).click()
            await page.get_by_role("button", name="Yes, resign").click()
            results = await cli.expect(m.Results)
            await page.get_by_role("list", name="Results").wait_for(timeout=15_000)
            shown = await page.get_by_role("list", name="Results").get_by_role("listitem").evaluate_all(
                "items => items.map(i => [Number(i.querySelector('.rank').textContent), i.dataset.name])")
            await browser.close()
            await cli.close()

            assert not errors, errors
            assert seen_web and seen_web == sorted(seen_web) and seen_web[-1] == len(script), seen_web
            assert shown == [[row.rank, row.name] for row in results.ranking]
            assert refused.startswith("9-9: ") and moves_after == str(len(script))
            # The leak check on what the page received before the end.
            visible = visible_cards(web) | visible_cards(them)
            replay = Game(start, variant, autoplay=True, undo="safe")
            played = 0
            decoded = [msgspec.msgpack.decode(frame) for frame in frames[:before_end]]
            assert any(f.get("type") == "started" for f in decoded) and any(f.get("type") == "progress" for f in decoded)
            for frame, raw in zip(frames[:before_end], decoded, strict=True):
                assert seed.encode() not in frame and b"Stock:" not in frame
                hidden = {card for s in strings_in(raw) for card in CARD.findall(s)} - visible
                assert not hidden, f"the page got a frame naming cards it cannot see: {hidden}: {raw}"
                message = msgspec.msgpack.decode(frame, type=m.ServerMessage)
                if isinstance(message, m.PositionReply) and message.command != "9-9":
                    replay.play(script[played])
                    played += 1
                if isinstance(message, (m.Started, m.PositionReply)):
                    assert isinstance(message.view.stock, int)
                    assert message.view == view_message(replay.position)
                    assert message.legal == legal_message(replay.legal_moves())
            assert played == len(script)

    await run()


NOTATION_CASES = ["3-7", "37", "3 7", "3 7 2", "3 7x2", "3-7 x2", "w7", "w 7", "wf", "3f", "3 f2", "f3 5", "d",
                  "draw", "redeal", "undo", "fin", "finish", "s", "S", "u", "1", "2", "w", "112", "9", "10", "0",
                  "03-7", "3-7x0", "w-f", "W-F", "f1-f2", "hint", "?", "resign", "give up", "q", "ready", "start",
                  "x", "3>7", "3,7", "", "  2  ", "1-10", "110", "3-7x2", "5-f2", "w-f2", "f3-5"]


async def test_the_command_field_reads_what_the_command_line_client_reads(server) -> None:  # type: ignore[no-untyped-def]
    """notation.js is a port of client_cli.commands.resolve: on a real position and its legal list, every
    form gives the same action and command (and the same message for refusals)."""
    _browser_available()
    from playwright.async_api import async_playwright

    variant = find_variant(VARIANT)
    game = Game(deal(SEED, variant), variant, autoplay=True, undo="safe")
    for command in solution()[:40]:
        game.play(command)
    view, legal = view_message(game.position), legal_message(game.legal_moves())
    expected = [resolve(text, legal, view) for text in NOTATION_CASES]
    wire_view = msgspec.to_builtins(view)
    wire_legal = [[x.command, x.cards] for x in legal]

    async def run() -> list[dict[str, str]]:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = await browser.new_page()
            await page.goto(f"{server.url}/join/none-such")
            await page.wait_for_function("typeof FTRNotation === 'object'")
            got = await page.evaluate("([cases, legal, view]) => cases.map(c => FTRNotation.resolve(c, legal, view))",
                                      [NOTATION_CASES, wire_legal, wire_view])
            await browser.close()
            return got

    got = await run()
    for text, want, have in zip(NOTATION_CASES, expected, got, strict=True):
        assert have["action"] == want.action, (text, want, have)
        assert have.get("command", "") == want.command, (text, want, have)
        assert have.get("message", "") == want.message, (text, want, have)


DAILY_DB = 10
"""The daily tests' own Redis database (flushed): the daily challenge's keys are global to a database."""


def daily_server(redis_url: str, secret: str) -> Any:
    """A server process of its own on :data:`DAILY_DB` (emptied first), with the daily's secret ``secret`` and
    the relaxed daily only; end it with :func:`stop_daily_server`."""
    import redis

    from tests.integration.conftest import ServerProcess

    url = redis_url.rsplit("/", 1)[0] + f"/{DAILY_DB}"
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    return ServerProcess(url, FTR_DAILY_SECRET=secret, FTR_DAILY_VARIANTS="relaxed")


def stop_daily_server(server: Any) -> None:
    """Stop a :func:`daily_server` and empty its database again."""
    import redis

    server.stop()
    with redis.Redis.from_url(server.env["REDIS_URL"]) as client:
        client.flushdb()


async def test_the_daily_page_plays_todays_deal_on_the_play_page(redis_url) -> None:  # type: ignore[no-untyped-def]
    """/daily: a name and "Play today's relaxed deal" -> the play page, the deal dealt (no countdown), the name
    token kept in local storage; a reload resumes the same attempt."""
    _browser_available()
    from playwright.async_api import async_playwright

    server = daily_server(redis_url, "play page test")

    async def run() -> None:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = await (await browser.new_context(**DESKTOP)).new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(server.url + "/daily")
            panel = page.locator('section[data-variant="relaxed"]')
            await panel.get_by_label("Name").fill("dora")
            await panel.get_by_role("button", name="Play today's relaxed deal").click()
            await page.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=30_000)
            match = page.url.rsplit("/", 1)[1]
            await page.get_by_label("Command").fill("s")
            await page.get_by_label("Command").press("Enter")
            await moves_shown(page, 1)
            names = await page.evaluate("JSON.parse(localStorage.getItem('ftr:players'))")
            # the attempt claimed the name: its recovery code came along (kept out of the way while racing)
            code_shown = await page.evaluate("document.getElementById('recovery-code')?.textContent || ''")
            await page.reload()
            await moves_shown(page, 1)  # resumed, not joined anew
            code_again = await page.locator("#recovery-code").count()  # shown once
            await page.screenshot(path=str(ARTIFACTS / "play-daily.png"), full_page=True)
            await browser.close()
            assert not errors, errors
            assert set(names) == {"dora"} and names["dora"]  # the name's player key
            assert len(code_shown) >= 12 and code_shown not in names["dora"] and code_again == 0, code_shown
            state = public_state(server.url, match)
            assert [(x["name"], x["moves"], x["status"]) for x in state["players"]] == [("dora", 1, "playing")]

    ARTIFACTS.mkdir(exist_ok=True)
    try:
        await run()
    finally:
        stop_daily_server(server)


async def test_a_code_typed_in_lower_case_races_and_a_reload_keeps_every_counter(server) -> None:  # type: ignore[no-untyped-def]
    """A friend types the code in lower case on ``/``: the play page takes the server's spelling of it (so
    the token saved at ``joined`` is found again), says "not joined" until the name is in, and after a
    reload mid-game shows the moves, the undos and the race table's own row as the server has them (the
    engine replays the same commands to say what they are); a game of one nobody won is not called a win, nor
    a race nobody won."""
    _browser_available()
    from playwright.async_api import async_playwright

    variant = find_variant(VARIANT)
    created = create_match(server.url, variant=VARIANT, seed=SEED, players=1)
    code = created["code"]
    assert code.lower() != code  # the form of today's codes: capitals (else this test shows nothing)
    game = Game(deal(SEED, variant), variant, autoplay=True, undo="safe")
    commands: list[str] = []
    for command in solution():
        commands.append(command)
        game.play(command)
        if command not in ("s", "r") and game.undo_refusal() is None:
            break
    commands.append("u")
    game.play("u")
    foundation = game.position.foundation_cards

    async def run() -> None:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = await (await browser.new_context(**DESKTOP)).new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(f"{server.url}/")
            await page.get_by_label("Match code").fill(code.lower())
            await page.get_by_role("button", name="Join").click()
            await page.wait_for_function(f"location.pathname === '/join/{code}'", timeout=10_000)
            await page.wait_for_function("document.getElementById('state').textContent === 'not joined'")
            visitor = [await page.locator(s).text_content() for s in ("#state", "#subline")]
            await page.get_by_label("Name").fill("ann")
            await page.get_by_role("button", name="Join").click()
            await page.get_by_role("button", name="Ready").click()
            await page.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=15_000)
            for i, command in enumerate(commands):
                await page.get_by_label("Command").fill(command)
                await page.get_by_label("Command").press("Enter")
                await moves_shown(page, i + 1)
            before = await page.locator("#counters").inner_text()
            await page.reload()
            await page.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=15_000)
            await moves_shown(page, game.moves)
            after = await page.locator("#counters").inner_text()
            row = await page.locator("#race tr[data-name=ann]").evaluate(
                "r => [r.querySelector('.moves').textContent, r.querySelector('.foundation').textContent]")
            await page.get_by_role("button", name="Resign", exact=True).click()
            await page.get_by_role("button", name="Yes, resign").click()
            await page.get_by_role("list", name="Results").wait_for(timeout=15_000)
            headline = await page.locator("#headline").inner_text()
            line = await page.locator("#results li[data-name=ann] .line").inner_text()
            send_disabled = await page.get_by_role("button", name="Send").is_disabled()
            await page.screenshot(path=str(ARTIFACTS / "play-resumed-nobody-won.png"), full_page=True)
            await browser.close()

            assert not errors, errors
            assert visitor == ["not joined", "Type your name to join"], visitor
            assert before == after, (before, after)
            assert " ".join(after.split()) == f"Moves {game.moves} Foundations {foundation} Undos {game.undos}", after
            assert game.undos == 1
            assert row == [str(game.moves), str(foundation)], row
            def plural(n: int, word: str) -> str:
                return f"{n} {word}{'' if n == 1 else 's'}"

            assert headline == f"Your game: resigned with {plural(foundation, 'card')} up", headline  # a game of one
            words = line.split(" · ")
            assert (words[:2], words[3:]) == ([plural(foundation, "card"), plural(game.moves, "move")], ["1 undo"]), line
            assert send_disabled  # the game is over: the Command field and its button both

    ARTIFACTS.mkdir(exist_ok=True)
    await run()


async def test_a_tab_whose_game_another_tab_took_over_says_so_stops_and_takes_it_back(server) -> None:  # type: ignore[no-untyped-def]
    """The same player opens the link in a second tab (one browser, one saved token): the server replaces the
    first tab's connection (close 4000). The first tab must not go on looking live with every control
    enabled while its clicks go nowhere: it says the game is open elsewhere, disables the board and offers
    Play here, which resumes the game there (and the second tab is then the one that says so)."""
    _browser_available()
    from playwright.async_api import async_playwright

    created = create_match(server.url, variant=VARIANT, seed=SEED, players=1)
    link = f"{server.url}/join/{created['code']}"

    async def run() -> dict[str, Any]:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            context = await browser.new_context(**DESKTOP)
            first = await context.new_page()
            errors: list[str] = []
            first.on("pageerror", lambda error: errors.append(str(error)))
            await first.goto(link)
            await first.get_by_label("Name").fill("ann")
            await first.get_by_role("button", name="Join").click()
            await first.get_by_role("button", name="Ready").wait_for(timeout=10_000)
            lobby_note = await first.locator("#lobby-note").inner_text()
            await first.get_by_role("button", name="Ready").click()
            await first.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=15_000)
            second = await context.new_page()
            second.on("pageerror", lambda error: errors.append(str(error)))
            await second.goto(link)
            await second.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=15_000)
            take_back = first.get_by_role("button", name="Play here")
            await take_back.wait_for(timeout=10_000)
            got: dict[str, Any] = {
                "lobby_note": lobby_note,
                "state": await first.locator("#state").text_content(),
                "message": await first.locator("#message").inner_text(),
                "draw_disabled": await first.get_by_role("button", name="Draw").is_disabled(),
                "command_disabled": await first.get_by_label("Command").is_disabled(),
            }
            await first.get_by_role("button", name=re.compile("^Stock")).click()  # a click that would go nowhere
            await first.wait_for_timeout(300)
            await first.screenshot(path=str(ARTIFACTS / "play-taken-over.png"), full_page=True)
            await take_back.click()
            await second.get_by_role("button", name="Play here").wait_for(timeout=10_000)
            await first.wait_for_function("document.getElementById('state').textContent === 'live'", timeout=10_000)
            got["message_back"] = await first.locator("#message").inner_text()
            got["moves_after_dead_click"] = await first.locator("#moves").inner_text()
            got["first_take_back_hidden"] = await take_back.is_hidden()
            await first.get_by_role("button", name="Draw").click()
            await moves_shown(first, 1)
            got["second_draw_disabled"] = await second.get_by_role("button", name="Draw").is_disabled()
            await browser.close()
            got["errors"] = errors
            return got

    ARTIFACTS.mkdir(exist_ok=True)
    got = await run()
    assert got["errors"] == [], got["errors"]
    assert got["lobby_note"] == "relaxed · 1 player · undo safe", got
    assert got["state"] == "open elsewhere", got
    assert "another tab or device" in got["message"] and "Play here" in got["message"], got
    assert got["draw_disabled"] and got["command_disabled"], got
    assert got["moves_after_dead_click"] == "0", got  # the click on the stopped tab sent nothing
    assert got["message_back"] == "", got  # the game is back: nothing says it was taken over any more
    assert got["first_take_back_hidden"] and got["second_draw_disabled"], got


async def test_a_lobby_the_server_lost_says_so_at_ready_and_the_page_stops(  # type: ignore[no-untyped-def]
        make_own_server, own_redis_url) -> None:
    """A player waits in a lobby; Redis loses the match's keys; the player clicks Ready. The page says the server
    lost the match (the server's message, ``no_match`` and close 4004; "the match no longer exists" was shown
    before, with the page still in its lobby), disables Ready and opens no new connection."""
    _browser_available()
    import redis
    from playwright.async_api import async_playwright

    from server.core.player import MATCH_GONE

    server = make_own_server()
    created = create_match(server.url, variant=VARIANT, seed=SEED, players=2)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = await browser.new_page(**DESKTOP)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        sockets: list[str] = []
        page.on("websocket", lambda ws: sockets.append(ws.url))
        await page.goto(f"{server.url}/join/{created['code']}")
        await page.get_by_label("Name").fill("ann")
        await page.get_by_role("button", name="Join").click()
        await page.get_by_role("button", name="Ready").wait_for(timeout=10_000)
        with redis.Redis.from_url(own_redis_url) as client:
            client.delete(*client.scan_iter(f"{{m:{created['code']}}}:*"))
        await page.get_by_role("button", name="Ready").click()
        await page.wait_for_function("document.getElementById('state').textContent === 'lost'", timeout=4_000)
        await page.wait_for_timeout(2_500)  # a reconnect would come within the backoff's first delays
        got = {"headline": await page.locator("#headline").inner_text(),
               "message": await page.locator("#message").inner_text(),
               "lobby_hidden": await page.locator("#lobby-panel").is_hidden(),
               "sockets": list(sockets)}
        await page.screenshot(path=str(ARTIFACTS / "play-lost.png"), full_page=True)
        await browser.close()
    assert got["headline"] == "The server lost this match", got
    assert got["message"] == MATCH_GONE, got
    assert got["lobby_hidden"], got
    assert len(got["sockets"]) == 1, got  # no reconnect after close 4004
    assert not errors, errors


async def test_after_the_results_the_race_table_lists_players_in_the_ranking_order(server) -> None:  # type: ignore[no-untyped-def]
    """The ranking of players nobody-won breaks a tie in cards by who put the last one up first (DESIGN.md
    "Ranking"), which the live race table cannot know; once the results are in, the race table beside
    them must not list the players in another order. ann puts her second card up first and then draws on
    (more moves); bob puts his up later with fewer moves: ann ranks first, and the race table says so."""
    _browser_available()
    from playwright.async_api import async_playwright

    variant = find_variant(VARIANT)
    game = Game(deal(SEED, variant), variant, autoplay=True, undo="safe")
    prefix: list[str] = []
    for command in solution():
        prefix.append(command)
        game.play(command)
        if game.position.foundation_cards > 1:
            break
    extra = ["s", "s", "s"]
    for command in extra:
        game.play(command)
    cards = game.position.foundation_cards
    assert cards == 2  # the draws after the prefix put nothing up: the two games tie in cards
    created = create_match(server.url, variant=VARIANT, seed=SEED, players=2)
    link = f"{server.url}/join/{created['code']}"

    async def play(page: Any, commands: list[str]) -> None:
        for i, command in enumerate(commands):
            await page.get_by_label("Command").fill(command)
            await page.get_by_label("Command").press("Enter")
            await moves_shown(page, i + 1)

    async def run() -> tuple[list[str], list[str]]:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            ann = await (await browser.new_context(**DESKTOP)).new_page()
            bob = await (await browser.new_context(**DESKTOP)).new_page()
            await join(ann, link, "ann")
            await join(bob, link, "bob")
            for page in (ann, bob):
                await page.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=15_000)
            await play(ann, prefix + extra)
            await bob.wait_for_timeout(300)  # bob's last card goes up strictly later than ann's
            await play(bob, prefix)
            for page in (ann, bob):
                await page.get_by_role("button", name="Resign", exact=True).click()
                await page.get_by_role("button", name="Yes, resign").click()
            await ann.get_by_role("list", name="Results").wait_for(timeout=15_000)
            await ann.wait_for_function("document.querySelectorAll('#results li').length === 2")
            ranking = await ann.locator("#results li").evaluate_all("rows => rows.map(r => r.dataset.name)")
            race = await ann.locator("#race tbody tr").evaluate_all("rows => rows.map(r => r.dataset.name)")
            await browser.close()
            return ranking, race

    ARTIFACTS.mkdir(exist_ok=True)
    ranking, race = await run()
    assert ranking == ["ann", "bob"], ranking  # equal cards, ann's last one up first
    assert race == ranking, (race, ranking)


async def test_the_home_page_fits_a_phone(server) -> None:  # type: ignore[no-untyped-def]
    """``/`` on a 390 px phone: nothing sticks out sideways (the variant select's long option text once pushed
    the settings form past the screen), and the form still creates a race."""
    _browser_available()
    from playwright.async_api import async_playwright

    async def run() -> tuple[int, list[float], str]:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = await (await browser.new_context(**PHONE)).new_page()
            await page.goto(f"{server.url}/")
            # Measured against the phone's width: on a mobile viewport the layout viewport (innerWidth) widens
            # to what sticks out, so it would hide the overflow it should show.
            width = PHONE["viewport"]["width"]
            overflow = await page.evaluate(f"document.documentElement.scrollWidth - {width}")
            rights = await page.locator("#create select, #create input, #create button").evaluate_all(
                f"nodes => nodes.map(n => n.getBoundingClientRect().right - {width})")
            await page.screenshot(path=str(ARTIFACTS / "home-phone.png"), full_page=True)
            await page.get_by_role("button", name="Create race").click()
            await page.wait_for_url("**/join/**", timeout=10_000)
            url = page.url
            await browser.close()
            return overflow, rights, url

    ARTIFACTS.mkdir(exist_ok=True)
    overflow, rights, url = await run()
    assert overflow <= 0, f"the home page scrolls sideways by {overflow} px on a phone"
    assert max(rights) <= 0, rights
    assert public_state(server.url, url.rsplit("/", 1)[1])["settings"]["variant"] == "classic"  # the default


def one_target_card(game: Game) -> str | None:
    """A legal move of ``game`` that a single click plays at once, or None: one card from a column, and the
    only legal move of that card (the page sends it without asking for a target)."""
    legal = game.legal_moves()
    for move in legal:
        command = str(move.command)
        source = command.split("-")[0]
        if source.isdigit() and move.cards == 1 and "x" not in command and sum(
                1 for other in legal if str(other.command).split("-")[0] == source and other.cards == 1) == 1:
            return command
    return None


async def test_a_double_click_on_a_card_with_one_target_plays_it_once_and_shows_no_refusal(server) -> None:  # type: ignore[no-untyped-def]
    """A fast double-click on a card whose one legal target takes it at once: the first click sends the move;
    the second lands on a board the answer has not redrawn yet, and is ignored while the move is in flight
    (sent, the server would refuse it and the page show a red refusal): one move, no message. The race table
    at 1280x800: a long name and "you" under it stay in the name's cell, clear of the status pill, and the
    name shows whole (an ellipsis only for a name too long for the cell; the whole name in its title)."""
    _browser_available()
    from playwright.async_api import async_playwright

    name = "Bartholomew"  # a long name, as friends type them
    variant = find_variant(VARIANT)
    game = Game(deal(SEED, variant), variant, autoplay=True, undo="safe")
    prefix: list[str] = []  # the solution's first moves, up to a position with such a card
    while (command := one_target_card(game)) is None:
        prefix.append(solution()[len(prefix)])
        game.play(prefix[-1])
    source = command.split("-")[0]
    game.play(command)
    assert command not in [str(move.command) for move in game.legal_moves()]  # sent twice, the second is refused
    created = create_match(server.url, variant=VARIANT, seed=SEED, players=1)
    link = f"{server.url}/join/{created['code']}"

    async def run() -> dict[str, Any]:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = await (await browser.new_context(viewport={"width": 1280, "height": 800})).new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await join(page, link, name)
            await page.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=15_000)
            for i, earlier in enumerate(prefix):
                await page.get_by_label("Command").fill(earlier)
                await page.get_by_label("Command").press("Enter")
                await moves_shown(page, i + 1)
            column = page.get_by_role("group", name=f"Column {source}", exact=True)
            await column.get_by_role("button").nth(-1).dblclick(position=STRIP)
            await moves_shown(page, len(prefix) + 1)
            await page.wait_for_timeout(500)  # a second move (or its refusal) would be back by now
            got: dict[str, Any] = {
                "moves": await page.locator("#moves").inner_text(),
                "message": await page.locator("#message").inner_text(),
                "message_class": await page.locator("#message").get_attribute("class"),
            }
            row = page.locator(f"#race tr[data-name={name}]")
            you = await row.locator(".who .away").bounding_box()
            pill = await row.locator(".pill").bounding_box()
            got["gap"] = pill["x"] - (you["x"] + you["width"])
            got["who_overflow"] = await row.locator(".who").evaluate("cell => cell.scrollWidth - cell.clientWidth")
            got["name_cut"] = await row.locator(".who .name").evaluate("name => name.scrollWidth - name.clientWidth")
            got["name_title"] = await row.locator(".who").get_attribute("title")
            await page.screenshot(path=str(ARTIFACTS / "play-desktop-1280.png"), full_page=True)
            await browser.close()
            got["errors"] = errors
            return got

    ARTIFACTS.mkdir(exist_ok=True)
    got = await run()
    assert got["errors"] == [], got["errors"]
    assert got["moves"] == str(len(prefix) + 1) and got["message"] == "" and got["message_class"] == "message", got
    assert public_state(server.url, created["code"])["players"][0]["moves"] == len(prefix) + 1  # one move applied
    assert got["gap"] >= 4 and got["who_overflow"] <= 0, got  # "you" and the name in their cell, off the pill
    assert got["name_cut"] <= 0 and got["name_title"] == name, got  # a name of 11 letters shows whole
