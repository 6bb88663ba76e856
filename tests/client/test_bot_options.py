"""``forty-thieves create --bot LEVEL[:MOVES_PER_MIN]``, and the bots' marks on the terminal."""

from __future__ import annotations

import pytest
from rich.console import Console

from client_cli.__main__ import _parser
from client_cli.commands import parse_bot
from client_cli.render import _players, results_lines
from client_cli.state import RaceState
from client_cli.watch import table
from protocol import messages as m


@pytest.mark.parametrize(("text", "bot"), [
    ("strong", {"level": "strong"}), ("club:40", {"level": "club", "moves_per_min": 40}),
    (" Casual:1 ", {"level": "casual", "moves_per_min": 1}), ("expert:600", {"level": "expert", "moves_per_min": 600}),
])
def test_a_bot_is_a_level_and_maybe_a_pace(text: str, bot: dict[str, object]) -> None:
    assert parse_bot(text) == bot


@pytest.mark.parametrize(("text", "message"), [
    ("", "LEVEL"), (":30", "LEVEL"), ("club:0", "1..600"), ("club:601", "1..600"), ("club:fast", "1..600"),
    ("club:-3", "1..600"), ("st rong", "LEVEL"),
])
def test_a_bot_the_server_would_refuse_is_refused_before_anything_is_sent(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_bot(text)


def test_the_option_repeats_and_names_the_mistake(capsys: pytest.CaptureFixture[str]) -> None:
    args = _parser().parse_args(["create", "--bot", "strong", "--bot", "casual:90"])
    assert args.bot == [{"level": "strong"}, {"level": "casual", "moves_per_min": 90}] and args.players is None
    with pytest.raises(SystemExit) as refused:
        _parser().parse_args(["create", "--bot", "club:0"])
    assert refused.value.code == 2 and "--bot" in capsys.readouterr().err


def test_a_bots_result_row_is_marked() -> None:
    results = m.Results("ABCD", [m.ResultRow(1, "ann", "won", 1000, 90, 0, 0, 104),
                                 m.ResultRow(2, "strong bot", "timeout", 3000, 40, 0, 0, 30, bot=True)], "", "", "")
    lines = [line.plain for line in results_lines(results)]
    assert "strong bot [bot]" in lines[2] and "[bot]" not in lines[1]


def test_a_bot_is_marked_in_words_in_the_race_panel_and_the_watch_table() -> None:
    state = RaceState(name="ann")
    state.apply(m.Lobby("ABCD", "lobby", [m.PlayerInfo("ann", True, True), m.PlayerInfo("strong bot", True, True, True)],
                        m.Settings("classic", False, 2, 0, True, "safe", False), ""))
    state.phase = "playing"
    for name in ("ann", "strong bot"):
        state.line(name).status = "playing"
    panel = [line.plain for line in _players(state)]
    assert any(line.startswith("strong bot") and line.endswith(" bot") for line in panel), panel
    assert not any(line.startswith("ann") and "bot" in line for line in panel), panel
    public = {"code": "ABCD", "state": "playing", "settings": {"variant": "classic"}, "start_at_ms": 0, "players": [
        {"name": "ann", "status": "playing", "moves": 3, "foundation": 2, "time_ms": 0},
        {"name": "strong bot", "bot": "strong", "status": "playing", "moves": 9, "foundation": 4, "time_ms": 0}]}
    console = Console(width=100, record=True)
    console.print(table(public, now_ms=1000))
    text = console.export_text()
    assert "strong bot [bot]" in text and "ann [bot]" not in text, text
