"""Benchmark of the wire codec (``protocol.codec``): prints the cost per frame, asserts nothing.

- decode: the frames a player sends (``play`` above all: one per move; ``hint``, ``ping``, ``join``);
- encode: the frames the server sends per move (``position`` to the player, ``progress`` to the others).

Run: ``python tests/benchmarks/codec_bench.py [--repeat 7] [--n 20000]``. The frames are built from a real
deal (classic, seed "1") so their sizes are those of a game. Figures: median of the repeats, microseconds
per frame, and the frame's size in bytes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from protocol import messages as m
from protocol.codec import decode_client, encode
from server.engine import Game, deal, find_variant
from server.views import legal_message, view_message


def per_call_us(work: Callable[[], object], n: int, repeat: int) -> float:
    """Median over ``repeat`` runs of ``n`` calls of ``work``, in microseconds per call."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(n):
            work()
        runs.append((time.perf_counter() - start) / n * 1e6)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--n", type=int, default=20_000)
    args = parser.parse_args()
    variant = find_variant("classic")
    game = Game(deal("1", variant), variant, autoplay=True, undo="safe")
    position = m.PositionReply(12, "3-7", view_message(game.position), legal_message(game.legal_moves()), 12, 0, 9,
                               "playing", 41_250)
    progress = m.Progress("alice", 12, 9, "playing", 41_250)
    client_frames = {
        "play": encode(m.Play(12, "3-7")),
        "hint": encode(m.Hint(2)),
        "ping": encode(m.Ping(1_733_000_000_000)),
        "join": encode(m.Join("K7QX", "alice")),
    }
    print(f"codec benchmark: python {sys.version.split()[0]}, {args.n} calls x {args.repeat} repeats, "
          "median microseconds per frame")
    for name, frame in client_frames.items():
        us = per_call_us(lambda frame=frame: decode_client(frame), args.n, args.repeat)
        print(f"  decode {name:<9} {len(frame):>5} B  {us:6.2f} us")
    for name, message in (("position", position), ("progress", progress), ("error", m.Error("seq_gap", "x" * 60, 5))):
        us = per_call_us(lambda message=message: encode(message), args.n, args.repeat)
        print(f"  encode {name:<9} {len(encode(message)):>5} B  {us:6.2f} us")


if __name__ == "__main__":
    main()
