"""A match's lifecycle as data: its states, the allowed transitions in one table, what each event does.

States (``meta.state`` in Redis)::

    preparing --deal_found--> lobby --host_start | all_ready--> countdown --start--> playing
        |                       |                                                      |
        +-------close-----------+--> closed                         all_ended --> finished

A match whose keys expired has no state (``None`` here).

:data:`TRANSITIONS` is the one table. Each row is an allowed (state, event): the state it leads to, the
:class:`Effect` list the adapter carries out in order, and the store script that writes the change. The
script checks the source state again, so two processes deciding at once change the match once.

:func:`decide` reads the table. A player's event the table does not allow raises the
:class:`~server.core.errors.ServiceError` the player gets (:func:`refusal`). A background event (a timer, a
start check) that finds the match moved on is ignored, except those in :data:`WAITS`, tried again later.

Pure: no I/O and no clock; instants are ``now_ms`` arguments, in ms since the epoch.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from protocol import messages as m

from .errors import ServiceError


class State(StrEnum):
    """A match's state (``meta.state``)."""

    PREPARING = "preparing"
    LOBBY = "lobby"
    COUNTDOWN = "countdown"
    PLAYING = "playing"
    FINISHED = "finished"
    CLOSED = "closed"


class Event(StrEnum):
    """What can happen to a match: a player's request, a timer, or a decision of the service."""

    DEAL_FOUND = "deal_found"
    """The ``prepare`` timer got a solvable deal from the pool."""
    JOIN = "join"
    """A player joins (``join``, or a ``rematch`` into a next round)."""
    READY = "ready"
    """A player is ready."""
    HOST_START = "host_start"
    """The host starts the match (``start`` with the host token)."""
    ALL_READY = "all_ready"
    """The start check passed (every expected player in and ready), or a daily attempt's player connected."""
    WINDOW_OVER = "window_over"
    """The ``window`` timer of a round after the first: its rematch window is over."""
    CLOSE = "close"
    """The ``close`` timer (``FTR_LOBBY_TIMEOUT_S``), or a daily attempt's day ended before it started."""
    START = "start"
    """The ``start`` timer: the countdown is over, the deal goes out."""
    COMMIT = "commit"
    """A player's ``play`` or ``resign`` is stored."""
    STUCK = "stuck"
    """The solver found a player's game dead with an undo left: the player is stuck, the game goes on."""
    GAME_DEAD = "game_dead"
    """A player's game is dead with no undo left: it ends as ``dead``."""
    DEADLINE = "deadline"
    """The ``deadline`` timer: the time limit is over."""
    ALL_ENDED = "all_ended"
    """Every player's game has ended (the last one's end, or the ``finalize`` timer): the results."""
    REMATCH = "rematch"
    """A player asks for the next round."""


PLAYER_EVENTS = frozenset({Event.JOIN, Event.READY, Event.HOST_START, Event.COMMIT, Event.REMATCH})
"""Events a player sent: refused with an error when the table does not allow them. Every other event is
the service's own, and is ignored when the match has moved on."""


