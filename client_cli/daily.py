"""``forty-thieves daily``: play today's daily challenge, or show a day's leaderboard.

Playing: ``POST /daily/{variant}/attempt`` with the name and, once the
name is claimed, its player key (kept in the token file, see
:mod:`client_cli.tokens`); the server answers the attempt's match code and a player
token, and the attempt is then played like any race (:mod:`client_cli.race`:
the same screen, scripted mode, reconnects). Running the command again
while the attempt is open resumes it; after it has ended the server
refuses a second one.

Leaderboard: ``GET /daily`` (today's date) and
``GET /daily/{date}/{variant}/leaderboard``; once the day is over the
seed is shown too (``GET /daily/{date}/{variant}/reveal``).

After an attempt, and with ``--share``: the attempt's place on the day's board and the line to share, as
the server words them (``GET /daily/{date}/{variant}/leaderboard?name=N``, its ``entry``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

from .join import join_and_play, read_script
from .render import clock, fit, recovery_lines, wrap
from .server_link import ClientError, _refusal, _request, get_json
from .tokens import TokenStore


async def start_attempt(server: str, variant: str, name: str, store: TokenStore) -> dict[str, Any]:
    """Ask for today's attempt with the name's player key (``store``); keeps a newly issued key and the player
    token in ``store``, and prints the recovery code (to standard error) when this attempt claimed the name.

    Raises :class:`~client_cli.server_link.ServerRefused` (``bad_token``,
    ``already_played``, ``no_variant`` ...) with the server's message.
    """
    attempt = await post_as(server, f"/daily/{quote(variant, safe='')}/attempt", name, store)
    store.update(server, attempt["match"], players={name: attempt["player_token"]}, last_name=name,
                 daily=f"{attempt['date']} {attempt['variant']}")
    return attempt


async def post_as(server: str, path: str, name: str, store: TokenStore, **fields: Any) -> dict[str, Any]:
    """``POST path`` (a daily attempt or practice) as ``name`` with its player key (``store``) and ``fields``;
    the answer, after keeping a newly issued key in ``store`` and printing the recovery code (to standard
    error) when this call claimed the name. Raises :class:`~client_cli.server_link.ServerRefused`."""
    key = store.player_key(server, name)
    # The key under both names: ``token`` is what servers from before named players read.
    response = await _request("POST", server, path, json={"name": name, "player_key": key, "token": key or None,
                                                           **fields})
    if response.status_code != 200:
        raise _refusal(response)
    answer = dict(response.json())
    new_key = answer.get("player_key") or answer.get("name_token")
    if new_key:
        store.keep_player_key(server, name, new_key)
    if answer.get("recovery_code"):
        print("\n".join(recovery_lines(name, answer["recovery_code"], server)), file=sys.stderr)
    return answer


def checked_date(text: str) -> str:
    """``text`` when it is a date as the daily's routes write it (``YYYY-MM-DD``); raises
    :class:`~client_cli.server_link.ClientError` otherwise."""
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
        raise ClientError(f"{text[:20]!r} is not a date: write YYYY-MM-DD")
    return text


def board_lines(board: dict[str, Any], revealed: dict[str, Any] | None) -> list[str]:
    """The leaderboard as text lines (rank, name, status, time, moves, undos, hints, foundation cards)."""
    state = "final" if board["final"] else "live"
    lines = [f"Daily challenge {board['date']} {board['variant']} ({state}, {board['total']} ended)",
             " #  name                 status    time     moves undos hints cards"]
    for e in board["entries"]:
        lines.append(f"{e['rank']:>2}  {fit(e['name'], 20)} {e['status']:<9} {clock(e['time_ms']):>7} {e['moves']:>6} "
                     f"{e['undos']:>5} {e['hints']:>5} {e['foundation']:>5}")
    if not board["entries"]:
        lines.append("    (nobody has finished yet)")
    elif board["total"] > board["offset"] + len(board["entries"]):
        lines.append(f"    ... {board['total'] - board['offset'] - len(board['entries'])} more (the first "
                     f"{len(board['entries'])} shown; the rest: GET .../leaderboard?offset=N)")
    if revealed is not None:
        lines.append(f"seed {revealed['seed']} (attempt index {revealed['attempt_index']}; "
                     f"commitment {revealed['commitment'][:16]}…)")
        lines.append(f"check it: forty-thieves-engine deal --seed {revealed['seed']} --variant {revealed['variant']}")
    return lines


async def leaderboard(server: str, date: str | None, variant: str, as_json: bool) -> int:
    """Print a day's leaderboard (today's by default); 0 on success."""
    date = (await get_json(server, "/daily"))["date"] if date is None else checked_date(date)
    day = f"/daily/{quote(date, safe='')}/{quote(variant, safe='')}"  # each in its path segment, "/" and "?" too
    board = await get_json(server, f"{day}/leaderboard?limit=200")
    revealed = await get_json(server, f"{day}/reveal") if board["final"] else None
    if as_json:
        print(json.dumps({"leaderboard": board, "reveal": revealed}))
    else:
        for line in board_lines(board, revealed):
            print(line)
    return 0


async def place_of(server: str, date: str, variant: str, name: str) -> dict[str, Any] | None:
    """The ``entry`` of ``GET /daily/{date}/{variant}/leaderboard?name=N``: the place of ``name``'s ended attempt
    (``rank``, ``total``, ``beat_share``, the ``place`` line and the ``share`` text), or None while it has none."""
    day = f"/daily/{quote(date, safe='')}/{quote(variant, safe='')}"
    board = await get_json(server, f"{day}/leaderboard?limit=1&name={quote(name, safe='')}")
    entry = board.get("entry")
    return dict(entry) if entry else None


def _attempt_name(store: TokenStore, server: str, date: str, variant: str) -> str | None:
    """The name this machine played the daily of ``date`` and ``variant`` under (its token file), if any."""
    for _, entry in store.entries(server):
        if entry.get("daily") == f"{date} {variant}" and entry.get("players"):
            return str(next(iter(entry["players"])))
    return None


async def share(server: str, args: argparse.Namespace) -> int:
    """``forty-thieves daily --share``: print the line to share about the attempt of today (or ``--date``) of
    ``--name`` (default: the name this machine played it under), then the link to the day's page."""
    date = checked_date(args.date or (await get_json(server, "/daily"))["date"])
    name = args.name or _attempt_name(TokenStore(), server, date, args.variant)
    if not name:
        raise ClientError(f"no {args.variant} attempt of {date} on this machine: give the name with --name NAME")
    entry = await place_of(server, date, args.variant, name)
    if entry is None:
        raise ClientError(f"{name!r} has no ended {args.variant} attempt on {date}: its line is made once it ends")
    print(entry["share"])
    return 0


