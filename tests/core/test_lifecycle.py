"""The match lifecycle table (server/core/lifecycle.py), walked the way h11's state-machine tests walk theirs:
every allowed (state, event) leads where it should, every other one is refused with the error a player gets
(or, for the service's own events, ignored). That the store's scripts guard the same source states is run on a real
Redis in tests/integration/test_store_scripts.py."""

from __future__ import annotations

import itertools

import pytest

from protocol import messages as m
from server.core.errors import ServiceError
from server.core.lifecycle import (
    LOBBY_STATES,
    PLAYER_EVENTS,
    SCRIPTED,
    TABLE,
    TIMER_EVENTS,
    TRANSITIONS,
    WAITS,
    CountdownPlan,
    Effect,
    Event,
    ResumeStep,
    State,
    TimerKind,
    Transition,
    Wait,
    allows,
    boards_public,
    countdown,
    decide,
    fired_early,
    refusal,
    require,
    restart_refusal,
    resume_steps,
    reveals,
    should_start,
    start_event,
    state_of,
)

S, E = State, Event

# Written out from the code as it behaves (the Lua scripts JOIN, READY, START, COMMIT, STUCK, END_PLAYER, CLOSE_MATCH,
# CLAIM_NEXT and the service's checks), not derived from the table under test.
EXPECTED_TARGETS = {
    (S.PREPARING, E.DEAL_FOUND): S.LOBBY,
    (S.PREPARING, E.JOIN): S.PREPARING, (S.LOBBY, E.JOIN): S.LOBBY,
    (S.PREPARING, E.READY): S.PREPARING, (S.LOBBY, E.READY): S.LOBBY,
    (S.LOBBY, E.HOST_START): S.COUNTDOWN, (S.LOBBY, E.ALL_READY): S.COUNTDOWN,
    (S.PREPARING, E.WINDOW_OVER): S.PREPARING, (S.LOBBY, E.WINDOW_OVER): S.LOBBY,
    (S.PREPARING, E.CLOSE): S.CLOSED, (S.LOBBY, E.CLOSE): S.CLOSED,
    (S.COUNTDOWN, E.START): S.PLAYING,
    (S.PLAYING, E.COMMIT): S.PLAYING, (S.PLAYING, E.DEADLINE): S.PLAYING,
    (S.PLAYING, E.STUCK): S.PLAYING, (S.PLAYING, E.GAME_DEAD): S.PLAYING,
    (S.PLAYING, E.ALL_ENDED): S.FINISHED,
    (S.FINISHED, E.REMATCH): S.FINISHED,
}

EXPECTED_REFUSALS: dict[tuple[Event, State | None], str] = {}
for _state in (None, S.CLOSED, S.COUNTDOWN, S.PLAYING, S.FINISHED):
    EXPECTED_REFUSALS[(E.JOIN, _state)] = EXPECTED_REFUSALS[(E.READY, _state)] = {
        None: "no_match", S.CLOSED: "closed"}.get(_state, "already_started")
for _state in (None, S.PREPARING, S.CLOSED, S.COUNTDOWN, S.PLAYING, S.FINISHED):
    EXPECTED_REFUSALS[(E.HOST_START, _state)] = {
        None: "no_match", S.CLOSED: "closed", S.PREPARING: "not_started"}.get(_state, "already_started")
for _state in (None, S.PREPARING, S.LOBBY, S.COUNTDOWN, S.PLAYING, S.CLOSED):
    EXPECTED_REFUSALS[(E.REMATCH, _state)] = "no_match" if _state is None else "not_finished"
for _state in (None, S.PREPARING, S.LOBBY, S.COUNTDOWN, S.FINISHED, S.CLOSED):
    EXPECTED_REFUSALS[(E.COMMIT, _state)] = "game_over"

STATES: list[State | None] = [None, *State]


