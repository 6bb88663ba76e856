"""A player's game as a value (server/core/player.py): every command proposes its result and changes nothing;
every kind of proposal and every refusal, with the expected values worked out from the engine's own game."""

from __future__ import annotations

import random
import textwrap

import msgspec
import pytest

from protocol import messages as m
from server.core.errors import ServiceError
from server.core.player import (
    Commit,
    CommitStatus,
    EndWrite,
    FollowUp,
    HintWrite,
    MoveLog,
    PlayerGame,
    PlayerStatus,
    Proposal,
    Reply,
    Stored,
    StuckWrite,
    commit_refusal,
    is_retry,
    needs_dead_check,
    new_game,
    replayed,
    shown_status,
)
from server.engine import Game, Variant, find_variant, format_position, parse_position
from server.engine.deal import deal
from server.engine.rules import stock_exhausted
from server.views import legal_message, view_message

CLASSIC = find_variant("classic")
START_MS = 1_000_000


def settings(**changes: object) -> m.Settings:
    base = m.Settings("classic", True, 2, 600, False, "safe", False)
    return msgspec.structs.replace(base, **changes)


def text(position: str) -> str:
    return textwrap.dedent(position).strip()


SEEDED = format_position(deal("core test", CLASSIC))

# One command from the end: 1-f wins (RULES.md section 5).
ONE_TO_WIN = text("""
    Foundations: KC KC KD KD KH KH KS QS
    Stock:
    Waste:
    Redeals left: 0
    1: KS
    2:
    3:
    4:
    5:
    6:
    7:
    8:
    9:
    10:
""")

# JS (column 9) onto QS (column 10) leaves no command at all: every top card is wanted by no other top, no
# empty column, nothing can go up, and with undo off nothing takes it back.
LAST_MOVE_DEAD = text("""
    Foundations: KC KC KD KD JH JH 5S 5S
    Stock:
    Waste:
    Redeals left: 0
    1: 6S KS
    2: 6S KS
    3: QH KH
    4: QH KH
    5: 8S 9S
    6: 8S 9S
    7: TS 7S
    8: TS 7S
    9: QS JS JS
    10: QS
""")

# Only QS can move, between the two KS, for ever (RULES.md section 5: dead, but only the solver can tell).
SHUTTLE = text("""
    Foundations: JC JC JD JD JH JH 8S 8S
    Stock:
    Waste:
    Redeals left: 0
    1: 9S KS QS
    2: 9S KS
    3: QC KC
    4: QC KC
    5: QD KD
    6: QD KD
    7: QH KH
    8: QH KH
    9: JS TS
    10: QS JS TS
""")


def player(deal_text: str = SEEDED, **changes: object) -> PlayerGame:
    match_settings = settings(**{k: v for k, v in changes.items() if k in ("undo", "autoplay", "hints",
                                                                         "open_boards")})
    game = new_game(deal_text, match_settings)
    fields = {k: v for k, v in changes.items() if k not in ("undo", "autoplay", "hints", "open_boards")}
    return msgspec.structs.replace(PlayerGame("ann", game, "playing", 0, MoveLog(), START_MS, START_MS + 600_000,
                              hints_allowed=match_settings.hints, open_boards=match_settings.open_boards), **fields)


def first_legal(value: PlayerGame) -> str:
    return str(value.game.legal_moves()[0].command)


def frozen_state(value: PlayerGame) -> tuple[object, ...]:
    game = value.game
    return (game.position, game.moves, game.undos, list(game.history), value.status, value.last_seq,
            value.commands, value.hints, value.last_found_ms)


# ---------------------------------------------------------------- play


def test_play_proposes_the_command_and_changes_nothing() -> None:
    before = player()
    state = frozen_state(before)
    command = first_legal(before)
    proposal = before.propose_play(1, command, START_MS + 1234)
    assert isinstance(proposal, Proposal)
    assert frozen_state(before) == state, "proposing changed the value"
    expected = Game(parse_position(SEEDED, CLASSIC), CLASSIC, autoplay=False, undo="safe")
    expected.play(command)
    nxt = proposal.next
    assert (nxt.game.position, nxt.game.moves, nxt.last_seq, nxt.status) == (expected.position, 1, 1, "playing")
    assert nxt.commands == ((command, 1234),)
    found = expected.position.foundation_cards
    assert proposal.write == Commit(1, f"{command} 1234", Stored(1, 0, 0, found, "playing", 1234,
                                                                  1234 if found else 0), False,
                                    (m.Progress("ann", 1, found, "playing", 1234),))
    assert proposal.reply == m.PositionReply(1, command, view_message(expected.position),
                                             legal_message(expected.legal_moves()), 1, 0, found, "playing", 1234)
    assert proposal.follow_up is FollowUp.NONE