class Effect(StrEnum):
    """What the adapter does for a transition, in the order a :class:`Transition` lists them.

    The effects in :data:`SCRIPTED` are the row's store script itself (``Transition.script``): the state
    change and what it publishes, in one atomic write. The others run before or after it."""

    TAKE_SEAT = "take_seat"
    """The player is in the match with a new token, told ``joined`` (script ``JOIN``)."""
    MARK_READY = "mark_ready"
    """The player is ready (script ``READY``)."""
    OPEN_LOBBY = "open_lobby"
    """The preparing match, its deal now written, is in its lobby (script ``TRANSITION``)."""
    PUBLISH_LOBBY = "publish_lobby"
    """Append the lobby as Redis holds it to the match's stream (while it is in its lobby)."""
    CHECK_START = "check_start"
    """Start the countdown if every expected player is in and ready (event :attr:`Event.ALL_READY`)."""
    ARM_START = "arm_start"
    """Set the ``start`` and ``deadline`` timers (:func:`countdown`), before the transition is written."""
    PUBLISH_COUNTDOWN = "publish_countdown"
    """The match counts down; the ``countdown`` frame goes out (script ``TRANSITION``)."""
    DAILY_STARTED = "daily_started"
    """A daily attempt: the daily challenge's public ``attempt`` event."""
    FREE_KEPT_NAMES = "free_kept_names"
    """The names kept for the round before's players are anyone's now (script ``WINDOW_OVER``)."""
    TELL_CLOSED = "tell_closed"
    """The match is closed; its players hear ``error`` ``closed``; its keys expire (script ``CLOSE_MATCH``)."""
    PUBLISH_START = "publish_start"
    """Every player's status becomes ``playing`` and the start event (:func:`start_event`) goes out; each
    process sends its players of the match the deal (script ``START``)."""
    PUBLISH_BOARDS = "publish_boards"
    """Open-boards matches: each player's redacted deal, for spectators."""
    ARM_FINALIZE = "arm_finalize"
    """A write that ends a player's game: set the ``finalize`` timer first (:data:`FINALIZE_GRACE_MS`)."""
    PUBLISH_PROGRESS = "publish_progress"
    """The player's record and progress (and ``finished`` when the game ended) to everyone (scripts
    ``COMMIT``, ``STUCK``, ``END_PLAYER``)."""
    END_PLAYING = "end_playing"
    """Every game still playing ends as ``timeout`` at the time limit (script ``END_PLAYER``)."""
    FINALIZE = "finalize"
    """Rank the players, reveal the seed, publish the results (event :attr:`Event.ALL_ENDED`)."""
    DAILY_RECORD = "daily_record"
    """A daily attempt: its entry goes on the day's leaderboard, before the results."""
    RECORD_HISTORY = "record_history"
    """Each named player's game goes into their history (once), before the results, which then carry the
    records the match set and the players' head-to-head."""
    KEEP_RESULTS = "keep_results"
    """Keep the ``results`` frame: it outlives the match's keys."""
    PUBLISH_RESULTS = "publish_results"
    """The match is finished; the ``results`` frame goes out (script ``TRANSITION``)."""
    EXPIRE = "expire"
    """The match's keys expire after ``FTR_RETENTION_S`` (its results stay); its deadline timer goes."""
    CLAIM_NEXT = "claim_next"
    """The next round's code is set once; the player asked for it (script ``CLAIM_NEXT``)."""


SCRIPTED = frozenset({Effect.TAKE_SEAT, Effect.MARK_READY, Effect.OPEN_LOBBY, Effect.PUBLISH_COUNTDOWN,
                      Effect.FREE_KEPT_NAMES, Effect.TELL_CLOSED, Effect.PUBLISH_START, Effect.PUBLISH_PROGRESS,
                      Effect.END_PLAYING, Effect.PUBLISH_RESULTS, Effect.CLAIM_NEXT})
"""The effects a row's store script carries out. Each row has exactly one; the effects after it run only
when the script wrote the change."""


RESTART_STATES = frozenset({State.PLAYING, State.FINISHED})
"""The states a ``restart`` is taken in: the game has started (and may have ended)."""


def restart_refusal(state: State | None, players: int, daily: bool) -> ServiceError | None:
    """Why a ``restart`` of a match in ``state`` with ``players`` people (its bots not counted) is refused, or
    ``None`` when it is taken: one person, not a daily attempt (``daily``), playing or finished. Only alone is
    it fair: the restarter plays a deal they have seen (a bot races from its own view, whatever it saw before).

    Refusals: ``no_restart`` for a race or a daily attempt, ``not_started`` before the start, ``closed``,
    ``no_match`` when its keys are gone."""
    if state is None:
        return ServiceError("no_match", "the match no longer exists")
    if daily:
        return ServiceError("no_restart", "a daily attempt cannot be restarted: one attempt per name, day and "
                                          "variant")
    if players != 1:
        return ServiceError("no_restart", f"restart is only for a game alone: this match has {players} people, "
                                          f"and restarting a race on a deal you have seen would not be fair")
    if state is State.CLOSED:
        return ServiceError("closed", "the match did not start in time and was closed")
    if state not in RESTART_STATES:
        return ServiceError("not_started", "the match has not started yet: restart once you have the deal")
    return None


@dataclass(frozen=True, slots=True)
class Transition:
    """One allowed (``source``, ``event``): the ``target`` state, the ``effects`` in order, and the name of
    the store script (:mod:`server.store.scripts`) that writes it atomically, checking ``source`` again."""

    source: State
    event: Event
    target: State
    effects: tuple[Effect, ...]
    script: str


