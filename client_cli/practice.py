"""``forty-thieves practice``: a game alone on a deal by its game number, played as ``create`` plays a race.

The match made: one seat for the player (and one more per ``--bot``), ``seed`` the game number (``--seed``,
else a random one, printed so that the deal can be played or shared again), any deal (``solvable_only``
false: the number is the deal), full undo, hints, no time limit; ``--ghost best`` races the best recorded game
of the player's own name on this deal, ``--ghost NAME`` that of NAME; with ``--match CODE``, NAME's game of
that ended match, on its revealed deal (:func:`match_deal`). It is created with ``POST /matches`` and
played by :func:`client_cli.join.join_and_play` (the race screen, or ``--script``), ready at once: the game
starts without waiting in the lobby. After the results of a game alone, ``restart`` deals it again.

``--day DATE`` practises the deal of a revealed day's daily challenge instead (``POST
/daily/{date}/{variant}/practice``, on no board), under ``--name`` with its key as the daily plays it;
``--ghost top`` races the day's first-ranked attempt, ``--ghost NAME`` NAME's attempt of that day (``best``:
the player's own). A day's deal is the day's, so ``--seed`` and ``--bot`` (no bot plays a daily deal) are refused
with it.
"""

from __future__ import annotations

import argparse
import re
import secrets
import sys
from typing import Any
from urllib.parse import quote

from .commands import bot_option
from .daily import checked_date, post_as
from .join import join_and_play
from .players import own_name
from .server_link import ClientError, create_match, get_json, join_link, public_server
from .tokens import TokenStore

RANDOM_NUMBERS = 1_000_000
"""A random game number is 1 .. 999999, as the home page picks it: short to type and to share."""
MAX_BOTS = 3
"""The most bots a match takes (the server refuses more)."""
DEFAULT_PACE = 30
"""A bot's moves per minute when ``--bot`` names none (the server's default)."""

MAX_DIGITS = 200
"""A game number's most digits: the server takes a seed of 1 .. 200 characters."""

_DIGITS = re.compile(r"[0-9]+")


def game_number(text: str) -> str:
    """``--seed``: a game number, 1 to :data:`MAX_DIGITS` digits (a decimal seed string); raises
    :class:`argparse.ArgumentTypeError` otherwise, saying which (a long one is not repeated whole)."""
    if not _DIGITS.fullmatch(text):
        shown = repr(text) if len(text) <= 40 else f"{text[:20]!r}... ({len(text)} characters)"
        raise argparse.ArgumentTypeError(f"{shown} is no game number: digits only")
    if len(text) > MAX_DIGITS:
        raise argparse.ArgumentTypeError(f"a game number has at most {MAX_DIGITS} digits, this one {len(text)}")
    return text



def add_parser(commands: Any) -> None:
    """The ``practice`` subcommand on ``commands`` (``client_cli.__main__``'s subcommand adder)."""
    practice = commands.add_parser("practice", help="play alone on a deal by its game number (undo, hints, no "
                                                    "time limit), against a bot or a ghost if you like")
    practice.add_argument("--seed", type=game_number, metavar="NUMBER",
                          help="the game number (default: a random one, printed)")
    practice.add_argument("--variant", default="classic", help="classic (default), relaxed, or another preset")
    practice.add_argument("--bot", action="append", type=bot_option, default=[], metavar="LEVEL[:MOVES_PER_MIN]",
                          help=f"race a bot of that level at that pace (default {DEFAULT_PACE} moves a minute); "
                               f"repeat for up to {MAX_BOTS}")
    practice.add_argument("--ghost", metavar="best|NAME",
                          help="race the best recorded game on this deal: best: your own name's; else NAME's "
                               "(with --day: top, the day's first attempt; else NAME's attempt that day)")
    practice.add_argument("--match", metavar="CODE", help="with --ghost NAME (or best: yours): race NAME's game of "
                                                          "the ended match CODE, on its deal (its seed revealed)")
    practice.add_argument("--day", metavar="DATE", help="practise the deal of the daily challenge of DATE "
                                                        "(YYYY-MM-DD, once revealed), on no board")
    practice.add_argument("--name", help="your name (default: the one this machine holds a key of, else your login "
                                         "name)")
    practice.add_argument("--script", metavar="FILE",
                          help="play the commands of FILE, one a line (-: stdin, each line as it arrives)")
    practice.add_argument("--json", action="store_true", help="print every message received as one JSON line")


def practice_settings(variant: str, number: str, bots: list[dict[str, Any]], ghost: str = "") -> dict[str, Any]:
    """The ``POST /matches`` body of a game alone on game ``number``: a seat per bot on top of the player's."""
    settings: dict[str, Any] = {"variant": variant, "players": 1 + len(bots), "seed": number, "solvable_only": False,
                                "undo": "full", "hints": True, "time_limit_s": 0}
    if bots:
        settings["bots"] = bots
    if ghost:
        settings["ghost"] = {"name": ghost}
    return settings


def player_name(server: str, store: TokenStore, given: str | None, login_name: str) -> str:
    """The name a practice is played under: ``given`` (``--name``), else the one name this machine holds a key
    of on ``server``, else (none held, or several) ``login_name``, as ``create`` takes it."""
    try:
        return own_name(server, store, given)
    except ClientError:
        return login_name


