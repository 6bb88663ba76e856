"""The client as friends use it, against real server processes and Redis: printed lines run, codes read aloud,
the public address, a spectator across a server restart, and a quiet Ctrl-C with a spectator connected."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import redis

from tests.integration.wsclient import create_match

from .conftest import ROOT, SEED, VARIANT, ServerProcess, run_client


def client(env: dict[str, str], line: str, stdin: str = "", timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run a ``forty-thieves ...`` line as printed (``forty-thieves`` is ``python -m client_cli`` here)."""
    words = line.split()
    assert words[0] == "forty-thieves", line
    return subprocess.run([sys.executable, "-m", "client_cli", *words[1:]], cwd=ROOT, env=env, input=stdin,
                          capture_output=True, text=True, timeout=timeout, check=False)


def test_the_printed_watch_line_runs(server: ServerProcess, client_env: dict[str, str]) -> None:
    code = create_match(server.url, variant=VARIANT, seed=SEED, players=1)["code"]
    first = client(client_env, f"forty-thieves --server {server.url} join {code} --name ann --script -", "s\n")
    assert first.returncode == 0, first.stderr
    late = client(client_env, f"forty-thieves --server {server.url} join {code} --name carol --script -", "s\n")
    printed = late.stderr.split("(", 1)[1] if "(forty-thieves watch" in late.stderr else ""
    line = printed.split(" prints them")[0]
    assert line.startswith(f"forty-thieves watch {code} --server "), late.stderr
    shown = client(client_env, line)
    assert shown.returncode == 0, shown.stderr
    assert "ann" in shown.stdout and "resigned" in shown.stdout and "seed '4'" in shown.stdout


def test_codes_are_found_in_any_case_with_look_alikes_and_old_codes_still_work(server: ServerProcess,
                                                                               client_env: dict[str, str]) -> None:
    code = create_match(server.url, variant=VARIANT, seed=SEED, players=1)["code"]
    assert len(code) == 12 and not set("ILOU") & set(code)
    spoken = code.lower().replace("0", "o").replace("1", "l")
    assert httpx.get(f"{server.url}/matches/{spoken}", timeout=10).json()["code"] == code
    played = client(client_env, f"forty-thieves join {spoken} --name ann --script - --server {server.url}", "s\n")
    assert played.returncode == 0 and "1  ann" in played.stdout, played.stderr
    assert httpx.get(f"{server.url}/matches/{spoken}/results", timeout=10).status_code == 200
    # A match made before (10 characters, case-sensitive): its keys renamed to such a code, found as given.
    old = "m0XF7fVBje"
    fresh = create_match(server.url, variant=VARIANT, seed=SEED, players=1)["code"]
    with redis.Redis.from_url(server.env["REDIS_URL"]) as db:
        for key in db.scan_iter(match=f"{{m:{old}}}*"):  # an earlier run's, on a Redis not emptied since
            db.delete(key)
        for key in db.scan_iter(match=f"{{m:{fresh}}}*"):
            db.rename(key, key.decode().replace(fresh, old))
    assert httpx.get(f"{server.url}/matches/{old}", timeout=10).status_code == 200
    assert httpx.get(f"{server.url}/matches/{old.lower()}", timeout=10).status_code == 404
    joined = client(client_env, f"forty-thieves join {old} --name bob --script - --server {server.url}", "s\n")
    assert joined.returncode == 0 and "1  bob" in joined.stdout, joined.stderr