def test_the_table_is_the_expected_one() -> None:
    assert {(t.source, t.event): t.target for t in TRANSITIONS} == EXPECTED_TARGETS
    assert len(TABLE) == len(TRANSITIONS), "a (state, event) appears twice"


@pytest.mark.parametrize(("state", "event"), sorted(EXPECTED_TARGETS), ids=lambda v: str(v))
def test_every_allowed_transition(state: State, event: Event) -> None:
    found = decide(state, event, now_ms=1000, code="ABC")
    assert isinstance(found, Transition)
    assert (found.source, found.event, found.target) == (state, event, EXPECTED_TARGETS[(state, event)])
    assert allows(state, event)
    if event in PLAYER_EVENTS:
        assert require(state, event) is found
    with pytest.raises(ValueError):
        refusal(event, state)


@pytest.mark.parametrize(("event", "state"), sorted(EXPECTED_REFUSALS, key=str), ids=lambda v: str(v))
def test_every_refusal_of_a_players_event(event: Event, state: State | None) -> None:
    with pytest.raises(ServiceError) as caught:
        decide(state, event, code="QX7K")
    assert caught.value.code == EXPECTED_REFUSALS[(event, state)]
    assert not allows(state, event)
    if state is S.FINISHED and event is not E.COMMIT:
        assert "/matches/QX7K/results" in caught.value.message  # an ended match says where its results are


def test_every_players_event_is_allowed_or_refused_in_every_state() -> None:
    for event, state in itertools.product(PLAYER_EVENTS, STATES):
        assert ((state, event) in EXPECTED_TARGETS) != ((event, state) in EXPECTED_REFUSALS), (event, state)


def test_a_join_of_an_expired_match_whose_results_are_kept_says_where_they_are() -> None:
    error = refusal(E.JOIN, None, "QX7K", results_kept=True)
    assert error.code == "no_match" and "no longer kept" in error.message and "/matches/QX7K/results" in error.message
    assert "no longer kept" not in refusal(E.JOIN, None, "QX7K").message


@pytest.mark.parametrize(("event", "state"),
                         [(e, s) for e, s in itertools.product(Event, STATES)
                          if e not in PLAYER_EVENTS and (s, e) not in EXPECTED_TARGETS],
                         ids=lambda v: str(v))
def test_the_services_own_events_are_ignored_once_the_match_moved_on(event: Event, state: State | None) -> None:
    found = decide(state, event, now_ms=5000)
    if (state, event) == (S.COUNTDOWN, E.DEADLINE):
        assert found == Wait(5200)  # the start timer, due too, runs in another process: try again soon
    else:
        assert found is None
    with pytest.raises(ValueError):
        refusal(event, state)


def test_only_the_deadline_during_a_countdown_waits() -> None:
    assert set(WAITS) == {(S.COUNTDOWN, E.DEADLINE)}


def test_states_are_read_from_the_store_and_nothing_else() -> None:
    assert state_of(None) is None
    assert [state_of(s.value) for s in State] == list(State)
    with pytest.raises(ValueError):
        state_of("started")


def test_lobby_states() -> None:
    assert LOBBY_STATES == {s for s in State if allows(s, E.JOIN)}


