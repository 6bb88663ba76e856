"""A group among friends in a real headless browser: made on a phone, joined by its link on a laptop, its board.

A server with the relaxed daily on a Redis database of its own. On a phone (360x740) Zoë, whose key her page's
"another device" link brought, makes a group on her own player page: the group's page shows its name as text
(markup in it stays letters), her as its one member, and Copy puts the join link on the clipboard. In a second
browser bob opens that link: Join comes first, his name is claimed there (the recovery code shown once) and he is
in. Both play the daily and resign, and so does someone outside the group (over the protocol, with the keys their
browsers hold); Zoë and bob race each other once. Zoë's page shows each attempt as it ends (the day's events), and
after a reload the board holds the two members alone, each with the place on the day's public board, and the
head-to-head of their race. The previous day's link and back; bob's page lists his groups and his daily page links
their boards. Then bob leaves, is refused with a wrong key, a full group refuses him, and a group nobody has says
so. The phone's page fits 360 px with no sideways scroll; axe-core finds nothing serious. Screenshots:
``group-phone.png`` (360x740), ``group-desktop.png`` (1280x900) and ``group-join-phone.png`` (the join link on a
phone) in ``tests/browser/artifacts/``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
import pytest

from server.names import name_key
from tests.browser.axe import severe_violations
from tests.browser.test_daily_share import SHARE_SHEET
from tests.browser.test_play_page import DESKTOP, daily_server, stop_daily_server
from tests.browser.test_watch_page import ARGS, ARTIFACTS, CHROMIUM, _browser_available
from tests.integration.wsclient import PLAYER_KEYS, resigned_daily_attempt, resigned_race

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

PHONE_360 = {"viewport": {"width": 360, "height": 740}, "is_mobile": True, "has_touch": True}
TITLE = "Vendredi ♣ <b>club</b>"
MAX_MEMBERS = 50


async def held_key(page: Any, name: str) -> str:
    return str(await page.evaluate("(name) => JSON.parse(localStorage.getItem('ftr:players') || '{}')[name] || ''",
                                   name))


async def board_names(page: Any) -> list[str]:
    return list(await page.locator('section[data-variant="relaxed"] tbody tr').evaluate_all(
        "(rows) => rows.map((row) => row.dataset.name)"))


async def text_lines(locator: Any) -> int:
    """The lines the text of ``locator``'s element takes on the screen (a line box per line)."""
    return int(await locator.evaluate(
        "(e) => { const r = document.createRange(); r.selectNodeContents(e); return r.getClientRects().length; }"))


async def fits(page: Any) -> bool:
    return bool(await page.evaluate("document.documentElement.scrollWidth <= innerWidth"))


