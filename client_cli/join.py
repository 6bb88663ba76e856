"""Joining a match and playing it to the end: the race screen in a terminal, else a script of commands.

Shared by ``create`` and ``join`` (:mod:`client_cli.__main__`) and by the
daily challenge (:mod:`client_cli.daily`), which plays its attempt like any
race.
"""

from __future__ import annotations

import sys

from .connection import ClientError


async def join_and_play(server: str, code: str, name: str | None, *, script: str | None, as_json: bool,
                        host_token: str | None = None, auto_ready: bool | None = None, public: str = "",
                        title: str = "") -> int:
    """Join match ``code`` as ``name`` and play it to the end; returns the exit status (0 when it ended normally).

    In a terminal (no ``script``, no ``as_json``) the race screen runs;
    otherwise the commands of ``script`` (a file, or standard input for
    ``None`` or ``-``) are played in order (:func:`client_cli.race.run_script`).
    ``host_token`` makes this player the host; ``auto_ready`` (default: when
    not interactive) sends ``ready`` at once; ``public`` is the address the
    join line names; a ``title`` marks the daily challenge's attempt.
    Raises :class:`~client_cli.connection.ClientError` for an error the
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


def read_script(script: str | None) -> list[str]:
    """The lines of the whole script, read before the race (``None`` or ``-``: standard input).

    Raises :class:`~client_cli.connection.ClientError` when the file cannot be read.
    """
    if script is None or script == "-":
        return sys.stdin.read().splitlines()
    try:
        with open(script, encoding="utf-8") as file:
            return file.read().splitlines()
    except OSError as error:
        raise ClientError(f"cannot read the script {script}: {error}") from None
