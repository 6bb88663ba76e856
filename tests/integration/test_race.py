"""Two real WebSocket clients race a whole match against a real server and Redis."""

from __future__ import annotations

import asyncio
import hashlib

import httpx
import pytest

from protocol import messages as m
from server.engine import Game, deal, find_variant
from server.engine.solver import Budget, solve

from .conftest import ServerProcess
from .wsclient import Player, create_match, public_state

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SEED = "4"
VARIANT = "relaxed"


def solution(seed: str = SEED, variant: str = VARIANT) -> list[str]:
    v = find_variant(variant)
    result = solve(deal(seed, v), v, Budget(nodes=50_000))
    assert result.result == "solved"
    return list(result.moves)


async def lobby_of_two(server: ServerProcess, **settings: object) -> tuple[dict, Player, Player]:
    created = create_match(server.url, variant=VARIANT, seed=SEED, players=2, **settings)
    alice, bob = Player(server.ws_url), Player(server.ws_url)
    await alice.connect()
    await bob.connect()
    await alice.join(created["code"], "alice")
    await bob.join(created["code"], "bob")
    await alice.send(m.Ready())
    await bob.send(m.Ready())
    return created, alice, bob


async def test_two_players_race_to_ranked_results(server: ServerProcess) -> None:
    moves = solution()

    async def race() -> None:
        created, alice, bob = await lobby_of_two(server)
        countdown = await alice.expect(m.Countdown)
        assert isinstance(countdown, m.Countdown)
        started_a = await alice.expect(m.Started)
        started_b = await bob.expect(m.Started)
        assert isinstance(started_a, m.Started) and isinstance(started_b, m.Started)
        assert started_a.view == started_b.view  # the identical deal
        assert started_a.start_at_ms == countdown.start_at_ms
        assert started_a.view.stock == 64 and all(not h for h in started_a.view.hidden)
        # Alice plays the solver's solution, command by command.
        reference = Game(deal(SEED, find_variant(VARIANT)), find_variant(VARIANT), autoplay=True, undo="safe")
        last = None
        for command in moves:
            last = await alice.play(command)
            assert isinstance(last, m.PositionReply), last
            reference.play(command)
            assert last.moves == reference.moves
            assert last.foundation == reference.position.foundation_cards
        assert last is not None and last.status == "won" and last.legal == []
        rejected = await bob.play("3-3")
        assert isinstance(rejected, m.Rejected) and "same column" in rejected.reason
        await bob.play("s")
        resigned = await bob.resign()
        assert isinstance(resigned, m.PositionReply) and resigned.status == "resigned"
        results_a = await alice.expect(m.Results)
        results_b = await bob.expect(m.Results)
        for results in (results_a, results_b):
            assert isinstance(results, m.Results)
            assert [(r.rank, r.name, r.status) for r in results.ranking] == [(1, "alice", "won"), (2, "bob", "resigned")]
            assert results.ranking[0].moves == len(moves)
            assert results.ranking[1].moves == 1
            assert results.seed == SEED
            assert hashlib.sha256((results.nonce + SEED).encode()).hexdigest() == results.commitment
            assert results.commitment == created["commitment"] and len(results.nonce) == 32
        progress = [p for p in bob.inbox if isinstance(p, m.Progress)]
        assert progress and progress[-1].name == "alice" and progress[-1].status == "won"
        await alice.close()
        await bob.close()

    await race()


async def test_results_over_http_after_the_end(server: ServerProcess) -> None:
    async def race() -> str:
        created, alice, bob = await lobby_of_two(server)
        await alice.expect(m.Started)
        await bob.expect(m.Started)
        before = await asyncio.to_thread(httpx.get, f"{server.url}/matches/{created['code']}/results")
        assert before.status_code == 409
        public = (await asyncio.to_thread(httpx.get, f"{server.url}/matches/{created['code']}")).json()
        assert public["state"] == "playing" and "seed" not in public
        await bob.play("s")
        await alice.resign()
        await bob.resign()
        await alice.expect(m.Results)
        await alice.close()
        await bob.close()
        return created["code"]

    code = await race()
    results = httpx.get(f"{server.url}/matches/{code}/results").json()
    variant = find_variant(VARIANT)
    game = Game(deal(SEED, variant), variant)
    idle = game.position.foundation_cards
    game.play("s")
    # DESIGN.md ranking among non-winners: more foundation cards first, then fewer moves.
    expected = ["bob", "alice"] if game.position.foundation_cards > idle else ["alice", "bob"]
    assert [row["name"] for row in results["ranking"]] == expected
    assert results["seed"] == SEED
    public = httpx.get(f"{server.url}/matches/{code}").json()
    assert public["state"] == "finished" and public["seed"] == SEED