async def _print_place(server: str, attempt: dict[str, Any], name: str) -> None:
    """After the attempt: its place on the day's board and the line to share (once it has ended); the streak
    was on the results' screen (:func:`client_cli.render.results_lines`)."""
    try:
        entry = await place_of(server, attempt["date"], attempt["variant"], name)
    except ClientError:  # the game's own result is printed already: a board out of reach is no failure
        return
    if entry is not None:
        print(entry["place"])
        print("Share it (forty-thieves daily --share prints it again):")
        print(entry["share"])


async def _resuming(server: str, variant: str, name: str, store: TokenStore) -> bool:
    """Whether this machine holds a player token for today's attempt of ``name`` (coming back to it)."""
    today = (await get_json(server, "/daily"))["date"]
    for key, entry in store.entries(server):
        if entry.get("daily") == f"{today} {variant}" and name in entry.get("players", {}):
            return True
    return False


async def _ask_to_start(server: str, variant: str, name: str) -> bool:
    """Say what the attempt is and wait for Enter (True) or anything else / end of input (False): the one
    attempt of the day starts its clock with the deal, so it is dealt only when the player says so."""
    today = (await get_json(server, "/daily"))["date"]
    print("\n".join([*wrap(f"Daily challenge {today} ({variant}) as {name}."),
                     "One attempt a day: its clock starts with the deal."]))
    print("Press Enter to deal it now; anything else, or Ctrl-C, leaves it for later: ", end="", flush=True)
    try:
        answer = await asyncio.to_thread(sys.stdin.readline)
    except (KeyboardInterrupt, EOFError):
        return False
    return answer in ("\n", "\r\n")


async def daily(server: str, args: argparse.Namespace) -> int:
    """``forty-thieves daily ...`` (see the module docstring)."""
    if args.leaderboard:
        return await leaderboard(server, args.date, args.variant, args.json)
    if args.share:
        return await share(server, args)
    if args.date:
        raise ClientError("--date goes with --leaderboard or --share: only today's challenge can be played")
    if not args.name:
        raise ClientError("give your name with --name NAME (the first use claims it for this machine)")
    from .race import RaceClient, run_script, script_commands

    interactive = args.script is None and sys.stdin.isatty() and sys.stdout.isatty() and not args.json
    commands: AsyncIterator[str] | None = None
    first: str | None = None
    if not interactive:  # the first command first: a script that ran out resigns, so an empty one would spend
        # the day for nothing; the rest are played as they come
        if not args.json and args.script is None:
            print("not a terminal: reading commands from standard input, one a line", file=sys.stderr)
        commands = script_commands(read_script(args.script))
        first = await anext(commands, None)
        if first is None:
            raise ClientError("the script has no command: it would resign your one attempt of the day; give "
                              "commands with --script FILE or on standard input, or run this in a terminal")
    store = TokenStore()
    if interactive and not await _resuming(server, args.variant, args.name, store) and not await _ask_to_start(
            server, args.variant, args.name):
        print("Not started: the attempt of the day is still yours to play.")
        return 0
    attempt = await start_attempt(server, args.variant, args.name, store)
    if not args.json:
        print("\n".join(wrap(f"Daily challenge {attempt['date']} ({attempt['variant']}) as {args.name}: "
                             f"commitment {attempt['commitment'][:16]}…; the clock starts with the deal.")),
              file=sys.stderr)
    if interactive:
        title = f"Daily {attempt['variant']} {attempt['date']}"
        code = await join_and_play(server, attempt["match"], args.name, script=None, as_json=False, auto_ready=False,
                                   title=title)
    else:
        assert commands is not None and first is not None
        code = await run_script(RaceClient(server, attempt["match"], args.name, auto_ready=False),
                                _after(first, commands), as_json=args.json)
    if not args.json:
        await _print_place(server, attempt, args.name)
    return code


async def _after(first: str, rest: AsyncIterator[str]) -> AsyncIterator[str]:
    """``first``, then the lines of ``rest`` as they come."""
    try:
        yield first
        async for line in rest:
            yield line
    finally:
        await rest.aclose()  # type: ignore[attr-defined]
