"""Benchmark of the rules engine: prints figures, asserts nothing.

- commands applied per second, replaying long classic games through the
  checked path (``Game.play`` on notation strings, auto-play on);
- full legal-move listings per second on the positions of those games.

Run: ``python tests/benchmarks/engine_bench.py [--games 40] [--repeat 5]``.
The games are random legal play from deals "1".."N" (fixed random seed),
so every run measures the same work. Figures are medians over repeats.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from server.engine import Game, deal, find_variant, legal_moves


def random_game(seed: str, rng: random.Random, max_commands: int) -> tuple[list[str], list]:
    """Random legal play: prefer tableau moves over draws; returns commands and positions."""
    variant = find_variant("classic")
    game = Game(deal(seed, variant), variant, autoplay=True, undo="full")
    commands, positions = [], [game.position]
    while len(commands) < max_commands and not game.is_won:
        moves = [m.command for m in game.legal_moves()]
        if not moves:
            break
        tableau = [m for m in moves if m.kind == "move"]
        if tableau and rng.random() < 0.7:
            command = rng.choice(tableau)
        else:
            command = rng.choice(moves)
        game.play(command)
        commands.append(str(command))
        positions.append(game.position)
    return commands, positions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--commands", type=int, default=400, help="max commands per game")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    variant = find_variant("classic")
    rng = random.Random(2026)
    games = [(str(i), *random_game(str(i), rng, args.commands)) for i in range(1, args.games + 1)]
    total_commands = sum(len(c) for _, c, _ in games)
    positions = [p for _, _, ps in games for p in ps]
    deals = {seed: deal(seed, variant) for seed, _, _ in games}

    apply_rates = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        for seed, commands, _ in games:
            game = Game(deals[seed], variant, autoplay=True, undo="full")
            for text in commands:
                game.play(text)
        apply_rates.append(total_commands / (time.perf_counter() - start))

    listing_rates = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        for position in positions:
            legal_moves(position, variant)
        listing_rates.append(len(positions) / (time.perf_counter() - start))

    load = os.getloadavg()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {load[0]:.2f}")
    print(f"games: {len(games)} classic, {total_commands} commands, {len(positions)} positions")
    print(f"applied commands/s (checked path, auto-play on): median {statistics.median(apply_rates):,.0f} "
          f"(min {min(apply_rates):,.0f}, max {max(apply_rates):,.0f}; goal 50,000)")
    print(f"legal-move listings/s: median {statistics.median(listing_rates):,.0f} "
          f"(min {min(listing_rates):,.0f}, max {max(listing_rates):,.0f}; goal 10,000)")


if __name__ == "__main__":
    main()