def test_a_refused_commit_leaves_the_value_that_plays_the_same_command_again() -> None:
    """No rollback: the value that proposed is the one that stays when the write fails."""
    before = player()
    command = first_legal(before)
    first = before.propose_play(1, command, START_MS + 10)
    again = before.propose_play(1, command, START_MS + 10)
    assert isinstance(first, Proposal) and isinstance(again, Proposal)
    assert first.write == again.write and first.reply == again.reply


@pytest.mark.parametrize(("command", "code"), [("9-9", "illegal"), ("zz", "malformed"), ("u", "undo_refused")])
def test_a_refused_command_is_rejected_and_uses_up_nothing(command: str, code: str) -> None:
    before = player()
    state = frozen_state(before)
    answer = before.propose_play(1, command, START_MS)
    assert isinstance(answer, Reply) and isinstance(answer.message, m.Rejected)
    assert (answer.message.seq, answer.message.command, answer.message.code) == (1, command, code)
    assert frozen_state(before) == state


def test_a_retry_is_acknowledged_as_stored() -> None:
    value = player()
    commands = []
    for seq in (1, 2):
        command = first_legal(value)
        proposal = value.propose_play(seq, command, START_MS + seq * 100)
        assert isinstance(proposal, Proposal)
        value, last_reply = proposal.next, proposal.reply
        commands.append(command)
    again = value.propose_play(2, "anything", START_MS + 9999)
    assert isinstance(again, Reply) and again.message == last_reply
    older = value.propose_play(1, "anything", START_MS + 9999)
    then = Game(parse_position(SEEDED, CLASSIC), CLASSIC, autoplay=False, undo="safe")
    then.play(commands[0])
    assert isinstance(older, Reply)
    assert older.message == m.PositionReply(1, commands[0], view_message(then.position), [], 1, 0,
                                            then.position.foundation_cards, "playing", 100)


@pytest.mark.parametrize(("seq", "code"), [(0, "malformed"), (-3, "malformed"), (2, "seq_gap"), (9, "seq_gap")])
def test_a_bad_seq_is_refused(seq: int, code: str) -> None:
    with pytest.raises(ServiceError) as caught:
        player().propose_play(seq, "s", START_MS)
    assert caught.value.code == code
    if code == "seq_gap":
        assert "must be seq 1" in caught.value.message


def test_no_play_after_the_time_limit_or_the_games_end() -> None:
    with pytest.raises(ServiceError, match="time limit") as caught:
        player().propose_play(1, "s", START_MS + 600_000)
    assert caught.value.code == "game_over"
    with pytest.raises(ServiceError, match="resigned") as caught:
        player(status="resigned").propose_play(1, "s", START_MS)
    assert caught.value.code == "game_over"


def test_the_winning_command_ends_the_game() -> None:
    proposal = player(ONE_TO_WIN).propose_play(1, "1-f", START_MS + 500)
    assert isinstance(proposal, Proposal) and isinstance(proposal.write, Commit)
    assert proposal.next.status == "won" and proposal.write.ends
    assert proposal.write.events == (m.Progress("ann", 1, 104, "won", 500), m.Finished("ann", "won", 500, 1, 104))
    assert proposal.write.record == Stored(1, 0, 0, 104, "won", 500, 500)
    assert isinstance(proposal.reply, m.PositionReply) and proposal.reply.legal == [] and proposal.reply.status == "won"
    assert proposal.follow_up is FollowUp.END_MATCH_IF_LAST


def test_open_boards_send_the_redacted_board_to_spectators() -> None:
    proposal = player(open_boards=True).propose_play(1, "s", START_MS + 7)
    assert isinstance(proposal, Proposal) and isinstance(proposal.write, Commit)
    position = proposal.next.game.position
    assert proposal.write.boards == (m.Board("ann", 1, position.foundation_cards, "playing", 7,
                                             view_message(position)),)
    closed = player().propose_play(1, "s", START_MS + 7)
    assert isinstance(closed, Proposal) and isinstance(closed.write, Commit) and closed.write.boards == ()


