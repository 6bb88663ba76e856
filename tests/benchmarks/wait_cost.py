"""What ``FTR_REDIS_WAIT_REPLICAS`` costs: move round trips on one Redis and on a 3+3 Redis Cluster, with and
without waiting for a replica; prints figures, asserts nothing.

For each setup it starts the Redis (one ``redis-server``, or a loopback cluster of 3 masters and 3 replicas,
tests/integration/redis_cluster.py), two server processes on it, and ``--matches`` matches of two players, the
two players of a match on different processes. Every player plays the same solved deal (relaxed, seed 4) command
after command, each sent when the reply to the one before came (one outstanding command each), and times every
``play`` -> ``position`` round trip. Printed per setup: moves/s while playing (from each round's start signal to its last reply), round trip p50 /
p99 / max (ms).

Run: ``python tests/benchmarks/wait_cost.py [--matches 10] [--rounds 2]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from protocol import messages as m
from tests.integration.conftest import ServerProcess, free_port, redis_binary
from tests.integration.redis_cluster import LocalCluster
from tests.integration.test_race import solution
from tests.integration.test_resilience import started_pair


async def race(a: ServerProcess, b: ServerProcess, moves: list[str], times: list[float],
               spans: list[float]) -> int:
    _code, alice, bob = await started_pair(a.url, a.ws_url, b.ws_url)
    played = 0
    began = time.perf_counter()

    async def play(player) -> None:  # type: ignore[no-untyped-def]
        nonlocal played
        for command in moves:
            start = time.perf_counter()
            reply = await player.play(command)
            times.append(time.perf_counter() - start)
            assert isinstance(reply, m.PositionReply), reply
            played += 1

    await asyncio.gather(play(alice), play(bob))
    spans.append(time.perf_counter() - began)
    await alice.close()
    await bob.close()
    return played


def args_matches(spans: list[float], rounds: int) -> int:
    """Matches played at once: the spans of one round overlap, so a round lasts one span of them."""
    return max(1, len(spans) // rounds)


def measure(url: str, wait: int, matches: int, rounds: int, moves: list[str]) -> str:
    env = {"FTR_REDIS_WAIT_REPLICAS": str(wait), "FTR_RATE": "100000", "FTR_BURST": "100000"}
    a, b = ServerProcess(url, **env), ServerProcess(url, **env)
    times: list[float] = []
    spans: list[float] = []  # each round's playing time (from the start signal to the last reply)
    try:
        async def run() -> int:
            total = 0
            for _ in range(rounds):
                total += sum(await asyncio.gather(*(race(a, b, moves, times, spans) for _ in range(matches))))
            return total

        played = asyncio.run(run())
        elapsed = sum(spans) / args_matches(spans, rounds)
    finally:
        a.stop()
        b.stop()
    cuts = statistics.quantiles(times, n=100)
    slow = sum(t > 0.1 for t in times)
    return (f"{played / elapsed:8.0f} moves/s   p50 {cuts[49] * 1000:6.2f} ms   p99 {cuts[98] * 1000:6.2f} ms   "
            f"max {max(times) * 1000:7.1f} ms   over 100 ms: {slow}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=10, help="matches played at once (2 players each)")
    parser.add_argument("--rounds", type=int, default=2, help="times the matches are played")
    args = parser.parse_args()
    moves = solution()
    folder = tempfile.mkdtemp(prefix="ftr-wait-cost-")
    port = free_port()
    single = subprocess.Popen([redis_binary(), "--port", str(port), "--save", "", "--dir", folder],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cluster = LocalCluster(folder + "/cluster")
    try:
        time.sleep(0.5)
        print(f"{args.matches} matches x 2 players x {len(moves)} moves, {args.rounds} rounds, 2 server processes")
        print("one Redis,       no wait  ", measure(f"redis://127.0.0.1:{port}/0", 0, args.matches, args.rounds, moves))
        print("cluster 3+3,     no wait  ", measure(cluster.url, 0, args.matches, args.rounds, moves))
        print("cluster 3+3,     WAIT 1   ", measure(cluster.url, 1, args.matches, args.rounds, moves))
    finally:
        cluster.stop()
        single.terminate()
        single.wait(5)


if __name__ == "__main__":
    main()
