"""Rounds and rematch against real servers and a real Redis: the next round, its deal, the series.

Round 1 is dealt from a seed the host gave; every later round must deal a new random seed with a new nonce,
and its commitment must check against what its results reveal.
"""

from __future__ import annotations

import asyncio
import hashlib
import re

import httpx
import msgspec
import pytest

from protocol import messages as m
from protocol.codec import decode_server as decode
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


async def race_to_results(created: dict, racers: list[Player], ready: bool = True) -> list[m.Results]:
    """Everyone ready (unless the host started already), the deal, everyone resigns: the results each player
    receives."""
    for player in racers if ready else ():
        await player.send(m.Ready())
    for player in racers:
        assert isinstance(await player.expect(m.Started), m.Started)
    for player in racers:
        player.seq = 0
        assert isinstance(await player.resign(), m.PositionReply)
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


async def test_both_rematch_get_one_next_round_with_a_new_deal_and_series_standings(server: ServerProcess) -> None:
    async def scenario() -> None:
        created = create_match(server.url, variant=VARIANT, seed=SEED, players=2, time_limit_s=600)
        alice, bob = await players(server, created["code"], "alice", "bob")
        # The host chose round 1's deal, and everyone is told so (the host may have seen it before).
        assert public_state(server.url, created["code"])["settings"]["chosen_deal"] is True
        assert (await bob.expect(m.Lobby)).settings.chosen_deal is True
        drawn = create_match(server.url, variant=VARIANT, players=2, solvable_only=False)
        assert public_state(server.url, drawn["code"])["settings"]["chosen_deal"] is False
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
        # A later round's code is read aloud and typed like the first's: 12 Crockford base32 symbols.
        assert re.fullmatch("[0-9A-HJKMNP-TV-Z]{12}", answer_a.match), answer_a.match
        assert answer_a.host_token and not answer_b.host_token  # alice asked first: she hosts round 2
        again = await rematch(bob)  # a retried rematch: the same round, never a second one
        assert again.match == answer_b.match and again.round == 2
        offer = await alice.expect(m.RematchOffer)
        assert offer.match == created["code"] and offer.next == answer_a.match

        state_1 = public_state(server.url, created["code"])
        assert state_1["next_round"] == answer_a.match and state_1["round"] == 1
        lobby_a = await follow(alice, answer_a)
        assert lobby_a.state in ("lobby", "countdown") and lobby_a.commitment and lobby_a.commitment != created["commitment"]
        assert lobby_a.settings.chosen_deal is False  # the server draws round 2's deal
        assert lobby_a.settings == msgspec.structs.replace(m.Settings(**public_state(server.url, created["code"])["settings"]),
                                                           chosen_deal=False)  # and nothing else changed
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

    await scenario()


async def test_rematch_before_the_results_is_refused_and_changes_nothing(server: ServerProcess) -> None:
    async def scenario() -> None:
        created = create_match(server.url, variant=VARIANT, seed=SEED, players=2)
        alice, bob = await players(server, created["code"], "alice", "bob")
        lobby = Player(server.ws_url)
        await lobby.connect()
        await lobby.send(m.Rematch())  # not joined at all
        assert (await lobby.expect(m.NextRound)).code == "not_joined"
        await alice.send(m.Rematch())  # in the lobby
        refused = await alice.expect(m.NextRound)
        assert isinstance(refused, m.Error) and refused.code == "not_finished"
        await alice.send(m.Ready())
        await bob.send(m.Ready())
        await alice.expect(m.Started)
        await alice.resign()
        await alice.send(m.Rematch())  # her game ended, the match has not: bob still plays
        refused = await alice.expect(m.NextRound)
        assert isinstance(refused, m.Error) and refused.code == "not_finished"
        state = public_state(server.url, created["code"])
        assert state["next_round"] is None and state["rematch"] == [] and state["state"] == "playing"
        assert state["series"] == {"rounds": [created["code"]], "standings": []}
        for player in (alice, bob, lobby):
            await player.close()

    await scenario()


