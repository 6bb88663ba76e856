"""Benchmark of the engine's work per accepted move, as the server does it: prints figures, asserts nothing.

For every preset, random legal play on random deals (fixed random seed, so every run measures the same work);
per accepted move, each part of what ``server.match.playing.Playing.play`` does with the engine and the codec
is timed on its own:

- ``apply``: ``Game.copy`` and ``Game.play`` on the command's text (parse, check, auto-play), the
  foundation counts before and after, ``is_won``;
- ``progress``: the ``progress`` event frame and the stored progress record;
- ``legal``: ``Game.legal_moves()``, the legal list the reply carries;
- ``view``: ``view_message`` (the redacted view) and ``legal_message`` (the list as wire pairs);
- ``encode``: the ``position`` reply built and encoded;
- ``dead``: the cheap part of the dead check (``stock_exhausted``, then ``_needs_dead_check``).

Figures are medians in microseconds over every move of every preset, then per preset; ``total`` is the median
of each move's sum (not the sum of the medians). Undo is played now and then (policy ``full``, plus a share
of ``safe`` games), so taking back a move is measured too.

Run: ``python tests/benchmarks/move_cost_bench.py [--games 30] [--moves 200] [--profile] [--check]``;
``--profile`` runs the same replay under cProfile and prints the top functions by own time; ``--check``
first compares the engine's optional C hot path with the pure Python (``pure=True``) on every position of
the replay and on 2,000 random positions per preset (tests/engine/test_fast_path.py's generator): the
same legal lists and views, or it stops with the first difference.
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
from server.core.player import needs_dead_check as _needs_dead_check
from server.engine import PRESETS, Game, deal
from server.engine.rules import stock_exhausted
from server.views import legal_message, view_message

PARTS = ("apply", "progress", "legal", "view", "encode", "dead")


def random_commands(variant_name: str, seed: str, rng: random.Random, max_moves: int, undo: str) -> list[str]:
    """A random legal game's commands: tableau moves preferred over draws, an undo now and then."""
    variant = PRESETS[variant_name]
    game = Game(deal(seed, variant), variant, autoplay=True, undo=undo)
    commands: list[str] = []
    while len(commands) < max_moves and not game.is_won:
        legal = [move.command for move in game.legal_moves()]
        if not legal:
            break
        undos = [c for c in legal if c.kind == "undo"]
        tableau = [c for c in legal if c.kind == "move"]
        roll = rng.random()
        if undos and roll < 0.08:
            command = undos[0]
        elif tableau and roll < 0.75:
            command = rng.choice(tableau)
        else:
            command = rng.choice(legal)
        game.play(command)
        commands.append(str(command))
    return commands


def replay_timed(variant_name: str, seed: str, commands: list[str], undo: str) -> list[tuple[int, ...]]:
    """Replay ``commands`` doing, per move, what the server does; each part's time in ns per move."""
    variant = PRESETS[variant_name]
    game = Game(deal(seed, variant), variant, autoplay=True, undo=undo)
    clock = time.perf_counter_ns
    times = []
    for moves, command in enumerate(commands, 1):
        t0 = clock()
        before_found = game.position.foundation_cards
        game = game.copy()  # the server plays each command on a copy (PlayerGame.propose_play)
        game.play(command)
        found = game.position.foundation_cards
        status = "won" if game.is_won else "playing"
        t1 = clock()
        encode(m.Progress("player", game.moves, found, status, moves * 1000))
        record = {"moves": game.moves, "undos": game.undos, "hints": 0, "foundation": found, "status": status,
                  "time_ms": moves * 1000, "last_found_ms": before_found}
        t2 = clock()
        legal = game.legal_moves() if status == "playing" else []
        t3 = clock()
        view, pairs = view_message(game.position), legal_message(legal)
        t4 = clock()
        encode(m.PositionReply(moves, command, view, pairs, game.moves, game.undos, found, status, moves * 1000))
        t5 = clock()
        if status == "playing" and stock_exhausted(game.position, game.variant) and legal:
            _needs_dead_check(game, legal)
        t6 = clock()
        del record
        times.append((t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5))
    return times


def workload(games: int, max_moves: int) -> list[tuple[str, str, list[str], str]]:
    """``games`` random games per preset: (variant, seed, commands, undo policy)."""
    rng = random.Random(2026)
    work = []
    for name in PRESETS:
        for g in range(games):
            seed = str(rng.randrange(10**9))
            undo = "full" if g % 3 else "safe"
            work.append((name, seed, random_commands(name, seed, rng, max_moves, undo), undo))
    return work


def check(work: list[tuple[str, str, list[str], str]], random_per_preset: int = 2000) -> int:
    """Compare the C hot path with the pure Python on every replayed and ``random_per_preset`` random
    positions per preset; returns how many positions were compared (raises AssertionError on a difference)."""
    from server.engine import legal_moves, redact
    from tests.engine.test_fast_path import VARIANTS, random_position

    compared = 0

    def same(position, variant) -> None:  # type: ignore[no-untyped-def]
        nonlocal compared
        assert legal_moves(position, variant) == legal_moves(position, variant, pure=True), (variant.name, position)
        assert redact(position) == redact(position, pure=True), (variant.name, position)
        compared += 1

    for name, seed, commands, undo in work:
        variant = PRESETS[name]
        game = Game(deal(seed, variant), variant, autoplay=True, undo=undo)
        for command in commands:
            game.play(command)
            same(game.position, variant)
    rng = random.Random(2026)
    for variant in VARIANTS:
        for _ in range(random_per_preset):
            same(random_position(variant, rng), variant)
    return compared


def _us(ns: float) -> str:
    return f"{ns / 1000:6.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=30, help="games per preset")
    parser.add_argument("--moves", type=int, default=200, help="max moves per game")
    parser.add_argument("--profile", action="store_true", help="also profile the replay with cProfile")
    parser.add_argument("--check", action="store_true", help="first compare the C hot path with the pure Python")
    args = parser.parse_args()
    work = workload(args.games, args.moves)
    if args.check:
        start = time.perf_counter()
        print(f"C hot path = pure Python on {check(work):,} positions ({time.perf_counter() - start:.0f} s)")
    load = os.getloadavg()
    for name, seed, commands, undo in work[: len(PRESETS)]:  # warm the caches once, as a running server has
        replay_timed(name, seed, commands, undo)
    by_preset: dict[str, list[tuple[int, ...]]] = {name: [] for name in PRESETS}
    for name, seed, commands, undo in work:
        by_preset[name].extend(replay_timed(name, seed, commands, undo))
    every = [t for times in by_preset.values() for t in times]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {load[0]:.2f} at the start, "
          f"{os.getloadavg()[0]:.2f} at the end")
    print(f"{len(every)} moves, {len(work)} games, {len(PRESETS)} presets; medians in us per move")
    header = f"{'':14} " + " ".join(f"{p:>8}" for p in PARTS) + f" {'total':>8}"
    print(header)

    def row(label: str, times: list[tuple[int, ...]]) -> str:
        cells = [statistics.median(t[i] for t in times) for i in range(len(PARTS))]
        total = statistics.median(sum(t) for t in times)
        return f"{label:14} " + " ".join(f"{_us(c):>8}" for c in cells) + f" {_us(total):>8}"

    print(row("all", every))
    for name, times in by_preset.items():
        print(row(name, times))
    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        for name, seed, commands, undo in work:
            replay_timed(name, seed, commands, undo)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
