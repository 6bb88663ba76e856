"""Server settings, read from the environment in one place.

Each setting is declared once, as a field of :class:`Settings` made by :func:`setting`: its environment
variable, default, parser (which validates it) and meaning. :meth:`Settings.from_environ`,
:data:`ENVIRONMENT_VARIABLES`, the server's ``--help`` (:func:`help_text`) and the table below are derived
from those declarations; a bad value raises :class:`SettingError` naming its variable.

Pings, pongs and unfinished message fragments, which never reach the application's rate limit, have a
budget of their own per connection of the same ``FTR_RATE`` a second and ``FTR_BURST`` at once (past it
the connection is closed with 1008; server/connection_limits.py).

The variables (this table is made from the declarations when the module is imported):

"""

from __future__ import annotations

import math
import os
import re
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

import platformdirs
from redis.connection import parse_url

from protocol.errors import NotationError

from .engine.planner import LEVELS
from .engine.variants import PRESETS, find_variant
from .logs import LOG_FORMATS, LOG_LEVELS

T = TypeVar("T")


class SettingError(ValueError):
    """A setting's value cannot be used; the message names its variable and what it takes (one line)."""


@dataclass(frozen=True, slots=True)
class Declaration:
    """One setting: its ``variable``, the ``parse`` of a set value (raises ``ValueError`` with what it
    takes), what an unset one is (``default``, or ``unset()`` when it is worked out at start), the
    ``shown`` default of the docs, its ``meaning`` (one sentence or a few), and ``redact``, which makes a set
    value fit for an error message (a password left out)."""

    variable: str
    parse: Callable[[str], Any]
    default: Any
    shown: str
    meaning: str
    unset: Callable[[], Any] | None = None
    redact: Callable[[str], str] | None = None

    def shown_here(self) -> str:
        """The default as it is on this machine (``--help``): ``unset()`` where it is worked out at start (the
        user data folder), else :attr:`shown`."""
        return self.shown if self.unset is None else str(self.unset())


def setting(variable: str, default: T, parse: Callable[[str], T], meaning: str, *, shown: str | None = None,
            unset: Callable[[], T] | None = None, redact: Callable[[str], str] | None = None) -> T:
    """Declare a field of :class:`Settings` read from ``variable``: ``parse`` reads a set value (and raises
    ``ValueError`` saying what it takes); unset, the field is ``default`` (or ``unset()``, worked out when the
    environment is read). ``shown`` is the default as the docs write it (``str(default)`` when not given);
    ``redact`` gives a bad value as its :class:`SettingError` quotes it (a value holding a secret)."""
    declared = Declaration(variable, parse, default, str(default) if shown is None else shown,
                           " ".join(meaning.split()), unset, redact)
    value: T = field(default=default, metadata={"setting": declared})
    return value


# ------------------------------------------------------------------ parsers (each raises ValueError)


def _whole(low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise ValueError(f"not a whole number{_range(low, high)}") from None
        if (low is not None and value < low) or (high is not None and value > high):
            raise ValueError(f"out of range{_range(low, high)}")
        return value
    return parse


def _range(low: float | None, high: float | None, above: bool = False) -> str:
    if low is not None and high is not None:
        return f" (it takes {low} to {high})"
    if low is not None:
        return f" (it takes a number {'above' if above else 'of at least'} {low:g})"
    return ""


def _number(low: float = 0.0, above: bool = False) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text.strip())
        except ValueError:
            raise ValueError(f"not a number{_range(low, None, above)}") from None
        if not math.isfinite(value) or value < low or (above and value == low):
            raise ValueError(f"out of range{_range(low, None, above)}")
        return value
    return parse


PORT = _whole(0, 65535)
COUNT = _whole(0)
"""A count or a time in whole units that may be 0."""
AT_LEAST_ONE = _whole(1)
SECONDS = _number(0.0)
POSITIVE = _number(0.0, above=True)


def _text(text: str) -> str:
    return text.strip()


def _host(text: str) -> str:
    if not text.strip():
        raise ValueError("empty (it takes an address such as 127.0.0.1 or 0.0.0.0)")
    return text.strip()


def _optional(text: str) -> str | None:
    return text or None


def _public_url(text: str) -> str:
    url = text.strip().rstrip("/")
    if url and not url.startswith(("http://", "https://")):
        raise ValueError("not an http:// or https:// address")
    return url


def hide_password(url: str) -> str:
    """``url`` (a Redis URL) with its password, in the user part or a ``password=`` parameter, written ``***``:
    ``redis://ann:***@host:6379/0``. Fit for a message; other parts, wrong ones included, stay as they are."""
    head, at, host = url.rpartition("@")
    if at:
        scheme, sep, user = head.rpartition("://")
        name, colon, _ = user.partition(":")
        url = f"{scheme}{sep}{name}{colon}***@{host}" if colon else url
    return re.sub(r"(?i)([?&]password=)[^&]*", r"\1***", url)


