"""Seeded deals (RULES.md sections 1 and 7; server/engine/README.md "The deal algorithm").

The golden file pins deal algorithm version 1 forever. The independent
implementation below is written from the README's description alone, so a
bug in the engine's shuffle and the same bug in the golden file cannot
agree by accident.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from server.engine import PRESETS, deal, find_variant, format_position, parse_position

VECTORS = json.loads((Path(__file__).parent / "vectors" / "deals.json").read_text(encoding="utf-8"))
ROOT = Path(__file__).resolve().parents[2]


def readme_deal(seed: str, variant_name: str) -> str:
    """The deal as the README describes it, built from scratch with hashlib and strings."""
    variant = find_variant(variant_name)
    ranks, suits = "A23456789TJQK", "CDHS"
    deck = [r + s for _ in range(variant.decks) for s in suits for r in ranks]
    slots = ["-"] * (4 * variant.decks)
    if variant.aces_on_foundations:
        slots = ["A" + s for _ in range(variant.decks) for s in suits]
        deck = [c for c in deck if c[0] != "A"]
    words: list[int] = []
    counter = 0

    def word() -> int:
        nonlocal counter
        if not words:
            block = hashlib.sha256(b"forty-thieves-race/deal/v1\0" + seed.encode() + counter.to_bytes(8, "big")).digest()
            counter += 1
            words.extend(reversed([int.from_bytes(block[i:i + 8], "big") for i in range(0, 32, 8)]))
        return words.pop()

    def below(n: int) -> int:
        while True:
            x = word()
            if x < 2**64 - 2**64 % n:
                return x % n

    for i in range(len(deck) - 1, 0, -1):
        j = below(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    n, rows = variant.columns, variant.cards_per_column
    lines = ["Foundations: " + " ".join(slots), "Stock: " + " ".join(deck[n * rows:]), "Waste:",
             f"Redeals left: {variant.redeals}"]
    for col in range(n):
        cards = [deck[row * n + col] for row in range(rows)]
        cards = [f"({c})" if row < variant.face_down else c for row, c in enumerate(cards)]
        lines.append(f"{col + 1}: " + " ".join(cards))
    return "\n".join(lines)


@pytest.mark.parametrize("vector", VECTORS["vectors"], ids=lambda v: f"{v['variant']}-{v['seed']!r}")
def test_golden_deals(vector: dict[str, str]) -> None:
    variant = find_variant(vector["variant"])
    assert format_position(deal(vector["seed"], variant)) == vector["position"]


@pytest.mark.parametrize("name", sorted(PRESETS))
@pytest.mark.parametrize("seed", ["1", "7", "31999", "", "héllo ♠"])
def test_deal_follows_the_documented_algorithm(name: str, seed: str) -> None:
    assert format_position(deal(seed, PRESETS[name])) == readme_deal(seed, name)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_deal_shape(name: str) -> None:
    """RULES.md sections 1 and 7: column counts, sizes, face-down rows, stock size, slots."""
    variant = PRESETS[name]
    position = deal("shape", variant)
    assert len(position.tableau) == variant.columns
    assert all(len(c) == variant.cards_per_column for c in position.tableau)
    assert position.hidden == (variant.face_down,) * variant.columns
    on_foundations = 4 * variant.decks if variant.aces_on_foundations else 0
    assert len(position.stock) == variant.card_total - variant.columns * variant.cards_per_column - on_foundations
    assert position.waste == () and position.redeals_left == variant.redeals
    assert parse_position(format_position(position), variant) == position


def test_same_seed_same_cards_for_classic_and_relaxed() -> None:
    classic, relaxed = deal("99", PRESETS["classic"]), deal("99", PRESETS["relaxed"])
    assert classic.tableau == relaxed.tableau and classic.stock == relaxed.stock
    assert deal("99", PRESETS["classic"]) != deal("100", PRESETS["classic"])


def test_deal_is_the_same_in_a_fresh_interpreter_with_another_hash_seed() -> None:
    """Nothing may depend on hash randomisation or process state."""
    code = "from server.engine import deal, find_variant, format_position; print(format_position(deal('5', find_variant('classic'))))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"}).stdout
    assert out.strip() == format_position(deal("5", PRESETS["classic"]))
