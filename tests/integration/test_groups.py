"""Groups (a board among friends) on a real server and Redis: a group's daily board holds its members only, ranked
among themselves beside their places on the public board, and nothing of the deal before the day's end; its
head-to-head table counts its members' races against each other; leaving, and deleting a player, take the player
out; the bounds and bad input change nothing.

One server process for the whole file (its clock, ``FTR_CLOCK_OFFSET_MS``, at noon UTC of tomorrow: a day nobody
else plays), on a database of its own. Each test uses names of its own.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import redis

from server.engine import deal, find_variant, format_position
from server.names import name_key
from server.store.keys import MAX_GROUP_MEMBERS, MAX_GROUPS, group_key, name_hash, profile_key

from .conftest import ServerProcess
from .test_daily_day import CARD, SECRET, VARIANT, Attempt, Seen, deal_of_the_day
from .test_daily_habit import key as rank_key
from .test_players_history import race
from .test_race import solution
from .wsclient import PLAYER_KEYS, Player

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.xdist_group("groups")]

DB = 4
DAY_MS = 86_400_000
PUBLIC = "https://race.example.org"
NAMES_PER_HOUR = 110
"""The server's FTR_NAMES_PER_HOUR: the bucket of name claims, which a group's making spends too."""
JSON = {"Accept": "application/json"}


class Site:
    """The file's server process and one HTTP client for it (a connection kept: a client per request costs more
    than the request)."""

    def __init__(self, process: ServerProcess) -> None:
        self.process = process
        self.url, self.ws_url = process.url, process.ws_url
        self.redis_url = process.env["REDIS_URL"]
        self.http = httpx.Client(base_url=process.url)

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self.http.request(method, path, **kwargs)

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.http.get(path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.http.post(path, **kwargs)


@pytest.fixture(scope="module")
def server(redis_url: str) -> Iterator[Site]:
    url = redis_url.rsplit("/", 1)[0] + f"/{DB}"
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    noon = (int(time.time() * 1000) // DAY_MS + 1) * DAY_MS + DAY_MS // 2
    process = ServerProcess(url, FTR_CLOCK_OFFSET_MS=str(noon - int(time.time() * 1000)), FTR_DAILY_SECRET=SECRET,
                            FTR_DAILY_VARIANTS=VARIANT, FTR_PUBLIC_URL=PUBLIC, FTR_NAMES_PER_HOUR=str(NAMES_PER_HOUR))
    site = Site(process)
    yield site
    site.http.close()
    process.stop()
    with redis.Redis.from_url(url) as client:
        client.flushdb()


def claim(server: Site, name: str) -> str:
    """Claim ``name``; its player key (kept for the test's WebSocket joins too)."""
    answer = server.post("/players", json={"name": name})
    assert answer.status_code == 201, answer.text
    PLAYER_KEYS[name_key(name)] = answer.json()["player_key"]
    return str(answer.json()["player_key"])


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def make_group(server: Site, name: str, player: str, key: str) -> dict[str, Any]:
    answer = server.post("/groups", json={"name": name, "player": player, "player_key": key})
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def join(server: Site, group: str, player: str, key: str, expect: int = 200) -> httpx.Response:
    answer = server.post(f"/groups/{group}/members", json={"player": player}, headers=bearer(key))
    assert answer.status_code == expect, answer.text
    return answer


def leave(server: Site, group: str, player: str, key: str) -> httpx.Response:
    return server.request("DELETE", f"/groups/{group}/members/{quote(player, safe='')}", headers=bearer(key))


def shown(server: Site, group: str, expect: int = 200) -> dict[str, Any]:
    answer = server.get(f"/groups/{group}", headers=JSON)
    assert answer.status_code == expect, answer.text
    return dict(answer.json())


def groups_of(server: Site, name: str) -> list[dict[str, str]]:
    """The player's groups as its own page shows them (with its key: a group's id is shown to its members only,
    so anyone else's read of the page has no ``groups``)."""
    path = f"/players/{quote(name, safe='')}"
    anyone = server.get(path, headers=JSON)
    assert anyone.status_code == 200 and "groups" not in anyone.json(), anyone.text
    wrong = server.get(path, headers={**JSON, **bearer("guessed")})
    assert (wrong.status_code, wrong.json()["error"]) == (403, "bad_token")
    answer = server.get(path, headers={**JSON, **bearer(PLAYER_KEYS[name_key(name)])})
    assert answer.status_code == 200, answer.text
    return list(answer.json()["groups"])


async def test_a_groups_board_holds_only_its_members(server: Site) -> None:
    keys = {name: claim(server, name) for name in ("Ann", "bob", "cy")}
    made = make_group(server, "Ann's friends", "Ann", keys["Ann"])
    group = made["group"]
    assert made["join_url"] == f"{PUBLIC}/groups/{group}/join" and made["page_url"] == f"{PUBLIC}/groups/{group}"
    assert join(server, group, "cy", keys["cy"]).json()["members"] == ["Ann", "cy"]

    seen = Seen()
    date = seen.get(f"{server.url}/daily").json()["date"]
    _, seed, moves = deal_of_the_day(date, VARIANT)
    connections: list[Player] = []
    attempts = {name: Attempt(server.process, seen, name, connections) for name in keys}
    try:
        for name, attempt in attempts.items():
            attempt.name_token = keys[name]
            await attempt.begin()
        await attempts["Ann"].play(moves)  # won
        await attempts["bob"].play(moves[:30])
        await attempts["bob"].resign()
        await attempts["cy"].play(moves[:3])
        await attempts["cy"].resign()
    finally:
        for player in connections:
            await player.close()

    # The expected places, from what each player observed (DESIGN.md "Ranking"), not from the server's board.
    observed = {name: attempt.expected_entry() for name, attempt in attempts.items()}
    board_url = f"{server.url}/groups/{group}/daily/{date}/{VARIANT}"
    deadline = time.monotonic() + 10
    while (board := seen.get(board_url).json())["total"] < 2:  # the attempts' ends are recorded as they finalize
        assert time.monotonic() < deadline, board
        time.sleep(0.05)
    public = {row["name"]: row for row in seen.get(f"{server.url}/daily/{date}/{VARIANT}/leaderboard").json()["entries"]}
    assert set(public) == {"Ann", "bob", "cy"}
    members = ["Ann", "cy"]
    expected = sorted(members, key=lambda n: (rank_key(observed[n]), n))
    assert (board["group"], board["name"], board["date"], board["variant"]) == (group, "Ann's friends", date, VARIANT)
    assert board["final"] is False and board["total"] == 2
    assert [row["name"] for row in board["entries"]] == expected
    for row in board["entries"]:
        name = row["name"]
        assert row["rank"] == 1 + sum(rank_key(observed[o]) < rank_key(observed[name]) for o in members)
        assert row["board_rank"] == 1 + sum(rank_key(observed[o]) < rank_key(observed[name]) for o in observed)
        status, time_ms, moves_made, foundation, _ = observed[name]
        assert (row["status"], row["time_ms"], row["moves"], row["foundation"]) == (status, time_ms, moves_made,
                                                                                  foundation)
        assert {k: v for k, v in row.items() if k != "board_rank"} == {**public[name], "rank": row["rank"]}
    assert board["entries"][0]["name"] == "Ann" and board["entries"][0]["status"] == "won"

    # The group's JSON and the members' pages before the day's end: no seed, deal or card.
    page = server.get(f"/groups/{group}")  # no Accept: the page (static: it reads the JSON checked below)
    assert page.headers["content-type"].startswith("text/html")
    assert shown(server, group)["today"] == date and shown(server, group)["variants"] == [VARIANT]
    seen.items.append((f"/groups/{group}", server.get(f"/groups/{group}", headers=JSON).content))
    for name in members:
        own = server.get(f"/players/{name}", headers={**JSON, **bearer(keys[name])})  # its groups too
        seen.items.append((f"/players/{name}", own.content))
    assert page.status_code == 200
    deal_text = format_position(deal(seed, find_variant(VARIANT)))
    lines = [line.strip() for line in deal_text.splitlines() if len(line.strip()) > 4]
    checked = [(where, data.decode()) for where, data in seen.items if "/groups/" in where or "/players/" in where]
    assert len(checked) >= 4
    for where, text in checked:
        assert seed not in text and "solution" not in text, where
        assert not CARD.findall(text), (where, CARD.findall(text))
        assert not any(line in text for line in lines), where
        if "/groups/" in where:  # a player's page has a "deal" label ("daily DATE") and a null "seed"
            assert '"seed"' not in text and '"deal"' not in text, where

    # A restart (the process killed) loses nothing: the group and its board are Redis's.
    kept = (shown(server, group), server.get(board_url).json())
    server.process.kill()
    server.process.start()
    assert (shown(server, group), server.get(board_url).json()) == kept

    # Another day's board, another variant, a bad date: the daily's own answers.
    for path, status, code in ((f"{date}/classic", 404, "no_variant"), ("2999-01-01/" + VARIANT, 404, "no_day"),
                               (f"2026-02-30/{VARIANT}", 400, "malformed"), (f"{date}/{VARIANT}", 404, "no_group")):
        where = f"/groups/{group if code != 'no_group' else 'zzzzzzzzzz'}/daily/{path}"
        answer = server.get(where)
        assert (answer.status_code, answer.json()["error"]) == (status, code), (path, answer.text)


async def test_the_head_to_head_table_counts_members_races_against_each_other(server: Site) -> None:
    keys = {name: claim(server, name) for name in ("dee", "eve", "fay", "gus")}
    group = make_group(server, "racers", "dee", keys["dee"])["group"]
    join(server, group, "eve", keys["eve"])
    join(server, group, "fay", keys["fay"])
    assert shown(server, group)["head_to_head"] == []
    moves = solution()
    await race(server.url, server.ws_url, "dee", "eve", moves)
    await race(server.url, server.ws_url, "dee", "eve", moves)
    await race(server.url, server.ws_url, "fay", "dee", moves)
    await race(server.url, server.ws_url, "gus", "eve", moves)  # gus is no member: not in the table
    table = shown(server, group)["head_to_head"]
    assert table == [{"a": "dee", "b": "eve", "races": 2, "a_wins": 2, "b_wins": 0, "draws": 0},
                     {"a": "dee", "b": "fay", "races": 1, "a_wins": 0, "b_wins": 1, "draws": 0}]
    # The players' own head-to-head says the same.
    versus = server.get("/players/dee/versus/fay").json()
    assert (versus["races"], versus["a_wins"], versus["b_wins"]) == (1, 0, 1)


def test_leaving_and_deleting_a_player_take_it_out(server: Site) -> None:
    keys = {name: claim(server, name) for name in ("hal", "ida", "a/b{c}")}
    first = make_group(server, "first", "hal", keys["hal"])["group"]
    second = make_group(server, "s/{g:x}", "ida", keys["ida"])["group"]  # a name is a value, never in a key
    join(server, first, "ida", keys["ida"])
    odd = "a/b{c}"  # a name with "/" and braces: one path segment (%2F), never in a key's hash tag
    assert join(server, first, odd, keys[odd]).json()["members"] == ["a/b{c}", "hal", "ida"]
    twice = join(server, first, odd, keys[odd]).json()  # joining twice: the same answer, nothing doubled
    assert twice == shown(server, first) and twice["members"] == ["a/b{c}", "hal", "ida"]
    assert groups_of(server, "ida") == [{"group": first, "name": "first"}, {"group": second, "name": "s/{g:x}"}]

    # Leaving: 204, and again 204; the group and the player's page both lose it.
    assert leave(server, first, odd, keys[odd]).status_code == 204
    assert leave(server, first, odd, keys[odd]).status_code == 204
    assert shown(server, first)["members"] == ["hal", "ida"] and groups_of(server, odd) == []
    refused = leave(server, first, "ida", keys["hal"])  # another's key: nothing changes
    assert (refused.status_code, refused.json()["error"]) == (403, "bad_token")
    assert shown(server, first)["members"] == ["hal", "ida"]

    # Deleting a player takes it out of every group it was in; the last member gone, the group is gone.
    assert server.request("DELETE", "/players/ida", headers=bearer(keys["ida"])).status_code == 204
    assert shown(server, first)["members"] == ["hal"]
    gone = shown(server, second, expect=404)
    assert gone["error"] == "no_group"
    ida_again = claim(server, "ida")  # the name claimed anew is another player: in no group
    assert groups_of(server, "ida") == [] and shown(server, first)["members"] == ["hal"]
    assert join(server, second, "ida", ida_again, expect=404).json()["error"] == "no_group"
    assert groups_of(server, "ida") == []  # the refused join left nothing on the player's side
    assert leave(server, first, "hal", keys["hal"]).status_code == 204
    assert shown(server, first, expect=404)["error"] == "no_group"
    assert leave(server, first, "hal", keys["hal"]).status_code == 204  # leaving a group gone: 204 too
    assert groups_of(server, "hal") == []

    # A name released and claimed anew loses its keys, the groups' side with them (CLAIM_NAME): that player is in
    # no group, and the group's entry for it is not shown.
    third = make_group(server, "third", "hal", keys["hal"])["group"]
    join(server, third, odd, keys[odd])
    with redis.Redis.from_url(server.redis_url) as client:
        client.delete(profile_key(name_hash(name_key(odd)), "groups"))  # what a release's new claim deletes
        assert shown(server, third)["members"] == ["hal"]
        # A read only hides the entry (a deletion could undo a join made meanwhile); joining again is one entry.
        assert client.hlen(group_key(third, "members")) == 2
        assert join(server, third, odd, keys[odd]).json()["members"] == ["a/b{c}", "hal"]
        assert client.hlen(group_key(third, "members")) == 2


def test_bounds_and_bad_input_change_nothing(server: Site) -> None:
    owner_key = claim(server, "jo")
    group = make_group(server, "x" * 40, "jo", owner_key)["group"]
    before = [shown(server, group)]
    url = "/groups"

    def refused(method: str, where: str, status: int, code: str, **kwargs: Any) -> None:
        answer = server.request(method, where, **kwargs)
        assert (answer.status_code, answer.json()["error"]) == (status, code), (where, kwargs, answer.text)
        assert shown(server, group) == before[0]

    body = {"name": "g", "player": "jo", "player_key": owner_key}
    refused("POST", url, 400, "malformed", content=b'{"name": "g", "player": ', headers={"Content-Type":
                                                                                          "application/json"})
    refused("POST", url, 415, "malformed", content=b'{"name": "g"}', headers={"Content-Type": "text/plain"})
    refused("POST", url, 400, "malformed", json={**body, "extra": 1})
    refused("POST", url, 400, "malformed", json={**body, "name": "x" * 41})
    refused("POST", url, 400, "malformed", json={**body, "name": " spaced"})
    refused("POST", url, 400, "malformed", json={**body, "name": 7})
    refused("POST", url, 413, "frame_too_large", json={**body, "name": "x" * 10_000})
    refused("POST", url, 403, "bad_token", json={**body, "player_key": "guessed"})
    refused("POST", url, 403, "bad_token", json={"name": "g", "player": "jo"})
    refused("POST", url, 404, "no_player", json={**body, "player": "nobody"})
    members = f"{url}/{group}/members"
    refused("POST", members, 403, "bad_token", json={"player": "jo", "player_key": "guessed"})
    refused("POST", members, 400, "malformed", json={"name": "jo"})
    refused("POST", f"{url}/zzzzzzzzzz/members", 404, "no_group", json={"player": "jo", "player_key": owner_key})
    for odd in ("%7Bg:x%7D", "..%2F..", "x" * 200, "ABC"):  # no group id: 404, and no key is read
        refused("GET", f"{url}/{odd}", 404, "no_group", headers=JSON)
    refused("GET", f"{url}/{group}/nothing", 404, "not_found")
    refused("PUT", f"{url}/{group}", 405, "method_not_allowed")
    assert shown(server, group.upper()) == before[0]  # an id in capitals is the same group

    # A full group: 50 join at once, one more than it has room for; exactly one is refused and left in no group,
    # and each side of the others holds the other (the two scripts of a join never run past the bound).
    keys = {f"m{i:02d}": claim(server, f"m{i:02d}") for i in range(MAX_GROUP_MEMBERS)}
    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = dict(zip(keys, pool.map(lambda name: server.post(f"/groups/{group}/members", json={
            "player": name}, headers=bearer(keys[name])), keys)))
    refused_ones = [name for name, answer in answers.items() if answer.status_code != 200]
    assert len(refused_ones) == 1, {name: answer.status_code for name, answer in answers.items()}
    last = refused_ones[0]
    assert answers[last].status_code == 409 and answers[last].json()["error"] == "group_full"
    assert groups_of(server, last) == []
    before[0] = shown(server, group)
    assert sorted(before[0]["members"]) == sorted(["jo", *(name for name in keys if name != last)])
    with redis.Redis.from_url(server.redis_url) as client:
        sides = {name: client.hexists(profile_key(name_hash(name_key(name)), "groups"), group) for name in keys}
        assert client.hlen(group_key(group, "members")) == MAX_GROUP_MEMBERS
    assert sides == {name: name != last for name in keys}

    # A player in as many groups as it may be: a 21st is refused, made or joined.
    other = make_group(server, "other", last, keys[last])["group"]
    for index in range(MAX_GROUPS - 1):
        make_group(server, f"g{index}", "jo", owner_key)
    assert len(groups_of(server, "jo")) == MAX_GROUPS
    refused("POST", url, 409, "too_many_groups", json=body)
    again = join(server, other, "jo", owner_key, expect=409)
    assert again.json()["error"] == "too_many_groups" and shown(server, other)["members"] == [last]
    assert len(groups_of(server, "jo")) == MAX_GROUPS

    # Makings are counted in the bucket of name claims (FTR_NAMES_PER_HOUR): at most that many, then 429.
    maker = claim(server, "kit")
    answers = []
    for _ in range(NAMES_PER_HOUR):
        answers.append(server.post(url, json={"name": "many", "player": "kit", "player_key": maker}))
        if answers[-1].status_code == 429:
            break
    assert answers[-1].status_code == 429 and answers[-1].json()["error"] == "rate_limited"
    assert {a.status_code for a in answers[:-1]} == {201, 409}  # made, then too many groups
    assert len(groups_of(server, "kit")) == MAX_GROUPS
