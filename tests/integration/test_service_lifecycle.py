"""The server as a service: started before its Redis, through a Redis outage and a stall, a match whose keys
Redis lost, a port in use or a bad setting at start, and a stop mid-race. Real server processes, a real
redis-server of the test's own where the test stops it, real WebSocket connections.

The outage test waits out an 11 s outage on purpose (about 20 s in all); the others take a few seconds."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
import redis
import websockets

from protocol import messages as m
from server.app import REFUSALS_EVERY_S
from server.core.player import MATCH_GONE

from .conftest import ROOT, ServerProcess, free_port, redis_binary, start_redis_server, worker_pids
from .test_faults import solo_after, stall  # noqa: F401 - stall: the fixture
from .test_race import SEED, VARIANT, solution
from .wsclient import Player, create_match

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

LOOPS = ("timers", "deal pool", "daily challenge", "event reader", "clock sync", "collection pacing")
"""The names the server's supervised loops log under (server/app.py, server/matches.py)."""


def _redis_command(port: int, folder: str) -> list[str]:
    return [redis_binary(), "--port", str(port), "--save", "", "--dir", folder, "--enable-debug-command", "local"]


def _until(check: Any, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def _status(url: str) -> int:
    try:
        return httpx.get(url, timeout=5).status_code
    except httpx.HTTPError:
        return 0


@pytest.fixture
def stopped_redis(tmp_path: Path) -> tuple[list[str], str]:
    """A redis-server of the test's own, not started: ``(its command line, its URL)``; the test starts it
    (:func:`_start`) and stops it."""
    port = free_port()
    return _redis_command(port, str(tmp_path)), f"redis://127.0.0.1:{port}/0"


def _start(command: list[str]) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port = int(command[command.index("--port") + 1])
    _until(lambda: _answers_ping(port), 10, "redis-server did not start")
    return process


def _answers_ping(port: int) -> bool:
    try:
        with redis.Redis(port=port, socket_timeout=0.5) as client:
            return bool(client.ping())
    except redis.RedisError:
        return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        process.wait(5)


async def _refused_player(server: ServerProcess) -> tuple[Any, int | None]:
    """The first frame and the close code of a ``/play`` connection (refused at once: before any hello)."""
    async with websockets.connect(server.ws_url, max_queue=None) as ws:
        frame = msgspec.msgpack.decode(await asyncio.wait_for(ws.recv(), 10))
        try:
            await asyncio.wait_for(ws.recv(), 10)
        except websockets.ConnectionClosed:
            pass
        return frame, ws.close_code


def test_a_server_started_before_its_redis_serves_health_and_becomes_ready_when_redis_comes(
        stopped_redis: tuple[list[str], str]) -> None:
    """Redis is down at start: the process serves at once, ``/livez`` 200, ``/readyz`` 503, a route that needs
    Redis 503 ``internal`` (a player's WebSocket the error frame and close 1011), and it says once that it
    waits, and once that it refused a request and a count of the refusals after it 10 s later (it wrote a line
    for each); once Redis comes up it is ready without a restart, says how long it waited, and a match is made."""
    command, url = stopped_redis
    server = ServerProcess(url, until="/livez")
    redis_process = None
    try:
        assert _status(server.url + "/livez") == 200
        ready = httpx.get(server.url + "/readyz", timeout=5)
        assert ready.status_code == 503 and ready.json() == {"ok": False, "redis": "unreachable"}
        assert _status(server.url + "/healthz") == 503
        created = httpx.post(server.url + "/matches", json={"players": 1}, timeout=5)
        assert created.status_code == 503 and created.json()["error"] == "internal", created.text
        assert created.headers["Retry-After"]
        frame, close_code = asyncio.run(_refused_player(server))
        assert frame == {"type": "error", "code": "internal", "message": "Redis is unreachable: try again later"}
        assert close_code == 1011
        began = time.monotonic()
        for _ in range(20):
            assert _status(f"{server.url}/matches/0123456789AB") == 503
        # One line for the first refusal, naming its route; the others counted, in one line 10 s after it.
        refusals = [line for line in server.logs().splitlines() if "app: Redis is unreachable:" in line]
        assert len(refusals) == 1 and "Redis is unreachable: POST /matches refused (RedisNotReady" in refusals[0], \
            refusals
        time.sleep(max(0.0, began + REFUSALS_EVERY_S + 1 - time.monotonic()))
        refusals = [line for line in server.logs().splitlines() if "app: Redis is unreachable:" in line]
        assert len(refusals) == 2 and refusals[1].endswith(
            "21 more requests refused in the last 10 s (the last: GET /matches/0123456789AB)"), refusals
        redis_process = _start(command)
        _until(lambda: _status(server.url + "/readyz") == 200, 15, "the server did not become ready")
        code = create_match(server.url, variant=VARIANT, seed=SEED, players=1, solvable_only=False)["code"]
        assert _status(f"{server.url}/matches/{code}") == 200
        logs = server.logs()
        assert logs.count("waiting for it") == 1, logs[-3000:]
        assert re.search(r"Redis reached after \d+\.\d s", logs), logs[-3000:]
        assert "Traceback" not in logs
        # The listening line came once the port was bound and served, before Redis was reached.
        assert logs.index("listening on 127.0.0.1:") < logs.index("Redis reached after")
    finally:
        server.stop()
        if redis_process is not None:
            _stop(redis_process)


def test_a_redis_socket_path_with_braces_and_percent_signs_is_logged_as_it_is(tmp_path: Path) -> None:
    """A unix socket in a folder whose name holds ``{}`` and ``%s`` (a data folder of any name): the start's
    waiting line names it as it is (its message was a ``str.format`` template holding the address, which
    raised), and no traceback."""
    folder = tmp_path / "data {} %s {0}"
    folder.mkdir()
    socket_path = folder / "redis.sock"
    server = ServerProcess(f"unix://{socket_path}", until="/livez")
    try:
        _until(lambda: "waiting for it" in server.logs(), 10, "no waiting line")
        logs = server.logs()
        assert f"Redis at unix://{socket_path} unreachable (" in logs, logs[-2000:]
        assert "Traceback" not in logs and "Logging error" not in logs, logs[-3000:]
        assert _status(server.url + "/readyz") == 503
    finally:
        server.stop()


def test_an_11_s_outage_writes_a_few_lines_per_loop_and_no_traceback(tmp_path: Path) -> None:
    """Redis stopped for 11 s under a server with every loop running (timers, the deal pool, the daily
    challenge, the event reader following a player's match): each loop says once that Redis is unreachable
    and once that it is reachable again (it wrote a traceback every 0.5 s: ~4,100 lines), nothing else."""
    redis_process, url = start_redis_server(str(tmp_path))
    command = [*redis_process.args]
    server = ServerProcess(url, FTR_SOLVER_WORKERS="1", FTR_DAILY_VARIANTS="relaxed")
    try:
        code = create_match(server.url, variant=VARIANT, seed=SEED, players=2, solvable_only=False)["code"]

        async def outage() -> None:
            player = Player(server.ws_url)
            await player.connect()
            await player.join(code, "ann")  # the hub's reader follows the match's stream
            await asyncio.sleep(1.0)
            before = len(server.logs().splitlines())
            redis_process.terminate()
            redis_process.wait(5)
            await asyncio.sleep(11)
            back = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: ASYNC220
            try:
                deadline = time.monotonic() + 20
                while _status(server.url + "/readyz") != 200:
                    assert time.monotonic() < deadline, "the server did not find Redis again"
                    await asyncio.sleep(0.2)
                await asyncio.sleep(4.0)  # each loop's next try (at most 2 s apart) finds Redis
                # Less the work that goes on (the probes' access lines, the deal pool refilled).
                lines = [line for line in server.logs().splitlines()[before:]
                         if '"GET /readyz' not in line and "one more solvable" not in line]
                print("\n".join(lines))
                text = "\n".join(lines)
                assert "Traceback" not in text and "failed; restarting" not in text, text
                for loop in ("timers", "deal pool", "daily challenge"):
                    said = [line for line in lines if f" {loop}: Redis" in line]
                    assert len(said) == 2, (loop, text)
                    assert "Redis unreachable (ConnectionError" in said[0] and "; retrying" in said[0], said
                    seconds = float(re.findall(r"reachable again after (\d+\.\d) s", said[1])[0])
                    assert 9 <= seconds < 20, said  # from the loop's first failed try to its first PONG
                for loop in LOOPS:
                    assert sum(f"forty_thieves.matches: {loop}: " in line for line in lines) <= 2, (loop, text)
                assert len(lines) <= 20, text
            finally:
                await player.close()
                _stop(back)

        asyncio.run(outage())
    finally:
        server.stop()
        _stop(redis_process)


async def test_a_read_of_the_event_streams_that_failed_once_and_worked_again_is_an_info_line(
        make_own_server: Any, own_redis_url: str) -> None:
    """The event reader's blocking XREAD has its connection killed (CLIENT KILL): the read is tried again and
    works; that it worked again is good news, logged at INFO, and "after 1 failure" in the singular."""
    server = make_own_server()
    created = create_match(server.url, variant=VARIANT, seed=SEED, players=2, solvable_only=False)
    player = Player(server.ws_url)
    await player.connect()
    await player.join(created["code"], "ann")  # the hub's reader follows the match's stream
    try:
        with redis.Redis.from_url(own_redis_url) as client:
            deadline = time.monotonic() + 10
            while "worked again" not in server.logs():
                assert time.monotonic() < deadline, server.logs()[-2000:]
                for info in client.client_list():
                    if info.get("cmd") == "xread":
                        client.client_kill_filter(_id=info["id"])
                await asyncio.sleep(0.3)
        line = next(line for line in server.logs().splitlines() if "worked again" in line)
        assert " INFO forty_thieves.store" in line and line.endswith("worked again after 1 failure"), line
    finally:
        await player.close()


def test_readiness_answers_503_within_1_5_s_during_a_stall_while_liveness_answers_200(
        server: ServerProcess, stall: Any) -> None:  # noqa: F811 - the fixture
    """``DEBUG SLEEP 5``: Redis answers nobody. ``/readyz`` (and ``/healthz``) say 503 within 1.5 s (they took
    the 5 s socket timeout), ``/livez`` 200 at once; after the stall the server is ready again."""
    assert _status(server.url + "/readyz") == 200
    stalled = stall(5)
    for path in ("/readyz", "/healthz"):
        began = time.monotonic()
        answer = httpx.get(server.url + path, timeout=10)
        took = time.monotonic() - began
        assert answer.status_code == 503 and answer.json() == {"ok": False, "redis": "unreachable"}, answer.text
        assert took < 1.5, (path, took)
    began = time.monotonic()
    assert httpx.get(server.url + "/livez", timeout=10).json() == {"ok": True}
    assert time.monotonic() - began < 1.5
    stalled.join(30)
    _until(lambda: _status(server.url + "/readyz") == 200, 10, "not ready after the stall")


async def test_a_match_whose_keys_were_flushed_tells_its_players_it_is_gone(
        make_own_server: Any, own_redis_url: str) -> None:
    """Mid-race, Redis loses every key (FLUSHDB, as a restart without persistence does): each player's next
    numbered frame (a move, a hint) is answered ``no_match`` saying the server lost the match, and the
    connection closes with 4004; never ``replaced`` (no other connection took over). Nothing of the match is
    written back (a player's hash with a field or two and no expiry, kept for ever)."""
    server = make_own_server()
    moves = solution()
    created = create_match(server.url, variant=VARIANT, seed=SEED, players=2, hints=True)
    players = {name: Player(server.ws_url) for name in ("ann", "bob")}
    for name, player in players.items():
        await player.connect()
        await player.join(created["code"], name)
        await player.send(m.Ready())
    for player in players.values():
        assert isinstance(await player.expect(m.Started), m.Started)
        assert isinstance(await player.play(moves[0]), m.PositionReply)
    with redis.Redis.from_url(own_redis_url) as client:
        client.flushdb()
        await players["bob"].send(m.Hint(seq=1))
        replies = {"ann": await players["ann"].play(moves[1]), "bob": await players["bob"].expect(m.Suggestion)}
        for name, player in players.items():
            reply = replies[name]
            assert isinstance(reply, m.Error), (name, reply)
            assert (reply.code, reply.message) == ("no_match", MATCH_GONE), reply
            assert reply.seq == (2 if name == "ann" else 1), reply
            assert "lost this match" in reply.message
            close_code, _ = await player.wait_closed()
            assert close_code == 4004
            assert not any(isinstance(f, m.Error) and f.code == "replaced" for f in player.inbox)
        await asyncio.sleep(0.5)  # the server's handling of the two closed connections
        assert client.keys("*" + created["code"] + "*") == []
    assert "Traceback" not in server.logs()


async def test_players_who_send_nothing_are_told_their_match_is_gone_and_a_finished_ones_are_not(
        make_own_server: Any, own_redis_url: str) -> None:
    """A player waiting in a lobby, and one playing who sends nothing, learn that Redis lost their match
    without a command of theirs (``no_match``, close 4004) within the server's check (5 s) and a margin; the
    player of a finished match whose keys expired (its results stay) is not told so."""
    server = make_own_server()
    moves = solution()
    lobby = create_match(server.url, variant=VARIANT, seed=SEED, players=2)
    waiting = Player(server.ws_url)
    await waiting.connect()
    await waiting.join(lobby["code"], "ann")
    race, playing = await solo_after(server, moves[:1])
    done, finished = await solo_after(server, [])
    await finished.send(m.Resign(1))
    assert isinstance(await finished.expect(m.Results), m.Results)
    with redis.Redis.from_url(own_redis_url) as client:
        # The finished match as its retention leaves it: every key of it gone but its results.
        keys = [key for key in client.scan_iter(f"{{m:{done}}}:*") if not key.endswith(b":results")]
        assert keys and client.exists(f"{{m:{done}}}:results")
        client.delete(*keys)
        for code in (lobby["code"], race):
            client.delete(*client.scan_iter(f"{{m:{code}}}:*"))
    for player in (waiting, playing):
        close_code, _ = await player.wait_closed(timeout=15)
        assert close_code == 4004
        gone = [f for f in player.inbox if isinstance(f, m.Error)]
        assert [(f.code, f.message) for f in gone] == [("no_match", MATCH_GONE)], player.inbox
    await asyncio.sleep(1)  # past the check that told the others
    assert not any(isinstance(f, m.Error) for f in finished.inbox), finished.inbox
    assert finished.ws.close_code is None
    await finished.close()
    assert "Traceback" not in server.logs()


def _forget_match(url: str, code: str) -> None:
    """Delete every key of match ``code``, as a Redis restarted without its data has none (a FLUSHDB would
    take the other tests' matches in this database too)."""
    with redis.Redis.from_url(url) as client:
        keys = list(client.scan_iter(f"{{m:{code}}}:*"))
        assert keys
        client.delete(*keys)


def _lost_lines(server: ServerProcess, code: str) -> list[str]:
    return [line for line in server.logs().splitlines() if f"match {code}: its keys are gone from Redis" in line]


async def test_resume_join_ready_start_and_rematch_of_a_lost_match_are_told_it_is_gone_and_a_typo_is_not(
        make_own_server: Any, own_redis_url: str) -> None:
    """After Redis lost a lobby's keys, each request that names the match, sent at once (before the 5 s check),
    is answered ``no_match`` saying the server lost it and its connection closed with 4004: ``ready`` (it said
    "the match no longer exists" and left the socket open), the host's ``start`` and ``rematch`` of players who
    had joined; then, in the process that found it lost, a ``resume`` with a player's token (it said
    ``bad_token``, and the client then joined and was told there was no such match) and a ``join`` by the code.
    A code that never existed keeps its own answer: ``no_match`` "no match with code", the connection open. The
    server logs the loss once, not once a request."""
    server = make_own_server()
    created = create_match(server.url, variant=VARIANT, seed=SEED, players=4, solvable_only=False)
    code = created["code"]
    ann, bob, cat = Player(server.ws_url), Player(server.ws_url), Player(server.ws_url)
    for player, name in ((ann, "ann"), (bob, "bob"), (cat, "cat")):
        await player.connect()
        await player.join(code, name)
    _forget_match(own_redis_url, code)
    requests = ((ann, m.Ready()), (bob, m.Start(created["host_token"])), (cat, m.Rematch()))
    for player, request in requests:
        await player.send(request)
    resumer, joiner = Player(server.ws_url), Player(server.ws_url)
    for player, request in (*requests, (resumer, m.Resume(code, ann.token)), (joiner, m.Join(code, "dan"))):
        if player in (resumer, joiner):  # once the process has found the match lost
            await player.connect()
            await player.send(request)
        close_code, _ = await player.wait_closed(timeout=4)  # sooner than the check's 5 s
        errors = [(f.code, f.message) for f in player.inbox if isinstance(f, m.Error)]
        assert errors == [("no_match", MATCH_GONE)], (request, player.inbox, close_code)
        assert close_code == 4004
    typo = Player(server.ws_url)
    await typo.connect()
    await typo.send(m.Join("ZZZZZZZZZZZZ", "eve"))
    refused = await typo.expect(m.Joined)
    assert (refused.code, refused.message) == ("no_match", "no match with code 'ZZZZZZZZZZZZ'"), refused
    assert isinstance((await typo.ping(1))[-1], m.Pong)  # still open
    await typo.close()
    assert len(_lost_lines(server, code)) == 1, server.logs()[-3000:]
    assert "Traceback" not in server.logs()


async def _sse_until_it_ends(url: str, seconds: float) -> list[dict[str, str]]:
    """The events of an SSE stream until the server ends it (within ``seconds``)."""
    events: list[dict[str, str]] = []
    async with httpx.AsyncClient(timeout=seconds) as http, http.stream("GET", url) as response:
        assert response.status_code == 200
        current: dict[str, str] = {}
        async with asyncio.timeout(seconds):
            async for line in response.aiter_lines():
                if not line:
                    if current:
                        events.append(current)
                    current = {}
                elif not line.startswith(":"):
                    field, _, value = line.partition(": ")
                    current[field] = value
    return events


async def test_spectators_of_a_lost_match_are_told_it_is_gone_and_their_streams_end(
        make_own_server: Any, own_redis_url: str) -> None:
    """Spectators on a process that serves no player of the match (SSE and WebSocket) watch it race; Redis
    loses its keys. Within the 5 s check and a margin the SSE stream sends ``event: error`` with ``no_match``
    saying the server lost the match and ends, and the WebSocket sends that ``error`` and closes with 4004, as an
    unknown match is refused (they showed "live" for ever). The process logs the loss once; a spectator who
    comes after is told the match is lost, not that it never existed."""
    players_server, watch_server = make_own_server(), make_own_server()
    created = create_match(players_server.url, variant=VARIANT, seed=SEED, players=1, solvable_only=False)
    code = created["code"]
    player = Player(players_server.ws_url)
    await player.connect()
    await player.join(code, "ann")
    await player.send(m.Ready())
    assert isinstance(await player.expect(m.Started), m.Started)
    events_url = f"{watch_server.url}/matches/{code}/events"
    sse = asyncio.ensure_future(_sse_until_it_ends(events_url, 20))
    async with websockets.connect(f"ws://127.0.0.1:{watch_server.port}/matches/{code}/watch") as watcher:
        first = msgspec.msgpack.decode(await asyncio.wait_for(watcher.recv(), 10))
        assert first["event"]["type"] == "lobby"
        await asyncio.sleep(0.5)  # the SSE stream is open too
        _forget_match(own_redis_url, code)
        frames = []
        with pytest.raises(websockets.ConnectionClosed):
            while True:
                frames.append(msgspec.msgpack.decode(await asyncio.wait_for(watcher.recv(), 15)))
        assert frames[-1] == {"type": "error", "code": "no_match", "message": MATCH_GONE}, frames
        assert watcher.close_code == 4004
    events = await sse
    assert events[-1]["event"] == "error", events
    assert json.loads(events[-1]["data"]) == {"type": "error", "code": "no_match", "message": MATCH_GONE}
    again = await _sse_until_it_ends(events_url, 5)  # a spectator who comes after: told so, and the stream ends
    assert [(e["event"], json.loads(e["data"])) for e in again] == [
        ("error", {"type": "error", "code": "no_match", "message": MATCH_GONE})], again
    async with websockets.connect(f"ws://127.0.0.1:{watch_server.port}/matches/{code}/watch") as late:
        assert msgspec.msgpack.decode(await asyncio.wait_for(late.recv(), 5)) == {
            "type": "error", "code": "no_match", "message": MATCH_GONE}
        await asyncio.wait_for(late.wait_closed(), 5)
        assert late.close_code == 4004
    never = httpx.get(f"{watch_server.url}/matches/ZZZZZZZZZZZZ/events", timeout=5)
    assert never.status_code == 404 and never.json() == {"error": "no_match", "message": "no match with that code"}
    assert len(_lost_lines(watch_server, code)) == 1, watch_server.logs()[-3000:]
    await player.wait_closed(timeout=10)
    for server in (players_server, watch_server):
        assert "Traceback" not in server.logs()


def _run_server(port: int, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "FTR_SOLVER_WORKERS": "0", **env}
    return subprocess.run([sys.executable, "-m", "server", "--port", str(port)], check=False, cwd=ROOT, env=environ,
                          capture_output=True, text=True, timeout=60)


def test_a_second_server_on_the_same_port_says_so_in_one_line_and_exits_2(server: ServerProcess,
                                                                           redis_url: str) -> None:
    second = _run_server(server.port, REDIS_URL=redis_url)
    assert second.returncode == 2, second
    lines = second.stderr.strip().splitlines()
    assert lines == [(f"forty-thieves-server: port {server.port} on 127.0.0.1 is in use (another server?): choose "
                      "another with --port or FTR_PORT")], second.stderr
    assert "listening" not in second.stdout + second.stderr
    assert _status(server.url + "/readyz") == 200  # the first one is unharmed


@pytest.mark.parametrize(("variable", "value"), [("FTR_PORT", "abc"), ("FTR_RATE", "-1"),
                                                 ("FTR_DAILY_VARIANTS", "classic,nope")])
def test_a_bad_setting_is_one_line_naming_it_and_exit_2(redis_url: str, variable: str, value: str) -> None:
    environ = {"REDIS_URL": redis_url, variable: value}
    # FTR_PORT is read from the environment only when no --port is given.
    result = (subprocess.run([sys.executable, "-m", "server"], check=False, cwd=ROOT, env={**os.environ, **environ},
                             capture_output=True, text=True, timeout=60)
              if variable == "FTR_PORT" else _run_server(free_port(), **environ))
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"forty-thieves-server: {variable}={value!r}: "), result.stderr


