"""Message types of the race protocol, both directions.

Every frame is one msgpack map with a ``type`` tag naming its message;
the types are frozen :class:`msgspec.Struct` declarations, and the codec
(:mod:`protocol.codec`) validates every incoming frame against them: a
field of the wrong type or length is refused with an error naming it
(``Expected `int`, got `str` - at `$.seq```).

Evolving the protocol (msgspec's rules): a new field gets a default and
goes last; fields are never reordered, renamed or retyped; an
incompatible change bumps :data:`PROTOCOL_VERSION`.

Client to server (imperatives)
------------------------------
``hello``   first frame: the client's protocol version and name.
``join``    join a match in its lobby with a display name; answer ``joined``.
``resume``  reconnect to a match with the player token; answer ``joined``
            and the player's current state.
``ready``   the player is ready (the match starts when all expected
            players have joined and are ready, or when the host says so).
``start``   the host starts the match now (needs the host token).
``play``    one command in the pinned notation, with a sequence number.
``resign``  give up (with a sequence number).
``hint``    ask for a suggested command (where the match allows hints).
``ping``    keep-alive; answered by ``pong``.
``rematch`` after the match's results: the player wants the next round
            (answer ``next_round``; a retried frame answers the same round).
``restart`` alone (one player, not a daily attempt), once started: end the
            game and play the same deal again as the next round (answer
            ``next_round``).

Server to client (facts)
------------------------
``welcome``, ``joined``, ``lobby``, ``countdown``, ``started`` (the
player's redacted view and legal moves, sent at the start instant, never
before), ``position`` (an accepted command: new view, counters, legal
moves), ``rejected`` (a refused command: code and reason; nothing
changed), ``progress`` (another player's public progress), ``finished``
(a player's game ended), ``results`` (ranked, with the revealed seed),
``suggestion`` (a hint, from the player's view only), ``error`` (stable
code, readable message), ``pong``, ``next_round`` (answer to ``rematch``:
the next round's code and the player's token in it), ``rematch`` (who
wants the next round: on the ended round's streams), ``ghost`` (the recorded
game a match races against: its progress on its own timing, never a card;
sent after ``started``). Spectators' streams also carry ``board`` (a
player's redacted view) when the host opened the boards.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

PROTOCOL_VERSION = 3
"""Version of this message set. A client with another version is refused with ``error`` code ``version``.

2: a ``play``/``resign``/``hint`` whose ``seq`` skips a number is refused (``error`` ``seq_gap``;
version 1 servers accepted it, and version 1 clients skipped numbers after a refusal or a hint);
``started`` carries ``hints``.

3: ``error`` carries the ``seq`` of the ``play``/``resign``/``hint`` frame it answers (absent when it answers
none), so a client matches an error to its request instead of guessing from the code."""

MAX_NAME = 24
"""Longest display name, in characters."""
MAX_TOKEN = 64
MAX_CODE = 16
MAX_COMMAND = 16
"""Longest command text (``10-13x13`` is 8)."""

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME)]
Token = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_TOKEN)]
Code = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_CODE)]
CommandText = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_COMMAND)]
PlayerKey = Annotated[str, msgspec.Meta(max_length=MAX_TOKEN)]
"""A named player's secret key (``""``: none held)."""
Seq = Annotated[int, msgspec.Meta(ge=0, le=2**31)]
CardText = Annotated[str, msgspec.Meta(max_length=3)]


class _Message(msgspec.Struct, frozen=True, tag_field="type", forbid_unknown_fields=False):
    """Base of every message: a frozen struct tagged by ``type``."""


# ---------------------------------------------------------------- client -> server


class Hello(_Message, frozen=True, tag="hello"):
    """First frame of a connection: protocol ``version`` and a ``client`` name."""

    version: int
    client: Annotated[str, msgspec.Meta(max_length=64)] = ""


