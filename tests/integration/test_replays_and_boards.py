"""Replays once a match ended, and the open-boards option, against a real server."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import httpx
import msgspec
import pytest
import redis

from protocol import messages as m
from server.engine import find_variant, parse_view

from .conftest import ROOT
from .test_race import SEED, VARIANT, lobby_of_two, solution
from .test_spectating import read_events
from .wsclient import public_state

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


async def test_a_replay_is_public_once_the_match_ended_and_the_engine_verifies_it(server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    moves = solution()

    async def run() -> tuple[dict, dict, dict, dict, dict]:
        created, alice, bob = await lobby_of_two(server)
        code = created["code"]
        await alice.expect(m.Started)
        await bob.expect(m.Started)
        for command in moves:
            await alice.play(command)
        await bob.play("s")
        await bob.play("s")
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            early = await http.get(f"/matches/{code}/replays/alice")  # alice won, bob still plays
            assert early.status_code == 409 and early.json()["error"] == "not_finished", early.text
            assert set(early.json()) == {"error", "message"}  # nothing of the game before the end
            await bob.resign()
            results = await alice.expect(m.Results)
            assert (await http.get(f"/matches/{code}/replays/carol")).status_code == 404
            assert (await http.get(f"/matches/{code}/replays/carol")).json()["error"] == "no_player"
            assert (await http.get("/matches/nope/replays/alice")).json()["error"] == "no_match"
            assert (await http.get(f"/matches/{code}/replays/alice?positions=maybe")).status_code == 400
            record = (await http.get(f"/matches/{code}/replays/alice")).json()
            bobs = (await http.get(f"/matches/{code}/replays/bob?positions=1")).json()
            full = (await http.get(f"/matches/{code}/replays/alice?positions=1")).json()
        await alice.close()
        await bob.close()
        return created, msgspec.to_builtins(results), record, bobs, full

    created, results, record, bobs, full = await run()
    ranking = {row["name"]: row for row in results["ranking"]}
    assert record["moves"] == moves and len(record["times_ms"]) == len(moves)
    assert record["times_ms"] == sorted(record["times_ms"])
    assert record["seed"] == SEED and record["variant"] == VARIANT
    assert record["commitment"] == created["commitment"] == results["commitment"]
    assert hashlib.sha256((record["nonce"] + record["seed"]).encode()).hexdigest() == record["commitment"]
    assert bobs["moves"] == ["s", "s"] and bobs["result"]["status"] == "resigned"
    for name, rec in (("alice", record), ("bob", bobs)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(rec))
        done = subprocess.run([sys.executable, "-m", "server.engine", "replay", str(path), "--json"], cwd=ROOT,
                              capture_output=True, text=True, timeout=120, check=False)
        replayed = json.loads(done.stdout)
        assert all(r["ok"] for r in replayed["results"]), replayed["results"]
        assert replayed["moves_counted"] == ranking[name]["moves"] == rec["result"]["moves"]
        if name == "alice":
            assert replayed["status"] == ranking[name]["status"] == "won"
            assert replayed["final"] == full["positions"][-1]
    # Every position, and as the player saw it: the view is the redaction of the full text.
    assert len(full["positions"]) == len(full["views"]) == len(moves) + 1
    variant = find_variant(VARIANT)
    for text, view in zip(full["positions"], full["views"]):
        expected = parse_view(text, variant)
        assert view["stock"] == expected.stock_count and view["hidden"] == list(expected.hidden)
        assert sum(len(column) for column in view["tableau"]) == sum(len(column) for column in expected.tableau)
    assert full["views"][0]["stock"] == 64
    assert sorted(full["views"][-1]["foundations"]) == sorted(["KC", "KD", "KH", "KS"] * 2)  # won
    assert [v["stock"] for v in bobs["views"]] == [64, 63, 62]


async def test_open_boards_show_each_players_view_live_and_closed_boards_never(server, redis_url) -> None:  # type: ignore[no-untyped-def]
    moves = solution()[:12]

    async def run(open_boards: bool) -> tuple[str, list[dict], list, dict, dict]:
        created, alice, bob = await lobby_of_two(server, open_boards=open_boards)
        code = created["code"]
        await alice.expect(m.Started)
        await bob.expect(m.Started)
        during = public_state(server.url, code)
        replies = []
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http, \
                http.stream("GET", f"/matches/{code}/events") as response:
            for command in moves:
                replies.append(await alice.play(command))
            await bob.play("s")
            await alice.resign()
            await bob.resign()
            events = await read_events(response, stop_type="results")
        after = public_state(server.url, code)
        await alice.close()
        await bob.close()
        assert not any(isinstance(x, m.Board) for x in bob.inbox + alice.inbox)  # players never get boards
        return code, events, replies, during, after

    code, events, replies, during, after = await run(True)
    assert during["settings"]["open_boards"] is True and during["boards_public"] is True
    boards = [json.loads(e["data"]) for e in events if e["event"] == "board"]
    alices = [b for b in boards if b["name"] == "alice"]
    assert [b["moves"] for b in alices] == list(range(len(moves) + 1))  # the deal, then after every move
    assert alices[0]["view"]["stock"] == 64 and alices[0]["view"] == next(b for b in boards if b["name"] == "bob")["view"]
    for board, reply in zip(alices[1:], replies):  # exactly what alice saw, nothing more
        assert board["view"] == msgspec.to_builtins(reply.view)
        assert board["foundation"] == reply.foundation
    bobs = [b for b in boards if b["name"] == "bob"]
    assert [b["view"]["stock"] for b in bobs] == [64, 63]

    code, events, _, during, after = await run(False)
    assert during["settings"]["open_boards"] is False and during["boards_public"] is False
    assert after["boards_public"] is True  # replays are public now
    assert "daily" not in during and "daily" not in after  # a race of its own, not a daily attempt
    assert not [e for e in events if e["event"] == "board"]
    for event in events:
        assert not {"view", "legal", "tableau", "command", "deal"} & set(json.loads(event["data"]))
    stream = redis.Redis.from_url(redis_url).xrange(f"{{m:{code}}}:events")
    assert not [entry for entry in stream if entry[1].get(b"k") == b"board"]


def test_open_boards_is_validated_like_any_setting(server) -> None:  # type: ignore[no-untyped-def]
    refused = httpx.post(server.url + "/matches", json={"variant": VARIANT, "seed": SEED, "open_boards": "yes"})
    assert refused.status_code == 400 and refused.json()["error"] == "malformed"
    assert "open_boards" in refused.json()["message"]
