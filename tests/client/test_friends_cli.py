"""The client as friends use it: lines that run as printed, codes read aloud, the race screen's words."""

from __future__ import annotations

import re

import pytest

from client_cli.__main__ import _parser
from client_cli.render import screen, to_ansi
from client_cli.state import RaceState
from client_cli.watch import table
from protocol import messages as m

from .test_render import ANSI, playing_state


def run_line(line: str) -> object:
    """A printed ``forty-thieves ...`` line through the client's real argument parser."""
    words = line.strip().rstrip("\\").split()
    assert words[0] == "forty-thieves"
    return _parser().parse_args(words[1:])


def test_the_server_option_is_taken_after_the_subcommand_too() -> None:
    after = run_line("forty-thieves join K7QM4T2X9PZR --name NAME --server http://192.168.1.20:8000")
    assert (after.command, after.code, after.name, after.server) == ("join", "K7QM4T2X9PZR", "NAME",
                                                                     "http://192.168.1.20:8000")
    watch = run_line("forty-thieves watch K7QM4T2X9PZR --server https://race.example.org")
    assert (watch.command, watch.server) == ("watch", "https://race.example.org")
    before = _parser().parse_args(["--server", "http://a:1", "join", "C"])  # not overwritten by the default
    assert before.server == "http://a:1"
    assert _parser().parse_args(["daily", "--name", "x"]).server is None


def test_the_join_line_fits_80_columns_or_breaks_as_a_shell_continuation() -> None:
    from client_cli.render import join_lines

    short = join_lines("K7QM4T2X9PZR", "http://192.168.1.20:8000", 80)
    assert len(short) == 1 and len(short[0]) <= 80
    long = join_lines("K7QM4T2X9PZR", "https://a-long-public-name-for-the-race-server.example.org", 80)
    assert len(long) == 2 and all(len(line) <= 80 for line in long) and long[0].endswith("\\")
    joined = run_line(" ".join(line.rstrip("\\") for line in long))
    assert joined.server == "https://a-long-public-name-for-the-race-server.example.org"


def test_codes_have_no_look_alikes_and_are_read_in_any_case() -> None:
    from protocol.codes import ALPHABET, CODE_BITS, canonical_code, new_code

    assert not set("ILOU") & set(ALPHABET) and len(ALPHABET) == 32 and CODE_BITS == 60
    codes = {new_code() for _ in range(200)}
    assert len(codes) == 200 and all(len(c) == 12 and set(c) <= set(ALPHABET) for c in codes)
    code = "K7QM4T2X9PZ1"
    assert canonical_code("k7qm4t2x9pzl") == code and canonical_code("K7QM-4T2X-9PZI") == code
    assert canonical_code("k7qm 4t2x 9pz1") == code and canonical_code("K7QM4T2X9PZ1") == code
    assert canonical_code("1O0") == "1O0"  # not a code of today's form: unchanged
    assert canonical_code("m0XF7fVBje") == "m0XF7fVBje"  # an older code: exactly as given


def lobby_state(players: int) -> RaceState:
    state = RaceState(server="http://localhost:8123", code="K7QM4T2X9PZR", name="alice", connected=True)
    state.public_server = "http://192.168.1.20:8123"  # the server's FTR_PUBLIC_URL
    state.apply(m.Joined("K7QM4T2X9PZR", "alice", "t"))
    state.apply(m.Lobby("K7QM4T2X9PZR", "lobby", [m.PlayerInfo("alice", False, True)],
                        m.Settings("relaxed", True, players, 1800, True, "safe", False), "c" * 64))
    return state


def test_the_lobby_prints_the_public_join_line_whole_and_says_one_player() -> None:
    text = ANSI.sub("", to_ansi(screen(lobby_state(2), 80, 24, now=0), 80))
    line = next(x for x in text.splitlines() if "forty-thieves join" in x)
    assert run_line(line).server == "http://192.168.1.20:8123" and run_line(line).code == "K7QM4T2X9PZR"
    solo = ANSI.sub("", to_ansi(screen(lobby_state(1), 80, 24, now=0), 80))
    assert "Friends join with" not in solo and "1 player," in solo and "1 players" not in solo


def test_the_stock_count_is_apart_from_the_table_notice() -> None:
    state = playing_state(3)  # after s, s, w-3: 7-3 is a move on the table
    text = ANSI.sub("", to_ansi(screen(state, 80, 24, now=70_000), 80))
    stock = next(x for x in text.splitlines() if "Stock" in x)
    assert not re.search(r"Stock \d+ +(\(redeals \d+\) )?moves", stock), stock
    assert re.search(r"Stock \d+ .*\(table has moves\)", stock), stock


def test_a_won_race_shows_the_banner_and_who_plays_on_then_results_without_leftovers() -> None:
    state = playing_state(0)
    state.apply(m.Progress("eve", 3, 4, "playing", 2_000))
    state.apply(m.PositionReply(167, "finish", state.view, [], 167, 0, 104, "won", 252_000))
    text = ANSI.sub("", to_ansi(screen(state, 80, 24, now=300_000), 80))
    assert "You won in 4:12, 167 moves" in text and "waiting for bob and eve" in text, text
    ranking = [m.ResultRow(1, "alice", "won", 252_000, 167, 0, 0, 104), m.ResultRow(2, "bob", "resigned", 9_000, 12,
                                                                                     0, 0, 9)]
    state.apply(m.Results("abcDEF1234", ranking, "4", "c" * 64, "n"))
    final = ANSI.sub("", to_ansi(screen(state, 80, 24, now=300_000), 80))
    assert "You won in 4:12, 167 moves" in final and "Results" in final
    assert "Foundations" not in final and "37 = 3-7" not in final and "q quits" in final, final