def test_effects_of_the_start_and_the_end() -> None:
    assert TABLE[(S.LOBBY, E.HOST_START)].effects == (Effect.ARM_START, Effect.PUBLISH_COUNTDOWN,
                                                      Effect.DAILY_STARTED)
    assert TABLE[(S.LOBBY, E.ALL_READY)].effects == TABLE[(S.LOBBY, E.HOST_START)].effects
    assert TABLE[(S.COUNTDOWN, E.START)].effects[0] is Effect.PUBLISH_START
    assert TABLE[(S.PLAYING, E.ALL_ENDED)].effects == (Effect.DAILY_RECORD, Effect.RECORD_HISTORY,
                                                       Effect.KEEP_RESULTS, Effect.PUBLISH_RESULTS, Effect.EXPIRE)
    # A write that can end a game arms the finalize timer before it; the stuck mark ends nothing.
    assert TABLE[(S.PLAYING, E.COMMIT)].effects == (Effect.ARM_FINALIZE, Effect.PUBLISH_PROGRESS)
    assert TABLE[(S.PLAYING, E.GAME_DEAD)].effects == (Effect.ARM_FINALIZE, Effect.PUBLISH_PROGRESS)
    assert TABLE[(S.PLAYING, E.STUCK)].effects == (Effect.PUBLISH_PROGRESS,)
    assert Effect.CHECK_START in TABLE[(S.PREPARING, E.DEAL_FOUND)].effects
    assert Effect.CHECK_START in TABLE[(S.LOBBY, E.READY)].effects
    assert Effect.CHECK_START not in TABLE[(S.LOBBY, E.JOIN)].effects  # a join is not ready yet


# Each script's rows, written out from server/store/scripts/: the effect of each row that script carries out.
SCRIPT_EFFECTS = {
    "JOIN": {Effect.TAKE_SEAT}, "READY": {Effect.MARK_READY},
    "TRANSITION": {Effect.OPEN_LOBBY, Effect.PUBLISH_COUNTDOWN, Effect.PUBLISH_RESULTS},
    "WINDOW_OVER": {Effect.FREE_KEPT_NAMES}, "CLOSE_MATCH": {Effect.TELL_CLOSED}, "START": {Effect.PUBLISH_START},
    "COMMIT": {Effect.PUBLISH_PROGRESS}, "STUCK": {Effect.PUBLISH_PROGRESS},
    "END_PLAYER": {Effect.PUBLISH_PROGRESS, Effect.END_PLAYING}, "CLAIM_NEXT": {Effect.CLAIM_NEXT},
}


@pytest.mark.parametrize("row", TRANSITIONS, ids=lambda t: f"{t.source.value}-{t.event.value}")
def test_each_row_has_one_write_and_it_is_its_scripts(row: Transition) -> None:
    scripted = [e for e in row.effects if e in SCRIPTED]
    assert len(scripted) == 1, row
    assert scripted[0] in SCRIPT_EFFECTS[row.script], row
    assert len(set(row.effects)) == len(row.effects), "an effect listed twice"


def test_every_effect_is_in_some_row() -> None:
    assert {e for t in TRANSITIONS for e in t.effects} == set(Effect)
    assert set().union(*SCRIPT_EFFECTS.values()) == SCRIPTED


# ---------------------------------------------------------------- countdown arithmetic


def test_countdown_of_a_timed_match() -> None:
    assert countdown(10_000, 3.0, 60, 86_400) == CountdownPlan(13_000, 73_000, 3.0)


def test_countdown_without_a_time_limit_still_ends_after_the_untimed_limit() -> None:
    assert countdown(10_000, 0.5, 0, 100) == CountdownPlan(10_500, 110_500, 0.5)
    assert countdown(10_000, 0.5, 0, 0) == CountdownPlan(10_500, 0, 0.5)  # FTR_UNTIMED_LIMIT_S 0: none


def test_countdown_of_a_daily_attempt_starts_now_and_ends_with_its_day() -> None:
    assert countdown(10_000, 3.0, 1800, 86_400, day_end_ms=50_000) == CountdownPlan(10_000, 50_000, 0.0)
    assert countdown(50_000, 3.0, 1800, 86_400, day_end_ms=50_000) is None
    assert countdown(49_999, 3.0, 1800, 86_400, day_end_ms=50_000) == CountdownPlan(49_999, 50_000, 0.0)