async def practice(server: str, args: argparse.Namespace, login_name: str) -> int:
    """Create the game alone that ``args`` (the ``practice`` options) ask for and play it; returns the exit
    status as ``create`` does. ``login_name``: the player's name when neither ``--name`` nor a held key gives
    one. Raises :class:`~client_cli.server_link.ClientError` for a refusal (too many bots, no such ghost ...)."""
    if args.day is not None:
        return await day_practice(server, args, login_name)
    if args.ghost and args.match is None and args.seed is None:
        raise ClientError("--ghost races a recorded game of this deal: give its --seed NUMBER (or --match CODE)")
    if args.match is not None and (args.seed is not None or not args.ghost):
        raise ClientError("--match races a game of that match on its own deal: give --ghost NAME (or best), not --seed")
    if len(args.bot) > MAX_BOTS:
        raise ClientError(f"--bot: at most {MAX_BOTS} bots race in a match")
    store = TokenStore()
    ghost = ""
    if args.ghost == "best":  # the player's own name: the one whose best games the server recorded
        name = ghost = own_name(server, store, args.name, none_held="give --name NAME (the name that played it)")
    else:
        name = player_name(server, store, args.name, login_name)
        ghost = args.ghost or ""
    if args.match is not None:
        body, number = await match_deal(server, args.match, args.bot, ghost)
    else:
        number = args.seed or str(1 + secrets.randbelow(RANDOM_NUMBERS - 1))
        body = practice_settings(args.variant, number, args.bot, ghost)
    created = await create_match(server, body)
    public = public_server(created, server)
    against = [f"a {bot['level']} bot" for bot in args.bot] + (
        [f"{ghost}'s game in match {args.match}" if args.match else f"{ghost}'s best"] if ghost else [])
    # With --json the standard output is the messages alone: the line that names the game goes to stderr.
    print(f"Game {number} ({body['variant']}), alone{' against ' + ' and '.join(against) if against else ''}: "
          f"match {created['code']}, {join_link(public, created['code'])}", file=sys.stderr if args.json else sys.stdout)
    store.keep_host(server, created["code"], name, created["host_token"])
    return await join_and_play(server, created["code"], name, script=args.script, as_json=args.json,
                               host_token=created["host_token"], auto_ready=True, public=public)


async def match_deal(server: str, code: str, bots: list[dict[str, Any]], ghost: str) -> tuple[dict[str, Any], str]:
    """The ``POST /matches`` body of a game alone racing ``ghost``'s game of the ended match ``code`` on its deal
    (``GET /matches/{code}/results``: its revealed seed, or the position text a chosen deal was), and how the
    deal is named (the seed; ``"of match CODE"`` for a position). Raises
    :class:`~client_cli.server_link.ClientError` for a match not ended (or not kept), or a daily attempt's."""
    results = await get_json(server, f"/matches/{quote(code, safe='')}/results")
    settings = (await get_json(server, f"/matches/{quote(code, safe='')}")).get("settings") or {}
    seed = results.get("seed")
    if not isinstance(seed, str) or not seed:
        raise ClientError(f"match {code}'s deal is not revealed (a daily attempt's stays secret): no game of it to race")
    body = practice_settings(str(settings.get("variant", "classic")), seed, bots, ghost)
    body["ghost"] = {"name": ghost, "match": code}
    body["autoplay"] = bool(settings.get("autoplay", True))
    if "\n" in seed:  # a chosen position is kept as its text: dealt as that position again
        body["deal"] = body.pop("seed")
        return body, f"of match {code}"
    return body, seed


def day_ghost(ghost: str | None, name: str) -> str | dict[str, str] | None:
    """The practice body's ``ghost`` for ``--ghost`` with ``--day``: ``"top"``, ``{"name": ...}`` (``best``:
    ``name``, the player's own attempt), or None for none."""
    if not ghost:
        return None
    return "top" if ghost == "top" else {"name": name if ghost == "best" else ghost}


async def day_practice(server: str, args: argparse.Namespace, login_name: str) -> int:
    """``practice --day DATE``: a practice of that day's daily deal (see the module docstring), played as a
    game alone is. Raises :class:`~client_cli.server_link.ClientError` for ``--seed`` or ``--bot`` with it, a
    malformed date, and the server's refusals (``not_revealed``, ``no_ghost``, ``bad_token`` ...)."""
    if args.seed is not None or args.bot:
        raise ClientError("--day practises that day's own deal, alone: it takes neither --seed nor --bot")
    date = checked_date(args.day)
    store = TokenStore()
    name = player_name(server, store, args.name, login_name)
    ghost = day_ghost(args.ghost, name)
    fields = {"ghost": ghost} if ghost is not None else {}
    answer = await post_as(server, f"/daily/{quote(date, safe='')}/{quote(args.variant, safe='')}/practice", name,
                           store, **fields)
    store.update(server, answer["match"], players={name: answer["player_token"]}, last_name=name)
    against = "" if ghost is None else f" against {ghost['name']}'s attempt" if isinstance(ghost, dict) else \
        " against the day's best"
    print(f"Practice of the daily {date} ({answer['variant']}), seed {answer['seed']}, on no board{against}: "
          f"match {answer['match']}", file=sys.stderr if args.json else sys.stdout)
    return await join_and_play(server, answer["match"], name, script=args.script, as_json=args.json,
                               auto_ready=True)