async def test_a_group_made_on_a_phone_joined_by_its_link_shows_its_members_board(redis_url: str) -> None:
    _browser_available()
    from playwright.async_api import async_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    server = daily_server(redis_url, "group page test")
    zoe, bob = "Zoë", "bob"
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            phone_context = await browser.new_context(**PHONE_360)
            await phone_context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
            await phone_context.add_init_script(SHARE_SHEET)  # no share sheet: the page offers Copy
            phone = await phone_context.new_page()
            laptop = await (await browser.new_context(**DESKTOP)).new_page()
            problems: list[str] = []
            for page in (phone, laptop):
                page.on("pageerror", lambda error: problems.append(str(error)))

            # Zoë: her name claimed, its key brought to the phone by her page's link; her page makes the group.
            claimed = httpx.post(f"{server.url}/players", json={"name": zoe}, timeout=10).json()
            await phone.goto(f"{server.url}/players/{quote(zoe)}#key={claimed['player_key']}")
            await phone.get_by_label("Make a group").fill(TITLE)
            await phone.get_by_role("button", name="Make it").click()
            await phone.wait_for_url("**/groups/*")
            group_id = phone.url.rsplit("/", 1)[1]
            answer = httpx.get(f"{server.url}/groups/{group_id}", headers={"Accept": "application/json"}, timeout=10)
            group = answer.json()
            assert (group["name"], group["owner"], group["members"]) == (TITLE, zoe, [zoe])
            await phone.get_by_role("list", name="Members").wait_for()
            assert await phone.locator("#headline").inner_text() == TITLE  # the markup stays letters
            assert await phone.locator("#headline b").count() == 0
            assert await phone.get_by_role("list", name="Members").locator("li a").all_inner_texts() == [zoe]
            assert await phone.locator("#join-panel").is_hidden()
            await phone.get_by_role("button", name="Copy").click()
            await phone.get_by_role("button", name="Copied ✓").wait_for(timeout=5_000)
            assert await phone.evaluate("navigator.clipboard.readText()") == group["join_url"]
            assert group["join_url"] == f"{server.url}/groups/{group_id}/join"

            # bob opens the link in another browser: Join first, his name claimed there.
            await laptop.goto(group["join_url"])
            await laptop.get_by_role("button", name="Join").wait_for()
            join_box = await laptop.locator("#join-panel").bounding_box()
            members_box = await laptop.locator("#members-panel").bounding_box()
            assert join_box and members_box and join_box["y"] < members_box["y"]
            await laptop.get_by_label("Name").fill(bob)
            await laptop.get_by_role("button", name="Join").click()
            await laptop.get_by_role("region", name=f"{bob} is your name on this server now").wait_for(timeout=10_000)
            await laptop.locator('#members li[data-name="bob"]').wait_for()
            members = httpx.get(f"{server.url}/groups/{group_id}", headers={"Accept": "application/json"},
                                timeout=10).json()["members"]
            assert sorted(members) == sorted([bob, zoe])
            assert await laptop.get_by_role("list", name="Members").locator("li a").all_inner_texts() == members
            assert laptop.url == f"{server.url}/groups/{group_id}" and await held_key(laptop, bob)
            assert await laptop.locator("#you-line").inner_text() == f"You are in this group as {bob}."

            # Both play the daily (with the keys their browsers hold), cy, in no group, too; Zoë and bob race
            # each other once.
            await phone.goto(f"{server.url}/groups/{group_id}")
            await phone.locator('section[data-variant="relaxed"] .empty').filter(has_text="No member").wait_for()
            await resigned_daily_attempt(server.url, server.ws_url, zoe, await held_key(phone, zoe))
            await phone.locator('section[data-variant="relaxed"] tbody tr').first.wait_for(timeout=10_000)
            assert await board_names(phone) == [zoe]
            await resigned_daily_attempt(server.url, server.ws_url, bob, await held_key(laptop, bob))
            await phone.wait_for_function(  # Zoë's page follows the day's events
                "document.querySelectorAll('section[data-variant=relaxed] tbody tr').length === 2", timeout=10_000)
            await resigned_daily_attempt(server.url, server.ws_url, "cy")
            PLAYER_KEYS.update({name_key(zoe): await held_key(phone, zoe), name_key(bob): await held_key(laptop, bob)})
            results = await resigned_race(server.url, server.ws_url, (zoe, bob), variant="relaxed", seed="1")
            ranks = {r.name: r.rank for r in results.ranking}

            # bob's page lists his groups, and his daily page links their boards.
            await laptop.goto(f"{server.url}/players/{bob}")
            listed = laptop.get_by_role("list", name="Groups").get_by_role("link")
            await listed.first.wait_for()
            assert await listed.all_inner_texts() == [TITLE]
            assert await listed.first.get_attribute("href") == f"/groups/{group_id}"
            await laptop.goto(server.url + "/daily")
            await laptop.get_by_role("list", name="Your groups").get_by_role("link", name=TITLE).click()
            await laptop.wait_for_url(f"**/groups/{group_id}")

            await phone.reload()
            await phone.locator("#rivals-body tr").wait_for(timeout=10_000)
            await phone.wait_for_function(
                "document.querySelectorAll('section[data-variant=relaxed] tbody tr').length === 2", timeout=10_000)
            date = group["today"]
            board = httpx.get(f"{server.url}/groups/{group_id}/daily/{date}/relaxed", timeout=10).json()
            public = httpx.get(f"{server.url}/daily/{date}/relaxed/leaderboard?limit=50", timeout=10).json()
            assert {e["name"] for e in public["entries"]} == {zoe, bob, "cy"}
            places = {e["name"]: e["rank"] for e in public["entries"]}
            assert sorted(board["entries"], key=lambda e: e["rank"]) == board["entries"]
            assert await board_names(phone) == [e["name"] for e in board["entries"]] and set(
                await board_names(phone)) == {zoe, bob}
            for entry in board["entries"]:
                row = phone.locator(f'section[data-variant="relaxed"] tr[data-name="{entry["name"]}"]')
                assert await row.locator(".board-rank").inner_text() == f"#{places[entry['name']]}"
                assert await row.locator(".pill").inner_text() == "RESIGNED"  # uppercase in CSS
                # On the phone a status and a time stay whole (a name alone may break): one line each.
                for cell in (row.locator(".pill"), row.locator("td.num").first):
                    assert await text_lines(cell) == 1, await cell.inner_text()
            rival = phone.locator("#rivals-body tr")
            assert await rival.count() == 1
            [pair] = httpx.get(f"{server.url}/groups/{group_id}", headers={"Accept": "application/json"},
                               timeout=10).json()["head_to_head"]
            wins = {pair["a"]: pair["a_wins"], pair["b"]: pair["b_wins"]}
            # The race's own ranking says who won it (both resigned: the one with more cards up, or a draw).
            assert (pair["races"], pair["draws"]) == (1, int(ranks[zoe] == ranks[bob]))
            assert wins == {zoe: int(ranks[zoe] < ranks[bob]), bob: int(ranks[bob] < ranks[zoe])}
            cells = await rival.locator("td").all_inner_texts()
            assert cells == [f"{pair['a']} – {pair['b']}", "1", f"{pair['a_wins']}–{pair['b_wins']}",
                             str(pair["draws"])]
            assert await fits(phone)
            violations = await severe_violations(phone)
            await phone.screenshot(path=str(ARTIFACTS / "group-phone.png"), full_page=True)
            await laptop.locator("#rivals-body tr").wait_for(timeout=10_000)  # opened after the race
            await laptop.screenshot(path=str(ARTIFACTS / "group-desktop.png"), full_page=True)
            assert violations == [], violations

            # The day before and back.
            await phone.get_by_role("link", name="previous day").click()
            await phone.wait_for_url("**?date=*")
            day_before = phone.url.rsplit("=", 1)[1]
            assert day_before < date
            await phone.locator("#boards-title").filter(has_text=day_before).wait_for()
            assert await phone.locator("#boards-title").inner_text() == f"GROUP BOARD · {day_before}"
            await phone.locator('section[data-variant="relaxed"] .empty').filter(has_text="that day").wait_for()
            await phone.get_by_role("link", name="next day").click()
            await phone.wait_for_url(f"**/groups/{group_id}")
            await phone.locator('section[data-variant="relaxed"] tbody tr').first.wait_for(timeout=10_000)

            # bob leaves; a wrong key, a full group and no group are refused in words.
            await laptop.get_by_role("button", name="Leave").click()
            await laptop.get_by_role("button", name="Yes, leave").click()
            await laptop.get_by_role("button", name=f"Join as {bob}").wait_for(timeout=10_000)
            assert await laptop.get_by_role("list", name="Members").locator("li a").all_inner_texts() == [zoe]
            key = await held_key(laptop, bob)
            await laptop.evaluate("(name) => FTR.keepPlayerKey(name, 'x'.repeat(32))", bob)
            await laptop.get_by_role("button", name=f"Join as {bob}").click()
            refusal = laptop.locator("#join-problem")
            await refusal.filter(has_text="is not the one the server holds").wait_for(timeout=10_000)
            await laptop.evaluate("([name, key]) => FTR.keepPlayerKey(name, key)", [bob, key])
            # A key of a member's name the server no longer holds (Zoë's, say, made anew on another device): the
            # page is not hers here, and offers to join as bob (shown only once the stale key is refused).
            await laptop.evaluate("(name) => FTR.keepPlayerKey(name, 'y'.repeat(32))", zoe)
            await laptop.reload()
            await laptop.get_by_role("button", name=f"Join as {bob}").wait_for(timeout=10_000)
            assert await laptop.locator("#you-row").is_hidden() and await laptop.locator(".badge.you").count() == 0
            assert await laptop.get_by_role("button", name=f"Join as {zoe}").count() == 0
            await laptop.evaluate("(name) => FTR.forgetPlayerKey(name)", zoe)

            full = full_group(server)
            await laptop.goto(full["join_url"])
            await laptop.get_by_role("button", name=f"Join as {bob}").click()
            await refusal.filter(has_text="This group is full").wait_for(timeout=10_000)
            await laptop.set_viewport_size(PHONE_360["viewport"])
            assert await fits(laptop)  # 50 members' names and a name of 40 letters without a space wrap in 360 px
            await laptop.screenshot(path=str(ARTIFACTS / "group-join-phone.png"), full_page=True)

            for nobody in ("zzzzzzzzzz", "%E0%A4%A"):  # no group of that id; an escape that decodes to nothing
                await laptop.goto(f"{server.url}/groups/{nobody}")
                await laptop.locator("#headline").filter(has_text="No such group").wait_for(timeout=10_000)
                assert await laptop.get_by_role("button", name="Join").count() == 0
            await browser.close()
        assert not problems, problems
    finally:
        stop_daily_server(server)


def full_group(server: Any) -> dict[str, Any]:
    """A group of :data:`MAX_MEMBERS` names claimed over HTTP (``POST /players``), the first its maker, its name
    40 letters with no space to break at: its JSON."""
    with httpx.Client(base_url=server.url, timeout=10) as http:
        keys = []
        for i in range(MAX_MEMBERS):
            claimed = http.post("/players", json={"name": f"member {i:02d} longish name"})
            assert claimed.status_code == 201, claimed.text
            keys.append((claimed.json()["name"], claimed.json()["player_key"]))
        made = http.post("/groups", json={"name": "W" * 40, "player": keys[0][0], "player_key": keys[0][1]})
        assert made.status_code == 201, made.text
        group = made.json()["group"]
        for name, key in keys[1:]:
            joined = http.post(f"/groups/{group}/members", json={"player": name, "player_key": key})
            assert joined.status_code == 200, joined.text
        answer = http.get(f"/groups/{group}", headers={"Accept": "application/json"}).json()
    assert len(answer["members"]) == MAX_MEMBERS
    return dict(answer)
