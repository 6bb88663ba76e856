"""The server under faults: a Redis stall during a commit, a process killed between the last command and the
results, lobby and start racing across two processes. Real server processes, a real redis-server, real
WebSocket connections; the faults are real too (``DEBUG SLEEP``, SIGKILL, a TCP proxy that stops forwarding)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import pytest
import redis
import websockets

from protocol import messages as m
from protocol.codec import decode_server
from server.store import keys, scripts
from server.views import view_message

from .conftest import ServerProcess, free_port, start_redis_server
from .test_race import SEED, VARIANT, solution
from .test_resilience import reference_after
from .wsclient import Player, create_match, public_state

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SOCKET_TIMEOUT_S = 5
"""The server's Redis socket timeout (server/store ``redis_client``): a stall must outlast it."""


def _debug_allowed(client: redis.Redis) -> bool:
    try:
        client.execute_command("DEBUG", "SLEEP", "0")
    except redis.ResponseError:
        return False
    return True


@pytest.fixture
def stall(redis_url: str) -> Iterator[Any]:
    """``stall(seconds)``: Redis itself sleeps (``DEBUG SLEEP``, sent from a connection of its own in a thread)
    and answers nobody meanwhile. Returns the thread; the fixture waits for it at the end."""
    client = redis.Redis.from_url(redis_url, socket_timeout=60)
    if not _debug_allowed(client):
        pytest.skip("this Redis refuses DEBUG (start it with --enable-debug-command local)")
    threads: list[threading.Thread] = []

    def start(seconds: float) -> threading.Thread:
        thread = threading.Thread(target=client.execute_command, args=("DEBUG", "SLEEP", str(seconds)), daemon=True)
        thread.start()
        time.sleep(0.2)  # the DEBUG SLEEP is running in Redis before the test sends its frame
        threads.append(thread)
        return thread

    yield start
    for thread in threads:
        thread.join(30)
    client.close()


async def solo_after(server: ServerProcess, commands: list[str]) -> tuple[str, Player]:
    """A one-player match of the race seed, ``commands`` played and acknowledged."""
    created = create_match(server.url, variant=VARIANT, seed=SEED, players=1)
    solo = Player(server.ws_url)
    await solo.connect()
    await solo.join(created["code"], "solo")
    await solo.send(m.Ready())
    assert isinstance(await solo.expect(m.Started), m.Started)
    for command in commands:
        assert isinstance(await solo.play(command), m.PositionReply)
    return created["code"], solo


async def warm_pool(server: ServerProcess, code: str) -> None:
    """Have the server open most of its Redis connections (concurrent ``GET /matches/{code}``), as a server that
    has been serving for a while has: a command sent during a stall then goes out on an open connection (a new
    one would wait in its handshake and send nothing), reaches Redis, and runs when Redis wakes up."""
    async with httpx.AsyncClient(timeout=10) as client:
        replies = await asyncio.gather(*(client.get(f"{server.url}/matches/{code}") for _ in range(32)))
    assert all(reply.status_code == 200 for reply in replies)


def stored_log(redis_url: str, code: str, name: str) -> list[str]:
    """The player's move log as Redis holds it: the commands only."""
    client = redis.Redis.from_url(redis_url)
    try:
        return [entry.decode().split(" ", 1)[0] for entry in client.lrange(keys.log_key(code, name), 0, -1)]
    finally:
        client.close()


def assert_told_what_redis_holds(reply: Any, seq: int, applied: list[str]) -> None:
    """``reply`` acknowledges ``seq`` as the command Redis applied there, with the game Redis's log rebuilds."""
    assert isinstance(reply, m.PositionReply), reply
    assert reply.seq == seq and reply.command == applied[seq - 1], (reply.seq, reply.command, applied)
    rebuilt = reference_after(applied)
    assert reply.moves == rebuilt.moves and reply.view == view_message(rebuilt.position)


