"""Spectators in a process of their own, for tests/integration/test_many_watchers.py.

``python -m tests.integration.watchers_proc URL CODE SSE WS``: opens SSE
Server-Sent Events readers and WS WebSocket readers of match CODE (each
resuming from its last id when dropped, as the page does), prints
``ready`` once every one has received an event, then reads a stream id on
stdin and prints, once every reader has reached it, one JSON line:
``{"ids": [[id, ...] per reader], "drops": n}``. In their own process the
readers' work does not delay the players' client, whose round trips the
test times.
"""

from __future__ import annotations

import asyncio
import json
import sys

import httpx
import msgspec
import websockets

RECEIVING: set[int] = set()
"""Readers (by id()) that have received at least one event."""


class Target:
    """The stream id the reading watchers read up to (set once the timed phase is over)."""

    def __init__(self) -> None:
        self.id = ""
        self.set = asyncio.Event()

    def reached(self, ids: list[str]) -> bool:
        return self.set.is_set() and bool(ids) and _order(ids[-1]) >= _order(self.id)


def _order(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq)


async def sse_reader(base: str, code: str, target: Target) -> tuple[list[str], int]:
    """Read the match's events up to ``target``, resuming after a drop: (ids, drops)."""
    ids: list[str] = []
    drops = 0
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        while True:
            headers = {"Last-Event-ID": ids[-1]} if ids else {}
            async with http.stream("GET", f"/matches/{code}/events", headers=headers) as response:
                async for event in _events(response):
                    if event.get("event") == "dropped":
                        drops += 1
                        break
                    ids.append(event["id"])
                    RECEIVING.add(id(ids))
                    if target.reached(ids):
                        return ids, drops


async def _events(response: httpx.Response):  # type: ignore[no-untyped-def]
    current: dict[str, str] = {}
    async for line in response.aiter_lines():
        if line == "":
            if "data" in current:
                yield current
            current = {}
        elif not line.startswith(":"):
            field, _, value = line.partition(": ")
            current[field] = value


async def ws_reader(ws_base: str, code: str, target: Target) -> tuple[list[str], int]:
    ids: list[str] = []
    drops = 0
    while True:
        url = f"{ws_base}/matches/{code}/watch" + (f"?from={ids[-1]}" if ids else "")
        async with websockets.connect(url, compression=None) as socket_:
            try:
                while True:
                    frame = msgspec.msgpack.decode(await asyncio.wait_for(socket_.recv(), 60))
                    if "id" not in frame:  # error too_slow, then a close 4002
                        assert frame["code"] == "too_slow", frame
                        drops += 1
                        break
                    ids.append(frame["id"])
                    RECEIVING.add(id(ids))
                    if target.reached(ids):
                        return ids, drops
            except websockets.ConnectionClosed as closed:
                assert closed.rcvd is not None and closed.rcvd.code == 4002, closed
                drops += 1




async def main(url: str, code: str, sse: int, ws: int) -> None:
    target = Target()
    ws_base = url.replace("http://", "ws://")
    readers = [asyncio.ensure_future(sse_reader(url, code, target)) for _ in range(sse)]
    readers += [asyncio.ensure_future(ws_reader(ws_base, code, target)) for _ in range(ws)]
    while len(RECEIVING) < sse + ws:
        await asyncio.sleep(0.05)
    print("ready", flush=True)
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    target.id = line.strip()
    target.set.set()
    got = await asyncio.wait_for(asyncio.gather(*readers), 120)
    print(json.dumps({"ids": [ids for ids, _ in got], "drops": sum(d for _, d in got)}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