E = Effect
TRANSITIONS: tuple[Transition, ...] = (
    Transition(State.PREPARING, Event.DEAL_FOUND, State.LOBBY, (E.OPEN_LOBBY, E.PUBLISH_LOBBY, E.CHECK_START),
               "TRANSITION"),
    Transition(State.PREPARING, Event.JOIN, State.PREPARING, (E.TAKE_SEAT, E.PUBLISH_LOBBY), "JOIN"),
    Transition(State.LOBBY, Event.JOIN, State.LOBBY, (E.TAKE_SEAT, E.PUBLISH_LOBBY), "JOIN"),
    Transition(State.PREPARING, Event.READY, State.PREPARING, (E.MARK_READY, E.PUBLISH_LOBBY, E.CHECK_START),
               "READY"),
    Transition(State.LOBBY, Event.READY, State.LOBBY, (E.MARK_READY, E.PUBLISH_LOBBY, E.CHECK_START), "READY"),
    Transition(State.LOBBY, Event.HOST_START, State.COUNTDOWN,
               (E.ARM_START, E.PUBLISH_COUNTDOWN, E.DAILY_STARTED), "TRANSITION"),
    Transition(State.LOBBY, Event.ALL_READY, State.COUNTDOWN,
               (E.ARM_START, E.PUBLISH_COUNTDOWN, E.DAILY_STARTED), "TRANSITION"),
    Transition(State.PREPARING, Event.WINDOW_OVER, State.PREPARING, (E.FREE_KEPT_NAMES, E.CHECK_START),
               "WINDOW_OVER"),
    Transition(State.LOBBY, Event.WINDOW_OVER, State.LOBBY, (E.FREE_KEPT_NAMES, E.CHECK_START), "WINDOW_OVER"),
    Transition(State.PREPARING, Event.CLOSE, State.CLOSED, (E.TELL_CLOSED,), "CLOSE_MATCH"),
    Transition(State.LOBBY, Event.CLOSE, State.CLOSED, (E.TELL_CLOSED,), "CLOSE_MATCH"),
    Transition(State.COUNTDOWN, Event.START, State.PLAYING, (E.PUBLISH_START, E.PUBLISH_BOARDS), "START"),
    Transition(State.PLAYING, Event.COMMIT, State.PLAYING, (E.ARM_FINALIZE, E.PUBLISH_PROGRESS), "COMMIT"),
    Transition(State.PLAYING, Event.STUCK, State.PLAYING, (E.PUBLISH_PROGRESS,), "STUCK"),
    Transition(State.PLAYING, Event.GAME_DEAD, State.PLAYING, (E.ARM_FINALIZE, E.PUBLISH_PROGRESS), "END_PLAYER"),
    Transition(State.PLAYING, Event.DEADLINE, State.PLAYING, (E.END_PLAYING, E.FINALIZE), "END_PLAYER"),
    Transition(State.PLAYING, Event.ALL_ENDED, State.FINISHED,
               (E.DAILY_RECORD, E.RECORD_HISTORY, E.KEEP_RESULTS, E.PUBLISH_RESULTS, E.EXPIRE), "TRANSITION"),
    Transition(State.FINISHED, Event.REMATCH, State.FINISHED, (E.CLAIM_NEXT,), "CLAIM_NEXT"),
)
del E

TABLE: dict[tuple[State, Event], Transition] = {(t.source, t.event): t for t in TRANSITIONS}
""":data:`TRANSITIONS` by (source, event)."""

WAITS: dict[tuple[State, Event], int] = {(State.COUNTDOWN, Event.DEADLINE): 200}
"""Background events that can come too early, and the ms after which they are tried again. A deadline can
fire during the countdown while the start timer, due too, runs in another process."""

LOBBY_STATES = frozenset({State.PREPARING, State.LOBBY})
"""The states in which the lobby is open: joins, readies and lobby events."""


LIVE_STATES: tuple[State, ...] = (State.PREPARING, State.LOBBY, State.COUNTDOWN, State.PLAYING)
"""The states a match is counted in (``ftr_matches``), in the order a match goes through them. ``finished``
and ``closed`` are counted as transitions only (``ftr_match_transitions_total``): their keys expire."""


def state_of(text: str | None) -> State | None:
    """The :class:`State` stored as ``text`` (``None``: the match's keys are gone). Raises ``ValueError``
    for a text that is no state (the store holds only states written by this module's transitions)."""
    return None if text is None else State(text)


def _has_ended(code: str) -> ServiceError:
    return ServiceError("already_started", f"match {code} has ended: its results are at /matches/{code}/results")