async def test_a_commit_that_timed_out_is_resolved_and_a_retried_seq_names_what_was_applied(
        make_server: Any, stall: Any, redis_url: str) -> None:
    """Redis stalls longer than the server's socket timeout while seq 4 is committed: Redis holds the move, so
    the player is told it was applied (it was answered ``internal``, "nothing changed"); a retried seq 4 with
    another command is acknowledged as the command applied (it was acknowledged as ``s``, the game not)."""
    moves = solution()
    server = make_server()

    async def run() -> None:
        code, solo = await solo_after(server, moves[:3])
        await warm_pool(server, code)
        stalled = stall(SOCKET_TIMEOUT_S + 1.5)
        await solo.send(m.Play(4, moves[3]))
        first = await solo.expect(m.PositionReply, timeout=30)
        stalled.join(30)
        applied = stored_log(redis_url, code, "solo")
        # The commit went out before the server's read-back (Redis runs what it received in that order):
        # it is stored.
        assert applied == moves[:4]
        assert_told_what_redis_holds(first, 4, applied)
        # The protocol's retry of seq 4 (a client that took the first answer for a refusal would send another
        # command with the same number): acknowledged as what seq 4 really is, nothing applied.
        await solo.send(m.Play(4, "s"))
        again = await solo.expect(m.PositionReply)
        assert_told_what_redis_holds(again, 4, applied)
        assert stored_log(redis_url, code, "solo") == applied
        solo.seq = again.seq
        nxt = await solo.play(moves[4])
        assert_told_what_redis_holds(nxt, 5, stored_log(redis_url, code, "solo"))
        await solo.close()

    await run()


async def test_a_commit_whose_outcome_stays_unknown_says_so_and_the_session_reloads_before_the_next_command(
        make_server: Any, stall: Any, redis_url: str) -> None:
    """Redis stalls past the socket timeout and past ``FTR_RESOLVE_S``: the player hears ``unknown_outcome``
    (never "nothing changed"); when Redis is back the next frame is answered from what Redis holds."""
    moves = solution()
    server = make_server(FTR_RESOLVE_S="1")

    async def run() -> None:
        code, solo = await solo_after(server, moves[:3])
        await warm_pool(server, code)
        began = time.monotonic()
        stalled = stall(SOCKET_TIMEOUT_S + 3)
        await solo.send(m.Play(4, moves[3]))
        unknown = await solo.expect(m.PositionReply, timeout=30)
        assert isinstance(unknown, m.Error) and unknown.code == "unknown_outcome", unknown
        assert "nothing changed" not in unknown.message and "seq 4" in unknown.message, unknown.message
        assert time.monotonic() - began < SOCKET_TIMEOUT_S + 3  # answered within the bound, during the stall
        stalled.join(30)
        applied = stored_log(redis_url, code, "solo")
        assert applied == moves[:4]  # Redis ran the commit once it woke up
        await solo.send(m.Play(4, "s"))  # not knowing, the client tries seq 4 again (with another command)
        again = await solo.expect(m.PositionReply)
        assert_told_what_redis_holds(again, 4, applied)
        solo.seq = again.seq
        nxt = await solo.play(moves[4])  # memory equals Redis: the next command is applied on the right game
        assert_told_what_redis_holds(nxt, 5, stored_log(redis_url, code, "solo"))
        await solo.close()

    await run()


# ------------------------------------------------------------------ a process killed before the results


