"""Bad input never escapes as anything but NotationError (STYLE.md habit 6).

Mutated position text and game records must either parse (and then be
valid and round-trip) or raise :class:`NotationError`; nothing else.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from server.engine import PRESETS, NotationError, deal, format_position, parse_position, parse_record, parse_view

from .strategies import variants

TOKENS = ["AS", "(AS)", "??", "-", "10H", "(10H)", "64", "KD", "Stock:", "1:", "#", "\n", " ", "x", "0", "ZZ", "()"]


@st.composite
def mutated_text(draw: st.DrawFn) -> tuple[str, str]:
    variant = draw(variants)
    lines = format_position(deal(draw(st.text(max_size=4)), variant)).split("\n")
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["drop", "dup", "insert", "swap", "truncate"]))
        words = lines[i].split(" ")
        if op == "drop" and len(words) > 1:
            del words[draw(st.integers(1, len(words) - 1))]
        elif op == "dup":
            words.append(draw(st.sampled_from(words)))
        elif op == "insert":
            words.insert(draw(st.integers(0, len(words))), draw(st.sampled_from(TOKENS)))
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
            continue
        else:
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
            continue
        lines[i] = " ".join(words)
    return variant.name, "\n".join(lines)


@settings(max_examples=300, deadline=None)
@given(mutated_text())
def test_mutated_position_text_parses_validly_or_raises_notation_error(case: tuple[str, str]) -> None:
    name, text = case
    variant = PRESETS[name]
    try:
        position = parse_position(text, variant)
    except NotationError as error:
        assert str(error)
    else:
        counts = position.card_counts()
        assert set(counts.values()) == {variant.decks} and len(counts) == 52
        assert parse_position(format_position(position), variant) == position
    try:
        parse_view(text, variant)
    except NotationError:
        pass


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=6),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                           max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["format", "variant", "autoplay", "undo", "deal", "moves", "seed", "times_ms"]), json_values)
def test_records_with_a_wrong_field_raise_notation_error(field: str, value: object) -> None:
    record = {"format": 1, "variant": "classic", "autoplay": True, "undo": "safe",
              "deal": format_position(deal("1", PRESETS["classic"])), "moves": ["s"], "times_ms": [5]}
    record[field] = value
    try:
        parsed = parse_record(json.dumps(record))
    except NotationError as error:
        assert str(error)
    else:
        assert parsed.variant.name == "classic" or field == "variant"


@given(st.binary(max_size=64))
def test_record_bytes_of_any_kind_raise_notation_error_or_parse(data: bytes) -> None:
    try:
        parse_record(data)
    except NotationError:
        pass
