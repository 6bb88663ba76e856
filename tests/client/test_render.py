"""The race screen fits 80x24, honours NO_COLOR, and the plain layout is the notation."""

from __future__ import annotations

import re

import pytest
from rich.text import Text

from client_cli.render import card_label, plain, plain_view, screen, to_ansi, wrap
from client_cli.state import RaceState
from protocol import messages as m
from server.engine import Game, deal, find_variant
from server.views import legal_message, view_message

from .conftest import SEED, VARIANT, solution

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def playing_state(moves: int = 100, variant: str = VARIANT, seed: str = SEED) -> RaceState:
    v = find_variant(variant)
    game = Game(deal(seed, v), v)
    for command in (solution() if variant == VARIANT and seed == SEED else [])[:moves]:
        game.play(command)
    state = RaceState(server="http://localhost:8000", code="abcDEF1234", name="alice", connected=True)
    state.apply(m.Joined("abcDEF1234", "alice", "secret"))
    state.apply(m.Lobby("abcDEF1234", "lobby", [m.PlayerInfo("alice", True, True), m.PlayerInfo("bob", True, True)],
                        m.Settings(variant, True, 2, 1800, True, "safe", False), "c" * 64))
    state.apply(m.Started(1_000, 0, view_message(deal(seed, v)), [], 0, 0))
    state.apply(m.PositionReply(moves, "s", view_message(game.position), legal_message(game.legal_moves()),
                                game.moves, 0, game.position.foundation_cards, "playing", 65_000))
    state.apply(m.Progress("bob", 12, 9, "playing", 3_000))
    return state


def cells(line: str) -> int:
    return Text(ANSI.sub("", line)).cell_len


def assert_fits(state: RaceState, width: int = 80, height: int = 24) -> str:
    out = to_ansi(screen(state, width, height, now=70_000), width)
    lines = out.rstrip("\n").split("\n")
    assert len(lines) == height - 1  # the prompt takes the last line
    assert max(cells(line) for line in lines) <= width
    return out


@pytest.mark.parametrize("moves", [0, 60, 100, 150, 213])
def test_the_race_screen_fits_80x24_at_every_stage(moves: int) -> None:
    out = assert_fits(playing_state(moves))
    text = ANSI.sub("", out)
    assert "Foundations" in text and "Stock" in text and "Players" in text and "bob" in text
    assert "abcDEF1234" in text and f"moves {moves}" in text


def test_suits_have_symbols_and_red_suits_colour() -> None:
    out = assert_fits(playing_state(0))
    assert "♣" in out and "♥" in out
    assert "\x1b[31m" in out or "\x1b[31;1m" in out or "\x1b[1;31m" in out  # red
    assert card_label("TD") == "10♦" and card_label("AS") == "A♠" and card_label("??") == "??"


def test_no_color_leaves_no_colour_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    out = to_ansi(screen(playing_state(0), 80, 24, now=70_000), 80)
    assert not re.search(r"\x1b\[[0-9;]*3[0-7]", out)
    plain_out = to_ansi(screen(playing_state(0), 80, 24, now=70_000), 80, color=False)
    assert not re.search(r"\x1b\[[0-9;]*3[0-7]", plain_out)


def test_long_columns_are_shortened_to_fit() -> None:
    state = playing_state(0)
    assert state.view is not None
    long = m.WireView(tableau=[["KS", "QS", "JS", "TS", "9S", "8S", "7S", "6S", "5S", "4S", "3S", "2S", "KH", "QH",
                                "JH", "TH", "9H", "8H", "7H", "6H"]] + state.view.tableau[1:],
                      hidden=state.view.hidden, foundations=state.view.foundations, stock=10, waste=["2C"] * 30,
                      redeals_left=1)
    state.apply(m.PositionReply(2, "s", long, state.legal, 2, 0, 0, "playing", 1000))
    text = ANSI.sub("", assert_fits(state))
    assert "+" in text and "6♥" in text  # the top card stays visible


@pytest.mark.parametrize("variant", ["lucas", "sixty_thieves", "number_ten"])
def test_other_tableaus_fit(variant: str) -> None:
    assert_fits(playing_state(0, variant, "7"))


