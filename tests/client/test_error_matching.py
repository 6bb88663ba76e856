"""The client matches an ``error`` to the numbered request it refuses by the ``seq`` it carries."""

from __future__ import annotations

import asyncio
from pathlib import Path

from client_cli.race import RaceClient
from client_cli.tokens import TokenStore
from protocol import messages as m


def client(tmp_path: Path) -> RaceClient:
    return RaceClient("http://127.0.0.1:9", "ABCD", "ann", store=TokenStore(tmp_path / "tokens.json"))


def waiting(race: RaceClient, key: tuple[str, int]) -> asyncio.Future[m.ServerMessage]:
    future: asyncio.Future[m.ServerMessage] = asyncio.get_running_loop().create_future()
    race.waiting[key] = future
    return future


async def test_an_error_without_seq_leaves_the_waiting_command_waiting(tmp_path: Path) -> None:
    """An ``already_started`` refusing a ``ready`` (no seq) is not the answer of the play waiting."""
    race = client(tmp_path)
    future = waiting(race, ("command", 3))
    await race._handle(m.Error("already_started", "the match has already started"))
    await race._handle(m.Error("game_over", "your game has ended"))  # a guess by code would have taken this one
    assert not future.done()
    assert ("command", 3) in race.waiting


async def test_an_error_with_the_waiting_seq_answers_it(tmp_path: Path) -> None:
    race = client(tmp_path)
    future = waiting(race, ("command", 3))
    await race._handle(m.Error("seq_gap", "seq 2 skips ahead", 2))  # another seq: not this request's answer
    assert not future.done()
    refusal = m.Error("not_host", "an error of any code answers the request whose seq it names", 3)
    await race._handle(refusal)
    assert future.done() and future.result() is refusal
    assert ("command", 3) not in race.waiting


async def test_a_hint_is_answered_by_its_own_seq(tmp_path: Path) -> None:
    race = client(tmp_path)
    future = waiting(race, ("hint", 1))
    refusal = m.Error("no_hints", "this match does not allow hints", 1)
    await race._handle(refusal)
    assert future.result() is refusal
