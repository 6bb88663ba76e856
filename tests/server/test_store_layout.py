"""The store's key layout and its scripts: every key name built and parsed in one place, byte for byte what a
running Redis holds, and every script on the keys of one hash tag (a Redis Cluster runs a script on one slot)."""

from __future__ import annotations

import hashlib
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot

from protocol.codes import ALPHABET, CODE_LENGTH, new_code
from server.store import keys, scripts
from server.store.keys import BadKey

codes = st.text(alphabet=ALPHABET, min_size=CODE_LENGTH, max_size=CODE_LENGTH)
older_codes = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=10,
                      max_size=10)
names = st.text(min_size=1, max_size=24)  # any character: ":", "}", "{", " ", emoji, controls
ODD_NAMES = ["ann", "a:b", "x}y", "{m:Z}", "p:", ":log:", "Ann Lee", "\U0001f469\U0001f4bb", "Иван", "a\u200db", " "]


def hash_tag(key: str) -> str:
    """The part of ``key`` a Redis Cluster hashes (its "hash tags" rule): the text between the first ``{`` and
    the first ``}`` after it, when that is not empty; else the whole key."""
    start = key.find("{")
    if start >= 0:
        end = key.find("}", start + 1)
        if end > start + 1:
            return key[start + 1:end]
    return key


def test_the_key_names_are_the_ones_a_running_redis_holds() -> None:
    """Byte for byte the names the server has always written (data in a running Redis stays readable)."""
    c = "K7QM4T2X9PZR"
    assert keys.meta_key(c) == "{m:K7QM4T2X9PZR}:meta"
    assert keys.roster_key(c) == "{m:K7QM4T2X9PZR}:roster"
    assert keys.tokens_key(c) == "{m:K7QM4T2X9PZR}:tokens"
    assert keys.player_key(c, "ann") == "{m:K7QM4T2X9PZR}:p:ann"
    assert keys.player_prefix(c) + "ann" == keys.player_key(c, "ann")
    assert keys.log_key(c, "ann") == "{m:K7QM4T2X9PZR}:log:ann"
    assert keys.events_key(c) == "{m:K7QM4T2X9PZR}:events"
    assert keys.results_key(c) == "{m:K7QM4T2X9PZR}:results"
    assert keys.series_key(c) == "{m:K7QM4T2X9PZR}:series"
    assert keys.TIMERS == "timers" and keys.timer_member(c, "start") == "K7QM4T2X9PZR start"
    assert keys.lease_key(keys.timer_lease(c, "close")) == "lease:K7QM4T2X9PZR close"
    assert keys.lease_key(keys.day_lease("2026-11-30", "relaxed")) == "lease:daily 2026-11-30 relaxed"
    assert keys.pool_key("classic") == "pool:classic"
    assert (keys.LIVE_MATCHES, keys.LIVE_COUNTS) == ("{live}:matches", "{live}:counts")
    assert (keys.DAILY_SECRET, keys.DAILY_NAMES, keys.DAILY_DAYS) == ("daily:secret", "daily:names", "daily:days")
    assert keys.day_key("2026-11-30", "relaxed", "deal") == "{d:2026-11-30:relaxed}:deal"
    assert keys.day_key("2026-11-30", "relaxed", "events") == "{d:2026-11-30:relaxed}:events"
    assert keys.day_member("2026-11-30", "relaxed") == "2026-11-30 relaxed"
    assert keys.name_field("ann") == "name:ann"


@given(st.one_of(codes, older_codes), names)
def test_match_keys_parse_back_to_their_code_and_name(code: str, name: str) -> None:
    for part, build in (("meta", keys.meta_key), ("roster", keys.roster_key), ("tokens", keys.tokens_key),
                        ("events", keys.events_key), ("results", keys.results_key), ("series", keys.series_key)):
        key = build(code)
        assert keys.parse_match_key(key) == (code, part, None)
        assert keys.parse_match_key(key.encode()) == (code, part, None)
        assert hash_tag(key) == f"m:{code}"
    for part, key in (("p", keys.player_key(code, name)), ("log", keys.log_key(code, name))):
        assert keys.parse_match_key(key) == (code, part, name)
        assert hash_tag(key) == f"m:{code}"  # a name after the tag, whatever it holds, is not hashed