def test_a_play_that_leaves_no_command_ends_the_game_as_dead() -> None:
    proposal = player(LAST_MOVE_DEAD, undo="none").propose_play(1, "9-10", START_MS)
    assert isinstance(proposal, Proposal)
    assert proposal.next.game.legal_moves() == []
    assert proposal.follow_up is FollowUp.END_DEAD


def test_a_play_into_a_shuttle_asks_the_solver() -> None:
    value = player(SHUTTLE, undo="none")
    proposal = value.propose_play(1, "1-2", START_MS)
    assert isinstance(proposal, Proposal)
    assert [str(m.command) for m in proposal.next.game.legal_moves()] == ["2-1"]
    assert proposal.follow_up is FollowUp.CHECK_DEAD
    assert needs_dead_check(proposal.next.game, proposal.next.game.legal_moves())
    assert not needs_dead_check(value.game, [])  # no command at all: dead by itself, no solver needed


def test_a_play_with_stock_left_needs_no_dead_check() -> None:
    proposal = player().propose_play(1, "s", START_MS)
    assert isinstance(proposal, Proposal) and proposal.follow_up is FollowUp.NONE
    assert not needs_dead_check(proposal.next.game, proposal.next.game.legal_moves())


@pytest.mark.parametrize("variant", ["classic", "relaxed", "lucas", "josephine", "sixty_thieves", "down"])
def test_the_dead_check_reads_the_legal_list_as_a_scan_of_every_move_would(variant: str) -> None:
    """``needs_dead_check`` looks at the first legal move only (the list's order puts the moves to a foundation
    first); a scan of every move, the rule as RULES.md section 5 words it (no move to a foundation and no finish),
    agrees at every position of random games played past the last draw (undo on, auto-play on and off; "down": a
    variant whose cards may come down from the foundations, listed after the moves up)."""
    rng = random.Random(f"dead check {variant}")
    rules = (Variant("down", foundation_to_column=True, redeals=1) if variant == "down"
             else find_variant(variant))
    asked = checked = 0
    for g in range(30):
        game = Game(deal(str(rng.randrange(10**6)), rules), rules, autoplay=g % 2 == 0, undo="full")
        for _ in range(400):
            legal = game.legal_moves()
            if not legal:
                break
            expected = (stock_exhausted(game.position, rules) and not any(game.position.hidden)
                        and not any(move.command.kind == "finish" or (move.command.target is not None
                                                                        and move.command.target.kind == "foundation")
                                    for move in legal))
            assert needs_dead_check(game, legal) is expected, (game.position, legal)
            asked += expected
            checked += stock_exhausted(game.position, rules)
            talon = [move for move in legal if move.command.kind in ("draw", "redeal")]
            game.play((talon[0] if talon and rng.random() < 0.3 else rng.choice(legal)).command)
    assert asked > 20 and checked > 200, (asked, checked)


# ---------------------------------------------------------------- resign


def test_resign_proposes_the_end_of_the_game() -> None:
    value = player()
    proposal = value.propose_resign(1, START_MS + 4000)
    assert isinstance(proposal, Proposal) and value.status == "playing"
    found = value.game.position.foundation_cards
    assert proposal.write == Commit(1, "", Stored(0, 0, 0, found, "resigned", 4000, 0), True,
                                    (m.Finished("ann", "resigned", 4000, 0, found),))
    assert proposal.next.status == "resigned" and proposal.next.last_seq == 1
    assert proposal.reply == m.PositionReply(1, "resign", view_message(value.game.position), [], 0, 0, found,
                                             "resigned", 4000)
    assert proposal.follow_up is FollowUp.END_MATCH_IF_LAST


def test_a_retried_resign_is_acknowledged_and_a_late_one_refused() -> None:
    proposal = player().propose_resign(1, START_MS + 4000)
    assert isinstance(proposal, Proposal)
    again = proposal.next.propose_resign(1, START_MS + 5000)
    assert isinstance(again, Reply) and isinstance(again.message, m.PositionReply)
    assert (again.message.command, again.message.status, again.message.time_ms) == ("resign", "resigned", 5000)
    with pytest.raises(ServiceError) as caught:
        proposal.next.propose_resign(2, START_MS + 5000)
    assert caught.value.code == "game_over"


# ---------------------------------------------------------------- hint


def test_hints_are_refused_unless_the_match_allows_them() -> None:
    with pytest.raises(ServiceError) as caught:
        player().propose_hint(1)
    assert caught.value.code == "no_hints"
    with pytest.raises(ServiceError) as caught:
        player(hints=True, status="won").propose_hint(1)
    assert caught.value.code == "game_over"


