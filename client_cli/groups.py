"""Groups of named players: ``forty-thieves group create|join|leave|show|list``.

A group is made by a named player and joined by its link (``BASE/groups/G/join``, or its id ``G``); its page
``BASE/groups/G`` shows the members, the day's board among them and their head-to-head, as ``group show``
does. Making, joining and leaving send the player's key (the tokens file, :mod:`client_cli.tokens`, as
``me`` and ``history`` read it); a name this machine holds no key of is claimed first (``POST /players``,
its recovery code printed once on standard error). Routes: ``POST /groups``, ``GET /groups/G``,
``POST /groups/G/members``, ``DELETE /groups/G/members/{name}``, ``GET /groups/G/daily/{date}/{variant}``
and ``GET /players/{name}`` (its ``groups``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any
from urllib.parse import quote, urlsplit

from .players import own_name, player_profile
from .render import clock, fit, plural, recovery_lines
from .server_link import ClientError, ServerRefused, _refusal, _request, get_json, server_option, server_url
from .tokens import TokenStore

GROUP_ID = re.compile(r"[a-z0-9]{4,40}")
"""What a group id looks like (the server makes 10 characters of lower-case letters and digits); a longer or
odd one is refused before asking."""
DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def group_path(group: str) -> str:
    """The path of group ``group``'s routes (``/groups/G``), the id as one path segment."""
    return f"/groups/{quote(group, safe='')}"


def parse_group(text: str) -> tuple[str, str | None]:
    """``(group id, the link's server or None)`` from a join link (``http://host/groups/G/join``), a group's page
    address, a path (``/groups/G``) or the id itself, in any case. Raises :class:`ClientError` for anything
    else."""
    text = text.strip()
    base = None
    path = text
    if "://" in text:
        parts = urlsplit(text)
        base = f"{parts.scheme}://{parts.netloc}"
        path = parts.path
    segments = [s for s in path.split("/") if s]
    if len(segments) >= 2 and segments[0] == "groups":
        candidate = segments[1]
    elif len(segments) == 1 and base is None:
        candidate = segments[0]
    else:
        candidate = ""
    group = candidate.lower()
    if not GROUP_ID.fullmatch(group):
        raise ClientError(f"{text[:80]!r} is no group's link or id: give the link a member sent "
                          "(…/groups/ID/join) or its ID")
    return group, base


def _refused(error: ServerRefused, name: str = "") -> ClientError:
    """A refusal in the words of what to do about it (the server's message for the codes not named here)."""
    words = {
        "no_group": "no such group: the link may be mistyped, or the group is gone (it goes when its last member "
                    "leaves)",
        "group_full": "the group is full: ask a member to make another one",
        "too_many_groups": f"{name} is in as many groups as a name may be: leave one first (forty-thieves group "
                           "list shows them)",
        "bad_token": f"the key this machine holds for {name} is not the server's (a new key made elsewhere?): "
                     f"forty-thieves recover {name} CODE with its recovery code",
        "no_player": f"nobody has the name {name} on this server",
    }
    return ServerRefused(error.code, words.get(error.code) or str(error))


async def _claimed_key(server: str, store: TokenStore, name: str) -> tuple[str, str]:
    """``(name as held, key)``: the key this machine holds for ``name``, else a claim of it (``POST /players``;
    the key kept, the recovery code printed to standard error)."""
    key = store.player_key(server, name)
    if key:
        return next((held for held, k in store.player_keys(server).items() if k == key), name), key
    response = await _request("POST", server, "/players", json={"name": name})
    if response.status_code == 409:
        raise ClientError(f"the name {name} is taken on {server} and this machine holds no key of it: if it is "
                          f"yours, forty-thieves recover {name} CODE with its recovery code")
    if response.status_code != 201:
        raise _refusal(response)
    claim = dict(response.json())
    store.keep_player_key(server, claim["name"], claim["player_key"])
    print("\n".join(recovery_lines(claim["name"], claim["recovery_code"], server)), file=sys.stderr)
    return str(claim["name"]), str(claim["player_key"])


def _player(server: str, store: TokenStore, name: str | None) -> str:
    """``--as``, else the one name this machine holds a key of on ``server`` (:func:`~client_cli.players.own_name`;
    a name nobody has is claimed by the command)."""
    return own_name(server, store, name, "--as PLAYER",
                    "say which name to use with --as PLAYER (a name nobody has is claimed for this machine)")


async def _post(server: str, path: str, body: dict[str, Any], want: int, name: str) -> dict[str, Any]:
    key = str(body.get("player_key", ""))
    response = await _request("POST", server, path, json=body, headers={"Authorization": f"Bearer {key}",
                                                                       "Accept": "application/json"})
    if response.status_code != want:
        raise _refused(_refusal(response), name)
    answer = response.json()
    if not isinstance(answer, dict):
        raise ClientError(f"the server at {server} answered {path} with something else than a JSON object")
    return answer


