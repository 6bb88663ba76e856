"""``forty-thieves``: the command-line client of Forty Thieves Race.

::

    forty-thieves [--server URL] create [--variant V] [--seed S] [--any-deal] [--players N]
                                        [--time-limit SECONDS] [--hints] [--undo none|safe|full]
                                        [--bot LEVEL[:MOVES_PER_MIN]]... [--name NAME] [--json]
    forty-thieves [--server URL] join CODE [--name NAME] [--script FILE|-] [--json]
    forty-thieves [--server URL] watch CODE [--json] [--follow]
    forty-thieves [--server URL] practice [--seed NUMBER] [--variant V] [--bot LEVEL[:MOVES_PER_MIN]]...
                                          [--ghost best|NAME] [--name NAME] [--script FILE|-] [--json]
    forty-thieves [--server URL] practice --day DATE [--variant V] [--ghost top|NAME] [--name NAME] [--script FILE|-]
    forty-thieves [--server URL] practice --match CODE --ghost best|NAME [--bot ...] [--name NAME] [--script FILE|-]
    forty-thieves [--server URL] replay FILE [--json]
    forty-thieves [--server URL] daily [--variant V] --name NAME [--script FILE|-] [--json]
    forty-thieves [--server URL] daily --share [--date D] [--variant V] [--name NAME]
    forty-thieves [--server URL] daily --leaderboard [--date D] [--variant V] [--json]
    forty-thieves [--server URL] me [--name NAME] [--json]
    forty-thieves [--server URL] history [--name NAME] [--limit N] [--json]
    forty-thieves [--server URL] player NAME [--json]
    forty-thieves [--server URL] recover NAME CODE
    forty-thieves [--server URL] group create NAME | join LINK_OR_ID | leave G | show G | list [--as PLAYER] ...
    forty-thieves [--server URL] bots --count N [--match CODE] [--players P] [--variant V] [--seed S] ...

The server's address comes from ``--server``, else ``FTR_SERVER``, else
``http://localhost:8000``. Exit status: 0 when the match (or the command)
ended normally, 1 when it did not (left early, no results), 2 for an
error the client explains (server unreachable, protocol version, a
refusal such as a taken name).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import shutil
import sys
from typing import Any

from protocol.codes import canonical_code

from .commands import bot_option
from .join import join_and_play
from .render import join_lines
from .server_link import ClientError, create_match, join_link, public_server, server_url
from .tokens import TokenStore


class _Version(argparse.Action):
    """``--version``: the installation's version line (``server/about.py``, shared by the three commands and
    importing nothing else of the server), imported only when asked: the client otherwise runs on the
    protocol alone."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        from server.about import version_line

        print(version_line(parser.prog))  # to stdout, as argparse's own version action
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="forty-thieves", description="Race friends on the identical Forty Thieves deal.")
    parser.add_argument("--version", action=_Version, help="print the version and which C paths run, and exit")
    server_help = "server URL (default: $FTR_SERVER, else http://localhost:8000)"
    parser.add_argument("--server", help=server_help)
    # The same option after the subcommand (the join line printed for friends puts it there); SUPPRESS leaves
    # a value given before the subcommand alone when it is not repeated after it.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--server", default=argparse.SUPPRESS, help=server_help)
    commands = _Commands(parser.add_subparsers(dest="command", required=True), common)

    create = commands.add_parser("create", help="create a match, print its code, and join it as the host")
    create.add_argument("--variant", default="classic", help="classic (default), relaxed, or another preset")
    create.add_argument("--seed", help="deal this seed (default: the server picks a secret one)")
    create.add_argument("--any-deal", action="store_true", help="any deal, not only deals proven solvable")
    create.add_argument("--players", type=int, default=None,
                        help="seats, bots included (default 2, or with bots: you and the bots)")
    create.add_argument("--time-limit", type=_time_limit, default=1800, metavar="SECONDS",
                        help="0: none (the match still ends after 24 h; default 1800)")
    create.add_argument("--hints", action="store_true", help="allow hints (counted in the results)")
    create.add_argument("--undo", choices=("none", "safe", "full"), default="safe")
    create.add_argument("--no-autoplay", action="store_true", help="no automatic moves of safe cards")
    create.add_argument("--bot", type=bot_option, action="append", default=[], metavar="LEVEL[:MOVES_PER_MIN]",
                        help="race a bot the server plays: casual, club, expert or strong (GET /bots), at "
                             "MOVES_PER_MIN commands a minute (1..600, default 30); up to 3, repeat the option")
    create.add_argument("--name", help="your display name (default: your login name)")
    create.add_argument("--json", action="store_true", help="only create: print {code, host_token, commitment, state}")

    join = commands.add_parser("join", help="join a match and race")
    join.add_argument("code")
    join.add_argument("--name", help="your display name (needed unless this machine already joined that match)")
    join.add_argument("--script", metavar="FILE", help="play the commands of FILE, one a line (-: stdin, each line as it arrives)")
    join.add_argument("--json", action="store_true", help="print every message received as one JSON line")

    watch = commands.add_parser("watch", help="live standings of a match, as a spectator")
    watch.add_argument("code")
    watch.add_argument("--json", action="store_true", help="one JSON line per change of the public state")
    watch.add_argument("--interval", type=float, default=2.0, help=argparse.SUPPRESS)
    watch.add_argument("--follow", action="store_true", help="after the results, watch the next round (a rematch)")
    watch.add_argument("--follow-wait", type=float, default=60.0, metavar="S",
                       help="with --follow: seconds to wait for a rematch (default 60)")

    from .practice import add_parser as add_practice_parser

    add_practice_parser(commands)

    replay = commands.add_parser("replay", help="step through a game record (RULES.md section 10), as the server "
                                                "replays it")
    replay.add_argument("file")
    replay.add_argument("--json", action="store_true", help="print every position as one JSON line")

    daily = commands.add_parser("daily", help="play today's daily challenge (one attempt a day), or its leaderboard")
    daily.add_argument("--variant", default="classic", help="classic (default) or relaxed")
    daily.add_argument("--name", help="your name (claimed with a secret token kept on this machine at first use)")
    daily.add_argument("--script", metavar="FILE", help="play the commands of FILE, one a line (-: stdin, each line as it arrives)")
    daily.add_argument("--leaderboard", action="store_true", help="show the leaderboard instead of playing")
    daily.add_argument("--share", action="store_true",
                       help="print the line to share about your ended attempt of today (or --date), and the link")
    daily.add_argument("--date", help="the day of --leaderboard or --share, YYYY-MM-DD (default: today, UTC)")
    daily.add_argument("--json", action="store_true", help="print JSON (messages when playing, the board otherwise)")

    me = commands.add_parser("me", help="your name's games, records and head-to-head on this server")
    me.add_argument("--name", help="which of your names (default: the one this machine holds a key of)")
    me.add_argument("--json", action="store_true", help="print the server's answer (GET /players/NAME) as JSON")

    history = commands.add_parser("history", help="your finished races and daily attempts, the newest first")
    history.add_argument("--name", help="which of your names (default: the one this machine holds a key of)")
    history.add_argument("--limit", type=int, default=50, help="games shown, 1 .. 200 (default 50)")
    history.add_argument("--json", action="store_true", help="print the games as a JSON list")

    player = commands.add_parser("player", help="anyone's games, records and head-to-head on this server")
    player.add_argument("name")
    player.add_argument("--json", action="store_true", help="print the server's answer (GET /players/NAME) as JSON")

    recover = commands.add_parser("recover", help="a new key for your name from its recovery code (another "
                                                  "machine, or a lost key)")
    recover.add_argument("name")
    recover.add_argument("code", help="the recovery code printed when the name was claimed (or last recovered)")

    from .groups import add_parser as add_group_parser

    add_group_parser(commands)

    bots = commands.add_parser("bots", help="load generator: N bots join matches and play legal moves")
    bots.add_argument("--count", type=int, required=True, help="number of bots")
    bots.add_argument("--match", help="join this match (default: create matches of --players bots each)")
    bots.add_argument("--players", type=int, default=2, help="bots per created match (default 2)")
    bots.add_argument("--variant", default="relaxed")
    bots.add_argument("--seed", help="seed of the created matches (default: the server's choice of any deal)")
    bots.add_argument("--moves", type=int, default=200, help="commands per bot before it resigns (default 200)")
    bots.add_argument("--delay", type=float, default=0.06, help="seconds between a bot's commands (default 0.06)")
    bots.add_argument("--json", action="store_true", help="print the summary as JSON")
    return parser