class Join(_Message, frozen=True, tag="join"):
    """Join match ``match`` (its code) in the lobby as ``name`` (unique in the match). ``player_key``: the
    secret key of the named player ``name`` on this server (``""`` for a name never used here: the join claims
    it, and ``joined`` carries the new key); a claimed name without its key is refused with ``bad_token``."""

    match: Code
    name: Name
    player_key: PlayerKey = ""


class Resume(_Message, frozen=True, tag="resume"):
    """Reconnect to ``match`` with the secret player ``token`` (rotated on every resume; the previous token
    stays valid until the new one is first used)."""

    match: Code
    token: Token


class Ready(_Message, frozen=True, tag="ready"):
    """The player is ready to start."""


class Start(_Message, frozen=True, tag="start"):
    """The host starts the match now; ``host_token`` is the token ``POST /matches`` returned."""

    host_token: Token


class Play(_Message, frozen=True, tag="play"):
    """One command in the pinned notation (RULES.md section 10).

    ``seq`` numbers the player's accepted commands (``play`` and ``resign``
    share one sequence) from 1, with no gap: the next frame carries the
    last accepted ``seq`` plus 1 (``started`` says the last accepted one).
    A refused frame (``rejected`` or ``error``) uses up no number: the next
    command carries the same ``seq``. A frame whose ``seq`` was already
    accepted is acknowledged again with a ``position``, never applied
    twice; one that skips ahead (more than the last accepted plus 1) is
    refused with ``error`` ``seq_gap``, whose message names the ``seq``
    expected, and nothing changes.
    """

    seq: Seq
    command: CommandText


class Resign(_Message, frozen=True, tag="resign"):
    """Give up the game. ``seq`` is the next number of the sequence ``play`` uses (same rules: a retry is
    acknowledged again, a skipped number is refused with ``error`` ``seq_gap``)."""

    seq: Seq


class Hint(_Message, frozen=True, tag="hint"):
    """Ask for a suggested command (only where the match allows hints; counted in the results).

    Hints have a sequence of their own: ``seq`` n asks for the player's
    n-th hint (``started`` says how many were answered: ``hints``). A
    ``seq`` already answered gets the same ``suggestion`` again, not
    counted again; one that skips ahead is refused with ``error``
    ``seq_gap`` (the message names the ``seq`` expected), not counted.
    """

    seq: Seq


class Ping(_Message, frozen=True, tag="ping"):
    """Keep-alive; ``nonce`` comes back in ``pong``."""

    nonce: Annotated[int, msgspec.Meta(ge=0, le=2**53)] = 0


class Rematch(_Message, frozen=True, tag="rematch"):
    """After the match's results: this player wants the next round (same settings, a new deal).

    Answered by :class:`NextRound`; the player then sends ``resume`` with
    its code and token (on the same connection) and is in the next round's
    lobby, ready. Every player who sends it is one next round: a retried or
    concurrent ``rematch`` answers the same round. Before the results:
    ``error`` ``not_finished``, nothing changes.
    """


class Restart(_Message, frozen=True, tag="restart"):
    """Start this game again on the same deal: only alone (a match of one player that is not a daily attempt),
    once the game has started.

    Restarting is fair only alone: in a race the restarter would play a deal
    they have seen against players who have not. The player's game ends
    (as ``resigned`` if it is still playing: so say the results), and the
    next round of the series starts on the same deal (the same seed, a new
    nonce and commitment), for this player alone; answered by
    :class:`NextRound` as a ``rematch`` is (then ``resume`` with its code
    and token). A retried ``restart`` answers the same round. Refused with
    ``error`` ``no_restart`` in a race of two or more or a daily attempt,
    ``not_started`` before the start; nothing changes then. Once a
    ``rematch`` has asked for the next round (a new deal), a ``restart``
    answers that round.
    """


ClientMessage = Hello | Join | Resume | Ready | Start | Play | Resign | Hint | Ping | Rematch | Restart
"""Every message a client may send."""


# ---------------------------------------------------------------- server -> client


