"""Every Redis key name of the server, built and parsed here only (DESIGN.md "Redis").

Keys of one match share the hash tag ``{m:CODE}`` and keys of one daily
challenge (a day and a variant) the hash tag ``{d:DATE:VARIANT}``, so a
Redis Cluster keeps each group on one node and every script of the server
touches the keys of one hash tag only. The names are part of the data a
running Redis holds: they stay byte for byte what they are.

=========================  ===================================================
key                        holds
=========================  ===================================================
``{m:C}:meta``             hash: settings (JSON), state, seed and deal (secret
                           until the end), commitment, host token hash,
                           start and deadline (ms), players left playing
``{m:C}:roster``           list: player names in join order
``{m:C}:tokens``           hash: SHA-256 of a player token -> player name
``{m:C}:p:NAME``           hash: a player: token hash, epoch, ready, connected,
                           last accepted seq, moves, undos, hints, foundation
                           cards, status, time and last-foundation time (ms)
``{m:C}:log:NAME``         list: the player's accepted commands, ``"cmd ms"``
``{m:C}:events``           stream: events (fields ``m``: msgpack frame, ``k``:
                           kind, ``n``: player, ``s``: status; read as
                           :class:`server.store.streams.StreamEntry`)
``{m:C}:results``          the final results frame (msgpack)
``{m:F}:series``           list: the match codes of a series of rounds, in
                           order, under the hash tag of its first round F
``timers``                 sorted set: ``CODE KIND`` (:func:`timer_member`) by
                           due time (ms)
``lease:NAME``             string: the process holding a lease (a timer's,
                           :func:`timer_lease`, or a day's preparation,
                           :func:`day_lease`), expiring
``pool:VARIANT``           list: verified solvable deals (msgpack)
``{live}:matches``         hash: match code -> its state, for each match in
                           a live state (preparing, lobby, countdown,
                           playing; :data:`LIVE_MATCHES`)
``{live}:counts``          hash: live state -> how many matches are in it
                           (``ftr_matches``; :data:`LIVE_COUNTS`)
``{live}:bots``            sorted set: ``CODE/N`` for bot N of an unfinished
                           match, by the instant it has surely ended (ms;
                           :data:`LIVE_BOTS`)
``daily:secret``           the daily challenge's server secret (when
                           ``FTR_DAILY_SECRET`` is unset: random, made once)
``daily:names``            hash: name key -> "TOKEN-SHA-256 NAME"
``daily:days``             sorted set ``DATE VARIANT`` (:func:`day_member`)
                           by the day's end (ms): days with a deal, not closed
``{d:D:V}:deal``           hash: seed, commitment, attempt_index, deal
                           (position text), solution (JSON; never sent),
                           closed (1 once every attempt has ended)
``{d:D:V}:attempts``       hash: name -> match code (one attempt a name)
``{d:D:V}:open``           hash: name -> match code, attempts not ended
``{d:D:V}:board``          sorted set: name by the packed score
``{d:D:V}:entries``        hash: name -> JSON of the ended attempt
``{d:D:V}:names``          hash: name key -> the name of an ended attempt (a
                           look-alike of the name finds its entry)
``{d:D:V}:replays``        hash: name -> JSON ``{"moves", "times_ms"}``
``{d:D:V}:events``         stream: public attempt events (JSON, field ``d``)
``{n:H}:profile``          hash: a named player (``H``: :func:`name_hash`):
                           ``name`` as claimed, ``key`` and ``recovery``
                           (SHA-256 of the player key and recovery code),
                           ``created_ms``, ``seen_ms``, ``games``, ``wins``,
                           per variant V ``V|games``, ``V|wins``,
                           ``V|best_ms``, ``V|best_match``, ``V|cards``
``{n:H}:games``            list: the player's finished games, newest first
                           (JSON), at most ``FTR_HISTORY_GAMES``
``{n:H}:done``             hash: match code -> the recording's outcome
                           (JSON), for the games of ``games``
``{n:H}:deals``            hash: ``VARIANT|DEAL`` -> that deal's records
                           (JSON), at most ``FTR_HISTORY_DEALS``
``{n:H}:deal_times``       sorted set: ``VARIANT|DEAL`` by last played (ms)
``{n:H}:rivals``           hash: an opponent's ``H`` -> the head-to-head
                           (JSON), at most :data:`MAX_RIVALS`
``{n:H}:rival_times``      sorted set: an opponent's ``H`` by last raced (ms)
``{n:H}:days``             sorted set: the UTC dates (``YYYY-MM-DD``, all
                           score 0: in date order) with an ended daily
                           attempt, its streak's days, at most
                           :data:`MAX_DAYS`
``{n:H}:ghosts``           hash: ``VARIANT|DEAL`` -> the player's best game on
                           that deal as a ghost (JSON: match, status,
                           time_ms, moves, foundation, timeline), for the
                           :data:`MAX_GHOSTS` deals of ``deals`` last played
``{n:H}:groups``           hash: a group's id ``G`` -> its name: the groups
                           the player is in, at most :data:`MAX_GROUPS`
``{g:G}:group``            hash: a group (``G``: :func:`new_group_id`):
                           ``name``, ``owner`` (its maker's name),
                           ``created_ms``
``{g:G}:members``          hash: a member's ``H`` -> its name, at most
                           :data:`MAX_GROUP_MEMBERS`
=========================  ===================================================

A match's meta hash also holds ``name:KEY`` fields (:func:`name_field`): the
name key of each name taken in its lobby, or kept for a player of the round
before.

On a Redis Cluster (a key's slot is CRC16 of its hash tag, or of the whole
key without one):

- a move touches its match's keys only (:data:`~server.store.scripts.COMMIT`:
  the slot of ``{m:C}``); random codes spread the matches over every master;
- a global key without braces (``timers``, each ``lease:NAME`` and
  ``pool:VARIANT``, ``daily:secret``, ``daily:names``, ``daily:days``) is a
  slot of its own, and a script on it takes that one key; none is touched
  per move;
- ``{live}:matches`` and ``{live}:counts`` share the tag ``{live}``, so
  :data:`~server.store.scripts.LIVE_STATE` moves a match between them
  atomically, once per state change;
- a day's keys share ``{d:DATE:VARIANT}``: one slot per day and variant;
- a named player's keys share ``{n:H}``, a fixed-width tag (a name key may hold any character, braces
  too): each script of a player's history touches one player's keys; a finished race runs one per
  named player, none per move. They have no expiry (``FTR_RETENTION_S`` is for matches).
- a group's keys share ``{g:G}``; joining a group is two scripts, the player's ``{n:H}:groups`` first
  (the player's slot), then the group's ``{g:G}:members`` (the group's), the first undone when the second
  refuses; leaving runs the group's first, then the player's. A member counts only while both sides hold
  it (a claim released and made anew wipes the player's side). No expiry: the last member leaving
  deletes the group.

The names are the same on one Redis and on a cluster and never renamed: a
rename would orphan a running Redis's timers, pools and daily names, and a
new ``daily:secret`` would change the seeds of the days not yet revealed.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Literal

MatchPart = Literal["meta", "roster", "tokens", "p", "log", "events", "results", "series"]
"""The last part of a match key (``p`` and ``log`` are followed by a player name)."""

DayPart = Literal["deal", "attempts", "open", "board", "entries", "replays", "events", "names"]
"""The last part of a daily challenge's key."""

