"""Named players: ``forty-thieves me``, ``history``, ``player NAME`` and ``recover NAME CODE``.

A name is claimed on a server by its first race or daily attempt (or ``POST /players``); the server answers
its secret player key, which :class:`~client_cli.tokens.TokenStore` keeps and every later ``join``,
``create`` and ``daily`` of the name sends. These commands read ``GET /players/{name}`` (public: the
history, records and head-to-head of any name) and, with the recovery code printed at the claim, ask
``POST /players/{name}/recover`` for a new key (the old key and code stop working).
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from .render import clock, fit, plural, recovery_lines, streak_line
from .server_link import ClientError, _refusal, _request, get_json
from .tokens import TokenStore

HISTORY_LIMIT = 200
"""The most games ``GET /players/{name}?limit=N`` answers (and ``history`` asks for by default)."""


def _path(name: str) -> str:
    return f"/players/{quote(name, safe='')}"


async def player_profile(server: str, name: str, limit: int = 10, key: str = "") -> dict[str, Any]:
    """``GET /players/{name}?limit=N``: ``{"name", "games", "wins", "records", "recent", "head_to_head",
    "variants"}``, and with the player's ``key`` its ``groups``. Raises
    :class:`~client_cli.server_link.ServerRefused` ``no_player`` for a name nobody claimed, ``bad_token`` for a
    key that is not its (and ``ClientError`` for an answer that is no JSON object)."""
    return await get_json(server, f"{_path(name)}?limit={limit}", key)


def own_name(server: str, store: TokenStore, name: str | None, option: str = "--name NAME",
             none_held: str = "race or play the daily once with --name NAME (that claims it), or give --name NAME",
             ) -> str:
    """``name`` (the command's ``option``), else the one name this machine holds a key of on ``server``; raises
    :class:`ClientError` when that is none (the message ends with ``none_held``: what to do) or several (the
    message lists them)."""
    if name:
        return name
    held = sorted(store.player_keys(server))
    if len(held) == 1:
        return held[0]
    if not held:
        raise ClientError(f"this machine holds no player's key for {server}: {none_held}")
    raise ClientError(f"this machine holds the keys of {', '.join(held)} on {server}: say which with {option}")


def _date(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d") if ms > 0 else "-"


def _rate(wins: int, games: int) -> str:
    return f"{round(100 * wins / games)} %" if games else "-"


def game_lines(games: list[dict[str, Any]], me: str = "") -> list[str]:
    """Finished games (``recent`` entries) of player ``me`` as a table: date, variant, deal, rank of N, status,
    time, moves, cards up, the others in the race."""
    lines = ["date        variant        deal                rank status     time  moves cards  with"]
    for g in games:
        rank = f"{g.get('rank', '?')}/{g.get('of', '?')}"
        others = ", ".join(str(p) for p in g.get("players", []) if p != me)
        lines.append(f"{g.get('date', '')!s:<11} {fit(str(g.get('variant', '')), 14)} {fit(str(g.get('deal', '')), 19)}"
                     f" {rank:>4} {g.get('status', '')!s:<8} {clock(int(g.get('time_ms', 0))):>6}"
                     f" {int(g.get('moves', 0)):>6} {int(g.get('foundation', 0)):>5}  {others}".rstrip())
    if not games:
        lines.append("(no finished game yet)")
    return lines


def record_lines(profile: dict[str, Any]) -> list[str]:
    """Per variant: games, wins, win rate, best time, most cards up; then the records per deal (best won time,
    fewest moves in a win)."""
    lines = []
    for variant, v in sorted(dict(profile.get("variants") or {}).items()):
        best = int(v.get("best_time_ms", -1))
        lines.append(f"{variant}: {plural(int(v.get('games', 0)), 'game')}, {plural(int(v.get('wins', 0)), 'win')} "
                     f"({_rate(int(v.get('wins', 0)), int(v.get('games', 0)))}), best time "
                     f"{clock(best) if best >= 0 else '-'}, most cards up {int(v.get('most_foundation', 0))}")
    records = list(profile.get("records") or [])
    if records:
        lines.append("Records per deal (best won time, fewest moves in a win):")
    for r in records:
        best, fewest = int(r.get("best_time_ms", -1)), int(r.get("fewest_moves", -1))
        lines.append(f"  {fit(str(r.get('variant', '')), 14)} {fit(str(r.get('deal', '')), 22)} "
                     f"{clock(best) if best >= 0 else '-':>7} {plural(fewest, 'move') if fewest >= 0 else '-':>10}"
                     f"  {plural(int(r.get('wins', 0)), 'win')} of {plural(int(r.get('games', 0)), 'game')}")
    return lines


def head_to_head_lines(profile: dict[str, Any]) -> list[str]:
    """``bob: 5 races, 3-2 (1 drawn)`` per opponent, the one raced most first."""
    lines = []
    for h in profile.get("head_to_head") or []:
        drawn = f", {h.get('draws', 0)} drawn" if h.get("draws") else ""
        lines.append(f"  {fit(str(h.get('name', '')), 24)} {plural(int(h.get('races', 0)), 'race')}: "
                     f"{h.get('wins', 0)}-{h.get('losses', 0)}{drawn}")
    return ["Head-to-head (wins-losses):", *lines] if lines else []


def summary_lines(profile: dict[str, Any], recent: int = 5) -> list[str]:
    """A player's page as text: totals and win rate, the daily streak, per variant, records, the last ``recent`` games and the
    head-to-head."""
    games, wins = int(profile.get("games", 0)), int(profile.get("wins", 0))
    lines = [f"{profile.get('name', '')}: {plural(games, 'game')}, {plural(wins, 'win')} ({_rate(wins, games)})"]
    lines.append(streak_line(profile))
    lines += record_lines(profile)
    shown = list(profile.get("recent") or [])[:recent]
    if shown:
        lines += [f"Last {plural(len(shown), 'game')}:", *game_lines(shown, str(profile.get("name", "")))]
    return lines + head_to_head_lines(profile)


async def me(server: str, args: argparse.Namespace) -> int:
    """``forty-thieves me [--name N] [--json]``: the summary of this machine's own name."""
    name = own_name(server, TokenStore(), args.name)
    profile = await player_profile(server, name)
    print(json.dumps(profile) if args.json else "\n".join(summary_lines(profile)))
    return 0


async def history(server: str, args: argparse.Namespace) -> int:
    """``forty-thieves history [--name N] [--limit N] [--json]``: one's finished games, the newest first
    (``--json``: the server's list of game entries, as ``GET /players/{name}`` ``recent`` holds them)."""
    if not 1 <= args.limit <= HISTORY_LIMIT:
        raise ClientError(f"--limit is 1 .. {HISTORY_LIMIT}")
    name = own_name(server, TokenStore(), args.name)
    profile = await player_profile(server, name, args.limit)
    recent = list(profile.get("recent") or [])
    if args.json:
        print(json.dumps(recent))
        return 0
    print(f"{profile.get('name', name)}: {plural(int(profile.get('games', 0)), 'game')} played, the last "
          f"{len(recent)} here")
    print("\n".join(game_lines(recent, str(profile.get("name", name)))))
    return 0


async def player(server: str, args: argparse.Namespace) -> int:
    """``forty-thieves player NAME [--json]``: anyone's page (``--json``: the server's answer as it is)."""
    profile = await player_profile(server, args.name)
    print(json.dumps(profile) if args.json else "\n".join(summary_lines(profile)))
    return 0


async def recover(server: str, args: argparse.Namespace) -> int:
    """``forty-thieves recover NAME CODE``: a new key for ``NAME`` from its recovery code, kept in the tokens
    file; prints the new recovery code once (the old key and code stop working)."""
    response = await _request("POST", server, f"{_path(args.name)}/recover", json={"recovery_code": args.code})
    if response.status_code != 200:
        raise _refusal(response)
    answer = response.json()
    try:  # keep the key under the name as claimed (a later join of any case of it finds it)
        name = str((await player_profile(server, args.name, 1)).get("name") or args.name)
    except ClientError:
        name = args.name
    TokenStore().keep_player_key(server, name, answer["player_key"])
    print(f"{name}'s new key is kept on this machine; the old key and recovery code no longer work.")
    print("\n".join(recovery_lines(name, answer["recovery_code"], server, claimed=False)))
    return 0