class WireView(msgspec.Struct, frozen=True):
    """A redacted position (RULES.md section 8) as the wire carries it, in card texts: what the player may see.

    ``tableau``: per column its face-up cards bottom to top; ``hidden``:
    per column how many face-down cards lie under them; ``foundations``:
    per slot its top card or ``"-"``; ``stock``: cards left in the stock
    (a count, never their order); ``waste``: bottom to top.
    """

    tableau: list[list[CardText]]
    hidden: list[int]
    foundations: list[CardText]
    stock: int
    waste: list[CardText]
    redeals_left: int


class WireLegalMove(msgspec.Struct, frozen=True, array_like=True):
    """A command the server would accept now and how many cards it moves, as the wire carries it:
    ``[command text, cards]``."""

    command: str
    cards: int


class ReplayStep(msgspec.Struct, frozen=True):
    """One position of a replayed game record (``POST /replays``): the deal after its auto-play (``command``
    ``""``), then the position after each command of the record in turn.

    ``ok`` false: the rules refused ``command`` (``reason``, in notation) and the position is the one before.
    ``moves``: commands accepted so far; ``status``: ``"playing"`` or ``"won"``; ``foundation``: cards on the
    foundations. ``view`` is redacted as every position a player sees, ``legal`` the commands legal there.
    """

    command: str
    ok: bool
    reason: str
    view: WireView
    legal: list[WireLegalMove]
    moves: int
    status: str
    foundation: int


class RecordReplay(msgspec.Struct, frozen=True):
    """The answer of ``POST /replays``: the record's ``variant`` and every position, ``len(moves) + 1`` steps."""

    variant: str
    steps: Annotated[list[ReplayStep], msgspec.Meta(min_length=1)]


class Settings(msgspec.Struct, frozen=True):
    """A match's settings (``POST /matches``)."""

    variant: str
    solvable_only: bool
    players: int
    time_limit_s: int
    autoplay: bool
    undo: str
    hints: bool
    open_boards: bool = False
    """Spectators see each player's redacted board live (a race on one screen); otherwise only progress
    until the match ends (DESIGN.md "Anti stream-sniping")."""
    chosen_deal: bool = False
    """The host chose this round's deal (a seed or a position of their own), so the host may know it before
    the race: everyone is told. False for a deal the server drew, and for every round after the first but a
    ``restart``'s (its player has seen the deal: True)."""


class PlayerInfo(msgspec.Struct, frozen=True):
    """A player as everyone may see them in the lobby."""

    name: str
    ready: bool
    connected: bool
    bot: bool = False
    """A bot the server plays (always ready and connected)."""


class Welcome(_Message, frozen=True, tag="welcome"):
    """Answer to ``hello``: the server's protocol version and its limits."""

    version: int
    server: str
    max_frame_bytes: int
    messages_per_second: float
    burst: int = 0
    """Messages a connection may send at once before the rate applies."""


class Joined(_Message, frozen=True, tag="joined"):
    """You are ``name`` in ``match``; keep ``token`` secret: it resumes your game.

    ``player_key`` and ``recovery_code`` are ``""`` unless this join claimed the name on this server: then
    they are the name's new secret key (send it with every later join of that name) and its recovery code
    (shown once: it gives a new key on another device, ``POST /players/{name}/recover``). A resume's
    ``joined`` never carries them."""

    match: str
    name: str
    token: str
    player_key: str = ""
    recovery_code: str = ""


class Lobby(_Message, frozen=True, tag="lobby"):
    """The match before it starts: state, players, settings, and the seed's commitment."""

    match: str
    state: Literal["preparing", "lobby", "countdown", "playing", "finished", "closed"]
    players: list[PlayerInfo]
    settings: Settings
    commitment: str


class Countdown(_Message, frozen=True, tag="countdown"):
    """The match starts at ``start_at_ms`` (server time, ms since the epoch)."""

    start_at_ms: int
    seconds: float