_MATCH_PARTS = ("meta", "roster", "tokens", "events", "results", "series")
_PLAYER_PARTS = ("p", "log")
_DAY_PARTS = ("deal", "attempts", "open", "board", "entries", "replays", "events", "names")

ProfilePart = Literal["profile", "games", "done", "deals", "deal_times", "rivals", "rival_times", "days", "ghosts",
                      "groups"]
"""The last part of a named player's key."""

PROFILE_PARTS: tuple[ProfilePart, ...] = ("profile", "games", "done", "deals", "deal_times", "rivals",
                                          "rival_times", "days", "ghosts", "groups")
"""Every part of a named player's keys, in the order the history scripts take them (a claim made anew and a
deletion take them all; a game's recording all but ``groups``: :data:`HISTORY_PARTS`)."""

HISTORY_PARTS: tuple[ProfilePart, ...] = PROFILE_PARTS[:9]
"""The parts of a named player's keys that recording a finished game takes (every part but ``groups``)."""

GroupPart = Literal["group", "members"]
"""The last part of a group's key."""

_GROUP_PARTS = ("group", "members")

GROUP_ID_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
"""The characters of a group's id: small letters and digits with none that reads as another (no i, l, o, 0, 1)."""

GROUP_ID_LENGTH = 10
"""The characters of a group's id (about 50 bits: the id is the group's invitation)."""

