"""The real client, as a subprocess, against a real server and Redis."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import redis
import websockets

from client_cli.server_link import Connection, VersionMismatch
from protocol import messages as m
from protocol.codec import encode
from server.engine import Game, deal, find_variant
from server.store.keys import pool_key
from tests.integration.wsclient import create_match

from .conftest import ROOT, SEED, VARIANT, ServerProcess, run_client, solution

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def create(server: ServerProcess, env: dict[str, str], *extra: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "client_cli", "--server", server.url, "create", "--json", *extra],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    created = json.loads(done.stdout)
    assert {"code", "host_token", "commitment"} <= created.keys()
    return created


def events(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_two_scripted_players_race_from_create_to_ranked_results(server: ServerProcess, client_env: dict[str, str],
                                                                  tmp_path: Path) -> None:
    moves = solution()
    created = create(server, client_env, "--variant", VARIANT, "--seed", SEED, "--players", "2")
    assert len(created["commitment"]) == 64  # SHA-256 of nonce + seed; checked against the reveal below
    (tmp_path / "alice.txt").write_text("# the solver's solution\n" + "\n".join(moves) + "\n")
    # bob types short forms and a refused command, then his script runs out: the client resigns for him
    (tmp_path / "bob.txt").write_text("d\n3 3\n\n")
    alice = run_client(["--server", server.url, "join", created["code"], "--name", "alice", "--script",
                        str(tmp_path / "alice.txt"), "--json"], client_env)
    bob = run_client(["--server", server.url, "join", created["code"], "--name", "bob", "--script",
                      str(tmp_path / "bob.txt"), "--json"], client_env)
    out_a, err_a = alice.communicate(timeout=60)
    out_b, err_b = bob.communicate(timeout=60)
    assert alice.returncode == 0, err_a
    assert bob.returncode == 0, err_b
    ev_a, ev_b = events(out_a), events(out_b)
    types_a = [e["type"] for e in ev_a]
    assert types_a[0] == "joined" and "token" not in ev_a[0]
    assert "countdown" in types_a and "started" in types_a and types_a[-1] == "results"
    positions = [e for e in ev_a if e["type"] == "position"]
    assert [p["command"] for p in positions] == moves
    reference = Game(deal(SEED, find_variant(VARIANT)), find_variant(VARIANT))
    for event, command in zip(positions, moves):
        reference.play(command)
        assert event["moves"] == reference.moves and event["foundation"] == reference.position.foundation_cards
    assert positions[-1]["status"] == "won"
    assert [e["command"] for e in ev_b if e["type"] in ("position", "rejected")] == ["s", "3-3", "resign"]
    rejected = next(e for e in ev_b if e["type"] == "rejected")
    assert "same column" in rejected["reason"]
    assert any(e["type"] == "progress" and e["name"] == "alice" and e["status"] == "won" for e in ev_b)
    for results in (ev_a[-1], ev_b[-1]):
        assert [(r["rank"], r["name"], r["status"], r["moves"]) for r in results["ranking"]] == [
            (1, "alice", "won", len(moves)), (2, "bob", "resigned", 1)]
        assert results["seed"] == SEED and results["commitment"] == created["commitment"]
        assert hashlib.sha256((results["nonce"] + SEED).encode()).hexdigest() == created["commitment"]


def test_a_scripted_player_numbers_commands_and_hints_without_a_gap(server: ServerProcess,
                                                                     client_env: dict[str, str],
                                                                     tmp_path: Path) -> None:
    """The server refuses a seq that skips a number (seq_gap). The client used one counter for commands and hints
    and counted refused commands too, so after a hint or a refusal its next command skipped a number."""
    moves = solution()
    created = create(server, client_env, "--variant", VARIANT, "--seed", SEED, "--players", "1", "--hints")
    (tmp_path / "solo.txt").write_text("\n".join(["hint", "3 3", "hint", moves[0], "3 3", *moves[1:]]) + "\n")
    solo = run_client(["--server", server.url, "join", created["code"], "--name", "solo", "--script",
                       str(tmp_path / "solo.txt"), "--json"], client_env)
    out, err = solo.communicate(timeout=60)
    assert solo.returncode == 0, err
    received = events(out)
    assert not [e for e in received if e["type"] == "error"], received
    # A refused command leaves its number to the next one: the first "3 3" and the first move are both seq 1.
    assert [(e["seq"], e["command"]) for e in received if e["type"] == "rejected"] == [(1, "3-3"), (2, "3-3")]
    assert [(e["seq"], e["hints"]) for e in received if e["type"] == "suggestion"] == [(1, 1), (2, 2)]
    positions = [e for e in received if e["type"] == "position"]
    assert [(p["seq"], p["command"]) for p in positions] == list(enumerate(moves, 1))
    assert positions[-1]["status"] == "won"
    ranking = received[-1]["ranking"]
    assert [(r["name"], r["status"], r["moves"], r["hints"]) for r in ranking] == [("solo", "won", len(moves), 2)]


def test_a_dropped_connection_resumes_the_same_game(make_server, client_env: dict[str, str],  # type: ignore[no-untyped-def]
                                                    tmp_path: Path) -> None:
    """Kill the server mid-game and start a new one on the same port and Redis: the client resumes by itself."""
    server = make_server(FTR_RATE="40", FTR_BURST="40")  # slow enough that the kill lands mid-game
    moves = solution()
    created = create(server, client_env, "--variant", VARIANT, "--seed", SEED, "--players", "2")
    (tmp_path / "alice.txt").write_text("\n".join(moves) + "\n")
    (tmp_path / "bob.txt").write_text("s\n")
    alice = run_client(["--server", server.url, "join", created["code"], "--name", "alice", "--script",
                        str(tmp_path / "alice.txt"), "--json"], client_env)
    bob = run_client(["--server", server.url, "join", created["code"], "--name", "bob", "--script",
                      str(tmp_path / "bob.txt"), "--json"], client_env)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        state = httpx.get(f"{server.url}/matches/{created['code']}", timeout=5).json()
        if any(p["name"] == "alice" and p["moves"] >= 30 for p in state.get("players", [])):
            break
        time.sleep(0.1)
    else:
        pytest.fail("alice did not get going")
    server.kill()
    time.sleep(0.5)
    server.start()  # same port, same Redis
    out_a, err_a = alice.communicate(timeout=60)
    bob.communicate(timeout=60)
    assert alice.returncode == 0, err_a
    ev_a = events(out_a)
    assert [e["type"] for e in ev_a].count("joined") == 2  # joined, then resumed
    results = ev_a[-1]
    assert results["type"] == "results"
    assert results["ranking"][0]["name"] == "alice" and results["ranking"][0]["status"] == "won"
    assert results["ranking"][0]["moves"] == len(moves)  # nothing applied twice, nothing lost
    stored = json.loads((Path(client_env["FTR_CLIENT_DATA"]) / "tokens.json").read_text())
    entry = stored[f"{server.url} {created['code']}"]
    assert set(entry["players"]) == {"alice", "bob"}


def test_create_shows_preparing_and_watch_follows_to_the_results(server: ServerProcess, client_env: dict[str, str],
                                                                 tmp_path: Path) -> None:
    # No solver workers here, and no ready deal left by another test on this Redis: it stays preparing.
    with redis.Redis.from_url(server.env["REDIS_URL"]) as client:
        client.delete(pool_key("classic"))
    created = create(server, client_env, "--variant", "classic")
    assert created["state"] == "preparing"
    created = create(server, client_env, "--variant", VARIANT, "--seed", SEED, "--players", "1")
    # --interval 60: without following the event stream the watcher would read the state once a minute and
    # miss the 30 s timeouts below; with it every event triggers a read.
    watcher = run_client(["--server", server.url, "watch", created["code"], "--json", "--interval", "60"], client_env)
    (tmp_path / "solo.txt").write_text("s\ns\n")
    solo = run_client(["--server", server.url, "join", created["code"], "--name", "solo", "--script",
                       str(tmp_path / "solo.txt")], client_env)
    out_s, err_s = solo.communicate(timeout=30)
    out_w, err_w = watcher.communicate(timeout=30)
    assert solo.returncode == 0, err_s
    assert "s: ok" in out_s and "resign (the script ran out): ok" in out_s and "1  solo" in out_s
    assert watcher.returncode == 0, err_w
    states = events(out_w)
    assert states[0]["code"] == created["code"]
    assert states[-2]["state"] == "finished" and states[-1]["ranking"][0]["name"] == "solo"


def test_bots_play_legal_moves_to_the_results(server: ServerProcess, client_env: dict[str, str]) -> None:
    bots = run_client(["--server", server.url, "bots", "--count", "4", "--players", "2", "--moves", "15",
                       "--delay", "0", "--json"], client_env)
    out, err = bots.communicate(timeout=60)
    assert bots.returncode == 0, err
    report = json.loads(out)
    assert report["bots"] == 4 and report["matches"] == 2 and report["finished"] == 4
    assert report["commands"] > 0 and report["refused"] == 0 and report["errors"] == 0


async def test_unreachable_server_and_version_mismatch_are_explained(client_env: dict[str, str]) -> None:
    from .conftest import free_port

    port = free_port()
    done = subprocess.run([sys.executable, "-m", "client_cli", "--server", f"http://127.0.0.1:{port}", "join", "abc",
                           "--name", "x", "--script", "-"], cwd=ROOT, env=client_env, capture_output=True, text=True,
                          input="", timeout=30, check=False)
    assert done.returncode == 2 and "cannot reach the server" in done.stderr

    async def old_server() -> None:
        async def handler(ws: websockets.ServerConnection) -> None:
            await ws.recv()
            await ws.send(encode(m.Error("version", "this server speaks protocol version 2, the client 1")))
            await ws.close()

        async with websockets.serve(handler, "127.0.0.1", port):
            with pytest.raises(VersionMismatch, match="protocol versions do not match"):
                await Connection.open(f"http://127.0.0.1:{port}")

    await old_server()


async def test_giving_up_reconnecting_says_the_server_went_away_and_how_to_resume(  # type: ignore[no-untyped-def]
        make_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server goes away mid-game and does not come back: after GIVE_UP_S (120 s; 1 s here) the client stops.
    Its message told the player to give the server's address with --server, which was right all along."""
    from client_cli import race
    from client_cli.server_link import Unreachable
    from client_cli.tokens import TokenStore
    from tests.integration.wsclient import create_match

    monkeypatch.setattr(race, "GIVE_UP_S", 1.0)
    server = make_server()
    code = create_match(server.url, variant=VARIANT, seed=SEED, players=1, solvable_only=False)["code"]

    async def run() -> str:
        client = race.RaceClient(server.url, code, "ann lee", store=TokenStore(tmp_path / "tokens.json"),
                                 auto_ready=True)
        runner = asyncio.ensure_future(client.run())
        await asyncio.wait_for(client.started.wait(), 30)
        server.kill()
        with pytest.raises(Unreachable) as caught:
            await asyncio.wait_for(runner, 60)
        return str(caught.value)

    text = await run()
    assert "--server URL" not in text and "Is it running?" not in text, text
    assert f"lost the connection to the server at {server.url}" in text and "1 s" in text, text
    assert f"forty-thieves join {code} --name 'ann lee' --server {server.url}" in text, text