def member_lines(group: dict[str, Any], me: str = "") -> list[str]:
    """``Friday club (abcdefghjk): 3 members, made by ann`` then the members, one a line (the owner and
    ``me`` marked)."""
    members = list(group.get("members") or [])
    head = (f"{group.get('name', '')} ({group.get('group', '')}): {plural(len(members), 'member')}, made by "
            f"{group.get('owner', '')}")
    lines = [head]
    for name in members:
        marks = [mark for mark, on in (("made it", name == group.get("owner")), ("you", name == me)) if on]
        lines.append(f"  {name}{' (' + ', '.join(marks) + ')' if marks else ''}")
    return lines


def board_lines(board: dict[str, Any], members: int) -> list[str]:
    """A group's board of a day and variant: rank, name, status, time, moves, the place on the day's board."""
    state = "final" if board.get("final") else "live"
    head = (f"{board.get('variant', '')} {board.get('date', '')} ({state}, {board.get('total', 0)} of "
            f"{plural(members, 'member')} ended)")
    lines = [head, " #  name                 status    time     moves  board"]
    for e in board.get("entries") or []:
        lines.append(f"{e['rank']:>2}  {fit(str(e['name']), 20)} {e['status']:<9} {clock(int(e['time_ms'])):>7} "
                     f"{int(e['moves']):>6}  #{e['board_rank']}")
    if not board.get("entries"):
        lines.append("    (no member has ended an attempt that day)")
    return lines


def head_to_head_lines(group: dict[str, Any]) -> list[str]:
    """``ann 3-2 bob (5 races, 1 drawn)`` per pair of members who raced, the pair raced most first."""
    lines = []
    for h in group.get("head_to_head") or []:
        drawn = f", {h.get('draws', 0)} drawn" if h.get("draws") else ""
        lines.append(f"  {h.get('a', '')} {h.get('a_wins', 0)}-{h.get('b_wins', 0)} {h.get('b', '')} "
                     f"({plural(int(h.get('races', 0)), 'race')}{drawn})")
    return ["Head-to-head (wins-wins):", *lines] if lines else ["Head-to-head: no two members have raced yet"]


def invite_lines(group: dict[str, Any], server: str) -> list[str]:
    """How friends join: the command and the link for a browser. The command names the server as the link does
    (the server's ``FTR_PUBLIC_URL``, the address friends reach it at), else as ``server``."""
    join_url, suffix = str(group.get("join_url") or ""), f"/groups/{group.get('group', '')}/join"
    public = join_url[:-len(suffix)] if join_url.endswith(suffix) else server
    return ["Friends join with:", f"  forty-thieves group join {group.get('group', '')}{server_option(public)}",
            "or in a browser:", f"  {join_url}"]


async def create(server: str, args: argparse.Namespace) -> int:
    """``group create NAME [--as PLAYER] [--json]``: a new group with the player as its first member."""
    store = TokenStore()
    name, key = await _claimed_key(server, store, _player(server, store, args.as_name))
    made = await _post(server, "/groups", {"name": args.name, "player": name, "player_key": key}, 201, name)
    if args.json:
        print(json.dumps(made))
        return 0
    print(f"Group {made.get('name', args.name)} made ({made['group']}); its page: {made.get('page_url', '')}")
    print("\n".join(invite_lines(made, server)))
    return 0


async def join(server: str, args: argparse.Namespace) -> int:
    """``group join LINK_OR_ID [--as PLAYER] [--json]``: join a group (twice is the same as once)."""
    store = TokenStore()
    group, _ = parse_group(args.group)
    name, key = await _claimed_key(server, store, _player(server, store, args.as_name))
    joined = await _post(server, f"{group_path(group)}/members", {"player": name, "player_key": key}, 200, name)
    if args.json:
        print(json.dumps(joined))
        return 0
    print(f"{name} is in {joined.get('name', group)} now.")
    print("\n".join(member_lines(joined, name)))
    return 0


async def leave(server: str, args: argparse.Namespace) -> int:
    """``group leave G [--as PLAYER]``: leave a group (not a member: nothing to do, said so too)."""
    store = TokenStore()
    group, _ = parse_group(args.group)
    name = _player(server, store, args.as_name)
    key = store.player_key(server, name)
    if not key:
        raise ClientError(f"this machine holds no key for {name} on {server}: leaving needs the name's key")
    response = await _request("DELETE", server, f"{group_path(group)}/members/{quote(name, safe='')}",
                              headers={"Authorization": f"Bearer {key}", "Accept": "application/json"})
    if response.status_code != 204:
        raise _refused(_refusal(response), name)
    print(f"{name} is not in group {group} (any more).")
    return 0