def refusal(event: Event, state: State | None, code: str = "", results_kept: bool = False) -> ServiceError:
    """The error a player gets for ``event`` (a player's event: :data:`PLAYER_EVENTS`) when match
    ``code`` is in ``state``, which :data:`TRANSITIONS` does not allow it in.

    ``results_kept``: the match's keys are gone but its results are kept (a ``join`` is told where they
    are). ``join`` refuses ``no_match`` / ``closed`` / ``already_started`` (a finished match says it has
    ended and where its results are); ``ready`` and ``start`` the same, with other wording, and ``start``
    in ``preparing`` ``not_started``; ``rematch`` ``no_match`` / ``not_finished``; a commit ``game_over``.
    Raises ``ValueError`` for an allowed pair or a background event (a bug in the caller).
    """
    if state is not None and (state, event) in TABLE:
        raise ValueError(f"{event} is allowed in {state}")
    if event is Event.JOIN:
        if state is None:
            if results_kept:
                return ServiceError("no_match", f"match {code} has ended and is no longer kept; its results are "
                                                f"at /matches/{code}/results")
            return ServiceError("no_match", f"no match with code {code!r}")
        if state is State.CLOSED:
            return ServiceError("closed", "the match was closed: it did not start in time")
    elif event in (Event.READY, Event.HOST_START):
        if state is None:
            return ServiceError("no_match", "the match no longer exists")
        if state is State.CLOSED:
            return ServiceError("closed", "the match did not start in time and was closed")
        if state is State.PREPARING:  # HOST_START only: READY is allowed there
            return ServiceError("not_started", "the deal is still being prepared; start again in a moment")
    elif event is Event.REMATCH:
        if state is None:
            return ServiceError("no_match", "the match no longer exists")
        return ServiceError("not_finished", "the match has not ended yet: ask for a rematch after the results")
    elif event is Event.COMMIT:
        return ServiceError("game_over", "your game has ended")
    else:
        raise ValueError(f"{event} is the service's own event: it is ignored, not refused")
    if state is State.FINISHED:
        return _has_ended(code)
    return ServiceError("already_started", "the match has already started")


@dataclass(frozen=True, slots=True)
class Wait:
    """A background event that came too early: try it again at ``at_ms``."""

    at_ms: int


def decide(state: State | None, event: Event, now_ms: int = 0, code: str = "") -> Transition | Wait | None:
    """What ``event`` does to a match in ``state`` (of code ``code``) at ``now_ms``.

    Returns the :class:`Transition` of :data:`TRANSITIONS` when it is allowed, a :class:`Wait` for a
    background event that came too early (:data:`WAITS`), and ``None`` for a background event the table
    does not allow (the match moved on: nothing to do). Raises :class:`~server.core.errors.ServiceError`
    (:func:`refusal`) for a player's event the table does not allow.
    """
    if state is not None:
        found = TABLE.get((state, event))
        if found is not None:
            return found
        wait_ms = WAITS.get((state, event))
        if wait_ms is not None:
            return Wait(now_ms + wait_ms)
    if event in PLAYER_EVENTS:
        raise refusal(event, state, code)
    return None


def require(state: State | None, event: Event, code: str = "") -> Transition:
    """:func:`decide` for a player's event: the allowed :class:`Transition`, or the refusal raised."""
    found = decide(state, event, code=code)
    assert isinstance(found, Transition), (state, event)
    return found


def allows(state: State | None, event: Event) -> bool:
    """Whether :data:`TRANSITIONS` allows ``event`` in ``state``."""
    return state is not None and (state, event) in TABLE


# ---------------------------------------------------------------- what the transitions compute


@dataclass(frozen=True, slots=True)
class CountdownPlan:
    """The instants of a countdown: the start (``start_at_ms``), the deadline (0: none), the seconds shown."""

    start_at_ms: int
    deadline_ms: int
    seconds: float


def countdown(now_ms: int, countdown_s: float, time_limit_s: int, untimed_limit_s: int,
              day_end_ms: int = 0) -> CountdownPlan | None:
    """The countdown of a match leaving its lobby at ``now_ms``.

    The start comes ``countdown_s`` later. The deadline comes ``time_limit_s`` after the start; with no time
    limit (0), ``untimed_limit_s`` after it (``FTR_UNTIMED_LIMIT_S``; 0 there too: no deadline). A daily
    attempt starts at once and ends at ``day_end_ms``, the end of its UTC day; ``None`` once that is past.
    """
    if day_end_ms:
        if now_ms >= day_end_ms:
            return None
        return CountdownPlan(now_ms, day_end_ms, 0.0)
    start_at = now_ms + int(countdown_s * 1000)
    limit_s = time_limit_s or untimed_limit_s
    return CountdownPlan(start_at, start_at + limit_s * 1000 if limit_s > 0 else 0, countdown_s)