def test_a_hint_is_counted_once_and_a_retry_answered_the_same() -> None:
    value = player(hints=True)
    proposal = value.propose_hint(1)
    assert isinstance(proposal, Proposal) and isinstance(proposal.reply, m.Suggestion)
    suggestion = proposal.reply.command
    assert suggestion in {str(move.command) for move in value.game.legal_moves()}
    assert proposal.write == HintWrite(1, suggestion) and proposal.reply == m.Suggestion(1, suggestion, 1)
    assert value.hints == 0 and proposal.next.hints == 1
    again = proposal.next.propose_hint(1)
    assert again == Reply(m.Suggestion(1, suggestion, 1))
    with pytest.raises(ServiceError) as caught:
        proposal.next.propose_hint(3)
    assert caught.value.code == "seq_gap" and "next hint must be seq 2" in caught.value.message


def test_a_planned_hint_is_the_answer_and_a_retry_is_not_planned_again() -> None:
    value = player(hints=True)
    assert value.needs_hint(1)
    planned = value.propose_hint(1, "s")  # the caller's planner chose the draw
    assert isinstance(planned, Proposal) and planned.write == HintWrite(1, "s")
    assert planned.reply == m.Suggestion(1, "s", 1)
    assert not planned.next.needs_hint(1)
    assert planned.next.propose_hint(1, "1-2") == Reply(m.Suggestion(1, "s", 1))  # a retry: the first answer


# ---------------------------------------------------------------- a dead game's end


def test_a_dead_game_with_an_undo_left_is_stuck_for_everyone_and_goes_on() -> None:
    value = player(SHUTTLE, undo="full")
    moved = value.propose_play(1, "1-2", START_MS + 10)
    assert isinstance(moved, Proposal)
    told = moved.next.propose_dead_end(1, START_MS + 300)
    assert isinstance(told, Proposal) and isinstance(told.reply, m.PositionReply)
    assert told.reply.status == "dead" and told.reply.seq == 1 and told.reply.time_ms == 300
    assert "u" in {lm.command for lm in told.reply.legal}
    found = moved.next.game.position.foundation_cards
    # The stuck state is written and published: a progress with status dead, for the other players and spectators.
    assert told.write == StuckWrite(1, m.Progress("ann", 1, found, "dead", 300, 0))
    assert told.follow_up is FollowUp.NONE
    stuck = told.next
    assert (stuck.stuck, stuck.status, stuck.shown_status) == (True, "playing", "dead")
    assert not moved.next.stuck and moved.next.shown_status == "playing"  # the value before is unchanged
    assert stuck.started(0).status == "dead"  # a resumed player is told so too
    assert stuck.propose_dead_end(1, START_MS + 400) is None  # stuck already: nothing more to write


@pytest.mark.parametrize("status", list(PlayerStatus))
@pytest.mark.parametrize("stuck", [False, True])
def test_one_stuck_rule_for_the_game_and_the_stored_record(status: PlayerStatus, stuck: bool) -> None:
    from server.store.records import PlayerRecord

    # Written out: only a game that still plays is shown dead while stuck.
    expected = "dead" if (stuck and status == "playing") else status.value
    assert shown_status(status, stuck) == expected
    game = msgspec.structs.replace(player(SHUTTLE), status=status, stuck=stuck)
    record = PlayerRecord.from_hash({b"name": b"ann", b"status": status.value.encode(), b"stuck": b"1" if stuck else b"0"})
    assert (game.shown_status, record.shown_status) == (expected, expected)
    assert isinstance(record.status, PlayerStatus) and isinstance(record.shown_status, PlayerStatus)


