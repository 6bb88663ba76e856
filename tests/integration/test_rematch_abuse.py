"""Rematch abuse against real servers and a real Redis: every refusal is clear and changes nothing.

A resume into the next round with a token that is not the player's, a friend taking the name of a player of
the round before, a rematch once the next round's keys have expired.
"""

from __future__ import annotations

import asyncio

import pytest
import redis

from protocol import messages as m

from .conftest import ServerProcess
from .test_rounds import SEED, VARIANT, follow, players, race_to_results, rematch
from .wsclient import Player, create_match, public_state

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


async def test_a_refused_resume_into_the_next_round_leaves_the_player_where_they_were(server: ServerProcess) -> None:
    async def scenario() -> None:
        created = create_match(server.url, variant=VARIANT, seed=SEED, players=2)
        alice, bob = await players(server, created["code"], "alice", "bob")
        await race_to_results(created, [alice, bob])
        answer = await rematch(alice)
        for token in (alice.token, "x" * 32):  # her round-1 token, and one nobody has
            await alice.send(m.Resume(answer.match, token))
            refused = await alice.expect(m.Joined)
            assert isinstance(refused, m.Error) and refused.code == "bad_token", refused
        # Nothing changed: she is still round 1's connected player, and may ask again on this connection.
        state = public_state(server.url, created["code"])
        assert {p["name"]: p["connected"] for p in state["players"]} == {"alice": True, "bob": True}
        again = await rematch(alice)
        assert again.match == answer.match
        lobby = await follow(alice, again)
        assert [p.name for p in lobby.players] == ["alice"]
        for player in (alice, bob):
            await player.close()

    await scenario()


async def test_a_friend_cannot_take_the_name_or_the_seat_of_a_player_of_the_round_before(server: ServerProcess) -> None:
    async def scenario() -> None:
        created = create_match(server.url, variant=VARIANT, seed=SEED, players=2)
        alice, bob = await players(server, created["code"], "alice", "bob")
        await race_to_results(created, [alice, bob])
        answer = await rematch(alice)
        await follow(alice, answer)
        mallory = Player(server.ws_url)
        await mallory.connect()
        for name in ("bob", "Bob", "alice"):  # by the old link, before bob asked (and after alice did)
            await mallory.send(m.Join(created["code"], name))
            refused = await mallory.expect(m.Joined)
            assert isinstance(refused, m.Error) and refused.code == "name_taken", (name, refused)
        # Nor bob's seat under a name of its own: it is kept for him until the window ends, as his name is.
        await mallory.send(m.Join(created["code"], "dan"))
        refused = await mallory.expect(m.Joined)
        assert isinstance(refused, m.Error) and refused.code == "match_full", refused
        assert "kept for the players of the round before" in refused.message, refused.message
        state = public_state(server.url, answer.match)
        assert [p["name"] for p in state["players"]] == ["alice"] and state["state"] == "lobby"
        # bob still gets his seat, and the round starts with the two players of round 1.
        await follow(bob, await rematch(bob))
        for player in (alice, bob):
            assert isinstance(await player.expect(m.Started), m.Started)
        for player in (alice, bob, mallory):
            await player.close()

    await scenario()


async def test_a_rematch_after_the_next_round_expired_is_refused(server: ServerProcess, redis_url: str) -> None:
    async def scenario() -> None:
        created = create_match(server.url, variant=VARIANT, seed=SEED, players=2)
        alice, bob = await players(server, created["code"], "alice", "bob")
        await race_to_results(created, [alice, bob])
        answer = await rematch(alice)
        client = redis.Redis.from_url(redis_url)
        keys = client.keys(f"{{m:{answer.match}}}:*")
        assert keys
        for key in keys:  # round 2's keys expire (a closed round is kept ten minutes)
            client.pexpire(key, 1)
        await asyncio.sleep(0.05)
        await bob.send(m.Rematch())
        refused = await bob.expect(m.NextRound)
        assert isinstance(refused, m.Error) and refused.code == "no_match", refused
        assert not client.exists(f"{{m:{answer.match}}}:meta")  # not made again
        state = public_state(server.url, created["code"])
        assert state["next_round"] == answer.match and state["series"]["rounds"] == [created["code"], answer.match]
        client.close()
        for player in (alice, bob):
            await player.close()

    await scenario()
