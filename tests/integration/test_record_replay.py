"""``POST /replays``: every position of a game record its sender holds, redacted, against a real server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from protocol.cards import format_card
from server.engine import Game, GameRecord, UndoPolicy, deal, find_variant, format_record
from server.replays import MAX_RECORD_BYTES, MAX_RECORD_COMMANDS

from .conftest import ServerProcess

SEED = "7"
VARIANT = "indian"  # its deal has a face-down card under each column: the redaction has something to hide


@pytest.fixture(scope="module")
def url(redis_url: str) -> Iterator[str]:
    process = ServerProcess(redis_url)
    yield process.url
    process.stop()


def record(moves: list[str], variant: str = VARIANT) -> dict[str, object]:
    rules = find_variant(variant)
    return json.loads(format_record(GameRecord(rules, True, UndoPolicy.SAFE, deal(SEED, rules), tuple(moves), SEED)))


def post(url: str, body: object, **kwargs: object) -> httpx.Response:
    if "content" not in kwargs:
        kwargs["json"] = body
    return httpx.post(f"{url}/replays", timeout=30, **kwargs)  # type: ignore[arg-type]


def some_commands(count: int) -> list[str]:
    """The first legal command of each position in turn (drawn from the stock when there is one)."""
    rules = find_variant(VARIANT)
    game, played = Game(deal(SEED, rules), rules, autoplay=True, undo="safe"), []
    for _ in range(count):
        legal = [str(command) for command, _ in game.legal_moves()]
        command = "s" if "s" in legal else legal[0]
        game.play(command)
        played.append(command)
    return played


def test_each_step_is_the_position_a_player_sees_and_never_a_face_down_card(url: str) -> None:
    """RULES.md section 8: per column its face-up cards and a count of those under them; the stock a count."""
    commands = some_commands(6)
    answer = post(url, record([*commands[:2], "9-9", *commands[2:]]))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["variant"] == VARIANT and len(body["steps"]) == len(commands) + 2
    rules = find_variant(VARIANT)
    game = Game(deal(SEED, rules), rules, autoplay=True, undo="safe")
    expected_commands = ["", *commands[:2], "9-9", *commands[2:]]
    for step, command in zip(body["steps"], expected_commands, strict=True):
        if command and command != "9-9":
            game.play(command)
        position = game.position
        face_up = [[format_card(c) for c in column[hidden:]] for column, hidden in zip(position.tableau,
                                                                                        position.hidden)]
        assert step["command"] == command and step["ok"] == (command != "9-9")
        assert step["view"]["tableau"] == face_up and step["view"]["hidden"] == list(position.hidden)
        assert step["view"]["stock"] == len(position.stock) and step["moves"] == game.moves
        assert {tuple(pair) for pair in step["legal"]} == {(str(c), n) for c, n in game.legal_moves()}
    assert sum(body["steps"][0]["view"]["hidden"]) == 10  # the deal's face-down cards are counted, not shown
    refused = body["steps"][3]
    assert refused["reason"] and refused["view"] == body["steps"][2]["view"]


@pytest.mark.parametrize(("body", "status", "words"), [
    (b"not json", 400, "not JSON"),
    (b"[]", 400, "game record"),
    (b"{}", 400, "format"),
    (None, 400, "unknown variant"),
    (None, 400, "deal"),
    (None, 400, f"at most {MAX_RECORD_COMMANDS}"),
    (b"{" + b" " * MAX_RECORD_BYTES + b"}", 413, "larger than"),
    (b'{"x": ' + b"[" * 20_000 + b"]" * 20_000 + b"}", 400, "nested too deeply"),
], ids=["not-json", "not-an-object", "no-fields", "variant", "deal", "too-many-commands", "too-large", "too-deep"])
def test_a_record_that_is_not_one_is_refused_and_the_server_answers_on(url: str, body: bytes | None, status: int,
                                                                       words: str) -> None:
    if body is None:
        data = record([])
        if words == "unknown variant":
            data["variant"] = "no-such"
        elif words == "deal":
            data["deal"] = "garbage"
        else:
            data["moves"] = ["s"] * (MAX_RECORD_COMMANDS + 1)
        body = json.dumps(data).encode()
    answer = post(url, None, content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == status, answer.text
    error = answer.json()
    assert error["error"] == ("frame_too_large" if status == 413 else "malformed") and words in error["message"]
    assert post(url, record([])).status_code == 200


def test_a_record_sent_as_a_form_is_refused_unread(url: str) -> None:
    """A browser's cross-site form post (a CORS simple request) must not make the server work."""
    answer = post(url, None, content=json.dumps(record([])).encode(), headers={"Content-Type": "text/plain"})
    assert answer.status_code == 415 and answer.json()["error"] == "malformed"


def test_an_address_past_its_records_a_minute_waits(make_server) -> None:  # type: ignore[no-untyped-def]
    server = make_server(FTR_MATCHES_PER_MIN="2")
    answers = [post(server.url, record([])).status_code for _ in range(3)]
    assert answers == [200, 200, 429]



def test_a_burst_of_the_largest_records_is_answered_or_told_to_wait(make_server) -> None:  # type: ignore[no-untyped-def]
    """Eight of the largest records at once: each is replayed whole or refused with 429 and Retry-After (one that
    would wait past RECORD_WAIT_S for the one before), nothing else, and the server answers on."""
    server = make_server(FTR_MATCHES_PER_MIN="100")
    big = record(some_commands(MAX_RECORD_COMMANDS))
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda _: post(server.url, big), range(8)))
    codes = [answer.status_code for answer in answers]
    assert set(codes) <= {200, 429} and 200 in codes, codes
    assert all(len(a.json()["steps"]) == MAX_RECORD_COMMANDS + 1 for a in answers if a.status_code == 200)
    refused = [answer for answer in answers if answer.status_code == 429]
    assert all(a.json()["error"] == "rate_limited" and a.headers["Retry-After"] == "5" for a in refused)
    assert post(server.url, record([])).status_code == 200  # and the server answers on