class FreezingProxy:
    """A TCP proxy in front of Redis, in a thread of its own: it forwards both ways until the reply to the
    first COMMIT script whose arguments contain ``trigger`` has gone back to the server, then forwards nothing
    more from the server to Redis (as if the process had died right after that commit)."""

    def __init__(self, redis_url: str, trigger: bytes) -> None:
        host_port = redis_url.split("//", 1)[1].split("/", 1)[0]
        self.redis_host, port = host_port.rsplit(":", 1)
        self.redis_port = int(port)
        self.port = free_port()
        self.trigger = trigger
        self.sha = hashlib.sha1(scripts.COMMIT.source(cluster=False).encode()).hexdigest().encode()
        self.frozen = threading.Event()
        # The proxy runs on a loop of its own in a thread (not the test's loop): it must keep relaying while
        # the test's code blocks, e.g. in a sync HTTP call to the server whose Redis traffic it carries.
        self.loop = asyncio.new_event_loop()
        self.writers: list[asyncio.StreamWriter] = []  # every connection's two ends, closed in close()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        self.ready.wait(5)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", self.port))
        self.ready.set()
        self.loop.run_forever()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(self.redis_host, self.redis_port)
        self.writers += [writer, up_writer]
        armed = asyncio.Event()

        async def to_redis() -> None:
            while data := await reader.read(65536):
                if self.frozen.is_set():
                    return  # held back for ever
                if self.sha in data and self.trigger in data:
                    armed.set()
                up_writer.write(data)
                await up_writer.drain()

        async def to_server() -> None:
            while data := await up_reader.read(65536):
                writer.write(data)
                await writer.drain()
                if armed.is_set():
                    self.frozen.set()

        tasks = [asyncio.ensure_future(to_redis()), asyncio.ensure_future(to_server())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            writer.close()
            up_writer.close()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.server.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        tasks = asyncio.all_tasks(self.loop)
        for task in tasks:  # connections of the killed process, still held back
            task.cancel()
        for writer in self.writers:
            writer.transport.abort()

        async def settle() -> None:
            await asyncio.gather(*tasks, return_exceptions=True)
            # A transport closes its socket in a callback after abort(): wait for each one, or a socket left
            # open is reported (ResourceWarning, an error here) inside whichever later test collects it.
            await asyncio.gather(*(w.wait_closed() for w in self.writers), return_exceptions=True)

        self.loop.run_until_complete(settle())
        self.loop.close()


async def resigned_pair(server: ServerProcess) -> tuple[str, Player]:
    """A started two-player match where alice has resigned; bob is left playing."""
    created = create_match(server.url, variant=VARIANT, seed=SEED, players=2)
    alice, bob = Player(server.ws_url), Player(server.ws_url)
    for player, name in ((alice, "alice"), (bob, "bob")):
        await player.connect()
        await player.join(created["code"], name)
        await player.send(m.Ready())
    for player in (alice, bob):
        assert isinstance(await player.expect(m.Started), m.Started)
    assert isinstance(await alice.resign(), m.PositionReply)
    await alice.close()
    return created["code"], bob


def results_within(server: ServerProcess, code: str, seconds: float) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        response = httpx.get(f"{server.url}/matches/{code}/results", timeout=5)
        if response.status_code == 200:
            return response.json()
        state = public_state(server.url, code)
        assert time.monotonic() < deadline, f"no results within {seconds} s: {state['state']}, {state['players']}"
        time.sleep(0.1)


def test_every_player_ended_leads_to_results_whatever_the_process_dies_after_the_last_commit(
        make_server: Any, redis_url: str) -> None:
    """The last resign is committed, and the process never reaches Redis again (a proxy stops forwarding its
    traffic right after that commit's reply) and is killed: another process publishes the results at once, not
    at the 30-minute deadline. Then three times a process killed as soon as the last resign is acknowledged.

    A sync test with asyncio.run, not pytest-asyncio's loop: FreezingProxy.close drives the proxy's own loop
    from this thread (run_until_complete), which cannot be done while a loop runs in it."""
    proxy = FreezingProxy(redis_url, trigger=b":p:bob")
    try:
        doomed = make_server(REDIS_URL=proxy.url)

        async def last_resign(server: ServerProcess) -> str:
            code, bob = await resigned_pair(server)
            resigned = await bob.resign()
            assert isinstance(resigned, m.PositionReply) and resigned.status == "resigned", resigned
            assert server.process is not None
            server.process.kill()  # at once after the acknowledgement
            await bob.close()
            return code

        code = asyncio.run(last_resign(doomed))
        assert proxy.frozen.is_set()
        doomed.kill()
    finally:
        proxy.close()
    heir = make_server()
    results = results_within(heir, code, 8)
    assert sorted((row["name"], row["status"]) for row in results["ranking"]) == [("alice", "resigned"),
                                                                                  ("bob", "resigned")]
    codes = [code]
    for _ in range(3):
        code = asyncio.run(last_resign(heir))
        codes.append(code)
        heir.kill()
        heir = make_server()
        assert len(results_within(heir, code, 8)["ranking"]) == 2
    # Whichever process recorded each race (a finalize run twice included), each is in both histories once,
    # and the head-to-head counts it once on both sides.
    pages = {name: httpx.get(f"{heir.url}/players/{name}", headers={"Accept": "application/json"}, timeout=10).json()
             for name in ("alice", "bob")}
    for name, other in (("alice", "bob"), ("bob", "alice")):
        assert sorted(g["match"] for g in pages[name]["recent"]) == sorted(codes), pages[name]["recent"]
        assert pages[name]["games"] == 4
        assert [(r["name"], r["races"], r["draws"]) for r in pages[name]["head_to_head"]] == [(other, 4, 4)]
    last = results_within(heir, code, 8)["head_to_head"]
    assert [(row["races"], row["draws"]) for row in last] == [(4, 4)], last


# ------------------------------------------------------------------ lobby events across two processes


def stream_frames(redis_url: str, code: str) -> list[Any]:
    """The public frames of a match's event stream, oldest first."""
    client = redis.Redis.from_url(redis_url)
    try:
        entries = client.xrange(keys.events_key(code))
    finally:
        client.close()
    return [decode_server(fields[b"m"]) for _, fields in entries if fields.get(b"k", b"public") == b"public"]


async def test_no_lobby_event_follows_the_countdown_when_ready_and_start_race_across_two_processes(
        make_server: Any, redis_url: str) -> None:
    """Four players on two processes ready at once while the host starts the match: in 20 matches no ``lobby``
    event comes after the ``countdown`` (several in 20 said the match was still in its lobby), and no lobby
    event shows a player not ready after one showed it ready."""
    a, b = make_server(FTR_COUNTDOWN_S="30"), make_server(FTR_COUNTDOWN_S="30")

    async def one_match() -> str:
        created = create_match(a.url, players=4, solvable_only=False)
        players = [Player(server.ws_url) for server in (a, b, a, b)]
        for index, player in enumerate(players):
            await player.connect()
            # A name of its own per match: five matches join at once, and a name is its first player's.
            await player.join(created["code"], f"p{index}-{created['code']}")
        await asyncio.gather(*(player.send(m.Ready()) for player in players[1:]),
                             players[0].send(m.Start(created["host_token"])), players[0].send(m.Ready()))
        for player in players:  # a ready after the start is refused (already_started): wait past it
            while not isinstance(await player.recv(), m.Countdown):
                pass
        await asyncio.sleep(0.3)  # what the slower process still writes
        for player in players:
            await player.close()
        return created["code"]

    async def run() -> list[str]:
        codes: list[str] = []
        for _ in range(4):
            codes += await asyncio.gather(*(one_match() for _ in range(5)))
        return codes

    late, backwards = {}, {}
    for code in await run():
        frames = [f for f in stream_frames(redis_url, code) if isinstance(f, (m.Lobby, m.Countdown))]
        kinds = [f.state if isinstance(f, m.Lobby) else "countdown" for f in frames]
        counted = kinds.index("countdown")
        if any(isinstance(f, m.Lobby) for f in frames[counted:]):
            late[code] = kinds
        # Nor does a lobby event contradict one before it: players only join, and a ready player stays ready.
        seen: dict[str, bool] = {}
        for frame in frames[:counted]:
            now = {p.name: p.ready for p in frame.players}
            if not set(seen) <= set(now) or any(ready and not now[name] for name, ready in seen.items()):
                backwards[code] = [[(p.name, p.ready) for p in f.players] for f in frames[:counted]]
            seen = now
    assert not late, late
    assert not backwards, backwards


REDIS_DOWN_ROUTES = [
    ("POST", "/matches"),
    ("GET", "/matches/{code}"),
    ("GET", "/matches/{code}/results"),
    ("GET", "/matches/{code}/events"),
    ("GET", "/matches/{code}/replays/solo"),
    ("GET", "/daily"),
    ("POST", "/daily/relaxed/attempt"),
    ("GET", "/daily/{date}/relaxed/leaderboard"),
    ("GET", "/daily/{date}/relaxed/events"),
    ("GET", "/daily/{date}/relaxed/reveal"),
    ("GET", "/daily/{date}/relaxed/replay/solo"),
    ("GET", "/groups/k7qm4t2x9p/daily/{date}/relaxed"),
]
"""Every HTTP route that reads Redis (``/healthz`` answers 503 ``{"ok": false}`` of its own; the pages and
``/metrics`` need no Redis)."""


def _assert_redis_unavailable(answer: httpx.Response, what: str) -> None:
    """protocol/README.md "Error codes": ``internal`` with HTTP 503, as JSON, for a route whose Redis does not answer."""
    assert answer.status_code == 503, (what, answer.status_code, answer.text)
    assert answer.headers["content-type"].startswith("application/json"), (what, answer.headers)
    body = answer.json()
    assert body["error"] == "internal" and "Redis" in body["message"], (what, body)


def _concurrent_gets(url: str, count: int) -> list[int]:
    """The status codes of ``count`` GETs of ``url`` sent at once (each on a connection of its own), so the
    server serves them on as many pooled Redis connections as it has."""
    async def gets() -> list[int]:
        async with httpx.AsyncClient(timeout=10) as client:
            return [r.status_code for r in await asyncio.gather(*(client.get(url) for _ in range(count)))]
    return asyncio.run(gets())


async def _watch_refused(server: ServerProcess, code: str) -> tuple[object, int | None]:
    """The first frame (decoded) and the close code of a spectator WebSocket of match ``code``."""
    async with websockets.connect(f"ws://127.0.0.1:{server.port}/matches/{code}/watch", max_queue=None) as ws:
        frame = msgspec.msgpack.decode(await asyncio.wait_for(ws.recv(), 15))
        with contextlib.suppress(websockets.ConnectionClosed):
            await asyncio.wait_for(ws.recv(), 15)
        return frame, ws.close_code


def test_every_route_answers_the_json_error_internal_while_redis_is_down(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """With its Redis stopped, every route that reads Redis answers 503 ``{"error": "internal", "message"}`` (not
    a bare ``Internal Server Error`` 500) and logs why (once), a spectator's WebSocket gets the ``internal`` error frame
    and close 1011, and the health check says Redis is unreachable without naming where; once Redis is back the
    same server answers again, on every Redis connection it had pooled before (none fails for the old socket)."""
    from datetime import UTC, datetime

    redis_process, url = start_redis_server(str(tmp_path))
    server = None
    try:
        server = ServerProcess(url, FTR_DAILY_VARIANTS="relaxed")
        code = create_match(server.url, variant=VARIANT, seed=SEED, players=1, solvable_only=False)["code"]
        assert _concurrent_gets(f"{server.url}/matches/{code}", 12) == [200] * 12  # several connections pooled
        redis_process.terminate()
        redis_process.wait(5)
        date = datetime.now(UTC).date().isoformat()
        for method, path in REDIS_DOWN_ROUTES:
            path = path.format(code=code, date=date)
            body = {"name": "ann"} if path.endswith("/attempt") else {"players": 1} if method == "POST" else None
            answer = httpx.request(method, server.url + path, json=body, timeout=30)
            _assert_redis_unavailable(answer, f"{method} {path}")
        # Logged once for the outage, naming the first route refused (the others are counted, every 10 s).
        refusals = [line for line in server.logs().splitlines() if "app: Redis is unreachable:" in line]
        assert refusals and "Redis is unreachable: POST /matches refused (" in refusals[0], server.logs()[-3000:]
        assert len(refusals) <= 2, refusals
        # A spectator's WebSocket: the error frame every refusal of a spectator sends, then close 1011.
        frame, close_code = asyncio.run(_watch_refused(server, code))
        assert frame == {"type": "error", "code": "internal", "message": "Redis is unreachable: try again later"}
        assert close_code == 1011
        # The health check says Redis is down, and not where it runs.
        health = httpx.get(server.url + "/healthz", timeout=10)
        port = url.rsplit(":", 1)[1].split("/")[0]
        assert health.status_code == 503 and health.json() == {"ok": False, "redis": "unreachable"}, health.text
        assert port not in health.text
        assert "Internal Server Error" not in server.logs()
        redis_process = subprocess.Popen([*redis_process.args])  # the same port and folder: Redis is back (empty)
        deadline = time.monotonic() + 20
        while httpx.get(server.url + "/healthz", timeout=10).status_code != 200:
            assert time.monotonic() < deadline, "the server did not find Redis again"
            time.sleep(0.2)
        # A Redis with no data: 404 on every connection, the ones pooled before the restart reconnected.
        assert _concurrent_gets(f"{server.url}/matches/{code}", 12) == [404] * 12, server.logs()[-4000:]
    finally:
        if server is not None:
            server.stop()
        if redis_process.poll() is None:
            redis_process.terminate()
            redis_process.wait(5)


def test_a_route_answers_the_json_error_internal_when_redis_stalls_past_the_socket_timeout(server, stall) -> None:  # type: ignore[no-untyped-def]
    """A Redis that holds its answer past the server's socket timeout (redis-py's ``TimeoutError``, not a
    refused connection): the route answers the same JSON error, not a bare 500."""
    code = create_match(server.url, variant=VARIANT, seed=SEED, players=1, solvable_only=False)["code"]
    stall(SOCKET_TIMEOUT_S + 2)
    answer = httpx.get(f"{server.url}/matches/{code}", timeout=30)
    _assert_redis_unavailable(answer, "GET /matches/{code} during a stall")
    assert httpx.get(f"{server.url}/matches/{code}", timeout=30).status_code == 200  # and answers once it is over
