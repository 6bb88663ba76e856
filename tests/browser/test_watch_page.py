"""The spectators' page in a real headless browser.

A real server, a two-player race played over real WebSockets, and Debian's
chromium driven by Playwright: the page at ``/watch/{code}`` must show the
standings updating while the race runs, then the final ranking and a
replay. Screenshots (desktop and phone) go to ``tests/browser/artifacts/``
(gitignored); their paths are printed.

Needs ``/usr/bin/chromium`` (``.ci/run`` installs it) and the ``playwright``
package (test extras); never ``playwright install``. Outside CI the test is
skipped when either is missing; under CI it fails instead.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from protocol import messages as m
from server.engine import Game, deal, find_variant
from tests.integration.test_race import SEED, VARIANT, lobby_of_two, solution
from tests.integration.wsclient import Player, create_match

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

CHROMIUM = os.environ.get("FTR_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).with_name("artifacts")


def _browser_available() -> None:
    missing = []
    if not shutil.which(CHROMIUM):
        missing.append(CHROMIUM)
    try:
        import playwright  # noqa: F401
    except ImportError:
        missing.append("the playwright package")
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"browser test needs {', '.join(missing)}")
        pytest.skip(f"browser test needs {', '.join(missing)}")


async def _standing(page, name: str) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    row = page.locator(f'#standings tbody tr[data-name="{name}"]')
    moves = await row.locator(".moves").inner_text()
    found = await row.locator(".foundation").inner_text()
    return int(moves), int(found)


async def _rows(page) -> dict[str, dict[str, str]]:  # type: ignore[no-untyped-def]
    """Each standings row as the page shows it: rank, status pill, cards up, moves."""
    rows = await page.locator("#standings tbody tr").evaluate_all(
        """rows => rows.map(r => [r.dataset.name, {rank: r.querySelector('.rank').textContent,
            status: r.querySelector('.pill').textContent, foundation: r.querySelector('.foundation').textContent,
            moves: r.querySelector('.moves').textContent}])""")
    return dict(rows)


async def _feed(page) -> list[str]:  # type: ignore[no-untyped-def]
    """The lines of the "What happened" feed, top to bottom."""
    return await page.locator("#feed li span").all_inner_texts()


async def _settle(page, condition: str, timeout: float = 5_000) -> None:  # type: ignore[no-untyped-def]
    """Wait until ``condition`` holds on the page, at most ``timeout`` ms; the caller asserts what it shows."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    try:
        await page.wait_for_function(condition, timeout=timeout)
    except PlaywrightTimeout:
        pass