@pytest.mark.parametrize("name", ODD_NAMES)
def test_names_with_odd_characters_stay_whole_and_out_of_the_hash_tag(name: str) -> None:
    code = new_code()
    assert keys.parse_match_key(keys.player_key(code, name)) == (code, "p", name)
    assert keys.parse_match_key(keys.log_key(code, name).encode()) == (code, "log", name)
    assert hash_tag(keys.player_key(code, name)) == hash_tag(keys.meta_key(code))


@given(st.dates(), st.sampled_from(["classic", "relaxed", "lucas", "limited"]),
       st.sampled_from(["deal", "attempts", "open", "board", "entries", "replays", "events"]))
def test_day_keys_parse_back_to_their_date_variant_and_part(date, variant: str, part: str) -> None:
    text = date.isoformat()
    key = keys.day_key(text, variant, part)  # type: ignore[arg-type]
    assert keys.parse_day_key(key) == keys.parse_day_key(key.encode()) == (text, variant, part)
    assert hash_tag(key) == f"d:{text}:{variant}"
    assert keys.parse_day_member(keys.day_member(text, variant)) == (text, variant)


@given(names)
def test_a_named_players_keys_share_a_fixed_width_tag_whatever_the_name(name: str) -> None:
    """``{n:H}``: H is the first 24 hex digits of SHA-256 of the name's key, so a name with braces or colons
    cannot end the tag early, and look-alike spellings (one name key) are one player's keys."""
    from server.names import name_key

    hashed = keys.name_hash(name_key(name))
    assert hashed == hashlib.sha256(name_key(name).encode()).hexdigest()[:24]
    built = keys.profile_keys(hashed)
    assert [keys.parse_profile_key(key) for key in built] == [(hashed, part) for part in keys.PROFILE_PARTS]
    assert {hash_tag(key) for key in built} == {f"n:{hashed}"}
    assert keys.profile_key(keys.name_hash(name_key("BiII")), "games") == keys.profile_key(
        keys.name_hash(name_key("Bill")), "games") == "{n:da2acb87a673c5bca34f1666}:games"  # "blll"


@given(st.one_of(codes, older_codes), st.sampled_from(["start", "deadline", "close", "prepare", "window",
                                                         "finalize"]))
def test_timer_members_parse_back(code: str, kind: str) -> None:
    assert keys.parse_timer_member(keys.timer_member(code, kind)) == (code, kind)
    assert keys.parse_timer_member(keys.timer_member(code, kind).encode()) == (code, kind)


@pytest.mark.parametrize("text", ["", "meta", "{m:ABC}", "{m:ABC}:", "{m:ABC}:bogus", "{m:ABC}:p", "{m:}:meta",
                                  "{m:ABC:meta", "m:ABC}:meta", "{d:2026-11-30:relaxed}:deal", "timers"])
def test_text_that_is_no_match_key_is_refused(text: str) -> None:
    with pytest.raises(BadKey):
        keys.parse_match_key(text)


@pytest.mark.parametrize("text", ["", "{d:2026-11-30}:deal", "{d:2026-11-30:relaxed}:bogus",
                                  "{d:2026-11-30:relaxed}", "{m:ABC}:meta", "{d::relaxed}:deal"])
def test_text_that_is_no_day_key_is_refused(text: str) -> None:
    with pytest.raises(BadKey):
        keys.parse_day_key(text)
    with pytest.raises(BadKey):
        keys.parse_day_member("2026-11-30")


# ---------------------------------------------------------------- scripts

