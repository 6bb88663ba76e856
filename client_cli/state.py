"""What the client knows about its match, updated message by message (pure, no I/O).

:class:`RaceState` is fed every :mod:`protocol.messages` message the server
sends (:meth:`RaceState.apply`); the screen (:mod:`client_cli.render`)
and the scripted output are drawn from it. It holds only what the server
said: the redacted view, the legal moves, counters, the other players'
public progress and the results. No rules logic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from protocol import messages as m
from protocol.cards import SUIT_SYMBOLS, SUITS, UNKNOWN, parse_card, rank_of

ENDED = ("won", "dead", "resigned", "timeout")

NOT_STARTED = "the match has not started yet"
STALE_AT_START = frozenset({NOT_STARTED, "ready: the match starts when everyone is"})
"""Messages about the lobby that the deal makes untrue: cleared when it arrives."""
"""Statuses a player's game ends with (``dead`` ends it only when no undo is left; the server says which)."""


_CARD = re.compile(r"(?<![0-9A-Za-z])(10|[2-9TJQKA])([CDHS])(?![0-9A-Za-z])")


def card_label(card: str) -> str:
    """A card as the screen shows it: ``"TD"`` -> ``"10♦"``, ``"AS"`` -> ``"A♠"``; ``"??"`` (or anything that
    is not a card code) stays as it is."""
    if card == UNKNOWN or len(card) != 2 or card[1] not in SUITS:
        return card
    rank = "10" if card[0] == "T" else card[0]
    return rank + SUIT_SYMBOLS[SUITS.index(card[1])]


def with_card_symbols(text: str) -> str:
    """Card codes in a text (the engine's reasons: ``"2C does not fit on TC"``) as the screen shows cards, by
    :func:`card_label`: ``"2♣ does not fit on 10♣"``. Codes inside longer words (``AS2H``) stay."""
    return _CARD.sub(lambda found: card_label(("T" if found[1] == "10" else found[1]) + found[2]), text)


@dataclass
class PlayerLine:
    """One player's public progress as the standings show it."""

    name: str
    moves: int = 0
    foundation: int = 0
    status: str = "lobby"
    time_ms: int = 0
    ready: bool = False
    connected: bool = True
    bot: bool = False
    """A bot the server plays (the lobby's player row says so)."""


