"""Commands of one player sent back to back, and commits of many players sharing one flush to Redis.

A ``play`` takes a shorter path through the server than the other requests, and the commits of one turn of the
event loop go to Redis as one pipeline: the frames of one connection must still be applied and answered in the
order they were sent, whichever path each takes, and a commit Redis refuses or fails within a pipeline must
leave the others of that pipeline as if each had been sent alone.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio as aioredis

from protocol import messages as m
from protocol.codes import new_code
from server.core.player import CommitStatus, Stored
from server.engine import Game, deal, find_variant
from server.names import name_key
from server.store import Committed, Joined, JoinStatus, Store, token_hash
from server.store.keys import events_key, log_key

from .conftest import ServerProcess
from .test_race import SEED, VARIANT, lobby_of_two, solution

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


async def test_frames_sent_back_to_back_are_applied_and_answered_in_their_order(server: ServerProcess) -> None:
    """Plays (the short path), a refused play, a resign and a ping (the general path) written at once, before
    any answer: each is answered in the order sent, and each play is applied to the game its predecessors left
    (the reply's move count is the reference game's after it)."""
    moves = solution()[:4]

    async def run() -> None:
        _, alice, bob = await lobby_of_two(server)
        await alice.expect(m.Started)
        frames = [m.Play(1, moves[0]), m.Play(2, moves[1]), m.Play(3, "3-3"), m.Play(3, moves[2]),
                  m.Ping(77), m.Play(4, moves[3]), m.Resign(5), m.Play(6, "s")]
        for frame in frames:  # all written before anything is read
            await alice.send(frame)
        answers = []
        while len(answers) < len(frames):
            message = await alice.recv()
            if not isinstance(message, m.Progress):  # bob's moves would be progress; he makes none
                answers.append(message)
        reference = Game(deal(SEED, find_variant(VARIANT)), find_variant(VARIANT), autoplay=True, undo="safe")
        kinds = [(type(a).__name__, getattr(a, "seq", getattr(a, "nonce", None))) for a in answers]
        assert kinds == [("PositionReply", 1), ("PositionReply", 2), ("Rejected", 3), ("PositionReply", 3),
                         ("Pong", 77), ("PositionReply", 4), ("PositionReply", 5), ("Error", 6)]
        for answer, command in zip((answers[0], answers[1], answers[3], answers[5]), moves, strict=True):
            reference.play(command)
            assert answer.command == command and answer.moves == reference.moves
        assert answers[6].status == "resigned" and answers[7].code == "game_over"
        client = aioredis.Redis.from_url(server.env["REDIS_URL"])
        stored = [entry.decode().split()[0] for entry in await client.lrange(log_key(alice.code, "alice"), 0, -1)]
        await client.aclose()
        assert stored == moves
        await alice.close()
        await bob.close()

    await run()


async def _playing_match(store: Store, names: list[str]) -> str:
    code = new_code()
    now = await store.time_ms()
    settings = m.Settings("classic", False, len(names), 60, True, "safe", True)
    assert await store.matches.create(code, {"state": "lobby", "settings": settings, "deal": "the deal",
                                      "commitment": "c", "host": "h", "nonce": "n", "seed": "s"})
    for count, name in enumerate(names, 1):
        assert await store.players.join(code, name, token_hash(name), len(names), now, name_key(name)) == Joined(JoinStatus.OK, count)
    assert await store.matches.transition(code, "lobby", "countdown", b"countdown", start_at_ms=now, deadline_ms=now + 60)
    assert await store.matches.start(code, b"start")
    return code


def test_a_commit_failing_within_a_flush_fails_only_its_own_command(redis_url: str) -> None:
    """Three commits in one turn of the loop go to Redis in one pipeline; one is refused (a stale epoch), one
    fails in Redis (its log key holds a string: WRONGTYPE): the third is stored and answered ``ok``, the
    refused one is answered ``stale`` and changed nothing, the failed one raises to its own caller only."""

    async def scenario() -> None:
        client = aioredis.Redis.from_url(redis_url)
        store = Store(client, 600)
        code = await _playing_match(store, ["ann", "bob", "cat"])
        await client.set(log_key(code, "cat"), "not a list")

        def record(moves: int) -> Stored:
            return Stored(moves, 0, 0, 0, "playing", 10, 0)

        # One commit alone first: Redis then holds the script, so the three below run in the pipeline itself
        # (a fresh Redis answers NOSCRIPT to a pipeline, and each commit is then sent again on its own).
        assert await store.commits.commit(code, "ann", 0, 1, "s 5", record(1), False, [b"ann's first"]) == Committed(CommitStatus.OK, -1)
        pipelines: list[Any] = []
        pipeline = client.pipeline

        def counted(*args: Any, **kwargs: Any) -> Any:
            pipelines.append(args)
            return pipeline(*args, **kwargs)

        client.pipeline = counted  # type: ignore[method-assign]

        ann, bob, cat = await asyncio.gather(
            store.commits.commit(code, "ann", 0, 2, "s 10", record(2), False, [b"ann's progress"]),
            store.commits.commit(code, "bob", 7, 1, "s 10", record(1), False, [b"bob's progress"]),
            store.commits.commit(code, "cat", 0, 1, "s 10", record(1), False, [b"cat's progress"]),
            return_exceptions=True)
        client.pipeline = pipeline  # type: ignore[method-assign]
        assert len(pipelines) == 1  # one flush for the three
        assert ann == Committed(CommitStatus.OK, -1)
        assert bob == Committed(CommitStatus.STALE, -1)
        assert isinstance(cat, aioredis.ResponseError) and "WRONGTYPE" in str(cat)
        assert await store.players.log(code, "ann") == [("s", 5), ("s", 10)]
        assert (await store.players.get(code, "ann")).seq == 2  # type: ignore[union-attr]
        assert await store.players.log(code, "bob") == []
        assert (await store.players.get(code, "bob")).seq == 0  # type: ignore[union-attr]
        events = [fields[b"m"] for _, fields in await client.xrange(events_key(code))]
        assert b"ann's progress" in events and b"bob's progress" not in events
        await client.aclose()

    asyncio.run(scenario())
