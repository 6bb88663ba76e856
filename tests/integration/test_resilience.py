"""Restarts, takeovers and several processes, with real processes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import websockets

from protocol import messages as m
from server.engine import Game, deal, find_variant

from .conftest import ROOT, free_port, worker_pids
from .test_race import SEED, VARIANT, solution
from .wsclient import Player, create_match, public_state

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def reference_after(commands: list[str]) -> Game:
    variant = find_variant(VARIANT)
    game = Game(deal(SEED, variant), variant, autoplay=True, undo="safe")
    for command in commands:
        game.play(command)
    return game


async def started_pair(url: str, ws_a: str, ws_b: str) -> tuple[str, Player, Player]:
    created = create_match(url, variant=VARIANT, seed=SEED, players=2)
    alice, bob = Player(ws_a), Player(ws_b)
    await alice.connect()
    await bob.connect()
    await alice.join(created["code"], "alice")
    await bob.join(created["code"], "bob")
    await alice.send(m.Ready())
    await bob.send(m.Ready())
    await alice.expect(m.Started)
    await bob.expect(m.Started)
    return created["code"], alice, bob


async def test_killing_the_server_mid_match_loses_nothing(make_server) -> None:  # type: ignore[no-untyped-def]
    """Kill -9 the server half way; a new process on the same Redis resumes both players exactly."""
    moves = solution()
    half = len(moves) // 2
    first = make_server()

    async def run() -> None:
        code, alice, bob = await started_pair(first.url, first.ws_url, first.ws_url)
        for command in moves[:half]:
            reply = await alice.play(command)
            assert isinstance(reply, m.PositionReply), reply
        await bob.play("s")
        first.kill()  # SIGKILL in the middle of the match, with both players connected
        with pytest.raises(websockets.ConnectionClosed):
            for _ in range(1000):
                await alice.recv(timeout=5)
        await alice.close()
        await bob.close()
        second = make_server()
        resumed_a, resumed_b = Player(second.ws_url), Player(second.ws_url)
        resumed_a.token, resumed_a.seq = alice.token, alice.seq
        resumed_b.token, resumed_b.seq = bob.token, bob.seq
        await resumed_a.connect()
        await resumed_b.connect()
        await resumed_a.resume(code)
        await resumed_b.resume(code)
        started = await resumed_a.expect(m.Started)
        reference = reference_after(moves[:half])
        assert isinstance(started, m.Started)
        assert started.moves == half == reference.moves
        assert started.seq == alice.seq
        assert sum(len(c) for c in started.view.tableau) == sum(len(c) for c in reference.position.tableau)
        assert started.view.stock == len(reference.position.stock)
        last = None
        for command in moves[half:]:
            last = await resumed_a.play(command)
            assert isinstance(last, m.PositionReply), last
        assert last is not None and last.status == "won" and last.moves == len(moves)
        await resumed_b.resign()
        results = await resumed_b.expect(m.Results)
        assert isinstance(results, m.Results)
        assert [(r.name, r.status, r.moves) for r in results.ranking] == [("alice", "won", len(moves)),
                                                                          ("bob", "resigned", 1)]
        await resumed_a.close()
        await resumed_b.close()

    await run()


def test_a_second_connection_with_the_token_takes_over(server) -> None:  # type: ignore[no-untyped-def]
    async def run() -> None:
        code, alice, bob = await started_pair(server.url, server.ws_url, server.ws_url)
        first = await alice.play("s")
        assert isinstance(first, m.PositionReply) and first.moves == 1
        second = Player(server.ws_url)
        second.token, second.seq = alice.token, alice.seq
        await second.connect()
        await second.resume(code)
        replaced = await alice.expect(m.Error)
        assert isinstance(replaced, m.Error) and replaced.code == "replaced"
        with pytest.raises(websockets.ConnectionClosed):
            for _ in range(5):
                await alice.recv(timeout=5)
        started = await second.expect(m.Started)
        assert isinstance(started, m.Started) and started.moves == 1
        reply = await second.play("s")
        assert isinstance(reply, m.PositionReply) and reply.moves == 2
        third = Player(server.ws_url)  # the rotated token is used: from then on the first one is void
        third.token, third.seq = second.token, second.seq
        await third.connect()
        await third.resume(code)
        assert third.token not in (second.token, alice.token)
        stale = Player(server.ws_url)
        await stale.connect()
        await stale.send(m.Resume(code, alice.token))
        refused = await stale.expect(m.Error)
        assert isinstance(refused, m.Error) and refused.code == "bad_token"
        for player in (second, third, bob, stale):
            await player.close()


async def test_a_lost_joined_reply_does_not_lock_the_player_out(server) -> None:  # type: ignore[no-untyped-def]
    """Resume rotates the token; until the new one is used the old one still resumes (the reply carrying
    the new token may be lost with the connection), and each rotation voids the unused token it replaces."""
    async def run() -> None:
        code, alice, bob = await started_pair(server.url, server.ws_url, server.ws_url)
        assert isinstance(await alice.play("s"), m.PositionReply)
        first_token = alice.token
        tokens = []
        for _ in range(2):  # two resumes with the same token, as if both replies were lost
            again = Player(server.ws_url)
            again.token, again.seq = first_token, alice.seq
            await again.connect()
            await again.resume(code)
            tokens.append(again.token)
            started = await again.expect(m.Started)
            assert isinstance(started, m.Started) and started.moves == 1
            await again.close()
        assert len({first_token, *tokens}) == 3

        async def resume_with(token: str) -> Any:
            player = Player(server.ws_url)
            await player.connect()
            await player.send(m.Resume(code, token))
            reply = await player.expect(m.Joined)
            await player.close()
            return reply

        unused = await resume_with(tokens[0])  # voided by the second rotation, never used
        assert isinstance(unused, m.Error) and unused.code == "bad_token"
        newest = await resume_with(tokens[1])  # the newest is used: the first token is void from now on
        assert isinstance(newest, m.Joined) and newest.name == "alice"
        void = await resume_with(first_token)
        assert isinstance(void, m.Error) and void.code == "bad_token"
        grace = await resume_with(tokens[1])  # the one before the newest, not yet replaced by use
        assert isinstance(grace, m.Joined)
        await bob.close()

    await run()

    await run()


async def test_two_server_processes_serve_one_match(make_server) -> None:  # type: ignore[no-untyped-def]
    """Alice on one process, Bob on another: each sees the other's progress; one result."""
    a, b = make_server(), make_server()

    async def run() -> None:
        _code, alice, bob = await started_pair(a.url, a.ws_url, b.ws_url)
        for command in ("s", "s", "s"):
            await alice.play(command)
        progress = await bob.expect(m.Progress)
        assert isinstance(progress, m.Progress) and progress.name == "alice"
        while progress.moves < 3:
            progress = await bob.expect(m.Progress)
        await bob.play("s")
        seen = await alice.expect(m.Progress)
        assert isinstance(seen, m.Progress) and seen.name == "bob" and seen.moves == 1
        await alice.resign()
        await bob.resign()
        results_a = await alice.expect(m.Results)
        results_b = await bob.expect(m.Results)
        assert results_a == results_b
        await alice.close()
        await bob.close()

    await run()