def _redis_url(text: str) -> str | None:
    url = text.strip()
    if not url:
        return None
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError("not a redis://, rediss:// or unix:// URL")
    try:
        parse_url(url)  # redis-py's own reading, which the server's clients make of it at start
    except ValueError as error:
        raise ValueError(f"redis-py cannot use it: {error}") from None
    return url


def _pure_solver(text: str) -> bool:
    choice = text.strip().lower()
    if choice not in ("", "c", "python"):
        raise ValueError("it takes python or c")
    return choice == "python"


def _one_of(choices: tuple[str, ...], empty: str) -> Callable[[str], str]:
    """A parser of one of ``choices`` (any case, blanks around it ignored; empty: ``empty``)."""

    def parse(text: str) -> str:
        value = text.strip().lower() or empty
        if value not in choices:
            raise ValueError(f"it takes one of {', '.join(choices)}")
        return value

    return parse


def _variants(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    for name in names:
        try:
            find_variant(name)
        except NotationError:
            raise ValueError(f"{name!r} is not a variant (presets: {', '.join(PRESETS)})") from None
    return names


def _data_dir() -> str:
    return platformdirs.user_data_dir("forty-thieves-race")


@dataclass(frozen=True, slots=True)
class Settings:
    """The server's settings; each field is declared with :func:`setting` (its variable, default, parser and
    meaning), so the module's table, ``--help`` and :meth:`from_environ` all come from here."""

    host: str = setting("FTR_HOST", "127.0.0.1", _host, "address to listen on")
    port: int = setting("FTR_PORT", 8000, PORT, "port to listen on")
    public_url: str = setting(
        "FTR_PUBLIC_URL", "", _public_url, shown="(unset)", meaning="""address friends reach the server at
        (https://race.example.org behind a TLS proxy, http://192.168.1.20:8000 on a LAN): the join line and
        join_url use it; unset: the address each request came to""")
    redis_url: str | None = setting(
        "REDIS_URL", None, _redis_url, shown="(unset)", meaning="""Redis to use (redis://host:port/db): one
        Redis, or any node of a Redis Cluster (the server asks it INFO cluster at start and uses redis-py's
        cluster client when cluster_enabled:1); unset: start an embedded Redis""", redact=hide_password)
    data_dir: str = setting(
        "FTR_DATA_DIR", "", _text, shown="user data", unset=_data_dir, meaning="""folder of the embedded
        Redis's database file, owned by one server process at a time (a second one refuses)""")
    redis_wait_replicas: int = setting(
        "FTR_REDIS_WAIT_REPLICAS", 0, COUNT, meaning="""replicas each commit of a move waits for (Redis WAIT)
        before its player is answered, so a failover of its master loses no acknowledged move (0: no wait)""")
    redis_wait_ms: int = setting(
        "FTR_REDIS_WAIT_MS", 1000, AT_LEAST_ONE, meaning="""longest such wait (ms); past it the move is
        answered anyway and a warning logged""")
    countdown_s: float = setting("FTR_COUNTDOWN_S", 3.0, SECONDS, 'seconds between "start" and the deal', shown="3")
    retention_s: int = setting("FTR_RETENTION_S", 86400, AT_LEAST_ONE, "seconds a finished match's keys are kept")
    max_players: int = setting("FTR_MAX_PLAYERS", 8, AT_LEAST_ONE, "most players one match may have")
    rate: float = setting("FTR_RATE", 20.0, POSITIVE, "messages per second a connection may send", shown="20")
    burst: int = setting("FTR_BURST", 40, AT_LEAST_ONE, "messages a connection may send at once")
    max_frame_bytes: int = setting("FTR_MAX_FRAME_BYTES", 4096, AT_LEAST_ONE,
                                   "largest WebSocket frame accepted (bytes)")
    matches_per_min: int = setting("FTR_MATCHES_PER_MIN", 30, AT_LEAST_ONE,
                                   "matches one address may create per minute")
    history_games: int = setting("FTR_HISTORY_GAMES", 1000, AT_LEAST_ONE,
                                 "finished games kept in full per named player (the oldest dropped)")
    history_deals: int = setting("FTR_HISTORY_DEALS", 2000, AT_LEAST_ONE, meaning="""deals whose records
        (best time, fewest moves) are kept per named player (the least recently played dropped)""")
    names_per_hour: int = setting("FTR_NAMES_PER_HOUR", 30, AT_LEAST_ONE,
                                  "names one address may claim per hour (races, daily attempts, POST /players)")
    name_release_days: int = setting(
        "FTR_NAME_RELEASE_DAYS", 0, COUNT, meaning="""days after which a claimed name unused that long is free
        to claim again, its history dropped (0: never)""")
    freeze_every_days: int = setting(
        "FTR_FREEZE_EVERY_DAYS", 7, AT_LEAST_ONE, meaning="""days played in the daily challenge that earn one
        streak freeze (a freeze keeps the streak over one missed day)""")
    freezes_max: int = setting("FTR_FREEZES_MAX", 2, COUNT, "streak freezes a named player holds at most")
    pool_target: int = setting("FTR_POOL_TARGET", 2, COUNT, "verified solvable deals kept ready per variant")
    solver_workers: int = setting("FTR_SOLVER_WORKERS", 1, COUNT, "solver worker processes (0: no deal pool)")
    solver_seconds: float = setting("FTR_SOLVER_SECONDS", 10.0, POSITIVE,
                                    "solver budget per candidate deal (seconds)", shown="10")
    dead_budget: int = setting("FTR_DEAD_BUDGET", 20000, AT_LEAST_ONE, "dead-game search budget (positions)")
    max_bots: int = setting(
        "FTR_MAX_BOTS", 60, COUNT, meaning="""bots in unfinished matches on the whole server (all processes: counted
        in Redis); past it POST /matches with bots is refused (503 busy); 0: no bots""")
    max_bots_per_address: int = setting(
        "FTR_MAX_BOTS_PER_ADDRESS", 9, COUNT, meaning="""bots in unfinished matches created from one client address
        (of FTR_MAX_BOTS; counted in Redis); past it POST /matches with bots from there is refused (429
        rate_limited), so one client cannot hold every place with lobbies it never starts""")
    hint_level: str = setting(
        "FTR_HINT_LEVEL", "strong", _one_of(("look", *(level.name for level in LEVELS)), "strong"),
        meaning="""the planner level hints play at (server/engine/planner.py: casual, club, expert, strong); look:
        the one-look hint alone, no planner""")
    hint_seconds: float = setting(
        "FTR_HINT_SECONDS", 1.0, POSITIVE, shown="1", meaning="""time budget of one hint in the solver's workers
        (seconds; past it, or with every worker busy, the hint is the one-look hint)""")
    pure_solver: bool = setting(
        "FTR_SOLVER", False, _pure_solver, shown="(unset)", meaning="""python: the solver runs its pure search
        even where the optional C search is built (read here, passed to the solver as pure: the engine reads
        no environment); c or unset: the C search where it is built""")
    lobby_timeout_s: int = setting("FTR_LOBBY_TIMEOUT_S", 7200, AT_LEAST_ONE,
                                   "seconds a match may wait to start before it is closed")
    untimed_limit_s: int = setting(
        "FTR_UNTIMED_LIMIT_S", 86400, COUNT, meaning="""time limit of a match created with time_limit_s 0 (so
        an abandoned game cannot keep it open for ever; 0: such matches have none)""")
    daily_secret: str | None = setting("FTR_DAILY_SECRET", None, _optional, shown="(unset)",
                                       meaning="secret of the daily seeds; unset: made once, kept in Redis")
    daily_variants: tuple[str, ...] = setting(
        "FTR_DAILY_VARIANTS", ("classic", "relaxed"), _variants, shown="classic,relaxed",
        meaning="variants of the daily challenge (comma-separated; empty: no daily challenge)")
    clock_offset_ms: int = setting("FTR_CLOCK_OFFSET_MS", 0, _whole(),
                                   "shift of the server's clock (ms; tests and demos only)")
    watcher_queue: int = setting(
        "FTR_WATCHER_QUEUE", 1024, AT_LEAST_ONE, meaning="""events a spectator may fall behind by before it is
        dropped (it resumes from its last id)""")
    max_watchers: int = setting("FTR_MAX_WATCHERS", 500, COUNT,
                                "spectator connections per match (per server process)")
    rematch_window_s: float = setting(
        "FTR_REMATCH_WINDOW_S", 30.0, SECONDS, shown="30", meaning="""seconds after the first rematch in which
        the previous round's players join the next round: it starts when all are in and ready, or after the
        window with whoever is in and ready""")
    resolve_s: float = setting(
        "FTR_RESOLVE_S", 10.0, SECONDS, shown="10", meaning="""seconds the server keeps asking Redis whether a
        command whose commit got no answer was stored, before it tells the player unknown_outcome""")
    hello_timeout_s: float = setting(
        "FTR_HELLO_TIMEOUT_S", 10.0, POSITIVE, shown="10", meaning="""seconds from a /play connection's start
        to its hello (then hello_first, close 1008)""")
    header_timeout_s: float = setting(
        "FTR_HEADER_TIMEOUT_S", 10.0, POSITIVE, shown="10", meaning="""seconds a connection has to send a
        whole request head, from its start or the previous answer, and a request body (then closed)""")
    keepalive_s: int = setting("FTR_KEEPALIVE_S", 5, COUNT,
                               "seconds an idle HTTP connection is kept open between requests")
    max_header_bytes: int = setting("FTR_MAX_HEADER_BYTES", 16384, AT_LEAST_ONE,
                                    "largest request head (bytes; then 431, closed)")
    max_connections_per_address: int = setting(
        "FTR_MAX_CONNECTIONS_PER_ADDRESS", 256, AT_LEAST_ONE, meaning="""open connections (HTTP and WebSocket)
        one address may hold; past it a new one is closed""")
    max_write_buffer_bytes: int = setting(
        "FTR_MAX_WRITE_BUFFER_BYTES", 1 << 20, AT_LEAST_ONE, meaning="""unsent bytes a WebSocket may pile up (a
        client that never reads) before it is closed (1008)""")
    forwarded_allow_ips: str = setting(
        "FTR_FORWARDED_ALLOW_IPS", "", _text, shown="(unset)", meaning="""proxies (comma-separated addresses,
        or *) whose X-Forwarded-For / -Proto headers are trusted; unset: none, the TCP peer counts""")
    log_level: str = setting("FTR_LOG_LEVEL", "info", _one_of(LOG_LEVELS, "info"), meaning="""level of the server's
        and uvicorn's log lines: debug, info, warning, error or critical (server/logs.py)""")
    log_format: str = setting("FTR_LOG_FORMAT", "text", _one_of(LOG_FORMATS, "text"), meaning="""text: one line a
        record, from its UTC time; json: one JSON object a line (time, level, logger, message, match,
        connection)""")

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read every setting from ``environ`` (default: ``os.environ``); an unset variable gives the declared
        default. Raises :class:`SettingError` (one line naming the variable, its value, a password in it hidden, and
        what it takes) for the first value that cannot be used."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for name, declared in DECLARATIONS.items():
            raw = environ.get(declared.variable)
            if raw is None:
                values[name] = declared.unset() if declared.unset is not None else declared.default
                continue
            try:
                value = declared.parse(raw)
            except ValueError as error:
                shown = raw if declared.redact is None else declared.redact(raw)
                raise SettingError(f"{declared.variable}={shown!r}: {error}") from None
            if declared.unset is not None and not value:
                value = declared.unset()
            values[name] = value
        return cls(**values)


DECLARATIONS: dict[str, Declaration] = {f.name: f.metadata["setting"] for f in fields(Settings)}
"""Each field of :class:`Settings` by name, with its declaration."""

ENVIRONMENT_VARIABLES = tuple(declared.variable for declared in DECLARATIONS.values())
"""Every environment variable the server reads (a test checks docker-compose.yml names only these)."""


def help_text(width: int = 100) -> str:
    """The settings for ``--help``: each variable with its default on this machine
    (:meth:`Declaration.shown_here`), then its meaning, indented."""
    lines = ["settings (environment variables; --host and --port take the place of FTR_HOST and FTR_PORT):"]
    for declared in DECLARATIONS.values():
        lines.append(f"  {declared.variable} (default: {declared.shown_here()})")
        lines += textwrap.wrap(declared.meaning, width, initial_indent="      ", subsequent_indent="      ",
                               break_on_hyphens=False)
    return "\n".join(lines)


def _table() -> str:
    """The module docstring's table: variable, default, meaning."""
    variable_width = max(len(d.variable) for d in DECLARATIONS.values()) + 4
    default_width = max(9, *(len(d.shown) for d in DECLARATIONS.values()))
    meaning_width = 60
    rule = f"{'=' * variable_width}  {'=' * default_width}  {'=' * meaning_width}"
    rows = [rule, f"{'variable':<{variable_width}}  {'default':<{default_width}}  meaning", rule]
    for declared in DECLARATIONS.values():
        meaning = textwrap.wrap(declared.meaning, meaning_width, break_on_hyphens=False) or [""]
        rows.append(f"{'``' + declared.variable + '``':<{variable_width}}  {declared.shown:<{default_width}}  "
                    f"{meaning[0]}")
        rows += [f"{'':<{variable_width}}  {'':<{default_width}}  {line}" for line in meaning[1:]]
    rows.append(rule)
    return "\n".join(rows) + "\n"


__doc__ = (__doc__ or "") + _table()

__all__ = ["DECLARATIONS", "ENVIRONMENT_VARIABLES", "Declaration", "SettingError", "Settings", "help_text",
           "hide_password", "setting"]