class _Commands:
    """``add_subparsers()`` whose every subcommand also takes the global options (``parents``)."""

    def __init__(self, actions: Any, common: argparse.ArgumentParser) -> None:
        self.actions, self.common = actions, common

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        """The subcommand ``name``'s parser (``kwargs`` as for argparse's ``add_parser``), global options included."""
        return self.actions.add_parser(name, parents=[self.common], **kwargs)  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    try:
        if args.command == "replay":  # its screen runs its own event loop
            from .replay import replay

            code = replay(args.file, server_url(args.server), as_json=args.json)
        else:
            code = asyncio.run(_run(args))
    except ClientError as error:
        print(f"forty-thieves: {error}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:  # the reader left early (``forty-thieves replay game.json | head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush must not fail again
        code = 1
    sys.exit(code)


def _time_limit(text: str) -> int:
    """``--time-limit``: whole seconds, 0 (none) .. 86400 (what the server accepts)."""
    try:
        seconds = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of seconds") from None
    if not 0 <= seconds <= 86400:
        raise argparse.ArgumentTypeError("give 0 (no limit) .. 86400 seconds")
    return seconds



async def _run(args: argparse.Namespace) -> int:
    server = server_url(args.server)
    if getattr(args, "code", None) is not None:
        args.code = canonical_code(args.code)  # typed in lower case, or with O for 0: the same match
    if args.command == "create":
        return await _create(server, args)
    if args.command == "join":
        return await join_and_play(server, args.code, args.name, script=args.script, as_json=args.json)
    if args.command == "watch":
        from .watch import watch

        return await watch(server, args.code, as_json=args.json, interval=args.interval, follow=args.follow,
                           follow_wait_s=args.follow_wait)
    if args.command == "practice":
        from .practice import practice

        return await practice(server, args, _login_name())
    if args.command == "daily":
        from .daily import daily

        return await daily(server, args)
    if args.command in ("me", "history", "player", "recover"):
        from . import players

        return int(await getattr(players, args.command)(server, args))
    if args.command == "group":
        from . import groups

        return await groups.run(server, args)
    from .bots import run_bots

    return await run_bots(server, args)


async def _create(server: str, args: argparse.Namespace) -> int:
    bots = args.bot
    players = args.players if args.players is not None else 1 + len(bots) if bots else 2
    settings: dict[str, Any] = {
        "variant": args.variant, "solvable_only": not args.any_deal, "players": players,
        "time_limit_s": args.time_limit, "undo": args.undo, "hints": args.hints, "autoplay": not args.no_autoplay,
    }
    if bots:
        settings["bots"] = bots
    if args.seed is not None:
        settings["seed"] = args.seed
    created = await create_match(server, settings)
    if args.json:
        print(json.dumps(created))
        return 0
    public = public_server(created, server)
    print(f"Match {created['code']} created ({args.variant}; {created['state']}).")
    # Printed whole on lines of their own (as in the lobby): these stay in the scrollback, where a line wider
    # than the terminal wraps in the middle of the address.
    width = shutil.get_terminal_size().columns
    if bots:
        print(f"Racing {len(bots)} bot{'s' if len(bots) > 1 else ''}: "
              + ", ".join(f"{bot['level']} ({bot.get('moves_per_min', 30)}/min)" for bot in bots))
    if players > 1 + len(bots):
        print("Friends join with:")
        print("\n".join(join_lines(created["code"], public, width)))
    print("or in a browser:")
    print(f"  {join_link(public, created['code'])}")
    if created["state"] == "preparing":
        print("Preparing a solvable deal: this may take a while for classic...")
    name = args.name or _login_name()
    TokenStore().keep_host(server, created["code"], name, created["host_token"])
    return await join_and_play(server, created["code"], name, script=None, as_json=False,
                               host_token=created["host_token"], public=public)


def _login_name() -> str:
    try:
        return getpass.getuser()[:24] or "host"
    except Exception:  # noqa: BLE001 - no login name on this system
        return "host"


if __name__ == "__main__":
    main()