MAX_GROUPS = 20
"""Groups a named player may be in at once."""

MAX_GROUP_MEMBERS = 50
"""Members a group may hold at once."""

MAX_RIVALS = 500
"""Opponents whose head-to-head a named player keeps (the least recently raced dropped)."""

MAX_DAYS = 1000
"""Days with an ended daily attempt a named player keeps for its streak (the earliest dropped)."""

MAX_GHOSTS = 200
"""Deals a named player keeps a ghost of (its best game there; the deals last played): a ghost is 2 to 7 KB of
JSON for a game of 100 to 400 commands, 18 KB at most (:data:`server.core.ghosts.MAX_TIMELINE`), so a player's
ghosts stay within a few MB however many deals the history keeps."""


class BadKey(ValueError):
    """Raised by the parsers for text that is not a key (or member) of the asked form."""


# ---------------------------------------------------------------- matches


def match_tag(code: str) -> str:
    """The hash tag of match ``code``'s keys: ``{m:CODE}``.

    Any text is accepted: a code a client sent finds no match rather than an error here. The server's own
    codes are letters and digits; in any other text a brace is written ``%7B``/``%7D``, since a ``}`` would
    end the tag early and make the key name another key of a match (``CODE}:p:x`` + ``:meta`` is the hash of
    a player named ``x}:meta``), which a lookup would then read as if it were a match's.
    """
    if "{" in code or "}" in code:
        code = code.replace("{", "%7B").replace("}", "%7D")
    return f"{{m:{code}}}"


def meta_key(code: str) -> str:
    return f"{match_tag(code)}:meta"


def roster_key(code: str) -> str:
    return f"{match_tag(code)}:roster"


def tokens_key(code: str) -> str:
    return f"{match_tag(code)}:tokens"


def player_prefix(code: str) -> str:
    """What a player's key starts with (``{m:CODE}:p:``): scripts that loop over the roster append a name."""
    return f"{match_tag(code)}:p:"


def player_key(code: str, name: str) -> str:
    return player_prefix(code) + name


def log_key(code: str, name: str) -> str:
    return f"{match_tag(code)}:log:{name}"


def events_key(code: str) -> str:
    return f"{match_tag(code)}:events"


def results_key(code: str) -> str:
    return f"{match_tag(code)}:results"


def series_key(first: str) -> str:
    """The series of rounds whose first round is match ``first`` (its hash tag)."""
    return f"{match_tag(first)}:series"


def parse_match_key(key: str | bytes) -> tuple[str, str, str | None]:
    """``(code, part, player name or None)`` of a match key (the inverse of the builders above).

    Raises :class:`BadKey` for any other text. A player name may hold any character (``:`` and ``}``
    too): it is everything after ``:p:`` or ``:log:``.
    """
    text = key.decode() if isinstance(key, bytes) else key
    if not text.startswith("{m:"):
        raise BadKey(f"not a match key: {text!r}")
    code, closed, rest = text[3:].partition("}")
    if not closed or not code or not rest.startswith(":"):
        raise BadKey(f"not a match key: {text!r}")
    part, sep, name = rest[1:].partition(":")
    if part in _MATCH_PARTS and not sep:
        return code, part, None
    if part in _PLAYER_PARTS and sep:
        return code, part, name
    raise BadKey(f"not a match key: {text!r}")