def test_lobby_countdown_results_fit() -> None:
    state = RaceState(server="http://localhost:8000", code="abc", name="alice", host=True, connected=True)
    state.apply(m.Lobby("abc", "preparing", [m.PlayerInfo("alice", False, True)],
                        m.Settings("classic", True, 2, 1800, True, "safe", False), ""))
    assert "Preparing a solvable deal" in ANSI.sub("", assert_fits(state))
    state.apply(m.Lobby("abc", "lobby", [m.PlayerInfo("alice", False, True)],
                        m.Settings("classic", True, 2, 1800, True, "safe", False), "c" * 64))
    lobby = ANSI.sub("", assert_fits(state))
    assert "forty-thieves join abc --name NAME" in lobby and "chose this deal" not in lobby
    state.apply(m.Lobby("abc", "lobby", [m.PlayerInfo("alice", False, True)],
                        m.Settings("classic", False, 2, 1800, True, "safe", False, chosen_deal=True), "c" * 64))
    lobby = ANSI.sub("", assert_fits(state))
    assert "The host chose this deal" in lobby and "forty-thieves join abc --name NAME" in lobby
    state = playing_state(213)
    state.apply(m.Results("abcDEF1234", [m.ResultRow(1, "alice", "won", 65_000, 214, 0, 0, 104),
                                         m.ResultRow(2, "bob", "resigned", 3_000, 12, 0, 0, 9)], "4", "c" * 64))
    text = ANSI.sub("", assert_fits(state))
    assert "Results" in text and re.search(r"1\s+alice\s+won", text) and re.search(r"2\s+bob\s+resigned", text)


def test_dead_game_offers_undo_or_resign_and_finish_is_offered() -> None:
    state = playing_state(0)
    assert state.view is not None
    state.apply(m.PositionReply(3, "", state.view, [m.WireLegalMove("u", 1)], 3, 0, 0, "dead", 1000))
    assert "undo, or resign" in ANSI.sub("", assert_fits(state))
    state.apply(m.PositionReply(4, "", state.view, [m.WireLegalMove("finish", 20)], 4, 0, 0, "playing", 1000))
    assert "finish" in ANSI.sub("", assert_fits(state))


def test_the_plain_layout_is_the_notation_without_escapes() -> None:
    state = playing_state(0)
    text = plain(state, now=70_000)
    assert "\x1b" not in text
    assert "Stock: 64" in text and "1: QC 3D 8D TC" in text and "legal: s" in text
    assert "player bob: 9 cards, 12 moves, playing" in text
    assert plain_view(state.view).splitlines()[0].startswith("Foundations: AH")  # type: ignore[arg-type]


@pytest.mark.parametrize("status, shown", [("resigned", "gave up"), ("timeout", "time"), ("dead", "stuck"),
                                           ("won", "WON")])
def test_how_another_players_game_ended_is_shown_whole(status: str, shown: str) -> None:
    state = playing_state(100)
    state.apply(m.Progress("bob", 123, 45, status, 3_000))
    text = ANSI.sub("", assert_fits(state))
    assert re.search(rf"\b{shown}\b", text), text  # "gave up" was cut to "gave" by the panel's width


def test_an_empty_hint_does_not_tell_the_player_to_draw() -> None:
    """The server suggests ``s`` whenever a draw is legal, so an empty suggestion means nothing is left to draw."""
    state = playing_state(100)
    state.apply(m.Suggestion(1, "", 1))
    assert "hint:" in state.message and "draw," not in state.message and "undo" in state.message
    state.apply(m.Suggestion(2, "5-1x4", 2))
    assert state.message == "hint: 5-1x4"


