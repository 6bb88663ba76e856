"""The log of a real server: one format for the server's lines and uvicorn's (server/logs.py), as JSON objects
with ``FTR_LOG_FORMAT=json`` or text lines that start with a timestamp, and a line logged inside a player's
connection names its match and connection."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import datetime
from typing import Any

import httpx
import websockets

from .conftest import ServerProcess
from .wsclient import Player, create_match

TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ")


def play_a_little(server: ServerProcess) -> str:
    """Create a match, join it as ``ann``, watch it, ask a path no route has: the match's code."""
    code = create_match(server.url, variant="relaxed", seed="2", players=2, solvable_only=False)["code"]
    assert httpx.get(server.url + "/no/such/path", timeout=10).status_code == 404

    async def run() -> None:
        player = Player(server.ws_url)
        await player.connect()
        await player.join(code, "ann")
        async with websockets.connect(f"{server.url.replace('http', 'ws')}/matches/{code}/watch") as spectator:
            await asyncio.wait_for(spectator.recv(), 10)
        await player.close()

    asyncio.run(run())
    return code


def test_json_format_writes_only_json_objects_with_the_match_and_connection(make_server: Any) -> None:
    server = make_server(FTR_LOG_FORMAT="json")
    code = play_a_little(server)
    # Read before the stop: what multiprocessing's resource tracker may print at exit is no log record.
    lines = server.logs().splitlines()
    records = []
    for line in lines:
        record = json.loads(line)
        assert isinstance(record, dict), line
        assert {"time", "level", "logger", "message"} <= set(record), line
        assert datetime.fromisoformat(record["time"]).tzinfo is not None
        records.append(record)
    loggers = {record["logger"] for record in records}
    assert {"forty_thieves.server", "forty_thieves.play", "uvicorn.error", "uvicorn.access"} <= loggers, loggers
    joined = [r for r in records if r["logger"] == "forty_thieves.play" and "joined" in r["message"]]
    assert len(joined) == 1 and joined[0]["match"] == code, joined
    assert re.fullmatch(r"[0-9a-f]{8}", joined[0]["connection"]), joined
    # uvicorn's own line about the same WebSocket, logged in its connection's task, names the connection too.
    accepted = [r for r in records if "WebSocket /play" in r["message"]]
    assert accepted and all(r.get("connection") == joined[0]["connection"] for r in accepted), accepted
    access = [r for r in records if r["logger"] == "uvicorn.access" and "/no/such/path" in r["message"]]
    assert len(access) == 1 and "match" not in access[0] and "connection" not in access[0], access


def test_text_format_lines_start_with_a_timestamp_and_name_the_match(server: ServerProcess) -> None:
    code = play_a_little(server)
    lines = server.logs().splitlines()
    assert lines and all(TIMESTAMP.match(line) for line in lines), [line for line in lines if not TIMESTAMP.match(line)]
    assert any(" uvicorn.access: " in line for line in lines) and any(" uvicorn.error: " in line for line in lines)
    joined = [line for line in lines if " forty_thieves.play: a player joined as 'ann'" in line]
    assert len(joined) == 1 and re.search(rf"\(match {code}, connection [0-9a-f]{{8}}\)$", joined[0]), joined


def test_debug_level_logs_no_frame_and_no_token(make_server: Any) -> None:
    """At ``FTR_LOG_LEVEL=debug`` uvicorn's logger takes websockets' debug lines, which show each frame's first
    and last bytes: the ``joined`` frame ends with the player's token."""
    server = make_server(FTR_LOG_LEVEL="debug")
    code = create_match(server.url, variant="relaxed", seed="2", players=2, solvable_only=False)["code"]

    async def run() -> str:
        player = Player(server.ws_url)
        await player.connect()
        await player.join(code, "ann")
        await player.close()
        again = Player(server.ws_url)  # a client's frame with the token: resume
        await again.connect()
        again.token = player.token
        await again.resume(code)
        await again.close()
        return player.token

    token = asyncio.run(run())
    lines = server.logs().splitlines()
    assert any(" DEBUG uvicorn.error: " in line for line in lines)  # debug lines are there, frames not
    shown = token.encode()[-8:].hex(" ")  # as websockets shows a frame's last bytes
    assert not [line for line in lines if shown in line or token[-8:] in line]
    assert not [line for line in lines if "BINARY" in line]