async def test_coming_back_to_a_started_match_sends_no_ready_and_hears_no_refusal(server: ServerProcess,
                                                                            tmp_path: Path) -> None:
    """The client said ready after every resume, also to a match long started (or ended): the server's answer,
    "the match has already started", then stood on the player's screen."""
    from client_cli.race import RaceClient
    from client_cli.tokens import TokenStore
    from tests.integration.wsclient import create_match

    code = create_match(server.url, variant=VARIANT, seed=SEED, players=2, solvable_only=False)["code"]
    store = TokenStore(tmp_path / "ann.json")

    async def run() -> list[m.ServerMessage]:
        ann = RaceClient(server.url, code, "ann", store=store, auto_ready=True)
        bob = RaceClient(server.url, code, "bob", store=TokenStore(tmp_path / "bob.json"), auto_ready=True)
        first, bobs = asyncio.ensure_future(ann.run()), asyncio.ensure_future(bob.run())
        await asyncio.wait_for(asyncio.gather(ann.started.wait(), bob.started.wait()), 30)
        first.cancel()  # ann leaves mid-game; the same command brings her back
        await asyncio.gather(first, return_exceptions=True)
        await ann.close()
        heard: list[m.ServerMessage] = []
        back = RaceClient(server.url, code, "ann", store=store, auto_ready=True, listener=heard.append)
        again = asyncio.ensure_future(back.run())
        await asyncio.wait_for(back.started.wait(), 30)
        played = await asyncio.wait_for(back.play("s"), 30)
        assert isinstance(played, m.PositionReply) and played.seq == 1 and played.moves == 1, played
        for client in (bob, back):
            resigned = await asyncio.wait_for(client.resign(), 30)
            assert isinstance(resigned, m.PositionReply) and resigned.status == "resigned", resigned
        await asyncio.wait_for(asyncio.gather(again, bobs), 30)
        await asyncio.sleep(0.3)  # an answer to a late ready would come now
        return heard

    heard = await run()
    assert isinstance(heard[-1], m.Results) and sorted(r.name for r in heard[-1].ranking) == ["ann", "bob"]
    assert [x for x in heard if isinstance(x, m.Error)] == []