async def test_shutdown_closes_player_sockets_with_1012_so_clients_resume_elsewhere(make_server) -> None:  # type: ignore[no-untyped-def]
    """DESIGN.md lesson: on shutdown, sockets close with code 1012 (service restart)."""
    server = make_server()

    async def run() -> None:
        created = create_match(server.url, variant=VARIANT, seed=SEED, players=2)
        player = Player(server.ws_url)
        await player.connect()
        await player.join(created["code"], "alice")
        assert server.process is not None
        server.process.terminate()
        with pytest.raises(websockets.ConnectionClosed) as closed:
            for _ in range(100):
                await player.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1012
        await player.close()

    await run()


async def test_a_match_that_never_starts_is_closed_and_a_started_one_is_not(make_server) -> None:  # type: ignore[no-untyped-def]
    """FTR_LOBBY_TIMEOUT_S: the lobby's players hear why it closed, later joins are refused, the keys expire."""
    server = make_server(FTR_LOBBY_TIMEOUT_S="1")

    async def run() -> tuple[str, str]:
        waiting = create_match(server.url, players=2, solvable_only=False)
        alice = Player(server.ws_url)
        await alice.connect()
        await alice.join(waiting["code"], "alice")
        closed = await alice.expect(m.Error, timeout=10)
        assert isinstance(closed, m.Error) and closed.code == "closed" and "did not start" in closed.message
        assert public_state(server.url, waiting["code"])["state"] == "closed"
        await alice.send(m.Ready())
        refused = await alice.expect(m.Error)
        assert isinstance(refused, m.Error) and refused.code == "closed"
        bob = Player(server.ws_url)
        await bob.connect()
        await bob.send(m.Join(waiting["code"], "bob"))
        refused = await bob.expect(m.Joined)
        assert isinstance(refused, m.Error) and refused.code == "closed"

        solo = create_match(server.url, players=1, solvable_only=False)
        carol = Player(server.ws_url)
        await carol.connect()
        await carol.join(solo["code"], "carol")
        await carol.send(m.Ready())
        assert isinstance(await carol.expect(m.Started), m.Started)
        await asyncio.sleep(2)  # past the lobby timeout: a started match plays on
        reply = await carol.play("s")
        assert isinstance(reply, m.PositionReply) and reply.moves == 1
        assert public_state(server.url, solo["code"])["state"] == "playing"
        for player in (alice, bob, carol):
            await player.close()
        return waiting["code"], solo["code"]

    codes = await run()
    import redis  # the keys of the closed match expire (a TTL is set on each)

    client = redis.Redis.from_url(server.env["REDIS_URL"])
    closed_keys = list(client.scan_iter(match=f"{{m:{codes[0]}}}:*"))
    assert len(closed_keys) >= 5  # meta, roster, tokens, events, alice's player hash
    assert all(0 < client.ttl(key) <= 600 for key in closed_keys)
    assert all(client.ttl(key) == -1 for key in client.scan_iter(match=f"{{m:{codes[1]}}}:*"))


