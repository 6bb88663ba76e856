"""An ``error`` names the numbered frame it answers (protocol version 3), over a real server and WebSocket.

A refused ``play``, ``resign`` or ``hint`` gets an ``error`` carrying that
frame's ``seq``; an error that answers no numbered frame (a refused
``hello``, ``join``, ``ready`` or ``start``) carries none. A client of
version 2 gets the ``version`` error and close 4001, as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import websockets

from protocol import messages as m
from server.engine import Game, deal, find_variant

from .conftest import ServerProcess
from .wsclient import Player, create_match

VARIANT = "classic"
SEED = "error-seq-1"


@pytest.fixture(scope="module")
def srv(redis_url: str) -> Iterator[ServerProcess]:
    process = ServerProcess(redis_url, FTR_MATCHES_PER_MIN="1000")
    yield process
    process.stop()


def first_command() -> str:
    """A command the engine accepts in the deal's first position (not undo)."""
    variant = find_variant(VARIANT)
    game = Game(deal(SEED, variant), variant, autoplay=True, undo="safe")
    return next(str(legal.command) for legal in game.legal_moves() if legal.command.kind != "undo")


async def solo(server: ServerProcess, **settings: Any) -> Player:
    """A one-player match whose player has received ``started``."""
    created = create_match(server.url, variant=VARIANT, seed=SEED, players=1, solvable_only=False, **settings)
    player = Player(server.ws_url)
    await player.connect()
    await player.join(created["code"], "solo")
    await player.send(m.Ready())
    started = await player.expect(m.Started)
    assert isinstance(started, m.Started) and started.seq == 0, started
    return player


async def test_a_refused_numbered_frame_gets_an_error_with_its_seq(srv: ServerProcess) -> None:
    player = await solo(srv)
    try:
        # Out of order: seq 4 when 1 is next.
        await player.send(m.Play(4, first_command()))
        gap = await player.expect(m.Error)
        assert (gap.code, gap.seq) == ("seq_gap", 4), gap
        await player.send(m.Resign(7))
        gap = await player.expect(m.Error)
        assert (gap.code, gap.seq) == ("seq_gap", 7), gap
        # seq 0 is malformed, and answered as seq 0 (not as no seq).
        await player.send(m.Play(0, first_command()))
        zero = await player.expect(m.Error)
        assert (zero.code, zero.seq) == ("malformed", 0), zero
        # Hints are off in this match: the refusal names the hint's seq.
        await player.send(m.Hint(1))
        no_hints = await player.expect(m.Error)
        assert (no_hints.code, no_hints.seq) == ("no_hints", 1), no_hints
        # None of it used a number: seq 1 is accepted, then the game ends and a play after it is refused.
        position = await player.play(first_command())
        assert isinstance(position, m.PositionReply) and position.seq == 1, position
        resigned = await player.resign()
        assert isinstance(resigned, m.PositionReply) and resigned.status == "resigned", resigned
        await player.send(m.Play(3, first_command()))
        over = await player.expect(m.Error)
        assert (over.code, over.seq) == ("game_over", 3), over
    finally:
        await player.close()


async def test_errors_that_answer_no_numbered_frame_carry_no_seq(srv: ServerProcess) -> None:
    player = await solo(srv)
    fresh = Player(srv.ws_url)
    try:
        await player.send(m.Ready())  # the match has started: refused, and not a numbered frame
        refused = await player.expect(m.Error)
        assert refused.code == "already_started" and refused.seq is None, refused
        await player.send(m.Start("not-the-host-token"))
        refused = await player.expect(m.Error)
        assert refused.code == "not_host" and refused.seq is None, refused
        # Before hello, even a numbered frame is answered as no request: nothing of it was read but its type.
        fresh.ws = await websockets.connect(srv.ws_url, compression=None, max_queue=None)
        await fresh.send(m.Play(1, "s"))
        first = await fresh.recv()
        assert isinstance(first, m.Error) and (first.code, first.seq) == ("hello_first", None), first
        await fresh.send(m.Hello(m.PROTOCOL_VERSION, "tests"))
        assert isinstance(await fresh.recv(), m.Welcome)
        await fresh.send(m.Hello(m.PROTOCOL_VERSION, "tests"))
        again = await fresh.recv()
        assert isinstance(again, m.Error) and (again.code, again.seq) == ("malformed", None), again
    finally:
        await player.close()
        await fresh.close()


async def test_a_version_2_client_gets_the_version_error_and_close_4001(srv: ServerProcess) -> None:
    old = Player(srv.ws_url)
    old.ws = await websockets.connect(srv.ws_url, compression=None, max_queue=None)
    try:
        await old.send(m.Hello(2, "an older client"))
        refused = await old.recv()
        assert isinstance(refused, m.Error) and refused.code == "version" and refused.seq is None, refused
        assert f"protocol version {m.PROTOCOL_VERSION}" in refused.message and "the client 2" in refused.message
        code, reason = await old.wait_closed(5)
        assert (code, reason) == (4001, "protocol version mismatch")
    finally:
        await old.close()
