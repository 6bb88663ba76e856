"""The engine against an independent implementation of RULES.md (tests/reference/ref_rules.py,
written from RULES.md alone by another author, without reading the engine).

Random records for every preset, mixing legal commands, illegal ones and
malformed text, from fresh deals and from mid-game positions (partly built
foundations, a non-empty waste, fewer redeals), with auto-play on and off
and every undo policy. Per move verdicts, final position text, move counts
and status must agree exactly.
"""

from __future__ import annotations

import random

import pytest

from server.engine import PRESETS, Game, deal, format_position, parse_record, replay
from tests.reference import ref_rules

from .test_properties import candidate_commands

JUNK = ["S", "03-7", "finish ", "draw", "3--7", "w-", "x", "u2", "f0-1", "0-1", "1-1", "w-w", "1-2x0", "w-f9", "12-1",
        "1-13", "f1-2", "r", "u", "finish", "s"]


def random_record(rng: random.Random, variant_name: str, length: int) -> dict[str, object]:
    variant = PRESETS[variant_name]
    autoplay = rng.random() < 0.7
    undo = rng.choice(["none", "safe", "full"])
    start = deal(str(rng.randrange(10**6)), variant)
    if rng.random() < 0.4:  # start from a mid-game position instead of a fresh deal
        warm = Game(start, variant, autoplay=True, undo="full")
        for _ in range(rng.randrange(20, 150)):
            legal = [m.command for m in warm.legal_moves() if m.command.kind != "undo"]
            if not legal:
                break
            warm.play(rng.choice(legal))
        start = warm.position
    game = Game(start, variant, autoplay=autoplay, undo=undo)
    moves: list[str] = []
    for _ in range(length):
        roll = rng.random()
        if roll < 0.1:
            text = rng.choice(JUNK)
        elif roll < 0.25:
            text = rng.choice(candidate_commands(game.position, variant))
        else:
            legal = game.legal_moves()
            if not legal:
                text = rng.choice(JUNK)
            else:
                tableau = [m for m in legal if m.command.kind == "move"]
                pool = tableau if tableau and rng.random() < 0.6 else legal
                text = str(rng.choice(pool).command)
        moves.append(text)
        try:
            game.play(text)
        except ValueError:
            pass
    return {"format": 1, "variant": variant_name, "autoplay": autoplay, "undo": undo,
            "deal": format_position(start), "moves": moves}


def compare(record: dict[str, object]) -> None:
    ours = replay(parse_record(record), dead_budget=200_000).to_json()
    theirs = ref_rules.replay(record)
    for a, b in zip(ours["results"], theirs["results"], strict=True):
        assert (a["i"], a["move"], a["ok"]) == (b["i"], b["move"], b["ok"]), (a, b)
    assert ours["final"] == theirs["final"]
    assert ours["moves_counted"] == theirs["moves_counted"]
    assert ours["status"] == theirs["status"]


@pytest.mark.parametrize("variant_name", sorted(PRESETS))
@pytest.mark.parametrize("batch", range(3))
def test_random_records_agree_with_the_independent_implementation(variant_name: str, batch: int) -> None:
    rng = random.Random(f"{variant_name}-{batch}")
    for _ in range(6):
        compare(random_record(rng, variant_name, rng.randrange(20, 160)))


def test_endgames_with_finish_agree(tmp_path: object) -> None:
    """Late positions with auto-play off, where finish and the slot each ace starts matter."""
    rng = random.Random("endgames")
    variant = PRESETS["classic"]
    checked = 0
    for attempt in range(200):
        game = Game(deal(f"end-{attempt}", variant), variant, autoplay=True, undo="none")
        # Strip the deal down: play the solver-free greedy until the stock is gone.
        for _ in range(400):
            legal = [m.command for m in game.legal_moves() if m.command.kind in ("move", "draw")]
            if not legal:
                break
            game.play(rng.choice(legal))
        if game.position.stock:
            continue
        record = {"format": 1, "variant": "classic", "autoplay": False, "undo": "full",
                  "deal": format_position(game.position), "moves": ["finish", "u", "finish", "w-f", "1-f"]}
        compare(record)
        checked += 1
    assert checked > 20


def scattered_endgame(rng: random.Random) -> str:
    """Classic position text with stock and waste empty and a few cards per suit left, aces included."""
    slots, left = [], []
    for suit in "CDHS":
        for _ in range(2):
            height = rng.choice([0, 9, 10, 11, 12, 13])
            slots.append("-" if height == 0 else "A23456789TJQK"[height - 1] + suit)
            left += ["A23456789TJQK"[r] + suit for r in range(height, 13)]
    while len(left) > 30:  # keep it small: put whole suits back up
        slots, left = [], []
        for suit in "CDHS":
            for _ in range(2):
                height = rng.choice([0, 11, 12, 13, 13])
                slots.append("-" if height == 0 else "A23456789TJQK"[height - 1] + suit)
                left += ["A23456789TJQK"[r] + suit for r in range(height, 13)]
    rng.shuffle(slots)
    rng.shuffle(left)
    columns: list[list[str]] = [[] for _ in range(10)]
    for card in left:
        columns[rng.randrange(10)].append(card)
    # slots hold A..top of one suit; empty slots were shuffled in among them
    lines = ["Foundations: " + " ".join(slots), "Stock:", "Waste:", "Redeals left: 0"]
    lines += [f"{i}: {' '.join(c)}".rstrip() for i, c in enumerate(columns, 1)]
    return "\n".join(lines)


def test_scattered_endgames_finish_alike() -> None:
    """finish on hand-built endgames (aces still down, two copies on top): the order chosen,
    hence the slot each suit starts in, must match the independent implementation."""
    rng = random.Random("scattered")
    for _ in range(150):
        record = {"format": 1, "variant": "classic", "autoplay": rng.random() < 0.3, "undo": "full",
                  "deal": scattered_endgame(rng), "moves": ["finish", "u", "1-f", "finish"]}
        compare(record)