@pytest.mark.parametrize(("state", "ready", "wanted", "may", "starts"), [
    (S.LOBBY, [True, True], 2, False, True),
    (S.LOBBY, [True, False], 2, False, False),
    (S.LOBBY, [True], 2, False, False),
    (S.LOBBY, [True], 2, True, True),  # a round after the first, its window over (or all of before in)
    (S.LOBBY, [], 2, True, False),
    (S.PREPARING, [True, True], 2, False, False),  # no deal yet
    (S.COUNTDOWN, [True, True], 2, False, False),
    (None, [True], 1, False, False),
])
def test_the_start_check(state: State | None, ready: list[bool], wanted: int, may: bool, starts: bool) -> None:
    assert should_start(state, ready, wanted, may) is starts


def test_the_start_event_is_the_lobby_frame_clients_read() -> None:
    settings = m.Settings("classic", True, 2, 60, True, "safe", False)
    assert start_event("ABCD", settings) == m.Lobby("ABCD", "playing", [], settings, "")


def test_every_timer_is_an_event_of_the_table() -> None:
    assert set(TIMER_EVENTS) == set(TimerKind)
    assert {e for e in TIMER_EVENTS.values()} <= {t.event for t in TRANSITIONS}


@pytest.mark.parametrize(("kind", "now", "kept", "early"), [
    (TimerKind.START, 999, 1000, True), (TimerKind.START, 1000, 1000, False),
    (TimerKind.DEADLINE, 10, 11, True), (TimerKind.DEADLINE, 12, 11, False),
    (TimerKind.FINALIZE, 0, 1000, False), (TimerKind.CLOSE, 0, 1000, False),
])
def test_a_timer_that_fired_before_its_kept_instant(kind: TimerKind, now: int, kept: int, early: bool) -> None:
    assert fired_early(kind, now, kept) is early


def test_what_is_public_by_state() -> None:
    assert [s for s in State if reveals(s)] == [S.FINISHED]
    assert not reveals(None)
    assert boards_public(S.PLAYING, True, False) and not boards_public(S.PLAYING, False, False)
    assert boards_public(S.FINISHED, False, False)
    assert not boards_public(S.FINISHED, True, True)  # a daily attempt's board is the day's deal


@pytest.mark.parametrize(("state", "daily", "steps"), [
    (S.CLOSED, False, (ResumeStep.TELL_CLOSED,)),
    (S.LOBBY, True, (ResumeStep.START_DAILY,)),
    (S.LOBBY, False, ()),
    (S.PREPARING, False, ()),
    (S.COUNTDOWN, False, (ResumeStep.COUNTDOWN,)),
    (S.PLAYING, False, (ResumeStep.GAME,)),
    (S.FINISHED, True, (ResumeStep.GAME, ResumeStep.RESULTS)),
])
def test_what_a_resumed_player_is_sent(state: State, daily: bool, steps: tuple[ResumeStep, ...]) -> None:
    assert resume_steps(state, daily) == steps


# ---------------------------------------------------------------- restart


def test_a_restart_is_taken_only_alone_outside_the_daily_once_the_game_has_started() -> None:
    taken = {(state, players, daily) for state in State for players in (1, 2, 3) for daily in (False, True)
             if restart_refusal(state, players, daily) is None}
    assert taken == {(State.PLAYING, 1, False), (State.FINISHED, 1, False)}


@pytest.mark.parametrize(("state", "players", "daily", "code"), [
    (State.PLAYING, 2, False, "no_restart"),
    (State.FINISHED, 4, False, "no_restart"),
    (State.PLAYING, 1, True, "no_restart"),
    (State.FINISHED, 1, True, "no_restart"),
    (State.LOBBY, 1, False, "not_started"),
    (State.COUNTDOWN, 1, False, "not_started"),
    (State.PREPARING, 1, False, "not_started"),
    (State.CLOSED, 1, False, "closed"),
    (None, 1, False, "no_match"),
])
def test_a_refused_restart_says_why(state: State | None, players: int, daily: bool, code: str) -> None:
    error = restart_refusal(state, players, daily)
    assert isinstance(error, ServiceError) and error.code == code and code in m.ERROR_CODES
    if players > 1:
        assert f"{players} people" in error.message and "fair" in error.message
