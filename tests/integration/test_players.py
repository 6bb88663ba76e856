"""Named players on a real server and Redis: a name claimed on first use (``POST /players``, a race's join, a
daily attempt), its key checked, rotated, recovered; the player deleted; look-alike names one player."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator

import httpx
import pytest
import redis

from protocol import messages as m
from server.names import name_key
from server.store.keys import DAILY_NAMES, name_hash, profile_key

from .conftest import ServerProcess
from .wsclient import PLAYER_KEYS, Player, create_match, resigned_race

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SEED = "4"
VARIANT = "relaxed"


@pytest.fixture(scope="module")
def srv(redis_url: str) -> Iterator[ServerProcess]:
    """One server for the cases that need no special settings (each case uses names of its own)."""
    process = ServerProcess(redis_url)
    yield process
    process.stop()


def claim(server: ServerProcess, name: str) -> httpx.Response:
    return httpx.post(f"{server.url}/players", json={"name": name}, timeout=10)


def wait_for_log(server: ServerProcess, text: str) -> str:
    """The server's log once it holds ``text`` (the access log's line is written just after the answer)."""
    for _ in range(50):
        if text in (logs := server.logs()):
            return logs
        time.sleep(0.02)
    return server.logs()


def page(server: ServerProcess, name: str) -> httpx.Response:
    return httpx.get(f"{server.url}/players/{name}", headers={"Accept": "application/json"}, timeout=10)


def stored(url: str, name: str) -> dict[bytes, bytes]:
    with redis.Redis.from_url(url) as client:
        return client.hgetall(profile_key(name_hash(name_key(name)), "profile"))  # type: ignore[return-value]


def test_a_free_name_is_claimed_with_a_key_and_a_recovery_code_stored_hashed(srv: ServerProcess,
                                                                            redis_url: str) -> None:
    server = srv
    made = claim(server, "Bill")
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["name"] == "Bill" and len(body["player_key"]) == 32
    assert len(body["recovery_code"]) == 19 and body["recovery_code"].count("-") == 3
    profile = stored(redis_url, "Bill")
    assert profile[b"key"] == hashlib.sha256(body["player_key"].encode()).hexdigest().encode()
    assert body["player_key"].encode() not in b"".join(profile.values())
    assert body["recovery_code"].replace("-", "").encode() not in b"".join(profile.values())
    for other in ("Bill", "BiII", "bill", "B\u0131ll"):  # look-alikes are one name
        taken = claim(server, other)
        assert taken.status_code == 409 and taken.json()["error"] == "name_taken", (other, taken.text)
    shown = page(server, "BiII")  # any look-alike finds the player
    assert shown.status_code == 200, shown.text
    assert shown.json() == {"name": "Bill", "games": 0, "wins": 0, "win_rate": 0.0,
                            "created_ms": int(profile[b"created_ms"]), "records": [], "recent": [],
                            "head_to_head": [], "variants": {}, "streak": 0, "best_streak": 0, "freezes": 0}
    missing = page(server, "nobody")
    assert missing.status_code == 404 and missing.json()["error"] == "no_player"
    assert claim(server, " bad").status_code == 400
    # A key sent where none is read, in the address, reaches no log line either (the access log's included).
    httpx.get(f"{server.url}/players/Bill?player_key={body['player_key']}&limit=2", timeout=10)
    httpx.post(f"{server.url}/players/Bill/key?token={body['player_key']}", json={"player_key": "x"}, timeout=10)
    assert "/players/Bill?player_key=REDACTED&limit=2" in wait_for_log(server, "REDACTED&limit=2")
    assert server.logs().count(body["player_key"]) == 0


async def test_a_join_claims_a_free_name_and_a_claimed_name_needs_its_key(srv: ServerProcess) -> None:
    server = srv
    first = create_match(server.url, variant=VARIANT, seed=SEED, players=2)
    ann = Player(server.ws_url)
    await ann.connect()
    joined = await ann.join(first["code"], "Ann", "")
    assert joined.player_key and joined.recovery_code and joined.name == "Ann"
    second = create_match(server.url, variant=VARIANT, seed=SEED, players=2)
    thief = Player(server.ws_url)
    await thief.connect()
    before = page(server, "Ann").content
    for name, key, code in (("Ann", "", "bad_token"), ("Ann", "x" * 32, "bad_token"),
                            ("ANN", joined.player_key, "name_taken"), ("\uff21nn", "", "name_taken")):
        await thief.send(m.Join(second["code"], name, key))
        refused = await thief.expect(m.Joined)
        assert isinstance(refused, m.Error) and refused.code == code, (name, refused)
        assert joined.player_key not in refused.message
    assert page(server, "Ann").content == before  # nothing changed
    assert httpx.get(f"{server.url}/matches/{second['code']}").json()["players"] == []
    again = await thief.join(second["code"], "Ann", joined.player_key)  # with the key: another device
    assert again.player_key == "" and again.recovery_code == ""
    resumed = Player(server.ws_url)
    await resumed.connect()
    resumed.token = ann.token
    back = await resumed.resume(first["code"])  # a stolen race token resumes the race, never the name
    assert back.player_key == "" and back.recovery_code == ""
    for player in (ann, thief, resumed):
        await player.close()
    assert joined.player_key not in server.logs() and joined.recovery_code not in server.logs()


async def test_a_join_refused_after_its_claim_frees_the_name(srv: ServerProcess) -> None:
    server = srv
    created = create_match(server.url, variant=VARIANT, seed=SEED, players=1)
    one, two = Player(server.ws_url), Player(server.ws_url)
    await one.connect()
    await two.connect()
    await one.join(created["code"], "first")
    await two.send(m.Join(created["code"], "second", ""))
    full = await two.expect(m.Joined)
    assert isinstance(full, m.Error) and full.code == "match_full"
    assert page(server, "second").status_code == 404  # the claim was undone
    assert claim(server, "second").status_code == 201
    for player in (one, two):
        await player.close()


def test_rotate_recover_and_delete(srv: ServerProcess, redis_url: str) -> None:
    server = srv
    body = claim(server, "Rita").json()
    key, code = body["player_key"], body["recovery_code"]
    url = f"{server.url}/players/Rita"
    wrong = httpx.post(url + "/key", json={"player_key": "nope"}, timeout=10)
    assert wrong.status_code == 403 and wrong.json()["error"] == "bad_token"
    rotated = httpx.post(url + "/key", headers={"Authorization": f"Bearer {key}"}, timeout=10)
    assert rotated.status_code == 200, rotated.text
    new_key = rotated.json()["player_key"]
    assert new_key != key
    assert httpx.post(url + "/key", json={"player_key": key}, timeout=10).status_code == 403  # the old one is void
    bad = httpx.post(url + "/recover", json={"recovery_code": "AAAA-AAAA-AAAA-AAAA"}, timeout=10)
    assert bad.status_code == 403 and bad.json()["error"] == "bad_token"
    recovered = httpx.post(url + "/recover", json={"recovery_code": code.lower().replace("-", " ")}, timeout=10)
    assert recovered.status_code == 200, recovered.text
    third, new_code = recovered.json()["player_key"], recovered.json()["recovery_code"]
    assert new_code != code
    assert httpx.post(url + "/key", json={"player_key": new_key}, timeout=10).status_code == 403
    assert httpx.post(url + "/recover", json={"recovery_code": code}, timeout=10).status_code == 403
    before = page(server, "Rita").content
    other = httpx.request("DELETE", url, json={"player_key": new_key}, timeout=10)
    assert other.status_code == 403 and other.json()["error"] == "bad_token"
    assert page(server, "Rita").content == before
    gone = httpx.request("DELETE", url, headers={"Authorization": f"Bearer {third}"}, timeout=10)
    assert gone.status_code == 204 and gone.content == b""
    assert page(server, "Rita").status_code == 404
    with redis.Redis.from_url(redis_url) as client:
        assert not list(client.scan_iter(f"{{n:{name_hash(name_key('Rita'))}}}*"))
    assert claim(server, "Rita").status_code == 201  # free again
    for secret in (key, new_key, third, code, new_code):
        assert secret not in server.logs()


async def test_daily_attempts_claims_release_and_the_limit_on_one_daily_server(srv: ServerProcess, make_server,
                                                                                  redis_url: str) -> None:
    """One server with the daily challenge, names released after 30 days unused and 4 claims an hour per
    address: a daily attempt claims its name (and takes its key, or the older ``token``), a daily name from
    before keeps its token, a released name is free again (never on a server of the default), and past the
    limit a claim is refused over HTTP, in a daily attempt and in a join alike."""
    server = make_server(FTR_DAILY_VARIANTS="relaxed", FTR_NAME_RELEASE_DAYS="30", FTR_NAMES_PER_HOUR="4")
    url = f"{server.url}/daily/relaxed/attempt"
    first = httpx.post(url, json={"name": "Dee"}, timeout=60)  # claim 1
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["player_key"] == body["name_token"] and body["recovery_code"]
    assert httpx.post(url, json={"name": "Dee"}, timeout=10).json()["error"] == "bad_token"
    again = httpx.post(url, json={"name": "Dee", "player_key": body["player_key"]}, timeout=10)
    assert again.status_code == 200 and "player_key" not in again.json() and again.json()["match"] == body["match"]
    legacy = httpx.post(url, json={"name": "Dee", "token": body["player_key"]}, timeout=10)  # the older field
    assert legacy.status_code == 200, legacy.text
    assert page(server, "Dee").json()["games"] == 0

    # A daily name claimed before named players existed: its token becomes its player key (no claim spent).
    token = "an old daily token"
    with redis.Redis.from_url(redis_url) as client:
        client.hset(DAILY_NAMES, name_key("Old"), f"{hashlib.sha256(token.encode()).hexdigest()} Old")
    assert claim(server, "Old").status_code == 409
    assert page(server, "Old").status_code == 404
    assert httpx.post(url, json={"name": "Old"}, timeout=10).json()["error"] == "bad_token"
    moved = httpx.post(url, json={"name": "Old", "token": token}, timeout=10)
    assert moved.status_code == 200, moved.text
    assert moved.json()["recovery_code"] and "player_key" not in moved.json()
    rotated = httpx.post(f"{server.url}/players/Old/key", json={"player_key": token}, timeout=10)
    assert rotated.status_code == 200, rotated.text
    assert httpx.request("DELETE", f"{server.url}/players/Old", json=rotated.json(), timeout=10).status_code == 204
    with redis.Redis.from_url(redis_url) as client:
        assert not client.hexists(DAILY_NAMES, name_key("Old"))

    # Released: unused for 31 days, the name is free on this server, never on one of the default settings.
    vera = claim(srv, "Vera").json()  # claim 2 (on the other server)
    with redis.Redis.from_url(redis_url) as client:
        key = profile_key(name_hash(name_key("Vera")), "profile")
        client.hincrby(key, "seen_ms", -31 * 86_400_000)
        client.hincrby(key, "created_ms", -31 * 86_400_000)
    assert claim(srv, "Vera").status_code == 409
    again_vera = claim(server, "VERA")  # claim 2
    assert again_vera.status_code == 201 and again_vera.json()["name"] == "VERA", again_vera.text
    assert httpx.post(f"{srv.url}/players/Vera/key", json={"player_key": vera["player_key"]},
                      timeout=10).status_code == 403  # the old key went with its claim
    assert page(srv, "vera").json()["name"] == "VERA"

    # A daily attempt's history entry holds no seed before the day is revealed (claim 3).
    answer = httpx.post(url, json={"name": "Dana"}, timeout=10).json()
    dana = Player(server.ws_url)
    await dana.connect()
    dana.token = answer["player_token"]
    await dana.resume(answer["match"])
    assert isinstance(await dana.expect(m.Started), m.Started)
    await dana.resign()
    results = await dana.expect(m.Results)
    assert isinstance(results, m.Results) and results.seed == "" and results.head_to_head == []
    await dana.close()
    with redis.Redis.from_url(redis_url) as client:
        seed = client.hget(f"{{d:{answer['date']}:relaxed}}:deal", "seed").decode()  # type: ignore[union-attr]
        dumped = [client.dump(key) for key in client.scan_iter(f"{{n:{name_hash(name_key('Dana'))}}}*")]
    # profile, games, done, deals, deal_times, days and ghosts (no rivals)
    assert len(dumped) == 7 and all(seed.encode() not in value for value in dumped)  # type: ignore[operator]
    shown = page(server, "Dana")
    (entry,) = shown.json()["recent"]
    assert entry["kind"] == "daily" and entry["daily"] == answer["date"] and entry["seed"] is None
    assert entry["deal"] == f"daily {answer['date']}" and entry["players"] == ["Dana"]
    assert entry["replay"] == f"/daily/{answer['date']}/relaxed/replay/Dana" and entry["status"] == "resigned"
    assert json.dumps(seed) not in shown.text

    # The limit: claim 4, then every way of claiming is refused; a claimed name is no claim.
    keys = [claim(server, "one").json()["player_key"]]
    refused = claim(server, "three")
    assert refused.status_code == 429 and refused.json()["error"] == "rate_limited", refused.text
    attempt = httpx.post(url, json={"name": "three"}, timeout=10)
    assert attempt.status_code == 429 and attempt.json()["error"] == "rate_limited"
    created = create_match(server.url, variant=VARIANT, seed=SEED, players=2)
    player = Player(server.ws_url)
    await player.connect()
    await player.send(m.Join(created["code"], "three", ""))
    limited = await player.expect(m.Joined)
    assert isinstance(limited, m.Error) and limited.code == "rate_limited"
    assert page(server, "three").status_code == 404
    joined = await player.join(created["code"], "one", keys[0])
    assert joined.name == "one" and joined.player_key == ""
    await player.close()


async def test_a_name_deleted_and_claimed_again_starts_a_head_to_head_of_its_own(srv: ServerProcess) -> None:
    """The races of a deleted player are not the new claimant's: neither side counts them against the name."""

    async def race(names: tuple[str, str]) -> m.Results:
        return await resigned_race(srv.url, srv.ws_url, names, variant=VARIANT, seed=SEED)

    def pairs(results: m.Results) -> list[tuple[set[str], int, int]]:  # a draw: either may be ranked first
        return [({r.a, r.b}, r.draws, r.races) for r in results.head_to_head]

    assert pairs(await race(("Ruth", "Omar"))) == [({"Ruth", "Omar"}, 1, 1)]
    gone = httpx.request("DELETE", f"{srv.url}/players/Omar", json={"player_key": PLAYER_KEYS[name_key("Omar")]},
                         timeout=10)
    assert gone.status_code == 204
    again = claim(srv, "Omar")
    assert again.status_code == 201
    PLAYER_KEYS[name_key("Omar")] = again.json()["player_key"]
    versus = httpx.get(f"{srv.url}/players/Ruth/versus/Omar", timeout=10).json()
    assert (versus["races"], versus["draws"]) == (0, 0)
    assert page(srv, "Ruth").json()["head_to_head"] == []
    assert pairs(await race(("Ruth", "Omar"))) == [({"Ruth", "Omar"}, 1, 1)]
    shown = page(srv, "Ruth").json()["head_to_head"]
    assert [(r["name"], r["races"], r["draws"]) for r in shown] == [("Omar", 1, 1)]