async def test_one_player_rematches_and_races_alone_after_the_window(make_server) -> None:  # type: ignore[no-untyped-def]
    server = make_server(FTR_REMATCH_WINDOW_S="1")

    async def scenario() -> None:
        created = create_match(server.url, variant=VARIANT, seed=SEED, players=2)
        alice, bob = await players(server, created["code"], "alice", "bob")
        await race_to_results(created, [alice, bob])
        await bob.close()  # bob leaves: the host role stays alice's, the window closes without him
        answer = await rematch(alice)
        assert 0 < answer.window_ms <= 1000 and answer.host_token
        clock = asyncio.get_running_loop().time()
        lobby = await follow(alice, answer)
        assert lobby.state == "lobby" and [p.name for p in lobby.players] == ["alice"]
        started = await alice.expect(m.Started, timeout=10)
        assert isinstance(started, m.Started)
        assert asyncio.get_running_loop().time() - clock >= 0.5  # not before the window's end
        state = public_state(server.url, answer.match)
        assert [p["name"] for p in state["players"]] == ["alice"] and state["state"] == "playing"
        await alice.close()

    await scenario()


async def test_the_host_role_passes_to_the_first_who_asks_and_is_kept(server: ServerProcess) -> None:
    """Round 1's host (alice) asks after carol: carol, told she hosts round 2, still does (dave never asks, so
    the round does not start by itself once alice is in)."""
    async def scenario() -> None:
        created = create_match(server.url, variant=VARIANT, seed=SEED, players=4)
        alice, bob, carol, dave = await players(server, created["code"], "alice", "bob", "carol", "dave")
        await race_to_results(created, [alice, bob, carol, dave])
        answer_c = await rematch(carol)
        answer_a = await rematch(alice)  # round 1's host asks after carol: the role stays carol's
        assert answer_c.host_token and not answer_a.host_token
        await follow(carol, answer_c)
        await carol.send(m.Start(answer_c.host_token))  # bob has not asked: only the host's start counts down
        assert isinstance(await carol.expect(m.Countdown), m.Countdown)
        for player in (alice, bob, carol, dave):
            await player.close()

    await scenario()


async def test_a_late_friend_joins_the_next_round_with_the_old_code(server: ServerProcess) -> None:
    async def scenario() -> None:
        created = create_match(server.url, variant=VARIANT, seed=SEED, players=3)
        alice, bob = await players(server, created["code"], "alice", "bob")
        await alice.send(m.Start(created["host_token"]))  # two of three: the host starts
        await race_to_results(created, [alice, bob], ready=False)
        answer = await rematch(alice)
        await follow(alice, answer)
        dave = Player(server.ws_url)
        await dave.connect()
        joined = await dave.join(created["code"], "dave")  # the old link
        assert joined.match == answer.match
        lobby = await dave.expect(m.Lobby)
        assert lobby.match == answer.match and {p.name for p in lobby.players} == {"alice", "dave"}
        await dave.send(m.Ready())
        answer_b = await rematch(bob)  # bob too: every player of round 1 is in, all ready
        await follow(bob, answer_b)
        for player in (alice, bob, dave):
            assert isinstance(await player.expect(m.Started), m.Started)
        for player in (alice, bob, dave):
            await player.close()

    await scenario()


async def start_answer(player: Player, host_token: str) -> str:
    """What ``start`` with ``host_token`` answers once the round is counting down: ``already_started`` for the
    round's host token (it passed the host check), ``not_host`` for any other."""
    await player.send(m.Start(host_token))
    answer = await player.expect(m.Error)
    assert isinstance(answer, m.Error), answer
    return answer.code


async def test_two_processes_asked_at_once_make_one_next_round(make_server) -> None:  # type: ignore[no-untyped-def]
    one, two = make_server(), make_server()

    async def scenario() -> None:
        hosts = []
        for attempt in range(3):  # the race is real: try it several times
            created = create_match(one.url, variant=VARIANT, seed=SEED, players=2)
            alice, = await players(one, created["code"], "alice")
            bob, = await players(two, created["code"], "bob", ws_url=two.ws_url)
            await race_to_results(created, [alice, bob])
            await asyncio.gather(alice.send(m.Rematch()), bob.send(m.Rematch()))
            answers = await asyncio.gather(alice.expect(m.NextRound), bob.expect(m.NextRound))
            assert all(isinstance(a, m.NextRound) for a in answers), answers
            assert answers[0].match == answers[1].match, attempt
            # Exactly one host, whichever process was first; asked again (both at once), the host gets a new
            # host token and the other still none.
            assert [bool(a.host_token) for a in answers].count(True) == 1, answers
            host = 0 if answers[0].host_token else 1
            hosts.append(host)
            await asyncio.gather(alice.send(m.Rematch()), bob.send(m.Rematch()))
            again = await asyncio.gather(alice.expect(m.NextRound), bob.expect(m.NextRound))
            assert again[0].match == again[1].match == answers[0].match
            assert again[host].host_token and again[host].host_token != answers[host].host_token
            assert not again[1 - host].host_token
            state = public_state(two.url, answers[0].match)
            assert {p["name"] for p in state["players"]} == {"alice", "bob"} and state["round"] == 2
            await follow(alice, again[0])
            await follow(bob, again[1])
            racers = (alice, bob)
            await racers[host].expect(m.Countdown)  # both in and ready: the round counts down by itself
            mark = len(racers[host].inbox)
            assert await start_answer(racers[host], again[host].host_token) == "already_started"
            assert await start_answer(racers[host], answers[host].host_token) == "not_host"  # replaced
            early = [x for x in racers[host].inbox[mark:] if isinstance(x, m.Started)]  # came meanwhile
            started = [early[0] if early and i == host else await player.expect(m.Started)
                       for i, player in enumerate(racers)]
            assert started[0].view == started[1].view
            assert public_state(one.url, created["code"])["series"]["rounds"] == [created["code"], answers[0].match]
            await alice.close()
            await bob.close()

    await scenario()