def test_the_join_line_names_the_public_address(make_server, client_env: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    public = "https://race.example.org"
    server = make_server(FTR_PUBLIC_URL=public + "/")
    created = httpx.post(f"{server.url}/matches", json={"variant": VARIANT, "seed": SEED}, timeout=10).json()
    assert created["join_url"] == f"{public}/join/{created['code']}"
    plain = make_server()
    created = httpx.post(f"{plain.url}/matches", json={"variant": VARIANT, "seed": SEED}, timeout=10).json()
    assert created["join_url"] == f"{plain.url}/join/{created['code']}"  # the request's own address
    host = run_client(["create", "--variant", VARIANT, "--seed", SEED, "--players", "2", "--server", server.url],
                      client_env)
    line = ""
    deadline = time.monotonic() + 30
    while "forty-thieves join" not in line and time.monotonic() < deadline:
        line = host.stdout.readline() if host.stdout else ""
    while line.rstrip().endswith("\\") and host.stdout:  # a line cut to the terminal's width goes on below
        line = line.rstrip()[:-1] + host.stdout.readline()
    host.kill()
    host.communicate(timeout=10)
    line = " ".join(line.split())
    assert line.endswith(f"--server {public}"), line
    from client_cli.__main__ import _parser

    args = _parser().parse_args(line.split()[1:])  # as printed, through the real parser
    assert (args.command, args.server, args.name) == ("join", public, "NAME")


def test_watch_follows_the_match_across_a_server_restart(make_server, client_env: dict[str, str],  # type: ignore[no-untyped-def]
                                                         tmp_path: Path) -> None:
    server = make_server()
    code = create_match(server.url, variant=VARIANT, seed=SEED, players=1)["code"]
    watcher = run_client(["--server", server.url, "watch", code, "--json"], client_env)
    assert watcher.stdout is not None
    first = watcher.stdout.readline()  # the watcher has read the match (a line, or '' if it quit) before the kill
    assert json.loads(first)["state"] == "lobby", first
    server.kill()
    time.sleep(1.0)
    server.start()  # same port, same Redis
    played = client(client_env, f"forty-thieves --server {server.url} join {code} --name ann --script -", "s\n")
    assert played.returncode == 0, played.stderr
    out, err = watcher.communicate(timeout=60)
    assert watcher.returncode == 0, err
    states = [json.loads(line) for line in (first + out).splitlines() if line.strip()]
    assert states[-2]["state"] == "finished" and states[-1]["ranking"][0]["name"] == "ann"


def test_ctrl_c_with_a_spectator_connected_logs_no_error(redis_url: str, tmp_path: Path) -> None:
    """uvicorn logged "ERROR: ASGI callable returned without completing response." at every Ctrl-C while a
    spectator followed a match's event stream (sse-starlette cancelled the stream without its last message)."""
    from tests.integration.test_resilience import _ctrl_c, _server_in_its_own_group

    log_path = tmp_path / "server.log"
    with _server_in_its_own_group(redis_url, log_path) as process:
        deadline = time.monotonic() + 60
        while "Uvicorn running on" not in log_path.read_text():
            assert time.monotonic() < deadline and process.poll() is None, log_path.read_text()[-2000:]
            time.sleep(0.1)
        url = log_path.read_text().split("Uvicorn running on ", 1)[1].split()[0]
        code = create_match(url, variant=VARIANT, seed=SEED, players=2)["code"]
        opened = threading.Event()

        def spectate() -> None:
            try:
                with httpx.stream("GET", f"{url}/matches/{code}/events", timeout=30) as response:
                    opened.set()
                    for _ in response.iter_lines():
                        pass
            except httpx.HTTPError:
                pass

        spectator = threading.Thread(target=spectate, daemon=True)
        spectator.start()
        assert opened.wait(15)
        time.sleep(0.5)
        _ctrl_c(process)
        spectator.join(10)
    text = log_path.read_text()
    assert "Shutting down" in text and "ASGI callable returned without completing response" not in text, text[-3000:]


def test_the_join_line_create_prints_fits_80_columns_and_runs(server: ServerProcess,
                                                               client_env: dict[str, str]) -> None:
    """The lines ``create`` prints before its screen stay in the terminal's scrollback: at 80 columns the
    join command must not wrap in the middle of the address."""
    env = {**client_env, "COLUMNS": "80"}
    process = run_client(["create", "--variant", VARIANT, "--players", "2", "--name", "ann", "--server",
                          server.url], env)
    printed: list[str] = []
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 30
        while not any("/join/" in line for line in printed):
            assert time.monotonic() < deadline and process.poll() is None, printed
            printed.append(process.stdout.readline().rstrip("\n"))
    finally:
        process.kill()
        process.communicate(timeout=10)  # closes its pipes
    assert all(len(line) <= 80 for line in printed), printed
    command = [line for line in printed if "forty-thieves join" in line]
    assert len(command) == 1, printed
    at = printed.index(command[0])
    words = " ".join(line.rstrip("\\") for line in printed[at:at + 2 if command[0].endswith("\\") else at + 1])
    code = words.split()[2]
    assert httpx.get(f"{server.url}/matches/{code}", timeout=10).json()["state"] in ("preparing", "lobby")
    bob = run_client(words.strip().replace("NAME", "bob").split()[1:] + ["--script", "-"], client_env)
    try:
        deadline = time.monotonic() + 30
        while "bob" not in [p["name"] for p in httpx.get(f"{server.url}/matches/{code}", timeout=10).json()["players"]]:
            assert time.monotonic() < deadline and bob.poll() is None, bob.poll()
            time.sleep(0.2)
    finally:
        bob.kill()
        bob.communicate(timeout=10)