def test_the_next_command_of_a_stuck_player_is_playing_again_and_counts_its_undo() -> None:
    value = player(SHUTTLE, undo="full")
    moved = value.propose_play(1, "1-2", START_MS + 10)
    assert isinstance(moved, Proposal)
    stuck = moved.next.propose_dead_end(1, START_MS + 300)
    assert isinstance(stuck, Proposal)
    undone = stuck.next.propose_play(2, "u", START_MS + 900)
    assert isinstance(undone, Proposal) and isinstance(undone.write, Commit)
    expected = Game(value.game.deal, CLASSIC, autoplay=False, undo="full")
    expected.play("1-2")
    expected.play("u")
    assert expected.undos == 1
    assert undone.write.events == (m.Progress("ann", expected.moves, expected.position.foundation_cards, "playing",
                                              900, 1),)
    assert undone.write.record.undos == 1 and undone.write.record.status == "playing"
    assert not undone.next.stuck and undone.next.shown_status == "playing"
    assert isinstance(undone.reply, m.PositionReply) and undone.reply.status == "playing"
    # A resign of a stuck player ends the game as resigned (what a restart does), not dead.
    resigned = stuck.next.propose_resign(2, START_MS + 950)
    assert isinstance(resigned, Proposal) and resigned.next.shown_status == "resigned"
    assert resigned.write.events == (m.Finished("ann", "resigned", 950, 1, moved.next.game.position.foundation_cards),)


def test_a_dead_game_without_an_undo_ends() -> None:
    value = player(SHUTTLE, undo="none")
    moved = value.propose_play(1, "1-2", START_MS + 10)
    assert isinstance(moved, Proposal)
    ended = moved.next.propose_dead_end(1, START_MS + 300)
    assert isinstance(ended, Proposal)
    found = moved.next.game.position.foundation_cards
    assert ended.write == EndWrite("dead", 300, m.Finished("ann", "dead", 300, 1, found))
    assert ended.next.status == "dead" and moved.next.status == "playing"
    assert isinstance(ended.reply, m.PositionReply) and ended.reply.status == "dead" and ended.reply.legal == []
    assert ended.follow_up is FollowUp.END_MATCH_IF_LAST


def test_a_dead_verdict_on_an_older_position_does_nothing() -> None:
    value = player(SHUTTLE, undo="none")
    assert value.propose_dead_end(5, START_MS) is None  # the player moved on meanwhile
    assert player(SHUTTLE, undo="none", status="resigned").propose_dead_end(0, START_MS) is None


def test_a_game_the_server_ended() -> None:
    value = player()
    assert value.ended("timeout").status == "timeout" and value.status == "playing"


# ---------------------------------------------------------------- helpers


def test_retry_numbering() -> None:
    assert is_retry(1, 1, "hint") and is_retry(1, 5, "hint") and not is_retry(6, 5, "hint")


@pytest.mark.parametrize(("result", "code"), [(CommitStatus.STALE, "replaced"), (CommitStatus.SEQ_GAP, "seq_gap"),
                                              (CommitStatus.GONE, "no_match"), (CommitStatus.GAME_OVER, "game_over"),
                                              (CommitStatus.NOT_PLAYING, "game_over")])
def test_a_refused_commit(result: CommitStatus, code: str) -> None:
    error = commit_refusal(result, 4, 2)
    assert error is not None and error.code == code
    assert commit_refusal(CommitStatus.DUP, 4, 2) is None


def test_a_game_is_replayed_from_its_deal_and_log() -> None:
    game = Game(parse_position(SEEDED, CLASSIC), CLASSIC, autoplay=True, undo="full")
    commands = []
    for _ in range(5):
        command = str(game.legal_moves()[0].command)
        game.play(command)
        commands.append((command, 0))
    again = replayed(SEEDED, settings(autoplay=True, undo="full"), commands)
    assert (again.position, again.moves, again.undos) == (game.position, game.moves, game.undos)


def test_the_started_frame() -> None:
    value = player()
    assert value.started(0) == m.Started(START_MS, START_MS + 600_000, view_message(value.game.position),
                                         legal_message(value.game.legal_moves()), 0, 0, "playing", 0, 0)


def test_a_move_log_made_from_another_leaves_it_as_it_was() -> None:
    base = MoveLog([("s", 10)])
    stored = base.appended(("1-2", 20))
    refused = base.appended(("3-4", 30))  # made from the same log: the entry of the one before is not seen
    assert list(base) == [("s", 10)] and len(base) == 1
    assert list(stored) == [("s", 10), ("1-2", 20)] and stored[1] == ("1-2", 20) and stored[-1] == ("1-2", 20)
    assert list(refused) == [("s", 10), ("3-4", 30)]
    assert list(stored.appended(("u", 40))) == [("s", 10), ("1-2", 20), ("u", 40)]
    assert list(refused) == [("s", 10), ("3-4", 30)] and list(stored) == [("s", 10), ("1-2", 20)]
    assert stored == (("s", 10), ("1-2", 20)) and stored != base
    with pytest.raises(IndexError):
        base[1]
    with pytest.raises(IndexError):
        base[-2]
