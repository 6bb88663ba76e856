"""``forty-thieves group``, as subprocesses of two machines (two token files), against a real server and Redis.

ann makes a group (the name claimed by the command: its recovery code on standard error, its key in the tokens
file), bob joins it by the printed link (which names the server), ann plays the relaxed daily and someone
outside the group plays it too (over the protocol): ``group show`` lists the two members and a board of ann alone,
with her place on the day's public board. ``group list``, leaving, and a join of no group; what a link or an
id names.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from client_cli.groups import parse_group
from client_cli.server_link import ClientError
from tests.integration.wsclient import resigned_daily_attempt

from .conftest import ROOT, ServerProcess

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def cli(server: ServerProcess, env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "client_cli", *args, "--server", server.url], cwd=ROOT, env=env,
                          input=stdin, capture_output=True, text=True, timeout=60, check=False)


def held_keys(env: dict[str, str], server: ServerProcess) -> dict[str, Any]:
    data = json.loads((Path(env["FTR_CLIENT_DATA"]) / "tokens.json").read_text())
    return dict(data.get(f"{server.url} players", {}))


async def test_create_join_show_leave(server: ServerProcess, client_env: dict[str, str], tmp_path: Path) -> None:
    suffix = uuid.uuid4().hex[:6]  # names are kept for good on a server: fresh ones per run
    ann, bob, cy = f"ann-{suffix}", f"bob-{suffix}", f"cy-{suffix}"
    bobs = dict(client_env, FTR_CLIENT_DATA=str(tmp_path / "bob's machine"))
    title = "Vendredi ♣ <b>club</b>"

    made = cli(server, client_env, "group", "create", title, "--as", ann)
    assert made.returncode == 0, made.stderr
    assert f"{ann} is your name on this server now" in made.stderr  # the claim's recovery code, once
    assert set(held_keys(client_env, server)) == {ann}
    link = re.search(r"^  (http://\S+/groups/(\w+)/join)$", made.stdout, re.MULTILINE)
    assert link, made.stdout
    join_url, group = link.group(1), link.group(2)
    assert join_url == f"{server.url}/groups/{group}/join"
    assert f"  forty-thieves group join {group} --server {server.url}" in made.stdout.splitlines()

    # The link names its server: no --server needed.
    joined = subprocess.run([sys.executable, "-m", "client_cli", "group", "join", join_url, "--as", bob], cwd=ROOT,
                            env=bobs, capture_output=True, text=True, timeout=60, check=False)
    assert joined.returncode == 0, joined.stderr
    assert f"{bob} is in {title} now." in joined.stdout
    again = cli(server, bobs, "group", "join", group.upper())  # the one name held: no --as; twice: the same
    assert again.returncode == 0, again.stderr

    await resigned_daily_attempt(server.url, server.ws_url, ann, held_keys(client_env, server)[ann])
    await resigned_daily_attempt(server.url, server.ws_url, cy)  # on the day's board, in no group

    shown = cli(server, client_env, "group", "show", group, "--variant", "relaxed")
    assert shown.returncode == 0, shown.stderr
    today = httpx.get(f"{server.url}/daily", timeout=10).json()["date"]
    place = httpx.get(f"{server.url}/daily/{today}/relaxed/leaderboard?name={ann}", timeout=10).json()["entry"]
    lines = shown.stdout.splitlines()
    assert lines[:3] == [f"{title} ({group}): 2 members, made by {ann}", f"  {ann} (made it, you)", f"  {bob}"]
    board = lines.index(f"relaxed {today} (live, 1 of 2 members ended)")
    assert lines[board + 1].split() == ["#", "name", "status", "time", "moves", "board"]
    row = lines[board + 2].split()
    assert (row[0], row[1], row[2], row[-1]) == ("1", ann, "resigned", f"#{place['rank']}")
    assert lines[board + 3] == ""  # ann's row alone: neither cy (no member) nor bob (no attempt)
    assert "Head-to-head: no two members have raced yet" in lines
    as_json = json.loads(cli(server, bobs, "group", "show", group, "--json").stdout)
    assert as_json["group"]["members"] == sorted([ann, bob]) and len(as_json["boards"]) == 2

    listed = cli(server, bobs, "group", "list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [f"{bob} is in 1 group:", f"  {group}  {title}"]
    left = cli(server, bobs, "group", "leave", group)
    assert left.returncode == 0 and "not in group" in left.stdout, left.stderr
    assert json.loads(cli(server, bobs, "group", "list", "--json").stdout) == []
    after = httpx.get(f"{server.url}/groups/{group}", headers={"Accept": "application/json"}, timeout=10).json()
    assert after["members"] == [ann]

    nothing = cli(server, bobs, "group", "join", "abcdefghjk")
    assert nothing.returncode == 2 and "no such group" in nothing.stderr, nothing.stderr

    # A key the server no longer holds (a new one made elsewhere): the list says how to get the name back.
    tokens = Path(bobs["FTR_CLIENT_DATA"]) / "tokens.json"
    data = json.loads(tokens.read_text())
    data[f"{server.url} players"][bob] = "x" * 32
    tokens.write_text(json.dumps(data))
    stale = cli(server, bobs, "group", "list")
    assert stale.returncode == 2 and f"forty-thieves recover {bob} CODE" in stale.stderr, stale.stderr


def test_a_link_a_page_a_path_or_an_id_names_the_group() -> None:
    assert parse_group("http://10.0.0.5:8000/groups/ab3defghjk/join") == ("ab3defghjk", "http://10.0.0.5:8000")
    assert parse_group("https://race.example.org/groups/AB3DEFGHJK") == ("ab3defghjk", "https://race.example.org")
    assert parse_group("/groups/ab3defghjk/join") == ("ab3defghjk", None)
    assert parse_group(" ab3defghjk ") == ("ab3defghjk", None)
    for wrong in ("", "http://h:1/daily/2026-12-07", "http://h:1/ab3defghjk", "ab/cd", "ab", "ab3defghjk!",
                  "http://h:1/groups/", "x" * 41):
        with pytest.raises(ClientError, match="is no group's link or id"):
            parse_group(wrong)
