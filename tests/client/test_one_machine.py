"""Two players on one machine (two terminals, one user): they share the tokens file, and neither takes the
other's place in it: the next round's tokens of both are kept, and only the creator is the host."""

from __future__ import annotations

from pathlib import Path

from client_cli.race import RaceClient
from client_cli.tokens import TokenStore
from protocol import messages as m

SERVER = "http://localhost:8123"


def test_the_next_round_keeps_the_token_of_every_player_of_this_machine(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "tokens.json")
    store.update(SERVER, "AAAAAAAAAAAA", players={"alice": "a1", "bob": "b1"}, last_name="bob")
    alice = RaceClient(SERVER, "AAAAAAAAAAAA", "alice", store=store)
    bob = RaceClient(SERVER, "AAAAAAAAAAAA", "bob", store=store)
    alice._follow_round(m.NextRound("BBBBBBBBBBBB", 2, "a2", host_token="h2"))
    bob._follow_round(m.NextRound("BBBBBBBBBBBB", 2, "b2"))
    entry = store.get(SERVER, "BBBBBBBBBBBB")
    assert entry["players"] == {"alice": "a2", "bob": "b2"}, entry  # alice's rematch into round 3 needs hers
    assert alice.state.host and not bob.state.host
    assert RaceClient(SERVER, "BBBBBBBBBBBB", "alice", store=store).host_token == "h2"
    assert RaceClient(SERVER, "BBBBBBBBBBBB", "bob", store=store).host_token is None


def test_only_the_creator_is_the_host_when_a_friend_joins_from_the_same_machine(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "tokens.json")
    store.keep_host(SERVER, "CCCCCCCCCCCC", "alice", "h1")  # what create keeps
    bob = RaceClient(SERVER, "CCCCCCCCCCCC", "bob", store=store)
    assert bob.host_token is None and not bob.state.host  # not told "you are the host", cannot send start
    bob._keep_token("b1")
    alice = RaceClient(SERVER, "CCCCCCCCCCCC", "alice", store=store)
    assert alice.host_token == "h1" and alice.state.host
    assert store.get(SERVER, "CCCCCCCCCCCC")["players"] == {"bob": "b1"}
    # A file written before the host's name was kept: its host token still counts for whoever resumes.
    store.update(SERVER, "DDDDDDDDDDDD", host_token="h0")
    assert RaceClient(SERVER, "DDDDDDDDDDDD", "carol", store=store).host_token == "h0"