async def test_the_watch_page_shows_live_standings_then_the_ranking_and_replays(server) -> None:  # type: ignore[no-untyped-def]
    _browser_available()
    from playwright.async_api import async_playwright

    moves = solution()
    variant = find_variant(VARIANT)
    game = Game(deal(SEED, variant), variant, autoplay=True, undo="safe")
    start_cards = game.position.foundation_cards  # what the autoplay of the deal put up (1 in this deal)
    game.play(moves[0])
    after_first = game.position.foundation_cards
    assert start_cards > 0 and after_first == start_cards  # the first move puts nothing up
    ARTIFACTS.mkdir(exist_ok=True)

    async def run() -> None:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            code = create_match(server.url, variant=VARIANT, seed=SEED, players=2)["code"]
            alice, bob = Player(server.ws_url), Player(server.ws_url)
            for player, name in ((alice, "alice"), (bob, "bob")):
                await player.connect()
                await player.join(code, name)
            await page.goto(f"{server.url}/watch/{code}")  # a spectator from the lobby on
            await page.locator('#standings tr[data-name="bob"]').wait_for(timeout=10_000)
            chosen = await page.locator("#chosen-chip").inner_text()  # dealt from the host's seed: said so
            await alice.send(m.Ready())
            await bob.send(m.Ready())
            await alice.expect(m.Started)
            await bob.expect(m.Started)
            seen: list[int] = []
            at_start: dict[str, Any] = {}
            # Paced: the page must show alice's moves climbing while the race runs.
            for i, command in enumerate(moves[:45]):
                await alice.play(command)
                if i == 0:
                    # alice has moved, bob not yet: both play from the start instant on, with the cards the
                    # deal's autoplay put up (the same deal for both)
                    await page.wait_for_function(
                        """document.querySelector('#standings tr[data-name="alice"] .moves')?.textContent === '1'""",
                        timeout=10_000)
                    bob_row = """document.querySelector('#standings tr[data-name="bob"] {}')?.textContent"""
                    await _settle(page, f"{bob_row.format('.pill')} === 'playing'"
                                        f" && {bob_row.format('.foundation')} === '{start_cards}'")
                    at_start = {"rows": await _rows(page), "subline": await page.locator("#subline").inner_text(),
                                "feed": await _feed(page)}
                if i % 3 == 0:
                    await bob.play("s")
                await asyncio.sleep(0.12)
                if i % 5 == 4:
                    await page.wait_for_function(
                        f"""Number(document.querySelector('#standings tr[data-name="alice"] .moves')
                            ?.textContent) >= {i + 1}""", timeout=10_000)
                    seen.append((await _standing(page, "alice"))[0])
            live_state = await page.locator("#state").inner_text()
            await page.screenshot(path=str(ARTIFACTS / "watch-live.png"), full_page=True)
            for command in moves[45:]:
                await alice.play(command)
            await bob.resign()
            await alice.expect(m.Results)
            await page.locator("#final-panel").wait_for(state="visible", timeout=15_000)
            await page.locator("#replay-board .card").first.wait_for(timeout=15_000)
            podium = await page.locator("#podium .place .name").all_inner_texts()
            final_rows = await page.locator("#standings tbody tr").evaluate_all(
                "rows => rows.map(r => [r.dataset.name, r.querySelector('.moves').textContent])")
            verified = await page.locator("#verify .ok").inner_text(timeout=5_000)
            first_step = await page.locator("#step-info").inner_text()  # a replay opens at the deal
            await page.locator("#next").click()
            next_step = await page.locator("#step-info").inner_text()
            await page.locator("#last").click()
            step = await page.locator("#step-info").inner_text()
            await page.locator("#scrub").fill(str(len(moves) // 2))  # a position with cards everywhere
            live_feed = await _feed(page)
            path = ARTIFACTS / "watch.png"
            await page.screenshot(path=str(path), full_page=True)
            phone = await browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2,
                                           is_mobile=True)
            await phone.goto(f"{server.url}/watch/{code}")
            await phone.locator("#replay-board .card").first.wait_for(timeout=15_000)
            await phone.locator("#scrub").fill(str(len(moves) // 2))
            late_feed = await _feed(phone)  # every event from the catch-up at once
            phone_path = ARTIFACTS / "watch-phone.png"
            await phone.screenshot(path=str(phone_path), full_page=True)
            overflow = await phone.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            await browser.close()
            await alice.close()
            await bob.close()
            print(f"\nscreenshots: {path} {ARTIFACTS / 'watch-live.png'} {phone_path}")

            assert chosen == "deal chosen by the host", chosen
            assert not errors, errors
            assert at_start["rows"] == {
                "alice": {"rank": "1", "status": "playing", "foundation": str(after_first), "moves": "1"},
                "bob": {"rank": "1", "status": "playing", "foundation": str(start_cards), "moves": "0"},
            }, at_start  # equal cards, equal rank: by cards on the foundations, as the page says it ranks
            assert at_start["subline"] == "2 of 2 still playing", at_start
            assert not any(" put " in line for line in at_start["feed"]), at_start  # "s" put no card up
            assert late_feed[:3] == ["Results: alice wins!", "bob resigned · 15 moves",
                                     f"alice won · {len(moves)} moves"], late_feed
            assert late_feed == live_feed, (late_feed, live_feed)  # newest first, live or caught up
            assert live_state.lower() == "live"
            assert len(set(seen)) >= 5 and seen == sorted(seen), seen  # the standings updated as moves came
            assert podium == ["alice", "bob"]
            assert final_rows == [["alice", str(len(moves))], ["bob", str(len(range(0, 45, 3)))]], final_rows
            assert "equals the commitment" in verified
            assert f"move {len(moves)}/{len(moves)}" in step and moves[-1] in step
            assert "The deal" in first_step and f"move 1/{len(moves)} {moves[0]}" in next_step
            assert overflow <= 0, f"the phone page scrolls sideways by {overflow} px"

    await run()


async def test_the_watch_page_of_a_match_the_server_lost_says_so_and_stops(  # type: ignore[no-untyped-def]
        make_own_server, own_redis_url) -> None:
    """A race is watched live; Redis loses the match's keys. Within the server's 5 s check and a margin the page
    shows the match is lost, with the server's message, and no running clock; it stops asking for the events
    (it showed "live" with a running clock for ever, and reconnected every 2 s)."""
    _browser_available()
    import redis
    from playwright.async_api import async_playwright

    from server.core.player import MATCH_GONE

    server = make_own_server()
    ARTIFACTS.mkdir(exist_ok=True)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = await browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        code = create_match(server.url, variant=VARIANT, seed=SEED, players=1)["code"]
        ann = Player(server.ws_url)
        await ann.connect()
        await ann.join(code, "ann")
        await ann.send(m.Ready())
        await ann.expect(m.Started)
        await page.goto(f"{server.url}/watch/{code}")
        await page.wait_for_function("document.querySelector('#state')?.textContent === 'live'", timeout=10_000)
        await page.locator("#feed li", has_text="ann joined").wait_for(timeout=10_000)  # the stream is open
        streams: list[str] = []
        page.on("request", lambda request: streams.append(request.url) if "/events" in request.url else None)
        with redis.Redis.from_url(own_redis_url) as client:
            client.delete(*client.scan_iter(f"{{m:{code}}}:*"))
        await page.wait_for_function("document.querySelector('#state')?.textContent === 'lost'", timeout=15_000)
        clock = await page.locator("#clock-value").inner_text()
        await asyncio.sleep(1.0)
        assert await page.locator("#clock-value").inner_text() == clock  # stopped
        headline = await page.locator("#headline").inner_text()
        subline = await page.locator("#subline").inner_text()
        feed = await _feed(page)
        asked_before = len(streams)
        await asyncio.sleep(4.5)  # EventSource reconnects by itself after 3 s; the page's retry was every 2 s
        path = ARTIFACTS / "watch-lost.png"
        await page.screenshot(path=str(path), full_page=True)
        print(f"\nscreenshot: {path}")
        await browser.close()
    await ann.close()
    assert headline == "The server lost this match", headline
    assert subline == MATCH_GONE, subline
    assert clock == "–:––", clock
    assert feed[0] == "The server lost this match: the race cannot go on", feed
    assert len(streams) == asked_before, streams  # no stream asked for again
    assert not errors, errors


async def test_the_daily_page_says_so_politely_when_there_is_no_daily_challenge(make_server) -> None:  # type: ignore[no-untyped-def]
    """A server without the daily challenge (``FTR_DAILY_VARIANTS`` empty: ``GET /daily`` JSON answers 404):
    the page says so, without a script error."""
    _browser_available()
    import httpx
    from playwright.async_api import async_playwright

    server = make_server(FTR_DAILY_VARIANTS="")
    assert httpx.get(server.url + "/daily", headers={"Accept": "application/json"}).status_code == 404

    async def run() -> None:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = await browser.new_page(viewport={"width": 1280, "height": 700})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(server.url + "/daily")
            await page.wait_for_function("document.querySelector('#state').textContent === 'unavailable'")
            headline = await page.locator("#headline").inner_text()
            await page.screenshot(path=str(ARTIFACTS / "daily-none.png"))
            await page.goto(server.url + "/")
            title = await page.title()
            await browser.close()
            assert headline == "No daily challenge on this server"
            assert title == "Forty Thieves Race" and not errors, errors

    ARTIFACTS.mkdir(exist_ok=True)
    await run()


DAILY_DB = 9
"""The daily test's own Redis database (flushed): the day's keys are global, shared by every server of a db."""


async def test_the_daily_page_shows_todays_leaderboard_live(redis_url) -> None:  # type: ignore[no-untyped-def]
    """A real daily challenge (relaxed): the page lists an attempt as it starts (live, from the day's event
    stream), then its final entry as the leaderboard JSON has it; never anything about the deal."""
    _browser_available()
    import time

    import httpx
    import redis
    from playwright.async_api import async_playwright

    from tests.integration.conftest import ServerProcess
    from tests.integration.wsclient import Player

    url = redis_url.rsplit("/", 1)[0] + f"/{DAILY_DB}"
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    real_now = int(time.time() * 1000)
    noon = real_now // 86_400_000 * 86_400_000 + 43_200_000  # the server's clock at noon UTC: no day ends here
    server = ServerProcess(url, FTR_CLOCK_OFFSET_MS=str(noon - real_now), FTR_DAILY_SECRET="page test",
                           FTR_DAILY_VARIANTS="relaxed")

    async def play_and_resign(name: str, commands: int) -> None:
        answer = await asyncio.to_thread(httpx.post, f"{server.url}/daily/relaxed/attempt", json={"name": name},
                                         timeout=120)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        player = Player(server.ws_url)
        await player.connect()
        player.code, player.token = body["match"], body["player_token"]
        await player.resume(body["match"])
        started = await player.expect(m.Started)
        assert isinstance(started, m.Started), started
        player.seq, legal = started.seq, started.legal
        for _ in range(commands):
            reply = await player.play(next(move.command for move in legal if move.command != "u"))
            assert isinstance(reply, m.PositionReply), reply
            legal = reply.legal
        reply = await player.resign()
        assert isinstance(reply, m.PositionReply) and reply.status == "resigned", reply
        await player.close()

    async def run() -> None:
        day = await asyncio.to_thread(httpx.get, f"{server.url}/daily", timeout=120)
        date = day.json()["date"]  # the day's deal is ready now
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = await browser.new_page(viewport={"width": 1100, "height": 640})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(server.url + "/daily")
            await page.wait_for_function("document.querySelector('#state').textContent === 'live'")
            headline = await page.locator("#headline").inner_text()
            panel = page.locator('section[data-variant="relaxed"]')
            await panel.locator("table").wait_for()
            await play_and_resign("ann", 3)
            await play_and_resign("bob", 6)
            for name in ("ann", "bob"):
                await panel.locator(f'tr[data-name="{name}"] .pill.resigned').wait_for(timeout=15_000)
            leaderboard = f"{server.url}/daily/{date}/relaxed/leaderboard"
            board = (await asyncio.to_thread(httpx.get, leaderboard, timeout=10)).json()
            await page.wait_for_function(
                "document.querySelector('section[data-variant=relaxed] .note').textContent.startsWith('2 attempts')")
            rows = await panel.locator("tbody tr").evaluate_all(
                "rows => rows.map(r => [r.querySelector('.rank').textContent, r.dataset.name,"
                " r.querySelector('td:nth-child(5)').textContent])")
            commitment = await panel.locator(".verify code").first.inner_text()
            chip = await page.locator('#chips [data-variant="relaxed"]').inner_text()
            text = await page.locator("body").inner_text()
            await page.screenshot(path=str(ARTIFACTS / "daily.png"), full_page=True)
            print("screenshot:", ARTIFACTS / "daily.png")
            await browser.close()
        assert headline == f"Daily challenge · {date}" and not errors, errors
        assert rows == [[str(e["rank"]), e["name"], str(e["moves"])] for e in board["entries"]]
        assert sorted(e["name"] for e in board["entries"]) == ["ann", "bob"] and chip == "relaxed 2 attempts"
        today = (await asyncio.to_thread(httpx.get, f"{server.url}/daily", timeout=10)).json()
        assert commitment == today["variants"][0]["commitment"]
        seed_record = redis.Redis.from_url(url).hget(f"{{d:{date}:relaxed}}:deal", "seed")
        assert seed_record and seed_record.decode() not in text  # the seed stays hidden while the day runs

    ARTIFACTS.mkdir(exist_ok=True)
    try:
        await run()
    finally:
        server.stop()
        with redis.Redis.from_url(url) as client:
            client.flushdb()


async def test_the_watch_page_links_the_next_round_and_says_who_asked(server) -> None:  # type: ignore[no-untyped-def]
    """A page opened once the match is over: its feed lists what happened newest first, as a page that
    watched it live does, counting "1 move" and "0 moves"; a rematch asked meanwhile shows on top, with a
    link to the next round."""
    _browser_available()
    import httpx
    from playwright.async_api import async_playwright

    async def run() -> None:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            created, alice, bob = await lobby_of_two(server)
            code = created["code"]
            await alice.expect(m.Started)
            await bob.expect(m.Started)
            await alice.play("s")  # one move: the pages say "1 move"
            await alice.resign()
            await bob.resign()
            await alice.expect(m.Results)
            await page.goto(f"{server.url}/watch/{code}")
            await page.locator("#final-panel").wait_for(state="visible", timeout=15_000)
            hidden_before = await page.locator("#next-round").is_hidden()
            podium_alice = await page.locator('#podium [data-name="alice"] .line').all_inner_texts()
            await page.locator('#replay-tabs [data-name="alice"]').click()
            await page.get_by_text("to come").wait_for(timeout=15_000)
            replay_alice = await page.locator("#step-info").inner_text()
            await alice.send(m.Rematch())  # while the page watches: the rematch event shows the link
            answer = await alice.expect(m.NextRound)
            link = page.get_by_role("link", name="round 2 →")
            await link.wait_for(timeout=10_000)
            line = await page.locator("#next-round").inner_text()
            feed = await _feed(page)  # the catch-up's events, then the rematch's live
            await link.click()
            await page.wait_for_url(f"**/watch/{answer.match}", timeout=10_000)
            await page.get_by_text("Round 2 ·").wait_for(timeout=10_000)
            heading = await page.locator("#headline").inner_text()
            title = await page.title()
            await browser.close()
            await alice.close()
            await bob.close()

            assert not errors, errors
            assert hidden_before
            ranking = httpx.get(f"{server.url}/matches/{code}/results", timeout=10).json()["ranking"]
            first = [row for row in ranking if row["rank"] == 1]
            cards = first[0]["foundation"]
            headline = (f"Nobody won · {' and '.join(row['name'] for row in first)} "
                        f"{'ranks' if len(first) == 1 else 'rank'} first with {cards} card{'s' * (cards != 1)} up")
            assert feed == ["alice wants a rematch", f"Results: {headline}", "bob resigned · 0 moves",
                            "alice resigned · 1 move", "Countdown: 0.3 s, then the deal", "bob joined",
                            "alice joined"], feed  # newest first, as a page that watched it all shows it
            alice_cards = next(row["foundation"] for row in ranking if row["name"] == "alice")
            total = find_variant(VARIANT).card_total
            assert podium_alice[1] == f"1 move · {alice_cards}/{total} cards up", podium_alice
            assert replay_alice == "The deal · 1 move to come", replay_alice
            assert "alice wants a rematch" in line
            assert heading.startswith("Round 2 · ") and answer.match in title and "round 2" in title

    await run()
