"""Joining a match and playing it to the end: the race screen in a terminal, else a script of commands.

Shared by ``create`` and ``join`` (:mod:`client_cli.__main__`) and by the
daily challenge (:mod:`client_cli.daily`), which plays its attempt like any
race.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import sys
from collections.abc import AsyncIterator

from .server_link import ClientError


async def join_and_play(server: str, code: str, name: str | None, *, script: str | None, as_json: bool,
                        host_token: str | None = None, auto_ready: bool | None = None, public: str = "",
                        title: str = "") -> int:
    """Join match ``code`` as ``name`` and play it to the end; returns the exit status (0 when it ended normally).

    In a terminal (no ``script``, no ``as_json``) the race screen runs;
    otherwise the commands of ``script`` (a file, or standard input for
    ``None`` or ``-``, read line by line as it arrives) are played in order
    (:func:`client_cli.race.run_script`).
    ``host_token`` makes this player the host; ``auto_ready`` (default: when
    not interactive) sends ``ready`` at once; ``public`` is the address the
    join line names; a ``title`` marks the daily challenge's attempt.
    Raises :class:`~client_cli.server_link.ClientError` for an error the
    client explains (an unreadable script, a refusal).
    """
    from .race import RaceClient, run_script

    interactive = script is None and sys.stdin.isatty() and sys.stdout.isatty() and not as_json
    if auto_ready is None:
        auto_ready = not interactive
    client = RaceClient(server, code, name, host_token=host_token, auto_ready=auto_ready)
    client.state.public_server, client.state.title = public or server, title
    client.state.daily = bool(title)  # only the daily names itself by a title
    if interactive:
        from .ui import RaceScreen

        return await RaceScreen(client, daily=bool(title)).run()
    if not as_json and script is None:
        print("not a terminal: reading commands from standard input, one a line", file=sys.stderr)
    return await run_script(client, read_script(script), as_json=as_json)


def read_script(script: str | None) -> list[str] | AsyncIterator[str]:
    """The lines of the script (``None`` or ``-``: standard input).

    A file is read whole, before the race; standard input is read as it arrives (:func:`stdin_lines`), so a
    program can drive the client through a pipe, one line at a time, seeing each line's effect before it
    writes the next. Raises :class:`~client_cli.server_link.ClientError` when the file cannot be read.
    """
    if script is None or script == "-":
        return stdin_lines()
    try:
        with open(script, encoding="utf-8") as file:
            return file.read().splitlines()
    except OSError as error:
        raise ClientError(f"cannot read the script {script}: {error}") from None


async def stdin_lines(fd: int | None = None) -> AsyncIterator[str]:
    """The lines of standard input (or of file descriptor ``fd``) as each one arrives, without its line end;
    a last line without one is given at the end of input. Decoded as UTF-8 (a bad byte becomes U+FFFD).

    The event loop is told when the pipe (or terminal, or socket) is readable and reads what is there, so the
    loop never blocks and no thread is left waiting on the input at exit. A regular file (``< file``) or
    ``/dev/null`` cannot be waited on: it is complete already, and read whole.
    """
    if fd is None:
        fd = sys.stdin.fileno()
    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()

    def readable() -> None:
        try:
            chunk = os.read(fd, 65536)  # readable: returns without blocking
        except BlockingIOError:
            return
        except OSError:
            chunk = b""  # a broken input ends the script like its end
        chunks.put_nowait(chunk)
        if not chunk:
            loop.remove_reader(fd)

    try:
        loop.add_reader(fd, readable)
    except (OSError, NotImplementedError, ValueError):  # a regular file, /dev/null: nothing to wait for
        with os.fdopen(os.dup(fd), "rb") as whole:
            for line in whole.read().decode("utf-8", "replace").splitlines():
                yield line
        return
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    pending = ""
    try:
        while True:
            chunk = await chunks.get()
            pending += decoder.decode(chunk, final=not chunk)
            *lines, pending = pending.split("\n")
            for line in lines:
                yield line.removesuffix("\r")
            if not chunk:
                break
        if pending:
            yield pending
    finally:
        loop.remove_reader(fd)