async def text_of(server: ServerProcess, code: str) -> str:
    """``GET /matches/{code}``'s body, as text."""
    return (await asyncio.to_thread(httpx.get, f"{server.url}/matches/{code}", timeout=10)).text


CARD = re.compile(r"(?<![0-9A-Za-z])(?:10|[2-9TJQKA])[CDHS](?![0-9A-Za-z])")

SECRET_TOKENS = ("token", "host_token")
"""Fields holding a player's own random tokens (URL-safe base64: ``-`` and ``_`` among letters and digits),
which can spell a card by chance (``'k-KH_x...'``, about one token in a thousand): not a deal's card."""


def card_text(frame: bytes | str) -> str:
    """A frame as text for the search for card names: its message without the player's own tokens."""
    message = decode(frame)
    blanked = {field: "" for field in SECRET_TOKENS if hasattr(message, field)}
    return str(msgspec.structs.replace(message, **blanked) if blanked else message)


async def test_no_round_reveals_its_deal_or_seed_before_its_time(server: ServerProcess) -> None:
    """Round 1 (a random seed) and round 2: before a round's start no frame and no public state names a
    card, and before its end none holds its seed or nonce; both come with its results."""

    async def scenario() -> None:
        created = create_match(server.url, variant=VARIANT, solvable_only=False, players=2)
        code_1 = created["code"]
        alice, bob = await players(server, code_1, "alice", "bob")
        http: list[tuple[str, str]] = [(code_1, await text_of(server, code_1))]
        before_start_1 = len(alice.frames), len(bob.frames)
        results_1 = (await race_to_results(created, [alice, bob]))[0]
        answer_a = await rematch(alice)
        code_2 = answer_a.match
        http.append((code_1, await text_of(server, code_1)))
        http.append((code_2, await text_of(server, code_2)))
        start_2 = len(alice.frames)
        await follow(alice, answer_a)
        await follow(bob, await rematch(bob))
        starts = [await alice.expect(m.Started), await bob.expect(m.Started)]
        await alice.resign()
        await bob.resign()
        results_2 = await alice.expect(m.Results)
        await bob.expect(m.Results)
        assert checks(results_1) and checks(results_2) and results_1.seed != results_2.seed

        # Before round 1's start: no card anywhere; before round 1's results: not its seed or nonce.
        for player, count in zip((alice, bob), before_start_1):
            for frame in player.frames[:count]:
                assert not CARD.search(card_text(frame))
        for player in (alice, bob):
            upto = next(i for i, f in enumerate(player.frames) if isinstance(decode(f), m.Results))
            for frame in player.frames[:upto]:
                text = str(decode(frame))
                assert results_1.seed not in text and results_1.nonce not in text
        # Round 2: its lobby and countdown frames name no card, nothing holds its seed or nonce before its end.
        tail = alice.frames[start_2:]
        round_2_start = next(i for i, f in enumerate(tail) if isinstance(decode(f), m.Started))
        for frame in tail[:round_2_start]:
            assert not CARD.search(card_text(frame))
        for player in (alice, bob):
            upto = max(i for i, f in enumerate(player.frames) if isinstance(decode(f), m.Results))
            for frame in player.frames[:upto]:
                text = str(decode(frame))
                assert results_2.seed not in text and results_2.nonce not in text
        for code, text in http:
            assert results_2.seed not in text and results_2.nonce not in text
            assert not CARD.search(text)
        # Round 1's answer after its end reveals round 1's seed only.
        assert results_1.seed in http[1][1] and results_2.seed not in http[1][1]
        assert starts[0].view == starts[1].view
        for player in (alice, bob):
            await player.close()

    await scenario()