class Started(_Message, frozen=True, tag="started"):
    """Your game: the redacted deal, the legal moves, the deadline (ms since the epoch; 0: none, which only
    a server with ``FTR_UNTIMED_LIMIT_S`` 0 sends)."""

    start_at_ms: int
    deadline_ms: int
    view: WireView
    legal: list[WireLegalMove]
    moves: int
    seq: int
    """The last ``play`` or ``resign`` seq accepted (0: none yet): the next one carries this plus 1."""
    status: str = "playing"
    """``playing``, or how the game ended (a resumed player whose game is over)."""
    hints: int = 0
    """Hints answered so far, which is the last ``hint`` seq accepted: the next ``hint`` carries this plus 1."""
    undos: int = 0
    """Undos taken so far (a resumed game shows its counter as it was, not from 0)."""


class PositionReply(_Message, frozen=True, tag="position"):
    """The ``position`` reply: command ``seq`` was accepted; your new view and counters.

    ``status``: ``playing``, ``won``, ``dead`` (no card can reach a
    foundation any more: undo where allowed, or resign), ``resigned`` or
    ``timeout``.
    """

    seq: int
    command: str
    view: WireView
    legal: list[WireLegalMove]
    moves: int
    undos: int
    foundation: int
    status: str
    time_ms: int


class Rejected(_Message, frozen=True, tag="rejected"):
    """Command ``seq`` was refused; nothing changed, and ``seq`` is not used up (the next command carries it).

    ``code`` is stable: ``illegal`` (the rules refuse it now), ``undo_refused`` (the undo policy),
    ``game_over`` (the game is over) or ``malformed`` (not valid notation); ``reason`` is readable.
    """

    seq: int
    command: str
    code: str
    reason: str


class Progress(_Message, frozen=True, tag="progress"):
    """Another player's public progress (never a board or a move), after each of their accepted commands.

    ``status``: ``playing``, ``won``, or ``dead`` while the player is stuck (the solver found their game
    dead with an undo left: it goes on, and their next accepted command's ``progress`` says ``playing``
    again); a game that ends is also told by ``finished``.
    """

    name: str
    moves: int
    foundation: int
    status: str
    time_ms: int
    undos: int = 0
    """Undos taken so far: one more than in the player's ``progress`` before means that command was an undo."""


class Board(_Message, frozen=True, tag="board"):
    """Player ``name``'s board as that player sees it (the redacted :class:`WireView`), for spectators only.

    Sent on the match's public streams (``/matches/{code}/events`` and
    ``/watch``) only when the host opened the boards at creation
    (``Settings.open_boards``): once per player at the start, then after
    every accepted command. Never sent to players.
    """

    name: str
    moves: int
    foundation: int
    status: str
    time_ms: int
    view: WireView


class Ghost(_Message, frozen=True, tag="ghost"):
    """The recorded game this match races against (a ghost: never a player, never a card), sent to each player
    right after ``started`` (again on every resume).

    ``name``: whose game it is; ``label``: how to show it (``"ann's best"``, ``"bob in match K7…"``);
    ``time_ms``, ``moves``, ``foundation``, ``status``: how that game ended; ``timeline``: its progress,
    ``[ms, moves, foundation]`` with ms from its start, first the deal (``[0, 0, cards up at the deal]``) and
    then one entry per accepted command, in order. At match clock ``t`` (ms since ``start_at_ms``) the ghost
    stands at the last entry with ``ms <= t``; from ``time_ms`` on it has ended with ``status``.
    """

    name: str
    label: str
    time_ms: int
    moves: int
    foundation: int
    status: str
    timeline: list[tuple[int, int, int]]


class Finished(_Message, frozen=True, tag="finished"):
    """Player ``name``'s game ended with ``status`` after ``time_ms`` and ``moves``."""

    name: str
    status: str
    time_ms: int
    moves: int
    foundation: int


