"""Player tokens kept on disk, so a restarted client resumes its game.

One JSON file, ``tokens.json`` in the platformdirs user data folder of
``forty-thieves-race`` (``$XDG_DATA_HOME/forty-thieves-race`` on Linux),
keyed by ``"<server url> <match code>"``. An entry holds the player's
``name`` and secret ``token`` (rotated by the server on every resume: the
newest is written at once), and for the creator the ``host_token`` with
its ``host_name``. Two players on one machine share the file: each keeps
its own token under its name, and only the host's name is the host.
The file is written whole to a temporary file and renamed, readable by
its owner only.

Named players: the entry ``"<server url> players"`` holds ``{name: player key}``, the secret key of each
name claimed from this machine on that server (the name as claimed); :meth:`TokenStore.player_key` also
reads the daily challenge's older entry ``"<server url> daily"`` (``{"names": {name: token}}``), whose token
the server takes as the player key.
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
PLAYERS_ENTRY = "players"
"""The token file's entry (per server) holding ``{name: player key}``."""
LEGACY_DAILY_ENTRY = "daily"
"""The daily challenge's older entry (per server), ``{"names": {name: token}}``: read, never written."""


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

    def keep_player(self, server: str, code: str, name: str, token: str) -> None:
        """Keep ``token`` as ``name``'s in the match's entry, beside the other players of this machine (read and
        written under the lock: two clients resuming at once keep both tokens)."""
        with self._locked():
            self._update(server, code, {"last_name": name}, player=(name, token))

    def keep_host(self, server: str, code: str, name: str, host_token: str) -> None:
        """Keep the host token of the match (or round) ``name`` hosts: only ``name`` is its host."""
        self.update(server, code, host_token=host_token, host_name=name)

    def host_token(self, server: str, code: str, name: str) -> str | None:
        """The host token kept for ``name`` in this match: ``None`` when another player of this machine hosts
        it (an entry without ``host_name``, written before it was kept, counts for any name)."""
        entry = self.get(server, code)
        token = entry.get("host_token")
        if not isinstance(token, str) or not token or entry.get("host_name", name) != name:
            return None
        return token

    def player_keys(self, server: str) -> dict[str, str]:
        """``{name: player key}`` of every name claimed from this machine on ``server`` (the daily's older
        tokens included; a key kept in :data:`PLAYERS_ENTRY` wins over an older token of the same name)."""
        legacy = self.get(server, LEGACY_DAILY_ENTRY).get("names")
        keys = {str(name): key for name, key in (legacy if isinstance(legacy, dict) else {}).items()
                if isinstance(key, str) and key}
        keys.update({str(name): key for name, key in self.get(server, PLAYERS_ENTRY).items()
                     if isinstance(key, str) and key})
        return keys

    def player_key(self, server: str, name: str) -> str:
        """The player key held for ``name`` on ``server`` (``""``: none). The name as typed first, then one held
        under another case of it (the server finds a name in any case, so "ann" is the "Ann" claimed here)."""
        keys = self.player_keys(server)
        if keys.get(name):
            return keys[name]
        folded = [key for held, key in keys.items() if held.casefold() == name.casefold()]
        return folded[0] if len(folded) == 1 else ""

    def keep_player_key(self, server: str, name: str, key: str) -> None:
        """Keep ``key`` as the player key of ``name`` on ``server`` (replacing an older one of that name, in any
        case of it: the server holds one key per name)."""
        with self._locked():
            held = self.get(server, PLAYERS_ENTRY)
            for other in [other for other in held if other.casefold() == name.casefold() and other != name]:
                held.pop(other)
            held[name] = key
            self._write(server, PLAYERS_ENTRY, held)

    def forget_player_key(self, server: str, name: str) -> None:
        """Drop the key of ``name`` (any case) on ``server``, the daily's older token of it too."""
        with self._locked():
            held = self.get(server, PLAYERS_ENTRY)
            self._write(server, PLAYERS_ENTRY, {k: v for k, v in held.items() if k.casefold() != name.casefold()})
            daily = self.get(server, LEGACY_DAILY_ENTRY)
            names = daily.get("names")
            if isinstance(names, dict) and any(k.casefold() == name.casefold() for k in names):
                daily["names"] = {k: v for k, v in names.items() if k.casefold() != name.casefold()}
                self._write(server, LEGACY_DAILY_ENTRY, daily)

    def _write(self, server: str, code: str, entry: dict[str, Any]) -> None:
        """Replace the whole entry of ``server`` and ``code`` (the caller holds the lock)."""
        data = self._load()
        data[self.key(server, code)] = entry
        self._dump(data)

    def _update(self, server: str, code: str, fields: dict[str, Any], player: tuple[str, str] | None = None) -> None:
        data = self._load()
        entry = data.get(self.key(server, code))
        entry = dict(entry) if isinstance(entry, dict) else {}
        entry.update(fields)
        if player is not None:
            players = entry.get("players")
            entry["players"] = {**(players if isinstance(players, dict) else {}), player[0]: player[1]}
        data[self.key(server, code)] = entry
        self._dump(data)

    def _dump(self, data: dict[str, Any]) -> None:
        fd, name = tempfile.mkstemp(prefix=".tokens-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(data, file, indent=1, sort_keys=True)
            os.chmod(name, 0o600)
            os.replace(name, self.path)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise
