"""Every script of the store, run on a real Redis by the store's own methods: each call gives the script keys
of one hash tag, the parts it declares (:class:`server.store.scripts.Script`), and what comes back decodes into
the store's records."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import msgspec
import redis
import redis.asyncio as aioredis

from protocol import messages as m
from protocol.codes import new_code
from server.core.lifecycle import State
from server.core.player import CommitStatus, Stored
from server.names import name_key
from server.store import (
    Attempt,
    AttemptStatus,
    ClaimStatus,
    Committed,
    DailyEntry,
    DailyReplay,
    DailyStore,
    EndStatus,
    Joined,
    JoinStatus,
    LobbyWrite,
    NextClaim,
    PlayerEnded,
    Resumed,
    RoundJoined,
    RoundJoinStatus,
    Store,
    StuckStatus,
    scripts,
    token_hash,
)
from server.store.groups import JoinStatus as GroupJoin
from server.store.keys import (
    DAILY_NAMES,
    LIVE_COUNTS,
    LIVE_MATCHES,
    TIMERS,
    day_tag,
    group_tag,
    match_tag,
    name_hash,
    new_group_id,
    parse_day_key,
    parse_group_key,
    parse_match_key,
    parse_profile_key,
    profile_tag,
)
from server.store.profiles import Rival
from tests.server.test_store_layout import hash_tag

_PARTS = {"player": "p", "player_prefix": "p"}


def recording(client: aioredis.Redis) -> list[tuple[bytes | str, list[Any]]]:
    """Record ``(sha, keys)`` of every EVALSHA ``client`` sends (pipelines' too) before sending it."""
    calls: list[tuple[bytes | str, list[Any]]] = []
    evalsha, pipeline = client.evalsha, client.pipeline

    async def recorded(sha: str, numkeys: int, *rest: Any) -> Any:
        calls.append((sha, list(rest[:numkeys])))
        return await evalsha(sha, numkeys, *rest)

    def recorded_pipeline(*args: Any, **kwargs: Any) -> Any:
        pipe = pipeline(*args, **kwargs)
        queue, command = pipe.evalsha, pipe.execute_command

        def queued(sha: str, numkeys: int, *rest: Any) -> Any:
            calls.append((sha, list(rest[:numkeys])))
            return queue(sha, numkeys, *rest)

        def queued_command(*command_args: Any, **options: Any) -> Any:  # EVALSHA as a command (the cluster's way)
            if command_args[0] == "EVALSHA":
                sha, numkeys, *rest = command_args[1:]
                calls.append((sha, list(rest[:numkeys])))
            return command(*command_args, **options)

        pipe.evalsha = queued
        pipe.execute_command = queued_command
        return pipe

    client.evalsha = recorded  # type: ignore[method-assign]
    client.pipeline = recorded_pipeline  # type: ignore[method-assign]
    return calls


def test_every_script_runs_on_the_keys_of_one_hash_tag(redis_url: str) -> None:
    async def scenario() -> list[tuple[bytes | str, list[Any]]]:
        client = aioredis.Redis.from_url(redis_url)
        calls = recording(client)
        store, daily = Store(client, 600), DailyStore(Store(client, 600))
        code, following, odd = new_code(), new_code(), "b:}b {m:X}"
        now = await store.time_ms()
        settings = m.Settings("classic", False, 2, 60, True, "safe", True, open_boards=True)
        assert await store.matches.create(code, {"state": "lobby", "settings": settings, "deal": "the deal",
                                          "commitment": "c", "host": "h", "nonce": "n", "seed": "s"})
        assert not await store.matches.create(code, {"state": "lobby"})
        assert await store.players.join(code, "ann", token_hash("ann"), 2, now, name_key("ann")) == Joined(JoinStatus.OK, 1)
        assert await store.players.join(code, odd, token_hash("odd"), 2, now, name_key(odd)) == Joined(JoinStatus.OK, 2)
        assert await store.players.set_ready(code, "ann") is State.LOBBY
        assert await store.players.update(code, odd, connected=1)
        assert not await store.players.update(code, "nobody", connected=0)  # no such player: not written
        assert await client.keys(f"{match_tag(code)}*nobody*") == []
        assert await store.matches.add_lobby_event(code, b"lobby", "lobby", "c", await store.players.all(code)) is LobbyWrite.OK
        assert await store.players.resume(code, token_hash("ann"), token_hash("ann 2")) == Resumed("ann", 1)
        assert await store.players.resume(code, token_hash("nobody"), token_hash("x")) is None
        await store.players.issue_token(code, odd, token_hash("odd 2"))
        assert await store.matches.transition(code, "lobby", "countdown", b"countdown", start_at_ms=now, deadline_ms=now + 60)
        meta = await store.matches.meta(code)
        assert meta is not None and meta.state == "countdown" and meta.settings == settings
        assert (meta.start_at_ms, meta.deadline_ms, meta.commitment) == (now, now + 60, "c")
        assert meta.names == {name_key("ann"): "ann", name_key(odd): odd} and meta.expected is None
        assert await store.matches.start(code, b"start", 4)
        record = Stored(1, 0, 0, 5, "playing", 10, 10)
        committed = await store.commits.commit(code, "ann", 1, 1, "s 10", record, False, [b"public"], [b"board"])
        assert committed == Committed(CommitStatus.OK, -1)
        assert await store.players.mark_stuck(code, "ann", 1, 1, b"stuck") is StuckStatus.OK
        fenced = await store.commits.fence(code, "ann", 1, "a nonce", 5.0)
        assert fenced is not None
        player, log, deal, read_settings = fenced
        assert (player.epoch, player.seq, player.foundation, log, deal) == (2, 1, 5, [("s", 10)], "the deal")
        assert read_settings == settings
        assert await store.players.end(code, odd, "timeout", 60, b"ended") == PlayerEnded(EndStatus.OK, 1)
        assert await store.matches.transition(code, "playing", "finished", b"results")
        assert await store.rounds.claim_next(code, "ann", following) == NextClaim(ClaimStatus.OK, following, True, ["ann"])
        assert await store.matches.create(following, {
            "state": "lobby", "settings": settings, "round": 2, "series": code, "prev": code,
            "expected": ["ann", odd], "window_end_ms": now + 1000, f"name:{name_key(odd)}": odd})
        assert await store.rounds.join(following, "ann", token_hash("r"), 2, now, name_key("ann"), code,
                                       token_hash("host")) == RoundJoined(RoundJoinStatus.OK, True)
        assert await store.rounds.window_over(following, {"ann": name_key("ann"), odd: name_key(odd)})
        following_meta = await store.matches.meta(following)
        assert following_meta is not None and following_meta.window_over and following_meta.round == 2
        assert following_meta.expected == ["ann", odd] and following_meta.names == {name_key("ann"): "ann"}
        await store.rounds.next_made(code)
        ended = await store.matches.meta(code)
        assert ended is not None and ended.next_made and ended.next_round == following and ended.rematch == ["ann"]
        assert await store.rounds.series_add(code, following) == [code, following]
        assert await store.matches.close_unstarted(following, b"closed", 60)
        await store.timers.add(code, "close", 1)
        await store.timers.done_if_due(code, "close", 5)
        assert await client.zscore(TIMERS, f"{code} close") is None
        date, variant, name = "1999-01-01", "classic", f"daily {code}"  # a day no other test plays
        if leftover := await client.keys(f"{day_tag(date, variant)}*"):  # an earlier run's, on the same Redis
            await client.delete(*leftover)
        await daily.set_deal(date, variant, {"seed": "s", "commitment": "c", "attempt_index": 3, "deal": "d",
                                             "solution": "[]", "closed": 0}, now)
        assert await daily.new_attempt(date, variant, name, code) == Attempt(AttemptStatus.NEW, code)
        assert await daily.record(date, variant, name, 7, DailyEntry("won", 10, 1, 104, 0, 0, 10, code),
                                  DailyReplay(["s"], [10]), {"name": name})
        assert await daily.board(date, variant, 0, 5) == [(1, name, DailyEntry("won", 10, 1, 104, 0, 0, 10, code))]
        assert await daily.replay(date, variant, name) == DailyReplay(["s"], [10])
        assert await daily.claim(name, "digest")
        await daily.unclaim(name, "digest")
        assert await daily.name_claim(name) is None
        assert await daily.close(date, variant, 60)
        day = await daily.deal(date, variant)
        assert day is not None and day.closed and day.attempt_index == 3 and day.solution == ""
        player, other = name_hash(name_key(odd)), name_hash(name_key("ann"))  # named players: their scripts
        assert await store.profiles.claim(player, odd, "k", "r", now) is None
        assert await store.profiles.claim(other, "ann", "k2", "r2", now) is None
        assert await store.profiles.set_key(player, "key", "k", "k3", now)
        recorded = await store.profiles.record(player, code, {"match": code, "variant": "classic", "deal": "seed s",
                                                              "time_ms": 10, "moves": 1, "foundation": 104},
                                               True, now, now, [Rival(other, "ann", "w", now)], 10, 10)
        assert recorded is not None and recorded.rivals[other]["wins"] == 1
        group = new_group_id()  # a group of the two: its scripts, each side's
        assert await store.groups.create(group, "g {m:X}", player, odd, now) is None
        assert await store.groups.join(group, other, "ann") is GroupJoin.JOINED
        found = await store.groups.get(group)
        assert found is not None and found.members == {player: odd, other: "ann"}
        assert await store.groups.leave(group, other) and await store.groups.leave(group, player)
        # Only this scenario's own keys are looked at: database 0 is shared, and a test before this one on the
        # worker may have left a group or a named player of its own there (groups are kept until emptied).
        assert await store.groups.get(group) is None and await client.keys(f"{group_tag(group)}*") == []
        assert await store.profiles.unclaim(other, "k2")
        assert await store.profiles.delete(player, "k3")
        assert [await client.keys(f"{profile_tag(hashed)}*") for hashed in (player, other)] == [[], []]
        await client.aclose()
        return calls

    calls = asyncio.run(scenario())
    by_sha = {hashlib.sha1(script.source(cluster=False).encode()).hexdigest(): script for script in scripts.ALL}
    seen = set()
    for sha, keys in calls:
        script = by_sha[sha.decode() if isinstance(sha, bytes) else sha]
        seen.add(script.name)
        texts = [key.decode() if isinstance(key, bytes) else key for key in keys]
        assert len(texts) == len(script.keys), script.name
        assert len({hash_tag(key) for key in texts}) == 1, (script.name, texts)
        for part, key in zip(script.keys, texts):
            if script.scope == "match":
                assert parse_match_key(key)[1] == _PARTS.get(part, part), (script.name, part, key)
            elif script.scope == "day":
                assert parse_day_key(key)[2] == part, (script.name, part, key)
            elif script.scope == "player":
                assert parse_profile_key(key)[1] == part, (script.name, part, key)
            elif script.scope == "group":
                assert parse_group_key(key)[1] == part, (script.name, part, key)
            else:
                assert key == {"timers": TIMERS, "daily_names": DAILY_NAMES, "live_matches": LIVE_MATCHES,
                               "live_counts": LIVE_COUNTS}[part], (script.name, key)
    assert seen == {script.name for script in scripts.ALL}, "a script the scenario did not run"
    # On one Redis the hub blocks in XREAD: the scripts' ``wake`` publishes nothing there.
    with redis.Redis.from_url(redis_url) as client:
        stats = client.info("commandstats")
    assert "cmdstat_spublish" not in stats and "cmdstat_xadd" in stats, sorted(stats)


def test_each_transitions_script_changes_nothing_outside_its_source_state(redis_url: str) -> None:
    """The lifecycle table (server/core/lifecycle.py) names, for each allowed (state, event), the store's script
    that makes the change, and says that script checks the source state again (two processes deciding at once
    change the match once). Run here: each script, through the store's method, on a match in its source state
    changes it; on the same match in every other state it changes nothing at all (meta, roster, the player's
    record, the event stream, the keys' expiry). The player's record is as that state leaves it: ``playing``
    only once the match plays."""
    from server.core.lifecycle import TABLE, TRANSITIONS, State
    from server.store.keys import events_key, meta_key, player_key, roster_key

    async def scenario() -> list[str]:
        client = aioredis.Redis.from_url(redis_url)
        store = Store(client, 600)
        settings = m.Settings("classic", False, 2, 60, True, "safe", True)
        now = await store.time_ms()

        async def match_in(state: State) -> str:
            code = new_code()
            assert await store.matches.create(code, {"state": "lobby", "settings": settings, "deal": "d",
                                              "commitment": "c", "host": "h", "nonce": "n", "seed": "s"})
            assert (await store.players.join(code, "ann", token_hash(code), 2, now, name_key("ann"))).status is JoinStatus.OK
            await client.hset(meta_key(code), "state", state.value)
            if state is State.PLAYING:
                await client.hset(player_key(code, "ann"), "status", "playing")
            return code

        async def snapshot(code: str) -> tuple[Any, ...]:
            return (await client.hgetall(meta_key(code)), await client.lrange(roster_key(code), 0, -1),
                    await client.hgetall(player_key(code, "ann")), await client.xlen(events_key(code)),
                    await client.ttl(meta_key(code)), await client.ttl(player_key(code, "ann")))

        async def run(script: str, code: str, source: State, target: State) -> None:
            epoch = int(await client.hget(player_key(code, "ann"), "epoch") or 0)
            record = Stored(1, 0, 0, 0, "playing", 10, 0)
            calls = {
                "TRANSITION": lambda: store.matches.transition(code, source.value, target.value, b"event"),
                "JOIN": lambda: store.players.join(code, "bob", token_hash("bob" + code), 2, now, name_key("bob")),
                "READY": lambda: store.players.set_ready(code, "ann"),
                "WINDOW_OVER": lambda: store.rounds.window_over(code, {"ann": name_key("ann")}),
                "CLOSE_MATCH": lambda: store.matches.close_unstarted(code, b"closed", 60),
                "START": lambda: store.matches.start(code, b"start", 0),
                "COMMIT": lambda: store.commits.commit(code, "ann", epoch, 1, "s 10", record, False, [b"progress"]),
                "END_PLAYER": lambda: store.players.end(code, "ann", "timeout", 60, b"ended"),
            "STUCK": lambda: store.players.mark_stuck(code, "ann", epoch, 0, b"stuck"),
                "CLAIM_NEXT": lambda: store.rounds.claim_next(code, "ann", new_code()),
            }
            await calls[script]()

        unguarded = []
        for transition in TRANSITIONS:
            allowed = {source for (source, event), t in TABLE.items()
                       if event is transition.event and t.script == transition.script}
            if transition.script == "TRANSITION":  # the generic script: its source is the state it is given
                allowed = {transition.source}
            code = await match_in(transition.source)
            before = await snapshot(code)
            await run(transition.script, code, transition.source, transition.target)
            assert await snapshot(code) != before, (transition, "changed nothing in its source state")
            for state in State:
                if state in allowed:
                    continue
                code = await match_in(state)
                before = await snapshot(code)
                await run(transition.script, code, transition.source, transition.target)
                if await snapshot(code) != before:
                    unguarded.append(f"{transition.script} ({transition.event.value}) in {state.value}")
        await client.aclose()
        return unguarded

    unguarded = asyncio.run(scenario())
    assert unguarded == [], unguarded


def test_a_stuck_mark_holds_until_the_next_command_and_is_written_only_for_the_position_it_is_of(
        redis_url: str) -> None:
    """STUCK marks the player at the seq its verdict is of (a public event from the player with it), and
    writes nothing for another seq, another epoch, an ended game or a match not playing; COMMIT clears it."""
    from server.store.keys import events_key, player_key

    async def scenario() -> None:
        client = aioredis.Redis.from_url(redis_url)
        store = Store(client, 600)
        code = new_code()
        now = await store.time_ms()
        settings = m.Settings("classic", False, 2, 60, True, "safe", True)
        assert await store.matches.create(code, {"state": "lobby", "settings": settings, "deal": "d",
                                          "commitment": "c", "host": "h", "nonce": "n", "seed": "s"})
        assert (await store.players.join(code, "ann", token_hash(code), 2, now, name_key("ann"))).status is JoinStatus.OK
        assert await store.matches.transition(code, "lobby", "countdown", b"countdown", start_at_ms=now, deadline_ms=now)
        assert await store.players.mark_stuck(code, "ann", 0, 0, b"early") is StuckStatus.GAME_OVER  # not playing yet
        assert await store.matches.start(code, b"start", 0)
        epoch = int(await client.hget(player_key(code, "ann"), "epoch") or 0)
        record = Stored(1, 0, 0, 0, "playing", 10, 0)
        assert (await store.commits.commit(code, "ann", epoch, 1, "6-2 10", record, False, [b"p1"])).status is CommitStatus.OK
        before = await client.xlen(events_key(code))
        assert await store.players.mark_stuck(code, "ann", epoch, 0, b"older") is StuckStatus.MOVED
        assert await store.players.mark_stuck(code, "ann", epoch + 1, 1, b"other") is StuckStatus.STALE
        assert await store.players.mark_stuck(code, "nobody", epoch, 1, b"x") is StuckStatus.GONE
        assert await client.xlen(events_key(code)) == before
        assert not (await store.players.get(code, "ann")).stuck  # type: ignore[union-attr]
        assert await store.players.mark_stuck(code, "ann", epoch, 1, b"stuck") is StuckStatus.OK
        stuck = await store.players.get(code, "ann")
        assert stuck is not None and stuck.stuck and stuck.status == "playing" and stuck.shown_status == "dead"
        entry = (await client.xrange(events_key(code)))[-1][1]
        assert (entry[b"m"], entry[b"k"], entry[b"n"]) == (b"stuck", b"public", b"ann")
        record = msgspec.structs.replace(record, moves=2, undos=1)
        assert (await store.commits.commit(code, "ann", epoch, 2, "u 20", record, False, [b"p2"])).status is CommitStatus.OK
        after = await store.players.get(code, "ann")
        assert after is not None and not after.stuck and after.shown_status == "playing" and after.undos == 1
        assert await store.players.end(code, "ann", "resigned", 30, b"ended") == PlayerEnded(EndStatus.OK, 0)
        assert await store.players.mark_stuck(code, "ann", epoch, 2, b"late") is StuckStatus.GAME_OVER  # the game has ended
        await client.aclose()

    asyncio.run(scenario())