async def test_a_start_timer_that_fires_early_does_not_deal_before_the_announced_instant(make_server) -> None:  # type: ignore[no-untyped-def]
    """Two processes starting one countdown at once each set the start timer; the loser's may be earlier
    than the instant stored with the match. Simulated by moving the timer to now: the deal still comes at
    the announced start instant, not before (DESIGN.md: the deal is sent with the start signal)."""
    import redis

    server = make_server(FTR_COUNTDOWN_S="2")
    client = redis.Redis.from_url(server.env["REDIS_URL"])

    async def run() -> None:
        created = create_match(server.url, players=1, solvable_only=False)
        solo = Player(server.ws_url)
        await solo.connect()
        await solo.join(created["code"], "solo")
        await solo.send(m.Ready())
        countdown = await solo.expect(m.Countdown)
        assert isinstance(countdown, m.Countdown)
        seconds, micros = client.time()
        client.zadd("timers", {f"{created['code']} start": seconds * 1000 + micros // 1000})
        started = await solo.expect(m.Started)
        assert isinstance(started, m.Started) and started.start_at_ms == countdown.start_at_ms
        pong = (await solo.ping(7))[-1]
        assert pong.server_time_ms >= countdown.start_at_ms
        await solo.close()

    await run()


async def test_a_match_without_time_limit_still_ends_after_the_untimed_limit(make_server) -> None:  # type: ignore[no-untyped-def]
    """FTR_UNTIMED_LIMIT_S: time_limit_s 0 means no limit of the host's, yet a player who walked away cannot keep
    the match open for ever: the games still playing end as timeout and the results come."""
    server = make_server(FTR_UNTIMED_LIMIT_S="2")

    async def run() -> None:
        created = create_match(server.url, players=2, time_limit_s=0, solvable_only=False)
        alice, bob = Player(server.ws_url), Player(server.ws_url)
        for player, name in ((alice, "alice"), (bob, "bob")):
            await player.connect()
            await player.join(created["code"], name)
            await player.send(m.Ready())
        started = await alice.expect(m.Started, timeout=15)
        assert isinstance(started, m.Started)
        assert started.deadline_ms - started.start_at_ms == 2000
        assert isinstance(await alice.play("s"), m.PositionReply)
        await bob.close()  # bob walks away and never comes back
        results = await alice.expect(m.Results, timeout=15)
        assert isinstance(results, m.Results)
        assert sorted((r.name, r.status, r.moves) for r in results.ranking) == [("alice", "timeout", 1),
                                                                               ("bob", "timeout", 0)]
        assert public_state(server.url, created["code"])["state"] == "finished"
        await alice.close()

    await run()


@contextlib.contextmanager
def _server_in_its_own_group(redis_url: str, log_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m server`` as the README's first command runs it in a terminal: the leader of its own process
    group (the group Ctrl-C reaches), one solver worker with deals to find (an emptied database of its own, 12),
    its output in ``log_path``. Killed with its group if still running at the end."""
    url = redis_url.rsplit("/", 1)[0] + "/12"
    redis.Redis.from_url(url).flushdb()
    env = dict(os.environ, REDIS_URL=url, FTR_SOLVER_WORKERS="1", FTR_POOL_TARGET="1", FTR_SOLVER_SECONDS="2")
    with open(log_path, "wb") as log, subprocess.Popen([sys.executable, "-m", "server", "--port", str(free_port())],
                                                       cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                                       start_new_session=True) as process:
        try:
            yield process
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)


def _ctrl_c(process: subprocess.Popen[bytes]) -> None:
    """What the terminal does on Ctrl-C: SIGINT to the whole process group; then wait for the server to end."""
    os.killpg(process.pid, signal.SIGINT)
    process.wait(30)


def test_ctrl_c_stops_the_server_without_a_traceback(redis_url: str, tmp_path: Path) -> None:
    """Ctrl-C in the terminal of the README's first command sends SIGINT to the whole process group, worker
    processes included: each idle worker printed a KeyboardInterrupt traceback into the server's log."""
    log_path = tmp_path / "server.log"
    with _server_in_its_own_group(redis_url, log_path) as process:
        deadline = time.monotonic() + 60
        while "deal pool: " not in log_path.read_text() and "daily " not in log_path.read_text():
            assert time.monotonic() < deadline, log_path.read_text()[-2000:]
            assert process.poll() is None, log_path.read_text()[-2000:]
            time.sleep(0.2)  # a worker process has run a job by now
        _ctrl_c(process)
    text = log_path.read_text()
    assert "Shutting down" in text and "Traceback" not in text, text[-3000:]


def test_ctrl_c_just_after_the_workers_start_logs_no_failure(redis_url: str, tmp_path: Path) -> None:
    """Ctrl-C within the first second: the solver worker was still starting (its interpreter not yet ignoring
    SIGINT), died of it, and the server logged "deal pool failed" with a traceback, for a shutdown."""
    log_path = tmp_path / "server.log"
    with _server_in_its_own_group(redis_url, log_path) as process:
        deadline = time.monotonic() + 60
        # Until the server has spawned its solver worker (the deal pool asks for a deal at once).
        while not worker_pids(process.pid):
            assert time.monotonic() < deadline and process.poll() is None, log_path.read_text()[-2000:]
            time.sleep(0.001)
        _ctrl_c(process)  # while the worker starts
    text = log_path.read_text()
    assert "Shutting down" in text, text[-3000:]
    assert " ERROR " not in text and "Traceback" not in text and "KeyboardInterrupt" not in text, text[-3000:]


async def test_an_untimed_limit_of_0_means_no_deadline_at_all(make_server) -> None:  # type: ignore[no-untyped-def]
    """FTR_UNTIMED_LIMIT_S 0: an operator's "no limit" (it ended every untimed match at its start)."""
    server = make_server(FTR_UNTIMED_LIMIT_S="0")

    async def run() -> None:
        created = create_match(server.url, players=1, time_limit_s=0, solvable_only=False)
        carol = Player(server.ws_url)
        await carol.connect()
        await carol.join(created["code"], "carol")
        await carol.send(m.Ready())
        started = await carol.expect(m.Started, timeout=15)
        assert isinstance(started, m.Started) and started.deadline_ms == 0
        await asyncio.sleep(0.5)
        reply = await carol.play("s")
        assert isinstance(reply, m.PositionReply) and reply.status == "playing" and reply.moves == 1
        await carol.close()

    await run()
