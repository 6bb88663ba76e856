"""Shared helpers for the engine's rule tests (tests/engine/test_rules.py).

Hand-built positions are written as full position text (RULES.md section 10)
and parsed with :func:`server.engine.parse_position`, so a test reads like the
position it starts from. The helpers are plain functions, handed to tests as
fixtures of the same name (``tests/engine`` is a package, so tests do not
import this module directly):

- ``make_position(text, variant="classic")``: parse full position text;
- ``assert_position(position, expected_text)``: compare with the canonical
  text, failing with a readable line diff;
- ``position_text(foundations, columns, ...)``: write full position text for
  a variant from the few piles that hold cards (every other column empty);
- ``make_game(text, variant="classic", *, autoplay, undo="full")``: a
  :class:`~server.engine.Game` from position text (``autoplay`` is required
  so every test says whether auto-play is part of what it checks);
- ``assert_refused(game, command, match=None, code="illegal")``: the command
  raises and the game is left exactly as it was (position, move count,
  history: "refusing a command never changes the game").
"""

from __future__ import annotations

import difflib
import re
import textwrap

import pytest

from server.engine import (
    Game,
    IllegalCommandError,
    Position,
    Variant,
    find_variant,
    format_position,
    parse_position,
)


def as_variant(variant: str | Variant) -> Variant:
    """A :class:`Variant` from a preset name (or the variant itself)."""
    return variant if isinstance(variant, Variant) else find_variant(variant)


def _normalize(text: str) -> str:
    """Position text with indentation, runs of spaces, blank and # lines removed."""
    lines = []
    for raw in textwrap.dedent(text).splitlines():
        line = " ".join(raw.split())
        if line and not line.startswith("#"):
            lines.append(line)
    return "\n".join(lines)


def make_position(text: str, variant: str | Variant = "classic") -> Position:
    """Parse full position text (RULES.md section 10) for ``variant`` (a preset name or a Variant)."""
    return parse_position(textwrap.dedent(text), as_variant(variant))


def assert_position(position: Position, expected_text: str) -> None:
    """Assert that ``position`` is the one written in ``expected_text``.

    Compares the engine's canonical text of ``position`` with
    ``expected_text`` (indentation, repeated spaces, blank and ``#`` lines in
    the expected text are ignored) and fails with a unified diff.
    """
    __tracebackhide__ = True
    actual = format_position(position)
    expected = _normalize(expected_text)
    if actual != expected:
        diff = "\n".join(
            difflib.unified_diff(expected.splitlines(), actual.splitlines(), "expected", "actual", lineterm="")
        )
        pytest.fail(f"the position differs from the expected text:\n{diff}", pytrace=False)


def position_text(
    foundations: str,
    columns: dict[int, str] | None = None,
    *,
    stock: str = "",
    waste: str = "",
    redeals: int = 0,
    variant: str | Variant = "classic",
) -> str:
    """Full position text for ``variant``: the given piles, every other column empty.

    ``columns`` maps a column number (1-based) to its cards, bottom to top,
    face-down ones in parentheses.
    """
    v = as_variant(variant)
    columns = columns or {}
    extra = sorted(set(columns) - set(range(1, v.columns + 1)))
    if extra:
        raise ValueError(f"columns {extra} do not exist in the {v.name} variant ({v.columns} columns)")
    lines = [f"Foundations: {foundations}", f"Stock: {stock}", f"Waste: {waste}", f"Redeals left: {redeals}"]
    lines += [f"{n}: {columns.get(n, '')}" for n in range(1, v.columns + 1)]
    return "\n".join(line.rstrip() for line in lines)


def make_game(
    text: str, variant: str | Variant = "classic", *, autoplay: bool, undo: str = "full"
) -> Game:
    """A game starting from the position written in ``text``."""
    v = as_variant(variant)
    return Game(make_position(text, v), v, autoplay=autoplay, undo=undo)


def assert_refused(
    game: Game,
    command: str,
    match: str | None = None,
    code: str | None = "illegal",
    error: type[Exception] = IllegalCommandError,
) -> Exception:
    """Assert that ``game.play(command)`` raises ``error`` and changes nothing.

    ``match`` is a regular expression the message must contain; ``code`` the
    error's ``code`` (``None`` to skip the check). Returns the error.
    """
    __tracebackhide__ = True
    position, moves, history = game.position, game.moves, list(game.history)
    with pytest.raises(error) as info:
        game.play(command)
    assert game.position == position, f"refused {command!r} changed the position"
    assert game.moves == moves, f"refused {command!r} was counted as a move"
    assert game.history == history, f"refused {command!r} changed the undo history"
    if code is not None:
        assert info.value.code == code, f"{command!r}: code {info.value.code!r}, expected {code!r}"
    if match is not None:
        assert re.search(match, str(info.value)), f"{command!r}: message {str(info.value)!r} lacks {match!r}"
    return info.value


@pytest.fixture(name="make_position")
def _make_position_fixture():
    return make_position


@pytest.fixture(name="assert_position")
def _assert_position_fixture():
    return assert_position


@pytest.fixture(name="position_text")
def _position_text_fixture():
    return position_text


@pytest.fixture(name="make_game")
def _make_game_fixture():
    return make_game


@pytest.fixture(name="assert_refused")
def _assert_refused_fixture():
    return assert_refused