_CALL = re.compile(r"redis\.call\(\s*'([A-Za-z]+)'\s*,\s*([^,)]+)")
_KEY_COMMANDS_WITHOUT_KEY = {"TIME"}
_ROTATE = re.compile(r"rotate_token\(\s*([^,]+),\s*([^,]+),")
_MATCH_BUILDERS = {
    "meta": keys.meta_key, "roster": keys.roster_key, "tokens": keys.tokens_key, "events": keys.events_key,
    "results": keys.results_key, "series": keys.series_key, "player_prefix": keys.player_prefix,
    "player": lambda code: keys.player_key(code, "a:}name"), "log": lambda code: keys.log_key(code, "a:}name"),
}
_GLOBAL_KEYS = {"timers": keys.TIMERS, "daily_names": keys.DAILY_NAMES, "live_matches": keys.LIVE_MATCHES,
                "live_counts": keys.LIVE_COUNTS}


def declared_keys(script: scripts.Script) -> list[str]:
    """The keys ``script`` declares, built by the key builders for one match, one day, or one global key."""
    if script.scope == "match":
        return [_MATCH_BUILDERS[part]("K7QM4T2X9PZR") for part in script.keys]
    if script.scope == "day":
        return [keys.day_key("2026-11-30", "relaxed", part) for part in script.keys]  # type: ignore[arg-type]
    if script.scope == "player":
        hashed = keys.name_hash("a:}{name")
        return [keys.profile_key(hashed, part) for part in script.keys]  # type: ignore[arg-type]
    if script.scope == "group":
        return [keys.group_key("k7qm4t2x9p", part) for part in script.keys]  # type: ignore[arg-type]
    return [_GLOBAL_KEYS[part] for part in script.keys]


def key_arguments(lua: str) -> dict[str, str]:
    """The first argument of every ``redis.call`` (its key) -> the command, with local variables that hold
    ``KEYS[i] .. something`` resolved to that expression."""
    local = dict(re.findall(r"local (\w+) = (KEYS\[\d\] \.\. \w+)", lua))
    found = {}
    for command, argument in _CALL.findall(lua):
        if command.upper() not in _KEY_COMMANDS_WITHOUT_KEY:
            found[local.get(argument.strip(), argument.strip())] = command
    for tokens, player in _ROTATE.findall(lua):  # scripts.ROTATE_TOKEN's keys: the tokens and the player's hash
        for argument in (tokens, player):
            found[local.get(argument.strip(), argument.strip())] = "rotate_token"
    return found


def test_the_scripts_are_found_and_named_once() -> None:
    names = [s.name for s in scripts.ALL]
    assert len(names) == len(set(names)) == 34
    assert {"COMMIT", "JOIN", "CLOSE_MATCH", "CLOSE_DAY", "NEW_ATTEMPT", "RECORD", "UNCLAIM", "SET_PLAYER",
            "LIVE_STATE", "STUCK"} <= set(names)
    assert all(s.doc and "Repl" in s.doc and "KEYS" in s.doc for s in scripts.ALL), "a script without its doc"
    assert len(set(re.findall(r"'MAXLEN', '~', (\d+)", "".join(s.lua for s in scripts.ALL)))) == 1  # one length


def test_the_token_rotation_is_written_once() -> None:
    """Security code that must not drift: only :data:`scripts.ROTATE_TOKEN` knows the token before the newest
    (``prev_token``), and every script that rotates a token (resume, a new token for a daily attempt, a round
    joined again) calls it, and is run after it."""
    rotating = [s.name for s in scripts.ALL if "rotate_token(" in s.lua]
    assert rotating == ["RESUME", "ISSUE", "ROUND_JOIN"], rotating
    assert [s.name for s in scripts.ALL if "prev_token" in s.lua] == []
    assert scripts.ROTATE_TOKEN.count("prev_token") == 2  # read, and written
    for script in scripts.ALL:
        source = script.source(cluster=False)
        assert (scripts.ROTATE_TOKEN in source) == (script.name in rotating), script.name
        assert source.endswith(script.lua)