def name_field(name_key: str) -> str:
    """The meta field holding the name taken (or kept) under ``name_key`` (:func:`server.names.name_key`)."""
    return f"name:{name_key}"


# ---------------------------------------------------------------- global keys

TIMERS = "timers"
"""The sorted set of every match's timers (members :func:`timer_member`, scores due ms)."""


def timer_member(code: str, kind: str) -> str:
    """A timer in :data:`TIMERS`: ``"CODE KIND"`` (kinds: start, deadline, close, prepare, window ...)."""
    return f"{code} {kind}"


def parse_timer_member(member: str | bytes) -> tuple[str, str]:
    """``(code, kind)`` of a :func:`timer_member`; raises :class:`BadKey` for other text."""
    text = member.decode() if isinstance(member, bytes) else member
    code, sep, kind = text.partition(" ")
    if not sep or not code or not kind:
        raise BadKey(f"not a timer: {text!r}")
    return code, kind


def lease_key(name: str) -> str:
    """The key of the lease ``name`` (:func:`timer_lease`, :func:`day_lease`)."""
    return f"lease:{name}"


def timer_lease(code: str, kind: str) -> str:
    """The lease name of one timer (the process running it holds it)."""
    return timer_member(code, kind)


LIVE_MATCHES = "{live}:matches"
"""Each match in a live state (:data:`server.core.lifecycle.LIVE_STATES`) -> that state: what the store last
counted it in, so that counting it again is harmless and a count missed is made good at its next change."""

LIVE_COUNTS = "{live}:counts"
"""Each live state -> how many of :data:`LIVE_MATCHES` are in it (a state none is in: no field)."""

LIVE_BOTS = "{live}:bots"
"""One member ``CODE/N`` per bot of an unfinished match, scored by the instant (ms) its match has surely ended
(its lobby timeout, countdown and time limit past): a match whose end was never told cannot hold its bots'
places for ever (:class:`server.store.bots.BotPlaces`)."""


def pool_key(variant: str) -> str:
    """The list of verified solvable deals of ``variant``."""
    return f"pool:{variant}"


# ---------------------------------------------------------------- the daily challenge

DAILY_SECRET = "daily:secret"
DAILY_NAMES = "daily:names"
DAILY_DAYS = "daily:days"


def day_tag(date: str, variant: str) -> str:
    """The hash tag of a daily challenge's keys: ``{d:DATE:VARIANT}`` (a date ``YYYY-MM-DD`` has no ``:``)."""
    return f"{{d:{date}:{variant}}}"


def day_key(date: str, variant: str, part: DayPart) -> str:
    """The key ``part`` (``deal``, ``attempts``, ``board`` ...) of a day and variant."""
    if part not in _DAY_PARTS:
        raise BadKey(f"not a part of a day's keys: {part!r}")
    return f"{day_tag(date, variant)}:{part}"


def parse_day_key(key: str | bytes) -> tuple[str, str, str]:
    """``(date, variant, part)`` of a day's key (the inverse of :func:`day_key`); :class:`BadKey` otherwise."""
    text = key.decode() if isinstance(key, bytes) else key
    if not text.startswith("{d:"):
        raise BadKey(f"not a day's key: {text!r}")
    tag, closed, rest = text[3:].partition("}")
    date, sep, variant = tag.partition(":")
    part = rest[1:]
    if not closed or not sep or not date or not variant or not rest.startswith(":") or part not in _DAY_PARTS:
        raise BadKey(f"not a day's key: {text!r}")
    return date, variant, part


def day_member(date: str, variant: str) -> str:
    """A day in :data:`DAILY_DAYS` and a daily match's meta field ``daily``: ``"DATE VARIANT"``."""
    return f"{date} {variant}"


def parse_day_member(member: str | bytes) -> tuple[str, str]:
    """``(date, variant)`` of a :func:`day_member`; raises :class:`BadKey` for other text."""
    text = member.decode() if isinstance(member, bytes) else member
    date, sep, variant = text.partition(" ")
    if not sep or not date or not variant:
        raise BadKey(f"not a day: {text!r}")
    return date, variant