async def show(server: str, args: argparse.Namespace) -> int:
    """``group show G [--date D] [--variant V] [--json]``: the members, the day's board per variant (today by
    default; ``--variant`` only that one) and the head-to-head."""
    group_id, _ = parse_group(args.group)
    if args.date is not None and not DATE.fullmatch(args.date):
        raise ClientError(f"{args.date[:20]!r} is not a date: write YYYY-MM-DD")
    try:
        group = await get_json(server, group_path(group_id))
    except ServerRefused as error:
        raise _refused(error) from None
    date = args.date or str(group.get("today", ""))
    variants = [args.variant] if args.variant else [str(v) for v in group.get("variants") or []]
    boards: list[dict[str, Any]] = []
    missing: list[str] = []
    for variant in variants:
        try:
            boards.append(await get_json(server, f"{group_path(group_id)}/daily/{quote(date, safe='')}/"
                                                 f"{quote(variant, safe='')}"))
        except ServerRefused as error:
            if error.code not in ("no_day", "no_variant"):
                raise _refused(error) from None
            missing.append(f"{variant} {date}: {error}")
    if args.json:
        print(json.dumps({"group": group, "boards": boards}))
        return 0
    store = TokenStore()
    mine = [n for n in store.player_keys(server) if n in (group.get("members") or [])]
    lines = member_lines(group, mine[0] if len(mine) == 1 else "")
    for board in boards:
        lines += ["", *board_lines(board, len(group.get("members") or []))]
    lines += [f"({line})" for line in missing]
    lines += ["", *head_to_head_lines(group), "", f"Its page: {group.get('page_url', '')}"]
    print("\n".join(lines))
    return 0


async def list_groups(server: str, args: argparse.Namespace) -> int:
    """``group list [--as PLAYER] [--json]``: the groups the player is in."""
    store = TokenStore()
    name = _player(server, store, args.as_name)
    key = store.player_key(server, name)
    if not key:
        raise ClientError(f"this machine holds no key of {name!r} on {server}: a player's groups are shown to it "
                          f"only (forty-thieves recover {name} CODE brings the key here)")
    try:
        profile = await player_profile(server, name, 1, key)
    except ServerRefused as error:
        raise _refused(error, name) from None
    groups = list(profile.get("groups") or [])
    if args.json:
        print(json.dumps(groups))
        return 0
    if not groups:
        print(f"{profile.get('name', name)} is in no group: make one with forty-thieves group create NAME, or join "
              "one by its link")
        return 0
    print(f"{profile.get('name', name)} is in {plural(len(groups), 'group')}:")
    for g in groups:
        print(f"  {g.get('group', '')}  {g.get('name', '')}")
    return 0


def add_parser(commands: Any) -> None:
    """The ``group`` subcommand and its own subcommands, on ``commands`` (the CLI's ``_Commands``)."""
    group = commands.add_parser("group", help="groups of friends: a daily board among them and their head-to-head")
    actions = group.add_subparsers(dest="action", required=True)
    as_help = "which of your names (default: the one this machine holds a key of; a new one is claimed)"

    def action(name: str, help: str) -> argparse.ArgumentParser:
        return actions.add_parser(name, parents=[commands.common], help=help)  # type: ignore[no-any-return]

    made = action("create", "make a group, with you as its first member; prints the link friends join by")
    made.add_argument("name", help="the group's name (1 .. 40 characters; groups' names need not be unique)")
    made.add_argument("--as", dest="as_name", metavar="PLAYER", help=as_help)
    made.add_argument("--json", action="store_true", help="print the server's answer as JSON")
    joined = action("join", "join a group by the link a member sent (or its id)")
    joined.add_argument("group", metavar="LINK_OR_ID")
    joined.add_argument("--as", dest="as_name", metavar="PLAYER", help=as_help)
    joined.add_argument("--json", action="store_true", help="print the group as JSON")
    left = action("leave", "leave a group (its last member leaving ends it)")
    left.add_argument("group", metavar="LINK_OR_ID")
    left.add_argument("--as", dest="as_name", metavar="PLAYER", help=as_help.split(";")[0] + ")")
    shown = action("show", "a group's members, its board of a day and the head-to-head")
    shown.add_argument("group", metavar="LINK_OR_ID")
    shown.add_argument("--date", help="the board's day, YYYY-MM-DD (default: today, UTC)")
    shown.add_argument("--variant", help="only this variant's board (default: every variant of the daily)")
    shown.add_argument("--json", action="store_true", help="print {group, boards} as JSON")
    listed = action("list", "the groups one of your names is in")
    listed.add_argument("--as", dest="as_name", metavar="PLAYER", help=as_help.split(";")[0] + ")")
    listed.add_argument("--json", action="store_true", help="print the groups as a JSON list")


async def run(server: str, args: argparse.Namespace) -> int:
    """Run ``forty-thieves group ACTION``; a link given instead of an id names the server when neither
    ``--server`` nor ``FTR_SERVER`` does."""
    link = getattr(args, "group", None)
    if link and not (getattr(args, "server", None) or os.environ.get("FTR_SERVER")):
        _, base = parse_group(link)
        if base:
            server = server_url(base)
    handlers = {"create": create, "join": join, "leave": leave, "show": show, "list": list_groups}
    return await handlers[args.action](server, args)