@dataclass
class RaceState:
    """The client's picture of one match (see the module docstring)."""

    server: str = ""
    public_server: str = ""
    """The address friends are told to join at (the server's ``FTR_PUBLIC_URL``); empty: :attr:`server`."""
    title: str = ""
    """What the header names instead of the match code (``Daily classic 2026-12-01``); empty: the code."""
    daily: bool = False
    """A daily challenge attempt: one a day, so its results offer no next round."""
    code: str = ""
    name: str = ""
    host: bool = False
    phase: str = "connecting"
    """``connecting``, ``preparing``, ``lobby``, ``countdown``, ``playing``, ``finished`` (results in)."""
    settings: m.Settings | None = None
    commitment: str = ""
    start_at_ms: int = 0
    deadline_ms: int = 0
    view: m.WireView | None = None
    legal: list[m.WireLegalMove] = field(default_factory=list)
    moves: int = 0
    undos: int = 0
    foundation: int = 0
    status: str = "lobby"
    time_ms: int = 0
    total_cards: int = 0
    players: dict[str, PlayerLine] = field(default_factory=dict)
    results: m.Results | None = None
    round: int = 1
    """The match's round in its series (1: the first; ``rematch`` on the results screen makes the next)."""
    series: list[dict[str, Any]] = field(default_factory=list)
    """The series standings over the rounds ended so far (``GET /matches/{code}``'s ``series.standings``:
    name, rounds_won, foundation, time_ms), read once a round after the first has its results."""
    rematch: list[str] = field(default_factory=list)
    """Players who asked for the next round (the ``rematch`` event), in order."""
    claimed: tuple[str, str] | None = None
    """``(name, recovery code)`` when this client's join claimed the name on the server (shown once)."""
    message: str = ""
    """The last thing to tell the player (a refusal's reason, a hint, a notice)."""
    refusals: int = 0
    """How many refusals (``rejected``, ``error``) have set :attr:`message`: a command's answer clears the line
    only when none came since the command was typed (a reason that came after it was never read)."""
    connected: bool = False
    clock_offset_ms: int = 0
    """Server clock minus the local clock (from ``pong``), for the countdown and the clock."""
    fixed_clock_ms: int | None = None
    """A clock that does not run (a replay's step: when its command was played, ms from the start)."""
    ghost: m.Ghost | None = None
    """The recorded game the match races against (the ``ghost`` frame; :mod:`client_cli.ghost`), else None."""
    ghost_reached: tuple[int, int | None] = (0, None)
    """My cards up and the ms from the start I first had them (None: not known, as after a resume), for the
    gap to the ghost."""

    # ------------------------------------------------------------ derived

    @property
    def my_game_over(self) -> bool:
        return self.status in ENDED and not (self.status == "dead" and any(x.command == "u" for x in self.legal))

    @property
    def may_restart(self) -> bool:
        """Restart is offered (the server's rule): the one person in the match (bots aside), not a daily
        attempt, once dealt."""
        people = [line for line in self.players.values() if not line.bot]
        return not self.daily and len(people) == 1 and self.phase in ("playing", "finished")

    def line(self, name: str) -> PlayerLine:
        if name not in self.players:
            self.players[name] = PlayerLine(name)
        return self.players[name]

    def can(self, command: str) -> bool:
        """True when the server's legal list holds ``command``."""
        return any(x.command == command for x in self.legal)

    def elapsed_ms(self, now_ms: int) -> int:
        """The clock of my game: running while I play, frozen at my last time once my game ended (or at
        :attr:`fixed_clock_ms` when set)."""
        if self.fixed_clock_ms is not None:
            return self.fixed_clock_ms
        if self.phase not in ("playing", "finished") or not self.start_at_ms:
            return 0
        if self.status in ENDED or self.phase == "finished":
            return self.time_ms
        return max(0, now_ms + self.clock_offset_ms - self.start_at_ms)

    def countdown_s(self, now_ms: int) -> float:
        return max(0.0, (self.start_at_ms - now_ms - self.clock_offset_ms) / 1000)

    # ------------------------------------------------------------ updates

    def _take_view(self, view: m.WireView, legal: list[m.WireLegalMove], foundation: int | None = None) -> None:
        self.view, self.legal = view, list(legal)
        if foundation is not None:
            self.foundation = foundation
        if not self.total_cards:
            on_table = sum(map(len, view.tableau)) + sum(view.hidden) + view.stock + len(view.waste)
            self.total_cards = on_table + foundation_count(view)

    def apply(self, message: m.ServerMessage) -> None:
        """Update the picture with one message from the server."""
        match message:
            case m.Joined(match=code, name=name):
                self.code, self.name = code, name
                self.line(name)
            case m.Lobby():
                self.settings, self.commitment = message.settings, message.commitment or self.commitment
                if message.state in ("preparing", "lobby", "countdown") and self.phase in ("connecting", "preparing",
                                                                                           "lobby"):
                    self.phase = message.state
                for info in message.players:
                    line = self.line(info.name)
                    line.ready, line.connected, line.bot = info.ready, info.connected, info.bot
            case m.Countdown(start_at_ms=start_at):
                self.start_at_ms = start_at
                if self.phase != "playing" and self.phase != "finished":
                    self.phase = "countdown"
                self.message = ""
            case m.Started():
                if self.phase != "finished":
                    self.phase = "playing"
                self.start_at_ms, self.deadline_ms = message.start_at_ms, message.deadline_ms
                self.moves, self.undos, self.total_cards = message.moves, message.undos, 0
                self._take_view(message.view, message.legal, foundation_count(message.view))
                self.ghost_reached = (self.foundation, None if message.moves else 0)
                if self.status == "lobby":
                    self.status = "playing"
                mine = self.line(self.name)  # a resumed game: my own line as far as the deal says
                mine.moves, mine.foundation = message.moves, self.foundation
                if mine.status == "lobby":
                    mine.status = "playing"
                if self.message in STALE_AT_START:
                    self.message = ""
                for line in self.players.values():  # the identical deal: everyone starts where I start
                    if line.status == "lobby":
                        line.status, line.foundation = "playing", self.foundation
            case m.PositionReply():
                if message.foundation > self.ghost_reached[0]:
                    self.ghost_reached = (message.foundation, message.time_ms)
                self._take_view(message.view, message.legal, message.foundation)
                self.moves, self.undos, self.status, self.time_ms = (message.moves, message.undos, message.status,
                                                                     message.time_ms)
                line = self.line(self.name)
                line.moves, line.foundation, line.status, line.time_ms = (message.moves, message.foundation,
                                                                          message.status, message.time_ms)
            case m.Progress() | m.Finished():
                line = self.line(message.name)
                line.moves, line.foundation, line.status, line.time_ms = (message.moves, message.foundation,
                                                                          message.status, message.time_ms)
                if message.name == self.name and message.status in ENDED:
                    self.status, self.time_ms = message.status, message.time_ms
            case m.Results():
                self.results = message
                self.phase = "finished"
                self.message = ""  # what was said during the play (a refusal, game_over) would hide the rematch offer
                for row in message.ranking:
                    line = self.line(row.name)
                    line.moves, line.foundation, line.status, line.time_ms = row.moves, row.foundation, row.status, row.time_ms
                    if row.name == self.name:
                        self.status, self.time_ms, self.moves = row.status, row.time_ms, row.moves
            case m.Rejected(command=command, reason=reason):
                self.message = f"{command}: {with_card_symbols(reason)}"
                self.refusals += 1
            case m.Suggestion(command=command):
                # The server suggests a draw whenever one is legal: an empty hint means nothing is left to draw.
                self.message = f"hint: {command}" if command else \
                    "hint: none (nothing left to draw): try a move of your own, undo, or resign"
            case m.Error(code=code, message=text):
                self.message = f"{text} [{code}]"
                self.refusals += 1
            case m.Ghost():
                self.ghost = message
            case m.RematchOffer(names=names):
                self.rematch = list(names)
            case m.Pong():
                pass


def foundation_count(view: m.WireView) -> int:
    """Cards on the foundations of a view: a slot holds ace up to its top card, so the top's rank."""
    return sum(rank_of(parse_card(top)) for top in view.foundations if top not in ("-", "", UNKNOWN))