@pytest.mark.parametrize("script", scripts.ALL, ids=lambda s: s.name)
def test_every_script_touches_only_the_keys_of_one_hash_tag(script: scripts.Script) -> None:
    """Each ``redis.call`` names a key it was given (``KEYS[i]``), or a name appended to a ``player_prefix`` key,
    never a key written in the script; it uses every key it declares; and the declared keys, built by the key
    builders, share one hash tag."""
    used = key_arguments(script.lua)
    assert used, "a script that calls no command"
    loops = {var: range(int(low), int(high) + 1)
             for var, low, high in re.findall(r"for (\w+) = (\d+), (\d+) do", script.lua)}
    indexes = set()
    for argument in used:
        looped = re.fullmatch(r"KEYS\[(\w+)\]", argument)
        if looped and looped.group(1) in loops:  # for i = 1, 4 do ... KEYS[i]: the keys 1 to 4
            indexes.update(loops[looped.group(1)])
            continue
        plain = re.fullmatch(r"KEYS\[(\d)\]", argument)
        prefixed = re.fullmatch(r"KEYS\[(\d)\] \.\. [\w\[\]]+(?: \.\. \w+)?", argument)
        assert plain or prefixed, f"{script.name}: a key not given to the script: {argument}"
        index = int((plain or prefixed).group(1))  # type: ignore[union-attr]
        indexes.add(index)
        if prefixed:
            assert script.keys[index - 1] == "player_prefix", f"{script.name}: appends to {script.keys[index - 1]}"
    assert indexes == set(range(1, len(script.keys) + 1)), f"{script.name}: declares {script.keys}, uses {indexes}"
    built = declared_keys(script)
    assert len({hash_tag(key) for key in built}) == 1, (script.name, built)
    if script.scope == "global":  # one global key, or global keys of one tag of their own (``{live}``)
        assert len(built) == 1 or hash_tag(built[0]) != built[0]


def appended(script: scripts.Script, built: list[str], name: str) -> list[str]:
    """The keys ``script`` makes by appending ``name`` to its ``player_prefix`` key (the roster's loops)."""
    return [key + name for part, key in zip(script.keys, built) if part == "player_prefix"]


@pytest.mark.parametrize("script", scripts.ALL, ids=lambda s: s.name)
@pytest.mark.parametrize("code", ["K7QM4T2X9PZR", "AAAAAAAAAAAA", "x9Lm2Qr7Tz"])
def test_every_script_runs_on_one_cluster_slot(script: scripts.Script, code: str) -> None:
    """The slot redis-py's cluster client computes (``redis.crc.key_slot``, CRC16 of the hash tag, what it
    routes EVALSHA by) is one for all the keys a script is given and for every key it appends a player's
    name to, whatever the name holds: a Redis Cluster would refuse the script otherwise (CROSSSLOT)."""
    if script.scope == "match":
        built = [_MATCH_BUILDERS[part](code) for part in script.keys]
    else:
        built = declared_keys(script)
    touched = built + [key for name in ODD_NAMES for key in appended(script, built, name)]
    slots = {key_slot(key.encode()) for key in touched}
    assert len(slots) == 1, (script.name, {key: key_slot(key.encode()) for key in touched})


@pytest.mark.parametrize("name", ODD_NAMES)
def test_a_moves_keys_are_the_slot_of_its_match_and_no_global_key(name: str) -> None:
    """COMMIT, the one script of a move, writes the player's hash and log and the match's stream and reads its
    meta: all on the match's slot (computed from the tag alone), none of them a global key."""
    code = new_code()
    commit_keys = [keys.player_key(code, name), keys.log_key(code, name), keys.events_key(code),
                   keys.meta_key(code)]
    assert {key_slot(key.encode()) for key in commit_keys} == {key_slot(f"m:{code}".encode())}
    assert [p for p in scripts.COMMIT.keys] == ["player", "log", "events", "meta"]
    assert scripts.COMMIT.scope == "match"


