"""The records the store reads from Redis, decoded once into typed values (msgspec Structs).

A Redis hash holds text; each record's ``from_hash`` turns the raw
``{bytes: bytes}`` of ``HGETALL`` into its typed fields (numbers as ints,
flags as bools, the settings JSON as :class:`protocol.messages.Settings`,
JSON lists as lists), so no caller parses a field again. A field the hash
lacks takes the record's default (older matches lack the newer fields).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import msgspec

from protocol import messages as m

from ..core.lifecycle import State
from ..core.player import PlayerStatus, Stored, shown_status
from .keys import parse_day_member


def _text(data: dict[bytes, bytes], field: str, default: str = "") -> str:
    value = data.get(field.encode())
    return value.decode() if value is not None else default


def _int(data: dict[bytes, bytes], field: str, default: int = 0) -> int:
    """An integer field; a missing or empty one (a None stored as ``""``) is ``default``."""
    value = data.get(field.encode())
    return int(value) if value else default


def _flag(data: dict[bytes, bytes], field: str) -> bool:
    """A flag field as the server writes it (``1``/``0``); a missing or empty one is False."""
    value = data.get(field.encode())
    return bool(value) and value != b"0"


class PlayerRecord(Stored, frozen=True):
    """A player's stored record (hash ``{m:CODE}:p:NAME``; times in ms from the start instant).

    The game's fields (``moves``, ``undos``, ``hints``, ``foundation``, ``status``, ``time_ms``,
    ``last_found_ms``) are the match core's :class:`server.core.player.Stored`, the part a command's
    ``COMMIT`` writes, declared there once (the core cannot import the store); here the player's identity
    and connection are added (``name``, ``epoch``, ``ready``, ``connected``, ``seq``, ``last_hint``).
    """

    name: str
    epoch: int
    ready: bool
    connected: bool
    seq: int
    last_hint: str = ""
    """The answer to the player's last hint (``""``: none, or no hint asked), sent again for a retried hint."""
    stuck: bool = False
    """The solver found the game dead with an undo left (store ``STUCK``); cleared by the next command."""

    @property
    def shown_status(self) -> PlayerStatus:
        """The status everyone is shown (:func:`server.core.player.shown_status`)."""
        return shown_status(self.status, self.stuck)

    @classmethod
    def from_hash(cls, data: dict[bytes, bytes]) -> PlayerRecord:
        """The record of a player hash (``HGETALL``); missing numeric fields are 0."""
        return cls(
            name=_text(data, "name", "0"), epoch=_int(data, "epoch"), ready=_text(data, "ready") == "1",
            connected=_text(data, "connected", "0") != "0", seq=_int(data, "seq"), moves=_int(data, "moves"),
            undos=_int(data, "undos"), hints=_int(data, "hints"), foundation=_int(data, "foundation"),
            status=PlayerStatus(_text(data, "status", "lobby")), time_ms=_int(data, "time_ms"),
            last_found_ms=_int(data, "last_found_ms"), last_hint=_text(data, "last_hint"),
            stuck=_text(data, "stuck") == "1",
        )


class BotSeat(msgspec.Struct, frozen=True):
    """A bot of a match: its player ``name``, its planner ``level`` and its pace (commands a minute)."""

    name: str
    level: str
    moves_per_min: int