async def test_hints_only_where_allowed_and_counted_in_the_results(server: ServerProcess) -> None:
    async def run() -> None:
        _created, alice, bob = await lobby_of_two(server, hints=True)
        started = await alice.expect(m.Started)
        await bob.expect(m.Started)
        await alice.send(m.Hint(1))
        suggestion = await alice.expect(m.Suggestion)
        assert isinstance(started, m.Started) and isinstance(suggestion, m.Suggestion)
        # The planner's choice (or the one-look hint's, when no worker was free in time): a legal command.
        assert suggestion.command in {move.command for move in started.legal} and suggestion.hints == 1
        reply = await alice.play(suggestion.command)
        assert isinstance(reply, m.PositionReply) and reply.moves == 1
        await alice.resign()
        await bob.resign()
        results = await alice.expect(m.Results)
        assert isinstance(results, m.Results)
        assert {r.name: r.hints for r in results.ranking} == {"alice": 1, "bob": 0}
        await alice.close()
        await bob.close()

        _, carol, dave = await lobby_of_two(server)
        await carol.expect(m.Started)
        await carol.send(m.Hint(1))
        refused = await carol.expect(m.Error)
        assert isinstance(refused, m.Error) and refused.code == "no_hints"
        await carol.close()
        await dave.close()

    await run()


async def test_the_time_limit_ends_every_game_and_ranks_by_foundation(server: ServerProcess) -> None:
    async def run() -> None:
        _created, alice, bob = await lobby_of_two(server, time_limit_s=1)
        started = await alice.expect(m.Started)
        await bob.expect(m.Started)
        assert isinstance(started, m.Started) and started.deadline_ms == started.start_at_ms + 1000
        await alice.play("s")
        finished = await bob.expect(m.Finished, timeout=5)
        assert isinstance(finished, m.Finished) and finished.status == "timeout" and finished.time_ms == 1000
        results = await alice.expect(m.Results, timeout=5)
        assert isinstance(results, m.Results)
        assert {r.name: (r.status, r.time_ms) for r in results.ranking} == {"alice": ("timeout", 1000),
                                                                            "bob": ("timeout", 1000)}
        late = await alice.play("s")
        assert isinstance(late, m.Error) and late.code == "game_over"
        await alice.close()
        await bob.close()

    await run()


async def test_cards_the_deal_puts_on_the_foundations_count_before_the_first_command(server: ServerProcess) -> None:
    """The public state, the events and the results count the cards already up at the start instant (lucas
    deals its eight aces onto the foundations; auto-play may send more): a player who has not moved yet, or
    resigns at once, has them too (the player's own screen shows them from the start)."""
    v = find_variant("lucas")
    initial = Game(deal("7", v), v, autoplay=True).position.foundation_cards
    assert initial >= 8

    async def run() -> None:
        created = create_match(server.url, variant="lucas", seed="7", players=2, solvable_only=False)
        alice, bob = Player(server.ws_url), Player(server.ws_url)
        for player, name in ((alice, "alice"), (bob, "bob")):
            await player.connect()
            await player.join(created["code"], name)
            await player.send(m.Ready())
        for player in (alice, bob):
            assert isinstance(await player.expect(m.Started), m.Started)
        state = public_state(server.url, created["code"])
        assert [(p["name"], p["foundation"]) for p in state["players"]] == [("alice", initial), ("bob", initial)]
        assert isinstance(await alice.resign(), m.PositionReply)
        assert isinstance(await bob.resign(), m.PositionReply)
        results = await alice.expect(m.Results)
        assert isinstance(results, m.Results)
        assert [(r.name, r.foundation) for r in results.ranking] == [("alice", initial), ("bob", initial)]
        await alice.close()
        await bob.close()

    await run()


async def test_metrics_count_the_commands_played(server: ServerProcess) -> None:
    """``GET /metrics``: ``ftr_commands_total`` counts the play frames handled (it stayed at 0)."""

    def commands_total() -> float:
        text = httpx.get(server.url + "/metrics", timeout=10).text
        return float(next(line.split()[1] for line in text.splitlines() if line.startswith("ftr_commands_total ")))

    async def run() -> None:
        _, alice, bob = await lobby_of_two(server)
        await alice.expect(m.Started)
        before = commands_total()
        assert isinstance(await alice.play("s"), m.PositionReply)
        assert isinstance(await alice.play("3-3"), m.Rejected)
        assert commands_total() == before + 2
        await alice.close()
        await bob.close()

    await run()