async def test_a_rematch_repeated_after_a_process_died_midway_completes_the_round(server: ServerProcess,
                                                                            redis_url: str) -> None:
    """The steps a dead process left undone are done by the retried rematch: the round's timers (its creator
    died before adding them), the offer on the ended match's stream and the start (bob's process died right
    after putting him in the round: his retry is answered ``again``)."""
    import redis.asyncio as aioredis

    from server.names import name_key
    from server.store import Store, token_hash
    from server.store.keys import TIMERS

    async def scenario() -> None:
        client = aioredis.Redis.from_url(redis_url)
        store = Store(client, 600)
        created = create_match(server.url, variant=VARIANT, seed=SEED, players=2)
        alice, bob = await players(server, created["code"], "alice", "bob")
        await race_to_results(created, [alice, bob])
        answer_a = await rematch(alice)  # answered once its steps are done: the round waits for bob
        code = answer_a.match
        await client.zrem(TIMERS, f"{code} window", f"{code} close")  # as if its creator had died first
        status = await store.rounds.join(code, "bob", token_hash("lost"), 2, await store.time_ms(), name_key("bob"),
                                         created["code"], token_hash("lost host"))
        assert status == ("ok", False)  # alice hosts: she was in first
        answer_b = await rematch(bob)  # the retry
        assert answer_b.match == code and not answer_b.host_token
        meta = await store.matches.meta(code)
        assert meta is not None
        assert await client.zscore(TIMERS, f"{code} window") == meta.window_end_ms
        assert await client.zscore(TIMERS, f"{code} close") is not None
        offer = await alice.expect(m.RematchOffer)  # alice is still on round 1's stream
        while offer.names != ["alice", "bob"]:
            offer = await alice.expect(m.RematchOffer)
        await follow(alice, answer_a)
        await follow(bob, answer_b)
        # Both in and ready: it starts now, not at the window's end (30 s).
        started = [await alice.expect(m.Started), await bob.expect(m.Started)]
        assert all(isinstance(s, m.Started) for s in started), started
        for player in (alice, bob):
            await player.close()
        await client.aclose()

    await scenario()


async def test_the_names_of_the_round_before_are_kept_for_its_players_until_the_window_ends(make_server) -> None:  # type: ignore[no-untyped-def]
    window_s = 3.0
    server = make_server(FTR_REMATCH_WINDOW_S=str(window_s))

    async def scenario() -> None:
        created = create_match(server.url, variant=VARIANT, seed=SEED, players=4)
        alice, bob = await players(server, created["code"], "alice", "bob")
        await alice.send(m.Start(created["host_token"]))
        await race_to_results(created, [alice, bob], ready=False)
        loop = asyncio.get_running_loop()
        answer = await rematch(alice)
        asked_at = loop.time()
        carol = Player(server.ws_url)  # a friend in the lobby, not ready: the round waits past the window
        await carol.connect()
        assert (await carol.join(created["code"], "carol")).match == answer.match
        stranger = Player(server.ws_url)
        await stranger.connect()
        await stranger.send(m.Join(created["code"], "Bob"))  # looks like bob's name: kept for him
        refused = await stranger.expect(m.Joined)
        assert loop.time() - asked_at < window_s, "too slow to test inside the window"
        assert isinstance(refused, m.Error) and refused.code == "name_taken", refused
        assert "rematch window" in refused.message
        await stranger.close()

        await asyncio.sleep(max(0.0, asked_at + window_s + 1.0 - loop.time()))  # the window is over
        late = Player(server.ws_url)  # bob's own name, from another device (it is his on this server): a join
        await late.connect()
        assert (await late.join(created["code"], "bob")).match == answer.match  # in the match, no longer kept
        await bob.send(m.Rematch())
        taken = await bob.expect(m.NextRound)
        assert isinstance(taken, m.Error) and taken.code == "name_taken", taken
        state = public_state(server.url, answer.match)
        assert [p["name"] for p in state["players"]] == ["alice", "carol", "bob"] and state["state"] == "lobby"
        for player in (alice, bob, carol, late):
            await player.close()

    await scenario()