class MatchMeta(msgspec.Struct):
    """A match's meta hash (``{m:CODE}:meta``), decoded once.

    ``state``: ``preparing`` (its solvable deal awaited), ``lobby``, ``countdown``, ``playing``,
    ``finished`` or ``closed``. ``seed``, ``deal`` and ``solution`` are secret until the end (the deal
    never leaves the server before the start). Times are epoch ms (0: not set). A daily attempt has
    ``daily`` (``"DATE VARIANT"``, :attr:`day`), a practice on a past day's deal ``practice`` (the same
    form, :attr:`practice_day`); a round after the first has ``expected`` (the round
    before's players), ``window_end_ms``, ``prev`` and ``series``; an ended match may have ``next_round``
    (field ``next``), ``next_made``, ``next_same`` and ``rematch`` (who asked). ``names``: name key -> name of every
    ``name:KEY`` field (a name taken in the lobby, or kept for a player of the round before).
    """

    code: str
    state: State
    settings: m.Settings
    host: str = ""
    created_ms: int = 0
    active: int = 0
    solution: str = ""
    nonce: str = ""
    seed: str = ""
    commitment: str = ""
    deal: str = ""
    daily: str = ""
    practice: str = ""
    """A practice on a past day's deal: ``"DATE VARIANT"`` (:attr:`practice_day`); on no board."""
    deadline_at_ms: int = 0
    start_at_ms: int = 0
    deadline_ms: int = 0
    round: int = 1
    series: str = ""
    prev: str = ""
    expected: list[str] | None = None
    window_end_ms: int = 0
    window_over: bool = False
    host_name: str = ""
    next_round: str = ""
    next_made: bool = False
    next_same: bool = False
    """The next round is dealt this match's deal again (a solo player's ``restart``)."""
    rematch: list[str] = msgspec.field(default_factory=list)
    names: dict[str, str] = msgspec.field(default_factory=dict)
    bots: list[BotSeat] = msgspec.field(default_factory=list)
    """The match's bots (field ``bots``, JSON), in join order: the server plays them (server/match/bots.py)."""

    def bot(self, name: str) -> BotSeat | None:
        """The bot called ``name`` among :attr:`bots`, or ``None`` for a person (or no player)."""
        return next((bot for bot in self.bots if bot.name == name), None)

    @property
    def day(self) -> tuple[str, str] | None:
        """``(date, variant)`` of a daily attempt; None for a race."""
        return parse_day_member(self.daily) if self.daily else None

    @property
    def practice_day(self) -> tuple[str, str] | None:
        """``(date, variant)`` of a practice on a past day's deal; None otherwise."""
        return parse_day_member(self.practice) if self.practice else None

    @classmethod
    def from_hash(cls, code: str, data: dict[bytes, bytes]) -> MatchMeta:
        """The meta of match ``code`` from its hash (``HGETALL``, not empty).

        Raises :class:`msgspec.ValidationError` when its settings are not a match's settings, ``ValueError``
        for a ``state`` that is no :class:`~server.core.lifecycle.State`.
        """
        expected = data.get(b"expected")
        return cls(
            code=_text(data, "code", code), state=State(_text(data, "state")),
            settings=msgspec.json.decode(data.get(b"settings", b"null"), type=m.Settings),
            host=_text(data, "host"), created_ms=_int(data, "created_ms"), active=_int(data, "active"),
            solution=_text(data, "solution"), nonce=_text(data, "nonce"), seed=_text(data, "seed"),
            commitment=_text(data, "commitment"), deal=_text(data, "deal"), daily=_text(data, "daily"),
            practice=_text(data, "practice"),
            deadline_at_ms=_int(data, "deadline_at_ms"), start_at_ms=_int(data, "start_at_ms"),
            deadline_ms=_int(data, "deadline_ms"), round=_int(data, "round", 1), series=_text(data, "series"),
            prev=_text(data, "prev"), expected=json.loads(expected) if expected is not None else None,
            window_end_ms=_int(data, "window_end_ms"), window_over=_flag(data, "window_over"),
            host_name=_text(data, "host_name"), next_round=_text(data, "next"),
            next_made=_flag(data, "next_made"), next_same=_flag(data, "next_same"),
            rematch=json.loads(data.get(b"rematch") or b"[]"),
            names={k[5:].decode(): v.decode() for k, v in data.items() if k.startswith(b"name:")},
            bots=msgspec.json.decode(data.get(b"bots") or b"[]", type=list[BotSeat]),
        )


class DayDeal(msgspec.Struct):
    """A daily challenge's deal record (hash ``{d:DATE:VARIANT}:deal``).

    ``seed`` (secret until the day is revealed), its ``commitment`` (SHA-256 of the seed), the
    ``attempt_index`` that gave it, the ``deal`` (position text), its ``solution`` (JSON of the winning
    commands; never sent, dropped when the day closes) and ``closed`` (every attempt has ended).
    """

    seed: str
    commitment: str
    attempt_index: int
    deal: str
    solution: str = ""
    closed: bool = False

    @classmethod
    def from_hash(cls, data: dict[bytes, bytes]) -> DayDeal:
        return cls(seed=_text(data, "seed"), commitment=_text(data, "commitment"),
                   attempt_index=_int(data, "attempt_index"), deal=_text(data, "deal"),
                   solution=_text(data, "solution"), closed=_text(data, "closed") == "1")


class DailyEntry(msgspec.Struct):
    """An ended daily attempt on the board (hash ``{d:DATE:VARIANT}:entries``, JSON), as
    :class:`server.core.ranking.Standing` gave it, and its match ``code``."""

    status: str = ""
    time_ms: int = 0
    moves: int = 0
    foundation: int = 0
    undos: int = 0
    hints: int = 0
    last_foundation_ms: int = 0
    match: str = ""


class DailyReplay(msgspec.Struct):
    """An ended daily attempt's game (hash ``{d:DATE:VARIANT}:replays``, JSON): its commands and their times
    (ms from the start)."""

    moves: list[str]
    times_ms: list[int]


class MatchKeysGone(LookupError):
    """The keys of a match (or of one of its players) are not in Redis although the server served it: Redis
    lost them (restarted without its data, emptied). ``args[0]``: the match's code."""


class NameClaim(NamedTuple):
    """A claimed daily name (hash ``daily:names``): the SHA-256 of its token and the name as claimed."""

    digest: str
    name: str


class Timer(NamedTuple):
    """A due timer of :data:`server.store.keys.TIMERS`: match ``code`` and ``kind`` (start, deadline,
    close, prepare, window ...). A named tuple: ``for code, kind in timers`` reads it."""

    code: str
    kind: str


def plain(value: Any) -> Any:
    """A Python value as a hash field's text: bools 1/0, dicts and lists JSON, None ``""``, settings JSON."""
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    if isinstance(value, msgspec.Struct):
        return msgspec.json.encode(value).decode()
    if value is None:
        return ""
    return value
