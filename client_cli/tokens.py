"""Player tokens kept on disk, so a restarted client resumes its game (issue 5, item 5).

One JSON file, ``tokens.json`` in the platformdirs user data folder of
``forty-thieves-race`` (``$XDG_DATA_HOME/forty-thieves-race`` on Linux),
keyed by ``"<server url> <match code>"``. An entry holds the player's
``name`` and secret ``token`` (rotated by the server on every resume: the
newest is written at once), and for the creator the ``host_token``.
The file is written whole to a temporary file and renamed, readable by
its owner only.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import platformdirs

APP = "forty-thieves-race"


def default_path() -> Path:
    """``tokens.json`` in the user data folder (``FTR_CLIENT_DATA`` overrides the folder)."""
    folder = os.environ.get("FTR_CLIENT_DATA") or platformdirs.user_data_dir(APP)
    return Path(folder) / "tokens.json"


class TokenStore:
    """Tokens per server and match (see the module docstring)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()

    @staticmethod
    def key(server: str, code: str) -> str:
        return f"{server.rstrip('/')} {code}"

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, server: str, code: str) -> dict[str, Any]:
        entry = self._load().get(self.key(server, code))
        return dict(entry) if isinstance(entry, dict) else {}

    def entries(self, server: str) -> list[tuple[str, dict[str, Any]]]:
        """``(code, entry)`` of every match of ``server`` this machine holds."""
        prefix = self.key(server, "")
        return [(key[len(prefix):], dict(entry)) for key, entry in self._load().items()
                if key.startswith(prefix) and isinstance(entry, dict)]

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Several clients (two players on one machine) may write at once: one at a time."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock
            yield
            return
        with open(self.path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def update(self, server: str, code: str, **fields: Any) -> None:
        """Merge ``fields`` into the entry of ``server`` and ``code`` and write the file."""
        with self._locked():
            self._update(server, code, fields)

    def _update(self, server: str, code: str, fields: dict[str, Any]) -> None:
        data = self._load()
        entry = data.get(self.key(server, code))
        entry = dict(entry) if isinstance(entry, dict) else {}
        entry.update(fields)
        data[self.key(server, code)] = entry
        fd, name = tempfile.mkstemp(prefix=".tokens-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(data, file, indent=1, sort_keys=True)
            os.chmod(name, 0o600)
            os.replace(name, self.path)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise
