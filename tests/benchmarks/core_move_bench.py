"""Benchmark of the server's work per accepted ``play`` outside any I/O: prints figures, asserts nothing.

Exactly what :meth:`server.match.playing.Playing.play` does between the decoded frame and the Redis commit,
and after it: :meth:`server.core.player.PlayerGame.propose_play` (a copy of the game, the command applied,
the legal list, the redacted view, the ``position`` reply, the ``progress`` event, the stored record) and the
frames encoded (the event for the stream, the reply for the socket). Random legal play (non-undo commands
preferred, as the load benchmark's bots play) on random deals of ``classic`` and ``relaxed`` (the load
benchmark's variants), fixed random seed, so every run measures the same work.

Figures: the median and the mean in microseconds per move over ``--rounds`` rounds of every game (the
minimum of the rounds' means is the least disturbed by other processes on a shared machine).

Run: ``python tests/benchmarks/core_move_bench.py [--games 20] [--moves 300] [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from protocol import messages as m
from protocol.codec import encode
from server.core.player import PlayerGame, Proposal
from server.engine import PRESETS, deal, format_position


def settings_of(variant: str) -> m.Settings:
    return m.Settings(variant, False, 2, 0, True, "full", False)


def game_commands(variant: str, seed: str, rng: random.Random, moves: int) -> tuple[str, list[str]]:
    """A deal (position text, as Redis holds it) and a random legal game's commands on it."""
    text = format_position(deal(seed, PRESETS[variant]))
    player = PlayerGame.restored("p", text, settings_of(variant), [], "playing", 0, 0, 0)
    commands: list[str] = []
    for seq in range(1, moves + 1):
        legal = [str(move.command) for move in player.legal()]
        choices = [c for c in legal if c != "u"] or legal
        if not choices or player.status != "playing":
            break
        command = rng.choice(choices)
        answer = player.propose_play(seq, command, seq * 1000)
        assert isinstance(answer, Proposal), answer
        player = answer.next
        commands.append(command)
    return text, commands


def timed(variant: str, text: str, commands: list[str]) -> list[int]:
    """Replay ``commands`` as the server plays them; ns per move."""
    player = PlayerGame.restored("p", text, settings_of(variant), [], "playing", 0, 0, 0)
    clock = time.perf_counter_ns
    times = []
    for seq, command in enumerate(commands, 1):
        t0 = clock()
        answer = player.propose_play(seq, command, seq * 1000)
        write = answer.write
        [str(getattr(write.record, field)) for field in write.record.__struct_fields__]  # the record as text
        [encode(event) for event in write.events]
        assert answer.frame  # the reply, encoded by propose_play already (what the server pushes)
        t1 = clock()
        player = answer.next
        times.append(t1 - t0)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="games per variant")
    parser.add_argument("--moves", type=int, default=300, help="commands per game at most")
    parser.add_argument("--rounds", type=int, default=5, help="replays of the whole workload")
    args = parser.parse_args()
    rng = random.Random(2026)
    work = [(variant, *game_commands(variant, str(rng.randrange(10**9)), rng, args.moves))
            for variant in ("classic", "relaxed") for _ in range(args.games)]
    moves = sum(len(commands) for _, _, commands in work)
    print(f"core per move: {moves:,} moves of {len(work)} games (classic and relaxed), {args.rounds} rounds; "
          f"load average {os.getloadavg()[0]:.2f}")
    means, medians = [], []
    for _ in range(args.rounds):
        times = [t for variant, text, commands in work for t in timed(variant, text, commands)]
        means.append(statistics.fmean(times) / 1000)
        medians.append(statistics.median(times) / 1000)
    print(f"  propose_play + record + event and reply encoded: median {min(medians):.1f} us, "
          f"mean {min(means):.1f} us (best round; rounds' means {', '.join(f'{x:.1f}' for x in means)})")


if __name__ == "__main__":
    main()