@pytest.mark.parametrize("name", ["Ｖｅｒｙ long name indeed", "😀" * 24, "宮本武蔵宮本武蔵宮本武蔵宮本武蔵"])
def test_wide_characters_in_names_keep_the_screen_in_80x24(name: str) -> None:
    """Full-width letters, CJK and emoji take two cells each: cut by characters, a name overflowed the players'
    panel, wrapped, and pushed the notice and help lines off the screen."""
    state = playing_state(100)
    state.apply(m.Progress(name, 12, 9, "resigned", 3_000))
    assert_fits(state)
    lobby = RaceState(server="http://localhost:8000", code="abc", name=name, host=True, connected=True)
    lobby.apply(m.Lobby("abc", "lobby", [m.PlayerInfo(name, True, True), m.PlayerInfo("bob", False, True)],
                        m.Settings("classic", True, 2, 1800, True, "safe", False), "c" * 64))
    assert_fits(lobby)
    state.apply(m.Results("abcDEF1234", [m.ResultRow(1, name, "won", 65_000, 214, 0, 0, 104),
                                         m.ResultRow(2, "bob", "resigned", 3_000, 12, 0, 0, 9)], "4", "c" * 64))
    assert_fits(state)


def test_the_revealed_seed_nonce_and_commitment_fit_an_80_column_screen() -> None:
    """A server's seed and nonce are 32 hex characters each: the commitment was cut off the one line."""
    from client_cli.render import results_lines

    seed, nonce, commitment = "6c443b3f85531d033d5e8992e410c91a", "a8637b7e247ec430d511cc643346a9b3", "60abbe3f" * 8
    lines = results_lines(m.Results("abcDEF1234", [m.ResultRow(1, "ann", "resigned", 10_000, 3, 0, 0, 0)], seed,
                                    commitment, nonce))
    text = [line.plain for line in lines]
    assert all(len(line) <= 80 for line in text), text
    assert any(seed in line and nonce in line for line in text)
    assert any(commitment[:16] in line and "SHA-256 of nonce + seed" in line for line in text)


def test_a_refusal_names_cards_as_the_screen_shows_them() -> None:
    """The engine's reasons use card codes (2H, TD); the screen shows 2♥ and 10♦, so the refusal does too."""
    state = RaceState()
    state.apply(m.Rejected(3, "1-2", "illegal", "no card of the run on column 1 fits on 2H"))
    assert state.message == "1-2: no card of the run on column 1 fits on 2♥"
    state.apply(m.Rejected(4, "1-f", "illegal", "no foundation slot takes TD; AS2H stays text"))
    assert state.message == "1-f: no foundation slot takes 10♦; AS2H stays text"


def test_a_scripted_players_refusal_line_names_cards_as_the_screen_does() -> None:
    from client_cli.race import _reply_line

    line = _reply_line("1-2", m.Rejected(3, "1-2", "illegal", "no card of the run on column 1 fits on TH"))
    assert line == "1-2: refused (no card of the run on column 1 fits on 10♥)"


@pytest.mark.parametrize("hints", [False, True])
@pytest.mark.parametrize("undo", ["none", "safe", "full"])
def test_the_help_line_offers_hint_and_undo_only_where_the_match_allows_them(hints: bool, undo: str) -> None:
    """The help line at the bottom of the race screen offered ``hint`` (and ``u undo``) in every match; the
    server refuses a hint where hints are off (``no_hints``) and every undo where the policy is ``none``."""
    state = playing_state(60)
    assert state.settings is not None
    state.settings = m.Settings(state.settings.variant, True, 2, 1800, True, undo, hints)
    help_line = screen(state, 80, 24, now=70_000)[-1].plain
    assert help_line.startswith("? help") and "q quit" in help_line, help_line
    assert ("hint" in help_line.split()) == hints, help_line
    assert ("u undo" in help_line) == (undo != "none"), help_line


@pytest.mark.parametrize("name", ["ann", "Bartholomew-Fitzgerald-X", "\u5c71\u7530" * 12, "\U0001f469\u200d\U0001f4bb" * 8])
def test_a_line_printed_around_the_race_screen_is_wrapped_to_80_cells(name: str) -> None:
    """The daily's intro names the date, the variant (up to ``rank_and_file``) and a name of up to 24 characters,
    wide ones counting two cells: broken between words into lines that fit, nothing lost."""
    text = f"Daily challenge 2026-12-02 (rank_and_file) as {name}: commitment {'c' * 16}…; the clock starts with the deal."
    lines = wrap(text)
    assert all(Text(line).cell_len <= 80 for line in lines), lines
    assert " ".join(lines).split() == text.split()