def should_start(state: State | None, ready: list[bool], wanted: int, round_may_start: bool) -> bool:
    """The start check (:attr:`Effect.CHECK_START`): a match in its ``lobby`` starts its countdown when its
    players (``ready``, one flag each) are all ready and number ``wanted``, or, in a round after the first,
    when ``round_may_start`` (:func:`server.match.rounds.may_start`)."""
    return state is State.LOBBY and bool(ready) and all(ready) and (len(ready) >= wanted or round_may_start)


def start_event(code: str, settings: m.Settings) -> m.Lobby:
    """The frame of the start event (stream kind ``start``, never sent to spectators): the lobby frame in
    state ``playing`` with no players. Each process answers it by sending its players their ``started``."""
    return m.Lobby(match=code, state="playing", players=[], settings=settings, commitment="")


class TimerKind(StrEnum):
    """A match's timers (the sorted set ``timers``, one leased loop runs them)."""

    PREPARE = "prepare"
    CLOSE = "close"
    START = "start"
    DEADLINE = "deadline"
    FINALIZE = "finalize"
    WINDOW = "window"
    BOT = "bot"
    """A match's bots play their due commands (server/match/bots.py), each a ``commit``."""


TIMER_EVENTS: dict[TimerKind, Event] = {
    TimerKind.PREPARE: Event.DEAL_FOUND, TimerKind.CLOSE: Event.CLOSE, TimerKind.START: Event.START,
    TimerKind.DEADLINE: Event.DEADLINE, TimerKind.FINALIZE: Event.ALL_ENDED, TimerKind.WINDOW: Event.WINDOW_OVER,
    TimerKind.BOT: Event.COMMIT,
}
"""The event each timer is."""

TIMER_INSTANTS: dict[TimerKind, str] = {TimerKind.START: "start_at_ms", TimerKind.DEADLINE: "deadline_ms"}
"""Timers whose instant the match keeps (meta field). A concurrent countdown may overwrite the timer with an
earlier instant; it is then put back to the kept one (:func:`fired_early`)."""

PREPARE_RETRY_MS = 500
"""Ms after which the ``prepare`` timer tries the pool again while it is empty."""

FINALIZE_GRACE_MS = 2000
"""Ms after a game's end at which the ``finalize`` timer fires, in case the process that ended the last game
has not published the results by then."""


def fired_early(kind: TimerKind, now_ms: int, kept_ms: int) -> bool:
    """Whether timer ``kind`` fired at ``now_ms`` before the instant its match keeps (``kept_ms``; see
    :data:`TIMER_INSTANTS`): then it is set again to ``kept_ms`` and nothing else happens."""
    return kind in TIMER_INSTANTS and now_ms < kept_ms


def reveals(state: State | None) -> bool:
    """Whether the seed and nonce are public (``GET /matches/{code}``): once the match has finished."""
    return state is State.FINISHED


def boards_public(state: State | None, open_boards: bool, daily: bool) -> bool:
    """Whether spectators may see boards and replays: live when the host opened them, otherwise once the match
    finished; never for a daily attempt (its board is the day's deal: the daily reveal shows it)."""
    return (open_boards or state is State.FINISHED) and not daily


class ResumeStep(StrEnum):
    """What a resumed player is sent after ``joined`` and the lobby, by the match's state."""

    TELL_CLOSED = "tell_closed"
    START_DAILY = "start_daily"
    COUNTDOWN = "countdown"
    GAME = "game"
    RESULTS = "results"


def resume_steps(state: State, daily: bool) -> tuple[ResumeStep, ...]:
    """The :class:`ResumeStep` list for a match in ``state``: ``closed``: the closed error; a ``daily`` attempt
    in its lobby: its countdown starts; ``countdown``: the countdown frame; ``playing``: the game and the
    others' progress; ``finished``: the game, then the results."""
    if state is State.CLOSED:
        return (ResumeStep.TELL_CLOSED,)
    if state is State.LOBBY and daily:
        return (ResumeStep.START_DAILY,)
    if state is State.COUNTDOWN:
        return (ResumeStep.COUNTDOWN,)
    if state is State.PLAYING:
        return (ResumeStep.GAME,)
    if state is State.FINISHED:
        return (ResumeStep.GAME, ResumeStep.RESULTS)
    return ()