class ResultRow(msgspec.Struct, frozen=True):
    """One line of the ranked results (DESIGN.md "Ranking")."""

    rank: int
    name: str
    status: str
    time_ms: int
    moves: int
    undos: int
    hints: int
    foundation: int
    bot: bool = False
    """A bot the server played (never in a player's history nor head-to-head)."""


class RecordNote(msgspec.Struct, frozen=True):
    """A personal record the match set for named player ``name`` in ``variant``: ``what`` is ``"time"`` (the
    best won time, ms), ``"moves"`` (the fewest moves in a win) or ``"cards"`` (the most foundation cards,
    variant-wide); ``deal`` is the deal's label (``"seed 1234"``, ``"daily 2026-12-07"``) or ``""`` for a
    variant-wide record; ``value`` the new best, ``previous`` the old one (``-1``: the first win there)."""

    name: str
    variant: str
    deal: str
    what: Literal["time", "moves", "cards"]
    value: int
    previous: int


class Rivalry(msgspec.Struct, frozen=True):
    """The head-to-head of named players ``a`` and ``b`` over all the races they were both in (this one
    included): ``a_wins`` races ``a`` ranked higher, ``b_wins`` the other way, ``draws`` equal ranks."""

    a: str
    b: str
    a_wins: int
    b_wins: int
    draws: int
    races: int


class Results(_Message, frozen=True, tag="results"):
    """The match is over: the ranking, the revealed seed, and the commitment published at
    creation: SHA-256 of ``nonce + seed`` (hex), so anyone can check it.

    ``records``: the personal records the match set (named players only); ``head_to_head``: for each pair of
    its named players, their score over all their races. Both empty for a server keeping no history.

    ``streak``, ``best_streak``, ``freezes``: a daily attempt's player's daily streak as the server holds it
    once the attempt is recorded (this day counted), as of the attempt's day; ``None`` for a match that is not
    a daily attempt, or when the history did not answer."""

    match: str
    ranking: list[ResultRow]
    seed: str
    commitment: str
    nonce: str = ""
    records: list[RecordNote] = msgspec.field(default_factory=list)
    head_to_head: list[Rivalry] = msgspec.field(default_factory=list)
    streak: int | None = None
    best_streak: int | None = None
    freezes: int | None = None


class Suggestion(_Message, frozen=True, tag="suggestion"):
    """Answer to ``hint``: a command worth trying (``""`` when none), computed from your view only."""

    seq: int
    command: str
    hints: int


class Error(_Message, frozen=True, tag="error", omit_defaults=True):
    """Something was wrong with a frame or a request; nothing changed.

    ``code`` is one of :data:`ERROR_CODES`; ``message`` says what and why.
    ``seq``: the ``seq`` of the ``play``, ``resign`` or ``hint`` frame this error answers; absent (``None``)
    when it answers no numbered frame (a hello, join or ready refused, a frame that did not decode, a rate
    limit, a takeover by another connection, a match closed). A client has one numbered frame out at a time,
    so the ``seq`` names it (``play`` and ``resign`` share one sequence, ``hint`` has its own).
    """

    code: str
    message: str
    seq: int | None = None


class Pong(_Message, frozen=True, tag="pong"):
    """Answer to ``ping``: its ``nonce`` and the server's clock (ms since the epoch)."""

    nonce: int
    server_time_ms: int


class NextRound(_Message, frozen=True, tag="next_round"):
    """Answer to ``rematch``: round ``round`` of the series is match ``match``; resume it with ``token``.

    ``host_token``: the host token of that round when this player hosts it
    (the first player whose rematch put them in it; a retried rematch of
    the host gets a new one, which replaces it), ``""`` otherwise.
    ``window_ms``: ms left of the rematch window (``FTR_REMATCH_WINDOW_S``):
    the round starts when every player of the previous round is in and
    ready, or once the window is over with whoever is in and ready. A
    retried ``rematch`` answers the
    same ``match`` with a new ``token`` (the one before stays valid until
    the new one is used, as with ``resume``).
    """

    match: str
    round: int
    token: str
    host_token: str = ""
    window_ms: int = 0