def day_lease(date: str, variant: str) -> str:
    """The lease name of a day's deal preparation (one process runs the solver for it)."""
    return f"daily {date} {variant}"


# ---------------------------------------------------------------- named players


def name_hash(name_key: str) -> str:
    """``H`` of a named player's keys: the first 24 hex digits of SHA-256 of the UTF-8 ``name_key``
    (:func:`server.names.name_key`), so look-alike names share one player's keys."""
    return hashlib.sha256(name_key.encode()).hexdigest()[:24]


def profile_tag(hashed: str) -> str:
    """The hash tag of a named player's keys: ``{n:H}`` (``hashed`` from :func:`name_hash`)."""
    return f"{{n:{hashed}}}"


def profile_key(hashed: str, part: ProfilePart) -> str:
    """The key ``part`` (``profile``, ``games`` ...) of the named player :func:`name_hash` ``hashed``."""
    if part not in PROFILE_PARTS:
        raise BadKey(f"not a part of a named player's keys: {part!r}")
    return f"{profile_tag(hashed)}:{part}"


def profile_keys(hashed: str) -> list[str]:
    """Every key of a named player, in :data:`PROFILE_PARTS` order (what a claim and a deletion take)."""
    return [profile_key(hashed, part) for part in PROFILE_PARTS]


def history_keys(hashed: str) -> list[str]:
    """The keys of a named player that recording a game takes, in :data:`HISTORY_PARTS` order."""
    return [profile_key(hashed, part) for part in HISTORY_PARTS]


def parse_profile_key(key: str | bytes) -> tuple[str, str]:
    """``(H, part)`` of a named player's key (the inverse of :func:`profile_key`); :class:`BadKey` otherwise."""
    text = key.decode() if isinstance(key, bytes) else key
    if not text.startswith("{n:"):
        raise BadKey(f"not a named player's key: {text!r}")
    hashed, closed, rest = text[3:].partition("}")
    part = rest[1:]
    if not closed or len(hashed) != 24 or not rest.startswith(":") or part not in PROFILE_PARTS:
        raise BadKey(f"not a named player's key: {text!r}")
    return hashed, part


# ---------------------------------------------------------------- groups


def new_group_id() -> str:
    """A new group's id: :data:`GROUP_ID_LENGTH` characters of :data:`GROUP_ID_ALPHABET` by ``secrets.choice``
    (unguessable: whoever holds the id may join)."""
    return "".join(secrets.choice(GROUP_ID_ALPHABET) for _ in range(GROUP_ID_LENGTH))


def is_group_id(text: str) -> bool:
    """Whether ``text`` has the form of a group's id (the one text :func:`group_key` takes)."""
    return len(text) == GROUP_ID_LENGTH and all(c in GROUP_ID_ALPHABET for c in text)


def group_tag(group: str) -> str:
    """The hash tag of group ``group``'s keys: ``{g:G}``; raises :class:`BadKey` for text that is no group id
    (:func:`is_group_id`), so a brace in a client's text never reaches a key name."""
    if not is_group_id(group):
        raise BadKey(f"not a group id: {group[:20]!r}")
    return f"{{g:{group}}}"


def group_key(group: str, part: GroupPart) -> str:
    """The key ``part`` (``group`` or ``members``) of group ``group``; :class:`BadKey` for another part or id."""
    if part not in _GROUP_PARTS:
        raise BadKey(f"not a part of a group's keys: {part!r}")
    return f"{group_tag(group)}:{part}"


def parse_group_key(key: str | bytes) -> tuple[str, str]:
    """``(G, part)`` of a group's key (the inverse of :func:`group_key`); :class:`BadKey` otherwise."""
    text = key.decode() if isinstance(key, bytes) else key
    if not text.startswith("{g:"):
        raise BadKey(f"not a group's key: {text!r}")
    group, closed, rest = text[3:].partition("}")
    part = rest[1:]
    if not closed or not is_group_id(group) or not rest.startswith(":") or part not in _GROUP_PARTS:
        raise BadKey(f"not a group's key: {text!r}")
    return group, part