def test_joining_a_finished_match_says_it_has_ended_and_where_the_results_are(server: ServerProcess,
                                                                             client_env: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "-m", "client_cli", "--server", server.url, "create", "--json",
                           "--variant", VARIANT, "--seed", SEED, "--players", "1"], cwd=ROOT, env=client_env,
                          capture_output=True, text=True, timeout=30, check=False)
    code = json.loads(done.stdout)["code"]

    def join(name: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "client_cli", "--server", server.url, "join", code, "--name",
                               name, "--script", "-"], cwd=ROOT, env=client_env, capture_output=True, text=True,
                              input="s\n", timeout=60, check=False)

    first = join("ann")
    assert first.returncode == 0 and "ann                  resigned" in first.stdout, first
    late = join("carol")
    assert late.returncode == 2, late
    assert "has ended" in late.stderr and "already started" not in late.stderr, late.stderr
    assert f"/matches/{code}/results" in late.stderr, late.stderr
    assert f"forty-thieves watch {code} --server {server.url} prints them" in late.stderr, late.stderr


async def test_joining_an_ended_series_names_the_watch_line_of_the_round_the_server_names(
        server: ServerProcess, client_env: dict[str, str]) -> None:
    """Round 1 ended, its rematch (round 2) ended too: a late friend's join by round 1's code is refused with
    round 2's results; the client's watch line must name round 2 as well, not the code that was typed."""
    from client_cli.race import RaceClient, run_script
    from client_cli.tokens import TokenStore

    store = TokenStore(Path(client_env["FTR_CLIENT_DATA"]) / "tokens.json")
    first = RaceClient(server.url, create_match(server.url, variant=VARIANT, seed=SEED, players=1)["code"], "ann",
                       store=store, auto_ready=True)
    round1 = first.code
    assert await run_script(first, ["s"], as_json=False, out=io.StringIO()) == 0
    answer = await first.rematch()
    assert answer.round == 2 and answer.match != round1
    assert await run_script(first, ["s"], as_json=False, out=io.StringIO()) == 0
    late = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "client_cli", "--server", server.url, "join", round1, "--name",
                         "carol", "--script", "-"], cwd=ROOT, env=client_env, capture_output=True, text=True,
        input="s\n", timeout=60, check=False)
    assert late.returncode == 2, late
    assert f"match {answer.match} has ended" in late.stderr, late.stderr
    assert f"forty-thieves watch {answer.match} --server {server.url} prints them" in late.stderr, late.stderr