class RematchOffer(_Message, frozen=True, tag="rematch"):
    """On an ended match's streams (players and spectators): players ``names`` (in the order they asked)
    want the next round, match ``next``."""

    match: str
    next: str
    names: list[str]


ServerMessage = (
    Welcome | Joined | Lobby | Countdown | Started | PositionReply | Rejected | Progress | Finished | Results
    | Suggestion | Error | Pong | Board | NextRound | RematchOffer | Ghost
)
"""Every message a server may send."""

ERROR_CODES = {
    "frame_too_large": "the frame is larger than the server accepts",
    "malformed": "the frame is not valid msgpack, or not a known message with the right fields (in ``rejected``: "
                 "the command is not valid notation)",
    "version": "the client speaks another protocol version",
    "hello_first": "the first frame must be hello",
    "no_match": "no match with that code",
    "bad_token": "the token does not match (or a claimed name's player key is missing or wrong)",
    "name_taken": "the display name is already used in this match (or, claiming a name, it looks like a "
                  "claimed one)",
    "match_full": "the match has all its players",
    "not_joined": "join or resume a match first",
    "not_started": "the match has not started yet",
    "game_over": "your game has ended",
    "already_started": "the match has left its lobby (it has started, or ended: the message says which, and where "
                       "an ended match's results are)",
    "closed": "the match did not start in time and was closed",
    "rate_limited": "too many messages: slow down",
    "not_host": "only the host may do that",
    "no_hints": "this match does not allow hints",
    "replaced": "another connection with your token took over",
    "not_finished": "the match has not ended yet (results, replays, rematch)",
    "no_player": "no player of that name in this match, or no named player of that name on this server",
    "no_daily": "this server runs no daily challenge",
    "no_group": "no group with that id on this server",
    "group_full": "the group holds as many members as a group may",
    "too_many_groups": "the player is in as many groups as a player may be in",
    "no_variant": "no daily challenge for that variant",
    "no_day": "no daily challenge on that date",
    "no_attempt": "no attempt of that name on that day",
    "not_revealed": "the daily seed, deal and replays are public once the day is over",
    "day_over": "the daily challenge of that day is over",
    "already_played": "one daily attempt per name, day and variant",
    "too_many_watchers": "the match has as many spectators as this server streams it to; try again later",
    "too_slow": "a spectator fell behind the match's events; resume from its last event id",
    "seq_gap": "a play, resign or hint frame skipped a number: its seq must be the last accepted plus 1 (the "
               "message names it); nothing changed",
    "illegal": "the rules refuse that command now (in ``rejected``); nothing changed",
    "undo_refused": "the match's undo policy refuses that undo (in ``rejected``)",
    "internal": "the server failed to handle the frame (a bug, or Redis failed: for a play or resign the message "
                "says whether it was stored)",
    "unknown_outcome": "Redis did not answer in time: whether that play or resign was stored is not known; send the "
                       "same frame again (a retry is acknowledged as what was stored)",
    "unsolvable": "the deal the host chose is proven unsolvable and solvable-only was asked (match creation)",
    "not_found": "no such path (HTTP 404)",
    "method_not_allowed": "that HTTP method is not allowed on that path (HTTP 405)",
    "no_restart": "restart is only for a game alone: not in a race of two or more, nor in a daily attempt",
    "too_many_bots": "the server plays as many bots as it may at once (FTR_MAX_BOTS): create the match without "
                     "bots, or try again later (HTTP 503)",
    "no_ghost": "no recorded game to race as a ghost: the name is not a named player here, or has no kept game on "
                "that deal in that variant, or the match named is not kept, not ended or not on that deal",
}
"""Stable error codes and what they mean: every code an ``error`` frame, a ``rejected`` frame or an HTTP error body
can carry (the README's "Error codes" table says which carries which)."""
