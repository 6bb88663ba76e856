"""The line under the board shows a refusal's reason until the player has had the chance to read it, and the
results screen's own words once the match is over; the header fits 80 columns while reconnecting."""

from __future__ import annotations

import asyncio
from pathlib import Path

from client_cli.race import RaceClient
from client_cli.render import screen, to_ansi
from client_cli.tokens import TokenStore
from protocol import messages as m
from server.engine import Game, deal, find_variant
from server.views import legal_message, view_message

from .conftest import SEED, VARIANT
from .test_render import ANSI, cells, playing_state


def plain_screen(state: object, now: int = 70_000) -> list[str]:
    return ANSI.sub("", to_ansi(screen(state, 80, 24, now=now), 80)).rstrip("\n").split("\n")  # type: ignore[arg-type]


def client(tmp_path: Path) -> RaceClient:
    race = RaceClient("http://127.0.0.1:9", "ABCD", "ann", store=TokenStore(tmp_path / "tokens.json"))
    race.state = playing_state(0)
    race.state.name = "ann"
    return race


def position(seq: int, command: str) -> m.PositionReply:
    """The position after ``command`` played on the test deal (the engine computes it, not the test)."""
    variant = find_variant(VARIANT)
    game = Game(deal(SEED, variant), variant)
    game.play(command)
    return m.PositionReply(seq, command, view_message(game.position), legal_message(game.legal_moves()), game.moves, 0,
                           game.position.foundation_cards, "playing", 5_000)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_refusal_typed_before_the_next_command_is_not_wiped_by_its_answer(tmp_path: Path) -> None:
    """Typed ahead: ``1-2`` (illegal) then ``s``. The server refuses ``1-2`` (seq 1), then ``s`` takes seq 1
    and is accepted: its position must leave the reason of ``1-2`` on the screen, which came after ``s``
    was typed and so was never read."""
    race = client(tmp_path)
    refused, drawn = race.play("1-2"), race.play("s")
    await settle()
    assert ("command", 1) in race.waiting
    await race._handle(m.Rejected(1, "1-2", "illegal", "no card of the run on column 1 fits on JH"))
    await settle()
    assert refused.done() and ("command", 1) in race.waiting  # s now waits under the same seq
    await race._handle(position(1, "s"))
    assert drawn.done()
    assert race.state.message == "1-2: no card of the run on column 1 fits on J♥"
    assert any("1-2: no card of the run on column 1 fits on J♥" in line for line in plain_screen(race.state))


async def test_an_answer_clears_what_was_shown_when_its_command_was_typed(tmp_path: Path) -> None:
    """The reason was on the screen when the player typed the next command: that command's position clears it."""
    race = client(tmp_path)
    race.play("1-2")
    await settle()
    await race._handle(m.Rejected(1, "1-2", "illegal", "no card fits"))
    await settle()
    race.play("s")
    await settle()
    await race._handle(position(1, "s"))
    assert race.state.message == ""


async def test_an_error_naming_the_seq_typed_ahead_stays_too(tmp_path: Path) -> None:
    race = client(tmp_path)
    race.hint(), race.play("s")
    await settle()
    await race._handle(m.Error("no_hints", "this match does not allow hints", 1))
    await settle()
    await race._handle(position(1, "s"))
    assert race.state.message == "this match does not allow hints [no_hints]"


def results(name: str) -> m.Results:
    return m.Results("abcDEF1234", [m.ResultRow(1, name, "resigned", 120_000, 3, 0, 0, 2),
                                    m.ResultRow(2, "bob", "resigned", 130_000, 9, 0, 0, 4)], "seed", "c" * 64, "n" * 32)


def test_the_results_screen_says_rematch_whatever_was_refused_before() -> None:
    """A command refused once the player's game had ended (``game_over``) left its reason on the line that the
    results screen uses to offer the rematch: after the results it must offer it."""
    state = playing_state(0)
    state.apply(m.PositionReply(3, "resign", state.view, [], 3, 0, 2, "resigned", 120_000))
    state.apply(m.Error("game_over", "your game has ended (resigned)", 4))
    state.apply(m.RematchOffer("abcDEF1234", "NEXT12345678", ["bob"]))
    state.apply(results("alice"))
    text = "\n".join(plain_screen(state))
    assert "game_over" not in text
    assert "bob wants a rematch. Type rematch for the next round" in text


def test_the_header_fits_80_columns_while_reconnecting() -> None:
    """The header names the time left; reconnecting must not push it off the 80th column."""
    state = playing_state(0)
    state.connected = False
    state.deadline_ms = 1_000 + 1_800_000
    header = plain_screen(state)[0]
    assert cells(header) <= 80
    assert "reconnecting…" in header and header.rstrip().endswith("(left 28:51)")
    state.title = "Daily classic 2026-12-02"
    state.deadline_ms = 70_000 + (22 * 3600 + 30) * 1000  # now is 70 s
    header = plain_screen(state)[0]
    assert "reconnecting…" in header and header.rstrip().endswith("(left 22:00:30)"), header