def test_matches_spread_over_the_slots_of_every_master() -> None:
    """Random match codes (the moves' only slots) land on every third of the slot range, as
    ``redis-cli --cluster create`` splits it between 3 masters, each third near a third of the matches:
    no master serves every move."""
    thirds = [0, 0, 0]
    count = 3000
    for _ in range(count):
        slot = key_slot(keys.meta_key(new_code()).encode())
        thirds[min(2, slot * 3 // REDIS_CLUSTER_HASH_SLOTS)] += 1
    assert all(0.25 * count < third < 0.42 * count for third in thirds), thirds


def test_global_keys_each_have_a_slot_of_their_own() -> None:
    """A key without braces is hashed whole, so each global key (the timers, each variant's deal pool, the daily
    challenge's secret, names and days, a few leases) is its own hash tag; none shares its slot with another, so
    no one node holds them all."""
    global_keys = [keys.TIMERS, keys.DAILY_SECRET, keys.DAILY_NAMES, keys.DAILY_DAYS,
                   *(keys.pool_key(v) for v in ("classic", "relaxed", "lucas", "limited")),
                   keys.lease_key(keys.timer_lease("K7QM4T2X9PZR", "start")),
                   keys.lease_key(keys.day_lease("2026-11-30", "classic"))]
    assert all("{" not in key for key in global_keys)
    assert all(key_slot(key.encode()) == key_slot(hash_tag(key).encode()) for key in global_keys)
    assert len({key_slot(key.encode()) for key in global_keys}) == len(global_keys)


@pytest.mark.parametrize("module", ["keys.py", "records.py", "scripts/__init__.py", "scripts/base.py",
                                    "scripts/matches.py", "scripts/games.py", "scripts/rounds.py", "scripts/shared.py",
                                    "scripts/profiles.py"])
def test_the_layout_modules_of_the_store_are_pure(module: str) -> None:
    """Key names, records and script texts do no I/O: only the store's parts talk to Redis."""
    from tests.test_purity import FORBIDDEN, ROOT, imported_modules

    assert not imported_modules(ROOT / "server" / "store" / module) & FORBIDDEN


@pytest.mark.parametrize("script", scripts.ALL, ids=lambda s: s.name)
def test_every_script_wakes_each_stream_it_adds_to(script: scripts.Script) -> None:
    """On a Redis Cluster an entry reaches the hubs by its wake-up: every stream a script XADDs to is woken
    (``wake(KEYS[i], id)``, the SPUBLISH of the entry's id on the channel named as that stream, so in its slot),
    and no other; the cluster's ``wake`` publishes, one Redis's does nothing."""
    added = set(re.findall(r"'XADD', (KEYS\[\d\])", script.lua))
    woken = set(re.findall(r"wake\((KEYS\[\d\]), ", script.lua))
    assert woken == added, (script.name, added, woken)
    assert script.source(cluster=True).startswith(scripts.WAKE_PUBLISH) and "SPUBLISH" in scripts.WAKE_PUBLISH
    assert script.source(cluster=False).startswith(scripts.WAKE_NOTHING) and "redis.call" not in scripts.WAKE_NOTHING
    assert script.source(cluster=True)[len(scripts.WAKE_PUBLISH):] == script.source(cluster=False)[len(scripts.WAKE_NOTHING):]


def _store_field_names() -> set[bytes]:
    """Every Redis field the store writes in a stream entry or a record's hash, as bytes (how redis-py returns
    them): the stream fields of :data:`server.store.streams.FIELDS` and the fields of the records read back."""
    from server.store import streams
    from server.store.records import DayDeal, MatchMeta, PlayerRecord

    names = set(streams.FIELDS)
    for record in (PlayerRecord, MatchMeta, DayDeal):
        names.update(field.encode() for field in record.__struct_fields__)
    return names


def test_no_module_outside_the_store_names_a_redis_field() -> None:
    """The store hands out typed values (:class:`server.store.StreamEntry`, the records): no module of the
    server outside :mod:`server.store` holds a bytes literal naming a field the store writes (``b"m"`` of an
    entry, ``b"status"`` of a player's hash), so none reads Redis fields itself."""
    import ast
    from pathlib import Path

    names = _store_field_names()
    assert {b"m", b"k", b"n", b"s", b"d", b"status", b"state", b"epoch"} <= names  # the check sees the fields
    root = Path(__file__).resolve().parents[2] / "server"
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.is_relative_to(root / "store"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, bytes) and node.value in names:
                found.append(f"{path.relative_to(root.parent)}:{node.lineno}: {node.value!r}")
    assert not found, found