@pytest.fixture
def redis_with_password(tmp_path: Path) -> Any:
    """A redis-server of the test's own whose default user's password is ``sekrit``: ``(its port, process)``."""
    port = free_port()
    process = subprocess.Popen([*_redis_command(port, str(tmp_path)), "--requirepass", "sekrit"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _until(lambda: _answers_ping_with(port, "sekrit"), 10, "redis-server did not start")
        yield port, process
    finally:
        _stop(process)


def _answers_ping_with(port: int, password: str) -> bool:
    try:
        with redis.Redis(port=port, password=password, socket_timeout=0.5) as client:
            return bool(client.ping())
    except redis.RedisError:
        return False


@pytest.mark.parametrize(("credentials", "database", "says"), [
    (":wrong@", "0", "AuthenticationError: invalid username-password pair"),
    ("", "0", "AuthenticationError:"),  # no password where one is needed
    (":sekrit@", "99", "ResponseError: DB index is out of range"),
])
def test_a_redis_that_refuses_the_server_at_start_is_one_line_naming_redis_url_and_exit_2(
        redis_with_password: Any, credentials: str, database: str, says: str) -> None:
    """A wrong or missing password, or a database number the Redis does not have: no outage to wait out (it
    said "unreachable ... waiting for it" for ever, or exited 3 with a traceback), but a setting's fault: one
    line naming REDIS_URL (without its password) and what Redis said, and exit status 2 like a bad setting."""
    port, _ = redis_with_password
    result = _run_server(free_port(), REDIS_URL=f"redis://{credentials}127.0.0.1:{port}/{database}")
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    lines = [line for line in result.stderr.splitlines() if "REDIS_URL=" in line]
    assert len(lines) == 1, result.stderr[-3000:]
    assert f"CRITICAL forty_thieves.app: REDIS_URL='redis://127.0.0.1:{port}/{database}': Redis refuses the server (" \
        in lines[0] and says in lines[0], lines
    assert "Traceback" not in result.stderr and "waiting for it" not in result.stderr
    assert "wrong" not in result.stderr and "sekrit" not in result.stderr  # no password in the log


def test_a_redis_that_refuses_the_server_once_it_runs_is_said_once_and_waited_for(
        redis_with_password: Any) -> None:
    """Redis takes another password under a running server (CONFIG SET requirepass, its connections killed: as a
    restart with another password does): each loop says once that Redis refuses the server, not that it is
    unreachable, and waits as for an outage; once the password is the server's again it is ready again."""
    port, _ = redis_with_password
    server = ServerProcess(f"redis://:sekrit@127.0.0.1:{port}/0")
    try:
        with redis.Redis(port=port, password="sekrit") as admin:
            admin.config_set("requirepass", "other")
            admin.client_kill_filter(_type="normal", skipme=True)
        _until(lambda: _status(server.url + "/readyz") == 503, 10, "not unready")
        time.sleep(3)  # several tries of each loop
        with redis.Redis(port=port, password="other") as admin:
            admin.config_set("requirepass", "sekrit")
        _until(lambda: _status(server.url + "/readyz") == 200, 15, "not ready again")
        time.sleep(2.5)  # each loop's next try finds Redis
        lines = server.logs().splitlines()
        refused = [line for line in lines if "Redis refuses the server (AuthenticationError" in line]
        said = [line for line in refused if " timers: Redis refuses" in line]  # the loop that polls Redis most
        assert len(said) == 1, refused
        assert "REDIS_URL" in said[0] and "; retrying" in said[0], said
        assert not any(" timers: Redis unreachable" in line for line in lines), lines[-20:]
        assert re.search(r" timers: Redis reachable again after \d+\.\d s", server.logs())
        for loop in LOOPS:  # at most once a loop
            assert sum(f" {loop}: Redis refuses" in line for line in refused) <= 1, refused
        assert "Traceback" not in server.logs() and "sekrit" not in server.logs()
    finally:
        server.stop()


def test_sigterm_mid_race_leaves_no_warning_on_stderr(make_own_server: Any) -> None:
    """A server stopped with SIGTERM while a race runs and its solver worker is busy filling the deal pool:
    it ends of the signal (as uvicorn means), within a few seconds, and its output has no leaked semaphore
    warning (5 at every stop), no traceback, no task exception."""
    server = make_own_server(FTR_SOLVER_WORKERS="1", FTR_POOL_TARGET="1000", FTR_SOLVER="python")
    moves = solution()

    async def race() -> list[Player]:
        created = create_match(server.url, variant=VARIANT, seed=SEED, players=2)
        players = [Player(server.ws_url), Player(server.ws_url)]
        for index, player in enumerate(players):
            await player.connect()
            await player.join(created["code"], f"p{index}")
            await player.send(m.Ready())
        for player in players:
            assert isinstance(await player.expect(m.Started), m.Started)
            assert isinstance(await player.play(moves[0]), m.PositionReply)
        return players

    async def run() -> None:
        players = await race()
        assert server.process is not None
        _until(lambda: worker_pids(server.process.pid), 10, "no solver worker")  # type: ignore[union-attr]
        await asyncio.sleep(1.0)  # the worker is solving for the pool
        began = time.monotonic()
        server.process.terminate()
        await asyncio.to_thread(server.process.wait, 20)
        assert time.monotonic() - began < 8
        assert server.process.returncode == -15
        for player in players:
            await player.close()

    asyncio.run(run())
    logs = server.logs()
    assert "Shutting down" in logs and "Finished server process" in logs, logs[-3000:]
    for bad in ("leaked semaphore", "resource_tracker", "Traceback", "Task exception", "Error"):
        assert bad not in logs, (bad, logs[-3000:])
