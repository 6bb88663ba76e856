"""A ghost race on the play page (/join/{code}) in a real headless browser: the recorded times on show.

A real server and Redis, Debian's chromium through Playwright. ann's game on seed 4 (14 commands over about
1 s, then resigned) is recorded over the protocol; a browser player then races a new match on that deal with
``ghost`` ann. The race panel has the ghost's row ("ann's best", marked ghost) whose moves follow the recorded
timeline against the match clock, a line with the recorded result (its time, cards, moves), and the gap at the
player's cards up, whose figure is computed here from both games' records. Screenshots:
``tests/browser/artifacts/ghost-race.png`` (the race panel while racing) and ``ghost-results.png``.
"""

from __future__ import annotations

import asyncio
import re

import httpx
import pytest

from client_cli.ghost import Gap, gap_words
from protocol import messages as m
from tests.browser.axe import severe_violations
from tests.browser.test_play_page import DESKTOP, PHONE, join, moves_shown
from tests.browser.test_watch_page import ARGS, ARTIFACTS, CHROMIUM, _browser_available
from tests.integration.test_ghosts import SOLO, replayed_timeline
from tests.integration.test_race import solution
from tests.integration.wsclient import Player, create_match

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

GHOST_COMMANDS = 14
"""ann's game: the solution's first 14 commands (cards up: 1 at the deal, 2 after the 6th, 4 after the 14th)."""


async def record_ann(url: str, ws_url: str, commands: list[str]) -> str:
    created = create_match(url, **SOLO)
    ann = Player(ws_url)
    await ann.connect()
    await ann.join(created["code"], "ann")
    await ann.send(m.Ready())
    assert isinstance(await ann.expect(m.Started), m.Started)
    for command in commands:
        await asyncio.sleep(0.07)
        assert isinstance(await ann.play(command), m.PositionReply)
    await ann.resign()
    assert isinstance(await ann.expect(m.Results), m.Results)
    await ann.close()
    return str(created["code"])


def at(timeline: list[tuple[int, int, int]], ms: float) -> int:
    """The ghost's moves at ``ms`` of the match clock (the last entry at or before it)."""
    return [moves for when, moves, _ in timeline if when <= ms][-1]


def clock_ms(text: str) -> float:
    minutes, seconds = text.split(":")
    return (int(minutes) * 60 + float(seconds)) * 1000


