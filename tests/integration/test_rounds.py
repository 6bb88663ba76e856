"""Rounds and rematch against real servers and a real Redis: the next round, its deal, the series.

Round 1 is dealt from a seed the host gave; every later round must deal a new random seed with a new nonce,
and its commitment must check against what its results reveal.
"""

from __future__ import annotations

import asyncio
import hashlib

import pytest

from protocol import messages as m
from server.engine import Game, deal, find_variant
from server.views import view_message

from .conftest import ServerProcess
from .wsclient import Player, create_match, public_state

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SEED = "4"
VARIANT = "relaxed"


def checks(results: m.Results) -> bool:
    """The revealed seed and nonce hash to the commitment (computed here, not by the server)."""
    return hashlib.sha256((results.nonce + results.seed).encode()).hexdigest() == results.commitment


async def players(server: ServerProcess, code: str, *names: str, ws_url: str | None = None) -> list[Player]:
    joined = []
    for name in names:
        player = Player(ws_url or server.ws_url)
        await player.connect()
        await player.join(code, name)
        joined.append(player)
    return joined


async def race_to_results(created: dict, racers: list[Player]) -> list[m.Results]:
    """Everyone ready, the deal, everyone resigns: the results each player receives."""
    for player in racers:
        await player.send(m.Ready())
    for player in racers:
        assert isinstance(await player.expect(m.Started), m.Started)
    for player in racers:
        player.seq = 0
        assert isinstance(await player.resign(), m.Position)
    return [await player.expect(m.Results) for player in racers]


async def rematch(player: Player) -> m.NextRound:
    await player.send(m.Rematch())
    answer = await player.expect(m.NextRound)
    assert isinstance(answer, m.NextRound), answer
    return answer


async def follow(player: Player, answer: m.NextRound) -> m.Lobby:
    """Resume into the next round on the same connection; its first lobby frame."""
    await player.send(m.Resume(answer.match, answer.token))
    joined = await player.expect(m.Joined)
    assert isinstance(joined, m.Joined) and joined.match == answer.match, joined
    player.token, player.code, player.seq = joined.token, answer.match, 0
    lobby = await player.expect(m.Lobby)
    assert isinstance(lobby, m.Lobby), lobby
    return lobby


def test_both_rematch_get_one_next_round_with_a_new_deal_and_series_standings(server: ServerProcess) -> None:
    async def scenario() -> None:
        created = create_match(server.url, variant=VARIANT, seed=SEED, players=2, time_limit_s=600)
        alice, bob = await players(server, created["code"], "alice", "bob")
        await alice.send(m.Ready())
        await bob.send(m.Ready())
        first_a = await alice.expect(m.Started)
        await bob.expect(m.Started)
        # Round 1: alice plays one draw and resigns (more foundation cards or not), bob resigns at once.
        await alice.play("s")
        await alice.resign()
        await bob.resign()
        results_1 = await alice.expect(m.Results)
        await bob.expect(m.Results)
        assert results_1.seed == SEED and checks(results_1)

        answer_a = await rematch(alice)
        answer_b = await rematch(bob)
        assert answer_a.match == answer_b.match != created["code"] and answer_a.round == answer_b.round == 2
        assert answer_a.host_token and not answer_b.host_token  # alice joined first: she hosts round 1 and 2
        again = await rematch(bob)  # a retried rematch: the same round, never a second one
        assert again.match == answer_b.match and again.round == 2
        offer = await alice.expect(m.RematchOffer)
        assert offer.match == created["code"] and offer.next == answer_a.match

        state_1 = public_state(server.url, created["code"])
        assert state_1["next_round"] == answer_a.match and state_1["round"] == 1
        lobby_a = await follow(alice, answer_a)
        assert lobby_a.state in ("lobby", "countdown") and lobby_a.commitment and lobby_a.commitment != created["commitment"]
        await follow(bob, again)
        started = [await alice.expect(m.Started), await bob.expect(m.Started)]
        assert started[0].view == started[1].view  # one deal for both
        assert started[0].view != first_a.view  # and not round 1's
        code_2 = answer_a.match
        await alice.resign()
        await bob.play("s")
        await bob.resign()
        results_2 = await alice.expect(m.Results)
        assert results_2.match == code_2 and checks(results_2)
        assert results_2.seed != SEED and results_2.nonce != results_1.nonce
        assert results_2.commitment == lobby_a.commitment
        # The deal round 2 dealt is the one its seed deals (so the revealed seed is the real one).
        variant = find_variant(VARIANT)
        reference = Game(deal(results_2.seed, variant), variant, autoplay=True, undo="safe")
        assert started[0].view == view_message(reference.position)

        state_2 = public_state(server.url, code_2)
        assert state_2["round"] == 2 and state_2["next_round"] is None
        assert state_2["series"]["rounds"] == [created["code"], code_2]
        assert public_state(server.url, created["code"])["series"]["rounds"] == [created["code"], code_2]
        expected = {}
        for results in (results_1, results_2):
            for row in results.ranking:
                won, cards, time_ms = expected.get(row.name, (0, 0, 0))
                expected[row.name] = (won + (row.rank == 1 and row.status == "won"), cards + row.foundation,
                                      time_ms + row.time_ms)
        standings = state_2["series"]["standings"]
        assert {s["name"]: (s["rounds_won"], s["foundation"], s["time_ms"]) for s in standings} == expected
        for player in (alice, bob):
            await player.close()

    asyncio.run(scenario())