def _alone(daily: bool = False, bots: int = 0) -> RaceState:
    v = find_variant(VARIANT)
    state = RaceState(server="http://localhost:8000", code="abcDEF1234", name="alice", connected=True, daily=daily)
    state.apply(m.Joined("abcDEF1234", "alice", "secret"))
    seats = [m.PlayerInfo(f"club bot {n + 1}", True, True, bot=True) for n in range(bots)]
    state.apply(m.Lobby("abcDEF1234", "lobby", [*seats, m.PlayerInfo("alice", True, True)],
                        m.Settings(VARIANT, True, 1 + bots, 1800, True, "safe", False), "c" * 64))
    state.apply(m.Started(1_000, 0, view_message(deal(SEED, v)), [], 0, 0))
    return state


def test_restart_is_offered_alone_and_not_in_a_race_or_the_daily() -> None:
    from client_cli.commands import HELP, resolve
    from client_cli.ui import words_now

    assert resolve("restart", [], None).action == "restart" and "restart" in HELP
    assert "restart" in words_now(_alone()) and "restart" not in words_now(_alone(daily=True))
    assert "restart" not in words_now(playing_state(10))  # a race of two
    assert "restart" in words_now(_alone(bots=2))  # alone against bots: their views are their own
    stuck = _alone()
    stuck.apply(m.PositionReply(1, "", stuck.view, [m.WireLegalMove("u", 0)], 1, 0, 0, "dead",  # type: ignore[arg-type]
                                2_000))
    text = ANSI.sub("", to_ansi(screen(stuck, 80, 24, now=70_000), 80))
    assert "u to undo, restart, or resign" in text, text


def test_the_watch_table_says_stuck_as_the_pages_do_and_marks_bots() -> None:
    import io

    from rich.console import Console

    from client_cli.watch import table

    public = {"code": "C", "state": "playing", "start_at_ms": 0, "deadline_ms": 0, "settings": {},
              "players": [{"name": "ann", "status": "dead", "moves": 5, "foundation": 3, "time_ms": 4_000},
                          {"name": "club bot", "bot": True, "status": "playing", "moves": 9, "foundation": 4,
                           "time_ms": 4_000}]}
    console = Console(width=100, record=True, file=io.StringIO())
    console.print(table(public, 5_000))
    shown = console.export_text()
    assert re.search(r"ann\s+│\s+stuck\b", shown), shown
    assert re.search(r"club bot \[bot\]\s+│\s+playing\b", shown), shown


def test_a_daily_attempts_results_say_the_streak_the_server_recorded() -> None:
    """A daily attempt's results (no seed) carry the player's streak: the screen says it as the pages do; a
    race's results (a seed, no streak) say none."""
    from client_cli.render import results_lines

    row = m.ResultRow(1, "ann", "resigned", 10_000, 3, 0, 0, 0)
    daily = results_lines(m.Results("abcDEF1234", [row], "", "c" * 64, "", streak=2, best_streak=5, freezes=1))
    assert "Streak 2 (best 5) · 1 freeze" in [line.plain for line in daily]
    race = results_lines(m.Results("abcDEF1234", [row], "4", "c" * 64, "n" * 32))
    assert not any("Streak" in line.plain for line in race)


@pytest.mark.parametrize("time_limit_s", [1800, 0])
def test_the_header_counts_down_only_a_time_limit_the_host_set(time_limit_s: int) -> None:
    """The server ends an untimed match (time limit 0) 24 h after its start: that cap is no clock to race."""
    state = playing_state(moves=10)
    state.settings = m.Settings(VARIANT, True, 2, time_limit_s, True, "safe", False)
    state.deadline_ms = 1_000 + (time_limit_s or 86_400) * 1000
    header = ANSI.sub("", to_ansi(screen(state, 80, 24, now=70_000), 80)).split("\n")[0]
    assert ("(left 28:51)" in header) is (time_limit_s > 0), header
