"""Players who come back, in a real headless browser: a name of one's own, records, head-to-head, the page.

A real server and Redis, Debian's chromium driven by Playwright. On a phone (390x844) a player joins a
race by name, which claims it: the page keeps the key in local storage and shows the recovery code once,
with Copy and what it is for. A protocol client races too and resigns; the phone's player wins a chosen
position (``finish`` ends it) with a detour of two moves. After a reload the key is still there, and the
second race of the same deal joins by the same name with it (a join without it would be refused) and wins
straight away: the results say "New record" with the moves saved, and the head-to-head over all their races
(2-0). The player's page, reached from the results, shows both games, a chart with two points per line,
the records and the head-to-head. Another browser is refused the name (and told where its recovery code
goes); the "Use on another device" link opens there, keeps the key and drops the fragment (and ``/`` then
links the page); that browser recovers the name with the code, makes a new key, and deletes the history
with it. axe-core finds no serious or critical violation on the player's page. Screenshots at 390x844 and 1366x800
go to ``tests/browser/artifacts/``.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import msgspec
import pytest

from client_cli.render import record_line, rivalry_line
from protocol import messages as m
from tests.browser.axe import severe_violations
from tests.browser.test_play_page import PHONE, join, moves_shown
from tests.browser.test_watch_page import ARGS, ARTIFACTS, CHROMIUM, _browser_available
from tests.client.test_players_cli import moves, near_win_match
from tests.integration.wsclient import Player

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

LAPTOP = {"width": 1366, "height": 800}


async def typed(page: Any, command: str) -> None:
    """Play ``command`` through the Command field, as typed notation."""
    await page.get_by_label("Command").fill(command)
    await page.get_by_label("Command").press("Enter")


async def rival_joins(server: Any, code: str, name: str, key: str = "") -> tuple[Player, m.Joined]:
    """A protocol client joins ``code`` as ``name`` (with its player key once it has one) and says ready."""
    rival = Player(server.ws_url)
    await rival.connect()
    await rival.send(m.Join(code, name, player_key=key))
    joined = await rival.expect(m.Joined)
    assert isinstance(joined, m.Joined), joined
    await rival.send(m.Ready())
    return rival, joined


async def held_key(page: Any, name: str) -> str:
    return str(await page.evaluate(f"JSON.parse(localStorage.getItem('ftr:players') || '{{}}')[{name!r}] || ''"))


async def test_a_name_claimed_on_a_race_is_kept_sets_a_record_and_has_its_page(server) -> None:  # type: ignore[no-untyped-def]
    _browser_available()
    from playwright.async_api import async_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    suffix = uuid.uuid4().hex[:6]  # names are kept for good on a server: fresh ones per run
    name, other = f"ann-{suffix}", f"cli-{suffix}"
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        phone = await (await browser.new_context(**PHONE)).new_page()
        problems: list[str] = []
        phone.on("pageerror", lambda error: problems.append(str(error)))

        # Race 1: the join claims the name; the page shows the recovery code once and keeps the key.
        code1 = near_win_match(server, players=2)
        await join(phone, f"{server.url}/join/{code1}", name)
        panel = phone.get_by_role("region", name=f"{name} is your name on this server now")
        await panel.wait_for(timeout=10_000)
        recovery = (await panel.locator("#recovery-code").inner_text()).strip()
        what = await panel.locator("#recovery-what").inner_text()
        copy_button = await panel.get_by_role("button", name="Copy").is_visible()
        key = await held_key(phone, name)
        await phone.screenshot(path=str(ARTIFACTS / "claim-phone.png"), full_page=True)
        await panel.get_by_role("button", name="Done, I kept it").click()
        rival, rival_joined = await rival_joins(server, code1, other)
        await phone.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=15_000)
        await rival.expect(m.Started)
        await rival.resign()
        await typed(phone, "1-9")
        await moves_shown(phone, 1)
        await typed(phone, "9-f")
        await moves_shown(phone, 2)
        await phone.get_by_role("button", name="Finish").click()
        await phone.get_by_role("list", name="New records").wait_for(timeout=15_000)
        first_records = await phone.get_by_role("list", name="New records").inner_text()
        await rival.close()

        # A reload keeps the key; the second race of the same deal joins by the name with it.
        await phone.reload()
        await phone.get_by_role("list", name="Results").wait_for(timeout=15_000)
        key_after_reload = await held_key(phone, name)
        code2 = near_win_match(server, players=2)
        await join(phone, f"{server.url}/join/{code2}", name)
        rival, _ = await rival_joins(server, code2, other, rival_joined.player_key)
        await phone.get_by_role("group", name="Column 1", exact=True).wait_for(timeout=15_000)
        claimed_again = await phone.locator("#claim-panel").count()
        await rival.expect(m.Started)
        await rival.resign()
        await phone.get_by_role("button", name="Finish").click()
        records = phone.get_by_role("list", name="New records")
        await records.wait_for(timeout=15_000)
        await phone.get_by_role("list", name="Head-to-head over all their races").wait_for()
        second_records = await records.inner_text()
        head_to_head = await phone.get_by_role("list", name="Head-to-head over all their races").inner_text()
        await rival.close()
        await phone.screenshot(path=str(ARTIFACTS / "records-phone.png"), full_page=True)
        await phone.set_viewport_size(LAPTOP)
        await phone.screenshot(path=str(ARTIFACTS / "records-desktop.png"))
        await phone.set_viewport_size(PHONE["viewport"])

        profile = httpx.get(f"{server.url}/players/{name}", headers={"Accept": "application/json"}, timeout=10).json()
        straight, detour = profile["recent"][0], profile["recent"][1]
        deal = straight["deal"]

        # The player's page, from the results' link.
        await phone.get_by_role("link", name="Your page: games, records, head-to-head →").click()
        chart = phone.locator("#chart-svg")
        await chart.wait_for(timeout=10_000)
        # Races only, no daily attempt: no streak (the page says it as the server holds it).
        assert (profile["streak"], profile["best_streak"], profile["freezes"]) == (0, 0, 0)
        assert await phone.locator("#streak").inner_text() == "Streak 0 (best 0) · 0 freezes"
        points = (await chart.get_attribute("data-points"), await chart.locator("circle.time-point").count(),
                  await chart.locator("circle.cards-point").count(), await chart.locator("polyline").count())
        rows = await phone.get_by_role("table", name="Recent games").locator("tbody tr").count()
        rival_row = await phone.get_by_role("table", name="Head-to-head").locator(f'tr[data-name="{other}"]').inner_text()
        overflow = await phone.evaluate("Math.max(document.documentElement.scrollWidth, window.innerWidth) - 390")
        await phone.screenshot(path=str(ARTIFACTS / "player-phone.png"), full_page=True)
        await phone.get_by_role("button", name="Use on another device").click()
        device_link = await phone.locator("#device-link").get_attribute("href")
        qr_modules = await phone.locator("#device-qr svg path").count()
        player_axe = await severe_violations(phone)
        # The page words records and head-to-head as the CLI does (common.js and client_cli/render.py).
        notes = [m.RecordNote("ann", "classic", "seed 1234", "moves", 212, 221),
                 m.RecordNote("bob", "classic", "", "time", 211_000, 223_500),
                 m.RecordNote("ann", "relaxed", "deal 3f2a9c01be77", "moves", 1, -1),
                 m.RecordNote("ann", "relaxed", "", "cards", 87, 82),
                 m.RecordNote("ann", "classic", "daily 2026-12-07", "time", 95_000, -1)]
        pair = m.Rivalry("ann", "bob", 23, 17, 1, 41)
        page_words = await phone.evaluate("([notes, pair]) => [...notes.map((n) => FTR.recordLine(n, 'ann')), "
                                          "FTR.rivalryLine(pair)]", [msgspec.to_builtins(notes), msgspec.to_builtins(pair)])
        await phone.set_viewport_size(LAPTOP)
        await phone.screenshot(path=str(ARTIFACTS / "player-desktop.png"), full_page=True)

        # Another device: the link keeps the key there and leaves no fragment; the code recovers; delete.
        laptop = await (await browser.new_context(viewport=LAPTOP)).new_page()
        laptop.on("pageerror", lambda error: problems.append(str(error)))
        # Without the key the name is refused, and the page says where the recovery code goes.
        await laptop.goto(f"{server.url}/join/{near_win_match(server, players=2)}")
        await laptop.get_by_label("Name").fill(name)
        await laptop.get_by_role("button", name="Join").click()
        recover_link = laptop.get_by_role("link", name="Its page takes your recovery code →")
        await recover_link.wait_for(timeout=10_000)
        refusal = await laptop.locator("#message").inner_text()
        recover_href = await recover_link.get_attribute("href")
        await laptop.goto(device_link)
        await laptop.get_by_role("region", name=f"This browser races as {name}").wait_for(timeout=10_000)
        fragment, laptop_key = await laptop.evaluate("location.hash"), await held_key(laptop, name)
        await laptop.goto(f"{server.url}/")  # the home page links the page of each name the browser holds
        home_link = await laptop.get_by_role("link", name=f"{name}'s page →").get_attribute("href")
        await laptop.go_back()
        await laptop.get_by_label("Recovery code").wait_for(timeout=10_000)
        await laptop.get_by_label("Recovery code").fill(recovery)
        await laptop.get_by_role("button", name="Recover").click()
        await laptop.get_by_role("region", name=f"{name} is yours on this browser again").wait_for(timeout=10_000)
        new_code = (await laptop.locator("#recovery-code").inner_text()).strip()
        recovered_key = await held_key(laptop, name)
        # The phone's key no longer works: its page reads as anyone's, neither "yours" nor making groups.
        await phone.goto(f"{server.url}/players/{name}")
        await phone.locator("#recover-panel").wait_for(timeout=10_000)
        stale_page = [await phone.locator(part).is_visible() for part in ("#own-panel", "#group-form")]
        await laptop.get_by_role("button", name="New key").click()
        await laptop.get_by_role("button", name="Yes, a new key").click()
        await laptop.get_by_text(f"A new key for {name} is kept here").wait_for(timeout=10_000)
        rotated_key = await held_key(laptop, name)
        await laptop.get_by_role("button", name="Delete my history").click()
        await laptop.get_by_role("button", name="Yes, delete everything").click()
        await laptop.get_by_text(f"{name}'s history is deleted").wait_for(timeout=10_000)
        gone = httpx.get(f"{server.url}/players/{name}", headers={"Accept": "application/json"}, timeout=10).status_code
        forgotten = await held_key(laptop, name)
        await browser.close()

    assert not problems, problems
    assert len(recovery) >= 12 and recovery != key and copy_button and "another device" in what, (recovery, what)
    assert len(key) >= 20 and key_after_reload == key
    assert f"First win on {deal}: {moves(detour['moves'])}" in first_records, first_records
    assert claimed_again == 0  # the second race claimed nothing: no recovery code again
    assert straight["moves"] < detour["moves"] and straight["status"] == detour["status"] == "won"
    assert (f"New record on {deal}: {moves(straight['moves'])}, {detour['moves'] - straight['moves']} fewer than "
            "your best") in second_records, second_records
    expected = (f"{name} 2-0 {other}" if head_to_head.startswith(name) else f"{other} 0-2 {name}")
    assert head_to_head.startswith(expected + " between the two of them, over all their races (2"), head_to_head
    assert points == ("2", 2, 2, 2), points
    assert rows == 2 and rival_row.split() == [other, "2", "2", "0", "0"], rival_row
    assert overflow <= 0, overflow
    assert device_link == f"{server.url}/players/{name}#key={key}" and qr_modules == 1
    assert player_axe == [], player_axe
    assert page_words == [*(record_line(note, "ann") for note in notes), rivalry_line(pair)], page_words
    assert "missing or wrong" in refusal and recover_href == f"/players/{name}", refusal
    assert stale_page == [False, False]
    assert fragment == "" and laptop_key == key and home_link == f"/players/{name}"
    assert new_code != recovery and recovered_key not in ("", key) and rotated_key not in ("", key, recovered_key)
    assert gone == 404 and forgotten == ""