def test_the_client_resuming_a_match_the_server_lost_says_so_and_stops(make_own_server, own_redis_url: str,  # type: ignore[no-untyped-def]
                                                                       client_env: dict[str, str]) -> None:
    """The client keeps a player's token of a match Redis has since lost (and the server found so). Run again,
    it resumes: the server's ``no_match`` says the match is lost, and the client prints that and stops (it was
    told ``bad_token``, then joined anew and ended with "no match with code ..."). It does not join."""
    from client_cli.tokens import TokenStore
    from server.core.player import MATCH_GONE
    from tests.integration.wsclient import Player

    server = make_own_server()
    code = create_match(server.url, variant=VARIANT, seed=SEED, players=2)["code"]

    async def joined_then_lost() -> str:
        player = Player(server.ws_url)
        await player.connect()
        await player.join(code, "ann")
        with redis.Redis.from_url(own_redis_url) as client:
            client.delete(*client.scan_iter(f"{{m:{code}}}:*"))
        await player.send(m.Ready())  # the server finds the match lost
        assert (await player.wait_closed())[0] == 4004
        return player.token

    token = asyncio.run(joined_then_lost())
    TokenStore(Path(client_env["FTR_CLIENT_DATA"]) / "tokens.json").keep_player(server.url, code, "ann", token)
    done = subprocess.run([sys.executable, "-m", "client_cli", "--server", server.url, "join", code, "--name", "ann",
                           "--script", "-"], cwd=ROOT, env=client_env, input="", capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode != 0, done
    assert MATCH_GONE in " ".join(done.stderr.split()), done.stderr
    assert "no match with code" not in done.stderr, done.stderr
    assert "a player joined" not in server.logs()[server.logs().index("its keys are gone"):]