def test_the_side_panel_after_a_resume_and_no_stale_lobby_message() -> None:
    state = RaceState(server="http://localhost:8000", code="C", name="alice", connected=True)
    state.apply(m.Joined("C", "alice", "t"))
    state.message = "the match has not started yet"
    view = m.WireView([["AS"]] + [[] for _ in range(9)], [0] * 10, ["AC"] + ["-"] * 7, 60, [], 0)
    state.apply(m.Started(1_000, 0, view, [m.WireLegalMove("s", 1)], 3, 0, undos=1))  # a resume: 3 moves, 1 an undo
    assert state.message == ""
    assert (state.players["alice"].moves, state.players["alice"].foundation) == (3, 1)
    assert state.undos == 1
    text = ANSI.sub("", to_ansi(screen(state, 80, 24, now=5_000), 80))
    assert "  1/" in text and "  3m" in text and "0m" not in text, text


def test_the_daily_header_names_the_daily() -> None:
    state = playing_state(0)
    state.title = "Daily relaxed 2026-12-01"
    header = ANSI.sub("", to_ansi(screen(state, 80, 24, now=70_000), 80)).splitlines()[0]
    assert "Daily relaxed 2026-12-01" in header and "abcDEF1234" not in header


def test_the_watch_time_column_runs_the_race_clock_for_players_still_playing() -> None:
    from client_cli.watch import race_time_ms

    public = {"code": "C", "state": "playing", "start_at_ms": 10_000, "deadline_ms": 0, "settings": {},
              "players": [{"name": "ann", "status": "playing", "moves": 5, "foundation": 3, "time_ms": 4_000},
                          {"name": "bob", "status": "resigned", "moves": 2, "foundation": 1, "time_ms": 6_000}]}
    assert race_time_ms(public, public["players"][0], 75_000) == 65_000  # the race clock, not the last move
    assert race_time_ms(public, public["players"][1], 75_000) == 6_000  # when his game ended
    import io

    from rich.console import Console

    console = Console(width=100, record=True, file=io.StringIO())
    console.print(table(public, 75_000))
    shown = console.export_text()
    assert "1:05" in shown and "0:06" in shown and "race clock" in shown


def test_watch_gives_tied_players_one_rank() -> None:
    """Equal places share a rank (1, 2, 2, 4) as on the watch page: winners by time, the rest by foundation cards
    alone (the moves do not break a tie: bo moved more than cy), ties listed by name."""
    import io

    from rich.console import Console

    from client_cli.watch import ranked, table

    public = {"code": "C", "state": "playing", "start_at_ms": 0, "deadline_ms": 0, "settings": {},
              "players": [{"name": "dan", "status": "playing", "moves": 9, "foundation": 2, "time_ms": 0},
                          {"name": "cy", "status": "resigned", "moves": 4, "foundation": 3, "time_ms": 5_000},
                          {"name": "bo", "status": "playing", "moves": 7, "foundation": 3, "time_ms": 7_000},
                          {"name": "al", "status": "won", "moves": 90, "foundation": 104, "time_ms": 60_000}]}
    assert [(rank, p["name"]) for rank, p in ranked(public)] == [(1, "al"), (2, "bo"), (2, "cy"), (4, "dan")]
    console = Console(width=100, record=True, file=io.StringIO())
    console.print(table(public, 75_000))
    ranks = [line.split()[1] for line in console.export_text().splitlines() if line.count("│") >= 6]
    assert ranks == ["1", "2", "2", "4"], ranks


@pytest.mark.parametrize("typed", ["resign", "give up"])
async def test_resign_asks_first_on_the_screen(typed: str) -> None:
    """``resign`` ended the game at once, for a typo of a word's worth; now it asks, and only ``resign`` again
    (or ``y``) right after gives up."""
    import asyncio
    from types import SimpleNamespace

    from prompt_toolkit.buffer import Buffer

    from client_cli.ui import RaceScreen

    async def run() -> list[str]:
        state = playing_state(0)
        sent: list[str] = []

        def resign() -> asyncio.Future[None]:
            sent.append("resign")
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            done.set_result(None)
            return done

        def line(text: str) -> Buffer:
            buffer = Buffer(multiline=False)
            buffer.text = text
            return buffer

        screen_ = RaceScreen(SimpleNamespace(state=state, host_token=None, resign=resign))  # type: ignore[arg-type]
        screen_._accept(line(typed))
        assert sent == [] and "Type resign again" in state.message
        screen_._accept(line("?"))  # anything else plays on
        screen_._accept(line(typed))
        assert sent == []
        screen_._accept(line("y"))
        return sent

    assert await run() == ["resign"]


def test_the_daily_results_offer_no_rematch() -> None:
    """One attempt a day: the end of a daily attempt names the leaderboard, not a next round."""
    from client_cli.ui import words_now

    state = playing_state(0)
    state.title, state.daily = "Daily relaxed 2026-12-01", True
    ranking = [m.ResultRow(1, "alice", "resigned", 9_000, 3, 0, 0, 2)]
    state.apply(m.Results("abcDEF1234", ranking, "", "c" * 64, ""))
    final = ANSI.sub("", to_ansi(screen(state, 80, 24, now=30_000), 80))
    assert "rematch" not in final.lower() and "--leaderboard shows the board. q quits\n" in final + "\n", final
    assert "rematch" not in words_now(state)
