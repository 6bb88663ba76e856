"""Card and command notation (RULES.md section 10): canonical, round-tripping, one error type."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.cards import format_card, parse_card, rank_of, suit_of
from protocol.commands import ANY_SLOT, WASTE, Command, Pile, move, parse_command
from protocol.errors import NotationError


def test_every_card_round_trips() -> None:
    texts = [r + s for s in "CDHS" for r in "A23456789TJQK"]
    assert [format_card(parse_card(t)) for t in texts] == texts
    assert sorted(parse_card(t) for t in texts) == list(range(52))


def test_ten_is_also_accepted_as_10() -> None:
    assert parse_card("10D") == parse_card("TD")
    assert rank_of(parse_card("TD")) == 10 and suit_of(parse_card("TD")) == 1


@pytest.mark.parametrize("text", ["", "as", "1S", "AX", "KSS", "??", " AS", "11C", "0S", 5])
def test_bad_cards_raise_notation_error(text: object) -> None:
    with pytest.raises(NotationError, match="not a card"):
        parse_card(text)  # type: ignore[arg-type]


@pytest.mark.parametrize("text, expected", [
    ("s", Command("draw")), ("r", Command("redeal")), ("u", Command("undo")), ("finish", Command("finish")),
    ("3-7", move(Pile("column", 3), Pile("column", 7))),
    ("3-7x3", move(Pile("column", 3), Pile("column", 7), 3)),
    ("w-2", move(WASTE, Pile("column", 2))),
    ("5-f", move(Pile("column", 5), ANY_SLOT)),
    ("w-f", move(WASTE, ANY_SLOT)),
    ("3-f2", move(Pile("column", 3), Pile("foundation", 2))),
    ("w-f2", move(WASTE, Pile("foundation", 2))),
    ("f3-5", move(Pile("foundation", 3), Pile("column", 5))),
    ("11-13", move(Pile("column", 11), Pile("column", 13))),
])
def test_commands_parse_and_format(text: str, expected: Command) -> None:
    assert parse_command(text) == expected
    assert str(expected) == text


@pytest.mark.parametrize("text, message", [
    ("S", "unknown command 'S'"), ("03-7", "malformed number '03'"), ("finish ", "unknown command"),
    ("draw", "unknown command"), ("3--7", "unknown command"), ("w-", "unknown command"), ("1-2x", "unknown command"),
    ("u2", "unknown command"), ("-1", "unknown command"), ("3-f-1", "unknown command"), ("x", "unknown command"),
    ("w-w", "unknown command"), ("3-7x0", "at least 1"), ("w-f0", "numbered from 1"), ("0-3", "numbered from 1"), ("f1-f2", "between foundation slots"),
    ("w-2x1", "only for column-to-column"), ("3-fx1", "only for column-to-column"), ("3 - 7", "unknown command"),
    ("３-7", "unknown command"), ("99999-1", "too large"), ("", "unknown command"),
])
def test_non_canonical_commands_raise_notation_error(text: str, message: str) -> None:
    with pytest.raises(NotationError, match=message):
        parse_command(text)


def test_non_string_command_raises_notation_error() -> None:
    with pytest.raises(NotationError):
        parse_command(["s"])  # type: ignore[arg-type]


numbers = st.integers(1, 9999)
piles = st.one_of(numbers.map(lambda n: Pile("column", n)), st.just(WASTE), numbers.map(lambda n: Pile("foundation", n)))
targets = st.one_of(numbers.map(lambda n: Pile("column", n)), st.just(ANY_SLOT), numbers.map(lambda n: Pile("foundation", n)))


@st.composite
def commands(draw: st.DrawFn) -> Command:
    kind = draw(st.sampled_from(["draw", "redeal", "undo", "finish", "move"]))
    if kind != "move":
        return Command(kind)
    source, target = draw(piles), draw(targets)
    if source.kind == "foundation" and target.kind == "foundation":
        target = Pile("column", 1)
    count = draw(st.none() | numbers) if source.kind == "column" and target.kind == "column" else None
    return move(source, target, count)


@given(commands())
def test_command_notation_round_trips(command: Command) -> None:
    assert parse_command(str(command)) == command


@settings(max_examples=500)
@given(st.one_of(st.text(max_size=12), st.text(alphabet="0123456789wfxsru-", max_size=10)))
def test_any_string_parses_canonically_or_raises_notation_error(text: str) -> None:
    try:
        command = parse_command(text)
    except NotationError as error:
        assert str(error)
    else:
        assert str(command) == text
