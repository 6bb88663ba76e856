"""Tab completion on the race screen offers what can be typed now."""

from __future__ import annotations

from types import SimpleNamespace

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from client_cli.state import RaceState
from client_cli.ui import LegalCompleter
from protocol import messages as m


def offered(state: RaceState) -> list[str]:
    completer = LegalCompleter(SimpleNamespace(state=state))  # type: ignore[arg-type]
    return [c.text for c in completer.get_completions(Document(""), CompleteEvent(completion_requested=True))]


def test_the_lobby_words_in_the_lobby_and_the_game_words_in_the_game() -> None:
    state = RaceState(server="http://localhost:8000", code="abc", name="alice", connected=True)
    state.apply(m.Lobby("abc", "lobby", [m.PlayerInfo("alice", False, True)],
                        m.Settings("classic", True, 2, 1800, True, "safe", False), "c" * 64))
    lobby = offered(state)
    assert "ready" in lobby and "start" in lobby and "resign" not in lobby and "hint" not in lobby
    view = m.WireView([["AS"]] + [[] for _ in range(9)], [0] * 10, ["-"] * 8, 64, [], 0)
    state.apply(m.Started(1_000, 0, view, [m.WireLegalMove("s", 1)], 0, 0))
    playing = offered(state)
    assert playing[0] == "s" and "resign" in playing
    assert "ready" not in playing and "start" not in playing  # refused once the match has started
    assert "hint" not in playing  # this match allows no hints