async def test_a_ghost_race_shows_the_recorded_times_and_the_gap(server) -> None:  # type: ignore[no-untyped-def]
    _browser_available()
    from playwright.async_api import async_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    moves = solution()
    recorded = await record_ann(server.url, server.ws_url, moves[:GHOST_COMMANDS])
    timeline, result = replayed_timeline(server.url, recorded, "ann")
    race = create_match(server.url, **SOLO, ghost={"name": "ann"})

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = await (await browser.new_context(**DESKTOP)).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await join(page, f"{server.url}/join/{race['code']}", "rider")
        row = page.locator("#race tr.ghost")
        await row.wait_for(timeout=15_000)
        assert "ann's best" in await row.inner_text() and "ghost" in await row.inner_text()
        # The recorded result, with its time as the page writes times (m:ss.t).
        seconds = result["time_ms"] / 1000
        record = await page.locator("#ghost-record").inner_text()
        assert f"0:{int(seconds):02d}.{int(seconds * 10) % 10}" in record, record
        assert f"{GHOST_COMMANDS} moves" in record and f"{result['foundation']} cards up" in record and "resigned" in record
        # Its moves follow the recorded timeline against the match clock (redrawn on the page's 100 ms tick).
        sample = await page.evaluate("""() => ({clock: document.getElementById('clock-value').textContent,
            moves: document.querySelector('#race tr.ghost .moves').textContent})""")
        shown, clock = int(sample["moves"]), clock_ms(sample["clock"])
        assert at(timeline, max(0, clock - 250)) <= shown <= at(timeline, clock + 250) and shown < GHOST_COMMANDS, (sample, timeline)
        # The player puts a second card up (the 6th command), typed as a person may.
        for index, command in enumerate(moves[:6]):
            await page.get_by_label("Command").fill(command)
            await page.get_by_label("Command").press("Enter")
            await moves_shown(page, index + 1)
        await page.wait_for_function(f"document.querySelector('#race tr.ghost .moves')?.textContent === "
                                     f"'{GHOST_COMMANDS}'", timeout=10_000)
        clock = clock_ms(await page.locator("#clock-value").inner_text())
        assert clock >= timeline[-1][0] - 150, (clock, timeline[-1])
        await page.wait_for_function("document.getElementById('ghost-gap').textContent !== ''", timeout=5_000)
        await page.locator("#race-panel").screenshot(path=str(ARTIFACTS / "ghost-race.png"))
        print("screenshot:", ARTIFACTS / "ghost-race.png")
        gap_text = await page.locator("#ghost-gap").inner_text()
        split = page.locator("#racers .racer.me .split")  # the compact strip: the phone's view while playing
        split_text, split_label = await split.inner_text(), await split.get_attribute("aria-label")
        assert await severe_violations(page) == []  # the ghost's muted row and the gap line included
        # On a phone's width the strip is all there is of the race: every racer's cards up in view, the ghost's too.
        await page.set_viewport_size(PHONE["viewport"])
        await page.wait_for_function("document.getElementById('racers').getBoundingClientRect().width < 300")
        strip = await page.locator("#racers").bounding_box()
        figures = [await b.bounding_box() for b in await page.locator("#racers .racer b").all()]
        assert len(figures) == 2 and strip is not None, figures
        # The ghost's chip says "ghost", its full label kept as its title; the player's chip is its own.
        chip = page.locator("#racers .racer.ghost")
        assert (await chip.locator(".name").inner_text(), await chip.get_attribute("title")) == ("ghost", "ann's best")
        assert await page.locator("#racers .racer.me .name").inner_text() == "rider (you)"
        for box in figures:
            assert box is not None and strip["x"] <= box["x"] and box["x"] + box["width"] <= strip["x"] + strip["width"], (box, strip)
        await page.set_viewport_size(DESKTOP["viewport"])

        await page.get_by_role("button", name="Resign").click()
        await page.get_by_role("button", name="Yes, resign").click()
        await page.locator("#ghost-result").wait_for(timeout=10_000)
        against = await page.locator("#ghost-result").inner_text()
        await page.screenshot(path=str(ARTIFACTS / "ghost-results.png"), full_page=True)
        print("screenshot:", ARTIFACTS / "ghost-results.png")
        # The page's words for a gap are the terminal's (client_cli/ghost.py), the halves of a tenth included.
        awkward = [1250, -1250, 1450, 1350, 250, -750, 49, 50, -50, 0, 99_950]
        label = {"label": "ann's best"}
        page_words = await page.evaluate("""([ghost, gaps]) => gaps.map((ms) => [FTRGhost.gapLine(ghost,
            { ms, ahead: ms < 0, more: 0 }), FTRGhost.gapSeconds(ms)])""", [label, awkward])
        frame = m.Ghost("ann", "ann's best", 0, 0, 0, "resigned", [(0, 0, 0)])
        assert [words for words, _ in page_words] == [gap_words(frame, Gap(ms)) for ms in awkward], page_words
        for words, seconds in page_words:  # the strip's split shows the sentence's figure
            assert words.startswith(f"{seconds} s ") or (words.startswith("level") and seconds == "0.0"), words
        # The revealed deal's results offer each game to race again as a ghost: rider's own, here.
        await page.get_by_role("button", name="Race rider's game as a ghost").click()
        await page.wait_for_function(f"!location.pathname.endsWith('/{race['code']}')", timeout=10_000)
        again = page.locator("#race tr.ghost")
        await again.wait_for(timeout=15_000)
        again_text = await again.inner_text()
        again_record = await page.locator("#ghost-record").inner_text()
        again_code = page.url.rstrip("/").rsplit("/", 1)[-1]
        assert errors == []
        await browser.close()

    # The gap, computed here: the player's time of its second card up against the ghost's (both records).
    mine = httpx.get(f"{server.url}/matches/{race['code']}/replays/rider", timeout=10).json()
    theirs = next(when for when, _, cards in timeline if cards >= 2)
    gap = mine["times_ms"][5] - theirs
    tenths = (abs(gap) + 50) // 100  # half up, in whole numbers
    seconds = f"{tenths // 10}.{tenths % 10}"
    words = ("level with" if seconds == "0.0" else f"{seconds} s {'ahead of' if gap < 0 else 'behind'}") + " ann's best"
    assert gap_text == words and against.endswith(words), (gap_text, against, words)
    assert split_label == words, (split_label, words)
    assert split_text == ("±0.0" if seconds == "0.0" else ("−" if gap < 0 else "+") + seconds), split_text
    assert re.search(r"Against ann's best \(0:0\d\.\d, resigned\)", against), against
    # The game raced again: rider's, from the match just ended, on its deal, alone and started at once.
    assert "rider's game" in again_text, again_text
    mine_ms = mine["result"]["time_ms"]
    assert f"0:{mine_ms // 1000:02d}.{mine_ms // 100 % 10}" in again_record and "6 moves" in again_record, again_record
    again_state = httpx.get(f"{server.url}/matches/{again_code}", timeout=10).json()
    assert again_state["settings"]["players"] == 1 and again_state["state"] == "playing", again_state
    assert [p["name"] for p in again_state["players"]] == ["rider"]

